r"""Paper A: ICL error of linear attention for arbitrary pretraining and test task covariances.

Letey, Zavatone-Veth, Lu, Pehlevan, *Pretrain--Test Task Alignment Governs Generalization in
In-Context Learning*, arXiv:2509.26551 (spec: ``shared/spec/alignment.md`` §3). Notation of that
paper: ``rho`` is the label-noise **variance**; ``sigma`` is the effective noise level.

Equations (all written once below as SymPy expressions; ``<.>`` is the spectral average
``(1/d) sum_i`` over the eigenvalues ``lambda_i`` of ``C_train`` and the diagonal ``mu_i`` of
``C_test`` in that eigenbasis):

* resolvent self-consistency (paper eq. (17)), for ``z > 0``

  .. math:: M = \left\langle \frac{1}{a\lambda_i + z}\right\rangle,\qquad
            a = 1 - \frac1\kappa + \frac z\kappa M;

* its derivative by implicit differentiation,
  :math:`M' = -(\langle f^2\rangle + \tfrac M\kappa\langle\lambda f^2\rangle)
  /(1 + \tfrac z\kappa\langle\lambda f^2\rangle)`, with :math:`f_i = 1/(a\lambda_i+z)`,
  :math:`f_i' = -(a'\lambda_i + 1) f_i^2`, :math:`a' = (M + zM')/\kappa`;
* effective noise :math:`\sigma = (\rho + c_{\rm train})/\alpha + \tilde\lambda` with
  :math:`\tilde\lambda M(\sigma) = 1 - \tau` (ridgeless, ``tau < 1``), :math:`\tilde\lambda = 0`
  (ridgeless, ``tau > 1``) or :math:`\tilde\lambda M(\sigma) = 1 - \tau + \tau\lambda/\tilde\lambda`
  (ridge ``lambda > 0``);
* :math:`q` (paper (C.14)), :math:`e_{\rm scalar}` (paper (C.16)), :math:`K = qF + (q\tilde\lambda -
  \sigma^2)F'`, :math:`e_{\rm misalign} = \langle C_{\rm test} K\rangle` and
  :math:`E_{\rm ICL} = e_{\rm scalar} + e_{\rm misalign}`; :math:`e_{\rm IDG} = \tau q` (exact for
  the isotropic model, conjectural otherwise).
"""

from __future__ import annotations

import dataclasses
import functools
from fractions import Fraction

import mpmath
import numpy as np
import sympy

from ..errors import ConvergenceError, ParameterError
from ..numerics import (SolveResult, agreement_digits, bracketed_newton, bracketed_newton_vec,
                        precision, system_report)
from ..params import INF, exact_str, parse_exact, require_nonnegative, require_positive, to_mpf
from ..spectra import Covariance, parse_spec, spectral_pairs_f64, spectral_pairs_mp
from ..symbolic import LAMBDA_I, MU_I, avg, compile_expressions

# ---------------------------------------------------------------------------------------------
# Symbols
# ---------------------------------------------------------------------------------------------
alpha, alpha_test, tau, kappa = sympy.symbols("alpha alpha_test tau kappa", positive=True)
rho, lam = sympy.symbols("rho lambda", nonnegative=True)
z, sigma = sympy.symbols("z sigma", positive=True)
M, M_prime = sympy.symbols("M M'")
lambda_tilde = sympy.Symbol("lambdatilde", nonnegative=True)
c_train, c_test = sympy.symbols("c_train c_test", positive=True)

SYMBOL_NAMES = {lambda_tilde: r"\tilde{\lambda}", M_prime: "M'", alpha_test: r"\alpha_{\rm test}",
                c_train: r"c_{\rm train}", c_test: r"c_{\rm test}"}

# ---------------------------------------------------------------------------------------------
# Equations (the single source of truth)
# ---------------------------------------------------------------------------------------------
A_COEFF = 1 - 1 / kappa + z * M / kappa
"""a(z) = 1 - 1/kappa + z M/kappa."""

F_I = 1 / (A_COEFF * LAMBDA_I + z)
"""Eigenvalue i of the deterministic equivalent F_kappa(z) of (R_k + z I)^{-1}."""

