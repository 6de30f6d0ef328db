r"""The low-rank free energy (R1) and its observables, derived from the model with the Gaussian
replica calculus (:mod:`replica.symbolic.replica_calculus`).

The model (:mod:`replica.models.lowrank`): prompts :math:`\mu = 1..M`, :math:`M = \tau D^2`, each
with a task :math:`w_\mu` drawn from :math:`M_0 = \kappa D` fixed training tasks in a subspace of
rank :math:`r = \rho D`, a context of :math:`L = \alpha D` pairs :math:`(x_l, y_l)`,
:math:`x_l\sim N(0, I/D)`, :math:`y_l = w\cdot x_l + \sigma\epsilon_l`, and a query
:math:`(x, y)`. Linear attention predicts :math:`\hat y = x^\top\Gamma\hat w` with the one-step
estimate :math:`\hat w = \frac DL\sum_l y_lx_l`; training minimises the ridge loss (M6)
:math:`\frac12\sum_\mu(y_\mu - \hat y_\mu)^2 + \frac{\lambda\kappa D}2\|\Gamma\|_F^2`.

The computation is the general one of :mod:`replica.derivations.unified` (any task covariance,
task power :math:`c = \|w\|^2/D`), whose pieces this module instantiates at :math:`c = 1` and
checks; the rank enters only through the spectrum of :math:`S` (the transforms :math:`g`,
:math:`\tilde g`).

Steps (each a :class:`~replica.symbolic.Step` with a check; "computed" means SymPy produced the
displayed result from the previous one, "stated" names the reason and a numerical check):

1. **Context statistics** (computed, then checked on sampled contexts). By Gaussian moments,
   :math:`\mathbb E\hat w = w` and :math:`\operatorname{Cov}\hat w = \frac{\|w\|^2/D +
   \sigma^2}{\alpha}I + \frac{ww^\top}{L}`; with :math:`\|w\|^2/D = 1` the fluctuation
   :math:`\xi = \hat w - w` has variance :math:`\varepsilon = (1+\sigma^2)/\alpha` per component
   up to a rank-one part of relative size :math:`O(1/D)` in every normalised trace.
2. **Residual covariance** (computed; concentration stated). Over the query, the replicated
   residuals :math:`r^a = y - x^\top\Gamma^a\hat w` are Gaussian with covariance
   :math:`\sigma^2 + (w - \Gamma^a\hat w)\cdot(w - \Gamma^b\hat w)/D`, whose average over
   :math:`\xi` is :math:`K_{ab} = \sigma^2 + \|w\|^2/D - m_a - m_b + Q_{ab} + \varepsilon\bar Q_{ab}`
   plus :math:`O(1/D)`; the fluctuation of the quadratic form in :math:`\xi` around its mean
   vanishes as :math:`D\to\infty` (checked on samples).
3. **Energetic part** (computed). :math:`\mathbb E\prod_ae^{-\beta(r^a)^2/2} =
   \det(I + \beta K)^{-1/2}` (checked by quadrature at n = 1, 2); the prompts are independent
   given the tasks. **Task average** (stated: each task is seen about :math:`\tau D/\kappa` times
   and the per-task overlaps and susceptibilities concentrate on their mean; checked on the
   trained :math:`\Gamma` of simulations, :mod:`replica.derivations.task_average`: the task means
   are the traces below exactly, the spreads shrink like :math:`D^{-1/2}`, the means
   extrapolate to the theory): the per-task overlaps :math:`m_\nu = w_\nu^\top\Gamma w_\nu/D`,
   :math:`Q_\nu = w_\nu^\top\Gamma^\top\Gamma w_\nu/D` enter only through their mean over
   the training tasks,
   :math:`m = \operatorname{tr}(\Gamma S)/D`, :math:`Q_{ab} = \operatorname{tr}(\Gamma^aS
   \Gamma^{b\top})/D`, :math:`\bar Q_{ab} = \operatorname{tr}(\Gamma^{a\top}\Gamma^b)/D`, with the
   empirical task covariance :math:`S` and :math:`\operatorname{tr}S/D = 1`.
4. **Order parameters and conjugates** (computed). The overlaps are fixed by
   :math:`\delta`-functions in Fourier form, with RS conjugates :math:`\hat Q` (diagonal
   :math:`\hat Q_d`, off-diagonal :math:`-\hat Q_o`), :math:`\bar{\hat Q}` likewise and
   :math:`\hat m`; the coupling left behind is :math:`\frac12\operatorname{tr}\hat QQ +
   \frac12\operatorname{tr}\hat{\bar Q}\bar Q - n\hat mm` per :math:`\kappa D^2`.
5. **Entropic part** (computed, the factorisation checked on explicit matrices). The Gaussian
   integral over the replicated weights splits over the rows of :math:`\Gamma` and the
   eigenbasis of :math:`S`: per eigenvalue :math:`s` an RS scalar block
   :math:`\kappa(\beta\lambda I + \hat{\bar Q} + s\hat Q)` with field :math:`\kappa\hat ms`; the
   eigenvalue stays abstract in the spectral average :math:`\langle\cdot\rangle` of :math:`S`.
6. **Replica limit** :math:`n\to0` (computed, series in n) and **zero temperature** (computed):
   :math:`Q_d = q + \chi/\beta`, :math:`\bar Q_d = \bar q + \bar\chi/\beta`,
   :math:`\hat Q_d = \beta\hat q - \beta^2\hat\chi`, :math:`\hat Q_o = \beta^2\hat\chi` (and the
   same for the barred pair), :math:`\hat m\to\beta\hat m`; every part grows like
   :math:`\beta`, and :math:`f = -\lim\frac{1}{\beta n\kappa D^2}\log\mathbb EZ^n`.
7. **Stieltjes form** (computed): with :math:`\lambda = -\hat{\bar q} - z\hat q` (the alias of
   (R4)) each average is a rational function of :math:`s` with poles at :math:`s = z`, and
   partial fractions turn it into :math:`g(z)` and :math:`g'(z)`. The result is **identical** to
   the solver's (R1) (:data:`replica.models.lowrank.FREE_ENERGY`): the difference cancels with
   :math:`g` abstract. The only transformations used, none of which moves the extremum: terms
   independent of the order parameters are dropped (:math:`\frac n2\log 2\pi`,
   :math:`\log\kappa D`), as are terms of lower order in :math:`\beta` (the zero-temperature
   limit), and the conjugates are renamed by the scalings of step 6 (a change of variables).
8. **Observables** (computed): at :math:`n\to0`, the RS Gaussian measure of each weight
   coordinate is a mean plus a field shared by the replicas (variance read off the RS inverse)
   plus thermal noise of order :math:`1/\beta`: this is the effective problem (R10). For a test
   task covariance :math:`C` (diagonal entries :math:`c` in the eigenbasis of :math:`S`), the
   prediction :math:`\hat y` and the target :math:`y` of a test prompt are jointly Gaussian with
   :math:`\mathbb Ey^2 = \tilde\sigma^2 + \operatorname{tr}C/D`, :math:`\mathbb E\hat yy =
   m_C`, :math:`\mathbb E\hat y^2 = q_C + \tilde\varepsilon\bar q` (computed by Gaussian
   moments); :math:`C = S, P/\rho, I` give TM, IDG, ODG, and the RS averages of
   :math:`m_C, q_C` are :math:`m, q`, :math:`m_0, q_0`, :math:`\bar m, \bar q`, identical to the
   typed ones of :mod:`replica.models.lowrank` (and to the saddle-point equations (R5)--(R8)).
"""

