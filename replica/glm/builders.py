r"""Generalised linear models declared from their parts: :func:`ERM` (empirical risk
minimisation) and :func:`BayesOptimal`, each returning a
:class:`~replica.modeling.SaddlePointModel` whose free energy is *derived* from the parts.

Setting: :math:`n = \alpha d` samples :math:`x_\mu \sim N(0, I_d)`; a teacher :math:`w^*` with
i.i.d. entries from the prior :math:`P_0` (second moment :math:`\rho`); labels
:math:`y_\mu \sim P_{\rm out}(\cdot\,|\,u_\mu)` of the teacher field
:math:`u_\mu = x_\mu\cdot w^*/\sqrt d` (the channel).

**ERM, stated** (the zero-temperature replica-symmetric free energy of empirical risk
minimisation :math:`\min_w \sum_\mu\ell(y_\mu, x_\mu\cdot w/\sqrt d) + \sum_i r(w_i)` for a GLM
with Gaussian i.i.d. covariates: Aubin, Maillard, Barbier, Krzakala, Macris and Zdeborova,
NeurIPS 2020; Gerace, Loureiro, Krzakala, Mezard and Zdeborova, ICML 2020; Loureiro et al.,
NeurIPS 2021), in the conventions of ``examples/logistic_regression.py``: with
:math:`m = w\cdot w^*/d`, :math:`q = |w|^2/d`, the susceptibility :math:`V` and conjugates
:math:`\hat m, \hat q, \hat V` (pairs :math:`(m, \hat m), (q, \hat V), (V, \hat q)`),

.. math::
    \Phi = -m\hat m + \tfrac12 q\hat V - \tfrac12 V\hat q + \Psi_w - \alpha\,\mathbb E_{y,\omega}
           \mathcal M_V(y, \omega),

    \Psi_w = \mathbb E_{w^*, Z}\max_w\big[-\tfrac{\hat V}2 w^2 + (\hat m w^* + \sqrt{\hat q}Z)w
             - r(w)\big],\qquad
    \mathcal M_V(y, \omega) = \min_p\Big[\frac{(p - \omega)^2}{2V} + \ell(y, p)\Big],

with :math:`(u, \omega)` jointly Gaussian, :math:`\mathbb Eu^2 = \rho`, :math:`\mathbb Eu\omega = m`,
:math:`\mathbb E\omega^2 = q`.

**ERM, derived** (by :mod:`replica.glm.calculus`, from the parts): the penalty's inner maximum
(:math:`-\min_w[\hat Vw^2/2 - bw + r(w)]`, solved piecewise), averaged over each component of the
prior (a point mass :math:`a`: :math:`b = \hat ma + \sqrt{\hat q}Z`; a Gaussian of variance
:math:`s^2`: :math:`b = \sqrt{\hat m^2s^2 + \hat q}\,Z`; two symmetric point masses are folded into
one integral when the maximum is even in :math:`b`); the loss's Moreau envelope (a residual loss
:math:`\ell(y - p)`: :math:`\mathcal M_V` is the envelope at :math:`r = y - \omega`; a margin loss
:math:`\ell(yp)`: the envelope at :math:`y\omega`); the label average by Gaussian conditioning
(the linear channel: :math:`r = u + \sigma\varepsilon - \omega` is Gaussian with the variance
computed from the covariance; a latent-linear classification channel
:math:`y = \operatorname{sign}(au + b\varepsilon)`:
:math:`P(y = 1\,|\,\omega = \sqrt q\xi)` is a Gaussian tail, and the label sum is folded into
twice the :math:`y = 1` term when :math:`P(1\,|\,-\xi) = 1 - P(1\,|\,\xi)`, checked by SymPy;
a regression channel with a piecewise-linear link :math:`y = c_\pm u + \sigma\varepsilon` on
:math:`\pm u > 0` (ReLU, absolute value): the square loss by the half moments of the teacher
field, an even loss by the symmetry :math:`(u, r) \to (-u, -r)` of the centred Gaussian pair of
the field and the residual :math:`r_\pm = c_\pm u + \sigma\varepsilon - \omega`, which makes
the label average :math:`\tfrac12\sum_\pm\mathbb E f(r_\pm)`, two one-dimensional Gaussian
integrals -- see ``_link_average``).

**ERM, replica-symmetric stability** (stated: the de Almeida--Thouless condition of convex GLM
estimation, e.g. Gerace et al. 2020 and Aubin et al. 2020, appendices on the stability of the RS
solution): the replicon

.. math::  \lambda_{\rm AT} = 1 - \alpha\,\mathbb E_{y,\omega}\big[(\partial_\omega g_{\rm out})^2
           \big]\;\mathbb E_{w^*, Z}\big[(\partial_b f_w)^2\big],\qquad
           g_{\rm out} = \frac{\operatorname{prox}(\omega) - \omega}{V},

:math:`f_w(b)` the penalty's maximiser, must be positive. In these conventions the stationarity
conditions read :math:`V = \mathbb E\,\partial_bf_w` and :math:`\hat V = -\alpha\,\mathbb E\,
\partial_\omega g_{\rm out}` (Stein's lemma), so the replicon is the same pair of averages with
the squares inside; by Cauchy--Schwarz :math:`1 - \lambda_{\rm AT} \ge (V\hat V)^2/\alpha`, with
equality for the square loss with the ridge penalty (the tests check it), where
:math:`\lambda_{\rm AT} = 1 - \alpha V^2/(1 + V)^2 > 0` for every :math:`\lambda > 0`.

**Bayes-optimal, stated** (Barbier, Krzakala, Macris, Miolane and Zdeborova, PNAS 2019, proved
there; the conventions of ``examples/perceptron_teacher.py``): the free entropy
:math:`\Phi = \operatorname{extr}_{m,\hat m}[-\tfrac12m\hat m + \psi_{P_0}(\hat m)
+ \alpha\Psi_{\rm out}(m)]` with

.. math::
    \psi_{P_0}(\hat m) = \mathbb E_{Z, X_0}\log\int dP_0(x)\,e^{(\sqrt{\hat m}Z + \hat mX_0)x
        - \hat mx^2/2},\qquad
    \Psi_{\rm out}(m) = \mathbb E_\xi\sum_y Z_{\rm out}(y, \sqrt m\xi, \rho - m)
        \log Z_{\rm out}(y, \sqrt m\xi, \rho - m),

:math:`Z_{\rm out}(y, \omega, V) = \mathbb E_w P_{\rm out}(y\,|\,\omega + \sqrt Vw)`.
**Derived** here: the inner integral per prior component (a Gaussian component by completing the
square, point masses as exponentials, two symmetric ones as a :math:`\cosh`), its logarithm
expanded, the outer average per component of :math:`X_0` as above (polynomial terms by their
moments, the rest a Gaussian integral, symmetric point masses folded when the integrand is even);
:math:`Z_{\rm out}` by Gaussian conditioning (a Gaussian tail for a latent-linear sign channel, a
Gaussian density for the linear channel; for the noiseless ReLU channel an atom at :math:`y = 0`,
a Gaussian tail, and a Gaussian density on :math:`y > 0`, whose :math:`\log` is averaged over the
tail in closed form; for the ReLU channel with noise the label's density convolved with the noise, whose
:math:`Z_{\rm out}\log Z_{\rm out}` is a two-dimensional Gaussian integral over the field and the label;
for the noiseless absolute-value channel :math:`y = |u|`, real phase retrieval, the density
:math:`N(y; \omega, V) + N(-y; \omega, V)` on :math:`y > 0`, folded to a Gaussian factor times
:math:`2\cosh(y\omega/V)`, whose average is a closed part plus
:math:`\mathbb E\log 2\cosh(u\omega/V)`, a two-dimensional Gaussian integral over the field
and :math:`u` reduced by polar coordinates to a one-dimensional one of a digamma expression;
the noisy one, :math:`y = |u| + \sigma\varepsilon`, as the noisy ReLU's: two
Gaussian-times-erfc terms exchanged by :math:`\omega \to -\omega`, a two-dimensional integral
in log space, see ``_psi_out_abs_noisy``). Replica symmetry is exact there (the Nishimori identities;
Barbier et al. prove the formula), so its stability record says so.
"""

from __future__ import annotations

import dataclasses
from typing import Sequence

import sympy

from ..errors import keywords_checked
from ..modeling import LAMBDA_I, MU_I, ModelError, Parameter, SaddlePointModel, Stability, avg
from ..problem import Rule
from ..symbolic.gaussian import GaussianIntegral, digamma_difference, log_erfc, softplus
from ..symbolic import Step
from . import calculus
from .parts import (CHANNELS, LOSSES, PENALTIES, PRIORS, T, Channel, Gaussian, Loss, PartError,
                    Penalty, Prior)

__all__ = ["ERM", "BayesOptimal", "Teacher", "Covariates", "GLMDerivation", "GLMParts",
           "REFERENCES", "replicon_at"]

REFERENCES = {
    "erm": "Aubin et al., NeurIPS 2020; Gerace et al., ICML 2020; Loureiro et al., NeurIPS 2021",
    "at": "de Almeida and Thouless 1978; for convex GLM estimation Gerace et al., ICML 2020 and "
          "Aubin et al., NeurIPS 2020 (stability of the RS solution)",
    "bayes": "Barbier, Krzakala, Macris, Miolane and Zdeborova, PNAS 2019",
}

m, q, V = sympy.symbols("m q V", positive=True)
mhat, qhat, Vhat = sympy.symbols("mhat qhat Vhat", real=True)
mhat_pos = sympy.Symbol("mhat", positive=True)
m_bo = sympy.Symbol("m", positive=True)
xi, z = sympy.symbols("xi z", real=True)
b_ = sympy.Symbol("b", real=True)
x_ = sympy.Symbol("x", real=True)
RHO_TEACHER = sympy.Symbol("rho_teacher", positive=True)
r"""With :class:`Covariates`: the teacher field's variance :math:`\rho = \mathbb E(x\cdot
w^*)^2/d = \langle ct\rangle\,\mathbb Ea^2`, an alias (a spectral average fixed by the
parameters)."""


@keywords_checked(PartError)
@dataclasses.dataclass(frozen=True)
class Teacher:
    """The teacher: a ``channel`` and a ``prior`` (default Gaussian)."""

    channel: Channel
    prior: Prior = dataclasses.field(default_factory=Gaussian)


@keywords_checked(PartError)
@dataclasses.dataclass(frozen=True)
class Covariates:
    r"""Gaussian covariates with a diagonal covariance :math:`C = \operatorname{diag}(c_i)`
    given as a SPEC (parameter ``covariance``), and optionally a teacher power
    :math:`t_i` per coordinate (parameter ``teacher``, a second SPEC: the teacher's entries are
    :math:`w^*_i = \sqrt{t_i}\,a_i` with :math:`a_i` from the prior). The spectral averages run
    over the pairs :math:`(c_i, t_i)` (``LAMBDA_I``,
    ``MU_I`` of :mod:`replica.modeling`); ``d`` is the SPECs' dimension. ``teacher=None``: every
    :math:`t_i = 1`. A rotation-invariant penalty (ridge) needs only the spectrum of :math:`C`;
    a coordinate-wise one (:math:`\ell_1`) uses that :math:`C` is diagonal in the coordinates
    the penalty acts on."""

    covariance: str = "covariance"
    teacher: str | None = "teacher"


@dataclasses.dataclass(frozen=True)
class GLMParts:
    """The parts an :func:`ERM` model was declared from (its attribute ``glm_parts``) and the
    name of its sample-ratio parameter: what :func:`replica.glm.simulation_of` builds the
    finite-size simulation from."""

    loss: Loss
    penalty: Penalty
    channel: Channel
    prior: Prior
    alpha: str = "alpha"
    covariates: Covariates | None = None


class GLMDerivation:
    """The record of how a GLM's free energy came from its parts: :meth:`steps` (each a
    :class:`~replica.symbolic.Step`, stated ones labelled with their reference) and
    ``free_energy()``; what :class:`~replica.modeling.SaddlePointModel` takes as
    ``derivation=`` (the appendix starts there; ``replica equations`` lists the steps)."""

    def __init__(self):
        self._steps: list = []
        self._free_energy = None

    def add(self, name, objects, sentence, check=None, stated=""):
        self._steps.append(Step(f"glm_{name}", objects, sentence, check, stated))

    def steps(self) -> tuple:
        return tuple(self._steps)

    TITLES = {
        "general_free_energy": "The general free energy of the estimator",
        "general_free_entropy": "The general free entropy of Bayes-optimal inference",
        "free_entropy": "The free entropy assembled from the parts",
        "penalty_channel": "The penalty's scalar problem",
        "prior_average": "Average over the teacher prior and the field",
        "prior_partition": "The prior's scalar partition function",
        "envelope": "The loss's Moreau envelope",
        "label_law": "The law of the label given the field",
        "energetic": "The energetic term",
        "channel_partition": "The channel's partition function",
        "channel_average": "Average over the label and the field",
        "free_energy": "The free energy assembled from the parts",
        "replicon": "Replica-symmetric stability: the replicon",
    }
    """Headings of the steps in an appendix (``replica appendix --model``)."""

    def titles(self) -> dict:
        """``{step name: heading}`` of the steps recorded."""
        return {s.name: self.TITLES[s.name[len("glm_"):]] for s in self._steps
                if s.name[len("glm_"):] in self.TITLES}

    def free_energy(self):
        return self._free_energy

    def table(self) -> list:
        """``[(description, equation, 'stated' | 'derived')]``, one row per displayed
        equation."""
        rows = []
        for s in self._steps:
            for eq in s.objects.values():
                rows.append((s.sentence, eq, "stated" if s.stated else "derived"))
        return rows


