r"""Gaussian integrals as SymPy expressions.

:func:`gauss` builds :class:`GaussianIntegral`, the unevaluated integral against the standard
normal measure

.. math::  \int \mathcal{D}z\, f(z) = \int_{-\infty}^{\infty} \frac{e^{-z^2/2}}{\sqrt{2\pi}}\,
           f(z)\, dz,

of an integrand :math:`f` built from the model's symbols and one integration variable :math:`z`.
Its free symbols are those of :math:`f` less :math:`z`; it prints as
:math:`\int \mathcal{D}z\, (f)`; and it is differentiated *under the integral sign*,
:math:`\partial_x \int\mathcal{D}z\, f = \int\mathcal{D}z\, \partial_x f`, so the saddle-point
machinery and the Jacobians of Newton's method get exact derivatives.

**Kinks.** The integrand may hold ``Heaviside``, ``Max``, ``Min``, ``Abs``, ``sign`` and
``Piecewise`` (with conditions that are single comparisons or conjunctions of them) of arguments
*linear* in :math:`z`. On construction each is rewritten with Heaviside functions
(:math:`|u| = u\,(2\theta(u) - 1)`, :math:`\operatorname{sign} u = 2\theta(u) - 1`,
:math:`\max(u, v) = u + (v - u)\,\theta(v - u)`, :math:`\min(u, v) = u - (u - v)\,\theta(u - v)`, a
``Piecewise`` as the sum of its branches times the indicators that select them). Every
:math:`\theta(a z + b)` with :math:`a \neq 0` has one kink, :math:`z = -b/a`, a breakpoint of every
quadrature rule (:func:`prepare`). Differentiating :math:`\theta(u)` gives :math:`\delta(u)\,u'`;
such terms are integrated exactly on construction,

.. math::  \int \mathcal{D}z\, c(z)\,\delta^{(n)}(a z + b)
           = \frac{(-1)^n}{|a|\,a^n}\,\frac{d^n}{dz^n}\big[c(z)\,\varphi(z)\big]_{z=-b/a},
           \qquad \varphi(z) = \frac{e^{-z^2/2}}{\sqrt{2\pi}},

(substitute :math:`t = a z + b` and integrate the :math:`n`-th derivative of the delta by parts),
so no evaluator ever sees a delta function. A factor free of :math:`z` is taken out of the
integral, and an integrand free of :math:`z` is its own integral (the measure has mass one).

**Two-dimensional integrals** are written by nesting: ``gauss(F(xi, gauss(g(xi, z), z)), xi)``
for :math:`\int\mathcal D\xi\,F(\xi, \int\mathcal Dz\,g(\xi, z))` and
``gauss(gauss(h(xi, z), z), xi)`` for :math:`\mathbb E_{\xi,z}h(\xi, z)` (the inner integrand
depends on the outer variable; its kinks may too, the outer integrand's may not depend on the
inner integral). Both are differentiated under both integrals. The code generator evaluates
the inner integral at every node of the outer rule (mpmath: the adaptive rule below with the
inner integrals' error estimates propagated into the outer one's; float64: the tensor product
of the fixed rules, reported ``not-verified``); they have no ball-arithmetic evaluation
(``--certify`` is refused), and integrals nested three deep are refused.

**Evaluation** (by :mod:`replica.symbolic.codegen`): on each piece between consecutive kinks
every Heaviside function is a constant, 0 or 1, read off the sign of its argument at the
piece's midpoint; the *switched* integrand (``integrand`` of :class:`Prepared`, the Heaviside
functions replaced by switch symbols) is then analytic on the piece. mpmath integrates the
pieces of :math:`[-T, T]` (cut every 2 units and at the kinks) by adaptive Gauss--Legendre
rules with a two-level error estimate (:mod:`replica.symbolic.quadrature`), the tails
:math:`|z| > T` by ``mpmath.quad``, and falls back to ``mpmath.quad`` (tanh--sinh) on every
piece where the estimate does not reach the precision; float64 uses Gauss--Legendre rules on the pieces of :math:`[-16, 16]` cut at the
kinks and at fixed points; ball arithmetic integrates the pieces of :math:`[-T, T]` with
python-flint's rigorous ``acb.integral`` and adds the tails :math:`|z| > T` as a radius
bounded by :func:`growth_envelope` (:math:`|f(z)| \le C e^{Qz^2 + B|z|}|z|^P` for every point of
the parameter balls: exponents quadratic in :math:`z`, reciprocals of shared exponentials, of
:math:`\operatorname{erfc}` and of positive sums, logarithms of :math:`\operatorname{erfc}`) and
:func:`tail_bound`.
"""

from __future__ import annotations

import dataclasses

import sympy
from sympy.codegen.cfunctions import log1p

from .walk import distinct_atoms

__all__ = ["GaussianIntegral", "gauss", "is_two_dimensional", "mask_two_dimensional", "prepare", "Prepared", "envelope", "growth_envelope", "root_offset", "exp_rational_bound",
           "exponential_factor", "nonnegative_terms", "tail_bound", "narrow_features",
           "density", "GaussianIntegralError", "EnvelopeError", "erfcx", "scaled_erfc",
           "log_erfc", "rerfcx", "softplus", "sigmoid",
           "SCALED_ERFC_FROM"]


class GaussianIntegralError(ValueError):
    """An integrand this module cannot handle (a kink whose argument is not linear in the
    integration variable, a product of delta functions, ...)."""


class EnvelopeError(ValueError):
    """No growth envelope could be derived for an integrand (the reason says which part): its
    Gaussian tails cannot be bounded, so it has no ball-arithmetic evaluation."""


def density(z) -> sympy.Expr:
    r"""The standard normal density :math:`\varphi(z) = e^{-z^2/2}/\sqrt{2\pi}`."""
    return sympy.exp(-z**2 / 2) / sympy.sqrt(2 * sympy.pi)


def _linear(u, z):
    """``(a, b)`` with ``u = a z + b``; raises where ``u`` is not linear in ``z``."""
    a = sympy.diff(u, z)
    if a.has(z):
        raise GaussianIntegralError(f"the kink argument {u} is not linear in {z}")
    b = sympy.expand(u - a * z)
    if b.has(z):  # pragma: no cover - u - a z is free of z when a is
        b = sympy.simplify(b)
    return a, b


def _indicator(cond, z):
    """The indicator of a ``Piecewise`` condition as a product of Heaviside functions."""
    if cond is sympy.true or cond == True:  # noqa: E712 - SymPy's true
        return sympy.Integer(1)
    if isinstance(cond, sympy.And):
        out = sympy.Integer(1)
        for c in cond.args:
            out *= _indicator(c, z)
        return out
    if isinstance(cond, (sympy.StrictGreaterThan, sympy.GreaterThan)):
        return sympy.Heaviside(cond.lhs - cond.rhs)
    if isinstance(cond, (sympy.StrictLessThan, sympy.LessThan)):
        return sympy.Heaviside(cond.rhs - cond.lhs)
    raise GaussianIntegralError(f"a Piecewise condition {cond} (only comparisons and their "
                                "conjunctions are supported in a Gaussian integral)")


def _rewrite_kinks(expr, z):
    """``expr`` with ``Abs``, ``sign``, ``Max``, ``Min`` and ``Piecewise`` of ``z`` written with
    Heaviside functions (see the module docstring)."""

    def piecewise(*pairs):
        total, none_before = sympy.Integer(0), sympy.Integer(1)
        for value, cond in pairs:
            ind = _indicator(cond, z)
            total += value * ind * none_before
            none_before *= (1 - ind)
            if ind == 1:
                break
        return total

    def maximum(*args):
        out = args[0]
        for v in args[1:]:
            out = out + (v - out) * sympy.Heaviside(v - out)
        return out

    def minimum(*args):
        out = args[0]
        for v in args[1:]:
            out = out - (out - v) * sympy.Heaviside(out - v)
        return out

    rules = ((sympy.Abs, lambda u: u * (2 * sympy.Heaviside(u) - 1)),
             (sympy.sign, lambda u: 2 * sympy.Heaviside(u) - 1),
             (sympy.Max, maximum), (sympy.Min, minimum),
             (sympy.Piecewise, lambda *a: piecewise(*[(p.expr, p.cond) for p in a])))
    for cls, rule in rules:
        expr = expr.replace(lambda e, c=cls: isinstance(e, c) and e.has(z),
                            lambda e, r=rule: r(*e.args))
    for h in expr.atoms(sympy.Heaviside):
        if h.args[0].has(z):
            _linear(h.args[0], z)  # raises where a kink argument is not linear
    return expr


def _delta_term(term, z):
    """The exact integral against the Gaussian measure of ``term = c(z) delta^(n)(a z + b)``."""
    deltas = [f for f in sympy.Mul.make_args(term) if f.has(sympy.DiracDelta)]
    if len(deltas) != 1 or not isinstance(deltas[0], sympy.DiracDelta):
        raise GaussianIntegralError(f"a term {term} with a product or power of delta "
                                    "functions in a Gaussian integral")
    delta = deltas[0]
    u = delta.args[0]
    n = int(delta.args[1]) if len(delta.args) > 1 else 0
    a, b = _linear(u, z)
    if a == 0:
        raise GaussianIntegralError(f"a delta function {delta} whose argument does not depend "
                                    f"on {z}")
    c = sympy.Mul(*[f for f in sympy.Mul.make_args(term) if f is not delta])
    z0 = -b / a
    g = sympy.diff(c * density(z), z, n)
    return (-1) ** n * g.subs(z, z0) / (sympy.Abs(a) * a**n)


def _split_deltas(expr, z):
    """``(rest, closed)``: ``expr`` without its delta-function terms, and their exact
    integral."""
    if not any(d.has(z) for d in expr.atoms(sympy.DiracDelta)):
        return expr, sympy.Integer(0)
    rest, closed = sympy.Integer(0), sympy.Integer(0)
    for term in sympy.Add.make_args(sympy.expand_mul(expr)):
        if any(d.has(z) for d in term.atoms(sympy.DiracDelta)):
            closed += _delta_term(term, z)
        else:
            rest += term
    return rest, closed


_KINK_CLASSES = (sympy.Abs, sympy.sign, sympy.Max, sympy.Min, sympy.Piecewise)
"""The functions :func:`_rewrite_kinks` writes with Heaviside functions."""


