"""Working precision, set only through context managers, and digit accounting.

Every high-precision computation runs inside ``with precision(dps):`` (a thin wrapper around
``mpmath.workdps``), so the global ``mp.dps`` is never left changed. The digits a result
guarantees are measured, not assumed: the computation is repeated at a higher precision and the
number of agreeing significant digits is counted (:func:`agreement_digits`).
"""

from __future__ import annotations

import contextlib
import functools

import mpmath


MIN_DPS, MAX_DPS = 5, 10000
"""The working precisions a user may ask for, in decimal digits (``--dps`` and ``dps=``)."""


def check_dps(dps, name: str = "dps") -> int:
    """``dps`` as an ``int`` if it is a precision a user may ask for (an integer in
    :data:`MIN_DPS`..:data:`MAX_DPS`; an integral float such as ``30.0`` is accepted, a bool, a
    string, a fraction or a non-integral float is not); otherwise
    :class:`~replica.errors.ParameterError` naming ``name`` (exit status 2 on the command
    line)."""
    import numbers

    from ..errors import ParameterError

    if isinstance(dps, bool) or not isinstance(dps, (numbers.Integral, float)):
        raise ParameterError(name, f"must be an integer in {MIN_DPS}..{MAX_DPS}, got {dps!r}")
    if isinstance(dps, float) and not dps.is_integer():
        raise ParameterError(name, f"must be an integer in {MIN_DPS}..{MAX_DPS}, got {dps!r}")
    v = int(dps)
    if not MIN_DPS <= v <= MAX_DPS:
        raise ParameterError(name, f"must lie in {MIN_DPS}..{MAX_DPS}, got {v}")
    return v


@contextlib.contextmanager
def precision(dps: int):
    """Run the body at ``dps`` decimal digits; restores the previous precision on exit."""
    if int(dps) != dps or dps < 5:
        from ..errors import ParameterError

        raise ParameterError("--dps", f"must be an integer >= 5, got {dps!r}")
    with mpmath.workdps(int(dps)):
        yield


def allow_integer_strings(digits: int) -> None:
    """Let Python turn integers of ``digits`` decimal digits into strings.

    CPython refuses ``str(n)`` beyond 4300 digits by default (a guard against quadratic-time
    conversions of untrusted input); a value printed to ``--dps`` digits above that needs a
    larger limit. The limit is process-wide and is only ever raised, to what is asked for."""
    import sys

    limit = sys.get_int_max_str_digits()
    if 0 < limit < digits:
        sys.set_int_max_str_digits(int(digits))


@contextlib.contextmanager
def ball_precision(dps: int):
    """Run the body with python-flint's ball arithmetic (``arb``) at ``dps`` decimal digits (its
    global context is restored on exit)."""
    import flint

    saved = flint.ctx.prec
    flint.ctx.dps = int(dps)
    try:
        yield
    finally:
        flint.ctx.prec = saved


def agreement_digits(a, b, cap: int) -> int:
    r"""Significant decimal digits on which ``a`` and ``b`` agree, at most ``cap``.

    The largest :math:`k \le` ``cap`` with :math:`|a - b| \le 10^{-k} \max(|a|, |b|)`: a
    purely relative measure, with no absolute floor, so a value of size :math:`10^{-63}` is held
    to its own significant digits exactly as a value of size 1 is (an absolute floor
    :math:`10^{-c}` would let two values below it agree to ``cap`` digits whatever their digits).
    Two equal values (two zeros included) agree to ``cap`` digits; a zero and a nonzero value
    agree on none.

    >>> import mpmath
    >>> with mpmath.workdps(30):
    ...     agreement_digits(mpmath.mpf('1.2345678'), mpmath.mpf('1.2345679'), 30)
    7
    >>> with mpmath.workdps(30):
    ...     agreement_digits(mpmath.mpf('2.0833333333333756e-63'),
    ...                      mpmath.mpf('2.0833333333333333e-63'), 30)
    13
    """
    with mpmath.workdps(cap + 10):
        return _agreement(mpmath.mpf(a) if not isinstance(a, mpmath.mpf) else a,
                          mpmath.mpf(b) if not isinstance(b, mpmath.mpf) else b, cap)


def _agreement(a, b, cap):
    diff = abs(a - b)
    if diff == 0:
        return cap
    rel = diff / max(abs(a), abs(b))
    if rel >= 1:
        return 0
    if rel <= _tenth_power(cap, mpmath.mp.prec):  # the usual case: all ``cap`` digits agree
        return cap
    # an estimate of -log10(rel) from its binary exponent (within one of it), then exact
    # comparisons: k is the largest integer <= cap with rel <= 10**-k, whatever the estimate
    k = max(0, min(cap, int(-mpmath.mag(rel) * 0.30102999566398)))
    prec = mpmath.mp.prec
    while k > 0 and rel > _tenth_power(k, prec):
        k -= 1
    while k < cap and rel <= _tenth_power(k + 1, prec):
        k += 1
    return k


@functools.lru_cache(maxsize=1024)
def _tenth_power(k: int, prec: int):
    """``10**-k`` at the working precision ``prec`` (bits) -- the number ``_agreement``'s loop
    compares with, computed once."""
    with mpmath.workprec(prec):
        return mpmath.mpf(10) ** (-k)