# ---------------------------------------------------------------------------------------------
# Parameters
# ---------------------------------------------------------------------------------------------
def _schema(name, parts, parameters: Sequence, alpha: str):
    r"""The model's Parameter records and rules: ``alpha``, then each part's parameters (the
    user's records of the same name replace them), and the symbols by name. A part's parameter
    named as the sample ratio is refused (:class:`ModelError`): it would be the sample ratio
    itself, a penalty :math:`\lambda = \alpha` that no one declares on purpose; two parts may
    share a parameter of the same domain."""
    if not isinstance(alpha, str) or not alpha.isidentifier():
        raise ModelError(f"model {name!r}: alpha= names the sample-ratio parameter, got "
                         f"{alpha!r}")
    specs = {alpha: ("samples per dimension n/d", "positive", r"\alpha", None)}
    for part in parts:
        for p in part.params:
            if p.name == alpha:  # (same domain: it would silently be the sample ratio itself)
                raise ModelError(f"model {name!r}: parameter {p.name!r} of the "
                                 f"{type(part).__name__.lower()} {part.name!r} is the name of the "
                                 "sample ratio n/d (it would be tied to it): give it another "
                                 "name, or the sample ratio another (alpha='...')")
            old = specs.get(p.name)
            if old is not None and old[1] != p.domain:
                raise ModelError(f"model {name!r}: parameter {p.name!r} is used by two parts "
                                 f"with different domains ({old[1]}, {p.domain})")
            specs.setdefault(p.name, (p.help, p.domain, p.notation, p.at_most))
    given = {}
    for p in parameters:
        if not isinstance(p, Parameter):
            raise ModelError(f"model {name!r}: parameters must be Parameter records, got {p!r}")
        if p.name not in specs:
            raise ModelError(f"model {name!r}: parameter {p.name!r} is used by no part "
                             f"(the parts use {', '.join(specs)})")
        given[p.name] = p
    records, rules, notation = [], [], {}
    for n, (help_, domain, tex, at_most) in specs.items():
        records.append(given.get(n) or Parameter(n, help_, domain=domain, notation=tex))
        if at_most is not None:
            rules.append(Rule(n, lambda p, n=n, a=at_most: getattr(p, n) > a,
                              f"{n} must be at most {at_most}"))
        notation[n] = tex
    symbols = {n: sympy.Symbol(n, **({"positive": True} if specs[n][1] == "positive"
                                       else {"nonnegative": True})) for n in specs}
    return records, rules, symbols, notation


def _named_part(name, value, table, what):
    """A part given by its name (``loss="logistic"``): the table's constructor with its default
    parameter names; an unknown name is a :class:`ModelError` listing the known ones."""
    if not isinstance(value, str):
        return value
    if value not in table:
        raise ModelError(f"model {name!r}: unknown {what} {value!r} (known: "
                         f"{', '.join(sorted(table))})")
    return table[value]()


def _check_part(name, value, cls, what):
    if not isinstance(value, cls):
        raise ModelError(f"model {name!r}: {what}= takes a {cls.__name__} (e.g. from "
                         f"replica.glm), got {value!r}")


# ---------------------------------------------------------------------------------------------
# ERM
# ---------------------------------------------------------------------------------------------
def _penalty_term(penalty: Penalty, prior: Prior, D: GLMDerivation, covariates=None):
    """``(Psi_w, E[(d_b f_w)^2], f_w)`` from the penalty and the prior; with ``covariates``
    (:class:`Covariates`) the coordinate of covariance eigenvalue c and teacher power t has the
    curvature Vhat c and the field b = mhat c sqrt(t) a + sqrt(qhat c) Z, and the terms are
    spectral averages over (c, t) (the replicon's average holds c^2 (d_b f_w)^2)."""
    Q = Vhat * T**2 / 2 - b_ * T
    mini = calculus.minimise(Q, penalty.pieces, T, b_, name=f"prox_{penalty.name}")
    value = -mini.value  # max_w [-Vhat w^2/2 + b w - r(w)]
    slope = mini.slope  # d f_w / d b
    if covariates is not None:
        return _penalty_term_spectral(value, slope, mini, penalty, prior, D, Q, covariates)
    D.add("penalty_channel",
          {"max": sympy.Eq(sympy.Function("M_r")(b_), value),
           "argmax": sympy.Eq(sympy.Function("f_w")(b_), mini.argmin)},
          "The penalty's scalar problem max over w of -Vhat w^2/2 + b w - r(w), solved by SymPy "
          "on each piece of the penalty (the stationarity condition is linear there), with the "
          "argument intervals where each piece's solution is the maximiser.",
          _check_scalar_max(value, penalty, Q))
    psi, sq = _prior_average(prior, [value, slope**2], lambda a: mhat * a + sympy.sqrt(qhat) * z,
                             lambda s2: sympy.sqrt(mhat**2 * s2 + qhat) * z)
    D.add("prior_average", {"Psi_w": sympy.Eq(sympy.Symbol("Psi_w"), psi)},
          "The penalty term averaged over the teacher prior and the Gaussian field: b = mhat a + "
          "sqrt(qhat) Z for a point mass a of the prior, b = sqrt(mhat^2 s^2 + qhat) Z for a "
          "Gaussian component of variance s^2; polynomial terms by their Gaussian moments, the "
          "rest as Gaussian integrals (symmetric point masses folded into one when the maximum "
          "is even in b).")
    return psi, sq, mini


def _penalty_term_spectral(value, slope, mini, penalty, prior, D, Q, covariates):
    """:func:`_penalty_term` for covariates with a spectrum: the scalar problem at the curvature
    Vhat c (its closed form with Vhat -> Vhat c), averaged over the prior per coordinate and
    then over the pairs (c, t)."""
    c = LAMBDA_I
    t = MU_I if covariates.teacher else sympy.Integer(1)
    D.add("penalty_channel",
          {"max": sympy.Eq(sympy.Function("M_r")(b_), value),
           "argmax": sympy.Eq(sympy.Function("f_w")(b_), mini.argmin)},
          "The penalty's scalar problem max over w of -Vhat w^2/2 + b w - r(w), solved by SymPy "
          "on each piece of the penalty (the stationarity condition is linear there), with the "
          "argument intervals where each piece's solution is the maximiser. A coordinate with "
          "covariance eigenvalue c has the curvature Vhat c: the same solution with Vhat c in "
          "place of Vhat.", _check_scalar_max(value, penalty, Q))
    at_c = {Vhat: Vhat * c}
    psi, sq = _prior_average(prior, [value.xreplace(at_c), (c * slope.xreplace(at_c))**2],
                             lambda a: mhat * c * sympy.sqrt(t) * a + sympy.sqrt(qhat * c) * z,
                             lambda s2: sympy.sqrt(mhat**2 * c**2 * t * s2 + qhat * c) * z,
                             closed=True)
    if any(e.has(GaussianIntegral) for e in (psi, sq)):
        raise ModelError(f"covariates= needs the {penalty.name} penalty's average over a "
                         "coordinate in closed form, and it is a Gaussian integral here (a "
                         "Gaussian integral inside a spectral average is not supported): use "
                         "the ridge penalty, or isotropic covariates")
    psi, sq = avg(sympy.expand(psi)), avg(sympy.expand(sq))
    D.add("prior_average", {"Psi_w": sympy.Eq(sympy.Symbol("Psi_w"), psi)},
          "The penalty term of a coordinate with covariance eigenvalue c and teacher power t, "
          "averaged over the teacher prior and the Gaussian field (b = mhat c sqrt(t) a + "
          "sqrt(qhat c) Z for a point mass a of the prior, b = sqrt(mhat^2 c^2 t s^2 + qhat c) Z "
          "for a Gaussian component of variance s^2), then over the coordinates: the spectral "
          "average over the pairs (c, t).")
    return psi, sq, mini


def _prior_average(prior: Prior, exprs, point_b, gauss_b, closed=False):
    """``[E f(b)]`` for each ``f`` of ``exprs`` (in ``b_``) over the prior's components;
    ``closed``: a piecewise-polynomial ``f`` in closed form (:func:`calculus.expect_piecewise`,
    ``b`` affine in ``z`` with a positive slope) rather than a Gaussian integral."""
    def expect(g, bz):
        if closed:
            scale = sympy.diff(bz, z)
            done = calculus.expect_piecewise(g, b_, bz.xreplace({z: 0}), scale, z)
            if done is not None:
                return done
        return calculus.expect(g.xreplace({b_: bz}), z)

    out = []
    for f in exprs:
        total = sympy.Integer(0)
        points = list(prior.points)
        even = calculus.is_even(f, b_)
        while points:
            w, a = points.pop(0)
            mirror = [k for k, (w2, a2) in enumerate(points)
                      if a != 0 and sympy.simplify(a2 + a) == 0 and sympy.simplify(w2 - w) == 0]
            if even and mirror:  # f(b) at -a equals f at a under z -> -z
                points.pop(mirror[0])
                w = 2 * w
            total += w * expect(f, point_b(a))
        for w, s2 in prior.gaussians:
            total += w * expect(f, gauss_b(s2))
        out.append(total)
    return out


def _check_scalar_max(value, part, Q):
    """A check: at a few numeric points the closed-form extremum equals a numeric minimisation
    of the scalar objective (convex: golden-section search on [-30, 30])."""
    def check():
        rnd = {Vhat: sympy.Rational(7, 5), V: sympy.Rational(7, 5)}
        free = (value.free_symbols | Q.free_symbols) - {T, b_, x_, Vhat, V}
        for s in free:
            rnd[s] = sympy.Rational(3, 4)
        pieces = part.pieces
        loss = sympy.Piecewise(*[(p.expr, T <= p.hi) for p in pieces[:-1]]
                               + [(pieces[-1].expr, True)])
        arg = b_ if b_ in Q.free_symbols else x_
        for xv in (-3, -sympy.Rational(1, 2), sympy.Rational(1, 3), 2):
            F = (Q + loss).xreplace(rnd).xreplace({arg: xv})

            def f(tv, F=F):
                return float(F.xreplace({T: sympy.Float(tv, 30)}))

            lo, hi = -30.0, 30.0
            g = (5 ** 0.5 - 1) / 2
            for _ in range(90):
                a, b = hi - g * (hi - lo), lo + g * (hi - lo)
                if f(a) <= f(b):
                    hi = b
                else:
                    lo = a
            best = f((lo + hi) / 2)
            closed = value.xreplace(rnd).xreplace({arg: xv})
            closed = -closed if arg == b_ else closed
            if abs(float(closed) - best) > 1e-9:
                return False
        return True

    return check


def _loss_term(loss: Loss, D: GLMDerivation):
    """The loss's Moreau envelope in its argument ``x_``: a :class:`calculus.Minimiser`."""
    Q = (T - x_) ** 2 / (2 * V)
    if loss.smooth is not None:
        mini = calculus.minimise(Q, (), T, x_, smooth=loss.smooth, bracket=loss.bracket, scale=V,
                                 name=f"prox_{loss.name}")
        how = ("has no closed form; it is the root of t - x + V l'(t) = 0 on the bracket the "
               "loss declares (an implicit function, derivatives by the implicit function "
               "theorem)")
        check = None
    else:
        mini = calculus.minimise(Q, loss.pieces, T, x_, name=f"prox_{loss.name}")
        how = "is solved by SymPy on each piece of the loss (linear stationarity condition)"
        check = _check_scalar_max(mini.value, loss, Q)
    arg = "the residual r = y - omega" if loss.kind == "residual" else "the margin y omega"
    D.add("envelope", {"loss": sympy.Eq(sympy.Function("ell")(T), loss.expression()),
                       "envelope": sympy.Eq(sympy.Function("M_V")(x_), mini.value),
                       "prox": sympy.Eq(sympy.Function("prox")(x_), mini.argmin)},
          f"The loss's Moreau envelope min over t of (t - x)^2/(2V) + l(t) at x = {arg}; its "
          f"minimiser {how}.", check)
    return mini


def _label_average(loss: Loss, channel: Channel, rho, D: GLMDerivation, fs):
    """``[E_{y, omega} f]`` for each ``f`` (in ``x_``, the envelope's argument)."""
    if channel.kind == "regression":
        if loss.kind != "residual":
            raise ModelError(f"the {loss.name} loss is a classification (margin) loss; the "
                             f"{channel.name} channel gives real labels (use a residual loss: "
                             "square, absolute, huber)")
        if not channel.linear:
            return _link_average(channel, rho, D, fs)
        # (u, eps, omega) with Var u = rho, Cov(u, omega) = m, Var omega = q
        cov = [[rho, 0, m], [0, 1, 0], [m, 0, q]]
        coeffs = [1, channel.noise, -1]  # r = u + sigma eps - omega
        c = sympy.Matrix(coeffs)
        delta = sympy.expand((c.T * sympy.Matrix(cov) * c)[0, 0])
        D.add("label_law", {"residual": sympy.Eq(sympy.Symbol("Delta"), delta)},
              "The residual r = y - omega = u + sigma eps - omega of a training label against the "
              "cavity field is Gaussian; its variance from the covariance of (u, eps, omega).")
        # the label integrals use xi, the penalty's z: the two never share a bound variable
        outs = [calculus.expect(f.xreplace({x_: sympy.sqrt(delta) * xi}), xi) for f in fs]
        return outs, {"Delta": delta}
    a, b = channel.latent
    cov = [[rho, 0, m], [0, 1, 0], [m, 0, q]]
    k, v = calculus.conditional_law([a, b, 0], cov, 2)
    # P(y = 1 | omega = sqrt(q) xi) = P(L > 0 | omega) with L | omega ~ N(k omega, v)
    den2 = sympy.expand(q * v)
    P1 = sympy.erfc(-a * m * xi / sympy.sqrt(2 * den2)) / 2 if k != 0 else sympy.Rational(1, 2)
    symmetric = sympy.simplify(P1.xreplace({xi: -xi}) + P1 - 1) == 0
    D.add("label_law", {"P1": sympy.Eq(sympy.Symbol("P_1"), P1)},
          "The label y = sign(a u + b eps) given the cavity field omega = sqrt(q) xi: the latent "
          "a u + b eps given omega is Gaussian (Gaussian conditioning), so P(y = 1 | xi) is a "
          "Gaussian tail" + (", and P(y = 1 | -xi) = 1 - P(y = 1 | xi) (checked by SymPy)."
                             if symmetric else "."))
    om = sympy.sqrt(q) * xi
    outs = []
    for f in fs:
        if loss.kind == "margin":  # M(y, omega) = envelope at y omega
            plus, minus = f.xreplace({x_: om}), f.xreplace({x_: -om})
        else:  # residual at y - omega
            plus, minus = f.xreplace({x_: 1 - om}), f.xreplace({x_: -1 - om})
        if symmetric and sympy.expand(minus.xreplace({xi: -xi}) - plus) == 0:
            # the y = -1 term is the y = 1 term under xi -> -xi; written at -xi, where the
            # Gaussian tail keeps its relative precision
            outs.append(2 * calculus.expect((P1 * plus).xreplace({xi: -xi}), xi))
        else:
            outs.append(calculus.expect(P1 * plus + (1 - P1) * minus, xi))
    return outs, {"den2": den2, "a": a, "b": b}