SELF_CONSISTENCY = M - avg(F_I)
"""Paper eq. (17): zero at M = M_kappa(z)."""

a_coeff = sympy.Symbol("a", positive=True)
M_OF_A = (1 - kappa * (1 - a_coeff)) / z
"""M in terms of the coefficient a (inverting a = 1 - 1/kappa + z M/kappa)."""

SELF_CONSISTENCY_A = sympy.expand(z * SELF_CONSISTENCY.subs(M, M_OF_A)).replace(
    lambda e: isinstance(e, type(avg(F_I))), lambda e: avg(sympy.simplify(e.args[0])))
"""z times eq. (17) with the unknown a instead of M: kappa(a - 1) + 1 - <z/(a lambda + z)> = 0.
Increasing in a on (max(0, 1 - 1/kappa), 1]; solving for a keeps full relative precision when
a is tiny (the collapsed phase at small z, where M = (1-kappa)/z + O(1) cancels)."""

M_PRIME_CLOSED = -(avg(F_I**2) + M / kappa * avg(LAMBDA_I * F_I**2)) / \
    (1 + z / kappa * avg(LAMBDA_I * F_I**2))
"""dM/dz from implicit differentiation of eq. (17)."""

A_PRIME = (M + z * M_prime) / kappa
F_PRIME_I = -(A_PRIME * LAMBDA_I + 1) * F_I**2
"""Eigenvalue i of F'_kappa(z) = -F [ (M + z M')/kappa C_train + I ] F."""

SIGMA = (rho + c_train) / alpha + lambda_tilde
"""Effective noise sigma = (rho + c_train)/alpha + lambda_tilde."""

RIDGE_EQUATION = lambda_tilde**2 * M - (1 - tau) * lambda_tilde - tau * lam
"""lambda_tilde M(sigma) = 1 - tau + tau lambda/lambda_tilde, multiplied by lambda_tilde."""

RIDGELESS_EQUATION = lambda_tilde * M - (1 - tau)
"""tau < 1, lambda -> 0+: lambda_tilde M(sigma) = 1 - tau."""

Q = (rho + sigma - sigma**2 * M - lambda_tilde * (1 - 2 * sigma * M - sigma**2 * M_prime)) / \
    (tau - 1 + 2 * lambda_tilde * M + lambda_tilde**2 * M_prime)
"""Pretraining-error term q (paper (C.14)), with M, M' at z = sigma."""

q = sympy.Symbol("q")
E_SCALAR = rho + (c_test + rho) / alpha_test * (1 + (q - 2 * sigma) * M
                                                + (q * lambda_tilde - sigma**2) * M_prime)
"""Scalar part (paper (C.16)); alpha_test = alpha unless a test context length is given."""

K_I = (q * F_I + (q * lambda_tilde - sigma**2) * F_PRIME_I).subs(z, sigma)
"""Eigenvalue k_i of K = q F + (q lambda_tilde - sigma^2) F' (in C_train's eigenbasis)."""

E_MISALIGN = avg(MU_I * K_I)
"""e_misalign = <C_test K> = (1/d) sum_i mu_i k_i."""

RESOLVENT_MEASURE = avg(MU_I * F_I.subs(z, sigma))
"""Alignment measure <C_test F_kappa(sigma)>."""

INVERSE_MEASURE = avg(MU_I / LAMBDA_I)
"""Population measure <C_test C_train^{-1}> (undefined for singular C_train)."""

E_IDG = tau * q
"""In-distribution error: tau q (exact in the isotropic case; conjectural otherwise)."""

# ---------------------------------------------------------------------------------------------
# The same quantities with the coefficient a as an independent variable (what the numerics use)
# ---------------------------------------------------------------------------------------------
# In the collapsed phase at small z (kappa below the rank fraction, alpha large) a = O(z), and
# a = 1 - 1/kappa + z M/kappa computed from M cancels to O(z) from O(1) terms; likewise
# a' = (M + z M')/kappa cancels from O(1/z). The numerics therefore solve for a directly
# (SELF_CONSISTENCY_A) and use the algebraically identical forms below, whose averages have
# positive terms. The tests check each identity symbolically.
F_I_A = 1 / (a_coeff * LAMBDA_I + z)
"""f_i = 1/(a lambda_i + z) with a independent (equal to F_I at a = A_COEFF)."""

