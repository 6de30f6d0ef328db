r"""Paper B: the isotropic theory (``C_train = C_test = I``), solved from the unified free energy;
declared to the engine by :mod:`replica.models.isotropic_problem`.

Lu, Letey, Zavatone-Veth, Maiti, Pehlevan, *Asymptotic theory of in-context learning by linear
attention*, arXiv:2405.11751. ``rho`` is the label-noise variance. With :math:`x^* = (1+\rho)/\alpha`
and the Marchenko--Pastur transform :math:`\mathcal M_\kappa`
(:func:`replica.spectra.marchenko_pastur_expr`, ``c = 1``).

**What the solver evaluates.** The instance :math:`C_{\rm train} = C_{\rm test} = I` of the
equations computed from the unified free energy (:mod:`replica.models.unified`) in paper A's
variables (:mod:`replica.models.alignment`): every spectral average at :math:`\lambda_i = \mu_i =
1`, :math:`c_{\rm train} = c_{\rm test} = 1`, :math:`M` and :math:`M'` the Marchenko--Pastur closed
forms at :math:`\sigma = x^* + \tilde\lambda`; :math:`\tilde\lambda` the root of the computed ridge
equation :math:`\tilde\lambda M(\sigma) = 1 - \tau + \tau\lambda/\tilde\lambda` (with ridge: a
monotone scalar root; ridgeless with ``tau < 1``: its closed-form root, solved by SymPy) or 0
(ridgeless, ``tau > 1``); then
:math:`q`, :math:`E_{\rm ICL} = e_{\rm scalar} + e_{\rm misalign}` and :math:`e_{\rm IDG} = \tau q`
(the unified task-memorisation error).

**Paper B's closed forms** (below, typed as the paper states them: :math:`m^* = \mathcal
M_\kappa(x^*)`, :math:`\mu^* = x^*\mathcal M_{\kappa/\tau}(x^*)`, :math:`k^* = [1 - \kappa
(m^*/(\kappa + m^*))^2]^{-1}`, the ridgeless ICL and IDG errors for ``tau < 1`` and ``tau > 1``,
and the ridge ICL error with :math:`\xi` the root of :math:`1 - \tau + \tau\lambda/\xi =
\xi\mathcal M_\kappa(\xi + x^*)`) are not used by the solver: they are the independent check
(``tests/test_alignment_generated.py``: equal to the solver's values to 30 digits).
"""

from __future__ import annotations

import functools

import sympy

from ..problem import ScalarRoot, Start, System
from ..spectra import marchenko_pastur_expr, marchenko_pastur_prime_expr
from ..symbolic import LAMBDA_I, MU_I, SpectralAverage
from . import alignment as A

alpha, tau, kappa, rho, lam = A.alpha, A.tau, A.kappa, A.rho, A.lam
x = sympy.Symbol("x", positive=True)
xi = sympy.Symbol("xi", positive=True)

X_STAR = (1 + rho) / alpha
"""x* = (1 + rho)/alpha."""

MP = marchenko_pastur_expr(x, kappa)
MP_PRIME = marchenko_pastur_prime_expr(x, kappa)

M_STAR = MP.subs(x, X_STAR)
MU_STAR = X_STAR * marchenko_pastur_expr(X_STAR, kappa / tau)
K_STAR = 1 / (1 - M_STAR**2 / (kappa * (1 + M_STAR / kappa) ** 2))
"""k* = [1 - kappa (m*/(kappa + m*))^2]^{-1}, written so that kappa -> oo substitutes cleanly."""

# ---------------------------------------------------------------------------------------------
# Paper B's closed forms as stated (the independent check; the solver does not use them)
# ---------------------------------------------------------------------------------------------
ICL_RIDGELESS_TAU_LT_1 = tau * (1 + X_STAR) / (1 - tau) * (
    1 - tau * (1 - MU_STAR) ** 2 - (X_STAR - rho) / X_STAR * MU_STAR) \
    - 2 * tau * (1 - MU_STAR) + 1 + rho
