r"""Functions defined by an equation: :math:`p = R(a_1, \dots, a_k)` is the root in :math:`p` of
:math:`F(p; a_1, \dots, a_k) = 0` on a bracket :math:`[\ell(a), u(a)]`, as a SymPy function that
may appear anywhere in an expression -- in particular inside the integrand of a Gaussian integral
(:func:`replica.symbolic.gaussian.gauss`), where it is evaluated at every quadrature node.

The proximal operator of a loss without a closed form is the typical use: for
:math:`\ell(p) = \log(1 + e^{-p})` the minimiser of :math:`(p - \omega)^2/(2V) + \ell(p)` solves
:math:`p - \omega + V\ell'(p) = 0`::

    p, w, V = sympy.symbols("p omega V", real=True)
    prox = implicit_root("prox_logistic", p - w - V / (1 + sympy.exp(p)), p, (w, V),
                         bracket=(w, w + V))
    prox(sympy.sqrt(q) * z, V)          # a SymPy expression

**Contract.** On the bracket :math:`F` is continuous, increasing in :math:`p`
(:math:`\partial_p F > 0`), :math:`F(\ell) \le 0 \le F(u)`: then the root exists, is unique and
is a smooth function of the arguments wherever :math:`\partial_p F > 0` (implicit function
theorem). For the proximal map of a convex loss and :math:`V > 0`,
:math:`\partial_p F = 1 + V\ell''(p) \ge 1`. Where rounding makes a bracket end fail its sign
test (an argument so large that :math:`\omega + V` rounds to :math:`\omega`), the end is moved
outwards by doubling steps until it passes (:math:`F` increasing on the whole line is then
assumed); otherwise :class:`ImplicitRootError`.

**Derivatives** by the implicit function theorem: differentiating :math:`F(R(a); a) = 0` in
:math:`a_i` gives

.. math::  \partial_{a_i} R = -\frac{\partial_{a_i} F}{\partial_p F}\Big|_{p = R(a)},

an expression in :math:`R` itself and the arguments, so derivatives of every order are again
expressions of the same kind (the saddle-point conditions and the exact Jacobians of Newton's
method need the first and second).

**Identity.** A function is identified by the contents of its declaration
(:func:`content_digest`: name, unknown, variables, equation, bracket), not by the Python class
made when a model file is executed: declaring the same function again returns the same class,
and generated code that evaluates it is cached on disk like any other
(:mod:`replica.symbolic.codegen` records the digest of each implicit function the code names and
binds the name, when the code is loaded, to the function of this process with that digest; code
whose digest no declaration of this process has is generated again).

**Evaluation** (``_imp_``, which ``sympy.lambdify`` puts in every generated function's
namespace, so :mod:`replica.symbolic.codegen` needs no change): an ``mpf`` argument is solved
first in float64 (the iteration below in Python floats; its bracket's ends checked in float64)
and then by Newton's method at the working precision from that root, two or three steps (each
squares the relative error of about :math:`10^{-16}`; the stopping rule below), in python-flint
at ball midpoints; where that is not available (an argument beyond float64's range, a float64
bracket that fails its sign test, a first step above :math:`2^{-30}`, a step that does not
shrink) it is solved at the working precision by bracketed Newton (a Newton step that leaves the current bracket is
replaced by bisection, and so is one larger than half the step before last -- the safeguard of
Numerical Recipes' ``rtsafe``: on an S-shaped :math:`F`, the logistic proximal map at large
:math:`V`, Newton steps of one size go back and forth across the root -- except below the
stopping scale; the bracket shrinks with the sign of :math:`F` at each iterate), stopped
when a step is below :math:`2^{-p+4}` of the root's size after the iteration has entered
Newton's quadratic regime, and remembered per (precision, arguments): the integrals of one
solve evaluate the same root at the same nodes many times. Float64 (NumPy) arguments of any
shape are solved element-wise by the same iteration (the same safeguard), vectorised, with :math:`F` evaluated in the
arguments' own type (``longdouble`` for the extended-precision check of a float64 solve), each
element stopped where its Newton step is below 4 units in the last place, its bracket is down to
2 units, or its steps stop shrinking at a few units (the rounding noise of :math:`F`). At ball
midpoints (the fast integrands of the mpmath quadrature) the root is remembered by the balls'
exact midpoints, and :math:`F` and :math:`\partial_p F` come from one evaluation.

**Balls** (python-flint ``arb``, and ``acb`` for the integrands of ``acb.integral``): an
enclosure of the root for every point of the argument balls :math:`A`, by the Krawczyk test
(``_Numeric.ball``). From :math:`p_0` (Newton's method at the balls' midpoints, from the
float64 root) and :math:`c = 1/\partial_p F(p_0)` (an exact number), for a box :math:`P \ni p_0`

.. math::  K(P) = p_0 - c\,F(p_0; A) + \bigl(1 - c\,\partial_p F(P; A)\bigr)(P - p_0),

every term a ball enclosure. If :math:`K(P) \subset \operatorname{int} P`, then for every
:math:`a \in A` the map :math:`g(p) = p - cF(p; a)` sends :math:`P` into :math:`K(P)` (the
mean-value form of :math:`g` on the convex :math:`P`), so has a fixed point there -- a root --
and :math:`|1 - c\,\partial_p F| < 1` on :math:`P` makes it a contraction: the root in
:math:`P` is unique, and :math:`\partial_p F \ne 0` on :math:`P`, so by the implicit function
theorem the root is an analytic function of :math:`a` on :math:`A` (what ``acb.integral``
requires of an integrand). A complex box is a rectangle; complex ball arithmetic computes the
same set as the real two-dimensional Krawczyk operator of :math:`(\operatorname{Re} F,
\operatorname{Im} F)`, whose Jacobians are the multiplications by :math:`\partial_p F`. The
box starts at twice the radius of the Newton image plus the last Newton step (complex balls:
first at ``_Numeric.COMPLEX_START`` = 1.25 times, a narrower enclosure where it passes) and
is inflated (doubled past :math:`K(P)`) up to ``_Numeric.INFLATIONS`` times; :math:`\partial_p F(P)`
is the narrower of its direct enclosure and the mean-value form
:math:`\partial_p F(p_0) + \partial_p^2 F(P)(P - p_0)`, on the whole box or, where that does
not contract, on a grid of pieces of it.

*Which root.* At every real point of :math:`A` the root in :math:`P` is the declared one: the
test also asks :math:`\partial_p F > 0` on the real points of :math:`P` and that :math:`P` meet
the bracket; :math:`F` then increases on the union of both intervals (on the bracket by the
contract) and has one root there. A complex box around argument balls that meet the real axis
is taken symmetric about it, so at a real point the root in it is real (its conjugate is a root
in the same box): the enclosed function is the analytic continuation of the real root (the
balls of ``acb.integral`` all meet its real path). Complex balls off the real axis are
refused.

*Refusal.* Real balls on which the test does not pass (too wide: :math:`\partial_p F` not
enclosed away from where it defeats the contraction, after the inflations) raise
``NotEnclosable`` naming the function and the reason; complex balls get a non-finite ball,
which ``acb.integral`` treats as a point of non-analyticity (it subdivides). The derivatives of
the root (above) are expressions in the root, so the generated ball code encloses them with the
same test.
"""

from __future__ import annotations

import hashlib
import math
import sys
import weakref

import mpmath
import numpy as np
import sympy

__all__ = ["ImplicitRoot", "implicit_root", "ImplicitRootError", "content_digest",
           "forget_ball_enclosures"]


class ImplicitRootError(ValueError):
    """A declaration that is not a root-defined function (the unknown among the arguments, a
    bracket of the wrong length, ...), or an evaluation whose bracket does not enclose a sign
    change."""


class ImplicitRoot(sympy.Function):
    r"""Base class of the functions :func:`implicit_root` makes. Class attributes: ``equation``
    (:math:`F`, in ``unknown`` and ``variables``), ``unknown``, ``variables`` (the formal
    arguments), ``bracket`` (two expressions in ``variables``), ``digest`` (the declaration's
    :func:`content_digest`)."""

    equation: sympy.Expr
    unknown: sympy.Symbol
    variables: tuple
    bracket: tuple
    digest: str

    @classmethod
    def eval(cls, *args):
        if len(args) != len(cls.variables):
            raise ImplicitRootError(f"{cls.__name__} takes {len(cls.variables)} arguments, got "
                                    f"{len(args)}")
        return None

    def _at_root(self, expr):
        """``expr`` (in ``unknown`` and ``variables``) at this call's arguments and root."""
        mapping = dict(zip(self.variables, self.args))
        mapping[self.unknown] = self
        return expr.xreplace(mapping)

    def fdiff(self, argindex=1):
        v = self.variables[argindex - 1]
        F, p = self.equation, self.unknown
        return self._at_root(-sympy.diff(F, v) / sympy.diff(F, p))

    def residual(self):
        """:math:`F(R(a); a)`, zero identically (for checks)."""
        return self._at_root(self.equation)

    def _eval_is_extended_real(self):
        return True

    def _latex(self, printer, exp=None):
        name = self._latex_name or r"\operatorname{%s}" % self.__class__.__name__.replace(
            "_", r"\_")
        tex = r"%s\left(%s\right)" % (name, ", ".join(printer._print(a) for a in self.args))
        return tex if exp is None else r"%s^{%s}" % (tex, exp)

    _latex_name = None