M_OF_A_STABLE = avg(F_I_A)
"""M = <1/(a lambda + z)>: a sum of positive terms."""

M_PRIME_STABLE = -(avg(F_I_A**2) + M / kappa * avg(LAMBDA_I * F_I_A**2)) / \
    (1 + z / kappa * avg(LAMBDA_I * F_I_A**2))
"""M_PRIME_CLOSED with f written through a."""

a_prime = sympy.Symbol("a'")
A_PRIME_STABLE = a_coeff * avg(LAMBDA_I * F_I_A**2) / (kappa + z * avg(LAMBDA_I * F_I_A**2))
"""a' = (M + z M')/kappa = a <lambda f^2>/(kappa + z <lambda f^2>), from M - z<f^2> =
a<lambda f^2> (summand algebra: f - z f^2 = a lambda f^2)."""

K_I_STABLE = (q * F_I_A + (q * lambda_tilde - sigma**2)
              * (-(a_prime * LAMBDA_I + 1) * F_I_A**2)).subs(z, sigma)
"""K_I with f and a' as above."""

E_MISALIGN_STABLE = avg(MU_I * K_I_STABLE)
RESOLVENT_MEASURE_STABLE = avg(MU_I * F_I_A.subs(z, sigma))


# ---------------------------------------------------------------------------------------------
# Compiled evaluators
# ---------------------------------------------------------------------------------------------
PARAM_SYMBOLS = (alpha, alpha_test, tau, kappa, rho, lam, c_train, c_test)


@functools.lru_cache(maxsize=None)
def _compiled(kappa_infinite: bool):
    """Evaluators, with ``kappa -> oo`` substituted when the task diversity is infinite."""

    def k(e):
        return e.subs(kappa, sympy.oo) if kappa_infinite else e

    g = k(SELF_CONSISTENCY)
    resolvent = compile_expressions([g, sympy.diff(g, M)], [M, z, kappa])
    resolvent_a = compile_expressions([SELF_CONSISTENCY_A, sympy.diff(SELF_CONSISTENCY_A, a_coeff)],
                                      [a_coeff, z, kappa])
    mprime = compile_expressions([k(M_PRIME_CLOSED)], [M, z, kappa])
    a_inf = {a_coeff: 1} if kappa_infinite else {}
    stable = compile_expressions([k(M_OF_A_STABLE.subs(a_inf)), k(M_PRIME_STABLE.subs(a_inf)),
                                  k(A_PRIME_STABLE.subs(a_inf))], [M, a_coeff, z, kappa])
    at_sigma = [k(e).subs(z, sigma) for e in (SELF_CONSISTENCY, sympy.diff(SELF_CONSISTENCY, M))]
    sig = SIGMA
    sys_args = [M, lambda_tilde] + list(PARAM_SYMBOLS)
    e1 = at_sigma[0].subs(sigma, sig)
    systems = {}
    for regime, e2 in (("ridge", RIDGE_EQUATION), ("ridgeless", RIDGELESS_EQUATION)):
        F = [e1, e2]
        J = [sympy.diff(f, v) for f in F for v in (M, lambda_tilde)]
        systems[regime] = compile_expressions(F + J, sys_args)
    F1 = [e1.subs(lambda_tilde, 0)]
    systems["interpolating"] = compile_expressions(F1 + [sympy.diff(F1[0], M)], sys_args)
    obs_args = [M, M_prime, q, lambda_tilde, sigma, a_coeff, a_prime] + list(PARAM_SYMBOLS)
    observables = compile_expressions(
        [Q, E_SCALAR, k(E_MISALIGN_STABLE.subs(a_inf)), k(RESOLVENT_MEASURE_STABLE.subs(a_inf)),
         E_IDG], obs_args)
    inverse = compile_expressions([INVERSE_MEASURE], [])
    return dict(resolvent=resolvent, resolvent_a=resolvent_a, mprime=mprime, stable=stable,
                systems=systems, observables=observables, inverse=inverse)


