r"""Ridge-regularised logistic regression on a (noisy) sign teacher, Gaussian covariates.

Setting: :math:`n = \alpha d` samples :math:`x_i \sim N(0, I_d)`; a teacher :math:`w^*` with
:math:`|w^*|^2 = d` and teacher field :math:`u_i = x_i\cdot w^*/\sqrt d \sim N(0, 1)`; labels
:math:`y_i = \operatorname{sign}(\eta\,u_i + \sqrt{1-\eta^2}\,\varepsilon_i)`,
:math:`\varepsilon_i \sim N(0, 1)` (``--eta``, in :math:`[0, 1]`): :math:`\eta = 1` is the
noiseless sign teacher, :math:`\eta < 1` the probit teacher
:math:`P(y = 1\,|\,u) = \Phi(\gamma u)` of signal strength :math:`\gamma = \eta/\sqrt{1-\eta^2}`,
:math:`\eta = 0` labels independent of the data. The estimator minimises

.. math::  \sum_i \ell\big(y_i\, x_i\cdot w/\sqrt d\big) + \tfrac\lambda2 |w|^2,
           \qquad \ell(t) = \log(1 + e^{-t}).

**Stated** (the replica-symmetric free energy of empirical risk minimisation in a generalised
linear model with Gaussian covariates at zero temperature: Aubin, Maillard, Barbier, Krzakala,
Macris and Zdeborova, NeurIPS 2020, and Gerace et al., ICML 2020; for the square loss the library
derives it, ``examples/ridge_regression.py``, with the same conventions): with
:math:`m = w\cdot w^*/d`, :math:`q = |w|^2/d`, :math:`V` the susceptibility and conjugates
:math:`\hat m, \hat q, \hat V`,

.. math::
    \Phi = -m\hat m + \tfrac12 q\hat V - \tfrac12 V\hat q + \frac{\hat m^2 + \hat q}{2(\lambda
           + \hat V)} - \alpha\,\mathbb E_{y, \omega}\,\mathcal M_V(y, \omega),\qquad
    \mathcal M_V(y, \omega) = \min_p \Big[\frac{(p - \omega)^2}{2V} + \ell(y p)\Big],

where the cavity field :math:`\omega` and the teacher field :math:`u` are jointly Gaussian,
:math:`\mathbb E\omega^2 = q`, :math:`\mathbb E\omega u = m`, :math:`\mathbb E u^2 = 1`.

**Derived** (here). *The label average.* The latent
:math:`L = \eta u + \sqrt{1-\eta^2}\varepsilon` is standard normal with
:math:`\mathbb E L\omega = \eta m`; with :math:`\omega = \sqrt q\,\xi`,
:math:`P(L > 0\,|\,\xi) = \Phi\big(\eta m\xi/\sqrt{q - \eta^2 m^2}\big)`. Since
:math:`\ell(y p)` is even under :math:`(y, p) \to (-y, -p)`,
:math:`\mathcal M_V(-1, -\omega) = \mathcal M_V(1, \omega)`, and the label sum folds into
:math:`\mathbb E\,\mathcal M = 2\int\mathcal D\xi\,\Phi(\eta m\xi/\sqrt{q - \eta^2m^2})\,
\mathcal M_V(1, \sqrt q\,\xi)`. *The proximal map.* The minimiser :math:`p` of the envelope
solves :math:`p - \omega + V\ell'(p) = 0`, i.e. :math:`p = \omega + V/(1 + e^{p})`: the left
side is increasing in :math:`p` (slope :math:`1 + V\ell''(p) \ge 1`) and is :math:`\le 0` at
:math:`p = \omega`, :math:`\ge 0` at :math:`p = \omega + V`, so :math:`p` is the unique root on
that bracket; it has no closed form and is declared as one
(:func:`replica.modeling.implicit_root`), solved at every quadrature node, with derivatives
:math:`\partial_\omega p = 1/(1 + V\ell''(p))` and :math:`\partial_V p = -\ell'(p)/(1 + V\ell''(p))`
by the implicit function theorem. The engine differentiates :math:`\Phi` (the integrals under the
integral sign) and solves the stationarity conditions; the envelope is written as
:math:`(p - \omega)^2/(2V) + \ell(p)` at :math:`p = \operatorname{prox}(\omega, V)`, whose
derivatives' chain-rule terms vanish at the root (the envelope theorem), so the equations are the
usual :math:`\partial_\omega\mathcal M = (\omega - p)/V`,
:math:`\partial_V\mathcal M = -(\omega - p)^2/(2V^2)`.

Reported: ``errors.generalisation`` :math:`= \arccos(\eta m/\sqrt q)/\pi`, the probability that
:math:`\operatorname{sign}(x\cdot w)` misclassifies a new label (:math:`L` and the student's field
have correlation :math:`\eta m/\sqrt q`), ``errors.teacher`` :math:`= \arccos(m/\sqrt q)/\pi`
(disagreement with the noiseless teacher :math:`\operatorname{sign} u`), ``errors.train_loss``
:math:`= \mathbb E\,\ell(y p)` (a training point's output is the proximal map of its cavity
field) and ``errors.train_error``, the fraction of misclassified training points:
:math:`y p < 0` iff :math:`y\omega < -V/2` (the root at :math:`p = 0` is :math:`\omega = -V/2`),
:math:`2\int\mathcal D\xi\,\Phi(\cdot)\,\theta(-V/2 - \sqrt q\,\xi)`.

**Replica-symmetry stability** (reported as ``stability.replicon``; ``replica solve`` says
whether the solution is stable). *Stated* (the de Almeida--Thouless condition of convex
estimation in a generalised linear model, Gerace et al., ICML 2020 and Aubin et al., NeurIPS
2020, in their appendices on the stability of the replica-symmetric solution; stated because this
file does not expand the replicated free energy to second order in the replica-symmetry-breaking
fluctuations): the replicon

.. math::  \lambda_{\rm AT} = 1 - \alpha\,\mathbb E_{y,\omega}\big[(\partial_\omega
           g_{\rm out})^2\big]\,\mathbb E_{w^*, Z}\big[(\partial_b f_w)^2\big],\qquad
           g_{\rm out} = \frac{\operatorname{prox}(\omega) - \omega}{V},

with :math:`f_w(b)` the maximiser of the penalty's inner problem
:math:`\max_w[-\tfrac{\hat V}2w^2 + bw - \tfrac\lambda2w^2]`, must be positive.
*Derived* (here): the ridge gives :math:`f_w = b/(\lambda + \hat V)`, so
:math:`(\partial_bf_w)^2 = 1/(\lambda + \hat V)^2` whatever the prior; by the implicit function
theorem above :math:`\partial_\omega p = 1/(1 + V\ell''(p))`, so
:math:`\partial_\omega g_{\rm out} = (\partial_\omega p - 1)/V = -\ell''(p)/(1 + V\ell''(p))`, and
with :math:`\ell''(p) = e^{p}/(1 + e^{p})^2 = 1/(4\cosh^2(p/2))` this is
:math:`-1/(V + 4\cosh^2(p/2))` (the form declared: no overflow for large :math:`|p|`; the tests
check with SymPy that it is the derivative of the declared proximal map). The label average folds
as the envelope's does (:math:`\ell''` is even), so

.. math::  \lambda_{\rm AT} = 1 - \frac{2\alpha}{(\lambda + \hat V)^2}\int\mathcal D\xi\,
           \Phi\Big(\frac{\eta m\xi}{\sqrt{q - \eta^2m^2}}\Big)\,
           \frac{1}{\big(V + 4\cosh^2(p/2)\big)^2},\qquad p = \operatorname{prox}(\sqrt q\,\xi, V).

Since :math:`V = 1/(\lambda + \hat V)` at the saddle point and :math:`V + 4\cosh^2 \ge V + 4`,
:math:`\lambda_{\rm AT} \ge 1 - \alpha V^2/(V + 4)^2`; by Cauchy--Schwarz and the stationarity
condition :math:`\hat V = \alpha\,\mathbb E[\ell''/(1 + V\ell'')]`, also
:math:`1 - \lambda_{\rm AT} \ge (V\hat V)^2/\alpha`. The ridge-penalised logistic loss is
strictly convex, so its minimiser is unique and replica symmetry is expected to be stable at
every :math:`\alpha, \lambda > 0`: the replicon is positive at every point the tests try, and
``replica phase-diagram`` over :math:`(\alpha, \lambda)` reports that the grid has no AT line
rather than drawing one.

**Uniqueness** (``unique_fixed_point``, *stated*): for :math:`\lambda > 0` the objective is
strongly convex and has one minimiser; the equations above are the stationarity conditions of
the scalar convex-concave min-max that Gordon's comparison theorem gives for a ridge-penalised
convex loss (as in the analyses of ridge-penalised logistic regression by Salehi, Abbasi and
Hassibi, NeurIPS 2019, and Aubin et al., NeurIPS 2020), whose saddle point is unique, so the
fixed point in the admissible domain is unique (not derived here; the tests reach the same fixed
point from random admissible starts).
A float64 grid therefore starts most of its points from their solved neighbours
(:func:`replica.numerics.newton.iterate_grid_continued`) rather than from the declared start.

**Separability.** The unregularised problem (:math:`\lambda = 0`) has a minimiser only if the
data :math:`\{(x_i, y_i)\}` are not linearly separable; for :math:`\eta = 1` they always are
(:math:`w = w^*` separates them), so the MLE never exists and :math:`\lambda > 0` is needed at
every :math:`\alpha` (:math:`|w| \to \infty` as :math:`\lambda \to 0`). For :math:`\eta < 1`
they are separable below the threshold :math:`\alpha_c(\eta)` of Sur and Candes (PNAS 2019),
located by the companion model file ``examples/logistic_separability.py`` (its docstring has the
derivation); :math:`\alpha_c(0) = 2` (Cover), :math:`\alpha_c \to \infty` as :math:`\eta \to 1`.
Below it, at small :math:`\lambda`, the solution is far from the declared start (:math:`V
\approx 1/\lambda`; :math:`\alpha = 3`, :math:`\eta = 9/10`, :math:`\lambda = 10^{-4}`:
:math:`m, q, V \approx 20.9, 703, 678`): ``replica solve`` from the declared start reaches
it (the float64 iteration evaluates its integrands in their sigmoid forms where :math:`e^{2p}`
overflows), and the branch is followed from :math:`\lambda = 1/10` in geometric steps by
``replica solve ... --lam 1/10 --start m=1.9,q=5,V=2.7 --follow lam:1/10000:6:log``.

**Certification** (``--certify``): the proximal map is a root, enclosed in ball arithmetic
(real and complex balls: a Krawczyk test, :mod:`replica.symbolic.implicit`); the tails of the
Gaussian integrals that hold it are bounded through the root
(:func:`replica.symbolic.gaussian.growth_envelope`): the declared equation gives
:math:`|p - \omega| \le V` (:math:`|\ell'| \le 1`), and the reciprocals of the root's slope
:math:`1 + V\ell''(p)`, rational functions of :math:`e^{p}`, are bounded with the signs of
their denominators' coefficients checked on the box. The point below is proved at 30 digits
(about 45 s CPU, 28x a verified solve).

Simulation (``SIMULATION``, :class:`replica.capabilities.Simulation`; ``simulate_point`` is
one seed of it): at dimension :math:`d`, :math:`n = \operatorname{round}(\alpha d)` samples; the
objective minimised by SciPy's L-BFGS-B from :math:`w = 0` with its exact gradient (stopping at
a largest gradient component of :math:`10^{-10}`); measured :math:`m`, :math:`q`, the generalisation
errors (exact given :math:`w`, from :math:`m/\sqrt q`), the training loss and error, and
:math:`V = \operatorname{tr}(\lambda I + X^\top D X/d)^{-1}/d` with
:math:`D = \operatorname{diag}\,\ell''(y_i x_i\cdot w/\sqrt d)` (the finite-:math:`d`
susceptibility: the inverse Hessian's trace).

    replica solve --model examples/logistic_regression.py --alpha 2 --lam 1/10 --eta 1 --json
"""

