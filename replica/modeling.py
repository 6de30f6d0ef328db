r"""Your own model: declare a replica free energy (or fixed-point equations) and get a solvable
:class:`~replica.problem.Problem`.

A model is declared with SymPy in a few lines::

    import sympy
    from replica.modeling import Parameter, SaddlePointModel, avg, LAMBDA_I

    alpha, lam = sympy.symbols("alpha lam", positive=True)
    m, q, V, mhat, qhat, Vhat = sympy.symbols("m q V mhat qhat Vhat", real=True)
    c = LAMBDA_I                                   # an eigenvalue of the covariance C
    f = (-m * mhat + (q * Vhat - V * qhat) / 2
         + avg((mhat**2 * c**2 + qhat * c) / (lam + Vhat * c)) / 2
         - alpha * (1 - 2 * m + q) / (2 * (1 + V)))
    MODEL = SaddlePointModel(
        "my_model", free_energy=f, pairs=[(m, mhat), (q, qhat), (V, Vhat)],
        parameters=[Parameter("alpha", "samples per dimension"),
                    Parameter("lam", "ridge"), ...],
        observables={"errors": {"test": 1 - 2 * m + q}})

What the engine does with it:

* :class:`SaddlePointModel` differentiates the free energy with respect to every order parameter
  and conjugate (:class:`~replica.symbolic.saddle.SaddlePoint`: chain rule through aliases,
  abstract spectral functions differentiated to the next member of their family, averages
  differentiated inside), solves each stationarity condition for the variable paired with it,
  and -- when the conjugate half :math:`\hat\theta = H(\theta)` does not involve the conjugates --
  solves the closed map :math:`\theta = \Psi(H(\theta))` in the order parameters alone (otherwise
  the full fixed point in all unknowns);
* :class:`FixedPointModel` takes fixed-point equations :math:`x = \Phi(x)` (or residuals
  :math:`F(x) = 0`) directly;
* both produce a :class:`~replica.problem.Problem` (``model.problem``) that every command and
  :func:`replica.solve` accept: a float64 start, a Newton polish at the working precision with the
  exact Jacobian, verification by a re-solve at higher precision, a result with its status.

Gaussian integrals: :func:`gauss` (``gauss(f, z)`` :math:`= \int\mathcal{D}z\, f(z)` for the
standard normal measure; :mod:`replica.symbolic.gaussian`) holds an integrand with kinks
(``Heaviside``, ``Max``, ``Abs``, ``Piecewise`` of arguments linear in ``z``) and is
differentiated under the integral sign; the engine evaluates it by quadrature at any precision
and in ball arithmetic for certified solves (``examples/perceptron_capacity.py``). A
two-dimensional integral is written by nesting, the inner integrand depending on the outer
variable: ``gauss(F(xi, gauss(g(xi, z), z)), xi)`` or ``gauss(gauss(h(xi, z), z), xi)``;
it is evaluated at any precision (the inner integrals' errors in the outer estimate) and in
float64 (``not-verified``), not in ball arithmetic (``--certify`` is refused;
``examples/glm_bayes_relu_noisy.py``). :func:`implicit_root` declares a function defined by an equation (a root on a bracket, e.g. the
proximal map of a loss without a closed form; :mod:`replica.symbolic.implicit`), usable inside
such integrands and differentiated by the implicit function theorem
(``examples/logistic_regression.py``); it has no ball-arithmetic evaluation.

Spectral ingredients:

* :func:`avg` (``SpectralAverage``) of an expression in :data:`LAMBDA_I` (an eigenvalue of the
  covariance) and :data:`MU_I` (the test covariance's diagonal in that eigenbasis): evaluated over
  the eigenvalues of the covariance parameter(s) named by ``spectrum=`` (a SPEC such as
  ``identity`` or ``powerlaw:1``; see :mod:`replica.spectra`);
* an abstract spectral function ``g = spectral_family("g")`` used as ``g[0](z)`` with either a
  closed form (``spectral={g: lambda z: ...}``, a SymPy expression in ``z`` and the parameters) or
  :class:`StieltjesOf` (``g(z) = <1/(lambda_i - z)>`` over the covariance's eigenvalues).

Declarations are checked when they are made: a symbol that is neither paired, a parameter nor an
alias, a stationarity condition that is not linear in its paired variable, an observable that
refers to an unknown symbol, a default outside its domain -- each is a :class:`ModelError`
(exit status 2 on the command line, one line naming the problem).
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Iterable, Mapping, Sequence

import sympy

from .errors import ParameterError, ReplicaError, keywords_checked
from .problem import (DOMAINS, REQUIRED, Domain, Note, Parameter, Problem, Rule, SameAs,
                      Schema, Stability, Start, System, REPLICON)
from .symbolic.saddle import (Alias, SaddlePoint, SaddlePointError, SpectralFamily,
                              SpectralFunction, spectral_family)
from .symbolic.gaussian import GaussianIntegral, gauss
from .symbolic.implicit import ImplicitRoot, implicit_root
from .symbolic.spectral import LAMBDA_I, MU_I, SpectralAverage, avg

__all__ = ["SaddlePointModel", "FixedPointModel", "ModelError", "load_model_file", "as_problem",
           "load_model_namespace", "StieltjesOf", "Parameter", "Rule", "SameAs", "REQUIRED",
           "DOMAINS", "Domain", "Note", "Alias", "avg", "gauss", "GaussianIntegral",
           "implicit_root", "ImplicitRoot",
           "LAMBDA_I", "MU_I", "spectral_family", "Stability"]


class ModelError(ReplicaError, ValueError):
    """A model declaration that cannot be used (exit status 2): the message names the problem."""

    exit_status = 2


@dataclasses.dataclass(frozen=True)
class StieltjesOf:
    r"""The abstract function :math:`g(z) = \frac1d\sum_i \frac{1}{\lambda_i - z}` over the
    eigenvalues of the covariance parameter ``covariance`` (its derivatives
    :math:`g^{(k)}(z) = \langle k!/(\lambda_i - z)^{k+1}\rangle` follow)."""

    covariance: str = ""

    def member(self, k: int, arg):
        return avg(sympy.factorial(k) / (LAMBDA_I - arg) ** (k + 1))


_SUMMATION = {LAMBDA_I, MU_I}


def _free_symbols(expr) -> set:
    """Free symbols of ``expr`` outside the averages' summation variables."""
    return set(sympy.sympify(expr).free_symbols) - _SUMMATION


