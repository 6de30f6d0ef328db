r"""Learning linear regression with low-rank tasks in context: the replica theory (declared to the
engine by :mod:`replica.models.lowrank_problem`).

Takanami, Takahashi, Kabashima, *Learning Linear Regression with Low-Rank Tasks in-Context*,
arXiv:2510.04548. **Notation of that paper**: ``rho = r/D`` is the task-rank ratio
(``0 < rho <= 1``) and ``sigma`` the label-noise *standard deviation* (variance ``sigma^2``); in
papers A/B (``alignment``, ``isotropic``) ``rho`` is the noise variance. ``lam`` is the
per-distinct-task ridge (objective ``lambda M0 ||Gamma||^2 / 2``).

This module holds the mathematics and nothing else; the engine (:mod:`replica.numerics.driver`)
solves it. Everything is derived from one SymPy object, the replica-symmetric free energy (R1),
the unified free energy :data:`replica.models.unified.FREE_ENERGY` at task power :math:`c = 1`,

.. math::
    f = \operatorname*{extr}\Big\{\frac{\tau}{2\kappa}\frac{\mathcal E_{\rm tr}}{1+V}
        - \frac{\hat q q}{2} - \frac{\hat{\bar q}\bar q}{2} + \hat m m + \frac{\hat\chi\chi}{2}
        + \frac{\hat{\bar\chi}\bar\chi}{2} - \frac{1}{2\hat q}\Big[\hat m^2(1+z+z^2g)
        + \frac{\hat\chi}{\kappa}(1+zg) + \frac{\hat{\bar\chi}}{\kappa}g\Big]\Big\},

:math:`\mathcal E_{\rm tr} = 1+\sigma^2-2m+q+\varepsilon\bar q`, :math:`V = \chi+\varepsilon
\bar\chi`, :math:`\varepsilon = (1+\sigma^2)/\alpha`, :math:`z = -(\lambda+\hat{\bar q})/\hat q`
(an alias), with the Stieltjes transform :math:`g(z)` of the empirical task covariance kept as an
abstract function. :class:`replica.symbolic.saddle.SaddlePoint` differentiates it and solves each
condition for the paired variable (the ten saddle-point equations, conjugates first):

.. math::
    \hat q = \hat m = \frac{\tau/\kappa}{\Delta},\quad \hat{\bar q} = \varepsilon\hat q,\quad
    \hat\chi = \frac\tau\kappa\frac{\mathcal E_{\rm tr}}{\Delta^2},\quad
    \hat{\bar\chi} = \varepsilon\hat\chi,\quad \Delta = 1 + V,

.. math::
    m = \tfrac{\hat m}{\hat q}(1+z+z^2g),\quad \chi = \frac{1+zg}{\kappa\hat q},\quad
    \bar\chi = \frac{g}{\kappa\hat q},

.. math::
    q = \frac{1}{\hat q^2}\Big[\hat m^2(1+2z+3z^2g+z^3g') + \frac{\hat\chi}{\kappa}(1+2zg+z^2g')
        + \frac{\hat{\bar\chi}}{\kappa}(g+zg')\Big],\quad
    \bar q = \frac{1}{\hat q^2}\Big[\hat m^2(1+2zg+z^2g') + \frac{\hat\chi}{\kappa}(g+zg')
        + \frac{\hat{\bar\chi}}{\kappa}g'\Big].

Observables (never fed back): :math:`\bar m = \frac{\hat m}{\hat q}(1+zg)`, :math:`m_0 =
\bar m/\rho` and

.. math::
    q_0 = \frac{1}{\hat q^2}\Big[\frac{\hat m^2}{\rho}(1+2zg+z^2g') + \frac{\hat\chi}{\rho\kappa}
          (g+zg') + \frac{\hat{\bar\chi}}{\kappa}\tilde g'(z)\Big].

Errors for a test prompt of length :math:`\tilde\alpha D` with test noise :math:`\tilde\sigma`:
:math:`\varepsilon_X = \tilde\sigma^2 + 1 - 2m_X + q_X + \frac{1+\tilde\sigma^2}{\tilde\alpha}\bar q`
with :math:`(m_X, q_X) = (m, q)` (TM), :math:`(m_0, q_0)` (IDG), :math:`(\bar m, \bar q)` (ODG).
Each :math:`q` splits into the coefficients of :math:`\hat m^2` (signal), :math:`\hat\chi`
(memorization) and :math:`\hat{\bar\chi}` (structural), which splits each error; the labels
memorization and structural are an inferred mapping (a note in every result says so), and
:math:`\tilde\sigma^2` is a separate noise part.

Closed form at :math:`\lambda = 0`, :math:`\tau > 1` (T1)--(T5): :math:`\hat q = (\tau-1)/\kappa`,
:math:`\Delta = \tau/(\tau-1)`, :math:`z = -\varepsilon`, ... (:data:`LAMBDA0_CLOSED_FORM`).

Equation names used throughout this package (its code, appendix and notebooks) for the formulas
above: (R1) the free energy; (R2)--(R3) the conjugate equations; (R4) the alias :math:`z`;
(R5)--(R8) the order-parameter equations (with the observable :math:`\bar m` at (R5)); (R9)
:math:`q_0`; (R10) the effective single-matrix problem the traces come from; (E1)--(E3) the TM,
IDG and ODG errors and (E5) their decomposition; (M6) the ridge pretraining objective of linear
attention; (T1)--(T5) the :math:`\lambda = 0` closed form.

How it is evaluated (declared here, carried out by the engine):

* the unknowns are :math:`\theta = (q, m, \chi, \bar q, \bar\chi)` and the system is the closed map
  :math:`\theta = \Phi(\theta)` (conjugates substituted; :math:`\kappa` then enters only through
  :math:`z` and :math:`g`), with the alias :math:`z(\theta)`;
* the spectrum enters through :math:`g(z) = -p_0/z + \rho h(z)` with the atom
  :math:`p_0 = 1 - \min(\kappa,\rho)` and a regular part :math:`h` written without cancellation
  (:func:`replica.spectra.lowrank_regular_expr`): :func:`split_spectral` substitutes it and the
  :math:`1/z` poles cancel symbolically, so nothing of size :math:`g \sim \alpha` is subtracted
  numerically at large :math:`\alpha`;
* the start is the effective ridge :math:`u = -z - \varepsilon = \lambda/\hat q`, the root of one
  monotone equation (:data:`EFFECTIVE_RIDGE_EQUATION`);
* ``kappa = inf`` (a fresh task per prompt) is its own variant: at :math:`\lambda = 0` the closed
  map depends on :math:`\kappa` only through :math:`g`, whose :math:`\kappa\to\infty` limit is the
  transform of :math:`P/\rho`, so the limit is taken exactly; the conjugates vanish like
  :math:`1/\kappa` and are reported as 0.
"""

