r"""Paper A: ICL error of linear attention for arbitrary pretraining and test task covariances.

Letey, Zavatone-Veth, Lu, Pehlevan, *Pretrain--Test Task Alignment Governs Generalization in
In-Context Learning*, arXiv:2509.26551. Notation of that paper: ``rho`` is the label-noise
**variance**; ``sigma`` is the effective noise level.

This module holds the mathematics; :mod:`replica.models.alignment_problem` declares the model to
the engine (:mod:`replica.numerics.driver`), which solves it. **None of the equations below is
typed**: the resolvent self-consistency and its derivative are computed from the saddle point
of the deterministic equivalent's log-determinant
(:mod:`replica.symbolic.deterministic_equivalent`), and the effective noise, the ridge equation,
:math:`q`,
:math:`e_{\rm scalar}`, :math:`K`, :math:`E_{\rm ICL}`, :math:`e_{\rm TM}` and the
decomposition from the saddle point of the unified free energy
(:data:`replica.models.unified.FREE_ENERGY`) under the map :func:`unified_to_paper_a`
(:math:`z = -\sigma`, :math:`g = M`, :math:`g' = -M'`, noise standard deviation
:math:`\sqrt\rho`, ridge :math:`\tau\lambda/\kappa`). Paper A's equations as the paper states
them are in :mod:`replica.derivations.paper_a`, the independent check (equal identically,
``tests/test_alignment_generated.py``). What the computation gives (``<.>`` is the spectral
average ``(1/d) sum_i`` over the eigenvalues ``lambda_i`` of ``C_train`` and the diagonal
``mu_i`` of ``C_test`` in that eigenbasis):

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
from ..symbolic import deterministic_equivalent as _DE
from ..symbolic.spectral import SpectralAverage
from . import unified as U
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
# The deterministic equivalent of the task covariance's resolvent (computed)
# ---------------------------------------------------------------------------------------------
a_coeff = sympy.Symbol("a", positive=True)
"""The coefficient a of the deterministic equivalent (R_k + z)^{-1} ~ (a C_train + z)^{-1}."""
a_prime = sympy.Symbol("a'")
"""a' = da/dz."""
q = sympy.Symbol("q")
r"""Paper A's pretraining-error term: :math:`q = \hat\chi/(\kappa\hat q^2)` of the unified saddle
point, the training error over :math:`\tau`."""


def merge_averages(expr, constants_inside: bool = False) -> sympy.Expr:
    r"""A linear combination of spectral averages with coefficients free of the eigenvalues, as
    one average (by linearity), its summand cancelled, with the factors free of the eigenvalues
    taken out: e.g. :math:`-\langle f\rangle + z\langle f^2\rangle = -a\langle\lambda f^2\rangle`
    for :math:`f = 1/(a\lambda + z)`. With ``constants_inside`` a term without an average is
    taken inside too (:math:`c = \langle c\rangle`, the weights sum to 1), e.g.
    :math:`1 - 2z\langle f\rangle + z^2\langle f^2\rangle = \langle a^2\lambda^2f^2\rangle`."""
    total, rest = sympy.Integer(0), sympy.Integer(0)
    for term in sympy.Add.make_args(sympy.expand(expr)):
        factors = sympy.Mul.make_args(term)
        avgs = [f for f in factors if isinstance(f, SpectralAverage)]
        if len(avgs) > 1:
            raise ValueError(f"a product of averages: {term}")
        if avgs:
            total += sympy.Mul(*[f for f in factors if f is not avgs[0]]) * avgs[0].args[0]
        else:
            rest += term
    if constants_inside:
        total, rest = total + rest, sympy.Integer(0)
    const, dep = sympy.factor(sympy.cancel(total)).as_independent(LAMBDA_I, MU_I, as_Add=False)
    return rest + const * avg(dep)


_LOG_DET = _DE.variational_log_det()
"""The variational log-determinant of the task covariance (:mod:`replica.symbolic.
deterministic_equivalent`, the replica computation)."""

SELF_CONSISTENCY_A = _DE.coefficient_equation(_LOG_DET, a_coeff)
"""Paper A's eq. (17) for the coefficient a, computed as the saddle-point condition of the
log-determinant: kappa(a - 1) + 1 - z <1/(a lambda + z)> = 0. Increasing in a on
(max(0, 1 - 1/kappa), 1]; solving for a keeps full relative precision when a is tiny (the
collapsed phase at small z, where M = (1-kappa)/z + O(1) cancels)."""