import math

import numpy as np
import sympy

from replica.capabilities import Simulation
from replica.modeling import Parameter, Rule, SaddlePointModel, Stability, gauss, implicit_root

alpha, lam = sympy.symbols("alpha lam", positive=True)
eta = sympy.Symbol("eta", nonnegative=True)
m, q, V = sympy.symbols("m q V", positive=True)
mhat, qhat, Vhat = sympy.symbols("mhat qhat Vhat", real=True)
xi = sympy.Symbol("xi", real=True)
p_, w_, V_ = sympy.symbols("p omega V_", real=True)


def logistic_loss(t):
    r""":math:`\ell(t) = \log(1 + e^{-t})`."""
    return sympy.log(1 + sympy.exp(-t))


PROX = implicit_root("prox_logistic", p_ - w_ + V_ * sympy.diff(logistic_loss(p_), p_), p_,
                     (w_, V_), bracket=(w_, w_ + V_))
"""prox(omega, V): the minimiser of (p - omega)^2/(2V) + log(1 + e^-p), a root on [omega,
omega + V]."""

OMEGA = sympy.sqrt(q) * xi
P = PROX(OMEGA, V)
ENVELOPE = (P - OMEGA) ** 2 / (2 * V) + logistic_loss(P)
LABEL = sympy.erfc(-eta * m * xi / sympy.sqrt(2 * (q - eta**2 * m**2))) / 2  # P(y = 1 | xi)