from __future__ import annotations

import functools

import sympy

from ..problem import ScalarRoot, Start, System
from ..spectra import lowrank_atom_masses, lowrank_regular_expr
from ..symbolic.saddle import Alias, SaddlePoint, spectral_family
from . import unified as _U
from .unified import (CONJUGATES, G, ORDER_PARAMETERS, PAIRS, alpha,  # noqa: F401 (re-exported)
                      alpha_test, chi, chibar, chibarhat, chihat, kappa, lam, m, mhat, q, qbar,
                      qbarhat, qhat, sigma, sigma_test, tau, z)
from .parameters import (LOWRANK_ALL_ERROR_KEYS as ALL_ERROR_KEYS,  # noqa: F401 (re-exported)
                         LOWRANK_ERROR_KEYS as ERROR_KEYS, LOWRANK_PART_KEYS as PART_KEYS,
                         LOWRANK_REPORT_KEYS as REPORT_KEYS,
                         LOWRANK_REPORTED_ORDER as REPORTED_ORDER, LOWRANK_TEST_KEY as TEST_KEY)

# ---------------------------------------------------------------------------------------------
# Symbols
# ---------------------------------------------------------------------------------------------
rho = sympy.Symbol("rho", positive=True)
"""The task-rank ratio r/D."""
phi = sympy.Symbol("phi", nonnegative=True)
"""The fraction of a test task's power outside the task subspace (``--test`` SPEC)."""

mbar, m0, q0 = sympy.symbols("mbar m0 q0", real=True)
q_perp = sympy.Symbol("q_perp", real=True)

