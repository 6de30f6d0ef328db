r"""Paper B: closed forms of the isotropic theory (``C_train = C_test = I``).

Lu, Letey, Zavatone-Veth, Maiti, Pehlevan, *Asymptotic theory of in-context learning by linear
attention*, arXiv:2405.11751 (spec: ``shared/spec/alignment.md`` §4). ``rho`` is the label-noise
variance. With :math:`x^* = (1+\rho)/\alpha` and the Marchenko--Pastur transform
:math:`\mathcal M_\kappa` (:func:`replica.spectra.marchenko_pastur_expr`, ``c = 1``):

* :math:`m^* = \mathcal M_\kappa(x^*)`, :math:`\mu^* = x^*\mathcal M_{\kappa/\tau}(x^*)`,
  :math:`k^* = [1 - \kappa (m^*/(\kappa + m^*))^2]^{-1}`;
* ridgeless ICL error for ``tau < 1`` and ``tau > 1``, ridgeless IDG error for both, and the ridge
  ICL error with :math:`\xi` the root of :math:`1 - \tau + \tau\lambda/\xi = \xi\mathcal
  M_\kappa(\xi + x^*)` (spec §4.2--4.3).

This model is the oracle that :mod:`replica.models.alignment` must reduce to at
``C_train = C_test = I``; the reported intermediates (``q, sigma, lambda_tilde, M, M_prime``) and
the split ``e_scalar + e_misalign`` use paper A's isotropic specialisation (spec §3.7(i)).
"""

from __future__ import annotations

import functools

import mpmath
import sympy

from ..errors import ParameterError
from ..numerics import SolveResult, agreement_digits, bracketed_newton, precision
from ..params import INF, exact_str, parse_exact, require_nonnegative, require_positive, to_mpf
from ..spectra import marchenko_pastur_expr, marchenko_pastur_prime_expr
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


@functools.lru_cache(maxsize=None)
def _compiled(kappa_infinite: bool):
    def k(e):
        return sympy.simplify(e.subs(kappa, sympy.oo)) if kappa_infinite else e

    args = [alpha, tau, kappa, rho, lam]
    lam_mp = {"mpmath": mpmath}

    def lamb(e, extra=()):
        return sympy.lambdify(args + list(extra), k(e), modules="mpmath")

    del lam_mp
    return dict(
        icl_lt1=lamb(ICL_RIDGELESS_TAU_LT_1), icl_gt1=lamb(ICL_RIDGELESS_TAU_GT_1),
        idg_lt1=lamb(IDG_RIDGELESS_TAU_LT_1), idg_gt1=lamb(IDG_RIDGELESS_TAU_GT_1),
        epsilon=lamb(EPSILON), icl_ridge=lamb(ICL_RIDGE, [xi]), c_e=lamb(C_E, [xi]),
        ridge=lamb(RIDGE_EQUATION, [xi]), ridge_d=lamb(sympy.diff(RIDGE_EQUATION, xi), [xi]),
        M=sympy.lambdify([x, kappa], k(MP), modules="mpmath"),
        Mp=sympy.lambdify([x, kappa], k(MP_PRIME), modules="mpmath"),
        observables=sympy.lambdify(
            [A.M, A.M_prime, A.q, A.lambda_tilde, A.sigma, alpha, tau, rho],
            [A.Q, A.E_SCALAR.subs({A.c_test: 1, A.alpha_test: alpha}),
             (A.q * A.M + (A.q * A.lambda_tilde - A.sigma**2) * A.M_prime)], modules="mpmath"),
    )


def make_params(alpha_, tau_, kappa_, rho_, lam_=0):
    a = require_positive(parse_exact(alpha_, "--alpha"), "--alpha")
    t = require_positive(parse_exact(tau_, "--tau"), "--tau")
    k = require_positive(parse_exact(kappa_, "--kappa", allow_inf=True), "--kappa", allow_inf=True)
    r = require_nonnegative(parse_exact(rho_, "--rho"), "--rho")
    lm = require_nonnegative(parse_exact(lam_, "--lam"), "--lam")
    if lm == 0 and t == 1:
        raise ParameterError("--tau", "the ridgeless theory diverges at tau = 1 (interpolation "
                                      "threshold); pass --lam > 0")
    return dict(alpha=a, tau=t, kappa=k, rho=r, lam=lm)


