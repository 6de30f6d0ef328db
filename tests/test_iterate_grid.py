"""The float64 grid iteration (``replica.numerics.newton.iterate_grid``) on a fixed-point map
written in the test: points where the map is not finite stop at once, not converged, and the
other points converge to the map's closed-form fixed point."""
import numpy as np

from replica.numerics.newton import iterate_grid


def _map(a):
    """Phi(x) = a / (1 + x): its fixed point is (sqrt(1 + 4a) - 1)/2; NaN where a < 0 (a
    stand-in for a channel term that underflows to 0 log 0)."""
    calls = []

    def phi(x, idx):
        calls.append(idx.size)
        aa = a[idx]
        with np.errstate(invalid="ignore"):
            return [np.where(aa < 0, np.nan, aa / (1 + x[0]))]

    def jac(x, idx):
        aa = a[idx]
        return [-aa / (1 + x[0]) ** 2]

    return phi, jac, calls


def test_points_whose_map_is_not_finite_stop_at_once_not_converged():
    a = np.array([0.5, -1.0, 2.0, -3.0, 6.0])
    phi, jac, calls = _map(a)
    x0 = np.full((1, a.size), 0.5)
    x, done, iters, rel = iterate_grid(phi, jac, x0, fixed_point=True, positive=True,
                                       rtol=1e-13, maxiter=20000)
    good = a > 0
    assert list(done) == list(good)
    exact = (np.sqrt(1 + 4 * a[good]) - 1) / 2
    assert np.max(np.abs(x[0][good] - exact) / exact) < 1e-12
    # the NaN points stopped in the first sweep, and the whole solve took a few hundred sweeps,
    # not the 20,000 of maxiter
    assert np.all(iters[~good] == 1)
    assert len(calls) < 500
    assert not np.all(np.isfinite(rel[~good]))


def test_newton_sweeps_also_stop_points_that_are_not_finite():
    a = np.array([-1.0, 1.0])
    phi, jac, calls = _map(a)
    x, done, iters, rel = iterate_grid(phi, jac, np.full((1, 2), 0.5), fixed_point=True,
                                       positive=True, newton_from=0.0, maxiter=20000)
    assert list(done) == [False, True]
    assert iters[0] == 1 and len(calls) < 200
    assert abs(x[0][1] - (np.sqrt(5) - 1) / 2) < 1e-13