def _names(symbols) -> str:
    return ", ".join(sorted(str(s) for s in symbols))


class _Declared:
    """What both kinds of model share: parameters, spectra, observables, the Problem."""

    variant = "main"

    def __init__(self, name: str, *, parameters: Sequence[Parameter], observables=None,
                 start: Mapping | None = None, aliases: Iterable = (), spectral=None,
                 spectrum=None, rules: Sequence[Rule] = (), notes: Sequence = (),
                 admissible: Sequence = (), title: str = "", description: str = "",
                 symbol_names: Mapping | None = None, positive_unknowns: bool = False,
                 guard_digits: int = 5, symbols: Mapping | None = None,
                 stability: Stability | None = None, unique_fixed_point: str = ""):
        if not isinstance(name, str) or not name.replace("_", "").replace("-", "").isalnum():
            raise ModelError(f"model name {name!r} must be a non-empty word "
                             "(letters, digits, '_' or '-')")
        self.name = name
        self.title = title or name
        if stability is not None and not isinstance(stability, Stability):
            raise ModelError(f"model {name!r}: stability= takes a Stability record")
        self.stability = stability
        if not isinstance(unique_fixed_point, str):
            raise ModelError(f"model {name!r}: unique_fixed_point= is a text saying why the "
                             "fixed point is unique (or empty)")
        self.unique_fixed_point = unique_fixed_point.strip()
        self.description = description
        for p in parameters:
            if not isinstance(p, Parameter):
                raise ModelError(f"model {name!r}: parameters must be Parameter records, got "
                                 f"{p!r}")
        try:
            self.schema = Schema(parameters, rules)
        except ValueError as exc:
            raise ModelError(f"model {name!r}: {exc}") from None
        self.aliases = tuple(a if isinstance(a, Alias) else Alias(*a) for a in aliases)
        self.spectral = dict(spectral or {})
        for fam, impl in self.spectral.items():
            if not isinstance(fam, SpectralFamily):
                raise ModelError(f"model {name!r}: the keys of spectral= are spectral families "
                                 f"(spectral_family('g')), got {fam!r}")
            if not (callable(impl) or isinstance(impl, StieltjesOf)):
                raise ModelError(f"model {name!r}: spectral[{fam.name}] must be a closed form "
                                 "(a function of z) or StieltjesOf(...)")
        self.observables = self._flatten_observables(observables or {})
        if stability is not None and stability.replicon is not None:
            self._add_reported("stability", REPLICON, stability.replicon, "the replicon")
        self.start_values = dict(start or {})
        self.rules = tuple(rules)
        self.notes = tuple(n if isinstance(n, Note) else Note(str(n)) for n in notes)
        self.admissible = tuple(admissible)
        self.symbol_names = dict(symbol_names or {})
        self.positive_unknowns = positive_unknowns
        self.guard_digits = guard_digits
        self.explicit_symbols = dict(symbols or {})
        for k, v in self.explicit_symbols.items():
            if k not in self.schema or not isinstance(v, sympy.Symbol):
                raise ModelError(f"model {name!r}: symbols= maps parameter names to SymPy "
                                 f"symbols; {k!r} -> {v!r} is not one")
        self._spectrum_names = self._spectrum_parameters(spectrum)
        self._check_defaults()

    # -- declaration checks ---------------------------------------------------------------------
    def _add_reported(self, group: str, name: str, expr, what: str):
        """Report ``expr`` as the value ``name`` in ``group`` (created after the declared
        groups), unless the model already reports the same expression under that name; a
        different expression under that name is a :class:`ModelError`."""
        try:
            expr = sympy.sympify(expr)
        except (sympy.SympifyError, TypeError):
            raise ModelError(f"model {self.name!r}: {what} is not an expression: "
                             f"{expr!r}") from None
        for members in self.observables.values():
            if name in members:
                if members[name] != expr:
                    raise ModelError(f"model {self.name!r}: the observable {name!r} is not "
                                     f"{what}; {what} is reported under that name (rename the "
                                     "observable)")
                return
        self.observables.setdefault(group, {})[name] = expr

    def _flatten_observables(self, observables) -> dict:
        """``{group: {name: expr}}`` from a flat ``{name: expr}`` (group ``observables``) or
        nested groups."""
        if not isinstance(observables, Mapping):
            raise ModelError(f"model {self.name!r}: observables must be a dict "
                             "{name: expression} or {group: {name: expression}}")
        if all(isinstance(v, Mapping) for v in observables.values()) and observables:
            groups = {str(g): dict(v) for g, v in observables.items()}
        elif any(isinstance(v, Mapping) for v in observables.values()):
            raise ModelError(f"model {self.name!r}: observables mix groups and expressions")
        else:
            groups = {"observables": dict(observables)} if observables else {}
        for g, members in groups.items():
            for k, e in members.items():
                if not str(k).isidentifier():
                    raise ModelError(f"model {self.name!r}: observable name {k!r} is not an "
                                     "identifier")
                try:
                    members[k] = sympy.sympify(e)
                except (sympy.SympifyError, TypeError):
                    raise ModelError(f"model {self.name!r}: observable {k!r} is not an "
                                     f"expression: {e!r}") from None
        return groups

    def _spectrum_parameters(self, spectrum):
        covs = [p.name for p in self.schema.parameters if p.is_covariance]
        if spectrum is None:
            names = covs[:2]
        elif isinstance(spectrum, str):
            names = [spectrum]
        else:
            names = list(spectrum)
        for n in names:
            if n not in covs:
                raise ModelError(f"model {self.name!r}: spectrum parameter {n!r} is not a "
                                 "declared covariance parameter (domain='covariance')")
        if len(names) > 2:
            raise ModelError(f"model {self.name!r}: at most two covariance parameters (train, "
                             "test) define the spectrum")
        return tuple(names)

    def _check_defaults(self):
        for p in self.schema.parameters:
            if p.required or isinstance(p.default, SameAs) or p.is_covariance:
                continue
            try:
                p.parse(p.default, {})
            except ParameterError as exc:
                raise ModelError(f"model {self.name!r}: the default of parameter {p.name!r} is "
                                 f"not admissible ({exc})") from None

    def _parameter_symbols(self, exprs) -> dict:
        """Schema name -> the SymPy symbol of that name in the model's expressions."""
        found: dict = {}
        for e in exprs:
            for s in _free_symbols(e):
                found.setdefault(s.name, set()).add(s)
        out = {}
        size_names = {p.size_from for p in self.schema.parameters if p.is_covariance}
        for p in self.schema.parameters:
            if p.is_covariance:
                continue
            if p.name in self.explicit_symbols:
                out[p.name] = self.explicit_symbols[p.name]
                continue
            syms = found.get(p.name, set())
            if len(syms) > 1:
                raise ModelError(f"model {self.name!r}: parameter {p.name!r} appears as "
                                 f"{len(syms)} different symbols (same name, different "
                                 "assumptions); use one symbol")
            if syms:
                out[p.name] = syms.pop()
            elif p.name not in size_names:
                raise ModelError(f"model {self.name!r}: parameter {p.name!r} appears in no "
                                 "equation or observable")
        return out

    def _uses_averages(self, exprs) -> bool:
        return any(sympy.sympify(e).atoms(SpectralAverage) for e in exprs) or any(
            isinstance(v, StieltjesOf) for v in self.spectral.values())

    def _check_observables(self, allowed: set):
        """Every observable refers only to ``allowed`` symbols and earlier observables (by name,
        whatever the symbol's assumptions: they are rewritten to ``Symbol(name)``)."""
        known = set(allowed)
        earlier: set = set()
        for members in self.observables.values():
            for k, e in members.items():
                rename = {s: sympy.Symbol(s.name) for s in _free_symbols(e)
                          if s not in known and s.name in earlier}
                e = members[k] = e.xreplace(rename)
                bad = _free_symbols(e) - known - {sympy.Symbol(n) for n in earlier}
                if bad:
                    raise ModelError(f"model {self.name!r}: observable {k!r} refers to unknown "
                                     f"symbol(s) {_names(bad)}")
                earlier.add(k)

    # -- evaluation form ------------------------------------------------------------------------
    def evaluation_form(self, expr):
        """``expr`` with every abstract spectral function replaced by its declared closed form
        (derivatives of the closed form for the higher members) or its spectral average."""
        expr = sympy.sympify(expr)
        for fam, impl in self.spectral.items():
            for cls in fam.members_in(expr):
                k = cls._order
                if isinstance(impl, StieltjesOf):
                    repl = functools.partial(lambda a, k: impl.member(k, a), k=k)
                else:
                    w = sympy.Dummy("w")
                    closed = sympy.diff(sympy.sympify(impl(w)), w, k)
                    repl = functools.partial(lambda a, c, w: c.xreplace({w: a}), c=closed, w=w)
                expr = expr.replace(lambda e, c=cls: isinstance(e, c),
                                    lambda e, r=repl: r(e.args[0]))
        from .symbolic.walk import distinct_atoms

        left = distinct_atoms(expr, SpectralFunction)
        if left:
            raise ModelError(f"model {self.name!r}: spectral function "
                             f"{_names(type(a).__name__ for a in left)} has no evaluator "
                             "(declare it in spectral=)")
        return expr

    def _spectrum(self, params):
        names = self._spectrum_names
        if not names:
            return None
        train = getattr(params, names[0])
        test = getattr(params, names[-1])
        return train, test

    # -- the problem ----------------------------------------------------------------------------
    def _problem(self, unknowns, reported_unknowns: dict, system_builder) -> Problem:
        groups = {"order_parameters": list(reported_unknowns["order_parameters"])}
        if reported_unknowns.get("conjugates"):
            groups["conjugates"] = list(reported_unknowns["conjugates"])
        for g, members in self.observables.items():
            if g in groups:
                raise ModelError(f"model {self.name!r}: observable group {g!r} clashes with a "
                                 "built-in group")
            groups[g] = list(members)
        names = [n for v in groups.values() for n in v]
        dup = {n for n in names if names.count(n) > 1}
        if dup:
            raise ModelError(f"model {self.name!r}: name(s) {_names(dup)} reported twice")
        return Problem(self.name, self.schema, title=self.title, description=self.description,
                       variants=[(self.variant, None)], systems=lambda v: system_builder(),
                       groups=groups, notes=self.notes, guard_digits=self.guard_digits,
                       stability=self.stability, unique_fixed_point=self.unique_fixed_point)

    def _start(self, unknowns) -> Start:
        extra = set(self.start_values) - set(unknowns)
        if extra:
            raise ModelError(f"model {self.name!r}: start= gives values for {_names(extra)}, "
                             "which are not unknowns of the solved system "
                             f"({_names(unknowns)})")
        values = {u: sympy.sympify(self.start_values.get(u, 1)) for u in unknowns}
        return Start(values=values)

    def solve(self, dps: int = 30, verify: bool = True, **params):
        """Solve at one point (:func:`replica.numerics.driver.solve`)."""
        from .numerics.driver import solve

        return solve(self.problem, dps=dps, verify=verify, **params)


