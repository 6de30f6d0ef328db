r"""Series at :math:`x \to 0` of the solution of equations that hold Gaussian integrals.

:func:`replica.analysis.series.series` hands a model here when its equations hold
:class:`~replica.symbolic.gaussian.GaussianIntegral` atoms and the expansion is at ``at="0"``
(the small-sample-ratio limit :math:`\alpha \to 0`, or a small signal). There the order
parameters usually vanish with :math:`x` (e.g. :math:`m = O(\alpha)`) and the integrands hold
:math:`\sqrt m` (a Gaussian field of variance :math:`m`): the equations are analytic in
:math:`x` but their closed forms are not, term by term, so differentiating them at
:math:`x = 0` gives :math:`0/0`. Instead, with :math:`x = t^2` and the ansatz

.. math::  \theta = \theta_0 + c_1 t^2 + c_2 t^4 + \dots + c_K t^{2K}

(:math:`\theta_0` from the equations at :math:`t = 0`, the :math:`c_k` unknown symbols), every
integrand :math:`f(t, z)` is expanded in :math:`t` *under the integral*,
:math:`f = \sum_j f_j(z)\,t^j`, and integrated term by term against the standard normal measure:

.. math::  \int\mathcal Dz\, f = \sum_j t^j \int\mathcal Dz\, f_j(z),\qquad
           \int\mathcal Dz\, z^{2k} = (2k-1)!!,\quad \int\mathcal Dz\, z^{2k+1} = 0 .

A coefficient :math:`f_j` polynomial in :math:`z` gives an exact Gaussian moment; any other
:math:`f_j(z)` (a function of :math:`z` left at :math:`t = 0`, e.g. a logistic loss) is split into
monomials of the :math:`c_k` and other symbols times functions of :math:`z`, each integrated by
``mpmath.quad`` to the requested digits and marked numeric (the ``"numeric"`` entry of the result lists
them); a function of :math:`z` with a free symbol other than the :math:`c_k` is refused. The
integral atoms are replaced innermost first (an integral whose integrand holds another one is
expanded after it; a two-dimensional integral whose inner integrand depends on the outer
variable is refused). The equations' series in :math:`t` then gives, order by order,
:math:`[t^{2k}]F = 0`, solved for :math:`c_k` (SymPy ``solve``; of several real roots the
positive one when the unknown is declared positive). A nonzero coefficient of an odd power of
:math:`t` means the solution is a series in :math:`\sqrt x`, not in :math:`x`: refused, saying so.
Integrals are expanded :data:`GUARD` orders beyond the one needed: a division by an integral
that vanishes like :math:`t^2` at :math:`t = 0` costs two orders (this is not checked for deeper
cancellations; the tests compare the series with the engine's solutions).

Cost: the perceptron with the Gaussian prior takes about 20 s of CPU to order 3; with the
Rademacher prior (a log cosh under the integral, whose fixed-point form nests one integral in a
hyperbolic quotient inside another) SymPy's ``series`` did not finish order 1 within 10
minutes of wall time (machine load about 5).
"""

from __future__ import annotations

import sympy

from ..errors import ConvergenceError
from ..symbolic.gaussian import GaussianIntegral

GUARD = 2
"""Extra orders of ``t`` kept in each integral beyond those the equations need."""


def has_gaussian(exprs) -> bool:
    return any(sympy.sympify(e).has(GaussianIntegral) for e in exprs)


def _moment(k: int):
    """E z^k for a standard normal z."""
    if k % 2:
        return sympy.Integer(0)
    return sympy.factorial2(k - 1) if k else sympy.Integer(1)


