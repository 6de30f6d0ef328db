r"""The spherical perceptron below capacity: the Gardner volume at finite overlap, and the
de Almeida--Thouless (AT) line where its replica-symmetric solution becomes unstable.

Setting: as in ``examples/perceptron_capacity.py`` -- weights on the sphere :math:`|w|^2 = N`,
:math:`P = \alpha N` random patterns, constraints :math:`y^\mu w\cdot\xi^\mu/\sqrt N \ge \kappa`
-- now at a load :math:`\alpha < \alpha_c(\kappa)`, where the solutions form a set of positive
volume and two of them have the typical overlap :math:`q < 1`.

**Stated** (the replica-symmetric Gardner volume, Gardner 1988; not re-derived here): with
:math:`H(x) = \int_x^\infty\mathcal{D}t` and :math:`u(t) = (\kappa + \sqrt q\,t)/\sqrt{1 - q}`,

.. math::
    \frac1N\langle\log V\rangle = \operatorname*{extr}_q G(q),\qquad
    G(q) = \tfrac12\log(1-q) + \frac{q}{2(1-q)} + \alpha\int\mathcal{D}t\,\log H(u(t)),

a log-volume, so of several stationary points the equilibrium one has the *largest* ``G``
(``extremum="max"``). The replicon (de Almeida and Thouless 1978 for the SK model; Gardner and
Derrida 1988 for the perceptron) is

.. math::
    \lambda_R = 1 - \alpha(1 - q)^2\int\mathcal{D}t\,
        \big[\partial_h^2\log H\big((\kappa + h)/\sqrt{1 - q}\big)\big]^2_{h = \sqrt q\,t},

and the replica-symmetric solution is stable where :math:`\lambda_R > 0`.

**Derived** (here): the equation solved is the stationarity condition :math:`G'(q) = 0`,
written as :math:`2(1-q)^2G'(q) = q + \alpha\int\mathcal Dt\,2(1 - q)^2\,\partial_q\log
H(u(t)) = 0` (the closed part's derivative times :math:`2(1 - q)^2` is :math:`q`; SymPy
differentiates under the integral sign) so that it stays :math:`O(1)` as :math:`q \to 1`. Since
:math:`\partial_h^2 \log H((\kappa + h)/\sqrt{1-q}) = (\log H)''(u)/(1 - q)`, the replicon is
:math:`\lambda_R = 1 - \alpha\int\mathcal{D}t\,[(\log H)''(u)]^2` with
:math:`(\log H)''(u) = R(u)(u - R(u))`, :math:`R = \varphi/H` (the inverse Mills ratio). Limits
(checked by the tests): at :math:`\alpha \to 0`, :math:`q \to 0` and :math:`\lambda_R \to 1`;
as :math:`q \to 1` (:math:`\alpha \to \alpha_c`), :math:`(\log H)''(u) \to -1` where
:math:`t > -\kappa` and :math:`\to 0` where :math:`t < -\kappa`, so
:math:`\lambda_R \to 1 - \alpha_c\Phi(\kappa)` -- the ``at_ratio`` of
``examples/perceptron_capacity.py``: zero at :math:`\kappa = 0`, negative for
:math:`\kappa < 0`. So for :math:`\kappa < 0` the AT line :math:`\alpha_{AT}(\kappa)`, where
:math:`\lambda_R = 0`, lies below :math:`\alpha_c(\kappa)`:

    replica transition --model examples/perceptron_gardner.py --name at-line --kappa=-1/2

(Newton's method on the pair of equations :math:`G'(q) = 0`, :math:`\lambda_R = 0` in
:math:`(q, \alpha)`, from the declared guess; other margins need their own ``--guess`` and
``--branch RS:q=...``, e.g. from a ``replica solve`` near the line). At
:math:`\kappa = -1/2`: :math:`\alpha_{AT} = 3.950701313445220\ldots` (:math:`q = 0.8959\ldots`),
below :math:`\alpha_c = 4.77\ldots`.

*Float64* (up to :math:`\alpha = 1.99` at :math:`\kappa = 0`, :math:`q = 0.9974`; the
float64 solve failed from :math:`\alpha \approx 1.7`, :math:`q \approx 0.9`, before). Three
things make the float64 path right as :math:`q \to 1`, where :math:`u = (\kappa + \sqrt q\,t)/
\sqrt{1 - q}` is large: (1) :math:`\log H(u) = \log\operatorname{erfc}(u/\sqrt2) - \log 2`
is written as :class:`~replica.symbolic.gaussian.log_erfc` and the Mills ratio as
:math:`R = \sqrt{2/\pi}\,\operatorname{rerfcx}(u/\sqrt2)`, whose derivatives stay finite (the
derivative of :math:`\log\operatorname{erfc}` held :math:`e^{u^2/2}\operatorname{erfc}(\cdot)`
products that overflowed times underflowed: NaN Jacobians from :math:`q \approx 0.85`);
(2) the factor :math:`(1 - q)^2` stays inside the integral (expanded, it made three
integrals of size :math:`(1 - q)^{-2}` that cancel: about five digits lost at
:math:`\alpha = 1.99`); (3) the integrands vary on the scale :math:`\sqrt{1 - q}` of :math:`t`
around :math:`t = -\kappa/\sqrt q` (:math:`(\log H)'` goes from 0 to :math:`-u`), which the
float64 rule's fixed 24-node Gauss--Legendre pieces do not resolve (relative error
:math:`9\cdot 10^{-7}` in :math:`q` at :math:`\alpha = 1.99` -- reported ``converged``, since
the float64 error estimate re-evaluates the same rule): :func:`split` writes each integrand
as itself times indicators of the intervals of :math:`u` between :data:`BREAKS` (a sum equal
to it), which gives every rule breakpoints graded on that scale. Measured (``tests/
test_gardner_float64.py``): the float64 :math:`q` equals a plain-mpmath solution of
:math:`G'(q) = 0` to about :math:`10^{-16}` for :math:`\alpha = 1.5` to :math:`1.99`.

Reported: ``q``; ``free_energy.log_volume`` :math:`= G(q)`; ``stability.replicon``
:math:`= \lambda_R` (``replica solve`` says whether RS is stable there).
"""

