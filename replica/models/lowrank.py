r"""Learning linear regression with low-rank tasks in context: the replica theory.

Takanami, Takahashi, Kabashima, *Learning Linear Regression with Low-Rank Tasks in-Context*,
arXiv:2510.04548 (spec: ``shared/spec/lowrank.md``). **Notation of that paper**: ``rho = r/D`` is
the task-rank ratio (``0 < rho <= 1``) and ``sigma`` the label-noise *standard deviation*
(variance ``sigma^2``); in papers A/B (``alignment``, ``isotropic``) ``rho`` is the noise variance.
``lam`` is the per-distinct-task ridge (``lambda M0 ||Gamma||^2 / 2``, spec §1.4).

Everything is derived from one SymPy object, the replica-symmetric free energy (R1),

.. math::
    f = \operatorname*{extr}\Big\{\frac{\tau}{2\kappa}\frac{\mathcal E_{\rm tr}}{1+V}
        - \frac{\hat q q}{2} - \frac{\hat{\bar q}\bar q}{2} + \hat m m + \frac{\hat\chi\chi}{2}
        + \frac{\hat{\bar\chi}\bar\chi}{2} - \frac{1}{2\hat q}\Big[\hat m^2(1+z+z^2g)
        + \frac{\hat\chi}{\kappa}(1+zg) + \frac{\hat{\bar\chi}}{\kappa}g\Big]\Big\},

:math:`\mathcal E_{\rm tr} = 1+\sigma^2-2m+q+\varepsilon\bar q`, :math:`V = \chi+\varepsilon
\bar\chi`, :math:`\varepsilon = (1+\sigma^2)/\alpha`, :math:`z = -(\lambda+\hat{\bar q})/\hat q`
(an alias), with the Stieltjes transform :math:`g(z)` of the empirical task covariance kept as an
abstract function (:func:`replica.symbolic.saddle.spectral_family`). The general mechanism
:class:`replica.symbolic.saddle.SaddlePoint` differentiates it (chain rule through ``z``:
:math:`\partial z/\partial\hat q = -z/\hat q`, :math:`\partial z/\partial\hat{\bar q} = -1/\hat q`)
and solves each condition for the paired variable, giving (R2)--(R3) and (R5)--(R8):

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

The tests (and :func:`derivation_steps`) check symbolically that these equal the spec's (R2)--(R8)
(:data:`SPEC_EQUATIONS`, typed from the spec for that comparison only). Post-processed
observables (never fed back): :math:`\bar m = \frac{\hat m}{\hat q}(1+zg)`,
:math:`m_0 = \bar m/\rho` (R5) and

.. math::
    q_0 = \frac{1}{\hat q^2}\Big[\frac{\hat m^2}{\rho}(1+2zg+z^2g') + \frac{\hat\chi}{\rho\kappa}
          (g+zg') + \frac{\hat{\bar\chi}}{\kappa}\tilde g'(z)\Big]\quad\text{(R9)}.

Errors for a test prompt of length :math:`\tilde\alpha D` with test noise :math:`\tilde\sigma`
(E1--E3): :math:`\varepsilon_X = \tilde\sigma^2 + 1 - 2m_X + q_X + \frac{1+\tilde\sigma^2}
{\tilde\alpha}\bar q` with :math:`(m_X, q_X) = (m, q)` (TM), :math:`(m_0, q_0)` (IDG),
:math:`(\bar m, \bar q)` (ODG). Each :math:`q` splits into the coefficients of :math:`\hat m^2`
(S), :math:`\hat\chi` (T) and :math:`\hat{\bar\chi}` (R), which gives the decomposition (E5)

.. math::
    \varepsilon_X = \underbrace{1 - 2m_X + q_X^S + \tfrac{1+\tilde\sigma^2}{\tilde\alpha}
    \bar q^S}_{\rm signal} + \underbrace{q_X^T + \tfrac{1+\tilde\sigma^2}{\tilde\alpha}\bar q^T}
    _{\rm memorization} + \underbrace{q_X^R + \tfrac{1+\tilde\sigma^2}{\tilde\alpha}\bar q^R}
    _{\rm structural} + \underbrace{\tilde\sigma^2}_{\rm noise}.

At :math:`\tilde\sigma = 0` this is the spec's (E5). The labels memorization = T and structural =
R are the spec's **inferred** mapping (spec §3.2); placing :math:`\tilde\sigma^2` in a separate
``noise`` part follows from :math:`\mathbb E(y-\hat y)^2 = \tilde\sigma^2 + \|w -
\Gamma\hat w\|^2/D` (the paper's own placement is not reproduced).

Closed form at :math:`\lambda = 0`, :math:`\tau > 1` (T1--T5): :math:`\hat q = (\tau-1)/\kappa`,
:math:`\Delta = \tau/(\tau-1)`, :math:`z = -\varepsilon`, ... (:data:`LAMBDA0_CLOSED_FORM`,
checked symbolically to satisfy the derived fixed point).

Numerics.

* Spectrum: :math:`g(z) = -p_0/z + \rho h(z)` with the atom :math:`p_0 = 1 - \min(\kappa,\rho)`
  at 0 and a regular part :math:`h` written without cancellation
  (:func:`replica.spectra.lowrank_regular_expr`); substituted into the derived equations
  (:func:`split_spectral`) and cancelled, the :math:`1/z` poles drop out symbolically, so nothing
  of size :math:`g \sim \alpha` is subtracted numerically at large ``alpha``.
* Start: eliminating :math:`\chi, \bar\chi` gives one monotone equation for the effective ridge
  :math:`u = -z - \varepsilon = \lambda/\hat q` (:data:`EFFECTIVE_RIDGE_EQUATION`; paper A's
  ridge equation), solved by bracketed Newton.
* Float64 (vectorised over parameter grids): the damped fixed-point iteration of the closed map
  :math:`\theta = \Phi(\theta)`, :math:`\theta = (q, m, \chi, \bar q, \bar\chi)` (conjugates
  substituted; :math:`\kappa` then enters only through ``z`` and ``g``), relative stopping rule,
  accelerated by batched Newton steps with the exact Jacobian (``method="damped"``: the
  authors' scheme alone, from :math:`\theta = 1`).
* Target precision: Newton's method with the exact SymPy Jacobian of
  :math:`(\theta - \Phi(\theta))_i/s_i` (fixed scales :math:`s_i`: the residual is relative)
  from the float64 solution; if float64 fails (e.g. ``alpha`` beyond its range) a damped mpmath
  iteration from the effective-ridge start provides it. The working precision carries guard
  digits; every reported value is verified by a re-solve at higher precision, and the guard is
  raised if they disagree (:func:`solve_params`).
* The evaluators are generated from the SymPy expressions (``lambdify`` with common
  subexpressions) on first use, and their source is cached on disk keyed on the source of the
  modules the equations come from (``REPLICA_LAMBDIFY_CACHE``).

``kappa = inf`` (a fresh task per prompt): the per-task ridge :math:`\lambda M_0` is then infinite
unless :math:`\lambda = 0`; at :math:`\lambda = 0` the closed map depends on :math:`\kappa` only
through :math:`g`, whose :math:`\kappa\to\infty` limit is the transform of :math:`P/\rho`, so the
limit is taken exactly. The conjugates vanish like :math:`1/\kappa` and are reported as 0.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import inspect
import os
from fractions import Fraction

import mpmath
import numpy as np
import sympy

from ..errors import ConvergenceError, ParameterError
from ..numerics import (NewtonReport, SolveResult, agreement_digits, bracketed_newton,
                        bracketed_newton_vec, precision)
from ..params import INF, exact_str, parse_exact, require_nonnegative, require_positive, to_mpf
from ..spectra import (lowrank_atom_masses, lowrank_regular_expr,
                       lowrank_stieltjes_derivative_expr, lowrank_stieltjes_quadratic,
                       lowrank_stieltjes_tilde_derivative_expr, lowrank_stieltjes_tilde_expr,
                       lowrank_stieltjes_tilde_quadratic)
from ..symbolic.saddle import Alias, SaddlePoint, SpectralFunction, is_zero, spectral_family
from ..symbolic.steps import Step

# ---------------------------------------------------------------------------------------------
# Symbols
# ---------------------------------------------------------------------------------------------
alpha, tau, kappa, rho, alpha_test = sympy.symbols("alpha tau kappa rho alpha_test", positive=True)
lam, sigma, sigma_test = sympy.symbols("lambda sigma sigma_test", nonnegative=True)

q, m, chi, qbar, chibar = sympy.symbols("q m chi qbar chibar", real=True)
qhat, mhat, chihat, qbarhat, chibarhat = sympy.symbols("qhat mhat chihat qbarhat chibarhat",
                                                       real=True)
z = sympy.Symbol("z", real=True)
mbar, m0, q0 = sympy.symbols("mbar m0 q0", real=True)

ORDER_PARAMETERS = (q, m, chi, qbar, chibar)
"""The unknowns of the closed fixed-point map, in this order."""
CONJUGATES = (qhat, mhat, chihat, qbarhat, chibarhat)
PAIRS = ((q, qhat), (m, mhat), (qbar, qbarhat), (chi, chihat), (chibar, chibarhat))
PARAMS = (alpha, tau, kappa, lam, sigma, rho, alpha_test, sigma_test)
"""Numeric argument order of every compiled expression (after the order parameters)."""

G = spectral_family("g")
"""g, g', g'', ...: the Stieltjes transform of the empirical task covariance S (abstract)."""
GT = spectral_family("gtilde", r"\tilde{g}")
r"""\tilde g, \tilde g', ...: the transform restricted to the task subspace (abstract)."""

