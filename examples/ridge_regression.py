r"""Ridge regression with Gaussian covariates in the proportional limit, as a replica free energy.

Data: inputs :math:`x \in \mathbb R^d`, :math:`x \sim N(0, C)` (``--covariance SPEC --d D``;
``C = I`` by default); a teacher :math:`w \sim N(0, I_d)`; labels
:math:`y = \langle w, x\rangle/\sqrt d + \sigma\varepsilon`, :math:`\varepsilon \sim N(0, 1)`;
:math:`n = \alpha d` samples. Estimator
:math:`\hat w = \arg\min \sum_i (y_i - \langle \hat w, x_i\rangle/\sqrt d)^2 + \lambda\|\hat w\|^2`.

Order parameters: :math:`m = \hat w^\top C w/d`, :math:`q = \hat w^\top C \hat w/d` and the
susceptibility :math:`V` (the zero-temperature limit of :math:`\beta` times the replica variance),
with conjugates :math:`\hat m, \hat q, \hat V`. With the objective halved (a square loss
:math:`\ell = \tfrac12(y - \hat y)^2` and penalty :math:`\tfrac\lambda2\|\hat w\|^2`, which has the
same minimiser), the replica-symmetric free energy at :math:`\beta\to\infty` is

.. math::
    \Phi = -m\hat m + \tfrac12 q\hat V - \tfrac12 V\hat q
           + \tfrac12\Big\langle\frac{\hat m^2 c^2 + \hat q c}{\lambda + \hat V c}\Big\rangle
           - \frac{\alpha}{2}\,\frac{\langle c\rangle - 2m + q + \sigma^2}{1 + V},

the average over the eigenvalues :math:`c` of :math:`C`: the entropic part is the Gaussian
integral over :math:`\hat w` of the penalty plus the conjugate terms (averaged over the teacher and
the Gaussian field), the energetic part is :math:`\alpha` times the Moreau envelope of the square
loss at the cavity field. The library computes this free energy from the model itself
(:mod:`replica.derivations.gaussian_ridge`: replicated Gaussian integrals, the replica limit and
zero temperature with the Gaussian replica calculus), and ``tests/test_gaussian_ridge.py`` checks
that it is the one written here. Test error :math:`E(y - \hat y)^2 = \sigma^2 + \langle c\rangle - 2m + q`;
training error (the training residual is the cavity residual divided by :math:`1 + V`):
:math:`(\langle c\rangle - 2m + q + \sigma^2)/(1 + V)^2`.

    replica solve --model examples/ridge_regression.py --alpha 2 --lam 1/10 --sigma 1/2 --json

Simulation (``SIMULATION`` below): at dimension :math:`d` (``--d``, also the size of the
covariance SPEC), :math:`n = \mathrm{round}(\alpha d)` samples :math:`x_i \sim N(0, C)`, a
teacher :math:`w \sim N(0, I_d)`, labels as above, and the ridge estimator
:math:`\hat w = (X^\top X/d + \lambda I)^{-1}X^\top y/\sqrt d` (the minimiser of the objective
above). Measured exactly for that instance (no Monte Carlo over test points): the test error
:math:`E_{x,\varepsilon}(y - \langle\hat w, x\rangle/\sqrt d)^2 = \sigma^2 + (w - \hat w)^\top
C (w - \hat w)/d` and the training error :math:`\frac1n\|y - X\hat w/\sqrt d\|^2`.

    replica simulate --model examples/ridge_regression.py --alpha 2 --lam 1/10 --sigma 1/2 \
        --d 200 --seeds 4 --json
"""

import numpy as np
import sympy

from replica.capabilities import Simulation, Transition
from replica.derivations import gaussian_ridge
from replica.modeling import LAMBDA_I, Parameter, Rule, SaddlePointModel, avg

alpha, lam = sympy.symbols("alpha lam", positive=True)
sigma = sympy.Symbol("sigma", nonnegative=True)
m, q, V = sympy.symbols("m q V", real=True)
mhat, qhat, Vhat = sympy.symbols("mhat qhat Vhat", real=True)
c = LAMBDA_I  # an eigenvalue of the input covariance C

ERROR = avg(c) - 2 * m + q + sigma**2  # the generalisation error's energetic combination

FREE_ENERGY = (-m * mhat + q * Vhat / 2 - V * qhat / 2
               + avg((mhat**2 * c**2 + qhat * c) / (lam + Vhat * c)) / 2
               - alpha * ERROR / (2 * (1 + V)))

