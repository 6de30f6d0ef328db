r"""One free energy for every task covariance: the replica computation of the ICL model with the
spectral averages kept abstract, and its instances.

**The model** (both papers' model, in one parameterisation). :math:`n = \tau D^2` prompts; prompt
:math:`\mu` has a task :math:`w_\mu` drawn from :math:`k = \kappa D` fixed training tasks
:math:`w_j\sim N(0, C_{\rm train})`, a context of :math:`\ell = \alpha D` pairs,
:math:`x_l\sim N(0, I/D)`, :math:`y_l = w\cdot x_l + \sigma\epsilon_l` (:math:`\sigma` the noise
*standard deviation*), and a query. Linear attention predicts :math:`\hat y = x^\top\Gamma\hat w`,
:math:`\hat w = \frac D\ell\sum_ly_lx_l`; pretraining minimises
:math:`\frac12\sum_\mu(y_\mu - \hat y_\mu)^2 + \frac{\lambda\kappa D}2\|\Gamma\|_F^2`. The
empirical task covariance :math:`S = \frac1k\sum_jw_jw_j^\top` enters only through its spectrum:
:math:`g(z) = \langle 1/(s - z)\rangle` and the task power :math:`c = \langle s\rangle =
\operatorname{tr}S/D` (:math:`\to\operatorname{tr}C_{\rm train}/D`).

**The computation** is the one of :mod:`replica.derivations.lowrank_from_model` (its steps 1--8),
which never used the rank: this module holds its general pieces (the residual covariance, the
energetic, coupling and entropic parts, the replica and zero-temperature limits, the RS measure of
the weights) with :math:`c` a symbol, and the low-rank module instantiates them at :math:`c = 1`.
The only places the task law enters are :math:`\|w\|^2/D\to c` in the residual covariance and in
the context fluctuation :math:`\varepsilon = (c + \sigma^2)/\alpha`, and the moments
:math:`\langle1\rangle = 1`, :math:`\langle s\rangle = c` of the Stieltjes step. The output,
:func:`free_energy` (computed by :func:`derived_free_energy`, not typed), equals identically the
solvers' one object :data:`replica.models.unified.FREE_ENERGY` (from which the low-rank, alignment
and isotropic solvers' equations are computed) and is

.. math::
    f = \operatorname*{extr}\Big\{\frac{\tau}{2\kappa}\frac{c+\sigma^2-2m+q+\varepsilon\bar q}
        {1+\chi+\varepsilon\bar\chi} - \frac{\hat qq}2 - \frac{\hat{\bar q}\bar q}2 + \hat mm
        + \frac{\hat\chi\chi}2 + \frac{\hat{\bar\chi}\bar\chi}2
        - \frac1{2\hat q}\Big[\hat m^2(c+z+z^2g) + \frac{\hat\chi}\kappa(1+zg)
        + \frac{\hat{\bar\chi}}\kappa g\Big]\Big\},\quad z = -\frac{\lambda+\hat{\bar q}}{\hat q}.

**Errors** (computed from the RS measure of the weights, step 8 of the low-rank derivation): for
a test law :math:`w\sim N(0, C)`, with :math:`\gamma` the diagonal entry of :math:`C` in the
eigenbasis of :math:`S` (its transform :math:`g_C(z) = \langle\gamma/(s-z)\rangle`, power
:math:`c_C = \langle\gamma\rangle = \operatorname{tr}C/D`), test noise :math:`\tilde\sigma` and
context :math:`\tilde\alpha D`: :math:`\varepsilon_C = \tilde\sigma^2 + c_C - 2m_C + q_C +
\frac{c_C+\tilde\sigma^2}{\tilde\alpha}\bar q` with :math:`m_C = \frac{\hat m}{\hat q}(c_C +
zg_C)` and :math:`q_C` from :func:`derived_test_overlaps`. Task memorisation is :math:`C = S`
(:math:`\gamma = s`).

**The two parameterisations** (:data:`PAPER_A_MAP`, SymPy substitutions). Paper A writes the
noise *variance* :math:`\rho_A = \sigma^2` and the ridge :math:`\frac{n}{d}\lambda_A\|\Gamma\|^2`
against the sum of the :math:`n = \tau d^2` squared errors, i.e. :math:`\lambda_A = \kappa\lambda
/\tau`; its resolvent :math:`M_\kappa(\sigma_A) = \frac1d\operatorname{tr}(R_k+\sigma_A)^{-1}` is
:math:`g(-\sigma_A)` (:math:`R_k = S`), its effective noise :math:`\sigma_A = -z` and its
effective ridge :math:`\tilde\lambda = \lambda/\hat q`. The low-rank paper writes :math:`\sigma`
(std), :math:`\rho` the rank ratio, :math:`c = 1` and ridge :math:`\lambda M_0/2`, the same as
here.

**Instances** (each checked in ``tests/test_unified.py``):

* low-rank: at :math:`c = 1`, :func:`free_energy` *is* (R1)
  (:data:`replica.models.lowrank.FREE_ENERGY`, identical with :math:`g` abstract), and the derived TM/IDG/ODG errors are the
  solver's (identical; IDG is :math:`\gamma = \mu/\rho` on the subspace projector);
* paper A: :math:`g` the deterministic equivalent of :math:`S` for :math:`C_{\rm train}`
  (:math:`g(z) = \langle 1/(a\lambda_i - z)\rangle`, :math:`a` the root of paper A's eq. (17) at
  :math:`-z`, derived in :mod:`replica.derivations.alignment_from_model`) and :math:`g_C(z) =
  \langle\mu_i/(a\lambda_i - z)\rangle` (*stated* there: the deterministic equivalent of
  :math:`(S-z)^{-1}` against a test matrix). **Exactly**: paper A's :math:`E_{\rm ICL}` and
  :math:`e_{\rm TM}`, written in :math:`M = g(-\sigma_A)`, :math:`M' = -g'`,
  :math:`\langle\mu F\rangle = g_C`, :math:`\langle\mu F'\rangle = -g_C'` and
  :math:`\tilde\lambda`, equal the unified saddle point's errors in exact rational arithmetic at
  random rational values of every symbol, transforms included (:func:`paper_a_instance_difference`;
  a polynomial identity test, so eq. (17) is not needed for it), and paper A's ridge equation is
  the conjugate equation :math:`\kappa\hat q = \tau - 1 + \tilde\lambda g` under
  :data:`PAPER_A_MAP` (symbolic, :func:`paper_a_ridge_equation_difference`). **Numerically**, with
  eq. (17) supplying the transforms: the saddle point of :func:`free_energy`, solved on
  its own by Newton's method on the derived fixed-point map at 50 digits (:func:`solve_on_spectrum`),
  gives paper A's :math:`E_{\rm ICL}` (error at :math:`C = C_{\rm test}`, test noise
  :math:`\tilde\sigma = \sigma`) and :math:`e_{\rm TM} = \tau q_A`, and :math:`-z = \sigma_A`,
  :math:`\lambda/\hat q = \tilde\lambda`. Measured agreement with ``replica solve alignment``
  at 40 digits (``d = 20``; E_ICL, e_TM, sigma_A): powerlaw:1 / piano (:math:`\alpha = 2,
  \tau = 3, \kappa = 1/2, \rho_A = 1/4, \lambda_A = 1/10`; :math:`E_{\rm ICL} =
  1.12621789713\ldots`) 40, 40, 40 digits; piano / identity (:math:`\alpha = 3/2, \tau = 1/2,
  \kappa = 3/2, \rho_A = 1/5, \lambda_A = 1/20`; :math:`1.53178048916\ldots`) 40, 40, 40;
  powerlaw:2 / powerlaw:1 (:math:`\alpha = 3, \tau = 2, \kappa = 1, \rho_A = 1/10,
  \lambda_A = 0`; :math:`0.844828444403\ldots`) 40, 40, 40; unnormalised covariances
  (``file:...:raw``, :math:`c = 13/8`, :math:`c_C = 3/2`, ``d = 12``;
  :math:`2.28877309395\ldots`) 40, 40. The test asserts :math:`\ge 30`;
* paper B: :math:`C_{\rm train} = C_{\rm test} = I` (one atom), against ``replica solve
  isotropic``'s Marchenko--Pastur closed forms (E_ICL, e_IDG = the TM error, sigma):
  (:math:`\alpha = 2, \tau = 1/2, \kappa = 3/2, \rho = 1/4, \lambda = 1/10`;
  :math:`1.48474650097\ldots`) 40, 40, 40 digits; (:math:`3, 3, 1/2, 1/2, 1/5`;
  :math:`1.45834290027\ldots`) 40, 40, 40; (:math:`3/2, 2, 2, 1/10, 0`;
  :math:`1.14449155733\ldots`) 40, 40, 40.

**Derived and stated.** Derived here (SymPy output of the previous step): the free energy for
any task power and spectrum, its saddle-point equations (:func:`saddle`) and the test overlaps
and errors for any test covariance. Inherited with their labels and checks from the low-rank
derivation, whose steps are rank-free: the context statistics (computed), the residual covariance
(computed; concentration stated), the task average (stated: the per-task overlaps enter through
:math:`S`; checked on sampled task sets). Stated for paper A's instance: the deterministic
equivalents of :math:`\frac1D\operatorname{tr}(S - z)^{-1}` (derived in
:mod:`replica.derivations.alignment_from_model` from the log-determinant) and of
:math:`\frac1D\operatorname{tr}C(S-z)^{-1}` (stated there, checked on sampled pools). The
numbers compare the unified saddle point with the solvers; they check the instances, and the
map :data:`PAPER_A_MAP`, at these points only.
"""