SYMBOL_NAMES = {alpha_test: r"\tilde\alpha", sigma_test: r"\tilde\sigma", lam: r"\lambda"}
"""Extra LaTeX names (``sympy.latex(..., symbol_names=SYMBOL_NAMES)``); the hats and bars are
printed by SymPy from the symbol names (``qbarhat`` -> ``\\hat{\\bar{q}}``)."""

# ---------------------------------------------------------------------------------------------
# The free energy (R1): the single source of the saddle-point equations
# ---------------------------------------------------------------------------------------------
EPS = (1 + sigma**2) / alpha
"""epsilon = (1 + sigma^2)/alpha: variance of the one-step estimate's fluctuation per direction
(the implicit ridge, spec §4.1)."""
E_TR = 1 + sigma**2 - 2 * m + q + EPS * qbar
"""E_tr = 1 + sigma^2 - 2m + q + epsilon qbar (= TM error at test = train conditions)."""
V = chi + EPS * chibar
DELTA = 1 + V
Z_DEFINITION = -(lam + qbarhat) / qhat
"""z = -(lambda + qbarhat)/qhat (an alias in the free energy)."""

_g, _g1 = G[0](z), G[1](z)

FREE_ENERGY = (tau / (2 * kappa) * E_TR / DELTA - qhat * q / 2 - qbarhat * qbar / 2 + mhat * m
               + chihat * chi / 2 + chibarhat * chibar / 2
               - 1 / (2 * qhat) * (mhat**2 * (1 + z + z**2 * _g) + chihat / kappa * (1 + z * _g)
                                   + chibarhat / kappa * _g))
"""The RS free energy (R1) (a reconstruction with checked properties, spec §2.3)."""

SADDLE = SaddlePoint(FREE_ENERGY, PAIRS, [Alias(z, Z_DEFINITION, lam)], name="f")
"""Stationarity and fixed-point form of (R1), derived by :mod:`replica.symbolic.saddle`."""


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


# The spec's equations, typed from spec/lowrank.md §2.4 ONLY to check the derivation against.
_D = 1 + chi + (1 + sigma**2) / alpha * chibar
SPEC_EQUATIONS = {
    qhat: (tau / kappa) / _D,
    mhat: (tau / kappa) / _D,
    qbarhat: (1 + sigma**2) / alpha * (tau / kappa) / _D,
    chihat: tau / kappa * (1 + sigma**2 - 2 * m + q + (1 + sigma**2) / alpha * qbar) / _D**2,
    chibarhat: (1 + sigma**2) / alpha * tau / kappa
    * (1 + sigma**2 - 2 * m + q + (1 + sigma**2) / alpha * qbar) / _D**2,
    m: mhat / qhat * (1 + z * (1 + z * _g)),
    chi: (1 + z * _g) / (kappa * qhat),
    chibar: _g / (kappa * qhat),
    q: (mhat**2 * (1 + 2 * z + 3 * z**2 * _g + z**3 * _g1)
        + chihat / kappa * (1 + 2 * z * _g + z**2 * _g1)
        + chibarhat / kappa * (_g + z * _g1)) / qhat**2,
    qbar: (mhat**2 * (1 + 2 * z * _g + z**2 * _g1) + chihat / kappa * (_g + z * _g1)
           + chibarhat / kappa * _g1) / qhat**2,
}
"""(R2), (R3), (R5)--(R8) as written in the spec (comparison target of the derivation)."""
SPEC_Z = -lam / qhat - (1 + sigma**2) / alpha
"""(R4) as written in the spec: z = -lambda/qhat - (1 + sigma^2)/alpha."""

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

PROTOCOLS = {"tm": (m, q), "idg": (m0, q0), "odg": (mbar, qbar)}
"""The overlaps each protocol uses: TM (training tasks), IDG (new tasks in the subspace), ODG."""


def error_expr(protocol: str) -> sympy.Expr:
    """(E1)--(E3): sigma_test^2 + 1 - 2 m_X + q_X + (1 + sigma_test^2)/alpha_test qbar."""
    mx, qx = PROTOCOLS[protocol]
    return sigma_test**2 + 1 - 2 * mx + qx + ETEST * qbar


@functools.lru_cache(maxsize=None)
def decomposition_exprs() -> dict:
    """``{protocol: {signal, memorization, structural, noise}}`` in terms of the conjugates,
    ``z``, ``g`` and the overlaps ``m_X`` (E5, generalised to sigma_test != 0)."""
    pc = pieces()
    key = {"tm": "q", "idg": "q0", "odg": "qbar"}
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
# The effective ridge: a scalar reduction of the fixed point (used to start the solvers)
# ---------------------------------------------------------------------------------------------
u = sympy.Symbol("u", nonnegative=True)
"""u = -z - epsilon = lambda/qhat: the effective ridge (paper A's lambda_tilde)."""
_gu = G[0](-EPS - u)
EFFECTIVE_RIDGE_EQUATION = u * _gu - (1 - tau) - lam * kappa / u
r"""h(u) = u g(-epsilon-u) - (1 - tau) - lambda kappa/u, zero at the saddle point when
lambda > 0 (u = 0 when lambda = 0, tau > 1).

From (R6) and (R2): :math:`\chi + \varepsilon\bar\chi = (1 - ug)/(\kappa\hat q)` and
:math:`\kappa\hat q\Delta = \tau`, hence :math:`\kappa\hat q = \tau - 1 + ug`; with
(R4), :math:`u = \lambda/\hat q`. So :math:`ug(-\varepsilon-u) = 1 - \tau + \lambda\kappa/u`:
paper A's ridge equation :math:`\tilde\lambda M(\sigma_A) = 1 - \tau + \tau\lambda_A/\tilde
\lambda` with :math:`\tilde\lambda = u`, :math:`\lambda_A = \kappa\lambda/\tau`,
:math:`M(\sigma_A) = g(-\sigma_A)`. :math:`h` increases from :math:`-\infty` to :math:`\tau`
on :math:`u > 0` (:math:`ug` increases, :math:`-\lambda\kappa/u` increases): the root is unique,
and lies in :math:`(\lambda\kappa/\tau, \lambda\kappa/(\tau-1))` when :math:`\tau > 1`
(:math:`0 < ug < 1`)."""
KAPPA_QHAT_OF_U = tau - 1 + u * _gu
"""kappa qhat = tau - 1 + u g at the saddle point."""


@functools.lru_cache(maxsize=None)
def effective_ridge_start() -> dict:
    """``{m, chi, chibar}`` at the saddle point as functions of ``u`` (from the derived (R5),
    (R6) with qhat = mhat = (tau - 1 + ug)/kappa and z = -epsilon - u); with them, the closed map
    is affine in (q, qbar), so one Newton step gives q and qbar exactly."""
    fp = fixed_point_equations()
    sub = {qhat: KAPPA_QHAT_OF_U / kappa, mhat: KAPPA_QHAT_OF_U / kappa}
    out = {}
    for s_ in (m, chi, chibar):
        out[s_] = fp[s_].xreplace(sub).subs(z, -EPS - u)
    return out


def _check_effective_ridge() -> bool:
    """The saddle point satisfies kappa qhat = tau - 1 + u g with u = -z - epsilon (from (R2),
    (R6)), and u = lambda/qhat (from (R4)), which together give h(u) = 0."""
    fp = fixed_point_equations()
    # qhat = H_qhat(chi(qhat, z), chibar(qhat, z)) is a fixed point in qhat: solve it.
    eq = qhat - fp[qhat].xreplace({chi: fp[chi], chibar: fp[chibar]})
    sols = sympy.solve(sympy.together(eq), qhat, dict=True)
    sols = [sl[qhat] for sl in sols if sl[qhat] != 0]
    if len(sols) != 1:
        return False
    uz = -z - EPS
    if not is_zero(kappa * sols[0] - (tau - 1 + uz * _g)):
        return False
    # With u = lambda/qhat, i.e. lambda = u (tau - 1 + u g)/kappa, h(u) vanishes identically.
    gz = sympy.Symbol("gz")
    h = EFFECTIVE_RIDGE_EQUATION.subs(_gu, gz)
    return is_zero(h.subs(lam, u * (tau - 1 + u * gz) / kappa))


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


def _check_lambda0_closed_form() -> bool:
    """(T1)--(T5) satisfy the ten derived fixed-point equations at lambda = 0 (g abstract), and
    (R5), (R9) give their mbar, m0, q0."""
    cf = LAMBDA0_CLOSED_FORM
    sub = {s: cf[s] for s in ORDER_PARAMETERS + CONJUGATES}
    sub[z] = -EPS
    for target, rhs in fixed_point_equations().items():
        if not is_zero((cf[target] - rhs.subs(lam, 0).xreplace(sub))):
            return False
    for sym, expr in ((mbar, MBAR), (m0, M0), (q0, Q0)):
        if not is_zero(cf[sym] - expr.xreplace(sub)):
            return False
    if not is_zero(Z_DEFINITION.subs(lam, 0).xreplace(sub) + EPS):
        return False
    return is_zero(E_TR.xreplace(sub) - LAMBDA0_E_TR)


