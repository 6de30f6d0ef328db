r"""The named parts of a generalised linear model: losses, penalties, teacher channels and
teacher priors.

Each part is a small record of SymPy expressions with its LaTeX notation and the parameters it
uses. A parameter of a part is given by the *name* of a user-facing parameter (``Ridge("lam")``:
the penalty's :math:`\lambda` is the command-line option ``--lam``) or by a number
(``Linear(sigma=0)``); a number outside the part's domain, or a name that is not an identifier,
is a :class:`~replica.modeling.ModelError` naming the part and the parameter (exit status 2); so
is a misspelled keyword (``Ridge(lamda=0.1)``, :func:`~replica.errors.keywords_checked`: a
:class:`PartError` naming it, the closest accepted one and all of them).

**Losses** :math:`\ell`, in one variable :math:`t`:

* *residual* losses are functions of the residual :math:`t = y - \hat y` (regression):
  :func:`Square` :math:`t^2/2`, :func:`Absolute` :math:`|t|`, :func:`Huber`
  (:math:`t^2/2` for :math:`|t| \le \delta`, :math:`\delta|t| - \delta^2/2` beyond);
* *margin* losses are functions of the margin :math:`t = y\hat y`, :math:`y = \pm1`
  (classification): :func:`Logistic` :math:`\log(1 + e^{-t})`, :func:`Hinge`
  :math:`\max(0, 1 - t)`.

A loss is either *piecewise polynomial* of degree at most two (pieces on intervals whose ends are
constants or parameters; its proximal map then has a closed form on each piece, solved by SymPy)
or *smooth* with a declared bracket for its proximal map (the root of
:math:`t - x + V\ell'(t) = 0` lies between two expressions in :math:`x, V`, proved in the loss's
docstring), which :func:`replica.modeling.implicit_root` solves numerically.

**Penalties** :math:`r(w)`, separable: :func:`Ridge` :math:`\lambda w^2/2`, :func:`L1`
:math:`\lambda|w|`, :func:`ElasticNet` :math:`\lambda_1|w| + \lambda_2w^2/2` -- all piecewise
polynomial, with :math:`r(0) = 0`.

**Channels** (the teacher's label given its field :math:`u = x\cdot w^*/\sqrt d`):
:func:`Linear` :math:`y = u + \sigma\varepsilon`; :func:`Sign` :math:`y = \operatorname{sign}u`;
:func:`Probit` :math:`y = \operatorname{sign}(\eta u + \sqrt{1-\eta^2}\,\varepsilon)` (the
convention of ``examples/logistic_regression.py``). The two classification channels are
*latent-linear*: :math:`y = \operatorname{sign}(a u + b\varepsilon)`, which is what the free
energy needs (the label law given a Gaussian field is again a Gaussian tail).

**Priors** of the teacher's entries, finite mixtures of point masses and centred Gaussians:
:func:`Gaussian` :math:`N(0, 1)`, :func:`Rademacher` :math:`\pm1`, :func:`GaussBernoulli`
:math:`(1-\varepsilon)\delta_0 + \varepsilon N(0, 1)`.
"""

from __future__ import annotations

import dataclasses
from typing import Mapping

import sympy

from ..errors import ReplicaError, keywords_checked

__all__ = ["Loss", "Penalty", "Channel", "Prior", "Piece", "PartParameter", "PartError",
           "Square", "Absolute", "Huber", "Logistic", "Hinge", "Ridge", "L1", "ElasticNet",
           "Linear", "Sign", "Probit", "ReLU", "AbsoluteValue", "Gaussian", "Rademacher",
           "GaussBernoulli", "LOSSES",
           "PENALTIES", "CHANNELS", "PRIORS", "T"]

T = sympy.Symbol("t", real=True)
"""The variable of a loss or a penalty."""


class PartError(ReplicaError, ValueError):
    """A part declared with an inadmissible parameter (exit status 2)."""

    exit_status = 2