MODEL = SaddlePointModel(
    "ridge_regression",
    title="Ridge regression with Gaussian covariates (proportional limit)",
    free_energy=FREE_ENERGY,
    derivation=gaussian_ridge,  # computes FREE_ENERGY from the model; the appendix starts there
    pairs=[(m, mhat), (q, Vhat), (V, qhat)],
    parameters=[
        Parameter("alpha", "samples per dimension n/d"),
        Parameter("lam", "ridge penalty lambda (objective sum of squares + lambda |w|^2)",
                  domain="nonnegative"),
        Parameter("sigma", "label-noise standard deviation", domain="nonnegative"),
        Parameter("d", "dimension of --covariance (only needed for a non-identity SPEC)",
                  domain="positive_integer", default=1),
        Parameter("covariance", "input covariance SPEC (identity, powerlaw:P, file:PATH, ...)",
                  domain="covariance", default="identity"),
    ],
    rules=[Rule("lam", lambda p: (p.lam == 0) & (p.alpha <= 1),
                "lam = 0 (ridgeless) needs alpha > 1")],
    observables={"errors": {"test": sigma**2 + avg(c) - 2 * m + q,
                            "train": ERROR / (1 + V) ** 2}},
    start={m: sympy.Rational(1, 2), q: sympy.Rational(1, 2), V: 1},
    positive_unknowns=True,  # m, q and V are positive at the physical solution ...
    admissible=[(V, "V > 0")],  # ... and the other root of the V equation has V < 0
    symbol_names={lam: r"\lambda", c: "c_i"},
)

# --- transitions --- (replica transition --model examples/ridge_regression.py --name NAME)
# At lam = 0 and sigma = 0 the minimum-norm test error is 1 - alpha below the interpolation
# threshold alpha = 1 and 0 above it: a kink at alpha = 1. The ridgeless model is defined only for
# alpha > 1 (its rule), so the kink is seen through its finite-ridge crossover, which tends to
# alpha = 1 as lam -> 0 (0.99399... at lam = 1/100).
TRANSITIONS = [
    Transition(
        "interpolation", quantity="test", vary="alpha", kind="crossover", between=("1/2", "2"),
        params={"lam": "1/100", "sigma": "0"},
        definition="interpolation crossover: the extremum of the curvature in alpha of the "
                   "noiseless test error at a small ridge, the smoothed kink at alpha = 1 of the "
                   "ridgeless error max(1 - alpha, 0)"),
    Transition(
        "double-descent", quantity="test", vary="alpha", kind="max", between=("1/2", "3"),
        params={"lam": "1/100", "sigma": "1/2"},
        definition="double-descent peak: the interior maximum in alpha of the noisy test error"),
]


# --- simulation: one finite-size data set and the ridge estimator trained on it ------------------
def _samples(d, params):
    return int(round(params.alpha * d))


def _sample(rng, d, params):
    """Inputs ``X`` (``n x d``, rows N(0, C)), the teacher ``w`` and the labels ``y``."""
    n = _samples(d, params)
    cov = params.covariance
    Z = rng.standard_normal((n, d))
    if cov.is_diagonal:
        X = Z * np.sqrt(cov.diag_f64())
    else:  # X = Z C^{1/2}
        vals, vecs = np.linalg.eigh(cov.matrix_f64())
        X = Z @ (vecs * np.sqrt(np.clip(vals, 0, None))) @ vecs.T
    w = rng.standard_normal(d)
    y = X @ w / np.sqrt(d) + float(params.sigma) * rng.standard_normal(n)
    return X, w, y, cov


def _train(instance, params):
    """The ridge estimator: the minimiser of sum_i (y_i - <w, x_i>/sqrt d)^2 + lam |w|^2."""
    X, _, y, _ = instance
    d = X.shape[1]
    return np.linalg.solve(X.T @ X / d + float(params.lam) * np.eye(d), X.T @ y / np.sqrt(d))


def _measure(instance, w_hat, params):
    """Test error sigma^2 + (w - w_hat)^T C (w - w_hat)/d (exact) and the training error."""
    X, w, y, cov = instance
    d = X.shape[1]
    e = w - w_hat
    Ce = cov.diag_f64() * e if cov.is_diagonal else cov.matrix_f64() @ e
    test = float(params.sigma) ** 2 + float(e @ Ce) / d
    train = float(np.mean((y - X @ w_hat / np.sqrt(d)) ** 2))
    return {"test": test, "train": train}


SIMULATION = Simulation(_sample, _train, _measure, sizes=lambda d, p: {"n": _samples(d, p)},
                        description="ridge regression on n = round(alpha d) Gaussian samples")