# ---------------------------------------------------------------------------------------------
# Numeric back ends, generated from the derived equations
# ---------------------------------------------------------------------------------------------
P0, PT0 = sympy.symbols("p0 ptilde0", nonnegative=True)
H0, H1, H2 = sympy.symbols("h0 h1 h2", positive=True)
SPECTRAL_INPUTS = (P0, PT0, H0, H1, H2)
"""Numeric inputs of the compiled expressions that carry the spectrum: the atom masses
``p0 = 1 - min(kappa, rho)`` (of S) and ``ptilde0 = (1 - kappa/rho)_+`` (of S restricted to the
task subspace), and the regular part ``h, h', h''`` at ``z`` (:func:`replica.spectra.
lowrank_regular_expr`)."""


def split_spectral(expr, at=z):
    r"""Replace :math:`g^{(n)}(a) = rac{d^n}{da^n}(-p_0/a) + 
ho h^{(n)}(a)` and
    :math:`	ilde g^{(n)}(a) = rac{d^n}{da^n}(-	ilde p_0/a) + h^{(n)}(a)` (pole of the atom at 0
    plus regular part) at the argument ``at``. After ``cancel`` the poles drop out of every
    combination that is regular (e.g. :math:`g + zg' = 
ho(h + zh')`,
    :math:`1 + zg = 1 - p_0 + 
ho z h`), so the numeric evaluation has no
    :math:`O(1/z)` cancellation (large alpha, where :math:`z pprox -(1+\sigma^2)/lpha`)."""
    hs = (H0, H1, H2)
    rep = {}
    for n in range(3):
        pole = -(-1) ** n * sympy.factorial(n) / at ** (n + 1)
        rep[G[n](at)] = P0 * pole + rho * hs[n]
        rep[GT[n](at)] = PT0 * pole + hs[n]
    return sympy.sympify(expr).xreplace(rep)


def _spectral_closed_forms(kappa_value) -> list:
    """Closed forms (SymPy, :mod:`replica.spectra`) of :data:`SPECTRAL_INPUTS` at ``z``."""
    p0, pt0 = lowrank_atom_masses(kappa_value, rho)
    return [p0, pt0] + [lowrank_regular_expr(z, kappa_value, rho, n) for n in range(3)]


REPORTED_ORDER = ("q", "m", "chi", "qbar", "chibar", "qhat", "mhat", "chihat", "qbarhat",
                  "chibarhat", "z", "mbar", "m0", "q0")
ERROR_KEYS = ("tm", "idg", "odg")
PART_KEYS = ("signal", "memorization", "structural", "noise")
REPORT_KEYS = REPORTED_ORDER + ERROR_KEYS + tuple(f"{p}_{k}" for p in ERROR_KEYS
                                                  for k in PART_KEYS)
"""Keys of every reported value (``<protocol>_<part>`` for the decomposition)."""


@functools.lru_cache(maxsize=None)
def _reported_exprs() -> dict:
    """Every reported value as an expression in theta = (q, m, chi, qbar, chibar), z, the
    spectral inputs (:func:`split_spectral`) and the parameters, conjugates substituted and
    cancelled.

    The order parameters are reported as solved. In the errors and their parts, the overlaps
    ``m_X`` and ``q_X`` are replaced by their saddle-point formulas (equal at the fixed point):
    then ``1 - 2 m_X + q_X^S`` cancels symbolically to a manifestly non-negative form (e.g.
    ``z^2 (g + z g')`` for TM), so small errors keep their relative precision."""
    H = SADDLE.conjugate_map()
    fp = fixed_point_equations()

    def fin(e):
        return sympy.cancel(split_spectral(e.xreplace(H)))

    out = {str(s): s for s in ORDER_PARAMETERS}
    out.update({str(s): H[s] for s in CONJUGATES})
    out["z"] = z
    for k, v in (("mbar", MBAR), ("m0", M0), ("q0", Q0)):
        out[k] = fin(v)
    ov = {m: fp[m], q: fp[q], mbar: MBAR, m0: M0, q0: Q0, qbar: fp[qbar]}
    for prot in ERROR_KEYS:
        out[prot] = fin(error_expr(prot).xreplace(ov))
    for prot, parts in decomposition_exprs().items():
        for part, e in parts.items():
            out[f"{prot}_{part}"] = fin(e.xreplace(ov))
    return out


# -- A disk cache of the generated evaluator code ----------------------------------------------
# Deriving the equations and generating the evaluators takes a few seconds per process; the
# generated Python source is cached, keyed on the source of the three modules the expressions come
# from (this one, replica.symbolic.saddle, replica.spectra) and the SymPy/mpmath/NumPy versions, so
# any change to the equations regenerates it. REPLICA_LAMBDIFY_CACHE=0 disables the cache;
# REPLICA_LAMBDIFY_CACHE=DIR sets its folder (default ~/.cache/replica/lambdify).
_MODULES = {"mp": "mpmath", "np": "numpy"}


@functools.lru_cache(maxsize=None)
def _cache_folder():
    setting = os.environ.get("REPLICA_LAMBDIFY_CACHE", "")
    if setting.lower() in ("0", "off", "no", "false"):
        return None
    folder = setting or os.path.join(os.path.expanduser("~"), ".cache", "replica", "lambdify")
    try:
        os.makedirs(folder, exist_ok=True)
    except OSError:
        return None
    return folder


@functools.lru_cache(maxsize=None)
def _code_key() -> str:
    from ..symbolic import saddle as _saddle
    from .. import spectra as _spectra

    h = hashlib.sha256()
    for path in (__file__, _saddle.__file__, _spectra.__file__):
        with open(path, "rb") as fh:
            h.update(fh.read())
    h.update(f"{sympy.__version__} {mpmath.__version__} {np.__version__}".encode())
    return h.hexdigest()[:24]


@functools.lru_cache(maxsize=None)
def _namespace(backend):
    """The global namespace ``lambdify`` gives its generated code for ``backend``."""
    return sympy.lambdify([], [], modules=_MODULES[backend]).__globals__


def _cache_path(name):
    folder = _cache_folder()
    return None if folder is None else os.path.join(folder, f"lowrank-{_code_key()}-{name}.py")


def _load_cached(name, backend):
    path = _cache_path(name)
    if path is None or not os.path.exists(path):
        return None
    try:
        with open(path) as fh:
            source = fh.read()
        ns = dict(_namespace(backend))
        exec(compile(source, path, "exec"), ns)  # noqa: S102 - our own generated code
        return ns["_lambdifygenerated"]
    except Exception:  # a damaged cache file: regenerate
        return None


def _store_cached(name, f):
    path = _cache_path(name)
    if path is None:
        return
    try:
        source = inspect.getsource(f)
        tmp = f"{path}.{os.getpid()}.tmp"
        with open(tmp, "w") as fh:
            fh.write(source)
        os.replace(tmp, path)
    except (OSError, TypeError):
        pass


class _Compiled:
    r"""Numeric evaluators (``"np"``: float64, vectorised; ``"mp"``: mpmath), generated from the
    derived equations on first use (``comp[group][backend]``). Arguments: ``theta`` (5), the
    parameters (:data:`PARAMS`), then ``z`` and :data:`SPECTRAL_INPUTS` where they enter:

    * ``z(theta, params)``; ``spectral(z, kappa, rho)`` -> (p0, ptilde0, h, h', h'');
    * ``phi``: Phi(theta) (5 values); ``jac``: the exact d Phi/d theta (25 values, row-major),
      by the chain rule :math:`\partial_	heta\Phi|_z + (d\Phi/dz)\,\partial_	heta z`
      with :math:`dg/dz = g'` and :math:`dg'/dz = g''`;
    * ``report``: every value of :data:`REPORT_KEYS`;
    * ``ridge``: (h(u), h'(u)) of :data:`EFFECTIVE_RIDGE_EQUATION`; ``ridge_start``: (m, chi,
      chibar) given u (:func:`effective_ridge_start`).

    With ``kappa_infinite``, ``lambda = 0`` and ``kappa -> oo`` are substituted (the closed map
    and the reported expressions are then kappa-free, and the spectral closed forms are the
    kappa = oo ones).
    """

    GROUPS = ("z", "spectral", "phi", "jac", "report", "ridge", "ridge_start")

    def __init__(self, kappa_infinite: bool):
        self.kappa_infinite = kappa_infinite
        self._funcs: dict = {}

    def _prep(self, e):
        if self.kappa_infinite:
            e = sympy.cancel(e.subs(lam, 0)).subs(kappa, sympy.oo)
        return e

    @functools.cached_property
    def _theta_args(self):
        return list(ORDER_PARAMETERS) + list(PARAMS) + [z] + list(SPECTRAL_INPUTS)

    def _exprs(self, key):
        """(expressions, argument symbols) of the group ``key``."""
        if key == "spectral":
            kval = sympy.oo if self.kappa_infinite else kappa
            return _spectral_closed_forms(kval), [z, kappa, rho]
        phi, z_theta = reduced_map()
        if key == "z":
            return [self._prep(z_theta)], list(ORDER_PARAMETERS) + list(PARAMS)
        phi_list = [phi[s_] for s_ in ORDER_PARAMETERS]
        if key == "phi":
            exprs = [sympy.cancel(split_spectral(e)) for e in phi_list]
        elif key == "jac":
            dz = [sympy.diff(z_theta, v) for v in ORDER_PARAMETERS]
            exprs = []
            for e in phi_list:
                de_dz = split_spectral(sympy.diff(e, z))
                es = split_spectral(e)
                exprs += [sympy.diff(es, v) + de_dz * dzv for v, dzv in zip(ORDER_PARAMETERS, dz)]
        elif key == "report":
            rep = _reported_exprs()
            exprs = [rep[k] for k in REPORT_KEYS]
        elif key in ("ridge", "ridge_start"):
            zu = -EPS - u
            if key == "ridge":
                exprs = [EFFECTIVE_RIDGE_EQUATION, sympy.diff(EFFECTIVE_RIDGE_EQUATION, u)]
            else:
                st = effective_ridge_start()
                exprs = [st[v] for v in (m, chi, chibar)]
            exprs = [self._prep(split_spectral(e, zu)) for e in exprs]
            return exprs, [u] + list(PARAMS) + list(SPECTRAL_INPUTS)
        else:
            raise KeyError(key)
        exprs = [self._prep(e) for e in exprs]
        for e in exprs:
            if e.atoms(SpectralFunction):
                raise RuntimeError(f"{key}: a spectral function was not split")
        return exprs, self._theta_args

    def get(self, key, backend):
        k = (key, backend)
        if k not in self._funcs:
            name = f"{key}-{backend}-{'kinf' if self.kappa_infinite else 'k'}"
            f = _load_cached(name, backend)
            if f is None:
                exprs, args = self._exprs(key)
                f = sympy.lambdify(args, exprs, modules=_MODULES[backend], cse=True)
                _store_cached(name, f)
            self._funcs[k] = f
        return self._funcs[k]

    def __getitem__(self, key):
        if key not in self.GROUPS:
            raise KeyError(key)
        return _Backends(self, key)