class _DerivationRecord:
    r"""What a :class:`SaddlePointModel` declaration needs from the derivation of its fixed
    point -- whether the conjugate map :math:`\hat\theta = H(\theta)` is free of conjugates
    and aliases (the map then reduces to the order parameters) -- remembered on disk in the code
    cache's folder (:class:`~replica.symbolic.codegen.CodeCache`) under a key of the
    declaration's contents: the ``srepr`` of the free energy, the pairs and the aliases, the
    :func:`~replica.symbolic.implicit.content_digest` of every implicit function in them, every
    source file of the package and the library versions. It is written only after a derivation
    succeeded, so a declaration whose conditions cannot be solved is refused in every process;
    a changed declaration has another key and is derived again. (The derivation, 0.3 s to 1.2 s
    per model, ran at every load; the expressions themselves are built only where code is
    generated.)"""

    def __init__(self, saddle: SaddlePoint):
        import hashlib

        from .symbolic.codegen import CodeCache, cache_key

        exprs = [saddle.free_energy, sympy.Tuple(*(sympy.Tuple(a, b) for a, b in saddle.pairs)),
                 sympy.Tuple(*(sympy.Tuple(a.symbol, a.expression) for a in saddle.aliases))]
        implicit = sorted({type(f).digest for e in exprs for f in e.atoms(ImplicitRoot)})
        eliminate = [sympy.srepr(a.eliminate) for a in saddle.aliases]
        text = "\n".join([sympy.srepr(e) for e in exprs] + eliminate + implicit)
        digest = hashlib.sha256(text.encode()).hexdigest()
        self.cache = CodeCache(cache_key("derivation", [], salt=digest))

    def load(self):
        """``reduced`` as remembered, or ``None``."""
        import json

        path = self.cache.path("fixed-point", ".json")
        try:
            with open(path) as fh:
                value = json.load(fh)["reduced"]
            return value if isinstance(value, bool) else None
        except (OSError, TypeError, ValueError, KeyError):
            return None

    def store(self, reduced: bool) -> None:
        import json

        self.cache.store("fixed-point", json.dumps({"reduced": bool(reduced)}), ".json")