PARAMS = (alpha, tau, kappa, lam, sigma, rho, alpha_test, sigma_test, phi)
"""Numeric argument order of every compiled expression (after the order parameters)."""

GT = spectral_family("gtilde", r"\tilde{g}")
r"""\tilde g, \tilde g', ...: the transform restricted to the task subspace (abstract)."""

SYMBOL_NAMES = {alpha_test: r"\tilde\alpha", sigma_test: r"\tilde\sigma", lam: r"\lambda",
                q_perp: r"q_{\perp}"}
"""Extra LaTeX names (``sympy.latex(..., symbol_names=SYMBOL_NAMES)``); the hats and bars are
printed by SymPy from the symbol names (``qbarhat`` -> ``\\hat{\\bar{q}}``)."""

# ---------------------------------------------------------------------------------------------
# The free energy (R1): the single source of the saddle-point equations
# ---------------------------------------------------------------------------------------------
LOWRANK_POWER = {_U.c_train: sympy.Integer(1)}
"""The low-rank paper's normalisation ||w||^2 = D: task power c = 1."""
EPS = _U.EPS.xreplace(LOWRANK_POWER)
"""epsilon = (1 + sigma^2)/alpha: variance of the one-step estimate's fluctuation per direction
(the implicit ridge of a finite context)."""
E_TR = _U.E_TR.xreplace(LOWRANK_POWER)
"""E_tr = 1 + sigma^2 - 2m + q + epsilon qbar (= TM error at test = train conditions)."""
V = _U.V.xreplace(LOWRANK_POWER)
DELTA = 1 + V
Z_DEFINITION = _U.Z_DEFINITION
"""z = -(lambda + qbarhat)/qhat (an alias in the free energy)."""

_g, _g1 = G[0](z), G[1](z)

FREE_ENERGY = _U.FREE_ENERGY.xreplace(LOWRANK_POWER)
"""The RS free energy (R1): the unified free energy :data:`replica.models.unified.FREE_ENERGY`
at task power c = 1 (computed by substitution; its checks are in
:mod:`replica.derivations.lowrank_steps` and :mod:`replica.derivations.unified`)."""

SADDLE = SaddlePoint(FREE_ENERGY, PAIRS, [Alias(z, Z_DEFINITION, lam)], name="f")
"""Stationarity and fixed-point form of (R1), derived by :mod:`replica.symbolic.saddle`."""

FREE_ENERGY_NAME = "free_energy"
r"""The name under which the value of (R1) at the solved saddle point is reported.

**What the value is.** (R1) is :math:`f = -\lim_{\beta\to\infty}\frac{1}{\beta\kappa D^2}
\mathbb E\log\int d\Gamma\, e^{-\beta\mathcal L(\Gamma)}` (``replica.derivations.lowrank``,
steps ``partition_function`` and ``free_energy_r1``; no term that depends on the order
parameters is dropped, and the terms that do not -- :math:`\frac n2\log 2\pi`,
:math:`\log\kappa D` -- are of lower order in :math:`\beta`), with the ridge objective (M6)

.. math:: \mathcal L(\Gamma) = \frac12\sum_{\mu=1}^{\tau D^2}(y_\mu - x_\mu^\top\Gamma
          \hat w_\mu)^2 + \frac{\lambda\kappa D}{2}\|\Gamma\|_F^2 .

At :math:`\beta\to\infty` the integral concentrates on the minimiser, so at the saddle point

.. math:: f = \lim_{D\to\infty}\frac{\min_\Gamma\mathcal L(\Gamma)}{\kappa D^2}
          = \lim_{D\to\infty}\frac{\min_\Gamma\mathcal L(\Gamma)}{M_0 D},\qquad M_0 =
          \kappa D,

the minimal training objective per distinct task and dimension (it concentrates: its value on
one draw of the data tends to :math:`f`). At the saddle point it is the training loss plus the
ridge term, :math:`f = \frac{\tau}{2\kappa}\mathcal E_{\rm tr}/\Delta^2 + \frac\lambda2\bar q`
(the mean squared training residual of the ridge estimator is :math:`\mathcal E_{\rm
tr}/\Delta^2`). ``tests/test_free_energy_training.py`` checks both: that closed form to 25
digits, and linear attention trained by ridge on sampled data at finite :math:`D` (the
deviation extrapolated to :math:`D\to\infty` vanishes within three standard errors, and a
theory off by 5 % is rejected).

**Which extremum.** The conjugates are integrated along the imaginary axis, so (R1) is made
stationary, not minimised: at the authors' golden points the Hessian of (R1) in its ten
variables has five negative and five positive eigenvalues (``replica.derivations.lowrank``, step
``which_extremum``). The problem's ``extremum = "min"`` is the rule among *solutions*: if several
saddle points coexisted at the same parameters, the equilibrium one would be the one with the
smallest :math:`f` (the smallest training cost).

**At** :math:`\kappa = \infty` every term of :math:`f` carries a factor :math:`1/\kappa` (the
conjugates vanish like :math:`1/\kappa`): the value per :math:`\kappa D^2` is its limit, 0."""


