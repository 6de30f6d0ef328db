"""Job ``trust55``: the rounding of an mpmath Gaussian integrand (one with no ball form) that
cancels at every point, which neither the adaptive Gauss--Legendre rule's estimate nor
``mpmath.quad``'s sees (their levels share the noise), is measured by
:func:`replica.symbolic.codegen._integrand_noise` and the integral recomputed at a raised
precision.

The integrand :math:`(J_0(z) + c)^2 - c^2 - 2cJ_0(z)` (SymPy keeps it unexpanded; the Bessel
function has no ball version, so it is evaluated in mpmath) equals :math:`J_0(z)^2` and loses
:math:`\\log_{10} c^2` digits at every point. The reference, at 60 digits and written here
(none of the engine's code), is :math:`E\\,J_0(Z)^2 = \\frac1\\pi\\int_0^\\pi e^{-\\cos^2 t}
I_0(\\cos^2 t)\\,dt` (Neumann's formula for :math:`J_0^2` and :math:`E\\,J_0(bZ) =
e^{-b^2/4}I_0(b^2/4)`; it agrees with ``mpmath.quad`` of :math:`J_0(z)^2\\varphi(z)` to 60 digits). Before the
fix (base 222e174), at :math:`c = 10^5` the rule returned 16-digit values
:math:`3.5\\cdot 10^{-14}` off and 30-digit values :math:`4\\cdot 10^{-28}` off, at
:math:`c = 10^{30}` the value 0 (every node exactly 0), and the tanh--sinh fallback at 50
digits and :math:`c = 10^{10}` one :math:`2.7\\cdot 10^{-44}` off, all with error estimates
below the tolerance.
"""

import mpmath
import pytest
import sympy

import replica.symbolic.codegen as codegen
from replica.symbolic.codegen import Evaluator, QuadratureError
from replica.symbolic.gaussian import gauss

z = sympy.Symbol("z", real=True)
c = sympy.Symbol("c", positive=True)


@pytest.fixture(scope="module")
def cancelling():
    f = sympy.besselj(0, z)
    ev = Evaluator([gauss((f + c) ** 2 - c ** 2 - 2 * c * f, z)], [c])
    with mpmath.workdps(60):
        # Neumann's J0(z)^2 = (1/pi) int_0^pi J0(2z cos t) dt and E J0(bZ) = exp(-b^2/4)
        # I0(b^2/4): E J0(Z)^2 = (1/pi) int_0^pi exp(-cos^2 t) I0(cos^2 t) dt
        ref = mpmath.quad(lambda t: mpmath.exp(-mpmath.cos(t) ** 2)
                          * mpmath.besseli(0, mpmath.cos(t) ** 2), [0, mpmath.pi]) / mpmath.pi
    return ev, ref


def _value(ev, dps, cv):
    with mpmath.workdps(dps):
        return ev.mp([mpmath.mpf(cv)])[0]


@pytest.mark.parametrize("dps, cv", [(16, "1e5"), (30, "1e8"), (16, "1e30")])
def test_rule_sees_cancellation_inside_an_mpmath_integrand(cancelling, dps, cv):
    """1e30: 60 digits lost, every node exactly 0 at the working precision."""
    ev, ref = cancelling
    got = _value(ev, dps, cv)
    assert all(g.fast is None for g in ev._gauss["mp"])  # the mpmath integrand's path
    assert abs(got - ref) <= mpmath.mpf(10) ** -dps * ref


@pytest.mark.slow
def test_tanh_sinh_fallback_sees_cancellation(cancelling, monkeypatch):
    """The Gauss--Legendre rule made to give up: every value comes from ``mpmath.quad``."""
    ev, ref = cancelling
    monkeypatch.setattr(codegen, "_gauss_mp_rule", lambda *a, **k: None)
    for dps, cv in [(16, "1e8")]:  # before: 8.6e-15 off (50 digits, c = 1e10: 2.7e-44)
        got = _value(ev, dps, cv)
        assert abs(got - ref) <= mpmath.mpf(10) ** -dps * ref


def test_cancellation_beyond_the_cap_is_refused(cancelling):
    """c = 1e200: 400 digits (1329 bits) lost at every point, beyond the 1024 bits the paths
    add: an error naming the cancellation, not a value."""
    ev, _ = cancelling
    with pytest.raises(QuadratureError, match="cancellation"):
        _value(ev, 16, "1e200")