M_OF_A_STABLE = _DE.resolvent_trace(_LOG_DET).xreplace({_DE.omega_hat: a_coeff})
"""M = d(log-det)/dz = <1/(a lambda + z)> (envelope theorem): a sum of positive terms."""

F_I_A = M_OF_A_STABLE.args[0]
"""f_i = 1/(a lambda_i + z), the summand of M."""

A_COEFF = sympy.expand(sympy.solve(SELF_CONSISTENCY_A.xreplace({M_OF_A_STABLE: M}), a_coeff)[0])
"""a = 1 - 1/kappa + z M/kappa: :data:`SELF_CONSISTENCY_A` solved for a with M = <f> (computed;
expanded, so that kappa -> oo substitutes term by term)."""

A_PRIME_STABLE = merge_averages(-sympy.diff(SELF_CONSISTENCY_A, z)) / merge_averages(
    sympy.diff(SELF_CONSISTENCY_A, a_coeff))
"""a' = da/dz by implicit differentiation of :data:`SELF_CONSISTENCY_A` (computed):
a <lambda f^2>/(kappa + z <lambda f^2>)."""

def _m_prime() -> sympy.Expr:
    r""":math:`M' = dM/dz = \partial_zM + \partial_aM\,a'` (computed), put over one denominator;
    in the numerator the terms with the factor :math:`\langle\lambda f^2\rangle` carry
    :math:`z\langle f^2\rangle + a\langle\lambda f^2\rangle`, which merges to
    :math:`\langle f\rangle = M` (summand algebra), and numerator and denominator are divided by
    :math:`\kappa` (so that :math:`\kappa\to\infty` substitutes term by term)."""
    raw = (merge_averages(sympy.diff(M_OF_A_STABLE, z))
           + merge_averages(sympy.diff(M_OF_A_STABLE, a_coeff)) * A_PRIME_STABLE)
    num, den = sympy.fraction(sympy.together(raw))
    l2 = merge_averages(-sympy.diff(M_OF_A_STABLE, a_coeff))
    # the averages as symbols while the numerator is expanded and its powers of <lambda f^2> read
    avs = sorted(num.atoms(SpectralAverage) | {l2}, key=str)
    sym = {a_: sympy.Dummy() for a_ in avs}
    back = {v: k for k, v in sym.items()}
    poly = sympy.Poly(sympy.expand(num.xreplace(sym)), sym[l2])
    if poly.degree() > 2:
        raise ValueError(f"unexpected numerator of M': {num}")
    c0, c1, c2 = (poly.coeff_monomial(sym[l2]**k).xreplace(back) for k in range(3))
    inner = merge_averages(c1 + c2 * l2).xreplace({M_OF_A_STABLE: M})
    if inner.has(SpectralAverage):
        raise ValueError(f"the cofactor of <lambda f^2> is not a multiple of M: {inner}")
    num_k = sympy.expand((c0 + inner * l2).xreplace(sym) / kappa).xreplace(back)
    den_k = sympy.expand(den.xreplace(sym) / kappa).xreplace(back)
    return num_k / den_k


M_PRIME_STABLE = _m_prime()
"""M' = dM/dz by implicit differentiation of :data:`SELF_CONSISTENCY_A` (computed):
-(<f^2> + M/kappa <lambda f^2>)/(1 + z/kappa <lambda f^2>), each term of one sign."""

# ---------------------------------------------------------------------------------------------
# Paper A's equations, computed from the unified free energy
# ---------------------------------------------------------------------------------------------
_Gz, _G1z = U.G[0](U.z), U.G[1](U.z)


def unified_to_paper_a(expr, effective_ridge: bool = True) -> sympy.Expr:
    r"""An expression of the unified saddle point (:mod:`replica.models.unified`) in paper A's
    variables: the transforms at :math:`z = -\sigma` (:math:`g = M(\sigma)`, :math:`g' =
    -M'(\sigma)`), noise standard deviation :math:`\sqrt\rho` (training and test), ridge
    :math:`\tau\lambda/\kappa` (:func:`r1_parameters`), powers :math:`c_{\rm train}`,
    :math:`c_{\rm test}`; with ``effective_ridge`` also :math:`\varepsilon = \sigma -
    \tilde\lambda` (the alias, :data:`SIGMA`), i.e. :math:`\alpha = (c_{\rm train} + \rho)/
    (\sigma - \tilde\lambda)`."""
    e = sympy.sympify(expr).xreplace({_Gz: M, _G1z: -M_prime}).xreplace({U.z: -sigma})
    e = e.xreplace({U.sigma: sympy.sqrt(rho), U.sigma_test: sympy.sqrt(rho),
                    U.lam: tau * lam / kappa, U.c_train: c_train, U.c_C: c_test,
                    U.alpha_test: alpha_test})
    if effective_ridge:
        e = e.xreplace({U.alpha: (c_train + rho) / (sigma - lambda_tilde)})
    return e


