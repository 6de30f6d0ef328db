r"""The LASSO on a sparse Gauss--Bernoulli teacher with Gaussian covariates: risk and order
parameters from the replica-symmetric saddle point, with the soft-thresholding proximal operator
inside Gaussian integrals.

Setting: a teacher :math:`w^* \in \mathbb R^d` with i.i.d. entries :math:`w^*_i = B_i g_i`,
:math:`B_i \sim \mathrm{Bernoulli}(\varepsilon)`, :math:`g_i \sim N(0, 1)` (``--eps``: the
fraction of non-zero entries); :math:`n = \alpha d` samples :math:`x_\mu \sim N(0, I_d)` with
labels :math:`y_\mu = x_\mu\cdot w^*/\sqrt d + \sigma\xi_\mu`, :math:`\xi_\mu \sim N(0, 1)`. The
estimator is the LASSO

.. math::  \hat w = \arg\min_w \tfrac12\sum_\mu \big(y_\mu - x_\mu\cdot w/\sqrt d\big)^2
           + \lambda\sum_i |w_i| .

Order parameters :math:`m = \hat w\cdot w^*/d`, :math:`q = \hat w\cdot\hat w/d`, the
susceptibility :math:`V`, conjugates :math:`\hat m, \hat q, \hat V`.

**Stated** (the zero-temperature replica-symmetric free energy of a separable penalty
:math:`r` and the square loss on Gaussian covariates; the same calculus as
``examples/ridge_regression.py``, whose ridge case the library derives in
:mod:`replica.derivations.gaussian_ridge`; for the LASSO it is proved by Bayati and Montanari,
"The LASSO risk for Gaussian matrices", IEEE Trans. Inf. Theory 2012, via approximate message
passing, and by Thrampoulidis, Abbasi and Hassibi's convex Gaussian min-max theorem, 2018):

.. math::
    \Phi = -m\hat m + \tfrac12 q\hat V - \tfrac12 V\hat q
      + \mathbb E_{w^*, Z}\max_w\Big[-\tfrac{\hat V}{2}w^2 + (\hat m w^* + \sqrt{\hat q}Z)w
      - r(w)\Big] - \frac{\alpha}{2}\,\frac{\varepsilon - 2m + q + \sigma^2}{1 + V}.

(With :math:`r(w) = \lambda w^2/2` this is the ridge example's free energy at :math:`C = I`.)

**Derived** (here). For :math:`r(w) = \lambda|w|` the inner maximum is attained at the
soft-thresholding (proximal) operator :math:`\hat w = \eta(b; \lambda)/\hat V`,
:math:`\eta(b; \lambda) = \operatorname{sign}(b)(|b| - \lambda)_+`, with
:math:`b = \hat m w^* + \sqrt{\hat q}Z`, and its value is
:math:`(|b| - \lambda)_+^2/(2\hat V)`. The prior average is a finite sum over the Bernoulli part
and a Gaussian integral over the rest: for :math:`w^* = 0`, :math:`b = \sqrt{\hat q}Z`; for
:math:`w^* \sim N(0, 1)`, :math:`b \sim N(0, \hat m^2 + \hat q)`; so the entropic term is

.. math::
    (1 - \varepsilon)\,P(\sqrt{\hat q}) + \varepsilon\,P\big(\sqrt{\hat m^2 + \hat q}\big),
    \qquad P(s) = \frac{1}{2\hat V}\int\mathcal Dz\,\Big[(sz - \lambda)^2\theta(sz - \lambda)
      + (sz + \lambda)^2\theta(-sz - \lambda)\Big],

two Gaussian integrals (:func:`replica.modeling.gauss`) with kinks at the thresholds
:math:`z = \pm\lambda/s`, which the engine uses as quadrature breakpoints, differentiated under
the integral sign. (The function of :math:`\hat m` is the same for the joint average over
:math:`(w^*, Z)` and for the law of :math:`b`, so its derivatives agree too.) The stationarity
conditions are :math:`\hat m = \hat V = \alpha/(1 + V)`,
:math:`\hat q = \alpha(\varepsilon - 2m + q + \sigma^2)/(1 + V)^2`, and
:math:`m = \mathbb E\,w^*\hat w`, :math:`q = \mathbb E\,\hat w^2`,
:math:`V = \mathbb E\,\eta'/\hat V` (Stein's lemma). They are Bayati and Montanari's calibrated
state evolution in this normalisation: with :math:`\tau^2 = (\sigma^2 + \mathrm{risk})/\alpha` the
effective noise and :math:`\zeta = \lambda(1 + V)/\alpha` the threshold,
:math:`\hat w = \eta(w^* + \tau Z; \zeta)`, :math:`\lambda = \zeta(\alpha - \mathbb E\eta')`;
the tests solve that form separately with closed-form Gaussian moments.

Reported: ``errors.risk`` :math:`= \|\hat w - w^*\|^2/d = \varepsilon - 2m + q`;
``errors.test`` :math:`= \sigma^2 + \mathrm{risk}` (a new sample's squared error);
``errors.train`` :math:`= (\varepsilon - 2m + q + \sigma^2)/(1 + V)^2` (the training residual
is the cavity residual divided by :math:`1 + V`, as for any square loss); ``sparsity.nonzero``
:math:`= \mathbb E\eta' = \alpha V/(1 + V)`, the fraction of non-zero entries of :math:`\hat w`.

**Replica-symmetry stability** (reported as ``stability.replicon``; ``replica solve`` says
whether the solution is stable). *Stated* (the de Almeida--Thouless condition of convex
estimation with a separable penalty on Gaussian covariates, Gerace et al., ICML 2020 and Aubin
et al., NeurIPS 2020, appendices on the stability of the replica-symmetric solution; stated,
not re-derived from the replicated free energy): the replicon

.. math::  \lambda_{\rm AT} = 1 - \alpha\,\mathbb E\big[(\partial_\omega g_{\rm out})^2\big]\,
           \mathbb E_{w^*, Z}\big[(\partial_b f_w)^2\big]

must be positive, with :math:`g_{\rm out} = (\operatorname{prox}(\omega) - \omega)/V` the loss's
and :math:`f_w(b)` the penalty's maximiser. *Derived* (here): for the square loss the proximal
map of :math:`\tfrac12(y - p)^2` is :math:`p = (\omega + Vy)/(1 + V)`, so
:math:`g_{\rm out} = (y - \omega)/(1 + V)` and :math:`(\partial_\omega g_{\rm out})^2 = 1/(1 + V)^2`
at every label; the soft threshold :math:`f_w = \eta(b; \lambda)/\hat V` is piecewise linear with
slope :math:`1/\hat V` where :math:`|b| > \lambda` and :math:`0` where :math:`|b| < \lambda`, so
:math:`(\partial_bf_w)^2 = [\theta(b - \lambda) + \theta(-b - \lambda)]/\hat V^2`, averaged over
the prior as the entropic term is:

.. math::
    \lambda_{\rm AT} = 1 - \frac{\alpha}{(1 + V)^2\hat V^2}\Big[(1 - \varepsilon)N(\sqrt{\hat q})
      + \varepsilon N\big(\sqrt{\hat m^2 + \hat q}\big)\Big],\qquad
    N(s) = \int\mathcal Dz\,\big[\theta(sz - \lambda) + \theta(-sz - \lambda)\big],

Gaussian integrals whose integrands jump at the same thresholds :math:`z = \pm\lambda/s` as the
free energy's kinks (the engine splits the integrals there). :math:`N` is the probability that
a coordinate's field passes the threshold, so the bracket is :math:`\mathbb E\eta'`, the
fraction of non-zero entries of :math:`\hat w`. At the saddle point
:math:`\hat V = \alpha/(1 + V)`, hence

.. math::  \lambda_{\rm AT} = 1 - \frac{\|\hat w\|_0}{n} = 1 - \frac{\mathbb E\eta'}{\alpha}
           = \frac{1}{1 + V}

(with :math:`\mathbb E\eta' = \alpha V/(1 + V)`, the stationarity condition for :math:`V`): the
replicon is one minus the number of non-zero estimates per sample. It is positive at every
solution with finite :math:`V`, i.e. for every :math:`\lambda > 0`: replica symmetry is stable
and there is no AT line in the :math:`(\alpha, \lambda)` plane (``replica phase-diagram`` says
so). It tends to zero only as the support fills the samples, :math:`\|\hat w\|_0 \to n`:
for columns of :math:`X` in general position (with probability one for Gaussian covariates) the
LASSO solution is unique and has at most :math:`\min(n, d)` non-zero entries (Tibshirani, "The
lasso problem and uniqueness", Electron. J. Stat. 2013), so the replicon can only vanish where
the support reaches :math:`n`: with noise (:math:`\sigma > 0`) at :math:`\alpha < 1` that is the
limit :math:`\lambda \to 0^+`, where the LASSO tends to the minimum-:math:`\ell_1` interpolator
with :math:`n` non-zero entries. The tests compare the replicon with the fraction of non-zero
entries of FISTA fits (the simulation reports ``stability.replicon`` as
:math:`1 - \|\hat w\|_0/n` of each fit).

The noiseless :math:`\lambda \to 0^+` limit (basis pursuit) and its Donoho--Tanner phase
transition are ``examples/lasso_phase_transition.py``.

Simulation (``SIMULATION`` below): at dimension :math:`d`, :math:`n = \mathrm{round}(\alpha d)`
samples, the teacher and labels as above, the LASSO solved by FISTA (Beck and Teboulle) with step
:math:`1/L`, :math:`L = \|X/\sqrt d\|_2^2`, and gradient restarts, until a step moves
:math:`w` by less than :math:`10^{-10}\max(1, \|w\|)`; measured: the risk, training error and
fraction of non-zero entries of that instance, and :math:`1 - \|\hat w\|_0/n` as its replicon.

    replica solve --model examples/lasso.py --alpha 1/2 --eps 1/10 --lam 1/2 --sigma 1/10 --json
    replica simulate --model examples/lasso.py --alpha 1 --eps 1/5 --lam 3/10 --sigma 1/5 \
        --d 400 --seeds 20 --json
"""