from __future__ import annotations

import functools

import numpy as np
import sympy

from ..models import lowrank as L
from ..symbolic import Step
from ..symbolic.replica_calculus import (BETA, N_REPLICAS, RSBlock, check_against_explicit,
                                         gaussian_expectation, rs_gaussian_moments,
                                         stieltjes_form)
from ..symbolic.saddle import is_zero
from ..symbolic.spectral import LAMBDA_I, MU_I, SpectralAverage
from . import task_average as TA
from . import unified as U
# re-exported: the general pieces this derivation instantiates (the tests address them here)
from .unified import (ZERO_T_SCALINGS, Qbd, Qbhd, Qbho, Qd, Qhd, Qho,  # noqa: F401
                      conjugates, coordinate_law, coupling_log, energetic_log, entropic_block,
                      entropic_log_per_eigenvalue, mh, zero_temperature_part)
from .unified import lambda_from_z as _lambda_from_z

n, beta = N_REPLICAS, BETA
s = LAMBDA_I
"""An eigenvalue of the empirical task covariance S (summation variable of the averages)."""
c_test = MU_I
"""The diagonal entry of a test task covariance in the eigenbasis of S."""

D_sym = sympy.Symbol("D", positive=True)
Lc = sympy.Symbol("L", positive=True)
eps = L.EPS

SPECTRAL_MOMENTS = U.spectral_moments(1)
"""<1> = 1 and <s> = tr S / D = 1 (the tasks' normalisation ||w||^2 = D on average)."""


_transform = U.transform


# ---------------------------------------------------------------------------------------------
# 1. Context statistics
# ---------------------------------------------------------------------------------------------
D_EXPLICIT = 3


def context_moments(D: int = D_EXPLICIT):
    """``(w, mean, cov)`` of the one-step estimate for one context pair, computed by Gaussian moments
    at dimension ``D`` with symbolic task ``w`` (``D`` components), noise ``sigma`` and length
    ``L``: w_hat = (D/L) sum_l y_l x_l, the L pairs independent."""
    u = sympy.symbols(f"u1:{D + 1}", real=True)  # x = u / sqrt(D)
    e = sympy.Symbol("e_noise", real=True)
    w = sympy.symbols(f"w1:{D + 1}", real=True)
    x = [ui / sympy.sqrt(D) for ui in u]
    y = sum(wi * xi for wi, xi in zip(w, x)) + L.sigma * e
    vars_ = tuple(u) + (e,)
    Ey_x = [gaussian_expectation(y * xi, vars_, 1) for xi in x]
    Eyyxx = [[gaussian_expectation(y**2 * xi * xj, vars_, 1) for xj in x] for xi in x]
    mean = sympy.Matrix([D * v for v in Ey_x])  # (D/L) * L * E[y x]
    cov = sympy.Matrix(D, D, lambda i, j: sympy.expand(
        D**2 / Lc * (Eyyxx[i][j] - Ey_x[i] * Ey_x[j])))
    return sympy.Matrix(w), mean, cov


def context_covariance_formula(w, D, c=None):
    r""":math:`(c + \sigma^2)\frac DL I + \frac{ww^\top}L` with :math:`c = \|w\|^2/D`: the
    covariance the moments give. ``w`` a column of symbols at an explicit ``D`` (``c`` then read
    off ``w``), or a :math:`D\times 1` ``MatrixSymbol`` at a symbolic ``D`` with the symbol
    ``c`` naming its squared norm per dimension."""
    if c is None:
        c = (w.T * w)[0, 0] / D
    eye = sympy.eye(D) if isinstance(D, int) else sympy.Identity(D)
    return (c + L.sigma**2) * D / Lc * eye + w * w.T / Lc


W_TASK = sympy.MatrixSymbol("w", D_sym, 1)
"""The task vector at the symbolic dimension D (context statistics)."""


def _collect_matrix_terms(expr) -> dict:
    r"""``{factors: coefficient}`` of a matrix expression at dimension D, traces made cyclic and
    the task's squared norm named (:math:`w^\top w = Dc`), zero coefficients dropped: two
    expressions are equal when their tables are."""
    from ..symbolic.matrix_moments import expand_traces, replace_forms, terms

    out = {}
    for coeff, factors in terms(expr):
        factors = tuple(f for f in factors if not isinstance(f, sympy.Identity))
        coeff = replace_forms(expand_traces(coeff), {W_TASK.T * W_TASK: D_sym * U.c_train})
        out[factors] = sympy.expand(out.get(factors, 0) + coeff)
    return {k: v for k, v in out.items() if v != 0}


def _rebuild(table: dict):
    """The matrix expression of a :func:`_collect_matrix_terms` table."""
    return sympy.MatAdd(*[c * (sympy.MatMul(*f) if len(f) > 1 else f[0]) if f
                          else c * sympy.Identity(D_sym) for f, c in table.items()])


@functools.lru_cache(maxsize=None)
def context_moments_general_d():
    r"""``(mean, cov)`` of the one-step estimate :math:`\hat w = \frac DL\sum_{l=1}^L y_lx_l`
    computed at a symbolic dimension :math:`D` with matrix expressions
    (:mod:`replica.symbolic.matrix_moments`): for one pair, :math:`y x = x(x^\top w + \sigma e)`
    averaged over the label noise :math:`e\sim N(0, 1)` and the input :math:`x\sim N(0, I/D)`
    (the second moment :math:`\mathbb E[xx^\top ww^\top xx^\top]` by Isserlis' rule); the
    :math:`L` pairs independent, so :math:`\mathbb E\hat w = D\,\mathbb E[yx]` and
    :math:`\mathrm{Cov}\,\hat w = \frac{D^2}L(\mathbb E[y^2xx^\top] - \mathbb E[yx]
    \mathbb E[yx]^\top)`; the task's squared norm named :math:`\|w\|^2 = Dc`. Exact at every
    :math:`D`: :math:`\mathbb E\hat w = w`, :math:`\mathrm{Cov}\,\hat w = (c+\sigma^2)
    \frac DL I + \frac{ww^\top}L`."""
    from ..symbolic.matrix_moments import gaussian_average

    w, x = W_TASK, sympy.MatrixSymbol("x", D_sym, 1)
    e = sympy.MatrixSymbol("e", 1, 1)
    yx = x * (x.T * w + L.sigma * e)

    def average(expr):
        return gaussian_average(gaussian_average(expr, e, sympy.Identity(1)), x,
                                sympy.Identity(D_sym) / D_sym)
    first = average(yx)
    mean = _collect_matrix_terms((D_sym * first).doit())
    cov = _collect_matrix_terms((D_sym**2 / Lc * (average(yx * yx.T) - first * first.T))
                                .expand().doit())
    return _rebuild(mean), _rebuild(cov)


