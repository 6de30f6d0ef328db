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

MAX_EXPONENT = 10000
"""Largest ``|exponent|`` of a decimal number read exactly (``1e-10000`` is read, ``1e-10001``
refused): an exact rational of a huge exponent would take unbounded time and memory to build."""

MAX_DIGITS = 4000
"""Most decimal digits the numerator or denominator of an exact value may have (more than any
working precision; Python refuses to print longer integers)."""

_MAX_BITS = int(MAX_DIGITS * 3.3219280948873626)


def _bounded(x: Fraction, text: str, name: str) -> Fraction:
    if max(x.numerator.bit_length(), x.denominator.bit_length()) > _MAX_BITS:
        raise ParameterError(name, f"{text[:40]!r} needs more than {MAX_DIGITS} digits to be "
                                   "written exactly")
    return x


def _exact_decimal(text: str, name: str) -> Fraction:
    """``Fraction(text)`` for a decimal matching ``_NUMBER``, refusing an exponent beyond
    :data:`MAX_EXPONENT` or a mantissa of more than :data:`MAX_DIGITS` digits before any big
    integer is built."""
    mantissa, _, exponent = text.lower().partition("e")
    digits = sum(c.isdigit() for c in mantissa.lstrip("+-").lstrip("0."))
    if digits > MAX_DIGITS:
        raise ParameterError(name, f"has {digits} digits; at most {MAX_DIGITS} are read")
    if exponent:
        # the exponent text itself may be long: compare its digits before converting
        e_digits = exponent.lstrip("+-").lstrip("0")
        if len(e_digits) > len(str(MAX_EXPONENT)) or int(e_digits or "0") > MAX_EXPONENT:
            raise ParameterError(name, f"exponent of {text[:40]!r} exceeds the bound "
                                       f"|exponent| <= {MAX_EXPONENT}")
    return _bounded(Fraction(text), text, name)


def parse_exact(value, name: str, *, allow_inf: bool = False):
    """Return ``value`` as an exact :class:`fractions.Fraction` (or the string ``"inf"``).

    Accepts decimals (``0.3``, ``1e-6``), fractions (``3/10``) and, if ``allow_inf``, ``inf``.
    Python ints and Fractions pass through; a Python float is converted through its shortest
    decimal representation (``repr``), so ``0.1`` means one tenth, not the nearest binary double.
    NumPy scalars are accepted like their Python kinds (integers exactly, floating scalars of
    every width through their own shortest representation); ``bool`` and complex numbers are
    refused. A decimal exponent beyond :data:`MAX_EXPONENT` is refused before it is built.

    >>> parse_exact("3/10", "rho")
    Fraction(3, 10)
    >>> parse_exact("1e-3", "lam")
    Fraction(1, 1000)
    """
    import numbers

    if isinstance(value, Fraction):
        return value
    if isinstance(value, bool) or (type(value).__module__ == "numpy"
                                   and type(value).__name__ in ("bool", "bool_")):
        raise ParameterError(name, f"expected a number, got {value!r}")
    if isinstance(value, numbers.Integral):  # int and NumPy's integer scalars
        return _bounded(Fraction(int(value)), "an integer", name)
    if isinstance(value, numbers.Rational):
        return _bounded(Fraction(int(value.numerator), int(value.denominator)), "a rational",
                        name)
    if isinstance(value, numbers.Complex) and not isinstance(value, numbers.Real):
        raise ParameterError(name, f"must be real, got {value!r}")
    if isinstance(value, numbers.Real) and not isinstance(value, str):
        if value != value:
            raise ParameterError(name, "is NaN")
        if value in (float("inf"), float("-inf")):
            if allow_inf and value > 0:
                return INF
            raise ParameterError(name, "must be finite")
        # the shortest decimal of the value's own width (NumPy's str of a float32 is "0.1",
        # Python's repr of a float "0.1"; NumPy 2's repr would be "np.float64(0.1)")
        value = repr(value) if type(value) is float else str(value)
    text = str(value).strip()
    if allow_inf and text.lower() in ("inf", "+inf", "infinity", "oo"):
        return INF
    if "/" in text:
        num, _, den = text.partition("/")
        if _NUMBER.match(num.strip()) and _NUMBER.match(den.strip()):
            d = _exact_decimal(den.strip(), name)
            if d == 0:
                raise ParameterError(name, f"division by zero in {text!r}")
            return _bounded(_exact_decimal(num.strip(), name) / d, text, name)
    elif _NUMBER.match(text):
        return _exact_decimal(text, name)
    shown = text if len(text) <= 60 else text[:40] + f"... ({len(text)} characters)"
    raise ParameterError(name, f"expected a number such as 0.3 or 3/10, got {shown!r}")


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


