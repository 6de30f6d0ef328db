r"""The max-margin classifier (hard-margin SVM without bias) on a sign teacher: the Gardner margin
:math:`\kappa_{\max}(\alpha)` and the generalisation error.

Setting: a teacher :math:`w^*` on the sphere :math:`|w^*|^2 = d`; :math:`n = \alpha d` samples
:math:`x_\mu \sim N(0, I_d)` with labels :math:`y_\mu = \operatorname{sign}(x_\mu\cdot w^*/\sqrt d)`
(always linearly separable, by the teacher). The student :math:`w`, :math:`|w|^2 = d`, maximises
the smallest margin :math:`\kappa = \min_\mu y_\mu\,x_\mu\cdot w/\sqrt d`; equivalently
:math:`\hat w \propto \arg\min |w|^2` subject to :math:`y_\mu\,x_\mu\cdot w/\sqrt d \ge 1` (the
hard-margin SVM, the zero-regularisation limit of the hinge loss), and
:math:`\kappa_{\max} = \sqrt d/|\hat w|`. Reported: ``margin.kappa_max``, the teacher--student
overlap :math:`R = \hat w\cdot w^*/(|\hat w||w^*|)` and ``errors.generalisation``
:math:`\varepsilon_g = \arccos(R)/\pi` (the probability that two directions at angle
:math:`\arccos R` disagree on a Gaussian input).

**Stated** (Gardner 1988; the teacher--student form in Engel and Van den Broeck, *Statistical
Mechanics of Learning*, 2001, the chapter on the Gardner analysis and maximal stability): the
replica-symmetric entropy of the students with margin :math:`\ge\kappa`, with :math:`q` the overlap
of two of them, is
:math:`s = \operatorname{extr}_{q, R}\big[\tfrac12\log(1 - q) + \frac{q - R^2}{2(1 - q)}
+ \alpha\,G_E\big]`, the first two terms the log-volume of the sphere at overlaps
:math:`(q, R)`.

**Derived** (here). The student fields are
:math:`\lambda^a = Ru + \sqrt{q - R^2}\,s + \sqrt{1 - q}\,z_a` with :math:`u` the teacher's field
and :math:`u, s, z_a` independent standard normals, so
:math:`G_E = \mathbb E_{u, s}\log H\big((\kappa - \operatorname{sign}(u)(Ru + \sqrt{q - R^2}s))
/\sqrt{1 - q}\big)`, :math:`H(x) = \int_x^\infty\mathcal Dz`. The sign symmetry
:math:`(u, s) \to -(u, s)` leaves twice the part :math:`u > 0`; with
:math:`t = (Ru + \sqrt{q - R^2}s)/\sqrt q` standard normal and
:math:`P(u > 0\,|\,t) = H(-Rt/\sqrt{q - R^2})`,
:math:`G_E = 2\int\mathcal Dt\,H\big(-Rt/\sqrt{q - R^2}\big)\log H\big((\kappa - \sqrt q t)
/\sqrt{1 - q}\big)`. The maximal margin is where the solution space shrinks to a point,
:math:`q \to 1`. With :math:`\epsilon = 1 - q`, :math:`\log H(x) = -x^2/2 + O(\log x)` for
:math:`x \to +\infty` and :math:`\to 0` for :math:`x \to -\infty`, so

.. math::
    s = \frac{1}{2\epsilon}\Big[1 - R^2 - \alpha F(R, \kappa)\Big] + O(\log\epsilon),\qquad
    F(R, \kappa) = 2\int\mathcal Dt\,H\Big(\frac{-Rt}{\sqrt{1 - R^2}}\Big)(\kappa - t)^2\,
        \theta(\kappa - t),

twice the Moreau envelope of the margin constraint :math:`\lambda \ge \kappa` (the hard-margin
limit of the hinge), :math:`\min_{\lambda\ge\kappa}(\lambda - t)^2 = (\kappa - t)_+^2`, the squared
violation, with its kink at :math:`t = \kappa`. Stationarity in :math:`q` (in :math:`\epsilon`) at
leading order :math:`1/\epsilon^2` needs the bracket to vanish, and stationarity in :math:`R` at
order :math:`1/\epsilon` needs its derivative in :math:`R` to vanish:

.. math::  1 - R^2 = \alpha F(R, \kappa), \qquad 2R = -\alpha\,\partial_R F(R, \kappa),

two equations for :math:`(R, \kappa_{\max})` given :math:`\alpha`. They are declared below in the
angle :math:`\vartheta = \arccos R` between student and teacher
(:math:`\sqrt{1 - R^2} = \sin\vartheta` without cancellation as :math:`R \to 1`, and
:math:`\varepsilon_g = \vartheta/\pi`): the residuals
:math:`W = \sin^2\vartheta - \alpha F(\cos\vartheta, \kappa)` and :math:`\partial_\vartheta W`
(:math:`\partial_\vartheta = -\sin\vartheta\,\partial_R` and :math:`\sin\vartheta > 0`), with
:math:`F` a Gaussian integral (:func:`replica.modeling.gauss`; the engine differentiates it
under the integral sign). Without a teacher (:math:`R = 0`,
:math:`H(0) = \tfrac12`) the first is the Gardner capacity
:math:`\alpha\int\mathcal Dt\,(\kappa - t)^2\theta(\kappa - t) = 1` of
``examples/perceptron_capacity.py``.

**Replica-symmetry stability** (reported as ``stability.replicon``; ``replica solve`` says
whether the solution is stable). *Stated* (de Almeida and Thouless 1978; for the Gardner volume
Gardner and Derrida 1988, with a teacher Engel and Van den Broeck, the chapter on the stability
of the replica-symmetric solution; stated, not re-derived from the replicated volume): the
replica-symmetric saddle point is stable when the replicon

.. math::  \lambda_{\rm AT} = 1 - \alpha(1 - q)^2\,\mathbb E_{u, s}\Big[\Big(\partial_h^2
           \log H\Big(\frac{\kappa - h}{\sqrt{1 - q}}\Big)\Big)^2\Big]_{h = \operatorname{sign}
           (u)(Ru + \sqrt{q - R^2}s)}

is positive: in the language of convex estimation, :math:`1 - \alpha\,\mathbb E[(\partial_\omega
g_{\rm out})^2]\,\mathbb E[(\partial_bf_w)^2]` with the spherical constraint's
:math:`\mathbb E(\partial_bf_w)^2 = (1 - q)^2` and :math:`g_{\rm out}` the derivative of
:math:`\log H` in the field. *Derived* (here): with the sign symmetry and :math:`t` as above the
average is :math:`2\int\mathcal Dt\,H(-Rt/\sqrt{q - R^2})\,[\cdot]^2` at :math:`h = \sqrt q\,t`;
:math:`(1 - q)\,\partial_h^2\log H((\kappa - h)/\sqrt{1 - q}) = (\log H)''(x)`,
:math:`x = (\kappa - \sqrt q\,t)/\sqrt{1 - q}`, which tends to :math:`-1` where :math:`t < \kappa`
(:math:`x \to +\infty`, :math:`\log H \simeq -x^2/2`) and to :math:`0` where :math:`t > \kappa`
as :math:`q \to 1`. Equivalently: the proximal map of the margin constraint,
:math:`p(t) = \max(t, \kappa)` (the minimiser of :math:`(\lambda - t)^2` over
:math:`\lambda \ge \kappa`), has slope :math:`\theta(t - \kappa)`, and
:math:`(1 - q)\,\partial g_{\rm out} \to p'(t) - 1 = -\theta(\kappa - t)`, piecewise constant
with its jump at the kink :math:`t = \kappa`. So at the maximal margin

.. math::  \lambda_{\rm AT} = 1 - 2\alpha\int\mathcal Dt\,H\Big(\frac{-Rt}{\sqrt{1 - R^2}}\Big)\,
           \theta(\kappa - t),

declared with :math:`R = \cos\vartheta` (a Gaussian integral whose integrand jumps at
:math:`t = \kappa`; the engine splits it there). The integral is the probability that a training
point sits on the margin, :math:`y\,x\cdot\hat w/|\hat w| = \kappa_{\max}` (its cavity field
:math:`t` is below :math:`\kappa`, and the proximal map pushes it onto the margin), so
:math:`\lambda_{\rm AT} = 1 - n_{\rm SV}/d` with :math:`n_{\rm SV}` the number of support
vectors. Points in general position put at most :math:`d` of them on the hyperplane
:math:`y\,x\cdot\hat w/\sqrt d = 1`, so :math:`\lambda_{\rm AT} \ge 0` must hold: the hard-margin
SVM is a strictly convex programme, and its replica-symmetric solution is stable at every
:math:`\alpha` the tests try (:math:`\lambda_{\rm AT} = 0.1828\ldots` at :math:`\alpha = 2`).
The simulation reports :math:`1 - n_{\rm SV}/d` of each fit as its ``stability.replicon``
(support vectors: the points whose margin is within a relative :math:`10^{-8}` of the smallest;
the next margins are larger by a relative :math:`10^{-2}` or more at the sizes tried). Without a
teacher (:math:`R = 0`, :math:`H(0) = \tfrac12`, :math:`t \to -t`) the integral is
:math:`\Phi(\kappa)` and :math:`1 - \lambda_{\rm AT}` is the capacity's ``stability.at_ratio``
of ``examples/perceptron_capacity.py`` at the same :math:`\kappa`.

**Large** :math:`\alpha` (derived; the tests check it): :math:`R \to 1`, :math:`\kappa \to 0`
with :math:`\rho = \sqrt{1 - R^2}` and :math:`k = \kappa/\rho` fixed; on the scale
:math:`t = \rho x`, :math:`F \approx 2\varphi(0)\rho^3 G(k)` with
:math:`G(k) = \int_{-\infty}^k \Phi(x)(k - x)^2dx = [(k^3 + 3k)\Phi(k) + (k^2 + 2)\varphi(k)]/3`.
The two equations become :math:`\alpha\rho = 1/(2\varphi(0)G(k))` and :math:`G(k) = kG'(k)`, i.e.
:math:`k^3\Phi(k) + (k^2 - 1)\varphi(k) = 0`, so
:math:`\varepsilon_g \simeq \rho/\pi = c/\alpha` with
:math:`c = 1/(\sqrt{2\pi}\,G(k)) \approx 0.5005`
(the value Engel and Van den Broeck quote for the maximally stable perceptron).
Both integrals are therefore declared on that scale: with :math:`t = x\sin\vartheta`,
:math:`\mathcal Dt = \sin\vartheta\,e^{x^2\cos^2\vartheta/2}\,\mathcal Dx` and
:math:`-Rt/\sqrt{1 - R^2} = -x\cos\vartheta`, so the integrands in :math:`x` vary on the unit
scale and the kink sits at :math:`x = \kappa/\sin\vartheta \to k` (in :math:`t` they vary on
:math:`|t| \sim \tan\vartheta \approx 1.57/\alpha`, which the quadrature's pieces, cut every 2
units and at the kink, did not resolve: no solve at :math:`\alpha = 1000`). The start
:math:`\vartheta = \arctan(\pi/(2\alpha))` follows the asymptote (``tests/test_glm_extremes.py``
checks :math:`\alpha = 10^3` to :math:`10^6` at 30 digits).
On the same scale the replicon's integral is
:math:`2\varphi(0)\rho J_0(k)`, :math:`J_0 = \int_{-\infty}^k\Phi = k\Phi(k) + \varphi(k)`, and
:math:`G'(k) = 2J_1(k)`, :math:`J_1 = \int_{-\infty}^k\Phi(x)(k - x)dx
= [(k^2 + 1)\Phi(k) + k\varphi(k)]/2`, so
:math:`1 - \lambda_{\rm AT} \to J_0/(2kJ_1)`, and
:math:`J_0 - 2kJ_1 = -[k^3\Phi(k) + (k^2 - 1)\varphi(k)] = 0` by the equation for :math:`k`:
the support vectors fill the dimension, :math:`n_{\rm SV}/d \to 1`, and the replicon tends to
zero from above (the tests see :math:`1.2\cdot10^{-2}` at :math:`\alpha = 10` and
:math:`1.2\cdot10^{-4}` at :math:`\alpha = 100`): replica symmetry is marginally stable as
:math:`\alpha \to \infty`, never broken.

Simulation (``SIMULATION`` below): the hard-margin SVM as a least-distance programme,
:math:`\min|w|` subject to :math:`Zw \ge 1` (:math:`Z` the rows :math:`y_\mu x_\mu/\sqrt d`),
solved exactly by Lawson and Hanson's reduction to non-negative least squares
(``scipy.optimize.nnls``); measured: :math:`\kappa_{\max}`, :math:`R`,
:math:`\varepsilon_g` and :math:`1 - n_{\rm SV}/d` of that instance.

    replica solve --model examples/hinge_svm.py --alpha 2 --json
    replica simulate --model examples/hinge_svm.py --alpha 2 --d 200 --seeds 40 --json
"""

