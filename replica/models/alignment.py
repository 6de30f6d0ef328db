r"""Paper A: ICL error of linear attention for arbitrary pretraining and test task covariances.

Letey, Zavatone-Veth, Lu, Pehlevan, *Pretrain--Test Task Alignment Governs Generalization in
In-Context Learning*, arXiv:2509.26551. Notation of that paper: ``rho`` is the label-noise
**variance**; ``sigma`` is the effective noise level.

This module holds the mathematics; :mod:`replica.models.alignment_problem` declares the model to
the engine (:mod:`replica.numerics.driver`), which solves it. The equations (``<.>`` is the spectral average ``(1/d) sum_i`` over the eigenvalues
``lambda_i`` of ``C_train`` and the diagonal ``mu_i`` of ``C_test`` in that eigenbasis):

* resolvent self-consistency (paper eq. (17)), for ``z > 0``

  .. math:: M = \left\langle \frac{1}{a\lambda_i + z}\right\rangle,\qquad
            a = 1 - \frac1\kappa + \frac z\kappa M;

* its derivative by implicit differentiation,
  :math:`M' = -(\langle f^2\rangle + \tfrac M\kappa\langle\lambda f^2\rangle)
  /(1 + \tfrac z\kappa\langle\lambda f^2\rangle)`, with :math:`f_i = 1/(a\lambda_i+z)`,
  :math:`f_i' = -(a'\lambda_i + 1) f_i^2`, :math:`a' = (M + zM')/\kappa`;
* effective noise :math:`\sigma = (\rho + c_{\rm train})/\alpha + \tilde\lambda` with
  :math:`\tilde\lambda M(\sigma) = 1 - \tau + \tau\lambda/\tilde\lambda` (ridge ``lambda > 0``; at
  ``lambda = 0`` the ridgeless limit :math:`\tilde\lambda M(\sigma) = 1 - \tau` for ``tau < 1``,
  and :math:`\tilde\lambda = 0` for ``tau > 1``);
* :math:`q` (paper (C.14)), :math:`e_{\rm scalar}` (paper (C.16)), :math:`K = qF + (q\tilde\lambda -
  \sigma^2)F'`, :math:`e_{\rm misalign} = \langle C_{\rm test} K\rangle` and
  :math:`E_{\rm ICL} = e_{\rm scalar} + e_{\rm misalign}`; :math:`e_{\rm IDG} = \tau q` (derived for
  every :math:`C_{\rm train}` from the estimator's stated moments, as :math:`E_{\rm ICL}` is).

Declared system (:func:`system_of`): the unknowns are the coefficient :math:`a` and
:math:`\tilde\lambda`, the equations :data:`SELF_CONSISTENCY_A` at :math:`z = \sigma` and
:data:`RIDGE_ROOT_EQUATION`; the start solves them as nested monotone roots (:math:`\tilde\lambda`
outside, :math:`a` inside, so each is unique in its bracket). At ``tau > 1``, ``lambda = 0``
(interpolating) only :math:`a` is unknown; at ``kappa = inf``, :math:`a = 1`.
"""

from __future__ import annotations

import functools

import sympy

from ..problem import ScalarRoot, Start, System
from ..symbolic import LAMBDA_I, MU_I, avg
from .parameters import train_and_test

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
    lambda e: isinstance(e, type(avg(F_I))), lambda e: avg(sympy.cancel(e.args[0])))
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

RIDGE_ROOT_EQUATION = sympy.expand(RIDGE_EQUATION / lambda_tilde)
"""The form of :data:`RIDGE_EQUATION` that is solved: lambda_tilde M - (1 - tau) -
tau lambda/lambda_tilde, increasing in lambda_tilde > 0 (lambda_tilde M(sigma(lambda_tilde))
increases and -tau lambda/lambda_tilde increases), so its root is unique; at lambda = 0 it is
:data:`RIDGELESS_EQUATION`."""

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
"""In-distribution error: tau q, the error on prompts whose task was seen in pretraining (derived
for every C_train from the ridge estimator's stated moments, ``replica appendix alignment``)."""

