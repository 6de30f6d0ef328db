r"""The pieces of the Gaussian replica calculus a GLM's free energy is assembled from, computed by
SymPy from the parts (:mod:`replica.glm.parts`).

* :func:`minimise` -- the minimiser and minimum of :math:`F(t) = Q(t, x) + \ell(t)`, with
  :math:`Q` a strictly convex quadratic in :math:`t` whose slope decreases linearly in the
  argument :math:`x` (a Moreau envelope: :math:`Q = (t - x)^2/(2V)`; a penalty's channel:
  :math:`Q = \hat Vt^2/2 - bt`). For a piecewise-polynomial :math:`\ell` of degree
  :math:`\le 2` the stationarity condition on each piece is linear in :math:`t` and
  :func:`sympy.solve` gives the piece's minimiser; it is the minimiser of :math:`F` for the
  arguments where it falls inside the piece (the ends solved from the stationarity condition at
  the piece's ends, where it is linear in :math:`x`), and at a kink :math:`c` of :math:`\ell`
  the minimiser sticks at :math:`c` for the arguments between the two one-sided stationarity
  conditions (the subgradient contains zero). The minimum is the sum of the pieces' values times
  the indicators of their argument intervals (Heaviside functions, which
  :func:`replica.modeling.gauss` turns into quadrature breakpoints). For a smooth loss the
  minimiser is the :func:`~replica.modeling.implicit_root` of :math:`V\partial_tF = 0` on the
  loss's declared bracket.
* :func:`expect` -- :math:`\int\mathcal Dz\,f(z)`: the terms polynomial in :math:`z` in closed
  form (Gaussian moments :math:`\mathbb Ez^{2k} = (2k-1)!!`), the rest as one
  :func:`~replica.modeling.gauss` integral.
* :func:`gaussian_exp_integral` -- :math:`\int dx\,e^{-ax^2/2 + bx + c}
  = \sqrt{2\pi/a}\,e^{b^2/(2a) + c}` (completing the square), read off the coefficients of an
  exponent quadratic in :math:`x`.
* :func:`conditional_law` -- the law of a linear combination of jointly Gaussian variables given
  one of them (Gaussian conditioning: mean :math:`\mathrm{Cov}(L, \omega)\,\omega/\mathrm{Var}\,\omega`,
  variance :math:`\mathrm{Var}\,L - \mathrm{Cov}(L, \omega)^2/\mathrm{Var}\,\omega`).
"""

from __future__ import annotations

import dataclasses

import sympy

from ..modeling import gauss, implicit_root

__all__ = ["Minimiser", "minimise", "expect", "expect_tail", "expect_piecewise",
           "gaussian_exp_integral",
           "conditional_law", "indicator", "is_even", "GLMCalculusError"]


class GLMCalculusError(ValueError):
    """A part this calculus cannot handle (a piece whose stationarity is not linear, ...)."""


def indicator(x, lo, hi):
    r""":math:`\theta(x - \mathrm{lo})\,\theta(\mathrm{hi} - x)` (infinite ends omitted)."""
    out = sympy.Integer(1)
    if lo != -sympy.oo:
        out *= sympy.Heaviside(x - lo)
    if hi != sympy.oo:
        out *= sympy.Heaviside(hi - x)
    return out


@dataclasses.dataclass
class Minimiser:
    r"""``value`` :math:`\min_tF`, ``argmin`` :math:`t^*(x)` and ``slope`` :math:`dt^*/dx` as
    expressions in the argument ``x``; ``regions``: ``(lo, hi, t*)`` per interval of ``x``
    (empty for an implicit root)."""

    x: sympy.Symbol
    value: sympy.Expr
    argmin: sympy.Expr
    slope: sympy.Expr
    regions: tuple = ()
    implicit: bool = False


def _single_solution(eq, var, what):
    """The one solution of ``eq = 0`` in ``var`` (:func:`sympy.solve`, then
    :func:`sympy.cancel`), remembered on disk (:func:`_remembered_solution`)."""
    key = f"{sympy.srepr(eq)}\n{sympy.srepr(var)}"
    hit = _remembered_solution(key)
    if hit is not None:
        return hit
    sols = sympy.solve(eq, var, dict=False)
    if len(sols) != 1:
        raise GLMCalculusError(f"{what}: the stationarity condition {eq} = 0 has {len(sols)} "
                               f"solutions in {var}, not one")
    out = sympy.cancel(sols[0])
    _remember_solution(key, out)
    return out