class GaussianIntegral(sympy.Function):
    r"""``GaussianIntegral(f, z)`` :math:`= \int \mathcal{D}z\, f(z)` (see the module docstring);
    made by :func:`gauss`."""

    nargs = 2

    @classmethod
    def eval(cls, integrand, z):
        if not isinstance(z, sympy.Symbol):
            raise GaussianIntegralError(f"the integration variable {z} is not a symbol")
        if not integrand.has(z):
            return integrand
        # (one traversal finds whether there is anything to rewrite: SymPy rebuilds an integral,
        # and so calls this, whenever it expands or substitutes into an expression holding it,
        # and the rewriting's own traversals cost seconds on a two-dimensional integrand)
        kinky = [a for a in distinct_atoms(integrand, *_KINK_CLASSES, sympy.Heaviside,
                                           sympy.DiracDelta)
                 if a.has(z)]
        if not kinky:
            new, rest, closed = integrand, integrand, sympy.Integer(0)
        else:
            new = _rewrite_kinks(integrand, z)
            rest, closed = _split_deltas(new, z)
        coeff, dep = sympy.Integer(1), rest
        if isinstance(rest, sympy.Mul):
            coeff, dep = rest.as_independent(z, as_Add=False)
        if closed == 0 and coeff == 1 and dep == integrand:
            return None
        return closed + coeff * cls(dep, z)

    @property
    def integrand(self):
        return self.args[0]

    @property
    def variable(self):
        return self.args[1]

    @property
    def free_symbols(self):
        return self.args[0].free_symbols - {self.args[1]}

    def _eval_derivative(self, s):
        if s == self.args[1]:
            return sympy.Integer(0)
        return GaussianIntegral(sympy.diff(self.args[0], s), self.args[1])

    def _eval_subs(self, old, new):
        if old == self.args[1]:
            return self  # the integration variable is bound
        return None

    def _eval_is_extended_real(self):
        return self.args[0].is_extended_real

    def _latex(self, printer, exp=None):
        tex = r"\int \mathcal{D}%s\, \left(%s\right)" % (printer._print(self.args[1]),
                                                         printer._print(self.args[0]))
        return tex if exp is None else r"\left[%s\right]^{%s}" % (tex, exp)

    def _sympystr(self, printer):
        return "gauss(%s, %s)" % (printer._print(self.args[0]), printer._print(self.args[1]))


def is_two_dimensional(integral) -> bool:
    r"""Whether a :class:`GaussianIntegral` holds an integral that depends on its variable
    (:math:`\int\mathcal D\xi\,F(\xi, \int\mathcal Dz\,g(\xi, z))`)."""
    z = integral.args[1]
    return any(z in g.free_symbols for g in integral.args[0].atoms(GaussianIntegral))


def mask_two_dimensional(expr, keep=None):
    """``(masked, back)``: ``expr`` with each outermost two-dimensional Gaussian integral
    (:func:`is_two_dimensional`) that does not depend on the symbol ``keep`` replaced by a
    dummy symbol, and the map back. Rational manipulations (``expand``, ``together``,
    ``cancel``) then treat those integrals as generators instead of expanding their integrands
    (they descend into a function's arguments, rebuilding each integral; on a two-dimensional
    integrand that took minutes); one-dimensional integrals are left as they are."""
    found = [g for g in sympy.sympify(expr).atoms(GaussianIntegral)
             if is_two_dimensional(g) and (keep is None or not g.has(keep))]
    outermost = [g for g in found if not any(h is not g and h.has(g) for h in found)]
    if not outermost:
        return expr, {}
    there = {g: sympy.Dummy(f"gauss2d_{k}") for k, g in enumerate(outermost)}
    return expr.xreplace(there), {d: g for g, d in there.items()}


def gauss(expr, z) -> sympy.Expr:
    r""":math:`\int \mathcal{D}z\, \mathrm{expr}` for the standard normal measure
    :math:`\mathcal{D}z`; ``z`` is a symbol (taken as real: it is replaced by the real symbol of
    its name).

    >>> import sympy
    >>> z, k = sympy.symbols("z kappa", real=True)
    >>> I = gauss((z + k)**2 * sympy.Heaviside(z + k), z)
    >>> sympy.diff(I, k)
    gauss(2*kappa*Heaviside(kappa + z) + 2*z*Heaviside(kappa + z), z)
    >>> sympy.diff(gauss(sympy.Heaviside(z - k), z), k)  # the density at the kink
    -sqrt(2)*exp(-kappa**2/2)/(2*sqrt(pi))
    """
    z = sympy.sympify(z)
    if not isinstance(z, sympy.Symbol):
        raise GaussianIntegralError(f"the integration variable {z} is not a symbol")
    real = sympy.Symbol(z.name, real=True)
    expr = sympy.sympify(expr)
    # (not when z is that symbol already: xreplace would rebuild, and so re-evaluate, every
    # sub-expression holding it -- an unevaluated erfc(-u) would become 2 - erfc(u))
    return GaussianIntegral(expr if z == real else expr.xreplace({z: real}), real)


# ---------------------------------------------------------------------------------------------
# What the evaluators need
# ---------------------------------------------------------------------------------------------
@dataclasses.dataclass
class Prepared:
    r"""A Gaussian integral ready for quadrature.

    ``integrand``: :math:`F(z, s_1, \dots, s_J)\,\varphi(z)`, where :math:`F` is the integrand
    with its Heaviside function :math:`\theta(u_j)` replaced by the switch symbol :math:`s_j`;
    ``switches`` the :math:`s_j`; ``arguments`` the :math:`u_j` (linear in ``z``; on a piece
    between kinks :math:`s_j = 1` where :math:`u_j > 0` and 0 where :math:`u_j < 0`); ``kinks``
    the distinct roots :math:`-b_j/a_j` (expressions in the parameters); ``bare`` is :math:`F`
    itself (for :func:`growth_envelope`)."""

    z: sympy.Symbol
    integrand: sympy.Expr
    bare: sympy.Expr
    switches: list
    arguments: list
    kinks: list
    outer: object = None
    """(a two-dimensional integral's inner one) the variable of the integral around it that this
    integrand depends on: its value is a function of that variable, evaluated at each of the
    outer rule's nodes (:mod:`replica.symbolic.codegen`); ``None`` otherwise."""
    nested: list = dataclasses.field(default_factory=list)
    """(a two-dimensional integral's outer one) the indices of the inner integrals, among the
    code generator's extracted ones, that depend on this integral's variable."""
    features: list = dataclasses.field(default_factory=list)
    r"""The integrand's features that may be narrow
    (:func:`~replica.symbolic.gaussian.narrow_features`): pairs :math:`(p, r)` of expressions
    in the parameters, a feature of center :math:`r/p` and width :math:`1/\sqrt p` where
    :math:`p > 0`."""


def prepare(integral: GaussianIntegral) -> Prepared:
    """The :class:`Prepared` form of one Gaussian integral."""
    f, z = integral.args
    heavisides = sorted((h for h in distinct_atoms(f, sympy.Heaviside) if h.args[0].has(z)),
                        key=sympy.default_sort_key)
    switches = [sympy.Symbol(f"switch_{j}", real=True) for j in range(len(heavisides))]
    bare = f.xreplace(dict(zip(heavisides, switches)))
    kinks: list = []
    for h in heavisides:
        a, b = _linear(h.args[0], z)
        if a == 0:
            continue
        k = sympy.cancel(-b / a)
        if not any(sympy.cancel(k - other) == 0 for other in kinks):
            kinks.append(k)
    return Prepared(z=z, integrand=bare * density(z), bare=bare, switches=switches,
                    arguments=[h.args[0] for h in heavisides], kinks=kinks,
                    features=narrow_features(bare, z, switches))


_STEPS = ("erf", "erfc", "log_erfc", "erfcx", "rerfcx")
"""The functions (their names, here or in SymPy) whose atoms of an argument :math:`az + b` are
steps of width :math:`1/|a|` (:func:`~replica.symbolic.gaussian.narrow_features`)."""


def narrow_features(bare, z, switches=()) -> list:
    r"""The features of the integrand :math:`F(z)\varphi(z)` that become narrow for some
    values of the parameters, where a quadrature rule whose nodes do not resolve them sees
    nothing (a peak between two nodes): pairs :math:`(p, r)` of expressions free of :math:`z`,
    the feature centered at :math:`c = r/p` with width :math:`w = 1/\sqrt p` (narrow where
    :math:`p` is large; no feature where :math:`p \le 0`).

    * an atom :math:`e^{a z^2 + b z + c_0}` of :math:`F`, with :math:`a` not 0: with the
      density's :math:`-z^2/2` the Gaussian :math:`e^{a' z^2 + b z}`, :math:`a' = a - 1/2`,
      of center :math:`-b/(2a')` and width :math:`1/\sqrt{-2a'}`: :math:`p = -2a'`,
      :math:`r = b`;
    * an atom :math:`\operatorname{erf}(a z + b)` (likewise erfc, log_erfc, erfcx, rerfcx), a
      step of center :math:`-b/a` and width :math:`1/|a|`: :math:`p = a^2`, :math:`r = -ab`.

    Atoms whose width is a number not below 1/2 are left out (never narrow), as are those
    whose argument is not such a polynomial, and repeats; so are those whose center or width
    holds one of the ``switches`` (the Heaviside switches of :func:`prepare`, which are not
    arguments of the generated function that evaluates the features, and whose value changes
    between the pieces the features would cut: erfc of an absolute value)."""
    out: list = []
    switches = tuple(switches)

    def add(p, r):
        p, r = sympy.cancel(p), sympy.cancel(r)
        if switches and (p.has(*switches) or r.has(*switches)):
            return
        if p.is_number and not (p.is_extended_real and p > 4):
            return
        if not any(sympy.cancel(p - p0) == 0 and sympy.cancel(r - r0) == 0 for p0, r0 in out):
            out.append((p, r))

    atoms = sorted((e for e in distinct_atoms(bare, sympy.exp) if e.args[0].has(z)),
                   key=sympy.default_sort_key)
    for e in atoms:
        u = e.args[0]
        a = sympy.diff(u, z, 2) / 2
        if a.has(z) or a == 0:
            continue
        b = sympy.cancel(sympy.diff(u, z) - 2 * a * z)
        if b.has(z):
            continue
        add(1 - 2 * a, b)
    steps = set()
    for name in _STEPS:
        f = globals()[name] if name in globals() else getattr(sympy, name)
        steps |= {e for e in distinct_atoms(bare, f) if e.args[0].has(z)}
    for e in sorted(steps, key=sympy.default_sort_key):
        try:
            a, b = _linear(e.args[0], z)
        except GaussianIntegralError:
            continue
        add(a**2, -a * b)
    return out