import numpy as np
import sympy

from replica.capabilities import Simulation
from replica.modeling import Parameter, Rule, SaddlePointModel, Stability, gauss

alpha, lam, eps = sympy.symbols("alpha lam eps", positive=True)
sigma = sympy.Symbol("sigma", nonnegative=True)
m, q, V = sympy.symbols("m q V", real=True)
mhat, qhat, Vhat = sympy.symbols("mhat qhat Vhat", real=True)
z = sympy.Symbol("z", real=True)


def soft_threshold_energy(s):
    r""":math:`\int\mathcal Dz\,\max_w[-\hat V w^2/2 + s z w - \lambda|w|]
    = \int\mathcal Dz\,(|sz| - \lambda)_+^2/(2\hat V)`, the two sides of the threshold written
    out (kinks at :math:`z = \pm\lambda/s`)."""
    return (gauss((s * z - lam) ** 2 * sympy.Heaviside(s * z - lam), z)
            + gauss((s * z + lam) ** 2 * sympy.Heaviside(-s * z - lam), z)) / (2 * Vhat)


def nonzero_probability(s):
    r""":math:`N(s) = \int\mathcal Dz\,[\theta(sz - \lambda) + \theta(-sz - \lambda)]`: the
    probability that the field :math:`sz` passes the threshold, i.e. the average of
    :math:`\hat V^2(\partial_bf_w)^2` (jumps at :math:`z = \pm\lambda/s`)."""
    return gauss(sympy.Heaviside(s * z - lam), z) + gauss(sympy.Heaviside(-s * z - lam), z)


