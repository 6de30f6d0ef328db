r"""Declaring a model: parameters, their domains, and the mathematics the engine solves.

A model is *declared*, not programmed. A declaration is a :class:`Problem`: a name, a parameter
:class:`Schema`, and one or more square systems of equations (:class:`System`) -- written as SymPy
expressions -- together with the values to report. Everything else (code generation, the float64
start, the Newton polish at the working precision, verification, the result and its status) is done
by the engine, :mod:`replica.numerics.driver`, identically for every problem.

This module imports neither SymPy nor NumPy: the command line builds its parsers from the schemas
without loading a model.

Parameters
----------
A :class:`Parameter` has a name (``alpha_test``, shown as the option ``--alpha-test``), a help
text, a :data:`DOMAINS` entry that fixes how it is parsed and which values are admissible, a
default, and the paper's notation. Numbers are read exactly (``"0.3"`` and ``"3/10"`` are both
``Fraction(3, 10)``; :func:`replica.params.parse_exact`). Conditions that involve several
parameters are :class:`Rule` records. :meth:`Schema.parse` turns raw input (strings from the
command line, or Python numbers) into a validated :class:`Params`, raising
:class:`~replica.errors.ParameterError` -- exit status 2, one line naming the parameter -- at the
first violation.

Systems
-------
A :class:`System` is a square system :math:`F(x; p) = 0` in unknowns :math:`x`, given either as a
fixed-point map :math:`x = \Phi(x)` (then :math:`F = x - \Phi`) or as residuals. Its expressions may
use

* **aliases**: symbols defined by expressions in the unknowns and parameters (e.g. the spectral
  argument :math:`z = -(\lambda + \hat{\bar q})/\hat q`), evaluated first; the Jacobian follows them
  by the chain rule;
* **spectral inputs**: symbols standing for the values of spectral functions at an alias (e.g. the
  regular part :math:`h(z)` of a Stieltjes transform), with their closed forms;
* **spectral averages** :math:`\frac1d\sum_i\phi(\lambda_i,\mu_i)`
  (:class:`replica.symbolic.SpectralAverage`) over the spectrum the system's ``spectrum`` callable
  returns for the parameters.

Its ``report`` lists the reported values as expressions (later entries may use earlier names as
symbols), and ``start`` says how the engine finds a starting point: :class:`ScalarRoot` records
(monotone scalar equations, solved by bracketed Newton in float64 or mpmath, possibly nested) and
then initial values of the unknowns.
"""

from __future__ import annotations

import dataclasses
import math
from fractions import Fraction
from typing import Any, Callable, Mapping, Sequence

from .errors import ParameterError, did_you_mean
from .params import INF, compact_str, exact_str, parse_exact

REQUIRED = object()
"""Default of a parameter that must be given."""


@dataclasses.dataclass(frozen=True)
class SameAs:
    """Default: the value of another parameter (e.g. ``alpha_test`` defaults to ``alpha``)."""

    name: str


# ---------------------------------------------------------------------------------------------
# Domains
# ---------------------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class Domain:
    """Admissible values of a numeric parameter: an interval with open or closed ends, possibly
    ``+inf`` (``allow_inf``), possibly integers only. ``describe`` is the phrase used in the
    exit-2 message (``"must be positive"``)."""

    lower: Fraction | None = None
    upper: Fraction | None = None
    lower_open: bool = True
    upper_open: bool = False
    allow_inf: bool = False
    integer: bool = False
    describe: str = ""

    def check(self, value, option: str):
        if value == INF:
            if self.allow_inf:
                return value
            raise ParameterError(option, "must be finite")
        if self.integer and Fraction(value).denominator != 1:
            raise ParameterError(option, f"must be an integer, got {compact_str(value)}")
        low_bad = self.lower is not None and (value <= self.lower if self.lower_open
                                              else value < self.lower)
        high_bad = self.upper is not None and (value >= self.upper if self.upper_open
                                               else value > self.upper)
        if low_bad or high_bad:
            raise ParameterError(option, f"{self.describe}, got {compact_str(value)}")
        return value


DOMAINS = {
    "positive": Domain(lower=Fraction(0), describe="must be positive"),
    "positive_or_inf": Domain(lower=Fraction(0), allow_inf=True, describe="must be positive"),
    "nonnegative": Domain(lower=Fraction(0), lower_open=False, describe="must be non-negative"),
    "unit_interval": Domain(lower=Fraction(0), upper=Fraction(1),
                            describe="must lie in (0, 1]"),
    "positive_integer": Domain(lower=Fraction(0), integer=True,
                               describe="must be a positive integer"),
    "real": Domain(describe="must be a real number"),
}
"""The named domains a :class:`Parameter` may declare, besides ``"covariance"`` (a SPEC)."""