# ---------------------------------------------------------------------------------------------
# Growth envelopes: the tails of the ball-arithmetic evaluation
# ---------------------------------------------------------------------------------------------
_BOUNDED = {sympy.tanh: 1, sympy.erf: 1, sympy.erfc: 2, sympy.sin: 1, sympy.cos: 1,
            sympy.atan: sympy.pi / 2}


def envelope(expr, z, switches=()):
    r"""``(C, B, P)`` with :math:`|F(z)| \le C\,e^{B|z|}\,|z|^P` for every real :math:`|z| \ge 1`:
    :func:`growth_envelope` where its quadratic coefficient is zero (raises
    :class:`EnvelopeError` where the integrand needs one)."""
    C, B, P, Q, conditions = growth_envelope(expr, z, switches)
    if Q != 0:
        raise EnvelopeError(f"a growth envelope with a quadratic exponent ({Q}) {z}**2")
    if conditions:
        raise EnvelopeError(f"a growth envelope valid under conditions ({conditions})")
    return C, B, P


def growth_envelope(expr, z, switches=()):
    r"""``(C, B, P, Q, conditions)`` with

    .. math::  |F(z)| \le C\,e^{Q z^2 + B|z|}\,|z|^P

    for every real :math:`|z| \ge 1` and every value of the ``switches`` in :math:`\{0, 1\}`
    (``C``, ``B`` and ``Q`` expressions in the parameters -- ``Q`` may be negative: a factor
    decaying like a Gaussian --, ``P`` a non-negative rational), wherever the ``conditions``
    hold: a list of ``(expression, kind)`` in the parameters, ``kind`` one of ``"positive"``
    (:math:`> 0`), ``"nonnegative"`` (:math:`\ge 0`) and ``"real"`` (a real number), which the
    evaluator checks on the whole box (:mod:`replica.symbolic.codegen`: in real ball
    arithmetic, where a value that is not real is NaN, a finite ball). Derived by structural
    induction:

    * a constant :math:`c` (free of :math:`z`) or a switch: :math:`(|c|, 0, 0, 0)`,
      :math:`(1, 0, 0, 0)`; :math:`z`: :math:`(1, 0, 1, 0)`;
    * a sum: the sum of the :math:`C`, the largest :math:`B`, :math:`P` and :math:`Q` (for
      :math:`|z| \ge 1` the bound increases with each of them, as :math:`z^2, |z| \ge 0` and
      :math:`|z|^P` increases with :math:`P`); a product: the product of the :math:`C`, the sums
      of :math:`B`, :math:`P` and :math:`Q`; a power :math:`g^e` with :math:`e > 0` rational:
      :math:`(C^e, eB, eP, eQ)`;
    * a power :math:`g^e` with :math:`e` rational of any sign whose base is a sum of terms that
      share one exponential factor, :math:`g = e^{A}R` with :math:`R` free of :math:`z`
      (:func:`exponential_factor`): :math:`|g^e| = e^{eA}|R|^e` (for real :math:`A` and real
      :math:`e`, :math:`|w^e| = |w|^e` on the principal branch), the envelope of
      :math:`e^{eA}` times the constant :math:`|R|^e` (infinite, so refused on the box, where
      :math:`R` may vanish and :math:`e < 0`); e.g.
      :math:`1/(m e^{A} - e^{A}) = e^{-A}/(m - 1)`;
    * a power :math:`g^e` with :math:`e < 0` rational whose base is a constant :math:`L` plus
      terms that are non-negative for every real :math:`z` (:func:`nonnegative_terms`: a
      constant :math:`k \ge 0` times even powers of real functions of real linear arguments):
      :math:`g \ge L`, so :math:`|g^e| \le L^e` under the condition :math:`L > 0` (and those
      of the terms); e.g. :math:`1/(1 + 2\sinh^2 u) \le 1`;
    * :math:`e^{u}` for :math:`u = a z^2 + b z + c` (a polynomial of degree at most two in
      :math:`z`, real coefficients): :math:`(e^{|c|}, |b|, 0, a)`, as
      :math:`e^{u} \le e^{a z^2}e^{|b||z|}e^{|c|}`; :math:`\cosh u`, :math:`\sinh u`:
      :math:`(e^{|c|}, |b|, 0, |a|)`, as :math:`|\cosh u|, |\sinh u| \le e^{|u|}`;
      :math:`\tanh`, :math:`\operatorname{erf}`, :math:`\sin`, :math:`\cos`: 1;
      :math:`\operatorname{erfc}`: 2; :math:`\arctan`: :math:`\pi/2`;
    * :math:`\log(k\cosh u)` and :math:`\log(k + e^{u})` with :math:`k > 0` a constant and
      :math:`u = a z + b`: :math:`|\log(k\cosh u)| \le |\log k| + |u|` (as
      :math:`1 \le \cosh u \le e^{|u|}`) and :math:`|\log(k + e^u)| \le |\log k| + \log 2 + |u|`
      (the larger of :math:`k` and :math:`e^u` is at most their sum, which is at most twice it),
      and :math:`|u| \le (|a| + |b|)|z|` for :math:`|z| \ge 1`;
    * :math:`\operatorname{erfc}(y)^{-k}`, :math:`k > 0` rational, :math:`y = a z + b`: for
      :math:`y \ge 0`, :math:`1/\operatorname{erfc}y < \tfrac{\sqrt\pi}{2}(y + \sqrt{y^2 + 2})
      e^{y^2}` (the bound of Abramowitz and Stegun 7.1.13 quoted below), for :math:`y < 0`,
      :math:`1/\operatorname{erfc}y < 1`; so :math:`1/\operatorname{erfc}y \le
      \tfrac{\sqrt\pi}{2}(2|y| + \sqrt2)\,e^{y^2}` for every real :math:`y`, and with
      :math:`|y| \le (|a| + |b|)|z|`, :math:`\sqrt 2 \le \sqrt2|z|`,
      :math:`y^2 \le a^2z^2 + 2|ab||z| + b^2`: the envelope
      :math:`(\tfrac{\sqrt\pi}{2}(2|a| + 2|b| + \sqrt2)e^{b^2}, 2|ab|, 1, a^2)`, raised to the
      power :math:`k`;
    * :math:`\operatorname{log1p}(x) = \log(1 + x)` with :math:`x = L + {}` non-negative terms
      (as above) and :math:`L \ge 0`: :math:`0 \le \log(1 + x) \le \log(1 + C_x) + Q_x^+z^2
      + B_x|z| + P_x\log|z| \le (\log(1 + C_x) + Q_x^+ + B_x + P_x)\,z^2` for
      :math:`|z| \ge 1` (:math:`(C_x, B_x, P_x, Q_x)` the envelope of :math:`x`,
      :math:`Q^+ = \max(Q, 0)`; :math:`1 + CX \le (1 + C)X` for :math:`X \ge 1`, and
      :math:`\log|z| \le |z| \le z^2`);
    * :math:`\log(k\operatorname{erfc} y)` with :math:`k` a constant and :math:`y = a z + b`:
      :math:`|\log(k\operatorname{erfc}y)| \le |\log|k|| + \pi' + y^2 + \sqrt\pi|y|
      + \sqrt{\pi/2} \le (|\log|k|| + \pi' + K)\,z^2`, :math:`K = (|a| + |b|)^2
      + \sqrt\pi(|a| + |b|) + \sqrt{\pi/2}`, :math:`\pi' = 0` where :math:`k > 0` is known and
      :math:`\pi` (the imaginary part of the logarithm of a negative number) otherwise. For
      :math:`y \ge 0`, :math:`\operatorname{erfc} y > \frac{2}{\sqrt\pi}\,
      e^{-y^2}/(y + \sqrt{y^2 + 2})` (Abramowitz and Stegun 7.1.13) and :math:`\log w < w`, so
      :math:`0 \le -\log\operatorname{erfc}y < y^2 + \tfrac{\sqrt\pi}{2}(y + \sqrt{y^2 + 2})
      \le y^2 + \sqrt\pi y + \sqrt{\pi/2}`; for :math:`y < 0`,
      :math:`1 < \operatorname{erfc}y < 2` and :math:`0 < \log\operatorname{erfc}y < \log 2
      < \sqrt{\pi/2}`; and :math:`|y| \le (|a| + |b|)|z| \le (|a| + |b|)z^2` for
      :math:`|z| \ge 1`. The same for :class:`log_erfc`.

    Anything else (a reciprocal of another function of :math:`z`, a logarithm of another form,
    an exponential of an argument that is not a polynomial of degree at most two) raises
    :class:`EnvelopeError` naming it. :func:`tail_bound` integrates the envelope against the
    Gaussian weight: it needs :math:`Q < 1/2` over the box."""
    switches = set(switches)
    zero, one = sympy.Integer(0), sympy.Integer(1)
    conditions: list = []

    def require(found):
        for cond in found:
            if cond not in conditions:
                conditions.append(cond)

    def rec(e):
        if not e.has(z) and not (e.free_symbols & switches):
            return sympy.Abs(e), zero, zero, zero
        if e in switches:
            return one, zero, zero, zero
        if e == z:
            return one, zero, one, zero
        if _is_root(e):
            bound, conds = _root_growth(e, z, switches)
            require(conds)
            return bound, zero, one, zero
        if isinstance(e, sympy.Add):
            parts = [rec(a) for a in e.args]
            return (sympy.Add(*[p[0] for p in parts]), sympy.Max(*[p[1] for p in parts]),
                    max(p[2] for p in parts), sympy.Max(*[p[3] for p in parts]))
        if isinstance(e, sympy.Mul):
            parts = [rec(a) for a in e.args]
            return (sympy.Mul(*[p[0] for p in parts]), sympy.Add(*[p[1] for p in parts]),
                    sum(p[2] for p in parts), sympy.Add(*[p[3] for p in parts]))
        if isinstance(e, sympy.Pow):
            base, ex = e.args
            if ex.has(z) or ex.free_symbols & switches:
                raise EnvelopeError(f"a power with a variable exponent ({e})")
            if isinstance(base, sympy.exp) or base == sympy.E:
                return rec(sympy.exp(ex * (base.args[0] if isinstance(base, sympy.exp) else 1)))
            if ex.is_Rational:
                shared = exponential_factor(base, z, switches)
                if shared is not None:
                    A, R = shared
                    c, b, p, q = rec(sympy.exp(ex * A))
                    return c * sympy.Abs(R) ** ex, b, p, q
            if ex.is_Rational and ex < 0 and isinstance(base, sympy.erfc):
                c, b, p, q = _reciprocal_erfc_envelope(base.args[0], z, e)
                return c ** -ex, -ex * b, -ex * p, -ex * q
            if ex.is_Rational and ex < 0:
                split = nonnegative_terms(base, z, switches)
                if split is not None:
                    L, found = split
                    require(found + [(L, "positive")])
                    return L ** ex, zero, zero, zero
            if ex.is_Rational and ex < 0 and _through_one_root(base, z) is not None:
                c, b, conds = _reciprocal_through_root(base, z, switches, e)
                require(conds)
                return c ** -ex, -ex * b, zero, zero
            if not (ex.is_Rational and ex > 0):
                raise EnvelopeError(f"a reciprocal or non-rational power of a function of {z} "
                                    f"({e})")
            c, b, p, q = rec(base)
            return c**ex, ex * b, ex * p, ex * q
        if isinstance(e, sympy.exp):
            a2, b, c, conds = _quadratic_through_roots(e.args[0], z, switches, e)
            require(conds)
            return sympy.exp(c), b, zero, a2
        if isinstance(e, (sympy.cosh, sympy.sinh)):
            a2, b, c, conds = _quadratic_through_roots(e.args[0], z, switches, e)
            require(conds)
            return sympy.exp(c), b, zero, sympy.Abs(a2)
        for fn, bound in _BOUNDED.items():
            if isinstance(e, fn):
                return sympy.sympify(bound), zero, zero, zero
        if isinstance(e, sympy.log):
            C, B, P, conds = _log_envelope(e.args[0], z, e, switches)
            require(conds)
            return C, B, P, zero
        if isinstance(e, log_erfc):
            return _log_erfc_envelope(one, e.args[0], z, e) + (zero,)
        if isinstance(e, log1p):
            split = nonnegative_terms(e.args[0], z, switches)
            if split is None:
                raise EnvelopeError(f"no growth bound for {e} (supported: log1p of a constant "
                                    "plus non-negative terms)")
            L, found = split
            require(found + [(L, "nonnegative")])
            c, b, p, q = rec(e.args[0])
            return (sympy.log(1 + c) + sympy.Max(q, 0) + b + p, zero, sympy.Integer(2), zero)
        raise EnvelopeError(f"no growth bound for {e}")

    C, B, P, Q = rec(sympy.sympify(expr))
    return C, B, P, Q, conditions


