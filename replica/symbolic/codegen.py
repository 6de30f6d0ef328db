r"""The code generator: numeric evaluators of SymPy expressions, for every problem alike.

:class:`Evaluator` turns a list of SymPy expressions in the symbols ``args`` into a function for
one *backend*:

* ``"mp"`` -- mpmath at the caller's working precision (parameters arrive as ``mpf``; rationals in
  the expressions are printed as ``mpf(p)/mpf(q)``, never through a binary float);
* ``"np"`` -- NumPy float64, vectorised: the arguments may be arrays of any common shape (a
  parameter grid);
* ``"arb"`` -- ball arithmetic (python-flint's ``arb``) at the precision of
  :func:`replica.numerics.precision.ball_precision`: every operation returns a ball that is
  guaranteed to contain the exact value for every point of the argument balls, so an evaluation
  over a box of unknowns *encloses* the expressions' range on it (the basis of certified solves,
  :mod:`replica.numerics.certify`). Rationals are printed as exact quotients of integers; an
  expression whose value cannot be enclosed (a ``Piecewise`` whose branch depends on a comparison,
  a function with no ball version) raises :class:`NotEnclosable` naming it.

All come from ``sympy.lambdify`` (with common subexpressions eliminated) of the same
expressions: no formula is typed twice. An expression may contain spectral averages
:math:`\langle\phi\rangle = \sum_j w_j\,\phi(\lambda_j, \mu_j)`
(:class:`~replica.symbolic.spectral.SpectralAverage`): each distinct average becomes an inner
function of :math:`(\lambda, \mu)` and the arguments, summed exactly (``mpmath.fsum``) over the
spectral pairs in mpmath, or along a trailing axis in float64. In ball arithmetic the averages of
one nesting level are evaluated together (:class:`_SpectralLevel`): the sub-expressions that do
not depend on the pair once per evaluation, the integrands at each pair by one generated
function with their common sub-expressions shared, the weighted sums as one ``arb_mat``
product.

**Disk cache.** Generating code for a large system (the low-rank saddle point, its Jacobian and
every reported value) takes seconds; the generated Python source is cached on disk
(:class:`CodeCache`), keyed on contents: every source file of this package, the files outside it
that the expressions come from (a model file, what it imports and the inputs it declares) and the
SymPy, mpmath and NumPy versions, so any change to an equation, a closed form or the code that
stages them regenerates it. Code that evaluates a function defined by an equation
(:mod:`replica.symbolic.implicit`) records the digest of each such function's declaration and is
bound, when loaded, to the function of the process with that digest (otherwise generated again).
The code objects compiled from the cached source are cached too (marshal files keyed on the
SHA-256 of the source and the interpreter's bytecode tag), so a process that loads a large
system does not compile it again. ``REPLICA_LAMBDIFY_CACHE=0`` disables the cache;
``REPLICA_LAMBDIFY_CACHE=DIR`` chooses its folder (default ``~/.cache/replica/lambdify``).
"""

from __future__ import annotations

import builtins
import functools
import hashlib
import inspect
import math
import os
import re
import sys
from typing import Callable, Sequence

import mpmath
import numpy as np
from mpmath.libmp import from_man_exp as _from_man_exp

from .quadrature import QuadratureError  # noqa: F401 (re-exported)

# SymPy (and this package's symbolic modules, which build on it) is imported where code is
# generated, not here: a process whose evaluators all come from the disk cache never imports it

BACKENDS = {"mp": "mpmath", "np": "numpy", "arb": "arb"}
"""Backend name -> the ``lambdify`` module it uses (``"arb"``: :data:`ARB_NAMESPACE`)."""


from .balls import _ARB, NotEnclosable, _arb, _ball_float, arb_of, ball_key  # noqa: F401 (re-exported)


def _ball_ipow(x, n: int):
    """``x**n`` for an integer ``n`` by repeated squaring. (python-flint's ``**`` returns NaN for
    a ball that contains zero; products of balls are always enclosures.) An even power is taken
    of ``|x|``; a negative power is the reciprocal."""
    arb = _ARB[0] if _ARB else _arb()
    b = x if type(x) is arb else arb_of(x)  # (at every quadrature node: a ball as it is)
    fast = b ** n  # python-flint's power (in C) is exact-rounded where it is finite
    if fast.is_finite():
        return fast
    if n < 0:
        return 1 / _ball_ipow(b, -n)
    if n % 2 == 0:
        b = abs(b)
    out, base = arb(1), b
    while n:
        if n & 1:
            out = out * base
        n >>= 1
        if n:
            base = base * base
    return out


def _ball_max(*xs):
    out = arb_of(xs[0])
    for x in xs[1:]:
        out = out.max(arb_of(x))
    return out


def _ball_min(*xs):
    out = arb_of(xs[0])
    for x in xs[1:]:
        out = out.min(arb_of(x))
    return out


def _arb_namespace() -> dict:
    """Names the generated ball-arithmetic code may use: constructors, elementary functions (each
    accepting integers too), ``max``/``min`` of balls (the builtins would compare balls, which is
    not an enclosure), ``inf`` and the constants at the current precision."""
    arb = _arb()

    def unary(name):
        meth = getattr(arb, name)

        def f(v):  # (called at every quadrature node: a ball goes straight to the method)
            return meth(v) if type(v) is arb else meth(arb_of(v))

        return f

    def mpf(v):  # the printer's rationals mpf(p)/mpf(q) and decimal strings
        t = type(v)
        return arb(v) if t is int or t is str else arb_of(v)

    ns = {
        "mpf": mpf,
        "ball_float": _ball_float,
        "ball_ipow": _ball_ipow,
        "ball_pow": lambda x, y: x ** y,
        "sign": unary("sgn"),
        "fabs": lambda v: abs(arb_of(v)),
        "max": _ball_max,
        "min": _ball_min,
        "inf": arb.pos_inf(),
        "ball_pi": lambda: arb.pi(),
        "ball_e": lambda: arb.const_e(),
    }
    for name in ("sqrt", "exp", "log", "expm1", "log1p", "atan", "acos", "asin", "tanh", "cosh",
                 "sinh", "erf", "erfc", "cos", "sin"):
        ns[name] = unary(name)
    ns.update(_log_space_balls(ns, lambda v: v if type(v) is arb else arb_of(v)))
    ns["polygamma"] = _ball_polygamma
    ns["digamma_difference"] = _ball_digamma_difference
    from .owen import owens_t_ball, owens_u_ball  # (bound here: a call at every node)

    ns["owens_t"] = owens_t_ball
    ns["owens_u"] = owens_u_ball
    return ns


def _ball_digamma_difference(n, z):
    r""":math:`\psi^{(n)}(1 + z) - \psi^{(n)}(\tfrac12 + z)` of a ball ``z``
    (``replica.symbolic.gaussian.digamma_difference``):
    :func:`replica.symbolic.digamma_difference.digamma_difference_ball`."""
    from .digamma_difference import digamma_difference_ball

    return digamma_difference_ball(n, z)


def _ball_polygamma(n, x):
    r""":math:`\psi^{(n)}(x)` of a ball ``x`` for an integer order ``n \ge 0`` (SymPy's
    ``polygamma(n, x)``): the digamma function for :math:`n = 0`, and
    :math:`\psi^{(n)}(x) = (-1)^{n+1}\,n!\,\zeta(n + 1, x)` (Hurwitz) for :math:`n \ge 1`,
    except where the ball lies far enough right of 0 that the asymptotic series
    (:func:`_ball_polygamma_asymptotic`) reaches the working precision in at most
    ``_POLYGAMMA_MAX_TERMS`` terms (Arb's Hurwitz zeta costs ~20-35 us a call there, the series
    a few). The balls are remembered per (order, precision, midpoint, radius) -- the generated
    integrands evaluate the same arguments again across the integrals of one solve (phase
    retrieval: 35 % of the calls) -- up to ``_POLYGAMMA_MEMO_SIZE`` entries (then forgotten)."""
    arb = _arb()
    n = int(n)
    x = x if type(x) is arb else arb_of(x)
    prec = _flint_prec()
    key = (n, prec, *ball_key(x))
    got = _POLYGAMMA_MEMO.get(key)
    if got is not None:
        return got
    if n == 0:
        got = x.digamma()
    else:
        got = _ball_polygamma_asymptotic(n, x, None, prec)
        if got is None:
            got = (-1) ** (n + 1) * math.factorial(n) * arb(n + 1).zeta(x)
    if len(_POLYGAMMA_MEMO) >= _POLYGAMMA_MEMO_SIZE:
        _POLYGAMMA_MEMO.clear()
    _POLYGAMMA_MEMO[key] = got
    return got


_POLYGAMMA_MEMO: dict = {}
_POLYGAMMA_MEMO_SIZE = 1 << 16
_POLYGAMMA_MAX_TERMS = 24
"""The most terms of the asymptotic series :func:`_ball_polygamma` uses before it calls Arb's
Hurwitz zeta instead (at 196 bits, ``x >= ~100`` needs at most this many)."""


def _flint_prec() -> int:
    import flint

    return flint.ctx.prec


@functools.lru_cache(maxsize=64)
def _polygamma_series_coefficients(n: int):
    r"""The exact coefficients :math:`c_k = B_{2k}\,(2k + n - 1)!/(2k)!`,
    :math:`k = 1, \dots, K + 1` (:math:`K` = ``_POLYGAMMA_MAX_TERMS``), of the asymptotic series
    of :math:`\psi^{(n)}` (:func:`_ball_polygamma_asymptotic`), as ``(p, q)`` integer pairs, and
    :math:`\log_2|c_k|` as floats (to choose the number of terms)."""
    out, logs = [], []
    for k in range(1, _POLYGAMMA_MAX_TERMS + 2):
        p, q = mpmath.bernfrac(2 * k)
        p *= math.factorial(2 * k + n - 1)
        q *= math.factorial(2 * k)
        g = math.gcd(p, q)
        p, q = p // g, q // g
        out.append((p, q))
        logs.append(math.log2(abs(p)) - math.log2(q))
    return tuple(out), tuple(logs)


@functools.lru_cache(maxsize=256)
def _polygamma_series_balls(n: int, prec: int):
    """:func:`_polygamma_series_coefficients` as balls at ``prec`` bits (each one rounding)."""
    arb = _arb()
    return tuple(arb(p) / q for p, q in _polygamma_series_coefficients(n)[0])


def _ball_polygamma_asymptotic(n: int, x, terms=None, prec=None, tail_scale=1):
    r"""An enclosure of :math:`\psi^{(n)}(t)` for every :math:`t` in the ball ``x``
    (:math:`n \ge 1`, the ball's lower end :math:`x_- > 0`) by the asymptotic series

    .. math::
        \psi^{(n)}(t) = (-1)^{n+1}\Big[\frac{(n-1)!}{t^n} + \frac{n!}{2t^{n+1}}
            + \sum_{k=1}^{K} \frac{B_{2k}\,(2k+n-1)!}{(2k)!\,t^{2k+n}}\Big] + R_K(t),
        \qquad |R_K(t)| \le \frac{|B_{2K+2}|\,(2K+n+1)!}{(2K+2)!\,t^{2K+n+2}}

    (for real :math:`t > 0` the remainder after :math:`K` terms lies between 0 and the first
    term omitted: H. Alzer, Math. Comp. 66 (1997), the complete monotonicity of the
    remainders), the sum evaluated in ball arithmetic on the ball (Horner in :math:`1/t^2`)
    and the bound, largest at :math:`t = x_-`, added to the radius. ``terms``: :math:`K`; by
    default the least :math:`K \le` ``_POLYGAMMA_MAX_TERMS`` whose bound is below
    :math:`2^{-{\rm prec}-4}` times the leading term (``None`` where there is none: the ball
    is too near 0). ``tail_scale`` multiplies the bound (tests only: a bound too small must
    show)."""
    arb = _arb()
    if prec is None:
        prec = _flint_prec()
    if not x.is_finite():
        return None
    lo = x.lower()
    if not lo > 0:
        return None
    coeffs, logs = _polygamma_series_coefficients(n)
    if terms is None:
        lx = math.log2(float(lo.mid()))  # (rounded: the choice of K only, not the bound)
        if not math.isfinite(lx):
            return None
        target = -(prec + 4) + math.log2(math.factorial(n - 1)) + 1
        for terms in range(1, _POLYGAMMA_MAX_TERMS + 1):
            if logs[terms] - (2 * terms + 2) * lx <= target:
                break
        else:
            return None
    c = _polygamma_series_balls(n, prec)
    inv = 1 / x
    w = inv * inv
    acc = c[terms - 1]
    for k in range(terms - 2, -1, -1):
        acc = acc * w + c[k]
    s = (acc * w + arb(math.factorial(n)) / 2 * inv + math.factorial(n - 1)) * inv ** n
    # the bound at the lower end (exact), rounded up
    p, q = coeffs[terms]
    tail = (arb(abs(p)) / q * (1 / lo) ** (2 * terms + n + 2)).abs_upper() * tail_scale
    s = s + arb(0, tail)
    return s if n % 2 == 1 else -s


def _log_space_balls(ns, ball) -> dict:
    """The log-space forms of :mod:`replica.symbolic.gaussian` (``log_erfc``, ``rerfcx``,
    ``softplus``, ``sigmoid``) from the namespace's ``erfc``, ``exp``, ``log``, ``log1p``: balls
    do not underflow, so they are the definitions."""
    erfc, exp, log, log1p = ns["erfc"], ns["exp"], ns["log"], ns["log1p"]
    return {"log_erfc": lambda v: log(erfc(v)),
            "rerfcx": lambda v: exp(-ball(v) * ball(v)) / erfc(v),
            "softplus": lambda v: log1p(exp(v)),
            "sigmoid": lambda v: 1 / (1 + exp(-ball(v)))}


class _ArbPrinter:
    """Built lazily (SymPy's printer module is imported only when code is generated)."""

    cls = None

    @classmethod
    def get(cls):
        if cls.cls is None:
            import sympy
            from sympy.printing.pycode import MpmathPrinter

            class ArbPrinter(MpmathPrinter):
                """MpmathPrinter whose constants are exact balls and whose comparisons refuse."""

                def _print_Float(self, e):
                    sign, man, exp, _ = e._mpf_
                    return f"ball_float({sign}, {int(man)}, {exp})"

                def _print_Pi(self, e):
                    return "ball_pi()"

                def _print_Exp1(self, e):
                    return "ball_e()"

                def _print_Pow(self, e, rational=False):
                    if e.exp.is_Integer and e.exp not in (1, -1):
                        return f"ball_ipow({self._print(e.base)}, {int(e.exp)})"
                    if e.exp.is_Integer or e.exp in (sympy.S.Half, -sympy.S.Half):
                        return super()._print_Pow(e, rational=rational)  # (1/x, sqrt)
                    # a power that is not an integer: the principal branch, whose cut the
                    # complex balls must check (_acb_namespace)
                    return f"ball_pow({self._print(e.base)}, {self._print(e.exp)})"

                def _print_Abs(self, e):
                    return f"abs({self._print(e.args[0])})"

                def _print_Piecewise(self, e):
                    raise NotEnclosable("a Piecewise expression (its branch depends on a "
                                        "comparison of balls)")

                def _print_Relational(self, e):
                    raise NotEnclosable(f"a comparison ({e})")

            cls.cls = ArbPrinter
        return cls.cls({"fully_qualified_modules": False, "inline": True,
                        "allow_unknown_functions": True, "user_functions": {}})

_INT64_LIMIT = 2 ** 63
"""Integers of at least this magnitude do not fit NumPy's int64: as a constant argument of a
ufunc (``log(10**25)``) NumPy makes them an object array, whose loop has no ``log`` method."""


def _numpy_printer(modules):
    r"""The printer :func:`sympy.lambdify` builds for ``modules`` (NumPy and the dictionaries of
    functions before it, named as they are there), except that an integer :math:`n` with
    :math:`|n| \ge 2^{63}` (``_INT64_LIMIT``) is printed as the float64 number nearest to
    it: a constant of a model (``Rational(10**25)``, or ``log(Rational(1, 10**25)) = -\log
    10^{25}``) reaches NumPy's functions as a float, not as a Python integer that no int64
    holds. An integer beyond the float64 range stays an integer (its float would be infinite).
    The rounding is that of float64 arithmetic, which would round :math:`n` at its first
    operation with a float64 array anyway."""
    from sympy.printing.numpy import NumPyPrinter

    class FloatIntegerPrinter(NumPyPrinter):
        def _print_Integer(self, e):
            n = int(e.p)
            if abs(n) >= _INT64_LIMIT:
                try:
                    return repr(float(n))
                except OverflowError:
                    pass
            return super()._print_Integer(e)

    user_functions = {}
    for m in reversed(modules if isinstance(modules, (list, tuple)) else [modules]):
        if isinstance(m, dict):
            user_functions.update({k: k for k in m})
    return FloatIntegerPrinter({"fully_qualified_modules": False, "inline": True,
                                "allow_unknown_functions": True,
                                "user_functions": user_functions})


def _midpoint_namespace(expr) -> dict:
    """:func:`_arb_namespace` plus, for each function of ``expr`` defined by an equation
    (:mod:`replica.symbolic.implicit`: its numeric implementation has ``midpoint``), its
    evaluation at the midpoints of the balls. Not an enclosure: for the fast mpmath
    evaluation of integrands only, never for the ball-arithmetic path."""
    import sympy

    ns = dict(_namespace("arb"))
    for f in expr.atoms(sympy.Function):
        midpoint = getattr(getattr(type(f), "_imp_", None), "midpoint", None)
        if midpoint is not None:
            ns[type(f).__name__] = midpoint
    return ns


def _implicit_balls(exprs) -> dict:
    """``{name: implementation}`` of the functions defined by an equation in ``exprs`` whose
    implementation evaluates balls (``replica.symbolic.implicit._Numeric.ball``: a
    Krawczyk enclosure of the root); nothing to look for (no walk of the expressions) where
    no function defined by an equation is declared in this process."""
    module = sys.modules.get("replica.symbolic.implicit")  # (not imported: none is declared)
    if not getattr(module, "REGISTRY", None):
        return {}
    import sympy

    out = {}
    for e in (exprs if isinstance(exprs, (list, tuple)) else [exprs]):
        for f in sympy.sympify(e).atoms(sympy.Function):
            imp = getattr(type(f), "_imp_", None)
            if getattr(imp, "ball", None) is not None:
                out[type(f).__name__] = imp
    return out


def lambdify_canonical(args, exprs, **kwargs):
    """``sympy.lambdify(args, exprs, **kwargs)`` with every argument that is a symbol (or
    another single expression) replaced first, in ``args`` and ``exprs``, by a plain symbol
    named by its position, ``_a0``, ``_a1``, ... (with the argument's assumptions): the one
    call of ``lambdify`` in the package.

    Why: ``lambdify`` replaces *all* arguments by new ``Dummy()`` symbols as soon as one of
    them is a ``Dummy`` (ours are: integration variables, spectral averages, staged values),
    and a new ``Dummy`` is named by SymPy's process-wide counter (``Dummy_999``,
    ``Dummy_1001``). The generated code's order of terms and factors (the printer's and
    ``cse``'s) follows those names as strings, so code generated for the same expressions in
    two processes -- one that had made more symbols before, e.g. after other models or
    modules -- could differ in the order of its operations and so in the last bits of its
    float64 values (hinge SVM: 3 of 9 points of a grid, up to 1.7e-15 relative; with the
    code cache shared by processes, two solves in one process could use the two versions).
    With names fixed by position, the generated code is the same in every process."""
    import sympy

    mapping = {}
    canonical = []
    for i, a in enumerate(args):
        if isinstance(a, sympy.Basic) and not isinstance(a, sympy.MatrixBase) and (
                a.is_symbol or isinstance(a, (sympy.Function, sympy.Derivative))):
            assumptions = a.assumptions0 if isinstance(a, sympy.Symbol) else {}
            new = mapping.get(a)
            if new is None:
                new = mapping[a] = sympy.Symbol(f"_a{i}", **assumptions)
            canonical.append(new)
        else:
            canonical.append(a)

    def replaced(e):
        if isinstance(e, (list, tuple)):
            return type(e)(replaced(v) for v in e)
        if isinstance(e, sympy.Basic):
            return e.xreplace(mapping)
        return e

    return sympy.lambdify(canonical, replaced(exprs) if mapping else exprs, **kwargs)


def _arb_lambdify(args, exprs, namespace=None):
    """``lambdify`` for ball arithmetic (``namespace``: :func:`_arb_namespace` by default);
    raises :class:`NotEnclosable` naming the functions that have no ball version."""
    ns = namespace if namespace is not None else _arb_namespace()
    ns = {**_implicit_balls(exprs), **ns}
    f = lambdify_canonical(args, exprs, modules=[ns], printer=_ArbPrinter.get(), cse=True)
    missing = sorted(n for n in _global_names(f) if n not in ns and not hasattr(builtins, n))
    if missing:
        raise NotEnclosable(f"no ball arithmetic for {', '.join(missing)}")
    return f


# ---------------------------------------------------------------------------------------------
# Gaussian integrals (replica.symbolic.gaussian): quadrature for each backend
# ---------------------------------------------------------------------------------------------
class _GaussFunctions:
    """The generated functions of one Gaussian integral: ``integrand(z, *switches, *args)``
    (the switched integrand times the density), ``arguments(z, *args)`` (the Heaviside
    functions' arguments), ``kinks(*args)``; for ball arithmetic also ``envelope(*args)``
    (``(C, B, Q)`` of :func:`replica.symbolic.gaussian.growth_envelope`, then the values of its
    conditions) and its power ``P``, or the
    reason there is none."""

    def __init__(self, integrand, arguments, kinks, envelope=None, power=None, why="",
                 scaled=None, erfc_arguments=None, combined=None, conditions="", features=None):
        self.integrand, self.arguments, self.kinks = integrand, arguments, kinks
        # (mpmath, float64) ``features(*args)``: the flat list p0, r0, p1, r1, ... of the
        # integrand's possibly narrow features (gaussian.narrow_features: center r/p, width
        # 1/sqrt(p)), or None where it has none (_narrow_features)
        self.features = features
        self.envelope, self.power, self.why = envelope, power, why
        # (balls) the kinds of the envelope's conditions, one letter each (_CONDITION_KINDS):
        # ``envelope(*args)`` returns C, B, Q and then the conditions' values
        self.conditions = conditions
        # (float64) the integrand in the scaled form of gaussian.scaled_erfc, and its erfc
        # arguments less gaussian.SCALED_ERFC_FROM, of ``(z, *args)``: the scaled form is used
        # where one of those is >= 0 or the integrand is not finite
        self.scaled, self.erfc_arguments = scaled, erfc_arguments
        self.combined = combined  # (float64) exponentials combined, erfc kept: for y << 0
        # (float64) where the integrand has a logistic pattern (_has_logistic_pattern): a
        # callable returning its logistic forms' function (_logistic_safe) or None, prepared at
        # its first call (Evaluator._logistic_function); None where it has no such pattern
        self.logistic = None
        self.levels: dict = {}  # the Gauss--Legendre level of each cell, remembered (mpmath)
        self.prior: dict = {}  # the levels an earlier process remembered (_RememberedLevels)
        self.fast = None  # (mpmath) the integrand in ball arithmetic, where it has one
        # (balls) the parts of the integrand free of the variable and the switches as a
        # function of the arguments (_arb_hoisted): the integrand then takes (z, *switches,
        # *pre(*args)); None where it takes (z, *switches, *args)
        self.pre = None
        # (two-dimensional integrals) an inner one is a function of its outer variable too (its
        # last argument), evaluated at the outer rule's nodes; an outer one lists its inner
        # integrals (``nested``) and, for mpmath, the derivatives of its integrand in them
        self.inner, self.nested, self.derivatives = False, (), ()


class _BallRule:
    """The Gauss--Legendre sums of one piece's integrands evaluated in ball arithmetic
    (python-flint ``arb``, much faster than mpmath for the elementary and error functions) at
    the working precision: ``f`` returns the list of the members' integrands (one, or a fused
    group's, :class:`_FusedGauss`) as balls; :func:`replica.symbolic.quadrature.gauss_legendre_fused`
    calls :meth:`weighted_sums`, which returns, per member, the midpoints of the sums and the
    bound on their rounding error that the balls' radii give (added to the piece's error
    estimate), or ``None`` where a value is not a finite ball (the mpmath integrands ``mp``
    are used instead)."""

    __slots__ = ("f", "sw", "values", "mp")

    def __init__(self, f, sw, values, mp):
        self.f, self.sw, self.values, self.mp = f, sw, values, mp

    def __call__(self, z):
        """The integrands at the point ``z``: the midpoints of their balls at the working
        precision where those are finite, the mpmath integrands otherwise."""
        import flint

        old = flint.ctx.prec
        try:
            flint.ctx.prec = mpmath.mp.prec
            vs = self.f(arb_of(z), *self.sw, *self.values)
            if all(v.is_finite() for v in vs):
                return [_mid_mpf(v) for v in vs]
        except (TypeError, ValueError):  # a complex argument (a numeric identity check): mpmath
            pass
        finally:
            flint.ctx.prec = old
        return self.mp(z)

    nested = True  # weighted_sums gives the interpolant's top coefficients too

    def weighted_sums(self, m, h, xs, ws, tails=()):
        f, rest = self.f, (*self.sw, *self.values)  # (joined once per piece, not per node)
        return _ball_rule_sums(m, h, xs, ws, lambda mb, hb, x: f(mb + hb * x, *rest), tails)