@functools.lru_cache(maxsize=None)
def free_energy_at_saddle() -> sympy.Expr:
    """(R1) with the conjugates replaced by the derived conjugate equations (functions of the
    order parameters, ``z`` and the parameters:
    :meth:`replica.symbolic.saddle.SaddlePoint.conjugate_map`): a computed substitution of the
    same object :data:`FREE_ENERGY`, equal to it at the saddle point, which the engine evaluates
    at the solved ``(q, m, chi, qbar, chibar)`` and ``z``."""
    return FREE_ENERGY.xreplace(SADDLE.conjugate_map())


@functools.lru_cache(maxsize=None)
def fixed_point_equations() -> dict:
    """``{variable: rhs}``: the ten saddle-point equations derived from (R1) (conjugates first)."""
    return dict(SADDLE.fixed_point)


@functools.lru_cache(maxsize=None)
def reduced_map():
    """``(phi, z_of_theta)``: the closed map theta = Phi(theta) on (q, m, chi, qbar, chibar) (in
    the alias ``z`` and the abstract ``g``) and ``z`` as a function of theta."""
    phi, aliases = SADDLE.reduced_map()
    return phi, aliases[z]


# ---------------------------------------------------------------------------------------------
# Observables, errors, decomposition
# ---------------------------------------------------------------------------------------------
_gt1 = GT[1](z)
MBAR = mhat / qhat * (1 + z * _g)
"""(R5) mbar = (mhat/qhat)(1 + z g) = Tr(Gamma)/D."""
M0 = MBAR / rho
"""(R5) m0 = mbar/rho (overlap on the task subspace)."""
Q0_PIECES = {
    "S": mhat**2 / rho * (1 + 2 * z * _g + z**2 * _g1) / qhat**2,
    "T": chihat / (rho * kappa) * (_g + z * _g1) / qhat**2,
    "R": chibarhat / kappa * _gt1 / qhat**2,
}
"""(R9) q0 = Tr(Gamma P Gamma^T)/r, split into its S, T and R brackets."""
Q0 = sum(Q0_PIECES.values())


COMPLEMENT_ATOM = {G[0](z): rho * GT[0](z) - (1 - rho) / z,
                   G[1](z): rho * GT[1](z) + (1 - rho) / z**2}
r"""The spectral measure of S splits into its part on the task subspace (transform
:math:`\rho\tilde g`) and its part on the complement, where the training tasks have no component:
an atom of mass :math:`1-\rho` at 0, so :math:`g = \rho\tilde g - (1-\rho)/z` and
:math:`g' = \rho\tilde g' + (1-\rho)/z^2`."""


@functools.lru_cache(maxsize=None)
def complement_overlap() -> sympy.Expr:
    r""":math:`q_\perp = \operatorname{tr}(\Gamma(I-P)\Gamma^\top)/(D-r)`, computed from
    :math:`\bar q = \rho q_0 + (1-\rho) q_\perp` (:math:`\bar q` from the derived equation,
    :math:`q_0` from (R9)) with the complement's atom (:data:`COMPLEMENT_ATOM`): the signal and
    memorisation brackets cancel and :math:`q_\perp = \hat{\bar\chi}/(\kappa\hat q^2z^2)`
    remains -- outside the subspace :math:`\Gamma` holds only the structural fluctuation, and
    nothing of :math:`1/(1-\rho)` is left to evaluate."""
    fp = fixed_point_equations()
    diff = (fp[qbar] - rho * Q0).xreplace(COMPLEMENT_ATOM)
    return sympy.factor(sympy.cancel(diff / (1 - rho)))