@dataclasses.dataclass(frozen=True)
class PartParameter:
    """A parameter a part uses: its (user-facing) name, help, domain and LaTeX notation, and an
    optional upper bound (a :class:`~replica.problem.Rule` is declared for it)."""

    name: str
    help: str
    domain: str = "positive"
    notation: str = ""
    at_most: object = None


@dataclasses.dataclass(frozen=True)
class Piece:
    """One piece of a piecewise-polynomial function: ``expr`` (in :data:`T`) on ``(lo, hi)``."""

    expr: sympy.Expr
    lo: sympy.Expr
    hi: sympy.Expr

    def __post_init__(self):
        for k in ("expr", "lo", "hi"):
            object.__setattr__(self, k, sympy.sympify(getattr(self, k)))


def _value(part: str, key: str, given, domain: str, default_help: str, notation: str,
           at_most=None):
    """``(expression, [PartParameter])`` for one parameter of a part: a symbol named by the user,
    or a checked number."""
    if isinstance(given, str):
        if not given.isidentifier():
            raise PartError(f"{part}: parameter {key}={given!r} must be a parameter name (an "
                            "identifier) or a number")
        assumptions = {"positive": True} if domain == "positive" else {"nonnegative": True}
        return sympy.Symbol(given, **assumptions), [
            PartParameter(given, default_help, domain, notation, at_most)]
    try:
        value = sympy.sympify(given, strict=True)
        if not isinstance(value, sympy.Expr):  # (None, a list, a tuple, bytes, a boolean)
            raise TypeError
        value = sympy.nsimplify(value, rational=True)
    except (sympy.SympifyError, TypeError, ValueError):
        raise PartError(f"{part}: parameter {key}={given!r} is neither a name nor a number") \
            from None
    if not value.is_number or not value.is_real:
        raise PartError(f"{part}: parameter {key}={given!r} is neither a name nor a real number")
    if (domain == "positive" and not value > 0) or (domain == "nonnegative" and value < 0):
        raise PartError(f"{part}: parameter {key} must be {domain}, got {given}")
    if at_most is not None and value > at_most:
        raise PartError(f"{part}: parameter {key} must be at most {at_most}, got {given}")
    return value, []


@dataclasses.dataclass(frozen=True)
class Loss:
    r"""A loss :math:`\ell(t)`: ``kind`` ``"residual"`` (:math:`t = y - \hat y`) or ``"margin"``
    (:math:`t = y\hat y`); ``pieces`` (piecewise polynomial of degree :math:`\le 2`) or ``smooth``
    (an expression in :data:`T`) with ``bracket(x, V)`` (two expressions bounding the root of
    :math:`t - x + V\ell'(t)`); ``params``: the parameters it uses."""

    name: str
    latex: str
    kind: str
    pieces: tuple = ()
    smooth: object = None
    bracket: object = None
    params: tuple = ()
    description: str = ""

    def expression(self):
        """:math:`\\ell(t)` as one SymPy expression (``Piecewise`` for a piecewise loss)."""
        if self.smooth is not None:
            return self.smooth
        return sympy.Piecewise(*[(p.expr, (T > p.lo) & (T <= p.hi)) if p.hi != sympy.oo
                                 else (p.expr, True) for p in self.pieces])


@dataclasses.dataclass(frozen=True)
class Penalty:
    r"""A separable penalty :math:`r(w)` with :math:`r(0) = 0`, piecewise polynomial of degree
    :math:`\le 2` (``pieces`` in :data:`T`), strictly convex when ``strictly_convex``."""

    name: str
    latex: str
    pieces: tuple
    params: tuple = ()
    strictly_convex: bool = False
    description: str = ""