class _HalfLine:
    r"""A tail :math:`\int_c^{\pm\infty} f(z)\,dz` as an integral over :math:`t \in [0, 1]`:
    :math:`z = c \pm t/(1 - t)`, :math:`dz = dt/(1 - t)^2`, for
    :func:`replica.symbolic.quadrature.gauss_legendre_fused` (whose nodes never reach
    :math:`t = 1`). ``point`` evaluates the members' integrands at an ``mpf`` (a list);
    ``rule`` (a :class:`_BallRule` or ``None``) evaluates them in ball arithmetic for
    :meth:`weighted_sums`, with the same conventions (the midpoints, the balls' radii as the
    rounding bound, ``None`` where a ball is not finite)."""

    __slots__ = ("point", "rule", "c", "sign")

    def __init__(self, point, rule, c, sign):
        self.point, self.rule, self.c, self.sign = point, rule, c, sign

    def __call__(self, t):
        u = 1 - t
        return [v / (u * u) for v in self.point(self.c + self.sign * t / u)]

    nested = True  # as _BallRule's

    def weighted_sums(self, m, h, xs, ws, tails=()):
        if self.rule is None:
            return None
        f, rest = self.rule.f, (*self.rule.sw, *self.rule.values)
        try:  # (exact, at any precision: an integer or an mpf's binary value)
            cb, sign = arb_of(self.c), self.sign
        except (TypeError, ValueError):  # as _ball_rule_sums does for a value with no real ball
            return None

        def value(mb, hb, x):  # at the working precision (set by _ball_rule_sums)
            t = mb + hb * x
            u = 1 - t
            u2 = u * u
            return [v / u2 for v in f(cb + t / u if sign > 0 else cb - t / u, *rest)]
        return _ball_rule_sums(m, h, xs, ws, value, tails)


def _ball_rule_sums(m, h, xs, ws, value, tails=()):
    r"""``(values, scales, roundings)`` of a rule on the piece of midpoint ``m`` and half-width
    ``h`` (:func:`replica.symbolic.quadrature.gauss_legendre_fused`' ``weighted_sums``) in ball
    arithmetic at the working precision, per member: :math:`h\sum_j w_jf_j`,
    :math:`h\sum_j w_j|f_j|` with :math:`f_j` the member's entry of ``value(m, h, x_j)`` (a
    list of balls), the balls' radii as the rounding bound; with ``tails`` (weight vectors
    :math:`v`, :func:`replica.symbolic.quadrature.tail_weights`) a fourth list, per member the
    midpoints of :math:`h\sum_j v_jf_j` for each vector (the interpolant's top Legendre
    coefficients, for the nested error estimate); ``None`` (evaluate point by point) where an
    argument is complex or a ball not finite."""
    import flint

    arb = flint.arb
    old = flint.ctx.prec
    try:
        flint.ctx.prec = mpmath.mp.prec
        mb, hb = arb_of(m), arb_of(h)
        try:
            rows = [value(mb, hb, x) for x in _arb_rule(xs)]
        except (TypeError, ValueError):  # complex arguments have no real ball: mpmath
            return None
        # the sums as one product of ball matrices (python-flint's dot products, in C): the
        # weight vectors' rows times the nodes' values (a row per node, a column per member)
        weights = _arb_weights(ws, tails)
        try:
            sums = weights * flint.arb_mat(rows)
            sizes = _arb_weights(ws, ()) * flint.arb_mat([[abs(v) for v in row] for row in rows])
        except (TypeError, ValueError):  # a value that is not a real ball
            return None
        out = ([], [], [])
        for r in range(sums.ncols()):
            total, size = hb * sums[0, r], hb * sizes[0, r]
            if not (total.is_finite() and size.is_finite()):
                return None
            out[0].append(_mid_mpf(total))
            out[1].append(_mid_mpf(size))
            out[2].append(_mid_mpf(arb(total.rad() + size.rad())))
        if not tails:
            return out
        coefficients = []
        for r in range(sums.ncols()):
            c = [hb * sums[i, r] for i in range(1, len(tails) + 1)]
            if not all(v.is_finite() for v in c):
                return None
            # each coefficient's magnitude, its rounding added (an upper bound)
            coefficients.append([_mid_mpf(abs(v) + v.rad()) for v in c])
        return out + (coefficients,)
    finally:
        flint.ctx.prec = old


_ARB_WEIGHTS: dict = {}


def _arb_weights(ws, tails):
    """The weights ``ws`` and the vectors ``tails`` (tuples of ``mpf``, cached by the
    quadrature) as the rows of an exact ball matrix, cached by identity (the tuples kept
    alive)."""
    key = (id(ws),) + tuple(id(v) for v in tails)
    hit = _ARB_WEIGHTS.get(key)
    if hit is None or hit[0] is not ws or any(a is not b for a, b in zip(hit[1], tails)):
        import flint

        if len(_ARB_WEIGHTS) > 256:
            _ARB_WEIGHTS.clear()
        hit = _ARB_WEIGHTS[key] = (ws, tuple(tails), flint.arb_mat(
            [list(_arb_rule(ws))] + [list(_arb_rule(v)) for v in tails]))
    return hit[2]


_ARB_RULES: dict = {}


def _arb_rule(vs):
    """The nodes or weights ``vs`` (a tuple of ``mpf``, cached by the quadrature: the same
    object for the same rule) as exact balls, cached (by identity, the tuple kept alive)."""
    hit = _ARB_RULES.get(id(vs))
    if hit is None or hit[0] is not vs:
        if len(_ARB_RULES) > 256:
            _ARB_RULES.clear()
        hit = _ARB_RULES[id(vs)] = (vs, tuple(arb_of(v) for v in vs))
    return hit[1]


def _mid_mpf(b):
    """The midpoint of a ball as an ``mpf``, rounded to the working precision (mpmath's
    precision and rounding mode), built from its mantissa and exponent in one rounding: the
    value ``+mpmath.mpf((man, exp))`` gives (whose second rounding, at the same precision, is
    the identity), without the constructor's dispatch on its argument's type."""
    man, exp = b.mid().man_exp()
    ctx = mpmath.mp
    prec, rounding = ctx._prec_rounding
    return ctx.make_mpf(_from_man_exp(int(man), int(exp), prec, rounding))


def _piece_switches(g, mid, values):
    """The switches on the piece with midpoint ``mid``: 1 where a Heaviside argument is
    positive, 0 where negative."""
    return [1 if u > 0 else 0 for u in g.arguments(mid, *values)]


def _gauss_mp(g: _GaussFunctions, values, rtol=None, spent: int = 0, probed: int = 0):
    r"""The integral at the working precision (``dps`` digits), computed at 20 guard bits:
    adaptive piecewise Gauss--Legendre (:func:`replica.symbolic.quadrature.gauss_legendre_pieces`)
    on the pieces of :math:`[-T, T]` between the breakpoints :math:`-T, -T + 2, \dots, T` and the
    kinks (:math:`T` from :func:`~replica.symbolic.quadrature.gauss_truncation`, where the
    density is below :math:`2^{-p-30}`), plus the tails :math:`|z| > T` (cut at the kinks
    beyond :math:`T`) by the same adaptive rule, the half-line beyond the last kink mapped onto
    :math:`[0, 1]` by :math:`z = c \pm t/(1 - t)` (:class:`_HalfLine`): the tails are not
    assumed small, their pieces' error estimates enter the same total, which must be at most
    ``10**-dps/2`` times the sum of all pieces' magnitudes (a tail that the rule does not
    resolve -- an integrand that grows nearly as fast as the density decays -- is refined
    like any piece, or sends the integral to the fallback below). Where the Gauss--Legendre estimate does
    not get there the whole integral is recomputed by :func:`_gauss_mp_tanh_sinh`, which raises
    :class:`QuadratureError` where its own estimate fails too. Where the integrand has a
    ball-arithmetic version (``g.fast``; an implicit root in it evaluated at the balls'
    midpoints) the Gauss--Legendre sums and the tails' points are evaluated by it
    (:class:`_BallRule`), the mpmath integrand only where a ball is not finite; where there is
    none, and before the fallback, the rounding of the mpmath integrand is measured
    (:func:`_noise_bits`) and the integral computed again at a precision raised by the bits it
    costs, up to ``_PROBE_RAISE_MAX_BITS`` in all, beyond which :class:`QuadratureError`.
    ``rtol``: the tolerance (default :math:`10^{-{\rm dps}}`); ``spent``: the bits a chain of
    recomputations has added so far (the budget of :func:`_gauss_mp_rule`), ``probed``: the
    share of them added for an integrand's rounding."""
    fast = None if g.fast is None else (lambda z, *a, f=g.fast: [f(z, *a)])
    out = _gauss_mp_rule([g], [values], fast, values, g.levels, prior=g.prior, rtol=rtol,
                         spent=spent, probed=probed)
    if out is None:
        return _gauss_mp_tanh_sinh(g, values, rtol, spent, probed)
    return out[0]


class _FusedGauss:
    r"""A group of Gaussian integrals of one evaluator evaluated together: the same variable,
    the same kinks (so the same pieces and nodes), none depending on another's value.
    ``members`` are their indices, ``deps`` the indices of the earlier integrals their
    integrands, switches or kinks use, ``pre(*args, *deps)`` the list of the integrands' parts
    that depend on neither the variable nor a switch (in ball arithmetic, once per evaluation
    of the integrals), ``fast(z, *switches, *pre)`` the list of the members' integrands in
    ball arithmetic (an implicit root at the balls' midpoints) with their common
    subexpressions (the root, the label, the exponentials) computed once per node,
    ``levels`` the accepted level per cell (as :attr:`_GaussFunctions.levels`). See
    :func:`_gauss_mp_fused`."""

    __slots__ = ("members", "deps", "fast", "pre", "levels", "prior")

    def __init__(self, members, deps, fast, pre):
        self.members, self.deps, self.fast, self.pre = tuple(members), tuple(deps), fast, pre
        self.levels: dict = {}
        self.prior: dict = {}  # as _GaussFunctions.prior


def _gauss_mp_fused(group: _FusedGauss, gauss, values, out) -> bool:
    r"""Fills ``out[k]`` for each member ``k`` of ``group`` (``gauss`` the evaluator's
    :class:`_GaussFunctions`, ``values`` the arguments, ``out`` the integrals' values so far,
    ``None`` where not computed): the rule of :func:`_gauss_mp` on the pieces the members share,
    every node's integrands by one call of ``group.fast``, and the error control per member
    (:func:`replica.symbolic.quadrature.gauss_legendre_fused`: each member's summed estimate at
    most ``10**-dps/2`` of its own size). Returns ``False`` (nothing filled) where a member
    depends on an integral not yet computed; where the fused rule does not resolve every
    member, each member is computed on its own by :func:`_gauss_mp` (its own refinement, then
    its fallback)."""
    if any(out[j] is None for j in group.deps):
        return False
    members = [gauss[k] for k in group.members]
    member_values = [list(values) + out[:k] for k in group.members]
    fast_values = list(values) + [out[j] for j in group.deps]
    got = _gauss_mp_rule(members, member_values, group.fast, fast_values, group.levels,
                         group.pre, prior=group.prior)
    for i, (k, g) in enumerate(zip(group.members, members)):
        out[k] = _gauss_mp(g, member_values[i]) if got is None else got[i]
    return True


def _ball_pre(pre, balls):
    """``pre(*balls)`` in ball arithmetic at the working precision, as balls; ``None`` where a
    part is not a finite real ball (the mpmath integrands are used)."""
    import flint

    old = flint.ctx.prec
    try:
        flint.ctx.prec = mpmath.mp.prec
        out = [arb_of(v) for v in pre(*balls)]
    except (TypeError, ValueError):  # (NotEnclosable included) a complex or foreign value
        return None
    finally:
        flint.ctx.prec = old
    return out if all(v.is_finite() for v in out) else None


_ROUNDING_MAX_BITS = 256
"""The most bits :func:`_gauss_mp_rule` adds to the working precision for integrands whose
balls' radii (their rounding) keep the error above the tolerance."""

_CANCELLATION_GUARD_BITS = 30
"""Cancellation inside a Gaussian integral that :func:`_gauss_mp_rule` tolerates before it
recomputes the integral at a raised precision (bits: about 9 digits, the margin of the driver's
guard digits)."""

_CANCELLATION_MAX_BITS = 8000
"""The most precision (bits, about 2400 digits) that :func:`_gauss_mp_rule` adds for a
cancellation: beyond it the value is returned as computed, and the verifying re-solve finds
the digits lost."""


def _cancellation_bits(totals, sizes) -> int:
    r"""The bits lost to cancellation by the worst of the integrals: :math:`\log_2(S/|I|)`
    with :math:`S` the sum of the pieces' magnitudes (the scale of the rule's error control,
    :func:`replica.symbolic.quadrature.gauss_legendre_fused`) and :math:`I` the integral; an
    integral that is exactly 0 (odd by symmetry) counts for nothing."""
    worst = 0
    for t, s in zip(totals, sizes):
        if t != 0 and s > abs(t):
            worst = max(worst, int(mpmath.ceil(mpmath.log(s / abs(t), 2))))
    return worst


_NOISE_GUARD_BITS = 10
"""Bits beyond a noise plateau's excess over the tolerance by which :func:`_gauss_mp_rule`
raises the working precision (:func:`replica.symbolic.quadrature._plateau`)."""

_PROBE_BITS = 64
"""The bits beyond the integration's precision at which :func:`_integrand_noise` evaluates the
mpmath integrands a second time (the reference its rounding is measured against)."""

_PROBE_POINTS = (mpmath.mpf(1) / 2 - mpmath.sqrt(3) / 6, mpmath.mpf(1) / 2 + mpmath.sqrt(3) / 6)
"""Where :func:`_integrand_noise` probes each piece (fractions of its width: the two-point
Gauss--Legendre nodes, generic binary fractions -- at a dyadic point such as a piece's midpoint
a polynomial integrand with exact parameters can be exact and show no rounding at all)."""

_NOISE_MARGIN_BITS = 4
"""An mpmath integrand's rounding (:func:`_integrand_noise`) is accepted while it is at most
:math:`2^{-4}` of the tolerance (the rule's own half of it left for the truncation)."""

_PROBE_RAISE_MAX_BITS = 64
"""The most bits the mpmath-integrand paths (:func:`_gauss_mp_rule` without balls,
:func:`_gauss_mp_tanh_sinh`) add to the working precision, in one chain of recomputations, for
a cancellation inside the integrand (:func:`_noise_bits`); beyond (or beyond what
``_ROUNDING_MAX_BITS`` leaves of the chain's budget), :class:`QuadratureError` naming the
cancellation. (Small: near the Gardner capacity the integrand reaches the fallback with a real
cancellation in every Newton trial, and recomputations at hundreds of bits there took minutes
per solve -- section trust55 of benchmarks/README.md.)"""

_PROBE_DEEP_BITS = 4096
"""An integrand that is exactly 0 at every probe at both precisions of :func:`_integrand_noise`
(terms cancelling to 0: more than 64 bits lost at every point) is probed once more at this many
more bits; where it is not 0 there the cancellation is refused. (An integrand whose terms lose
more than that at every point is still taken as 0: no finite probe sees it.)"""


def _integrand_noise(pieces, count: int, extra: int = _PROBE_BITS):
    r"""The rounding of mpmath integrands, per member: ``(noise, scale)`` with
    :math:`E = \sum_p (b_p - a_p)\max_j |f(x_{pj}) - \tilde f(x_{pj})|` and
    :math:`S' = \sum_p (b_p - a_p)\max_j |\tilde f(x_{pj})|` over the ``pieces``
    ``(a, b, f, ...)`` (``f(x)`` the list of the ``count`` members' integrands, or a
    :class:`_HalfLine`), :math:`x_{pj}` the probes ``_PROBE_POINTS`` of each piece and
    :math:`\tilde f` the same integrand at ``extra`` more bits at the same (exact) point.
    :math:`E` is of the order of the integrands' rounding error's contribution to the integral:
    nothing else differs between the two evaluations (the arguments are exact ``mpf``; a
    half-line's mapped point is computed once, at the working precision). An integrand whose
    terms cancel at every point (:math:`(f + c)^2 - c^2 - 2cf` with :math:`c = 10^5`: ten
    digits) keeps that many fewer digits than the working precision -- invisible to the
    rule's error estimate and to ``mpmath.quad``'s (their levels see the same noise), visible
    here. A probe where an integrand cannot be evaluated, or is not finite, counts for nothing
    (the rule says so where it matters)."""
    noise, scale = [mpmath.mpf(0)] * count, [mpmath.mpf(0)] * count
    for piece in pieces:
        a, b, f = piece[:3]
        width = b - a
        worst, big = [mpmath.mpf(0)] * count, [mpmath.mpf(0)] * count
        for u in _PROBE_POINTS:
            x = a + width * u
            try:
                if isinstance(f, _HalfLine):
                    v = 1 - x
                    factor = 1 / (v * v)
                    z = f.c + f.sign * x / v
                    lo = [factor * w for w in f.point(z)]
                    with mpmath.extraprec(extra):
                        hi = [factor * w for w in f.point(z)]
                else:
                    lo = f(x)
                    with mpmath.extraprec(extra):
                        hi = f(x)
            except (ZeroDivisionError, ValueError, TypeError, OverflowError, ArithmeticError):
                continue
            for i, (p, q) in enumerate(zip(lo, hi)):
                try:
                    d, m = abs(p - q), abs(q)
                except TypeError:
                    continue
                if not (isinstance(d, mpmath.mpf) and mpmath.isfinite(d)
                        and isinstance(m, mpmath.mpf) and mpmath.isfinite(m)):
                    continue
                worst[i], big[i] = max(worst[i], d), max(big[i], m)
        noise = [o + width * w for o, w in zip(noise, worst)]
        scale = [o + width * w for o, w in zip(scale, big)]
    return noise, scale


def _noise_bits(pieces, count: int, rtol) -> int:
    r"""The bits by which the working precision must rise for the rounding :math:`E` of the
    ``count`` mpmath integrands on ``pieces`` (:func:`_integrand_noise`) to be at most
    :math:`2^{-4}` (``_NOISE_MARGIN_BITS``) of ``rtol`` times the probes' own magnitude
    :math:`S'`: 0 where it is already, else :math:`\lceil\log_2(16E/(\tau S'))\rceil + 10`.
    A member whose every probe is exactly 0 at both precisions (terms cancelling to 0, or an
    integrand that is 0) is probed once more at ``_PROBE_DEEP_BITS`` more bits; where it is
    not 0 there, the bits returned are more than ``_PROBE_RAISE_MAX_BITS`` (refused)."""
    noise, scale = _integrand_noise(pieces, count)
    worst = 0
    for e, s in zip(noise, scale):
        if e > 0 and s > 0 and e * 2**_NOISE_MARGIN_BITS > rtol * s:
            worst = max(worst, int(mpmath.ceil(mpmath.log(e * 2**_NOISE_MARGIN_BITS
                                                          / (rtol * s), 2))) + 10)
    if any(s == 0 for s in scale):
        _, deep = _integrand_noise(pieces, count, _PROBE_DEEP_BITS)
        if any(s == 0 and d > 0 for s, d in zip(scale, deep)):
            worst = max(worst, _PROBE_DEEP_BITS)
    return worst


def _probe_raise(bits: int, spent: int, probed: int) -> None:
    """Raises :class:`QuadratureError` where a recomputation at ``bits`` more bits for an mpmath
    integrand's rounding (:func:`_noise_bits`) would take the chain's bits for it (``probed``
    so far) beyond ``_PROBE_RAISE_MAX_BITS``, or all its bits (``spent``) beyond
    ``_ROUNDING_MAX_BITS``."""
    if probed + bits > _PROBE_RAISE_MAX_BITS or spent + bits > _ROUNDING_MAX_BITS:
        raise QuadratureError(
            f"a Gaussian integrand loses more digits to cancellation at every point than the "
            f"tolerance allows ({bits} more bits asked, measured against its value at "
            f"{_PROBE_BITS} more bits)",
            tried=f"its integral at up to {_PROBE_RAISE_MAX_BITS} more bits "
                  f"({probed} added so far)")


