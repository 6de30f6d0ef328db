r"""The Bayes-optimal teacher--student perceptron: generalisation error and free entropy.

Setting: a teacher :math:`w^* \in \mathbb R^d` with i.i.d. entries from the prior :math:`P_0`
(``--prior gaussian``: :math:`N(0, 1)`; ``--prior rademacher``: :math:`\pm 1` with probability
1/2), :math:`n = \alpha d` samples :math:`x_\mu \sim N(0, I_d)` with labels
:math:`y_\mu = \operatorname{sign}(x_\mu\cdot w^*/\sqrt d)`; the student is the Bayes posterior
(it knows :math:`P_0` and the channel). In the limit :math:`d \to \infty` the overlap
:math:`m = \mathbb E\,\hat w\cdot w^*/d` of the posterior mean with the teacher equals its
self-overlap :math:`q` (Nishimori). For a Gaussian input two directions at angle
:math:`\theta` disagree on its sign with probability :math:`\theta/\pi`. The Bayes-optimal
classifier :math:`\operatorname{sign}(\hat w\cdot x)` (the posterior mean) has
:math:`\cos\theta = m/\sqrt{q\cdot 1} = \sqrt m`, so its error is
:math:`\varepsilon_{\rm Bayes} = \arccos(\sqrt m)/\pi`; the Gibbs classifier (one sample
:math:`w` of the posterior, :math:`w\cdot w^*/d = m`, :math:`|w|^2 = d`) errs with
:math:`\varepsilon_{\rm Gibbs} = \arccos(m)/\pi \ge \varepsilon_{\rm Bayes}`.

**Stated** (the replica-symmetric formula of Barbier, Krzakala, Macris, Miolane and
Zdeborova, PNAS 2019, proved there for generalised linear models; the Rademacher case is
Gyorgyi 1990): the free entropy per dimension is
:math:`\Phi = \operatorname{extr}_{m, \hat m}\big[-\tfrac12 m\hat m + \psi_{P_0}(\hat m)
+ \alpha\,\Psi_{\rm out}(m)\big]` with

.. math::
    \psi_{P_0}(\hat m) = \mathbb E_{Z, X_0}\log\int dP_0(x)\,
        e^{\sqrt{\hat m}\,Z x + \hat m X_0 x - \hat m x^2/2},\qquad
    \Psi_{\rm out}(m) = \mathbb E_{V, W^*}\sum_{y=\pm1} P(y\,|\,\sqrt m V + \sqrt{1-m}W^*)
        \log\int\mathcal{D}w\,P(y\,|\,\sqrt m V + \sqrt{1-m}\,w).

**Derived** (here): for the Gaussian prior the inner integral is Gaussian,
:math:`\int dP_0(x) e^{bx - \hat m x^2/2} = (1+\hat m)^{-1/2} e^{b^2/(2(1+\hat m))}`, and
:math:`\mathbb E b^2 = \hat m + \hat m^2` for :math:`b = \sqrt{\hat m}Z + \hat m X_0`, so
:math:`\psi = \tfrac12(\hat m - \log(1 + \hat m))`. For the Rademacher prior,
:math:`x^2 = 1` and the sign symmetry lets :math:`X_0 = 1`:
:math:`\psi = \int\mathcal{D}z\,\log\cosh(\hat m + \sqrt{\hat m}\,z) - \hat m/2`. For the sign
channel, :math:`P(y = 1\,|\,V) = H(-cV)` with :math:`c = \sqrt{m/(1-m)}` and
:math:`H(x) = \tfrac12\operatorname{erfc}(x/\sqrt2)`; the two labels contribute equally
(:math:`V \to -V`), so :math:`\Psi_{\rm out} = 2\int\mathcal{D}z\,H(cz)\log H(cz)`. The
stationarity conditions :math:`m = 2\psi'(\hat m)` and :math:`\hat m = 2\alpha\Psi_{\rm out}'(m)`
are what the engine solves, differentiating the Gaussian integrals under the integral sign
(they equal the published state evolution :math:`m = \hat m/(1+\hat m)`, resp.
:math:`m = \mathbb E\tanh(\hat m + \sqrt{\hat m}Z)` by Stein's lemma and the Nishimori identity,
and :math:`\hat m = \frac{2\alpha}{1-m}\int\mathcal{D}\xi\,\mathcal N(c\xi)^2/H(c\xi)`: the
tests check the engine's solutions against those forms, solved separately).

**Replica-symmetry stability** (``stability`` in the JSON: ``"replicon": null``,
``"stable": true`` and the reason below; no replicon is evaluated). *Stated* (Nishimori 1981 and
his *Statistical Physics of Spin Glasses and Information Processing*, 2001, ch. 4; for inference
problems Zdeborova and Krzakala, "Statistical physics of inference: thresholds and algorithms",
Adv. Phys. 2016, sec. on the Nishimori conditions; for generalised linear models with this
channel proved by Barbier et al. 2019, above): in Bayes-optimal inference the student's posterior
and the teacher's distribution coincide, so the Nishimori identities hold (here
:math:`m = q`, the overlap with the teacher equals the overlap of two posterior samples), the
overlap distribution of the equilibrium state concentrates on one value, and there is no replica
symmetry breaking: the replica-symmetric free entropy is exact, which Barbier et al. prove for
this model. The statement concerns the equilibrium branch (the solution with the largest free
entropy); ``replica solve`` says separately when a solution is metastable (the Rademacher
prior between :math:`\alpha_{IT}` and :math:`\alpha_{\rm alg}`).

``--prior`` is a SPEC (``gaussian`` or ``rademacher``) that stands for the weight
:math:`\rho \in \{0, 1\}` of the Rademacher term in
:math:`\psi = (1 - \rho)\psi_{\rm Gauss} + \rho\,\psi_{\rm Rad}`: one of the two priors, never a
mixture (a mixture prior's :math:`\psi` is not the mixture of the :math:`\psi`'s). The
Rademacher term is declared with the argument of its log cosh scaled by :math:`\rho`,
:math:`\rho\,(\hat m + \sqrt{\hat m}z)`: the same term for :math:`\rho = 1`, and for
:math:`\rho = 0` (weight 0) a finite one, so that the Gaussian prior's float64 code does not
overflow at large :math:`\alpha` (:math:`\hat m \sim 200` and beyond).

Reported: ``errors.bayes`` :math:`= \arccos(\sqrt m)/\pi`, ``errors.gibbs``
:math:`= \arccos(m)/\pi` (``errors.generalisation`` is the Gibbs error, as in earlier
versions of this file, which called it the Bayes-optimal one) and ``free_energy.free_entropy``
:math:`= \Phi` at the solution. For the Rademacher prior, :math:`m = 1` (perfect recovery) is
also a solution for every :math:`\alpha`; its free entropy is the limit
:math:`\hat m \to \infty`: :math:`\psi \to \hat m/2 - \log 2` (as
:math:`\log\cosh u = |u| - \log 2 + o(1)`), :math:`-m\hat m/2 = -\hat m/2` and
:math:`\Psi_{\rm out} \to 0` (:math:`H \log H \to 0`), so :math:`\Phi_{m=1} = -\log 2`
(:data:`PERFECT_RECOVERY_FREE_ENTROPY`). The engine solves the branch :math:`m < 1`; the
first-order transition :math:`\alpha_{IT}` is where its free entropy crosses
:math:`-\log 2` (above it the posterior concentrates on the teacher), and the algorithmic
threshold :math:`\alpha_{\rm alg}` is the fold where the branch :math:`m < 1` ends
(:mod:`replica.analysis.first_order`; published values 1.245, Gyorgyi 1990, and 1.493,
Barbier et al. 2019; found here :math:`\alpha_{IT} = 1.244683989850\ldots` and
:math:`\alpha_{\rm alg} = 1.492631818230\ldots`).

    replica solve --model examples/perceptron_teacher.py --alpha 1 --prior rademacher --json
"""