import numpy as np
import sympy

from replica.capabilities import Simulation
from replica.modeling import FixedPointModel, Parameter, Stability, gauss

alpha = sympy.Symbol("alpha", positive=True)
theta, kappa = sympy.symbols("theta kappa", positive=True)
t = sympy.Symbol("t", real=True)


def H(x):
    """The Gaussian tail H(x) = P(Z > x)."""
    return sympy.erfc(x / sympy.sqrt(2)) / 2


R = sympy.cos(theta)
x = sympy.Symbol("x", real=True)
SCALE = sympy.sin(theta) * sympy.exp(x**2 * sympy.cos(theta) ** 2 / 2)
"""The Jacobian of t = x sin(theta) against the standard normal measures:
Dt = sin(theta) e^{x^2 cos^2(theta)/2} Dx."""
HINGE_ENVELOPE = 2 * gauss(SCALE * H(-x * sympy.cos(theta)) * (kappa - x * sympy.sin(theta)) ** 2
                           * sympy.Heaviside(kappa - x * sympy.sin(theta)), x)
"""F(R, kappa) at R = cos(theta): the q -> 1 limit of the energetic term (squared margin
violations)."""
MARGIN_FRACTION = 2 * gauss(SCALE * H(-x * sympy.cos(theta))
                           * sympy.Heaviside(kappa - x * sympy.sin(theta)), x)
