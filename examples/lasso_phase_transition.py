r"""The Donoho--Tanner phase transition of :math:`\ell_1` recovery, from the noiseless LASSO
(``examples/lasso.py``) in the limit :math:`\lambda \to 0^+`.

Setting: as in ``examples/lasso.py`` with :math:`\sigma = 0`: :math:`n = \delta d` noiseless
Gaussian measurements of a Gauss--Bernoulli vector with a fraction :math:`\varepsilon = \rho\delta`
of non-zero entries (:math:`\rho`: non-zeros per measurement). As :math:`\lambda \to 0^+` the
LASSO becomes basis pursuit, :math:`\min\|w\|_1` subject to :math:`Xw = Xw^*`. The weak
:math:`\ell_1` phase transition :math:`\rho_{DT}(\delta)` separates exact recovery
(:math:`\rho < \rho_{DT}`: the risk tends to 0 as :math:`\lambda \to 0^+`) from failure.

**Derived** (here, from the fixed point of ``examples/lasso.py``, written as there with the
effective noise :math:`\tau^2 = \mathrm{risk}/\delta` and the threshold
:math:`\zeta = \theta\tau`). Soft thresholding is homogeneous,
:math:`\eta(\tau x; \tau\theta) = \tau\eta(x; \theta)`, so the fixed point
:math:`\delta\tau^2 = \mathbb E(\eta(w^* + \tau Z; \theta\tau) - w^*)^2` reads
:math:`\delta = M_\tau(\theta) = \mathbb E(\eta(w^*/\tau + Z; \theta) - w^*/\tau)^2`, and the
calibration :math:`\lambda = \zeta(\delta - \mathbb E\eta')`. Recovery means
:math:`\mathrm{risk} \to 0`, i.e. :math:`\tau \to 0` with :math:`\lambda`. Then :math:`w^*/\tau`
diverges on the non-zero entries, where :math:`\eta(w^*/\tau + Z;\theta) - w^*/\tau \to
Z - \theta\operatorname{sign}w^*`, and

.. math::
    M_0(\theta) = \varepsilon\int\mathcal Dz\,(z - \theta)^2
      + (1 - \varepsilon)\int\mathcal Dz\,\Big[(z - \theta)^2\theta(z - \theta)
      + (z + \theta)^2\theta(-z - \theta)\Big]

(the second integral is :math:`\mathbb E\,\eta(Z; \theta)^2`, with the kinks of soft
thresholding at :math:`z = \pm\theta`). In the same limit
:math:`\mathbb E\eta' \to \varepsilon + (1 - \varepsilon)2\Phi(-\theta)
= M_0(\theta) - \tfrac\theta2 M_0'(\theta)` (differentiate :math:`M_0` under the integral), so
at :math:`M_0(\theta) = \delta` the calibration is
:math:`\lambda/\tau = \tfrac12\theta^2 M_0'(\theta)`: a recovering solution
(:math:`\lambda, \tau \to 0^+` with :math:`\lambda/\tau \ge 0`) is a root of
:math:`M_0(\theta) = \delta` where :math:`M_0` increases. :math:`M_0` is strictly convex
(:math:`M_0'' = 2\varepsilon + 4(1 - \varepsilon)\Phi(-\theta) > 0`), so such a root exists iff
:math:`\delta \ge \min_\theta M_0(\theta)`. The boundary is the pair

.. math::  M_0'(\chi) = 0, \qquad M_0(\chi) = \delta,

:math:`\chi` the *minimax threshold*. **Stated**: that this replica / state-evolution boundary is
the weak phase transition of basis pursuit (Donoho, Maleki and Montanari, "Message-passing
algorithms for compressed sensing", PNAS 2009, where it is shown to coincide with Donoho and
Tanner's combinatorial-geometry curve; Bayati and Montanari 2012 prove the LASSO risk formula it
comes from).

This file declares the minimax threshold as the unknown of a fixed-point model: the residual
:math:`M_0'(\chi) = 0` (the derivative taken by the engine under the integral sign), and
reports ``transition.slope`` :math:`= M_0(\chi)/\delta`, the slope at :math:`\tau = 0` of the
state-evolution map :math:`\tau^2 \mapsto \mathbb E(\eta - w^*)^2/\delta` at the best threshold:
below 1 where :math:`\ell_1` recovers the teacher (:math:`\tau = 0` is then a stable fixed point),
above 1 where it fails. ``replica transition`` locates :math:`\rho_{DT}(\delta)` as the
crossing of level 1 in :math:`\rho` (a level rather than the margin
:math:`\delta - M_0(\chi)`, whose value at the crossing is 0 and so has no relative digits for
the locator's agreement check):

    replica transition --model examples/lasso_phase_transition.py --delta 1/2 --vary rho \
        --between 1/10,9/10 --quantity slope --kind level --level 1 --dps 30 --json

or, the same declared below as ``TRANSITIONS``,
``replica transition --model examples/lasso_phase_transition.py --name donoho-tanner --delta 1/4``.

(The tests compare with the parametric closed form that eliminating :math:`\varepsilon` gives,
:math:`\delta = 2\varphi(\chi)/(\chi + 2[\varphi(\chi) - \chi\Phi(-\chi)])`,
:math:`\rho = 1 - \chi\Phi(-\chi)/\varphi(\chi)`, written separately with mpmath.)
"""

import sympy

from replica.capabilities import Transition
from replica.modeling import FixedPointModel, Parameter, Rule, gauss

delta, rho = sympy.symbols("delta rho", positive=True)
chi = sympy.Symbol("chi", positive=True)
z = sympy.Symbol("z", real=True)

eps = rho * delta
SOFT_SQUARED = gauss((z - chi) ** 2 * sympy.Heaviside(z - chi)
                     + (z + chi) ** 2 * sympy.Heaviside(-z - chi), z)
"""E eta(Z; chi)^2: soft thresholding of pure noise, kinks at +-chi."""
NOISE_SENSITIVITY = eps * gauss((z - chi) ** 2, z) + (1 - eps) * SOFT_SQUARED
"""M_0(chi): the tau -> 0 limit of the fixed point's mean squared error over tau^2."""

MODEL = FixedPointModel(
    "lasso_phase_transition",
    title="Donoho-Tanner l1 phase transition from the noiseless LASSO (lambda -> 0+)",
    residuals=[sympy.diff(NOISE_SENSITIVITY, chi)],
    unknowns=[chi],
    parameters=[
        Parameter("delta", "measurements per dimension n/d (undersampling ratio)"),
        Parameter("rho", "non-zero teacher entries per measurement (eps = rho delta)"),
    ],
    rules=[Rule("rho", lambda p: p.rho * p.delta > 1,
                "rho delta is the fraction eps of non-zero entries: at most 1")],
    observables={"threshold": {"minimax": chi},
                 "transition": {"slope": NOISE_SENSITIVITY / delta, "eps": eps}},
    start={chi: 1},
    positive_unknowns=True,
    symbol_names={delta: r"\delta", rho: r"\rho", chi: r"\chi"},
)

TRANSITIONS = [
    Transition(
        "donoho-tanner", quantity="slope", vary="rho", kind="level", level="1",
        between=("1/20", "19/20"), params={"delta": "1/2"},
        definition="the weak l1 (Donoho-Tanner) phase transition rho_DT(delta): where the "
                   "slope M_0(chi)/delta of the noiseless state evolution at the minimax "
                   "threshold crosses 1"),
]