_REAL_FUNCTIONS = (sympy.exp, sympy.sinh, sympy.cosh, sympy.tanh, sympy.erf, sympy.erfc,
                   sympy.sin, sympy.cos, sympy.atan)
"""Functions real at real arguments (:func:`nonnegative_terms`)."""


def nonnegative_terms(expr, z, switches=()):
    r"""``(L, conditions)`` where ``expr`` :math:`= L + \sum_i k_i\prod_j f_{ij}^{2n_{ij}}`,
    :math:`L` its part free of :math:`z`, each other term a constant :math:`k_i` times even
    powers of :math:`z` or of functions of :data:`_REAL_FUNCTIONS` of arguments
    :math:`a z + b`: each such term is :math:`\ge 0` for every real :math:`z` under the
    ``conditions`` :math:`k_i \ge 0` (omitted where :math:`k_i` is a positive number) and
    :math:`a, b` real; so ``expr`` :math:`\ge L`. ``None`` for another shape."""
    switches = set(switches)
    L, rest = expr.as_independent(z, as_Add=True)
    if L.free_symbols & switches:
        return None
    conditions: list = []

    def need(cond):
        if cond not in conditions:
            conditions.append(cond)

    for term in sympy.Add.make_args(rest):
        k, dep = term.as_independent(z, as_Add=False)
        if k.free_symbols & switches:
            return None
        if not (k.is_number and k.is_positive):
            need((k, "nonnegative"))
        for f in sympy.Mul.make_args(dep):
            base, ex = f.as_base_exp()
            if not (ex.is_Integer and ex.is_even and ex > 0):
                return None
            if base == z:
                continue
            if not (isinstance(base, _REAL_FUNCTIONS) and len(base.args) == 1):
                return None
            coefficients = _real_argument_coefficients(base.args[0], z)
            if coefficients is None:
                return None
            if any(c.free_symbols & switches for c in coefficients):
                return None
            for coefficient in coefficients:
                if not (coefficient.is_number and coefficient.is_real):
                    need((coefficient, "real"))
    return L, conditions


def exponential_factor(expr, z, switches=()):
    r"""``(A, R)`` with ``expr`` :math:`= e^{A}R`, :math:`R` free of :math:`z` (and of the
    switches), where ``expr`` is a sum of terms each a constant times exponentials whose
    exponents add up to the same :math:`A` (their difference expands to zero); ``None``
    otherwise. Then :math:`R` is the sum of the constants: the same function, factored."""
    switches = set(switches)
    exponents, constants = [], []
    for term in sympy.Add.make_args(expr):
        powers, rest = [], []
        for f in sympy.Mul.make_args(term):
            a = _exponent(f)
            if a is not None and a.has(z):
                powers.append(a)
            else:
                rest.append(f)
        constant = sympy.Mul(*rest)
        if not powers or constant.has(z) or constant.free_symbols & switches:
            return None
        exponents.append(sympy.Add(*powers))
        constants.append(constant)
    A = exponents[0]
    if any(sympy.expand(a - A) != 0 for a in exponents[1:]):
        return None
    return A, sympy.Add(*constants)


def _quadratic_or_fail(u, z, where):
    """``(a, b, c)`` with ``u = a z**2 + b z + c`` (free of ``z``); raises
    :class:`EnvelopeError` where ``u`` is not such a polynomial."""
    a = sympy.diff(u, z, 2) / 2
    b = sympy.cancel(sympy.diff(u, z) - 2 * a * z)
    if a.has(z) or b.has(z):
        raise EnvelopeError(f"an argument that is not a polynomial of degree at most two in "
                            f"{z} in {where}")
    c = sympy.cancel(u - a * z**2 - b * z)
    if c.has(z):  # pragma: no cover - u - a z^2 - b z is free of z when u'' is
        raise EnvelopeError(f"an argument that is not a polynomial of degree at most two in "
                            f"{z} in {where}")
    return a, b, c


def _linear_or_fail(u, z, where):
    try:
        a, b = _linear(u, z)
    except GaussianIntegralError:
        raise EnvelopeError(f"a non-linear argument in {where}") from None
    return a, b


_SQRT_PI = sympy.sqrt(sympy.pi)


def _reciprocal_erfc_envelope(y, z, where):
    r"""``(C, B, P, Q)`` of :math:`1/\operatorname{erfc}y` for :math:`y` linear in :math:`z`
    (the bound of :func:`growth_envelope`)."""
    a, b = _linear_or_fail(y, z, where)
    C = _SQRT_PI / 2 * (2 * sympy.Abs(a) + 2 * sympy.Abs(b) + sympy.sqrt(2)) * sympy.exp(b**2)
    return C, 2 * sympy.Abs(a * b), sympy.Integer(1), a**2


def _log_erfc_envelope(const, y, z, where):
    r"""``(C, B, P)`` of :math:`\log(k\operatorname{erfc}y)` for a constant :math:`k` and
    :math:`y` linear in :math:`z` (the bound of :func:`growth_envelope`)."""
    a, b = _linear_or_fail(y, z, where)
    s = sympy.Abs(a) + sympy.Abs(b)
    K = s**2 + _SQRT_PI * s + sympy.sqrt(sympy.pi / 2)
    branch = 0 if const.is_positive else sympy.pi
    return sympy.Abs(sympy.log(sympy.Abs(const))) + branch + K, sympy.Integer(0), \
        sympy.Integer(2)


def _log_envelope(arg, z, where, switches=()):
    r"""``(C, B, P, conditions)`` of the logarithms :func:`growth_envelope` bounds: for
    :math:`\log(k\cosh u)` and :math:`\log(k + e^u)`, :math:`u` linear in :math:`z` and in
    implicit roots (:func:`_quadratic_through_roots` with no :math:`z^2` term:
    :math:`|u| \le b|z| + c \le (b + c)|z|` for :math:`|z| \ge 1`)."""
    zero, one = sympy.Integer(0), sympy.Integer(1)
    const, dep = arg.as_independent(z, as_Add=False)
    if isinstance(dep, sympy.cosh) and const.is_positive is not False:
        b, c, conds = _linear_through_roots(dep.args[0], z, switches, where)
        return sympy.Abs(sympy.log(const)) + b + c, zero, one, conds
    if isinstance(dep, sympy.erfc):
        return _log_erfc_envelope(const, dep.args[0], z, where) + ([],)
    const, dep = arg.as_independent(z, as_Add=True)
    if isinstance(dep, sympy.exp) and const.is_positive:
        b, c, conds = _linear_through_roots(dep.args[0], z, switches, where)
        return (sympy.Abs(sympy.log(const)) + sympy.log(2) + b + c, zero, one, conds)
    raise EnvelopeError(f"no growth bound for the logarithm {where} (supported: log(k cosh u), "
                        "log(k + exp u) with u linear in the integration variable and in "
                        "implicit roots, log(k erfc u))")


# ---------------------------------------------------------------------------------------------
# Growth through implicit roots (the proximal maps of losses without a closed form)
# ---------------------------------------------------------------------------------------------
def _is_root(e) -> bool:
    """Whether ``e`` is a call of a function declared by
    :func:`replica.symbolic.implicit.implicit_root` (a subclass of its ``ImplicitRoot``, found
    by name in the class's MRO: importing that module here would close an import cycle through
    the code generator)."""
    return any(c.__name__ == "ImplicitRoot" and c.__module__ == "replica.symbolic.implicit"
               for c in type(e).__mro__)


_ROOT_OFFSETS: dict = {}
"""The offset bounds of :func:`root_offset`, by the declaration's content digest."""