def _gauss_mp_rule(members, member_values, fast, fast_values, memory, pre=None,
                   partial: bool = False, prior=None, raised: bool = False, rtol=None,
                   spent: int = 0, noise=None, probed: int = 0):
    r"""The adaptive Gauss--Legendre evaluation of :func:`_gauss_mp` for the integrals
    ``members`` (:class:`_GaussFunctions` sharing their kinks; ``member_values`` the arguments
    of each), their integrands in ball arithmetic by ``fast(z, *switches, *fast_values)`` (a
    list, one per member; ``None``: the mpmath integrands only), or by
    ``fast(z, *switches, *pre(*fast_values))`` where ``pre`` is given (its balls computed once
    here, at the working precision): the list of their values, or ``None`` where the rule does
    not reach the tolerance for every member. ``partial``: ``(values, errors)`` instead,
    whether or not the tolerance is reached (the errors as the rule left them; for the inner
    integral of a two-dimensional one, whose error the outer rule judges), and a member whose
    truncation estimate is within the tolerance is not refined further for its rounding bound
    (``rounding_floor`` of :func:`~replica.symbolic.quadrature.gauss_legendre_fused`: its
    error comes back with the bound in it). The first
    evaluation on a cell (not in ``memory``) starts at :class:`_StartLevels`' level: another
    integral's at this precision, ``prior`` (the levels a process before remembered,
    :class:`_RememberedLevels`), another integral's at a lower precision. An integral that
    cancels (far smaller than the sum of its pieces' magnitudes) is recomputed at a precision
    raised by the bits lost (:func:`_cancellation_bits`); ``raised``: this is that
    recomputation, which returns ``(values, sizes)`` and raises nothing more.

    **Rounding.** Where the integrands are balls, a member whose rule is resolved but whose
    error is above the tolerance for the balls' radii alone (an integrand that cancels at
    every node, e.g. terms of size :math:`1/\sqrt q` summing to one: the committee machine's
    map at :math:`q \sim 10^{-21}`) is not refined (refinement does not lower rounding;
    ``rounding_floor`` of :func:`~replica.symbolic.quadrature.gauss_legendre_fused`), and a
    rule not resolved whose radii alone exceed the tolerance (their noise in the midpoints
    feeds the truncation estimate too) is not accepted at any level: the members are computed
    again with the working precision raised by the bits their error takes beyond the
    tolerance (plus 16), at the same tolerance ``rtol`` (default :math:`10^{-{\rm dps}}`),
    again while the radii keep it over, up to :data:`_ROUNDING_MAX_BITS` further bits in all
    (``spent``: the bits this chain of recomputations has added so far, for rounding or
    noise), the values then rounded to the working precision.

    **mpmath integrands** (no balls: ``fast`` is ``None``, or no finite ball of an argument)
    carry no radius, and a cancellation inside them at every node is invisible to the rule's
    estimate (its levels see the same noise): their rounding is measured first, at two probes
    per piece against an evaluation at 64 more bits (:func:`_noise_bits`), relative to the
    probes' magnitude; where it exceeds :math:`2^{-4}` of the tolerance the members are
    computed again at the working precision raised by the bits it takes, at the same ``rtol``,
    the bits out of the same budget (``spent``) and at most ``_PROBE_RAISE_MAX_BITS`` in one
    chain (``probed``: those added so far), beyond which :class:`QuadratureError` naming the
    cancellation (so also in the tanh--sinh fallback, :func:`_gauss_mp_tanh_sinh`).

    A noise plateau (:func:`replica.symbolic.quadrature._plateau`: top coefficients that do not
    shrink from one level to the next, set by the integrand's evaluation noise -- a
    cancellation inside it on the point-wise path, which no ball radius bounds) estimates its
    pieces by the floor itself; where that floor :math:`F` (relative to the size) exceeds the
    tolerance :math:`\tau`, no refinement lowers it (``plateau_exit`` of
    :func:`~replica.symbolic.quadrature.gauss_legendre_fused`) and the rule is computed again,
    at the same tolerance (``rtol``), at :math:`\lceil\log_2(F/\tau)\rceil` +
    ``_NOISE_GUARD_BITS`` more bits: rounding noise scales as :math:`2^{-p}`. The bits come
    out of the same budget as the rounding's (``spent``, ``_ROUNDING_MAX_BITS`` in all,
    shared with the cancellation's recomputations below, which pass it on): one chain of
    recomputations never adds more. Where the budget does not cover them, or where a
    recomputation (``noise``: ``(F, bits added)`` that sent it) finds a plateau again whose
    floor did not fall by at least half the bits added (:math:`F' > F\,2^{-b/2}`: not rounding
    noise -- a knee, a bump hidden at the lower levels), the rule is refined as before at that
    precision, plateau pieces estimated by their floor: resolved there, or refused (``None``),
    never credited. ``partial`` (an inner integral of a two-dimensional one) takes the same
    recomputation within the budget; beyond it, or where the floor did not fall, it returns at
    once the values and errors as they stand, the floor in the errors, for the outer rule to
    judge (refinement would not lower it). (Before, an inner integral had no plateau exit: a
    noisy inner integrand spent its 64 refinements, and the floor of a plateau piece was lost
    when it was bisected -- ``(phi + 2^50) - 2^50`` at 30 digits, a value 6e-23 off after
    2,896 evaluations; now the same value to 30 digits at 40 more bits, 1,424 evaluations.)
    (At :math:`\alpha = 10^{-300}` the teacher's channel integrand, computed
    point-wise, has a floor of :math:`10^{-3}` of its size at 485 bits: 473 more bits, which
    then cancel again -- 11 s per evaluation, minutes per solve, before this budget.)"""
    quadrature = _quadrature()
    NotResolved, gauss_legendre_fused = quadrature.NotResolved, quadrature.gauss_legendre_fused

    dps = mpmath.mp.dps
    noise_bits = 0
    rtol = mpmath.mpf(10) ** -dps if rtol is None else rtol
    with mpmath.workprec(mpmath.mp.prec + 20):
        features = _narrow_features(members, member_values)
    with mpmath.workprec(mpmath.mp.prec + 20 + _feature_guard_bits(features)):
        first = members[0]
        balls = None
        if fast is not None:
            try:
                # (None: an integral of the same evaluator not computed yet, which this
                # integrand does not use -- a fused group's member computed alone)
                balls = [None if v is None else arb_of(v) for v in fast_values]
            except NotEnclosable:  # an argument that is not a number (mpf, int)
                balls = None
            if balls is not None and pre is not None:
                balls = _ball_pre(pre, balls)

        def make(mid, half):
            """The members' integrands on the piece with midpoint ``mid`` (mpmath, or in ball
            arithmetic where there are balls), on the mapped half-line where ``half``."""
            sws = [_piece_switches(g, mid, vs) for g, vs in zip(members, member_values)]

            def f(z):
                return [g.integrand(z, *sw, *vs)
                        for g, sw, vs in zip(members, sws, member_values)]
            rule = (None if balls is None
                    else _BallRule(fast, [s for sw in sws for s in sw], balls, f))
            point = f if rule is None else rule
            return point if half is None else _HalfLine(point, rule, half[0], half[1])

        pieces = _mp_layout(first.kinks(*member_values[0]), mpmath.mp.prec, make, features)
        probe_bits = 0
        if balls is None and not partial and not raised:
            # the mpmath integrands' own rounding (no radius tells it), probed before the rule
            # (whose levels would climb on the noise in vain)
            probe_bits = _noise_bits(pieces, len(members), rtol)
            if probe_bits:
                _probe_raise(probe_bits, spent, probed)
        plateau_exit, fail = True, None
        while not probe_bits:  # (twice at most: the second time without the plateau exit)
            try:
                totals, errors, sizes = gauss_legendre_fused(
                    pieces, rtol / 2, memory,
                    hints=None if partial else _StartLevels(_level_hints(), prior or {}),
                    rounding_floor=partial or balls is not None, plateau_exit=plateau_exit,
                    settle=partial)
                break
            except NotResolved as exc:
                floor = exc.floor if plateau_exit else None
                if floor is None or not mpmath.isfinite(floor):
                    fail = exc
                    break
                noise_bits = int(mpmath.ceil(mpmath.log(floor / (rtol / 2), 2))) \
                    + _NOISE_GUARD_BITS
                if spent + noise_bits > _ROUNDING_MAX_BITS or (
                        noise is not None and floor > noise[0] / mpmath.mpf(2) ** (noise[1] / 2)):
                    # over the budget, or more bits did not lower the floor (not rounding
                    # noise): refined at this precision, the plateau estimated by its floor;
                    # ``partial`` (an inner integral): no refinement lowers the floor, its
                    # error (the floor in it) goes back as it stands, for the outer rule
                    noise_bits, plateau_exit = 0, False
                    if partial:
                        fail = exc
                        break
                    continue
                break
        if not probe_bits and not noise_bits and fail is not None:
            exc = fail
            if not partial and balls is not None and exc.partial is not None and any(
                    r > rtol * s for r, s in zip(exc.rounding, exc.partial[2])):
                # the rounding alone is above the tolerance: no rule is accepted at this
                # precision (the midpoints' noise feeds the truncation estimate as well)
                totals, errors, sizes = exc.partial
            elif not partial or exc.partial is None:
                return None
            else:
                totals, errors, sizes = exc.partial
    if probe_bits:  # the integrands' rounding above the tolerance: the same rule at more bits
        with mpmath.workprec(mpmath.mp.prec + probe_bits):
            again = _gauss_mp_rule(members, member_values, fast, fast_values, memory, pre,
                                   prior=prior, rtol=rtol, spent=spent + probe_bits,
                                   probed=probed + probe_bits)
        return None if again is None else [+t for t in again]
    if noise_bits:  # a noise plateau above the tolerance: the same rule at more bits
        with mpmath.workprec(mpmath.mp.prec + noise_bits):
            again = _gauss_mp_rule(members, member_values, fast, fast_values, memory, pre,
                                   partial=partial, prior=prior, raised=raised, rtol=rtol,
                                   spent=spent + noise_bits, noise=(floor, noise_bits),
                                   probed=probed)
        if again is None:
            return None
        if partial or raised:
            return [+t for t in again[0]], again[1]
        return [+t for t in again]
    with mpmath.workprec(mpmath.mp.prec + 20 + _feature_guard_bits(features)):
        if not all(mpmath.isfinite(t) for t in totals):
            raise QuadratureError("a Gaussian integral is not finite")
        if partial:
            return [+t for t in totals], errors
        over = [e / (rtol * s) for e, s in zip(errors, sizes) if e > rtol * s]
        if over:  # (with balls: the rounding is over the tolerance)
            if balls is None or raised or not mpmath.isfinite(max(over)):
                return None
            bits = int(mpmath.ceil(mpmath.log(max(over), 2))) + 16
            if spent + bits > _ROUNDING_MAX_BITS:
                return None
    if over:
        with mpmath.workprec(mpmath.mp.prec + bits):
            again = _gauss_mp_rule(members, member_values, fast, fast_values, memory, pre,
                                   prior=prior, rtol=rtol, spent=spent + bits, probed=probed)
        return None if again is None else [+t for t in again]
    if raised:
        return [+t for t in totals], sizes
    # the rule's error is relative to the pieces' magnitudes: an integral far smaller than its
    # integrand (the teacher's channel term at alpha = 1e-300, an odd part of size 1e150
    # integrating to 1: 150 digits) keeps only the digits that survive the cancellation, so
    # it is recomputed with the bits lost added to the working precision (the integrand then
    # evaluated to that many more digits; the arguments are exact). A cancellation beyond the
    # working precision shows as the whole precision lost: the bits added double until what
    # is lost at the raised precision is within what was added, or up to
    # _CANCELLATION_MAX_BITS (an integral that is 0 but for rounding never gets there; its
    # value is then the last one computed, and the verifying re-solve judges it)
    totals = _recomputed_while_cancelling(
        totals, sizes, lambda: _gauss_mp_rule(members, member_values, fast, fast_values, memory,
                                              pre, prior=prior, raised=True, spent=spent))
    return [+t for t in totals]


def _recomputed_while_cancelling(totals, sizes, again):
    """``totals`` (integrals whose pieces' magnitudes sum to ``sizes``), or where more than
    ``_CANCELLATION_GUARD_BITS`` of their bits cancel, those of ``again()`` (the same
    integrals computed again, ``(totals, sizes)``, or ``None`` where that rule is not resolved)
    at the working precision raised by the bits lost: the bits added are at least the loss
    plus 20 and double while the loss at the raised precision exceeds them, up to
    ``_CANCELLATION_MAX_BITS`` (an integral that is 0 but for rounding; its value is then the
    last one computed, and the verifying re-solve judges it)."""
    lost = _cancellation_bits(totals, sizes)
    extra = 0
    while lost > extra + _CANCELLATION_GUARD_BITS and extra < _CANCELLATION_MAX_BITS:
        extra = min(max(lost + 20, 2 * extra), _CANCELLATION_MAX_BITS)
        with mpmath.workprec(mpmath.mp.prec + extra):
            again_out = again()
        if again_out is None:
            break
        totals, sizes = again_out
        lost = _cancellation_bits(totals, sizes)
    return totals


class _StartLevels:
    """The ``hints`` of one call of :func:`_gauss_mp_rule`: a cell's starting level is the one
    the process noted at the cell's precision (:func:`_level_hints`), else the integral's
    ``prior`` (an earlier process's, :class:`_RememberedLevels`), else the one noted at the
    nearest lower precision; the accepted levels are noted for the process."""

    __slots__ = ("hints", "prior")

    def __init__(self, hints, prior):
        self.hints, self.prior = hints, prior

    def get(self, cell):
        level = self.hints.get(cell, lower=False)
        if level is None:
            level = self.prior.get(cell)
        return self.hints.get(cell) if level is None else level

    def note(self, levels):
        self.hints.note(levels)


class _RememberedLevels:
    r"""The levels at which the one-dimensional Gaussian integrals of an :class:`Evaluator` were
    accepted, kept on disk next to its generated code -- under the code's own key, which holds
    the contents of the expressions' sources (:func:`cache_key`), never a name -- and read back
    as each integral's ``prior`` when a later process loads that code: the first evaluation of
    an integral at a precision no other integral of the process has used starts there, not at
    level 1 (a Newton iteration pays for the climb once per integral and precision: for the
    logistic 30-digit point its first equations, its Jacobian and its re-solve's first
    equations). A starting level only: every evaluation is accepted by the same error control
    (:func:`~replica.symbolic.quadrature.gauss_legendre_fused`). What is stored per cell is the
    smallest level accepted by any process so far (the levels of this one where they are
    lower): a start below the needed level costs only the coarser rules on the way up, one
    above it a rule twice as long, so the stored levels never rise. Written when the process
    ends, for the evaluators whose levels fell."""

    SUFFIX = "-levels-decay.json"
    """(The levels accepted under the nested error estimate of
    :mod:`replica.symbolic.quadrature` that trusts only the coefficients' decay it sees; the
    files of the estimates before it, ``-levels.json`` (the coarse rule) and
    ``-levels-nested.json`` (the squared estimate alone), are not read: the stored levels never
    rise, so a level that an earlier estimate accepted and this one does not would make every
    later process climb from it.)"""

    def __init__(self):
        self._attached: list = []  # the evaluators whose integrals have a prior
        self._registered = False

    @staticmethod
    def _integrals(ev) -> dict:
        out = {f"g{k}": g for k, g in enumerate(ev._gauss.get("mp", ()))
               if not g.inner and not g.nested}
        out.update({f"f{j}": grp for j, grp in enumerate(ev._fused.get("mp", ()))})
        return out

    def attach(self, ev) -> None:
        if ev.cache is None or not ev.name or not ev._gauss.get("mp"):
            return
        path = ev.cache.path(f"{ev.name}-mp", self.SUFFIX)
        if path is None:
            return
        try:
            import json

            with open(path) as fh:
                stored = json.load(fh)
            integrals = self._integrals(ev)
            for which, cells in stored.items():
                if which in integrals:
                    for cell, level in cells:
                        if isinstance(level, int) and 1 <= level <= 64:
                            integrals[which].prior[tuple(cell)] = level
        except (OSError, ValueError, TypeError):
            pass  # none yet, or unreadable: level 1, as without it
        self._attached.append(ev)
        if not self._registered:
            import atexit

            atexit.register(self.store)
            self._registered = True

    def store(self) -> None:
        import json

        for ev in self._attached:
            doc, changed = {}, False
            for which, g in self._integrals(ev).items():
                levels = dict(g.prior)
                for cell, level in g.levels.items():
                    if level < levels.get(cell, level + 1):
                        levels[cell] = level
                        changed = True
                if levels:
                    doc[which] = [[list(cell), level] for cell, level in levels.items()]
            if changed:
                ev.cache.store(f"{ev.name}-mp", json.dumps(doc), suffix=self.SUFFIX)
        self._attached.clear()


_REMEMBERED_LEVELS = _RememberedLevels()

_LEVEL_HINTS: list = []


def _level_hints():
    """The process's :class:`~replica.symbolic.quadrature.LevelHints` for the one-dimensional
    integrals of :func:`_gauss_mp_rule`: the first evaluation of an integral (a group's first at
    a precision: the Jacobian's, the reported values', the verifying re-solve's) starts at the
    levels at which the integrals before it were accepted on the same cells (the layout of
    :func:`_mp_layout`, keyed by precision and position), not at level 1."""
    if not _LEVEL_HINTS:
        from .quadrature import LevelHints

        _LEVEL_HINTS.append(LevelHints())
    return _LEVEL_HINTS[0]


def _quad_finite(f, lo, hi):
    r"""``(value, error estimate)`` of ``mpmath.quad`` (tanh--sinh) of ``f`` on ``[lo, hi]``;
    raises :class:`QuadratureError` where the value is not finite, or where mpmath cannot
    evaluate the integrand at a node (an ``OverflowError``: on an infinite interval the nodes
    reach :math:`|z| \sim 10^{10^3}`, where e.g. mpmath's ``erfc`` of a tiny multiple of
    :math:`z` converts a huge integer to a float)."""
    try:
        value, err = mpmath.quad(f, [lo, hi], error=True)
    except OverflowError as exc:
        raise QuadratureError(f"mpmath cannot evaluate a Gaussian integrand far in its tail "
                              f"(OverflowError: {exc})") from None
    if not mpmath.isfinite(value):
        raise QuadratureError("a Gaussian integral is not finite")
    return value, err


def _gauss_mp_tanh_sinh(g: _GaussFunctions, values, rtol=None, spent: int = 0,
                        probed: int = 0):
    r"""The integral at the working precision by ``mpmath.quad`` (tanh--sinh) on each piece
    between kinks and the cut points at narrow features (:func:`_feature_points`; the infinite
    ends included), at 20 guard bits; raises
    :class:`QuadratureError` where the summed error estimate exceeds ``10**-dps`` times the sum
    of the pieces' magnitudes :math:`S`. ``mpmath.quad`` stops once its estimate is below the
    working epsilon in absolute terms; where that leaves the estimate above the tolerance, the
    pieces are integrated once more with the integrand times :math:`2^{-\lfloor\log_2 S\rfloor}`
    (exact), so that its absolute stop is one relative to the integral. (python-flint's
    ``acb.integral`` was measured slower here: for integrands with the error function its
    bounds on complex ellipses force ten times as many evaluations.)

    ``mpmath.quad``'s estimate compares levels that share their nodes, so it cannot see the
    integrand's own rounding: that is measured first (:func:`_noise_bits`, two probes per
    piece of the Gauss--Legendre layout, relative to the probes' own magnitude) and where it
    exceeds :math:`2^{-4}` of the tolerance ``rtol`` (default :math:`10^{-{\rm dps}}`) the
    integral is computed again by :func:`_gauss_mp` at a precision raised by the bits it
    costs, at the same tolerance, within the budget of :func:`_gauss_mp_rule` (``spent``,
    ``probed``: the bits added so far), beyond which :class:`QuadratureError` naming the
    cancellation."""
    dps = mpmath.mp.dps
    rtol = mpmath.mpf(10) ** -dps if rtol is None else rtol
    with mpmath.workprec(mpmath.mp.prec + 20):
        features = _narrow_features([g], [values])
    with mpmath.workprec(mpmath.mp.prec + 20 + _feature_guard_bits(features)):
        kinks = {mpmath.mpf(k) for k in g.kinks(*values) if mpmath.isfinite(k)}
        cuts = _feature_points(features, mpmath.inf, mpmath.mp.prec)
        kinks = sorted(kinks | set(cuts))
        points = [mpmath.ninf] + kinks + [mpmath.inf]

        def make(mid, half):
            sw = _piece_switches(g, mid, values)

            def point(z):
                return [g.integrand(z, *sw, *values)]
            return point if half is None else _HalfLine(point, None, half[0], half[1])

        # the integrand's own rounding first (no quadrature is spent at a precision that
        # cannot give the digits)
        noisy = _noise_bits(_mp_layout(g.kinks(*values), mpmath.mp.prec, make, features), 1,
                            rtol)
        if noisy:
            _probe_raise(noisy, spent, probed)
    if noisy:
        with mpmath.workprec(mpmath.mp.prec + noisy):
            again = _gauss_mp(g, values, rtol, spent + noisy, probed + noisy)
        return +again
    with mpmath.workprec(mpmath.mp.prec + 20 + _feature_guard_bits(features)):
        pieces = []
        for lo, hi in zip(points[:-1], points[1:]):
            if lo == hi:
                continue
            mid = (lo + hi) / 2 if mpmath.isfinite(lo) and mpmath.isfinite(hi) else (
                hi - 1 if mpmath.isfinite(hi) else (lo + 1 if mpmath.isfinite(lo) else 0))
            pieces.append((lo, hi, _piece_switches(g, mid, values)))

        def integrate(scale):
            total, size, error = mpmath.mpf(0), mpmath.mpf(0), mpmath.mpf(0)
            for lo, hi, sw in pieces:
                f = lambda z, sw=sw: g.integrand(z, *sw, *values) * scale  # noqa: E731
                value, err = _quad_finite(f, lo, hi)
                total += value
                size += abs(value)
                error += err
            return total / scale, size / scale, error / scale

        total, size, error = integrate(1)
        if error > rtol * size and size > 0:
            # mpmath.quad stops where its estimate is below the working epsilon in absolute
            # terms: an integral far from 1 in size (1e-141 at kappa = -25 of
            # perceptron_capacity) stops at an error that is large relative to it. Once more
            # with the integrand scaled by a power of two (exact) that brings it near 1.
            total, size, error = integrate(mpmath.ldexp(1, -int(mpmath.floor(mpmath.log(size, 2)))))
    if error > rtol * size:
        tol = f"1e-{dps}" if rtol == mpmath.mpf(10) ** -dps else mpmath.nstr(rtol, 3)
        raise QuadratureError(f"a Gaussian integral's quadrature error estimate "
                              f"{mpmath.nstr(error, 3)} exceeds {tol} of its size "
                              f"{mpmath.nstr(size, 3)}")
    return +total


# ---------------------------------------------------------------------------------------------
# Two-dimensional Gaussian integrals: an inner integral that depends on the outer variable
# ---------------------------------------------------------------------------------------------
class NotCertifiable(NotEnclosable):
    """Expressions that have no ball-arithmetic enclosure by design (a two-dimensional Gaussian
    integral), refused before any solve is attempted (``--certify``: exit status 2)."""


def _link_two_dimensional(current, prepared, dummies) -> None:
    r"""Sets ``nested`` of each prepared Gaussian integral whose integrand holds an inner
    integral that depends on its variable (``outer`` of the inner one, set on extraction):
    :math:`\int\mathcal D\xi\, F(\xi, I(\xi))` with :math:`I(\xi) = \int\mathcal Dz\,
    g(\xi, z)`. Refuses (``ValueError``) what has no evaluation: an inner integral used outside
    an integral over its outer variable, an inner integral that itself holds one (three
    dimensions), an outer integrand whose kinks depend on an inner integral (the kinks must be
    known before the inner integrals are)."""
    inner = {dummies[j]: j for j, p in enumerate(prepared) if p.outer is not None}
    if not inner:
        return
    for e in current:
        if e.free_symbols & set(inner):
            raise ValueError("a Gaussian integral depends on the variable of an integral "
                             "around it outside that integral")
    for k, p in enumerate(prepared):
        uses = sorted(inner[d] for d in p.integrand.free_symbols & set(inner))
        for j in uses:
            if p.outer is not None or prepared[j].outer != p.z:
                raise ValueError(f"a Gaussian integral nested three deep, or inside an integral "
                                 f"over another variable than the one it depends on "
                                 f"({prepared[j].outer}), is not supported")
        kinks = set().union(*[sympy_free(u) for u in list(p.arguments) + list(p.kinks)])
        if kinks & set(inner):
            raise ValueError("a kink of a Gaussian integrand depends on an inner Gaussian "
                             "integral (a two-dimensional integral whose kinks are not known "
                             "before its inner integrals): not supported")
        p.nested = uses


def sympy_free(e) -> set:
    """The free symbols of a SymPy expression (an empty set for a number)."""
    return set(getattr(e, "free_symbols", ()))


def _gauss_args(p, args, n_base: int, k: int) -> list:
    """The arguments of the generated functions of prepared integral ``k``: the expressions'
    arguments, the integrals before it and, for a two-dimensional integral's inner one, its
    outer variable last."""
    out = list(args[:n_base + k])
    return out + [p.outer] if p.outer is not None else out


_NARROW_WIDTH = mpmath.mpf(1) / 2
"""A feature of a Gaussian integrand (:func:`~replica.symbolic.gaussian.narrow_features`) whose
width is below this gets cut points in :func:`_mp_layout` and :func:`_gauss_np`."""


def _narrow_features(members, member_values) -> list:
    r"""``(c, w)`` of each narrow feature of the integrands ``members`` (:class:`_GaussFunctions`)
    at their arguments ``member_values``: center :math:`c = r/p`, width :math:`w = 1/\sqrt p`
    from the generated ``features`` (:func:`~replica.symbolic.gaussian.narrow_features`),
    where :math:`p` is a real finite number with :math:`w <` ``_NARROW_WIDTH`` and :math:`c` is
    finite; none where ``features`` cannot be evaluated (a division by 0: the integrand cannot
    be either, and says so)."""
    out = set()
    for g, vs in zip(members, member_values):
        if g.features is None:
            continue
        try:
            flat = g.features(*vs)
        except (ZeroDivisionError, ValueError, TypeError, OverflowError):
            continue
        for p, r in zip(flat[0::2], flat[1::2]):
            p, r = (mpmath.mpf(x) if isinstance(x, int) else x for x in (p, r))
            if not (isinstance(p, mpmath.mpf) and isinstance(r, mpmath.mpf)
                    and mpmath.isfinite(p) and p * _NARROW_WIDTH**2 > 1):
                continue
            c = r / p
            if mpmath.isfinite(c):
                out.add((c, 1 / mpmath.sqrt(p)))
    return sorted(out)


def _feature_guard_bits(features) -> int:
    r"""The bits the nodes near the narrow ``features`` (``(c, w)`` pairs) need beyond the
    rule's 20 guard bits: a node :math:`z` next to a feature of width :math:`w` at :math:`c` is
    rounded to :math:`2^{-p}|c|`, which moves :math:`(z - c)/w` by :math:`2^{-p}|c|/w` -- the
    relative error of the integrand there. Up to :math:`|c|/w = 2^{10}` the guard bits absorb
    it (half of them lost); beyond, :math:`\lceil\log_2(|c|/w)\rceil - 10` bits more (a peak
    of width :math:`10^{-6}` at :math:`c = -8`: 13; without them its rule's refinements could
    not get below the rounding and the integral was refused at 30 digits). A feature at
    :math:`c = 0` needs none (its nodes are rounded relative to their own size, a few
    widths), and 0 without features."""
    extra = 0
    for c, w in features:
        if c != 0:
            extra = max(extra, int(mpmath.ceil(mpmath.log(abs(c) / w, 2))) - 10)
    return extra


_LAYER_WIDTHS = 48
r"""The most lengths :math:`w^2/x` a piece :math:`[c + x, c + x']` beside a narrow feature of width
:math:`w` spans (:func:`_feature_points`) where the feature's tail there still counts."""


