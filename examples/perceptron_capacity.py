r"""The storage capacity of the spherical perceptron with margin :math:`\kappa` (Gardner).

Setting: weights :math:`w \in \mathbb R^N` on the sphere :math:`|w|^2 = N`; :math:`P = \alpha N`
random patterns :math:`\xi^\mu` with labels :math:`y^\mu = \pm 1`; the constraints
:math:`y^\mu\, w\cdot\xi^\mu/\sqrt N \ge \kappa` for every :math:`\mu`. The capacity
:math:`\alpha_c(\kappa)` is the largest load at which the set of solutions (the Gardner volume)
is not empty, for :math:`N \to \infty`.

**Stated** (the replica-symmetric Gardner volume, Gardner 1988; a standard result that this file
does not re-derive): with :math:`q` the overlap of two solutions and
:math:`H(x) = \int_x^\infty \mathcal{D}t`,

.. math::
    \frac1N\langle\log V\rangle = \operatorname*{extr}_q\Big[\tfrac12\log(1-q)
        + \frac{q}{2(1-q)} + \alpha\int\mathcal{D}t\,
        \log H\Big(\frac{\kappa + \sqrt q\, t}{\sqrt{1-q}}\Big)\Big].

**Derived** (here): the capacity is the load at which the typical overlap reaches
:math:`q \to 1` (the volume shrinks to a point). With :math:`\epsilon = 1 - q \to 0` the argument
of :math:`H` tends to :math:`+\infty` where :math:`t > -\kappa` (there
:math:`\log H(x) = -x^2/2 + O(\log x)`) and to :math:`-\infty` where :math:`t < -\kappa` (there
:math:`\log H \to 0`), so the bracket is
:math:`\frac{1}{2\epsilon}\big(1 - \alpha I(\kappa)\big) + O(\log\epsilon)` with
:math:`I(\kappa) = \int\mathcal{D}z\,(z + \kappa)^2\,\theta(z + \kappa)`. Its derivative in
:math:`q` is :math:`\frac{1}{2\epsilon^2}(1 - \alpha I(\kappa)) + O(1/\epsilon)`; a stationary
point with :math:`\epsilon \to 0` needs the leading coefficient to vanish:
:math:`\alpha_c(\kappa) = 1/I(\kappa)`. This file declares exactly that equation, the residual
:math:`\alpha\,I(\kappa) - 1 = 0` with the Gaussian integral :math:`I` kept as an integral
(:func:`replica.modeling.gauss`): the engine finds the kink :math:`z = -\kappa` of the
integrand, integrates the two pieces, and proves the result in ball arithmetic
(``--certify``). At :math:`\kappa = 0`, :math:`I = 1/2` and :math:`\alpha_c = 2`; the tests
compare with the closed form :math:`I(\kappa) = (1 + \kappa^2)\Phi(\kappa) + \kappa\varphi(\kappa)`
(integrate by parts), written separately with mpmath.

**Replica-symmetry stability** (reported as ``stability.at_ratio``). Stated (de Almeida and
Thouless; Gardner and Derrida 1988): the replicon of the Gardner volume is positive when
:math:`1 > \alpha (1 - q)^2 \int\mathcal{D}t\,
\big[\partial_h^2 \log H\big((\kappa + h)/\sqrt{1 - q}\big)\big]^2_{h = \sqrt q\, t}`.
Derived: :math:`(1 - q)\,\partial_h^2 \log H(\cdot) = (\log H)''(x)`, which tends to
:math:`-1` where :math:`t > -\kappa` and to :math:`0` where :math:`t < -\kappa` as
:math:`q \to 1`, so at the capacity the condition is
:math:`r = \alpha_c\int\mathcal{D}z\,\theta(z + \kappa) < 1`, and ``at_ratio`` is :math:`r`
(the ratio rather than the difference :math:`1 - r`, which vanishes at :math:`\kappa = 0` and
has no relative digits there). It holds for :math:`\kappa > 0`, is marginal at
:math:`\kappa = 0` (:math:`2\cdot\tfrac12 = 1`) and fails
for :math:`\kappa < 0`, where the replica-symmetric capacity is not the exact one (replica
symmetry is broken there; this file does not compute the broken-symmetry value).

    replica solve --model examples/perceptron_capacity.py --kappa 0 --dps 40 --certify --json
"""

import sympy

from replica.modeling import FixedPointModel, Parameter, gauss

kappa = sympy.Symbol("kappa", real=True)
alpha = sympy.Symbol("alpha", positive=True)
z = sympy.Symbol("z", real=True)

GARDNER = gauss((z + kappa) ** 2 * sympy.Heaviside(z + kappa), z)
"""I(kappa) = int Dz (z + kappa)^2 theta(z + kappa): the q -> 1 limit of the energetic term."""

MODEL = FixedPointModel(
    "perceptron_capacity",
    title="Storage capacity of the spherical perceptron with margin kappa (Gardner)",
    residuals=[alpha * GARDNER - 1],
    unknowns=[alpha],
    parameters=[Parameter("kappa", "margin kappa of the constraints y w.x/sqrt(N) >= kappa",
                          domain="real")],
    observables={"capacity": {"alpha_c": alpha},
                 "stability": {"at_ratio": alpha * gauss(sympy.Heaviside(z + kappa), z)}},
    start={alpha: 2},
    positive_unknowns=True,
    symbol_names={kappa: r"\kappa", alpha: r"\alpha"},
)