@functools.lru_cache(maxsize=None)
def unified_conjugates() -> dict:
    r"""The conjugates of the unified saddle point in :math:`\hat q` and paper A's :math:`q`:
    :math:`\hat m = \hat q`, :math:`\hat{\bar q} = \varepsilon\hat q`, :math:`\hat\chi =
    \kappa\hat q^2q`, :math:`\hat{\bar\chi} = \varepsilon\hat\chi` (the ratios are computed from
    the derived conjugate equations)."""
    fp = U.fixed_point_equations()
    ratio = {v: sympy.cancel(fp[v] / fp[U.qhat]) for v in (U.mhat, U.qbarhat)}
    chihat = U.kappa * U.qhat**2 * q
    return {U.mhat: ratio[U.mhat] * U.qhat, U.qbarhat: ratio[U.qbarhat] * U.qhat,
            U.chihat: chihat, U.chibarhat: sympy.cancel(fp[U.chibarhat] / fp[U.chihat]) * chihat}


@functools.lru_cache(maxsize=None)
def kappa_qhat() -> sympy.Expr:
    r""":math:`\kappa\hat q` from its own derived equation :math:`\hat q = \tau/(\kappa\Delta)`
    with the derived :math:`\chi`, :math:`\bar\chi` (the nonzero root, solved by SymPy), in paper
    A's variables: :math:`\tau - 1 + \tilde\lambda M`."""
    fp = U.fixed_point_equations()
    qh = sympy.Symbol("qh_")
    chis = {v: fp[v].xreplace({U.qhat: qh}) for v in (U.chi, U.chibar)}
    (root,) = [r for r in sympy.solve(fp[U.qhat].xreplace(chis) - qh, qh) if r != 0]
    return sympy.cancel(unified_to_paper_a(U.kappa * root))


def _effective_ridge() -> sympy.Expr:
    r""":math:`\lambda_{\rm unified}/\hat q = -z - \hat{\bar q}/\hat q` from the alias."""
    return sympy.cancel((-unified_conjugates()[U.qbarhat] - U.z * U.qhat) / U.qhat)


def _sigma() -> sympy.Expr:
    r""":math:`\sigma = -z` with the alias solved for :math:`z`: :math:`\varepsilon +
    \lambda/\hat q`, :math:`\lambda/\hat q = \tilde\lambda`."""
    lt = sympy.Symbol("lt_")
    (zsol,) = sympy.solve(_effective_ridge() - lt, U.z)
    e = unified_to_paper_a(-zsol, effective_ridge=False).xreplace({lt: lambda_tilde})
    return sympy.expand(e)


SIGMA = _sigma()
"""Effective noise sigma = -z = (rho + c_train)/alpha + lambda_tilde (computed from the alias
z = -(lambda + qbarhat)/qhat with the derived qbarhat/qhat; lambda_tilde = lambda/qhat)."""

RIDGE_EQUATION = sympy.expand(sympy.cancel(
    unified_to_paper_a(_effective_ridge()) * kappa_qhat() - kappa * unified_to_paper_a(U.lam)))
"""The alias lambda = lambda_tilde qhat times kappa, with kappa qhat from its own equation and
paper A's ridge (computed): lambda_tilde^2 M - (1 - tau) lambda_tilde - tau lambda."""

RIDGELESS_EQUATION = sympy.expand(RIDGE_EQUATION.subs(lam, 0) / lambda_tilde)
"""tau < 1, lambda -> 0+: lambda_tilde M(sigma) = 1 - tau."""

RIDGE_ROOT_EQUATION = sympy.expand(RIDGE_EQUATION / lambda_tilde)
"""The form of :data:`RIDGE_EQUATION` that is solved: lambda_tilde M - (1 - tau) -
tau lambda/lambda_tilde, increasing in lambda_tilde > 0 (lambda_tilde M(sigma(lambda_tilde))
increases and -tau lambda/lambda_tilde increases), so its root is unique; at lambda = 0 it is
:data:`RIDGELESS_EQUATION`."""