class _Backends:
    def __init__(self, comp, key):
        self.comp, self.key = comp, key

    def __getitem__(self, backend):
        return self.comp.get(self.key, backend)


@functools.lru_cache(maxsize=None)
def _compiled(kappa_infinite: bool) -> _Compiled:
    """The (lazily compiled) evaluators for finite or infinite kappa (:class:`_Compiled`)."""
    return _Compiled(kappa_infinite)


class _Evaluator:
    """Evaluate the compiled expressions at one backend (``"np"`` or ``"mp"``): computes ``z``
    and the spectral values first, then the requested group."""

    def __init__(self, comp, backend, params):
        self.comp, self.b, self.P = comp, backend, list(params)

    def stage(self, theta):
        zv = self.comp["z"][self.b](*theta, *self.P)[0]
        sv = self.comp["spectral"][self.b](zv, self.P[2], self.P[5])
        return zv, list(sv)

    def __call__(self, key, theta, staged=None):
        zv, sv = self.stage(theta) if staged is None else staged
        return self.comp[key][self.b](*theta, *self.P, zv, *sv)


# ---------------------------------------------------------------------------------------------
# Parameters
# ---------------------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class LowRankParams:
    """Exact parameters. ``rho`` is the task-rank ratio, ``sigma`` the noise standard deviation;
    ``kappa`` may be ``"inf"``."""

    alpha: Fraction
    tau: Fraction
    kappa: object
    rho: Fraction
    sigma: Fraction
    lam: Fraction
    alpha_test: Fraction
    sigma_test: Fraction

    @property
    def kappa_infinite(self) -> bool:
        return self.kappa == INF

    def echo(self) -> dict:
        return {"alpha": exact_str(self.alpha), "tau": exact_str(self.tau),
                "kappa": exact_str(self.kappa), "rho": exact_str(self.rho),
                "sigma": exact_str(self.sigma), "lam": exact_str(self.lam),
                "alpha_test": exact_str(self.alpha_test),
                "sigma_test": exact_str(self.sigma_test)}

    def values_mp(self) -> list:
        """Parameter values in the order of :data:`PARAMS` (mpf at the working precision)."""
        k = mpmath.inf if self.kappa_infinite else to_mpf(self.kappa)
        return [to_mpf(self.alpha), to_mpf(self.tau), k, to_mpf(self.lam), to_mpf(self.sigma),
                to_mpf(self.rho), to_mpf(self.alpha_test), to_mpf(self.sigma_test)]


def make_params(alpha, tau, kappa, rho, sigma, lam=0, alpha_test=None, sigma_test=0
                ) -> LowRankParams:
    """Validate and convert (strings such as ``"0.3"``, ``"3/10"``, ints, Fractions; ``kappa``
    may be ``"inf"``). Raises :class:`ParameterError` naming the parameter."""
    a = require_positive(parse_exact(alpha, "--alpha"), "--alpha")
    t = require_positive(parse_exact(tau, "--tau"), "--tau")
    k = require_positive(parse_exact(kappa, "--kappa", allow_inf=True), "--kappa",
                         allow_inf=True)
    r = parse_exact(rho, "--rho")
    if not (0 < r <= 1):
        raise ParameterError("--rho", f"the task-rank ratio r/D must lie in (0, 1], got "
                                      f"{exact_str(r)}")
    s = parse_exact(sigma, "--sigma")
    if s < 0:
        raise ParameterError("--sigma", f"the noise standard deviation must be >= 0, got "
                                        f"{exact_str(s)}")
    lm = require_nonnegative(parse_exact(lam, "--lam"), "--lam")
    at = a if alpha_test is None else require_positive(parse_exact(alpha_test, "--alpha-test"),
                                                       "--alpha-test")
    st = parse_exact(sigma_test, "--sigma-test")
    if st < 0:
        raise ParameterError("--sigma-test", f"the test noise standard deviation must be >= 0, "
                                             f"got {exact_str(st)}")
    if lm == 0 and t < 1:
        raise ParameterError("--lam", "no admissible solution at lambda = 0 with tau < 1 "
                                      "(qhat = (tau-1)/kappa < 0): pass --lam > 0")
    if lm == 0 and t == 1:
        raise ParameterError("--tau", "the ridgeless theory diverges at tau = 1 (interpolation "
                                      "threshold): pass --lam > 0")
    if k == INF and lm > 0:
        raise ParameterError("--lam", "with --kappa inf the per-task ridge lambda*M0 is "
                                      "infinite (Gamma = 0); the kappa -> inf limit exists only "
                                      "at --lam 0")
    return LowRankParams(a, t, k, r, s, lm, at, st)


# ---------------------------------------------------------------------------------------------
# Float64 path (vectorised over parameter grids)
# ---------------------------------------------------------------------------------------------
def _relative_change(new, old):
    scale = np.maximum(np.maximum(np.abs(new), np.abs(old)), 1e-300)
    return np.max(np.abs(new - old) / scale, axis=0)


def _start_f64(comp, P, shape):
    """theta0 = (1, m, chi, 1, chibar) from the effective ridge u (root of the monotone
    :data:`EFFECTIVE_RIDGE_EQUATION`, bracketed Newton, vectorised; u = 0 where lambda = 0)."""
    a_, t_, k_, l_, s_, r_ = (np.broadcast_to(v, shape) for v in P[:6])
    eps = (1 + s_**2) / a_
    need = l_ > 0
    spec = comp["spectral"]["np"]

    def parts(uv, key="ridge"):
        with np.errstate(all="ignore"):
            sv = spec(-eps - uv, k_, r_)
            return [np.broadcast_to(np.asarray(v, float), shape)
                    for v in comp[key]["np"](uv, *P, *[np.broadcast_to(w, shape) for w in sv])]

    uv = np.zeros(shape)
    if np.any(need):
        with np.errstate(all="ignore"):
            lo = np.where(need, l_ * k_ / t_, 0.0)
            hi = np.where(need & (t_ > 1), l_ * k_ / (t_ - 1), np.where(need, np.inf, 0.0))
            x0 = np.where(np.isfinite(hi), 0.5 * (lo + hi), 2 * lo)

        def fdf(x):
            h, dh = parts(x)
            return np.where(need, h, 0.0), np.where(need, dh, 1.0)

        uv, _ = bracketed_newton_vec(fdf, lo, hi, x0, increasing=True, rtol=1e-15,
                                     what="low-rank effective ridge u")
        uv = np.where(need, uv, 0.0)
    m_, chi_, chib_ = parts(uv, "ridge_start")
    one = np.ones(shape)
    return np.array([one, m_, chi_, one, chib_])


def _start_mp(comp, P):
    """:func:`_start_f64` at the working precision (scalar bracketed Newton in mpmath), followed
    by one Newton step of the full system, which is exact for the block (q, qbar) on which the
    closed map is affine once (m, chi, chibar) are exact."""
    a_, t_, k_, l_, s_, r_ = P[:6]
    eps = (1 + s_**2) / a_
    spec = comp["spectral"]["mp"]

    def parts(uv, key="ridge"):
        return comp[key]["mp"](uv, *P, *spec(-eps - uv, k_, r_))

    if l_ > 0:
        lo = l_ * k_ / t_
        hi = l_ * k_ / (t_ - 1) if t_ > 1 else mpmath.inf
        x0 = (lo + hi) / 2 if hi != mpmath.inf else 2 * lo
        uv, _ = bracketed_newton(lambda x: tuple(parts(x)), lo, hi, x0, increasing=True,
                                 rtol=mpmath.eps * 8, what="low-rank effective ridge u")
    else:
        uv = mpmath.mpf(0)
    m_, chi_, chib_ = parts(uv, "ridge_start")
    x = [mpmath.mpf(1), m_, chi_, mpmath.mpf(1), chib_]
    ev = _Evaluator(comp, "mp", P)
    fx = ev("phi", x)
    jx = ev("jac", x)
    n = 5
    A = mpmath.matrix([[(1 if i == j else 0) - jx[n * i + j] for j in range(n)]
                       for i in range(n)])
    try:
        dx = mpmath.lu_solve(A, mpmath.matrix([fx[i] - x[i] for i in range(n)]))
    except ZeroDivisionError:
        return x
    xn = [x[i] + dx[i] for i in range(n)]
    return xn if all(v > 0 for v in xn) else x