ICL_RIDGELESS_TAU_GT_1 = (K_STAR - 1 / (tau - 1)) * (1 + X_STAR) * (X_STAR * M_STAR) ** 2 \
    + (3 - 2 * tau) / (tau - 1) * M_STAR * X_STAR**2 \
    + ((1 + rho) / (tau - 1) * M_STAR + 1) * X_STAR + rho * M_STAR / (tau - 1) + rho

EPSILON = (1 - tau) * X_STAR / (tau * MU_STAR)
"""Isotropic effective ridge for tau < 1 (paper A's lambda_tilde)."""
_C_LOCAL = 1 / (1 - 1 / (kappa * (1 / kappa + EPSILON / (1 - tau)) ** 2))
IDG_RIDGELESS_TAU_LT_1 = tau * ((X_STAR + EPSILON) ** 2 / EPSILON
                                + (rho + X_STAR - 2 * X_STAR * (1 - tau) * (X_STAR / EPSILON + 1))
                                / (1 - tau - _C_LOCAL * (1 - tau) ** 2))
IDG_RIDGELESS_TAU_GT_1 = tau * (rho + X_STAR * (1 - X_STAR * M_STAR)) / (tau - 1)

NU = X_STAR + xi
_MN, _MPN = MP.subs(x, NU), MP_PRIME.subs(x, NU)
RIDGE_EQUATION = xi * _MN - (1 - tau) - tau * lam / xi
"""Zero at the ridge root xi: xi M(xi + x*) = 1 - tau + tau lambda/xi."""
C_E = (rho + NU - NU**2 * _MN - xi * (1 - 2 * NU * _MN - NU**2 * _MPN)) / \
    (1 - 2 * xi * _MN - xi**2 * _MPN - tau)
ICL_RIDGE = (1 + X_STAR) * (1 - 2 * NU * _MN - NU**2 * _MPN - C_E * (_MN + xi * _MPN)) \
    - 2 * (1 - NU * _MN) + 1 + rho


# ---------------------------------------------------------------------------------------------
# The declaration
# ---------------------------------------------------------------------------------------------
SYMBOLS = {"alpha": alpha, "tau": tau, "kappa": kappa, "rho": rho, "lam": lam}
PARAMETERS = (alpha, tau, kappa, rho, lam)


def at_identity(expr):
    """Paper A's expression at C_train = C_test = I: every spectral average at lambda = mu = 1,
    c_test = 1 and alpha_test = alpha."""
    out = sympy.sympify(expr).replace(
        lambda e: isinstance(e, SpectralAverage),
        lambda e: e.args[0].subs({LAMBDA_I: 1, MU_I: 1}))
    return out.subs({A.c_test: 1, A.c_train: 1, A.alpha_test: alpha})


def _kappa_infinite(e):
    """kappa -> oo in one expression (each reported expression separately, before the values it
    uses are substituted: a limit of the assembled expression can be indeterminate)."""
    return sympy.simplify(sympy.sympify(e).subs(kappa, sympy.oo))


def _intermediates(lt, kinf: bool, qhat_from: str = "alias"):
    """The reported values given lambda_tilde (a value or the unknown): paper A's computed
    expressions at the identity; the free energy with ``qhat_from``
    (:func:`replica.models.alignment.unified_saddle_values`: ``"conjugate"`` where
    lambda_tilde = 0)."""
    s = A.sigma
    a_iso = A.A_COEFF.subs(A.z, s)
    form = _kappa_infinite if kinf else sympy.sympify
    return [(name, form(e), sym) for name, e, sym in [
        ("lambda_tilde", lt, A.lambda_tilde),
        ("sigma", at_identity(A.SIGMA), A.sigma),
        ("M", MP.subs(x, s), A.M),
        ("M_prime", MP_PRIME.subs(x, s), A.M_prime),
        ("a", a_iso, A.a_coeff),
        ("a_prime", at_identity(A.A_PRIME_STABLE).subs(A.z, s), A.a_prime),
        ("q", A.Q, A.q),
        ("e_scalar", at_identity(A.E_SCALAR), None),
        ("e_misalign", at_identity(A.E_MISALIGN_STABLE), None),
        ("e_icl", sympy.Symbol("e_scalar") + sympy.Symbol("e_misalign"), None),
        ("e_idg", A.E_IDG, None),
    ]] + [(A.FREE_ENERGY_NAME, sympy.Integer(0) if kinf
           else at_identity(A.free_energy_at_solution(qhat_from)), None)]


