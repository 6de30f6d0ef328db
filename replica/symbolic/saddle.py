r"""From a replica free energy to fixed-point equations: a general, model-independent mechanism.

A replica-symmetric free energy is an extremum over order parameters :math:`\theta_i` and their
conjugates :math:`\hat\theta_i`,

.. math::  f = \operatorname*{extr}_{\theta,\hat\theta} \Phi(\theta, \hat\theta;\ z, g(z), \dots),

where spectral functions such as a Stieltjes transform :math:`g(z)` are kept **abstract**, and
``z`` may be an *alias*: a symbol standing for an expression in the conjugates (for example
:math:`z = -(\lambda + \hat{\bar q})/\hat q`). This module

1. represents such spectral functions as :class:`SpectralFunction` classes whose ``fdiff`` returns
   the next member of their family (:math:`g \to g' \to g'' \to \dots`, created on demand), so
   :func:`sympy.diff` of a free energy keeps :math:`g` abstract;
2. differentiates :math:`\Phi` with respect to every unknown, applying the chain rule through the
   aliases,

   .. math:: \frac{d\Phi}{du} = \frac{\partial\Phi}{\partial u}\Big|_z
             + \sum_{a}\frac{\partial\Phi}{\partial a}\,\frac{\partial a(\hat\theta)}{\partial u},

   and rewrites :math:`\partial a/\partial u` in terms of the alias symbol itself (by eliminating
   one symbol of the alias definition, e.g. :math:`\lambda = -z\hat q - \hat{\bar q}` turns
   :math:`\partial z/\partial\hat q = (\lambda+\hat{\bar q})/\hat q^2` into :math:`-z/\hat q`);
3. solves each stationarity condition for the variable paired with it -- :math:`\partial\Phi/
   \partial\theta_i = 0` for :math:`\hat\theta_i` and :math:`\partial\Phi/\partial\hat\theta_i = 0`
   for :math:`\theta_i` -- which puts the saddle point in the fixed-point form
   :math:`\hat\theta = H(\theta)`, :math:`\theta = \Psi(\hat\theta)`; and composes the two halves
   into the closed map :math:`\theta = \Psi(H(\theta))` (:meth:`SaddlePoint.reduced_map`);
4. records each transformation as a :class:`~replica.symbolic.Step` (name, SymPy objects, one
   sentence, a check callable), which the tests run and the LaTeX writer renders.

Nothing here refers to a particular model: a model supplies the free energy, the pairing of order
parameters with conjugates, and its aliases.

>>> import sympy
>>> g = spectral_family("g")
>>> z = sympy.Symbol("z")
>>> sympy.diff(z * g[0](z), z)
z*g'(z) + g(z)
>>> sympy.diff(g[0](z), z, 2) == g[2](z)
True
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Iterable, Sequence

import sympy
from sympy.core.function import ArgumentIndexError

from .steps import Step

__all__ = ["SpectralFunction", "SpectralFamily", "spectral_family", "Alias", "SaddlePoint",
           "SaddlePointError", "tidy", "is_zero", "replace_functions", "verify_steps"]


class SaddlePointError(ValueError):
    """The free energy cannot be put into fixed-point form (a condition that is not linear in the
    variable paired with it, an alias that cannot be inverted, ...)."""


# ---------------------------------------------------------------------------------------------
# Abstract spectral functions and their derivative families
# ---------------------------------------------------------------------------------------------
class SpectralFunction(sympy.Function):
    """Abstract function of one variable whose derivative is the next member of its family.

    Subclasses are made by :class:`SpectralFamily`; ``_family`` and ``_order`` say which member
    this is (``_order = k`` is the k-th derivative of the family's base function).
    """

    nargs = 1
    _family: "SpectralFamily"
    _order: int = 0

    def fdiff(self, argindex=1):
        if argindex != 1:
            raise ArgumentIndexError(self, argindex)
        return self._family[self._order + 1](self.args[0])

    def _head_latex(self) -> str:
        base = self._family.latex
        k = self._order
        if k == 0:
            return base
        if k <= 3:
            return base + "'" * k
        return r"%s^{(%d)}" % (base, k)

    def _latex(self, printer, exp=None):
        head = self._head_latex()
        tex = r"%s\left(%s\right)" % (head, printer._print(self.args[0]))
        return tex if exp is None else r"%s^{%s}" % (tex, exp)

    def _sympystr(self, printer):
        k = self._order
        prime = "'" * k if k <= 3 else f"^({k})"
        return f"{self._family.name}{prime}({printer._print(self.args[0])})"


class SpectralFamily:
    """The functions ``f, f', f'', ...`` of one abstract spectral function ``f``.

    ``family[k]`` is the SymPy function class of the k-th derivative (created on first use), so
    ``sympy.diff(family[0](z), z) == family[1](z)``. Class names are valid Python identifiers
    (``g``, ``g_d1``, ``g_d2``, ...) so that expressions can be compiled; they print with primes.
    """

    def __init__(self, name: str, latex: str | None = None):
        if not name.isidentifier():
            raise SaddlePointError(f"spectral function name {name!r} is not an identifier")
        self.name = name
        self.latex = latex if latex is not None else sympy.latex(sympy.Symbol(name))
        self._members: list[type] = []

    def __getitem__(self, k: int) -> type:
        if k < 0:
            raise IndexError(k)
        while len(self._members) <= k:
            j = len(self._members)
            cls_name = self.name if j == 0 else f"{self.name}_d{j}"
            self._members.append(type(cls_name, (SpectralFunction,),
                                      {"_family": self, "_order": j,
                                       "__module__": __name__}))
        return self._members[k]

    def order_of(self, func) -> int | None:
        """The derivative order of ``func`` (a class or an application) in this family, or None."""
        cls = func if isinstance(func, type) else type(func)
        return cls._order if cls in self._members else None

    def members_in(self, expr) -> list[type]:
        """The members of this family that occur in ``expr``, lowest order first."""
        from .walk import distinct_atoms

        found = {type(a) for a in distinct_atoms(expr, SpectralFunction)
                 if type(a) in self._members}
        return sorted(found, key=lambda c: c._order)

    def __repr__(self):
        return f"SpectralFamily({self.name!r})"


@functools.lru_cache(maxsize=None)
def spectral_family(name: str, latex: str | None = None) -> SpectralFamily:
    """The (unique, cached) :class:`SpectralFamily` called ``name``."""
    return SpectralFamily(name, latex)


def replace_functions(expr, implementations: dict):
    """Replace each application ``F(arg)`` of an abstract function class ``F`` by
    ``implementations[F](arg)`` (a callable returning a SymPy expression), e.g. a closed form."""
    expr = sympy.sympify(expr)
    for cls, impl in implementations.items():
        expr = expr.replace(lambda e, c=cls: isinstance(e, c), lambda e, f=impl: f(e.args[0]))
    return expr


# ---------------------------------------------------------------------------------------------
# Simplification helpers
# ---------------------------------------------------------------------------------------------
def tidy(expr, collect_in: Sequence = ()) -> sympy.Expr:
    """A canonical, readable form of a rational expression (abstract functions are treated as
    generators): one fraction, numerator expanded and collected in ``collect_in`` with each
    coefficient factored, denominator factored. A two-dimensional Gaussian integral is a
    generator too (:func:`~replica.symbolic.gaussian.mask_two_dimensional`: its integrand is
    left as it is)."""
    from .gaussian import mask_two_dimensional

    expr, back = mask_two_dimensional(sympy.sympify(expr))
    expr = sympy.cancel(sympy.together(sympy.expand(expr)))
    num, den = sympy.fraction(expr)
    if collect_in:
        num = sympy.collect(sympy.expand(num), list(collect_in), func=sympy.factor)
    else:
        num = sympy.factor(num)
    return (num / sympy.factor(den)).xreplace(back)


def cancel(expr) -> sympy.Expr:
    """``sympy.cancel``, two-dimensional Gaussian integrals taken as generators (as in
    :func:`tidy`)."""
    from .gaussian import mask_two_dimensional

    expr, back = mask_two_dimensional(sympy.sympify(expr))
    return sympy.cancel(expr).xreplace(back)


def is_zero(expr) -> bool:
    """``True`` when ``expr`` simplifies to 0 (cancellation of a rational expression in the
    symbols and abstract-function applications; ``sympy.simplify`` as a fallback)."""
    e = sympy.cancel(sympy.together(sympy.expand(expr)))
    if e == 0:
        return True
    return sympy.simplify(e) == 0


# ---------------------------------------------------------------------------------------------
# Aliases
# ---------------------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class Alias:
    """A symbol standing for an expression in the unknowns, e.g. ``z = -(lam + qbarhat)/qhat``.

    ``eliminate`` is the symbol to solve the definition for when a derivative of ``expression``
    is rewritten in terms of ``symbol`` (default: the first parameter -- a free symbol that is not
    an unknown -- for which the definition has a unique solution).
    """

    symbol: sympy.Symbol
    expression: sympy.Expr
    eliminate: sympy.Symbol | None = None


# ---------------------------------------------------------------------------------------------
# The saddle point
# ---------------------------------------------------------------------------------------------
class SaddlePoint:
    """Stationarity of a replica free energy and its fixed-point form.

    Parameters
    ----------
    free_energy:
        SymPy expression :math:`\\Phi(\\theta, \\hat\\theta; \\text{aliases}, \\text{params})`.
    pairs:
        ``[(theta_1, thetahat_1), ...]``: each order parameter with its conjugate. The condition
        :math:`\\partial\\Phi/\\partial\\theta_i = 0` is solved for :math:`\\hat\\theta_i`, and
        :math:`\\partial\\Phi/\\partial\\hat\\theta_i = 0` for :math:`\\theta_i`.
    aliases:
        :class:`Alias` records (symbols that stand for expressions in the unknowns).
    name:
        the free energy's name in step sentences (``f``).
    """

    def __init__(self, free_energy, pairs: Iterable, aliases: Iterable[Alias] = (),
                 name: str = "f"):
        self.free_energy = sympy.sympify(free_energy)
        self.pairs = tuple((sympy.sympify(a), sympy.sympify(b)) for a, b in pairs)
        self.aliases = tuple(aliases)
        self.name = name
        self.variables = tuple(a for a, _ in self.pairs)
        self.conjugates = tuple(b for _, b in self.pairs)
        self.unknowns = self.variables + self.conjugates
        if len(set(self.unknowns)) != len(self.unknowns):
            raise SaddlePointError("an unknown appears twice in the pairs")
        self._partner = {}
        for a, b in self.pairs:
            self._partner[a] = b
            self._partner[b] = a
        self._alias_symbols = tuple(al.symbol for al in self.aliases)
        for al in self.aliases:
            if al.expression.has(*self._alias_symbols):
                raise SaddlePointError(f"alias {al.symbol} is defined through another alias")

    # -- basic objects -------------------------------------------------------------------------
    @property
    def alias_map(self) -> dict:
        return {al.symbol: al.expression for al in self.aliases}

    def explicit(self, expr=None):
        """``expr`` (default: the free energy) with every alias replaced by its definition."""
        expr = self.free_energy if expr is None else sympy.sympify(expr)
        return expr.subs(self.alias_map)

    def partner(self, u):
        """The variable paired with the unknown ``u`` (its conjugate, or vice versa)."""
        return self._partner[u]

    def _elimination(self, alias: Alias, avoid=()):
        """``(symbol, solution)`` that rewrites the alias definition ``a = expr(...)`` as a
        substitution for one of its symbols in terms of ``a`` (parameters preferred)."""
        key = (alias, tuple(avoid))
        cache = self.__dict__.setdefault("_elim_cache", {})
        if key not in cache:
            cache[key] = self._find_elimination(alias, avoid)
        return cache[key]

    def _find_elimination(self, alias: Alias, avoid=()):
        candidates = []
        if alias.eliminate is not None:
            candidates.append(alias.eliminate)
        free = sorted(alias.expression.free_symbols, key=sympy.default_sort_key)
        candidates += [s for s in free if s not in self.unknowns]
        candidates += [s for s in free if s in self.unknowns and s not in avoid]
        for s in candidates:
            if s in avoid:
                continue
            sols = sympy.solve(sympy.Eq(alias.symbol, alias.expression), s, dict=True)
            if len(sols) == 1:
                return s, sols[0][s]
        return None, None

    def realias(self, expr, avoid=()):
        """Rewrite ``expr`` with the alias definitions used backwards, so that it is expressed in
        the alias symbols (valid wherever the aliases hold); never eliminates a symbol in
        ``avoid``."""
        out = sympy.sympify(expr)
        for al in self.aliases:
            s, sol = self._elimination(al, avoid)
            if s is not None:
                out = out.subs(s, sol)
        return out

    # -- differentiation -----------------------------------------------------------------------
    def derivative(self, u) -> sympy.Expr:
        """Total derivative :math:`d\\Phi/du` through the aliases, with each
        :math:`\\partial a/\\partial u` rewritten in terms of the alias symbols, simplified."""
        f = self.free_energy
        total = sympy.diff(f, u)
        avoid = (self.partner(u),) if u in self._partner else ()
        for al in self.aliases:
            da = sympy.diff(al.expression, u)
            if da != 0:
                da = sympy.cancel(self.realias(da, avoid))
                total += sympy.diff(f, al.symbol) * da
        return total

    @functools.cached_property
    def stationarity(self) -> dict:
        """``{u: dPhi/du}`` for every unknown ``u`` (order parameters first, then conjugates)."""
        return {u: self.derivative(u) for u in self.unknowns}

    def _collect_symbols(self, target):
        """Symbols to collect the right-hand side of ``target``'s equation in: the unknowns of the
        other kind (conjugates for an order parameter, and vice versa), with squares."""
        others = self.conjugates if target in self.variables else self.variables
        out = []
        for s in others:
            out += [s**2, s]
        return out

    @functools.cached_property
    def fixed_point(self) -> dict:
        """``{target: rhs}`` solving each stationarity condition for the variable paired with it:
        conjugates first (from :math:`\\partial\\Phi/\\partial\\theta_i = 0`), then order
        parameters (from :math:`\\partial\\Phi/\\partial\\hat\\theta_i = 0`). Written as one
        fraction, the condition's numerator must be linear in the target, ``c0 + c1 target``
        (then ``target = -c0/c1``); otherwise :class:`SaddlePointError`."""
        from .gaussian import mask_two_dimensional

        out = {}
        for u in self.variables + self.conjugates:
            target = self.partner(u)
            # (two-dimensional Gaussian integrals free of the target are generators here)
            cond, back = mask_two_dimensional(self.stationarity[u], target)
            cond = sympy.together(cond)
            num = sympy.expand(sympy.fraction(cond)[0])
            # num = c0 + c1 * target must be linear in target (cond = 0 <=> num = 0)
            c1 = sympy.diff(num, target)
            if c1.has(target) or c1 == 0:
                raise SaddlePointError(f"d{self.name}/d{u} = 0 is not linear in {target}")
            c0 = num.subs(target, 0)
            out[target] = tidy(-c0 / c1, self._collect_symbols(target)).xreplace(back)
        order = list(self.conjugates) + list(self.variables)
        return {t: out[t] for t in order}

    def conjugate_map(self) -> dict:
        """:math:`\\hat\\theta = H(\\theta)` (the energetic half of the fixed point)."""
        return {t: self.fixed_point[t] for t in self.conjugates}

    def order_map(self) -> dict:
        """:math:`\\theta = \\Psi(\\hat\\theta)` (the entropic half; may contain alias symbols)."""
        return {t: self.fixed_point[t] for t in self.variables}

    def reduced_map(self, form: str = "cancel"):
        """The closed map :math:`\\theta = \\Psi(H(\\theta))`.

        Returns ``(phi, aliases)``: ``phi[theta]`` is an expression in the order parameters, the
        parameters and the alias symbols; ``aliases[a]`` is the alias definition with the
        conjugates replaced by :math:`H(\\theta)`. Requires that :math:`H` does not involve the
        conjugates (true when the conjugates enter the free energy's energetic part only through
        the pairing terms). ``form`` is ``"cancel"`` (one cancelled fraction: fast, for numerics)
        or ``"tidy"`` (collected and factored, for display; see :func:`tidy`).
        """
        H = self.conjugate_map()
        for t, rhs in H.items():
            if rhs.has(*self.conjugates) or rhs.has(*self._alias_symbols):
                raise SaddlePointError(f"the equation for {t} involves conjugates or aliases; "
                                       "the map cannot be reduced to the order parameters")
        phi = {}
        for t, rhs in self.order_map().items():
            e = rhs.xreplace(H)
            phi[t] = tidy(e) if form == "tidy" else cancel(e)
        aliases = {al.symbol: cancel(al.expression.xreplace(H)) for al in self.aliases}
        return phi, aliases

    # -- checks --------------------------------------------------------------------------------
    def check_derivative(self, u) -> bool:
        """The alias-form derivative equals ``diff`` of the explicit free energy (aliases
        substituted before differentiating)."""
        mine = self.explicit(self.stationarity[u])
        ref = sympy.diff(self.explicit(), u)
        return is_zero(mine - ref)

    def check_solution(self, target) -> bool:
        """Substituting ``target = rhs`` into its stationarity condition gives 0."""
        u = self.partner(target)
        return is_zero(self.stationarity[u].subs(target, self.fixed_point[target]))

    def compare(self, reference: dict) -> dict:
        """Residuals ``derived - reference`` (simplified) for each target in ``reference``."""
        return {t: sympy.cancel(sympy.together(sympy.expand(self.fixed_point[t] - ref)))
                for t, ref in reference.items()}

    def agrees_with(self, reference: dict) -> bool:
        return all(is_zero(r) for r in self.compare(reference).values())

    # -- derivation record -----------------------------------------------------------------------
    def steps(self, prefix: str = "") -> list[Step]:
        """The derivation as :class:`Step` records: the free energy, one stationarity step per
        unknown, one fixed-point step per unknown, and the reduced map."""
        p = prefix
        name = self.name
        objects = {"free_energy": sympy.Eq(sympy.Symbol(name), self.free_energy)}
        for al in self.aliases:
            objects[f"alias_{al.symbol}"] = sympy.Eq(al.symbol, al.expression)
        pairs = ", ".join(f"({{{a}}}, {{{b}}})" for a, b in self.pairs)
        out = [Step(f"{p}free_energy", objects,
                    f"The replica-symmetric free energy {name} is extremised over the order "
                    f"parameters and their conjugates, paired as {pairs}, with "
                    + (", ".join(f"{{{al.symbol}}}" for al in self.aliases) + " kept as symbols"
                       if self.aliases else "no aliases")
                    + " and spectral functions abstract.",
                    None)]
        for u in self.unknowns:
            out.append(Step(
                f"{p}stationarity_{u}",
                {"variable": u, "derivative": self.stationarity[u],
                 "equation": sympy.Eq(self.stationarity[u], 0)},
                f"Differentiate {name} with respect to {{{u}}}, with the chain rule through "
                + (", ".join(f"{{{a}}}" for a in self._alias_symbols) or "no alias")
                + " and the derivative of each abstract spectral function being the next one.",
                functools.partial(self.check_derivative, u)))
        for t, rhs in self.fixed_point.items():
            u = self.partner(t)
            out.append(Step(
                f"{p}fixed_point_{t}",
                {"variable": t, "rhs": rhs, "equation": sympy.Eq(t, rhs), "from": u},
                f"The condition d{name}/d{{{u}}} = 0 is linear in {{{t}}}; solving it gives "
                f"{{{t}}}.",
                functools.partial(self.check_solution, t)))
        return out


def verify_steps(steps: Sequence[Step]) -> dict[str, bool]:
    """Run every step's check; ``{name: ok}``."""
    return {s.name: s.verify() for s in steps}
