r"""Large-``alpha`` expansions of the low-rank model, derived with SymPy from its own equations.

At ``lambda = 0`` and ``tau > 1`` the replica-symmetric solution is the closed form (T1)-(T5)
(:data:`replica.models.lowrank.LAMBDA0_CLOSED_FORM`), a rational function of the Stieltjes
transforms :math:`g(z)`, :math:`g'(z)`, :math:`\tilde g'(z)` at :math:`z = -\varepsilon`,
:math:`\varepsilon = (1+\sigma^2)/\alpha`. The transforms are algebraic: with
:math:`b = \kappa\rho z + \rho - \kappa` and :math:`s = \sqrt{b^2 - 4\rho^2\kappa z}`,

.. math::  \tilde g = \frac{b + s}{-2\rho z} = \frac{2\rho\kappa}{s - b},\qquad
           g = -\frac{1-\rho}{z} + \rho\tilde g .

As :math:`\varepsilon\to0^+`, :math:`s\to|\rho-\kappa|`, so the expansion depends on the side of
the transition: on the task-scarce side (:math:`\rho = \kappa + \Delta`, :math:`\Delta > 0`) and the
task-rich side (:math:`\kappa = \rho + \Delta`) it is a Laurent series in :math:`\varepsilon`
(integer powers of :math:`1/\alpha`), while at :math:`\rho = \kappa` the square root
:math:`s = \kappa\sqrt{\kappa^2\varepsilon^2 + 4\kappa\varepsilon}` makes it a series in
:math:`\sqrt\varepsilon`: half-integer powers of :math:`\alpha` appear. :func:`expansion` derives
each series with ``sympy.series`` (the branch of :math:`\tilde g` written without cancellation on
each side), and :func:`powers_of_alpha` lists the powers that occur.

Errors use :math:`\tilde\sigma = 0` and :math:`\tilde\alpha = \alpha`:
:math:`\varepsilon_X = 1 - 2m_X + q_X + \bar q/\alpha`.
"""

from __future__ import annotations

import functools

import sympy

from ..errors import ParameterError
from ..progress import tick
from ..models import lowrank as L
from ..spectra import lowrank_stieltjes_derivative_expr, lowrank_stieltjes_tilde_derivative_expr

e = sympy.Symbol("varepsilon", positive=True)
"""Small parameter (1 + sigma^2)/alpha."""
Delta = sympy.Symbol("Delta", positive=True)
"""Distance from the transition: rho - kappa (scarce side) or kappa - rho (rich side)."""

SIDES = ("scarce", "rich", "critical")
QUANTITIES = ("m", "mbar", "m0", "q", "qbar", "q0", "chi", "chibar", "tm", "idg", "odg")


def side_substitution(side: str) -> dict:
    """``rho = kappa + Delta`` (scarce), ``kappa = rho + Delta`` (rich), ``rho = kappa``
    (critical)."""
    if side == "scarce":
        return {L.rho: L.kappa + Delta}
    if side == "rich":
        return {L.kappa: L.rho + Delta}
    if side == "critical":
        return {L.rho: L.kappa}
    raise ParameterError("side", f"choose one of {', '.join(SIDES)}")


def spectral_functions(side: str):
    r"""``(g, g', gtilde')`` at ``z = -varepsilon`` as explicit expressions on ``side``: the
    closed forms of :mod:`replica.spectra` (pole of the atom plus a regular part without
    cancellation), in which ``|rho - kappa|`` becomes ``Delta`` (or 0) on each side."""
    sub = side_substitution(side)
    r, k = L.rho.subs(sub), L.kappa.subs(sub)
    zz = -e
    return (lowrank_stieltjes_derivative_expr(zz, k, r, 0),
            lowrank_stieltjes_derivative_expr(zz, k, r, 1),
            lowrank_stieltjes_tilde_derivative_expr(zz, k, r, 1))


EXPANSION_STAGES = 5
"""The stages of a fresh :func:`expansion`, each reported by :func:`replica.progress.tick`:
the series of ``g``, ``g'`` and ``gtilde'``, the substituted expansion, the coefficients."""