_FLOAT_ERRORS = (OverflowError, ZeroDivisionError, ValueError, TypeError)

_MATH_FOR_NUMPY = {name: getattr(math, name) for name in (
    "exp", "log", "sqrt", "expm1", "log1p", "sin", "cos", "tan", "sinh", "cosh", "tanh",
    "erf", "erfc")}
_MATH_FOR_NUMPY.update(arctan=math.atan, arcsin=math.asin, arccos=math.acos,
                       arctanh=math.atanh, arcsinh=math.asinh, arccosh=math.acosh)
"""The ``math`` functions that replace NumPy's of the same name in
``_Numeric._scalar_functions`` (``math.log`` of one argument is the natural logarithm, as
NumPy's)."""


def _is_numpy(v) -> bool:
    """Whether ``v`` is a NumPy (or SciPy) function or ufunc, as the generated NumPy code names
    them."""
    if isinstance(v, np.ufunc):
        return True
    module = getattr(v, "__module__", None) or ""
    return callable(v) and module.split(".")[0] in ("numpy", "scipy")


class _NoContraction(Exception):
    """A complex ball on which :meth:`_Numeric.ball` proves no root (a non-finite ball is
    returned to ``acb.integral``)."""


def _radius(b):
    """The radius of a ball (``arb``), or the larger of the radii of a complex ball's parts
    (``acb``), as an exact ``arb``."""
    import flint

    if type(b) is flint.acb:
        return max(b.real.rad(), b.imag.rad())
    return b.rad()


def _radius_mid(x):
    """``|mid(x)|`` (an exact ``arb``), 0 for ``None``."""
    import flint

    if x is None:
        return flint.arb(0)
    return (abs(x.mid()).upper() if type(x) is flint.acb else abs(x.mid()))


def _narrower(a, b):
    """Of two enclosures of the same value, the one with the smaller radius (a finite one)."""
    if not a.is_finite():
        return b
    if not b.is_finite():
        return a
    return a if _radius(a) <= _radius(b) else b


def _split(b, n: int) -> list:
    r"""``n`` balls whose union covers the ball ``b`` (an ``arb``): piece ``i`` is the union of
    enclosures of :math:`\ell + i(u - \ell)/n` and :math:`\ell + (i + 1)(u - \ell)/n`
    (:math:`[\ell, u]` the ball's interval), so it holds the segment between these points and
    consecutive pieces share an end."""
    lo, hi = b.lower(), b.upper()
    points = [lo + (hi - lo) * i / n for i in range(n + 1)]
    return [points[i].union(points[i + 1]) for i in range(n)]


def _in_sigmoid(expr, unknown):
    r"""``expr`` with its exponentials in ``unknown``, all integer powers :math:`E^k` of one
    :math:`E = e^{u}` (:func:`~.gaussian.logistic_base` of the first of them), written through
    :math:`S = 1/(1 + e^{-u})` (:func:`~.gaussian.sigmoid_rational`: :math:`E = S/(1 - S)`,
    the expression made rational in :math:`S`): the same meromorphic function; unchanged
    where the exponentials are not of that form. Why: over a complex box of a few
    hundredths, the logistic equation's
    :math:`\partial_p F = 1 + Ve^{-p}/(1 + e^{-p}) - Ve^{-2p}/(1 + e^{-p})^2` evaluated as
    written loses all accuracy at :math:`p \ll 0` (two terms of size :math:`V`, each as wide
    as :math:`e^{-p}` is relatively, cancel), and the Krawczyk test fails; in
    :math:`S = 1/(1 + e^{p})` it is :math:`1 + VS(1 - S)`, whose ball is as narrow as
    :math:`S` (issue 29)."""
    from .gaussian import logistic_base, sigmoid_rational

    exps = sorted((e for e in expr.atoms(sympy.exp) if e.has(unknown)),
                  key=sympy.default_sort_key)
    if not exps:
        return expr
    u, members = logistic_base(exps[0], exps)
    if len(members) != len(exps):
        return expr
    S = sympy.Dummy("S")
    rational = sigmoid_rational(expr, members, S)
    if any(a.has(unknown) for a in rational.atoms(sympy.exp)):
        return expr
    return rational.xreplace({S: 1 / (1 + sympy.exp(-u))})


def _ball_key(args) -> tuple:
    r"""The exact contents of balls (python-flint ``arb`` or ``acb``) and the working precision,
    as a hashable key: each ball's midpoint and radius as exact (mantissa, exponent) pairs (of
    the real and imaginary parts), the type, and ``flint.ctx.prec``. Two argument tuples with
    the same key are the same sets at the same precision, so any function of them -- the root
    enclosure of :meth:`_Numeric.ball` -- has the same value at both; a key of the midpoints
    alone would hand the enclosure of a narrow ball to a wider one that it need not contain."""
    import flint

    out = [flint.ctx.prec]
    parts = _KEY_PARTS
    for a in args:
        hit = parts.get(id(a))
        if hit is not None and hit[0] is a:  # (the same object: its part of the key, again)
            out.append(hit[1])
            continue
        if type(a) is flint.acb:
            re, im = a.real, a.imag
            part = (1, re.mid().man_exp(), re.rad().man_exp(), im.mid().man_exp(),
                    im.rad().man_exp())
        else:
            part = (0, a.mid().man_exp(), a.rad().man_exp())
        if len(parts) >= _KEY_PARTS_SIZE:
            parts.clear()
        parts[id(a)] = (a, part)
        out.append(part)
    return tuple(out)


_KEY_PARTS: dict = {}
"""``id(ball) -> (ball, its part of a key)`` for :func:`_ball_key`: an integrand passes the same
ball object (a parameter, a hoisted part) at every node of a rule, whose key part is then
computed once. The ball is held with its part, so its ``id`` is not reused while the entry
lives, and python-flint balls are immutable, so the part stays its exact contents."""

_KEY_PARTS_SIZE = 64
"""Entries of ``_KEY_PARTS`` at most (emptied when full)."""


def _not_enclosable():
    """:class:`replica.symbolic.balls.NotEnclosable` (imported when first needed: an
    ``except`` clause names it, and an import in :meth:`_Numeric.ball`, called at every
    quadrature node, cost about 2 us a call)."""
    from .codegen import NotEnclosable

    return NotEnclosable


def _magnitude(b):
    """An upper bound of ``|b|`` (an exact ``arb``)."""
    return abs(b).upper()


_NUMERICS: "weakref.WeakSet" = weakref.WeakSet()
"""Every root finder of this process (:func:`forget_ball_enclosures` empties their memos)."""


def forget_ball_enclosures() -> None:
    """Empty every implicit function's memo of root enclosures (:meth:`_Numeric.ball`) and of
    the float64 starts of their Newton iterations (:meth:`_Numeric._ball_start`): a
    certificate (:func:`replica.numerics.certify.certify_point`) starts and ends with it, so
    each proof computes its own enclosures (and their cost is that of one proof) and the
    memory is given back."""
    for numeric in list(_NUMERICS):
        numeric._ball_memo.clear()
        numeric._start_memo.clear()
        numeric._float_memo.clear()


_ARB_OF: list = []  # codegen.arb_of, imported on first use (as the function-level imports here)


def _load_arb_of():
    from .codegen import arb_of

    _ARB_OF.append(arb_of)
    return arb_of


def _newton_step_kept(new, p, lo, hi, older, small) -> bool:
    """Whether the Newton iterate ``new`` from ``p`` is taken (else the bracket ``(lo, hi)`` is
    bisected): inside the bracket, and at most half the step before last (``older``) unless the
    step is below ``small`` relative to ``max(|p|, 1)`` -- the safeguard of ``rtsafe`` against
    an S-shaped :math:`F` sending Newton back and forth across the root in steps of one size
    (the scalar iterations at the working precision and in float64; the vectorised one applies
    the same test elementwise)."""
    size = abs(new - p)
    return lo < new < hi and not (size > older / 2 and size > small * max(abs(p), 1))