def root_equation(ridge: bool) -> sympy.Expr:
    r"""The equation for :math:`\tilde\lambda = \xi` solved by the ``ridge`` (``ridge=True``) and
    ``ridgeless_below`` variants: the alignment model's computed
    :data:`~replica.models.alignment.RIDGE_ROOT_EQUATION` (or its :math:`\lambda = 0` form) at the
    identity, :math:`M = \mathcal M_\kappa(\sigma)`, :math:`\sigma = x^* + \xi`."""
    eq = A.RIDGE_ROOT_EQUATION if ridge else A.RIDGELESS_EQUATION
    sig = at_identity(A.SIGMA).subs(A.lambda_tilde, xi)
    return sympy.expand(eq.xreplace({A.M: MP.subs(x, sig), A.lambda_tilde: xi}))


_SAMPLES = ({alpha: 3, tau: sympy.Rational(1, 2), kappa: sympy.Rational(1, 2), rho: sympy.Rational(1, 2)},
            {alpha: sympy.Rational(1, 7), tau: sympy.Rational(1, 3), kappa: 4, rho: sympy.Rational(1, 100)})


@functools.lru_cache(maxsize=None)
def ridgeless_root(kinf: bool) -> sympy.Expr:
    r"""The ridgeless effective ridge for ``tau < 1`` in closed form: the roots of the computed
    ridgeless equation (:func:`root_equation`; at :math:`\kappa = \infty` its limit) solved by
    SymPy, and the positive one taken (the other is negative: both signs are checked at two
    sample points)."""
    eq = _kappa_infinite(root_equation(False)) if kinf else root_equation(False)
    sols = sympy.solve(eq, xi)
    signs = [[sympy.N(s.xreplace(p)) > 0 for p in _SAMPLES] for s in sols]
    pick = [s for s, sg in zip(sols, signs) if all(sg)]
    if len(pick) != 1 or any(any(sg) for s, sg in zip(sols, signs) if s is not pick[0]):
        raise ValueError(f"no unique positive root of the ridgeless equation: {sols}")
    return pick[0]


def system_of(variant: str) -> System:
    """``ridge`` (one unknown xi = lambda_tilde, the root of the computed ridge equation),
    ``ridgeless_below`` (tau < 1: lambda_tilde the closed-form root of the computed ridgeless
    equation) and ``ridgeless_above`` (tau > 1, lambda_tilde = 0), each with a
    ``_kappa_infinite`` form (kappa -> oo substituted and simplified)."""
    kinf = variant.endswith("_kappa_infinite")
    base = variant.replace("_kappa_infinite", "")
    form = _kappa_infinite if kinf else (lambda e: e)
    if base == "ridge":
        m0 = 1 / (1 + X_STAR)
        eq = form(root_equation(True))
        root = ScalarRoot(xi, eq, lower=0, upper=None,
                          initial=((1 - tau) + sympy.sqrt((1 - tau) ** 2 + 4 * m0 * tau * lam))
                          / (2 * m0), what="isotropic ridge root xi")
        return System(unknowns=(xi,), parameters=PARAMETERS, symbols=SYMBOLS,
                      residuals=[eq],
                      start=Start(roots=(root,), values={xi: xi}, exact=True),
                      report=_intermediates(xi, kinf),
                      # the ridge equation has a second, negative root: not the effective ridge
                      admissible=[(xi, "lambda_tilde > 0")])
    if base == "ridgeless_below":
        report = _intermediates(ridgeless_root(kinf), kinf)
    else:
        report = _intermediates(sympy.Integer(0), kinf, qhat_from="conjugate")
    return System(unknowns=(), parameters=PARAMETERS, symbols=SYMBOLS, residuals=[],
                  start=Start(exact=True), report=report)