def _check_context_moments() -> bool:
    """The moments computed at a symbolic D are the mean w and the displayed covariance formula;
    independently, the component computation at D = 2 and 3 (symbolic w, sigma, L) gives the
    same mean and formula; with c = 1 (the squared norm of w equal to D) and L = alpha D the
    isotropic part is epsilon."""
    mean, cov = context_moments_general_d()
    if _collect_matrix_terms(mean) != _collect_matrix_terms(W_TASK):
        return False
    formula = context_covariance_formula(W_TASK, D_sym, U.c_train)
    if _collect_matrix_terms(cov) != _collect_matrix_terms(formula):
        return False
    for D in (2, D_EXPLICIT):
        w, mean_c, cov_c = context_moments(D)
        if mean_c != w:
            return False
        if sympy.expand(cov_c - context_covariance_formula(w, D)) != sympy.zeros(D, D):
            return False
    iso = _collect_matrix_terms(formula)[()]
    return sympy.simplify(iso.subs({U.c_train: 1, Lc: L.alpha * D_sym}) - eps) == 0


def sample_context_fluctuation(D: int, contexts: int, alpha=2, sigma=0.5, seed=0):
    """Sampled contexts for one task w (||w||^2 = D): returns ``(mean_error, trace_mean,
    trace_exact, trace_std)``: the norm of the sample mean of xi = w_hat - w in units of its
    standard error (about 1 when the mean is 0), the sample mean of ||xi||^2/D, its exact value
    eps + 1/(alpha D) from the formula, and the sample std of ||xi||^2/D (its concentration)."""
    rng = np.random.default_rng(seed)
    Lv = int(alpha * D)
    w = rng.standard_normal(D)
    w *= np.sqrt(D) / np.linalg.norm(w)
    xis = np.empty((contexts, D))
    chunk = 500
    for start in range(0, contexts, chunk):
        k = min(chunk, contexts - start)
        X = rng.standard_normal((k, Lv, D)) / np.sqrt(D)
        y = X @ w + sigma * rng.standard_normal((k, Lv))
        w_hat = D / Lv * np.einsum("kl,kld->kd", y, X)
        xis[start:start + k] = w_hat - w
    epsv = (1 + sigma**2) / alpha
    mean_err = np.linalg.norm(xis.mean(axis=0)) / np.sqrt((epsv * D + 1 / alpha) / contexts)
    t = (xis**2).sum(axis=1) / D
    return float(mean_err), float(t.mean()), epsv + 1 / (alpha * D), float(t.std())


CONTEXT_SIZES = (8, 16, 32, 64)
CONTEXT_SAMPLES = 2000


@functools.lru_cache(maxsize=None)
def context_table():
    """``{D: (mean_error, trace_mean, trace_exact, trace_std)}`` at alpha = 2, sigma = 1/2."""
    return {D: sample_context_fluctuation(D, CONTEXT_SAMPLES, seed=D) for D in CONTEXT_SIZES}


def _check_context_samples() -> bool:
    """Sampled contexts (2000 per size, D = 8..64, alpha = 2, sigma = 1/2): the sample mean of
    xi is 0 (its norm within 2 of its standard error, which it is about equal to when the mean
    vanishes), the sample mean of the squared norm of xi per dimension matches the exact
    eps + 1/(alpha D) within 4 standard errors (so its distance to the leading-order eps,
    1/(alpha D), halves with each doubling of D), and the standard deviation of that squared norm
    per dimension (the concentration the replica calculation relies on) shrinks by a factor of at
    least 1.3 per doubling of D (a decay like D^(-1/2) gives the square root of 2)."""
    tab = context_table()
    stds = []
    for D, (mean_err, tmean, texact, tstd) in tab.items():
        if mean_err > 2:
            return False
        if abs(tmean - texact) > 4 * tstd / np.sqrt(CONTEXT_SAMPLES):
            return False
        stds.append(tstd)
    return all(a / b > 1.3 for a, b in zip(stds, stds[1:]))


# ---------------------------------------------------------------------------------------------
# 2. Residual covariance
# ---------------------------------------------------------------------------------------------
def residual_covariance() -> RSBlock:
    r"""The general residual covariance (:func:`replica.derivations.unified.residual_covariance`)
    at the task power :math:`\|w\|^2/D = 1`."""
    return U.residual_covariance(1)


def _check_residual_covariance() -> bool:
    """The result computed at a symbolic D with matrix expressions is sigma^2 + c - m_a - m_b +
    Q_ab + eps Qbar_ab + Q_ab/L (c the task's squared norm per dimension), the last term the
    O(1/D) correction that is dropped; and, independently, at D = 2 with symbolic Gamma^a,
    Gamma^b and w, and the fluctuation xi = eps^(1/2) t + w t0/L^(1/2) (t and t0 standard
    Gaussian: the covariance of step 1), the Gaussian average over the query, its label noise and
    xi of r^a r^b, computed component by component, equals the general result with its forms
    written out."""
    D = 2
    Ga = sympy.Matrix(2, 2, sympy.symbols("a1:5", real=True))
    Gb = sympy.Matrix(2, 2, sympy.symbols("b1:5", real=True))
    w = sympy.Matrix(sympy.symbols("w1:3", real=True))
    u = sympy.symbols("u1:3", real=True)
    t = sympy.symbols("t1:3", real=True)
    t0, e = sympy.symbols("t0 e_noise", real=True)
    ev = sympy.Symbol("eps_v", positive=True)
    x = sympy.Matrix(u) / sympy.sqrt(D)
    xi = sympy.sqrt(ev) * sympy.Matrix(t) + w * t0 / sympy.sqrt(Lc)
    wh = w + xi
    y = (w.T * x)[0, 0] + L.sigma * e
    ra = y - (x.T * Ga * wh)[0, 0]
    rb = y - (x.T * Gb * wh)[0, 0]
    got = gaussian_expectation(ra * rb, tuple(u) + tuple(t) + (t0, e), 1)
    forms = {U.c_train: (w.T * w)[0, 0] / D, U.m_a: (w.T * Ga * w)[0, 0] / D,
             U.m_b: (w.T * Gb * w)[0, 0] / D, U.Q_ab: (w.T * Ga.T * Gb * w)[0, 0] / D,
             U.Qbar_ab: (Ga.T * Gb).trace() / D, U.eps_sym: ev, U.L_context: Lc}
    want = U.residual_covariance_general_d().subs(forms)
    if sympy.expand(got - want) != 0:
        return False
    typed = L.sigma**2 + U.c_train - U.m_a - U.m_b + U.Q_ab + U.eps_sym * U.Qbar_ab
    return sympy.expand(U.residual_covariance_general_d() - typed - U.Q_ab / U.L_context) == 0