def _solution_entry(key: str):
    """The code cache (:class:`~replica.symbolic.codegen.CodeCache`) of the remembered
    solution of the equation and variable whose :func:`sympy.srepr` is ``key``: under a key of
    this package's files, the SymPy, mpmath and NumPy versions and ``key``; ``None`` where
    there is no cache folder."""
    from ..symbolic.codegen import CodeCache, cache_key

    cache = CodeCache(cache_key("glm-solve", [], salt=key))
    return None if cache.folder() is None else cache


def _remembered_solution(key: str):
    r"""The solution :func:`_single_solution` stored for ``key`` (the equation's and the
    variable's :func:`sympy.srepr`), or ``None``. Why: :func:`sympy.solve` simplifies its
    solution, and :func:`sympy.simplify` imports ``sympy.physics.units`` (about 0.1 s CPU)
    -- the largest part of building a GLM with a ridge penalty (``examples/glm_logistic.py``),
    paid again by every process that loads the model. The entry holds the key and the
    solution's ``srepr``; it is used only where its seal holds (:func:`~replica.symbolic.codegen.CodeCache`),
    its key is ``key`` exactly and the expression read back has that ``srepr`` exactly (the
    same tree of the same SymPy objects, so everything built from it is unchanged);
    otherwise the solution is computed again."""
    from ..symbolic.codegen import _unsealed

    cache = _solution_entry(key)
    if cache is None:
        return None
    path = cache.path("solution", ".txt")
    try:
        with open(path) as fh:
            text = _unsealed(fh.read())
    except OSError:
        return None
    if text is None:
        return None
    stored_key, sep, solution = text.rpartition("\n=\n")
    if not sep or stored_key != key:
        return None
    try:
        out = eval(solution, dict(vars(sympy)))  # noqa: S307 - sealed text this module wrote
    except Exception:  # a name srepr writes that SymPy does not export (an implicit root)
        return None
    return out if isinstance(out, sympy.Basic) and sympy.srepr(out) == solution else None


def _remember_solution(key: str, solution) -> None:
    """Store ``solution`` for :func:`_remembered_solution` (where its ``srepr`` reads back as
    the same expression)."""
    cache = _solution_entry(key)
    if cache is None:
        return
    text = sympy.srepr(solution)
    try:
        same = sympy.srepr(eval(text, dict(vars(sympy)))) == text  # noqa: S307
    except Exception:
        same = False
    if same:
        cache.store("solution", f"{key}\n=\n{text}", ".txt", sealed=True)


def minimise(Q, pieces, t, x, *, smooth=None, bracket=None, scale=1, name="prox") -> Minimiser:
    r"""The minimiser of :math:`Q(t, x) + \ell(t)` (see the module docstring). ``pieces``:
    :class:`~replica.glm.parts.Piece` records (ordered, adjacent), or ``smooth`` (an expression in
    ``t``) with ``bracket(x, scale)`` and ``scale`` the positive factor that makes
    ``scale * dF/dt`` the implicit function's equation (:math:`V` for an envelope)."""
    if smooth is not None:
        F = Q + smooth
        p_, x_, s_ = sympy.symbols(f"{name}_t {name}_x {name}_s", real=True)
        if not isinstance(scale, sympy.Symbol):
            raise GLMCalculusError(f"{name}: the scale of an implicit minimiser is a symbol")
        eq = sympy.expand(scale * sympy.diff(F, t)).xreplace({t: p_, x: x_, scale: s_})
        free = eq.free_symbols - {p_, x_, s_}
        if free:
            raise GLMCalculusError(f"{name}: the stationarity condition depends on "
                                   f"{', '.join(sorted(map(str, free)))}")
        lo, hi = bracket(x_, s_)
        R = implicit_root(name, eq, p_, (x_, s_), bracket=(lo, hi))
        root = R(x, scale)
        return Minimiser(x, F.xreplace({t: root}), root, sympy.diff(root, x), implicit=True)
    regions = []
    for k, piece in enumerate(pieces):
        F = Q + piece.expr
        dF = sympy.diff(F, t)
        if not sympy.Poly(sympy.expand(dF), t).degree() <= 1 or sympy.diff(dF, t) == 0:
            raise GLMCalculusError(f"{name}: piece {k} does not give a strictly convex "
                                   "quadratic objective")
        tk = _single_solution(dF, t, name)
        lo = -sympy.oo if piece.lo == -sympy.oo else _single_solution(dF.subs(t, piece.lo), x,
                                                                       name)
        hi = sympy.oo if piece.hi == sympy.oo else _single_solution(dF.subs(t, piece.hi), x,
                                                                     name)
        regions.append((lo, hi, tk, F))
        if k + 1 < len(pieces):  # the kink between this piece and the next
            c = piece.hi
            F2 = Q + pieces[k + 1].expr
            a = hi
            b = _single_solution(sympy.diff(F2, t).subs(t, c), x, name)
            if sympy.cancel(b - a) != 0:
                regions.append((a, b, sympy.sympify(c), F))
    value = sympy.Integer(0)
    argmin = sympy.Integer(0)
    slope = sympy.Integer(0)
    kept = []
    for lo, hi, tk, F in regions:
        ind = indicator(x, lo, hi)
        v = sympy.factor(sympy.cancel(F.subs(t, tk)))
        value += v * ind
        argmin += tk * ind
        slope += sympy.diff(tk, x) * ind
        kept.append((lo, hi, tk))
    return Minimiser(x, value, argmin, slope, tuple(kept))