def _pieces(rhs) -> dict:
    """Split a right-hand side linear in (mhat^2, chihat, chibarhat) into its S, T, R parts."""
    return {"S": rhs.subs({chihat: 0, chibarhat: 0}), "T": rhs.subs({mhat: 0, chibarhat: 0}),
            "R": rhs.subs({mhat: 0, chihat: 0})}


@functools.lru_cache(maxsize=None)
def pieces() -> dict:
    """``{"q": {S,T,R}, "qbar": {S,T,R}, "q0": {S,T,R}}``: the brackets of (R7), (R8) (taken
    from the *derived* equations) and (R9)."""
    fp = fixed_point_equations()
    return {"q": _pieces(fp[q]), "qbar": _pieces(fp[qbar]), "q0": dict(Q0_PIECES)}


ETEST = (1 + sigma_test**2) / alpha_test
"""(1 + sigma_test^2)/alpha_test: the only place the test context length enters."""

PROTOCOLS = {"tm": (m, q), "idg": (m0, q0), "odg": (mbar, qbar),
             "test": ((1 - phi) * m0, (1 - phi) * q0 + phi * q_perp)}
r"""The overlaps each protocol uses: TM (training tasks), IDG (new tasks in the subspace), ODG, and
``test``: a law with a fraction :math:`\phi` of its power outside the subspace (``--test``).

The error is affine in the test covariance :math:`C` (normalised to trace :math:`D`):
:math:`\operatorname{tr}(\Gamma C)/D` and :math:`\operatorname{tr}(\Gamma C\Gamma^\top)/D` enter
linearly. The law of :math:`\Gamma` is invariant under rotations of the subspace and of its
complement separately (the training tasks are isotropic in the subspace, the data isotropic), so
at :math:`D\to\infty` only the power inside and outside the subspace matters:
:math:`(1-\phi)(m_0, q_0)` from inside and :math:`\phi(m_\perp, q_\perp)` from outside, with
:math:`m_\perp = 0` (:math:`m_0 = \bar m/\rho`: nothing is learnt outside) and cross terms between
the two parts averaging to zero (a reflection of the complement flips their sign). Hence
``outside:PHI``, ``shared:F`` (:math:`\phi = 1-F`) and ``rotation:THETA``
(:math:`\phi = \sin^2\theta`) share one theory; :math:`\phi = 0` is IDG and
:math:`\phi = 1-\rho` ODG."""


def error_expr(protocol: str) -> sympy.Expr:
    """(E1)--(E3): sigma_test^2 + 1 - 2 m_X + q_X + (1 + sigma_test^2)/alpha_test qbar (and the
    ``test`` law's error with its overlaps)."""
    mx, qx = PROTOCOLS[protocol]
    return sigma_test**2 + 1 - 2 * mx + qx + ETEST * qbar


@functools.lru_cache(maxsize=None)
def decomposition_exprs() -> dict:
    """``{protocol: {signal, memorization, structural, noise}}`` in terms of the conjugates,
    ``z``, ``g`` and the overlaps ``m_X`` (E5, generalised to sigma_test != 0)."""
    pc = dict(pieces())
    pc["test"] = {k: (1 - phi) * pc["q0"][k] for k in ("S", "T", "R")}
    pc["test"]["R"] += phi * q_perp  # q_perp is structural alone (complement_overlap)
    key = {"tm": "q", "idg": "q0", "odg": "qbar", "test": "test"}
    out = {}
    for prot, (mx, _) in PROTOCOLS.items():
        qx = pc[key[prot]]
        qb = pc["qbar"]
        out[prot] = {"signal": 1 - 2 * mx + qx["S"] + ETEST * qb["S"],
                     "memorization": qx["T"] + ETEST * qb["T"],
                     "structural": qx["R"] + ETEST * qb["R"],
                     "noise": sigma_test**2}
    return out