PRIOR = ((1 - eps) * soft_threshold_energy(sympy.sqrt(qhat))
         + eps * soft_threshold_energy(sympy.sqrt(mhat**2 + qhat)))
RISK = eps - 2 * m + q
SLOPE_SQUARED = ((1 - eps) * nonzero_probability(sympy.sqrt(qhat))
                 + eps * nonzero_probability(sympy.sqrt(mhat**2 + qhat))) / Vhat**2
"""E[(d_b f_w)^2] over the Gauss-Bernoulli prior."""
REPLICON = 1 - alpha * SLOPE_SQUARED / (1 + V) ** 2
"""The replicon 1 - alpha E[(d_omega g_out)^2] E[(d_b f_w)^2], (d_omega g_out)^2 = 1/(1 + V)^2."""
FREE_ENERGY = (-m * mhat + q * Vhat / 2 - V * qhat / 2 + PRIOR
               - alpha * (RISK + sigma**2) / (2 * (1 + V)))

MODEL = SaddlePointModel(
    "lasso",
    title="LASSO on a Gauss-Bernoulli teacher with Gaussian covariates",
    free_energy=FREE_ENERGY,
    pairs=[(m, mhat), (q, Vhat), (V, qhat)],
    parameters=[
        Parameter("alpha", "samples per dimension n/d"),
        Parameter("eps", "fraction of non-zero teacher entries"),
        Parameter("lam", "l1 penalty lambda (objective sum of squares / 2 + lambda |w|_1)"),
        Parameter("sigma", "label-noise standard deviation", domain="nonnegative"),
    ],
    rules=[Rule("eps", lambda p: p.eps > 1, "eps is a fraction of entries: at most 1")],
    observables={"errors": {"risk": RISK, "test": sigma**2 + RISK,
                            "train": (RISK + sigma**2) / (1 + V) ** 2},
                 "sparsity": {"nonzero": alpha * V / (1 + V)}},
    # m = q = eps/2 (risk eps/2 > 0 at the start): the former m = q = 1/20 had the risk
    # eps - 2m + q = 0 exactly at eps = 1/20, so that at sigma = 0 the start divided by zero
    # (lam/sqrt(qhat), qhat ~ risk + sigma^2) at every precision: exit 3, 'a denominator
    # cancels to zero even at 2240 digits', where the solution exists (fuzz s52)
    start={m: eps / 2, q: eps / 2, V: sympy.Rational(1, 2)},
    positive_unknowns=True,
    admissible=[(V, "V > 0")],
    stability=Stability(replicon=REPLICON, source="derived in this file from the square loss's "
                        "proximal map and the soft threshold: 1 - alpha E[(d_omega g_out)^2] "
                        "E[(d_b f_w)^2] (the condition stated by Gerace et al., ICML 2020 and "
                        "Aubin et al., NeurIPS 2020); equal to 1 - nonzero/alpha at the saddle "
                        "point"),
    symbol_names={alpha: r"\alpha", lam: r"\lambda", eps: r"\varepsilon", sigma: r"\sigma",
                  mhat: r"\hat m", qhat: r"\hat q", Vhat: r"\hat V"},
)