# ---------------------------------------------------------------------------------------------
# 3. Energetic part, task average
# ---------------------------------------------------------------------------------------------
def gauss_hermite_average(f, K, nodes: int = 60) -> float:
    """E f(r) for r ~ N(0, K) (K an explicit n x n matrix, n <= 2) by Gauss-Hermite quadrature
    on r = chol(K) u (exponentially accurate for smooth integrands)."""
    x, wts = np.polynomial.hermite.hermgauss(nodes)
    u, wu = np.sqrt(2) * x, wts / np.sqrt(np.pi)
    Lk = np.linalg.cholesky(np.array(K, dtype=float))
    nv = Lk.shape[0]
    grids = np.meshgrid(*([u] * nv), indexing="ij")
    weights = np.prod(np.meshgrid(*([wu] * nv), indexing="ij"), axis=0)
    U = np.stack([g.ravel() for g in grids])
    return float((weights.ravel() * f(Lk @ U)).sum())


def _check_energetic() -> bool:
    """The Gaussian average of the product over a of exp(-beta r_a^2/2), for r Gaussian with
    covariance K, equals det(I + beta K)^(-1/2): by quadrature
    at n = 1 and 2 (RS K with numbers, to 1e-12), and the RS closed form of the determinant equals
    the explicit one for n = 1..6."""
    K = RSBlock.scalar(sympy.Rational(3, 4), sympy.Rational(1, 2))
    bv = sympy.Rational(3, 2)
    for nv in (1, 2):
        Kx = K.at(nv).explicit(nv)
        val = gauss_hermite_average(lambda r: np.exp(-float(bv) * (r**2).sum(axis=0) / 2),
                                    Kx.tolist())
        pred = float((RSBlock.scalar(1, 0) + K.scale(bv)).at(nv).det() ** sympy.Rational(-1, 2))
        if abs(val - pred) > 1e-12:
            return False
    I_plus = RSBlock.scalar(1, 0) + residual_covariance().scale(beta)
    vals = {beta: 3, Qd: sympy.Rational(7, 5), Qbd: 2, L.q: sympy.Rational(1, 2),
            L.qbar: sympy.Rational(1, 3), L.m: sympy.Rational(1, 3), L.sigma: sympy.Rational(1, 2),
            L.alpha: 2}
    return check_against_explicit(I_plus.det(), lambda k: I_plus.at(k).explicit(k, vals).det(),
                                  subs=vals)


TASK_SIZES = (50, 100, 200)


@functools.lru_cache(maxsize=None)
def task_spread_table(kappa=0.5, rho=0.5, zv=-0.5, seed=1):
    """``{D: (mean, relative_std, trace)}`` of the per-task quadratic form w_nu^T (S - z)^-1 w_nu
    / D over the kappa D training tasks of one sampled task set (tasks sqrt(D/r) A v, A a random
    orthonormal r-frame): its task average is tr(S (S - z)^-1)/D = 1 + z g(z) exactly, and the
    replica calculation takes every task's value equal to it. The resolvent stands for the
    response of the weights to one task (a susceptibility)."""
    rng = np.random.default_rng(seed)
    out = {}
    for D in TASK_SIZES:
        r, M0 = int(rho * D), int(kappa * D)
        A, _ = np.linalg.qr(rng.standard_normal((D, r)))
        W = np.sqrt(D / r) * A @ rng.standard_normal((r, M0))
        S = W @ W.T / M0
        R = np.linalg.inv(S - zv * np.eye(D))
        t = np.einsum("in,ij,jn->n", W, R, W) / D
        out[D] = (float(t.mean()), float(t.std() / t.mean()),
                  float(np.trace(S @ R) / D))
    return out


def _check_resolvent_average() -> bool:
    """The mean over tasks of w^T (S - z)^-1 w / D equals tr(S (S - z)^-1)/D (an exact
    identity) and its relative spread over the tasks shrinks with D."""
    tab = task_spread_table()
    spreads = []
    for D, (mean, rel, tr) in tab.items():
        if abs(mean - tr) > 1e-10:
            return False
        spreads.append(rel)
    return all(a / b > 1.25 for a, b in zip(spreads, spreads[1:]))


def _check_task_average() -> bool:
    return TA.check_trained() and _check_resolvent_average()


_check_task_average.__doc__ = (
    TA.check_text() + " (4) The same for the resolvent (S - z)^-1, which stands for a "
    "per-task susceptibility, at z = -1/2, kappa = rho = 1/2 and D = 50, 100, 200: the task "
    "mean of its quadratic forms is tr(S (S - z)^-1)/D to 1e-10 and their relative spread "
    "shrinks by more than 1.25 per doubling.")


# ---------------------------------------------------------------------------------------------
# 4. Coupling (delta functions in Fourier form)
# ---------------------------------------------------------------------------------------------
def _check_coupling() -> bool:
    """The RS coupling equals the one computed from explicit n-by-n matrices for n = 1..6."""
    Q = RSBlock.from_entries(Qd, L.q)
    Qb = RSBlock.from_entries(Qbd, L.qbar)
    Qh, Qbh = conjugates()

    def explicit(k):
        tr = (Qh.at(k).explicit(k) * Q.at(k).explicit(k)).trace() + (
            Qbh.at(k).explicit(k) * Qb.at(k).explicit(k)).trace()
        return tr / 2 - k * mh * L.m
    return check_against_explicit(coupling_log(), explicit)