def root_offset(root_class):
    r"""``(j, M, conditions)``, derived from the declared equation of an implicit root
    :math:`p = R(a_1, \dots, a_k)` (:func:`replica.symbolic.implicit.implicit_root`): every
    root :math:`p` of :math:`F(p; a) = 0` satisfies :math:`|p - a_j| \le M` wherever the
    ``conditions`` hold (expressions in the formal variables, kinds as in
    :func:`growth_envelope`).

    *Derivation.* Where the equation reads :math:`F = p - a_j + G(p; a)` with :math:`G` free of
    :math:`a_j` (the proximal map of a loss :math:`\ell`, :math:`G = V\ell'(p)`), a root has
    :math:`p - a_j = -G(p; a)`, so :math:`|p - a_j| \le \sup_{t \in \mathbb R}|G(t; a)|`:
    :math:`M` is that supremum bounded by :func:`exp_rational_bound` (:math:`G` a rational
    function of exponentials :math:`e^{kt}` with a denominator whose coefficients are
    non-negative, the growth rate :math:`\lambda` found zero: for the logistic loss,
    :math:`G = -V/(1 + e^{t})` and :math:`M = |V|`) or, for another form, by
    :func:`growth_envelope` in :math:`t` where its exponents :math:`B`, :math:`Q` and power
    :math:`P` are all zero (each rule that gives zero exponents -- constants, bounded
    functions, :math:`e^{c}`, reciprocals of a positive constant plus non-negative terms,
    sums, products and positive powers of such -- bounds its function for every real
    :math:`t`, not only :math:`|t| \ge 1`). No convexity is used. Any other equation (no
    variable entering as :math:`p - a_j`, or :math:`G` not bounded by these rules) raises
    :class:`EnvelopeError` naming the function: no growth is assumed for a root."""
    hit = _ROOT_OFFSETS.get(root_class.digest)
    if hit is not None:
        return hit
    F, p = root_class.equation, root_class.unknown
    reasons = []
    for j, a in enumerate(root_class.variables):
        G = F - (p - a)
        if G.has(a):
            continue
        try:
            C, lam, conditions = exp_rational_bound(G, p, G)
            if lam != 0:
                raise EnvelopeError(f"{G} grows like exp({lam}|{p}|)")
        except EnvelopeError as exc:
            reasons.append(str(exc))
            try:
                C, B, P, Q, conditions = growth_envelope(G, p)
            except EnvelopeError as exc2:
                reasons.append(str(exc2))
                continue
            if not (B == 0 and Q == 0 and P == 0):
                reasons.append(f"{G} is not bounded by the growth rules")
                continue
        _ROOT_OFFSETS[root_class.digest] = out = (j, C, conditions)
        return out
    raise EnvelopeError(f"no growth bound for the implicit root {root_class.__name__}: its "
                        f"equation {F} = 0 is not {p} - a + G with G bounded and free of one "
                        f"argument a" + (f" ({'; '.join(reasons)})" if reasons else ""))


def _root_parts(root, z, switches):
    r"""``(alpha, beta, M, conditions)`` with :math:`|R| \le |\alpha||z| + |\beta| + M` for
    every real :math:`z`: the argument :math:`a_j = \alpha z + \beta` of :func:`root_offset`
    linear in :math:`z`, the others free of it (and of the switches), and
    :math:`|R - a_j| \le M` at the call's arguments. The conditions include that the arguments'
    coefficients are real (the root of a real equation at real arguments is real)."""
    j, M, conditions = root_offset(root.func)
    mapping = dict(zip(root.func.variables, root.args))
    others = [a for k, a in enumerate(root.args) if k != j]
    if any(a.has(z) or a.free_symbols & switches for a in others):
        raise EnvelopeError(f"an implicit root whose arguments other than the {j + 1}-th depend "
                            f"on {z} ({root})")
    alpha, beta = _linear_or_fail(root.args[j], z, root)
    if (alpha.free_symbols | beta.free_symbols) & switches:
        raise EnvelopeError(f"an implicit root whose argument depends on a switch ({root})")
    conds = [(c.xreplace(mapping), kind) for c, kind in conditions]
    for v in [alpha, beta] + others:
        if not (v.is_number and v.is_real):
            conds.append((v, "real"))
    return alpha, beta, sympy.sympify(M).xreplace(mapping), conds


def _root_growth(root, z, switches):
    r"""``(C, conditions)``: :math:`|R| \le |\alpha||z| + |\beta| + M \le C|z|` for
    :math:`|z| \ge 1` (:func:`_root_parts`), :math:`C = |\alpha| + |\beta| + M`."""
    alpha, beta, M, conds = _root_parts(root, z, switches)
    return sympy.Abs(alpha) + sympy.Abs(beta) + M, conds


def _affine_in_roots(u, z, switches, where):
    r"""``(rest, [(c_i, R_i)])`` with :math:`u = \mathrm{rest} + \sum_i c_i R_i`, the
    :math:`R_i` the implicit roots in :math:`u` that depend on :math:`z`, the :math:`c_i` free
    of :math:`z`, of the switches and of every root; raises where :math:`u` is not affine in
    them."""
    roots = sorted({r for r in sympy.preorder_traversal(u) if _is_root(r) and r.has(z)},
                   key=sympy.default_sort_key)
    if not roots:
        return u, []
    ts = [sympy.Dummy(f"root{i}", real=True) for i in range(len(roots))]
    u_t = u.xreplace(dict(zip(roots, ts)))
    pairs = []
    for t, r in zip(ts, roots):
        c = sympy.diff(u_t, t)
        if c.has(z) or any(c.has(s) for s in ts) or c.free_symbols & switches:
            raise EnvelopeError(f"an argument that is not linear in the implicit root {r} in "
                                f"{where}")
        pairs.append((c, r))
    rest = sympy.expand(u_t - sum(c * t for (c, _), t in zip(pairs, ts)))
    if any(rest.has(t) for t in ts):  # pragma: no cover - linear in each t, so free of them
        raise EnvelopeError(f"an argument that is not affine in the implicit roots in {where}")
    return rest, pairs


def _quadratic_through_roots(u, z, switches, where):
    r"""``(a, b, c, conditions)`` with :math:`u \le |u - a z^2| + a z^2` and
    :math:`|u - a z^2| \le b|z| + c` for every real :math:`z`, where
    :math:`u = a z^2 + a_1 z + a_0 + \sum_i c_i R_i` (:func:`_affine_in_roots`, the rest a
    polynomial of degree at most two): with :math:`|R_i| \le |\alpha_i||z| + |\beta_i| + M_i`
    (:func:`_root_parts`), :math:`b = |a_1| + \sum_i|c_i||\alpha_i|` and
    :math:`c = |a_0| + \sum_i|c_i|(|\beta_i| + M_i)`; so :math:`e^u \le e^{c}e^{b|z|}e^{az^2}`
    and :math:`|\cosh u|, |\sinh u| \le e^{|u|} \le e^{c}e^{b|z|}e^{|a|z^2}`."""
    rest, pairs = _affine_in_roots(u, z, switches, where)
    a2, a1, a0 = _quadratic_or_fail(rest, z, where)
    b, c, conds = sympy.Abs(a1), sympy.Abs(a0), []
    for coefficient, root in pairs:
        alpha, beta, M, found = _root_parts(root, z, switches)
        b += sympy.Abs(coefficient) * sympy.Abs(alpha)
        c += sympy.Abs(coefficient) * (sympy.Abs(beta) + M)
        conds += [f for f in found if f not in conds]
        if not (coefficient.is_number and coefficient.is_real):
            conds.append((coefficient, "real"))
    return a2, b, c, conds


def _linear_through_roots(u, z, switches, where):
    r"""``(b, c, conditions)`` of :func:`_quadratic_through_roots` for an argument without a
    :math:`z^2` term: :math:`|u| \le b|z| + c`."""
    a2, b, c, conds = _quadratic_through_roots(u, z, switches, where)
    if a2 != 0:
        raise EnvelopeError(f"a non-linear argument in {where}")
    return b, c, conds


def _real_argument_coefficients(u, z):
    r"""The coefficients :math:`a, b, c_i` and the roots' argument coefficients of
    :math:`u = a z + b + \sum_i c_i R_i` (real where they are: then :math:`u` is real at real
    :math:`z`), or ``None`` for another form (:func:`nonnegative_terms`)."""
    try:
        rest, pairs = _affine_in_roots(u, z, set(), u)
        a, b = _linear(rest, z)
        out = [a, b]
        for c, root in pairs:
            alpha, beta, _, _ = _root_parts(root, z, set())
            out += [c, alpha, beta] + [x for x in root.args if not x.has(z)]
    except (GaussianIntegralError, EnvelopeError):
        return None
    return out


def _through_one_root(base, z):
    """``(R, t, base_t)`` where ``base`` depends on ``z`` only through one implicit root ``R``
    (``base_t`` is ``base`` with ``R`` replaced by the real symbol ``t``); ``None`` otherwise."""
    roots = {r for r in sympy.preorder_traversal(base) if _is_root(r) and r.has(z)}
    if len(roots) != 1:
        return None
    (root,) = roots
    t = sympy.Dummy("t", real=True)
    base_t = base.xreplace({root: t})
    if base_t.has(z):
        return None
    return root, t, base_t


def _reciprocal_through_root(base, z, switches, where):
    r"""``(C, B, conditions)``: :math:`|1/g(R)| \le C e^{B|z|}` for every real :math:`z`, where
    the base :math:`g` depends on :math:`z` only through one implicit root :math:`R`:
    :func:`exp_rational_bound` of :math:`1/g(t)` gives :math:`C_0 e^{\lambda|t|}`, and
    :math:`|R| \le |\alpha||z| + |\beta| + M` (:func:`_root_parts`), so
    :math:`C = C_0 e^{\lambda(|\beta| + M)}`, :math:`B = \lambda|\alpha|`. E.g. the slope of
    the logistic proximal map, :math:`1 + V\ell''(p) = (e^{2p} + (2 + V)e^{p} + 1)/(1 +
    e^{p})^2`: its reciprocal is bounded by :math:`\max(1, 1)` times the numerator's
    coefficients' sum, under the condition :math:`2 + V \ge 0` (:math:`\ell'' \ge 0` is not
    assumed: it is this checked sign of the denominator's coefficients)."""
    root, t, base_t = _through_one_root(base, z)
    C0, lam, conds = exp_rational_bound(1 / base_t, t, where)
    if any(c.free_symbols & switches for c, _ in conds) or C0.free_symbols & switches:
        raise EnvelopeError(f"a reciprocal whose bound depends on a switch ({where})")
    alpha, beta, M, found = _root_parts(root, z, switches)
    conds += [f for f in found if f not in conds]
    return C0 * sympy.exp(lam * (sympy.Abs(beta) + M)), lam * sympy.Abs(alpha), conds