@dataclasses.dataclass(frozen=True)
class SpecDomain:
    """The domain of a parameter written as a SPEC string (``kind:VALUE``) that stands for one
    exact number of the equations: ``parse(raw, option)`` returns a ``Fraction`` that also carries
    its SPEC string as ``.spec`` (echoed in results) or raises
    :class:`~replica.errors.ParameterError`. Such a parameter is not a continuous parameter of
    grids and scans (like a covariance SPEC), but its value enters the generated code as a
    number."""

    parse: Callable[[Any, str], Any]
    describe: str = ""
    integer: bool = False
    allow_inf: bool = False


# ---------------------------------------------------------------------------------------------
# Parameters and rules
# ---------------------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class Parameter:
    """One parameter of a model.

    ``domain`` is a key of :data:`DOMAINS` (or a :class:`Domain`), or ``"covariance"`` for a
    covariance SPEC of size ``size_from`` (the name of the integer parameter giving ``d``).
    ``domain_message`` replaces the domain's phrase in the exit-2 message (e.g. to say what the
    parameter means). ``notation`` is the paper's symbol (LaTeX).
    """

    name: str
    help: str
    domain: Any = "positive"
    default: Any = REQUIRED
    notation: str = ""
    domain_message: str = ""
    size_from: str = "d"

    @property
    def option(self) -> str:
        """The command-line option, ``--alpha-test`` for ``alpha_test``."""
        return "--" + self.name.replace("_", "-")

    @property
    def required(self) -> bool:
        return self.default is REQUIRED

    @property
    def is_covariance(self) -> bool:
        return self.domain == "covariance"

    @property
    def is_spec(self) -> bool:
        """A SPEC that stands for a number (:class:`SpecDomain`)."""
        return isinstance(self.domain, SpecDomain)

    @property
    def is_continuous(self) -> bool:
        """A real number that grids, scans and series may vary (not a covariance, a SPEC or an
        integer)."""
        return not (self.is_covariance or self.is_spec or self.resolved_domain().integer)

    def resolved_domain(self) -> Domain:
        """The :class:`Domain` the value must lie in (the named one, with the declared message)."""
        dom = DOMAINS[self.domain] if isinstance(self.domain, str) else self.domain
        if self.domain_message:
            dom = dataclasses.replace(dom, describe=self.domain_message)
        return dom

    def parse(self, raw, known: Mapping[str, Any]):
        """The exact value of ``raw`` (validated); ``known`` holds the parameters parsed before."""
        if self.is_covariance:
            spectra = _spectra()
            if isinstance(raw, spectra.Covariance):
                return raw
            d = known.get(self.size_from)
            if type(raw).__name__ == "ndarray":  # a matrix or its eigenvalues; d from its size
                return spectra.covariance_from_array(raw, None if d is None else int(d),
                                                     self.name)
            if d is None:
                raise ParameterError(f"--{self.size_from}", f"is required for {self.option}")
            return spectra.parse_spec(raw, int(d), self.option)
        if self.is_spec:
            return self.domain.parse(raw, self.option)
        dom = self.resolved_domain()
        if dom.integer:
            return int(dom.check(_parse_integer(raw, self.option), self.option))
        return dom.check(parse_exact(raw, self.option, allow_inf=dom.allow_inf), self.option)


def _spectra():
    """:mod:`replica.spectra`, imported on first use (a schema is read without NumPy) and kept:
    a float64 call parses its covariances on every call."""
    global _SPECTRA
    if _SPECTRA is None:
        from . import spectra

        _SPECTRA = spectra
    return _SPECTRA


_SPECTRA = None


def _parse_integer(raw, option):
    if isinstance(raw, bool):
        raise ParameterError(option, f"must be a positive integer, got {raw!r}")
    try:
        import numbers

        if isinstance(raw, numbers.Integral):
            return Fraction(int(raw))
    except ImportError:  # pragma: no cover
        pass
    return parse_exact(raw, option)


@dataclasses.dataclass(frozen=True)
class Rule:
    """A condition on several parameters: when ``refuse(p)`` is true, the input is refused with
    ``message``, naming ``parameter``. ``refuse`` receives the :class:`Params` (``p.tau``, ...),
    with ``inf`` as ``math.inf`` so that comparisons work."""

    parameter: str
    refuse: Callable[[Any], bool]
    message: str