def _half_expect(expr, x):
    r""":math:`\mathbb E[\theta(\xi)\,p(\xi)]` for a polynomial :math:`p`, by the half moments
    :math:`\mathbb E[\xi^k\theta(\xi)] = \tfrac12\mathbb E|\xi|^k
    = 2^{k/2 - 1}\Gamma(\tfrac{k+1}2)/\sqrt\pi`."""
    poly = sympy.Poly(sympy.expand(expr), x)
    return sympy.expand(sum(c * 2**sympy.Rational(k, 2) * sympy.gamma(sympy.Rational(k + 1, 2))
                            / (2 * sympy.sqrt(sympy.pi)) for (k,), c in poly.terms()))


def _link_average(channel: Channel, rho, D: GLMDerivation, fs):
    r"""``[E_{y, omega} f(y - omega)]`` for a regression channel with a piecewise-linear link
    :math:`g` (slopes :math:`c_\pm`), split by the sign of the teacher field :math:`u`:
    :math:`\mathbb E f = \sum_\pm\mathbb E[f(r_\pm)\,\theta(\pm u)]` with
    :math:`r_\pm = c_\pm u + \sigma\varepsilon - \omega` the residual on that side.

    *Polynomial route* (the square loss): with :math:`u = \sqrt\rho\,\xi` and
    :math:`\omega = ku + \sqrt{q - m^2/\rho}\,\zeta`, :math:`k = m/\rho` (Gaussian
    conditioning), :math:`r_\pm = (c_\pm - k)\sqrt\rho\,\xi + sZ`,
    :math:`s^2 = q - m^2/\rho + \sigma^2`; the :math:`Z` average in closed form, then the
    half-line averages of :math:`\xi` by their half moments.

    *Even route* (any other loss, whose :math:`Z` average is not a polynomial in :math:`\xi`):
    for an even loss the envelope, its slope squared and the loss at the proximal point are even
    functions :math:`f` of the residual. :math:`(u, r_\pm)` is a centred Gaussian pair, so its law
    is invariant under :math:`(u, r_\pm) \to (-u, -r_\pm)` and
    :math:`\mathbb E[f(r_\pm)\theta(u)] = \mathbb E[f(-r_\pm)\theta(-u)]
    = \mathbb E[f(r_\pm)\theta(-u)]`: each is half of :math:`\mathbb E f(r_\pm)`, and

    .. math::  \mathbb E f = \tfrac12\int\mathcal D\xi\,\big[f(\sqrt{\Delta_+}\,\xi)
               + f(\sqrt{\Delta_-}\,\xi)\big],\qquad
               \Delta_\pm = \operatorname{Var} r_\pm = c_\pm^2\rho + \sigma^2 - 2c_\pm m + q,

    one Gaussian integral per side whose breakpoints are the loss's kinks (linear in
    :math:`\xi`): no half-line and no two-dimensional integral. A loss that is not even in the residual is a
    :class:`~replica.modeling.ModelError` (the side probability would enter)."""
    cm, cp = (sympy.sympify(c) for c in channel.link)
    k = m / rho
    s2 = sympy.expand(q - m**2 / rho + channel.noise**2)
    inners = []
    for f in fs:
        per_side = []
        for c, sgn in ((cp, 1), (cm, -1)):
            inner = calculus.expect(f.xreplace({x_: (c - k) * sympy.sqrt(rho) * sgn * xi
                                                + sympy.sqrt(s2) * z}), z)
            if not (inner.is_polynomial(xi) and not inner.has(z)):
                per_side = None
                break
            per_side.append(inner)
        if per_side is None:
            return _link_average_even(channel, rho, D, fs, cm, cp, s2)
        inners.append(per_side)
    D.add("label_law", {"residual": sympy.Eq(sympy.Symbol("s")**2, s2)},
          f"The {channel.name} channel y = g(u) + sigma eps with a piecewise-linear link "
          "(slopes c_- = " f"{cm}, c_+ = {cp}): given u = sqrt(rho) xi the residual "
          "y - omega is Gaussian with mean (c - m/rho) u (c the slope on u's side) and variance "
          "s^2 = q - m^2/rho + sigma^2.")
    return [sympy.cancel(sum(_half_expect(i, xi) for i in per_side))
            for per_side in inners], {"Delta": s2}


def _link_average_even(channel: Channel, rho, D: GLMDerivation, fs, cm, cp, s2):
    """The even route of :func:`_link_average` (its docstring)."""
    for f in fs:
        if not calculus.is_even(f, x_):
            raise ModelError(f"the {channel.name} channel needs a loss even in the residual "
                             "(square, absolute, huber): the average of an uneven envelope "
                             "over the two sides of the teacher field is not derived")
    if cp + cm == 0:
        raise ModelError(f"the {channel.name} channel gives labels blind to the teacher's sign "
                         "(E[yu] = 0), so the overlap is m = 0 at the saddle point, which the "
                         "solver's positive unknowns exclude: only the square loss (m = 0 in "
                         "closed form) is supported there")
    C = sympy.Matrix([[rho, 0, m], [0, 1, 0], [m, 0, q]])  # (u, eps, omega)
    deltas, objects = [], {}
    for c, tag in ((cp, "plus"), (cm, "minus")):
        coeffs = sympy.Matrix([c, channel.noise, -1])  # r = c u + sigma eps - omega
        delta = sympy.expand((coeffs.T * C * coeffs)[0, 0])
        deltas.append(delta)
        objects[f"Delta_{tag}"] = sympy.Eq(sympy.Symbol(f"Delta_{tag}"), delta)
    D.add("label_law", objects,
          f"The {channel.name} channel y = g(u) + sigma eps with a piecewise-linear link "
          f"(slopes c_- = {cm}, c_+ = {cp}), split by the sign of the teacher field u: on the "
          "side u > 0 (u < 0) the residual r = c u + sigma eps - omega (c = c_+, c_-) is "
          "Gaussian with variance Delta_plus (Delta_minus) from the covariance of (u, eps, "
          "omega). The loss is even (checked by SymPy) and (u, r) is a centred Gaussian pair, "
          "so by the symmetry (u, r) -> (-u, -r) the side u > 0 carries half of the average of "
          "an even function of r: the label average is half the sum of the two Gaussian "
          "averages over r = sqrt(Delta) xi, the loss's kinks the quadrature breakpoints.")
    # one integral per side: where the two sides cancel (m = 0 for the absolute value) each
    # integral keeps its relative precision and the difference is taken outside
    outs = [sum(calculus.expect(f.xreplace({x_: sympy.sqrt(d) * xi}), xi) for d in deltas) / 2
            for f in fs]
    return outs, {"Delta": s2}


@keywords_checked(ModelError, also=(SaddlePointModel,),
                  sets_itself=("free_energy", "pairs", "positive_unknowns", "derivation",
                               "stability"))
def ERM(name: str, *, loss: Loss, penalty: Penalty, teacher: Teacher,
        covariates: Covariates | None = None, parameters: Sequence = (), alpha: str = "alpha",
        title: str = "", start=None, observables=None, **kw) -> SaddlePointModel:
    r"""A :class:`~replica.modeling.SaddlePointModel` for empirical risk minimisation with
    ``loss`` and ``penalty`` on data from ``teacher``; its free energy is derived from the parts
    (module docstring), its stability is the replicon. ``covariates``: a :class:`Covariates`
    record for a diagonal input covariance given as a SPEC (and a teacher power per coordinate);
    default isotropic. ``parameters``: optional :class:`~replica.modeling.Parameter` records
    replacing the parts' defaults of the same name; ``alpha``: the name of the sample-ratio
    parameter, which no part's parameter may share (``Ridge("alpha")`` is refused, exit status
    2: it would tie the penalty to the sample ratio); other keywords go to
    :class:`~replica.modeling.SaddlePointModel`."""
    loss = _named_part(name, loss, LOSSES, "loss")
    penalty = _named_part(name, penalty, PENALTIES, "penalty")
    _check_part(name, loss, Loss, "loss")
    _check_part(name, penalty, Penalty, "penalty")
    _check_part(name, teacher, Teacher, "teacher")
    channel = _named_part(name, teacher.channel, CHANNELS, "channel")
    prior = _named_part(name, teacher.prior, PRIORS, "prior")
    _check_part(name, channel, Channel, "teacher.channel")
    _check_part(name, prior, Prior, "teacher.prior")
    records, rules, symbols, notation = _schema(name, [loss, penalty, channel, prior],
                                                parameters, alpha)
    al = symbols[alpha]
    D = GLMDerivation()
    Psi_w, E_M = sympy.Symbol("Psi_w"), sympy.Symbol("E_M")
    general = -m * mhat + q * Vhat / 2 - V * qhat / 2 + Psi_w - al * E_M
    D.add("general_free_energy", {"Phi": sympy.Eq(sympy.Symbol("Phi"), general)},
          "The replica-symmetric free energy of empirical risk minimisation in a generalised "
          "linear model with Gaussian covariates at zero temperature (Psi_w the penalty's "
          "term, E_M the average Moreau envelope of the loss).",
          stated=f"the general formula, from {REFERENCES['erm']}")
    if covariates is not None and not isinstance(covariates, Covariates):
        raise ModelError(f"model {name!r}: covariates= takes a Covariates record, got "
                         f"{covariates!r}")
    rho = rho_start = prior.second_moment
    if covariates is not None:  # rho = E (x . w*)^2 / d = <c t> E a^2, an alias of the model
        rho_value = avg(LAMBDA_I * (MU_I if covariates.teacher else 1)) * rho
        rho = RHO_TEACHER
        kw = dict(kw)
        kw["aliases"] = [(RHO_TEACHER, rho_value)] + list(kw.get("aliases", ()))
    try:
        psi, fw_sq, _ = _penalty_term(penalty, prior, D, covariates)
        env = _loss_term(loss, D)
        gprime = (env.slope - 1) / V  # d g_out / d omega
        (EM, g2, train), info = _label_average(
            loss, channel, rho, D, [env.value, gprime**2, _loss_at_prox(loss, env)])
    except (calculus.GLMCalculusError, PartError) as exc:
        raise ModelError(f"model {name!r}: {exc}") from None
    except ModelError as exc:
        raise ModelError(f"model {name!r}: {exc}") from None
    D.add("energetic", {"E_M": sympy.Eq(E_M, EM)},
          "The envelope averaged over the label and the cavity field.")
    phi = general.xreplace({Psi_w: psi, E_M: EM})
    D._free_energy = phi
    D.add("free_energy", {"Phi": sympy.Eq(sympy.Symbol("Phi"), phi)},
          "The free energy assembled from the parts: the model's free energy.")
    replicon = 1 - al * g2 * fw_sq
    D.add("replicon", {"lambda_AT": sympy.Eq(sympy.Symbol("lambda_AT"), replicon)},
          "The replicon (de Almeida-Thouless) eigenvalue, from the derivatives of the loss's "
          "proximal map (g_out = (prox - omega)/V) and of the penalty's maximiser f_w, averaged "
          "as the free energy's terms; replica symmetry is locally stable where it is positive.",
          stated=f"the condition 1 - alpha E[(d g_out)^2] E[(d f_w)^2] > 0, from "
                 f"{REFERENCES['at']}")
    # observables (derived from the same pieces)
    obs = {}
    if channel.kind == "regression":
        yu, y2 = channel.moments(rho)  # E y u, E y^2: E(y - omega)^2 = E y^2 - 2 (m/rho) E yu + q
        obs["errors"] = {"test": sympy.expand(y2 - 2 * m * yu / rho + q),
                         "risk": sympy.expand(rho - 2 * m + q), "train_loss": train}
        admissible = [(info["Delta"], "the residual variance rho + sigma^2 - 2m + q > 0")]
    else:
        a, b = info["a"], info["b"]
        corr = a * m / sympy.sqrt((a**2 * rho + b**2) * q)
        obs["errors"] = {"generalisation": sympy.acos(corr) / sympy.pi,
                         "teacher": sympy.acos(m / sympy.sqrt(rho * q)) / sympy.pi,
                         "train_loss": train}
        admissible = [(info["den2"], "a non-degenerate label law (q rho > m^2 for the sign "
                                     "channel)")]
    for g, members in (observables or {}).items():
        obs.setdefault(g, {}).update(members)
    names = {Vhat: r"\hat V", qhat: r"\hat q", mhat: r"\hat m"}
    for n, tex in notation.items():
        if tex:
            names[symbols[n]] = tex
    if covariates is not None:
        records, kw = _spectrum_records(name, records, covariates, kw)
        if len(penalty.pieces) > 1:
            rules = rules + _coordinatewise_rules(penalty, covariates)
    unique = _unique_erm(loss, penalty, records)
    if unique and "unique_fixed_point" not in kw:  # (a model's own statement is kept)
        kw = dict(kw)
        kw["unique_fixed_point"] = unique
    model = SaddlePointModel(
        name, title=title or f"{loss.description} with {penalty.description} penalty on a "
                             f"{prior.description} ({channel.description})",
        free_energy=phi, pairs=[(m, mhat), (q, Vhat), (V, qhat)], parameters=records,
        rules=rules + list(kw.pop("rules", [])), observables=obs,
        start=start or {m: rho_start / 2, q: rho_start / 2 if loss.kind == "residual"
                        else rho_start, V: 1},
        positive_unknowns=True, admissible=admissible + list(kw.pop("admissible", [])),
        symbol_names={**names, **kw.pop("symbol_names", {})}, derivation=D,
        # Phi at the saddle point is minus the minimal training objective per dimension (checked
        # against the ridge estimator on sampled data in tests/test_glm.py): of several
        # solutions the equilibrium one has the largest Phi
        free_energy_name=kw.pop("free_energy_name", "minus_training_objective"),
        extremum=kw.pop("extremum", "max"),
        stability=Stability(replicon=replicon, source="derived from the declared parts: "
                            + ("1 - alpha E[(d_omega g_out)^2] E[(d_b f_w)^2]" if covariates is None
                               else "1 - alpha E[(d_omega g_out)^2] <c^2 E[(d_b f_w)^2]> over the "
                               "spectrum") + " (" + REFERENCES["at"] + ")"), **kw)
    # the parts, for a simulation generated from them (replica.glm.simulation.simulation_of)
    object.__setattr__(model, "glm_parts", GLMParts(loss, penalty, channel, prior, alpha,
                                                    covariates))
    return model