# ---------------------------------------------------------------------------------------------
# Parameters
# ---------------------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class AlignmentParams:
    """Exact parameters of paper A's theory. ``kappa`` may be ``"inf"``."""

    alpha: Fraction
    tau: Fraction
    kappa: object
    rho: Fraction
    lam: Fraction
    train: Covariance
    test: Covariance
    alpha_test: Fraction

    @property
    def d(self) -> int:
        return self.train.d

    @property
    def regime(self) -> str:
        if self.lam > 0:
            return "ridge"
        return "ridgeless" if self.tau < 1 else "interpolating"

    def echo(self) -> dict:
        return {"alpha": exact_str(self.alpha), "tau": exact_str(self.tau),
                "kappa": exact_str(self.kappa), "rho": exact_str(self.rho),
                "lam": exact_str(self.lam), "d": str(self.d), "train": self.train.spec,
                "test": self.test.spec, "alpha_test": exact_str(self.alpha_test)}


def make_params(alpha, tau, kappa, rho, lam=0, d=None, train="identity", test="identity",
                alpha_test=None) -> AlignmentParams:
    """Validate and convert parameters (strings such as ``"3/10"``, ints, Fractions)."""
    a = require_positive(parse_exact(alpha, "--alpha"), "--alpha")
    t = require_positive(parse_exact(tau, "--tau"), "--tau")
    k = require_positive(parse_exact(kappa, "--kappa", allow_inf=True), "--kappa", allow_inf=True)
    r = require_nonnegative(parse_exact(rho, "--rho"), "--rho")
    lm = require_nonnegative(parse_exact(lam, "--lam"), "--lam")
    at = a if alpha_test is None else require_positive(parse_exact(alpha_test, "--alpha-test"),
                                                       "--alpha-test")
    if isinstance(train, Covariance):
        d = train.d if d is None else d
    if d is None:
        raise ParameterError("--d", "is required for the alignment model")
    try:
        d = int(parse_exact(d, "--d")) if not isinstance(d, int) else d
    except (TypeError, ValueError):
        raise ParameterError("--d", f"must be a positive integer, got {d!r}") from None
    if d <= 0:
        raise ParameterError("--d", f"must be a positive integer, got {d}")
    tr = train if isinstance(train, Covariance) else parse_spec(train, d, "--train")
    te = test if isinstance(test, Covariance) else parse_spec(test, d, "--test")
    if tr.d != d or te.d != d:
        raise ParameterError("--d", "covariance sizes differ from d")
    if lm == 0 and t == 1:
        raise ParameterError("--tau", "the ridgeless theory diverges at tau = 1 (interpolation "
                                      "threshold); pass --lam > 0")
    return AlignmentParams(a, t, k, r, lm, tr, te, at)


def _param_values_mp(p: AlignmentParams, pairs):
    c_tr = mpmath.fsum(w * l for l, w in zip(pairs.lam, pairs.weight))
    c_te = mpmath.fsum(w * m for m, w in zip(pairs.mu, pairs.weight))
    kap = mpmath.inf if p.kappa == INF else to_mpf(p.kappa)
    return [to_mpf(p.alpha), to_mpf(p.alpha_test), to_mpf(p.tau), kap, to_mpf(p.rho),
            to_mpf(p.lam), c_tr, c_te]