class Params(Mapping):
    """Validated exact parameter values (``Fraction``, ``"inf"``, ``int`` or a covariance), in the
    order of the schema; attribute access (``p.alpha``) and mapping access (``p["alpha"]``)."""

    def __init__(self, schema: "Schema", values: dict):
        self._schema = schema
        self._values = dict(values)

    def __getitem__(self, name):
        return self._values[name]

    def __iter__(self):
        return iter(self._values)

    def __len__(self):
        return len(self._values)

    def __getattr__(self, name):
        try:
            return self.__dict__["_values"][name]
        except KeyError:
            raise AttributeError(name) from None

    def __hash__(self):
        return hash(tuple(sorted((k, self._key(v)) for k, v in self._values.items())))

    def __eq__(self, other):
        return isinstance(other, Params) and self.echo() == other.echo()

    @staticmethod
    def _key(v):
        return getattr(v, "spec", v)

    def is_infinite(self, name: str) -> bool:
        return self._values[name] == INF

    def comparable(self) -> "_Comparable":
        """The values with ``inf`` as ``math.inf`` (for :class:`Rule` and variant selectors)."""
        return _Comparable({k: (math.inf if v == INF else v) for k, v in self._values.items()})

    def echo(self) -> dict:
        """Exact strings for the JSON ``params`` echo: ``"3/10"``, ``"inf"``, a SPEC, ``"120"``."""
        out = {}
        for name, v in self._values.items():
            if hasattr(v, "spec"):
                out[name] = v.spec
            elif isinstance(v, int) and not isinstance(v, bool):
                out[name] = str(v)
            else:
                out[name] = exact_str(v)
        return out

    def replace(self, **changes) -> "Params":
        """These parameters with some values changed (validated again)."""
        raw = dict(self._values)
        raw.update(changes)
        return self._schema.parse(raw)

    def __repr__(self):
        return f"Params({self.echo()})"


class _Comparable:
    def __init__(self, values):
        self.__dict__.update(values)


class Schema:
    """The parameters of a model and the rules between them."""

    def __init__(self, parameters: Sequence[Parameter], rules: Sequence[Rule] = ()):
        self.parameters = tuple(parameters)
        self.rules = tuple(rules)
        names = [p.name for p in self.parameters]
        if len(set(names)) != len(names):
            raise ValueError("a parameter name appears twice in the schema")
        self._by_name = {p.name: p for p in self.parameters}

    def __getitem__(self, name) -> Parameter:
        return self._by_name[name]

    def __contains__(self, name) -> bool:
        return name in self._by_name

    @property
    def names(self) -> tuple:
        return tuple(p.name for p in self.parameters)

    def parse(self, raw: Mapping[str, Any]) -> Params:
        """Validate ``raw`` (``{name: value}``; ``None`` or a missing entry takes the default).

        Raises :class:`~replica.errors.ParameterError` for an unknown name, a missing required
        parameter, a malformed value, a value outside its domain, or a violated rule."""
        unknown = [k for k in raw if k not in self._by_name]
        if unknown:
            raise ParameterError(unknown[0], f"unknown parameter"
                                             f"{did_you_mean(unknown[0], self.names)} (this "
                                             f"model has {', '.join(self.names)})")
        values: dict = {}
        raw = dict(raw)
        for p in self.parameters:  # a covariance given as an object or array carries its size
            if p.is_covariance and type(raw.get(p.name)).__name__ == "ndarray":
                from .spectra import covariance_from_array

                d = raw.get(p.size_from)
                raw[p.name] = covariance_from_array(
                    raw[p.name], None if d is None else int(parse_exact(d, p.size_from)), p.name)
            if p.is_covariance and hasattr(raw.get(p.name), "d") and raw.get(p.size_from) is None:
                raw[p.size_from] = raw[p.name].d
        for p in self.parameters:
            v = raw.get(p.name)
            if v is None:
                if p.required:
                    raise ParameterError(p.option, "is required")
                if isinstance(p.default, SameAs):
                    values[p.name] = values[p.default.name]
                    continue
                v = p.default
            values[p.name] = p.parse(v, values)
        params = Params(self, values)
        cmp = params.comparable()
        for rule in self.rules:
            if rule.refuse(cmp):
                raise ParameterError("--" + rule.parameter.replace("_", "-"), rule.message)
        return params

    def add_arguments(self, parser) -> None:
        """Declare every parameter as an option of an ``argparse`` parser (values stay strings:
        :meth:`parse` reads them exactly)."""
        for p in self.parameters:
            default = ""
            if isinstance(p.default, SameAs):
                default = f" (default: --{p.default.name.replace('_', '-')})"
            elif not p.required:
                default = f" (default {p.default})"
            parser.add_argument(p.option, dest=p.name, required=p.required, default=None,
                                metavar=p.name.upper(), help=p.help + default)

    def raw_from_namespace(self, args) -> dict:
        """``{name: string}`` from an ``argparse`` namespace filled by :meth:`add_arguments`."""
        return {p.name: getattr(args, p.name) for p in self.parameters}


