"""Ball arithmetic's entry: python-flint's ``arb`` imported on first use, and :func:`arb_of`,
the exact enclosure of a number (an integer, or an ``mpf`` as its binary value) as a ball of radius
zero. A leaf module: :mod:`replica.symbolic.codegen` (the ball namespace of generated code) and
:mod:`replica.symbolic.owen` (Owen's T in balls) both build on it."""
from __future__ import annotations

import mpmath

__all__ = ["NotEnclosable", "arb_of", "ball_key"]


class NotEnclosable(ValueError):
    """An expression has no ball-arithmetic evaluation (the reason says which part)."""


_ARB: list = []  # python-flint's arb, imported on first use


def _arb():
    if not _ARB:
        import flint

        _ARB.append(flint.arb)
    return _ARB[0]


def arb_of(x):
    """``x`` as a ball: an ``arb`` unchanged, an integer exactly, an ``mpf`` exactly (its binary
    value)."""
    arb = _ARB[0] if _ARB else _arb()
    if type(x) is arb or isinstance(x, arb):
        return x
    if isinstance(x, int):
        return arb(x)
    if isinstance(x, mpmath.mpf):
        if mpmath.isinf(x):
            return arb.pos_inf() if x > 0 else arb.neg_inf()
        sign, man, exp, _ = x._mpf_
        return _ball_float(sign, man, exp)
    raise NotEnclosable(f"cannot enclose a value of type {type(x).__name__}")


def _ball_float(sign, man, exp):
    """The exact value of a binary floating-point constant, as a ball of radius 0."""
    return _arb()((-man if sign else man, exp))


def ball_key(x):
    """A ball's exact identity as a hashable key: its midpoint's and radius's binary mantissas
    and exponents, as integers (equal keys: the same ball, to the last bit) -- what the memos of
    ball special functions are keyed on, beside the order and the precision."""
    mid, rad = x.mid().man_exp(), x.rad().man_exp()
    return int(mid[0]), int(mid[1]), int(rad[0]), int(rad[1])
