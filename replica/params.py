"""Exact parsing of parameters.

Parameters enter as exact rationals: ``"0.3"`` and ``"3/10"`` both become ``Fraction(3, 10)``,
never a binary float. ``"inf"`` is accepted where a parameter may be infinite (``--kappa inf``).
The conversion to ``mpmath.mpf`` happens only inside a precision context, at the working precision.
"""

from __future__ import annotations

import re
from fractions import Fraction

from .errors import ParameterError

INF = "inf"

_NUMBER = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$")


def parse_exact(value, name: str, *, allow_inf: bool = False):
    """Return ``value`` as an exact :class:`fractions.Fraction` (or the string ``"inf"``).

    Accepts decimals (``0.3``, ``1e-6``), fractions (``3/10``) and, if ``allow_inf``, ``inf``.
    Python ints and Fractions pass through; a Python float is converted through its shortest
    decimal representation (``repr``), so ``0.1`` means one tenth, not the nearest binary double.

    >>> parse_exact("3/10", "rho")
    Fraction(3, 10)
    >>> parse_exact("1e-3", "lam")
    Fraction(1, 1000)
    """
    if isinstance(value, Fraction):
        return value
    if isinstance(value, bool):
        raise ParameterError(name, f"expected a number, got {value!r}")
    if isinstance(value, int):
        return Fraction(value)
    if isinstance(value, float):
        if value != value:
            raise ParameterError(name, "is NaN")
        if value in (float("inf"), float("-inf")):
            if allow_inf and value > 0:
                return INF
            raise ParameterError(name, "must be finite")
        value = repr(value)
    text = str(value).strip()
    if allow_inf and text.lower() in ("inf", "+inf", "infinity", "oo"):
        return INF
    if "/" in text:
        num, _, den = text.partition("/")
        if _NUMBER.match(num.strip()) and _NUMBER.match(den.strip()):
            d = Fraction(den.strip())
            if d == 0:
                raise ParameterError(name, f"division by zero in {text!r}")
            return Fraction(num.strip()) / d
    elif _NUMBER.match(text):
        return Fraction(text)
    raise ParameterError(name, f"expected a number such as 0.3 or 3/10, got {text!r}")


def to_mpf(x):
    """Exact rational (or ``"inf"``) to ``mpf`` at the current working precision."""
    import mpmath  # here, not at import: the command line reads parameters without mpmath

    if x == INF:
        return mpmath.inf
    x = Fraction(x)
    return mpmath.mpf(x.numerator) / x.denominator


def exact_str(x) -> str:
    """The exact string echoed in JSON output: ``"3/10"``, ``"2"``, ``"inf"``."""
    if x == INF:
        return INF
    x = Fraction(x)
    return str(x.numerator) if x.denominator == 1 else f"{x.numerator}/{x.denominator}"


def require_positive(x, name: str, *, allow_inf: bool = False):
    if x == INF:
        if allow_inf:
            return x
        raise ParameterError(name, "must be finite")
    if x <= 0:
        raise ParameterError(name, f"must be positive, got {exact_str(x)}")
    return x


def require_nonnegative(x, name: str):
    if x == INF:
        raise ParameterError(name, "must be finite")
    if x < 0:
        raise ParameterError(name, f"must be non-negative, got {exact_str(x)}")
    return x