# ---------------------------------------------------------------------------------------------
# The mathematics: systems, starts, problems
# ---------------------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class ScalarRoot:
    r"""A monotone scalar equation :math:`h(u) = 0` on an open bracket :math:`(lo, hi)`, solved by
    bracketed Newton (each evaluation shrinks the bracket, so the unique root cannot be missed).

    ``equation``, ``lower``, ``upper`` (``None`` for :math:`+\infty`) and ``initial`` are SymPy
    expressions in the parameters (and the unknowns of enclosing roots); ``increasing`` is the
    direction of monotonicity. ``when`` (an expression that is positive where the root is needed)
    and ``otherwise`` give the value where it is not (e.g. the effective ridge is 0 at
    :math:`\lambda = 0`). ``inner`` is a root solved at every evaluation of this one (nested
    roots); the derivative of ``equation`` then follows the inner root by implicit
    differentiation.
    """

    unknown: Any
    equation: Any
    lower: Any
    upper: Any
    initial: Any
    increasing: bool = True
    when: Any = None
    otherwise: Any = 0
    inner: "ScalarRoot | None" = None
    upper_slack: Any = 0
    what: str = "root"


@dataclasses.dataclass(frozen=True)
class Start:
    """How the engine finds a starting point: the ``roots`` (solved in order, each possibly with
    nested inner roots), then ``values``: the unknowns as expressions in the parameters and the
    roots' unknowns. ``aliases`` gives the system's aliases as functions of the parameters and the
    roots' unknowns in this context (so that spectral functions of an alias can appear in the
    roots' equations). ``exact`` says that the values already solve the system (so float64 needs
    no iteration)."""

    roots: tuple = ()
    values: Any = dataclasses.field(default_factory=dict)
    aliases: Any = dataclasses.field(default_factory=dict)
    exact: bool = False


@dataclasses.dataclass
class System:
    r"""A square system in ``unknowns``, with everything the engine needs to evaluate it.

    Exactly one of ``fixed_point`` (``{x_i: Phi_i}``: the system :math:`x = \Phi(x)`) and
    ``residuals`` (a list, :math:`F(x) = 0`) is given. ``parameters`` lists the SymPy symbols of the
    numeric parameters (the argument order of the generated code) and ``symbols`` maps schema names
    to them. ``aliases``: ``[(symbol, expression)]`` evaluated in order before anything else;
    ``spectral_inputs``: ``[(symbol, closed form)]`` evaluated next (functions of the aliases and
    parameters); ``evaluation_form`` rewrites an expression with abstract spectral functions into
    one in the spectral inputs (applied after differentiation; ``jacobian_form``, if given, is used
    for the Jacobian's entries instead, e.g. to skip a costly simplification). ``spectrum(params)`` returns
    ``(train, test)`` covariances for spectral averages. ``report``: ``[(name, expression)]`` or
    ``[(name, expression, symbol)]``; a later expression may use an earlier value through its
    ``symbol`` (default ``Symbol(name)``).
    ``admissible``: ``[(expression, description)]`` that must be positive at a solution.
    ``positive_unknowns``: the unknowns stay positive during the float64 iteration.
    """

    unknowns: tuple
    parameters: tuple
    symbols: Mapping
    report: Sequence
    start: Start
    fixed_point: Mapping | None = None
    residuals: Sequence | None = None
    aliases: Sequence = ()
    spectral_inputs: Sequence = ()
    evaluation_form: Callable | None = None
    jacobian_form: Callable | None = None
    spectrum: Callable | None = None
    admissible: Sequence = ()
    positive_unknowns: bool = False
    residual_scale: Sequence | None = None

    def __post_init__(self):
        if (self.fixed_point is None) == (self.residuals is None):
            raise ValueError("a System has either fixed_point or residuals")


#: The name under which a declared replicon is reported (group ``stability``).
REPLICON = "replicon"