E_TM = tau * q + (c_train + rho) * (1 / alpha_test - 1 / alpha) * (
    1 + (q - 2 * sigma) * M + (q * lambda_tilde - sigma**2) * M_prime)
"""Task-memorisation error: a test prompt whose task is one of the k pretraining tasks, with a
fresh context of length alpha_test d; tau q at alpha_test = alpha (derived in
:mod:`replica.derivations.alignment_from_model`)."""

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
# The decomposition of E_ICL: signal, memorisation, structural, noise
# ---------------------------------------------------------------------------------------------
# Per eigenvalue r of R_k the estimator is its mean R_k (R_k + sigma)^-1 plus a fluctuation of
# covariance proportional to q (r + s) f^2, f = 1/(r + sigma), s = (rho + c_train)/alpha the
# context noise of a pretraining prompt (replica.derivations.alignment_from_model: derived_k,
# derived_norm). Both E[(I - Gamma)^T (I - Gamma)] (the misalignment part, weighted by C_test)
# and E[Gamma Gamma^T] (the scalar part, weighted by s_test) split into the mean part (signal),
# the fluctuation along the task directions, q r f^2 (memorisation of the finite task set) and
# the fluctuation driven by the context noise, q s f^2 (structural); the label noise rho of the
# test prompt is the fourth part. With the deterministic equivalents (f_i through a, F' =
# -(a' lambda + 1) f^2) every part is an average of positive terms:
#   mean:   sigma^2 f^2 (a' lambda + 1) per test weight; a^2 lambda^2 f^2 + sigma^2 a' lambda f^2
#           per unit weight (= 1 - 2 sigma M - sigma^2 M'),
#   q r f^2:  q (a - sigma a') lambda f^2  (= q (F + sigma F')),
#   q s f^2:  q s (a' lambda + 1) f^2      (= -q s F').
# On C_train = P/rho they are the low-rank model's signal, memorisation and structural parts
# (tests/test_alignment_decomposition.py, 25+ digits).
S_CONTEXT = (rho + c_train) / alpha
"""s: the context noise of a pretraining prompt (sigma = s + lambda_tilde)."""
S_TEST = (c_test + rho) / alpha_test
"""s_test: the context noise of a test prompt (the factor of the scalar part)."""
_F2 = F_I_A**2
_FP_NEG = (a_prime * LAMBDA_I + 1) * _F2
"""-F'_i = (a' lambda_i + 1) f_i^2."""
DECOMPOSITION = {
    "signal": (S_TEST * avg(LAMBDA_I * _F2 * (a_coeff**2 * LAMBDA_I + z**2 * a_prime))
               + z**2 * avg(MU_I * _FP_NEG)).subs(z, sigma),
    "memorization": (q * (a_coeff - z * a_prime)
                     * (S_TEST * avg(LAMBDA_I * _F2) + avg(MU_I * LAMBDA_I * _F2))).subs(z, sigma),
    "structural": (q * S_CONTEXT * (S_TEST * avg(_FP_NEG) + avg(MU_I * _FP_NEG))).subs(z, sigma),
    "noise": rho,
}
"""The four parts of E_ICL (they sum to e_scalar + e_misalign), in a, a', lambda_tilde, q."""



# ---------------------------------------------------------------------------------------------
# The free energy at the solution: (R1) through the derived map to its variables
# ---------------------------------------------------------------------------------------------
_g0, _g1 = sympy.symbols("g0 g1")
"""Placeholders for g(z) and g'(z) while the saddle point of (R1) is solved for its variables."""


def r1_parameters() -> dict:
    r"""Paper A's parameters in those of (R1) (the low-rank model's, task power 1): the noise
    standard deviation :math:`\sigma_{R1} = \sqrt\rho` (paper A's :math:`\rho` is the noise
    variance) and the ridge :math:`\lambda_{R1} = \tau\lambda/\kappa` (paper A's
    :math:`\frac nd\lambda\|\Gamma\|^2` against the sum of squared errors, (R1)'s
    :math:`\frac{\lambda_{R1}\kappa d}{2}\|\Gamma\|^2` against half of it, :math:`n = \tau d^2`).
    The one copy of this map: :data:`replica.derivations.unified.PAPER_A_MAP` is it, renamed."""
    from . import lowrank as L

    return {L.sigma: sympy.sqrt(rho), L.lam: tau * lam / kappa}