from __future__ import annotations

import functools

import mpmath
import sympy

from ..models import alignment as _A
from ..models import lowrank as L
from . import paper_a as PA
from ..models import unified as MU
from ..symbolic.replica_calculus import (BETA, N_REPLICAS, RSBlock, coupling_term,
                                         gaussian_integral_log, replica_limit,
                                         rs_gaussian_moments, stieltjes_form, zero_temperature)
from ..symbolic.codegen import mp_function
from ..symbolic.saddle import Alias, SaddlePoint
from ..symbolic.spectral import LAMBDA_I, MU_I, SpectralAverage

n, beta = N_REPLICAS, BETA
s = LAMBDA_I
"""An eigenvalue of the empirical task covariance S (summation variable of the averages)."""
gamma = MU_I
"""The diagonal entry of a test task covariance in the eigenbasis of S."""

c_train = MU.c_train
r"""The task power :math:`c = \langle s\rangle = \operatorname{tr}S/D` (1 in the low-rank paper;
:data:`replica.models.unified.c_train`)."""
c_C = MU.c_C
r"""The test power :math:`\langle\gamma\rangle = \operatorname{tr}C/D`."""

EPS = MU.EPS
"""epsilon = (c + sigma^2)/alpha: the context fluctuation per direction."""
ETEST = MU.ETEST
"""The test prompt's context fluctuation (c_C + sigma_test^2)/alpha_test."""

GC = MU.GC
r""":math:`g_C(z) = \langle\gamma/(s-z)\rangle` and its derivatives (abstract)."""

# replica-level symbols (before the zero-temperature scalings)
Qd, Qbd = sympy.symbols("Q_d Qbar_d", real=True)
Qhd, Qho, Qbhd, Qbho = sympy.symbols("Qhat_d Qhat_o Qbarhat_d Qbarhat_o", real=True)
mh = sympy.Symbol("mhat_raw", real=True)

ZERO_T_SCALINGS = {Qd: L.q + L.chi / beta, Qbd: L.qbar + L.chibar / beta,
                   Qhd: beta * L.qhat - beta**2 * L.chihat, Qho: beta**2 * L.chihat,
                   Qbhd: beta * L.qbarhat - beta**2 * L.chibarhat, Qbho: beta**2 * L.chibarhat,
                   mh: beta * L.mhat}
"""The zero-temperature scalings: diagonal excesses of order 1/beta (the susceptibilities), the
conjugates' diagonal-minus-off-diagonal of order beta, their off-diagonal of order beta^2."""


def spectral_moments(power=c_train) -> dict:
    """<1> = 1 and <s> = tr S / D (the task power)."""
    return {0: sympy.Integer(1), 1: sympy.sympify(power)}


def transform(k):
    """g^(k)(z): the Stieltjes transform of S (abstract)."""
    return L.G[k](L.z)


# ---------------------------------------------------------------------------------------------
# Residual covariance and energetic part
# ---------------------------------------------------------------------------------------------
D_dim = sympy.Symbol("D", positive=True)
"""The dimension, a symbol: the residual covariance is computed at every D."""
L_context = sympy.Symbol("L", positive=True)
"""The context length L = alpha D (a symbol in the general-D computation)."""
eps_sym = sympy.Symbol("varepsilon", positive=True)
m_a, m_b, Q_ab, Qbar_ab = sympy.symbols("m_a m_b Q_ab Qbar_ab", real=True)
"""The replicas' overlaps: m_a = w^T Gamma^a w/D, Q_ab = w^T Gamma^aT Gamma^b w/D, Qbar_ab =
tr(Gamma^aT Gamma^b)/D."""


@functools.lru_cache(maxsize=None)
def residual_covariance_general_d() -> sympy.Expr:
    r""":math:`K_{ab} = \mathbb E[r^ar^b]` computed at a symbolic dimension :math:`D` with
    matrix expressions (:mod:`replica.symbolic.matrix_moments`): :math:`r^a = y - x^\top\Gamma^a
    \hat w`, :math:`y = w^\top x + \sigma e`, :math:`\hat w = w + \xi`; averaged over the label
    noise :math:`e\sim N(0,1)`, the query :math:`x\sim N(0, I/D)` and the context fluctuation
    :math:`\xi\sim N(0, \varepsilon I + ww^\top/L)` (the covariance of the context step, with
    :math:`\varepsilon = (\|w\|^2/D + \sigma^2)D/L`), in that order, by the second-moment rules
    of a Gaussian vector; the traces made cyclic and the bilinear forms named
    (:math:`\|w\|^2 = Dc`, :math:`w^\top\Gamma^aw = Dm_a`, :math:`w^\top\Gamma^{a\top}\Gamma^bw
    = DQ_{ab}`, :math:`\operatorname{tr}\Gamma^{a\top}\Gamma^b = D\bar Q_{ab}`). The result is
    exact at every :math:`D`: :math:`\sigma^2 + c - m_a - m_b + Q_{ab} + \varepsilon\bar Q_{ab}
    + Q_{ab}/L`."""
    from ..symbolic.matrix_moments import expand_traces, gaussian_average, replace_forms, scalar
    D, Lc = D_dim, L_context
    Ga, Gb = sympy.MatrixSymbol("Gamma_a", D, D), sympy.MatrixSymbol("Gamma_b", D, D)
    w, x, xi = (sympy.MatrixSymbol(v, D, 1) for v in ("w", "x", "xi"))
    e = sympy.MatrixSymbol("e", 1, 1)
    y = x.T * w + L.sigma * e
    r_a, r_b = y - x.T * Ga * (w + xi), y - x.T * Gb * (w + xi)
    avg = gaussian_average(r_a.T * r_b, e, sympy.Identity(1))
    avg = gaussian_average(avg, x, sympy.Identity(D) / D)
    avg = gaussian_average(avg, xi, eps_sym * sympy.Identity(D) + w * w.T / Lc)
    forms = {w.T * w: D * c_train, w.T * Ga * w: D * m_a, w.T * Gb * w: D * m_b,
             w.T * Ga.T * Gb * w: D * Q_ab, sympy.Trace(Ga.T * Gb): D * Qbar_ab}
    out = replace_forms(expand_traces(scalar(avg)), forms)
    if any(isinstance(a, (sympy.MatrixExpr, sympy.Trace)) for a in sympy.preorder_traversal(out)):
        raise ValueError(f"an unnamed form is left in the residual covariance: {out}")
    return out