@functools.lru_cache(maxsize=None)
def _spectral_series(side: str, order: int) -> dict:
    """Truncated Laurent series in varepsilon of ``g, g', gtilde'`` on ``side``, far enough
    (through ``varepsilon**(order + 3)``) for every product in (T1)-(T5) (at most
    ``varepsilon**3 g'`` with ``g' = O(varepsilon**-2)``)."""
    out = {}
    for fam, fn in zip((L.G[0], L.G[1], L.GT[1]), spectral_functions(side)):
        ser = sympy.expand(sympy.series(fn, e, 0, order + 3).removeO())
        coeffs: dict = {}
        for term in sympy.Add.make_args(ser):
            c, p = term.as_coeff_exponent(e)
            coeffs[p] = coeffs.get(p, 0) + c
        out[fam] = sum(sympy.factor(sympy.together(c)) * e**p for p, c in coeffs.items())
        tick(note=f"series of {fam}")
    return out


def _closed_form(name: str):
    """``name`` at lambda = 0 from the closed form (T1)-(T5); an error (``tm idg odg``) is the
    model's error expression at sigma_test = 0, alpha_test = alpha with the closed form inserted."""
    cf = L.LAMBDA0_CLOSED_FORM
    sym = {str(k_): k_ for k_ in cf}
    if name in L.ERROR_KEYS:
        err = L.error_expr(name).subs({L.sigma_test: 0, L.alpha_test: L.alpha})
        return err.xreplace(cf)
    if name not in sym:
        raise ParameterError("quantity", f"unknown quantity {name!r} ({', '.join(QUANTITIES)})")
    return cf[sym[name]]


@functools.lru_cache(maxsize=None)
def expansion(name: str, side: str, order: int = 3) -> sympy.Expr:
    r"""Series of ``name`` in :math:`\varepsilon = (1+\sigma^2)/\alpha` on ``side``, through
    :math:`O(\varepsilon^{order})` (exclusive), expressed back in ``alpha``, ``rho``, ``kappa``.
    """
    # The closed form is a polynomial in (varepsilon, g, g', gtilde') with constant
    # denominators: substituting the truncated Laurent series of the spectral functions and
    # expanding gives the series exactly up to the truncation order (no sympy.series needed).
    impl = _spectral_series(side, order)
    expr = _closed_form(name).subs(L.alpha, (1 + L.sigma**2) / e)
    expr = expr.replace(lambda x: isinstance(x, sympy.Function) and x.func in impl,
                        lambda x: impl[x.func])
    ser = sympy.expand(expr.subs(side_substitution(side)))
    tick(note="expanded")
    coeffs: dict = {}
    for term in sympy.Add.make_args(ser):
        c, p = term.as_coeff_exponent(e)
        if p < order:
            coeffs[p] = coeffs.get(p, 0) + c
    back = {}
    if side == "scarce":
        back[Delta] = L.rho - L.kappa
    elif side == "rich":
        back[Delta] = L.kappa - L.rho
    out = sympy.Integer(0)
    for p in sorted(coeffs, reverse=True):
        coeff = sympy.factor(sympy.together(coeffs[p])).subs(back)
        out += coeff * ((1 + L.sigma**2) / L.alpha) ** p
    tick(note="coefficients")
    return out


def powers_of_alpha(name: str, side: str, order: int = 3) -> list:
    """The exponents ``p`` of ``alpha**p`` in :func:`expansion` (descending)."""
    ex = sympy.expand(expansion(name, side, order))
    pw = {term.as_coeff_exponent(L.alpha)[1] for term in sympy.Add.make_args(ex)}
    return sorted(pw, reverse=True)


def evaluate(name: str, side: str, alpha, tau, kappa, rho, sigma, order: int = 3):
    """The truncated series at a point (mpmath at the working precision via ``sympy.N``)."""
    import mpmath

    ex = expansion(name, side, order)
    vals = {L.alpha: sympy.sympify(alpha), L.tau: sympy.sympify(tau),
            L.kappa: sympy.sympify(kappa), L.rho: sympy.sympify(rho),
            L.sigma: sympy.sympify(sigma)}
    return mpmath.mpf(str(sympy.N(ex.subs(vals), mpmath.mp.dps + 10)))
