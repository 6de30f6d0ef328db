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
them); a function of :math:`z` with a free symbol other than the :math:`c_k` is refused. An
integral met inside another's integrand (the fixed-point form of a Rademacher prior puts the
channel's integral under the prior's log cosh) is expanded where the outer integrand's series
reaches it, to the order needed there; an inner integral that depends on the outer variable
works where its coefficients are polynomial in that variable (a numeric coefficient with the
outer variable free is refused, as above). The equations' series in :math:`t` then gives, order by order,
:math:`[t^{2k}]F = 0`, solved for :math:`c_k` (SymPy ``solve``; of several real roots the
positive one when the unknown is declared positive). A nonzero coefficient of an odd power of
:math:`t` means the solution is a series in :math:`\sqrt x`, not in :math:`x`: refused, saying so.
The series are taken by the rules of :mod:`replica.symbolic.truncated_series`, which track
the order through which each coefficient is known: a division by an integral that vanishes
like :math:`t^2` costs two orders of the integrand, and the integrands are then expanded that
much further (before, a fixed two extra orders were kept and deeper cancellations were not
checked).

Cost (CPU, order 3): the perceptron with the Gaussian prior about 8 s (20 s with SymPy's
``series``), with the Rademacher prior about 10 s (SymPy's ``series`` had not finished order 1
after 10 minutes, in ``trigsimp``).
"""

from __future__ import annotations

import sympy

from ..errors import ConvergenceError
from ..symbolic.gaussian import GaussianIntegral
from ..symbolic.truncated_series import Expander, Series, SeriesError


def has_gaussian(exprs) -> bool:
    return any(sympy.sympify(e).has(GaussianIntegral) for e in exprs)


def _moment(k: int):
    """E z^k for a standard normal z."""
    if k % 2:
        return sympy.Integer(0)
    return sympy.factorial2(k - 1) if k else sympy.Integer(1)


def _short(expr, width: int = 100) -> str:
    """``expr`` printed, cut to ``width`` characters (for one-line messages)."""
    text = str(expr)
    return text if len(text) <= width else text[:width - 3] + "..."


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
                f"the Gaussian integral of {_short(g)} (a function of {z} left at the expansion "
                "point, "
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
                    f"the Gaussian integral of {_short(g)} did not reach {self.dps} digits "
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


def _expander(t, keep, numeric) -> Expander:
    """Series in ``t`` (:class:`~replica.symbolic.truncated_series.Expander`) in which a
    Gaussian integral is expanded under the integral sign: its integrand's series, exact through
    the order asked for, integrated term by term (:func:`_integrate`); an integral nested in
    another's integrand is expanded when the outer integrand's series reaches it."""
    def leaf(e, n):
        if not isinstance(e, GaussianIntegral):
            return None
        f, z = e.args
        coeffs = ex.coefficients(f, n)
        return Series({j: _integrate(c, z, keep, numeric) for j, c in coeffs.items()}, n)
    ex = Expander(t, leaf)
    return ex


def _series_coeffs(ex, expr, n):
    """``[a_0, ..., a_n]`` with ``expr = sum a_p t^p + O(t^(n+1))`` by the expander ``ex``; a
    negative power with a nonzero coefficient raises, and so does a power of ``t`` that is not
    an integer."""
    try:
        lau = ex.coefficients(expr, n)
    except SeriesError as exc:
        raise ConvergenceError(f"the series in {ex.t}: {exc}", tried="the series under the "
                               "Gaussian integrals", status="stalled") from None
    for p, c in lau.items():
        if p < 0 and sympy.simplify(c) != 0:
            raise ConvergenceError(f"the equations diverge like {ex.t}^{p} at the expansion "
                                   "point", tried="the series under the Gaussian integrals",
                                   status="singular-jacobian")
    return [lau.get(k, sympy.Integer(0)) for k in range(n + 1)]


def series_at_zero(problem, unknowns, eqs, eps, order, dps=30, progress=None):
    r"""Coefficients ``{theta: [c_0, ..., c_order]}`` of the unknowns in ``eps`` (the equations
    ``eqs`` hold ``eps`` for the expansion parameter, at ``eps -> 0+``) and the record of numeric
    integrals (``{integrand: value}``)."""
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
        c0 = _series_coeffs(_expander(t, set(), numeric), e.xreplace(names), 0)[0]
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

    ex = _expander(t, keep, numeric)
    coeffs = [_series_coeffs(ex, e.xreplace(ansatz), n) for e in eqs_t]
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
    return ([sympy.simplify(c) for c in _series_coeffs(_expander(t, set(), numeric), e, n)],
            dict(numeric.done))