# ---------------------------------------------------------------------------------------------
# Float64 path (vectorised over parameter grids)
# ---------------------------------------------------------------------------------------------
def resolvent_f64(zv, kappa_v, arrays, kappa_infinite=False, return_a=False):
    """``M_kappa(z)`` in float64 for arrays ``z``, ``kappa`` (broadcast): safeguarded Newton on
    the increasing :data:`SELF_CONSISTENCY_A` for ``a`` in ``(max(0, 1 - 1/kappa), 1]``, then
    ``M = <1/(a lambda + z)>`` (positive terms). ``return_a`` also returns ``a``."""
    zv, kappa_v = np.broadcast_arrays(np.asarray(zv, float), np.asarray(kappa_v, float))
    lam_, _, w_ = arrays
    if kappa_infinite:
        a = np.ones_like(zv)
    else:
        comp = _compiled(False)["resolvent_a"]
        c = float(np.sum(lam_ * w_))
        lo = np.maximum(0.0, 1 - 1 / kappa_v)
        hi = np.ones_like(zv) * (1 + 4e-16)
        a0 = np.clip(1 - 1 / kappa_v + zv / (c + zv) / kappa_v, lo + (hi - lo) * 1e-3, 1.0)

        def fdf(a_):
            return comp.f64([a_, zv, kappa_v], arrays)

        a, _ = bracketed_newton_vec(fdf, lo, hi, a0, increasing=True, rtol=4e-16,
                                    what="M_kappa (coefficient a)")
    m = np.sum(w_ / (a[..., None] * lam_ + zv[..., None]), axis=-1)
    return (m, a) if return_a else m


def solve_float64(p: AlignmentParams | None = None, *, train=None, test=None, alpha=None,
                  tau=None, kappa=None, rho=None, lam=0.0, alpha_test=None):
    """Vectorised float64 evaluation of the theory.

    Either pass one :class:`AlignmentParams`, or covariances ``train``/``test`` and NumPy
    arrays (any common shape) for ``alpha, tau, kappa, rho, lam, alpha_test``. Returns a dict of
    arrays: ``M, M_prime, lambda_tilde, sigma, q, e_scalar, e_misalign, e_icl, e_idg,
    resolvent``. ``kappa = inf`` is allowed only as a whole array of ``inf``.
    """
    if p is not None:
        train, test = p.train, p.test
        alpha, tau, rho, lam = (float(p.alpha), float(p.tau), float(p.rho), float(p.lam))
        kappa = np.inf if p.kappa == INF else float(p.kappa)
        alpha_test = float(p.alpha_test)
    if alpha_test is None:
        alpha_test = alpha
    alpha, tau, kappa, rho, lam, alpha_test = np.broadcast_arrays(
        *(np.asarray(v, dtype=float) for v in (alpha, tau, kappa, rho, lam, alpha_test)))
    kinf = bool(np.all(np.isinf(kappa)))
    if np.any(np.isinf(kappa)) and not kinf:
        raise ParameterError("--kappa", "float64 grids cannot mix finite and infinite kappa")
    if np.any((lam == 0) & (tau == 1)):
        raise ParameterError("--tau", "the ridgeless theory diverges at tau = 1; pass --lam > 0")
    pairs = spectral_pairs_f64(train, test)
    arrays = pairs.as_arrays()
    c_tr = float(np.sum(arrays[0] * arrays[2]))
    c_te = float(np.sum(arrays[1] * arrays[2]))
    comp = _compiled(kinf)
    x0 = (rho + c_tr) / alpha

    def m_and_mp(s, with_a=False):
        m, a = resolvent_f64(s, kappa, arrays, kinf, return_a=True)
        _, mp_, ap = comp["stable"].f64([m, a, s, kappa], arrays)
        return (m, mp_, a, ap) if with_a else (m, mp_)

    need = (lam > 0) | (tau < 1)
    lt = np.zeros_like(x0)
    if np.any(need):
        m0 = 1.0 / (c_tr + x0)
        start = ((1 - tau) + np.sqrt((1 - tau) ** 2 + 4 * m0 * tau * lam)) / (2 * m0)
        start = np.where(start > 0, start, tau * lam / ((tau - 1) * m0 + 1e-300))
        start = np.where(need, np.maximum(start, 1e-300), 1.0)

        def fdf(l):
            m, mp_ = m_and_mp(x0 + l)
            f = l * m - (1 - tau) - tau * lam / l
            df = m + l * mp_ + tau * lam / l**2
            return np.where(need, f, 0.0), np.where(need, df, 1.0)

        lt, _ = bracketed_newton_vec(fdf, np.zeros_like(x0), np.full_like(x0, np.inf), start,
                                     increasing=True, rtol=4e-16, what="lambda_tilde")
        lt = np.where(need, lt, 0.0)
    s = x0 + lt
    m, mp_, a, ap = m_and_mp(s, with_a=True)
    obs_args = lambda qv: [m, mp_, qv, lt, s, a, ap, alpha, alpha_test, tau, kappa, rho, lam,
                           np.full_like(m, c_tr), np.full_like(m, c_te)]
    qv = comp["observables"].f64(obs_args(np.zeros_like(m)), arrays)[0]
    _, e_sc, e_mis, res, e_idg = comp["observables"].f64(obs_args(qv), arrays)
    return dict(M=m, M_prime=mp_, lambda_tilde=lt, sigma=s, q=qv, e_scalar=e_sc,
                e_misalign=e_mis, e_icl=e_sc + e_mis, e_idg=e_idg, resolvent=res)