def residual_covariance(power=c_train) -> RSBlock:
    r"""The RS covariance of the replicated residuals at leading order, with task power
    :math:`c = \|w\|^2/D`, from :func:`residual_covariance_general_d`: the :math:`Q_{ab}/L`
    term is dropped (:math:`L = \alpha D`, so it is :math:`O(1/D)` against the :math:`O(1)`
    entries), :math:`\varepsilon = (c+\sigma^2)/\alpha`, and replica symmetry sets
    :math:`m_a = m`, :math:`Q_{aa} = Q_d`, :math:`\bar Q_{aa} = \bar Q_d`, :math:`Q_{a\ne b} = q`,
    :math:`\bar Q_{a\ne b} = \bar q`: same replica :math:`\sigma^2 + c - 2m + Q_d +
    \varepsilon\bar Q_d`, different replicas :math:`\sigma^2 + c - 2m + q + \varepsilon\bar q`."""
    K = residual_covariance_general_d()
    leading = K.subs(1 / L_context, 0) if K.has(L_context) else K
    if sympy.expand(K - leading - Q_ab / L_context) != 0:
        raise ValueError("the residual covariance's O(1/L) part is not Q_ab/L")
    common = {c_train: power, eps_sym: (power + L.sigma**2) / L.alpha, m_a: L.m, m_b: L.m}
    same = leading.subs({**common, Q_ab: Qd, Qbar_ab: Qbd})
    other = leading.subs({**common, Q_ab: L.q, Qbar_ab: L.qbar})
    return RSBlock.from_entries(sympy.expand(same), sympy.expand(other))


def energetic_log(K: RSBlock, sign=1):
    r"""Per :math:`\kappa D^2`: the :math:`\tau D^2` prompts each give
    :math:`\log\det(I + \beta K)^{-1/2}`, i.e. :math:`-\frac{\tau}{2\kappa}\log\det(I+\beta K)`."""
    I_plus = RSBlock.scalar(1, 0) + K.scale(beta)
    return -sign * L.tau / (2 * L.kappa) * I_plus.log_det()


# ---------------------------------------------------------------------------------------------
# Coupling (delta functions in Fourier form) and entropic part
# ---------------------------------------------------------------------------------------------
def conjugates():
    """The RS conjugate matrices (diagonal, off-diagonal -Q_o) of Q and Qbar."""
    return RSBlock.from_entries(Qhd, -Qho), RSBlock.from_entries(Qbhd, -Qbho)


def coupling_log(m_factor=None):
    r""":math:`\frac12\operatorname{tr}\hat QQ + \frac12\operatorname{tr}\hat{\bar Q}\bar Q
    - n\hat mm` (per :math:`\kappa D^2`)."""
    Q = RSBlock.from_entries(Qd, L.q)
    Qb = RSBlock.from_entries(Qbd, L.qbar)
    Qh, Qbh = conjugates()
    return coupling_term(Q, Qh) + coupling_term(Qb, Qbh) - (n if m_factor is None
                                                          else m_factor) * mh * L.m


def entropic_block(sv=s) -> RSBlock:
    """kappa (beta lambda I + Qbarhat + s Qhat): the RS precision of one weight coordinate
    (computed at every dimension by :func:`weight_exponent_general_d`, which checks it)."""
    Qh, Qbh = conjugates()
    return (RSBlock.scalar(beta * L.lam, 0) + Qbh + Qh.scale(sv)).scale(L.kappa)


delta_ab, qhat_ab, qbarhat_ab = sympy.symbols("delta_ab Qhat_ab Qbarhat_ab", real=True)
"""The replica-pair entries of the weight exponent: delta_ab (1 when a = b), the conjugates
Qhat_ab, Qbarhat_ab."""
x_a, x_ab = sympy.symbols("x_a x_ab", real=True)
"""One coordinate of the rotated weights: x_a (replica a), x_ab (the product x_a x_b)."""


@functools.lru_cache(maxsize=None)
def weight_exponent_general_d() -> dict:
    r"""The exponent of the replicated weight integral, computed at every dimension :math:`D`.

    Written with the definitions of the overlaps, the pair :math:`(a, b)` of replicas contributes
    :math:`-\frac{\kappa D}2[(\beta\lambda\delta_{ab} + \hat{\bar Q}_{ab})
    \operatorname{tr}\Gamma^{a\top}\Gamma^b + \hat Q_{ab}\operatorname{tr}\Gamma^aS\Gamma^{b\top}]`
    and replica :math:`a` the field :math:`\kappa D\hat m\operatorname{tr}\Gamma^aS`. With
    :math:`S = U\Lambda U^\top` (:math:`U` orthogonal, :math:`\Lambda` diagonal) the change of
    variables :math:`\Gamma^a = U\tilde\Gamma^aU^\top` (Jacobian 1) is carried out in the traces
    (:func:`~replica.symbolic.matrix_moments.rotate_traces`), giving
    :math:`\operatorname{tr}\tilde\Gamma^{a\top}\tilde\Gamma^b`,
    :math:`\operatorname{tr}\tilde\Gamma^a\Lambda\tilde\Gamma^{b\top}`,
    :math:`\operatorname{tr}\tilde\Gamma^a\Lambda`; for a diagonal :math:`\Lambda` these are
    :math:`\sum_{ij}x^a_{ij}x^b_{ij}`, :math:`\sum_{ij}s_jx^a_{ij}x^b_{ij}` and
    :math:`\sum_js_jx^a_{jj}`: the exponent is a sum over the coordinates :math:`(i, j)`, each
    a quadratic form in its :math:`n` replicas with the eigenvalue :math:`s = s_j` and a field
    only where :math:`i = j`.

    Returns ``{"forms": [(original, rotated), ...], "pair": P, "field": h}`` with the coordinate
    exponent :math:`-\frac12\sum_{ab}P_{ab}x_ax_b + h\sum_ax_a`; ``P`` in
    :data:`delta_ab`, :data:`qhat_ab`, :data:`qbarhat_ab` and :data:`s`."""
    from ..symbolic.matrix_moments import rotate_traces
    D = D_dim
    U, Lam, S = (sympy.MatrixSymbol(v, D, D) for v in ("U", "Lambda", "S"))
    Ga, Gb = sympy.MatrixSymbol("Gamma_a", D, D), sympy.MatrixSymbol("Gamma_b", D, D)
    Ta, Tb = sympy.MatrixSymbol("Gammatilde_a", D, D), sympy.MatrixSymbol("Gammatilde_b", D, D)
    forms = [sympy.Trace(Ga.T * Gb), sympy.Trace(Ga * S * Gb.T), sympy.Trace(Ga * S)]
    rotation = {Ga: U * Ta * U.T, Gb: U * Tb * U.T, S: U * Lam * U.T}
    rotated = [rotate_traces(f, rotation, U) for f in forms]
    # one coordinate (i, j), eigenvalue s = Lambda_jj: the rotated forms' summands
    coordinate = {rotated[0]: x_ab, rotated[1]: s * x_ab, rotated[2]: s * x_a}
    known = {sympy.Trace(Ta.T * Tb), sympy.Trace(Ta * Lam * Tb.T), sympy.Trace(Ta * Lam)}
    if set(rotated) != known:
        raise ValueError(f"the rotated forms are not the diagonal ones: {rotated}")
    kD = L.kappa * D
    exponent = (-kD / 2 * ((beta * L.lam * delta_ab + qbarhat_ab) * forms[0]
                           + qhat_ab * forms[1]) + kD * mh * forms[2])
    per_coordinate = sympy.expand(rotate_traces(exponent, rotation, U).xreplace(coordinate))
    return {"forms": list(zip(forms, rotated)),
            "pair": sympy.expand(-2 * per_coordinate.coeff(x_ab)),
            "field": sympy.expand(per_coordinate.coeff(x_a))}