from fractions import Fraction

import sympy
from sympy.codegen.cfunctions import log1p

from replica.capabilities import Branch, Transition
from replica.errors import ParameterError
from replica.modeling import Parameter, SaddlePointModel, Stability, gauss
from replica.problem import SpecDomain

alpha = sympy.Symbol("alpha", positive=True)
rho = sympy.Symbol("prior", nonnegative=True)
m, mhat = sympy.symbols("m mhat", positive=True)
z = sympy.Symbol("z", real=True)


class _Prior(Fraction):
    """The weight rho of the Rademacher term, remembering the word it was given as."""

    def __new__(cls, value, spec):
        obj = super().__new__(cls, value)
        obj.spec = spec
        return obj


def parse_prior(raw, option):
    if isinstance(raw, _Prior):
        return raw
    text = str(raw).strip().lower()
    if text not in ("gaussian", "rademacher"):
        raise ParameterError(option, f"must be gaussian or rademacher, got {raw!r}")
    return _Prior(1 if text == "rademacher" else 0, text)


def H(x):
    """The Gaussian tail H(x) = P(Z > x)."""
    return sympy.erfc(x / sympy.sqrt(2)) / 2


# log1p: log(1 + mhat) rounds to 0 at mhat < 10^-dps (alpha = 1e-300), which left
# psi = mhat/2 instead of mhat^2/4 and a free entropy wrong in its first digit (-3.75e-301 for
# -alpha log 2 = -6.93e-301) that the re-solve at more digits did not see (the same rounding)
PSI_GAUSS = (mhat - log1p(mhat)) / 2


# log cosh u written as log1p(2 sinh(u/2)^2) (cosh u - 1 = 2 sinh(u/2)^2): the same function,
# without the cancellation of log(1 + u^2/2 + ...) at small u = mhat + sqrt(mhat) z, which lost
# log10(1/mhat) digits of the integral at a tiny sample ratio (alpha = 1e-30: 30 digits)
def psi_rademacher(scale=1):
    """psi_Rad(mhat) = E_z log cosh(u) - mhat/2 with the argument u = scale (mhat + sqrt(mhat) z)
    of log cosh (``scale`` = 1: the prior's psi; see :data:`FREE_ENTROPY` for scale = rho)."""
    u = scale * (mhat + sympy.sqrt(mhat) * z)
    return gauss(log1p(2 * sympy.sinh(u / 2)**2), z) - mhat / 2