# ---------------------------------------------------------------------------------------------
# The effective ridge: a scalar reduction of the fixed point (the engine's start)
# ---------------------------------------------------------------------------------------------
u = sympy.Symbol("u", nonnegative=True)
"""u = -z - epsilon = lambda/qhat: the effective ridge (paper A's lambda_tilde)."""
_gu = G[0](-EPS - u)
EFFECTIVE_RIDGE_EQUATION = u * _gu - (1 - tau) - lam * kappa / u
r"""h(u) = u g(-epsilon-u) - (1 - tau) - lambda kappa/u, zero at the saddle point when
lambda > 0 (u = 0 when lambda = 0, tau > 1).

From the equations for :math:`\chi, \bar\chi` and :math:`\hat q`:
:math:`\chi + \varepsilon\bar\chi = (1 - ug)/(\kappa\hat q)` and :math:`\kappa\hat q\Delta = \tau`,
hence :math:`\kappa\hat q = \tau - 1 + ug`; with the definition of :math:`z`,
:math:`u = \lambda/\hat q`. So :math:`ug(-\varepsilon-u) = 1 - \tau + \lambda\kappa/u`: paper A's
ridge equation :math:`\tilde\lambda M(\sigma_A) = 1 - \tau + \tau\lambda_A/\tilde\lambda` with
:math:`\tilde\lambda = u`, :math:`\lambda_A = \kappa\lambda/\tau`, :math:`M(\sigma_A) =
g(-\sigma_A)`. :math:`h` increases from :math:`-\infty` to :math:`\tau` on :math:`u > 0` (:math:`ug`
increases, :math:`-\lambda\kappa/u` increases): the root is unique, and lies in
:math:`(\lambda\kappa/\tau, \lambda\kappa/(\tau-1))` when :math:`\tau > 1` (:math:`0 < ug < 1`)."""
KAPPA_QHAT_OF_U = tau - 1 + u * _gu
"""kappa qhat = tau - 1 + u g at the saddle point."""


def _effective_ridge_start_in_z() -> dict:
    """``{m, chi, chibar}`` at the saddle point as functions of ``u`` and of ``g(z)`` (with
    ``z = -epsilon - u``)."""
    fp = fixed_point_equations()
    kq = KAPPA_QHAT_OF_U.xreplace({_gu: G[0](z)})
    sub = {qhat: kq / kappa, mhat: kq / kappa}
    return {s_: fp[s_].xreplace(sub) for s_ in (m, chi, chibar)}


@functools.lru_cache(maxsize=None)
def effective_ridge_start() -> dict:
    """``{m, chi, chibar}`` at the saddle point as functions of ``u`` (from the derived equations
    for m, chi, chibar with qhat = mhat = (tau - 1 + ug)/kappa and z = -epsilon - u); with them,
    the closed map is affine in (q, qbar)."""
    return {s_: e.subs(z, -EPS - u) for s_, e in _effective_ridge_start_in_z().items()}


# ---------------------------------------------------------------------------------------------
# The closed form at lambda = 0 (T1)-(T5)
# ---------------------------------------------------------------------------------------------
_gl, _gl1, _gtl1 = G[0](-EPS), G[1](-EPS), GT[1](-EPS)
_X = sigma**2 + EPS * (1 - EPS * _gl)
LAMBDA0_CLOSED_FORM = {
    qhat: (tau - 1) / kappa,
    mhat: (tau - 1) / kappa,
    qbarhat: EPS * (tau - 1) / kappa,
    z: -EPS,
    mbar: 1 - EPS * _gl,
    m: 1 - EPS + EPS**2 * _gl,
    m0: (1 - EPS * _gl) / rho,
    chi: (1 - EPS * _gl) / (tau - 1),
    chibar: _gl / (tau - 1),
    chihat: (tau - 1) * _X / kappa,
    chibarhat: EPS * (tau - 1) * _X / kappa,
    q: 1 - 2 * EPS + 3 * EPS**2 * _gl - EPS**3 * _gl1 + _X * (1 - EPS * _gl) / (tau - 1),
    qbar: 1 - 2 * EPS * _gl + EPS**2 * _gl1 + _X * _gl / (tau - 1),
    q0: (1 - 2 * EPS * _gl + EPS**2 * _gl1) / rho
    + _X / (tau - 1) * ((_gl - EPS * _gl1) / rho + EPS * _gtl1),
}
"""(T1)--(T5): the RS solution at lambda = 0, tau > 1, with g, g', gtilde' at z = -epsilon;
``X = sigma^2 + epsilon mbar``."""
LAMBDA0_E_TR = tau * _X / (tau - 1)
"""(T3) E_tr = tau X/(tau - 1)."""



