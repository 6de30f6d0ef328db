r"""The float64 check sees the Gaussian-integral rule's own error (not only float64 rounding).

The extended-precision part of :meth:`~replica.numerics.machine.Machine.assess` recomputes the
equations and reported values with the float64 path's own quadrature rule (the same nodes), so
it measures rounding only; the rule's truncation error is estimated apart, in float64, by the
rule with every piece cut in ``CHECK_SPLIT`` parts. A point is ``converged`` only if the sum of
both is within the claim.

The case: the Bayes-optimal teacher perceptron with a Gaussian prior at alpha = 10 solved with
the fixed rule only (:meth:`Machine.grid` without the check): mhat = 52.7, c = sqrt(mhat) = 7.3,
the channel integrand varies on the scale 1/c, and the 24-node rule's mhat is about 5e-7
relative off -- above the float64 claim of 1e-8, while its residual is zero to rounding in the
rule's own equations. The reference is the state evolution solved here with SciPy's adaptive
quadrature, independently of the engine: m = mhat/(1 + mhat), c = sqrt(mhat),
mhat = 2 alpha (1 + mhat) E_xi[N(c xi)^2/H(c xi)], N(t)^2/H(t) = exp(-t^2/2)/(pi erfcx(t/sqrt 2)).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from scipy import integrate, optimize, special

import replica
from replica.numerics.float64_checks import CLAIM_RTOL, point_status
from replica.numerics.machine import machine

MODEL = str(Path(__file__).resolve().parents[1] / "examples" / "perceptron_teacher.py")
ALPHA = 10.0


def _reference_mhat(alpha: float) -> float:
    def mean(c):  # E_xi N(c xi)^2/H(c xi), over t = c xi
        f = lambda t: (np.exp(-(t / c) ** 2 / 2) / np.sqrt(2 * np.pi) / c  # noqa: E731
                       * np.exp(-t * t / 2) / (np.pi * special.erfcx(t / np.sqrt(2))))
        return sum(integrate.quad(f, lo, hi, epsabs=0, epsrel=1e-13, limit=200)[0]
                   for lo, hi in ((-40, 0), (0, 40)))

    g = lambda lh: np.exp(lh) - 2 * alpha * (1 + np.exp(lh)) * mean(np.exp(lh / 2))  # noqa: E731
    return float(np.exp(optimize.brentq(g, np.log(1e-3), np.log(1e6), xtol=1e-15, rtol=1e-15)))


@pytest.mark.slow
def test_rule_error_beyond_the_claim_is_not_accepted():
    p = replica._problem(MODEL)
    mach = machine(p, p.variants[0])
    assert list(mach.outline.parameters) == ["alpha", "prior"]
    P = [np.array([ALPHA]), np.array([0.0])]  # prior = gaussian (rho = 0)
    x, done, iters, rel, report, _ = mach.grid(P, None, (1,), assess=False)
    assert done.all()
    ref = _reference_mhat(ALPHA)
    true_error = abs(report["mhat"][0] - ref) / ref
    assert true_error > 10 * CLAIM_RTOL, true_error  # the rule's own error, beyond the claim
    cond, err = mach.assess(x, P, None, (1,), report)
    # the estimate sees it (within a factor 2 of the true error), and the point is not accepted
    assert 0.5 * true_error <= err[0] <= 2 * true_error, (err[0], true_error)
    status = point_status(p, report, cond, err, done, np.ones(1, bool), done)
    assert status[0] != "converged"


def test_curve_point_with_the_rule_error_is_resolved():
    """Through :func:`replica.solve_float64`: the same point is solved again with the finer rule
    (the check rejected the fixed rule's), ``converged`` and within the claim of the reference."""
    r = replica.solve_float64(MODEL, alpha=np.array([ALPHA]), prior="gaussian", strict=False)
    ref = _reference_mhat(ALPHA)
    assert r["status"][0] == "converged"
    assert abs(r["mhat"][0] - ref) <= CLAIM_RTOL * ref, (r["mhat"][0], ref)
