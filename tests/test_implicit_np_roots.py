"""The float64 roots of a function defined by an equation (``implicit_root``, the vectorised
bracketed Newton iteration of ``_Numeric._np_solve``): the first iterate is where the chord
through the bracket's ends crosses 0 (false position), and the roots are those of closed forms
to a few units in the last place."""

from __future__ import annotations

import numpy as np
import sympy

from replica.symbolic.implicit import implicit_root

p, x = sympy.symbols("p x", real=True)


def _counted(R):
    """The numeric side of ``R`` with its ``(F, F')`` function counted (the elements of each
    call)."""
    num = R._imp_
    num._np = num._functions("numpy")
    F, dF, lo, hi, both = num._np
    elements = []

    def counted(*args):
        elements.append(int(np.size(args[0])))
        return both(*args)

    num._np = (F, dF, lo, hi, counted)
    return num, elements


def test_the_first_iterate_is_where_the_chord_through_the_bracket_ends_crosses_zero():
    """F(p) = 3p - x on [-1 - |x|, 1 + |x|]: the chord through the ends is F itself, so the first
    iterate is the root (to rounding) and one evaluation of (F, F') ends the iteration; from
    the bracket's midpoint, 0, it took a Newton step and a second evaluation."""
    R = implicit_root("r_np_falsi_linear", 3 * p - x, p, (x,), bracket=(-1 - abs(x), 1 + abs(x)))
    num, elements = _counted(R)
    xs = np.array([0.3, -2.0, 5.5, 7.0, -11.25])
    roots = num.np(xs)
    assert np.max(np.abs(roots - xs / 3) / np.abs(xs / 3)) <= 4 * np.finfo(float).eps
    assert elements == [xs.size], elements


def test_float64_roots_agree_with_a_closed_form():
    """The root of p^3 + p - x (Cardano: u - 1/(3u), u = cbrt(x/2 + sqrt(x^2/4 + 1/27))),
    written here independently of the engine, over six decades of x."""
    R = implicit_root("r_np_cardano", p**3 + p - x, p, (x,), bracket=(-1 - abs(x), 1 + abs(x)))
    num, _ = _counted(R)
    xs = np.concatenate([np.geomspace(1e-3, 1e3, 40), -np.geomspace(1e-3, 1e3, 40)])
    roots = num.np(xs)
    import mpmath

    with mpmath.workdps(40):
        exact = []
        for v in xs:
            v = mpmath.mpf(v)
            u = mpmath.cbrt(v / 2 + mpmath.sqrt(v**2 / 4 + mpmath.mpf(1) / 27))
            exact.append(float(u - 1 / (3 * u)))
    exact = np.array(exact)
    assert np.max(np.abs(roots - exact) / np.abs(exact)) <= 4 * np.finfo(float).eps
