r"""Double-double code: SymPy expressions evaluated with about 106 significant bits from float64
operations alone.

A *double-double* value is the unevaluated sum :math:`a = a_h + a_l` of two float64 numbers with
:math:`|a_l| \le \tfrac12\,\mathrm{ulp}(a_h)`. Its arithmetic is built on two error-free
transformations of float64 operations (round to nearest):

* ``_two_sum(a, b)`` (Knuth): :math:`s = \mathrm{fl}(a + b)` and :math:`e` with
  :math:`s + e = a + b` exactly (six float64 operations);
* ``_two_prod(a, b)`` (Dekker, with Veltkamp's split by :math:`2^{27} + 1`):
  :math:`p = \mathrm{fl}(ab)` and :math:`e` with :math:`p + e = ab` exactly, as long as nothing
  overflows (:math:`|a|, |b| \lesssim 2^{996}`) and :math:`e` does not underflow (products
  above about :math:`2^{-969}`); no fused multiply-add is needed, so NumPy and Numba compute the
  same thing.

On them (with :math:`u = 2^{-53}`, float64's unit roundoff), each operation returns the exact
result of its double-double operands with a relative error of a small multiple of :math:`u^2`:
``dd_add`` (the accurate sum of two double-doubles, both halves added with ``_two_sum``: at most
:math:`3u^2`, Joldes, Muller & Popescu 2017, *AccurateDWPlusDW*), ``dd_mul`` (their
*DWTimesDW1*: at most :math:`7u^2`), ``dd_div`` (the quotient of Hida, Li & Bailey's QD library,
corrected twice by the remainder), ``dd_sqrt`` (one Newton correction of the float64 square root
by the exact remainder). ``tests/test_ddcode.py`` measures every operation against exact rational
arithmetic on random operands and checks the bound :data:`OP_ERROR` (``16 u^2``, about
:math:`2^{-102}`) for each.

**Generated code.** :func:`dd_source` prints SymPy expressions (after common-subexpression
elimination) as straight-line code of these operations: ``+``, ``-``, ``*``, ``/`` (a product's
numerator and denominator are multiplied out separately and divided once), integer powers (by
repeated squaring), half-integer powers (``dd_sqrt`` then an integer power), ``Abs``, and
numbers as double-double constants (a rational :math:`p/q` is rounded to the nearest
double-double, :math:`p/q = c_h + c_l + O(2^{-106} |p/q|)`; integers below :math:`2^{106}` and
float64 numbers exactly). Spectral averages :math:`\sum_j w_j\phi(\lambda_j, \mu_j)` are split
off as in :class:`~replica.symbolic.codegen.Evaluator` (:func:`~replica.symbolic.codegen.split_averages`):
each is an inner function of :math:`(\lambda, \mu)` and the arguments, whose terms the caller
multiplies by the float64 weights and sums in double-double, one after the other. Any other
function (``log``, ``exp``, ``Piecewise``, special functions, Gaussian integrals) raises
:class:`NotDoubleDouble`: the caller keeps its extended-precision (``longdouble``) evaluation.

The generated functions take and return the two halves of every value as separate float64
arguments (``a0h, a0l, a1h, a1l, ...``) and use only the primitives of :data:`PRIMITIVES`,
``_sqrt`` and ``_sel(condition, a, b)``. So the *same source* runs

* under Numba (``njit``, no ``fastmath``: no contraction into fused multiply-adds) on scalars, and
* under plain Python on NumPy arrays, elementwise (``_sel`` is :func:`numpy.where`),

and, every operation being a correctly rounded IEEE float64 operation applied to the same
operands in the same order, gives bit-identical values in both (tested).
"""

from __future__ import annotations

import re
from fractions import Fraction

import numpy as np

OP_ERROR = 16 * 2.0 ** -106
"""The relative error bound of one double-double operation that ``tests/test_ddcode.py``
checks on random operands (``16 u^2``, :math:`u = 2^{-53}`; the proven bounds of the sum and the
product are ``3 u^2`` and ``7 u^2``)."""


