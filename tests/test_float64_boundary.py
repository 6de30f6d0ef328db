r"""The float64 path near the boundary of a model's domain: a ``converged`` point is one whose
values hold the digits it claims (:data:`~replica.numerics.float64_checks.CLAIM_RTOL`), and
where no solution exists no point says ``converged``.

The Bayes-optimal perceptron with Rademacher teacher weights (Barbier, Krzakala, Macris, Miolane
and Zdeborova, PNAS 2019): the branch :math:`m < 1` ends at the algorithmic threshold
:math:`\alpha_{\rm alg} \approx 1.4926`; above it the only solution is :math:`m = 1`. The float64
iteration reached :math:`m = 0.99965` at :math:`\alpha = 1.5` and 2, where the sign channel's
integrand has width :math:`1/c \approx 0.02` (:math:`c = \sqrt{m/(1-m)} \approx 53`) and the
float64 rule's 24 nodes on :math:`[-1, 1]` do not resolve it: that rule's residual vanished
there (:math:`\hat m = 13.6`, the true right-hand side 57.9), and the extended-precision check,
which used the same rule, said ``converged``. (The check now estimates the rule's error with a
finer rule, and the layouts cut at such narrow features, so the fixed rule resolves it.)

The reference solutions are solved here, independently of the engine, from the published state
evolution with SciPy's adaptive quadrature:
:math:`m = \mathbb E\tanh(\hat m + \sqrt{\hat m} Z)` and
:math:`\hat m = \frac{2\alpha}{1-m}\int\mathcal D\xi\,\mathcal N(c\xi)^2/H(c\xi)`, the last
written with ``erfcx``: :math:`\mathcal N(y)^2/H(y) = e^{-y^2/2}/(\pi\,\mathrm{erfcx}(y/\sqrt2))`.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from scipy import integrate, optimize, special

import replica

MODEL = str(Path(__file__).resolve().parents[1] / "examples" / "perceptron_teacher.py")
BELOW = np.array([1.0, 1.1, 1.2, 1.3, 1.4, 1.45, 1.48])  # below alpha_alg = 1.4926...
ABOVE = np.array([1.5, 1.6, 1.8, 2.0])  # no solution with m < 1


def _gauss(f, points=(0.0,)):
    """E f(Z), Z standard normal (adaptive quadrature, tight tolerances)."""
    g = lambda z: math.exp(-z * z / 2) / math.sqrt(2 * math.pi) * f(z)  # noqa: E731
    return integrate.quad(g, -12, 12, points=points, epsabs=1e-15, epsrel=1e-13, limit=400)[0]


def _mhat(m: float, alpha: float) -> float:
    c = math.sqrt(m / (1 - m))
    w = 1 / c
    f = lambda x: (math.exp(-(c * x) ** 2 / 2)  # noqa: E731
                   / (math.pi * special.erfcx(c * x / math.sqrt(2))))
    return 2 * alpha / (1 - m) * _gauss(f, points=(-5 * w, -w, 0.0, w, 5 * w))


def _reference_m(alpha: float) -> float:
    """The smallest m in (0, 1) of the state evolution's fixed point (the stable branch that
    the declared start m = 1/2 and the iteration reach)."""
    def F(m):
        mh = _mhat(m, alpha)
        return _gauss(lambda z: math.tanh(mh + math.sqrt(mh) * z),
                      points=(-math.sqrt(mh),)) - m

    grid = np.linspace(0.05, 0.95, 37)
    values = [F(m) for m in grid]
    for a, b, fa, fb in zip(grid, grid[1:], values, values[1:]):
        if fa > 0 >= fb:
            return optimize.brentq(F, a, b, xtol=1e-15, rtol=1e-14)
    raise AssertionError(f"no fixed point with m < 0.95 at alpha = {alpha}")


@pytest.fixture(scope="module")
def curve():
    alpha = np.concatenate([BELOW, ABOVE])
    return alpha, replica.solve_float64(MODEL, alpha=alpha, prior="rademacher", strict=False)


def test_reference_has_no_branch_above_alpha_alg():
    """The independent state evolution itself: above alpha_alg, E tanh(...) - m stays positive
    on all of (0, 0.999] (the iteration runs to m = 1), below it there is a root."""
    alpha = 1.5
    for m in np.linspace(0.05, 0.999, 40):
        mh = _mhat(m, alpha)
        assert _gauss(lambda z: math.tanh(mh + math.sqrt(mh) * z),
                      points=(-math.sqrt(mh),)) - m > 0
    assert 0.5 < _reference_m(1.2) < 0.8


def test_float64_below_alpha_alg_holds_its_digits(curve):
    alpha, r = curve
    n = len(BELOW)
    assert list(r["status"][:n]) == ["converged"] * n
    for a, m in zip(BELOW, r["m"][:n]):
        ref = _reference_m(float(a))
        assert abs(m - ref) <= 1e-8 * ref, (a, m, ref)


def test_float64_above_alpha_alg_is_not_converged(curve):
    """Above alpha_alg no m < 1 solution exists: no float64 point may say ``converged`` (the
    check, integrating with a finer rule, sees the float64 rule's error at the point its
    iteration stopped at, and the re-solve with the finer rule finds no solution)."""
    alpha, r = curve
    n = len(BELOW)
    status = list(r["status"][n:])
    assert "converged" not in status, dict(zip(ABOVE, status))
    assert not r["converged"][n:].any()
    # whatever is reported there is not a solution of the true equations
    for a, m, mh in zip(ABOVE, r["m"][n:], r["mhat"][n:]):
        if np.isfinite(m) and m < 1:
            assert abs(_mhat(float(m), float(a)) - mh) > 1e-3 * mh


def test_fixed_rule_resolves_the_sign_channel_at_the_spurious_root():
    """At m = 0.99965, alpha = 1.5 the sign channel's integrand has width 1/c = 0.019 at
    xi = 0: the fixed float64 rule gave mhat = 13.6 for 57.9 there (the spurious root of the
    float64 iteration, which the check then had to see). The layouts now cut at that feature
    (:func:`replica.symbolic.gaussian.narrow_features`): the fixed rule alone, without the
    check's finer rule, is within 1e-9 of the reference. (The check seeing a rule error that no
    cut point removes: tests/test_float64_rule_error.py.)"""
    m, alpha = 0.9996510030771122, 1.5
    ref = _mhat(m, alpha)
    p = replica._problem(MODEL)
    from replica.numerics.machine import machine

    mach = machine(p, p.variants[0])
    P = [np.array([alpha]), np.array([1.0])]  # alpha, prior = rademacher
    names = list(mach.outline.parameters)
    assert names == ["alpha", "prior"], names
    k = mach.report_names.index("mhat")
    coarse = float(np.ravel(mach.evaluate("report", "np", [np.array([m])], P, None)[k])[0])
    assert abs(coarse - ref) <= 1e-9 * ref, (coarse, ref)


def test_float64_above_alpha_alg_finds_no_solution(curve):
    """With the Gaussian integrals resolved (the points re-solved with a finer rule where the
    fixed one disagrees with it), the iteration above alpha_alg finds no m < 1 solution: the
    points are not results (NaN values, a status that says the iteration did not end at a
    solution), and ``strict=True`` raises the convergence error (the CLI's exit 3)."""
    alpha, r = curve
    n = len(BELOW)
    for s in r["status"][n:]:
        assert s in ("max-iterations", "inadmissible", "non-finite"), s
    assert np.isnan(r["m"][n:]).all()
    from replica.errors import ConvergenceError

    with pytest.raises(ConvergenceError, match="did not converge"):
        replica.solve_float64(MODEL, alpha=np.array([1.2, 1.6]), prior="rademacher")


@pytest.mark.slow
def test_gaussian_prior_alpha_20_value_from_the_resolved_rule():
    """Gaussian teacher prior at alpha = 20: m = 0.99523, c = 14.4. The fixed rule alone
    stopped at m = 0.996442 (relative error 1.2e-3, reported ``not-verified``); the re-solve
    with the finer rule gives the state evolution's m = mhat/(1 + mhat) to 1e-10. (Still
    ``not-verified``: the Jacobian is NaN there -- the Rademacher term's integrals, weighted by
    rho = 0, overflow at mhat = 208 -- so no condition is known and nothing is claimed.)"""
    def F(m):
        mh = _mhat(m, 20.0)
        return mh / (1 + mh) - m

    ref = optimize.brentq(F, 0.99, 0.9999, xtol=1e-16, rtol=1e-15)
    r = replica.solve_float64(MODEL, alpha=np.array([20.0]), prior="gaussian", strict=False)
    assert r["status"][0] in ("converged", "not-verified")
    assert abs(r["m"][0] - ref) <= 1e-10 * ref, (r["m"][0], ref)


def test_points_the_check_accepts_are_not_solved_again(monkeypatch):
    """Below alpha_alg every point is accepted by the check (which estimates the rule's error
    with integrals CHECK_SPLIT times finer than the rule): no point is solved again with a
    finer rule, so a curve costs one solve and one check (solving every point again with finer
    rules made a 100-point hinge SVM curve 0.07 -> 10 s)."""
    from replica.numerics.machine import Machine

    solves = []
    real = Machine._grid_numpy

    def spy(self, *args, **kwargs):
        solves.append(len(args))
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Machine, "_grid_numpy", spy)
    r = replica.solve_float64(MODEL, alpha=BELOW[:3], prior="rademacher", strict=False)
    assert list(r["status"]) == ["converged"] * 3
    assert len(solves) == 1