def affine_variables() -> tuple:
    r"""The variables in which (R1) is affine, jointly: :math:`m, q, \bar q, \hat\chi,
    \hat{\bar\chi}` (each enters linearly, in no product with another of them; checked in
    ``tests/test_free_energy_instances.py``). At a saddle point the coefficient of each is its
    derivative, zero; so there (R1) equals (R1) with all five set to 0."""
    from . import lowrank as L

    return (L.m, L.q, L.qbar, L.chihat, L.chibarhat)


@functools.lru_cache(maxsize=None)
def qhat_at_saddle(form: str) -> sympy.Expr:
    r""":math:`\hat q` at the saddle point of (R1) in the alias ``z``, the placeholder ``g0 =
    g(z)`` and the parameters of (R1) (task power 1), from the derived fixed-point equations
    (:func:`replica.models.lowrank.fixed_point_equations`):

    * ``"conjugate"``: its own equation with the derived :math:`\chi, \bar\chi` substituted
      (the nonzero root), :math:`\kappa\hat q = \tau - 1 - (z+\varepsilon)g`, regular where the
      effective ridge :math:`-z-\varepsilon` vanishes (ridgeless, :math:`\tau > 1`);
    * ``"alias"``: the alias :math:`z = -(\lambda + \hat{\bar q})/\hat q` with the derived ratio
      :math:`\hat{\bar q}/\hat q = \varepsilon`, :math:`\hat q = \lambda/(-z-\varepsilon)`,
      regular where the effective ridge is positive, and 0 at :math:`\lambda = 0` (ridgeless,
      :math:`\tau < 1`: the minimum-norm interpolator).

    The two agree at the saddle point (there the conjugate equation is the ridge equation)."""
    from . import lowrank as L

    fp = L.fixed_point_equations()
    if form == "alias":
        ratio = sympy.cancel(fp[L.qbarhat] / fp[L.qhat])
        (qh,) = sympy.solve(L.z - L.Z_DEFINITION.xreplace({L.qbarhat: ratio * L.qhat}), L.qhat)
        return qh
    known = {v: unified_saddle_values()[v].xreplace({L.qhat: L.qhat}) for v in (L.chi, L.chibar)}
    spec = {L.G[0](L.z): _g0, L.G[1](L.z): _g1}
    (qh,) = [r for r in sympy.solve(fp[L.qhat].xreplace(known).xreplace(spec) - L.qhat, L.qhat)
             if r != 0]
    return qh


@functools.lru_cache(maxsize=None)
def unified_saddle_values() -> dict:
    r"""``{variable: value}`` at the saddle point of (R1) for the variables the free energy needs
    once :func:`affine_variables` are set to 0: :math:`\chi, \bar\chi, \hat m, \hat{\bar q}` as
    functions of :math:`\hat q` (left a symbol), the alias ``z``, the placeholders ``g0 =
    g(z)``, ``g1 = g'(z)`` and the parameters of (R1) (task power 1): the derived fixed-point
    equations (:func:`replica.models.lowrank.fixed_point_equations`), :math:`\hat m` and
    :math:`\hat{\bar q}` with :math:`\hat q`'s own equation used for their common factor
    :math:`\tau/(\kappa\Delta)` (:math:`\hat m = \hat q`, :math:`\hat{\bar q} =
    \varepsilon\hat q`: the derived right-hand sides are :math:`\hat q`'s times 1 and
    :math:`\varepsilon`)."""
    from . import lowrank as L

    fp = L.fixed_point_equations()
    spec = {L.G[0](L.z): _g0, L.G[1](L.z): _g1}
    out = {v: fp[v].xreplace(spec) for v in (L.chi, L.chibar)}
    for v in (L.mhat, L.qbarhat):
        out[v] = sympy.cancel(fp[v] / fp[L.qhat]) * L.qhat
    return out