class NotDoubleDouble(ValueError):
    """An expression with an operation that double-double code does not support (``log``,
    ``exp``, special functions, a non-half-integer power, ``Piecewise``...)."""


PRIMITIVES = '''
@JIT
def _two_sum(a, b):
    s = a + b
    v = s - a
    return s, (a - (s - v)) + (b - v)


@JIT
def _fast_two_sum(a, b):
    s = a + b
    return s, b - (s - a)


@JIT
def _split(a):
    t = 134217729.0 * a
    h = t - (t - a)
    return h, a - h


@JIT
def _two_prod(a, b):
    p = a * b
    ah, al = _split(a)
    bh, bl = _split(b)
    return p, ((ah * bh - p) + ah * bl + al * bh) + al * bl


@JIT
def dd_add(ah, al, bh, bl):
    s, e = _two_sum(ah, bh)
    t, f = _two_sum(al, bl)
    s, e = _fast_two_sum(s, e + t)
    return _fast_two_sum(s, e + f)


@JIT
def dd_sub(ah, al, bh, bl):
    return dd_add(ah, al, -bh, -bl)


@JIT
def dd_mul(ah, al, bh, bl):
    p, e = _two_prod(ah, bh)
    return _fast_two_sum(p, e + (ah * bl + al * bh))


@JIT
def dd_div(ah, al, bh, bl):
    q1 = ah / bh
    ph, pl = dd_mul(bh, bl, q1, 0.0)
    rh, rl = dd_sub(ah, al, ph, pl)
    q2 = rh / bh
    ph, pl = dd_mul(bh, bl, q2, 0.0)
    rh, rl = dd_sub(rh, rl, ph, pl)
    q3 = rh / bh
    q1, q2 = _fast_two_sum(q1, q2)
    return dd_add(q1, q2, q3, 0.0)


@JIT
def dd_sqrt(ah, al):
    s = _sqrt(ah)
    p, e = _two_prod(s, s)
    c = (((ah - p) - e) + al) / (s + s)
    h, l = _fast_two_sum(s, c)
    z = ah == 0.0
    return _sel(z, ah, h), _sel(z, ah, l)


@JIT
def dd_abs(ah, al):
    n = ah < 0.0
    return _sel(n, -ah, ah), _sel(n, -al, al)
'''
"""The double-double operations, as source (``JIT`` is Numba's ``njit`` or the identity)."""


def numpy_namespace() -> dict:
    """A namespace in which :data:`PRIMITIVES` and generated code run on NumPy arrays (or
    Python floats), elementwise."""
    ns = {"JIT": lambda f: f, "_sqrt": np.sqrt, "_sel": np.where, "_np": np}
    exec(compile(PRIMITIVES, "<double-double primitives>", "exec"), ns)  # noqa: S102
    return ns


NUMBA_PRELUDE = '''
@JIT
def _sel(c, a, b):
    return a if c else b


@JIT
def _sqrt(a):
    return _np.sqrt(a)
'''
"""Numba's versions of ``_sel`` and ``_sqrt`` (scalars), to be compiled with :data:`PRIMITIVES`."""


def constant(value) -> tuple:
    """``(hi, lo)`` source literals of the double-double nearest a SymPy number (a rational,
    an integer, a float, or a number symbol such as ``pi``)."""
    import sympy

    value = sympy.sympify(value)
    if value.is_Rational:
        exact = Fraction(int(value.p), int(value.q))
    elif value.is_Float:
        exact = Fraction(*sympy.Rational(value).as_numer_denom())
    elif value.is_NumberSymbol:
        r = sympy.Rational(sympy.N(value, 60))
        exact = Fraction(int(r.p), int(r.q))
    else:
        raise NotDoubleDouble(f"no double-double constant for {value}")
    hi = float(exact)  # correctly rounded
    if not np.isfinite(hi):
        raise NotDoubleDouble(f"{value} is not a finite double-double")
    lo = float(exact - Fraction(hi))
    return repr(hi), repr(lo)


