"""Working precision, set only through context managers, and digit accounting.

Every high-precision computation runs inside ``with precision(dps):`` (a thin wrapper around
``mpmath.workdps``), so the global ``mp.dps`` is never left changed. The digits a result
guarantees are measured, not assumed: the computation is repeated at a higher precision and the
number of agreeing significant digits is counted (:func:`agreement_digits`).
"""

from __future__ import annotations

import contextlib

import mpmath


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
    """Significant decimal digits on which ``a`` and ``b`` agree, at most ``cap``.

    Uses the relative difference ``|a - b| / max(|a|, |b|)``; two zeros agree to ``cap`` digits.
    An absolute scale of ``10**-cap`` guards quantities that are (close to) zero.

    >>> import mpmath
    >>> with mpmath.workdps(30):
    ...     agreement_digits(mpmath.mpf('1.2345678'), mpmath.mpf('1.2345679'), 30)
    7
    """
    with mpmath.workdps(cap + 10):
        return _agreement(mpmath.mpf(a) if not isinstance(a, mpmath.mpf) else a,
                          mpmath.mpf(b) if not isinstance(b, mpmath.mpf) else b, cap)


def _agreement(a, b, cap):
    scale = max(abs(a), abs(b))
    diff = abs(a - b)
    if diff == 0:
        return cap
    floor = mpmath.mpf(10) ** (-cap)
    rel = diff / max(scale, floor)
    if rel >= 1:
        return 0
    return int(min(cap, mpmath.floor(-mpmath.log10(rel))))