@functools.lru_cache(maxsize=None)
def free_energy_at_solution(qhat_from: str = "conjugate") -> sympy.Expr:
    r"""The free energy (R1) (:data:`replica.models.lowrank.FREE_ENERGY`, the unified free energy
    of :mod:`replica.derivations.unified` at task power 1) at paper A's solution, in paper A's
    parameters and reported values :math:`\sigma` (:math:`\sigma_A`), :math:`\tilde\lambda`,
    :math:`M`, :math:`M'` and :math:`c_{\rm train}`; ``qhat_from`` as in :func:`unified_saddle_values` (``"alias"`` for
    the variants with an effective ridge :math:`\tilde\lambda > 0`, ``"conjugate"`` for the
    interpolating ones, :math:`\tilde\lambda = 0`).

    **The map** (derived and checked in :mod:`replica.derivations.unified`): paper A's saddle
    point is the unified one with :math:`z = -\sigma_A`, :math:`g(z) = M(\sigma_A)`,
    :math:`g'(z) = -M'(\sigma_A)` and the parameters :func:`r1_parameters`. (R1) is evaluated
    with :func:`affine_variables` at 0 (exact at a saddle point) and the other variables at
    :func:`unified_saddle_values`, and cancelled: :math:`f = \frac{\hat q}2(\sigma_{R1}^2 - z -
    z^2g)`.

    **Task power** :math:`c = c_{\rm train} \ne 1` (an unnormalised ``C_train``): rescaling the
    labels by :math:`1/\sqrt c` leaves :math:`\Gamma` unchanged and multiplies the objective by
    :math:`1/c` (noise variance :math:`\rho/c`, ridge :math:`\lambda/c`, task covariance
    :math:`S/c`, whose transform is :math:`\tilde g(z') = c\,g(cz')`), so :math:`f_c =
    c\,f_1` at :math:`z' = z/c`, :math:`\tilde g = cg`, :math:`\tilde g' = c^2g'`, noise
    variance :math:`\rho/c`, ridge :math:`\lambda_{R1}/c`. ``tests/test_free_energy_instances.py``
    compares the result with the unified free energy (task power a symbol) at the unified
    saddle point solved on its own, at task power 13/8.

    **Meaning**: :math:`f = \lim\min_\Gamma\big[\frac12\sum_\mu(y_\mu-\hat y_\mu)^2 +
    \frac{n\lambda}{2d}\|\Gamma\|_F^2\big]/(\kappa d^2)`, half of paper A's training objective
    :math:`\sum_\mu(\cdot)^2 + \frac nd\lambda\|\Gamma\|_F^2` per :math:`\kappa d^2` (the
    :math:`y^2` column of paper A's :math:`H_Z` adds :math:`d` of the :math:`d(d+1)` weights: an
    :math:`O(1/d)` change)."""
    from . import lowrank as L

    c = c_train
    vals = dict(unified_saddle_values())
    vals.update({v: 0 for v in affine_variables()})
    f1 = L.FREE_ENERGY.xreplace({L.G[0](L.z): _g0, L.G[1](L.z): _g1}).xreplace(vals)
    # f1 = qhat h(z, g): a factor qhat times a function without it (cancelled by SymPy) once
    # qhat's own equation is used for the 1/Delta of the energetic term
    f1 = sympy.cancel(f1.xreplace({v: e.xreplace({L.qhat: qhat_at_saddle("conjugate")})
                                   for v, e in vals.items() if v in (L.chi, L.chibar)})
                      .xreplace({L.qhat: qhat_at_saddle("conjugate")}))
    h = sympy.factor(sympy.cancel(f1 / qhat_at_saddle("conjugate")))
    if h.has(L.qhat, L.lam):
        raise ValueError("the free energy at the saddle point is not qhat times h(z, g)")
    pa = r1_parameters()
    point = {_g0: c * M, _g1: -c**2 * M_prime, L.sigma: sympy.sqrt(pa[L.sigma]**2 / c),
             L.lam: pa[L.lam] / c}
    # z = -sigma_A/c; in qhat with sigma_A = (rho + c)/alpha + lambda_tilde written out, so that
    # the effective ridge -z - epsilon cancels to lambda_tilde/c exactly (no difference of
    # rounded numbers where it is small)
    qh = sympy.cancel(qhat_at_saddle(qhat_from).xreplace({**point, L.z: -SIGMA / c}))
    return c * qh * h.xreplace({**point, L.z: -sigma / c})