class _Printer:
    """Straight-line double-double code of SymPy expressions (one temporary pair per
    operation)."""

    def __init__(self, env: dict):
        self.env = dict(env)  # symbol -> (hi name, lo name)
        self.lines: list = []
        self.memo: dict = {}
        self.k = 0

    def op(self, fn: str, *operands) -> tuple:
        self.k += 1
        h, l = f"t{self.k}h", f"t{self.k}l"
        args = ", ".join(x for pair in operands for x in pair)
        self.lines.append(f"    {h}, {l} = {fn}({args})")
        return h, l

    def emit(self, e) -> tuple:
        import sympy

        if e in self.env:
            return self.env[e]
        if e.is_Number or e.is_NumberSymbol:
            return constant(e)
        if e in self.memo:
            return self.memo[e]
        if e.is_Symbol:
            raise NotDoubleDouble(f"unbound symbol {e}")
        if e.is_Add:
            terms = list(e.args)
            acc = self.emit(terms[0])
            for t in terms[1:]:
                c, _ = t.as_coeff_Mul()
                if c.is_Number and c < 0:
                    acc = self.op("dd_sub", acc, self.emit(-t))
                else:
                    acc = self.op("dd_add", acc, self.emit(t))
            out = acc
        elif e.is_Mul:
            out = self._mul(e)
        elif e.is_Pow:
            out = self._pow(e.base, e.exp)
        elif isinstance(e, sympy.Abs):
            out = self.op("dd_abs", self.emit(e.args[0]))
        else:
            raise NotDoubleDouble(f"{type(e).__name__} has no double-double code")
        self.memo[e] = out
        return out

    def _product(self, factors) -> tuple | None:
        acc = None
        for f in factors:
            v = self.emit(f)
            acc = v if acc is None else self.op("dd_mul", acc, v)
        return acc

    def _mul(self, e) -> tuple:
        import sympy

        coeff, factors = e.as_coeff_mul()
        num, den = [], []
        for f in factors:
            if f.is_Pow and f.exp.is_Rational and f.exp < 0:
                den.append(sympy.Pow(f.base, -f.exp))
            else:
                num.append(f)
        negative = coeff < 0
        coeff = abs(coeff)
        if coeff.is_Rational:
            if coeff.p != 1:
                num.insert(0, sympy.Integer(coeff.p))
            if coeff.q != 1:
                den.insert(0, sympy.Integer(coeff.q))
        elif coeff != 1:
            num.insert(0, coeff)
        n = self._product(num) or ("1.0", "0.0")
        out = self.op("dd_div", n, self._product(den)) if den else n
        if negative:
            self.k += 1
            h, l = f"t{self.k}h", f"t{self.k}l"
            self.lines.append(f"    {h}, {l} = -{out[0]}, -{out[1]}")
            out = (h, l)
        return out

    def _pow(self, base, exp) -> tuple:
        if not exp.is_Rational or exp.q not in (1, 2):
            raise NotDoubleDouble(f"power {exp} has no double-double code")
        b = self.emit(base)
        if exp.q == 2:
            b = self.op("dd_sqrt", b)
        n = abs(int(exp.p))
        result, square = None, b
        while n:  # binary powering, low bits first
            if n & 1:
                result = square if result is None else self.op("dd_mul", result, square)
            n >>= 1
            if n:
                square = self.op("dd_mul", square, square)
        if result is None:
            result = ("1.0", "0.0")
        if exp < 0:
            result = self.op("dd_div", ("1.0", "0.0"), result)
        return result