def check_entropic_block_general_d() -> bool:
    """The coordinate block computed at every D (:func:`weight_exponent_general_d`), divided by
    D (the scaling of the conjugates), is :func:`entropic_block` with the RS entries (a = b:
    delta = 1, the diagonal conjugates; a != b: delta = 0, minus the off-diagonal ones), and
    its field divided by D is kappa mhat s."""
    out = weight_exponent_general_d()
    P = out["pair"] / D_dim
    same = P.subs({delta_ab: 1, qhat_ab: Qhd, qbarhat_ab: Qbhd})
    other = P.subs({delta_ab: 0, qhat_ab: -Qho, qbarhat_ab: -Qbho})
    block = RSBlock.from_entries(sympy.expand(same), sympy.expand(other))
    want = entropic_block()
    return (sympy.expand(block.A - want.A) == sympy.zeros(1, 1)
            and sympy.expand(block.B - want.B) == sympy.zeros(1, 1)
            and sympy.expand(out["field"] / D_dim - L.kappa * mh * s) == 0)


def entropic_log_per_eigenvalue(det_shift=0):
    r""":math:`\frac1\kappa\log\int dx\,e^{-\frac12x^\top\kappa(\beta\lambda + \hat{\bar Q} +
    s\hat Q)x + \kappa\hat ms\mathbf 1^\top x}` (per :math:`\kappa D^2`, for one eigenvalue
    :math:`s` of :math:`S`; averaged over the spectrum)."""
    M = entropic_block()
    out = gaussian_integral_log(M, [L.kappa * mh * s]) / L.kappa
    if det_shift:
        out -= det_shift * sympy.log(M.A.det()) / (2 * L.kappa)
    return out


# ---------------------------------------------------------------------------------------------
# Replica limit, zero temperature, Stieltjes form: the free energy
# ---------------------------------------------------------------------------------------------
def lambda_from_z(expr):
    """lambda = -qbarhat - z qhat (the alias z = -(lambda + qbarhat)/qhat solved for lambda)."""
    return sympy.sympify(expr).xreplace({L.lam: -L.qbarhat - L.z * L.qhat})


def zero_temperature_part(expr, scalings=None):
    """``(power, coefficient)`` of the replica limit of ``expr`` at beta -> oo (memoised)."""
    key = tuple(sorted((scalings or ZERO_T_SCALINGS).items(), key=str))
    return _zero_temperature_part(sympy.sympify(expr), key)


@functools.lru_cache(maxsize=32)
def _zero_temperature_part(expr, scalings: tuple):
    return zero_temperature(replica_limit(expr, simplify=False), dict(scalings), max_power=2)


def derive_free_energy(energetic=None, entropic=None, coupling=None, scalings=None,
                       power=c_train):
    """The zero-temperature free energy from its three parts (defaults: the correct ones at task
    power ``power``). Returns ``(f, powers, parts)``: f = -(Phi_E + <Phi_S> + Phi_C) in the
    Stieltjes form, the leading powers of beta of the three parts, and the parts."""
    energetic = energetic_log(residual_covariance(power)) if energetic is None else energetic
    entropic = entropic_log_per_eigenvalue() if entropic is None else entropic
    coupling = coupling_log() if coupling is None else coupling
    pe, fe = zero_temperature_part(energetic, scalings)
    ps, fs = zero_temperature_part(entropic, scalings)
    pc, fc = zero_temperature_part(coupling, scalings)
    fs_avg = SpectralAverage(sympy.cancel(lambda_from_z(fs)))
    phi = fe + fs_avg + fc
    f = -stieltjes_form(phi, L.z, transform, spectral_moments(power))
    return f, (pe, ps, pc), {"energetic": -fe, "entropic": -fs_avg, "coupling": -fc}


@functools.lru_cache(maxsize=None)
def derived_free_energy():
    """``(f, powers, parts)`` for a general task covariance (task power ``c`` symbolic)."""
    return derive_free_energy()


@functools.lru_cache(maxsize=None)
def free_energy() -> sympy.Expr:
    """The unified free energy (the output of :func:`derived_free_energy`)."""
    return derived_free_energy()[0]


# ---------------------------------------------------------------------------------------------
# The RS measure of the weights and the test overlaps
# ---------------------------------------------------------------------------------------------
@functools.lru_cache(maxsize=None)
def coordinate_law():
    """``{mean, common, thermal}`` of one weight coordinate (eigen-direction s, per unit of the
    row's component) under the RS measure at n -> 0 and beta -> oo, in the alias z: the mean,
    the variance of the field shared by the replicas and the thermal variance (times D; the
    thermal one vanishes like 1/beta). Values are ``(power of beta, coefficient)``."""
    mom = rs_gaussian_moments(entropic_block(), L.kappa * mh * s)
    out = {}
    for k, v in mom.items():
        v0 = sympy.cancel(v.subs(n, 0))
        p, coeff = zero_temperature(v0, ZERO_T_SCALINGS, max_power=2)
        out[k] = (p, sympy.cancel(lambda_from_z(coeff)) if p == 0 else coeff)
    return out


def overlap_averages(law=None):
    r"""``(m_C, q_C)`` as spectral averages over the eigenbasis of S, with the test-covariance
    weight :math:`\gamma`: :math:`m_C = \langle\gamma\,\text{mean}\rangle`,
    :math:`q_C = \langle\gamma(\text{mean}^2 + \text{common})\rangle` (the thermal part
    vanishes)."""
    law = coordinate_law() if law is None else law
    mean, common = law["mean"][1], law["common"][1]
    return SpectralAverage(gamma * mean), SpectralAverage(gamma * (mean**2 + common))


def _weighted_transform(k):
    return GC[k](L.z)


