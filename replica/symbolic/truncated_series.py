r"""Truncated Laurent series in one variable, computed over a SymPy expression tree.

A series is :math:`s(t) = \sum_{p=v}^{n} s_p\,t^p + O(t^{n+1})`: the coefficients :math:`s_p`
(SymPy expressions free of :math:`t`) and the order :math:`n` through which they are known
(``EXACT`` for a polynomial in :math:`t`). The series of an expression is built from its leaves
up with the rules of truncated arithmetic, each tracking the order it knows honestly:

- sum: the coefficients added, known through the smaller of the two orders;
- product of :math:`a = t^{v_a}(\dots) + O(t^{n_a+1})` and :math:`b`: the Cauchy product, known
  through :math:`\min(n_a + v_b,\ n_b + v_a)` (a factor that starts with a negative power
  costs orders of the other one);
- power :math:`a^r`, :math:`a = a_v t^v (1 + u)` with :math:`u = O(t)`: :math:`a_v^r t^{vr}
  \sum_j \binom{r}{j} u^j`, refused unless :math:`vr` is an integer (a half-integer power of
  :math:`t` means the expansion variable is the wrong one), known through :math:`n_a - v + vr`;
- a function :math:`F` of one argument :math:`s = s_0 + u`, :math:`u = O(t)`: Taylor's series
  :math:`\sum_j F^{(j)}(s_0)\,u^j/j!` with SymPy's derivatives of :math:`F` at :math:`s_0`
  (refused where one is not finite, e.g. :math:`\log` at 0, or where :math:`s` starts with a
  negative power);
- an atom the caller knows (a Gaussian integral, whose series the caller integrates term by
  term: ``leaf``) and, for any other expression, SymPy's ``series`` (its order as asked).

Where the known order falls short of the one asked for (negative powers met on the way), the
expansion is done again with the inputs taken that many orders further, so the coefficients
returned are exact through the order asked for -- not assumed so by a fixed number of guard
orders. (SymPy's ``series`` on the Rademacher prior's fixed-point equation, a hyperbolic function
of the square root of a Gaussian integral, spent more than 10 minutes in ``trigsimp`` inside
``Pow._eval_nseries``; the rules above need no simplification but a zero test of leading
coefficients.)
"""

from __future__ import annotations

import sympy

EXACT = 10 ** 9
"""The order of a series known exactly (a polynomial in ``t``)."""


class SeriesError(ValueError):
    """The expression is not a Laurent series in ``t`` with integer powers (or a function is
    expanded where it is not analytic)."""


def is_zero(c) -> bool:
    """Whether a coefficient is exactly zero: structurally, after expansion, or after
    simplification (numbers first checked at 60 digits, so simplify runs only where the value
    is zero to that many digits)."""
    if c == 0:
        return True
    e = sympy.expand(c)
    if e == 0:
        return True
    if e.is_number:
        v = sympy.N(e, 60)
        if v.is_number and v != 0 and abs(v) > sympy.Float("1e-50"):
            return False
    return sympy.simplify(e) == 0


class Series:
    """:math:`\\sum_p c_p t^p + O(t^{n+1})`: ``coeffs`` ``{p: c_p}`` (nonzero as far as seen),
    ``n`` the last order known."""

    __slots__ = ("coeffs", "n")

    def __init__(self, coeffs, n):
        self.n = n
        self.coeffs = {p: c for p, c in coeffs.items() if p <= n and c != 0}

    def valuation(self):
        """The lowest power with a nonzero coefficient (zero tests by :func:`is_zero`; the
        zeros found are dropped), or ``None`` where every known coefficient is zero."""
        for p in sorted(self.coeffs):
            if is_zero(self.coeffs[p]):
                del self.coeffs[p]
            else:
                return p
        return None

    def get(self, p):
        return self.coeffs.get(p, sympy.Integer(0))