UNIQUE_ERM = (
    "{loss} with the strongly convex {penalty} penalty, {coefficients}: the training "
    "objective is strongly convex, its minimiser unique; the equations are the stationarity "
    "conditions of the scalar convex-concave min-max that Gordon's comparison theorem gives "
    "for a convex loss with a strongly convex penalty (Thrampoulidis, Abbasi and Hassibi, "
    "IEEE Trans. Inf. Theory 2018; Salehi, Abbasi and Hassibi, NeurIPS 2019; Aubin et al., "
    "NeurIPS 2020; Loureiro et al., NeurIPS 2021), whose saddle point is unique -- stated, "
    "not derived here; tests/test_glm_unique_fixed_point.py reaches one fixed point from "
    "random admissible starts")
"""The ``unique_fixed_point`` text of :func:`ERM` where ``_unique_erm`` shows its conditions
(a float64 grid of the model then starts most points from their solved neighbours,
:func:`replica.numerics.newton.iterate_grid_continued`)."""


def _unique_erm(loss: Loss, penalty: Penalty, records) -> str:
    r"""The ``unique_fixed_point`` statement of an ERM model (``UNIQUE_ERM``), or ``""``.
    Stated only where the declaration shows its conditions: the loss is convex
    (``_convex_loss``) and the penalty strongly convex -- convex (``_convex_pieces``), every
    piece's second derivative positive, each parameter of those second derivatives declared
    ``positive`` in the model's records (a record of the user's that allows 0 --
    :math:`\lambda = 0`, where the minimiser need not be unique -- states nothing). So ridge
    and the elastic net with any of the builder's losses (square, absolute, Huber, logistic,
    hinge), not the :math:`\ell_1` penalty alone (convex, not strongly), and never a
    Bayes-optimal model (not built here)."""
    if not _convex_loss(loss) or not _convex_pieces(penalty.pieces):
        return ""
    domains = {r.name: r.domain for r in records}
    params = set()
    for piece in penalty.pieces:
        curvature = sympy.diff(piece.expr, T, 2)
        if curvature.is_positive is not True:
            return ""
        for sym in curvature.free_symbols:
            if domains.get(sym.name) != "positive":
                return ""
            params.add(sym.name)
    coefficients = (f"its coefficients {', '.join(sorted(params))} > 0 (their domain)"
                    if params else "its coefficients positive numbers")
    return UNIQUE_ERM.format(loss=loss.description, penalty=penalty.description,
                             coefficients=coefficients)


def _convex_loss(loss: Loss) -> bool:
    r"""Whether ``loss`` is convex by its declaration: a smooth loss whose second derivative
    SymPy shows non-negative (the logistic loss's is :math:`1/(4\cosh^2(t/2))`): as it is, then
    over one denominator and factored (the logistic loss's :math:`e^{-t}/(1 + e^{-t})^2`: a few
    milliseconds), then simplified (a fraction of a second on every load of the model, paid
    only where the first two do not show it); a piecewise one by ``_convex_pieces``; ``False``
    where that is not shown."""
    if loss.smooth is not None:
        d2 = sympy.diff(loss.smooth, T, 2)
        for form in (lambda e: e, lambda e: sympy.factor(sympy.together(e)), sympy.simplify):
            if form(d2).is_nonnegative is True:
                return True
        return False
    return _convex_pieces(loss.pieces)


def _convex_pieces(pieces) -> bool:
    """Whether the piecewise function of ``pieces`` (in order along the real line) is convex:
    each piece a polynomial in ``T`` of degree at most 2 with a second derivative SymPy shows
    non-negative, consecutive pieces meeting at their common end with equal values and a slope
    that does not decrease there."""
    for piece in pieces:
        e = sympy.expand(piece.expr)
        if not e.is_polynomial(T) or sympy.degree(e, T) > 2:
            return False
        if sympy.diff(e, T, 2).is_nonnegative is not True:
            return False
    for a, b in zip(pieces, pieces[1:]):
        if a.hi != b.lo:
            return False
        if sympy.simplify((b.expr - a.expr).subs(T, a.hi)) != 0:
            return False
        kink = sympy.simplify((sympy.diff(b.expr, T) - sympy.diff(a.expr, T)).subs(T, a.hi))
        if kink.is_nonnegative is not True:
            return False
    return True


def _spectrum_records(name, records, covariates: Covariates, kw):
    """The SPEC parameters of :class:`Covariates` (``d``, the covariance, the teacher power)
    appended to the model's records, and ``spectrum=`` set for the spectral averages."""
    names = [covariates.covariance] + ([covariates.teacher] if covariates.teacher else [])
    taken = {r.name for r in records}
    for n in names + ["d"]:
        if n in taken:
            raise ModelError(f"model {name!r}: the covariates' parameter {n!r} is also a part's "
                             "parameter")
    extra = [Parameter("d", "dimension of the covariance SPECs", domain="positive_integer",
                       default=1),
             Parameter(covariates.covariance, "input covariance SPEC C (diagonal: its entries "
                       "are its eigenvalues)", domain="covariance", default="identity")]
    if covariates.teacher:
        extra.append(Parameter(covariates.teacher, "teacher power per coordinate SPEC (the "
                               "teacher's entries are sqrt(t_i) times the prior's draws)",
                               domain="covariance", default="identity"))
    kw = dict(kw)
    kw.setdefault("spectrum", tuple(names))
    return list(records) + extra, kw


def _coordinatewise_rules(penalty: Penalty, covariates: Covariates) -> list:
    r"""Rules for a penalty that is not rotation invariant (:math:`\ell_1`, elastic net) with
    :class:`Covariates`: its spectral average runs over the coordinates, so the covariance and
    the teacher power must be diagonal SPECs, and the closed-form average over a coordinate's
    field :math:`b = \mu + \sqrt{\hat qc + \dots}\,Z` divides by the field's standard
    deviation, so every eigenvalue :math:`c_i` must be positive (a coordinate with
    :math:`c_i = 0` carries no data; it is refused rather than taken as a limit)."""
    out = []
    for n in (covariates.covariance, covariates.teacher):
        if n:
            out.append(Rule(n, lambda p, n=n: not getattr(p, n).is_diagonal,
                            f"{n} must be a diagonal SPEC with the {penalty.name} penalty (it "
                            "acts coordinate-wise)"))
    n = covariates.covariance
    out.append(Rule(n, lambda p: getattr(p, n).rank() < getattr(p, n).d,
                    f"{n} must have every eigenvalue positive with the {penalty.name} penalty"))
    return out


def _loss_at_prox(loss: Loss, env):
    r""":math:`\ell` at the proximal point: the training loss of a point with cavity argument x
    (a training point's output is the proximal map of its cavity field)."""
    if loss.smooth is not None:
        return loss.smooth.xreplace({T: env.argmin})
    # on each region the loss's own piece at the region's minimiser
    total = sympy.Integer(0)
    for lo, hi, tk in env.regions:
        piece = next(p for p in loss.pieces
                     if _inside(tk, p, lo, hi))
        total += piece.expr.xreplace({T: tk}) * calculus.indicator(x_, lo, hi)
    return total


def _inside(tk, piece, lo, hi):
    """Whether the region's minimiser ``tk`` lies in ``piece`` (tested at a finite point of the
    region, all parameters 1)."""
    if lo == -sympy.oo and hi == sympy.oo:
        pt = 0
    elif lo == -sympy.oo:
        pt = hi - 1
    elif hi == sympy.oo:
        pt = lo + 1
    else:
        pt = (lo + hi) / 2
    val = tk.xreplace({x_: pt})
    ones = {s: 1 for s in val.free_symbols}
    val = sympy.nsimplify(val.xreplace(ones))
    lo_p = piece.lo if piece.lo.is_infinite else piece.lo.xreplace(
        {s: 1 for s in piece.lo.free_symbols})
    hi_p = piece.hi if piece.hi.is_infinite else piece.hi.xreplace(
        {s: 1 for s in piece.hi.free_symbols})
    return bool(lo_p <= val <= hi_p)


# ---------------------------------------------------------------------------------------------
# Bayes-optimal
# ---------------------------------------------------------------------------------------------
def _psi_prior(prior: Prior, D: GLMDerivation):
    r""":math:`\psi_{P_0}(\hat m)`, derived."""
    A = mhat_pos
    x = sympy.Symbol("x", real=True)
    terms = []
    points = list(prior.points)
    while points:
        w, a = points.pop(0)
        mirror = [k for k, (w2, a2) in enumerate(points)
                  if a != 0 and sympy.simplify(a2 + a) == 0 and sympy.simplify(w2 - w) == 0]
        if mirror:
            points.pop(mirror[0])
            terms.append(2 * w * sympy.exp(-A * a**2 / 2) * sympy.cosh(a * b_))
        else:
            terms.append(w * sympy.exp(a * b_ - A * a**2 / 2))
    for w, s2 in prior.gaussians:
        terms.append(w * calculus.gaussian_exp_integral(
            -x**2 / (2 * s2) + b_ * x - A * x**2 / 2, x) / sympy.sqrt(2 * sympy.pi * s2))
    Z0 = sympy.Add(*terms)
    logZ = sympy.expand(sympy.expand_log(sympy.log(Z0), force=True))
    D.add("prior_partition", {"Z0": sympy.Eq(sympy.Function("Z_0")(b_), Z0),
                              "logZ0": sympy.Eq(sympy.log(sympy.Function("Z_0")(b_)), logZ)},
          "The scalar integral of the prior against exp(b x - mhat x^2/2): a Gaussian component "
          "by completing the square, point masses as exponentials (two symmetric ones as a "
          "cosh).", _check_prior_partition(Z0, prior, A))
    (psi,) = _prior_average(prior, [logZ.xreplace({mhat: A})],
                            lambda a: A * a + sympy.sqrt(A) * z,
                            lambda s2: sympy.sqrt(A + A**2 * s2) * z)
    D.add("prior_average", {"psi": sympy.Eq(sympy.Symbol("psi_P0"), psi)},
          "Its logarithm averaged over b = sqrt(mhat) Z + mhat X_0 for X_0 from the prior (a "
          "Gaussian component: b is Gaussian of variance mhat + mhat^2 s^2).")
    return psi


def _check_prior_partition(Z0, prior, A):
    """At one numeric point the closed form equals the integral (mpmath quadrature) or sum."""
    def check():
        import mpmath

        vals = {A: sympy.Rational(3, 2), b_: sympy.Rational(1, 3)}
        vals.update({s: sympy.Rational(1, 4) for s in Z0.free_symbols - {A, b_}})
        closed = sympy.N(Z0.xreplace(vals), 30)
        total = mpmath.mpf(0)
        Av, bv = mpmath.mpf(3) / 2, mpmath.mpf(1) / 3
        for w, a in prior.points:
            total += float(sympy.N(w.xreplace(vals))) * mpmath.exp(
                float(a) * bv - Av * float(a)**2 / 2)
        for w, s2 in prior.gaussians:
            s2v = float(sympy.N(s2.xreplace(vals)))
            total += float(sympy.N(w.xreplace(vals))) * mpmath.quad(
                lambda x: mpmath.exp(-x**2 / (2 * s2v) + bv * x - Av * x**2 / 2)
                / mpmath.sqrt(2 * mpmath.pi * s2v), [-mpmath.inf, mpmath.inf])
        return abs(closed - total) < 1e-12

    return check


