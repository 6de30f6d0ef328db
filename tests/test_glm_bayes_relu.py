"""Bayes-optimal inference on the noiseless ReLU channel y = max(0, u) with a Gaussian prior
(:func:`replica.glm.BayesOptimal`, ``ReLU(0)``), against the replica-symmetric state evolution
written out here by hand: Psi_out(m) = E_xi[Phi(-t) log Phi(-t)] - (log(2 pi (1 - m)) + 1)/4,
t = sqrt(m/(1 - m)) xi (the atom at y = 0 and the Gaussian density on y > 0, the continuous
part's average done by hand with E Phi(t) = 1/2 and E[t phi(t)] = 0), psi_P0(mh) =
mh/2 - log(1 + mh)/2, so m = mh/(1 + mh) with mh = 2 alpha Psi_out'(m), by mpmath.quad,
mpmath.diff and mpmath.findroot. Known limits: the overlap vanishes with alpha, and tends to 1
as alpha -> 2 (the labels y > 0, half of them, are exact linear measurements of the teacher:
perfect recovery from alpha = 2 on). The noisy ReLU is tests/test_glm_bayes_relu_noisy.py (a
two-dimensional integral); the noiseless absolute value is tests/test_phase_retrieval.py, the
noisy one a one-line model error."""

from __future__ import annotations

import dataclasses

import mpmath
import pytest
import sympy

from replica.glm import AbsoluteValue, BayesOptimal, Gaussian, ReLU
from replica.modeling import ModelError

R = sympy.Rational

MODEL = BayesOptimal("bayes_relu", prior=Gaussian(), channel=ReLU(0))


def psi_out(m):
    V = 1 - m
    k = mpmath.sqrt(m / V)

    def f(x):
        P = mpmath.ncdf(-k * x)
        return P * mpmath.log(P) * mpmath.npdf(x) if P > 0 else mpmath.mpf(0)
    return (mpmath.quad(f, [-mpmath.inf, -3, 0, 3, mpmath.inf])
            - (mpmath.log(2 * mpmath.pi * V) + 1) / 4)


def dpsi_out(m):
    r""":math:`\Psi_{out}'(m)`, ``psi_out`` differentiated here by hand under the integral:
    with :math:`k = \sqrt{m/(1 - m)}`, :math:`dk/dm = 1/(2k(1 - m)^2)` and
    :math:`\partial_k[\Phi(-k\xi)\log\Phi(-k\xi)] = -\xi\varphi(k\xi)(1 + \log\Phi(-k\xi))`,
    :math:`\Psi_{out}'(m) = -\tfrac{dk}{dm}E_\xi[\xi\varphi(k\xi)(1 + \log\Phi(-k\xi))]
    + 1/(4(1 - m))`. One quadrature at the working precision (``mpmath.diff`` of ``psi_out``
    needed two at about 2.7 times the bits); the two agree (the first test below)."""
    V = 1 - m
    k = mpmath.sqrt(m / V)
    dk = 1 / (2 * k * V**2)

    def f(x):
        P = mpmath.ncdf(-k * x)
        return (x * mpmath.npdf(k * x) * (1 + mpmath.log(P)) * mpmath.npdf(x) if P > 0
                else mpmath.mpf(0))
    return -dk * mpmath.quad(f, [-mpmath.inf, -3, 0, 3, mpmath.inf]) + 1 / (4 * V)


def handwritten_overlap(alpha):
    def F(m):
        mh = 2 * alpha * dpsi_out(m)
        return m - mh / (1 + mh)
    return mpmath.findroot(F, (mpmath.mpf("0.0001"), mpmath.mpf("0.9999")), solver="anderson")


def test_bayes_relu_free_entropy_equals_the_handwritten_one():
    from replica.symbolic.codegen import Evaluator

    phi = MODEL.free_energy
    syms = sorted(phi.free_symbols, key=str)
    with mpmath.workdps(30):
        x = {"alpha": mpmath.mpf(3) / 2, "m": mpmath.mpf(1) / 3, "mhat": mpmath.mpf(1) / 2}
        got = Evaluator([phi], syms).mp([x[str(s)] for s in syms])[0]
        m, mh = x["m"], x["mhat"]
        ref = -m * mh / 2 + mh / 2 - mpmath.log(1 + mh) / 2 + x["alpha"] * psi_out(m)
        assert abs(got - ref) < mpmath.mpf(10) ** -25, (got, ref)
        # the hand-differentiated channel term (used by the state evolution below) is the
        # numerical derivative of this one
        for m in (mpmath.mpf(1) / 3, mpmath.mpf(9) / 10):
            want = mpmath.diff(psi_out, m)
            assert abs(dpsi_out(m) - want) < mpmath.mpf(10) ** -25 * abs(want), (m, want)


@pytest.mark.slow
def test_bayes_relu_state_evolution_and_limits():
    ms = {}
    for a in ("1/100", "1", "3/2"):
        got = MODEL.solve(alpha=R(a), dps=30)
        assert got.converged
        with mpmath.workdps(30):
            ref = handwritten_overlap(mpmath.mpf(R(a).p) / R(a).q)
            m = mpmath.mpf(got.all_values["m"])
            assert abs(m - ref) < mpmath.mpf(10) ** -20 * ref, (a, m, ref)
            assert abs(mpmath.mpf(got.all_values["mmse"]) - (1 - ref)) < mpmath.mpf(10) ** -20
        ms[a] = m
    assert ms["1/100"] < R(1, 100)  # the overlap vanishes with alpha
    assert ms["3/2"] > R(9, 10)  # and tends to 1 as alpha -> 2 (perfect recovery)


def test_bayes_relu_unsupported_channels_are_one_line_errors():
    """A regression link other than the identity, the ReLU and the absolute value is not
    derived (one line); the noiseless absolute value is (tests/test_phase_retrieval.py), and so
    are the noisy ReLU (tests/test_glm_bayes_relu_noisy.py) and the noisy absolute value
    (tests/test_glm_bayes_abs_noisy.py)."""
    leaky = dataclasses.replace(ReLU("sigma"), name="leaky", link=(sympy.Rational(1, 2), 1))
    with pytest.raises(ModelError, match="leaky channel") as e:
        BayesOptimal("b", prior=Gaussian(), channel=leaky)
    assert "\n" not in str(e.value) and "two-dimensional" in str(e.value)
    BayesOptimal("b", prior=Gaussian(), channel=ReLU("sigma"))
    BayesOptimal("b", prior=Gaussian(), channel=AbsoluteValue("sigma"))


def test_the_example_refuses_alpha_at_perfect_recovery(cli):
    """examples/glm_bayes_relu.py declares alpha in (0, 2): at alpha = 2 (and above) the overlap
    is 1, a boundary point the solver would iterate towards without end; one line, exit 2."""
    for alpha in ("2", "5/2"):
        rc, out, err = cli("solve", "--model", "examples/glm_bayes_relu.py", "--alpha", alpha)
        assert rc == 2, (rc, out, err)
        assert len(err.strip().splitlines()) == 1 and "--alpha" in err and "(0, 2)" in err