@functools.lru_cache(maxsize=None)
def derived_test_overlaps() -> dict:
    r"""``{"m_C", "q_C", "qbar", "m", "q", "error_C", "error_TM"}`` in the Stieltjes form: a
    general test covariance through :math:`g_C` and :math:`c_C`, the isotropic overlap
    :math:`\bar q` (:math:`\gamma = 1`) and the training-task overlaps (:math:`\gamma = s`)
    through :math:`g` and :math:`c`."""
    m_c, q_c = overlap_averages()
    mom_w = dict(spectral_moments())
    mom_w.update({("w", 0): c_C})

    def general(e):
        return stieltjes_form(e, L.z, transform, mom_w, _weighted_transform, weight=gamma)

    def at(e, value):
        return stieltjes_form(SpectralAverage(e.args[0].xreplace({gamma: value})), L.z,
                              transform, spectral_moments())
    out = {"m_C": general(m_c), "q_C": general(q_c), "qbar": at(q_c, 1),
           "m": at(m_c, s), "q": at(q_c, s)}
    out["error_C"] = L.sigma_test**2 + c_C - 2 * out["m_C"] + out["q_C"] + ETEST * out["qbar"]
    etm = ETEST.xreplace({c_C: c_train})
    out["error_TM"] = L.sigma_test**2 + c_train - 2 * out["m"] + out["q"] + etm * out["qbar"]
    return out


# ---------------------------------------------------------------------------------------------
# The saddle point
# ---------------------------------------------------------------------------------------------
@functools.lru_cache(maxsize=None)
def saddle() -> SaddlePoint:
    """Stationarity of the unified free energy (pairs and alias as in (R1))."""
    return SaddlePoint(free_energy(), L.PAIRS, [Alias(L.z, L.Z_DEFINITION, L.lam)], name="f")


# ---------------------------------------------------------------------------------------------
# The two parameterisations
# ---------------------------------------------------------------------------------------------
rho_A, lam_A, sigma_A, lt_A = sympy.symbols("rho_A lambda_A sigma_A lambdatilde_A",
                                            nonnegative=True)
PAPER_A_MAP = {k: v.xreplace({_A.rho: rho_A, _A.lam: lam_A})
               for k, v in _A.r1_parameters().items()}
r"""Paper A's parameters in this module's: :math:`\sigma = \sqrt{\rho_A}` (noise variance
:math:`\rho_A`) and :math:`\lambda = \tau\lambda_A/\kappa` (ridge :math:`\frac nd\lambda_A` per
squared error against :math:`\frac{\lambda\kappa D}{2}` per half squared error, :math:`n = \tau
d^2`, :math:`k = \kappa d`); test noise :math:`\tilde\sigma = \sigma`. Paper A's derived
quantities: :math:`\sigma_A = -z`, :math:`\tilde\lambda = \lambda/\hat q`,
:math:`M_\kappa(x) = g(-x)`, :math:`M'_\kappa(x) = -g'(-x)`. The map is
:func:`replica.models.alignment.r1_parameters` (its one copy), in this module's symbols."""
LOWRANK_MAP = {c_train: sympy.Integer(1)}
"""The low-rank paper's normalisation ||w||^2 = D."""


# ---------------------------------------------------------------------------------------------
# Numerical saddle point on a finite spectrum (paper A's instance)
# ---------------------------------------------------------------------------------------------
_g0, _g1, _gc0, _gc1 = sympy.symbols("g0 g1 gc0 gc1")
_FN = {L.G[0](L.z): _g0, L.G[1](L.z): _g1, GC[0](L.z): _gc0, GC[1](L.z): _gc1}
_P = (L.alpha, L.tau, L.kappa, L.lam, L.sigma, c_train, L.z, _g0, _g1)


@functools.lru_cache(maxsize=None)
def _compiled():
    """mpmath functions (the one code generator, :func:`replica.symbolic.codegen.mp_function`): the closed map Phi(theta) and z(theta) of the derived saddle point, and
    the observables in (conjugates, z, g, g_C)."""
    phi, aliases = saddle().reduced_map()
    th = L.ORDER_PARAMETERS
    phis = [mp_function(th + _P, phi[v].xreplace(_FN)) for v in th]
    zof = mp_function(th + _P[:-3], aliases[L.z])
    fp = dict(saddle().fixed_point)
    conj = [mp_function(th + _P, fp[v].xreplace(_FN)) for v in L.CONJUGATES]
    obs = derived_test_overlaps()
    args = L.CONJUGATES + th + _P + (_gc0, _gc1, c_C, L.sigma_test, L.alpha_test)
    errs = {k: mp_function(args, obs[k].xreplace(_FN)) for k in ("error_C", "error_TM")}
    return phis, zof, conj, errs


def deterministic_transforms(train, test, kappa, z):
    r"""``(g, g', g_C, g_C', a)`` at ``z < 0`` for ``S`` the empirical covariance of
    :math:`\kappa d` tasks from :math:`N(0, \operatorname{diag}(\text{train}))`: the
    deterministic equivalent :math:`(S - z)^{-1}\asymp(aC_{\rm train} - z)^{-1}` with :math:`a`
    the root of paper A's eq. (17) in the form :math:`\kappa(a-1) + 1 - \langle x/(a\lambda +
    x)\rangle = 0`, :math:`x = -z`, and :math:`a' = da/dx` by implicit differentiation."""
    x = -z
    d = len(train)
    av = lambda f: mpmath.fsum(f(i) for i in range(d)) / d  # noqa: E731
    if kappa == mpmath.inf:
        a = mpmath.mpf(1)
        ap = mpmath.mpf(0)
    else:
        eq = lambda a: kappa * (a - 1) + 1 - av(lambda i: x / (a * train[i] + x))  # noqa: E731
        a = mpmath.findroot(eq, (max(mpmath.mpf(0), 1 - 1 / kappa) + mpmath.mpf(10)**-30,
                                 mpmath.mpf(1) + 1), solver="anderson")
        # differentiate kappa (a-1) + 1 - <x/(a l + x)> = 0 in x
        d_a = kappa + av(lambda i: x * train[i] / (a * train[i] + x)**2)
        d_x = -av(lambda i: a * train[i] / (a * train[i] + x)**2)
        ap = -d_x / d_a
    f = lambda i: 1 / (a * train[i] + x)  # noqa: E731
    # d/dz = -d/dx;  d/dx f_i = -(a' l_i + 1) f_i^2
    g = av(f)
    g1 = av(lambda i: (ap * train[i] + 1) * f(i)**2)
    gc = av(lambda i: test[i] * f(i))
    gc1 = av(lambda i: test[i] * (ap * train[i] + 1) * f(i)**2)
    return g, g1, gc, gc1, a