def _add(a: Series, b: Series) -> Series:
    out = dict(a.coeffs)
    for p, c in b.coeffs.items():
        out[p] = out.get(p, 0) + c
    return Series(out, min(a.n, b.n))


def _mul(a: Series, b: Series) -> Series:
    va, vb = a.valuation(), b.valuation()
    if va is None or vb is None:  # one factor is O(t^(n+1)) as far as known
        n = min(a.n + 1 + (vb if vb is not None else b.n + 1),
                b.n + 1 + (va if va is not None else a.n + 1)) - 1
        return Series({}, n)
    n = min(a.n + vb, b.n + va)
    out: dict = {}
    for p, c in a.coeffs.items():
        for q, d in b.coeffs.items():
            if p + q <= n:
                out[p + q] = out.get(p + q, 0) + c * d
    return Series({p: sympy.expand(c) for p, c in out.items()}, n)


def _unit_power(u: Series, r, n: int) -> Series:
    r""":math:`(1 + u)^r` through :math:`t^n` for :math:`u = O(t)`: :math:`\sum_j\binom rj u^j`."""
    out = Series({0: sympy.Integer(1)}, EXACT)
    term = Series({0: sympy.Integer(1)}, EXACT)
    for j in range(1, n + 1):
        term = _mul(term, u)
        term = Series(term.coeffs, min(term.n, n))
        if not term.coeffs and term.n >= n:
            break
        out = _add(out, Series({p: sympy.binomial(r, j) * c for p, c in term.coeffs.items()},
                               term.n))
    return Series(out.coeffs, min(out.n, n, u.n))


def _power(a: Series, r, n: int) -> Series:
    """``a**r`` (``r`` a rational) through ``t**n`` as far as ``a`` allows."""
    v = a.valuation()
    if v is None:  # a = O(t^(n_a + 1)): a^r = O(t^((n_a + 1) r))
        if r > 0:
            return Series({}, int(sympy.ceiling((a.n + 1) * r)) - 1)
        raise SeriesError("a power of a series whose known coefficients are all zero")
    if r.is_integer and r >= 0:
        out, base, k = Series({0: sympy.Integer(1)}, EXACT), a, int(r)
        while k:
            if k & 1:
                out = _mul(out, base)
            k >>= 1
            if k:
                base = _mul(base, base)
        return out
    vr = v * r
    if not vr.is_integer:
        raise SeriesError(f"a power t^({vr}) that is not an integer")
    lead = a.coeffs[v]
    rel = Series({p - v: sympy.expand(c / lead) for p, c in a.coeffs.items() if p != v},
                 a.n - v)
    want = n - int(vr)
    unit = _unit_power(rel, r, max(want, 0))
    return Series({p + int(vr): sympy.expand(lead**r * c) for p, c in unit.coeffs.items()},
                  unit.n + int(vr))


NOT_ANALYTIC = (sympy.Abs, sympy.sign, sympy.Heaviside, sympy.DiracDelta, sympy.floor,
                sympy.ceiling, sympy.re, sympy.im, sympy.arg, sympy.conjugate)
"""Functions of one argument that are not analytic (kinks, jumps, complex parts): their
Taylor series from SymPy's derivatives would hold sign or delta functions of the expansion
point, so they are refused (the caller takes another route)."""


def _function(f, arg: Series, n: int) -> Series:
    """``f(arg)`` for a SymPy function class ``f`` of one argument, by Taylor's series at
    ``arg``'s constant term."""
    if issubclass(f, NOT_ANALYTIC):
        raise SeriesError(f"{f.__name__} is not analytic")
    v = arg.valuation()
    if v is not None and v < 0:
        raise SeriesError(f"{f} of a series that starts with t^({v})")
    s0 = arg.get(0)
    u = Series({p: c for p, c in arg.coeffs.items() if p != 0}, arg.n)
    x = sympy.Dummy("x")
    g = f(x)
    out: dict = {}
    power = Series({0: sympy.Integer(1)}, EXACT)
    last = min(n, arg.n)
    for j in range(0, last + 1):
        if j:
            g = sympy.diff(g, x)
            power = _mul(power, u)
            power = Series(power.coeffs, min(power.n, last))
            if not power.coeffs:
                break
        c = g.subs(x, s0) / sympy.factorial(j)
        if c.has(sympy.zoo, sympy.nan, sympy.oo, -sympy.oo):
            raise SeriesError(f"{f} is not analytic at {s0}")
        for p, d in power.coeffs.items():
            out[p] = out.get(p, 0) + c * d
    return Series({p: sympy.expand(c) for p, c in out.items()}, last)


