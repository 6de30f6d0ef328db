r"""Double-double code: SymPy expressions printed as straight-line code of double-double
operations, values with about 106 significant bits from float64 operations alone.

A *double-double* value is the unevaluated sum :math:`a = a_h + a_l` of two float64 numbers with
:math:`|a_l| \le \tfrac12\,\mathrm{ulp}(a_h)`. :func:`function_source` prints expressions
(after common-subexpression elimination) as calls of the operations ``dd_add``, ``dd_sub``,
``dd_mul``, ``dd_div`` (a product's numerator and denominator are multiplied out separately and
divided once), integer powers (by repeated squaring), half-integer powers (``dd_sqrt`` then an
integer power) and ``dd_abs``, each taking and returning the two halves of its values as
separate float64 arguments (``a0h, a0l, a1h, a1l, ...``); numbers become double-double
constants (:func:`constant`: a rational :math:`p/q` rounded to the nearest double-double,
:math:`p/q = c_h + c_l + O(2^{-106} |p/q|)`; integers below :math:`2^{106}` and float64 numbers
exactly). Any other function (``log``, ``exp``, ``Piecewise``, special functions, an infinite
constant) raises :class:`NotDoubleDouble`.

The printed code is short: an operation on the same operands is emitted once (the powers of
one base share their squares, a product that SymPy's common-subexpression elimination left in
two places is computed once); a sum of many terms is a balanced tree of sums, so that its
operations are independent of each other level by level (a chain of dependent double-double
sums is latency-bound); and an operation on a float64 operand -- a parameter or a spectral
pair, read exactly, or a constant that is a float64 -- is the cheaper operation that the
double-double one reduces to when that operand's low half is zero (:func:`_specialise`: the
same values in fewer floating-point operations).

The operations themselves are not defined here: the caller compiles the printed source beside
its own implementation of them (:data:`replica.numerics.fused_check.PRIMITIVES`, compiled by
Numba, each operation within :data:`OP_ERROR` of the exact result of its double-double
operands).

The terms of a spectral average can be split (``varying``): the operations that do not depend
on the pair :math:`(\lambda_j, \mu_j)` are hoisted into a function evaluated once per point.

(From the ``ddcheck`` experiment, whose double-double check ran as a separate compiled call;
issue 29 compiles it into the fused kernel, :mod:`replica.numerics.fused_check`.)
"""

from __future__ import annotations

import math
import re
from fractions import Fraction

import numpy as np

OP_ERROR = 16 * 2.0 ** -106
"""The relative error bound of one double-double operation that ``tests/test_fused_check.py``
checks on random operands (``16 u^2``, :math:`u = 2^{-53}`; the proven bounds of the sum and
the product used there are :math:`3u^2` and :math:`4u^2`)."""


class NotDoubleDouble(ValueError):
    """An expression with an operation that double-double code does not support (``log``,
    ``exp``, special functions, a non-half-integer power, ``Piecewise``...)."""


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


ZERO = "0.0"
"""The low half of a float64 operand (an argument read exactly, a constant that is a float64):
the operations on it are specialised (:func:`_specialise`)."""


def _neg(x: str) -> str:
    """The source of ``-x`` (``x`` a name or a literal)."""
    return x[1:] if x.startswith("-") else f"-{x}"


def _power_of_two(x: str) -> bool:
    """Whether ``x`` is a literal power of two at least 1 (a product by it is exact)."""
    try:
        v = float(x)
    except ValueError:
        return False
    return np.isfinite(v) and v >= 1.0 and math.frexp(v)[0] == 0.5


def _specialise(fn: str, operands) -> tuple:
    r"""``(operation, argument sources)`` of ``fn`` (``dd_add``, ``dd_sub``, ``dd_mul``, ...) at
    ``operands`` (pairs ``(hi, lo)``), where an operand is a float64 (``lo`` the literal
    :data:`ZERO`), as the operation that the double-double one reduces to with that low half
    zero -- the same floating-point operations less those on the zero, so the same values for
    finite, normalised operands (:math:`|a_l| \le \tfrac12\,\mathrm{ulp}(a_h)`, as every
    value of the generated code is: each operation returns one, and an argument is a float64
    or the ``TwoSum`` of the corrected point), up to the sign of a zero low half (checked bit
    for bit by ``tests/test_fused_check.py``):

    * the sum of two float64 numbers: ``_two_sum`` (exact); of a double-double and a float64
      :math:`b`: ``dd_add_f`` (``TwoSum`` of the high half and :math:`b`, the low half added
      to its error, renormalised); a difference as the sum with the negated operand;
    * the product of two float64 numbers: ``_two_prod`` (exact); of a double-double and a
      float64 :math:`b`: ``dd_mul_f`` (the product of ``dd_mul`` less its terms in the zero
      low half), or, for :math:`b` a literal power of two :math:`\ge 1`, both halves times
      :math:`b` (exact; ``scale``);
    * a negation of a float64: a float64 (``neg_f``).

    Any other operation, or one on two double-doubles, is ``fn`` itself."""
    flat = tuple(x for pair in operands for x in pair)
    exact = [pair[1] == ZERO for pair in operands]
    if fn == "neg":
        return ("neg_f", (operands[0][0],)) if exact[0] else ("neg", flat)
    if fn == "dd_sub":
        (ah, al), (bh, bl) = operands
        fn, operands = "dd_add", ((ah, al), (_neg(bh), ZERO if exact[1] else _neg(bl)))
    if fn == "dd_add":
        (ah, al), (bh, bl) = operands
        if exact[0] and exact[1]:
            return "_two_sum", (ah, bh)
        if exact[1]:
            return "dd_add_f", (ah, al, bh)
        if exact[0]:
            return "dd_add_f", (bh, bl, ah)
        return "dd_add", (ah, al, bh, bl)
    if fn == "dd_mul" and any(exact):
        (ah, al), (bh, bl) = operands
        if exact[0] and exact[1]:
            return "_two_prod", (ah, bh)
        (xh, xl), c = ((bh, bl), ah) if exact[0] else ((ah, al), bh)
        if _power_of_two(c):
            return ("scale", (c, xh, xl))
        return "dd_mul_f", (xh, xl, c)
    return fn, flat