class _Numeric:
    """Integrals of non-polynomial functions of z, evaluated by mpmath (recorded)."""

    def __init__(self, dps: int):
        self.dps = dps
        self.done: dict = {}

    def __call__(self, g, z):
        import mpmath

        if g in self.done:
            return self.done[g]
        free = g.free_symbols - {z}
        if free:
            raise ConvergenceError(
                f"the Gaussian integral of {g} (a function of {z} left at the expansion point, "
                f"with the symbols {', '.join(sorted(map(str, free)))}) has no closed form here; "
                "give those parameters values", tried="term-by-term Gaussian moments",
                status="stalled")
        dens = g * sympy.exp(-z**2 / 2) / sympy.sqrt(2 * sympy.pi)

        def f(x):  # SymPy's own evaluation (no code generation: a few integrals, once each)
            return mpmath.mpmathify(str(sympy.N(dens.subs(z, sympy.Float(x, self.dps + 10)),
                                                self.dps + 10)))

        with mpmath.workdps(self.dps + 10):
            v = mpmath.quad(f, [-mpmath.inf, -4, 0, 4, mpmath.inf])
            v2 = mpmath.quad(f, [-mpmath.inf, -8, -2, 0, 2, 8, mpmath.inf])
            if abs(v - v2) > mpmath.mpf(10) ** (-self.dps) * max(1, abs(v)):
                raise ConvergenceError(
                    f"the Gaussian integral of {g} did not reach {self.dps} digits "
                    f"(two subdivisions differ by {mpmath.nstr(abs(v - v2), 3)})",
                    tried="mpmath.quad on two subdivisions", status="stalled")
            out = sympy.Float(mpmath.nstr(v, self.dps + 3), self.dps + 3)
        self.done[g] = out
        return out


def _integrate(coeff, z, keep, numeric):
    """E_z of ``coeff`` (a function of z, polynomial in the symbols ``keep``)."""
    coeff = sympy.expand(coeff)
    if coeff.is_polynomial(z):
        poly = sympy.Poly(coeff, z)
        return sum(c * _moment(k[0]) for k, c in poly.terms())
    out = sympy.Integer(0)
    gens = sorted(coeff.free_symbols & keep, key=str)
    if gens:
        terms = sympy.Poly(coeff, *gens).terms()
    else:
        terms = [((), coeff)]
    for powers, g in terms:
        mono = sympy.Mul(*[s**p for s, p in zip(gens, powers)])
        num, rest = sympy.Integer(0), sympy.Integer(0)
        for term in sympy.Add.make_args(sympy.expand(g)):
            if term.is_polynomial(z):
                rest += term
            else:
                num += term
        val = sum(c * _moment(k[0]) for k, c in sympy.Poly(rest, z).terms()) if rest != 0 else 0
        if num != 0:
            ind, dep = num.as_independent(z, as_Add=False) if isinstance(num, sympy.Mul) \
                else (sympy.Integer(1), num)
            val += ind * numeric(dep, z)
        out += mono * val
    return out


def _laurent(expr, t, n):
    """``{p: a_p}`` with ``expr = sum a_p t^p + O(t^(n+1))`` (``expr`` free of integrals; negative
    powers kept); a non-integer power of ``t`` raises."""
    if not expr.has(t):
        return {0: expr}
    ser = sympy.expand(sympy.series(expr, t, 0, n + 1).removeO())
    out: dict = {}
    for term in sympy.Add.make_args(ser):
        c, p = term.as_coeff_exponent(t)
        if c.has(t) or not p.is_integer:
            raise ConvergenceError(f"the series in {t} has a term {term} that is not an "
                                   "integer power", tried="sympy.series", status="stalled")
        if p <= n:
            out[int(p)] = out.get(int(p), 0) + c
    return out


def _series_coeffs(expr, t, n):
    """``[a_0, ..., a_n]`` of :func:`_laurent`; a negative power with a nonzero coefficient
    raises."""
    lau = _laurent(expr, t, n)
    for p, c in lau.items():
        if p < 0 and sympy.simplify(c) != 0:
            raise ConvergenceError(f"the equations diverge like {t}^{p} at the expansion point",
                                   tried="the series under the Gaussian integrals",
                                   status="singular-jacobian")
    return [lau.get(k, sympy.Integer(0)) for k in range(n + 1)]