def _psi_out(channel: Channel, rho, D: GLMDerivation):
    r""":math:`\Psi_{\rm out}(m)`, derived."""
    Vv = rho - m_bo
    if channel.kind == "regression" and tuple(channel.link) == (-1, 1) and channel.noise != 0:
        return _psi_out_abs_noisy(channel, Vv, D)
    if channel.kind == "regression" and tuple(channel.link) == (-1, 1):
        return _psi_out_abs(channel, Vv, D)
    if channel.kind == "regression" and not channel.linear:
        return _psi_out_relu(channel, Vv, D)
    if channel.kind == "regression":
        s2 = Vv + channel.noise**2
        y = sympy.sqrt(s2) * z  # y - omega given omega
        logZ = sympy.expand(sympy.expand_log(
            sympy.log(sympy.exp(-y**2 / (2 * s2)) / sympy.sqrt(2 * sympy.pi * s2)), force=True))
        out = calculus.expect(logZ, z)
        D.add("channel_partition", {"Zout": sympy.Eq(sympy.Symbol("Z_out"),
                                                     sympy.exp(-y**2 / (2 * s2))
                                                     / sympy.sqrt(2 * sympy.pi * s2))},
              "The linear channel: Z_out(y, omega, V) is the Gaussian density of y - omega with "
              "variance V + sigma^2; y given the field is drawn from it (Nishimori), so the "
              "average of its logarithm is a Gaussian moment.")
    else:
        a, b = channel.latent
        # L = a(omega + sqrt(V) w) + b eps given omega = sqrt(m) xi
        var = sympy.expand(a**2 * Vv + b**2)
        Z1 = sympy.erfc(-a * sympy.sqrt(m_bo) * xi / sympy.sqrt(2 * var)) / 2
        symmetric = sympy.simplify(Z1.xreplace({xi: -xi}) + Z1 - 1) == 0
        f = Z1 * sympy.log(Z1)
        if symmetric:  # both labels alike; written at -xi (a tail with full precision)
            out = 2 * calculus.expect(f.xreplace({xi: -xi}), xi)
        else:
            Zm = 1 - Z1
            out = calculus.expect(f + Zm * sympy.log(Zm), xi)
        D.add("channel_partition", {"Z1": sympy.Eq(sympy.Symbol("Z_out_1"), Z1)},
              "The sign channel y = sign(a u + b eps): Z_out(1, omega, V) = P(a(omega + sqrt(V) "
              "w) + b eps > 0) is the Gaussian tail at -a omega/sqrt(a^2 V + b^2); the two "
              "labels contribute equally when Z_out(1 | -xi) = 1 - Z_out(1 | xi), checked by "
              "SymPy.")
    D.add("channel_average", {"Psi_out": sympy.Eq(sympy.Symbol("Psi_out"), out)},
          "The channel term averaged over the label and the field.")
    return out


def _psi_out_abs(channel: Channel, Vv, D: GLMDerivation):
    r""":math:`\Psi_{\rm out}(m)` of the noiseless absolute-value channel :math:`y = |u|` (real
    phase retrieval), derived: given :math:`\omega = \sqrt m\,\xi`, :math:`u = \omega + \sqrt
    Vw`, the label's density on :math:`y > 0` is

    .. math::
        Z_{\rm out}(y) = N(y; \omega, V) + N(-y; \omega, V)
        = \frac{e^{-(y^2 + \omega^2)/(2V)}}{\sqrt{2\pi V}}\,2\cosh\frac{y\omega}V

    (the two preimages :math:`u = \pm y`; the second form by SymPy). Its logarithm is even in
    :math:`y` (SymPy), so :math:`\int_0^\infty dy\,Z_{\rm out}\log Z_{\rm out}
    = \mathbb E_{u\sim N(\omega, V)}\log Z_{\rm out}(|u|) = \mathbb E\log Z_{\rm out}(u)`:

    .. math::
        \Psi_{\rm out} = -\tfrac12\log(2\pi V) - \frac{\rho + m}{2V}
        + \mathbb E_{\xi, w}\log 2\cosh X,\qquad X = \frac{u\omega}V,

    the polynomial part by the Gaussian moments (:math:`\mathbb Eu^2 = \rho`,
    :math:`\mathbb E\omega^2 = m`). The last term is a two-dimensional Gaussian integral over
    :math:`(\xi, w)` (recorded as ``Psi_out_2d``, :math:`\log 2\cosh X = |X| + \log(1 +
    e^{-2|X|})`); it is reduced to one dimension by polar coordinates (``_abs_polar``):
    :math:`X = z^{\mathsf T}Az` is a quadratic form of :math:`z = (\xi, w)` with eigenvalues
    :math:`\lambda_\pm = (m \pm \sqrt{m\rho})/(2V)`, so after a rotation
    :math:`X = r^2(\lambda_+\cos^2\theta + \lambda_-\sin^2\theta) = 2s\,c(\varphi)`,
    :math:`c(\varphi) = (m + \sqrt{m\rho}\cos\varphi)/(2V)`, with :math:`s = r^2/2 \sim
    {\rm Exp}(1)` and :math:`\varphi = 2\theta` uniform on :math:`[0, \pi]` (by symmetry). The
    average over :math:`s` is in closed form,

    .. math::
        G(a) = \int_0^\infty ds\,e^{-s}\log 2\cosh(2as)
        = 2a + \log 2 - \tfrac12\Big[\psi\big(1 + \tfrac1{8a}\big)
          - \psi\big(\tfrac12 + \tfrac1{8a}\big)\Big]\qquad(a = |c| > 0)

    (:math:`\log 2\cosh x = |x| + \sum_{k\ge1}(-1)^{k+1}e^{-2k|x|}/k`, termwise
    :math:`\sum_k(-1)^{k+1}/(k(1 + 4ak))`, partial fractions and
    :math:`\sum_{j\ge0}(-1)^j/(j + x) = \tfrac12[\psi(\tfrac{x+1}2) - \psi(\tfrac x2)]`), and
    :math:`G(|c|)` is even and smooth in :math:`c` but not analytic at :math:`c = 0`, where
    :math:`\varphi = \varphi_0 = \pi - \chi_0`, :math:`\chi_0 = \arctan\sqrt{V/m}`. The angle
    is split there and each piece mapped to a Gaussian variable :math:`t` by
    :math:`\varphi_0 - \varphi = (\pi - \chi_0)\Phi(-t)` and :math:`\varphi - \varphi_0 =
    \chi_0\Phi(-t)` (:math:`d\varphi = \text{length}\times\phi(t)\,dt`), which sends the zero
    of :math:`c` to :math:`t \to \infty`:

    .. math::
        \mathbb E\log 2\cosh X = \frac{\pi - \chi_0}\pi\,\mathbb E_t\,G\big(K\sin(\chi_0 +
        \tfrac{d_1}2)\sin\tfrac{d_1}2\big) + \frac{\chi_0}\pi\,\mathbb E_t\,G\big(K\sin(\chi_0 -
        \tfrac{d_2}2)\sin\tfrac{d_2}2\big),

    :math:`K = \sqrt{m\rho}/V`, :math:`d_1 = (\pi - \chi_0)\Phi(-t)`,
    :math:`d_2 = \chi_0\Phi(-t)` (the product form of :math:`|c|`, exact in relative terms near
    its zero): one one-dimensional Gaussian integral with a smooth integrand."""
    if channel.noise != 0:  # pragma: no cover - refused by BayesOptimal
        raise ModelError("the noisy absolute-value channel is not derived")
    w = sympy.Symbol("w", real=True)
    y = sympy.Symbol("y", positive=True)
    omega = sympy.sqrt(m_bo) * xi

    def N(yy):
        return sympy.exp(-(yy - omega)**2 / (2 * Vv)) / sympy.sqrt(2 * sympy.pi * Vv)

    Zout = N(y) + N(-y)
    folded = (sympy.exp(-(y**2 + omega**2) / (2 * Vv)) * 2 * sympy.cosh(y * omega / Vv)
              / sympy.sqrt(2 * sympy.pi * Vv))
    logZ = -(y**2 + omega**2) / (2 * Vv) - sympy.log(2 * sympy.pi * Vv) / 2 \
        + sympy.log(2 * sympy.cosh(y * omega / Vv))
    D.add("channel_partition", {"Zout": sympy.Eq(sympy.Function("Z_out")(y), Zout),
                                "folded": sympy.Eq(sympy.Function("Z_out")(y), folded),
                                "logZ": sympy.Eq(sympy.log(sympy.Function("Z_out")(y)), logZ)},
          "The noiseless absolute-value channel y = |u| with u = omega + sqrt(V) w given the "
          "field: the label's density on y > 0 is the Gaussian density of u at its two "
          "preimages +y and -y; the exponents' common part taken out, Z_out is the Gaussian "
          "factor exp(-(y^2 + omega^2)/(2V))/sqrt(2 pi V) times 2 cosh(y omega/V), and log Z_out "
          "is even in y (both checked by SymPy; the density's mass against the law of |u| by "
          "quadrature).", _check_abs_partition(Zout, folded, logZ, y, Vv))
    u = omega + sympy.sqrt(Vv) * w
    poly = sympy.expand(-(u**2 + omega**2) / (2 * Vv) - sympy.log(2 * sympy.pi * Vv) / 2)
    X_abs = sympy.sqrt(m_bo) * sympy.Abs(xi) * sympy.Abs(omega + sympy.sqrt(Vv) * w) / Vv

    def stable(a):  # log 2 cosh X at a = |X|
        return a + sympy.log(1 + sympy.exp(-2 * a))

    poly_avg = calculus.expect(calculus.expect(poly, w), xi)
    two_d = calculus.expect(calculus.expect(stable(X_abs), w), xi)

    def check():
        """The integrand is log Z_out at y = u (SymPy: poly + log 2 cosh X equals it, |X|^2 =
        X^2), and |X| + log(1 + exp(-2|X|)) = log 2 cosh X at numeric points (mpmath)."""
        import mpmath

        X = u * omega / Vv
        if sympy.simplify(poly + sympy.log(2 * sympy.cosh(X)) - logZ.xreplace({y: u})) != 0:
            return False
        # |X|^2 = X^2: each factor's |a|^2 = a^2 (a real for 0 < m < rho)
        if sympy.simplify(sympy.expand((X_abs**2).replace(sympy.Abs, lambda a: a) - X**2)) != 0:
            return False
        t = sympy.Symbol("t", real=True)
        with mpmath.workdps(30):
            for tv in ("-40", "-0.3", "0", "0.7", "25"):
                lhs = mpmath.mpf(sympy.N(stable(sympy.Abs(t)).xreplace(
                    {t: sympy.Rational(tv)}), 35))
                rhs = mpmath.log(2 * mpmath.cosh(mpmath.mpf(tv)))
                if abs(lhs - rhs) > mpmath.mpf(10) ** -25 * max(1, abs(rhs)):
                    return False
        return True

    D.add("channel_two_dimensional",
          {"Psi_out_2d": sympy.Eq(sympy.Symbol("Psi_out"), poly_avg + two_d)},
          "The channel term: log Z_out is even in y, so the integral of Z_out log Z_out over "
          "y > 0 is the average of log Z_out(u) over u = omega + sqrt(V) w; its polynomial part "
          "by the Gaussian moments (E u^2 = rho, E omega^2 = m), and log 2 cosh(u omega/V), "
          "written |X| + log(1 + exp(-2|X|)) with |X| = |omega| |omega + sqrt(V) w|/V, a "
          "two-dimensional Gaussian integral over the field xi and w (reduced to one dimension "
          "in the next steps).", check)
    return _abs_polar(u * omega / Vv, w, Vv, poly_avg, D)


def _abs_radial(a, engine: bool = True):
    r""":math:`G(a) = \int_0^\infty ds\,e^{-s}\log 2\cosh(2as)` for :math:`a > 0` in closed form
    (:func:`_psi_out_abs`): :math:`2a + \log 2 - \tfrac12D_0(1/(8a))` with the digamma
    difference :math:`D_0(z) = \psi(1 + z) - \psi(\tfrac12 + z)` as one function
    (``replica.symbolic.gaussian.digamma_difference``: generated code evaluates it and its
    derivatives in one call each, without the cancellation of the two digamma values at large
    :math:`z`); ``engine=False``: the two ``polygamma`` values, as displayed in the radial
    step."""
    p = 1 / (8 * a)
    if engine:
        return 2 * a + sympy.log(2) - digamma_difference(0, p) / 2
    return 2 * a + sympy.log(2) - (sympy.polygamma(0, 1 + p)
                                   - sympy.polygamma(0, sympy.Rational(1, 2) + p)) / 2