@dataclasses.dataclass(frozen=True)
class Channel:
    r"""The teacher's label given its field :math:`u`: ``kind`` ``"regression"``
    (:math:`y = g(u) + \sigma\varepsilon`, ``noise`` :math:`\sigma`, ``link``
    :math:`(c_-, c_+)`: :math:`g(u) = c_+u` for :math:`u > 0` and :math:`c_-u` for :math:`u < 0`;
    :math:`(1, 1)` is the linear channel) or ``"classification"``
    (:math:`y = \operatorname{sign}(a u + b\varepsilon)`, ``latent`` :math:`(a, b)`)."""

    name: str
    latex: str
    kind: str
    noise: object = 0
    latent: tuple = (1, 0)
    params: tuple = ()
    description: str = ""
    link: tuple = (1, 1)

    @property
    def linear(self) -> bool:
        r"""Whether the link is the identity (:math:`y = u + \sigma\varepsilon`)."""
        return self.kind == "regression" and tuple(self.link) == (1, 1)

    def label(self, u, eps):
        r"""The label as a SymPy expression of the teacher field ``u`` and a standard Gaussian
        ``eps``: :math:`g(u) + \sigma\varepsilon` or
        :math:`\operatorname{sign}(au + b\varepsilon)` (what a simulation samples)."""
        if self.kind == "regression":
            cm, cp = (sympy.sympify(c) for c in self.link)
            g = u if (cm, cp) == (1, 1) else sympy.Piecewise((cp * u, u > 0), (cm * u, True))
            return g + self.noise * eps
        a, b = self.latent
        return sympy.sign(a * u + b * eps)

    def moments(self, rho):
        r""":math:`(\mathbb E\,yu, \mathbb E\,y^2)` of a regression channel for
        :math:`u \sim N(0, \rho)`: :math:`\mathbb E[u^2\theta(\pm u)] = \rho/2`, so
        :math:`\mathbb E\,yu = (c_+ + c_-)\rho/2` and
        :math:`\mathbb E\,y^2 = (c_+^2 + c_-^2)\rho/2 + \sigma^2`."""
        cm, cp = (sympy.sympify(c) for c in self.link)
        return (cp + cm) * rho / 2, (cp**2 + cm**2) * rho / 2 + self.noise**2


@dataclasses.dataclass(frozen=True)
class Prior:
    r"""A teacher prior: ``points`` ``((weight, location), ...)`` and ``gaussians``
    ``((weight, variance), ...)``, the weights summing to one."""

    name: str
    latex: str
    points: tuple = ()
    gaussians: tuple = ()
    params: tuple = ()
    description: str = ""

    @property
    def second_moment(self):
        r""":math:`\rho = \mathbb E\,w^{*2}`."""
        return sympy.expand(sum(w * a**2 for w, a in self.points)
                            + sum(w * s2 for w, s2 in self.gaussians))


# -- losses -----------------------------------------------------------------------------------
@keywords_checked(PartError)
def Square() -> Loss:
    r"""The square loss :math:`\ell(t) = t^2/2` of the residual."""
    return Loss("square", r"\tfrac12 t^2", "residual",
                pieces=(Piece(T**2 / 2, -sympy.oo, sympy.oo),),
                description="square loss (y - yhat)^2/2")


@keywords_checked(PartError)
def Absolute() -> Loss:
    r"""The absolute loss :math:`\ell(t) = |t|` of the residual (kink at 0)."""
    return Loss("absolute", r"|t|", "residual",
                pieces=(Piece(-T, -sympy.oo, 0), Piece(T, 0, sympy.oo)),
                description="absolute loss |y - yhat|")


@keywords_checked(PartError)
def Huber(delta="delta") -> Loss:
    r"""Huber's loss of the residual: :math:`t^2/2` for :math:`|t| \le \delta`,
    :math:`\delta|t| - \delta^2/2` beyond (convex, continuously differentiable)."""
    d, params = _value("loss huber", "delta", delta, "positive",
                       "Huber threshold delta of the loss", r"\delta")
    return Loss("huber", r"\ell_\delta(t)", "residual",
                pieces=(Piece(-d * T - d**2 / 2, -sympy.oo, -d), Piece(T**2 / 2, -d, d),
                        Piece(d * T - d**2 / 2, d, sympy.oo)),
                params=tuple(params), description="Huber loss")