# ---------------------------------------------------------------------------------------------
# High-precision path
# ---------------------------------------------------------------------------------------------
def resolvent_mp(zv, kappa_v, pairs, start=None, return_a=False):
    """``M_kappa(z)`` at the working precision.

    Solved for the coefficient ``a = 1 - 1/kappa + z M/kappa`` by safeguarded Newton on the
    increasing function :data:`SELF_CONSISTENCY_A` in ``(max(0, 1 - 1/kappa), 1]`` (the bracket of
    spec §3.1 for ``M``), then ``M = <1/(a lambda + z)>`` (positive terms: full relative
    precision in both phases). For ``kappa = oo``, ``a = 1``. ``start`` is an approximate ``M``;
    ``return_a`` also returns ``a``.
    """
    if kappa_v == mpmath.inf:
        a = mpmath.mpf(1)
    else:
        comp = _compiled(False)["resolvent_a"]
        lo = max(mpmath.mpf(0), 1 - 1 / kappa_v)
        hi = mpmath.mpf(1)
        a0 = None
        if start is not None:
            a0 = 1 - 1 / kappa_v + zv * mpmath.mpf(start) / kappa_v
        if a0 is None or not (lo < a0 < hi):
            c = mpmath.fsum(w * l for l, w in zip(pairs.lam, pairs.weight))
            a0 = 1 - 1 / kappa_v + zv / (c + zv) / kappa_v
            if not (lo < a0 < hi):
                a0 = (lo + hi) / 2

        def fdf(a_):
            h, dh = comp.mp([a_, zv, kappa_v], pairs)
            return h, dh

        a, _ = bracketed_newton(fdf, lo, hi * (1 + 4 * mpmath.eps), a0, increasing=True,
                                rtol=mpmath.eps * 4, what="M_kappa (coefficient a)")
    m = mpmath.fsum(w / (a * l + zv) for l, w in zip(pairs.lam, pairs.weight))
    return (m, a) if return_a else m