FREE_ENERGY_NAME = "free_energy"
"""The name of the reported free energy (its value at :math:`\\kappa = \\infty` is the limit 0:
every term of (R1) at the saddle point carries :math:`1/\\kappa`, the conjugates vanish like
:math:`1/\\kappa`)."""


# ---------------------------------------------------------------------------------------------
# The declaration
# ---------------------------------------------------------------------------------------------
SYMBOLS = {"alpha": alpha, "alpha_test": alpha_test, "tau": tau, "kappa": kappa, "rho": rho,
           "lam": lam}
PARAMETERS = (alpha, alpha_test, tau, kappa, rho, lam)
TRACES = {c_train: avg(LAMBDA_I), c_test: avg(MU_I)}
"""c_train = tr(C_train)/d and c_test = tr(C_test)/d as spectral averages."""

SIGMA_OF_UNKNOWNS = SIGMA.xreplace(TRACES)
"""sigma in the unknowns: (rho + <lambda>)/alpha + lambda_tilde."""


def _at(e, kinf):
    """The kappa = oo form (a = 1) of an expression, or the expression."""
    return e.subs(a_coeff, 1).subs(kappa, sympy.oo) if kinf else e


def reported(kinf: bool = False) -> list:
    """``[(name, expression, symbol)]``: every reported value in the unknowns ``a``,
    ``lambda_tilde`` (later entries use earlier ones through their symbols), from the
    cancellation-free forms."""
    at_sigma = {z: sigma}
    return [
        ("sigma", SIGMA_OF_UNKNOWNS, sigma),
        ("lambda_tilde", lambda_tilde, lambda_tilde),
        ("a", _at(a_coeff, kinf), a_coeff),
        ("M", _at(M_OF_A_STABLE.subs(at_sigma), kinf), M),
        ("M_prime", _at(M_PRIME_STABLE.subs(at_sigma), kinf), M_prime),
        ("a_prime", _at(A_PRIME_STABLE.subs(at_sigma), kinf), a_prime),
        ("q", Q, q),
        ("e_scalar", E_SCALAR.xreplace(TRACES), None),
        ("e_misalign", _at(E_MISALIGN_STABLE, kinf), None),
        ("e_icl", sympy.Symbol("e_scalar") + sympy.Symbol("e_misalign"), None),
        ("e_idg", E_IDG, None),
        ("e_tm", E_TM.xreplace(TRACES), None),
        ("resolvent", _at(RESOLVENT_MEASURE_STABLE, kinf), None),
    ] + [(f"e_icl_{k}", _at(e.xreplace(TRACES), kinf), None) for k, e in DECOMPOSITION.items()
         ] + [(FREE_ENERGY_NAME, sympy.Integer(0) if kinf
               else free_energy_at_solution("alias").xreplace(TRACES), None)]


_A_DOMAIN = ((a_coeff, "a > 0"), (a_coeff - (1 - 1 / kappa), "a > 1 - 1/kappa"))
"""Where the coefficient a of the resolvent lives (a = 1 - 1/kappa + z M/kappa with z, M > 0):
the self-consistency has other roots outside it, which are not the resolvent."""