@keywords_checked(PartError)
def Logistic() -> Loss:
    r"""The logistic loss of the margin, :math:`\ell(t) = \log(1 + e^{-t})`. Its proximal map
    :math:`t - x + V\ell'(t) = 0` has no closed form; since :math:`-1 < \ell' < 0`, the left side
    is negative at :math:`t = x` and positive at :math:`t = x + V`, and it increases with slope
    :math:`1 + V\ell'' \ge 1`: the root is unique on the bracket :math:`[x, x + V]`."""
    return Loss("logistic", r"\log(1 + e^{-t})", "margin",
                smooth=sympy.log(1 + sympy.exp(-T)), bracket=lambda x, V: (x, x + V),
                description="logistic loss log(1 + exp(-y yhat))")


@keywords_checked(PartError)
def Hinge() -> Loss:
    r"""The hinge loss of the margin, :math:`\ell(t) = \max(0, 1 - t)` (kink at 1)."""
    return Loss("hinge", r"\max(0, 1 - t)", "margin",
                pieces=(Piece(1 - T, -sympy.oo, 1), Piece(sympy.Integer(0), 1, sympy.oo)),
                description="hinge loss max(0, 1 - y yhat)")


# -- penalties --------------------------------------------------------------------------------
@keywords_checked(PartError)
def Ridge(lam="lam") -> Penalty:
    r"""The ridge penalty :math:`r(w) = \lambda w^2/2` (objective
    :math:`\sum_\mu\ell + \tfrac\lambda2|w|^2`)."""
    la, params = _value("penalty ridge", "lam", lam, "positive",
                        "ridge penalty lambda (objective: sum of losses + lambda |w|^2/2)",
                        r"\lambda")
    return Penalty("ridge", r"\tfrac\lambda2 w^2", (Piece(la * T**2 / 2, -sympy.oo, sympy.oo),),
                   tuple(params), strictly_convex=True, description="ridge")


@keywords_checked(PartError)
def L1(lam="lam") -> Penalty:
    r"""The :math:`\ell_1` penalty :math:`r(w) = \lambda|w|` (objective
    :math:`\sum_\mu\ell + \lambda|w|_1`)."""
    la, params = _value("penalty l1", "lam", lam, "positive",
                        "l1 penalty lambda (objective: sum of losses + lambda |w|_1)", r"\lambda")
    return Penalty("l1", r"\lambda|w|", (Piece(-la * T, -sympy.oo, 0),
                                         Piece(la * T, 0, sympy.oo)), tuple(params),
                   description="l1 (LASSO)")


@keywords_checked(PartError)
def ElasticNet(lam1="lam1", lam2="lam2") -> Penalty:
    r"""The elastic net :math:`r(w) = \lambda_1|w| + \lambda_2w^2/2`."""
    l1, p1 = _value("penalty elastic_net", "lam1", lam1, "positive",
                    "l1 part lambda_1 of the elastic net", r"\lambda_1")
    l2, p2 = _value("penalty elastic_net", "lam2", lam2, "positive",
                    "ridge part lambda_2 of the elastic net", r"\lambda_2")
    return Penalty("elastic_net", r"\lambda_1|w| + \tfrac{\lambda_2}2 w^2",
                   (Piece(-l1 * T + l2 * T**2 / 2, -sympy.oo, 0),
                    Piece(l1 * T + l2 * T**2 / 2, 0, sympy.oo)), tuple(p1 + p2),
                   strictly_convex=True, description="elastic net")


# -- channels ---------------------------------------------------------------------------------
@keywords_checked(PartError)
def Linear(sigma="sigma") -> Channel:
    r"""The linear channel with Gaussian noise, :math:`y = u + \sigma\varepsilon`."""
    s, params = _value("channel linear", "sigma", sigma, "nonnegative",
                       "label-noise standard deviation sigma", r"\sigma")
    return Channel("linear", r"y = u + \sigma\varepsilon", "regression", noise=s,
                   params=tuple(params), description="linear teacher with Gaussian noise")


@keywords_checked(PartError)
def Sign() -> Channel:
    r"""The noiseless sign channel :math:`y = \operatorname{sign}u`."""
    return Channel("sign", r"y = \operatorname{sign} u", "classification", latent=(1, 0),
                   description="sign teacher")