def exp_rational_bound(expr, t, where=None):
    r"""``(C, lam, conditions)`` with :math:`|f(t)| \le C e^{\lambda|t|}` for every real
    :math:`t`, where :math:`f` = ``expr`` is a rational function of exponentials
    :math:`e^{kt}`, :math:`k` integers (its other symbols parameters), wherever the
    ``conditions`` hold (kinds as in :func:`growth_envelope`).

    With :math:`s = e^t > 0`, :math:`f = N(s)/D(s)` (SymPy's ``cancel``, the sign chosen so
    that :math:`D`'s leading coefficient is not written with a minus sign),
    :math:`D = s^j\tilde D(s)`, :math:`\tilde D = \sum_{i=0}^{e}d_is^i`. *Conditions*:
    :math:`d_0 > 0`, :math:`d_e > 0`, every other :math:`d_i \ge 0`. Then
    :math:`\tilde D(s) \ge d_0 + d_es^e \ge \min(d_0, d_e)\max(1, s^e)`, and for each term
    :math:`n_ks^k` of :math:`N`, with :math:`m = k - j`,

    .. math::  \frac{|n_k|s^{m}}{\tilde D(s)} \le \frac{|n_k|}{\min(d_0, d_e)}\,
               \frac{s^{m}}{\max(1, s^{e})} \le \frac{|n_k|}{\min(d_0, d_e)}\,
               e^{\lambda_k|t|},\qquad \lambda_k = \max(m - e, -m, 0)

    (:math:`s^{m - e}` for :math:`t \ge 0`, :math:`s^{m}` for :math:`t \le 0`). So
    :math:`C = \max(1/d_0, 1/d_e)\sum_k|n_k|` and :math:`\lambda = \max_k\lambda_k`. Raises
    :class:`EnvelopeError` for another form, or where a coefficient is a number of the wrong
    sign."""
    where = expr if where is None else where
    s = sympy.Dummy("s", positive=True)

    def to_power(e):
        k = sympy.cancel(e.args[0] / t)
        if not k.is_Integer:
            raise EnvelopeError(f"an exponential exp({e.args[0]}) that is not exp(k {t}) with k "
                                f"an integer in {where}")
        return s ** k

    f = sympy.sympify(expr).replace(lambda e: isinstance(e, sympy.exp) and e.args[0].has(t),
                                    to_power)
    if f.has(t):
        raise EnvelopeError(f"no growth bound for {where} (not a rational function of "
                            f"exponentials of the implicit root)")
    num, den = sympy.fraction(sympy.cancel(sympy.together(f)))
    try:
        N, D = sympy.Poly(num, s), sympy.Poly(den, s)
    except sympy.PolynomialError:
        raise EnvelopeError(f"no growth bound for {where} (not a rational function of "
                            f"exponentials of the implicit root)") from None
    d = D.all_coeffs()[::-1]  # ascending powers
    if d[-1].could_extract_minus_sign():
        N, d = -N, [-c for c in d]
    j = next(i for i, c in enumerate(d) if c != 0)
    d = d[j:]
    e = len(d) - 1
    conditions: list = []
    for i, c in enumerate(d):
        kind = "positive" if i in (0, e) else "nonnegative"
        if c.is_number:
            if not (c > 0 if kind == "positive" else c >= 0):
                raise EnvelopeError(f"no growth bound for {where}: its denominator in "
                                    f"exp({t}) has a coefficient {c} of the wrong sign")
        elif not (c.is_positive or (kind == "nonnegative" and c.is_nonnegative)):
            if (c, kind) not in conditions:
                conditions.append((c, kind))
    scale = 1 / d[0] if e == 0 else sympy.Max(1 / d[0], 1 / d[e])
    total, lam = sympy.Integer(0), 0
    for (k,), n in N.terms():
        m = k - j
        lam = max(lam, m - e, -m)
        total += sympy.Abs(n)
    return scale * total, lam, conditions


def tail_bound(C, B, P, T, Q=None):
    r"""An upper bound (a python-flint ``arb`` whose value is an upper bound) of
    :math:`\int_{|z|>T} C e^{Qz^2 + B|z|}|z|^P \varphi(z)\,dz` (:func:`growth_envelope`) for
    :math:`T \ge 1`, :math:`Q < 1/2` and :math:`s = (1 - 2Q)T - B - P/T > 0`: with
    :math:`g(z) = P\log z + Bz - (1/2 - Q)z^2`, concave, :math:`g'(z) = P/z + B - (1 - 2Q)z
    \le -s` for :math:`z \ge T`, so :math:`g(z) \le g(T) - s(z - T)` and each tail is at most
    :math:`C e^{g(T)}/(s\sqrt{2\pi})`; both tails together twice that. ``C``, ``B``, ``Q`` are
    balls (their upper bounds are used: the bound increases with each; ``Q`` absent is 0),
    ``P`` a rational, ``T`` an exact ball."""
    from flint import arb

    Cu, Bu = arb(C.abs_upper()), arb(B.upper())
    Qu = arb(0) if Q is None else arb(Q.upper())
    if not Qu < arb(1) / 2:
        raise EnvelopeError("the quadratic coefficient of the integrand's growth envelope is "
                            f"not below 1/2 on the box (up to {Qu.str(5, radius=False)}): "
                            "its tails are not dominated by the Gaussian weight")
    Pb = arb(int(P.p)) / int(P.q) if hasattr(P, "q") else arb(P)  # a rational: p/q
    width = 1 - 2 * Qu  # twice the net Gaussian decay rate 1/2 - Q, positive
    s = width * T - Bu - Pb / T
    if not s > 0:
        raise EnvelopeError("the truncation point is not beyond the envelope's maximum")
    g = Pb * T.log() + Bu * T - width * T * T / 2
    total = 2 * Cu * g.exp() / (s * (2 * arb.pi()).sqrt())
    return arb(total.upper())


# ---------------------------------------------------------------------------------------------
# The scaled complementary error function (float64 integrands far in the tail)
# ---------------------------------------------------------------------------------------------
class erfcx(sympy.Function):  # noqa: N801 - the name SciPy and the literature use
    r""":math:`\operatorname{erfcx}(y) = e^{y^2}\operatorname{erfc}(y)`, positive for real
    :math:`y` and :math:`\sim 1/(y\sqrt\pi)` as :math:`y \to \infty`: the factor of
    :math:`\operatorname{erfc}` that stays finite in float64 where :math:`\operatorname{erfc}`
    itself underflows (to subnormal numbers above :math:`y = 26.5`, to 0 above 27.3). Only in
    the float64 code of :func:`scaled_erfc` (printed as ``erfcx``, SciPy's
    ``scipy.special.erfcx``)."""

    def fdiff(self, argindex=1):
        y = self.args[0]
        return 2 * y * self - 2 / sympy.sqrt(sympy.pi)

    def _eval_is_extended_positive(self):
        return True if self.args[0].is_extended_real else None


class log_erfc(sympy.Function):  # noqa: N801
    r""":math:`\log\operatorname{erfc}(y)`, finite for every real :math:`y` in every backend
    (float64: :math:`\log\operatorname{erfcx}(y) - y^2` for :math:`y > 0`, where
    :math:`\operatorname{erfc}` underflows, :math:`\log\operatorname{erfc}(y)` otherwise; mpmath
    and balls: the logarithm of :math:`\operatorname{erfc}`). For a logarithm of a sum of
    Gaussian tails written in log space (the noisy ReLU channel's
    :math:`\log Z_{\rm out}`). Its derivative is :math:`-\tfrac{2}{\sqrt\pi}\,
    \operatorname{rerfcx}(y)` (:class:`rerfcx`), finite too."""

    def fdiff(self, argindex=1):
        return -2 / sympy.sqrt(sympy.pi) * rerfcx(self.args[0])


class rerfcx(sympy.Function):  # noqa: N801
    r""":math:`\operatorname{rerfcx}(y) = 1/\operatorname{erfcx}(y) = e^{-y^2}/
    \operatorname{erfc}(y)`, the inverse Mills ratio up to :math:`\sqrt\pi/2`: positive,
    :math:`\sim\sqrt\pi\,y` as :math:`y \to \infty` and :math:`\sim e^{-y^2}/2 \to 0` as
    :math:`y \to -\infty` (float64: :math:`1/\operatorname{erfcx}(y)`, 0 where
    :math:`\operatorname{erfcx}` overflows, which is the value rounded). Closed under
    differentiation, :math:`\operatorname{rerfcx}' = \tfrac{2}{\sqrt\pi}\operatorname{rerfcx}^2
    - 2y\operatorname{rerfcx}`, so every derivative of :class:`log_erfc` is finite."""

    def fdiff(self, argindex=1):
        y = self.args[0]
        return 2 / sympy.sqrt(sympy.pi) * self**2 - 2 * y * self

    def _eval_is_extended_positive(self):
        return True if self.args[0].is_extended_real else None


class softplus(sympy.Function):  # noqa: N801
    r""":math:`\operatorname{softplus}(x) = \log(1 + e^x)`, so that
    :math:`\log(e^a + e^b) = a + \operatorname{softplus}(b - a)` (float64: NumPy's
    ``logaddexp(0, x)``, finite for every finite :math:`x`). Its derivative is
    :class:`sigmoid`."""

    def fdiff(self, argindex=1):
        return sigmoid(self.args[0])


class sigmoid(sympy.Function):  # noqa: N801
    r""":math:`\sigma(x) = 1/(1 + e^{-x})`, in :math:`(0, 1)`; closed under differentiation,
    :math:`\sigma'(x) = \sigma(x)\,\sigma(-x)` (finite where :math:`e^{\pm x}`
    overflows)."""

    def fdiff(self, argindex=1):
        x = self.args[0]
        return self * sigmoid(-x)

    def _eval_is_extended_positive(self):
        return True if self.args[0].is_extended_real else None


class owens_t(sympy.Function):  # noqa: N801 - the name SciPy uses
    r"""Owen's :math:`T(h, a) = \frac1{2\pi}\int_0^a\frac{e^{-h^2(1 + x^2)/2}}{1 + x^2}\,dx`
    (the bivariate normal orthant probabilities, Owen 1956), a function of the code generator
    (:mod:`replica.symbolic.codegen`): float64 code calls SciPy's ``scipy.special.owens_t``,
    mpmath code the definition by ``mpmath.quad`` at the working precision plus guard bits
    (:func:`~replica.symbolic.codegen.owens_t_mp`); real-ball code an enclosure with rigorous
    truncation bounds (:func:`replica.symbolic.owen.owens_t_ball`), complex-ball code (the
    integrands of ``--certify``) none (an expression with it is not enclosable there). Its
    partial derivatives, differentiated under the integral sign:
    :math:`\partial_h T = -\frac{e^{-h^2/2}}{2\sqrt{2\pi}}\operatorname{erf}(ah/\sqrt2)` and
    :math:`\partial_a T = \frac{e^{-h^2(1 + a^2)/2}}{2\pi(1 + a^2)}`."""

    nargs = 2

    def fdiff(self, argindex=1):
        h, a = self.args
        if argindex == 1:
            return (-sympy.exp(-h**2 / 2) * sympy.erf(a * h / sympy.sqrt(2))
                    / (2 * sympy.sqrt(2 * sympy.pi)))
        if argindex == 2:
            return sympy.exp(-h**2 * (1 + a**2) / 2) / (2 * sympy.pi * (1 + a**2))
        raise sympy.ArgumentIndexError(self, argindex)

    def _eval_evalf(self, prec):
        import mpmath

        if not all(x.is_number for x in self.args):
            return None
        with mpmath.workprec(prec + 20):  # the definition (as codegen.owens_t_mp, which
            # this module cannot import: codegen imports it)
            h, a = (mpmath.mpf(sympy.Float(x.evalf(prec + 20), prec + 20)) for x in self.args)
            value = mpmath.quad(lambda x: mpmath.exp(-h * h * (1 + x * x) / 2) / (1 + x * x),
                                [0, a]) / (2 * mpmath.pi)
            return sympy.Float(value, precision=prec)