import sympy

from replica.capabilities import Branch, Transition
from replica.modeling import FixedPointModel, Parameter, Stability, gauss
from replica.symbolic.gaussian import log_erfc, rerfcx

kappa = sympy.Symbol("kappa", real=True)
alpha = sympy.Symbol("alpha", positive=True)
q = sympy.Symbol("q", positive=True)
t = sympy.Symbol("t", real=True)

U = (kappa + sympy.sqrt(q) * t) / sympy.sqrt(1 - q)
LOG_H = log_erfc(U / sympy.sqrt(2)) - sympy.log(2)
"""log H(u) = log erfc(u/sqrt 2) - log 2, in log space (module docstring, *Float64*)."""
BREAKS = (-2, 0, 2, 8, 32, 128)
"""The values of u at which the Gaussian integrals are split (module docstring, *Float64*)."""


def split(f):
    r"""``f`` as the sum of ``f`` times the indicators of the intervals of :math:`u` between
    :data:`BREAKS` (the same function: the indicators sum to one), so that every quadrature rule
    has a breakpoint at each, graded on the scale :math:`\sqrt{1 - q}` of :math:`t` at
    :math:`t = -\kappa/\sqrt q`."""
    H = sympy.Heaviside
    pieces = [f * H(BREAKS[0] - U)] + [f * H(U - a) * H(b - U) for a, b in
                                        zip(BREAKS[:-1], BREAKS[1:])] + [f * H(U - BREAKS[-1])]
    return sympy.Add(*pieces)


LOG_VOLUME = (sympy.log(1 - q) / 2 + q / (2 * (1 - q)) + alpha * gauss(split(LOG_H), t))
"""G(q), the replica-symmetric log-volume per weight (stated, Gardner 1988)."""

STATIONARITY = q + alpha * gauss(split(2 * (1 - q) ** 2 * sympy.diff(LOG_H, q)), t)
"""2(1 - q)^2 G'(q): 2(1 - q)^2 times the derivative of the closed part is q, and the factor
(1 - q)^2 is taken inside the integral (module docstring, *Float64*)."""

MILLS = sympy.sqrt(2 / sympy.pi) * rerfcx(U / sympy.sqrt(2))
"""R(u) = phi(u)/H(u) = sqrt(2/pi) e^{-u^2/2}/erfc(u/sqrt 2), as rerfcx (finite everywhere)."""

REPLICON = 1 - alpha * gauss(split((MILLS * (U - MILLS)) ** 2), t)
"""1 - alpha int Dt [(log H)''(u)]^2 (Gardner and Derrida 1988, normalisation derived above)."""

MODEL = FixedPointModel(
    "perceptron_gardner",
    title="Gardner volume of the spherical perceptron below capacity (margin kappa)",
    residuals=[STATIONARITY],
    unknowns=[q],
    parameters=[Parameter("alpha", "load P/N (below the capacity alpha_c(kappa))"),
                Parameter("kappa", "margin kappa of the constraints y w.x/sqrt(N) >= kappa",
                          domain="real")],
    free_energy=LOG_VOLUME, free_energy_name="log_volume", extremum="max",
    stability=Stability(replicon=REPLICON,
                        source="stated: Gardner and Derrida 1988, the de Almeida-Thouless "
                               "condition of the Gardner volume"),
    start={q: sympy.Rational(1, 2)},
    positive_unknowns=True,
    admissible=[(1 - q, "q < 1")],
    symbol_names={kappa: r"\kappa", alpha: r"\alpha"},
)

TRANSITIONS = [
    Transition("at-line", quantity="replicon", vary="alpha", kind="level", level="0",
               guess="39/10", params={"kappa": "-1/2"}, branches=(Branch("RS", start={"q": "0.9"}),),
               definition="de Almeida-Thouless line: the replicon of the replica-symmetric "
                          "Gardner volume vanishes (RS unstable above it; for kappa < 0 below "
                          "the RS capacity)"),
]