#: An exact string (:func:`exact_str`) of at most this many characters is shown as it is.
COMPACT_CHARS = 24

#: A value that is a decimal of at most this many significant digits is shown as that decimal
#: (``1e+300``, ``0.49999999999999999999999999999``): exactly what a user can type.
COMPACT_DIGITS = 40

#: Significant digits of a value shown rounded (``~3.33333333333333e+299``).
ROUNDED_DIGITS = 15


def compact_str(x) -> str:
    """A value for a message, a note or a text header, in a few characters, while the value
    itself stays exact (the JSON echo keeps :func:`exact_str`): the exact string when it has
    at most :data:`COMPACT_CHARS` characters (``"3/10"``, ``"1/3"``, ``"-1/2"``, ``"inf"``);
    else the exact decimal when ``x`` is one of at most :data:`COMPACT_DIGITS` significant
    digits, in scientific notation when its exponent is large (``1e+300``, ``-1e-300``); else
    ``~`` and ``x`` rounded to :data:`ROUNDED_DIGITS` significant digits
    (``~3.33333333333333e+299`` for ``10**300/3``). ``x`` may be a Fraction, an int, ``"inf"``
    or a string of such a value; any other string (a SPEC such as ``spike:1``) is returned
    unchanged.

    >>> compact_str(Fraction(10) ** 300), compact_str(Fraction(1, 3))
    ('1e+300', '1/3')
    """
    from decimal import Decimal, Inexact, localcontext

    if isinstance(x, str):
        try:
            x = parse_exact(x, "value", allow_inf=True)
        except ParameterError:
            return x
    if x == INF:
        return INF
    x = Fraction(x)
    exact = exact_str(x)
    if len(exact) <= COMPACT_CHARS:
        return exact
    with localcontext() as ctx:  # Decimal(int) is exact; the quotient is rounded to ctx.prec
        ctx.Emax, ctx.Emin = 10 ** 6, -10 ** 6  # beyond any exact value (MAX_DIGITS)
        ctx.traps[Inexact] = False
        ctx.prec = COMPACT_DIGITS
        ctx.clear_flags()
        d = Decimal(x.numerator) / Decimal(x.denominator)
        if not ctx.flags[Inexact]:
            return format(d.normalize(), "g")
        ctx.prec = ROUNDED_DIGITS
        d = Decimal(x.numerator) / Decimal(x.denominator)
        return "~" + format(d.normalize(), "g")


def float_str(x) -> str:
    """The CSV cell of an exact value read as a number: the shortest decimal of the nearest
    binary64 float (``"2.25"`` for ``9/4``, ``"inf"``), which ``pandas.read_csv`` reads as a
    float64; the exact value goes in a separate column (:func:`exact_str`)."""
    if x == INF:
        return INF
    x = Fraction(x)
    try:
        return repr(float(x))
    except OverflowError:
        return INF if x > 0 else "-" + INF


def numeric_columns(name: str, values) -> tuple[list[str], list[list[str]]]:
    """The CSV columns of one parameter given by its exact strings ``values``: ``name`` (floats,
    :func:`float_str`) and ``name_exact`` when every value is a number, else ``name`` alone (a
    covariance SPEC such as ``piano`` stays text). Returns ``(header, columns)``."""
    values = list(values)
    try:
        exact = [parse_exact(v, name, allow_inf=True) for v in values]
    except ParameterError:
        return [name], [[str(v) for v in values]]
    return [name, f"{name}_exact"], [[float_str(v) for v in exact],
                                     [exact_str(v) for v in exact]]