class owens_u(sympy.Function):  # noqa: N801
    r"""The complement of Owen's :math:`T` in the quarter plane,
    :math:`U(h, a) = \tfrac14\operatorname{erfc}(h/\sqrt2) - T(h, a)`, which for
    :math:`h \ge 0` is :math:`\frac1{2\pi}\int_a^\infty\frac{e^{-h^2(1 + x^2)/2}}{1 +
    x^2}\,dx` (:math:`T(h, \infty) = \tfrac14\operatorname{erfc}(|h|/\sqrt2)`), :math:`a > 0`:
    the small orthant probabilities far in a tail, where the difference cancels (a bivariate
    normal wedge beyond distance :math:`h`). Generated code evaluates it without the
    difference (:mod:`replica.symbolic.owen`; real balls:
    :func:`~replica.symbolic.owen.owens_u_ball`, complex balls: none). Its partial
    derivatives: :math:`\partial_hU = -\frac{e^{-h^2/2}}{2\sqrt{2\pi}}\operatorname{erfc}
    (ah/\sqrt2)` and :math:`\partial_aU = -\frac{e^{-h^2(1 + a^2)/2}}{2\pi(1 + a^2)}`."""

    nargs = 2

    def fdiff(self, argindex=1):
        h, a = self.args
        if argindex == 1:
            return (-sympy.exp(-h**2 / 2) * sympy.erfc(a * h / sympy.sqrt(2))
                    / (2 * sympy.sqrt(2 * sympy.pi)))
        if argindex == 2:
            return -sympy.exp(-h**2 * (1 + a**2) / 2) / (2 * sympy.pi * (1 + a**2))
        raise sympy.ArgumentIndexError(self, argindex)

    def _eval_evalf(self, prec):
        if not all(x.is_number for x in self.args):
            return None
        h, a = self.args
        return (sympy.erfc(h / sympy.sqrt(2)) / 4 - owens_t(h, a))._eval_evalf(prec + 40 + int(
            abs(sympy.N(h * a, 15)) ** 2))


class digamma_difference(sympy.Function):  # noqa: N801
    r""":math:`D_n(z) = \psi^{(n)}(1 + z) - \psi^{(n)}(\tfrac12 + z)` (integer :math:`n \ge 0`),
    one function of the code generator (:mod:`replica.symbolic.codegen`) for a difference of
    two polygamma values: real phase retrieval's radial average
    :math:`G(a) = 2a + \log 2 - \tfrac12D_0(1/(8a))`. Generated code evaluates it without the
    cancellation of the difference (:math:`D_0(z) \sim 1/(2z)` against
    :math:`\psi \sim \log z`) and in one call (:mod:`replica.symbolic.digamma_difference`:
    real balls by its asymptotic or Taylor series with rigorous remainders, else Arb's
    functions; mpmath at further bits; float64 by SciPy or the asymptotic series);
    complex-ball code has none (not enclosable there). Its derivative is
    :math:`\partial_zD_n = D_{n+1}`. In LaTeX it prints as the difference of polygamma values
    it stands for."""

    nargs = 2

    def fdiff(self, argindex=2):
        n, z = self.args
        if argindex == 2:
            return digamma_difference(n + 1, z)
        raise sympy.ArgumentIndexError(self, argindex)

    def rewrite_polygamma(self):
        """The difference of SymPy's ``polygamma`` it stands for."""
        n, z = self.args
        return sympy.polygamma(n, 1 + z) - sympy.polygamma(n, sympy.Rational(1, 2) + z)

    def _eval_evalf(self, prec):
        import mpmath

        from .digamma_difference import digamma_difference_mp

        if not all(x.is_number for x in self.args):
            return None
        n, z = self.args
        with mpmath.workprec(prec + 20):
            value = digamma_difference_mp(int(n), mpmath.mpmathify(z.evalf(prec + 20)))
            return sympy.Float(value, precision=prec)

    def _latex(self, printer):
        return r"\left(%s\right)" % printer._print(self.rewrite_polygamma())


SCALED_ERFC_FROM = sympy.Rational(53, 2)
r"""Where an integrand's ``erfc`` arguments reach this, its float64 value is taken from the
scaled form of :func:`scaled_erfc`; where they are below it and the plain form is finite, from
the plain form, so its values are unchanged wherever that works
(:math:`\operatorname{erfc}(26.5) = 2.2\cdot 10^{-307}`, still a normal float64 number; at 26.55
it is subnormal, with fewer digits)."""


def scaled_erfc(expr, scale: bool = True, memo: dict | None = None) -> sympy.Expr:
    r"""``expr`` with every :math:`\operatorname{erfc}(y)` written as
    :math:`\operatorname{erfcx}(y)\,e^{-y^2}` and rewritten so that its float64 values stay
    finite far in an ``erfc`` tail. Bottom up, each node after its arguments:

    * an exponential: its exponent expanded and cancelled, but for the squares and products
      of sums in it that cancel against nothing, kept as written (:func:`_exponent_sum`:
      :math:`e^{-a^2(z - c)^2}`, whose expansion cancels in float64 where :math:`a` is large
      and :math:`z` near :math:`c`);
    * a product: its exponential factors (:math:`e^{a}`, :math:`(e^{a})^k`) combined into one,
      :math:`e^{a}e^{b} = e^{a + b}`, whose exponent is rewritten likewise (so
      :math:`e^{-y^2}/\operatorname{erfc}(y) = 1/\operatorname{erfcx}(y)`, also as a factor of
      a larger product);
    * a logarithm of a product with an :math:`\operatorname{erfcx}` factor: split,
      :math:`\log(\operatorname{erfcx}(y)\,e^{c}\,R) = \log\operatorname{erfcx}(y) + c + \log R`
      (valid: :math:`\operatorname{erfcx}` and :math:`e^c` are positive, so :math:`R > 0`
      wherever the original logarithm is real; :math:`\log\operatorname{erfc}(y) =
      \log\operatorname{erfcx}(y) - y^2`);
    * a sum: the common factors of its terms taken out (``sympy.factor_terms`` of the sum,
      each term's factors other than numbers, symbols, exponentials and
      ``erfcx``/``erfc`` held as opaque symbols, since they are rewritten already):
      :math:`4\operatorname{erfcx}(y)(1 - q)`, not :math:`4\operatorname{erfcx}(y) -
      4q\operatorname{erfcx}(y)`, which is :math:`\infty - \infty` where
      :math:`\operatorname{erfcx}` overflows at very negative :math:`y`; and
      :math:`(m e^{A} - e^{A})^{-1} = e^{-A}/(m - 1)`, whose exponential then combines with
      the enclosing product's where :math:`e^{A}` alone overflows.

    The rules act on the erfc-free parts too (the Bayes-optimal sign channel's float64
    Jacobian near :math:`m = 1` needs the last one on an erfc-free term). Each *distinct*
    subexpression is rewritten once (remembered): a differentiated integrand is a tree with
    many copies of few subexpressions (phase retrieval's: 28,900 nodes, 217 distinct), and
    rewriting the tree itself (``sympy.powsimp(deep=True)``, ``factor_terms``, ``replace``)
    cost minutes for what takes a fraction of a second on its distinct nodes.

    The same function as ``expr``; in float64 the ratios :math:`e^{-y^2}/\operatorname{erfc}(y)`
    of a Mills ratio and :math:`\log\operatorname{erfc}(y)` that overflow or underflow for
    large :math:`y` (``0/0``, ``log 0``) become :math:`1/\operatorname{erfcx}(y)` and
    :math:`\log\operatorname{erfcx}(y) - y^2`, finite. The float64 code generator
    (:mod:`replica.symbolic.codegen`) evaluates it only where an ``erfc`` argument is at least
    :data:`SCALED_ERFC_FROM` or the plain form is not finite.

    ``scale=False``: the same rewriting with ``erfc`` kept -- the form for large *negative*
    arguments, where ``erfcx`` overflows (:math:`2e^{y^2}`) but ``erfc`` is 2 and a product
    :math:`e^{a}e^{b}` of huge factors may still overflow.

    ``memo``: a dict of rewritings (subexpression -> its rewriting with this ``scale``) to use
    and fill, shared between calls with the same ``scale`` (the code generator's, whose
    integrands share subexpressions); a fresh one by default."""
    done: dict = {} if memo is None else memo  # each distinct subexpression -> its rewriting

    def rewrite(node):
        if node in done:
            return done[node]
        if not node.args:
            out = node
        elif isinstance(node, sympy.erfc) and scale:
            y = rewrite(node.args[0])
            out = _combine_exponentials(erfcx(y) * sympy.exp(-y**2))
        else:
            args = [rewrite(a) for a in node.args]
            out = node if all(a is b for a, b in zip(args, node.args)) else node.func(*args)
            if isinstance(out, sympy.exp):
                out = sympy.exp(_exponent_sum([out.args[0]]))
            elif out.is_Mul:
                out = _combine_exponentials(out)
            elif isinstance(out, sympy.log) and out.args[0].is_Mul:
                out = _split_log(out)
            if out.is_Add:
                out = _common_factors_out(out)
        done[node] = out
        return out

    return rewrite(sympy.sympify(expr))


def _exponent(factor):
    """The exponent :math:`a k` of a factor :math:`e^{a}` or :math:`(e^{a})^k`, else ``None``."""
    if isinstance(factor, sympy.exp):
        return factor.args[0]
    if factor.is_Pow and isinstance(factor.base, sympy.exp):
        return factor.base.args[0] * factor.exp
    return None