def _feature_points(features, T, prec: int) -> list:
    r"""The cut points of the narrow ``features`` (``(c, w)`` pairs) inside :math:`(-T, T)` at
    ``prec`` bits: :math:`c` and :math:`c \pm x_j`, :math:`x_0 = w`, while :math:`x_j < 2`, so
    that the pieces around a feature grade from its width to the cells' 2:
    :math:`x_{j+1} = 4x_j`, except where the feature's tail :math:`e^{-x^2/(2w^2)}` is still
    above :math:`2^{-p-40}` of its peak (:math:`x < w\sqrt{2(p + 40)\log 2}`): there
    :math:`x_{j+1} = x_j\min(4, 1 + 48 w^2/x_j^2)`. Why: beside a peak (or an error-function
    step) the tail on :math:`[x, x']` falls by :math:`e^{-1}` within :math:`w^2/x` of its near
    end, all its mass in that layer; on a piece of :math:`4x` (from :math:`x = 16w`:
    :math:`3\cdot 16^2` such lengths) no node of the 8- or 16-point rule lies in it, the rule
    and its error estimate both see about 0, and the layer's mass -- about :math:`e^{-128}` of
    the integral at :math:`16w` -- was lost: an off-centre peak of width :math:`0.007` at 57-61
    digits came out :math:`1.3\cdot 10^{-57}` wrong (the claim :math:`10^{-57}` to
    :math:`10^{-61}`). At most ``_LAYER_WIDTHS`` of them make the layer visible to the first
    rule; the grading at :math:`x \le 16w` is unchanged, and so is every layout below
    :math:`p = 145` bits (:math:`(16w)^2/(2w^2) > (p + 40)\log 2`)."""
    points = set()
    for c, w in features:
        points.add(c)
        far = w * mpmath.sqrt(2 * (prec + 40) * mpmath.ln(2))
        step = w
        while step < 2:
            points.update((c - step, c + step))
            step *= min(4, 1 + _LAYER_WIDTHS * (w / step) ** 2) if step < far else 4
    return sorted(x for x in points if -T < x < T)


def _mp_layout(kinks, prec: int, make, features=()) -> list:
    r"""The pieces of :func:`_gauss_mp` at ``prec`` bits for an integrand with the ``kinks``
    (non-finite ones ignored), ``(a, b, f, cell)`` with ``f = make(mid, half)``: ``mid`` a point
    inside the piece (its switches), ``half`` ``None`` on a finite piece, ``(c, side)`` on the
    half-line beyond the last kink (integrated over :math:`t \in [0, 1]`, :math:`z = c \pm
    t/(1 - t)`). The narrow ``features`` (``(c, w)`` pairs, :func:`_narrow_features`) add the
    cut points of :func:`_feature_points` (a peak of width :math:`w` between two nodes of a
    cell's rule is invisible to its error estimate; cut there, the pieces resolve it): they are
    no kinks (a piece's switches are those at its midpoint, unchanged), and the pieces of a cell
    they cut are keyed ``(prec, cell, j)``, ``j`` their index in the cell, so that the levels
    remembered for the cell (``(prec, cell)``) are neither used nor raised by them."""
    from .quadrature import gauss_truncation

    T = gauss_truncation(prec)
    T += T % 2
    kinks = sorted({mpmath.mpf(k) for k in kinks if mpmath.isfinite(k)})
    inner = [k for k in kinks if -T < k < T]
    extra = _feature_points(features, T, prec)
    pieces = []
    for cell in range(-T, T, 2):
        lo, hi = mpmath.mpf(cell), mpmath.mpf(cell + 2)
        cuts = [lo] + [k for k in inner if lo < k < hi] + [hi]
        more = [x for x in extra if lo < x < hi]
        if more:
            cuts = sorted(set(cuts) | set(more))
        for j, (a, b) in enumerate(zip(cuts[:-1], cuts[1:])):
            pieces.append((a, b, make((a + b) / 2, None),
                           (prec, cell, j) if more else (prec, cell)))
    tails = [(-1, [mpmath.ninf] + [k for k in kinks if k < -T] + [mpmath.mpf(-T)]),
             (1, [mpmath.mpf(T)] + [k for k in kinks if k > T] + [mpmath.inf])]
    for side, points in tails:
        for i, (lo, hi) in enumerate(zip(points[:-1], points[1:])):
            if lo == hi:
                continue
            finite = mpmath.isfinite(lo) and mpmath.isfinite(hi)
            mid = (lo + hi) / 2 if finite else (hi - 1 if mpmath.isfinite(hi) else lo + 1)
            if finite:
                pieces.append((lo, hi, make(mid, None), (prec, side, i)))
            else:
                pieces.append((mpmath.mpf(0), mpmath.mpf(1),
                               make(mid, (hi if side < 0 else lo, side)), (prec, side, i)))
    return pieces


def _gauss_mp_error(g: _GaussFunctions, values):
    r"""``(value, error)`` of a one-dimensional Gaussian integral (the inner integral of a
    two-dimensional one, at a node of the outer rule) at the working precision, computed at 20
    guard bits by the adaptive rule of :func:`_gauss_mp` on the same pieces (the integrand in
    ball arithmetic where it has one): ``error`` is the rule's summed error estimate, at most
    ``10**-dps/2`` of the pieces' magnitudes where the rule gets there within its refinements,
    else what it reached: the error, whatever it is, enters the outer integral's estimate
    (:class:`_NestedRule`), which judges it (an inner integral that is tiny, or whose values are
    rounding noise, where the outer density is tiny needs no relative accuracy; one that
    matters makes the outer integral fail). An integral whose truncation estimate is within
    that tolerance but whose rounding bound (the summed radii of its integrand's balls, which
    no refinement lowers) is not stops there, its error the sum of both (the committee
    machine's inner integrals at :math:`\alpha = 10^{-20}/3`, 16 digits, raised by 53 bits for
    the outer cancellation: their rounding bounds above their tolerance, each spent the 64
    refinements before, 240 s of CPU time, and the point was refused; now 30 s, the map equal
    to :math:`2\alpha/\pi` to 16 digits)."""
    fast = None if g.fast is None else (lambda z, *a, f=g.fast: [f(z, *a)])
    out = _gauss_mp_rule([g], [values], fast, values, g.levels, partial=True)
    if out is None:  # (a piece that is not finite)
        raise QuadratureError("a Gaussian integral is not finite")
    return out[0][0], out[1][0]


class _NestedRule:
    r"""The outer integrand :math:`F(\xi, I_1(\xi), \dots)\,\varphi(\xi)` of a two-dimensional
    Gaussian integral on one piece, for
    :func:`replica.symbolic.quadrature.gauss_legendre_pieces`: at each node :math:`\xi_j` the
    inner integrals :math:`I_i(\xi_j)` are computed (:func:`_gauss_mp_error`, with their error
    estimates :math:`e_{ij}`) and :meth:`weighted_sums` returns, as the rule's ``rounding``
    (added to the piece's error estimate), the propagated inner error
    :math:`h\sum_j w_j\sum_i|\partial F/\partial I_i|(\xi_j)\,e_{ij}` (the derivative
    generated from the same SymPy integrand), and with the ``tails`` vectors
    (:func:`~replica.symbolic.quadrature.tail_weights`) the interpolant's top Legendre
    coefficients' magnitudes :math:`|h\sum_j v_jF_j| + h\sum_j|v_j|d_j` (:math:`d_j` the
    propagated inner error at the node): the outer piece's estimate is the nested one, squared
    only where the coefficients' decay is seen (``_seen_decay``). Estimated by a coarser rule
    instead, it was squared unseen: a Lorentzian bump of amplitude :math:`10^{-10}` and width
    0.1 on an outer integrand of scale 1 (coefficients with a knee) came out
    :math:`4\cdot 10^{-27}` wrong at 30 digits. ``half`` ``(c, side)``: the piece is the
    half-line beyond ``c``, mapped as in :class:`_HalfLine`."""

    __slots__ = ("g", "sw", "values", "gauss", "n_base", "half")

    def __init__(self, g, sw, values, gauss, n_base, half):
        self.g, self.sw, self.values, self.gauss = g, sw, values, gauss
        self.n_base, self.half = n_base, half

    def _point(self, z):
        g, vals = self.g, list(self.values)
        errors = []
        for j in g.nested:
            slot = self.n_base + j
            vals[slot], e = _gauss_mp_error(self.gauss[j], vals[:slot] + [z])
            errors.append(e)
        f = g.integrand(z, *self.sw, *vals)
        d = mpmath.fsum(abs(dF(z, *self.sw, *vals)) * e
                        for dF, e in zip(g.derivatives, errors))
        return f, d

    def _map(self, t):
        if self.half is None:
            return t, 1
        c, side = self.half
        u = 1 - t
        return c + side * t / u, 1 / (u * u)

    def __call__(self, t):
        z, jac = self._map(t)
        return self._point(z)[0] * jac

    nested = True  # weighted_sums gives the interpolant's top coefficients too

    def weighted_sums(self, m, h, xs, ws, tails=()):
        fs, ds = [], []
        for x in xs:
            z, jac = self._map(m + h * x)
            f, d = self._point(z)
            fs.append(f * jac)
            ds.append(d * jac)
        out = (h * mpmath.fdot(ws, fs), h * mpmath.fsum(w * abs(f) for w, f in zip(ws, fs)),
               h * mpmath.fdot(ws, ds))
        if not tails:
            return out
        # the top coefficients' magnitudes, each with the inner errors it carries (a bound)
        return out + ([abs(h * mpmath.fdot(v, fs)) + abs(h) * mpmath.fsum(abs(c) * d for c, d
                                                                        in zip(v, ds))
                       for v in tails],)


def _gauss_mp_two_dimensional(g: _GaussFunctions, values, gauss, n_base: int):
    r"""A two-dimensional Gaussian integral :math:`\int\mathcal D\xi\,F(\xi, I(\xi))` at the
    working precision (``dps`` digits), at 20 guard bits: the outer integral by the adaptive rule
    of :func:`_gauss_mp` on the same pieces (:func:`_mp_layout`), each outer node's inner
    integrals by :func:`_gauss_mp_error` at a further 20 guard bits (their tolerance about
    :math:`10^{-6}` of the outer one's); the outer pieces' error estimates include the inner
    integrals' propagated errors (:class:`_NestedRule`), and the sum of all must be at most
    ``10**-dps/2`` of the pieces' magnitudes, else :class:`QuadratureError` (no tanh--sinh
    fallback: it would cost the square of a one-dimensional one). ``values``: the arguments
    and the integrals before this one (an inner integral's slot holds a placeholder).

    An integral far smaller than the sum of its pieces' magnitudes (the committee machine's
    channel derivative at :math:`\alpha = 10^{-30}/3`: an odd part of size :math:`1/\sqrt q
    \approx 2\cdot10^{15}` integrating to 0) keeps only the digits that survive the
    cancellation, since the error control is relative to those magnitudes: it is recomputed
    with the bits lost added to the precision (the inner integrals too), as
    :func:`_gauss_mp_rule` does for a one-dimensional one (same tolerance
    ``_CANCELLATION_GUARD_BITS``, same limit). Without it the map came out with 17 correct
    digits of 24, 24 of 30.

    Where the outer rule does not get there within its
    :data:`~replica.symbolic.quadrature.MAX_REFINEMENTS` refinements the refusal names what was
    tried: this rule, at which precision, and whether that was the recomputation raised for a
    cancellation (there is no tanh--sinh fallback here). (The committee machine's map at 16
    digits and :math:`\alpha = 10^{-20}/3` was refused so until the inner integrals stopped at
    their rounding bound, :func:`_gauss_mp_error`.)"""
    quadrature = _quadrature()
    MAX_REFINEMENTS, NotResolved = quadrature.MAX_REFINEMENTS, quadrature.NotResolved
    gauss_legendre_pieces = quadrature.gauss_legendre_pieces

    base = mpmath.mp.prec

    def rule():
        rtol = mpmath.mpf(10) ** -mpmath.mp.dps
        raised = mpmath.mp.prec - base
        with mpmath.workprec(mpmath.mp.prec + 20):
            pieces = _mp_layout(g.kinks(*values), mpmath.mp.prec,
                                lambda mid, half: _NestedRule(g, _piece_switches(g, mid, values),
                                                              values, gauss, n_base, half))
            try:
                total, error, size = gauss_legendre_pieces(pieces, rtol / 2, g.levels)
            except NotResolved as exc:
                tried = (f"adaptive Gauss-Legendre on the pieces between the kinks, "
                         f"{MAX_REFINEMENTS} refinements of the outer rule, the inner integrals "
                         f"by the same rule at each outer node, at {mpmath.mp.prec} bits"
                         + (f" (raised by {raised} bits for a cancellation)" if raised else ""))
                raise QuadratureError(f"a two-dimensional Gaussian integral is not resolved: "
                                      f"{exc}", tried=tried) from None
            if not mpmath.isfinite(total):
                raise QuadratureError("a Gaussian integral is not finite")
        return [total], [size]

    (total,) = _recomputed_while_cancelling(*rule(), rule)
    return +total


def _nested_np(g: _GaussFunctions, gauss, n_base: int, dtype):
    r"""The ``fill`` of :func:`_gauss_np` for a two-dimensional integral's outer integrand: the
    inner integrals' slots of the (expanded) values replaced by the inner integrals at every
    node ``z`` of the outer rule, each by :func:`_gauss_np` over the array of nodes (a tensor
    product of the two fixed rules)."""
    def fill(z, vals):
        vals = list(vals)
        for j in g.nested:
            slot = n_base + j
            vals[slot] = _gauss_np(gauss[j], vals[:slot] + [z], dtype)
        return vals

    return fill


SCALED_ERFC_FROM = 26.5
"""(float64) :data:`replica.symbolic.gaussian.SCALED_ERFC_FROM`, which the generated code
subtracts from each ``erfc`` argument (``gauss_y_k``): the float64 path does not import SymPy
(``tests/test_implicit_cache.py`` checks that both agree)."""

_NP_LIMIT = 16.0
"""The float64 rule integrates over ``[-16, 16]``: the standard normal density there is below
``7e-57`` of its maximum (so the truncation is below the float64 rounding of any integrand that
grows more slowly than ``exp(5|z|)``)."""
_NP_FIXED = np.array([-16.0, -10.0, -6.0, -3.0, -1.0, 1.0, 3.0, 6.0, 10.0, 16.0])
_NP_NODES = 24
CHECK_SPLIT = 2
r"""The float64 check of a point (:meth:`~replica.numerics.machine.Machine.assess`) estimates
the error of :func:`_gauss_np`'s rule with every piece of that rule cut into this many equal
parts (48 nodes a piece where the float64 rule has 24), in float64, beside the extended-precision
recomputation (:func:`~replica.numerics.float64_checks.call_longdouble`), which uses the rule's
own nodes and so sees the float64 rounding only. Where the fixed rule's error is e, a piece cut
in two has an error of about e**2 for an analytic integrand, so the difference of the two rules
measures e wherever it matters (above the claim of 1e-8); the check adds it to the rounding
estimate. (The extended recomputation at the finer rule's nodes measured both at once, but
cost 0.46 s of a 1.0 s 100-point logistic curve, whose integrals go through an implicit root
in ``longdouble``; at the rule's own nodes, 0.19 s, and the float64 finer rule 0.03 s.) A
sharply peaked integrand -- the sign channel's :math:`H(cz)` at :math:`c = \sqrt{m/(1-m)}
\approx 53` (the Rademacher perceptron at :math:`m = 0.99965`), of width :math:`1/c` on the
piece :math:`[-1, 1]` -- is not resolved by 24 nodes, and the float64 iteration converged to a
point where that rule's residual vanished and the true one is 44 (in :math:`\hat m = 13.6`).
The layouts now cut at narrow Gaussian peaks and error-function steps
(:func:`replica.symbolic.gaussian.narrow_features`), which resolves that case; the check still
sees the features they do not detect (a ``tanh`` step of width 0.15 leaves the fixed rule 6e-6
off, the rule cut in two 4e-11: tests/test_float64_rule_error.py)."""


_NP_SPLIT = [1]
"""The ``split`` of the fixed rule (:func:`_gauss_np`) that :meth:`Evaluator.gaussian_values`
uses where its caller gives none, while :class:`np_rule_split` holds one."""


class _HeldSetting:
    """Within ``with``: the one-element list ``cell`` holds ``value``; the value it held before
    is restored on leaving (the module's settings held by context managers, never assigned)."""

    def __init__(self, cell: list, value):
        self.cell, self.value = cell, value

    def __enter__(self):
        self.saved = self.cell[0]
        self.cell[0] = self.value
        return self

    def __exit__(self, *exc):
        self.cell[0] = self.saved
        return False


class np_rule_split(_HeldSetting):
    """Within ``with np_rule_split(k):`` the float64 (and extended) Gaussian integrals of
    :meth:`Evaluator.gaussian_values` cut every piece of the fixed rule into ``k`` parts
    (:func:`_gauss_np`; the extended-precision recomputation of the check too), and the
    check's estimate of the rule's error uses ``k`` times :data:`CHECK_SPLIT`
    (:func:`check_split`): the float64 path's re-solve of points whose
    integrands the fixed rule does not resolve (:meth:`replica.numerics.machine.Machine.grid`)."""

    def __init__(self, split: int):
        self.split = int(split)
        super().__init__(_NP_SPLIT, self.split)


def current_split() -> int:
    """The ``split`` that :class:`np_rule_split` holds (1 outside one)."""
    return _NP_SPLIT[0]


def check_split() -> int:
    """The ``split`` of the rule by which the check estimates the rule's error
    (:meth:`~replica.numerics.machine.Machine.assess`): :data:`CHECK_SPLIT` times the rule's."""
    return CHECK_SPLIT * _NP_SPLIT[0]


@functools.lru_cache(maxsize=None)
def _legendre(n: int, dtype):
    x, w = np.polynomial.legendre.leggauss(n)
    return x.astype(dtype), w.astype(dtype)


def _np_where_only(f, mask, h, z, fargs) -> None:
    """``f[mask] = h(z, *fargs)[mask]``, ``h`` evaluated at the masked nodes only (the scaled
    and combined forms of :func:`_gauss_np` are needed at a few nodes of a grid's thousands;
    elementwise, the same values as evaluating it everywhere)."""
    if not np.any(mask):
        return
    args = [np.broadcast_to(a, z.shape)[mask] for a in fargs]
    f[mask] = np.broadcast_to(np.asarray(h(z[mask], *args), dtype=f.dtype), (int(mask.sum()),))


def _np_masked(h, mask, z, fargs, dtype):
    """``h`` at the masked nodes only, its arguments converted to ``dtype``."""
    args = [np.broadcast_to(a, z.shape)[mask].astype(dtype) for a in fargs]
    return h(z[mask].astype(dtype), *args)


_WIDER_RANGE = ({np.dtype(np.float64): np.dtype(np.longdouble)}
                if np.finfo(np.longdouble).maxexp > np.finfo(np.float64).maxexp else {})
"""The type :func:`_gauss_np` evaluates a logistic integrand in where its float64 forms are
not finite: ``longdouble`` where its exponent range is wider (x86: 80-bit), none where it is
float64 itself."""


_NP_MAX_LEVELS = 40
"""The most cut points on each side of a narrow feature in :func:`_narrow_points_np`."""


def _narrow_points_np(g: _GaussFunctions, vals, shape, dtype) -> list:
    r"""The cut points of :func:`_gauss_np` at the narrow features of ``g``'s integrand (those of
    :func:`_feature_points`, per element of the grid, :math:`j < J` with :math:`J` the most any
    element needs): arrays of ``shape``, ``-_NP_LIMIT`` (an end of the rule: a piece of length
    0) where an element has no such point; none where no element has a narrow feature."""
    if g.features is None:
        return []
    flat = [np.broadcast_to(np.asarray(v, dtype=dtype), shape) for v in g.features(*vals)]
    centers, widths = [], []
    for p, r in zip(flat[0::2], flat[1::2]):
        narrow = np.isfinite(p) & (p * float(_NARROW_WIDTH)**2 > 1)
        c = np.where(narrow, r / np.where(narrow, p, 1), 0)
        narrow &= np.isfinite(c) & (np.abs(c) < _NP_LIMIT)
        if np.any(narrow):
            centers.append(np.where(narrow, c, np.nan))
            widths.append(np.where(narrow, 1 / np.sqrt(np.where(narrow, p, 1)), np.nan))
    if not centers:
        return []
    # (at most _NP_MAX_LEVELS: the grading of a width below 2/4^40 ~ 2e-24, below the float64
    # spacing of any center but 0, stops short of 2)
    levels = min(_NP_MAX_LEVELS, int(np.ceil(np.log(2 / np.nanmin(widths)) / np.log(4))))
    four = np.dtype(dtype).type(4)
    out = []
    for c, w in zip(centers, widths):
        out.append(c)
        for j in range(levels):
            step = w * four**j
            out += [np.where(step < 2, c - step, np.nan), np.where(step < 2, c + step, np.nan)]
    return [np.clip(np.where(np.isnan(x), -_NP_LIMIT, x), -_NP_LIMIT, _NP_LIMIT).astype(dtype)
            for x in out]


EMPTY_NODES_SKIPPED = 0.1
"""The fraction of ``_gauss_np``'s nodes on pieces of length 0 from which it evaluates an
integrand that solves an implicit root (``_solves_roots``) at the other nodes only (below
it, or for an integrand of elementary functions, at every node: gathering the live nodes costs
more than it saves -- measured on the teacher perceptron's curve, 7 % slower)."""


def _solves_roots(g: _GaussFunctions) -> bool:
    """Whether the float64 integrand of ``g`` solves an implicit root
    (:mod:`replica.symbolic.implicit`) at its nodes: a name of its code bound to one's numeric
    implementation (remembered on ``g``)."""
    hit = getattr(g, "_solves_roots", None)
    if hit is None:
        kind = getattr(sys.modules.get("replica.symbolic.implicit"), "_Numeric", None)
        f = g.integrand
        code, names = getattr(f, "__code__", None), getattr(f, "__globals__", {})
        hit = bool(kind is not None and code is not None
                   and any(isinstance(names.get(n), kind) for n in code.co_names))
        g._solves_roots = hit
    return hit


def _np_integrand(g: _GaussFunctions, z, fargs, dtype):
    """The integrand of :func:`_gauss_np` at the nodes ``z`` (its arguments ``fargs``
    broadcastable to ``z``): as written, and in its scaled or logistic forms where that is not
    finite (:func:`_gauss_np`'s docstring); elementwise, so the same values at a node whatever
    other nodes are evaluated with it."""
    with np.errstate(all="ignore"):
        f = g.integrand(z, *fargs)
        if g.scaled is not None:  # far in an erfc's tail: the scaled form (gaussian.erfcx)
            f = np.broadcast_to(np.asarray(f, dtype=dtype), z.shape)
            far, positive = np.zeros(z.shape, dtype=bool), np.zeros(z.shape, dtype=bool)
            defined = np.ones(z.shape, dtype=bool)
            for y in g.erfc_arguments(z, *fargs):  # (an argument may hold a switch: |w|)
                far |= np.asarray(y) >= 0  # (the arguments less SCALED_ERFC_FROM)
                positive |= np.asarray(y) >= -SCALED_ERFC_FROM
                defined &= np.isfinite(y)
            # (a value that is not finite because an argument is not -- outside the domain,
            # e.g. the square root of a negative number -- stays so: only overflow is mended)
            rest = ~np.isfinite(f) & ~far & defined
            scaled = far | (rest & positive)  # (erfcx: no cancellation at positive arguments)
            rest &= ~positive  # (overflow at negative arguments: erfc kept)
            if np.any(scaled) or np.any(rest):
                f = np.array(f)
                _np_where_only(f, scaled, g.scaled, z, fargs)
                _np_where_only(f, rest, g.combined, z, fargs)
        if g.logistic is not None:  # e^{ku} of a logistic pattern overflows: _logistic_safe
            f = np.broadcast_to(np.asarray(f, dtype=dtype), z.shape)
            bad = ~np.isfinite(f)
            if g.scaled is not None:  # (not where an erfc argument is not finite, or far)
                bad &= defined & ~far
            if np.any(bad):
                h = g.logistic()
                if h is not None:
                    f = np.array(f)
                    _np_where_only(f, bad, h, z, fargs)
                    bad &= ~np.isfinite(f)
                if np.any(bad) and _WIDER_RANGE.get(np.dtype(dtype)) is not None:
                    # (what the forms leave, e^{2u} over a sum whose e^{2u} they keep: that
                    # form in longdouble, whose exponent range is 16 times float64's)
                    f = np.array(f)
                    try:
                        part = np.asarray(_np_masked(h or g.integrand, bad, z, fargs,
                                                     _WIDER_RANGE[np.dtype(dtype)]))
                        f[bad] = np.broadcast_to(part, (int(bad.sum()),)).astype(dtype)
                    except TypeError:  # (a function without a longdouble loop: left as is)
                        pass
        return f