def _moment(k: int):
    return sympy.factorial2(k - 1) if k % 2 == 0 else sympy.Integer(0)


def expect(expr, z):
    r""":math:`\int\mathcal Dz\,\mathrm{expr}`: polynomial terms by their moments, the others in
    one :func:`~replica.modeling.gauss` integral."""
    expr = sympy.sympify(expr)
    closed, rest = sympy.Integer(0), sympy.Integer(0)
    for term in sympy.Add.make_args(expr):
        if not term.has(z):
            closed += term
        elif term.is_polynomial(z):
            poly = sympy.Poly(sympy.expand(term), z)
            closed += sum(c * _moment(k) for (k,), c in poly.terms())
        else:
            rest += term
    return sympy.cancel(closed) + (gauss(rest, z) if rest != 0 else 0)


def expect_tail(expr, z, a):
    r""":math:`\int\mathcal Dz\,\theta(z - a)\,p(z)` for a polynomial :math:`p` in ``z``, in
    closed form by the tail moments :math:`M_k = \mathbb E[z^k\theta(z - a)]`:
    :math:`M_0 = \tfrac12\operatorname{erfc}(a/\sqrt2)`, :math:`M_1 = \varphi(a)` and, integrating
    :math:`z^{k-1}\cdot z\varphi(z) = -z^{k-1}\varphi'(z)` by parts on :math:`(a, \infty)`,
    :math:`M_k = a^{k-1}\varphi(a) + (k - 1)M_{k-2}`."""
    poly = sympy.Poly(sympy.expand(expr), z)
    phi = sympy.exp(-a**2 / 2) / sympy.sqrt(2 * sympy.pi)
    M = [sympy.erfc(a / sympy.sqrt(2)) / 2, phi]
    for k in range(2, poly.degree() + 1):
        M.append(a**(k - 1) * phi + (k - 1) * M[k - 2])
    return sum(sympy.cancel(c) * M[k] for (k,), c in poly.terms())