PROX_SLOPE_TERM = -1 / (V + 4 * sympy.cosh(P / 2) ** 2)
r""":math:`\partial_\omega g_{\rm out} = -\ell''(p)/(1 + V\ell''(p))` at
:math:`p = \operatorname{prox}(\sqrt q\,\xi, V)`, with :math:`\ell'' = 1/(4\cosh^2(p/2))`."""
REPLICON = 1 - alpha / (lam + Vhat) ** 2 * 2 * gauss(LABEL * PROX_SLOPE_TERM**2, xi)
"""The replicon 1 - alpha E[(d_omega g_out)^2] E[(d_b f_w)^2] (docstring)."""

FREE_ENERGY = (-m * mhat + q * Vhat / 2 - V * qhat / 2 + (mhat**2 + qhat) / (2 * (lam + Vhat))
               - alpha * 2 * gauss(LABEL * ENVELOPE, xi))


y_ = sympy.Symbol("y", real=True)
XI0 = -V / (2 * sympy.sqrt(q))
"""The kink of the training error's integrand: y p < 0 iff xi < XI0."""
SHRINK = 1 / sympy.sqrt(1 + XI0**2)
LABEL_TAIL = sympy.erfc(eta * m * (-XI0 + SHRINK * y_) / sympy.sqrt(2 * (q - eta**2 * m**2))) / 2
r""":math:`P(y = 1\,|\,\xi)` at :math:`\xi = \xi_0 - cy`, :math:`y > 0`, as
:math:`\tfrac12\operatorname{erfc}` of a positive argument: SymPy writes ``LABEL``, the
:math:`\tfrac12\operatorname{erfc}` of :math:`-\eta m\xi/\sqrt{2(q - \eta^2m^2)}`, as
:math:`1 - \tfrac12\operatorname{erfc}(\eta m\xi/\ldots)`, which cancels every digit
where it is tiny (:math:`\Phi(-12.8) \approx 10^{-37}` at :math:`\alpha = 3`,
:math:`\lambda = 10^{-4}`, :math:`\eta = 9/10`: the training error's integrand, all of it in
that tail, lost 35 digits and its quadrature failed)."""
TRAIN_ERROR = 2 * SHRINK * sympy.exp(-XI0**2 / 2) * gauss(
    sympy.exp(XI0 * SHRINK * y_ + (1 - SHRINK**2) * y_**2 / 2) * LABEL_TAIL
    * sympy.Heaviside(y_), y_)