@functools.lru_cache(maxsize=None)
def _overlaps_at_saddle() -> dict:
    """m, q_R1, qbar of the unified saddle point (derived equations) with the conjugates of
    :func:`unified_conjugates`."""
    fp = U.fixed_point_equations()
    return {v: sympy.cancel(fp[v].xreplace(unified_conjugates())) for v in (U.m, U.q, U.qbar)}


def _q() -> sympy.Expr:
    r"""Paper A's :math:`q` solved from :math:`\tau q = \mathcal E_{\rm tr}` (the conjugate
    equation of :math:`\hat\chi`, :math:`\hat\chi = \frac\tau\kappa\mathcal E_{\rm tr}/\Delta^2`
    with :math:`\kappa\hat q\Delta = \tau`), linear in :math:`q`."""
    (sol,) = sympy.solve(U.E_TR.xreplace(_overlaps_at_saddle()) - U.tau * q, q)
    num, den = sympy.fraction(sympy.cancel(unified_to_paper_a(sol)))
    return sympy.collect(sympy.expand(num), lambda_tilde, sympy.factor) / \
        sympy.collect(sympy.expand(den), lambda_tilde)


Q = _q()
"""Pretraining-error term q (paper (C.14)), with M, M' at z = sigma (computed)."""

QBAR = sympy.collect(sympy.expand(sympy.cancel(unified_to_paper_a(_overlaps_at_saddle()[U.qbar]))),
                     [M, M_prime], sympy.factor)
"""qbar = tr(Gamma^T Gamma)/d at the saddle point in paper A's variables (computed):
1 + (q - 2 sigma) M + (q lambda_tilde - sigma^2) M'."""

E_SCALAR = rho + (c_test + rho) / alpha_test * QBAR
"""Scalar part (paper (C.16)): the unified test error's noise and isotropic terms
sigma_test^2 + (c_C + sigma_test^2)/alpha_test qbar in paper A's variables."""


def _transform_averages(weight) -> list:
    r"""``[<w f>, <w (a' lambda + 1) f^2>]`` at :math:`z = -\sigma`: the transform
    :math:`\langle w/(a\lambda - z)\rangle` of the deterministic equivalent with weight ``w``
    and its :math:`z`-derivative (computed with :math:`a` a function of :math:`x = -z`,
    :math:`a' = da/dx`)."""
    x = sympy.Symbol("x_", positive=True)
    a_of_x = sympy.Function("a_")(x)
    w = weight / (a_of_x * LAMBDA_I + x)  # <w/(a lambda - z)> at z = -x
    return [avg(e.subs(sympy.Derivative(a_of_x, x), a_prime).subs(a_of_x, a_coeff)
                .subs(x, sigma)) for e in (w, -sympy.diff(w, x))]  # d/dz = -d/dx


def _kernel() -> sympy.Expr:
    r"""The per-eigenvalue kernel of :math:`e_{\rm misalign} = c_C - 2m_C + q_C` (the unified
    test error less its scalar part, affine in :math:`g_C, g_C'`, no constant): :math:`g_C(z) =
    \langle\mu f\rangle`, :math:`g_C'(z) = \langle\mu(a'\lambda + 1)f^2\rangle` (the derivative in
    :math:`z` of the deterministic equivalent :math:`\langle\mu/(a\lambda - z)\rangle` at
    :math:`z = -\sigma`, computed with :math:`a` a function of :math:`x = -z` and :math:`a' =
    da/dx`)."""
    ov = U.test_overlaps()
    mis = sympy.expand(sympy.cancel((U.c_C - 2 * ov["m_C"] + ov["q_C"])
                                    .xreplace(unified_conjugates())))
    gc = (U.GC[0](U.z), U.GC[1](U.z))
    if sympy.expand(mis - sum(mis.coeff(g) * g for g in gc)) != 0:
        raise ValueError("e_misalign is not linear in g_C, g_C'")
    per_i = [e.args[0] for e in _transform_averages(MU_I)]
    return sum(sympy.factor(unified_to_paper_a(mis.coeff(g))) * e / MU_I
               for g, e in zip(gc, per_i))


