r"""The separability threshold of logistic regression (existence of the maximum-likelihood
estimate), for the labels of ``examples/logistic_regression.py``.

Setting: :math:`n = \alpha d` samples :math:`x_i \sim N(0, I_d)`, teacher field
:math:`u_i = x_i\cdot e` (:math:`e` the unit teacher direction), labels
:math:`y_i = \operatorname{sign}(L_i)`, :math:`L_i = \eta u_i + \sqrt{1-\eta^2}\,\varepsilon_i`
(a probit teacher of signal strength :math:`\gamma = \eta/\sqrt{1-\eta^2}`). The unregularised
logistic loss :math:`\sum_i \log(1 + e^{-y_i x_i\cdot w})` has a minimiser iff the data are not
linearly separable (if some :math:`w` has :math:`y_i x_i\cdot w > 0` for all :math:`i`, the loss
along :math:`c\,w` tends to 0 as :math:`c \to \infty` and is never attained; otherwise it is
coercive). The threshold :math:`\alpha_c(\eta)`: separable w.p. :math:`\to 1` below it, not above.

**Stated** (Gardner's capacity with independent random margins; the replica-symmetric result is
the one of ``examples/perceptron_capacity.py`` with the energetic term averaged over the margin
law, and it is proved for this problem by Candes and Sur, Ann. Statist. 2020 / Sur and Candes,
PNAS 2019): unit vectors :math:`v \in \mathbb R^{D}` with :math:`v\cdot g_i \ge \kappa_i` for
:math:`n = \alpha D` standard Gaussian :math:`g_i` and i.i.d. margins :math:`\kappa_i` independent
of them exist iff :math:`\alpha < 1/\mathbb E_\kappa I(\kappa)`, with
:math:`I(\kappa) = \int\mathcal D z\,(z + \kappa)^2\theta(z + \kappa)
= (1 + \kappa^2)\Phi(\kappa) + \kappa\varphi(\kappa)`.

**Derived** (here). Write :math:`x_i = u_i e + g_i` (:math:`g_i \perp e`, standard Gaussian in
:math:`d - 1` dimensions, independent of :math:`u_i, y_i`) and
:math:`w = \cos\theta\, e + \sin\theta\, v`. For :math:`\sin\theta > 0` the constraints read
:math:`v\cdot g_i > -t\,y_i u_i` with :math:`t = \cot\theta \in \mathbb R`: a Gardner problem with
margins :math:`\kappa_i = -t\,y_i u_i` (:math:`\theta \in \{0, \pi\}` separates only if every
:math:`y_i u_i` has one sign, which has probability :math:`\to 0` for :math:`\eta < 1`). So the
data are separable iff :math:`\alpha < 1/h(t)` for some :math:`t`, i.e.

.. math::  \alpha_c(\eta) = \frac{1}{\min_t h(t)},\qquad
           h(t) = \mathbb E\,\big(Z - t\,Y U\big)_+^2,

Sur and Candes' :math:`h_{\rm MLE}` (their :math:`\kappa = p/n = 1/\alpha`). To make :math:`h` a
one-dimensional integral: :math:`(U, L)` is a standard pair of correlation :math:`\eta`, so
:math:`U = \eta L + \sqrt{1-\eta^2}\,W` with :math:`W` independent of :math:`L`, and
:math:`YU = \eta|L| + \sqrt{1-\eta^2}\,YW`, where :math:`YW` is standard normal and independent of
:math:`|L|` (and of :math:`Z`). Hence
:math:`Z - tYU = sZ' - t\eta|L|` with :math:`s = \sqrt{1 + t^2(1-\eta^2)}` and

.. math::  h(t) = 2\int\mathcal D l\;\theta(l)\; s^2\, I(-t\eta\, l/s).

The threshold is where :math:`h'(t) = 0` (solved here for :math:`t`, the derivative taken under
the integral sign). :math:`\eta = 0`: :math:`h = (1 + t^2)/2`, minimal at :math:`t = 0`,
:math:`\alpha_c = 2` (Cover's theorem). :math:`\eta = 1` (the noiseless sign teacher):
:math:`h(t) = 2\int_0^\infty\mathcal D l\, I(-tl)` decreases to 0 as :math:`t \to \infty`, there
is no stationary point and :math:`\alpha_c = \infty` (the teacher separates the data at every
:math:`\alpha`); the solve fails there, as it should.

Reported: ``threshold.alpha_c`` :math:`= 1/h(t^*)`, ``threshold.kappa_c``
:math:`= h(t^*)` (Sur and Candes' :math:`p/n`), and ``threshold.ratio``
:math:`= \alpha\,h(t^*)` for a given ``--alpha``: the data are separable iff it is below 1, so
the threshold is also the level crossing located by ``replica transition``:

    replica solve --model examples/logistic_separability.py --eta 1/2 --dps 30 --json
    replica transition --model examples/logistic_separability.py --vary alpha --between 2,20 --quantity ratio --kind level --level 1 --eta 1/2 --dps 30
"""

import sympy

from replica.modeling import FixedPointModel, Parameter, Rule, gauss

eta = sympy.Symbol("eta", nonnegative=True)
alpha = sympy.Symbol("alpha", positive=True)
t = sympy.Symbol("t", real=True)
l = sympy.Symbol("l", real=True)  # noqa: E741 - the latent field


def gardner(kappa):
    r""":math:`I(\kappa) = (1 + \kappa^2)\Phi(\kappa) + \kappa\varphi(\kappa)`."""
    Phi = sympy.erfc(-kappa / sympy.sqrt(2)) / 2
    phi = sympy.exp(-kappa**2 / 2) / sympy.sqrt(2 * sympy.pi)
    return (1 + kappa**2) * Phi + kappa * phi


S2 = 1 + t**2 * (1 - eta**2)
H = 2 * gauss(sympy.Heaviside(l) * S2 * gardner(-t * eta * l / sympy.sqrt(S2)), l)
"""h(t) = E (Z - t Y U)_+^2."""


def _above_one(p):
    return p.eta >= 1


MODEL = FixedPointModel(
    "logistic_separability",
    title="Separability threshold of logistic regression on a probit teacher (Sur-Candes)",
    residuals=[sympy.diff(H, t)],
    unknowns=[t],
    parameters=[
        Parameter("eta", "teacher-label correlation in [0, 1): y = sign(eta u + "
                         "sqrt(1-eta^2) noise)", domain="nonnegative"),
        Parameter("alpha", "samples per dimension n/d (only for threshold.ratio)", default=1),
    ],
    rules=[Rule("eta", _above_one, "eta must be below 1 (eta = 1: the data are always "
                                   "separable, alpha_c = infinity)")],
    observables={"threshold": {"alpha_c": 1 / H, "kappa_c": H, "ratio": alpha * H}},
    start={t: 1},
    symbol_names={eta: r"\eta", alpha: r"\alpha"},
)