def _iterate_f64(comp, P, x, *, damping, rtol, maxiter, newton_from=np.inf):
    """Solve theta = Phi(theta) at every grid point (float64, vectorised over the points still
    active).

    Each sweep first tries, at points whose relative change ``max_i |Phi_i - theta_i| /
    |theta_i|`` is below ``newton_from``, a Newton step on ``theta - Phi(theta)`` with the exact
    Jacobian (batched 5x5 solves, step halving, accepted only if the relative change drops);
    elsewhere -- and where Newton is rejected -- it takes the damped step ``theta += d (Phi -
    theta)``, each point halving its own ``d`` (down to 1/64) when its change grows. A point has
    converged when its relative change is below ``rtol``. Returns ``(theta, converged,
    iterations, relative change)`` with the grid's shape.
    """
    n = x.shape[0]
    shape = x.shape[1:]
    N = int(np.prod(shape, dtype=int))
    X = np.array(x, dtype=float).reshape(n, N)
    Pf = [np.array(np.broadcast_to(v, shape), dtype=float).reshape(N) for v in P]
    done = np.zeros(N, bool)
    iters = np.zeros(N, int)
    rel = np.full(N, np.inf)
    d = np.full(N, float(damping))
    prev = np.full(N, np.inf)
    idx = np.arange(N)
    eye = np.eye(n)

    def F(ev, xv, m):
        with np.errstate(all="ignore"):
            return np.array([np.broadcast_to(v, (m,)) for v in ev("phi", xv)], dtype=float)

    def change(fx, xv):
        """Relative change; infinite where Phi is not finite or theta is not admissible (every
        order parameter q, m, chi, qbar, chibar is positive at the RS solution)."""
        with np.errstate(all="ignore"):
            r = _relative_change(fx, xv)
        return np.where(np.all(np.isfinite(fx), axis=0) & np.all(xv > 0, axis=0), r, np.inf)

    for it in range(1, maxiter + 1):
        if idx.size == 0:
            break
        m = idx.size
        xa = X[:, idx]
        ev = _Evaluator(comp, "np", [p_[idx] for p_ in Pf])
        fx = F(ev, xa, m)
        r = change(fx, xa)
        newton = np.zeros(m, bool)
        cand = (r < newton_from) & (r >= rtol)
        if cand.any():
            with np.errstate(all="ignore"):
                J = np.array([np.broadcast_to(v, (m,)) for v in ev("jac", xa)], dtype=float)
            A = eye - np.moveaxis(J.reshape(n, n, m), -1, 0)
            b = (fx - xa).T
            A[~cand] = eye
            b[~cand] = 0.0
            good_sys = np.all(np.isfinite(A), axis=(1, 2)) & np.all(np.isfinite(b), axis=1)
            A[~good_sys] = eye
            b[~good_sys] = 0.0
            try:
                dx = np.linalg.solve(A, b[..., None])[..., 0].T
            except np.linalg.LinAlgError:
                dx = np.zeros_like(xa)
                good_sys[:] = False
            cand &= good_sys
            t = 1.0
            for _ in range(5):
                trial = cand & ~newton
                if not trial.any():
                    break
                xn = np.where(trial, xa + t * dx, xa)
                rn = change(F(ev, xn, m), xn)
                acc = trial & (rn < r) & np.all(xn > 0, axis=0)
                xa = np.where(acc, xn, xa)
                r = np.where(acc, rn, r)
                newton |= acc
                t /= 2
        plain = ~newton
        worse = r >= prev[idx]
        d[idx] = np.where(plain & worse, np.maximum(d[idx] / 2, 1 / 64),
                          np.where(plain, np.minimum(d[idx] * 1.05, damping), d[idx]))
        prev[idx] = np.where(plain, r, prev[idx])
        ok = np.all(np.isfinite(fx), axis=0)
        step_ok = plain & ok & (r >= rtol)
        xa = np.where(step_ok, xa + d[idx] * (fx - xa), xa)
        d[idx] = np.where(plain & ~ok, np.maximum(d[idx] / 4, 1 / 64), d[idx])
        X[:, idx] = xa
        iters[idx] = it
        rel[idx] = r
        # converged: below rtol, or at the rounding floor (neither a Newton step nor a damped
        # step lowers a change that is already within 100 rtol)
        fin = (r < rtol) | ((cand & ~newton) | (plain & worse)) & (r < 100 * rtol)
        done[idx[fin]] = True
        idx = idx[~fin]
    return (X.reshape((n,) + shape), done.reshape(shape), iters.reshape(shape),
            rel.reshape(shape))


def _broadcast_params(alpha_, tau_, kappa_, rho_, sigma_, lam_, alpha_test_, sigma_test_):
    arrs = np.broadcast_arrays(*(np.asarray(v, dtype=float) for v in
                                 (alpha_, tau_, kappa_, lam_, sigma_, rho_, alpha_test_,
                                  sigma_test_)))
    return [np.array(a, dtype=float) for a in arrs]


def solve_float64(alpha=None, tau=None, kappa=None, rho=None, sigma=None, lam=0.0,
                  alpha_test=None, sigma_test=0.0, *, damping=0.5, rtol=1e-13,
                  maxiter=20000, strict=True, start=None, method="ridge-newton") -> dict:
    """Vectorised float64 solution over parameter grids (NumPy arrays of any common shape).

    ``kappa = inf`` is allowed only for the whole array (and then ``lam = 0``). Returns a dict of
    arrays with the keys of :data:`REPORT_KEYS` (order parameters, ``tm idg odg`` and
    ``<protocol>_<part>`` for the decomposition), plus ``iterations``, ``converged`` (bool) and
    ``residual`` (the relative change ``max_i |Phi_i - theta_i| / |theta_i|`` at the last step).
    With ``strict`` (default) a grid point that does not converge raises
    :class:`ConvergenceError`; otherwise its values are NaN and ``converged`` is False there.

    ``method``: ``"ridge-newton"`` (default) starts from the effective-ridge reduction
    (:data:`EFFECTIVE_RIDGE_EQUATION`, one monotone scalar root per point) and runs the damped
    iteration with Newton acceleration; ``"damped"`` is the authors' scheme (spec §2.6): start at
    ``theta = 1`` and the damped iteration alone (adaptive damping, relative tolerance).
    ``start`` overrides the starting theta (5 arrays).
    """
    if method not in ("ridge-newton", "damped"):
        raise ValueError(f"unknown method {method!r} (ridge-newton, damped)")
    if alpha_test is None:
        alpha_test = alpha
    P = _broadcast_params(alpha, tau, kappa, rho, sigma, lam, alpha_test, sigma_test)
    a_, t_, k_, l_, s_, r_, at_, st_ = P
    kinf = bool(np.all(np.isinf(k_)))
    if np.any(np.isinf(k_)) and not kinf:
        raise ParameterError("--kappa", "float64 grids cannot mix finite and infinite kappa")
    for name, v, ok in (("--alpha", a_, a_ > 0), ("--tau", t_, t_ > 0), ("--kappa", k_, k_ > 0),
                        ("--rho", r_, (r_ > 0) & (r_ <= 1)), ("--sigma", s_, s_ >= 0),
                        ("--lam", l_, l_ >= 0), ("--alpha-test", at_, at_ > 0),
                        ("--sigma-test", st_, st_ >= 0)):
        if not np.all(ok & np.isfinite(np.where(np.isinf(v) & (name == "--kappa"), 1.0, v))):
            raise ParameterError(name, "out of its domain at some grid point")
    if np.any((l_ == 0) & (t_ < 1)):
        raise ParameterError("--lam", "no admissible solution at lambda = 0 with tau < 1: "
                                      "pass --lam > 0")
    if np.any((l_ == 0) & (t_ == 1)):
        raise ParameterError("--tau", "the ridgeless theory diverges at tau = 1: pass --lam > 0")
    if kinf and np.any(l_ > 0):
        raise ParameterError("--lam", "with kappa = inf only lam = 0 is meaningful")
    comp = _compiled(kinf)
    shape = a_.shape
    kk = np.ones_like(k_) if kinf else k_
    Pn = [a_, t_, kk, l_, s_, r_, at_, st_]
    if start is not None:
        x = np.array([np.broadcast_to(np.asarray(v, float), shape) for v in start])
    elif method == "damped":
        x = np.ones((5,) + shape)
    else:
        x = _start_f64(comp, Pn, shape)
    x, done, iters, rel = _iterate_f64(comp, Pn, x, damping=damping, rtol=rtol, maxiter=maxiter,
                                       newton_from=np.inf if method == "ridge-newton" else 0.0)
    if strict and not np.all(done):
        raise ConvergenceError(f"low-rank float64 iteration: {int(np.sum(~done))} of "
                               f"{done.size} grid points did not converge",
                               tried=f"{method}: damped fixed-point iteration (damping <= "
                                     f"{damping}, adaptive)"
                                     + (", effective-ridge start, Newton acceleration"
                                        if method == "ridge-newton" else "")
                                     + f", {maxiter} sweeps, relative tolerance {rtol}")
    with np.errstate(all="ignore"):
        rep = _Evaluator(comp, "np", Pn)("report", x)
    out = {k: np.where(done, np.broadcast_to(np.asarray(v, float), shape), np.nan)
           for k, v in zip(REPORT_KEYS, rep)}
    out["iterations"] = iters
    out["converged"] = done
    out["residual"] = rel
    return out