class _Numeric:
    """The numeric root finder of one implicit function (built on first use)."""

    MAX_ITER = 400

    def __init__(self, cls):
        self.cls = cls
        _NUMERICS.add(self)
        self._mp = None
        self._np = None
        self._scalar = None  # _scalar_functions(), () where there are none
        self._mid = None
        self._memo: dict = {}
        self._mid_memo: dict = {}  # midpoint(): the balls' midpoints (exact) -> the root's ball
        self._ball_memo: dict = {}  # ball(): the balls' exact contents -> the enclosure
        self._start_memo: dict = {}  # _ball_start(): float64 midpoints -> _float_root's result
        self._float_memo: dict = {}  # _ball_polish(): float64 midpoints -> _float_root's result
        self._np_memo: list = []  # the last few float64 solves: (arguments, their ends, roots)

    def midpoint(self, *args):
        """The root at the midpoints of the balls ``args`` (python-flint ``arb``), as an exact
        ball: *not* an enclosure (that is :meth:`ball`, the Krawczyk test), the fast
        evaluation of a Gaussian integral's integrand at mpmath's working precision
        (:mod:`replica.symbolic.codegen`), solved by the iteration of :meth:`mp` with
        :math:`F` and :math:`\\partial_p F` evaluated in ball arithmetic (their midpoints)."""
        # An exact argument (an integer constant of the generated code, say ``7`` at a random
        # point of a check) is the exact ball of that value. (This runs at every quadrature
        # node: the midpoints are taken once, for the key and for the iteration.)
        arb_of = _ARB_OF[0] if _ARB_OF else _load_arb_of()
        mids = [arb_of(a).mid() for a in args]
        key = (mpmath.mp.prec, *[m.man_exp() for m in mids])
        hit = self._mid_memo.get(key)  # (the integrals of one evaluation share their nodes)
        if hit is not None:
            return hit

        if self._mid is None:
            self._mid = self._ball_functions()
        value = self._ball_polish(mids)
        if value is None:  # the full bracketed iteration
            mids = [+mpmath.mpf((int(man), int(exp))) for man, exp in key[1:]]
            value = arb_of(self.mp(*mids, functions=self._mid))
        if len(self._mid_memo) > 200_000:
            self._mid_memo.clear()
        self._mid_memo[key] = value
        return value

    def _ball_functions(self):
        """``F, dF/dp, lo, hi, both`` as mpmath functions, ``F`` and ``dF/dp`` computed in ball
        arithmetic at the working precision (the midpoints, rounded to it); ``both`` gives
        ``(F, dF/dp)`` from one evaluation of the generated code (which computes both)."""
        import flint

        from .codegen import arb_of

        ev, _ = self._evaluators()
        mp = self._mp if self._mp is not None else self._functions("mpmath")
        outer = ev.functions("arb")[0]  # (raises NotEnclosable where F has no ball evaluation)

        def mid(b, fallback, v):
            b = arb_of(b)
            if not b.is_finite():
                return fallback(*v)
            man, exp = b.mid().man_exp()
            return +mpmath.mpf((int(man), int(exp)))

        def both(*v):
            """``(F, dF/dp)`` at ``v``, from one evaluation of the generated code (each the
            mpmath value where its ball is not finite)."""
            old = flint.ctx.prec
            try:
                flint.ctx.prec = mpmath.mp.prec
                f, d = outer(*[arb_of(x) for x in v])
            finally:
                flint.ctx.prec = old
            return mid(f, mp[0], v), mid(d, mp[1], v)

        self._arb_outer = outer
        return (lambda *v: both(*v)[0]), (lambda *v: both(*v)[1]), mp[2], mp[3], both

    def _ball_polish(self, args):
        r""":meth:`_polish` for :meth:`midpoint`, in python-flint: the arguments ``args`` exact
        balls (the midpoints), ``F`` and :math:`\partial_p F` the midpoints of the generated
        ball code at the working precision, every iterate the midpoint of its ball rounded to
        it (no conversion to mpmath inside the loop); an exact ball, or ``None`` where
        :meth:`_polish` would give none (or a ball is not finite).

        One more stopping rule than :meth:`_polish`'s: in the quadratic regime a Newton step
        of relative size :math:`r_k` leaves an error :math:`C r_k^2`, and two successive steps
        measure :math:`C \approx r_k / r_{k-1}^2`; the iteration ends once
        :math:`2^8\, r_k^3 / r_{k-1}^2` (the predicted error, with a factor :math:`2^8` for the
        variation of :math:`C`) is below the tolerance :math:`2^{-p+4}`. From a float64 root
        (:math:`r_1 \approx 10^{-16}`, :math:`r_2 \approx 10^{-32}`) that is after two
        evaluations of :math:`F` up to about 200 bits, where :meth:`_polish`'s rule takes a
        third whose step is below the precision.

        The sizes of the steps are compared in Python floats up to :data:`FLOAT_TESTS_PREC`
        bits (where every tolerance and the predicted error are normal floats; a step whose
        float underflows is below the tolerance), as midpoints of balls above.

        The float64 root (:meth:`_float_root`, a function of the arguments rounded to float64
        alone) is remembered under those floats (``_float_memo``, emptied when full and by
        :func:`forget_ball_enclosures`): the equations' evaluations at Newton's iterates and at
        the verifying re-solve are at points that differ beyond float64's precision, so most
        quadrature nodes repeat the float64 arguments of a node before (the ridge logistic
        30-digit point: 2,304 of 3,952). A remembered start is the one a new call would
        compute, so every root is unchanged."""
        import flint

        start = self._remembered_float_root(self._float_memo, tuple([float(a) for a in args]))
        if start is None:
            return None
        prec = mpmath.mp.prec
        if prec > self.FLOAT_TESTS_PREC:
            return self._ball_polish_balls(args, start, prec)
        outer, arb = self._arb_outer, flint.arb
        tol = math.ldexp(1.0, -prec + 4)
        small = math.ldexp(1.0, -(prec // 3))
        done = tol / 256  # a predicted error that ends the iteration (see above)
        last = 2.0 ** -30
        old = flint.ctx.prec
        try:
            flint.ctx.prec = prec
            p = arb(start[0])
            final = False  # the one more step once the quadratic regime is entered
            prev = None  # the relative size of the step before
            for _ in range(8):
                f, d = outer(p, *args)
                if not (f.is_finite() and d.is_finite()):
                    return None
                f, d = f.mid(), d.mid()
                if f == 0:
                    break
                if not d > 0:
                    return None
                step = (f / d).mid()
                scale = max(abs(float(p)), 1.0)
                a = abs(float(step))
                if not a <= last * scale:
                    return None
                p = (p - step).mid()
                if final or a <= tol * scale:
                    break
                r = a / scale
                if prev is not None and (r / prev) ** 2 * r <= done:
                    break  # the error this step leaves, C r^2 with C = r / prev^2, is below tol
                final = a <= small * scale
                last = prev = r
            else:
                return None
        finally:
            flint.ctx.prec = old
        lo, hi = start[1]
        slack = 2.0 ** -40 * max(abs(lo), abs(hi), 1.0)
        v = float(p)
        return p if lo - slack <= v <= hi + slack else None

    FLOAT_TESTS_PREC = 960
    """The precision (bits) up to which :meth:`_ball_polish` compares step sizes in floats."""

    def _ball_polish_balls(self, args, start, prec):
        """:meth:`_ball_polish` above :data:`FLOAT_TESTS_PREC` bits: the same iteration, its
        step sizes compared as midpoints of balls (a float would underflow)."""
        import flint

        outer, arb = self._arb_outer, flint.arb
        old = flint.ctx.prec
        try:
            flint.ctx.prec = prec
            p = arb(start[0])
            one = arb(1)
            tol, small = arb(2) ** (-prec + 4), arb(2) ** (-(prec // 3))
            last = arb(2) ** -30
            final = False  # the one more step once the quadratic regime is entered
            done = (tol / 256).mid()  # a predicted error that ends the iteration (docstring)
            prev = None  # the relative size of the step before
            for _ in range(8):
                f, d = outer(p, *args)
                if not (f.is_finite() and d.is_finite()):
                    return None
                f, d = f.mid(), d.mid()
                if f == 0:
                    break
                if not d > 0:
                    return None
                step = (f / d).mid()
                size = abs(p)
                scale = size if size > one else one
                a = abs(step)
                if not a <= (last * scale).mid():
                    return None
                p = (p - step).mid()
                if final or a <= (tol * scale).mid():
                    break
                r = (a / scale).mid()
                if prev is not None and ((r / prev) ** 2 * r).mid() <= done:
                    break  # the error this step leaves, C r^2 with C = r / prev^2, is below tol
                final = bool(a <= (small * scale).mid())
                last = prev = r
            else:
                return None
        finally:
            flint.ctx.prec = old
        lo, hi = start[1]
        slack = 2.0 ** -40 * max(abs(lo), abs(hi), 1.0)
        v = float(p)
        return p if lo - slack <= v <= hi + slack else None

    def _evaluators(self):
        """The evaluators (:class:`~.codegen.Evaluator`) of ``F, dF/dp`` in ``(p, *variables)``
        and of the bracket's ends in the variables; their code cached on disk under a key of the
        declaration's contents (its digest) and the package."""
        from .codegen import CodeCache, Evaluator, cache_key

        c = self.cls
        cache = CodeCache(cache_key(f"implicit-{c.__name__}", [], salt=c.digest))
        ev = Evaluator(build=lambda: [c.equation, sympy.diff(c.equation, c.unknown)],
                       args=[c.unknown, *c.variables], cache=cache, name="equation")
        ends = Evaluator(build=lambda: list(c.bracket), args=list(c.variables), cache=cache,
                         name="bracket")
        return ev, ends

    def _safe_evaluator(self):
        r"""The evaluator of ``F, dF/dp`` in the logistic forms of
        :func:`~.gaussian.logistic_forms` (finite where :math:`e^{\pm p}` overflows), or
        ``None`` where the equation has no logistic pattern; its code cached as
        :meth:`_evaluators`'."""
        from .codegen import CodeCache, Evaluator, cache_key
        from .gaussian import logistic_forms

        c = self.cls
        plain = [c.equation, sympy.diff(c.equation, c.unknown)]
        safe = [logistic_forms(e) for e in plain]
        if safe == plain:
            return None
        cache = CodeCache(cache_key(f"implicit-{c.__name__}", [], salt=c.digest))
        return Evaluator(build=lambda: safe, args=[c.unknown, *c.variables], cache=cache,
                         name="equation-logistic")

    def _functions(self, module):
        """``F, dF/dp, lo, hi`` as functions of ``(p, *variables)`` (the bracket's ends of the
        variables), generated by the one code generator (:class:`~.codegen.Evaluator`): mpmath
        at the caller's precision, or NumPy (vectorised) in the arguments' own type -- float64,
        or ``longdouble`` for the extended-precision check of a float64 solve (the generated
        functions are called directly: :meth:`~.codegen.Evaluator.f64` would round the
        arguments to float64) -- plus, for NumPy, ``both``: ``(F, dF/dp)`` from one evaluation."""
        ev, ends = self._evaluators()
        if module == "mpmath":
            def call(e, i):
                return lambda *v: e.mp(list(v))[i]

            return call(ev, 0), call(ev, 1), call(ends, 0), call(ends, 1)
        outer, bounds = ev.functions("np")[0], ends.functions("np")[0]
        if module == "numpy":  # where F or dF/dp as written is not finite (e^{+-p}
            # overflows at finite arguments), the logistic forms, prepared at their first use
            # (their SymPy rewrite costs ~30 ms); elsewhere the values as written
            plain, held = outer, []

            def safe(*v):
                if not held:
                    safe_ev = self._safe_evaluator()
                    held.append(None if safe_ev is None else safe_ev.functions("np")[0])
                return None if held[0] is None else held[0](*v)

            def outer(p, *args):
                f, d = (np.asarray(x) for x in plain(p, *args))
                shape = np.broadcast_shapes(f.shape, d.shape, np.shape(p),
                                            *(np.shape(a) for a in args))
                f, d = np.broadcast_to(f, shape), np.broadcast_to(d, shape)
                bad = ~(np.isfinite(f) & np.isfinite(d)) & np.isfinite(p)
                for a in args:
                    bad &= np.isfinite(a)
                if not np.any(bad):
                    return [f, d]
                out = safe(*(np.broadcast_to(x, shape)[bad] for x in (p, *args)))
                if out is None:  # no logistic pattern: the values as written
                    return [f, d]
                sf, sd = out
                f, d = f.copy(), d.copy()
                n = int(np.count_nonzero(bad))
                f[bad], d[bad] = np.broadcast_to(sf, (n,)), np.broadcast_to(sd, (n,))
                return [f, d]

        return ((lambda *v: outer(*v)[0]), (lambda *v: outer(*v)[1]),
                (lambda *v: bounds(*v)[0]), (lambda *v: bounds(*v)[1]), outer)

    def __call__(self, *args):
        if any(type(a).__module__.startswith("flint") for a in args):
            return self.ball(*args)
        if all(isinstance(a, (mpmath.mpf, int)) for a in args) and any(
                isinstance(a, mpmath.mpf) for a in args):
            return self.mp(*args)
        return self.np(*args)

    # -- balls ----------------------------------------------------------------------------------
    INFLATIONS = 6
    """Inflations of the Krawczyk box :meth:`ball` tries before refusing."""

    START = 2
    """The first box's radius in units of the root's propagated width (the radius of the
    Newton image :math:`c F(p_0)` over the argument balls) plus the last Newton step: twice
    that contracts at once for the balls of a certificate (an inflation is then rare)."""

    COMPLEX_START = 1.25
    r"""The first box's radius for complex argument balls (the boxes of the Bernstein ellipses
    of :mod:`replica.symbolic.ballquad`, whose imaginary radius is the ellipse's height), in
    the units of :data:`START`; where it fails, the box of :data:`START` and its inflations
    follow, so every box tried before is still tried. The enclosure returned is
    :math:`K(P) = p_0 - cF(p_0; A) + (1 - c\,\partial_p F(P; A))(P - p_0)`, whose radius is
    that of the Newton image plus the contraction times the radius of :math:`P`: a first box
    closer to the Newton image gives a narrower :math:`K(P)` where it passes, and the
    integrand built on the root then stays finite on taller boxes, so wider ellipses pass.
    Counted in one certificate at alpha = 2, lam = 1/10, eta = 1, 30 digits (START 2 ->
    1.25): glm_logistic 38,745 -> 32,174 Gauss--Legendre nodes, 754 -> 595 ellipses refused;
    logistic_regression 42,870 -> 38,450 nodes, 17,985 -> 15,038 real Krawczyk tests (1.1 and
    1.5 in between). Which box is tried changes the work and the width, never the proof: the
    test holds for any box around :math:`p_0`."""

    NEWTON_ITER = 12
    """Newton steps at most from the float64 root to the centre of the Krawczyk box."""

    def ball(self, *args):
        r"""An enclosure of the root for every point of the argument balls (python-flint ``arb``,
        or ``acb`` where one argument is complex), at ``flint.ctx.prec``: the Krawczyk test of
        the module docstring. Real balls: a ball that contracts, or :class:`NotEnclosable`
        naming the function and the reason; complex balls (the integrands of ``acb.integral``,
        which must be analytic on the balls it hands them): a ball that contracts, or a
        non-finite ball (the integrator then subdivides, as at a pole)."""
        import flint

        if any(type(a) is flint.acb for a in args):
            args = tuple(a if type(a) is flint.acb else flint.acb(self._arb_ball(a))
                         for a in args)
            key = _ball_key(args)
            hit = self._ball_memo.get(key)
            if hit is not None:
                return hit
            try:
                if all(a.imag == 0 for a in args):  # real balls: the real enclosure is tighter
                    out = flint.acb(self._krawczyk(tuple(a.real for a in args), False))
                else:
                    out = self._krawczyk(args, True)
            except (_NoContraction, _not_enclosable()):  # (looked up only when raised)
                out = flint.acb(flint.arb.nan(), flint.arb.nan())
            self._remember(key, out)
            return out
        args = tuple(self._arb_ball(a) for a in args)
        key = _ball_key(args)
        hit = self._ball_memo.get(key)
        if hit is not None:
            return hit
        out = self._krawczyk(args, False)  # (a refusal raises: not remembered)
        self._remember(key, out)
        return out

    BALL_MEMO_SIZE = 1 << 16
    """Enclosures :meth:`ball` remembers at most (the memo is emptied when full)."""

    def _remember(self, key, value):
        r"""Remember the enclosure of :meth:`ball` under the exact contents of its arguments
        (:func:`_ball_key`): the integrals of a certificate evaluate their integrands at the
        same balls many times (the same node of the same subdivision, the same parameter
        box), and the enclosure is a function of exactly that key -- the Krawczyk test is
        deterministic given the balls and the precision -- so a hit returns what a new test
        would."""
        if len(self._ball_memo) >= self.BALL_MEMO_SIZE:
            self._ball_memo.clear()
        self._ball_memo[key] = value

    @staticmethod
    def _arb_ball(a):
        from .codegen import arb_of

        return arb_of(a)

    def _ball_equation(self, complex_: bool):
        r"""``(F, \partial_p F, \partial_p^2 F, \partial_p^3 F)`` of ``(p, *variables)`` in
        ball arithmetic:
        generated ``arb`` code (cached on disk with the function's other code), or
        (``complex_``) the same expressions in the ``acb`` namespace of the Gaussian
        integrands (every function analytic where its ball is finite)."""
        key = "_acb_equation" if complex_ else "_arb_equation"
        fn = getattr(self, key, None)
        if fn is None:
            from .codegen import CodeCache, Evaluator, _arb_lambdify, _namespace, cache_key

            c = self.cls

            def build():
                return [c.equation] + [sympy.diff(c.equation, c.unknown, k) for k in (1, 2, 3)]

            if complex_:
                fn = _arb_lambdify([c.unknown, *c.variables],
                                   [_in_sigmoid(e, c.unknown) for e in build()],
                                   namespace=dict(_namespace("acb")))
            else:
                cache = CodeCache(cache_key(f"implicit-{c.__name__}", [], salt=c.digest))
                fn = Evaluator(build=build, args=[c.unknown, *c.variables], cache=cache,
                               name="equation-balls").functions("arb")[0]
            setattr(self, key, fn)
        return fn

    def _ball_start(self, args, complex_: bool):
        """A start for the Newton iteration of :meth:`_krawczyk`: the float64 root at the
        midpoints of the (real parts of the) balls, or the root at the working precision where
        there is none. The float64 root (:meth:`_float_root`, a function of the midpoints
        rounded to float64 alone) is remembered under those floats until
        :func:`forget_ball_enclosures`: a certificate asks for it at the same rounded midpoints
        many times -- the same quadrature node in the equations at the centre (at the working
        precision), in the Jacobian over the box (at a few digits) and in the reported values
        over the box, whose balls differ in radius and precision but not in their float64
        midpoints (glm_logistic, alpha = 2: 35,973 Krawczyk tests at 23,586 distinct float64
        midpoints). A start is only a start (the Krawczyk test decides), and a remembered one
        is the one a new call would compute, so every enclosure is unchanged."""
        import flint

        reals = [a.real if complex_ else a for a in args]
        start = self._remembered_float_root(self._start_memo,
                                            tuple(float(r.mid()) for r in reals))
        if start is not None:
            value = flint.arb(start[0])
        else:
            with mpmath.workprec(flint.ctx.prec):
                mids = [+mpmath.mpf(tuple(int(v) for v in r.mid().man_exp())) for r in reals]
                value = self._arb_ball(self.mp(*mids))
        return flint.acb(value) if complex_ else value

    def _krawczyk(self, args, complex_: bool):
        r"""The Krawczyk enclosure of the root at the balls ``args`` (all ``arb``, or all
        ``acb`` when ``complex_``); raises :class:`NotEnclosable` (real) or
        :class:`_NoContraction` (complex) where the test does not pass."""
        import flint

        name = self.cls.__name__
        equation = self._ball_equation(complex_)
        prec = flint.ctx.prec
        # Newton at the balls: the steps F/F' of the balls' midpoints, until a step is below
        # the root's propagated width (rad F / |F'|) or the working precision
        p = self._ball_start(args, complex_)
        tiny = flint.arb(2) ** (-prec + 4)
        half = flint.arb(2) ** (-(prec // 2) - 2)
        step = None
        for _ in range(self.NEWTON_ITER):
            f, d, dd, _ = equation(p, *args)  # over the balls: F(p0), F'(p0), F''(p0)
            if not (f.is_finite() and d.is_finite()) or d.mid() == 0:
                return self._refuse(complex_, f"{name}: its equation is not finite at the "
                                    "centre of the argument balls")
            step = (f.mid() / d.mid())
            step = step.mid()
            size = abs(step).mid() if complex_ else abs(step)
            scale = max(abs(p).mid() if complex_ else abs(p), flint.arb(1))
            width = (_radius(f) / abs(d.mid())).mid()
            if size <= 2 * width or size <= half * scale:
                # the centre p0 stays this iterate, whose F, F', F'' over the balls are in
                # hand: the Newton image p0 - cF(p0) in the Krawczyk operator below is the
                # step not taken, and the box (radius twice the step plus the propagated
                # width) holds the root; the error K leaves beyond the propagated width is of
                # order F''/F' times the step squared, below the precision (docstring)
                break
            p = (p - step).mid()
        else:
            return self._refuse(complex_, f"{name}: Newton's method at the centre of the "
                                "argument balls does not converge")
        c = (1 / d.mid()).mid()  # the preconditioner 1/F'(p0), an exact number
        head = p - c * f
        base = _radius(c * f) + _radius_mid(step)
        floor = tiny * max(_magnitude(p), flint.arb(1))
        # (complex balls: a box of COMPLEX_START first, then the real test's START and its
        # inflations, so that every box the START sequence passes is still tried)
        radii = [self.START * base + floor]
        if complex_ and self.COMPLEX_START < self.START:
            radii.insert(0, self.COMPLEX_START * base + floor)
        meets_real = complex_ and all(0 in a.imag for a in args)
        r = radii[0]
        for attempt in range(self.INFLATIONS + len(radii) - 1):
            box = self._box(p, r, complex_, meets_real)
            for pieces in (1, self.PIECES):
                dbox = self._slope(equation, box, p, (d, dd), args, complex_, pieces)
                if not dbox.is_finite():
                    continue
                k = head + (1 - c * dbox) * (box - p)
                if k.is_finite() and box.contains_interior(k):
                    self._check_declared_root(args, box, dbox, complex_)
                    return k.intersection(box) if not complex_ else k
            if attempt + 1 < len(radii):
                r = radii[attempt + 1]
                continue
            if not dbox.is_finite():
                return self._refuse(complex_, f"{name}: the derivative of its equation is not "
                                    "finite on the box around the root")
            r = 2 * max(r, _radius(k) + _magnitude(k - p))
        return self._refuse(complex_, f"{name}: the Krawczyk operator does not map a box "
                            f"around the root into itself after {self.INFLATIONS} inflations "
                            f"(argument balls too wide: radius {_radius(args[0])})")

    PIECES = 4
    r"""The pieces (per side; a complex box in ``PIECES**2``) the box is cut into where the
    enclosure of :math:`\partial_p F` on the whole box does not contract."""

    @staticmethod
    def _slope(equation, box, p, at_centre, args, complex_: bool, pieces: int):
        r"""An enclosure of :math:`\partial_p F` on ``box`` for every point of the argument
        balls, three ways, the narrowest kept: directly, by the mean-value form
        :math:`F_p(p_0) + F_{pp}(P)(P - p_0)` and by the Taylor form
        :math:`F_p(p_0) + F_{pp}(p_0)(P - p_0) + \tfrac12 F_{ppp}(P)(P - p_0)^2` (the
        remainder :math:`(p - p_0)^2\int_0^1 (1 - t)F_{ppp}(p_0 + t(p - p_0))\,dt` lies in the
        convex :math:`\tfrac12 F_{ppp}(P)(P - p_0)^2`; ``at_centre`` is
        :math:`(F_p(p_0), F_{pp}(p_0))` over the argument balls). The direct form of an
        expression in which :math:`p` occurs several times widens like the box (at large
        :math:`|p|`, :math:`e^{-p}/(1 + e^{-p})` on a box of radius :math:`r` gets a radius of
        about :math:`2r` although it is nearly constant); the other two like its square and
        cube. With ``pieces`` > 1 the union of the enclosures on the pieces of the box (a grid
        of ``pieces`` per side)."""
        import flint

        if pieces == 1:
            parts = [box]
        elif complex_:
            re, im = _split(box.real, pieces), _split(box.imag, pieces)
            parts = [flint.acb(a, b) for a in re for b in im]
        else:
            parts = _split(box, pieces)
        d, dd = at_centre
        out = None
        for part in parts:
            _, direct, curvature, third = equation(part, *args)
            h = part - p
            piece = _narrower(_narrower(direct, d + curvature * h),
                              d + dd * h + third * (h * h) / 2)
            if not piece.is_finite():
                return piece
            out = piece if out is None else out.union(piece)
        return out

    @staticmethod
    def _box(p, r, complex_: bool, meets_real: bool):
        """The box of radius ``r`` around ``p``; symmetric about the real axis (its imaginary
        part a ball around 0) where the argument balls meet the real axis."""
        import flint

        if not complex_:
            return flint.arb(p.mid(), r)
        if meets_real:
            return flint.acb(flint.arb(p.real.mid(), r), flint.arb(0, abs(p.imag.mid()) + r))
        return flint.acb(flint.arb(p.real.mid(), r), flint.arb(p.imag.mid(), r))

    def _check_declared_root(self, args, box, dbox, complex_: bool):
        r"""That the root in ``box`` is the declared one (the root on the bracket) at every real
        point of the argument balls: :math:`\partial_p F > 0` on the real points of the box
        and the box meets the bracket at every such point, so :math:`F` increases on the union
        of both intervals (the contract: it increases on the bracket) and has one root there.
        For complex balls that meet the real axis the box is symmetric about it, so the root
        in it at a real point is real (its conjugate is a root in the same box); complex balls
        off the real axis are refused (the branch of the root there is not identified)."""
        from .codegen import _ball_max, _ball_min

        name = self.cls.__name__
        if complex_:
            if not all(0 in a.imag for a in args):
                raise _NoContraction(f"{name}: complex argument balls off the real axis")
            reals, real_box, slope = tuple(a.real for a in args), box.real, dbox.real
        else:
            reals, real_box, slope = args, box, dbox
        if not slope > 0:
            return self._refuse(complex_, f"{name}: the derivative of its equation is not "
                                "positive on the box around the root")
        if getattr(self, "_arb_ends", None) is None:
            self._arb_ends = self._evaluators()[1].functions("arb")[0]
        lo, hi = self._arb_ends(*reals)
        lo, hi = _ball_min(lo, hi), _ball_max(lo, hi)
        if not (real_box.upper() >= lo.upper() and real_box.lower() <= hi.lower()):
            return self._refuse(complex_, f"{name}: the box around the root does not meet the "
                                "bracket at every point of the argument balls")

    @staticmethod
    def _refuse(complex_: bool, why: str):
        from .codegen import NotEnclosable

        if complex_:
            raise _NoContraction(why)
        raise NotEnclosable(f"the implicit function {why}")

    # -- mpmath ---------------------------------------------------------------------------------
    def mp(self, *args, functions=None):
        key = (mpmath.mp.prec,) + tuple(args)
        hit = self._memo.get(key)
        if hit is not None:
            return hit
        if functions is None:
            if self._mp is None:
                self._mp = self._functions("mpmath")
            functions = self._mp
        F, dF, lo_f, hi_f = functions[:4]
        both = functions[4] if len(functions) > 4 else None  # F and dF/dp in one evaluation
        p = self._polish(args, F, dF, lo_f, hi_f, both)
        if p is not None:
            return self._keep(key, p)
        lo, hi = mpmath.mpf(lo_f(*args)), mpmath.mpf(hi_f(*args))
        if lo > hi:
            lo, hi = hi, lo
        flo, fhi = F(lo, *args), F(hi, *args)
        widen = 0
        while (flo > 0 or fhi < 0) and widen < 60:  # a bracket lost to rounding: widen it
            width = max(hi - lo, abs(lo), abs(hi), 1) * 2 ** widen
            if flo > 0:
                lo, flo = lo - width, F(lo - width, *args)
            if fhi < 0:
                hi, fhi = hi + width, F(hi + width, *args)
            widen += 1
        if flo == 0:
            return self._keep(key, lo)
        if fhi == 0:
            return self._keep(key, hi)
        if flo > 0 or fhi < 0:
            raise ImplicitRootError(f"{self.cls.__name__}{tuple(mpmath.nstr(a, 8) for a in args)}:"
                                    f" the bracket [{mpmath.nstr(lo, 8)}, {mpmath.nstr(hi, 8)}] "
                                    "does not enclose an increasing sign change")
        p = (lo + hi) / 2
        tol = mpmath.ldexp(1, -mpmath.mp.prec + 4)
        small = mpmath.ldexp(1, -mpmath.mp.prec // 3)
        older = last = hi - lo  # the steps before (the bracket's width to begin with)
        for _ in range(self.MAX_ITER):
            f, d = both(p, *args) if both is not None else (F(p, *args), None)
            if f == 0:
                break
            if f > 0:
                hi = p
            else:
                lo = p
            if d is None:
                d = dF(p, *args)
            new = p - f / d if d > 0 else (lo + hi) / 2
            if not _newton_step_kept(new, p, lo, hi, older, small):
                # bisection where Newton leaves the bracket, or (above the quadratic
                # regime's steps) does not halve the step before last: an S-shaped F (the
                # logistic proximal map at large V, its inflection at p = 0) sends Newton
                # back and forth across the root in steps of the same size, the bracket
                # shrinking by little (omega = -18.7, V = 21.9: 400 steps of 10.8, no
                # convergence: ridge logistic regression at lam = 1/1000, eta = 9/10)
                new = (lo + hi) / 2
            step = abs(new - p)
            older, last = last, step
            p = new
            scale = max(abs(p), 1)
            if step <= tol * scale:
                break
            if step <= small * scale:  # quadratic regime: one more step is beyond the precision
                f, d = both(p, *args) if both is not None else (F(p, *args), dF(p, *args))
                p = p - f / d
                break
        else:  # pragma: no cover - bisection alone converges in ~prec steps
            raise ImplicitRootError(f"{self.cls.__name__}: no convergence")
        return self._keep(key, p)

    FLOAT_START_ITER = 60
    FLOAT_WIDTH = 4e-16
    """``_float_iteration``: the bracket's final width relative to ``max(|p|, 1)`` (two
    units in the last place), and the largest Newton step from a bracket end that fails its
    sign test for which that end is taken as the root (the same accuracy)."""

    def _remembered_float_root(self, memo: dict, fa: tuple):
        """:meth:`_float_root` at the float64 arguments ``fa``, remembered in ``memo`` (emptied
        when it holds :attr:`BALL_MEMO_SIZE` entries): a pure function of ``fa``, so a
        remembered value is the one a new call would compute."""
        start = memo.get(fa, False)
        if start is False:
            start = self._float_root(list(fa))
            if len(memo) >= self.BALL_MEMO_SIZE:
                memo.clear()
            memo[fa] = start
        return start

    def _float_root(self, args):
        """``(root, (lo, hi))``: the root at the arguments rounded to float64, by the bracketed
        Newton iteration of :meth:`mp` in Python floats (the generated NumPy code on scalars,
        its functions those of the ``math`` module where it uses no others
        (:meth:`_scalar_functions`), NumPy's where ``math`` refuses a value;
        a Newton step that lands exactly on a bracket end is taken, once, instead of
        bisecting, and a Newton step that rounds to nothing ends the iteration there, a
        bracket end included: where the root is within an ulp of that end -- the logistic
        proximal map at large omega -- bisection took about fifty evaluations of :math:`F`
        down to the bracket's 4e-16), and the bracket's ends in float64, or ``None`` where
        that is not available: an argument or bracket end outside float64's range, a value
        that is not finite, a bracket end that fails its sign test in float64 by more than
        rounding (the full iteration of :meth:`mp` then decides; an end whose Newton step
        -F/F' is within ``FLOAT_WIDTH`` is the root: the declared bracket holds the
        root, and the float64 ends are its rounded ends), no convergence."""
        if self._np is None:
            self._np = self._functions("numpy")
        if self._scalar is None:
            self._scalar = self._scalar_functions() or ()
        try:
            fa = [float(a) for a in args]
        except _FLOAT_ERRORS:
            return None
        if self._scalar:
            try:
                return self._float_iteration(fa, *self._scalar)
            except _FLOAT_ERRORS:  # math refuses where NumPy returns inf or nan: NumPy decides
                pass
        try:
            with np.errstate(all="ignore"):
                return self._float_iteration(fa, *self._np[2:])
        except _FLOAT_ERRORS:
            return None

    def _float_iteration(self, fa, lo_f, hi_f, both):
        """:meth:`_float_root`'s iteration at the float arguments ``fa`` with the bracket's
        ends ``lo_f``, ``hi_f`` and ``both`` (``(F, dF/dp)``); raises what the functions raise
        (an overflow, a domain error)."""
        lo, hi = float(lo_f(*fa)), float(hi_f(*fa))
        if lo > hi:
            lo, hi = hi, lo
        if not (math.isfinite(lo) and math.isfinite(hi)):
            return None
        bracket = lo, hi
        flo, dlo = (float(v) for v in both(lo, *fa))
        fhi, dhi = (float(v) for v in both(hi, *fa))
        if not (flo <= 0 <= fhi):
            # the declared bracket [l, h] holds the root (F(l) <= 0 <= F(h) exactly); its
            # float64 ends are l, h rounded, and F there is computed with rounding. An end
            # whose F has the wrong sign by less than the iteration's final width in p (the
            # Newton step -F/F' from it) is the root to float64's precision: the root lies
            # between the rounded end and the exact one, or F is zero to rounding there
            # (the logistic proximal map at omega = -60: h = omega + V rounded down by
            # 2.2e-15, F(h) = h - omega - V/(1 + e^h) = -2.2e-15 exactly, the root
            # h + V e^h/(1 + e^h) ~ h + 4e-25). Any other failed end: None
            for end, f, d, wrong in ((lo, flo, dlo, flo > 0), (hi, fhi, dhi, fhi < 0)):
                if wrong and d > 0 and abs(f / d) <= self.FLOAT_WIDTH * max(abs(end), 1.0):
                    return end, bracket
            return None
        p = (lo + hi) / 2
        onto_end = True
        older = last = hi - lo  # the steps before (as in mp: Newton must halve the one before last)
        for _ in range(self.FLOAT_START_ITER):
            f, d = both(p, *fa)
            f, d = float(f), float(d)
            if f == 0:
                return p, bracket
            if f > 0:
                hi = p
            elif f < 0:
                lo = p
            else:
                return None  # NaN
            new = p - f / d if d > 0 else (lo + hi) / 2
            if new == p and d > 0:
                # Newton's step rounds to nothing: |F/F'| below half an ulp of p, p is the
                # float nearest the root (of F's linearisation at p; the error of that is
                # of the step's square). p may be a bracket end here -- after a Newton step
                # onto it, the root within an ulp of the end (omega = 35: the root omega +
                # V e^-omega/(1 + e^-omega), 2.5e-15 above omega) -- where the rule of
                # _newton_step_kept (strictly inside) bisected down to the width below
                return p, bracket
            newton = _newton_step_kept(new, p, lo, hi, older, 1e-9)
            if not newton and onto_end and new in (lo, hi):
                # Newton onto a bracket end: the root within rounding of it (omega
                # large, the root omega plus less than an ulp), checked by the next
                # step (once: two ends alternating fall to bisection)
                newton, onto_end = True, False
            if not newton:
                new = (lo + hi) / 2
            step = abs(new - p)
            older, last = last, step
            p = new
            scale = max(abs(p), 1.0)
            # a Newton step of 1e-9 leaves an error of about its square: the float64
            # root to rounding (the working-precision steps of _polish take it on)
            if (step <= 1e-9 * scale and newton) or hi - lo <= self.FLOAT_WIDTH * scale:
                return p, bracket
        return None

    def _scalar_functions(self):
        """``(lo, hi, both)`` of the NumPy functions (:meth:`_functions`) for Python floats: the
        same generated code, its NumPy functions replaced by their ``math`` equivalents
        (:data:`_MATH_FOR_NUMPY`; a NumPy function on a scalar costs about ten times the
        ``math`` one, and :meth:`_float_root` runs at every quadrature node); ``None`` where
        the code uses a NumPy name that has none. ``math`` raises where NumPy returns an
        infinity or NaN (an overflow, a logarithm of zero): :meth:`_float_root` then runs the
        NumPy functions."""
        import types

        ev, ends = self._evaluators()
        out = []
        for f in (ends.functions("np")[0], ev.functions("np")[0]):
            names = dict(f.__globals__)
            for name in f.__code__.co_names:
                v = names.get(name)
                if v is None or not _is_numpy(v):
                    continue
                if name not in _MATH_FOR_NUMPY:
                    return None
                names[name] = _MATH_FOR_NUMPY[name]
            out.append(types.FunctionType(f.__code__, names, f.__name__, f.__defaults__,
                                          f.__closure__))
        bounds, outer = out
        return (lambda *v: bounds(*v)[0]), (lambda *v: bounds(*v)[1]), outer

    def _polish(self, args, F, dF, lo_f, hi_f, both):
        r"""The root at the working precision by Newton's method from the float64 root
        (:meth:`_float_root`, accurate to about :math:`10^{-16}`): two or three steps, each
        squaring the relative error, instead of the bracketed iteration from the bracket's
        midpoint (about ten evaluations of :math:`F`). The same stopping rule as :meth:`mp`:
        a step below :math:`2^{-p+4}` of the root's size, or, once a step is below
        :math:`2^{-p/3}` (the quadratic regime), one more step. ``None`` (the caller's full
        bracketed iteration then runs) where there is no float64 root, where a step is not
        finite or the derivative not positive, where the first step is above
        :math:`2^{-30}` (the float64 root was not accurate), where a step does not shrink,
        or where the root leaves the bracket (its float64 ends, widened by :math:`2^{-40}` of
        their size for their rounding)."""
        start = self._float_root(args)
        if start is None:
            return None
        p = mpmath.mpf(start[0])
        tol = mpmath.ldexp(1, -mpmath.mp.prec + 4)
        small = mpmath.ldexp(1, -mpmath.mp.prec // 3)
        last = mpmath.ldexp(1, -30)
        for _ in range(8):
            f, d = both(p, *args) if both is not None else (F(p, *args), dF(p, *args))
            if f == 0:
                break
            if not (d > 0 and mpmath.isfinite(f)):
                return None
            step = f / d
            scale = max(abs(p), 1)
            if not abs(step) <= last * scale:
                return None
            p = p - step
            if abs(step) <= tol * scale:
                break
            if abs(step) <= small * scale:
                f, d = both(p, *args) if both is not None else (F(p, *args), dF(p, *args))
                if not (d > 0 and mpmath.isfinite(f)):
                    return None
                p = p - f / d
                break
            last = abs(step) / scale
        else:
            return None
        lo, hi = start[1]
        slack = 2.0 ** -40 * max(abs(lo), abs(hi), 1.0)  # the float64 ends' rounding, and more
        return p if lo - slack <= p <= hi + slack else None

    def _keep(self, key, value):
        if len(self._memo) > 200_000:
            self._memo.clear()
        self._memo[key] = value
        return value

    # -- NumPy ----------------------------------------------------------------------------------
    NP_MEMO = 16
    """Float64 solves remembered: the integrals of one evaluation (the equations, the
    Jacobian, the reported values) call the root at the same quadrature nodes with the same
    arguments, solved once."""

    def np(self, *args):
        arrays = np.broadcast_arrays(*[np.asarray(a) for a in args])
        dtype = np.result_type(*arrays, np.float64)
        arrays = [a.astype(dtype) for a in arrays]
        flat = [a.reshape(-1) for a in arrays]
        ends = [_value_bytes(f[[0, -1]]).tobytes() if f.size else b"" for f in flat]
        for keys, kends, hit in self._np_memo:  # (the arguments compared byte for byte --
            # the bytes that hold their values, _value_bytes; first their first and last
            # elements, which tell most arguments apart cheaply)
            if kends == ends and all(
                    k.dtype == a.dtype and k.shape == a.shape
                    and np.array_equal(_value_bytes(k.reshape(-1)), _value_bytes(f))
                    for k, a, f in zip(keys, arrays, flat)):
                return hit.copy()
        start = None  # the roots of the latest solve of the same shape: a start near the roots
        for keys, _, hit in reversed(self._np_memo):
            if hit.shape == arrays[0].shape:
                start = hit
                break
        p = self._np_solve(arrays, dtype, start)
        if len(self._np_memo) >= self.NP_MEMO:
            self._np_memo.pop(0)
        self._np_memo.append((arrays, ends, p))
        return p.copy()

    def _np_solve(self, arrays, dtype, start=None):
        """The float64 (``dtype``) roots at ``arrays`` by the vectorised bracketed Newton
        iteration. Its first iterate is where the chord through the bracket's ends
        :math:`(l, F(l))`, :math:`(h, F(h))` crosses 0 (false position,
        :math:`l - F(l)(h - l)/(F(h) - F(l))`; the ends' values are those of their sign check),
        the midpoint where that is not strictly inside the bracket (before: the midpoint; on the
        logistic-regression curve of ``benchmarks/f64logi_curves.py`` the elements evaluated
        fell from 4.49 to 3.44 million). ``start`` (optional, of the arguments' shape): where
        finite and inside the bracket, the first iterate instead (the roots of the last
        solve at nearby arguments: a Newton iteration at successive iterates of a grid solve,
        or the extended-precision check at the float64 solution, needs a few steps from
        there instead of about ten from the midpoint). The bracket's ends are sign-checked and
        the iteration and its stopping tests are the same either way. An element not done
        after :attr:`MAX_ITER` steps is NaN."""
        if self._np is None:
            self._np = self._functions("numpy")
        F, dF, lo_f, hi_f, both = self._np
        with np.errstate(all="ignore"):
            lo = np.broadcast_to(np.asarray(lo_f(*arrays), dtype=dtype), arrays[0].shape).copy()
            hi = np.broadcast_to(np.asarray(hi_f(*arrays), dtype=dtype), arrays[0].shape).copy()
            lo, hi = np.minimum(lo, hi), np.maximum(lo, hi)
            for widen in range(60):  # brackets lost to rounding: widen them
                flo, fhi = F(lo, *arrays), F(hi, *arrays)
                low, high = flo > 0, fhi < 0
                if not (np.any(low) or np.any(high)):
                    break
                width = np.maximum(np.maximum(hi - lo, np.abs(lo)), np.maximum(np.abs(hi), 1))
                width = width * 2.0 ** widen
                lo, hi = np.where(low, lo - width, lo), np.where(high, hi + width, hi)
            else:
                flo = fhi = None  # (the last widening's ends were not evaluated)
            p = (lo + hi) / 2
            if flo is not None:  # false position: where the chord through the ends crosses 0
                falsi = lo - flo * ((hi - lo) / (fhi - flo))
                p = np.where(np.isfinite(falsi) & (falsi > lo) & (falsi < hi), falsi, p)
            if start is not None:
                s0 = np.asarray(start).astype(dtype)
                p = np.where(np.isfinite(s0) & (s0 > lo) & (s0 < hi), s0, p)
            eps = np.finfo(dtype).eps
            shape = p.shape
            p, lo, hi = p.ravel(), lo.ravel(), hi.ravel()
            flat = [a.ravel() for a in arrays]
            act = np.arange(p.size)  # the elements still iterating: only they are evaluated
            last = np.full(p.size, np.inf, dtype=dtype)  # each element's previous step
            older = hi - lo  # the step before the previous (the bracket's width at first)
            for _ in range(self.MAX_ITER):
                if act.size == 0:
                    break
                pa, la, ha = p[act], lo[act], hi[act]
                args_a = [a[act] for a in flat]
                f, d = both(pa, *args_a)
                ha = np.where(f > 0, pa, ha)
                la = np.where(f < 0, pa, la)
                new = pa - f / d
                # bisection where Newton leaves the bracket or does not halve the step
                # before last (an S-shaped F sends it back and forth across the root: mp)
                bad = (~((new >= la) & (new <= ha)) | ~np.isfinite(new)
                       | ((np.abs(new - pa) > older[act] / 2)
                          & (np.abs(new - pa) > 16 * eps * np.maximum(np.abs(pa), 1))))
                new = np.where(bad, (la + ha) / 2, new)
                new = np.where(f == 0, pa, new)
                step = np.abs(new - pa)
                scale = np.maximum(np.abs(new), 1)
                p[act], lo[act], hi[act] = new, la, ha
                stalled = (step >= last[act]) & (step <= 16 * eps * scale)
                older[act] = np.where(np.isfinite(last[act]), last[act], older[act])
                last[act] = step
                # a Newton step bounds the error by far less than its size; a bisection step
                # (the derivative overflowed, or the step left the bracket) does not: there the
                # bracket itself must be down to a few units in the last place. Either way, a
                # bracket collapsed to 2 units pins the root, and Newton steps that no longer
                # shrink at a few units are the rounding noise of F (near a root where F
                # cancels to a few units of its terms, e.g. omega = -7.7: steps of 5 units
                # back and forth, which ran the iteration to its limit)
                pinned = ha - la <= 2 * eps * scale
                done = np.where(bad, pinned, (step <= 4 * eps * scale) | pinned | stalled)
                # (an element whose bracket is not finite -- a NaN argument -- stays NaN)
                act = act[~(done | (f == 0) | ~np.isfinite(ha - la))]
            # an element still iterating after MAX_ITER steps has no root this iteration
            # vouches for: NaN (the float64 check then rejects its point), not the last iterate
            p[act] = np.nan
            p = p.reshape(shape)
        return p


def _significant_bytes(dtype) -> int:
    """How many of the bytes of an element of the floating type ``dtype`` hold its value: all
    of them, except for x86's 80-bit extended ``longdouble`` (64-bit significand), stored in 12
    or 16 bytes whose last 2 or 6 are padding that NumPy's arithmetic leaves undefined (two
    equal values then differ in their bytes)."""
    dtype = np.dtype(dtype)
    if (dtype.kind == "f" and dtype.itemsize > 10 and np.finfo(dtype).nmant == 63
            and sys.byteorder == "little"):
        return 10
    return dtype.itemsize


def _value_bytes(a) -> np.ndarray:
    """The bytes that hold the values of the one-dimensional float array ``a``, an
    ``(elements, bytes)`` ``uint8`` array (``_significant_bytes``): equal exactly where the
    values are the same bit patterns (so ``0.0`` and ``-0.0``, or two NaNs, are told apart as
    their bytes tell them), whatever the padding of an extended type holds. Before, the
    float64 roots' memo (``_Numeric.np``) compared every byte, padding included, and never
    recognised ``longdouble`` arguments it had solved (the extended-precision check of a float64
    solve solved the roots again at the same nodes for every integral)."""
    a = np.ascontiguousarray(a)
    width = _significant_bytes(a.dtype)
    raw = a.view(np.uint8).reshape(a.size, a.dtype.itemsize)
    return raw if width == a.dtype.itemsize else raw[:, :width]


def implicit_root(name: str, equation, unknown, variables, bracket) -> type:
    r"""A SymPy function class ``name`` whose value at ``(a_1, ..., a_k)`` is the root in
    ``unknown`` of ``equation`` (an expression :math:`F(p; a)`, increasing in :math:`p`) on the
    interval between the two expressions of ``bracket`` (in ``variables``, the formal arguments);
    see the module docstring.

    >>> import sympy
    >>> p, x = sympy.symbols("p x", real=True)
    >>> cube_root = implicit_root("cube_root", p**3 - x, p, (x,), bracket=(-1 - abs(x), 1 + abs(x)))
    >>> sympy.diff(cube_root(x), x)
    1/(3*cube_root(x)**2)
    """
    unknown = sympy.sympify(unknown)
    variables = tuple(sympy.sympify(v) for v in variables)
    equation = sympy.sympify(equation)
    if not isinstance(unknown, sympy.Symbol) or not all(isinstance(v, sympy.Symbol)
                                                         for v in variables):
        raise ImplicitRootError("the unknown and the variables of an implicit function are "
                                "symbols")
    if unknown in variables:
        raise ImplicitRootError(f"the unknown {unknown} is also a variable")
    if not isinstance(name, str) or not name.isidentifier():
        raise ImplicitRootError(f"the name {name!r} of an implicit function is not an identifier")
    if len(bracket) != 2:
        raise ImplicitRootError("bracket= is a pair (lower, upper)")
    bracket = tuple(sympy.sympify(b) for b in bracket)
    extra = (equation.free_symbols - {unknown} - set(variables)) | set().union(
        *(b.free_symbols - set(variables) for b in bracket))
    if extra:
        raise ImplicitRootError(f"implicit function {name}: symbol(s) "
                                f"{', '.join(sorted(map(str, extra)))} are not among its variables")
    digest = content_digest(name, equation, unknown, variables, bracket)
    known = REGISTRY.get(digest)
    if known is not None:  # the same declaration again (a model file loaded twice): the same
        return known       # function, its roots remembered
    cls = type(name, (ImplicitRoot,), {"equation": equation, "unknown": unknown,
                                       "variables": variables, "bracket": bracket,
                                       "nargs": len(variables), "digest": digest})
    cls._imp_ = staticmethod(_Numeric(cls))
    REGISTRY[digest] = cls
    return cls


REGISTRY: dict = {}
"""The implicit functions declared in this process, by :func:`content_digest`: generated code
that names one (the code cache of :mod:`replica.symbolic.codegen` records each name's digest)
is bound to the function with that digest, and is not loaded where none is declared."""


def content_digest(name, equation, unknown, variables, bracket) -> str:
    """SHA-256 (hex) of an implicit function's declaration: its name, the ``srepr`` of its
    unknown, variables, equation and bracket (symbols with their assumptions). The same in
    every process for the same declaration, different for any change of it: the function's
    identity, on which generated code that evaluates it is cached."""
    text = sympy.srepr((sympy.Symbol(name), unknown, sympy.Tuple(*variables), equation,
                        sympy.Tuple(*bracket)))
    return hashlib.sha256(text.encode()).hexdigest()
