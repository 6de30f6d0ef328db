"""Job ``trust56`` (trust55's probe re-landed with a small, shared budget): the rounding of an
mpmath Gaussian integrand (one with no ball form) that cancels at every point, which neither
the adaptive Gauss--Legendre rule's estimate nor ``mpmath.quad``'s sees (their levels share the
noise), is measured by :func:`replica.symbolic.codegen._noise_bits` and the integral recomputed
at a precision raised by at most ``_PROBE_RAISE_MAX_BITS`` (64) bits, out of the budget
``spent`` of :func:`replica.symbolic.codegen._gauss_mp_rule`; beyond, an error naming the
cancellation.

The integrand :math:`(J_0(z) + c)^2 - c^2 - 2cJ_0(z)` (SymPy keeps it unexpanded; the Bessel
function has no ball version, so it is evaluated in mpmath) equals :math:`J_0(z)^2` and loses
:math:`\\log_2 c^2` bits at every point. The reference, at 60 digits and written here (none of
the engine's code), is :math:`E\\,J_0(Z)^2 = \\frac1\\pi\\int_0^\\pi e^{-\\cos^2 t}
I_0(\\cos^2 t)\\,dt` (Neumann's formula for :math:`J_0^2` and :math:`E\\,J_0(bZ) =
e^{-b^2/4}I_0(b^2/4)`). Before (base 7b5728c): at 30 digits and :math:`c = 10^5` a value
:math:`4.2\\cdot 10^{-28}` off, at :math:`c \\ge 10^{30}` the value 0 (every node exactly 0),
the tanh--sinh fallback at 16 digits and :math:`c = 10^8` one :math:`8.6\\cdot 10^{-15}` off,
all with error estimates below the tolerance.
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
    _value(ev, 16, "1")  # (the mp integrals are prepared at the first evaluation)
    assert all(g.fast is None for g in ev._gauss["mp"])  # the mpmath integrand's path
    return ev, ref


def _value(ev, dps, cv):
    with mpmath.workdps(dps):
        return ev.mp([mpmath.mpf(cv)])[0]


@pytest.mark.parametrize("dps, cv", [(30, "1e5"), (50, "1e10"), (16, "1e10")])
def test_rule_sees_cancellation_inside_an_mpmath_integrand(cancelling, dps, cv):
    """(0.05-0.15 s each) 1e10 at 16 digits: 60 of the 64 bits the probe may add."""
    ev, ref = cancelling
    assert abs(_value(ev, dps, cv) - ref) <= mpmath.mpf(10) ** -dps * ref


@pytest.mark.parametrize("dps, cv", [(16, "1e8"),
                                     pytest.param(50, "1e10", marks=pytest.mark.slow)])
def test_tanh_sinh_fallback_sees_cancellation(cancelling, monkeypatch, dps, cv):
    """(0.35 s; 50 digits 1 s CPU) The Gauss--Legendre rule made to give up: every value comes from
    ``mpmath.quad``, the recomputation's too."""
    ev, ref = cancelling
    monkeypatch.setattr(codegen, "_gauss_mp_rule", lambda *a, **k: None)
    assert abs(_value(ev, dps, cv) - ref) <= mpmath.mpf(10) ** -dps * ref


@pytest.mark.parametrize("cv", ["1e11", "1e30", "1e400"])
def test_cancellation_beyond_the_small_raise_is_refused(cancelling, cv):
    """(0.01-0.15 s) 16 digits: c = 1e11 asks 65 bits, 1e30 (every node 0 at the working
    precision) more, 1e400 is exactly 0 at every probe at 64 more bits and seen at
    ``_PROBE_DEEP_BITS``: an error naming the cancellation, not a value (0 before)."""
    ev, _ = cancelling
    with pytest.raises(QuadratureError, match="cancellation"):
        _value(ev, 16, cv)


def test_the_raise_comes_out_of_the_shared_budget(cancelling, monkeypatch):
    """(0.1 s) c = 1e5 at 16 digits: the probe asks 27 bits; the recomputation is called with
    them as ``spent`` and ``probed``; with 240 bits of the 256 already spent (or 50 of the
    probe's 64), it is refused instead."""
    ev, ref = cancelling
    g = ev._gauss["mp"][0]
    calls = []
    rule = codegen._gauss_mp_rule

    def spy(*a, **k):
        calls.append((k.get("spent", 0), k.get("probed", 0)))
        return rule(*a, **k)

    monkeypatch.setattr(codegen, "_gauss_mp_rule", spy)
    with mpmath.workdps(16):
        c5 = [mpmath.mpf("1e5")]
        assert abs(codegen._gauss_mp(g, c5) - ref) <= mpmath.mpf(10) ** -16 * ref
        assert calls[0] == (0, 0) and len(calls) == 2 and 0 < calls[1][0] == calls[1][1] <= 64
        with pytest.raises(QuadratureError, match="cancellation"):
            codegen._gauss_mp(g, c5, spent=codegen._ROUNDING_MAX_BITS - 16)
        with pytest.raises(QuadratureError, match="cancellation"):
            codegen._gauss_mp(g, c5, spent=50, probed=50)


def test_ball_integrands_are_not_probed(monkeypatch):
    """(0.1 s) An integrand with a ball form (its radii bound its rounding) costs no probe."""
    calls = []
    probe = codegen._integrand_noise
    monkeypatch.setattr(codegen, "_integrand_noise",
                        lambda *a, **k: calls.append(1) or probe(*a, **k))
    ev = Evaluator([gauss(sympy.erf(c * z) ** 2, z)], [c])
    with mpmath.workdps(30):
        assert ev.mp([mpmath.mpf(2)])[0] > 0
    assert all(g.fast is not None for g in ev._gauss["mp"])
    assert calls == []