# ---------------------------------------------------------------------------------------------
# The evaluation form: spectral functions split into atom and regular part
# ---------------------------------------------------------------------------------------------
P0, PT0 = sympy.symbols("p0 ptilde0", nonnegative=True)
H0, H1, H2 = sympy.symbols("h0 h1 h2", positive=True)
SPECTRAL_INPUTS = (P0, PT0, H0, H1, H2)
"""The spectral inputs of the evaluated expressions: the atom masses ``p0 = 1 - min(kappa, rho)``
(of S) and ``ptilde0 = (1 - kappa/rho)_+`` (of S restricted to the task subspace), and the regular
part ``h, h', h''`` at ``z`` (:func:`replica.spectra.lowrank_regular_expr`)."""


def split_spectral(expr, at=z):
    r"""Replace :math:`g^{(n)}(a) = \frac{d^n}{da^n}(-p_0/a) + \rho h^{(n)}(a)` and
    :math:`\tilde g^{(n)}(a) = \frac{d^n}{da^n}(-\tilde p_0/a) + h^{(n)}(a)` (pole of the atom at
    0 plus regular part) at the argument ``at``. After ``cancel`` the poles drop out of every
    combination that is regular (e.g. :math:`g + zg' = \rho(h + zh')`, :math:`1 + zg = 1 - p_0 +
    \rho z h`), so the numeric evaluation has no :math:`O(1/z)` cancellation (large alpha, where
    :math:`z \approx -(1+\sigma^2)/\alpha`)."""
    hs = (H0, H1, H2)
    rep = {}
    for n in range(3):
        pole = -(-1) ** n * sympy.factorial(n) / at ** (n + 1)
        rep[G[n](at)] = P0 * pole + rho * hs[n]
        rep[GT[n](at)] = PT0 * pole + hs[n]
    return sympy.sympify(expr).xreplace(rep)


@functools.lru_cache(maxsize=None)
def spectral_closed_forms(kappa_value=kappa) -> list:
    """Closed forms (:mod:`replica.spectra`) of :data:`SPECTRAL_INPUTS` at ``z``."""
    p0, pt0 = lowrank_atom_masses(kappa_value, rho)
    return [p0, pt0] + [lowrank_regular_expr(z, kappa_value, rho, n) for n in range(3)]




@functools.lru_cache(maxsize=None)
def reported_expressions() -> dict:
    """Every reported value as an expression in theta = (q, m, chi, qbar, chibar), z, g and the
    parameters, conjugates substituted.

    The order parameters are reported as solved. In the errors and their parts, the overlaps
    ``m_X`` and ``q_X`` are replaced by their saddle-point formulas (equal at the fixed point):
    then ``1 - 2 m_X + q_X^S`` cancels symbolically to a manifestly non-negative form (e.g.
    ``z^2 (g + z g')`` for TM), so small errors keep their relative precision."""
    H = SADDLE.conjugate_map()
    fp = fixed_point_equations()
    out = {str(s): s for s in ORDER_PARAMETERS}
    out.update({str(s): H[s] for s in CONJUGATES})
    out["z"] = z
    out[FREE_ENERGY_NAME] = free_energy_at_saddle()
    for k, v in (("mbar", MBAR), ("m0", M0), ("q0", Q0), ("q_perp", complement_overlap())):
        out[k] = v.xreplace(H)
    ov = {m: fp[m], q: fp[q], mbar: MBAR, m0: M0, q0: Q0, qbar: fp[qbar],
          q_perp: complement_overlap()}
    for prot in ALL_ERROR_KEYS:
        out[prot] = error_expr(prot).xreplace(ov).xreplace(H)
    for prot, parts in decomposition_exprs().items():
        for part, e in parts.items():
            out[f"{prot}_{part}"] = e.xreplace(ov).xreplace(H)
    return out


# ---------------------------------------------------------------------------------------------
# The declaration
# ---------------------------------------------------------------------------------------------
SYMBOLS = {"alpha": alpha, "tau": tau, "kappa": kappa, "lam": lam, "sigma": sigma, "rho": rho,
           "alpha_test": alpha_test, "sigma_test": sigma_test, "test": phi}