def function_source(name: str, args, exprs, varying: int = 0) -> str:
    """The source of ``name(a0h, a0l, ...)`` returning the flat tuple ``(e0h, e0l, e1h, ...)``
    of the double-double values of ``exprs`` (SymPy) at the double-double ``args``
    (symbols). Raises :class:`NotDoubleDouble` for an unsupported operation.

    With ``varying = k > 0`` (the terms of a spectral average: the first ``k`` arguments are
    the pair, the others the same for every pair) the operations that do not depend on the
    first ``k`` arguments are hoisted into ``name_pre(the other arguments)``, which returns
    the values the rest needs, and ``name(the first k arguments, those values)`` does the
    rest: the same operations on the same operands, so the same values, with the hoisted part
    computed once per point instead of once per pair."""
    import sympy

    env = {s: (f"a{i}h", f"a{i}l") for i, s in enumerate(args)}
    p = _Printer(env)
    subs, reduced = sympy.cse(list(exprs))
    for sym, rhs in subs:
        p.env[sym] = p.emit(rhs)
    outs = [p.emit(e) for e in reduced]
    ret = "    return (" + "".join(f"{h}, {l}, " for h, l in outs) + ")"
    if not varying:
        params = ", ".join(x for pair in env.values() for x in pair)
        return f"@JIT\ndef {name}({params}):\n" + "\n".join(p.lines + [ret]) + "\n"
    names = re.compile(r"\b(t\d+[hl]|a\d+[hl])\b")
    moving = {x for i in range(varying) for x in (f"a{i}h", f"a{i}l")}
    pre, rest = [], []
    for line in p.lines:
        lhs, rhs = line.split(" = ", 1)
        if moving & set(names.findall(rhs)):
            moving |= set(names.findall(lhs))
            rest.append(line)
        else:
            pre.append(line)
    defined = {x for line in pre for x in names.findall(line.split(" = ", 1)[0])}
    defined |= {x for i in range(varying, len(args)) for x in (f"a{i}h", f"a{i}l")}
    used = []
    for line in rest + [ret]:
        rhs = line.split(" = ", 1)[-1]
        for x in names.findall(rhs):
            if x in defined and x not in used:
                used.append(x)
    outer_params = ", ".join(f"a{i}h, a{i}l" for i in range(varying, len(args)))
    inner_params = ", ".join([f"a{i}h, a{i}l" for i in range(varying)] + used)
    hoisted = "    return (" + "".join(f"{x}, " for x in used) + ")"
    return (f"@JIT\ndef {name}_pre({outer_params}):\n" + "\n".join(pre + [hoisted]) + "\n\n\n"
            f"@JIT\ndef {name}({inner_params}):\n" + "\n".join(rest + [ret]) + "\n")


def dd_source(name: str, exprs, args) -> tuple:
    """``(source, n_inner)``: double-double functions of ``exprs`` in the symbols ``args``:
    ``{name}_outer(args..., averages...)`` and, per spectral average ``k``,
    ``{name}_inner_k_pre(args..., averages before k)`` (what does not depend on the pair) and
    ``{name}_inner_k(lambda, mu, what _pre returned)`` (the term of the average, to be
    weighted and summed by the caller). Raises :class:`NotDoubleDouble` where an
    expression holds an operation without double-double code (or a Gaussian integral)."""
    import sympy

    from .codegen import split_averages
    from .gaussian import GaussianIntegral
    from .spectral import LAMBDA_I, MU_I

    exprs = [sympy.sympify(e) for e in exprs]
    if any(e.atoms(GaussianIntegral) for e in exprs):
        raise NotDoubleDouble("a Gaussian integral has no double-double code")
    current, dummies, inner_exprs = split_averages(exprs)
    parts = [function_source(f"{name}_outer", list(args) + dummies, current)]
    for k, (e, before) in enumerate(inner_exprs):
        parts.append(function_source(f"{name}_inner_{k}", [LAMBDA_I, MU_I] + list(args) + before,
                                     [e], varying=2))
    return "\n\n".join(parts), len(inner_exprs)
