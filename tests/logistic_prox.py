"""The logistic loss's proximal map by plain bisection: the reference that the tests of the
engine's root finders (tests/test_logistic.py, tests/test_glm_root_failures.py) compare with;
and the map declared as examples/logistic_regression.py declares it (``declared_prox``: the
ball-arithmetic tests, tests/test_implicit_balls.py and tests/test_ballquad.py)."""

import mpmath


def declared_prox():
    """``(PROX, (p, omega, V_))``: the proximal map of the logistic loss as the example declares
    it, p - omega + V l'(p) = 0 with l(p) = log(1 + exp(-p)), on [omega, omega + V]."""
    import sympy

    from replica.symbolic.implicit import implicit_root

    p_, w_, V_ = sympy.symbols("p omega V_", real=True)
    prox = implicit_root("prox_logistic",
                         p_ - w_ + V_ * sympy.diff(sympy.log(1 + sympy.exp(-p_)), p_), p_,
                         (w_, V_), bracket=(w_, w_ + V_))
    return prox, (p_, w_, V_)


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