def solve_on_spectrum(alpha, tau, kappa, lam, sigma, train, test, start=None, dps=50):
    r"""The saddle point of the unified free energy with :math:`g` the deterministic equivalent
    of the empirical covariance of :math:`\kappa d` tasks from ``train`` (eigenvalues), and the
    test error at the covariance ``test`` (diagonal in the same basis), test noise ``sigma``,
    ``alpha_test = alpha``. Newton's method on :math:`\theta = \Phi(\theta)` (the derived
    fixed-point map) from ``start`` (default: 400 damped iterations of the map from
    theta = 1/2 at 20 digits). Returns a dict
    with theta, the conjugates, ``z``, ``error_C``, ``error_TM`` and the residual."""
    phis, zof, conj, errs = _compiled()
    with mpmath.workdps(dps + 10):
        P = [mpmath.mpf(v) if v != mpmath.inf else v for v in (alpha, tau, kappa, lam, sigma)]
        cval = mpmath.fsum(train) / len(train)
        ctest = mpmath.fsum(test) / len(test)

        def transforms(th):
            z = zof(*th, *P, cval)
            g, g1, gc, gc1, a = deterministic_transforms(train, test, P[2], z)
            return z, g, g1, gc, gc1

        def residual(*th):
            z, g, g1, _, _ = transforms(th)
            return [f(*th, *P, cval, z, g, g1) - t for f, t in zip(phis, th)]

        if start is None:
            th0 = [mpmath.mpf(1) / 2] * 5
            with mpmath.workdps(20):  # damped iteration of the map to Newton's basin
                for _ in range(400):
                    z, g, g1, _, _ = transforms(th0)
                    th0 = [(f(*th0, *P, cval, z, g, g1) + t) / 2 for f, t in zip(phis, th0)]
        else:
            th0 = [mpmath.mpf(v) for v in start]
        th = mpmath.findroot(residual, th0, tol=mpmath.mpf(10)**(-2 * dps))
        th = [th[i] for i in range(len(th0))]
        res = max(abs(r) for r in residual(*th))
        z, g, g1, gc, gc1 = transforms(th)
        cj = [f(*th, *P, cval, z, g, g1) for f in conj]
        out = dict(zip(("q", "m", "chi", "qbar", "chibar"), th))
        out.update(zip(("qhat", "mhat", "chihat", "qbarhat", "chibarhat"), cj))
        out.update(z=z, residual=res, g=g)
        args = cj + th + [P[0], P[1], P[2], P[3], P[4], cval, z, g, g1, gc, gc1, ctest, P[4], P[0]]
        out["error_C"] = errs["error_C"](*args)
        out["error_TM"] = errs["error_TM"](*args)
    return out


# ---------------------------------------------------------------------------------------------
# Paper A's errors as an instance, symbolically in the transforms
# ---------------------------------------------------------------------------------------------
g0, g1, gc0, gc1 = _g0, _g1, _gc0, _gc1
INSTANCE_SYMBOLS = (L.alpha, L.tau, L.kappa, c_train, c_C, rho_A, lt_A, g0, g1, gc0, gc1)
"""The free symbols of :func:`paper_a_instance_difference`."""


def _paper_a_errors():
    r"""Paper A's :math:`E_{\rm ICL}` and :math:`e_{\rm TM}` (from :mod:`replica.models.
    alignment`) in the transforms of :math:`S`: :math:`M = g(-\sigma_A)`, :math:`M' =
    -g'(-\sigma_A)`, :math:`\langle\mu F\rangle = g_C`, :math:`\langle\mu F'\rangle = -g_C'`
    (the form of :data:`~replica.derivations.paper_a.K_I` is checked, not assumed), at
    :math:`\alpha_{\rm test} = \alpha` and :math:`\sigma_A = \varepsilon + \tilde\lambda`."""
    from ..models import alignment as A
    f = PA.F_I.subs(A.z, A.sigma)
    ap = (A.M + A.sigma * A.M_prime) / A.kappa
    if sympy.cancel(PA.K_I - (A.q * f - (A.q * A.lambda_tilde - A.sigma**2)
                             * (ap * LAMBDA_I + 1) * f**2)) != 0:
        raise ValueError("K_I is not q F + (q lambda_tilde - sigma^2) F'")
    mis = A.q * gc0 - (A.q * A.lambda_tilde - A.sigma**2) * gc1
    amap = {A.M: g0, A.M_prime: -g1, A.lambda_tilde: lt_A, A.c_train: c_train, A.c_test: c_C,
            A.rho: rho_A, A.alpha_test: A.alpha, A.alpha: L.alpha, A.tau: L.tau,
            A.kappa: L.kappa}
    sig = (rho_A + c_train) / L.alpha + lt_A
    qa = PA.Q.xreplace(amap).xreplace({A.sigma: sig})
    out = {}
    for k, e in (("error_C", PA.E_SCALAR + mis), ("error_TM", PA.E_TM)):
        out[k] = e.xreplace({A.q: qa}).xreplace(amap).xreplace({A.sigma: sig})
    return out


def _unified_errors_at(values: dict):
    r"""The unified saddle point with :math:`z = -\sigma_A`, :math:`\lambda = \tilde\lambda\hat q`
    (the alias and :data:`PAPER_A_MAP`), :math:`\tilde\sigma = \sigma = \sqrt{\rho_A}`,
    :math:`\tilde\alpha = \alpha`, solved at the numbers ``values`` (exact rationals): the
    conjugate equation for :math:`\hat q` and the linear system for :math:`(q, \bar q,
    \hat\chi)`; returns its two errors."""
    fp = dict(saddle().fixed_point)
    eps = EPS.xreplace({L.sigma: sympy.sqrt(rho_A)})
    v = dict(values)
    zval = -(eps + lt_A).xreplace(v)
    qh = sympy.Symbol("qh_")
    base = {L.z: zval, L.sigma: sympy.sqrt(v[rho_A]), **{k: v[k] for k in v
            if k in (L.alpha, L.tau, L.kappa, c_train, c_C)}}
    fn = {L.G[0](L.z): v[g0], L.G[1](L.z): v[g1], GC[0](L.z): v[gc0], GC[1](L.z): v[gc1]}
    conj = {L.qhat: qh, L.mhat: qh}
    chi = fp[L.chi].xreplace(fn).xreplace(conj).xreplace(base)
    chib = fp[L.chibar].xreplace(fn).xreplace(conj).xreplace(base)
    epsv = eps.xreplace(base).xreplace({rho_A: v[rho_A]})
    qhv = sympy.solve(fp[L.qhat].xreplace({L.chi: chi, L.chibar: chib}).xreplace(base) - qh,
                      qh)
    (qhv,) = [r for r in qhv if r != 0]
    ch, q, qb = sympy.symbols("ch_ q_ qb_")
    sub = {L.qhat: qhv, L.mhat: qhv, L.chihat: ch, L.chibarhat: epsv * ch}
    m = fp[L.m].xreplace(fn).xreplace(sub).xreplace(base)
    eqs = [fp[L.q].xreplace(fn).xreplace(sub).xreplace(base) - q,
           fp[L.qbar].xreplace(fn).xreplace(sub).xreplace(base) - qb,
           fp[L.chihat].xreplace({L.chi: chi.xreplace({qh: qhv}),
                                  L.chibar: chib.xreplace({qh: qhv}), L.m: m, L.q: q,
                                  L.qbar: qb}).xreplace(base) - ch]
    sol = sympy.solve(eqs, [q, qb, ch], dict=True)[0]
    obs = derived_test_overlaps()
    vals = {L.qhat: qhv, L.mhat: qhv, L.chihat: sol[ch], L.chibarhat: epsv * sol[ch],
            L.sigma_test: sympy.sqrt(v[rho_A]), L.alpha_test: v[L.alpha]}
    return {k: obs[k].xreplace(fn).xreplace(vals).xreplace(base) for k in ("error_C",
                                                                          "error_TM")}


def paper_a_instance_difference(values: dict) -> dict:
    """``{error_C, error_TM}``: the unified errors minus paper A's (:func:`_paper_a_errors`),
    exactly, at the rational ``values`` of :data:`INSTANCE_SYMBOLS` (the transforms g, g',
    g_C, g_C' and lambda_tilde free numbers: an identity in them holds at random points,
    and a nonzero polynomial vanishes at a random rational point with probability 0)."""
    mine = _unified_errors_at(values)
    theirs = _paper_a_errors()
    return {k: sympy.nsimplify(sympy.radsimp(mine[k] - theirs[k].xreplace(values)))
            for k in mine}