# ---------------------------------------------------------------------------------------------
# High-precision path
# ---------------------------------------------------------------------------------------------
def _float_start(p: LowRankParams):
    """The float64 solution (theta), or ``None`` with the reason."""
    try:
        vals = [float(p.alpha), float(p.tau), np.inf if p.kappa_infinite else float(p.kappa),
                float(p.rho), float(p.sigma), float(p.lam), float(p.alpha_test),
                float(p.sigma_test)]
    except OverflowError:
        return None, "a parameter overflows float64"
    if not all(np.isfinite(v) or (i == 2 and p.kappa_infinite) for i, v in enumerate(vals)):
        return None, "a parameter overflows float64"
    try:
        out = solve_float64(*vals, strict=True)
    except ConvergenceError as exc:
        return None, str(exc)
    theta = [float(out[str(s)]) for s in ORDER_PARAMETERS]
    if not all(np.isfinite(theta)):
        return None, "float64 solution is not finite"
    return theta, ""


def _iterate_mp(comp, P, x, *, damping=mpmath.mpf(1) / 2, rtol=None, maxiter=50000):
    """Damped fixed-point iteration in mpmath (the fallback start), relative tolerance."""
    ev = _Evaluator(comp, "mp", P)
    rtol = rtol if rtol is not None else mpmath.mpf(10) ** (-min(mpmath.mp.dps - 5, 14))
    d = mpmath.mpf(damping)
    prev = mpmath.inf
    for it in range(1, maxiter + 1):
        zv = comp["z"]["mp"](*x, *P)[0]
        if not zv < 0:
            raise ConvergenceError("low-rank mpmath iteration reached z >= 0",
                                   tried=f"damped fixed-point iteration, sweep {it}")
        fx = ev("phi", x)
        if not all(mpmath.isfinite(v) for v in fx):
            raise ConvergenceError("low-rank mpmath iteration: non-finite map value",
                                   tried=f"damped fixed-point iteration, sweep {it}")
        r = max(abs(a - b) / max(abs(a), abs(b)) for a, b in zip(fx, x))
        if r < rtol:
            return list(fx), it
        if r >= prev:
            d = max(d / 2, mpmath.mpf(1) / 64)
        prev = r
        x = [xi + d * (fi - xi) for xi, fi in zip(x, fx)]
    raise ConvergenceError(f"low-rank mpmath iteration did not converge in {maxiter} sweeps",
                           tried="damped fixed-point iteration in mpmath (adaptive damping)")