def _solve_mp_once(p: AlignmentParams, start=None):
    """Nested safeguarded solves (lambda_tilde outside, the coefficient a inside), then the
    observables from the cancellation-free forms; the residual and the Jacobian's condition are
    those of the (M, lambda_tilde) system (paper eq. (17) and the lambda_tilde equation)
    evaluated at the solution with the exact SymPy Jacobian."""
    pairs = spectral_pairs_mp(p.train, p.test)
    vals = _param_values_mp(p, pairs)
    a_, at_, t_, k_, r_, l_, ctr, cte = vals
    kinf = p.kappa == INF
    comp = _compiled(kinf)
    x0 = (r_ + ctr) / a_
    iterations = 0
    regime = p.regime

    def m_mp(s, with_a=False):
        m, a = resolvent_mp(s, k_, pairs, return_a=True)
        _, mp_, ap = comp["stable"].mp([m, a, s, k_], pairs)
        return (m, mp_, a, ap) if with_a else (m, mp_)

    if regime == "interpolating":
        lt = mpmath.mpf(0)
    else:
        def fdf(l):
            m, mp_ = m_mp(x0 + l)
            return l * m - (1 - t_) - t_ * l_ / l, m + l * mp_ + t_ * l_ / l**2

        if start is not None and start[1] > 0:
            l0 = mpmath.mpf(start[1])
        else:
            m0 = 1 / (ctr + x0)
            l0 = ((1 - t_) + mpmath.sqrt((1 - t_) ** 2 + 4 * m0 * t_ * l_)) / (2 * m0)
            if l0 <= 0:
                l0 = t_ * l_ / ((t_ - 1) * m0)
        lt, iterations = bracketed_newton(fdf, mpmath.mpf(0), mpmath.inf, l0, increasing=True,
                                          rtol=mpmath.eps * 8, what="lambda_tilde")
    s = x0 + lt
    m, mp_, a, ap = m_mp(s, with_a=True)
    system = comp["systems"][regime]
    if regime == "interpolating":
        out = system.mp([m, mpmath.mpf(0)] + vals, pairs)
        rep = system_report([out[0]], mpmath.matrix([[out[1]]]), scale=[m])
    else:
        out = system.mp([m, lt] + vals, pairs)
        rep = system_report(out[:2], mpmath.matrix([[out[2], out[3]], [out[4], out[5]]]),
                            scale=[m, max(lt * m, 1)])
    obs = comp["observables"]
    qv = obs.mp([m, mp_, 0, lt, s, a, ap] + vals, pairs)[0]
    _, e_sc, e_mis, res, e_idg = obs.mp([m, mp_, qv, lt, s, a, ap] + vals, pairs)
    values = dict(M=m, M_prime=mp_, lambda_tilde=lt, sigma=s, q=qv, e_scalar=e_sc,
                  e_misalign=e_mis, e_icl=e_sc + e_mis, e_idg=e_idg, resolvent=res, a=a,
                  a_prime=ap)
    if p.train.rank() == p.d:
        values["inverse"] = comp["inverse"].mp([], pairs)[0]
    else:
        values["inverse"] = None
    values["cka_inv"] = cka_inverse_mp(p.train, p.test)
    return values, rep, iterations


def cka_inverse_mp(A: Covariance, B: Covariance):
    """``[cka(A,B)/sqrt(cka(A,A) cka(B,B))]^{-1}`` with ``cka(A,B) = tr(HAHB)/(d-1)^2`` and the
    centring ``H = I - 11^T/d``; uses ``tr(HAHB) = tr(AB) - (2/d)(A1).(B1) + (1^T A 1)(1^T B 1)/d^2``.
    ``None`` when the centred alignment vanishes."""
    d = A.d

    def parts(C):
        if C.is_diagonal:
            v = C.diag_mp()
            return ("diag", v, v, mpmath.fsum(v))
        m = C.matrix_mp()
        row = [mpmath.fsum(m[i, j] for j in range(d)) for i in range(d)]
        return ("mat", m, row, mpmath.fsum(row))

    def trace_prod(X, Y):
        if X[0] == "diag" and Y[0] == "diag":
            return mpmath.fsum(a * b for a, b in zip(X[1], Y[1]))
        mx = X[1] if X[0] == "mat" else mpmath.diag(X[1])
        my = Y[1] if Y[0] == "mat" else mpmath.diag(Y[1])
        return mpmath.fsum(mx[i, j] * my[j, i] for i in range(d) for j in range(d))

    def hsic(X, Y):
        return trace_prod(X, Y) - 2 * mpmath.fsum(a * b for a, b in zip(X[2], Y[2])) / d \
            + X[3] * Y[3] / d**2

    PA, PB = parts(A), parts(B)
    ab, aa, bb = hsic(PA, PB), hsic(PA, PA), hsic(PB, PB)
    if ab == 0 or aa <= 0 or bb <= 0:
        return None
    return mpmath.sqrt(aa * bb) / ab


REPORTED = ("e_icl", "e_scalar", "e_misalign", "e_idg", "q", "sigma", "lambda_tilde", "M",
            "M_prime", "resolvent", "inverse", "cka_inv")


