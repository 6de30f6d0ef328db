"""The logistic loss's proximal map by plain bisection: the reference that the tests of the
engine's root finders (tests/test_logistic.py, tests/test_glm_root_failures.py) compare with."""

import mpmath


def prox_bisection(omega, v, bits):
    """The logistic proximal map by plain bisection on [omega, omega + v] at ``bits + 40``
    bits, to a relative 2^-(bits + 20)."""
    with mpmath.workprec(bits + 40):
        lo, hi = omega, omega + v
        while hi - lo > mpmath.ldexp(1, -bits - 20) * max(1, abs(lo)):
            mid = (lo + hi) / 2
            if mid - omega - v / (1 + mpmath.exp(mid)) > 0:
                hi = mid
            else:
                lo = mid
        return (lo + hi) / 2