PSI_RADEMACHER = psi_rademacher()
# The free entropy writes the Rademacher term with u = rho (mhat + sqrt(mhat) z): for the
# Rademacher prior (rho = 1) that is u itself (the same expression, the same values: 1 * x = x
# exactly); for the Gaussian prior (rho = 0) it is u = 0, where log cosh and all its
# derivatives in mhat are finite, and the term has weight 0: the same function of (m, mhat) for
# both priors. With u unscaled the Gaussian prior's weight-0 term overflowed in float64
# (sinh(u/2)^2 at u = mhat + sqrt(mhat) z > 710, its square in the Jacobian at u > 355, reached
# at mhat ~ 200, alpha ~ 20): 0 * inf = NaN in the Jacobian (alpha = 20: not-verified) and in
# the equations (alpha = 100: max-iterations). Scaling u, not mhat: at mhat^rho the derived
# fixed-point form divides by mhat (the float64 errors at alpha = 20..100 were 400-1500x
# larger), at rho mhat the derivative has z / sqrt(0) = inf times sinh(0) = 0, and a sum such as
# rho mhat + (1 - rho)^2 is expanded where SymPy derives the fixed-point form, where
# mhat/2 + 1/2 - 1 + 1/2 at rho = 1 rounds a tiny mhat away (float64, Rademacher:
# alpha = 1e-7 not-verified, 1e-12 NaN).
C = sympy.sqrt(m / (1 - m))
PSI_OUT = 2 * gauss(H(C * z) * sympy.log(H(C * z)), z)

FREE_ENTROPY = (-m * mhat / 2 + (1 - rho) * PSI_GAUSS
                + rho * psi_rademacher(scale=rho) + alpha * PSI_OUT)

PERFECT_RECOVERY_FREE_ENTROPY = -sympy.log(2)
"""The free entropy of the m = 1 solution (Rademacher prior), derived in the docstring."""

MODEL = SaddlePointModel(
    "perceptron_teacher",
    title="Bayes-optimal teacher-student perceptron (sign channel)",
    free_energy=FREE_ENTROPY,
    pairs=[(m, mhat)],
    parameters=[
        Parameter("alpha", "samples per dimension n/d"),
        Parameter("prior", "teacher prior: gaussian or rademacher",
                  domain=SpecDomain(parse_prior, describe="gaussian or rademacher"),
                  default="gaussian"),
    ],
    observables={"errors": {"bayes": sympy.acos(sympy.sqrt(m)) / sympy.pi,
                            "gibbs": sympy.acos(m) / sympy.pi,
                            "generalisation": sympy.acos(m) / sympy.pi}},
    free_energy_name="free_entropy",  # reported as free_energy.free_entropy
    extremum="max",  # a free entropy: of several solutions the equilibrium one has the largest
    start={m: sympy.Rational(1, 2)},
    positive_unknowns=True,
    admissible=[(1 - m, "m < 1")],
    symbol_names={alpha: r"\alpha", rho: r"\rho", mhat: r"\hat m"},
    stability=Stability(exact="Bayes-optimal inference: the Nishimori identities hold (m = q) "
                              "and the replica-symmetric free entropy is exact for the "
                              "equilibrium branch (Nishimori 2001; Zdeborova and Krzakala 2016; "
                              "proved by Barbier, Krzakala, Macris, Miolane and Zdeborova, PNAS "
                              "2019)"),
)

# --- transitions --- (replica transition --model examples/perceptron_teacher.py --name NAME)
PARTIAL = Branch("m < 1", start={"m": "0.7"}, accept=("m < 1",))
PERFECT = Branch("m = 1", free_energy="-log(2)",  # PERFECT_RECOVERY_FREE_ENTROPY, derived above
                 when={"prior": "rademacher"})
# `replica solve` compares each solution with it: between alpha_IT and alpha_alg the m < 1
# solution Newton's method finds is metastable, and the solve says so.
BRANCHES = [PERFECT]

TRANSITIONS = [
    Transition(
        "alpha-it", quantity="free_entropy", vary="alpha", kind="first-order",
        between=("1.24", "1.25"), params={"prior": "rademacher"}, branches=(PARTIAL, PERFECT),
        when={"prior": "rademacher"},  # with the Gaussian prior m < 1 is the only solution
        definition="information-theoretic threshold alpha_IT: the free entropy of the m < 1 "
                   "solution crosses -log 2, that of perfect recovery m = 1 (Rademacher prior)"),
    Transition(
        "alpha-alg", quantity="m", vary="alpha", kind="spinodal", guess="1.49",
        between=("1.4", "1.6"), params={"prior": "rademacher"}, when={"prior": "rademacher"},
        branches=(Branch("m < 1", start={"m": "0.8"}),),
        definition="algorithmic threshold alpha_alg: the spinodal where the m < 1 branch ends "
                   "(Rademacher prior)"),
]
