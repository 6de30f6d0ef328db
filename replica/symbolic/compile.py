"""Numeric evaluators generated from SymPy expressions that contain spectral averages.

:func:`compile_expressions` turns a list of SymPy expressions in the symbols ``args`` (which may
contain :class:`~replica.symbolic.spectral.SpectralAverage` nodes) into two evaluators:

* :meth:`CompiledExpression.mp` -- mpmath at the working precision; each average is an exact
  ``mpmath.fsum`` over the distinct spectral pairs;
* :meth:`CompiledExpression.f64` -- NumPy float64, vectorised: the parameter values may be arrays
  of any common shape (a parameter grid), the eigenvalues run along a trailing axis.

Both come from ``sympy.lambdify`` of the same expressions: no formula is typed twice.
"""

from __future__ import annotations

import mpmath
import numpy as np
import sympy

from .spectral import LAMBDA_I, MU_I, SpectralAverage


class CompiledExpression:
    """Evaluators of ``exprs`` (a list) as functions of ``args`` and a spectrum."""

    def __init__(self, exprs, args):
        self.exprs = [sympy.sympify(e) for e in exprs]
        self.args = list(args)
        averages = set()
        for e in self.exprs:
            averages |= e.atoms(SpectralAverage)
        self.averages = sorted(averages, key=sympy.default_sort_key)
        dummies = [sympy.Dummy(f"avg{k}") for k in range(len(self.averages))]
        outer = [e.xreplace(dict(zip(self.averages, dummies))) for e in self.exprs]
        inner = [a.args[0] for a in self.averages]
        inner_args = [LAMBDA_I, MU_I] + self.args
        self._outer_mp = sympy.lambdify(self.args + dummies, outer, modules="mpmath")
        self._inner_mp = [sympy.lambdify(inner_args, i, modules="mpmath") for i in inner]
        self._outer_np = sympy.lambdify(self.args + dummies, outer, modules="numpy")
        self._inner_np = [sympy.lambdify(inner_args, i, modules="numpy") for i in inner]

    def mp(self, values, pairs=None) -> list:
        """Evaluate at ``values`` (mpf, in the order of ``args``); ``pairs`` is a
        :class:`~replica.spectra.SpectralPairs` (needed only if there are averages)."""
        avgs = []
        for f in self._inner_mp:
            avgs.append(mpmath.fsum(w * f(lam, mu, *values)
                                    for lam, mu, w in zip(pairs.lam, pairs.mu, pairs.weight)))
        return list(self._outer_mp(*values, *avgs))

    def f64(self, values, arrays=None) -> list:
        """Vectorised float64 evaluation; ``arrays = (lam, mu, weight)`` NumPy vectors."""
        vals = [np.asarray(v, dtype=float) for v in values]
        avgs = []
        if self._inner_np:
            lam, mu, w = arrays
            expanded = [v[..., None] for v in vals]
            for f in self._inner_np:
                avgs.append(np.sum(w * np.asarray(f(lam, mu, *expanded), dtype=float), axis=-1))
        shape = np.broadcast_shapes(*(v.shape for v in vals)) if vals else ()
        out = self._outer_np(*vals, *avgs)
        return [np.broadcast_to(np.asarray(o, dtype=float), shape) for o in out]


def compile_expressions(exprs, args) -> CompiledExpression:
    return CompiledExpression(exprs, args)