def kappa_qhat_at_saddle() -> sympy.Expr:
    r""":math:`\kappa\hat q` at the saddle point, in :math:`\tilde\lambda = \lambda/\hat q` and
    :math:`g = g(-\sigma_A)`: the conjugate equation :math:`\hat q = \tau/(\kappa\Delta)` with
    the derived :math:`\chi, \bar\chi` and the alias :math:`-z = \varepsilon + \tilde\lambda`
    (linear in :math:`\hat q`, solved by SymPy)."""
    fp = dict(saddle().fixed_point)
    qh = sympy.Symbol("qh_")
    eps = EPS
    zval = -(eps + lt_A)
    conj = {L.qhat: qh, L.mhat: qh}
    fn = {L.G[0](L.z): g0, L.G[1](L.z): g1}
    chi = fp[L.chi].xreplace(fn).xreplace(conj).xreplace({L.z: zval})
    chib = fp[L.chibar].xreplace(fn).xreplace(conj).xreplace({L.z: zval})
    (sol,) = [r for r in sympy.solve(fp[L.qhat].xreplace({L.chi: chi, L.chibar: chib}) - qh, qh)
              if r != 0]
    return sympy.factor(L.kappa * sol)


def paper_a_ridge_equation_difference() -> sympy.Expr:
    r"""Paper A's ridge equation :math:`\tilde\lambda^2M - (1-\tau)\tilde\lambda - \tau\lambda_A`
    at :math:`M = g`, :math:`\lambda_A = \kappa\lambda/\tau` (:data:`PAPER_A_MAP` inverted) and
    :math:`\lambda = \tilde\lambda\hat q` from :func:`kappa_qhat_at_saddle`: zero identically."""
    from ..models import alignment as A
    lam_unified = lt_A * kappa_qhat_at_saddle() / L.kappa
    lam_a = sympy.solve(PAPER_A_MAP[L.lam] - lam_unified, lam_A)[0]
    e = PA.RIDGE_EQUATION.xreplace({A.M: g0, A.lambda_tilde: lt_A, A.lam: lam_a, A.tau: L.tau})
    return sympy.cancel(e)


# ---------------------------------------------------------------------------------------------
# The appendix section: the unified free energy and its three instances
# ---------------------------------------------------------------------------------------------
def _eq(lhs, rhs):
    return sympy.Eq(lhs, rhs, evaluate=False)


def _random_rationals(k: int, seed: int) -> list:
    import random
    rnd = random.Random(seed)
    return [{x: sympy.Rational(rnd.randint(1, 60), rnd.randint(1, 60)) for x in INSTANCE_SYMBOLS}
            for _ in range(k)]


def _check_unified_free_energy() -> bool:
    """The three parts grow like beta (the zero-temperature limit exists), the free energy
    depends on the task power c (it enters the energetic part and <s>), and it is the one typed
    copy the solvers are computed from (the difference cancels identically, g abstract)."""
    f, powers, _ = derived_free_energy()
    return (powers == (1, 1, 1) and f.has(c_train) and f.has(L.G[0](L.z))
            and sympy.cancel(sympy.expand(f - MU.FREE_ENERGY)) == 0)


def _check_lowrank_instance() -> bool:
    """At c = 1 the unified free energy minus the low-rank one cancels identically (g abstract), and the
    unified TM, ODG (gamma = 1) and IDG (gamma = mu/rho: g_C = gtilde) errors minus the
    solver's cancel after g = rho gtilde - (1 - rho)/z."""
    if sympy.cancel(sympy.expand(free_energy().xreplace(LOWRANK_MAP) - L.FREE_ENERGY)) != 0:
        return False
    der = derived_test_overlaps()
    fp = L.fixed_point_equations()
    typed = {L.m: fp[L.m], L.q: fp[L.q], L.qbar: fp[L.qbar], L.mbar: L.MBAR, L.m0: L.M0,
             L.q0: L.Q0}
    one = {c_C: 1, c_train: 1}
    inst = {"tm": der["error_TM"].xreplace(one),
            "odg": der["error_C"].xreplace({GC[0](L.z): L.G[0](L.z), GC[1](L.z): L.G[1](L.z),
                                            **one}),
            "idg": der["error_C"].xreplace({GC[0](L.z): L.GT[0](L.z),
                                            GC[1](L.z): L.GT[1](L.z), **one})}
    return all(sympy.cancel(sympy.expand((e - L.error_expr(p).xreplace(typed))
                                         .xreplace(L.COMPLEMENT_ATOM))) == 0
               for p, e in inst.items())


def _check_unified_errors() -> bool:
    """The general-weight error at gamma = s (g_C = <s/(s - z)> = 1 + z g, g_C' = g + z g',
    c_C = c) equals the task-memorisation error computed with the weight s directly, the
    overlaps of the latter are the saddle-point equations of the free energy for m and q, and
    the test overlaps m_C, q_C computed here from the RS measure of the weights are the ones the
    solvers use (read off the saddle-point equations of the typed copy by their spectral
    weights): the differences cancel identically."""
    der = derived_test_overlaps()
    at_s = {GC[0](L.z): 1 + L.z * L.G[0](L.z), GC[1](L.z): L.G[0](L.z) + L.z * L.G[1](L.z),
            c_C: c_train}
    if sympy.cancel(sympy.expand(der["error_C"].xreplace(at_s) - der["error_TM"])) != 0:
        return False
    fp = dict(saddle().fixed_point)
    if not all(sympy.cancel(der[k] - fp[v]) == 0 for k, v in (("m", L.m), ("q", L.q),
                                                               ("qbar", L.qbar))):
        return False
    solver = MU.test_overlaps()
    return all(sympy.cancel(sympy.expand(der[k] - solver[k])) == 0 for k in ("m_C", "q_C"))


_A_POINT = ("powerlaw:1", "piano", 2, 3, sympy.Rational(1, 2), sympy.Rational(1, 4),
            sympy.Rational(1, 10))
_B_POINT = (2, sympy.Rational(1, 2), sympy.Rational(3, 2), sympy.Rational(1, 4),
            sympy.Rational(1, 10))


def _unified_numbers(train, test, alpha, tau, kappa, rho_a, lam_a, d=20, dps=40):
    from fractions import Fraction
    from ..spectra import parse_spec
    with mpmath.workdps(dps + 20):
        tr = parse_spec(train, d).diag_mp()
        te = parse_spec(test, d, "--test").diag_mp()
        fr = [mpmath.mpf(Fraction(str(v)).numerator) / Fraction(str(v)).denominator
              for v in (alpha, tau, kappa, rho_a, lam_a)]
        return solve_on_spectrum(fr[0], fr[1], fr[2], fr[1] * fr[4] / fr[2], mpmath.sqrt(fr[3]),
                                 tr, te, dps=dps + 10)