class _Printer:
    """Straight-line double-double code of SymPy expressions (one temporary pair per
    operation)."""

    def __init__(self, env: dict):
        self.env = dict(env)  # symbol -> (hi name, lo name)
        self.lines: list = []
        self.memo: dict = {}
        self.ops: dict = {}
        self.k = 0

    def op(self, fn: str, *operands) -> tuple:
        """The value of ``fn`` at ``operands`` (pairs of names or literals), specialised where
        an operand is a float64 (its low half the literal ``0.0``) to the operation it reduces
        to, and emitted once: a second request of the same operation on the same operands
        returns the first one's names (the same operations on the same values)."""
        fn, args = _specialise(fn, operands)
        key = (fn,) + args
        hit = self.ops.get(key)
        if hit is not None:
            return hit
        self.k += 1
        h, l = f"t{self.k}h", f"t{self.k}l"
        if fn == "neg":
            out = (h, l)
            self.lines.append(f"    {h}, {l} = {_neg(args[0])}, {_neg(args[1])}")
        elif fn == "neg_f":  # the negative of a float64: a float64
            out = (h, ZERO)
            self.lines.append(f"    {h} = {_neg(args[0])}")
        elif fn == "scale":  # a double-double times a power of two >= 1: both halves, exactly
            out = (h, l)
            self.lines.append(f"    {h}, {l} = {args[0]} * {args[1]}, {args[0]} * {args[2]}")
        else:
            out = (h, l)
            self.lines.append(f"    {h}, {l} = {fn}({', '.join(args)})")
        self.ops[key] = out
        return out

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
            out = self._sum(list(e.args))
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

    def _sum(self, terms) -> tuple:
        """The sum of ``terms`` pairwise (a balanced tree of sums and differences of the
        terms' magnitudes, then one negation where the whole is negative): its depth is the
        logarithm of the number of terms, so the operations of one level are independent."""
        level = []
        for t in terms:
            c, _ = t.as_coeff_Mul()
            negative = bool(c.is_Number and c < 0)
            level.append((negative, self.emit(-t if negative else t)))
        while len(level) > 1:
            nxt = []
            for k in range(0, len(level) - 1, 2):
                (na, a), (nb, b) = level[k], level[k + 1]
                if na == nb:
                    nxt.append((na, self.op("dd_add", a, b)))
                elif nb:
                    nxt.append((False, self.op("dd_sub", a, b)))
                else:
                    nxt.append((False, self.op("dd_sub", b, a)))
            if len(level) % 2:
                nxt.append(level[-1])
            level = nxt
        negative, out = level[0]
        return self.op("neg", out) if negative else out

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
            out = self.op("neg", out)
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


def function_source(name: str, args, exprs, varying: int = 0, exact=()) -> str:
    """The source of ``name(a0h, a0l, ...)`` returning the flat tuple ``(e0h, e0l, e1h, ...)``
    of the double-double values of ``exprs`` (SymPy) at the double-double ``args``
    (symbols). Raises :class:`NotDoubleDouble` for an unsupported operation.

    With ``varying = k > 0`` (the terms of a spectral average: the first ``k`` arguments are
    the pair, the others the same for every pair) the operations that do not depend on the
    first ``k`` arguments are hoisted into ``name_pre(the other arguments)``, which returns
    the values the rest needs as one tuple, and ``name(the first k arguments, that tuple)``
    does the rest: the same operations on the same operands, so the same values, with the
    hoisted part computed once per point instead of once per pair. (One tuple, not one
    argument per value: the term function is inlined into its loop, and Numba cannot inline a
    call of more than 30 arguments, which CPython 3.11 compiles as a call with ``*args``.)

    ``exact``: the arguments that are float64 numbers (a parameter, a spectral pair, read
    exactly; the caller passes a zero low half, which the function does not read): the
    operations on them are the specialised ones of :func:`_specialise`, which give the same
    values as the double-double operations with that zero low half, in fewer operations."""
    import sympy

    exact = set(exact)
    env = {s: (f"a{i}h", ZERO if s in exact else f"a{i}l") for i, s in enumerate(args)}
    p = _Printer(env)
    subs, reduced = sympy.cse(list(exprs))
    for sym, rhs in subs:
        p.env[sym] = p.emit(rhs)
    outs = [p.emit(e) for e in reduced]
    ret = "    return (" + "".join(f"{h}, {l}, " for h, l in outs) + ")"
    if not varying:
        params = ", ".join(f"a{i}h, a{i}l" for i in range(len(args)))
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
    inner_params = ", ".join([f"a{i}h, a{i}l" for i in range(varying)] + ["pre"])
    hoisted = "    return (" + "".join(f"{x}, " for x in used) + ")"
    unpack = [f"    {', '.join(used)}, = pre"] if used else []
    return (f"@JIT\ndef {name}_pre({outer_params}):\n" + "\n".join(pre + [hoisted]) + "\n\n\n"
            f"@JIT\ndef {name}({inner_params}):\n" + "\n".join(unpack + rest + [ret]) + "\n")