@keywords_checked(ModelError, also=(_Declared,))
class SaddlePointModel(_Declared):
    r"""A model declared by its replica-symmetric free energy :math:`\Phi(\theta, \hat\theta)`.

    ``pairs``: ``[(theta_i, thetahat_i)]`` -- each order parameter with its conjugate;
    :math:`\partial\Phi/\partial\theta_i = 0` is solved for :math:`\hat\theta_i` and
    :math:`\partial\Phi/\partial\hat\theta_i = 0` for :math:`\theta_i`. ``aliases``:
    :class:`~replica.symbolic.saddle.Alias` records (or ``(symbol, expression)`` pairs).
    ``observables``: expressions in the order parameters, conjugates, aliases, parameters and
    earlier observables (by name). ``start``: initial values of the order parameters (default 1)
    for the float64 iteration. ``derivation``: an object with ``steps()`` and ``free_energy()``
    (e.g. :mod:`replica.derivations.gaussian_ridge`) that computes the free energy from the model;
    the appendix then starts there and checks that it equals ``free_energy``. ``stability``: a
    :class:`Stability` record (the replicon, or why replica symmetry is exact); a replicon is
    reported as the value ``replicon`` (group ``stability``), and ``replica solve`` says whether
    the solution is stable. ``unique_fixed_point``: why the equations have at most one solution
    in the admissible domain at every valid parameter point (a stated property with its reason,
    e.g. the unique minimiser of a strictly convex objective), or empty (default: nothing
    stated); where it is given, a float64 grid starts most points from their solved neighbours
    (:class:`~replica.problem.Problem`, ``unique_fixed_point``).

    The free energy's value at the saddle point, :math:`\Phi(\theta^*, \hat\theta^*)`, is
    reported automatically as the value ``free_energy_name`` (default ``free_energy``) in the
    group ``free_energy`` (a declared observable of that name must be the same expression).
    ``extremum``: which of several solutions at the same parameters is the equilibrium one --
    ``"min"`` (default; a free energy :math:`f = -\log Z/(\beta N)`, smallest wins) or
    ``"max"`` (a free entropy or log-volume :math:`\log Z/N`, largest wins); ``replica solve
    --start`` and ``replica transition --kind first-order`` use it. The remaining keywords are
    those of :class:`FixedPointModel`.
    """

    def __init__(self, name: str, *, free_energy, pairs: Sequence, parameters,
                 derivation=None, extremum: str = "min", free_energy_name: str = "free_energy",
                 **kw):
        super().__init__(name, parameters=parameters, **kw)
        if extremum not in ("min", "max"):
            raise ModelError(f"model {name!r}: extremum= is 'min' (a free energy: the "
                             "equilibrium solution has the smallest) or 'max' (a free entropy "
                             f"or log-volume: the largest), got {extremum!r}")
        if not isinstance(free_energy_name, str) or not free_energy_name.isidentifier():
            raise ModelError(f"model {name!r}: free_energy_name= must be an identifier, got "
                             f"{free_energy_name!r}")
        self.extremum = extremum
        self.free_energy_name = free_energy_name
        if derivation is not None and not (callable(getattr(derivation, "steps", None))
                                           and callable(getattr(derivation, "free_energy",
                                                                None))):
            raise ModelError(f"model {name!r}: derivation= needs an object with steps() and "
                             "free_energy() (e.g. a module of replica.derivations)")
        self.derivation = derivation
        try:
            self.free_energy = sympy.sympify(free_energy)
        except (sympy.SympifyError, TypeError):
            raise ModelError(f"model {name!r}: the free energy is not a SymPy expression")
        # the free energy's value at the saddle point is reported like an observable
        self._add_reported("free_energy", free_energy_name, self.free_energy,
                           "the free energy")
        try:
            pairs = [(sympy.sympify(a), sympy.sympify(b)) for a, b in pairs]
        except (TypeError, ValueError):
            raise ModelError(f"model {name!r}: pairs must be (order parameter, conjugate) "
                             "tuples") from None
        for a, b in pairs:
            for s in (a, b):
                if not isinstance(s, sympy.Symbol):
                    raise ModelError(f"model {name!r}: {s} in pairs is not a symbol")
        try:
            self.saddle = SaddlePoint(self.free_energy, pairs, self.aliases, name="f")
        except SaddlePointError as exc:
            raise ModelError(f"model {name!r}: {exc}") from None
        S = self.saddle
        alias_syms = {a.symbol for a in self.aliases}
        all_exprs = [self.free_energy] + [a.expression for a in self.aliases] + [
            e for g in self.observables.values() for e in g.values()]
        self.symbols = self._parameter_symbols(all_exprs)
        params = set(self.symbols.values())
        allowed = set(S.unknowns) | params | alias_syms
        bad = _free_symbols(self.free_energy) - allowed
        if bad:
            raise ModelError(f"model {name!r}: symbol(s) {_names(bad)} in the free energy are "
                             "neither paired (pairs=), parameters nor aliases")
        for a in self.aliases:
            bad = _free_symbols(a.expression) - (set(S.unknowns) | params)
            if bad:
                raise ModelError(f"model {name!r}: alias {a.symbol} refers to unknown symbol(s) "
                                 f"{_names(bad)}")
        self._check_observables(allowed)
        if self.stability is not None and self.stability.replicon is not None:
            bad = _free_symbols(sympy.sympify(self.stability.replicon)) - allowed
            if bad:
                raise ModelError(f"model {name!r}: the replicon refers to unknown symbol(s) "
                                 f"{_names(bad)}")
        self.uses_spectrum = self._uses_averages(all_exprs)
        if self.uses_spectrum and not self._spectrum_names:
            raise ModelError(f"model {name!r}: the free energy has spectral averages but no "
                             "parameter has domain='covariance'")
        # derive now, so that a condition that cannot be solved is reported at declaration --
        # unless this declaration (by its contents) was derived before: then only the outcome
        # the declaration needs (whether the map reduces to the order parameters) is read back
        record = _DerivationRecord(S)
        reduced = record.load()
        if reduced is None:
            try:
                H = S.conjugate_map()
            except SaddlePointError as exc:
                raise ModelError(f"model {name!r}: {exc}") from None
            reduced = not any(rhs.has(*S.conjugates) or rhs.has(*alias_syms)
                              for rhs in H.values())
            record.store(reduced)
        self.reduced = reduced
        self.unknowns = S.variables if self.reduced else S.unknowns
        self.problem = self._problem(self.unknowns, {
            "order_parameters": [str(s) for s in S.variables],
            "conjugates": [str(s) for s in S.conjugates]}, self._system)
        self.problem.saddle_point = S
        self.problem.model = self
        self.problem.symbol_names = self.symbol_names
        self.problem.free_energy = self.free_energy_name
        self.problem.extremum = self.extremum

    @property
    def fixed_point_equations(self) -> dict:
        """``{target: rhs}``: the stationarity conditions solved for the paired unknowns
        (:attr:`replica.symbolic.saddle.SaddlePoint.fixed_point`)."""
        return self.saddle.fixed_point

    @functools.cached_property
    def closed_map(self):
        """``(phi, aliases)``: the closed map in the order parameters (reduced models only)."""
        return self.saddle.reduced_map()

    def _system(self) -> System:
        S = self.saddle
        params = tuple(self.symbols[n] for n in self.schema.names if n in self.symbols)
        if self.reduced:
            phi, al = self.closed_map
            H = S.conjugate_map()
            fixed = {t: phi[t] for t in S.variables}
            aliases = [(a.symbol, al[a.symbol]) for a in self.aliases]
            conj = {t: H[t] for t in S.conjugates}
        else:
            fixed = dict(S.fixed_point)
            aliases = [(a.symbol, a.expression) for a in self.aliases]
            conj = {t: t for t in S.conjugates}
        report = [(str(s), s, s) for s in S.variables]
        report += [(str(t), e, t) for t, e in conj.items()]
        for members in self.observables.values():
            for k, e in members.items():
                report.append((k, e.xreplace(conj) if self.reduced else e, sympy.Symbol(k)))
        return System(unknowns=tuple(self.unknowns), parameters=params, symbols=self.symbols,
                      fixed_point=fixed, aliases=aliases, report=report,
                      start=self._start(self.unknowns), evaluation_form=self.evaluation_form,
                      spectrum=self._spectrum if self.uses_spectrum else None,
                      admissible=[(sympy.sympify(e), str(d)) for e, d in self.admissible],
                      positive_unknowns=self.positive_unknowns)