@dataclasses.dataclass(frozen=True)
class Stability:
    r"""The stability of a model's replica-symmetric saddle point, declared with the model
    (``SaddlePointModel(..., stability=Stability(...))``, or ``Problem(..., stability=...)``).

    * ``replicon``: an expression (SymPy) in the unknowns and parameters, the replicon eigenvalue
      (de Almeida--Thouless): the replica-symmetric solution is locally stable where it is
      positive, and the AT line is where it vanishes. A declared model reports it as the value
      ``replicon`` (group ``stability``), so it has digits like every reported value and can be
      located (``replica transition --kind level --level 0 --quantity replicon``) and drawn;
    * ``exact``: when there is no replicon to evaluate, the reason replica symmetry is exact (e.g.
      a strictly convex estimation problem, whose minimiser is unique), stated in words;
    * ``source``: where the replicon comes from (derived from the declaration, or stated with its
      reference).

    One of ``replicon`` and ``exact`` is given (a :class:`~replica.errors.ParameterError`
    naming ``stability`` otherwise). A plain record: this module imports no SymPy, so a
    declaration without SymPy (the built-in models) can state ``exact``."""

    replicon: Any = None
    exact: str = ""
    source: str = ""

    def __post_init__(self):
        if (self.replicon is None) == (not self.exact):
            raise ParameterError("stability", "Stability needs exactly one of replicon= (an "
                                              "expression) and exact= (the reason replica "
                                              "symmetry is exact)")

    def describe(self) -> str:
        """How the stability is obtained, in words: ``replicon (source ...)`` or
        ``exact: <reason>``."""
        if self.replicon is None:
            return f"exact: {self.exact}"
        return "replicon" + (f" ({self.source})" if self.source else "")


@dataclasses.dataclass(frozen=True)
class Note:
    """A caveat attached to results: ``text``, shown when ``when(params)`` is true and, if given,
    ``when_values(values)`` (the reported values by name) too; always when both are None."""

    text: str
    when: Callable | None = None
    when_values: Callable | None = None


@dataclasses.dataclass(frozen=True)
class Direct:
    """A reported value computed directly from the parameters (not from the solution), e.g. a
    similarity measure of two covariance matrices: ``function(params)`` at the working precision
    returns an ``mpf`` or ``None`` (undefined). ``enclose(params)``, if given, returns a ball
    (python-flint ``arb``, at the current ball precision) that contains the exact value, so that a
    certified solve can prove its digits; without it the value is reported as not enclosed."""

    function: Callable
    enclose: Callable | None = None