# ---------------------------------------------------------------------------------------------
# 5. Entropic part
# ---------------------------------------------------------------------------------------------
def _full_entropic_log(nv, S, values):
    """log of the Gaussian integral over n replicas of an explicit D x D weight matrix, with the
    quadratic form and field written from the definitions of the overlaps (numbers)."""
    D = S.shape[0]
    G = [sympy.Matrix(D, D, sympy.symbols(f"g{a}_1:{D * D + 1}", real=True)) for a in range(nv)]
    flat = [x for Gm in G for x in Gm]
    Qh, Qbh = conjugates()
    Qhx = Qh.at(nv).explicit(nv).subs(values)
    Qbhx = Qbh.at(nv).explicit(nv).subs(values)
    kD = values[L.kappa] * D
    expo = 0
    for a in range(nv):
        for b in range(nv):
            expo -= kD / 2 * (values[beta] * values[L.lam] * int(a == b)
                              * (G[a].T * G[b]).trace() + Qbhx[a, b] * (G[a].T * G[b]).trace()
                              + Qhx[a, b] * (G[a] * S * G[b].T).trace())
        expo += kD * values[mh] * (G[a] * S).trace()
    expo = sympy.expand(expo)
    H = -sympy.hessian(expo, flat)
    h = sympy.Matrix([sympy.diff(expo, v).subs({x: 0 for x in flat}) for v in flat])
    N = len(flat)
    return N / 2 * sympy.log(2 * sympy.pi) - sympy.log(H.det()) / 2 + (h.T * H.inv() * h)[0, 0] / 2


def _check_entropic_factorisation() -> bool:
    """At D = 2 (a non-diagonal S = [[3/2, 1/2], [1/2, 1/2]]), n = 1 and 2, numbers for the
    conjugates: the explicit Gaussian integral over the replicated 2 x 2 weights equals
    kappa D^2 times the spectral average of the per-eigenvalue form, up to the constant
    -(n D^2/2) log D (independent of the order parameters), to 25 digits."""
    S = sympy.Matrix([[sympy.Rational(3, 2), sympy.Rational(1, 2)],
                      [sympy.Rational(1, 2), sympy.Rational(1, 2)]])
    values = {beta: 2, L.lam: sympy.Rational(1, 3), L.kappa: sympy.Rational(3, 2),
              Qhd: sympy.Rational(7, 4), Qho: sympy.Rational(1, 5), Qbhd: sympy.Rational(6, 5),
              Qbho: sympy.Rational(1, 7), mh: sympy.Rational(2, 3)}
    D = 2
    eig = list(S.eigenvals(multiple=True))
    for nv in (1, 2):
        full = _full_entropic_log(nv, S, values)
        per = entropic_log_per_eigenvalue().subs(n, nv).subs(values)
        factor = values[L.kappa] * D**2 * sum(per.subs(s, ev) for ev in eig) / D
        const = -nv * D**2 * sympy.log(D) / 2
        if abs(sympy.N(full - factor - const, 40)) > 1e-25:
            return False
    return True


def _check_entropic_part() -> bool:
    """The coordinate blocks computed at every D, divided by D (the conjugates' scaling), are
    the RS precision kappa (beta lambda I + Qbarhat + s Qhat) of the per-eigenvalue form and its
    field kappa mhat s (symbolic identity); and, independently, the explicit Gaussian integral
    at D = 2 equals the spectral average of the per-eigenvalue form (below)."""
    return U.check_entropic_block_general_d() and _check_entropic_factorisation()


# ---------------------------------------------------------------------------------------------
# 6.-7. Replica limit, zero temperature, Stieltjes form: the free energy
# ---------------------------------------------------------------------------------------------
def derive_free_energy(energetic=None, entropic=None, coupling=None, scalings=None):
    """The general derivation (:func:`replica.derivations.unified.derive_free_energy`) at the
    task power 1, with this module's parts (defaults: the correct ones; the tests pass wrong
    ones). Returns ``(f, powers, parts)``."""
    energetic = energetic_log(residual_covariance()) if energetic is None else energetic
    entropic = entropic_log_per_eigenvalue() if entropic is None else entropic
    return U.derive_free_energy(energetic, entropic, coupling, scalings, power=1)


@functools.lru_cache(maxsize=None)
def derived_free_energy():
    """``(f, powers, parts)`` of :func:`derive_free_energy` with the correct parts (memoised)."""
    return derive_free_energy()


def free_energy_difference(f) -> sympy.Expr:
    """f minus the solver's free energy, cancelled (g, g' abstract)."""
    return sympy.cancel(sympy.expand(f - L.FREE_ENERGY))


def _check_limits() -> bool:
    """Each part is O(n) (its replica limit exists) and grows exactly like beta at zero
    temperature (the beta^2 terms cancel)."""
    return derived_free_energy()[1] == (1, 1, 1)


def check_free_energy_equals_r1() -> bool:
    """The derived free energy minus the solver's free energy cancels identically (g, g'
    abstract)."""
    return free_energy_difference(derived_free_energy()[0]) == 0


# ---------------------------------------------------------------------------------------------
# 8. Observables from the RS measure
# ---------------------------------------------------------------------------------------------
def overlap_averages():
    r"""``(m_C, q_C)``: the general spectral averages
    (:func:`replica.derivations.unified.overlap_averages`) of this module's coordinate law."""
    return U.overlap_averages(coordinate_law())


def test_prompt_error(D: int = 2):
    """E (y - y_hat)^2 for a test prompt at D = 2: task w = C^(1/2) u (C = diag(c1, c2)), query
    x ~ N(0, I/D), label noise sigma_test, w_hat = w + sqrt(eps_test) t, symbolic Gamma;
    computed by Gaussian moments. Returns ``(moments, Gamma, C)`` with ``moments`` the dict of
    E y^2, E y y_hat, E y_hat^2."""
    Gm = sympy.Matrix(D, D, sympy.symbols("G1:5", real=True))
    cs = sympy.symbols("c1:3", positive=True)
    u = sympy.symbols("u1:3", real=True)
    xq = sympy.symbols("x1:3", real=True)
    t = sympy.symbols("t1:3", real=True)
    e = sympy.Symbol("e_noise", real=True)
    w = sympy.Matrix([sympy.sqrt(ci) * ui for ci, ui in zip(cs, u)])
    x = sympy.Matrix(xq) / sympy.sqrt(D)
    wh = w + sympy.sqrt(L.ETEST) * sympy.Matrix(t)
    y = (x.T * w)[0, 0] + L.sigma_test * e
    yh = (x.T * Gm * wh)[0, 0]
    vars_ = tuple(u) + tuple(xq) + tuple(t) + (e,)
    mom = {k: gaussian_expectation(v, vars_, 1) for k, v in
           (("yy", y * y), ("yyh", y * yh), ("yhyh", yh * yh))}
    return mom, Gm, sympy.diag(*cs)