@keywords_checked(ModelError, also=(_Declared,))
class FixedPointModel(_Declared):
    r"""A model declared by its equations: ``equations={x_i: Phi_i(x)}`` (the system
    :math:`x = \Phi(x)`) or ``residuals=[F_1, ...]`` with ``unknowns=[x_1, ...]``
    (:math:`F(x) = 0`). Other keywords: ``parameters`` (:class:`Parameter` records; each is matched
    by name to the symbol of that name), ``observables``, ``start`` (initial values, default 1),
    ``aliases`` (``(symbol, expression)``: evaluated first), ``spectral`` (closed forms or
    :class:`StieltjesOf` for abstract spectral functions), ``spectrum`` (the covariance
    parameter(s) of the averages), ``rules``, ``notes``, ``admissible`` (``(expression,
    description)`` that must be positive at a solution), ``title``, ``symbol_names``,
    ``stability`` (a :class:`Stability` record), ``unique_fixed_point`` (as for
    :class:`SaddlePointModel`). ``free_energy`` (optional): the free energy
    whose stationarity conditions the equations are, *stated* by the model (not checked against
    the equations), reported as ``free_energy_name`` (default ``free_energy``) in the group
    ``free_energy``; ``extremum`` (``"min"`` or ``"max"``) as for :class:`SaddlePointModel`.
    Without ``free_energy`` no free energy is reported."""

    def __init__(self, name: str, *, parameters, equations: Mapping | None = None,
                 residuals: Sequence | None = None, unknowns: Sequence | None = None,
                 free_energy=None, extremum: str = "min", free_energy_name: str = "free_energy",
                 **kw):
        super().__init__(name, parameters=parameters, **kw)
        if extremum not in ("min", "max"):
            raise ModelError(f"model {name!r}: extremum= is 'min' or 'max', got {extremum!r}")
        if not isinstance(free_energy_name, str) or not free_energy_name.isidentifier():
            raise ModelError(f"model {name!r}: free_energy_name= must be an identifier, got "
                             f"{free_energy_name!r}")
        self.extremum = extremum
        self.free_energy = None if free_energy is None else sympy.sympify(free_energy)
        self.free_energy_name = None if free_energy is None else free_energy_name
        if free_energy is not None:
            self._add_reported("free_energy", free_energy_name, free_energy, "the free energy")
        if (equations is None) == (residuals is None):
            raise ModelError(f"model {name!r}: give either equations={{x: rhs}} or residuals=[...]")
        if equations is not None:
            self.equations = {sympy.sympify(k): sympy.sympify(v) for k, v in equations.items()}
            self.unknowns = tuple(self.equations)
            self.residuals = None
        else:
            if not unknowns:
                raise ModelError(f"model {name!r}: residuals= needs unknowns=[...]")
            self.unknowns = tuple(sympy.sympify(u) for u in unknowns)
            self.residuals = [sympy.sympify(r) for r in residuals]
            self.equations = None
            if len(self.residuals) != len(self.unknowns):
                raise ModelError(f"model {name!r}: {len(self.residuals)} residuals for "
                                 f"{len(self.unknowns)} unknowns")
        for u in self.unknowns:
            if not isinstance(u, sympy.Symbol):
                raise ModelError(f"model {name!r}: unknown {u} is not a symbol")
        eqs = list(self.equations.values()) if self.equations is not None else self.residuals
        alias_syms = {a.symbol for a in self.aliases}
        all_exprs = eqs + [a.expression for a in self.aliases] + [
            e for g in self.observables.values() for e in g.values()]
        self.symbols = self._parameter_symbols(all_exprs)
        allowed = set(self.unknowns) | set(self.symbols.values()) | alias_syms
        for e in eqs:
            bad = _free_symbols(e) - allowed
            if bad:
                raise ModelError(f"model {name!r}: symbol(s) {_names(bad)} in the equations are "
                                 "neither unknowns, parameters nor aliases")
        self._check_observables(allowed)
        if self.stability is not None and self.stability.replicon is not None:
            bad = _free_symbols(sympy.sympify(self.stability.replicon)) - allowed
            if bad:
                raise ModelError(f"model {name!r}: the replicon refers to unknown symbol(s) "
                                 f"{_names(bad)}")
        self.uses_spectrum = self._uses_averages(all_exprs)
        if self.uses_spectrum and not self._spectrum_names:
            raise ModelError(f"model {name!r}: the equations have spectral averages but no "
                             "parameter has domain='covariance'")
        self.saddle = None
        self.problem = self._problem(self.unknowns, {
            "order_parameters": [str(s) for s in self.unknowns]}, self._system)
        self.problem.saddle_point = None
        self.problem.model = self
        self.problem.symbol_names = self.symbol_names
        self.problem.free_energy = self.free_energy_name
        self.problem.extremum = self.extremum

    def _system(self) -> System:
        params = tuple(self.symbols[n] for n in self.schema.names if n in self.symbols)
        report = [(str(s), s, s) for s in self.unknowns]
        for members in self.observables.values():
            for k, e in members.items():
                report.append((k, e, sympy.Symbol(k)))
        kw = dict(fixed_point=self.equations) if self.equations is not None else dict(
            residuals=self.residuals)
        return System(unknowns=tuple(self.unknowns), parameters=params, symbols=self.symbols,
                      aliases=[(a.symbol, a.expression) for a in self.aliases], report=report,
                      start=self._start(self.unknowns), evaluation_form=self.evaluation_form,
                      spectrum=self._spectrum if self.uses_spectrum else None,
                      admissible=[(sympy.sympify(e), str(d)) for e, d in self.admissible],
                      positive_unknowns=self.positive_unknowns, **kw)