def _combine_exponentials(product):
    r"""A product with its exponential factors combined, :math:`e^{a}e^{b} = e^{a+b}`, the
    exponent rewritten by :func:`_exponent_sum` (its other factors kept as they are)."""
    exponents, rest = [], []
    for f in sympy.Mul.make_args(product):
        a = _exponent(f)
        (rest if a is None else exponents).append(f if a is None else a)
    if not exponents:
        return product
    return sympy.Mul(*rest) * sympy.exp(_exponent_sum(exponents))


def _exponent_sum(exponents):
    r"""The sum of ``exponents`` (the exponents of exponential factors combined into one),
    expanded and cancelled (``sympy.cancel(sympy.expand(...))``) except for its *factored*
    terms that cancel against nothing, which are kept as written.

    A term is factored where its numerator is a product with a sum or a power of a sum among
    its factors, such as
    :math:`-y^2 = -a^2(z - c)^2` of :math:`\operatorname{erfc}(y) =
    \operatorname{erfcx}(y)\,e^{-y^2}`); it cancels against something where one of the
    monomials of its expansion (a product of symbols and functions, without its
    numerical coefficient) is not in the expansion of the whole sum (the Mills ratio's
    :math:`e^{-y^2}e^{y^2} = 1`, whatever the forms in which the two :math:`y^2` are
    written). Expanding a factored term that cancels against nothing would only introduce
    a cancellation: in float64, :math:`a^2(z^2 - 2cz + c^2)` at :math:`a = 10^{10}`,
    :math:`c = 0.7` and :math:`z - c = 3\cdot 10^{-9}` is the difference of terms of
    :math:`10^{20}` with an absolute rounding error of about :math:`10^{4}` (:math:`e^{10^4}`
    overflows), where :math:`a^2(z - c)^2` is 900 to 16 digits. Sums without factored terms
    (every exponent of the examples but those of shifted, scaled ``erfc`` arguments and
    Gaussian peaks) are rewritten as before."""
    terms = [t for e in exponents for t in sympy.Add.make_args(e)]
    factored = [_factored(t) for t in terms]
    if not any(factored):
        return sympy.cancel(sympy.expand(sympy.Add(*terms)))
    expanded = [sympy.expand(t) for t in terms]
    total = _monomials(sympy.Add(*expanded))  # (sympy.Add collects like monomials)
    kept, rest = [], []
    for t, x, f in zip(terms, expanded, factored):
        keep = f and _monomials(x) <= total
        (kept if keep else rest).append(t if keep else x)
    return sympy.cancel(sympy.Add(*rest)) + sympy.Add(*kept)


def _factored(term) -> bool:
    """Whether the numerator of ``term`` is a product with a sum or a power of a sum among its
    factors (whose expansion may cancel; a sum in a denominator, or one in a function's
    argument, is as before)."""
    if not term.has(sympy.Add):
        return False
    factors = sympy.Mul.make_args(term.as_numer_denom()[0])
    return any((f.is_Add and len(factors) > 1)
               or (f.is_Pow and f.base.is_Add and f.exp.is_Integer and f.exp > 1)
               for f in factors)


def _monomials(expanded) -> set:
    """The monomials of an expanded sum without their numerical coefficients (a monomial
    whose coefficients add up to 0 is not in the sum's)."""
    return {t.as_coeff_Mul()[1] for t in sympy.Add.make_args(expanded)}


def _split_log(log):
    r""":math:`\log(\operatorname{erfcx}(y)\,e^{c}\,R) = \log\operatorname{erfcx}(y) + c
    + \log R` (``log`` unchanged without an ``erfcx`` factor)."""
    factors = sympy.Mul.make_args(log.args[0])
    if not any(isinstance(f, erfcx) for f in factors):
        return log
    terms, rest = [], []
    for f in factors:
        a = _exponent(f)
        if isinstance(f, erfcx):
            terms.append(sympy.log(f))
        elif a is not None:
            terms.append(a)
        else:
            rest.append(f)
    return sympy.Add(*terms) + sympy.log(sympy.Mul(*rest))


def _common_factors_out(total):
    """``sympy.factor_terms`` of a sum with the factors of its terms that are not numbers,
    symbols, exponentials or ``erfcx`` replaced by opaque symbols (the same symbol for the same
    factor), so that it looks at this sum's terms only and not into the subexpressions."""
    opaque: dict = {}

    def hide(f):
        b, k = f.as_base_exp()
        if b.is_Atom or isinstance(b, (erfcx, sympy.erfc)):
            return f
        if b not in opaque:
            opaque[b] = sympy.Dummy(commutative=True)
        return opaque[b] ** k

    masked = sympy.Add(*[sympy.Mul(*[hide(f) for f in sympy.Mul.make_args(t)])
                         for t in total.args])
    out = sympy.factor_terms(masked)
    return out.xreplace({d: b for b, d in opaque.items()}) if opaque else out


def logistic_base(anchor, exps) -> tuple:
    r"""The base of the exponential ``anchor`` among the exponentials ``exps``: ``(u, {e^{ku}:
    k})`` with :math:`u` the exponent of the exponential of ``exps`` of which ``anchor`` is the
    largest integer power (:math:`e^{-2p} = (e^{-p})^2`; the first in the order of ``exps`` on a
    tie, :math:`e^{p}` and :math:`e^{-p}`), and every exponential of ``exps`` that is a nonzero
    integer power :math:`k` of :math:`e^{u}` with its :math:`k` (:math:`e^{u}` itself is one,
    :math:`k = 1`). ``anchor`` must be in ``exps``."""
    ratios = [(abs(k), x.args[0]) for x in exps
              for k in [sympy.cancel(anchor.args[0] / x.args[0])] if k.is_Integer]
    u = max(ratios, key=lambda r: r[0])[1]
    members = {}
    for other in exps:
        k = sympy.cancel(other.args[0] / u)
        if k.is_Integer and k != 0:
            members[other] = int(k)
    return u, members


def sigmoid_rational(expr, members, S) -> sympy.Expr:
    r"""``expr`` with every power :math:`E^k` of one :math:`E = e^{u}` (``members``,
    ``{e^{ku}: k}`` of :func:`logistic_base`) written through :math:`S = 1/(1 + e^{-u})`:
    :math:`E = S/(1 - S)`, the result made one rational function of the symbol ``S`` by
    ``sympy.cancel`` (the same meromorphic function of :math:`u` once :math:`S` is replaced
    by :math:`\sigma(u)`). Where ``expr`` is rational in :math:`E`, the result is free of
    :math:`e^{u}`; otherwise the exponentials left keep their place. The caller chooses
    what stands for :math:`S`: :class:`sigmoid` for float64 code (:func:`logistic_forms`),
    :math:`1/(1 + e^{-u})` for ball arithmetic (:mod:`replica.symbolic.implicit`)."""
    return sympy.cancel(expr.xreplace({e: (S / (1 - S)) ** k for e, k in members.items()}))


def _logistic_bases(expr) -> dict:
    r"""The exponentials of ``expr`` that stand beside a number in a sum (:math:`1 + e^{u}`,
    the logistic pattern), grouped by a base exponent :math:`u` (:func:`logistic_base`):
    ``{u: {e^{ku}: k}}`` with every :math:`k` a nonzero integer, for each :math:`u` one such
    exponential of ``expr`` holds."""
    exps = sorted(distinct_atoms(expr, sympy.exp), key=sympy.default_sort_key)
    anchored = set()
    for add in distinct_atoms(expr, sympy.Add):
        if any(a.is_number for a in add.args):
            for a in add.args:
                for f in sympy.Mul.make_args(a):
                    base = f.base if f.is_Pow and f.exp.is_Integer else f
                    if isinstance(base, sympy.exp):
                        anchored.add(base)
    groups: dict = {}
    for e in sorted(anchored, key=sympy.default_sort_key):
        if any(e in g for g in groups.values()):
            continue
        u, members = logistic_base(e, exps)
        groups[u] = members
    return groups


def logistic_forms(expr) -> sympy.Expr:
    r"""``expr`` with its logistic patterns written so that float64 values stay finite where
    :math:`e^{\pm u}` overflows: every :math:`\log(1 + e^{u})` as
    :class:`softplus`\ :math:`(u)`, and, for each base :math:`u` of an exponential that stands
    beside a number in a sum (:func:`_logistic_bases`), each product's factors that are rational
    in :math:`E = e^{u}` (powers :math:`E^k` and of polynomials in them) written through
    :math:`S = \sigma(u) = 1/(1 + e^{-u})`: :math:`E = S/(1 - S)`, the factors made one
    rational function of :math:`S` (``sympy.cancel``, then ``sympy.factor``), and
    :math:`S \to \sigma(u)`, :math:`1 - S \to \sigma(-u)` (both in :math:`(0, 1)`, finite at
    every finite :math:`u`). The same function (the identities are exact):
    :math:`e^{u}/(1 + e^{u}) = \sigma(u)`, :math:`e^{2u}/(1 + e^{u})^2 = \sigma(u)^2`,
    :math:`1/(1 + e^{u})^2 = \sigma(-u)^2`. The float64 root finder of an implicit function
    (:mod:`replica.symbolic.implicit`) evaluates its equation in this form only where the form
    as written is not finite, so its values elsewhere are unchanged."""
    expr = sympy.sympify(expr)
    expr = expr.replace(
        lambda e: isinstance(e, sympy.log) and e.args[0].is_Add and len(e.args[0].args) == 2
        and any(a == 1 for a in e.args[0].args)
        and any(isinstance(a, sympy.exp) for a in e.args[0].args),
        lambda e: softplus(next(a for a in e.args[0].args if isinstance(a, sympy.exp)).args[0]))
    for u, members in _logistic_bases(expr).items():
        S = sympy.Dummy("S")

        def rational(f):
            return f.has(*members) and not any(
                isinstance(a, sympy.Function) and a.has(*members)
                and not isinstance(a, sympy.exp) for a in sympy.preorder_traversal(f))

        def convert(f):
            r = sympy.factor(sigmoid_rational(f, members, S))
            r = r.xreplace({S - 1: -sigmoid(-u), 1 - S: sigmoid(-u)}).xreplace({S: sigmoid(u)})
            return f if r.has(S) else r

        def rewrite(node):
            if not node.args or not node.has(*members):
                return node
            if node.is_Add:
                return sympy.Add(*[rewrite(t) for t in node.args])
            if node.is_Mul:
                factors = sympy.Mul.make_args(node)
                parts = [f for f in factors if rational(f)]
                return (convert(sympy.Mul(*parts))
                        * sympy.Mul(*[rewrite(f) for f in factors if not rational(f)]))
            if (node.is_Pow or node in members) and rational(node):
                return convert(node)
            return node.func(*[rewrite(a) for a in node.args])

        expr = rewrite(expr)
    return expr