"""Schema names -> SymPy symbols."""


def _kappa_infinite(e):
    """The kappa = oo variant of an expression: lambda = 0 first (the limit exists only there),
    then kappa -> oo, as the ratio of the leading coefficients of numerator and denominator in
    kappa (a plain substitution of oo leaves terms such as oo*chibar*sigma**2, which are NaN at
    sigma = 0)."""
    e = sympy.cancel(e.subs(lam, 0))
    num, den = sympy.fraction(e)
    try:
        pn, pd = sympy.Poly(num, kappa), sympy.Poly(den, kappa)
    except sympy.PolynomialError:  # kappa inside a non-polynomial term: substitute
        return e.subs(kappa, sympy.oo)
    if pn.is_zero or pn.degree() < pd.degree():
        return sympy.Integer(0)
    if pn.degree() > pd.degree():
        return sympy.oo
    return sympy.cancel(pn.LC() / pd.LC())


def _inputs(kval):
    """The spectral inputs with their closed forms, built when code is generated (not when the
    generated code is loaded from the cache)."""
    return [(s_, (lambda i=i: spectral_closed_forms(kval)[i]))
            for i, s_ in enumerate(SPECTRAL_INPUTS)]


def system_of(variant: str) -> System:
    """The closed map theta = Phi(theta) (``"finite"`` or ``"kappa_infinite"``), or the lambda = 0
    closed form (``"lambda0"``, ``"lambda0_kappa_infinite"``: no unknowns; parameters alpha, tau,
    kappa, sigma, rho; it also reports E_tr and the errors tm, idg, odg at sigma_test = 0,
    alpha_test = alpha)."""
    kinf = variant.endswith("kappa_infinite")
    prep = _kappa_infinite if kinf else (lambda e: e)
    kval = sympy.oo if kinf else kappa
    if variant.startswith("lambda0"):
        report = [(str(k_), e, k_) for k_, e in LAMBDA0_CLOSED_FORM.items()]
        report.append(("E_tr", LAMBDA0_E_TR, None))
        at_test = {sigma_test: 0, alpha_test: alpha}
        report += [(p_, error_expr(p_).subs(at_test), None) for p_ in ERROR_KEYS]
        return System(unknowns=(), parameters=(alpha, tau, kappa, sigma, rho), symbols={
            k_: SYMBOLS[k_] for k_ in ("alpha", "tau", "kappa", "sigma", "rho")},
            residuals=[], report=report, start=Start(exact=True),
            aliases=[(z, -EPS)], spectral_inputs=_inputs(kval),
            evaluation_form=lambda e: prep(sympy.cancel(split_spectral(e, -EPS))))
    root = ScalarRoot(
        unknown=u, equation=lambda: prep(EFFECTIVE_RIDGE_EQUATION.xreplace({_gu: G[0](z)})),
        lower=lam * kappa / tau,
        upper=sympy.Piecewise((lam * kappa / (tau - 1), tau > 1), (sympy.oo, True)),
        initial=sympy.Piecewise((lam * kappa * (1 / tau + 1 / (tau - 1)) / 2, tau > 1),
                                (2 * lam * kappa / tau, True)),
        when=lam, otherwise=0, what="low-rank effective ridge u")
    start = Start(roots=(root,), aliases={z: -EPS - u}, values=lambda: {
        q: 1, qbar: 1, **{s_: prep(e) for s_, e in _effective_ridge_start_in_z().items()}})
    phi = lambda: reduced_map()[0]  # noqa: E731
    return System(
        unknowns=ORDER_PARAMETERS, parameters=PARAMS, symbols=SYMBOLS,
        fixed_point=phi, aliases=[(z, lambda: prep(reduced_map()[1]))],
        spectral_inputs=_inputs(kval),
        evaluation_form=lambda e: prep(sympy.cancel(split_spectral(e))),
        jacobian_form=lambda e: prep(split_spectral(e)),
        report=[(k_, (lambda k_=k_: reported_expressions()[k_]))
                for k_ in REPORT_KEYS + (FREE_ENERGY_NAME,)],
        start=start, admissible=[(-z, "z < 0")], positive_unknowns=True)