def _gauss_np(g: _GaussFunctions, values, dtype, fill=None, split: int = 1):
    """The integral in ``dtype`` (float64 or longdouble), vectorised over the arguments'
    common shape: Gauss--Legendre rules of 24 nodes on the pieces of ``[-16, 16]`` between the
    fixed points ``+-1, +-3, +-6, +-10``, the kinks (each element of a grid has its own
    kinks) and the cut points at the integrand's narrow features (:func:`_narrow_points_np`;
    none where it has none), each piece cut into ``split`` equal parts (1: the float64 path's
    rule; the check of a float64 point estimates its error with :data:`CHECK_SPLIT` times as
    many); a Heaviside function is constant on each piece, its switch read at the piece's
    midpoint. An integrand with ``erfc`` is evaluated as written wherever that is finite and
    every ``erfc`` argument is below :data:`~replica.symbolic.gaussian.SCALED_ERFC_FROM` (the
    values there are those of the plain form); where an argument reaches it, in its scaled form
    (:func:`~replica.symbolic.gaussian.scaled_erfc`: ``erfc(y) = erfcx(y) exp(-y^2)`` with the
    exponentials combined), which stays finite where ``erfc`` underflows; where the plain form
    is not finite otherwise, in the scaled form if an argument is positive (``erfcx`` loses no
    digits there) and with its exponentials combined and ``erfc`` kept if not (``erfcx``
    overflows at very negative arguments and cancels at moderately negative ones). An integrand
    with a logistic pattern (:math:`1 + e^{u}`, :math:`\\log(1 + e^{u})`: a logistic loss's
    proximal map) is evaluated, where its value is still not finite (:math:`e^{2u}` overflows
    for :math:`u > 354`; not where an ``erfc`` argument is not finite or reaches
    :data:`~replica.symbolic.gaussian.SCALED_ERFC_FROM`), in its logistic forms
    (:func:`_logistic_safe`), generated at the first such node, and where that form is still
    not finite (a sum that keeps :math:`e^{2u}` beside terms that do not), in ``longdouble``
    (:data:`_WIDER_RANGE`, where it has a wider exponent range). ``fill``
    (a two-dimensional integral's outer one, :func:`_nested_np`) replaces the inner integrals'
    slots of the values at the nodes."""
    vals = [np.asarray(v, dtype=dtype) for v in values]
    shape = np.broadcast_shapes(*(v.shape for v in vals)) if vals else ()
    with np.errstate(all="ignore"):
        kinks = [np.clip(np.broadcast_to(np.asarray(k, dtype=dtype), shape), -_NP_LIMIT,
                         _NP_LIMIT) for k in g.kinks(*vals)]
        fixed = np.broadcast_to(_NP_FIXED.astype(dtype), shape + _NP_FIXED.shape)
        kinks += _narrow_points_np(g, vals, shape, dtype)
        points = np.sort(np.concatenate([fixed] + [k[..., None] for k in kinks], axis=-1),
                         axis=-1)
        if split > 1:  # each piece in `split` equal parts (the kinks stay piece ends)
            a, b = points[..., :-1, None], points[..., 1:, None]
            t = (np.arange(split) / split).astype(dtype)
            inner = (a + (b - a) * t).reshape(points.shape[:-1] + (-1,))
            points = np.concatenate([inner, points[..., -1:]], axis=-1)
        lo, hi = points[..., :-1], points[..., 1:]
        mid, half = (lo + hi) / 2, (hi - lo) / 2
        expanded = [v[..., None] for v in vals]
        switches = [np.asarray(u > 0, dtype=dtype) for u in g.arguments(mid, *expanded)]
        x, w = _legendre(_NP_NODES, np.dtype(dtype).type)
        z = mid[..., None] + half[..., None] * x
        fvals = [v[..., None] for v in expanded]
        if fill is not None:
            fvals = fill(z, fvals)
        fargs = [s[..., None] for s in switches] + fvals
        # the nodes of pieces of length 0 (the padding of the cut points of narrow features at
        # elements that have fewer, all at -16) weigh 0: an integrand that solves a root there
        # is evaluated at the others only, where they are at least EMPTY_NODES_SKIPPED of the
        # nodes (the same values there: it is elementwise; 0 at the rest, as the weights below
        # make it anyway)
        dead = (np.broadcast_to(half[..., None] * w == 0, z.shape)
                if fill is None and z.size and _solves_roots(g) else None)
        if dead is not None and np.count_nonzero(dead) >= EMPTY_NODES_SKIPPED * z.size:
            live = ~dead
            f = np.zeros(z.shape, dtype=dtype)
            part = _np_integrand(g, z[live], [np.broadcast_to(a, z.shape)[live] for a in fargs],
                                 dtype)
            f[live] = np.broadcast_to(np.asarray(part, dtype=dtype), (int(np.count_nonzero(live)),))
        else:
            f = _np_integrand(g, z, fargs, dtype)
        f = np.where(np.broadcast_to(half[..., None] * w, np.shape(f)) == 0, 0, f)
        return np.sum(np.broadcast_to(half[..., None] * w * f, z.shape), axis=(-2, -1))


def _acb_namespace() -> dict:
    """The names of :func:`_arb_namespace`, acting on python-flint ``acb`` balls (what
    ``acb.integral`` integrates): every function is analytic where it is finite (the logarithm
    and the square root check their branch cut). Written for speed: an integrand is evaluated
    thousands of times per integral, its arguments already balls."""
    import flint

    acb, arb = flint.acb, flint.arb

    def A(v):
        t = type(v)
        if t is acb:
            return v
        if t is int or t is arb:
            return acb(v)
        return acb(arb_of(v))

    def unary(name, *extra):
        meth = getattr(acb, name)

        def f(v):
            return meth(v if type(v) is acb else A(v), *extra)

        return f

    ns = {
        "mpf": lambda v: acb(arb(v)) if isinstance(v, str) else A(v),
        "ball_float": lambda sign, man, exp: acb(_ball_float(sign, man, exp)),
        "ball_ipow": lambda x, n: A(x) ** n,
        "ball_pow": lambda x, y: _off_cut(A(x) ** y, A(x), "pow"),
        "sqrt": unary("sqrt", True),
        "log": unary("log", True),
        "inf": arb.pos_inf(),
        "ball_pi": lambda: acb.pi(),
        "ball_e": lambda: acb(arb.const_e()),
    }
    for name in ("exp", "expm1", "tanh", "cosh", "sinh", "erf", "erfc", "cos", "sin"):
        ns[name] = unary(name)
    for name in ("log1p", "atan", "acos", "asin"):  # (python-flint has no analytic flag here)
        meth = getattr(acb, name)
        ns[name] = _checked_at_cut(meth, name, A)
    ns.update(_log_space_balls(ns, A))
    return ns


_CUTS = {
    "log1p": lambda v: v.imag.contains(0) and v.real.lower() <= -1,
    "acos": lambda v: v.imag.contains(0) and (v.real.upper() >= 1 or v.real.lower() <= -1),
    "asin": lambda v: v.imag.contains(0) and (v.real.upper() >= 1 or v.real.lower() <= -1),
    "atan": lambda v: v.real.contains(0) and (v.imag.upper() >= 1 or v.imag.lower() <= -1),
    "pow": lambda v: v.imag.contains(0) and v.real.lower() <= 0,
}
r"""Where the principal branch of each function is not analytic, as a test on the argument's
complex ball: :math:`\log(1 + v)` on :math:`v \le -1`, :math:`rccos v` and :math:`rcsin v`
on real :math:`|v| \ge 1`, :math:`rctan v` on imaginary :math:`|v| \ge 1` (:math:`v = iy`),
:math:`x^y` of an exponent that is not an integer on :math:`x \le 0` (its base's cut and branch
point)."""


def _checked_at_cut(meth, name, A):
    """The ``acb`` method ``meth`` (the function ``name``), not finite at its cut (``_off_cut``)."""
    def f(v):
        v = A(v)
        return _off_cut(meth(v), v, name)

    return f


def _off_cut(value, v, name):
    """``value`` (the function ``name`` of the ``acb`` ball ``v``), or a ball that is not finite
    where ``v`` meets the function's branch cut or branch point (``_CUTS``): there the principal
    branch is finite but not analytic, and the integrands' contract -- analytic wherever finite,
    which ``acb.integral`` and :mod:`replica.symbolic.ballquad` (whose error bound needs the
    integrand analytic in an ellipse) rely on -- would not hold."""
    if _CUTS[name](v):
        import flint

        return flint.acb(flint.arb("nan"))
    return value


def _arb_gaussians(prepared, args, dummies) -> list:
    """The ball-arithmetic functions of each prepared Gaussian integral (an integrand without a
    growth envelope keeps the reason, raised when it is evaluated; one whose pieces have no ball
    version raises :class:`NotEnclosable` here)."""
    import sympy

    from .gaussian import EnvelopeError, growth_envelope, scaled_erfc

    out = []
    for k, g in enumerate(prepared):
        gargs = list(args) + list(dummies[:k])  # integral k: the arguments, the integrals before
        try:
            C, B, P, Q, conditions = growth_envelope(g.bare, g.z, g.switches)
        except EnvelopeError as exc:
            raise NotEnclosable(f"a Gaussian integral's tails: {exc}") from None
        # (the same function with its exponential factors combined, e^a e^b = e^(a + b), and
        # common factors out of sums, (m e^A - e^A)^-1 = e^-A/(m - 1): a ball bounds e^(a + b)
        # where e^a and e^b bounded apart overestimate it by the variation of a and b over the
        # ball, and acb.integral then subdivided the sign channel's integrands 2-6x as often)
        expr = scaled_erfc(g.integrand, scale=False)
        integrand, pre = _arb_hoisted(expr, g.z, g.switches, gargs)
        arguments = _arb_lambdify([g.z] + gargs, g.arguments)
        kinks = _arb_lambdify(gargs, g.kinks)
        env = _arb_lambdify(gargs, [C, B, Q] + [c for c, _ in conditions])
        fns = _GaussFunctions(integrand, arguments, kinks, env, sympy.Rational(P),
                              conditions="".join(_CONDITION_KINDS[kind]
                                                 for _, kind in conditions))
        fns.pre = pre
        out.append(fns)
    return out


HOIST = [True]
"""Whether :func:`_arb_gaussians` hoists the parts of each ball integrand that are free of
the variable and the switches (:func:`_arb_hoisted`); ``False`` only to measure against."""


def _arb_hoisted(expr, z, switches, gargs):
    r"""``(integrand, pre)``: the ball integrand of ``expr`` (in the ``acb`` namespace) as a
    function of ``(z, *switches, *pre(*gargs))``, ``pre`` the function of the arguments
    returning the largest sub-expressions of ``expr`` free of :math:`z` and the switches
    (``_hoist``: e.g. :math:`\sqrt{2}/\sqrt{\pi}`, :math:`\eta m/\sqrt{q - \eta^2m^2}`,
    :math:`\sqrt q`), evaluated once per integral by :func:`_gauss_arb` instead of at every
    node and box of its rule; ``pre`` is ``None`` (the integrand a function of ``(z,
    *switches, *gargs)`` as before) where nothing is hoisted or ``expr`` holds a
    ``Piecewise`` (whose conditions are not values).

    *Why the enclosure is unchanged in kind*: ball arithmetic is inclusion-isotone, so the ball
    of a hoisted part :math:`h(a)` over the argument balls :math:`A` contains :math:`h(a)` for
    every :math:`a \in A`, and the integrand evaluated on :math:`(z, h(A))` contains
    :math:`f(z, h(a)) = f(z; a)` for every :math:`a \in A` and :math:`z` in its ball: the
    same kind of enclosure as :math:`f(Z, A)` computed as one expression (not bit for bit the
    same ball: a hoisted product is grouped, and rounded, differently; the parts that depend on
    the arguments only through one hoisted ball lose their dependence on each other, which
    can only narrow what the direct form widened, or widen by the rounding of the regrouping).
    Analyticity in :math:`z` is the integrand's: the hoisted balls are constants there."""
    import sympy

    if not HOIST[0] or expr.has(sympy.Piecewise):
        return _arb_lambdify([z] + list(switches) + list(gargs), expr,
                             namespace=_acb_namespace()), None
    table: dict = {}
    body = _hoist(expr, {z, *switches}, table)
    if not table:
        return _arb_lambdify([z] + list(switches) + list(gargs), expr,
                             namespace=_acb_namespace()), None
    pre = _arb_lambdify(list(gargs), list(table), namespace=_acb_namespace())
    integrand = _arb_lambdify([z] + list(switches) + list(table.values()), body,
                              namespace=_acb_namespace())
    return integrand, pre


def _arb_gaussians_loaded(ns) -> list:
    """The ball-arithmetic functions of the Gaussian integrals of a cached module (written by
    ``Evaluator._store_arb``)."""
    n = ns.get("N_GAUSS", 0)
    if not n:
        return []
    acb_ns = dict(_namespace("acb"))
    if not _bind_implicit(acb_ns, ns.get("IMPLICIT")):
        raise KeyError("IMPLICIT")  # (not declared in this process: generated again)
    exec(_compiled(ns["ACB_SOURCE"], "<cached acb integrands>"), acb_ns)  # noqa: S102
    out = []
    for k in range(n):
        fns = _GaussFunctions(acb_ns[f"gauss_f_{k}"], ns[f"gauss_u_{k}"], ns[f"gauss_k_{k}"],
                              ns[f"gauss_env_{k}"], _Rational(*ns[f"gauss_P_{k}"]),
                              conditions=ns.get(f"gauss_K_{k}", ""))
        fns.pre = acb_ns.get(f"gauss_h_{k}")  # (the hoisted parts, _arb_hoisted)
        out.append(fns)
    return out


_CONDITION_KINDS = {"positive": "p", "nonnegative": "n", "real": "r"}
"""The letters of the kinds of a growth envelope's conditions
(:func:`replica.symbolic.gaussian.growth_envelope`), as ``_GaussFunctions.conditions`` holds
them."""


def _check_conditions(kinds: str, values) -> None:
    """Raises :class:`NotEnclosable` unless each ball of ``values`` satisfies its condition on
    the whole ball: ``p`` positive, ``n`` non-negative, ``r`` real (in real ball arithmetic a
    value that is not real is NaN: a finite ball)."""
    for kind, v in zip(kinds, values):
        v = arb_of(v)
        ok = v.is_finite() and {"p": v > 0, "n": v >= 0, "r": True}[kind]
        if not ok:
            what = {"p": "positive", "n": "non-negative", "r": "real"}[kind]
            raise NotEnclosable(f"a Gaussian integral's growth envelope needs a value that is "
                                f"{what} on the box; it is {v.str(5)} there")


class _Rational:
    """An exact rational ``p/q`` (the envelope's power), with SymPy's ``.p``/``.q``."""

    def __init__(self, p: int, q: int):
        self.p, self.q = p, q

    def __float__(self):
        return self.p / self.q


_INTEGRAL_GOAL: list = [None]
"""The accuracy goal, in bits, of the ball integrals of :func:`_gauss_arb` while
:func:`integral_goal` holds one (``None``: python-flint's default, the working precision)."""


class integral_goal(_HeldSetting):
    r"""Within ``with integral_goal(bits):`` each ``acb.integral`` of :func:`_gauss_arb` aims at
    an error of :math:`2^{-\text{bits}}` relative to a rough estimate of the integral's size
    (its absolute and relative tolerances) instead of the working precision's
    :math:`2^{-p}`. The enclosure stays rigorous whatever the goal -- ``acb.integral`` bounds
    the error it leaves -- only wider: what a Krawczyk test needs of the Jacobian over a box
    (a few digits, :mod:`replica.numerics.certify`). ``bits=None`` restores the default."""

    def __init__(self, bits):
        self.bits = None if bits is None else int(bits)
        super().__init__(_INTEGRAL_GOAL, self.bits)


def _integral_options(scale) -> dict:
    """The ``acb.integral`` tolerances of :data:`_INTEGRAL_GOAL` for an integral of about
    ``scale`` in size (an ``arb``; its magnitude only sets how hard the integrator works)."""
    bits = _INTEGRAL_GOAL[0]
    if bits is None:
        return {}
    size = float(abs(scale.mid())) if scale.is_finite() else 0.0
    tol = 2.0 ** -bits
    return {"rel_tol": tol, "abs_tol": tol * size if size > 0 else tol}


GOAL_GUARD_BITS = 24
"""Bits beyond an :class:`integral_goal` at which :func:`_gauss_arb` evaluates the integrand."""

_ROUGH_NODES = 24
"""Sample points per piece of :func:`_rough_size`."""


def _rough_size(pieces):
    r"""A rough size of :math:`\int |f|` over the pieces (each a function of :math:`s \in [0, 1]`
    as ``acb.integral`` takes it): the midpoint rule with :data:`_ROUGH_NODES` points per piece
    at 30 bits, midpoints only (not an enclosure: it scales the integrator's tolerance, never
    the result)."""
    import flint

    prec, flint.ctx.prec = flint.ctx.prec, 30
    try:
        total = flint.arb(0)
        for f in pieces:
            for k in range(_ROUGH_NODES):
                v = f(flint.acb(flint.arb(2 * k + 1) / (2 * _ROUGH_NODES)), False)
                if v.is_finite():  # (an arb, not a float: a size below 1e-308 stays nonzero)
                    total += abs(v.real.mid())
        return total.mid() / _ROUGH_NODES
    finally:
        flint.ctx.prec = prec


BALL_RULE = ["gauss-legendre"]
"""How :func:`_gauss_arb` integrates over :math:`[-T, T]`: ``"gauss-legendre"``, the rule of
:mod:`replica.symbolic.ballquad` with its a-priori error bound (``acb.integral`` on a piece
where that bound cannot be had), or ``"acb.integral"`` (python-flint's adaptive integrator
throughout; kept for comparison)."""

FAR_KINK_REACH = 16
"""A kink beyond the ball quadrature's truncation point ``T`` moves ``T`` to it (a Heaviside
that vanishes short of it can hide the integral's whole mass there) only within this many
``T``: the enclosure's cost grows with the reach, and a farther kink -- ``theta(z + kappa)`` at
``kappa = 1e40`` -- would make it endless; beyond, the integral is enclosed on ``[-T, T]`` as
before (rigorous: its tails are in the radius)."""

BALL_RULE_LENGTH = 2.0
"""The length (in :math:`z`) of the intervals of the Gauss--Legendre rule of :func:`_gauss_arb`
(a piece between kinks is cut into ``ceil(length / BALL_RULE_LENGTH)`` equal intervals)."""


def _envelope_integral(C, B, Q, P, lo, width):
    r"""For :func:`replica.symbolic.ballquad.enclose`: a function of ``(a, b)`` (``arb``, an
    interval of the piece's variable :math:`s`, :math:`z = \mathrm{lo} + \mathrm{width}\,s`)
    returning an upper bound of :math:`\int_{z_a}^{z_b} |F(z)|\varphi(z)\,dz` from the growth
    envelope :math:`|F(z)| \le Ce^{Qz^2 + B|z|}|z|^P` (valid for real :math:`|z| \ge 1`,
    :func:`replica.symbolic.gaussian.growth_envelope`): the length :math:`z_b - z_a` times the
    ball of :math:`Ce^{(Q - 1/2)z^2 + B|z|}|z|^P/\sqrt{2\pi}` over the ball of :math:`z` (ball
    arithmetic: an enclosure of its values over every :math:`z` of the interval and the
    envelope's balls); ``None`` where the interval meets :math:`|z| < 1`. The integral of the
    real part lies within plus or minus this bound."""
    import flint

    arb = flint.arb
    Pb = arb(int(P.p)) / int(P.q) if hasattr(P, "q") else arb(P)

    def bound(a, b):
        z = lo + width * a.union(b)
        za = abs(z)
        if not za >= 1:
            return None
        length = abs(width * (b - a))
        g = (Q - arb(1) / 2) * za * za + B * za + Pb * za.log()
        out = length * abs(C) * g.exp() / (2 * arb.pi()).sqrt()
        return arb(out.upper())

    return bound


def _calls_implicit(f) -> bool:
    """Whether the generated function ``f`` names the numeric implementation of an implicit
    function (:mod:`replica.symbolic.implicit`, whose ball enclosures are remembered under the
    exact argument balls): only there do integrals gain by sharing their nodes
    (:class:`~replica.symbolic.ballquad.NodePlan`); elsewhere the shared counts are only
    more work."""
    module = sys.modules.get("replica.symbolic.implicit")  # (not imported: none is declared)
    code, names = getattr(f, "__code__", None), getattr(f, "__globals__", {})
    if module is None or code is None:
        return False
    return any(isinstance(names.get(n), module._Numeric) for n in code.co_names)


def _gauss_arb(g: _GaussFunctions, values, plan=None):
    r"""An enclosure of the integral for every point of the argument balls: ``acb.integral`` of
    each piece of :math:`[-T, T]` between the kinks, mapped to :math:`[0, 1]` (``z = lo + (hi -
    lo) s``, so that kinks that are balls stay in the integrand), plus the tails
    :math:`|z| > T` as a radius (:func:`replica.symbolic.gaussian.tail_bound` of the growth
    envelope :math:`C e^{Qz^2 + B|z|}|z|^P`), with
    :math:`T = \lceil B/w + P + \sqrt{2(p + 10)\log 2/w}\rceil + 2` at ``p`` bits of precision,
    :math:`w = 1 - 2\max(Q, 0)` (the upper bounds of the balls; :math:`w = 1` without a
    growing quadratic term, where the net Gaussian decay :math:`e^{-wz^2/2}` is that of the
    weight). Under :class:`integral_goal` the integrator's tolerances are the goal relative to
    :func:`_rough_size` (the enclosure is as rigorous, only wider); ``T`` stays that of the
    working precision, except that a kink beyond ``T`` moves ``T`` to that kink plus the same
    width (a Heaviside that vanishes short of the kink hides the whole integral there: truncated
    at ``T`` its enclosure would be 0 plus a tail radius of about :math:`2^{-p}`, without one
    relative digit of an integral below :math:`2^{-p}`). With :data:`BALL_RULE` ``"gauss-legendre"`` (the default) each piece is
    cut into intervals of about :data:`BALL_RULE_LENGTH` and integrated by
    :func:`replica.symbolic.ballquad.enclose` (Gauss--Legendre with the a-priori error bound
    of an analytic integrand, Trefethen's Theorem 19.3, aiming at the same tolerance: the goal,
    or the working precision, relative to :func:`_rough_size`); a piece where no ellipse of
    analyticity is found goes to ``acb.integral``; an interval where the growth envelope bounds
    the integral of :math:`|F|\varphi` below its share of the tolerance is that bound as a
    radius, without evaluating the integrand (:func:`_envelope_integral`). A piece with exact
    ends is integrated in :math:`z` itself (the nodes :math:`m + hx_j` of an interval of centre
    :math:`m`, half-length :math:`h`). ``plan`` (a :class:`~replica.symbolic.ballquad.NodePlan`
    shared by the integrals of one evaluation, :meth:`Evaluator.gaussian_values`): ``T`` is
    rounded up to an even integer (a larger ``T`` only shrinks the tail bound, computed at the
    ``T`` used), so that the integrals' intervals of length 2 fall on the same grid of even
    integers whatever their envelopes, and each interval's node count may be raised to one
    another integral used there (same node balls: their implicit roots' enclosures are
    remembered)."""
    import flint

    from .gaussian import EnvelopeError, tail_bound

    acb, arb = flint.acb, flint.arb
    values = [arb_of(v) for v in values]
    envelope = list(g.envelope(*values))
    C, B, Q = (arb_of(v) for v in envelope[:3])
    _check_conditions(g.conditions, envelope[3:])
    P = g.power
    if not (C.is_finite() and B.is_finite() and Q.is_finite()):
        raise NotEnclosable("a Gaussian integral's growth envelope is not finite on the box")
    prec = flint.ctx.prec
    width = 1 - 2 * max(float(Q.upper()), 0.0)
    if not width > 1 / 64:  # (T would grow like 1/sqrt(w); beyond this, refused)
        raise NotEnclosable("a Gaussian integral's growth envelope has a quadratic coefficient "
                            f"not below 1/2 - 1/128 on the box (up to {float(Q.upper()):.5g}): "
                            "its tails are not dominated by the Gaussian weight")
    T = int(mpmath.ceil(float(B.upper()) / width + float(P)
                        + math.sqrt(2 * (prec + 10) * math.log(2) / width))) + 2
    # a kink beyond T may hide the integral's whole mass there (a Heaviside that vanishes
    # short of it, e.g. theta(z + kappa) at kappa = -25): truncated at T, the enclosure would be
    # 0 plus an absolute tail radius of about 2^-p -- rigorous, but without one relative digit
    # of an integral below 2^-p. T then reaches the farthest kink plus the same width, so that
    # the tail beyond it is about 2^-p relative to the density at that kink.
    # Only kinks within FAR_KINK_REACH T: the cost grows with the reach (intervals of
    # BALL_RULE_LENGTH), and a kink at 1e40 (kappa = 1e40) made the enclosure endless.
    far = [abs(float(arb_of(k).mid())) for k in g.kinks(*values)]
    far = max([k for k in far if math.isfinite(k) and k <= FAR_KINK_REACH * T], default=0.0)
    if far > T - 2:
        T = int(math.ceil(far)) + T
    if plan is not None:
        T += T % 2
    T = arb(T)
    try:
        tail = tail_bound(C, B, P, T, Q)
    except EnvelopeError as exc:
        raise NotEnclosable(str(exc)) from None
    kinks = []
    for k in g.kinks(*values):
        k = arb_of(k)
        if k < -T or k > T:
            continue
        if not (k > -T and k < T):
            raise NotEnclosable("a kink of a Gaussian integral is not separated from the "
                                "truncation point")
        kinks.append(k)
    kinks.sort(key=lambda k: float(k.mid()))
    points = [-T] + kinks + [T]
    for a, b in zip(points[:-1], points[1:]):
        if not a < b:
            raise NotEnclosable("two kinks of a Gaussian integral are not separated on the box")
    acb_values = [acb(v) for v in values]
    goal = _INTEGRAL_GOAL[0]
    # (under a goal the integrand is evaluated with GOAL_GUARD_BITS more bits than the goal,
    # not at the working precision: the rounding stays far below the error aimed at)
    inner = prec if goal is None else min(prec, goal + GOAL_GUARD_BITS)
    if g.pre is not None:  # the parts free of z and the switches, once (_arb_hoisted)
        flint.ctx.prec = inner
        try:
            acb_values = [v if type(v) is acb else acb(v) for v in g.pre(*acb_values)]
        finally:
            flint.ctx.prec = prec
    pieces, switches = [], []
    for lo, hi in zip(points[:-1], points[1:]):
        sw = []
        for u in g.arguments((lo + hi) / 2, *values):
            u = arb_of(u)
            if u > 0:
                sw.append(1)
            elif u < 0:
                sw.append(0)
            else:
                raise NotEnclosable("a Heaviside switch of a Gaussian integral is undecided "
                                    "on a piece")
        lo_c, width = acb(lo), acb(hi - lo)
        switches.append(sw)
        pieces.append(lambda s, analytic, sw=sw, lo_c=lo_c, width=width:
                      g.integrand(lo_c + width * s, *sw, *acb_values) * width)
    size = _rough_size(pieces)
    options = _integral_options(size) if goal is not None else {}
    total = arb(0)
    flint.ctx.prec = inner
    try:
        if BALL_RULE[0] == "gauss-legendre":
            from .ballquad import enclose

            bits = prec if goal is None else goal
            tol = arb(2) ** -bits * (arb(size.upper()) if size.is_finite() and size > 0
                                     else 1)
            counts = [max(1, math.ceil(float(abs(hi - lo).upper()) / BALL_RULE_LENGTH))
                      for lo, hi in zip(points[:-1], points[1:])]
            for k, ((lo, hi), count) in enumerate(zip(zip(points[:-1], points[1:]), counts)):
                share = tol * count / sum(counts)
                if lo.rad() == 0 and hi.rad() == 0:  # (in z: the same node balls whatever T)
                    part = enclose(lambda z, analytic, sw=switches[k]:
                                   g.integrand(z, *sw, *acb_values), lo, hi, share, count,
                                   _envelope_integral(C, B, Q, P, arb(0), arb(1)), plan)
                else:
                    part = enclose(pieces[k], arb(0), arb(1), share, count,
                                   _envelope_integral(C, B, Q, P, lo, hi - lo), plan)
                piece = pieces[k]
                if part is None:  # (an ellipse not bounded: the adaptive integrator)
                    part = acb.integral(piece, 0, 1, **options).real
                total += part
        else:
            for piece in pieces:
                total += acb.integral(piece, 0, 1, **options).real
    finally:
        flint.ctx.prec = prec
    total += arb(0, tail.upper())
    if not total.is_finite():
        raise NotEnclosable("a Gaussian integral's enclosure is not finite on the box")
    return total


PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
"""The folder of the ``replica`` package: every file under it enters every cache key."""


@functools.lru_cache(maxsize=None)
def package_digest() -> str:
    """SHA-256 of the source closure of every generated function: each ``.py`` file of this
    package (its path relative to the package and its bytes, in a fixed order).

    The expressions of a built-in model are built by its declaration, the closed forms of
    :mod:`replica.spectra`, the symbolic engine, the parameter schemas and the driver that stages
    them; rather than a hand-kept list of those files (which missed some), the whole package is
    hashed: a change to any of its files regenerates the code. About 1.3 MB, hashed in ~3 ms
    once per process."""
    h = hashlib.sha256()
    for root, dirs, names in os.walk(PACKAGE_ROOT):
        dirs[:] = sorted(d for d in dirs if not d.startswith((".", "__pycache__")))
        for name in sorted(names):
            if not name.endswith(".py"):
                continue
            path = os.path.join(root, name)
            h.update(os.path.relpath(path, PACKAGE_ROOT).encode() + b"\0")
            with open(path, "rb") as fh:
                data = fh.read()
            h.update(len(data).to_bytes(8, "little") + data)
    return h.hexdigest()


def file_digest(path: str) -> str:
    """SHA-256 of a regular file's bytes; ``missing:PATH`` where there is no such regular file
    or it cannot be read (a device or a pipe has no contents to key on: its reader refuses it)."""
    h = hashlib.sha256()
    try:
        if not os.path.isfile(path):
            raise OSError
        with open(path, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                h.update(block)
    except OSError:
        return f"missing:{os.path.abspath(path)}"
    return h.hexdigest()


@functools.lru_cache(maxsize=None)
def _namespace(backend: str) -> dict:
    """The global namespace ``lambdify`` gives its generated code for ``backend`` (plus
    ``functools.reduce``, which the printers use for ``Max``/``Min``)."""
    if backend == "arb":
        return _arb_namespace()
    if backend == "acb":
        return _acb_namespace()
    ns = _numpy_namespace() if backend == "np" else _mpmath_namespace()
    ns.setdefault("reduce", functools.reduce)
    return ns


def _mpmath_namespace() -> dict:
    """What the generated mpmath code may name: mpmath's public names (the printer writes
    ``mpf``, ``sqrt``, ``log``, ``inf``, ...), ``builtins`` and ``range``. Built without SymPy, so
    that loading cached code does not import it; a generated function that names anything else
    is not cached (:func:`_cacheable`), so a cached file always runs in this namespace."""
    ns = {n: getattr(mpmath, n) for n in dir(mpmath) if not n.startswith("_")}
    ns.update({"mpmath": mpmath, "builtins": builtins, "range": range})
    ns.update(_LOG_SPACE_MP)
    ns["owens_t"] = owens_t_mp
    ns["owens_u"] = owens_u_mp
    ns["digamma_difference"] = digamma_difference_mp
    return ns


def digamma_difference_mp(n, z):
    r""":math:`\psi^{(n)}(1 + z) - \psi^{(n)}(\tfrac12 + z)`
    (``replica.symbolic.gaussian.digamma_difference``) at mpmath's working precision, the
    cancellation covered by further bits:
    :func:`replica.symbolic.digamma_difference.digamma_difference_mp`."""
    from .digamma_difference import digamma_difference_mp as f

    return f(n, z)


def owens_t_mp(h, a):
    r"""Owen's :math:`T(h, a)` (``replica.symbolic.gaussian.owens_t``) at mpmath's working
    precision: :func:`replica.symbolic.owen.owens_t_mp` (Gauss--Legendre rules of two
    finite-interval forms in ball arithmetic, doubled until two agree; else
    :class:`QuadratureError`)."""
    from .owen import owens_t_mp as f

    return f(h, a)


def owens_u_mp(h, a):
    r""":math:`U(h, a) = \tfrac14\operatorname{erfc}(h/\sqrt2) - T(h, a)`
    (``replica.symbolic.gaussian.owens_u``) at mpmath's working precision, without the
    cancellation of the difference: :func:`replica.symbolic.owen.owens_u_mp`."""
    from .owen import owens_u_mp as f

    return f(h, a)


def _owens_u_np(h, a):
    """:math:`U(h, a)` in float64: :func:`replica.symbolic.owen.owens_u_np`."""
    from .owen import owens_u_np

    return owens_u_np(h, a)


_LOG_SPACE_MP = {
    # (the log-space forms of replica.symbolic.gaussian at the working precision: mpmath does
    # not underflow, so they are the definitions)
    "log_erfc": lambda x: mpmath.log(mpmath.erfc(x)),
    "rerfcx": lambda x: mpmath.exp(-x * x) / mpmath.erfc(x),
    "softplus": lambda x: mpmath.log1p(mpmath.exp(x)),
    "sigmoid": lambda x: 1 / (1 + mpmath.exp(-x)),
}


def _numpy_namespace() -> dict:
    """What ``lambdify``'s NumPy namespace holds (``from numpy import *``, ``numpy.linalg``, its
    translations ``I``, ``Heaviside``, ``Abs``), without the NumPy submodules that ``import *``
    loads (``testing``, ``f2py``, ``ma``, ...), which no generated expression names: a process
    that loads its evaluators from the code cache then imports none of them. The error
    functions come from SciPy, imported when one is first called (0.15 s of CPU time, which a
    model without them no longer pays)."""
    ns = {"numpy": np, "builtins": builtins, "range": range}
    ns.update((n, np.__dict__[n]) for n in np.__all__ if n in np.__dict__)
    ns.update((n, getattr(np.linalg, n)) for n in np.linalg.__all__)
    ns["I"] = 1j
    ns["Heaviside"] = ns["heaviside"]
    ns.setdefault("Abs", abs)
    import importlib.util

    if importlib.util.find_spec("scipy") is not None:  # (SciPy: where it is installed)
        for name in ("erf", "erfc", "erfcx"):
            ns[name] = _extended(name)
        ns.update(_log_space_np(ns["erfc"], ns["erfcx"]))
        ns["polygamma"] = _polygamma_np
        ns["digamma_difference"] = _digamma_difference_np
        ns["owens_t"] = _owens_t_np
        ns["owens_u"] = _owens_u_np
    return ns


_SPECIAL_NP = ("polygamma", "digamma_difference", "owens_t", "owens_u")
"""Special functions the float64 namespace adds (SciPy's, imported on the first call) beyond
the error functions and the log-space forms: SymPy's ``polygamma``, the digamma difference
(``replica.symbolic.gaussian.digamma_difference``) and Owen's T
(``replica.symbolic.gaussian.owens_t``) and its complement ``owens_u``."""

_SPECIAL_MP = ("owens_t", "owens_u", "digamma_difference")
"""Functions of :mod:`replica.symbolic.gaussian` the mpmath namespace adds beyond the
log-space forms (mpmath has no Owen's T): :func:`owens_t_mp`, :func:`owens_u_mp`,
:func:`digamma_difference_mp` (a difference without its cancellation)."""


def _owens_t_np(h, a):
    r"""Owen's :math:`T(h, a)` by SciPy's ``owens_t`` (imported on the first call); for
    ``longdouble`` arguments the float64 value plus the first-order correction in both
    arguments' rounding, :math:`\partial_hT\,\delta h + \partial_aT\,\delta a` (the partial
    derivatives of ``replica.symbolic.gaussian.owens_t``), as
    :func:`_first_order_longdouble` does for one argument."""
    from scipy import special

    h_ld = getattr(h, "dtype", None) == np.longdouble
    a_ld = getattr(a, "dtype", None) == np.longdouble
    if not (h_ld or a_ld) or np.longdouble == np.float64:
        return special.owens_t(h, a)
    h64, a64 = np.asarray(h, np.float64), np.asarray(a, np.float64)
    dh = (np.asarray(h, np.longdouble) - h64.astype(np.longdouble)).astype(np.float64)
    da = (np.asarray(a, np.longdouble) - a64.astype(np.longdouble)).astype(np.float64)
    with np.errstate(all="ignore"):
        d_h = -np.exp(-h64 * h64 / 2) * special.erf(a64 * h64 / math.sqrt(2)) / (
            2 * math.sqrt(2 * math.pi))
        d_a = np.exp(-h64 * h64 * (1 + a64 * a64) / 2) / (2 * math.pi * (1 + a64 * a64))
    return (special.owens_t(h64, a64).astype(np.longdouble)
            + (d_h * dh + d_a * da).astype(np.longdouble))


def _polygamma_np(n, x):
    r""":math:`\psi^{(n)}(x)` (SymPy's ``polygamma(n, x)``, integer :math:`n \ge 0`) by SciPy's
    ``polygamma`` (``psi`` for :math:`n = 0`); for ``longdouble`` arguments the float64 value plus
    the first-order correction :math:`\psi^{(n+1)}(x_{53})(x - x_{53})` (as
    :func:`_first_order_longdouble`)."""
    from scipy import special

    n = int(n)

    def f64(v):
        return special.psi(v) if n == 0 else special.polygamma(n, v)

    return _first_order_longdouble(f64, lambda v: special.polygamma(n + 1, v))(x)


def _digamma_difference_np(n, z):
    r""":math:`D_n(z) = \psi^{(n)}(1 + z) - \psi^{(n)}(\tfrac12 + z)`
    (``replica.symbolic.gaussian.digamma_difference``) in float64:
    :func:`replica.symbolic.digamma_difference.digamma_difference_np`; for ``longdouble``
    arguments the float64 value plus the first-order correction :math:`D_{n+1}(z_{53})(z -
    z_{53})` (as :func:`_first_order_longdouble`)."""
    from .digamma_difference import digamma_difference_np as f

    n = int(n)
    return _first_order_longdouble(lambda v: f(n, v), lambda v: f(n + 1, v))(z)


def _log_space_np(erfc, erfcx) -> dict:
    r"""The float64 (and ``longdouble``) functions of the log-space forms of
    :mod:`replica.symbolic.gaussian`: ``log_erfc`` (:math:`\log\operatorname{erfcx}(y) - y^2`
    for :math:`y > 0`, :math:`\log\operatorname{erfc}(y)` otherwise, where
    :math:`\operatorname{erfc} \ge 1`), ``rerfcx`` (:math:`1/\operatorname{erfcx}`, 0 where
    that overflows), ``softplus`` (``logaddexp(0, x)``), ``sigmoid`` (:math:`1/(1 + e^{-x})`,
    0 where the exponential overflows). Finite at every finite argument; in ``longdouble``
    each is its float64 value plus the first-order correction in the argument's rounding, as
    :func:`_extended` does."""
    def log_erfc(x):
        with np.errstate(all="ignore"):
            return np.where(x > 0, np.log(erfcx(x)) - x * x, np.log(erfc(x)))

    def rerfcx(x):
        with np.errstate(all="ignore"):
            return 1 / erfcx(x)

    def softplus(x):
        return np.logaddexp(0, x)

    def sigmoid(x):
        with np.errstate(all="ignore"):
            return 1 / (1 + np.exp(-x))

    derivs = {"log_erfc": lambda x: -2 / math.sqrt(math.pi) * rerfcx(x),
              "rerfcx": lambda x: 2 / math.sqrt(math.pi) * rerfcx(x)**2 - 2 * x * rerfcx(x),
              "softplus": sigmoid,
              "sigmoid": lambda x: sigmoid(x) * sigmoid(-x)}

    fs = {"log_erfc": log_erfc, "rerfcx": rerfcx, "softplus": softplus, "sigmoid": sigmoid}
    return {k: _first_order_longdouble(f, derivs[k]) for k, f in fs.items()}


def _extended(name: str):
    r"""SciPy's error function ``name`` (imported on the first call), also for NumPy
    ``longdouble`` arguments, which SciPy
    refuses (the extended-precision error estimate of a float64 solve evaluates the generated
    code in ``longdouble``): there the argument is rounded to float64, the function evaluated
    in float64 and its first-order correction in the rounding added,
    :math:`f(x) \approx f(x_{53}) + f'(x_{53})(x - x_{53})`, so the value carries a relative
    error of a few float64 units (not ``longdouble``'s): the estimate of a float64 solution's
    error, claimed at :data:`~replica.numerics.float64_checks.CLAIM_RTOL` = 1e-8, stays far above that.
    (mpmath's error functions at every node made a scan take minutes.) The derivatives:
    :math:`\pm 2e^{-x^2}/\sqrt\pi` (``erf``, ``erfc``), :math:`2x\,\operatorname{erfcx}(x) -
    2/\sqrt\pi` (``erfcx``)."""
    sign = -1.0 if name == "erfc" else 1.0
    loaded: list = []
    small = _small_erf(name)

    def f64(x):
        if small is not None:
            out = small(x)
            if out is not None:
                return out
        if not loaded:
            from scipy import special

            loaded.append(getattr(special, name))
        return loaded[0](x)

    if name == "erfcx":
        def deriv(hi):
            return 2 * hi * f64(hi) - 2 / math.sqrt(math.pi)
    else:
        def deriv(hi):
            return sign * 2 / math.sqrt(math.pi) * np.exp(-hi * hi)

    return _first_order_longdouble(f64, deriv)


def _first_order_longdouble(f64, deriv):
    r"""``f64`` (a float64 function) also for NumPy ``longdouble`` arguments: the argument
    rounded to float64 and the first-order correction in the rounding added,
    :math:`f(x) \approx f(x_{53}) + f'(x_{53})(x - x_{53})` with :math:`f'` = ``deriv`` (see
    :func:`_extended`); other arguments go to ``f64`` unchanged."""
    def f(x):
        if getattr(x, "dtype", None) == np.longdouble and np.longdouble != np.float64:
            hi = x.astype(np.float64)
            lo = x - hi.astype(np.longdouble)
            return f64(hi).astype(np.longdouble) + (deriv(hi) * lo).astype(np.longdouble)
        return f64(x)

    return f


SMALL_ERF_SIZE = 4096
"""(float64) ``erf``/``erfc`` of at most this many real elements are evaluated element by
element by the C library (``_small_erf``), not by SciPy."""


def _small_erf(name: str):
    r"""For ``erf`` and ``erfc``: a function that evaluates them on a real float64 (or
    integer) array of at most :data:`SMALL_ERF_SIZE` elements, or a number, element by element
    by Python's ``math.erf``/``math.erfc`` (the C library's, within an ulp or two), and
    returns ``None`` for anything else (a larger array, complex, ``longdouble``: SciPy's ufunc
    then). A float64 start evaluates its integrands on a few hundred nodes: this spares the
    process SciPy's import (0.14 s of CPU time) for ~1 ms of element-wise calls. Measured
    against mpmath (``tests/test_gaussian_integrals.py``): the C library's ``erfc`` is within
    2 units in the last place on :math:`[-7, 26]`, SciPy's (Cephes) within 1e-13 relative
    (up to ~260 units in the far tail, near 24). ``None`` for other names (``erfcx``:
    SciPy's)."""
    fn = {"erf": math.erf, "erfc": math.erfc}.get(name)
    if fn is None:
        return None

    def small(x):
        a = np.asarray(x)
        if a.dtype.kind not in "fiub" or (a.dtype.kind == "f" and a.dtype != np.float64) \
                or a.size > SMALL_ERF_SIZE:
            return None
        if a.ndim == 0:
            return np.float64(fn(float(a)))
        return np.fromiter(map(fn, a.ravel().tolist()), dtype=np.float64,
                           count=a.size).reshape(a.shape)

    return small


def _global_names(f) -> set:
    """The global names a generated function (and the functions nested in it) uses."""
    names = set(f.__code__.co_names)
    for const in f.__code__.co_consts:
        if hasattr(const, "co_names"):
            names |= set(const.co_names)
    return names


def _cacheable(f, backend: str, implicit=()) -> bool:
    """Whether every global name the generated function uses is in the standard namespace or
    among ``implicit`` (the names of the functions defined by an equation that the code
    evaluates, bound again when it is loaded: :func:`_bind_implicit`), so that its source,
    loaded again, runs."""
    ns = _namespace(backend)
    return all(n in ns or n in implicit or hasattr(builtins, n) for n in _global_names(f))


def _implicit_names(exprs) -> dict | None:
    """``{name: digest}`` of the functions defined by an equation
    (:mod:`replica.symbolic.implicit`) in ``exprs``: what cached code that evaluates them
    records (``IMPLICIT``); ``None`` where two different ones share a name (not cacheable)."""
    import sympy

    from .walk import distinct_atoms

    out: dict = {}
    for e in exprs:
        # an implicit function is an applied sympy.Function whose class carries the declaration's
        # digest and equation (replica.symbolic.implicit.ImplicitRoot, which imports this
        # module: recognised by its attributes, not imported)
        for f in distinct_atoms(e, sympy.Function):
            c = type(f)
            if not (isinstance(getattr(c, "digest", None), str) and hasattr(c, "equation")):
                continue
            if out.setdefault(c.__name__, c.digest) != c.digest:
                return None
    return out


def _bind_implicit(ns: dict, names: dict, midpoint: bool = False) -> bool:
    """Binds each name of ``names`` (``{name: digest}``, the ``IMPLICIT`` of a cached module) in
    the namespace ``ns`` to the numeric implementation of the function declared in this process
    with that digest (its ``midpoint`` evaluation for the ball-arithmetic integrands); ``False``
    where one is not declared (the cached code is then generated again). A digest is the
    contents of a declaration (:func:`replica.symbolic.implicit.content_digest`), so code is
    never bound to a function other than the one it was generated for."""
    if not names:
        return True
    module = sys.modules.get("replica.symbolic.implicit")  # (not imported: none is declared)
    registry = getattr(module, "REGISTRY", {})
    for name, digest in names.items():
        cls = registry.get(digest)
        if cls is None or cls.__name__ != name:
            return False
        ns[name] = cls._imp_.midpoint if midpoint else cls._imp_
    return True


def _compiled(source: str, filename: str):
    """``compile(source, filename, "exec")``, the code object cached on disk (marshal, in the
    cache folder of :class:`CodeCache`) under the SHA-256 of the source, the file name and the
    interpreter's bytecode tag: compiling the generated modules of a large system (thousands of
    lines) took ~0.1 s of every process that loads them from the cache."""
    import marshal

    folder = CodeCache.folder()
    if folder is None:
        return compile(source, filename, "exec")
    digest = hashlib.sha256("\0".join((sys.implementation.cache_tag or "", filename, source))
                            .encode()).hexdigest()[:40]
    path = os.path.join(folder, f"code-{digest}.marshal")
    try:
        with open(path, "rb") as fh:
            return marshal.loads(fh.read())
    except (OSError, EOFError, ValueError, TypeError):
        pass
    code = compile(source, filename, "exec")
    try:
        tmp = f"{path}.{os.getpid()}.tmp"
        with open(tmp, "wb") as fh:
            fh.write(marshal.dumps(code))
        os.replace(tmp, path)
    except OSError:
        pass
    return code


class CodeCache:
    """Generated source code on disk, one file per (key, name)."""

    def __init__(self, key: str):
        self.key = key

    @staticmethod
    @functools.lru_cache(maxsize=None)
    def folder() -> str | None:
        setting = os.environ.get("REPLICA_LAMBDIFY_CACHE", "")
        if setting.lower() in ("0", "off", "no", "false"):
            return None
        folder = setting or os.path.join(os.path.expanduser("~"), ".cache", "replica", "lambdify")
        try:
            os.makedirs(folder, exist_ok=True)
        except OSError:
            return None
        return folder

    def path(self, name: str, suffix: str = ".py") -> str | None:
        folder = self.folder()
        return None if folder is None else os.path.join(folder, f"{self.key}-{name}{suffix}")

    def load(self, name: str, backend: str) -> dict | None:
        """The namespace of the cached module ``name`` (``None`` if absent, unreadable, or not
        sealed by :meth:`store` with the digest of its contents: a damaged or truncated file
        is generated again, never run)."""
        path = self.path(name)
        if path is None or not os.path.exists(path):
            return None
        try:
            with open(path) as fh:
                text = fh.read()
            if _unsealed(text) is None:
                return None
            ns = dict(_namespace(backend))
            # the whole file is compiled, its seal (a comment) included, so that the line
            # numbers of its functions are those of the file: ``inspect.getsource`` reads the
            # file (the float64 kernels are built from the functions' source); compiled
            # without the seal's line, every function's source was the line above its own
            exec(_compiled(text, path), ns)  # noqa: S102 - code this module generated
            return ns
        except Exception:  # a damaged cache file: regenerate
            return None

    def store(self, name: str, source: str, suffix: str = ".py", sealed: bool = False) -> None:
        """Write ``source`` as the entry ``name`` (atomically: another process reads the old
        file or the new one); ``sealed``: headed by the SHA-256 of ``source``
        (:func:`_sealed`), as :meth:`load` requires of a module."""
        path = self.path(name, suffix)
        if path is None:
            return
        if sealed:
            source = _sealed(source)
        try:
            tmp = f"{path}.{os.getpid()}.tmp"
            with open(tmp, "w") as fh:
                fh.write(source)
            os.replace(tmp, path)
        except OSError:
            pass


class GaussRuleFiles:
    r"""The Gauss--Legendre rules of :mod:`replica.symbolic.quadrature` (its ``RULE_STORE``)
    in the code cache: one sealed JSON file per rule kind, ``n`` and precision, under a key of
    the package's contents, the libraries' versions and python-flint's (whose
    ``arb.legendre_p_root`` and ``legendre_p`` compute them). A 30-digit point of logistic
    regression uses 11 rules (``n`` from 8 to 128 at 96, 140 and 196 bits) and their
    coefficient vectors, 2736 numbers, which take python-flint about ten times as long to
    compute as this class to read (``benchmarks/README.md``, section ``logi30b``).

    Each value is stored exactly, as the sign, mantissa and exponent of the binary number, and
    read back only if the file's seal (the SHA-256 of its contents) holds, it names the rule
    asked for, it has the rule's ``count`` vectors of ``n`` values, and each value is a
    normalised number (odd mantissa, or zero) of at most ``prec`` bits: so a rule read back is
    the rule computed, value for value; anything else is computed again (and stored)."""

    def __init__(self):
        import flint

        self.cache = CodeCache(cache_key("gauss-legendre", [],
                                         salt=f"python-flint {flint.__version__}"))

    def _name(self, kind: str, n: int, prec: int) -> str:
        return f"{kind}-{int(n)}-{int(prec)}"

    def load(self, kind: str, n: int, prec: int, count: int):
        import json

        from mpmath.libmp import MPZ

        path = self.cache.path(self._name(kind, n, prec), ".json")
        if path is None:
            return None
        try:
            with open(path) as fh:
                text = _unsealed(fh.read())
            if text is None:
                return None
            doc = json.loads(text)
            if doc.get("rule") != [kind, n, prec] or len(doc["values"]) != count:
                return None
            make = mpmath.mp.make_mpf
            out = []
            for vector in doc["values"]:
                if len(vector) != n:
                    return None
                row = []
                for sign, man, exp in vector:
                    man = int(man, 16)
                    if type(sign) is not int or sign not in (0, 1) or type(exp) is not int \
                            or man < 0:
                        return None
                    if man == 0:
                        if sign or exp:
                            return None
                        row.append(make(mpmath.libmp.fzero))
                        continue
                    bc = man.bit_length()
                    if not man & 1 or bc > prec:
                        return None
                    row.append(make((sign, MPZ(man), exp, bc)))
                out.append(tuple(row))
            return tuple(out)
        except (OSError, ValueError, TypeError, KeyError, AttributeError):
            return None  # absent or unreadable: computed again

    def store(self, kind: str, n: int, prec: int, vectors) -> None:
        import json

        if not all(mpmath.isfinite(v) for vector in vectors for v in vector):
            return  # (an infinity or NaN: not a rule's value; never stored)
        values = [[[s, format(m, "x"), e] for s, m, e, _ in (v._mpf_ for v in vector)]
                  for vector in vectors]
        doc = json.dumps({"rule": [kind, n, prec], "values": values})
        self.cache.store(self._name(kind, n, prec), doc, suffix=".json", sealed=True)


def _quadrature():
    """:mod:`replica.symbolic.quadrature`, its ``RULE_STORE`` the code cache's
    (:class:`GaussRuleFiles`) where there is a code cache."""
    from . import quadrature

    if not quadrature.RULE_STORE and CodeCache.folder() is not None:
        quadrature.RULE_STORE.append(GaussRuleFiles())
    return quadrature


_SEAL = "# sha256 "
"""The first line of a module :meth:`CodeCache.store` seals: this prefix and the SHA-256 of the
rest of the file."""


def _sealed(source: str) -> str:
    """``source`` headed by the line ``# sha256 <digest of source>``."""
    return f"{_SEAL}{hashlib.sha256(source.encode()).hexdigest()}\n{source}"


def _unsealed(text: str) -> str | None:
    """The source of a file written by :func:`_sealed`, or ``None`` where its first line is not
    a seal or the rest does not have the digest it names (a damaged, truncated or hand-edited
    file)."""
    head, sep, source = text.partition("\n")
    if not (sep and head.startswith(_SEAL)):
        return None
    if hashlib.sha256(source.encode()).hexdigest() != head[len(_SEAL):]:
        return None
    return source


@functools.lru_cache(maxsize=None)
def _library_versions() -> str:
    """The SymPy, mpmath and NumPy versions. SymPy's is read from its ``release.py`` (found, not
    imported: computing a key must not import SymPy, and ``importlib.metadata`` costs more than
    the solve it would serve); where that file cannot be read, SymPy is imported for it."""
    import importlib.util

    sympy_version = None
    spec = importlib.util.find_spec("sympy")
    if spec is not None and spec.origin:
        try:
            with open(os.path.join(os.path.dirname(spec.origin), "release.py")) as fh:
                found = re.search(r"__version__\s*=\s*[\"']([^\"']+)[\"']", fh.read())
            sympy_version = found.group(1) if found else None
        except OSError:
            pass
    if sympy_version is None:  # pragma: no cover - a SymPy without release.py
        import sympy

        sympy_version = sympy.__version__
    return f"{sympy_version} {mpmath.__version__} {np.__version__}"


def cache_key(label: str, source_files: Sequence[str], salt: str = "") -> str:
    """A key for :class:`CodeCache`: ``label`` and a hash of the contents of everything the
    generated code can depend on: every file of this package (:func:`package_digest`), the
    ``source_files`` outside it (a model file, the helpers it imports, the inputs it declares:
    each by its bytes, in the given order), ``salt`` (what else the code depends on, as text: a
    model file's environment variables) and the SymPy, mpmath and NumPy versions."""
    h = hashlib.sha256(package_digest().encode())
    for path in source_files:
        if os.path.abspath(path).startswith(PACKAGE_ROOT + os.sep):
            continue  # already in the package digest
        h.update(file_digest(path).encode())
    h.update(salt.encode())
    h.update(f"{_library_versions()}".encode())
    safe = re.sub(r"[^A-Za-z0-9_.-]", "_", label)
    return f"{safe}-{h.hexdigest()[:24]}"


def _function_source(f: Callable, name: str) -> str:
    src = inspect.getsource(f)
    return src.replace("def _lambdifygenerated(", f"def {name}(", 1)


def _hoist(expr, pair_syms, table: dict):
    """``expr`` with every largest sub-expression free of ``pair_syms`` (the spectral pair's
    symbols) that is not a number replaced by a symbol, ``table`` mapping each such
    sub-expression to its symbol; the pair-independent terms (factors) of a sum (product) that
    also has dependent ones are hoisted as one sum (product)."""
    import sympy

    if expr.is_Atom and not isinstance(expr, sympy.Symbol) or expr in pair_syms:
        return expr
    if not expr.free_symbols & pair_syms:
        sym = table.get(expr)
        if sym is None:
            sym = table[expr] = sympy.Dummy(f"s{len(table)}")
        return sym
    if isinstance(expr, (sympy.Add, sympy.Mul)):
        dep = [a for a in expr.args if a.free_symbols & pair_syms]
        indep = [a for a in expr.args if not a.free_symbols & pair_syms]
        new = [_hoist(a, pair_syms, table) for a in dep]
        if indep:
            new.append(_hoist(expr.func(*indep), pair_syms, table))
        return expr.func(*new)
    return expr.func(*[_hoist(a, pair_syms, table) for a in expr.args])


class _SpectralLevel:
    r"""The spectral averages ``k0 .. k1-1`` of an :class:`Evaluator`, those of one nesting
    level (each a function of the arguments and of the averages of the levels inside it), in
    ball arithmetic.

    The integrands :math:`\phi_k(\lambda, \mu; a)` are rewritten with every sub-expression that
    does not depend on the pair :math:`(\lambda, \mu)` replaced by a symbol :math:`s_m` (:func:`_hoist`):
    ``pre(*args, *averages)`` computes the :math:`s_m` once per evaluation, ``pair(lambda, mu,
    *s)`` all the level's integrands at one pair with their common sub-expressions shared. The
    averages :math:`\langle\phi_k\rangle = \sum_j w_j \phi_k(\lambda_j, \mu_j)` are the
    row of weights times the matrix of integrand values (``arb_mat``, one dot product per
    average). Every step is ball arithmetic on the same expressions (algebraically equal
    rewrites), so each result encloses the exact average for every point of the argument
    balls, as the integrand-per-pair loop did."""

    __slots__ = ("k0", "k1", "pre", "pair", "_fixed")

    def __init__(self, k0, k1, pre, pair):
        self.k0, self.k1, self.pre, self.pair = k0, k1, pre, pair
        self._fixed: dict = {}  # averages of the pairs alone, by pairs and precision

    def __call__(self, values, avgs, pairs) -> list:
        import flint
        from flint import arb_mat

        s = self.pre(*values, *avgs)
        if not s:  # integrands of the pair alone (e.g. <lambda>): the same for every argument
            key = (id(pairs), flint.ctx.prec)
            hit = self._fixed.get(key)
            if hit is not None and hit[0] is pairs:
                return hit[1]
        pair = self.pair
        rows = [pair(lam, mu, *s) for lam, mu in zip(pairs.lam, pairs.mu)]
        if not rows:  # no pairs: every average is an empty sum
            return [arb_of(0) for _ in range(self.k1 - self.k0)]
        out = _weight_row(pairs) * arb_mat(rows)
        out = [out[0, j] for j in range(self.k1 - self.k0)]
        if not s:
            if len(self._fixed) > 16:
                self._fixed.clear()
            self._fixed[key] = (pairs, out)
        return out


_WEIGHT_ROWS: dict = {}


def _weight_row(pairs):
    """The spectral weights of ``pairs`` as a one-row ``arb_mat``, remembered (by identity: the
    ball pairs are themselves remembered per covariance pair and precision)."""
    from flint import arb_mat

    hit = _WEIGHT_ROWS.get(id(pairs))
    if hit is None or hit[0] is not pairs:
        if len(_WEIGHT_ROWS) > 64:
            _WEIGHT_ROWS.clear()
        hit = _WEIGHT_ROWS[id(pairs)] = (pairs, arb_mat([[arb_of(w) for w in pairs.weight]]))
    return hit[1]


def _spectral_levels(inner_exprs, dummies, args) -> list:
    """The :class:`_SpectralLevel` functions of averages given as ``[(integrand, dummies of the
    averages before it)]``, in the order in which they were extracted (innermost first; the
    averages of one nesting level are consecutive)."""
    import sympy

    from .spectral import LAMBDA_I, MU_I

    pair_syms = {LAMBDA_I, MU_I}
    levels, k0 = [], 0
    while k0 < len(inner_exprs):
        # the level: the averages that use none of the averages from k0 on
        k1 = k0
        while k1 < len(inner_exprs) and not (
                inner_exprs[k1][0].free_symbols & set(dummies[k0:k1])):
            k1 += 1
        table: dict = {}
        body = [_hoist(sympy.sympify(e), pair_syms, table) for e, _ in inner_exprs[k0:k1]]
        pre = _arb_lambdify(list(args) + list(dummies[:k0]), list(table))
        pair = _arb_lambdify([LAMBDA_I, MU_I] + list(table.values()), body)
        levels.append(_SpectralLevel(k0, k1, pre, pair))
        k0 = k1
    return levels


def _level_sources(levels) -> list:
    """Source text of :func:`_spectral_levels`' functions for the disk cache."""
    if levels is None:
        return []
    parts = []
    for j, lv in enumerate(levels):
        parts += [_function_source(lv.pre, f"level_pre_{j}"),
                  _function_source(lv.pair, f"level_pair_{j}")]
    parts.append(f"LEVELS = {[(lv.k0, lv.k1) for lv in levels]!r}")
    return parts


_SCALED_ERFC_MEMO: dict = {}


def _scaled_erfc_memo(scale: bool) -> dict:
    """The rewritings of :func:`~replica.symbolic.gaussian.scaled_erfc` (with ``scale``) of
    every distinct subexpression met so far in this process, shared by all its calls: the
    rewriting of a node depends on the node (its contents: SymPy ``==``) and ``scale`` only,
    and the integrands of the map, its Jacobian and the reported values share most of their
    subexpressions (a derivative's integrand holds the integrand it comes from). Emptied when
    it holds more than :data:`_SCALED_ERFC_MEMO_LIMIT` entries (a long session of many
    models)."""
    memo = _SCALED_ERFC_MEMO.setdefault(bool(scale), {})
    if len(memo) > _SCALED_ERFC_MEMO_LIMIT:
        memo.clear()
    return memo


_SCALED_ERFC_MEMO_LIMIT = 200_000


def _power_of_exp(f) -> bool:
    """Whether ``f`` is :math:`e^{a}` or :math:`(e^{a})^k` with an integer :math:`k`."""
    import sympy

    return isinstance(f, sympy.exp) or (f.is_Pow and isinstance(f.base, sympy.exp)
                                        and f.exp.is_Integer)


def _has_logistic_pattern(expr) -> bool:
    r"""Whether ``expr`` has a sum of a number and a term with an exponential factor
    (:math:`1 + e^{u}`, also inside :math:`\log(1 + e^{u})`): the pattern of
    :func:`~replica.symbolic.gaussian.logistic_forms` (a walk of the distinct subexpressions,
    cheap beside generating the code)."""
    import sympy

    from .walk import distinct_atoms

    return any(any(a.is_number for a in add.args)
               and any(_power_of_exp(f) for t in add.args for f in sympy.Mul.make_args(t))
               for add in distinct_atoms(expr, sympy.Add))


def _logistic_safe(expr, memo: dict):
    r"""``expr`` with :func:`~replica.symbolic.gaussian.logistic_forms` applied to its small
    rational pieces in exponentials, not to the whole (whose ``cancel``/``factor`` took 5-8 s
    of CPU per integrand of the logistic regression's Jacobian): bottom up,

    * a *unit* -- :math:`e^{a}`, :math:`(e^{a})^k`, a *polynomial* in exponentials (a sum of
      terms :math:`c\,e^{a}e^{b}\cdots` with :math:`c` free of exponentials) or an integer
      power of one -- is rewritten by ``logistic_forms``;
    * a product: its units together (``logistic_forms`` of their product:
      :math:`e^{2u}(1 + e^{u})^{-2} = \sigma(u)^2`, where each alone would overflow), its other
      factors each rewritten; but where a factor is a sum (not a unit) with a term that has an
      exponential factor, the units are first multiplied into that sum's terms, each then
      rewritten: :math:`(a e^{2u} + b e^{u})(1 + e^{u})^{-4} = a\sigma(u)^2\sigma(-u)^2 +
      b\sigma(u)\sigma(-u)^3`;
    * a logarithm of a unit: ``logistic_forms`` of it
      (:math:`\log(1 + e^{u}) = \operatorname{softplus}(u)`);
    * any other node: its arguments rewritten.

    Each step is an identity, so the result is the same function. A sum that is not a
    polynomial is rewritten term by term: a term with a lone :math:`e^{u}` (no
    :math:`1 + e^{u}` beside it) keeps it, which overflows only where :math:`e^{u}` itself does
    (:math:`u > 709`), not :math:`e^{2u}` (:math:`u > 354`). ``memo`` holds the rewriting of each
    distinct node met (shared by the integrands of one process: a Jacobian's integrands hold the
    equations' and their sub-terms)."""
    import sympy

    from .gaussian import logistic_forms

    holds: dict = {}

    def has_exp(node):
        r = holds.get(node)
        if r is None:
            r = holds[node] = isinstance(node, sympy.exp) or any(has_exp(a) for a in node.args)
        return r

    def polynomial(f):
        return f.is_Add and has_exp(f) and all(
            _power_of_exp(g) or not has_exp(g) for t in f.args for g in sympy.Mul.make_args(t))

    def unit(f):
        return _power_of_exp(f) or polynomial(f) or (
            f.is_Pow and f.exp.is_Integer and polynomial(f.base))

    def bare(f):  # a sum (not a unit) with a term that has an exponential factor
        return f.is_Add and any(_power_of_exp(g) for t in f.args for g in sympy.Mul.make_args(t))

    def forms(node):
        key = ("forms", node)
        r = memo.get(key)
        if r is None:
            r = memo[key] = logistic_forms(node)
        return r

    def rewrite(node):
        if not has_exp(node):
            return node
        key = ("rewrite", node)
        r = memo.get(key)
        if r is not None:
            return r
        if unit(node):
            r = forms(node)
        elif node.is_Mul:
            factors = sympy.Mul.make_args(node)
            units = sympy.Mul(*[f for f in factors if unit(f)])
            rest = [f for f in factors if not unit(f)]
            spread = next((f for f in rest if has_exp(units) and bare(f)), None)
            if spread is not None:  # (e^{2u} + e^{u}) (1 + e^{u})^{-4}: the units into the sum
                rest.remove(spread)
                r = sympy.Add(*[rewrite(t * units) for t in spread.args]) * sympy.Mul(
                    *[rewrite(f) for f in rest])
            else:
                r = forms(units) * sympy.Mul(*[rewrite(f) for f in rest])
        elif isinstance(node, sympy.log) and unit(node.args[0]):
            r = forms(node)
        else:
            r = node.func(*[rewrite(a) for a in node.args])
        memo[key] = r
        return r

    return rewrite(expr)


_LOGISTIC_MEMO: dict = {}


def _logistic_memo() -> dict:
    """The memo of :func:`_logistic_safe`, shared by its calls in this process (emptied as
    :func:`_scaled_erfc_memo`'s)."""
    if len(_LOGISTIC_MEMO) > _SCALED_ERFC_MEMO_LIMIT:
        _LOGISTIC_MEMO.clear()
    return _LOGISTIC_MEMO


def split_averages(exprs):
    """``(current, dummies, inner_exprs)``: ``exprs`` with each distinct spectral average
    replaced by a dummy symbol, the dummies, and per dummy ``(integrand, dummies before it)``.
    Averages may be nested (an average inside another, e.g. a trace inside a resolvent): the
    innermost ones are replaced first; average k is a function of (lambda, mu), the arguments
    and the averages before it. (Shared by every generator of this package: the NumPy, mpmath
    and ball code here and the double-double code of :mod:`replica.symbolic.ddcode`.)"""
    import sympy

    from .spectral import SpectralAverage
    from .walk import distinct_atoms

    current, dummies, inner_exprs = list(exprs), [], []
    while True:
        found = set()
        for e in current:
            found |= distinct_atoms(e, SpectralAverage)
        leaves = sorted((a for a in found if not distinct_atoms(a.args[0], SpectralAverage)),
                        key=sympy.default_sort_key)
        if not leaves:
            break
        mapping = {}
        for a in leaves:
            d = sympy.Dummy(f"avg{len(dummies)}")
            inner_exprs.append((a.args[0], list(dummies)))
            dummies.append(d)
            mapping[a] = d
        current = [e.xreplace(mapping) for e in current]
    return current, dummies, inner_exprs


def _fused_gaussians(prepared, gauss, args, dummies) -> list:
    r"""The :class:`_FusedGauss` groups of the integrals ``prepared`` (``gauss`` their mpmath
    functions, ``args`` the evaluator's symbols, ``dummies`` the integrals' symbols): integrals
    with a ball-arithmetic integrand, the same kinks (compared as expressions) and the same
    nesting depth (an integral that uses another's value is one level deeper) form a group
    where there are at least two (the parts of a two-dimensional integral are never grouped:
    they have their own rule). The group's function returns the members' integrands --
    each member's variable replaced by one variable, its switches renamed -- from one
    ``lambdify`` with their common subexpressions eliminated together (an implicit root
    evaluated at the balls' midpoints, as the members' own ball integrands)."""
    import sympy

    deps, depth = [], []
    for k, g in enumerate(prepared):
        used = set(g.integrand.free_symbols)
        for e in list(g.arguments) + list(g.kinks):
            used |= e.free_symbols
        deps.append([j for j in range(k) if dummies[j] in used])
        depth.append(1 + max((depth[j] for j in deps[k]), default=-1))
    groups: dict = {}
    for k, g in enumerate(prepared):
        if gauss[k].fast is not None and not (gauss[k].inner or gauss[k].nested):
            key = (depth[k], frozenset(sympy.srepr(sympy.cancel(x)) for x in g.kinks))
            groups.setdefault(key, []).append(k)
    out = []
    for members in groups.values():
        if len(members) < 2:
            continue
        z = sympy.Dummy("z", real=True)
        exprs, switches = [], []
        for i, k in enumerate(members):
            g = prepared[k]
            renamed = [sympy.Symbol(f"fused_{i}_{s.name}", real=True) for s in g.switches]
            exprs.append(g.integrand.xreplace({g.z: z, **dict(zip(g.switches, renamed))}))
            switches += renamed
        used = sorted({j for k in members for j in deps[k]})
        ns = _midpoint_namespace(sympy.Tuple(*exprs))
        table: dict = {}  # the parts free of the variable and the switches: once per integral
        nodes = [_hoist(e, {z, *switches}, table) for e in exprs]
        try:
            pre = _arb_lambdify(list(args) + [dummies[j] for j in used], list(table),
                                namespace=ns)
            fast = _arb_lambdify([z] + switches + list(table.values()), nodes, namespace=ns)
        except NotEnclosable:
            continue
        for f in (pre, fast):
            f.__globals__.update(ns)
        out.append(_FusedGauss(members, used, fast, pre))
    return out


class Evaluator:
    """Evaluators of ``exprs`` as functions of ``args`` (and of a spectrum, if the expressions hold
    spectral averages), for the backends ``"mp"`` and ``"np"``.

    ``build`` may replace ``exprs``: a callable returning the expressions, called only when the
    generated code is not in the cache (``cache`` and ``name`` given).
    """

    def __init__(self, exprs=None, args: Sequence = (), *, build: Callable | None = None,
                 cache: CodeCache | None = None, name: str = ""):
        if (exprs is None) == (build is None):
            raise ValueError("give either exprs or build")
        if exprs is not None:
            import sympy

            exprs = [sympy.sympify(e) for e in exprs]
        self._exprs = exprs
        self._build = build
        self._args = args
        self.cache = cache
        self.name = name
        self._fns: dict = {}
        self._gauss: dict = {}
        self._fused: dict = {}  # (mpmath) groups of integrals evaluated together (_FusedGauss)
        self._levels = None  # the averages in ball arithmetic, by nesting level (_SpectralLevel)
        self._logistic = None  # (float64) {k: integrand k in its logistic forms}, made at use

    @property
    def args(self) -> list:
        """The symbols, in the generated functions' argument order (``args`` may be given as a
        zero-argument callable, resolved only when code is generated)."""
        if callable(self._args):
            self._args = self._args()
        return list(self._args)

    @property
    def exprs(self) -> list:
        if self._exprs is None:
            import sympy

            self._exprs = [sympy.sympify(e) for e in self._build()]
        return self._exprs

    def _loaded(self, ns: dict, backend: str):
        """``(outer, inners)`` of the cached module ``ns`` of ``backend``, and the Gaussian
        integrals' and spectral levels' functions it holds (raises ``KeyError`` for a module
        without the names its layout has)."""
        n = ns["N_INNER"]
        if backend == "arb":
            self._gauss[backend] = _arb_gaussians_loaded(ns)
            self._levels = [_SpectralLevel(k0, k1, ns[f"level_pre_{j}"],
                                           ns[f"level_pair_{j}"])
                            for j, (k0, k1) in enumerate(ns.get("LEVELS", ()))] \
                if "LEVELS" in ns else None
        else:
            self._gauss[backend] = [
                _GaussFunctions(ns[f"gauss_f_{k}"], ns[f"gauss_u_{k}"],
                                ns[f"gauss_k_{k}"], scaled=ns.get(f"gauss_s_{k}"),
                                erfc_arguments=ns.get(f"gauss_y_{k}"),
                                combined=ns.get(f"gauss_c_{k}"),
                                features=ns.get(f"gauss_w_{k}"))
                for k in range(ns.get("N_GAUSS", 0))]
            for k in ns.get("GAUSS_LOGISTIC", ()):
                self._gauss[backend][k].logistic = functools.partial(self._logistic_function, k)
            for k, g in enumerate(self._gauss[backend]):  # two-dimensional integrals
                g.inner = k in ns.get("GAUSS_INNER", ())
                g.nested = tuple(ns.get("GAUSS_NESTED", {}).get(k, ()))
                if backend == "mp":
                    g.derivatives = tuple(ns[f"gauss_d_{k}_{i}"]
                                          for i in range(len(g.nested)))
            if ns.get("ARB_SOURCE"):  # the integrands in ball arithmetic (mpmath)
                arb_ns = dict(_namespace("arb"))
                exec(_compiled(ns["ARB_SOURCE"], "<cached arb integrands>"),
                     arb_ns)  # noqa: S102 - code this module generated
                _bind_implicit(arb_ns, ns.get("IMPLICIT"), midpoint=True)
                for k, g in enumerate(self._gauss[backend]):
                    g.fast = arb_ns.get(f"gauss_fa_{k}")
                self._fused[backend] = [
                    _FusedGauss(members, deps, arb_ns[f"gauss_fg_{j}"],
                                arb_ns[f"gauss_fp_{j}"])
                    for j, (members, deps) in enumerate(ns.get("FUSED", ()))
                    if f"gauss_fg_{j}" in arb_ns and f"gauss_fp_{j}" in arb_ns]
        return ns["outer"], [ns[f"inner_{k}"] for k in range(n)]

    def _generate(self, backend: str):
        """``(outer, inners)``: the outer function of ``args`` and the averages' values, and one
        inner function of ``(lambda, mu, *args)`` per distinct average."""
        cname = f"{self.name}-{backend}" if self.name else None
        if self.cache is not None and cname:
            ns = self.cache.load(cname, backend)
            if ns is not None and not _bind_implicit(ns, ns.get("IMPLICIT")):
                ns = None  # code for an implicit function not declared here: generate it
            if ns is not None:
                if "NOT_ENCLOSABLE" in ns:  # the remembered outcome of generating ball code
                    why = ns["NOT_ENCLOSABLE"]
                    raise (NotCertifiable if why.startswith("not certifiable")
                           else NotEnclosable)(why)
                try:
                    return self._loaded(ns, backend)
                except (KeyError, TypeError, ValueError):
                    pass  # a module without the names of its layout: generated again
        import sympy

        from .spectral import LAMBDA_I, MU_I

        exprs, gauss_prepared, gauss_dummies = self._extract_gaussian_integrals(self.exprs)
        args = self.args + gauss_dummies
        current, dummies, inner_exprs = split_averages(exprs)
        if backend == "arb":
            try:
                if any(p.outer is not None for p in gauss_prepared):
                    raise NotCertifiable(
                        "not certifiable: a two-dimensional Gaussian integral (an inner integral "
                        "that depends on the outer variable) has no ball-arithmetic enclosure; "
                        "solve without --certify (the verified mpmath solve)")
                outer, inners = self._generate_arb(current, dummies, inner_exprs, args)
                gauss = _arb_gaussians(gauss_prepared, self.args, gauss_dummies)
            except NotEnclosable as exc:  # remembered: the same expressions fail the same way
                if self.cache is not None and cname:
                    self.cache.store(cname, f"NOT_ENCLOSABLE = {str(exc)!r}\n", sealed=True)
                raise
            self._gauss[backend] = gauss
            if gauss and self.cache is not None and cname:
                self._store_arb(cname, outer, inners, gauss)
                return outer, inners
        else:
            module = BACKENDS[backend]
            if backend in ("np", "mp"):  # functions NumPy lacks (the error functions) and the
                ns = _namespace(backend)   # log-space forms (gaussian.log_erfc, ...), as in the cache
                module = [{k: ns[k] for k in ("erf", "erfc", "erfcx", *_LOG_SPACE_MP,
                                              *_SPECIAL_NP)
                           if k in ns and (backend == "np" or k in _LOG_SPACE_MP
                                           or k in _SPECIAL_MP)}, module]
            # (NumPy code: integers beyond int64 printed as floats, _numpy_printer)
            printer = _numpy_printer(module) if backend == "np" else None
            outer = lambdify_canonical(args + dummies, current, modules=module, cse=True,
                                   printer=printer)
            inners = [lambdify_canonical([LAMBDA_I, MU_I] + args + before, e, modules=module,
                                     cse=True, printer=printer) for e, before in inner_exprs]
            gargs = [_gauss_args(g, args, len(self.args), k)
                     for k, g in enumerate(gauss_prepared)]
            gauss = [_GaussFunctions(
                lambdify_canonical([g.z] + g.switches + gargs[k], g.integrand,
                               modules=module, cse=True, printer=printer),
                lambdify_canonical([g.z] + gargs[k], g.arguments, modules=module,
                               printer=printer),
                lambdify_canonical(gargs[k], g.kinks, modules=module, printer=printer),
                features=lambdify_canonical(gargs[k], [x for f in g.features for x in f],
                                        modules=module, printer=printer)
                if g.features else None)
                for k, g in enumerate(gauss_prepared)]
            for k, g in enumerate(gauss_prepared):  # two-dimensional integrals
                gauss[k].inner, gauss[k].nested = g.outer is not None, tuple(g.nested)
                if backend == "mp" and g.nested:  # (the inner integrals' error propagation)
                    gauss[k].derivatives = tuple(
                        lambdify_canonical([g.z] + g.switches + gargs[k],
                                       sympy.diff(g.integrand, gauss_dummies[j]),
                                       modules=module, cse=True, printer=printer)
                        for j in g.nested)
            if backend == "np" and "erfcx" in _namespace("np"):  # far tails: gaussian.erfcx
                from .gaussian import SCALED_ERFC_FROM, scaled_erfc
                from .walk import distinct_atoms

                for k, g in enumerate(gauss_prepared):
                    ys = sorted(distinct_atoms(g.integrand, sympy.erfc),
                                key=sympy.default_sort_key)
                    if not ys:
                        continue
                    gauss[k].scaled, gauss[k].combined = (
                        lambdify_canonical([g.z] + g.switches + gargs[k],
                                       scaled_erfc(g.integrand, scale,
                                                   memo=_scaled_erfc_memo(scale)),
                                       modules=module, cse=True, printer=printer)
                        for scale in (True, False))
                    gauss[k].erfc_arguments = lambdify_canonical([g.z] + g.switches + gargs[k],
                                                             [y.args[0] - SCALED_ERFC_FROM
                                                              for y in ys],
                                                             modules=module, printer=printer)
            if backend == "np":  # overflow of a logistic pattern: its forms, made at first use
                for k, g in enumerate(gauss_prepared):
                    if _has_logistic_pattern(g.integrand):
                        gauss[k].logistic = functools.partial(self._logistic_function, k)
            if backend == "mp":  # the same integrands in ball arithmetic, for speed
                for k, g in enumerate(gauss_prepared):
                    ns = _midpoint_namespace(g.integrand)
                    try:
                        fast = _arb_lambdify([g.z] + g.switches + gargs[k],
                                             g.integrand, namespace=ns)
                    except NotEnclosable:
                        continue
                    # (lambdify binds a function's own implementation over the namespace's)
                    fast.__globals__.update(ns)
                    gauss[k].fast = fast
                self._fused[backend] = _fused_gaussians(gauss_prepared, gauss, self.args,
                                                        gauss_dummies)
            self._gauss[backend] = gauss
        gauss_fns = [f for g in gauss for f in (g.integrand, g.arguments, g.kinks, g.scaled,
                                                g.erfc_arguments, g.combined, g.features)
                     if f is not None]
        gauss_fns += [f for g in gauss for f in g.derivatives]
        level_fns = [f for lv in (self._levels or ()) if backend == "arb"
                     for f in (lv.pre, lv.pair)]
        implicit = _implicit_names(self.exprs) if self.cache is not None and cname else None
        if implicit is not None and all(
                _cacheable(f, backend, implicit) for f in [outer] + inners + gauss_fns + level_fns):
            try:
                parts = [_function_source(outer, "outer")]
                parts += [_function_source(f, f"inner_{k}") for k, f in enumerate(inners)]
                for k, g in enumerate(gauss):
                    parts += [_function_source(g.integrand, f"gauss_f_{k}"),
                              _function_source(g.arguments, f"gauss_u_{k}"),
                              _function_source(g.kinks, f"gauss_k_{k}")]
                    if g.features is not None:
                        parts.append(_function_source(g.features, f"gauss_w_{k}"))
                    if g.scaled is not None:
                        parts += [_function_source(g.scaled, f"gauss_s_{k}"),
                                  _function_source(g.erfc_arguments, f"gauss_y_{k}"),
                                  _function_source(g.combined, f"gauss_c_{k}")]
                    parts += [_function_source(f, f"gauss_d_{k}_{i}")
                              for i, f in enumerate(g.derivatives)]
                if any(g.logistic is not None for g in gauss):
                    parts.append("GAUSS_LOGISTIC = "
                                 + repr([k for k, g in enumerate(gauss)
                                         if g.logistic is not None]))
                if any(g.inner or g.nested for g in gauss):  # two-dimensional integrals
                    parts.append(f"GAUSS_INNER = {[k for k, g in enumerate(gauss) if g.inner]!r}")
                    parts.append("GAUSS_NESTED = " + repr(
                        {k: list(g.nested) for k, g in enumerate(gauss) if g.nested}))
                fast = [(k, g.fast) for k, g in enumerate(gauss) if g.fast is not None
                        and _cacheable(g.fast, "arb", implicit)]
                fused = [grp for grp in self._fused.get(backend, ())
                         if _cacheable(grp.fast, "arb", implicit)
                         and _cacheable(grp.pre, "arb", implicit)]
                parts.append("ARB_SOURCE = " + repr("\n\n".join(
                    [_function_source(f, f"gauss_fa_{k}") for k, f in fast]
                    + [_function_source(f, f"gauss_f{c}_{j}") for j, grp in enumerate(fused)
                       for c, f in (("g", grp.fast), ("p", grp.pre))])))
                parts.append("FUSED = " + repr([(grp.members, grp.deps) for grp in fused]))
                if backend == "arb":
                    parts += _level_sources(self._levels)
                parts.append(f"IMPLICIT = {implicit!r}")
                parts.append(f"N_INNER = {len(inners)}\nN_GAUSS = {len(gauss)}\n")
                self.cache.store(cname, "\n\n".join(parts), sealed=True)
            except (OSError, TypeError):
                pass
        return outer, inners

    def _logistic_function(self, k: int):
        """The float64 function of integral ``k``'s integrand in its logistic forms
        (:func:`_logistic_safe`), of the arguments of its plain function, or ``None`` where the
        rewrite leaves it unchanged. Made when :func:`_gauss_np` first meets a value of an
        integrand with a logistic pattern that is not finite (the SymPy rewrite and
        ``lambdify`` of every such integrand of this evaluator at once, and the expressions
        built if they came from the cache); cached on disk beside the evaluator's code
        (``NAME-np-logistic``), so that a later process only loads it."""
        if self._logistic is None:
            self._logistic = self._logistic_functions()
        return self._logistic.get(k)

    def _logistic_functions(self) -> dict:
        """``{k: function}`` of :meth:`_logistic_function`, loaded from the cache or made."""
        cname = f"{self.name}-np-logistic" if self.cache is not None and self.name else None
        if cname:
            ns = self.cache.load(cname, "np")
            if ns is not None and _bind_implicit(ns, ns.get("IMPLICIT")):
                try:
                    return {k: ns[f"gauss_l_{k}"] for k in ns["GAUSS_LOGISTIC_MADE"]}
                except KeyError:
                    pass
        exprs, prepared, dummies = self._extract_gaussian_integrals(self.exprs)
        args = self.args + dummies
        ns = _namespace("np")
        module = [{k: ns[k] for k in ("erf", "erfc", "erfcx", *_LOG_SPACE_MP, *_SPECIAL_NP)
                   if k in ns}, BACKENDS["np"]]
        printer = _numpy_printer(module)
        memo = _logistic_memo()
        out = {}
        for k, g in enumerate(prepared):
            if not _has_logistic_pattern(g.integrand):
                continue
            safe = _logistic_safe(g.integrand, memo)
            if safe != g.integrand:
                out[k] = lambdify_canonical([g.z] + g.switches + _gauss_args(g, args, len(self.args),
                                                                        k),
                                        safe, modules=module, cse=True, printer=printer)
        implicit = _implicit_names(self.exprs) if cname else None
        if implicit is not None and all(_cacheable(f, "np", implicit) for f in out.values()):
            parts = [_function_source(f, f"gauss_l_{k}") for k, f in out.items()]
            parts.append(f"GAUSS_LOGISTIC_MADE = {sorted(out)!r}")
            parts.append(f"IMPLICIT = {implicit!r}\n")
            try:
                self.cache.store(cname, "\n\n".join(parts), sealed=True)
            except (OSError, TypeError):
                pass
        return out

    def _store_arb(self, cname, outer, inners, gauss) -> None:
        """Caches the ball-arithmetic code of expressions with Gaussian integrals: the outer
        and inner functions, and per integral its Heaviside arguments, kinks and envelope (in
        the ``arb`` namespace), the envelope's power as ``(p, q)``, and the integrands (run in
        the ``acb`` namespace of ``acb.integral``) as the source text ``ACB_SOURCE``."""
        fns = [outer] + inners + [f for g in gauss for f in (g.arguments, g.kinks, g.envelope)]
        fns += [f for lv in self._levels or () for f in (lv.pre, lv.pair)]
        # a function defined by an equation (the proximal root of a logistic loss) is recorded
        # by the digest of its declaration and bound again when loaded (_bind_implicit: its
        # ball implementation, what _arb_lambdify bound when the code was generated)
        implicit = _implicit_names(self.exprs)
        if implicit is None or not (all(_cacheable(f, "arb", implicit) for f in fns)
                                    and all(_cacheable(f, "acb", implicit)
                                            for g in gauss for f in (g.integrand, g.pre)
                                            if f is not None)):
            return
        try:
            parts = [_function_source(outer, "outer")]
            parts += [_function_source(f, f"inner_{k}") for k, f in enumerate(inners)]
            acb = []
            for k, g in enumerate(gauss):
                acb.append(_function_source(g.integrand, f"gauss_f_{k}"))
                if g.pre is not None:
                    acb.append(_function_source(g.pre, f"gauss_h_{k}"))
                parts += [_function_source(g.arguments, f"gauss_u_{k}"),
                          _function_source(g.kinks, f"gauss_k_{k}"),
                          _function_source(g.envelope, f"gauss_env_{k}"),
                          f"gauss_P_{k} = ({int(g.power.p)}, {int(g.power.q)})",
                          f"gauss_K_{k} = {g.conditions!r}"]
            parts += _level_sources(self._levels)
            parts.append(f"ACB_SOURCE = {chr(10).join(acb)!r}")
            parts.append(f"IMPLICIT = {implicit!r}")
            parts.append(f"N_INNER = {len(inners)}\nN_GAUSS = {len(gauss)}\n")
            self.cache.store(cname, "\n\n".join(parts), sealed=True)
        except (OSError, TypeError):
            pass

    def _extract_gaussian_integrals(self, exprs):
        r"""``(exprs, prepared, dummies)``: the expressions with each distinct Gaussian integral
        replaced by a dummy symbol (an extra argument of the generated functions, computed
        first), and the integrals in :func:`~replica.symbolic.gaussian.prepare`'d form.

        An integral may hold another whose integrand does not depend on its variable (a
        conjugate that is itself an integral, substituted into another's integrand): the
        innermost are replaced first, and integral ``k`` is a function of ``args`` and the
        integrals before it. An inner integral that depends on an outer one's variable
        :math:`\xi` (a two-dimensional integral, :func:`_link_two_dimensional`) is also a
        function of :math:`\xi`: its ``outer`` is :math:`\xi`, the outer integral lists it
        in ``nested``, and it is evaluated at each node of the outer rule."""
        import sympy

        from .gaussian import GaussianIntegral, prepare
        from .spectral import SpectralAverage
        from .walk import distinct_atoms

        current, prepared, dummies = list(exprs), [], []
        applied: dict = {}  # (two-dimensional integrals) inner integral(outer variable) -> dummy
        while True:
            found: set = set()
            for e in current:
                found |= distinct_atoms(e, GaussianIntegral)
            holds = {g: bool(distinct_atoms(g.args[0], GaussianIntegral)) for g in found}
            leaves = sorted((g for g in found if not holds[g]), key=sympy.default_sort_key)
            if not leaves:
                break
            bound = {g.args[1] for g in found if holds[g]}
            mapping = {}
            for g in leaves:
                if distinct_atoms(g.args[0], SpectralAverage):
                    raise ValueError(f"a Gaussian integral whose integrand holds a spectral "
                                     f"average is not supported: {g}")
                outer = g.free_symbols & bound
                if len(outer) > 1:
                    raise ValueError(f"a Gaussian integral that depends on the variables of two "
                                     f"integrals around it (a three-dimensional integral) is "
                                     f"not supported: {g}")
                d = sympy.Dummy(f"gauss{len(dummies)}")
                p = prepare(g)
                mapping[g] = d
                if outer:  # a function of the outer variable, in the outer integral
                    p.outer = outer.pop()
                    mapping[g] = sympy.Function(f"gauss_inner_{len(dummies)}")(p.outer)
                    applied[mapping[g]] = d
                prepared.append(p)
                dummies.append(d)
            current = [e.xreplace(mapping) for e in current]
        if applied:  # the inner integrals' values as arguments of the outer integrands
            for p in prepared:
                p.integrand, p.bare = p.integrand.xreplace(applied), p.bare.xreplace(applied)
                p.arguments = [u.xreplace(applied) for u in p.arguments]
                p.kinks = [sympy.sympify(k).xreplace(applied) for k in p.kinks]
            current = [e.xreplace(applied) for e in current]
        _link_two_dimensional(current, prepared, dummies)
        return current, prepared, dummies

    def _generate_arb(self, current, dummies, inner_exprs, args):
        """Ball-arithmetic functions (raises :class:`NotEnclosable` for an expression that has
        none); the averages also as :class:`_SpectralLevel` functions (``self._levels``)."""
        from .spectral import LAMBDA_I, MU_I

        outer = _arb_lambdify(args + dummies, current)
        inners = [_arb_lambdify([LAMBDA_I, MU_I] + args + before, e) for e, before in inner_exprs]
        self._levels = _spectral_levels(inner_exprs, dummies, args)
        return outer, inners

    def functions(self, backend: str):
        if backend not in self._fns:
            self._fns[backend] = self._generate(backend)
            if backend == "mp":
                _REMEMBERED_LEVELS.attach(self)
        return self._fns[backend]

    def two_dimensional(self) -> bool:
        """Whether the expressions hold a two-dimensional Gaussian integral (whose float64 value
        comes from a fixed tensor rule with no error estimate)."""
        return any(g.inner for g in self._gauss.get("np", ())) or (
            "np" not in self._fns and any(g.inner for g in self._gauss.get("mp", ())))

    def gaussian_integral_count(self, backend: str) -> int:
        """How many one-dimensional Gaussian integrals the expressions hold (their code for
        ``backend`` generated first; raises :class:`NotEnclosable` as ``functions``)."""
        self.functions(backend)
        return len(self._gauss.get(backend, ()))

    @property
    def has_averages(self) -> bool:
        return bool(self.functions("mp")[1]) if "mp" in self._fns else bool(
            self.functions("np")[1])

    def gaussian_values(self, backend: str, values, dtype=None, split: int | None = None) -> list:
        """The values of the expressions' Gaussian integrals at ``values`` (the arguments after
        ``args`` of the generated outer function), for ``backend``; ``dtype`` (float64 by
        default) is the NumPy type of the ``"np"`` quadrature (an integrand with a function
        that has no ``longdouble`` loop, SciPy's error functions, is integrated in float64
        and converted: the extended-precision recomputation of the float64 path then sees
        the integral's float64 rounding, not less). ``split`` cuts every piece of the fixed
        rule into that many parts (:func:`_gauss_np`): the float64 check estimates the rule's
        own truncation error by the rule cut in :data:`CHECK_SPLIT` times as many parts --
        below float64 rounding for integrands analytic near the real axis on each piece
        (tested against 50-digit values in ``tests/test_gaussian_integrals.py``), not for one
        peaked on a scale far below a piece's length (``tests/test_float64_boundary.py``,
        ``tests/test_float64_rule_error.py``).
        A two-dimensional integral's inner integrals keep the fixed rule (its float64 points
        claim nothing: :meth:`~replica.numerics.machine.Machine.assess`). Without ``split``,
        that of :class:`np_rule_split` (1 outside one)."""
        if split is None:
            split = _NP_SPLIT[0]
        self.functions(backend)
        gauss = self._gauss.get(backend, [])
        if not gauss:
            return []
        n_base = len(values)
        if backend == "mp":  # integral k: a function of the values and the integrals before it
            out = [None] * len(gauss)
            fused = {k: grp for grp in self._fused.get("mp", ()) for k in grp.members}
            for k, g in enumerate(gauss):
                if out[k] is not None:
                    continue
                if g.inner:  # a two-dimensional integral's inner one: at the outer one's nodes
                    out[k] = mpmath.nan
                elif g.nested:
                    out[k] = _gauss_mp_two_dimensional(g, list(values) + out[:k], gauss, n_base)
                elif not (k in fused and _gauss_mp_fused(fused[k], gauss, values, out)):
                    out[k] = _gauss_mp(g, list(values) + out[:k])
            return out
        out: list = []
        plan = None
        if backend == "arb" and len(gauss) > 1 and any(_calls_implicit(g.integrand)
                                                       for g in gauss):
            from .ballquad import NodePlan

            plan = NodePlan()
        for g in gauss:  # integral k is a function of the values and the integrals before it
            if g.inner:  # a two-dimensional integral's inner one: at the outer one's nodes
                out.append(np.asarray(np.nan))
            elif g.nested and backend == "np":
                try:
                    dt = dtype or np.float64
                    out.append(_gauss_np(g, list(values) + out, dt,
                                         _nested_np(g, gauss, n_base, dt), split=split))
                except TypeError:  # a function with no extended-precision loop
                    vals64 = [np.asarray(v, dtype=np.float64) for v in list(values) + out]
                    out.append(_gauss_np(g, vals64, np.float64,
                                         _nested_np(g, gauss, n_base, np.float64),
                                         split=split).astype(dtype))
            elif backend == "np":
                try:
                    out.append(_gauss_np(g, list(values) + out, dtype or np.float64,
                                         split=split))
                except TypeError:  # a function with no extended-precision loop (SciPy's erfc)
                    out.append(_gauss_np(g, [np.asarray(v, dtype=np.float64)
                                             for v in list(values) + out],
                                         np.float64, split=split).astype(dtype))
            else:
                out.append(_gauss_arb(g, list(values) + out, plan))
        return out

    def mp(self, values, pairs=None) -> list:
        """Evaluate at ``values`` (``mpf``, in the order of ``args``) at the working precision;
        ``pairs`` is a :class:`~replica.spectra.SpectralPairs` (needed only for averages)."""
        outer, inners = self.functions("mp")
        values = list(values) + self.gaussian_values("mp", values)
        avgs: list = []
        for f in inners:
            avgs.append(mpmath.fsum(w * f(lam, mu, *values, *avgs)
                                    for lam, mu, w in zip(pairs.lam, pairs.mu, pairs.weight)))
        return list(outer(*values, *avgs))

    def f64(self, values, arrays=None) -> list:
        """Vectorised float64 evaluation; ``arrays = (lam, mu, weight)`` NumPy vectors. The
        results are broadcast to the common shape of ``values``."""
        # (the per-call overhead matters: a float64 point calls this a few dozen times; the
        # arithmetic is that of np.sum, whose reduction np.add.reduce is)
        outer, inners = self.functions("np")
        vals = [v if type(v) is np.ndarray and v.dtype == np.float64 else
                np.asarray(v, dtype=float) for v in values]
        if self._gauss.get("np"):
            vals += self.gaussian_values("np", vals)
        avgs: list = []
        if inners:
            lam, mu, w = arrays
            expanded = [v[..., None] for v in vals]
            prev: list = []
            for f in inners:
                a = np.add.reduce(w * np.asarray(f(lam, mu, *expanded, *prev), dtype=float),
                                  axis=-1)
                avgs.append(a)
                prev.append(np.asarray(a)[..., None])
        shapes = {v.shape for v in vals}
        shape = (shapes.pop() if len(shapes) == 1 else np.broadcast_shapes(*shapes)) \
            if vals else ()
        out = [np.asarray(o, dtype=float) for o in outer(*vals, *avgs)]
        return [o if o.shape == shape else np.broadcast_to(o, shape) for o in out]

    def arb(self, values, pairs=None) -> list:
        """Enclosures (``arb`` balls) of the expressions for every point of the argument balls
        ``values``; ``pairs`` holds the spectral pairs as balls (``lam``, ``mu``, ``weight``),
        each average a ball sum over them: the averages of one nesting level together
        (:class:`_SpectralLevel`), their pair-independent parts once, the weighted sums as one
        ball matrix product."""
        outer, inners = self.functions("arb")
        values = list(values) + self.gaussian_values("arb", values)
        avgs: list = []
        if inners and self._levels is not None:
            for level in self._levels:
                avgs += level(values, avgs, pairs)
            return [arb_of(v) for v in outer(*values, *avgs)]
        for f in inners:
            total = arb_of(0)
            for lam, mu, w in zip(pairs.lam, pairs.mu, pairs.weight):
                total += w * f(lam, mu, *values, *avgs)
            avgs.append(total)
        return [arb_of(v) for v in outer(*values, *avgs)]

    def __call__(self, backend: str, values, spectrum=None) -> list:
        if backend == "arb":
            return self.arb(values, spectrum)
        return self.mp(values, spectrum) if backend == "mp" else self.f64(values, spectrum)


def mp_function(args: Sequence, expr) -> Callable:
    """A scalar mpmath function of ``args`` (the call signature of ``sympy.lambdify``) evaluating
    one expression at the caller's working precision: :class:`Evaluator` for a single value."""
    ev = Evaluator([expr], list(args))

    def f(*values):
        return ev.mp(list(values))[0]

    return f