def expect_piecewise(f, x, mean, scale, z):
    r""":math:`\int\mathcal Dz\,f(\mathrm{mean} + \mathrm{scale}\,z)` in closed form for ``f``
    a sum of terms :math:`p(x)\prod_j\theta(k_jx + c_j)`, each :math:`p` a polynomial in
    ``x``, at most two Heaviside factors per term with arguments linear in ``x`` and slopes
    :math:`k_j` of known sign; ``scale`` :math:`> 0` (the standard deviation of the field, a
    square root: its sign is taken as given, not proved). Returns ``None`` for any other ``f``.

    With :math:`x = \mu + sz`, :math:`\theta(kx + c)` is :math:`\theta(z - a)` for
    :math:`k > 0`, :math:`a = (-c/k - \mu)/s`, and :math:`\theta(h - z)` for :math:`k < 0`,
    :math:`h = (-c/k - \mu)/s`; the latter becomes a tail by :math:`z \to -z` (the Gaussian
    measure is even): :math:`\mathbb E[p(z)\theta(h - z)] = \mathbb E[p(-z)\theta(z + h)]`.
    Two factors :math:`\theta(z - a)\theta(h - z)` are :math:`\theta(z - a) - \theta(z - h)`
    when SymPy proves :math:`a \le h` (compared as the roots in ``x``, where the sign of
    ``scale`` plays no part), and zero when it proves :math:`h \le a` (two disjoint regions'
    indicators multiplied, from squaring a sum over regions); otherwise ``None``. A power
    :math:`\theta^n` is :math:`\theta`. Each tail is
    :func:`expect_tail` (the truncated Gaussian moments, :math:`\operatorname{erfc}` and
    :math:`e^{-a^2/2}`)."""
    total = sympy.Integer(0)
    for term in sympy.Add.make_args(sympy.expand(sympy.sympify(f))):
        steps, poly = [], sympy.Integer(1)
        for fac in sympy.Mul.make_args(term):
            if (isinstance(fac, sympy.Pow) and isinstance(fac.base, sympy.Heaviside)
                    and fac.exp.is_integer and fac.exp.is_positive):
                fac = fac.base  # theta^n = theta almost everywhere
            if isinstance(fac, sympy.Heaviside):
                arg = sympy.expand(fac.args[0])
                k = sympy.diff(arg, x)
                if k == 0 or sympy.diff(arg, x, 2) != 0 or k.is_positive is None:
                    return None
                root = -(arg - k * x) / k  # the x where the argument vanishes
                steps.append((root, bool(k.is_positive)))
            elif fac.has(x) and not fac.is_polynomial(x):
                return None
            else:
                poly *= fac
        p = sympy.expand(poly.xreplace({x: mean + scale * z}))

        def edge(root):  # the z of x = root
            return (root - mean) / scale

        if not steps:
            total += expect(p, z)
        elif len(steps) == 1:
            root, up = steps[0]
            total += (expect_tail(p, z, edge(root)) if up
                      else expect_tail(p.xreplace({z: -z}), z, -edge(root)))
        elif len(steps) == 2 and steps[0][1] != steps[1][1]:
            lo = steps[0][0] if steps[0][1] else steps[1][0]
            hi = steps[1][0] if steps[0][1] else steps[0][0]
            width = sympy.simplify(hi - lo)
            if width.is_nonpositive:  # x > lo and x < hi <= lo: empty
                continue
            if not width.is_nonnegative:
                return None
            total += expect_tail(p, z, edge(lo)) - expect_tail(p, z, edge(hi))
        else:
            return None
    return total


def gaussian_exp_integral(exponent, x):
    r""":math:`\int_{\mathbb R}dx\,e^{\mathrm{exponent}}` for an exponent :math:`-ax^2/2 + bx + c`
    (:math:`a > 0`): :math:`\sqrt{2\pi/a}\,e^{b^2/(2a) + c}`."""
    poly = sympy.Poly(sympy.expand(exponent), x)
    if poly.degree() != 2:
        raise GLMCalculusError(f"the exponent {exponent} is not quadratic in {x}")
    a = -2 * poly.coeff_monomial(x**2)
    b = poly.coeff_monomial(x)
    c = poly.coeff_monomial(1)
    return sympy.sqrt(2 * sympy.pi / a) * sympy.exp(sympy.cancel(b**2 / (2 * a)) + c)


def conditional_law(coeffs, cov, given):
    r"""Mean coefficient and variance of :math:`L = \sum_i c_iX_i` given :math:`X_g`:
    ``coeffs`` the :math:`c_i`, ``cov`` the covariance matrix of :math:`X`, ``given`` the index
    :math:`g`. Returns ``(k, v)``: :math:`\mathbb E[L\,|\,X_g] = kX_g`,
    :math:`\mathrm{Var}[L\,|\,X_g] = v`."""
    c = sympy.Matrix(coeffs)
    C = sympy.Matrix(cov)
    var_L = (c.T * C * c)[0, 0]
    cov_Lg = (c.T * C[:, given])[0, 0]
    var_g = C[given, given]
    return sympy.cancel(cov_Lg / var_g), sympy.expand(var_L - cov_Lg**2 / var_g)


def is_even(f, x) -> bool:
    """Whether ``f(-x) == f(x)`` identically (SymPy)."""
    return sympy.expand(f.xreplace({x: -x}) - f) == 0
