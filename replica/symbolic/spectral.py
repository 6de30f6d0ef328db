"""Spectral averages as SymPy objects.

For a training covariance with eigenvalues ``lambda_i`` and a test covariance whose diagonal in
that eigenbasis is ``mu_i``, the theories need averages

.. math::  \\langle \\phi \\rangle = \\frac1d \\sum_{i=1}^d \\phi(\\lambda_i, \\mu_i).

:class:`SpectralAverage` holds ``phi`` as an expression in the symbols :data:`LAMBDA_I`,
:data:`MU_I` and the model's parameters. It is linear, so differentiation passes inside:
``d<phi>/dx = <d phi/dx>`` (this is how exact Jacobians of self-consistent equations are formed).
:func:`expand_averages` uses linearity to split sums and pull out factors that do not depend on
the eigenvalue, which lets SymPy solve for quantities such as ``M'`` that appear both outside and
inside an average.
"""

from __future__ import annotations

import sympy

LAMBDA_I = sympy.Symbol("lambda_i", nonnegative=True)
"""Eigenvalue of the training covariance (summation variable)."""

MU_I = sympy.Symbol("mu_i", nonnegative=True)
"""Diagonal entry of the test covariance in the training eigenbasis (summation variable)."""

_SUMMATION = (LAMBDA_I, MU_I)


def depends_on_index(expr) -> bool:
    """Whether ``expr`` depends on the summation index ``i`` (through ``lambda_i`` or ``mu_i``)
    outside any average it contains: an average is a constant for an enclosing one."""
    inner = expr.atoms(SpectralAverage) if isinstance(expr, sympy.Basic) else ()
    if inner:
        expr = expr.xreplace({a: sympy.Dummy() for a in inner})
    return bool(sympy.sympify(expr).free_symbols & set(_SUMMATION))


class SpectralAverage(sympy.Function):
    """``<phi>`` = (1/d) sum_i phi(lambda_i, mu_i); printed as a bracket."""

    nargs = 1

    @classmethod
    def eval(cls, arg):
        if not depends_on_index(arg):
            return arg  # <c> = c (an average inside is a constant too: <<phi>> = <phi>)
        return None

    def _eval_derivative(self, s):
        return SpectralAverage(sympy.diff(self.args[0], s))

    def _latex(self, printer, exp=None):
        inner = printer._print(self.args[0])
        tex = r"\left\langle %s \right\rangle" % inner
        return tex if exp is None else r"%s^{%s}" % (tex, exp)

    def _sympystr(self, printer):
        return "<%s>" % printer._print(self.args[0])


def avg(expr) -> sympy.Expr:
    """Shorthand for :class:`SpectralAverage`."""
    return SpectralAverage(sympy.sympify(expr))


def expand_averages(expr) -> sympy.Expr:
    """Rewrite each average by linearity: ``<a f + b g> = a<f> + b<g>`` for ``a, b`` free of the
    eigenvalue symbols (or averages themselves). The inner expressions are expanded first."""

    def split(arg):
        arg = sympy.expand_mul(arg, deep=False)
        total = sympy.Integer(0)
        for term in sympy.Add.make_args(arg):
            const, dep = [], []
            for fac in sympy.Mul.make_args(term):
                (dep if depends_on_index(fac) else const).append(fac)
            total += sympy.Mul(*const) * (SpectralAverage(sympy.Mul(*dep)) if dep else 1)
        return total

    return expr.replace(lambda e: isinstance(e, SpectralAverage), lambda e: split(e.args[0]))


def on_symbolic_spectrum(expr, k: int = 3):
    r"""``expr`` with every average replaced by its value on a spectrum of ``k`` symbolic
    eigenvalues :math:`c_1, \dots, c_k` (weights :math:`1/k`; ``lambda_i`` only). Two expressions
    linear in the averages that agree identically in the :math:`c_j` agree for every spectrum
    (take the :math:`c_j` equal to any eigenvalue): an exact test of such identities."""
    cs = sympy.symbols(f"c1:{k + 1}", positive=True)
    return sympy.sympify(expr).replace(
        lambda e: isinstance(e, SpectralAverage),
        lambda e: sum(e.args[0].subs(LAMBDA_I, cj) for cj in cs) / k)