@functools.lru_cache(maxsize=None)
def test_prompt_moments_general_d() -> dict:
    r"""``{"yy", "yyh", "yhyh"}``: :math:`\mathbb E y^2`, :math:`\mathbb E y\hat y`,
    :math:`\mathbb E\hat y^2` of a test prompt computed at a symbolic dimension :math:`D` with
    matrix expressions (:mod:`replica.symbolic.matrix_moments`): :math:`y = x^\top w +
    \tilde\sigma e`, :math:`\hat y = x^\top\Gamma\hat w`, :math:`\hat w = w +
    \sqrt{\varepsilon_{\rm test}}\,t`, averaged over the label noise :math:`e`, the
    fluctuation :math:`t\sim N(0, I)`, the query :math:`x\sim N(0, I/D)` and the task
    :math:`w\sim N(0, C)`, in that order (a form left inside a trace by one average is moved
    back into the product for the next); traces in canonical cyclic form."""
    from ..symbolic.matrix_moments import canonical_traces, gaussian_average, scalar

    x, t = (sympy.MatrixSymbol(v, D_sym, 1) for v in ("x", "t"))
    w = W_TASK
    e = sympy.MatrixSymbol("e", 1, 1)
    y = x.T * w + L.sigma_test * e
    yh = x.T * Gamma_mat * (w + sympy.sqrt(L.ETEST) * t)

    def average(expr):
        for v, cov in ((e, sympy.Identity(1)), (t, sympy.Identity(D_sym)),
                       (x, sympy.Identity(D_sym) / D_sym), (w, C_mat)):
            expr = gaussian_average(expr, v, cov)
        return canonical_traces(scalar(expr))
    return {"yy": average(y.T * y), "yyh": average(y.T * yh), "yhyh": average(yh.T * yh)}


def test_prompt_law_displayed() -> dict:
    """The displayed moments of a test prompt (symbolic D): sigma_test^2 + tr C/D, tr(Gamma
    C)/D and tr(Gamma C Gamma^T)/D + epsilon_test tr(Gamma^T Gamma)/D."""
    D, G, C = D_sym, Gamma_mat, C_mat
    return {"yy": L.sigma_test**2 + sympy.Trace(C) / D, "yyh": sympy.Trace(G * C) / D,
            "yhyh": sympy.Trace(G * C * G.T) / D + L.ETEST * sympy.Trace(G.T * G) / D}


def _check_test_prompt_law() -> bool:
    """The moments computed at a symbolic D equal the displayed E y^2 = sigma_test^2 + tr C/D,
    E y y_hat = tr(Gamma C)/D and E y_hat^2 = tr(Gamma C Gamma^T)/D + epsilon_test tr(Gamma^T
    Gamma)/D (traces compared in canonical cyclic form); independently, the component
    computation at D = 2 (symbolic Gamma, diagonal C) gives the displayed forms written out."""
    from ..symbolic.matrix_moments import canonical_traces

    shown = test_prompt_law_displayed()
    general = test_prompt_moments_general_d()
    if any(sympy.expand(general[k] - canonical_traces(shown[k])) != 0 for k in shown):
        return False
    mom, Gm, C = test_prompt_error()
    at_2 = {Gamma_mat.subs(D_sym, 2): Gm, C_mat.subs(D_sym, 2): C}
    return all(sympy.expand(mom[k] - shown[k].subs(D_sym, 2).subs(at_2).doit()) == 0
               for k in shown)


# The test covariances in the eigenbasis of S: TM C = S (c = s), ODG C = I (c = 1), IDG
# C = P/rho (c = mu/rho with mu = v^T P v; since the tasks lie in the subspace, P S = S: mu = 1
# wherever s > 0, and <mu> = tr P / D = rho).
RHO_TILDE_MOMENTS = {("w", 0): L.rho, ("w", 1): 1}


def _weighted_transform(k):
    """d^k/dz^k <mu/(s - z)> = rho gtilde^(k)(z) (the transform restricted to the subspace)."""
    return L.rho * L.GT[k](L.z)


def _g_to_gtilde(expr):
    """g = -(1 - rho)/z + rho gtilde and its derivative (the kernel of P carries the eigenvalue 0
    of S, with weight 1 - rho)."""
    rep = {L.G[0](L.z): -(1 - L.rho) / L.z + L.rho * L.GT[0](L.z),
           L.G[1](L.z): (1 - L.rho) / L.z**2 + L.rho * L.GT[1](L.z)}
    return sympy.sympify(expr).xreplace(rep)


@functools.lru_cache(maxsize=None)
def derived_observables() -> dict:
    """``{protocol: (m_X, q_X)}`` and ``{"error_<protocol>": ...}`` from the RS measure, in the
    Stieltjes form (TM: g; ODG: g; IDG: gtilde)."""
    m_c, q_c = overlap_averages()
    idg_moments = dict(SPECTRAL_MOMENTS)
    idg_moments.update(RHO_TILDE_MOMENTS)
    out = {}
    for prot in ("tm", "odg", "idg"):
        pair = []
        for e in (m_c, q_c):
            arg = e.args[0]
            if prot == "tm":
                pair.append(stieltjes_form(SpectralAverage(arg.xreplace({c_test: s})), L.z,
                                           _transform, SPECTRAL_MOMENTS))
            elif prot == "odg":
                pair.append(stieltjes_form(SpectralAverage(arg.xreplace({c_test: 1})), L.z,
                                           _transform, SPECTRAL_MOMENTS))
            else:
                pair.append(stieltjes_form(
                    SpectralAverage(arg.xreplace({c_test: c_test / L.rho})), L.z, _transform,
                    idg_moments, _weighted_transform, weight=c_test))
        out[prot] = tuple(pair)
    qbar = out["odg"][1]
    for prot, (mx, qx) in list(out.items()):
        out[f"error_{prot}"] = L.sigma_test**2 + 1 - 2 * mx + qx + L.ETEST * qbar
    return out


def _typed_observables() -> dict:
    fp = L.fixed_point_equations()
    return {"tm": (fp[L.m], fp[L.q]), "odg": (L.MBAR, fp[L.qbar]), "idg": (L.M0, L.Q0)}


def derived_susceptibilities() -> dict:
    """chi = beta (Q_d - q) and chibar = beta (Qbar_d - qbar) from the thermal variance of the RS
    measure: the coefficient of 1/beta, averaged with weight s (Q) or 1 (Qbar)."""
    p, th = coordinate_law()["thermal"]
    th = sympy.cancel(_lambda_from_z(th))
    return {L.chi: stieltjes_form(SpectralAverage(s * th), L.z, _transform, SPECTRAL_MOMENTS),
            L.chibar: stieltjes_form(SpectralAverage(th), L.z, _transform, SPECTRAL_MOMENTS)}


def _check_observables() -> bool:
    """The overlaps from the RS measure equal the solver's closed forms: (m, q) the saddle-point equations
    derived from the free energy; (mbar, qbar) and (m0, q0) the observables of the solver -- after
    g = -(1 - rho)/z + rho gtilde (g, gtilde abstract); and the susceptibilities from its thermal
    variance are the solver's chi and chibar equations."""
    fp = L.fixed_point_equations()
    if not all(is_zero(v - fp[k]) for k, v in derived_susceptibilities().items()):
        return False
    der, typed = derived_observables(), _typed_observables()
    for prot in ("tm", "odg", "idg"):
        for a, b in zip(der[prot], typed[prot]):
            if not is_zero(_g_to_gtilde(a) - _g_to_gtilde(b)):
                return False
    return True