def _abs_polar(X, w, Vv, poly_avg, D: GLMDerivation):
    r""":math:`\mathbb E_{\xi, w}\log 2\cosh X` of :func:`_psi_out_abs` as one Gaussian integral
    over :math:`t` (the polar reduction of its docstring), recorded as three steps: the quadratic
    form and its eigenvalues, the radial average :math:`G`, the angular one (which records
    :math:`\Psi_{\rm out}` = ``poly_avg`` plus it, and returns that)."""
    m, rho = m_bo, sympy.expand(Vv + m_bo)
    th, phi, a = sympy.symbols("theta varphi a", positive=True)
    lp = (m + sympy.sqrt(m * rho)) / (2 * Vv)
    lm = (m - sympy.sqrt(m * rho)) / (2 * Vv)
    A = sympy.Matrix([[m / Vv, sympy.sqrt(m * Vv) / (2 * Vv)],
                      [sympy.sqrt(m * Vv) / (2 * Vv), 0]])
    c_phi = (m + sympy.sqrt(m * rho) * sympy.cos(phi)) / (2 * Vv)

    def check_form():
        """SymPy: X = z^T A z for z = (xi, w); A's trace and determinant are those of
        diag(lambda_+, lambda_-) (a symmetric 2x2 matrix is then a rotation of it, and the law
        of z is rotation invariant); lambda_+ cos^2 theta + lambda_- sin^2 theta = c(2 theta);
        lambda_+ > 0 > lambda_- (at m = 1/3, rho = 1)."""
        zv = sympy.Matrix([xi, w])
        if sympy.simplify(sympy.expand((zv.T * A * zv)[0, 0] - X)) != 0:
            return False
        if sympy.simplify(A.trace() - (lp + lm)) != 0 or sympy.simplify(A.det() - lp * lm) != 0:
            return False
        rot = lp * sympy.cos(th)**2 + lm * sympy.sin(th)**2 - c_phi.xreplace({phi: 2 * th})
        if sympy.simplify(sympy.expand_trig(rot)) != 0:
            return False
        at = {s: 1 for s in rho.free_symbols - {m}}
        at[m] = sympy.Rational(1, 3)
        return bool(lp.xreplace(at) > 0) and bool(lm.xreplace(at) < 0)

    D.add("channel_quadratic_form",
          {"X": sympy.Eq(sympy.Symbol("X"), X),
           "eigenvalues": sympy.Eq(sympy.Tuple(sympy.Symbol("lambda_+"),
                                               sympy.Symbol("lambda_-")), sympy.Tuple(lp, lm)),
           "c": sympy.Eq(sympy.Function("c")(phi), c_phi)},
          "X = u omega/V is a quadratic form z^T A z of z = (xi, w), of eigenvalues lambda_+ > 0 "
          "> lambda_-; rotated to its eigenbasis and in polar coordinates, X = r^2 (lambda_+ "
          "cos^2 theta + lambda_- sin^2 theta) = 2 s c(phi) with s = r^2/2 exponential of mean 1 "
          "and phi = 2 theta uniform, independent of s (checked by SymPy).", check_form)

    G = _abs_radial(a)
    G_psi = _abs_radial(a, engine=False)
    k = sympy.Symbol("k", positive=True, integer=True)
    zz = sympy.Symbol("z", positive=True)

    def check_radial():
        """SymPy: the partial fractions 1/(k(1 + 4ak)) = 1/k - 1/(k + 1/(4a)) and
        sum (-1)^(k+1)/k = log 2; mpmath: the digamma form of the alternating sum
        sum_j (-1)^j/(j + x) at two points (nsum), and G(a) against the quadrature of
        e^{-s} log 2 cosh(2as) at a from 1e-6 to 1e3, to 1e-25 relative; the engine's G
        (with digamma_difference) is the displayed one (SymPy), and digamma_difference of
        orders 0-2 at four points is mpmath's difference of polygamma values at 60 digits, to
        1e-28 relative."""
        import mpmath

        if sympy.simplify(sympy.apart(1 / (k * (1 + 4 * a * k)), k)
                          - (1 / k - 1 / (k + 1 / (4 * a)))) != 0:
            return False
        if sympy.simplify(sympy.summation((-1) ** (k + 1) / k, (k, 1, sympy.oo))
                          - sympy.log(2)) != 0:
            return False
        with mpmath.workdps(30):
            for xv in ("1.3", "7"):
                x = mpmath.mpf(xv)
                lhs = mpmath.nsum(lambda j: (-1) ** int(j) / (j + x), [0, mpmath.inf])
                rhs = (mpmath.digamma((x + 1) / 2) - mpmath.digamma(x / 2)) / 2
                if abs(lhs - rhs) > mpmath.mpf(10) ** -25:
                    return False
            for av in ("1e-6", "0.01", "0.3", "1", "7.5", "1000"):
                av = mpmath.mpf(av)
                closed = mpmath.mpf(sympy.N(G.xreplace({a: sympy.Float(av, 40)}), 40))
                quad = mpmath.quad(lambda s: mpmath.exp(-s) * (
                    2 * av * s + mpmath.log1p(mpmath.exp(-4 * av * s))),
                    [0, 1 / (4 * av), 1, mpmath.inf])
                if abs(closed - quad) > mpmath.mpf(10) ** -25 * abs(quad):
                    return False
            # the engine's G is the displayed one: D_n(z) is the difference of polygamma
            # values (SymPy), and its value (replica.symbolic.digamma_difference) is mpmath's
            # difference at 60 digits, its derivative D_{n+1}
            if sympy.simplify(G.replace(digamma_difference, lambda n, z: digamma_difference(
                    n, z).rewrite_polygamma()) - G_psi) != 0:
                return False
            if sympy.diff(digamma_difference(0, zz), zz) != digamma_difference(1, zz):
                return False
            for nv in (0, 1, 2):
                for zv in ("1e-3", "0.6", "7", "1e5"):
                    x = mpmath.mpf(zv)
                    got = mpmath.mpf(sympy.N(digamma_difference(nv, sympy.Float(zv, 60)), 40))
                    with mpmath.workdps(60):
                        x = mpmath.mpf(zv)
                        ref = mpmath.polygamma(nv, 1 + x) - mpmath.polygamma(nv, x + 0.5)
                    if abs(got - ref) > mpmath.mpf(10) ** -28 * abs(ref):
                        return False
        return True

    D.add("channel_radial", {"G": sympy.Eq(sympy.Function("G")(a), G_psi),
                             "D": sympy.Eq(digamma_difference(sympy.Symbol("n"), zz),
                                           sympy.polygamma(sympy.Symbol("n"), 1 + zz)
                                           - sympy.polygamma(sympy.Symbol("n"),
                                                             sympy.Rational(1, 2) + zz))},
          "The average over s of log 2 cosh(2 a s), a = |c|: log 2 cosh x = |x| + sum_k "
          "(-1)^(k+1) exp(-2k|x|)/k integrated termwise against exp(-s) gives 2a + sum_k "
          "(-1)^(k+1)/(k(1 + 4ak)); by partial fractions log 2 minus the alternating sum over "
          "k of 1/(k + 1/(4a)), a difference of digamma functions (SymPy: the partial "
          "fractions and log 2; mpmath: the digamma form, and G against quadrature from "
          "a = 1e-6 to 1e3). The engine evaluates the difference as one function "
          "digamma_difference(n, z) = psi^(n)(1 + z) - psi^(n)(1/2 + z), its derivative "
          "digamma_difference(n + 1, z), without the cancellation of the two values at large z "
          "(checked: SymPy, and against mpmath's difference at 60 digits).", check_radial)

    t = sympy.Symbol("t", real=True)
    psi0 = sympy.atan(sympy.sqrt(Vv / m))  # chi_0 of the docstring
    K = sympy.sqrt(m * rho) / Vv
    tail = sympy.erfc(t / sympy.sqrt(2)) / 2  # Phi(-t)
    d1, d2 = (sympy.pi - psi0) * tail, psi0 * tail
    a1 = K * sympy.sin(psi0 + d1 / 2) * sympy.sin(d1 / 2)
    a2 = K * sympy.sin(psi0 - d2 / 2) * sympy.sin(d2 / 2)
    integrand = ((sympy.pi - psi0) * G.xreplace({a: a1}) + psi0 * G.xreplace({a: a2})) / sympy.pi
    one_d = calculus.expect(integrand, t)

    def check_angular():
        """SymPy: cos chi_0 = sqrt(m/rho) (so c(pi - chi_0) = 0) and the product forms, c at
        phi = pi - chi_0 - 2e equals K sin(chi_0 + e) sin(e) and at pi - chi_0 + 2e equals
        -K sin(chi_0 - e) sin(e); mpmath: the integrand's two arguments equal |c| at the
        mapped angles (m = 1/3, four values of t, 30 digits), and at m = 1/3 (rho = 1 where it
        is a symbol) the one-dimensional integral equals E_{xi,w} log 2 cosh X by the nested
        Gauss-Legendre rule of ``_abs_two_dimensional``, to 1e-11."""
        import mpmath

        from ..symbolic.codegen import mp_function

        e = sympy.Symbol("e", positive=True)
        trig = {sympy.cos(psi0): sympy.sqrt(m / rho), sympy.sin(psi0): sympy.sqrt(Vv / rho)}
        if sympy.simplify(sympy.cos(psi0) - sympy.sqrt(m / rho)) != 0:
            return False
        if sympy.simplify(sympy.sin(psi0) - sympy.sqrt(Vv / rho)) != 0:
            return False
        for sgn in (1, -1):
            lhs = c_phi.xreplace({phi: sympy.pi - psi0 - sgn * 2 * e})
            rhs = sgn * K * sympy.sin(psi0 + sgn * e) * sympy.sin(e)
            diff = sympy.expand(sympy.expand_trig(sympy.expand(lhs - rhs))).xreplace(trig)
            if sympy.simplify(diff) != 0:
                return False
        at = {s: 1 for s in rho.free_symbols - {m}}
        at[m] = sympy.Rational(1, 3)
        for tv in (-3, 0, sympy.Rational(1, 2), 4):
            pt = dict(at)
            pt[t] = tv
            tl = tail.xreplace(pt)
            p0 = psi0.xreplace(pt)
            for arg, ang in ((a1, sympy.pi - p0 - (sympy.pi - p0) * tl),
                             (a2, sympy.pi - p0 + p0 * tl)):
                ref = sympy.Abs(c_phi.xreplace(pt).xreplace({phi: ang}))
                if abs(sympy.N(arg.xreplace(pt) - ref, 30)) > 1e-27:
                    return False
        at = {s: 1 for s in rho.free_symbols - {m}}
        at[m] = sympy.Rational(1, 3)
        f = mp_function([t], integrand.xreplace(at))
        with mpmath.workdps(15):
            one = mpmath.quad(lambda tv: mpmath.npdf(tv) * f(tv), [-mpmath.inf, 0, mpmath.inf])
        two = _abs_two_dimensional(1 / 3, float(sympy.N(Vv.xreplace(at))))
        return abs(float(one) - two) < 1e-11

    D.add("channel_average",
          {"Psi_out": sympy.Eq(sympy.Symbol("Psi_out"), poly_avg + one_d)},
          "The average over phi, uniform on [0, pi], of G(|c(phi)|): c vanishes at phi_0 = pi - "
          "chi_0 with chi_0 = atan(sqrt(V/m)); each side of phi_0 is mapped to a Gaussian "
          "variable t by its distance to phi_0, (pi - chi_0) Phi(-t) and chi_0 Phi(-t), so "
          "the zero of c, where G(|c|) is smooth but not analytic, is at t -> oo; |c| in its "
          "product form K sin(chi_0 +- d/2) sin(d/2), K = sqrt(m rho)/V (SymPy), and the "
          "result against the two-dimensional integral by nested quadrature at one overlap "
          "(mpmath).", check_angular)
    return poly_avg + one_d


def _abs_two_dimensional(m, V):
    r""":math:`\mathbb E_{\xi, w}\log 2\cosh X`, :math:`X = (\omega + \sqrt Vw)\omega/V`,
    :math:`\omega = \sqrt m\,\xi`, by nested Gauss--Legendre rules in float64 (a check of the
    polar reduction, independent of it): :math:`\xi > 0` on :math:`[0, 12]` (the integrand is
    even in :math:`(\xi, w)` jointly), :math:`w` on :math:`[w_0 - 14, w_0]` and
    :math:`[w_0, 14]` split at the kink :math:`w_0 = -\omega/\sqrt V` of :math:`|X|`; about
    :math:`10^{-13}` accurate for :math:`m \le 0.85`."""
    import numpy as np

    def rule(lo, hi, n):
        x, wt = np.polynomial.legendre.leggauss(n)
        return (hi - lo) / 2 * x + (lo + hi) / 2, (hi - lo) / 2 * wt

    def phi(x):
        return np.exp(-x * x / 2) / np.sqrt(2 * np.pi)

    xs, wx = rule(0.0, 12.0, 240)
    om = np.sqrt(m) * xs[:, None]
    w0 = -om / np.sqrt(V)
    g, wg = rule(-1.0, 1.0, 300)
    total = 0.0
    for lo, hi in ((w0 - 14, w0), (w0, 14.0 + 0 * w0)):
        wv = (hi - lo) / 2 * g[None, :] + (lo + hi) / 2
        X = np.abs((om + np.sqrt(V) * wv) * om / V)
        f = X + np.log1p(np.exp(-2 * X))
        total += np.sum(2 * wx[:, None] * phi(xs)[:, None] * (hi - lo) / 2 * wg[None, :]
                        * phi(wv) * f)
    return float(total)


def _check_abs_partition(Zout, folded, logZ, y, Vv):
    """SymPy: the folded form equals the sum of the two Gaussians, log of it is ``logZ``, and
    ``logZ`` is even in y; mpmath: at one numeric point the density integrates over (0, Y) to
    P(|u| < Y) = Phi((Y - omega)/sqrt(V)) - Phi((-Y - omega)/sqrt(V))."""
    def check():
        import mpmath

        if sympy.simplify((Zout - folded).rewrite(sympy.exp)) != 0:
            return False
        if sympy.simplify(sympy.expand_log(sympy.log(folded), force=True) - logZ) != 0:
            return False
        ys = sympy.Symbol("y_", real=True)
        if not calculus.is_even(sympy.expand(logZ.xreplace({y: ys})), ys):
            return False
        vals = {m_bo: sympy.Rational(1, 3), xi: sympy.Rational(-2, 5)}
        vals.update({s: sympy.Rational(1) for s in (Zout.free_symbols | Vv.free_symbols)
                     - {m_bo, xi, y}})
        with mpmath.workdps(30):
            Zv = Zout.xreplace(vals)

            def f(yv):
                return mpmath.mpf(sympy.N(Zv.xreplace({y: sympy.Float(yv, 35)}), 35))
            om = mpmath.sqrt(mpmath.mpf(1) / 3) * mpmath.mpf(-2) / 5
            sV = mpmath.sqrt(mpmath.mpf(sympy.N(Vv.xreplace(vals), 40)))
            Y = mpmath.mpf(7) / 5
            num = mpmath.quad(f, [0, Y])
            ref = mpmath.ncdf((Y - om) / sV) - mpmath.ncdf((-Y - om) / sV)
            return abs(num - ref) < 1e-25

    return check