# ---------------------------------------------------------------------------------------------
# Simulation: the LASSO by FISTA
# ---------------------------------------------------------------------------------------------
def _samples(d, params):
    return max(1, int(round(float(params.alpha) * d)))


def lasso_fista(A, y, lam, tol=1e-10, max_iter=200000):
    r"""The minimiser of :math:`\frac12\|y - Aw\|^2 + \lambda\|w\|_1` by FISTA (accelerated
    proximal gradient with restarts when the objective would increase), stopped when the
    proximal-gradient step moves :math:`w` by less than ``tol`` times :math:`\max(1, \|w\|)`."""
    L = np.linalg.norm(A, 2) ** 2
    w = np.zeros(A.shape[1])
    v, t = w.copy(), 1.0
    Aty = A.T @ y
    AtA = A.T @ A if A.shape[0] >= A.shape[1] else None

    def grad(u):
        return (AtA @ u - Aty) if AtA is not None else A.T @ (A @ u - y)

    for _ in range(max_iter):
        u = v - grad(v) / L
        w_new = np.sign(u) * np.maximum(np.abs(u) - lam / L, 0.0)
        step = w_new - w
        t_new = (1 + np.sqrt(1 + 4 * t * t)) / 2
        if np.dot(v - w_new, step) > 0:  # gradient restart (O'Donoghue and Candes)
            t_new, v = 1.0, w_new.copy()
        else:
            v = w_new + (t - 1) / t_new * step
        w, t = w_new, t_new
        if np.linalg.norm(step) <= tol * max(1.0, np.linalg.norm(w)):
            break
    return w


def _sample(rng, d, params):
    n = _samples(d, params)
    eps_, sigma_ = float(params.eps), float(params.sigma)
    w_star = rng.standard_normal(d) * (rng.random(d) < eps_)
    X = rng.standard_normal((n, d))
    y = X @ w_star / np.sqrt(d) + sigma_ * rng.standard_normal(n)
    return X, y, w_star


def _train(instance, params):
    X, y, _ = instance
    return lasso_fista(X / np.sqrt(X.shape[1]), y, float(params.lam))


def _measure(instance, w_hat, params):
    X, y, w_star = instance
    d = X.shape[1]
    e = w_hat - w_star
    return {"errors.risk": float(e @ e / d),
            "errors.train": float(np.mean((y - X @ w_hat / np.sqrt(d)) ** 2)),
            "sparsity.nonzero": float(np.mean(w_hat != 0)),
            "stability.replicon": 1.0 - float(np.sum(w_hat != 0)) / X.shape[0]}


SIMULATION = Simulation(_sample, _train, _measure,
                        sizes=lambda d, p: {"n": _samples(d, p)},
                        description="the LASSO by FISTA on n = round(alpha d) samples of a "
                                    "Gauss-Bernoulli teacher")