r"""The training error :math:`2\int\mathcal D\xi\,\Phi(\cdot)\,\theta(\xi_0 - \xi)`,
:math:`\xi_0 = -V/(2\sqrt q)`, declared on the variable :math:`y` of :math:`\xi = \xi_0 - cy`,
:math:`c = 1/\sqrt{1 + \xi_0^2}`: :math:`\mathcal D\xi = c\,e^{-\xi_0^2/2}\,
e^{\xi_0cy + (1 - c^2)y^2/2}\,\mathcal Dy`, :math:`\theta(\xi_0 - \xi) = \theta(y)`. At tiny
:math:`\alpha`, :math:`q \to 0` and :math:`\xi_0 \to -\infty`: the integrand in :math:`\xi`
lives on :math:`|\xi - \xi_0| \sim 1/|\xi_0|` (which the quadrature's pieces, cut every 2
units, did not resolve: no value at :math:`\alpha = 10^{-6}`), in :math:`y` on the unit scale;
the factor :math:`e^{-\xi_0^2/2}` is outside the integral; the label factor is ``LABEL_TAIL``."""


UNIQUE = ("lam > 0 (the domain of --lam): the objective is strongly convex, its minimiser "
          "unique; the equations are the stationarity conditions of the scalar convex-concave "
          "min-max that Gordon's comparison theorem gives for a ridge-penalised convex loss "
          "(as in Salehi, Abbasi and Hassibi, NeurIPS 2019; Aubin et al., NeurIPS 2020), "
          "whose saddle point is unique -- stated, not derived here; the tests "
          "reach one fixed point from random admissible starts")
"""Why the solution is unique (``unique_fixed_point``: a float64 grid starts most points from
their solved neighbours)."""


def _not_in_unit_interval(p):
    return p.eta > 1