def _newton(F, J, y0, maxiter: int = 60) -> NewtonReport:
    """Newton's method at the working precision with the exact Jacobian ``J`` and step halving.

    Converged when the full Newton step is below ``1000 eps`` relative to ``y`` (quadratic
    convergence has reached the working precision), or when no step can lower the residual any
    more (the rounding floor) while the last step is below ``10**(-dps/2)``: the digits actually
    obtained are then measured by the caller's re-solve at higher precision. Otherwise raises
    :class:`ConvergenceError`.
    """
    y = mpmath.matrix([mpmath.mpf(v) for v in y0])
    n = len(y)

    def norm(v):
        return max(abs(v[i]) for i in range(n))

    fy = F([y[i] for i in range(n)])
    res = norm(fy)
    small = mpmath.eps * 1000
    floor_ok = mpmath.mpf(10) ** (-(mpmath.mp.dps // 2))
    for it in range(1, maxiter + 1):
        try:
            dy = mpmath.lu_solve(J([y[i] for i in range(n)]), mpmath.matrix([-v for v in fy]))
        except ZeroDivisionError as exc:
            raise ConvergenceError("low-rank saddle point: singular Jacobian",
                                   tried=f"Newton with exact Jacobian, step {it}") from exc
        step = norm(dy)
        scale_y = max(norm(y), 1)
        if step <= small * scale_y:
            y = y + dy
            res = norm(F([y[i] for i in range(n)]))
            return _report(J, y, it, res)
        t = mpmath.mpf(1)
        for _ in range(30):
            yn = y + t * dy
            fn = F([yn[i] for i in range(n)])
            rn = norm(fn)
            if rn < res and all(mpmath.isfinite(v) for v in fn):
                break
            t /= 2
        else:
            if step <= floor_ok * scale_y:
                return _report(J, y, it, res)
            raise ConvergenceError(f"low-rank saddle point: Newton stalled (residual "
                                   f"{mpmath.nstr(res, 3)}, step {mpmath.nstr(step, 3)})",
                                   tried="Newton with exact Jacobian and step halving")
        y, fy, res = yn, fn, rn
    raise ConvergenceError(f"low-rank saddle point: Newton did not converge in {maxiter} steps "
                           f"(residual {mpmath.nstr(res, 3)})",
                           tried="Newton with exact Jacobian and step halving")


def _report(J, y, iterations, residual) -> NewtonReport:
    n = len(y)
    Jy = J([y[i] for i in range(n)])
    try:
        cond = mpmath.norm(Jy, mpmath.inf) * mpmath.norm(mpmath.inverse(Jy), mpmath.inf)
    except ZeroDivisionError:
        cond = mpmath.inf
    return NewtonReport([y[i] for i in range(n)], iterations, residual, cond)


def _solve_mp_once(p: LowRankParams, start):
    """Newton at the working precision on (theta - Phi(theta))/s = 0 with the exact Jacobian."""
    comp = _compiled(p.kappa_infinite)
    P = p.values_mp()
    if p.kappa_infinite:
        P[2] = mpmath.mpf(1)  # unused: kappa -> oo already taken symbolically
    sweeps = 0
    if start is None:
        x0, sweeps = _iterate_mp(comp, P, _start_mp(comp, P))
    else:
        x0 = [mpmath.mpf(v) for v in start]
    # Newton in scaled unknowns y_j = theta_j / s_j on F_i = (theta_i - Phi_i(theta)) / s_i, with
    # s fixed at the start's magnitudes: the residual is relative and the Jacobian well scaled
    # even where some order parameters are O(alpha) (large alpha) or O(1/lambda).
    scale = [max(abs(v), mpmath.mpf(10) ** -10) for v in x0]
    ev = _Evaluator(comp, "mp", P)
    n = 5

    def theta(y):
        return [y[i] * scale[i] for i in range(n)]

    def F(y):
        x = theta(y)
        fx = ev("phi", x)
        return [(x[i] - fx[i]) / scale[i] for i in range(n)]

    def J(y):
        jx = ev("jac", theta(y))
        return mpmath.matrix([[(1 if i == j else 0) - jx[n * i + j] * scale[j] / scale[i]
                               for j in range(n)] for i in range(n)])

    rep = _newton(F, J, [x0[i] / scale[i] for i in range(n)])
    x = theta(rep.x)
    zval = comp["z"]["mp"](*x, *P)[0]
    if not zval < 0:
        raise ConvergenceError("low-rank solve reached z >= 0 (no admissible saddle point)",
                               tried="Newton with exact Jacobian from the float64 solution")
    vals = ev("report", x)
    values = dict(zip(REPORT_KEYS, vals))
    return values, rep, sweeps + rep.iterations


def _groups(values) -> dict:
    return {
        "order_parameters": {k: values[k] for k in REPORTED_ORDER},
        "errors": {k: values[k] for k in ERROR_KEYS},
        "decomposition": {p: {k: values[f"{p}_{k}"] for k in PART_KEYS} for p in ERROR_KEYS},
    }


NOTES_ALWAYS = (
    "rho is the task-rank ratio r/D and sigma the label-noise standard deviation (papers A/B "
    "use rho for the noise variance)",
    "decomposition labels: memorization = the T-terms (prop. to chihat), structural = the "
    "R-terms (prop. to chibarhat), signal = the S-terms; this mapping is the spec's INFERRED "
    "one (spec/lowrank.md §3.2), not checked against the paper's text",
    "noise = sigma_test^2 is a separate part; with sigma_test != 0 the factor "
    "(1 + sigma_test^2)/alpha_test multiplies the qbar pieces (the paper's placement is not "
    "reproduced)",
)


def solve(alpha, tau, kappa, rho, sigma, lam=0, alpha_test=None, sigma_test=0, dps: int = 30,
          verify: bool = True) -> SolveResult:
    """Solve the low-rank replica equations at ``dps`` digits.

    Returns a :class:`SolveResult` with groups ``order_parameters`` (``q m chi qbar chibar qhat
    mhat chihat qbarhat chibarhat z mbar m0 q0``), ``errors`` (``tm idg odg``) and
    ``decomposition`` (``{tm, idg, odg} -> {signal, memorization, structural, noise}``). The
    digits are verified by a second solve at ``dps + max(10, dps // 2)`` digits over every
    reported value (``verify=False`` skips it: ``digits = None``).
    """
    p = make_params(alpha, tau, kappa, rho, sigma, lam, alpha_test, sigma_test)
    return solve_params(p, dps=dps, verify=verify)


GUARD_DIGITS = 5
"""Digits added to the working precision from the start (the reported values carry ``dps``)."""


def solve_params(p: LowRankParams, dps: int = 30, verify: bool = True,
                 force_mp_start: bool = False, max_guard_rounds: int = 6) -> SolveResult:
    r""":func:`solve` for validated parameters.

    Guard digits: some combinations in the equations cancel (e.g. :math:`g + zg'` is
    :math:`O(1)` while :math:`g \sim \alpha`), so a solve at ``w`` working digits may give
    fewer. The working precision starts at ``w = dps + GUARD_DIGITS``; the verification (a
    re-solve at ``w + max(10, w // 2)``) measures the digits obtained, and if fewer than ``dps``
    agree the solve is repeated with ``w`` raised by the digits lost plus 5 (doubled when nothing
    agreed), at most ``max_guard_rounds`` times. ``digits`` is the agreement, capped at ``dps``.
    ``force_mp_start`` skips the float64 start (the mpmath damped iteration is used instead).
    """
    start, why = (None, "requested") if force_mp_start else _float_start(p)
    work = dps + GUARD_DIGITS
    guard_rounds = 0
    while True:
        with precision(work):
            values, rep, iters = _solve_mp_once(p, start)
        if not verify:
            digits, how = None, "not verified"
            break
        hi = work + max(10, work // 2)
        with precision(hi):
            ref, _, _ = _solve_mp_once(p, start)
            agree = min(agreement_digits(values[k], ref[k], work) for k in REPORT_KEYS)
        digits = min(dps, agree)
        how = f"agreement of every reported value with a re-solve at {hi} digits"
        how += f" (working precision {work} digits: {work - dps} guard digits)"
        if digits >= dps or guard_rounds >= max_guard_rounds:
            break
        lost = work - agree
        guard_rounds += 1
        work = work + lost + 5 if agree > 0 else 2 * work
    notes = list(NOTES_ALWAYS)
    if start is None:
        notes.append(f"float64 start unavailable ({why}); started from a damped mpmath iteration")
    if p.kappa_infinite:
        notes.append("kappa = inf: the conjugates qhat, mhat, chihat, qbarhat, chibarhat vanish "
                     "like 1/kappa and are reported as their limit 0")
    if p.lam == 0:
        notes.append("lambda = 0: the solution also has the closed form (T1)-(T5), "
                     "lowrank.closed_form_lambda0")
    if verify and digits < dps:
        notes.append(f"only {digits} digits could be verified after {guard_rounds} rounds of "
                     "guard digits")
    return SolveResult(model="lowrank", params=p.echo(), dps=dps, groups=_groups(values),
                       converged=True, iterations=iters, residual=rep.residual,
                       condition=rep.condition, digits=digits, digits_how=how, notes=notes)


# ---------------------------------------------------------------------------------------------
# The lambda = 0 closed form, evaluated
# ---------------------------------------------------------------------------------------------
@functools.lru_cache(maxsize=None)
def _closed_form_compiled(kappa_infinite: bool):
    """(T1)-(T5) compiled for mpmath: the spectral functions at z = -epsilon split into pole and
    regular part (:func:`split_spectral`) and cancelled, so that e.g. g - epsilon g' =
    rho (h - epsilon h') carries no O(alpha) cancellation."""
    kval = sympy.oo if kappa_infinite else kappa
    keys = [str(s_) for s_ in LAMBDA0_CLOSED_FORM] + ["E_tr"]
    exprs = list(LAMBDA0_CLOSED_FORM.values()) + [LAMBDA0_E_TR]
    exprs = [sympy.cancel(split_spectral(e, -EPS)) for e in exprs]
    spectral = [e.subs(z, -EPS) for e in _spectral_closed_forms(kval)]
    args = [alpha, tau, kappa, sigma, rho]
    f = sympy.lambdify(args + list(SPECTRAL_INPUTS), exprs, modules="mpmath", cse=True)
    fs = sympy.lambdify(args, spectral, modules="mpmath", cse=True)
    return keys, lambda *a: f(*a, *fs(*a))


def closed_form_lambda0_evaluator(kappa_infinite: bool = False):
    """``(keys, f)``: ``f(alpha, tau, kappa, sigma, rho)`` (mpf, at the caller's precision; the
    ``kappa`` argument is ignored when ``kappa_infinite``) returns the values of (T1)-(T5) in the
    order of ``keys`` (those of :func:`closed_form_lambda0`). For fast repeated evaluation, e.g.
    scans in ``alpha`` or ``rho``; no parameter checks (``tau > 1`` is required)."""
    return _closed_form_compiled(bool(kappa_infinite))


def closed_form_lambda0(alpha, tau, kappa, rho, sigma, dps: int = 30) -> dict:
    """(T1)--(T5) at the working precision ``dps``: ``{qhat, mhat, qbarhat, z, mbar, m, m0, chi,
    chibar, chihat, chibarhat, q, qbar, q0, E_tr}`` (mpf). Requires ``tau > 1``."""
    p = make_params(alpha, tau, kappa, rho, sigma, 0)
    keys, f = _closed_form_compiled(p.kappa_infinite)
    with precision(dps):
        P = p.values_mp()
        vals = f(P[0], P[1], mpmath.mpf(1) if p.kappa_infinite else P[2], P[4], P[5])
        return dict(zip(keys, [+v for v in vals]))


# ---------------------------------------------------------------------------------------------
# The derivation, as steps (for the tests and the LaTeX appendix)
# ---------------------------------------------------------------------------------------------
def _check_spectral() -> bool:
    """The closed forms solve their quadratics and g = -(1-rho)/z + rho gtilde (symbolically in
    z, for rational (kappa, rho) on both sides of rho = kappa and at rho = 1), gtilde' equals the
    implicit-differentiation form rho gtilde (gtilde + kappa)/s, and the derivative forms equal
    numerical derivatives (mpmath, 30 digits)."""
    zs = sympy.Symbol("z", negative=True)
    R = sympy.Rational
    for kv, rv in ((R(3, 2), R(9, 10)), (R(2, 5), R(7, 10)), (R(1, 2), R(1, 2)), (R(1, 3), 1)):
        gt = lowrank_stieltjes_tilde_expr(zs, kv, rv)
        g0 = lowrank_stieltjes_derivative_expr(zs, kv, rv, 0)
        if not is_zero(lowrank_stieltjes_tilde_quadratic(gt, zs, kv, rv)):
            return False
        if not is_zero(lowrank_stieltjes_quadratic(g0, zs, kv, rv)):
            return False
        if not is_zero(g0 - (-(1 - rv) / zs + rv * gt)):
            return False
        b = kv * rv * zs + rv - kv
        s_ = sympy.sqrt(b**2 - 4 * rv**2 * kv * zs)
        d1 = lowrank_stieltjes_tilde_derivative_expr(zs, kv, rv, 1)
        for zv in (R(-1, 10), R(-3)):
            lhs = sympy.N(d1.subs(zs, zv), 40)
            rhs = sympy.N((rv * gt * (gt + kv) / s_).subs(zs, zv), 40)
            if abs(lhs - rhs) > 1e-30 * abs(lhs):
                return False
    f = {n: sympy.lambdify([zs, kappa, rho], lowrank_stieltjes_derivative_expr(zs, kappa, rho, n),
                           "mpmath") for n in range(3)}
    ft = {n: sympy.lambdify([zs, kappa, rho], lowrank_stieltjes_tilde_derivative_expr(
        zs, kappa, rho, n), "mpmath") for n in range(3)}
    with mpmath.workdps(30):
        for zv, kv, rv in (("-0.1", "0.4", "0.7"), ("-2", "3", "0.5"), ("-0.3", "0.5", "1"),
                           ("-1", "2", "0.2")):
            zv, kv, rv = mpmath.mpf(zv), mpmath.mpf(kv), mpmath.mpf(rv)
            for fam in (f, ft):
                for n in (1, 2):
                    num = mpmath.diff(lambda x: fam[n - 1](x, kv, rv), zv)
                    if abs(num - fam[n](zv, kv, rv)) > mpmath.mpf(10) ** -20 * abs(num):
                        return False
    return True


def _check_atom_split() -> bool:
    """The atom-split closed form of g equals the spec's formula (R-S2) (50 digits, both sides of
    rho = kappa, small and large |z|); the atom masses are the limits -z g(z) as z -> 0-; and in
    the split equations the poles cancel: 1 + z g and g + z g' have no 1/z term."""
    zs, kk, rr = sympy.symbols("z kappa rho")
    spec_g = (kk + rr - kk * rr * zs - 2 - sympy.sqrt((rr * kk * zs + rr - kk) ** 2
                                                      - 4 * rr**2 * kk * zs)) / (2 * zs)
    f_spec = sympy.lambdify([zs, kk, rr], spec_g, "mpmath")
    f_mine = sympy.lambdify([zs, kk, rr], lowrank_stieltjes_derivative_expr(zs, kk, rr, 0),
                            "mpmath")
    p0f = sympy.lambdify([kk, rr], lowrank_atom_masses(kk, rr)[0], "mpmath")
    with mpmath.workdps(50):
        for kv, rv in (("0.4", "0.7"), ("1.5", "0.9"), ("0.5", "0.5"), ("0.3", "1")):
            kv, rv = mpmath.mpf(kv), mpmath.mpf(rv)
            for zv in ("-1e-3", "-0.5", "-40"):
                zv = mpmath.mpf(zv)
                if abs(f_spec(zv, kv, rv) - f_mine(zv, kv, rv)) > mpmath.mpf(10) ** -40:
                    return False
            tiny = -mpmath.mpf(10) ** -40  # -z g = p0 + O(|z|^(1/2)) (the edge at rho = kappa)
            if abs(-tiny * f_mine(tiny, kv, rv) - p0f(kv, rv)) > mpmath.mpf(10) ** -18:
                return False
    for e in (1 + z * G[0](z), G[0](z) + z * G[1](z), G[0](z) - z * G[1](z)):
        if sympy.fraction(sympy.cancel(split_spectral(e)))[1].has(z) and \
                e != G[0](z) - z * G[1](z):
            return False
    # g + z g' = rho (h + z h') carries no atom; g - z g' keeps the pole 2 p0/(-z) (a check
    # that the test can fail)
    return (not sympy.cancel(split_spectral(G[0](z) + z * G[1](z))).has(P0)
            and sympy.cancel(split_spectral(G[0](z) - z * G[1](z))).has(P0))


def _check_reduced_kappa_free() -> bool:
    """After substituting the conjugates, kappa enters the closed map only through z (and g)."""
    phi, z_theta = reduced_map()
    return all(not e.has(kappa) for e in phi.values()) and z_theta.has(kappa)


def _check_rho_one() -> bool:
    """At rho = 1 (gtilde' = g'), m0 = mbar and q0 = qbar: IDG and ODG coincide."""
    sub = {rho: 1}
    q0_1 = Q0.subs(sub).replace(lambda e: isinstance(e, GT[1]), lambda e: G[1](e.args[0]))
    return is_zero(q0_1 - SADDLE.fixed_point[qbar]) and is_zero(M0.subs(sub) - MBAR)


def _check_decomposition() -> bool:
    """The four parts sum to each error, symbolically (conjugates and g abstract)."""
    fp = fixed_point_equations()
    ov = {q: fp[q], qbar: fp[qbar], q0: Q0, m0: M0, mbar: MBAR}
    for prot, parts in decomposition_exprs().items():
        total = error_expr(prot).xreplace(ov)
        if not is_zero(sum(parts.values()).xreplace(ov) - total):
            return False
    return True


def _check_tm_is_training_error() -> bool:
    """epsilon_TM at sigma_test = sigma, alpha_test = alpha equals E_tr."""
    return is_zero(error_expr("tm").subs({sigma_test: sigma, alpha_test: alpha}) - E_TR)


def _check_z() -> bool:
    """(R2) gives qbarhat = epsilon qhat, and then the alias z is the spec's (R4)."""
    fp = fixed_point_equations()
    return is_zero(fp[qbarhat] - EPS * fp[qhat]) and is_zero(
        Z_DEFINITION.subs(qbarhat, EPS * qhat) - SPEC_Z)


def derivation_steps() -> list[Step]:
    """The derivation of the low-rank model as :class:`Step` records, in order.

    ``free_energy``, ``stationarity_<u>`` (10), ``fixed_point_<u>`` (10) from the general
    mechanism, then ``agrees_with_spec``, ``spectral_argument``, ``reduced_map``,
    ``spectral_closed_forms``, ``spectral_atom_split``, ``observables`` (its check: ``rho = 1``
    gives IDG = ODG),
    ``errors``, ``decomposition``, ``effective_ridge``, ``lambda0_closed_form``. Each ``objects`` dict holds SymPy objects; ``check()`` verifies.
    """
    steps = SADDLE.steps()
    fp = fixed_point_equations()
    steps.append(Step(
        "agrees_with_spec",
        {"derived": {t: sympy.Eq(t, fp[t]) for t in SPEC_EQUATIONS},
         "spec": {t: sympy.Eq(t, e) for t, e in SPEC_EQUATIONS.items()}},
        "The ten derived equations coincide with (R2)-(R3) and (R5)-(R8) of the authors' code "
        "(every difference cancels with g, g' abstract).",
        lambda: SADDLE.agrees_with(SPEC_EQUATIONS)))
    steps.append(Step(
        "spectral_argument",
        {"z": sympy.Eq(z, Z_DEFINITION), "z_at_saddle": sympy.Eq(z, SPEC_Z)},
        "Since qbarhat = (1 + sigma^2) qhat/alpha at the saddle, z = -lambda/qhat - "
        "(1 + sigma^2)/alpha (R4): the finite context acts as an extra ridge.",
        _check_z))
    phi, z_theta = reduced_map()
    steps.append(Step(
        "reduced_map",
        {"phi": {t: sympy.Eq(t, e) for t, e in phi.items()}, "z": sympy.Eq(z, z_theta)},
        "Substituting the conjugates gives a closed map on (q, m, chi, qbar, chibar) in which "
        "kappa appears only through z and g (so kappa -> oo can be taken at lambda = 0).",
        _check_reduced_kappa_free))
    zs = sympy.Symbol("z", negative=True)
    steps.append(Step(
        "spectral_closed_forms",
        {"gtilde": sympy.Eq(GT[0](zs), lowrank_stieltjes_tilde_expr(zs, kappa, rho)),
         "gtilde_prime": sympy.Eq(GT[1](zs), lowrank_stieltjes_tilde_derivative_expr(
             zs, kappa, rho, 1)),
         "g": sympy.Eq(G[0](zs), -(1 - rho) / zs + rho * GT[0](zs)),
         "quadratic_g": sympy.Eq(lowrank_stieltjes_quadratic(G[0](zs), zs, kappa, rho), 0),
         "quadratic_gtilde": sympy.Eq(lowrank_stieltjes_tilde_quadratic(GT[0](zs), zs, kappa,
                                                                        rho), 0)},
        "S = A W A^T/rho with W Wishart of ratio rho/kappa: gtilde is the Marchenko-Pastur root "
        "on the branch gtilde ~ -1/z, and the complement of the task subspace adds the pole "
        "-(1-rho)/z to g.",
        _check_spectral))
    p0s, pt0s = lowrank_atom_masses(kappa, rho)
    hfun = sympy.Function("h")
    steps.append(Step(
        "spectral_atom_split",
        {"g": sympy.Eq(G[0](zs), -P0 / zs + rho * hfun(zs)),
         "gtilde": sympy.Eq(GT[0](zs), -PT0 / zs + hfun(zs)),
         "p0": sympy.Eq(P0, p0s), "ptilde0": sympy.Eq(PT0, pt0s),
         "h": sympy.Eq(hfun(zs), lowrank_regular_expr(zs, kappa, rho, 0))},
        "Splitting off the atom at 0 (mass 1 - min(kappa, rho) for S, (1 - kappa/rho)_+ on the "
        "task subspace) leaves a regular part h whose closed form has only positive terms for "
        "z < 0; substituted into the equations, the 1/z poles cancel symbolically.",
        _check_atom_split))
    steps.append(Step(
        "observables",
        {"mbar": sympy.Eq(mbar, MBAR), "m0": sympy.Eq(m0, M0), "q0": sympy.Eq(q0, Q0)},
        "Traces of the effective solution (R10) restricted to the whole space (mbar) and to "
        "the task subspace (m0, q0; gtilde' from Tr A^T (S - z)^-2 A / r).",
        _check_rho_one))
    steps.append(Step(
        "errors",
        {p_: sympy.Eq(sympy.Symbol(f"varepsilon_{p_.upper()}"), error_expr(p_))
         for p_ in ERROR_KEYS},
        "Averaging (y - yhat)^2 over the query and the fluctuation of the one-step estimate "
        "(variance (1 + sigma_test^2)/alpha_test) gives (E1)-(E3).",
        _check_tm_is_training_error))
    steps.append(Step(
        "decomposition",
        {p_: {k: v for k, v in parts.items()} for p_, parts in decomposition_exprs().items()},
        "Splitting each q into its mhat^2 (signal), chihat (memorization, inferred label) and "
        "chibarhat (structural, inferred label) brackets splits each error; sigma_test^2 is "
        "the irreducible noise.",
        _check_decomposition))
    steps.append(Step(
        "effective_ridge",
        {"equation": sympy.Eq(EFFECTIVE_RIDGE_EQUATION, 0), "u": sympy.Eq(u, lam / qhat),
         "kappa_qhat": sympy.Eq(kappa * qhat, KAPPA_QHAT_OF_U),
         "start": {s_: sympy.Eq(s_, e) for s_, e in effective_ridge_start().items()}},
        "Eliminating chi and chibar gives kappa qhat = tau - 1 + u g(z) with u = -z - epsilon = "
        "lambda/qhat, i.e. one monotone equation for the effective ridge u (paper A's ridge "
        "equation with lambda_A = kappa lambda/tau); it starts the solvers.",
        _check_effective_ridge))
    steps.append(Step(
        "lambda0_closed_form",
        {"solution": {s: sympy.Eq(s, e) for s, e in LAMBDA0_CLOSED_FORM.items()},
         "E_tr": LAMBDA0_E_TR},
        "At lambda = 0, z = -epsilon and chi + epsilon chibar = 1/(kappa qhat), so qhat = "
        "(tau - 1)/kappa without self-consistency (T1); the rest follows (T2)-(T5).",
        _check_lambda0_closed_form))
    return steps