def _check_alignment_instance() -> bool:
    """Paper A's ridge equation is the conjugate equation under the map (symbolic, 0); its E_ICL
    and e_TM equal the unified errors exactly at four random rational points (every symbol,
    the transforms included); and at d = 20, with training eigenvalues proportional to 1/j and
    test eigenvalues proportional to d + 1 - j (j = 1..d) (alpha = 2,
    tau = 3, kappa = 1/2, rho_A = 1/4, lambda_A = 1/10) the unified saddle point, solved on its
    own with eq. (17) supplying g and g_C, gives the solver's E_ICL, e_TM and sigma_A to 30
    digits."""
    from fractions import Fraction
    from ..models.alignment_problem import PROBLEM as ALIGNMENT
    from ..numerics import agreement_digits
    from .base import cached_solver
    if paper_a_ridge_equation_difference() != 0:
        return False
    if any(paper_a_instance_difference(v) != {"error_C": 0, "error_TM": 0}
           for v in _random_rationals(4, seed=7)):
        return False
    train, test, alpha, tau, kappa, rho_a, lam_a = _A_POINT
    fr = [Fraction(str(v)) for v in (alpha, tau, kappa, rho_a, lam_a)]
    A = cached_solver(ALIGNMENT, 40)(alpha=fr[0], tau=fr[1], kappa=fr[2], rho=fr[3], lam=fr[4],
                                     d=20, train=train, test=test)
    u = _unified_numbers(*_A_POINT)
    with mpmath.workdps(40):
        return (agreement_digits(u["error_C"], A["e_icl"], 40) >= 30
                and agreement_digits(u["error_TM"], A["e_tm"], 40) >= 30
                and agreement_digits(-u["z"], A["sigma"], 40) >= 30)


def _check_isotropic_instance() -> bool:
    """C_train = C_test = I (alpha = 2, tau = 1/2, kappa = 3/2, rho = 1/4, lambda = 1/10): the
    unified saddle point gives paper B's closed-form ICL error and its e_IDG (the error on a
    pretraining task) to 30 digits."""
    from fractions import Fraction
    from ..models.isotropic_problem import PROBLEM as ISOTROPIC
    from ..numerics import agreement_digits
    from .base import cached_solver
    fr = [Fraction(str(v)) for v in _B_POINT]
    B = cached_solver(ISOTROPIC, 40)(alpha=fr[0], tau=fr[1], kappa=fr[2], rho=fr[3], lam=fr[4])
    u = _unified_numbers("identity", "identity", *_B_POINT)
    with mpmath.workdps(40):
        return (agreement_digits(u["error_C"], B["e_icl"], 40) >= 30
                and agreement_digits(u["error_TM"], B["e_idg"], 40) >= 30)


f_U, m_C_sym, q_C_sym, err_C_sym, err_TM_sym = sympy.symbols(
    "f_U m_C q_C varepsilon_C varepsilon_TM")
SYMBOL_NAMES = {c_train: "c", c_C: "c_C", rho_A: r"\rho_A", lam_A: r"\lambda_A",
                lt_A: r"\tilde{\lambda}", sigma_A: r"\sigma_A", f_U: "f", m_C_sym: "m_C",
                q_C_sym: "q_C", err_C_sym: r"\varepsilon_C", err_TM_sym: r"\varepsilon_{\rm TM}"}
"""LaTeX names of this module's symbols."""


@functools.lru_cache(maxsize=None)
def steps() -> tuple:
    """The unified free energy and the three built-in models as its instances, as steps."""
    from ..models import alignment as A
    from ..symbolic import Step
    der = derived_test_overlaps()
    ridge = PA.RIDGE_EQUATION.xreplace({A.M: L.G[0](-sigma_A), A.lambda_tilde: lt_A,
                                       A.lam: lam_A, A.tau: L.tau})
    return (
        Step("unified_free_energy",
             {"f": _eq(f_U, free_energy()), "eps": _eq(sympy.Symbol("varepsilon"), EPS)},
             "Computed: the steps of the previous section with the task power c = tr S/D kept "
             "as a symbol (it is the squared norm of a task over D in the residual covariance "
             "and in the context fluctuation, and the mean eigenvalue of S in the Stieltjes "
             "step); nothing else depends "
             "on the task law, which enters only through the spectrum of S, i.e. through g. "
             "This is the free energy for any training task covariance, and the one object "
             "the solvers of the three built-in models are computed from (the derived "
             "expression equals the solvers' copy identically).",
             _check_unified_free_energy),
        Step("unified_errors",
             {"m": _eq(m_C_sym, der["m_C"]), "q": _eq(q_C_sym, der["q_C"]),
              "err": _eq(err_C_sym, L.sigma_test**2 + c_C - 2 * m_C_sym + q_C_sym
                         + ETEST * L.qbar),
              "tm": _eq(err_TM_sym, L.sigma_test**2 + c_train - 2 * L.m + L.q
                        + ETEST.xreplace({c_C: c_train}) * L.qbar)},
             "Computed from the replica-symmetric measure of the weights: for a test task law "
             "N(0, C) with diagonal entries gamma in the eigenbasis of S, g_C(z) is the "
             "average of gamma/(s - z) over the spectrum and c_C = tr C/D; task memorisation is C = S (gamma = s), with the overlaps "
             "m, q and the isotropic overlap qbar of the saddle point.",
             _check_unified_errors),
        Step("instance_lowrank",
             {"c": _eq(c_train, 1)},
             "Low-rank tasks: c = 1; the test laws are C = S (TM), C = I (ODG: g_C = g) and "
             "the projector on the task subspace over rho (IDG: g_C the transform restricted "
             "to the subspace). The free energy is then [[free_energy_r1.f]] identically (the "
             "low-rank solver's free energy is this substitution) and the three errors "
             "are the solver's identically.", _check_lowrank_instance),
        Step("instance_alignment",
             {"sigma": _eq(L.sigma, PAPER_A_MAP[L.sigma]), "lam": _eq(L.lam, PAPER_A_MAP[L.lam]),
              "kq": _eq(L.kappa * L.qhat, kappa_qhat_at_saddle().xreplace(
                  {g0: L.G[0](-sigma_A)})),
              "ridge": _eq(ridge, 0)},
             "Arbitrary C_train and C_test: paper A's noise variance rho_A, its ridge "
             "normalisation and its effective noise sigma_A = -z and ridge lambdatilde = "
             "lambda/qhat; g(z) = M(-z) with M the resolvent trace of eq. (17). The "
             "alignment solver's equations are computed this way: its ridge equation is the "
             "conjugate equation (displayed with the alias), its effective noise the alias, q "
             "the memorisation conjugate over kappa qhat^2, e_scalar, K and E_ICL the unified "
             "test error under the map, and eq. (17) and M' the saddle point of the "
             "deterministic equivalent's log-determinant; paper A's stated equations are "
             "checked against them. Its E_ICL and e_TM are the unified "
             "errors exactly, and numerically on a power-law spectrum.",
             _check_alignment_instance),
        Step("instance_isotropic",
             {"c": _eq(c_train, 1), "cC": _eq(c_C, 1)},
             "Isotropic tasks (paper B): C_train = C_test = I, g the Marchenko--Pastur "
             "transform; the isotropic solver evaluates the alignment instance at the identity, "
             "and the unified saddle point gives paper B's closed forms.",
             _check_isotropic_instance),
    )


STEP_TITLES = {
    "unified_free_energy": "One free energy for every task covariance",
    "unified_errors": "Errors for any test covariance",
    "instance_lowrank": "Instance: low-rank tasks",
    "instance_alignment": "Instance: arbitrary pretraining and test covariances",
    "instance_isotropic": "Instance: isotropic tasks",
}
"""Headings of the steps in the appendix."""