class Problem:
    """A declared model: its schema, its systems (one per *variant*), and how results are grouped.

    * ``variants``: ``[(name, condition)]``; the first whose ``condition(p)`` is true is used
      (``p`` as in :class:`Rule`; the conditions must also work elementwise on NumPy arrays, so
      write them with ``&``, ``|`` and comparisons).
    * ``systems``: a callable ``variant name -> System``, called lazily (deriving the equations may
      take seconds; generated code is cached on disk, keyed on ``source_files``).
    * ``groups``: ``{group: [report names]}`` or ``{group: {name: [report names]}}`` for nested
      groups (the JSON layout); ``direct``: ``{name: Direct}`` values computed from the parameters.
    * ``notes``: :class:`Note` records.
    * ``source_files``: the files whose contents determine the expressions; given, the generated
      code is cached on disk keyed on their contents (so a problem's name and variants must be
      unique among the problems those files declare); empty, code is generated once per process.
      ``cache_salt``: text that also enters the key (a model file's environment variables).
    * ``saddle_point``: the :class:`~replica.symbolic.saddle.SaddlePoint` the systems were derived
      from, if any (``replica equations`` prints its stationarity conditions); ``symbol_names``:
      LaTeX names of symbols for displays. Either may be given as a zero-argument callable,
      called on first use (so that a declaration need not build SymPy objects to be loaded).
    * ``spectrum``: ``params -> (train, test)``, the covariances whose spectral pairs the
      averages run over; a system that passes this same callable as its own ``spectrum`` can be
      solved from the disk cache without building it (see :mod:`replica.numerics.outline`).
    * ``nonnegative``: names of reported values that cannot be negative at a true solution (the
      mean-squared errors): a float64 point where one is negative is never ``converged``
      (:func:`replica.numerics.driver.solve_float64`).
    * ``stability``: a :class:`Stability` record (the replicon is then the reported value
      ``replicon``), or ``None`` (nothing stated: no stability is reported).
    * ``free_energy``: the name of the reported value that is the free energy at the saddle
      point (``None``: the problem reports none), and ``extremum``: ``"min"`` when, of several
      solutions at the same parameters, the equilibrium one has the smallest free energy (a free
      energy :math:`f = -\\log Z/(\\beta N)`), ``"max"`` when the largest (a free entropy
      :math:`\\Phi = \\log Z/N`, or a log-volume).
    * ``unique_fixed_point``: empty, or why the system has at most one fixed point in the
      domain the float64 iteration keeps to (positive unknowns, the ``admissible`` conditions)
      at every valid parameter point -- a stated property with its reason (e.g. the unique
      minimiser of a strictly convex objective). Where it is given, a float64 grid of at least
      :data:`~replica.numerics.newton.CONTINUATION_MIN` points starts most of its points from
      their solved neighbours instead of the declared start
      (:func:`~replica.numerics.newton.iterate_grid_continued`); where it is empty (a model with
      several fixed points, the Rademacher perceptron's branches) every point is the declared
      start's fixed point.
    """

    def __init__(self, name: str, schema: Schema, *, title: str, variants: Sequence,
                 systems: Callable[[str], System], groups: Mapping, notes: Sequence[Note] = (),
                 direct: Mapping | None = None, source_files: Sequence[str] = (),
                 description: str = "", guard_digits: int = 5, saddle_point: Any = None,
                 symbol_names: Mapping | None = None, spectrum: Callable | None = None,
                 cache_salt: str = "", nonnegative: Sequence[str] = (),
                 stability: Stability | None = None, free_energy: str | None = None,
                 extremum: str = "min", unique_fixed_point: str = ""):
        self.name = name
        self.schema = schema
        self.title = title
        self.description = description
        self.variants = tuple(variants)
        self._systems = systems
        self._cache: dict = {}
        self.groups = dict(groups)
        self.notes = tuple(notes)
        self.direct = dict(direct or {})
        self.source_files = tuple(source_files)
        self.cache_salt = cache_salt
        self.guard_digits = guard_digits
        self._saddle_point = saddle_point
        self._symbol_names = symbol_names
        self.spectrum = spectrum
        self.model = None
        self.nonnegative = tuple(nonnegative)
        if stability is not None and not isinstance(stability, Stability):
            raise ParameterError("stability", "takes a Stability record")
        self.stability = stability
        if extremum not in ("min", "max"):
            raise ParameterError("extremum", f"must be 'min' or 'max', got {extremum!r}")
        self.free_energy = free_energy
        self.extremum = extremum
        if not isinstance(unique_fixed_point, str):
            raise ParameterError("unique_fixed_point", "is a text (why the fixed point is unique) "
                                 f"or empty, got {unique_fixed_point!r}")
        self.unique_fixed_point = unique_fixed_point

    def __repr__(self):
        return f"Problem({self.name!r})"

    @property
    def saddle_point(self):
        if callable(self._saddle_point):
            self._saddle_point = self._saddle_point()
        return self._saddle_point

    @saddle_point.setter
    def saddle_point(self, value):
        self._saddle_point = value

    @property
    def symbol_names(self) -> dict:
        if callable(self._symbol_names):
            self._symbol_names = self._symbol_names()
        self._symbol_names = dict(self._symbol_names or {})
        return self._symbol_names

    @symbol_names.setter
    def symbol_names(self, value):
        self._symbol_names = value

    def parse(self, **raw) -> Params:
        """Validated parameters (see :meth:`Schema.parse`)."""
        return self.schema.parse(raw)

    def variant_of(self, params: Params) -> str:
        cmp = params.comparable()
        for name, cond in self.variants:
            if cond is None or bool(cond(cmp)):
                return name
        raise ParameterError(self.name, "no variant of the model applies to these parameters")

    def system(self, variant: str) -> System:
        """The :class:`System` of ``variant`` (built once)."""
        if variant not in self._cache:
            self._cache[variant] = self._systems(variant)
        return self._cache[variant]

    def report_names(self) -> list:
        """Every reported name, in the order of ``groups``."""
        out = []
        for members in self.groups.values():
            if isinstance(members, Mapping):
                for sub in members.values():
                    out += [m for m in sub if m not in out]
            else:
                out += [m for m in members if m not in out]
        return out

    def notes_for(self, params: Params, values: Mapping | None = None) -> list:
        cmp = params.comparable()
        return [n.text for n in self.notes
                if (n.when is None or n.when(cmp))
                and (n.when_values is None or (values is not None and n.when_values(values)))]