def as_problem(obj) -> Problem:
    """The :class:`~replica.problem.Problem` of a declared model (or the problem itself)."""
    if isinstance(obj, Problem):
        return obj
    if isinstance(obj, _Declared):
        return obj.problem
    raise ModelError(f"{obj!r} is not a model (SaddlePointModel, FixedPointModel or Problem)")



def load_model_file(path: str) -> Problem:
    """The problem the model file ``path`` declares (:func:`load_model_namespace`)."""
    return load_model_namespace(path)[0]


def load_model_namespace(path: str) -> tuple:
    """``(problem, namespace)``: run the model file ``path`` (the user's own Python code, like any
    script they run) and return the problem it declares -- the module-level ``MODEL`` (a :class:`SaddlePointModel`,
    :class:`FixedPointModel` or :class:`~replica.problem.Problem`), or else the only such object
    it defines -- with the file's namespace (where :mod:`replica.registry` finds what else the
    model declares: ``SIMULATION``, ``TRANSITIONS``, ...).

    Generated code is cached on disk keyed on contents (:func:`_cache_inputs`): the file's bytes,
    the modules it imports from outside the Python installation, every file it reads while it
    runs, the files it declares in a module-level ``INPUTS`` list (paths relative to the model
    file: what its functions read later) and the environment variables it looks up.

    Every way the file can fail -- missing, a syntax error, an exception while it runs, no model
    or several, ``sys.exit``, ``KeyboardInterrupt`` or a run longer than
    ``REPLICA_MODEL_LOAD_TIMEOUT`` seconds (:mod:`replica.watched_run`) -- is a
    :class:`ModelError` naming the file (and the line, where there is one)."""
    import os
    import runpy
    import sys
    import traceback

    from .watched_run import WatchedRunError, run_watched

    if path and os.path.isdir(path):
        raise ModelError(f"--model: {path!r} is a directory, not a model file")
    if not path or not os.path.isfile(path):
        raise ModelError(f"--model: no such file: {path!r}")
    path = os.path.abspath(path)
    before = set(sys.modules)
    try:
        namespace, reads = run_watched(path, lambda: runpy.run_path(path,
                                                                     run_name="replica_model"))
    except WatchedRunError as exc:
        raise ModelError(str(exc)) from None
    except ReplicaError as exc:
        raise ModelError(f"{path}: {exc}") from None
    except SyntaxError as exc:
        line = f":{exc.lineno}" if exc.lineno else ""  # (None for a NUL byte in the source)
        raise ModelError(f"{path}{line}: syntax error: {exc.msg}") from None
    except Exception as exc:  # the user's code failed: say where, in one line
        frames = [f for f in traceback.extract_tb(exc.__traceback__)
                  if os.path.abspath(f.filename) == path]
        where = f":{frames[-1].lineno}" if frames else ""
        raise ModelError(f"{path}{where}: {type(exc).__name__} while running the model file: "
                         f"{exc}") from None
    found = namespace.get("MODEL")
    if found is None:
        cands = [v for k, v in namespace.items() if not k.startswith("_")
                 and isinstance(v, (_Declared, Problem))]
        if len(cands) != 1:
            raise ModelError(f"{path}: declares no model (define MODEL = SaddlePointModel(...) "
                             "or FixedPointModel(...))" if not cands else
                             f"{path}: declares {len(cands)} models; name the one to use MODEL")
        found = cands[0]
    problem = as_problem(found)
    if not problem.source_files:
        files, salt = _cache_inputs(path, namespace.get("INPUTS", ()), before, reads)
        problem.source_files, problem.cache_salt = files, salt
    return problem, namespace