def _expand_integrals(expr, t, n, keep, numeric):
    """``expr`` with every Gaussian integral replaced by its series in ``t`` through ``t**n``
    (innermost first)."""
    while True:
        atoms = [a for a in expr.atoms(GaussianIntegral) if not a.args[0].has(GaussianIntegral)]
        if not atoms:
            return expr
        rep = {}
        for a in atoms:
            f, z = a.args
            vals = {j: _integrate(c, z, keep, numeric) for j, c in _laurent(f, t, n).items()}
            rep[a] = sum(v * t**j for j, v in vals.items())
        expr = expr.xreplace(rep)


def series_at_zero(problem, unknowns, eqs, eps, order, dps=30, progress=None):
    r"""Coefficients ``{theta: [c_0, ..., c_order]}`` of the unknowns in ``eps`` (the equations
    ``eqs`` hold ``eps`` for the expansion parameter, at ``eps -> 0+``) and the record of numeric
    integrals (``{integrand: value}``)."""
    nested = [a for e in eqs for a in e.atoms(GaussianIntegral)
              if a.args[0].has(GaussianIntegral)]
    if nested:  # (SymPy's series of the inner integral's quotients ran > 10 min: refused)
        raise ConvergenceError(f"{problem.name}: the equations hold a Gaussian integral nested "
                               "inside another; the expansion under the integral sign expands "
                               "one-dimensional integrals only",
                               tried="the expansion under the integral sign at the expansion "
                               "point", status="stalled")
    t = sympy.Symbol("t", positive=True)
    plain = {u: sympy.Dummy(u.name) for u in unknowns}
    numeric = _Numeric(dps)
    eqs_t = [e.subs(eps, t**2) for e in eqs]
    # leading order: the equations at t = 0, the unknowns symbolic; an integral still depending
    # on the unknowns there stays an integral (a symbol for the series in t)
    lead = []
    for e in eqs_t:
        atoms = sorted(e.atoms(GaussianIntegral), key=sympy.default_sort_key)
        names = {a: sympy.Dummy("G", positive=True) for a in atoms if not a.has(t)}
        e2 = _expand_integrals(e.xreplace(names), t, 0, set(), numeric) if any(
            a.has(t) for a in atoms) else e.xreplace(names)
        c0 = _series_coeffs(e2, t, 0)[0]
        lead.append(sympy.simplify(c0.xreplace({v: k for k, v in names.items()})
                                   .xreplace(plain)))
    if any(e.has(GaussianIntegral) for e in lead):
        raise ConvergenceError(f"{problem.name}: the leading-order equations hold Gaussian "
                               "integrals of the unknowns (no closed-form leading order)",
                               tried="the equations at the expansion point", status="stalled")
    try:
        sols = sympy.solve(lead, [plain[u] for u in unknowns], dict=True)
    except NotImplementedError:
        sols = []
    full = [s for s in sols if all(plain[u] in s for u in unknowns)]
    if sols and not full:  # an unknown left free by the limit (as in series.series)
        free = sorted({u.name for s in sols for u in unknowns if plain[u] not in s})
        raise ConvergenceError(f"{problem.name}: the leading-order equations at the expansion "
                               f"point do not determine {', '.join(free)}",
                               tried="sympy.solve of the equations at t = 0",
                               status="singular-jacobian")
    sols = [s for s in full if all(s[plain[u]].is_real is not False for u in unknowns)
            and all(not (u.is_positive and s[plain[u]].is_negative) for u in unknowns)]
    if len(sols) != 1:
        raise ConvergenceError(f"{problem.name}: {len(sols)} leading-order solutions at the "
                               "expansion point, where one is needed (none: e.g. a ratio of "
                               "order parameters that both vanish, which needs their scaling)",
                               tried="sympy.solve of the equations at t = 0", status="stalled")
    theta0 = {u: sols[0][plain[u]] for u in unknowns}
    # the first coefficient of a positive unknown that vanishes at the limit is positive
    cs = {u: [sympy.Symbol(f"c_{u.name}_{k}", real=True,
                           positive=(k == 1 and bool(u.is_positive) and theta0[u] == 0) or None)
              for k in range(1, order + 1)]
          for u in unknowns}
    ansatz = {u: theta0[u] + sum(c * t**(2 * (k + 1)) for k, c in enumerate(cs[u]))
              for u in unknowns}
    keep = {c for u in unknowns for c in cs[u]}
    n = 2 * order

    def expand_all(guard):
        out = []
        for e in eqs_t:
            e2 = _expand_integrals(e.xreplace(ansatz), t, n + guard, keep, numeric)
            out.append(_series_coeffs(e2, t, n))
        return out

    coeffs = expand_all(GUARD)
    if any(sympy.simplify(c[0]) != 0 for c in coeffs):
        raise ConvergenceError(f"{problem.name}: the leading order {theta0} does not solve the "
                               "expanded equations", tried="the series under the Gaussian "
                               "integrals", status="stalled")
    solved: dict = {}
    for j in range(1, n + 1):
        if progress:
            progress(j - 1, n, f"order t^{j}")
        eq_j = [sympy.simplify(c[j].xreplace(solved)) for c in coeffs]
        if j % 2:
            if any(e != 0 for e in eq_j):
                raise ConvergenceError(
                    f"{problem.name}: the equations have a term in the square root of the "
                    "expansion parameter at this order, so the solution is not a power series "
                    "in it", tried="the series of the Gaussian integrals under the integral",
                    status="singular-jacobian")
            continue
        k = j // 2
        new = [cs[u][k - 1] for u in unknowns]
        try:
            sol = sympy.solve(eq_j, new, dict=True)
        except NotImplementedError:
            sol = []
        sol = [s for s in sol if all(c in s for c in new)]
        if len(sol) > 1:
            sol = [s for s in sol if all(v.is_real is not False for v in s.values())]
            if len(sol) > 1:
                pos = [s for s in sol if all(s[cs[u][k - 1]].is_positive for u in unknowns
                                             if u.is_positive and theta0[u] == 0)]
                sol = pos if pos else sol
        if len(sol) != 1:
            raise ConvergenceError(
                f"{problem.name}: order {k} of the expansion has {len(sol)} solutions "
                "(the equations do not fix it uniquely)",
                tried="sympy.solve of the order's equations", status="singular-jacobian")
        solved.update({c: sympy.simplify(v.xreplace(solved)) for c, v in sol[0].items()})
    if progress:
        progress(n, n, "check")
    out = {u: [theta0[u]] + [solved[c] for c in cs[u]] for u in unknowns}
    return out, dict(numeric.done)


def quantity_at_zero(expr, unknowns, coeffs, eps, order, dps=30):
    r"""Coefficients ``[a_0, ..., a_{2K}]`` of a reported quantity in powers of
    :math:`\sqrt\varepsilon` (``a_j`` multiplies :math:`\varepsilon^{j/2}`; the unknowns' series
    ``coeffs`` inserted and its integrals expanded under the integral sign, as in
    :func:`series_at_zero`), and the record of numeric integrals. A quantity such as
    :math:`\arccos(\sqrt m)` has odd ``j``: a series in :math:`\sqrt\varepsilon`."""
    t = sympy.Symbol("t", positive=True)
    numeric = _Numeric(dps)
    n = 2 * order
    trunc = {u: sum(c * t**(2 * k) for k, c in enumerate(coeffs[u])) for u in unknowns}
    e = sympy.sympify(expr).subs(eps, t**2).xreplace(trunc)
    e = _expand_integrals(e, t, n + GUARD, set(), numeric)
    return [sympy.simplify(c) for c in _series_coeffs(e, t, n)], dict(numeric.done)