"""The probability that a training point is a support vector (its field t below kappa):
E[(p'(t) - 1)^2] for the margin constraint's proximal map p(t) = max(t, kappa)."""
REPLICON = 1 - alpha * MARGIN_FRACTION
"""The replicon at the maximal margin, 1 - n_SV/d (docstring)."""
BRACKET = sympy.sin(theta) ** 2 - alpha * HINGE_ENVELOPE
"""1 - R^2 - alpha F(R, kappa), the coefficient of 1/(2 epsilon) in the entropy."""

MODEL = FixedPointModel(
    "hinge_svm",
    title="Max-margin classifier on a sign teacher (Gardner margin, generalisation error)",
    residuals=[BRACKET, sympy.diff(BRACKET, theta)],
    unknowns=[theta, kappa],
    parameters=[Parameter("alpha", "samples per dimension n/d")],
    observables={"margin": {"kappa_max": kappa},
                 "overlap": {"R": R},
                 "errors": {"generalisation": theta / sympy.pi}},
    start={theta: sympy.atan(sympy.pi / (2 * alpha)),
           kappa: 1 / (alpha + sympy.sqrt(alpha))},
    positive_unknowns=True,
    admissible=[(sympy.pi / 2 - theta, "theta < pi/2 (R > 0)")],
    stability=Stability(replicon=REPLICON, source="derived in this file: the q -> 1 limit of the "
                        "Gardner-Derrida replicon with a teacher (Gardner and Derrida 1988; "
                        "Engel and Van den Broeck 2001), 1 - alpha P(support vector)"),
    symbol_names={alpha: r"\alpha", kappa: r"\kappa", theta: r"\vartheta"},
)