def _check_errors() -> bool:
    """The errors computed as {E_y2} - 2 {E_y_yhat} + {E_yhat2} under the RS measure equal the
    solver's TM, IDG and ODG errors with its closed-form overlaps."""
    der = derived_observables()
    ov = {L.m: _typed_observables()["tm"][0], L.q: _typed_observables()["tm"][1],
          L.qbar: _typed_observables()["odg"][1], L.mbar: L.MBAR, L.m0: L.M0, L.q0: L.Q0}
    for prot in L.ERROR_KEYS:
        typed = L.error_expr(prot).xreplace(ov)
        if not is_zero(_g_to_gtilde(der[f"error_{prot}"] - typed)):
            return False
    return True


def _check_coordinate_law() -> bool:
    """The RS moments of one coordinate at n -> 0: mean and common variance of order beta^0, the
    thermal variance of order 1/beta (it does not enter the overlaps); and the RS closed forms of
    the moments equal the explicit inverse of the precision matrix for n = 1..6."""
    law = coordinate_law()
    if (law["mean"][0], law["common"][0], law["thermal"][0]) != (0, 0, -1):
        return False
    M = RSBlock.scalar(sympy.Symbol("a", positive=True), sympy.Symbol("b", real=True))
    h = sympy.Symbol("h", real=True)
    mom = rs_gaussian_moments(M, h)
    vals = {sympy.Symbol("a", positive=True): sympy.Rational(5, 2),
            sympy.Symbol("b", real=True): sympy.Rational(-1, 3), h: sympy.Rational(3, 7)}

    def explicit_mean(k):
        inv = M.at(k).explicit(k).inv()
        return (inv * sympy.Matrix([h] * k))[0]

    def explicit_common(k):
        return M.at(k).explicit(k).inv()[0, 1] if k > 1 else mom["common"].subs(n, 1)

    def explicit_var(k):
        return M.at(k).explicit(k).inv()[0, 0]
    return (check_against_explicit(mom["mean"], explicit_mean, subs=vals)
            and check_against_explicit(mom["common"], explicit_common, ns=range(2, 7),
                                       subs=vals)
            and check_against_explicit(mom["thermal"] + mom["common"], explicit_var, subs=vals))


# ---------------------------------------------------------------------------------------------
# The steps
# ---------------------------------------------------------------------------------------------
def _eq(lhs, rhs):
    return sympy.Eq(lhs, rhs, evaluate=False)


def _residual_forms() -> dict:
    """The displayed definitions of the replicas' overlaps named in the general-D residual
    covariance (matrix expressions at dimension D)."""
    D = U.D_dim
    Ga, Gb = sympy.MatrixSymbol("Gamma_a", D, D), sympy.MatrixSymbol("Gamma_b", D, D)
    w = sympy.MatrixSymbol("w", D, 1)
    return {"m_a": _eq(U.m_a, w.T * Ga * w / D),
            "Q_ab": _eq(U.Q_ab, w.T * Ga.T * Gb * w / D),
            "Qbar_ab": _eq(U.Qbar_ab, sympy.Trace(Ga.T * Gb) / D)}


Gamma_mat = sympy.MatrixSymbol("Gamma", D_sym, D_sym)
S_mat = sympy.MatrixSymbol("S", D_sym, D_sym)
C_mat = sympy.MatrixSymbol("C", D_sym, D_sym)
w_nu = sympy.MatrixSymbol("w_nu", D_sym, 1)
e_1 = sympy.MatrixSymbol("e_1", D_sym, 1)
M_NU, Q_NU, C_NU = sympy.symbols("m_nu Q_nu c_nu")
DELTA_M, DELTA_Q = sympy.symbols("delta_m delta_q")