class Expander:
    """Series in ``t`` of SymPy expressions; ``leaf(expr, n)`` gives the :class:`Series` of an
    atom the caller expands itself (``None`` for the others), e.g. a Gaussian integral."""

    def __init__(self, t, leaf=None):
        self.t = t
        self.leaf = leaf
        self.memo: dict = {}

    def series(self, expr, n: int) -> Series:
        """``expr`` through ``t**n`` (the known order may fall short where negative powers
        are met: :meth:`coefficients` asks again)."""
        key = (expr, n)
        hit = self.memo.get(key)
        if hit is not None:
            return hit
        out = self._series(expr, n)
        self.memo[key] = out
        return out

    def _series(self, e, n):
        t = self.t
        if not e.has(t):
            return Series({0: e}, EXACT)
        if e == t:
            return Series({1: sympy.Integer(1)}, EXACT)
        if self.leaf is not None:
            got = self.leaf(e, n)
            if got is not None:
                return got
        if isinstance(e, sympy.Add):
            out = Series({}, EXACT)
            for a in e.args:
                out = _add(out, self.series(a, n))
            return out
        if isinstance(e, sympy.Mul):
            return self._product(e.args, n)
        if isinstance(e, sympy.Pow):
            base, r = e.args
            if not r.has(t) and r.is_Rational:
                return self._power(base, r, n)
            if base == sympy.E:
                return _function(sympy.exp, self.series(r, n), n)
        if isinstance(e, sympy.Function) and len(e.args) == 1:
            return _function(e.func, self.series(e.args[0], n), n)
        return self._sympy(e, n)

    def _product(self, factors, n):
        extra = 0
        for _ in range(4):
            parts = [self.series(f, n + extra) for f in factors]
            out = Series({0: sympy.Integer(1)}, EXACT)
            for p in parts:
                out = _mul(out, p)
            if out.n >= n:
                return Series(out.coeffs, n)
            extra += n - out.n
        return out

    def _power(self, base, r, n):
        extra = 0
        for _ in range(6):
            b = self.series(base, n + extra)
            if r < 0 and b.valuation() is None:  # nothing known of the base but that it is small
                extra += max(2, extra)
                continue
            out = _power(b, r, n)
            if out.n >= n:
                return Series(out.coeffs, n)
            extra += n - out.n
        return out

    def _sympy(self, e, n):
        ser = sympy.expand(sympy.series(e, self.t, 0, n + 1).removeO())
        out: dict = {}
        for term in sympy.Add.make_args(ser):
            c, p = term.as_coeff_exponent(self.t)
            if c.has(self.t) or not p.is_integer:
                raise SeriesError(f"a term {term} that is not an integer power of {self.t}")
            out[int(p)] = out.get(int(p), 0) + c
        return Series(out, n)

    def coefficients(self, expr, n: int) -> dict:
        """``{p: a_p}``, ``expr = sum a_p t^p + O(t^(n+1))``, exact through ``t**n`` (the
        inputs taken further where negative powers cost orders); powers below 0 included."""
        extra = 0
        for _ in range(6):
            s = self.series(expr, n + extra)
            if s.n >= n:
                return {p: c for p, c in s.coeffs.items() if p <= n}
            extra += n - s.n
        raise SeriesError(f"the series could not be taken to t^{n} (known to t^{s.n})")