# ---------------------------------------------------------------------------------------------
# Simulation: the hard-margin SVM as a least-distance programme
# ---------------------------------------------------------------------------------------------
def _samples(d, params):
    return max(1, int(round(float(params.alpha) * d)))


def max_margin(Z):
    r"""The minimum-norm :math:`w` with :math:`Zw \ge 1` (Lawson and Hanson, *Solving Least
    Squares Problems*, ch. 23: with :math:`E = [Z^\top; 1^\top]` and :math:`f = (0, \dots, 0, 1)`,
    the non-negative least-squares solution :math:`u` of :math:`\min|Eu - f|` gives the residual
    :math:`r = Eu - f` and :math:`w = -r_{1..d}/r_{d+1}`)."""
    from scipy.optimize import nnls

    n, d = Z.shape
    E = np.vstack([Z.T, np.ones((1, n))])
    f = np.zeros(d + 1)
    f[-1] = 1.0
    u, _ = nnls(E, f, maxiter=50 * n)
    r = E @ u - f
    if not abs(r[-1]) > 1e-12:
        raise ArithmeticError("the constraints Z w >= 1 are infeasible")
    return -r[:d] / r[-1]


def _sample(rng, d, params):
    n = _samples(d, params)
    w_star = rng.standard_normal(d)
    w_star *= np.sqrt(d) / np.linalg.norm(w_star)
    X = rng.standard_normal((n, d))
    y = np.sign(X @ w_star)
    return X, y, w_star


def _train(instance, params):
    X, y, _ = instance
    return max_margin(y[:, None] * X / np.sqrt(X.shape[1]))


def _measure(instance, w_hat, params):
    X, y, w_star = instance
    r = float(w_hat @ w_star / (np.linalg.norm(w_hat) * np.linalg.norm(w_star)))
    margins = y * (X @ w_hat) / np.linalg.norm(w_hat)  # y x.w/sqrt(d) at |w|^2 = d
    kappa_max = float(np.min(margins))
    support = int(np.sum(margins <= kappa_max * (1 + 1e-8)))  # the points on the margin
    return {"margin.kappa_max": kappa_max,
            "overlap.R": r, "errors.generalisation": float(np.arccos(r) / np.pi),
            "stability.replicon": 1.0 - support / X.shape[1]}


SIMULATION = Simulation(_sample, _train, _measure,
                        sizes=lambda d, p: {"n": _samples(d, p)},
                        description="the hard-margin SVM (least-distance programme by NNLS) "
                                    "on n = round(alpha d) teacher-labelled samples")