def _solve_once(p):
    kinf = p["kappa"] == INF
    c = _compiled(kinf)
    vals = [to_mpf(p["alpha"]), to_mpf(p["tau"]),
            mpmath.mpf(1) if kinf else to_mpf(p["kappa"]), to_mpf(p["rho"]), to_mpf(p["lam"])]
    a_, t_, k_, r_, l_ = vals
    xs = (1 + r_) / a_
    iterations = 0
    if p["lam"] > 0:
        m0 = 1 / (1 + xs)
        x0 = ((1 - t_) + mpmath.sqrt((1 - t_) ** 2 + 4 * m0 * t_ * l_)) / (2 * m0)

        def fdf(v):
            return c["ridge"](*vals, v), c["ridge_d"](*vals, v)

        lt, iterations = bracketed_newton(fdf, mpmath.mpf(0), mpmath.inf, x0, increasing=True,
                                          rtol=8 * mpmath.eps, what="isotropic ridge root xi")
        e_icl = c["icl_ridge"](*vals, lt)
        residual = abs(c["ridge"](*vals, lt))
    elif p["tau"] < 1:
        lt = c["epsilon"](*vals)
        e_icl = c["icl_lt1"](*vals)
        e_idg = c["idg_lt1"](*vals)
        residual = mpmath.mpf(0)
    else:
        lt = mpmath.mpf(0)
        e_icl = c["icl_gt1"](*vals)
        e_idg = c["idg_gt1"](*vals)
        residual = mpmath.mpf(0)
    s = xs + lt
    m, mp_ = c["M"](s, k_), c["Mp"](s, k_)
    qv = c["observables"](m, mp_, 0, lt, s, a_, t_, r_)[0]
    _, e_sc, e_mis = c["observables"](m, mp_, qv, lt, s, a_, t_, r_)
    if p["lam"] > 0:
        e_idg = t_ * qv
    return dict(e_icl=e_icl, e_scalar=e_sc, e_misalign=e_mis, e_idg=e_idg, q=qv, sigma=s,
                lambda_tilde=lt, M=m, M_prime=mp_), residual, iterations


def solve(alpha, tau, kappa, rho, lam=0, dps: int = 30, verify: bool = True) -> SolveResult:
    """Evaluate paper B's closed forms at ``dps`` digits (ridge: one monotone root ``xi``)."""
    p = make_params(alpha, tau, kappa, rho, lam)
    with precision(dps):
        vals, residual, iters = _solve_once(p)
    digits, how = None, "not verified"
    if verify:
        hi = dps + max(10, dps // 2)
        with precision(hi):
            ref, _, _ = _solve_once(p)
            digits = min(agreement_digits(vals[k], ref[k], dps) for k in vals)
        how = f"agreement of every reported value with a re-evaluation at {hi} digits"
    notes = ["e_icl from paper B's closed forms; e_scalar/e_misalign split from paper A (C = I)"]
    if p["lam"] > 0:
        notes.append("with ridge lambda > 0, e_idg = tau*q is a conjecture (no finite-lambda IDG "
                     "formula in paper B; spec alignment.md §4.2)")
    groups = {"errors": {k: vals[k] for k in ("e_icl", "e_scalar", "e_misalign", "e_idg")},
              "intermediates": {k: vals[k] for k in ("q", "sigma", "lambda_tilde", "M", "M_prime")}}
    echo = {k: exact_str(v) for k, v in p.items()}
    return SolveResult(model="isotropic", params=echo, dps=dps, groups=groups, converged=True,
                       iterations=iters, residual=residual, condition=None, digits=digits,
                       digits_how=how, notes=notes)