def system_of(variant: str) -> System:
    """``ridge`` (lambda > 0, or lambda = 0 with tau < 1), ``interpolating`` (lambda = 0,
    tau > 1: lambda_tilde = 0), their ``_kappa_infinite`` forms (a = 1), and ``resolvent`` (and
    ``resolvent_kappa_infinite``): eq. (17) alone at a given z (parameters z, kappa; the spectrum
    is passed by the caller)."""
    kinf = variant.endswith("_kappa_infinite")
    base = variant.replace("_kappa_infinite", "")
    if base == "resolvent":
        if kinf:
            return System(unknowns=(), parameters=(z, kappa), symbols={"z": z, "kappa": kappa},
                          residuals=[], start=Start(exact=True),
                          report=[("M", _at(M_OF_A_STABLE, True), M), ("a", 1, a_coeff),
                                  ("M_prime", _at(M_PRIME_STABLE, True), M_prime)],
                          evaluation_form=lambda e: e.subs(kappa, sympy.oo))
        root = ScalarRoot(a_coeff, SELF_CONSISTENCY_A, lower=sympy.Max(0, 1 - 1 / kappa),
                          upper=1, upper_slack=4, initial=1 - 1 / kappa + z / (
                              avg(LAMBDA_I) + z) / kappa, what="M_kappa (coefficient a)")
        return System(unknowns=(a_coeff,), parameters=(z, kappa), symbols={"z": z,
                      "kappa": kappa}, residuals=[SELF_CONSISTENCY_A],
                      report=[("M", M_OF_A_STABLE, M), ("a", a_coeff, a_coeff),
                              ("M_prime", M_PRIME_STABLE, M_prime)],
                      start=Start(roots=(root,), values={a_coeff: a_coeff}, exact=True),
                      spectrum=None, admissible=_A_DOMAIN)
    sig = SIGMA_OF_UNKNOWNS
    if base == "interpolating":
        sig = sig.subs(lambda_tilde, 0)
    inner = ScalarRoot(a_coeff, SELF_CONSISTENCY_A.subs(z, sig),
                       lower=sympy.Max(0, 1 - 1 / kappa), upper=1, upper_slack=4,
                       initial=1 - 1 / kappa + sig / (avg(LAMBDA_I) + sig) / kappa,
                       what="M_kappa (coefficient a)")
    ridge = _at(RIDGE_ROOT_EQUATION.subs(M, M_OF_A_STABLE.subs(z, sig)), kinf)
    x0 = (rho + avg(LAMBDA_I)) / alpha
    m0 = 1 / (avg(LAMBDA_I) + x0)
    outer = ScalarRoot(lambda_tilde, ridge, lower=0, upper=None,
                       initial=((1 - tau) + sympy.sqrt((1 - tau) ** 2 + 4 * m0 * tau * lam))
                       / (2 * m0), inner=None if kinf else inner, what="lambda_tilde")
    if base == "interpolating":
        unknowns = () if kinf else (a_coeff,)
        residuals = [] if kinf else [SELF_CONSISTENCY_A.subs(z, sig)]
        roots = () if kinf else (inner,)
    else:
        unknowns = (lambda_tilde,) if kinf else (a_coeff, lambda_tilde)
        residuals = ([] if kinf else [SELF_CONSISTENCY_A.subs(z, sig)]) + [ridge]
        roots = (outer,)
    report = [(n, e.subs(lambda_tilde, 0) if base == "interpolating" else e, s)
              for n, e, s in reported(kinf)]
    if base == "interpolating" and not kinf:  # no effective ridge: qhat from its own equation
        report[-1] = (FREE_ENERGY_NAME, free_energy_at_solution("conjugate").xreplace(TRACES)
                      .subs(lambda_tilde, 0), None)
    admissible = ([] if kinf else list(_A_DOMAIN)) + (
        [] if base == "interpolating" else [(lambda_tilde, "lambda_tilde > 0")])
    return System(unknowns=unknowns, parameters=PARAMETERS, symbols=SYMBOLS,
                  residuals=residuals, report=report, admissible=admissible,
                  start=Start(roots=roots, values={u: u for u in unknowns}, exact=True),
                  evaluation_form=(lambda e: e.subs(kappa, sympy.oo)) if kinf else None,
                  spectrum=train_and_test)