@keywords_checked(PartError)
def Probit(eta="eta") -> Channel:
    r"""The probit (noisy sign) channel
    :math:`y = \operatorname{sign}(\eta u + \sqrt{1-\eta^2}\,\varepsilon)`, :math:`0\le\eta\le1`
    (:math:`\eta = 1`: the sign channel)."""
    e, params = _value("channel probit", "eta", eta, "nonnegative",
                       "teacher-label correlation eta in [0, 1]: y = sign(eta u + sqrt(1 - "
                       "eta^2) noise)", r"\eta", at_most=1)
    return Channel("probit", r"y = \operatorname{sign}(\eta u + \sqrt{1-\eta^2}\,\varepsilon)",
                   "classification", latent=(e, sympy.sqrt(1 - e**2)), params=tuple(params),
                   description="probit (noisy sign) teacher")


@keywords_checked(PartError)
def ReLU(sigma="sigma") -> Channel:
    r"""The ReLU channel with Gaussian noise, :math:`y = \max(0, u) + \sigma\varepsilon`
    (link :math:`c_- = 0`, :math:`c_+ = 1`)."""
    s, params = _value("channel relu", "sigma", sigma, "nonnegative",
                       "label-noise standard deviation sigma", r"\sigma")
    return Channel("relu", r"y = \max(0, u) + \sigma\varepsilon", "regression", noise=s,
                   params=tuple(params), link=(0, 1),
                   description="ReLU teacher with Gaussian noise")


@keywords_checked(PartError)
def AbsoluteValue(sigma="sigma") -> Channel:
    r"""The absolute-value (phase-retrieval-like) channel :math:`y = |u| + \sigma\varepsilon`
    (link :math:`c_- = -1`, :math:`c_+ = 1`)."""
    s, params = _value("channel absolute_value", "sigma", sigma, "nonnegative",
                       "label-noise standard deviation sigma", r"\sigma")
    return Channel("absolute_value", r"y = |u| + \sigma\varepsilon", "regression", noise=s,
                   params=tuple(params), link=(-1, 1),
                   description="absolute-value teacher with Gaussian noise")


# -- priors -----------------------------------------------------------------------------------
@keywords_checked(PartError)
def Gaussian() -> Prior:
    r"""The standard Gaussian prior :math:`N(0, 1)`."""
    return Prior("gaussian", r"N(0, 1)", gaussians=((sympy.Integer(1), sympy.Integer(1)),),
                 description="Gaussian teacher")


@keywords_checked(PartError)
def Rademacher() -> Prior:
    r"""The Rademacher prior: :math:`\pm1` with probability :math:`\tfrac12` each."""
    half = sympy.Rational(1, 2)
    return Prior("rademacher", r"\tfrac12(\delta_{-1} + \delta_1)",
                 points=((half, sympy.Integer(1)), (half, sympy.Integer(-1))),
                 description="Rademacher teacher")


@keywords_checked(PartError)
def GaussBernoulli(eps="eps") -> Prior:
    r"""The sparse Gauss--Bernoulli prior :math:`(1-\varepsilon)\delta_0 + \varepsilon N(0, 1)`."""
    e, params = _value("prior gauss_bernoulli", "eps", eps, "positive",
                       "fraction eps of non-zero teacher entries (at most 1)", r"\varepsilon",
                       at_most=1)
    return Prior("gauss_bernoulli", r"(1-\varepsilon)\delta_0 + \varepsilon N(0, 1)",
                 points=((1 - e, sympy.Integer(0)),), gaussians=((e, sympy.Integer(1)),),
                 params=tuple(params), description="sparse Gauss-Bernoulli teacher")


LOSSES: Mapping = {"square": Square, "absolute": Absolute, "huber": Huber,
                   "logistic": Logistic, "hinge": Hinge}
PENALTIES: Mapping = {"ridge": Ridge, "l1": L1, "elastic_net": ElasticNet}
CHANNELS: Mapping = {"linear": Linear, "sign": Sign, "probit": Probit, "relu": ReLU,
                     "absolute_value": AbsoluteValue}
PRIORS: Mapping = {"gaussian": Gaussian, "rademacher": Rademacher,
                   "gauss_bernoulli": GaussBernoulli}