def _psi_out_relu(channel: Channel, Vv, D: GLMDerivation):
    r""":math:`\Psi_{\rm out}(m)` of the noiseless ReLU channel :math:`y = \max(0, u)`, derived:
    given :math:`\omega = \sqrt m\,\xi`, :math:`u = \omega + \sqrt Vw`; the label law has an
    atom :math:`Z_{\rm out}(0) = P(u < 0) = \tfrac12\operatorname{erfc}(\omega/\sqrt{2V})` and
    the density :math:`Z_{\rm out}(y) = N(y; \omega, V)` on :math:`y > 0` (the reference measure
    :math:`\delta_0 + dy`). The continuous part's :math:`\int_0^\infty dy\,Z_{\rm out}\log
    Z_{\rm out}` is, with :math:`y = \omega + \sqrt Vw`, the polynomial
    :math:`\log N = -w^2/2 - \tfrac12\log(2\pi V)` averaged over the tail
    :math:`w > -\omega/\sqrt V` (:func:`replica.glm.calculus.expect_tail`, closed form); the
    average over :math:`\xi` is one Gaussian integral."""
    if channel.noise != 0:
        return _psi_out_relu_noisy(channel, Vv, D)
    w = sympy.Symbol("w", real=True)
    omega = sympy.sqrt(m_bo) * xi
    Z0 = sympy.erfc(omega / sympy.sqrt(2 * Vv)) / 2
    y = omega + sympy.sqrt(Vv) * w
    dens = sympy.exp(-(y - omega)**2 / (2 * Vv)) / sympy.sqrt(2 * sympy.pi * Vv)
    logd = sympy.expand(sympy.expand_log(sympy.log(dens), force=True))
    a = -omega / sympy.sqrt(Vv)
    cont = calculus.expect_tail(logd, w, a)
    D.add("channel_partition", {"Z0": sympy.Eq(sympy.Symbol("Z_out_0"), Z0),
                                "Zy": sympy.Eq(sympy.Symbol("Z_out_y"), dens),
                                "continuous": sympy.Eq(sympy.Symbol("I_out"), cont)},
          "The noiseless ReLU channel y = max(0, u) with u = omega + sqrt(V) w given the field: "
          "an atom at y = 0 of mass Z_out_0 = P(u < 0), a Gaussian tail, and the density "
          "Z_out_y = N(y; omega, V) on y > 0; the continuous part's integral of Z_out log Z_out, "
          "I_out, is the polynomial log N(omega + sqrt(V) w; omega, V) in w averaged over the tail "
          "w > -omega/sqrt(V) by the tail moments (closed form).",
          _check_relu_continuous(cont, Vv, w))
    out = calculus.expect(Z0 * sympy.log(Z0) + cont, xi)
    D.add("channel_average", {"Psi_out": sympy.Eq(sympy.Symbol("Psi_out"), out)},
          "The channel term averaged over the label and the field: the atom's Z_out_0 log Z_out_0 "
          "plus the continuous part, one Gaussian integral over xi.")
    return out


def _psi_out_relu_noisy(channel: Channel, Vv, D: GLMDerivation):
    r""":math:`\Psi_{\rm out}(m)` of the ReLU channel with Gaussian noise,
    :math:`y = \max(0, u) + \sigma\varepsilon` (:math:`\Delta = \sigma^2 > 0`), derived: given
    :math:`\omega = \sqrt m\,\xi`, :math:`u = \omega + \sqrt Vw`, and the label's density is

    .. math::
        Z_{\rm out}(y) = P_0\,N(y; 0, \Delta) + \int_0^\infty du\,N(u; \omega, V)\,
        N(y; u, \Delta) = P_0\,N_0(y) + N_1(y)\,\Phi(\kappa(y)),

    :math:`P_0 = \tfrac12\operatorname{erfc}(\omega/\sqrt{2V})` (the mass of :math:`u < 0`),
    :math:`N_1(y) = N(y; \omega, V + \Delta)` and, completing the square in :math:`u` (the
    law of :math:`u` given :math:`y` is Gaussian with mean :math:`(\omega\Delta + yV)/(V +
    \Delta)` and variance :math:`V\Delta/(V + \Delta)`),
    :math:`\kappa(y) = (\omega\Delta + yV)/\sqrt{V\Delta(V + \Delta)}`,
    :math:`\Phi(\kappa) = \tfrac12\operatorname{erfc}(-\kappa/\sqrt2)`. Then
    :math:`\int dy\,Z_{\rm out}\log Z_{\rm out}` is the sum of the two parts' averages, each a
    Gaussian integral after :math:`y = \sigma t` (first part) and :math:`y = \omega + \sqrt{V
    + \Delta}\,t` (second):

    .. math::
        \Psi_{\rm out} = \int\mathcal D\xi\int\mathcal Dt\,\big[P_0\log Z_{\rm out}(\sigma t)
        + \Phi(\kappa)\log Z_{\rm out}\big|_{y = \omega + \sqrt{V + \Delta}t}\big],

    a two-dimensional integral (the inner integrand depends on :math:`\xi`). Written so that
    float64 evaluates it everywhere (no :math:`0\log 0`, no logarithm of an underflowed sum):
    :math:`\log Z_{\rm out}` in log space, :math:`a = \log(P_0N_0)`, :math:`b =
    \log(N_1\Phi)` with :math:`\log P_0` and :math:`\log\Phi` as
    :class:`~replica.symbolic.gaussian.log_erfc` (finite where ``erfc`` underflows) and
    :math:`\log Z_{\rm out} = a + \operatorname{softplus}(b - a)` in the atom's part,
    :math:`b + \operatorname{softplus}(a - b)` in the continuous part (each exact where its
    own term dominates; :math:`\operatorname{softplus}(x) = \log(1 + e^x)`); the weights
    :math:`P_0`, :math:`\Phi` as :math:`e^{\log\operatorname{erfc}}/2`, so that a weight that
    underflows multiplies a finite logarithm. Every derivative stays finite
    (:class:`~replica.symbolic.gaussian.rerfcx`, :class:`~replica.symbolic.gaussian.sigmoid`)."""
    t = sympy.Symbol("t", real=True)
    y = sympy.Symbol("y", real=True)
    Delta = channel.noise**2
    omega = sympy.sqrt(m_bo) * xi
    P0 = sympy.erfc(omega / sympy.sqrt(2 * Vv)) / 2
    N0 = sympy.exp(-y**2 / (2 * Delta)) / sympy.sqrt(2 * sympy.pi * Delta)
    N1 = sympy.exp(-(y - omega)**2 / (2 * (Vv + Delta))) / sympy.sqrt(2 * sympy.pi * (Vv + Delta))
    kappa = (omega * Delta + y * Vv) / sympy.sqrt(Vv * Delta * (Vv + Delta))
    # (unevaluated: SymPy would write erfc(-u) as 2 - erfc(u), so Phi = 1 - erfc(u)/2, which
    # rounds to 0 far in its tail, where the logarithm's derivative divides by it)
    Phi = sympy.erfc(-kappa / sympy.sqrt(2), evaluate=False) / 2
    Zout = P0 * N0 + N1 * Phi
    D.add("channel_partition", {"Zout": sympy.Eq(sympy.Function("Z_out")(y), Zout)},
          "The ReLU channel with Gaussian noise y = max(0, u) + sigma eps, u = omega + sqrt(V) w "
          "given the field: the label's density is the atom's mass P(u < 0) times the noise "
          "density N(y; 0, sigma^2), plus the convolution of N(u; omega, V) on u > 0 with the "
          "noise, N(y; omega, V + sigma^2) times the Gaussian tail of the law of u given y "
          "(completing the square in u).", _check_relu_noisy_partition(Zout, y, Vv, Delta))
    # log Z_out in log space: the two parts' logarithms a (the atom's) and b (the continuous
    # part's), each with a log erfc that stays finite where its erfc underflows, and
    # log Z_out = a + softplus(b - a) = b + softplus(a - b) (no log 0, no 0 log 0, no overflow)
    S = Vv + Delta
    la = (log_erfc(omega / sympy.sqrt(2 * Vv)) - sympy.log(2) - y**2 / (2 * Delta)
          - sympy.log(2 * sympy.pi * Delta) / 2)
    lb = (log_erfc(-kappa / sympy.sqrt(2)) - sympy.log(2) - (y - omega)**2 / (2 * S)
          - sympy.log(2 * sympy.pi * S) / 2)
    log_atom = la + softplus(lb - la)  # (exact where the atom's part dominates)
    log_cont = lb + softplus(la - lb)  # (exact where the continuous part dominates)
    D.add("channel_log_partition", {"logZ": sympy.Eq(sympy.Function("log_Z_out")(y), log_atom),
                                    "logZ2": sympy.Eq(sympy.Function("log_Z_out")(y), log_cont)},
          "The logarithm of Z_out in log space: a = log(P0 N0) with P0 = erfc(omega/sqrt(2V))/2 "
          "as log erfc, b = log(N1 Phi) with Phi = erfc(-kappa/sqrt(2))/2 as log erfc, and "
          "log Z_out = a + softplus(b - a) = b + softplus(a - b), softplus(x) = log(1 + e^x): "
          "each part's term finite where its erfc underflows, no logarithm of a sum that "
          "underflows.", _check_relu_noisy_log_partition(Zout, log_atom, log_cont, y, Vv))

    # the weights P0 and Phi as exp(log erfc)/2 too: no erfc in the integrand (a product of a
    # weight that underflows to 0 and a finite logarithm is 0, not 0 * inf)
    P0w = sympy.exp(log_erfc(omega / sympy.sqrt(2 * Vv))) / 2
    Phiw = sympy.exp(log_erfc(-kappa / sympy.sqrt(2))) / 2
    # the atom's part after y = sigma t, weighted by P0, with the form exact where it dominates;
    # the continuous part after y = omega + sqrt(V + Delta) t, weighted by Phi, likewise
    inner = calculus.expect(P0w * log_atom.xreplace({y: channel.noise * t})
                            + (Phiw * log_cont).xreplace({y: omega + sympy.sqrt(S) * t}), t)
    out = calculus.expect(inner, xi)
    D.add("channel_average", {"Psi_out": sympy.Eq(sympy.Symbol("Psi_out"), out)},
          "The channel term: the integral of Z_out log Z_out over y, the atom's part after y = "
          "sigma t and the continuous part after y = omega + sqrt(V + sigma^2) t (its logarithm "
          "split as log N_1 + log(Phi + P_0 N_0/N_1), the ratio's exponentials combined), "
          "averaged over the field: a two-dimensional Gaussian integral over xi and t.")
    return out


def _check_relu_noisy_partition(Zout, y, Vv, Delta):
    """At one numeric point the closed form equals the convolution integral
    P(u < 0) N(y; 0, Delta) + int_0^inf N(u; omega, V) N(y; u, Delta) du by mpmath quadrature."""
    def check():
        import mpmath

        vals = {m_bo: sympy.Rational(1, 3), xi: sympy.Rational(-2, 5), y: sympy.Rational(3, 10)}
        vals.update({s: sympy.Rational(1, 2) for s in (Zout.free_symbols | Vv.free_symbols)
                     - set(vals)})
        with mpmath.workdps(30):
            closed = sympy.N(Zout.xreplace(vals), 30)
            om = mpmath.sqrt(mpmath.mpf(1) / 3) * mpmath.mpf(-2) / 5
            Vn = mpmath.mpf(sympy.N(Vv.xreplace(vals), 40))
            Dn = mpmath.mpf(sympy.N(Delta.xreplace(vals), 40))
            yv = mpmath.mpf(3) / 10
            num = mpmath.ncdf(-om / mpmath.sqrt(Vn)) * mpmath.npdf(yv, 0, mpmath.sqrt(Dn))
            num += mpmath.quad(lambda u: mpmath.npdf(u, om, mpmath.sqrt(Vn))
                               * mpmath.npdf(yv, u, mpmath.sqrt(Dn)), [0, 1, mpmath.inf])
            return abs(closed - num) < 1e-20

    return check


def _check_relu_noisy_log_partition(Zout, log_atom, log_cont, y, Vv):
    """A symbolic identity: with the log-space functions replaced by their definitions
    (log erfc(x) and softplus(x) = log(1 + e^x)), the exponential of each log-space form, its
    exponentials combined, simplifies to Z_out exactly (the difference to 0). That the forms stay
    finite in float64 where Z_out underflows is the float64 functions' business, tested against
    mpmath in ``tests/test_glm_bayes_relu_noisy.py``."""
    def check():
        def by_definition(e):
            e = e.replace(log_erfc, lambda x: sympy.log(sympy.erfc(x, evaluate=False)))
            return e.replace(softplus, lambda x: sympy.log(1 + sympy.exp(x)))

        return all(sympy.simplify(sympy.powsimp(sympy.expand(sympy.exp(by_definition(e))),
                                                combine="exp") - Zout) == 0
                   for e in (log_atom, log_cont))

    return check