K_I_STABLE = _kernel()
"""Eigenvalue k_i of K in C_train's eigenbasis (computed): q f_i + (sigma^2 - q lambda_tilde)
(a' lambda_i + 1) f_i^2 at z = sigma."""

E_MISALIGN_STABLE = avg(MU_I * K_I_STABLE)
"""e_misalign = <C_test K> = (1/d) sum_i mu_i k_i."""

RESOLVENT_MEASURE = avg(MU_I * F_I_A.subs(z, sigma))
"""Alignment measure <C_test F_kappa(sigma)> (g_C at z = -sigma), f written through a."""
RESOLVENT_MEASURE_STABLE = RESOLVENT_MEASURE
"""The same object (the name the reported values use)."""

INVERSE_MEASURE = avg(MU_I / LAMBDA_I)
"""Population measure <C_test C_train^{-1}> (undefined for singular C_train)."""


def _e_tm() -> sympy.Expr:
    r"""The unified task-memorisation error (:func:`replica.models.unified.tm_error`, test noise
    = training noise) less the training error plus :math:`\tau q` (equal at the saddle point):
    :math:`\tau q + (c + \rho)(1/\tilde\alpha - 1/\alpha)\bar q`, in paper A's variables."""
    qb = sympy.Symbol("qbar_")
    e = (U.tm_error() - U.E_TR).xreplace({U.sigma_test: U.sigma, U.qbar: qb})
    e = unified_to_paper_a(sympy.expand(e), effective_ridge=False)
    if sympy.expand(e - e.coeff(qb) * qb) != 0:
        raise ValueError("the TM error less the training error is not proportional to qbar")
    return U.tau * q + sympy.factor(e.coeff(qb)) * QBAR


E_TM = _e_tm()
"""Task-memorisation error: a test prompt whose task is one of the k pretraining tasks, with a
fresh context of length alpha_test d (computed); tau q at alpha_test = alpha."""

E_IDG = E_TM.subs(alpha_test, alpha)
"""In-distribution error: tau q, the error on prompts whose task was seen in pretraining
(:data:`E_TM` at alpha_test = alpha)."""

# ---------------------------------------------------------------------------------------------
# The decomposition of E_ICL: signal, memorisation, structural, noise
# ---------------------------------------------------------------------------------------------
# The unified test error splits by the conjugate each term comes from: mhat^2 (the mean of the
# weights: signal), chihat (the fluctuation along the task directions, q r f^2 per eigenvalue r:
# memorisation of the finite task set) and chibarhat (the fluctuation driven by the context
# noise, q s f^2, s = (rho + c_train)/alpha: structural), both in the misalignment part
# (c_C - 2 m_C + q_C, weighted by C_test) and in the scalar part (qbar, weighted by s_test); the
# label noise rho of the test prompt is the fourth part. With the deterministic equivalents
# (f_i through a, -F' = (a' lambda + 1) f^2) and each part's averages merged into one, every part
# is an average of positive terms:
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


def _decomposition() -> dict:
    """The four parts of E_ICL computed from the unified test error (see the comment above)."""
    ov = U.test_overlaps()
    spectral = dict(zip((_Gz, _G1z), _transform_averages(1)))
    spectral.update(zip((U.GC[0](U.z), U.GC[1](U.z)), _transform_averages(MU_I)))

    def split(e):  # e is linear in (chihat, chibarhat): the rest is the signal
        e = sympy.expand(e)
        s = e.subs({U.chihat: 0, U.chibarhat: 0})
        return {"signal": s, "memorization": sympy.expand(e.subs({U.chibarhat: 0}) - s),
                "structural": sympy.expand(e.subs({U.chihat: 0}) - s)}

    mis = split(U.c_C - 2 * ov["m_C"] + ov["q_C"])
    scalar = split(U.fixed_point_equations()[U.qbar])
    out = {}
    for part in ("signal", "memorization", "structural"):
        terms = []
        for e, weight in ((mis[part], 1), (scalar[part], S_TEST)):
            e = sympy.cancel(e.xreplace(unified_conjugates())).xreplace(spectral)
            terms.append(weight * merge_averages(unified_to_paper_a(e, effective_ridge=False),
                                                 constants_inside=True))
        out[part] = terms[0] + terms[1]
    out["noise"] = unified_to_paper_a(U.sigma_test**2)
    return out


DECOMPOSITION = _decomposition()
"""The four parts of E_ICL (they sum to e_scalar + e_misalign), in a, a', lambda_tilde, q
(computed)."""



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