MODEL = SaddlePointModel(
    "logistic_regression",
    title="Ridge logistic regression on a sign (probit) teacher, Gaussian covariates",
    free_energy=FREE_ENERGY,
    pairs=[(m, mhat), (q, Vhat), (V, qhat)],
    parameters=[
        Parameter("alpha", "samples per dimension n/d"),
        Parameter("lam", "ridge penalty lambda (objective sum of losses + lambda |w|^2/2)"),
        Parameter("eta", "teacher-label correlation: y = sign(eta u + sqrt(1-eta^2) noise); "
                         "1: noiseless sign teacher", domain="nonnegative", default=1),
    ],
    rules=[Rule("eta", _not_in_unit_interval, "eta must be in [0, 1]")],
    observables={"errors": {
        "generalisation": sympy.acos(eta * m / sympy.sqrt(q)) / sympy.pi,
        "teacher": sympy.acos(m / sympy.sqrt(q)) / sympy.pi,
        "train_loss": 2 * gauss(LABEL * logistic_loss(P), xi),
        "train_error": TRAIN_ERROR}},
    start={m: sympy.Rational(1, 2), q: 1, V: 1},
    positive_unknowns=True,
    admissible=[(q - eta**2 * m**2, "q > eta^2 m^2")],
    unique_fixed_point=UNIQUE,
    stability=Stability(replicon=REPLICON, source="derived in this file from the proximal map "
                        "and the ridge: 1 - alpha E[(d_omega g_out)^2] E[(d_b f_w)^2] (the "
                        "condition stated by Gerace et al., ICML 2020 and Aubin et al., "
                        "NeurIPS 2020)"),
    symbol_names={lam: r"\lambda", eta: r"\eta", mhat: r"\hat m", qhat: r"\hat q",
                  Vhat: r"\hat V"},
)


# ---------------------------------------------------------------------------------------------
# Finite-size simulation
# ---------------------------------------------------------------------------------------------
def sample(rng, d, params):
    """One data set: (X, y, w_star)."""
    n = int(round(float(params.alpha) * d))
    e = float(params.eta)
    w_star = rng.standard_normal(d)
    w_star *= math.sqrt(d) / np.linalg.norm(w_star)
    X = rng.standard_normal((n, d))
    u = X @ w_star / math.sqrt(d)
    y = np.sign(e * u + math.sqrt(max(1 - e * e, 0.0)) * rng.standard_normal(n))
    y[y == 0] = 1
    return X, y, w_star


def train(instance, params):
    """The regularised logistic-regression estimate (SciPy L-BFGS-B, exact gradient)."""
    from scipy.optimize import minimize
    from scipy.special import expit

    X, y, _ = instance
    n, d = X.shape
    la = float(params.lam)
    A = X * y[:, None] / math.sqrt(d)  # rows y_i x_i / sqrt(d)

    def objective(w):
        t = A @ w
        value = np.sum(np.logaddexp(0.0, -t)) + la * (w @ w) / 2
        grad = -A.T @ expit(-t) + la * w
        return value, grad

    res = minimize(objective, np.zeros(d), jac=True, method="L-BFGS-B",
                   options={"maxiter": 20000, "gtol": 1e-10, "ftol": 1e-15})
    return res.x


def measure(instance, w, params):
    """m, q, V and the errors of one fit (the names the theory reports)."""
    from scipy.special import expit

    X, y, w_star = instance
    n, d = X.shape
    e, la = float(params.eta), float(params.lam)
    mm, qq = w @ w_star / d, w @ w / d
    t = y * (X @ w) / math.sqrt(d)
    curv = expit(t) * expit(-t)
    H = la * np.eye(d) + (X.T * curv) @ X / d
    c = e * mm / math.sqrt(qq)
    return {"m": mm, "q": qq, "V": np.trace(np.linalg.inv(H)) / d,
            "generalisation": math.acos(max(-1.0, min(1.0, c))) / math.pi,
            "teacher": math.acos(max(-1.0, min(1.0, mm / math.sqrt(qq)))) / math.pi,
            "train_loss": float(np.mean(np.logaddexp(0.0, -t))),
            "train_error": float(np.mean(t < 0))}


def simulate_point(rng, d, params):
    """``measure(sample, train(sample))`` for one seed."""
    inst = sample(rng, d, params)
    return measure(inst, train(inst, params), params)


SIMULATION = Simulation(sample, train, measure,
                        description="ridge logistic regression fitted by L-BFGS (SciPy)",
                        sizes=lambda d, p: {"n": int(round(float(p.alpha) * d))})