def _psi_out_abs_noisy(channel: Channel, Vv, D: GLMDerivation):
    r""":math:`\Psi_{\rm out}(m)` of the absolute-value channel with Gaussian noise,
    :math:`y = |u| + \sigma\varepsilon` (:math:`\Delta = \sigma^2 > 0`; noisy real phase
    retrieval), derived: given :math:`\omega = \sqrt m\,\xi`, :math:`u = \omega + \sqrt Vw`,
    the label's density on :math:`y \in \mathbb R` is the noise convolution of the law of
    :math:`|u|`, split at :math:`u = 0` (on :math:`u < 0` after :math:`u \to -u`):

    .. math::
        Z_{\rm out}(y) = \int_0^\infty du\,\big[N(u; \omega, V) + N(u; -\omega, V)\big]\,
        N(y; u, \Delta) = N_+(y)\,\Phi(\kappa_+(y)) + N_-(y)\,\Phi(\kappa_-(y)),

    :math:`N_\pm(y) = N(y; \pm\omega, S)`, :math:`S = V + \Delta`, and, completing the square
    in :math:`u` (the law of :math:`u` given :math:`y` under :math:`N(u; \pm\omega, V)` is
    Gaussian with mean :math:`(\pm\omega\Delta + yV)/S` and variance :math:`V\Delta/S`),
    :math:`\kappa_\pm(y) = (\pm\omega\Delta + yV)/\sqrt{V\Delta S}`,
    :math:`\Phi(\kappa) = \tfrac12\operatorname{erfc}(-\kappa/\sqrt2)`: two Gaussian-times-erfc
    terms, exchanged by :math:`\omega \to -\omega` (:math:`Z_{\rm out}` is even in
    :math:`\omega`, checked by SymPy). So is :math:`\log Z_{\rm out}`, and :math:`\xi \to -\xi`
    maps the second term's part of :math:`\mathbb E_\xi\int dy\,Z_{\rm out}\log Z_{\rm out}` onto
    the first's; after :math:`y = \omega + \sqrt S\,t`,

    .. math::
        \Psi_{\rm out} = 2\int\mathcal D\xi\int\mathcal Dt\,\Phi(\kappa_+)\,
        \log Z_{\rm out}\big|_{y = \omega + \sqrt S\,t},

    a two-dimensional Gaussian integral. In log space as the noisy ReLU's
    (:func:`_psi_out_relu_noisy`): :math:`a = \log(N_+\Phi(\kappa_+))`,
    :math:`b = \log(N_-\Phi(\kappa_-))` with :math:`\log\Phi` as
    :class:`~replica.symbolic.gaussian.log_erfc`, :math:`\log Z_{\rm out} = a +
    \operatorname{softplus}(b - a)` (exact where the first term, the weight's, dominates), the
    weight :math:`\Phi(\kappa_+) = e^{\log\operatorname{erfc}(-\kappa_+/\sqrt2)}/2`: finite in
    float64 for every :math:`(\xi, t)`, and so are its derivatives."""
    t = sympy.Symbol("t", real=True)
    y = sympy.Symbol("y", real=True)
    Delta = channel.noise**2
    S = Vv + Delta
    omega = sympy.sqrt(m_bo) * xi

    def gauss_tail_term(sign):  # N(y; sign omega, S) Phi(kappa_sign(y)), and kappa
        kappa = (sign * omega * Delta + y * Vv) / sympy.sqrt(Vv * Delta * S)
        dens = sympy.exp(-(y - sign * omega)**2 / (2 * S)) / sympy.sqrt(2 * sympy.pi * S)
        # (unevaluated: SymPy would write erfc(-x) as 2 - erfc(x), which rounds to 0 in the tail)
        return dens * sympy.erfc(-kappa / sympy.sqrt(2), evaluate=False) / 2, kappa

    (plus, kp), (minus, km) = gauss_tail_term(1), gauss_tail_term(-1)
    Zout = plus + minus
    D.add("channel_partition", {"Zout": sympy.Eq(sympy.Function("Z_out")(y), Zout)},
          "The absolute-value channel with Gaussian noise y = |u| + sigma eps, u = omega + "
          "sqrt(V) w given the field: the label's density is the noise convolution of the law "
          "of |u|, the Gaussian densities of u at u and -u on u > 0; each part is N(y; +-omega, "
          "V + sigma^2) times the Gaussian tail of the law of u given y (completing the square "
          "in u). It is even in omega (the two parts exchanged).",
          _check_abs_noisy_partition(Zout, y, Vv, Delta))

    def log_term(kappa, sign):
        return (log_erfc(-kappa / sympy.sqrt(2)) - sympy.log(2)
                - (y - sign * omega)**2 / (2 * S) - sympy.log(2 * sympy.pi * S) / 2)

    la, lb = log_term(kp, 1), log_term(km, -1)
    log_plus = la + softplus(lb - la)  # (exact where the first part dominates)
    log_minus = lb + softplus(la - lb)
    D.add("channel_log_partition", {"logZ": sympy.Eq(sympy.Function("log_Z_out")(y), log_plus)},
          "The logarithm of Z_out in log space: a = log(N(y; omega, S) Phi(kappa_+)) and b = "
          "log(N(y; -omega, S) Phi(kappa_-)), S = V + sigma^2, each Phi = erfc(-kappa/sqrt(2))/2 "
          "as log erfc, and log Z_out = a + softplus(b - a), softplus(x) = log(1 + e^x): finite "
          "where either erfc underflows.",
          _check_relu_noisy_log_partition(Zout, log_plus, log_minus, y, Vv))
    weight = sympy.exp(log_erfc(-kp / sympy.sqrt(2))) / 2
    inner = calculus.expect((weight * log_plus).xreplace({y: omega + sympy.sqrt(S) * t}), t)
    out = 2 * calculus.expect(inner, xi)
    D.add("channel_average", {"Psi_out": sympy.Eq(sympy.Symbol("Psi_out"), out)},
          "The channel term: Z_out log Z_out integrated over y and averaged over the field; the "
          "second part's share equals the first's under xi -> -xi (Z_out is even in omega), so "
          "it is twice the first part's, after y = omega + sqrt(V + sigma^2) t: a "
          "two-dimensional Gaussian integral over xi and t.")
    return out


def _check_abs_noisy_partition(Zout, y, Vv, Delta):
    """SymPy: ``Zout`` is even in the field (xi -> -xi); mpmath: at one numeric point the closed
    form equals the convolution int du N(u; omega, V) N(y; |u|, Delta) by quadrature."""
    def check():
        import mpmath

        if sympy.simplify(Zout.xreplace({xi: -xi}) - Zout) != 0:
            return False
        vals = {m_bo: sympy.Rational(1, 3), xi: sympy.Rational(-2, 5), y: sympy.Rational(3, 10)}
        vals.update({s: sympy.Rational(1, 2) for s in (Zout.free_symbols | Vv.free_symbols)
                     - set(vals)})
        with mpmath.workdps(30):
            closed = sympy.N(Zout.xreplace(vals), 30)
            om = mpmath.sqrt(mpmath.mpf(1) / 3) * mpmath.mpf(-2) / 5
            sV = mpmath.sqrt(mpmath.mpf(sympy.N(Vv.xreplace(vals), 40)))
            sD = mpmath.sqrt(mpmath.mpf(sympy.N(Delta.xreplace(vals), 40)))
            yv = mpmath.mpf(3) / 10
            num = mpmath.quad(lambda u: mpmath.npdf(u, om, sV) * mpmath.npdf(yv, abs(u), sD),
                              [-mpmath.inf, -1, 0, 1, mpmath.inf])
            return abs(closed - num) < 1e-20

    return check


def _check_relu_continuous(cont, Vv, w):
    """At one numeric point the closed form equals the y-integral of N log N over y > 0 by
    mpmath quadrature."""
    def check():
        import mpmath

        vals = {m_bo: sympy.Rational(1, 3), xi: sympy.Rational(-2, 5)}
        vals.update({s: sympy.Rational(1) for s in (cont.free_symbols | Vv.free_symbols)
                     - {m_bo, xi}})
        with mpmath.workdps(30):
            closed = sympy.N(cont.xreplace(vals), 30)
            om = mpmath.sqrt(mpmath.mpf(1) / 3) * mpmath.mpf(-2) / 5
            Vn = mpmath.mpf(sympy.N(Vv.xreplace(vals), 40))

            def f(yv):
                d = mpmath.npdf(yv, om, mpmath.sqrt(Vn))
                return d * mpmath.log(d)
            num = mpmath.quad(f, [0, 1, mpmath.inf])
            return abs(closed - num) < 1e-20

    return check


@keywords_checked(ModelError, also=(SaddlePointModel,),
                  sets_itself=("free_energy", "pairs", "positive_unknowns", "derivation",
                               "stability"))
def BayesOptimal(name: str, *, prior: Prior, channel: Channel, parameters: Sequence = (),
                 alpha: str = "alpha", title: str = "", start=None, observables=None,
                 **kw) -> SaddlePointModel:
    r"""A :class:`~replica.modeling.SaddlePointModel` for Bayes-optimal inference of the teacher
    (the posterior knows ``prior`` and ``channel``); free entropy derived from the parts (module
    docstring); replica symmetry exact."""
    prior = _named_part(name, prior, PRIORS, "prior")
    channel = _named_part(name, channel, CHANNELS, "channel")
    _check_part(name, prior, Prior, "prior")
    _check_part(name, channel, Channel, "channel")
    link = tuple(channel.link)
    if channel.kind == "regression" and not channel.linear and link not in ((0, 1), (-1, 1)):
        raise ModelError(f"model {name!r}: BayesOptimal does not derive the {channel.name} "
                         f"channel (its Z_out log Z_out is a two-dimensional integral over the "
                         "label and the field not derived for this link); the ReLU channel is "
                         "derived, or use the channel with ERM")
    records, rules, symbols, notation = _schema(name, [prior, channel], parameters, alpha)
    if channel.kind == "regression" and not channel.linear and isinstance(channel.noise,
                                                                         sympy.Symbol):
        n = channel.noise.name  # (the noisy channel's Z_out divides by sigma)
        own = "ReLU(0)" if link == (0, 1) else "AbsoluteValue(0)"
        rules.append(Rule(n, lambda p, n=n: getattr(p, n) <= 0,
                          f"{n} must be positive for the noisy {channel.name} channel (the "
                          f"noiseless channel is {own}, a model of its own)"))
    al = symbols[alpha]
    D = GLMDerivation()
    psi_s, out_s = sympy.Symbol("psi_P0"), sympy.Symbol("Psi_out")
    general = -m_bo * mhat_pos / 2 + psi_s + al * out_s
    D.add("general_free_entropy", {"Phi": sympy.Eq(sympy.Symbol("Phi"), general)},
          "The replica-symmetric free entropy of Bayes-optimal inference in a generalised linear "
          "model with Gaussian covariates.",
          stated=f"proved by {REFERENCES['bayes']}")
    rho = prior.second_moment
    try:
        psi = _psi_prior(prior, D)
        out = _psi_out(channel, rho, D)
    except calculus.GLMCalculusError as exc:
        raise ModelError(f"model {name!r}: {exc}") from None
    phi = general.xreplace({psi_s: psi, out_s: out})
    D._free_energy = phi
    D.add("free_entropy", {"Phi": sympy.Eq(sympy.Symbol("Phi"), phi)},
          "The free entropy assembled from the parts: the model's free energy.")
    obs = {}
    if channel.kind == "classification":
        a, b = channel.latent
        norm = sympy.sqrt(a**2 * rho + b**2)
        obs["errors"] = {
            "bayes": sympy.acos(a * sympy.sqrt(m_bo) / norm) / sympy.pi,
            "gibbs": sympy.acos(a * m_bo / (norm * sympy.sqrt(rho))) / sympy.pi}
    else:
        obs["errors"] = {"mmse": rho - m_bo}
    obs["free_energy"] = {"free_entropy": phi}
    for g, members in (observables or {}).items():
        obs.setdefault(g, {}).update(members)
    names = {mhat_pos: r"\hat m"}
    for n, tex in notation.items():
        if tex:
            names[symbols[n]] = tex
    return SaddlePointModel(
        name, title=title or f"Bayes-optimal {channel.description}, {prior.description} prior",
        free_energy=phi, pairs=[(m_bo, mhat_pos)], parameters=records,
        rules=rules + list(kw.pop("rules", [])), observables=obs,
        start=start or {m_bo: rho / 2}, positive_unknowns=True,
        admissible=[(rho - m_bo, "m < rho")] + list(kw.pop("admissible", [])),
        symbol_names={**names, **kw.pop("symbol_names", {})}, derivation=D,
        free_energy_name=kw.pop("free_energy_name", "free_entropy"),
        extremum=kw.pop("extremum", "max"),  # a free entropy
        stability=Stability(exact="Bayes-optimal inference: the Nishimori identities hold and the "
                            "replica-symmetric formula is exact (" + REFERENCES["bayes"] + ")"),
        **kw)


def replicon_at(model, result, dps: int | None = None):
    r"""The replicon :math:`\lambda_{\rm AT}` of ``model`` (its ``stability.replicon``) at a
    solved point ``result`` (:func:`replica.solve` or ``model.solve``), evaluated by the engine's
    code generator at ``dps`` digits (default: the solve's); ``None`` where replica symmetry is
    exact (no replicon). Positive: the replica-symmetric solution is locally stable."""
    import mpmath

    from ..symbolic.codegen import Evaluator

    stability = getattr(model, "stability", None)
    if stability is None or stability.replicon is None:
        return None
    expr = sympy.sympify(stability.replicon)
    syms = sorted(expr.free_symbols, key=str)
    with mpmath.workdps(dps or result.dps):
        values = dict(result.all_values)
        for k, v in result.params.items():
            r = sympy.Rational(str(v))
            values[k] = mpmath.mpf(r.p) / r.q
        missing = [str(s) for s in syms if str(s) not in values]
        if missing:
            raise ModelError(f"model {model.name!r}: the solution has no value for "
                             f"{', '.join(missing)}")
        return Evaluator([expr], syms).mp([mpmath.mpf(values[str(s)]) for s in syms])[0]
