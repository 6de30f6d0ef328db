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


def test_longdouble_arguments_solved_before_are_recognised_whatever_their_padding():
    """The roots' memo compares its arguments' bytes; x86's 80-bit ``longdouble`` is stored in
    16 bytes whose last 6 are padding NumPy leaves undefined, so equal arguments computed twice
    may differ there. Two copies of the same ``longdouble`` arguments with different padding
    (written here byte by byte) are solved once, with the same roots; a ``-0.0`` beside a
    ``0.0`` is still another argument (its significant bytes differ). Before, the second call
    solved them again (the float64 check's extended-precision integrals re-solved the roots of
    every integral at the same nodes)."""
    from replica.symbolic.implicit import _significant_bytes, _value_bytes

    R = implicit_root("r_np_memo_padding", p**3 + p - x, p, (x,),
                      bracket=(-1 - abs(x), 1 + abs(x)))
    num, elements = _counted(R)
    ld = np.dtype(np.longdouble)
    xs = np.linspace(-3, 5, 7).astype(np.longdouble)
    width = _significant_bytes(ld)
    first = num.np(xs.copy())
    solved = list(elements)
    assert solved and solved[0] == xs.size
    if width < ld.itemsize:  # (x86: pad the copy's unused bytes with another pattern)
        raw = xs.copy().view(np.uint8).reshape(xs.size, ld.itemsize)
        raw[:, width:] = 0xA5
        other = raw.reshape(-1).view(np.longdouble)
        assert other.tobytes() != xs.tobytes() and np.array_equal(other, xs)
    else:
        other = xs.copy()
    again = num.np(other)
    assert elements == solved, elements  # (recognised: not evaluated again)
    assert np.array_equal(again, first)
    assert np.all(np.isfinite(first)) and np.max(np.abs(first**3 + first - xs)) < 1e-15
    zeros = np.array([0.0, -0.0], dtype=np.longdouble)
    assert not np.array_equal(_value_bytes(zeros[:1]), _value_bytes(zeros[1:]))
