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