@functools.lru_cache(maxsize=None)
def steps() -> tuple:
    """The derivation from the model to (R1) and the observables, as steps."""
    mean, cov = context_moments_general_d()
    f, _, parts = derived_free_energy()
    K = residual_covariance()
    K_entries = RSBlock.scalar(sympy.Symbol("Delta_K"), sympy.Symbol("K_0"))
    der = derived_observables()
    law = coordinate_law()
    Ksym, fsym = sympy.symbols("K_ab f")
    err = {p: sympy.Symbol(f"varepsilon_{p.upper()}") for p in L.ERROR_KEYS}
    over = {"tm": (L.m, L.q), "odg": (L.mbar, L.qbar), "idg": (L.m0, L.q0)}
    return (
        Step("context_statistics",
             {"mean": _eq(sympy.Symbol("E_w_hat"), mean),
              "cov": _eq(sympy.Symbol("Cov_w_hat"), cov),
              "eps": _eq(sympy.Symbol("varepsilon"), eps)},
             "Computed at every dimension {D} with matrix expressions: the Gaussian moments of "
             "one context pair (the fourth moment of the input by Isserlis' rule), the {L} pairs "
             "independent, give the mean and the covariance of the one-step estimate, with "
             "{c} the task's squared norm per dimension. With c = 1 and {L} = {alpha} {D} its "
             "isotropic part is {eps} per component; the rank-one rest is of order 1/{D} in every "
             "normalised trace. The same moments computed component by component at {D} = 2 and "
             "3 are the check.", _check_context_moments),
        Step("context_samples",
             {"eps": _eq(sympy.Symbol("varepsilon"), eps)},
             "Checked on sampled contexts: the fluctuation has mean 0, its normalised squared "
             "norm has the predicted mean and concentrates as D grows.", _check_context_samples),
        Step("residual_covariance",
             {"K_general": _eq(Ksym, U.residual_covariance_general_d().subs(U.c_train, 1)),
              **_residual_forms(),
              "K": _eq(Ksym, K.B[0, 0] + sympy.KroneckerDelta(*sympy.symbols("a b"))
                       * K.A[0, 0])},
             "Computed at every dimension {D}, with matrix expressions and the second-moment "
             "rules of Gaussian vectors: averaging the product of the residuals of replicas a "
             "and b over the label noise, the query and the context fluctuation (whose "
             "covariance is step 1's) gives the first display, written with the overlaps "
             "defined next (and likewise for replica b) and a task of squared norm {D}. Its term with 1/{L} "
             "is of order 1/{D} because {L} = {alpha} {D}, and is dropped; replica symmetry "
             "then gives the last display. "
             "The finite context enters only through {eps} times the isotropic overlap.",
             _check_residual_covariance),
        Step("energetic_part",
             {"G_E": _eq(sympy.Symbol("G_E"), energetic_log(K_entries)),
              "K_gap": _eq(K_entries.A[0, 0], K.A[0, 0]),
              "K_off": _eq(K_entries.B[0, 0], K.B[0, 0])},
             "Computed: the Gaussian average of the replicated Boltzmann factors of the tau D^2 "
             "independent prompts is a determinant of I + beta K, written with the two entries "
             "of the RS matrix K (its replica-diagonal excess and its common part).",
             _check_energetic),
        Step("task_average",
             {"m_nu": _eq(M_NU, w_nu.T * Gamma_mat * w_nu / D_sym),
              "Q_nu": _eq(Q_NU, w_nu.T * Gamma_mat.T * Gamma_mat * w_nu / D_sym),
              "m": _eq(L.m, sympy.Trace(Gamma_mat * S_mat) / D_sym),
              "q": _eq(L.q, sympy.Trace(Gamma_mat * S_mat * Gamma_mat.T) / D_sym),
              "qbar": _eq(L.qbar, sympy.Trace(Gamma_mat.T * Gamma_mat) / D_sym),
              "c_nu": _eq(C_NU, e_1.T * w_nu * e_1.T * Gamma_mat * w_nu),
              "table": TA.table({"D": D_sym, "m_nu": M_NU, "Q_nu": Q_NU, "c_nu": C_NU,
                                 "delta_m": DELTA_M, "delta_q": DELTA_Q})},
             "Stated (the tasks are quenched; each of the {kappa} {D} training tasks is seen "
             "about {tau} {D}/{kappa} times, and the per-task overlaps and susceptibilities "
             "concentrate on their mean): for a prompt with task {w_nu} the residual covariance "
             "holds the per-task overlaps of the first two displays, and the computation "
             "replaces them by their mean over the training tasks, which is exactly the trace "
             "over the empirical task covariance S of the next three displays. Checked on the "
             "trained {Gamma} of the simulations (exact ridge regression over the sampled "
             "prompts, [[task_average.table]]): the task means equal the traces to rounding; "
             "the relative spreads over the tasks decrease like {D}^(-1/2), while the "
             "contribution of one coordinate (the last display, {e_1} the first basis vector) "
             "does not concentrate; and the task means extrapolate to the theory's {m} and {q} "
             "as {D} -> infinity.", _check_task_average,
             stated="the per-task overlaps and susceptibilities concentrate on their mean "
                    "over the training tasks; the check measures this on the trained Gamma at "
                    "one point, it does not prove it"),
        Step("coupling",
             {"G_C": _eq(sympy.Symbol("G_C"), coupling_log())},
             "Computed: the overlaps are fixed by delta-functions in Fourier form with RS "
             "conjugates; this is the exponent they leave.", _check_coupling),
        Step("entropic_part",
             {**{f"rotated_{k}": _eq(a, b)
                 for k, (a, b) in enumerate(U.weight_exponent_general_d()["forms"], 1)},
              "P": _eq(sympy.Symbol("P_ab"), U.weight_exponent_general_d()["pair"]),
              "h": _eq(sympy.Symbol("h_j"), U.weight_exponent_general_d()["field"]),
              "G_S": _eq(sympy.Symbol("G_S"), entropic_log_per_eigenvalue())},
             "Computed at every dimension {D}: in the eigenbasis of S (S = U Lambda U^T, the "
             "weights rotated on both sides by the orthogonal U, whose Jacobian is 1) the three "
             "traces of the weight exponent become the first three displays, and for the "
             "diagonal Lambda each is a sum over the coordinates (i, j) of the rotated weights. "
             "So the exponent is a sum over coordinates of quadratic forms in the n replicas, "
             "with the pair matrix and the field displayed next (the eigenvalue is the one of "
             "column j; the field sits only on the diagonal coordinates). Per eigenvalue it is "
             "an RS Gaussian integral, the last display.",
             _check_entropic_part),
        Step("zero_temperature_limit",
             {k: _eq(sympy.Symbol(f"f_{k}"), v) for k, v in parts.items()},
             "Computed: each part is O(n); its replica limit, with the zero-temperature "
             "scalings, grows like beta, and minus the coefficient is the free energy.",
             _check_limits),
        Step("derived_free_energy",
             {"f": _eq(fsym, f)},
             "Computed: with lambda = -qbarhat - z qhat the spectral averages become g and g' "
             "by partial fractions; the result is identical to the solver's free energy (dropped: "
             "constants and "
             "lower orders in beta; the conjugates renamed by the scalings).",
             check_free_energy_equals_r1),
        Step("rs_measure",
             {k: _eq(sympy.Symbol(f"law_{k}"), v[1]) for k, v in law.items()},
             "Computed: at n -> 0 each weight coordinate is a mean plus a field shared by the "
             "replicas (an effective single-matrix ridge problem) plus thermal noise of order 1/beta.",
             _check_coordinate_law),
        Step("test_prompt_law",
             {k: _eq(sympy.Symbol(name), test_prompt_law_displayed()[k])
              for k, name in (("yy", "E_y2"), ("yyh", "E_y_yhat"), ("yhyh", "E_yhat2"))},
             "Computed at every dimension {D} with matrix expressions: the second moments of "
             "prediction and target of a test prompt, averaged over the label noise, the "
             "context fluctuation, the query and the task; the error is {E_y2} - 2 {E_y_yhat} "
             "+ {E_yhat2}. The same moments computed component by component at {D} = 2 are "
             "the check.", _check_test_prompt_law),
        Step("derived_observables",
             {f"{k}_{p}": _eq(over[p][i], der[p][i]) for p in ("tm", "idg", "odg")
              for i, k in enumerate(("m", "q"))},
             "Computed: the RS averages of the overlaps for C = S, P/rho, I equal the "
             "saddle-point equations and the solver's closed-form observables.", _check_observables),
        Step("derived_errors",
             {p: _eq(err[p], der[f"error_{p}"]) for p in L.ERROR_KEYS},
             "Computed: the three errors equal the solver's TM, IDG and ODG errors.", _check_errors),
    )


STEP_TITLES = {
    "context_statistics": "Context statistics: the one-step estimate",
    "context_samples": "The one-step estimate on sampled contexts",
    "residual_covariance": "Replicated residuals",
    "energetic_part": "Energetic part",
    "task_average": "Average over the prompts' tasks",
    "coupling": "Order parameters and conjugates",
    "entropic_part": "Entropic part: the Gaussian integral over the weights",
    "zero_temperature_limit": "Replica limit and zero temperature",
    "derived_free_energy": "The free energy, derived",
    "rs_measure": "The replica-symmetric measure of the weights",
    "test_prompt_law": "Prediction and target of a test prompt",
    "derived_observables": "Overlaps from the replica-symmetric measure",
    "derived_errors": "Errors from the replica-symmetric measure",
}
"""Headings of the steps in the appendix."""
