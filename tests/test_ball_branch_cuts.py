"""The complex-ball functions of generated integrands are analytic wherever they are finite.

``acb.integral`` and the Gauss--Legendre rule of :mod:`replica.symbolic.ballquad` (its error bound
needs the integrand analytic in a Bernstein ellipse, the bound M read from ball evaluations over
boxes that cover it) both rely on that contract. python-flint's ``acb`` methods ``log1p``,
``atan``, ``acos``, ``asin`` and ``**`` of a non-integer exponent take no ``analytic`` flag: on
a box across their branch cut they return a finite ball of the principal branch, which jumps
there. The namespace of generated ``acb`` code (``codegen._acb_namespace``) returns a ball that
is not finite instead; off the cut its values are python-flint's and contain mpmath's."""

from __future__ import annotations

import mpmath
import pytest
import sympy

flint = pytest.importorskip("flint")

from replica.symbolic import codegen  # noqa: E402

arb, acb = flint.arb, flint.acb
NS = codegen._acb_namespace()

# (function, a box across its cut away from the branch points -- where python-flint's value is
# finite --, mpmath's function)
CASES = [
    ("acos", acb(arb("0.9", 0.2), arb(0, 0.01)), mpmath.acos),
    ("asin", acb(arb("-1.05", 0.1), arb("0.001", 0.01)), mpmath.asin),
    ("atan", acb(arb(0, 0.1), arb("1.8", 0.3)), mpmath.atan),
    ("log1p", acb(arb("-1.4", 0.1), arb(0, 0.1)), mpmath.log1p),
]


@pytest.mark.parametrize("name,across,reference", CASES)
def test_a_box_across_the_cut_is_not_finite(name, across, reference):
    """Across the cut: not finite (python-flint's own method is finite there: the check is
    what this tests). Off the cut, at 0.5 + 0.3i: python-flint's value, containing mpmath's."""
    assert getattr(across, name)().is_finite()  # (the principal branch: finite, not analytic)
    assert not NS[name](across).is_finite()
    off = acb(arb("0.5"), arb("0.3"))
    got = NS[name](off)
    with mpmath.workprec(200):
        ref = reference(mpmath.mpc("0.5", "0.3"))
    assert got.is_finite()
    assert abs(complex(got.real.mid(), got.imag.mid()) - complex(ref)) < 1e-14


def test_a_power_with_an_exponent_that_is_not_an_integer():
    """``x**(3/2)`` is printed as ``ball_pow``: in real balls the power as before (``x ** y``),
    in complex balls not finite on a box that meets x <= 0 (the cut and the branch point 0),
    python-flint's value elsewhere; integer powers and square roots are printed as before."""
    x = sympy.Symbol("x")
    printer = codegen._ArbPrinter.get()
    assert printer.doprint(x ** sympy.Rational(3, 2)).startswith("ball_pow(")
    assert "ball_pow" not in printer.doprint(x ** 3 + sympy.sqrt(x) + 1 / sympy.sqrt(x) + 1 / x)
    three_halves = arb(3) / 2
    assert codegen._arb_namespace()["ball_pow"](arb(2), three_halves).contains(
        arb(2) ** three_halves)
    assert not NS["ball_pow"](acb(arb("-0.1", 0.2), arb(0, 0.1)), three_halves).is_finite()
    assert not NS["ball_pow"](acb(arb(0), arb(0)), three_halves).is_finite()  # (branch point)
    got = NS["ball_pow"](acb(arb("0.5"), arb("0.3")), three_halves)
    assert abs(complex(got.real.mid(), got.imag.mid()) - complex(0.5, 0.3) ** 1.5) < 1e-14


def test_softplus_of_a_box_near_the_real_axis_is_finite():
    """The logistic loss's softplus log(1 + e^v) = log1p(e^v) keeps its values on boxes near
    the real axis (e^v is far from the cut v = i pi there): the certificates that integrate it
    are not refused by the check."""
    v = acb(arb("-3", 0.5), arb(0, 0.25))
    got = NS["softplus"](v)
    assert got.is_finite()
    assert got.real.contains(arb(mpmath.nstr(mpmath.log1p(mpmath.exp(-3)), 30)))