def solve(alpha, tau, kappa, rho, lam=0, d=None, train="identity", test="identity",
          alpha_test=None, dps: int = 30, verify: bool = True) -> SolveResult:
    """Solve paper A's theory at ``dps`` digits and return a :class:`SolveResult`.

    The digits are verified by a second solve at ``dps + max(10, dps // 2)`` digits
    (``verify=False`` skips it and reports ``digits = None``).
    """
    p = make_params(alpha, tau, kappa, rho, lam, d, train, test, alpha_test)
    return solve_params(p, dps=dps, verify=verify)


def _float_start(p):
    try:
        with np.errstate(all="ignore"):
            out = solve_float64(p)
        start = (float(out["M"]), float(out["lambda_tilde"]))
        if all(np.isfinite(start)) and start[0] > 0:
            return start
    except (ConvergenceError, FloatingPointError, OverflowError, ZeroDivisionError):
        pass
    return None


def solve_params(p: AlignmentParams, dps: int = 30, verify: bool = True,
                 model: str = "alignment") -> SolveResult:
    start = _float_start(p)
    with precision(dps):
        values, rep, iters = _solve_mp_once(p, start)
    digits, how = None, "not verified"
    if verify:
        hi = dps + max(10, dps // 2)
        with precision(hi):
            ref, _, _ = _solve_mp_once(p, start)
            digits = dps
            for key in REPORTED:
                if values.get(key) is not None and ref.get(key) is not None:
                    digits = min(digits, agreement_digits(values[key], ref[key], dps))
        how = f"agreement of every reported value with a re-solve at {hi} digits"
    notes = ["e_idg = tau*q is conjectural for anisotropic C_train (spec alignment.md §3.3)"]
    if p.regime == "ridge":
        notes.append("ridge lambda > 0 uses lambda_tilde M = 1 - tau + tau*lambda/lambda_tilde "
                     "(spec §3.7(vii), inferred by analogy with paper B)")
    if values["inverse"] is None:
        notes.append("inverse measure <C_test C_train^-1> is undefined: C_train is singular")
    if values["cka_inv"] is None:
        notes.append("cka_inv is undefined: the centred alignment of C_train and C_test is 0")
    if not (p.train.is_diagonal and p.test.is_diagonal):
        notes.append("non-commuting covariances: mu_i = u_i^T C_test u_i in C_train's eigenbasis")
    groups = {
        "errors": {k: values[k] for k in ("e_icl", "e_scalar", "e_misalign", "e_idg")},
        "intermediates": {k: values[k] for k in ("q", "sigma", "lambda_tilde", "M", "M_prime")},
        "measures": {"e_misalign": values["e_misalign"], "resolvent": values["resolvent"],
                     "inverse": values["inverse"], "cka_inv": values["cka_inv"]},
    }
    return SolveResult(model=model, params=p.echo(), dps=dps, groups=groups, converged=True,
                       iterations=iters, residual=rep.residual, condition=rep.condition,
                       digits=digits, digits_how=how, notes=notes)


def misalignment_spectrum(alpha, tau, kappa, rho, lam=0, d=None, train="identity", dps: int = 30):
    """Eigenvalues ``k_i`` of ``K = q F + (q lambda_tilde - sigma^2) F'`` paired with the
    training eigenvalues ``lambda_i`` (sorted by ``lambda_i`` decreasing), at ``dps`` digits.

    ``e_misalign = (1/d) sum_i mu_i k_i``: at fixed trace of ``C_test`` the rank-one test along the
    direction with the smallest ``k_i`` minimises the error (spec §3.9).
    """
    p = make_params(alpha, tau, kappa, rho, lam, d, train, train)
    start = _float_start(p)
    with precision(dps):
        vals, _, _ = _solve_mp_once(p, start)
        pairs = spectral_pairs_mp(p.train, p.train)
        fn = sympy.lambdify([LAMBDA_I, q, lambda_tilde, sigma, a_coeff, a_prime], K_I_STABLE,
                            modules="mpmath")
        out = sorted(((l, fn(l, vals["q"], vals["lambda_tilde"], vals["sigma"], vals["a"],
                             vals["a_prime"])) for l in set(pairs.lam)),
                     key=lambda t: -t[0])
    return [l for l, _ in out], [k for _, k in out]