def _cache_inputs(path: str, declared, before: set, reads) -> tuple:
    """``(files, salt)``: what the generated code of the model file ``path`` may depend on,
    besides this package (whose every file enters each key,
    :func:`~replica.symbolic.codegen.package_digest`).

    ``files``: the model file, the modules it imported from outside the Python installation, the
    files it read while running and the ``declared`` inputs (``INPUTS``, relative to the model
    file), each hashed by its bytes; ``salt``: the environment variables it looked up, with their
    values. A read of something that is not a regular file (a device, a pipe) cannot be keyed on
    its contents: then nothing is cached (``files`` is empty)."""
    import os
    import sys

    if isinstance(declared, str) or not isinstance(declared, (list, tuple)) or not all(
            isinstance(p, str) and p for p in declared):
        raise ModelError(f"{path}: INPUTS must be a list of file paths (relative to the model "
                         f"file), got {declared!r}")
    here = os.path.dirname(os.path.abspath(__file__))
    installed = tuple(os.path.abspath(p) + os.sep for p in {sys.prefix, sys.base_prefix,
                                                            sys.exec_prefix} if p)
    files = [path]
    for name in declared:
        full = os.path.normpath(os.path.join(os.path.dirname(path), name))
        if not os.path.isfile(full):
            raise ModelError(f"{path}: INPUTS names {name!r}, which is not a file")
        files.append(full)
    for name in sorted(set(sys.modules) - before):
        f = getattr(sys.modules.get(name), "__file__", None)
        if f and f.endswith(".py"):
            files.append(os.path.abspath(f))
    for f in reads.files:
        if f.endswith(".pyc") or os.sep + "__pycache__" + os.sep in f:
            continue
        if not os.path.exists(f) and not os.path.lexists(f):
            continue  # an open that failed read nothing
        if not os.path.isfile(f):
            return (), ""
        files.append(f)
    kept = []
    for f in files:
        if f.startswith(installed) or f.startswith(here + os.sep) or f in kept:
            continue
        kept.append(f)
    salt = "".join(f"{k}={v!r};" for k, v in sorted(reads.environment.items()))
    return tuple(kept), salt
