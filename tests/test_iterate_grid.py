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



def _halving_system(c, k):
    r"""Per point i the root form :math:`F_i(x) = x - c_i` (and the fixed-point form
    :math:`\Phi_i(x) = c_i`), on which a Newton step is exact, except point ``k``, where
    :math:`F_k(x) = \operatorname{cbrt}(x - c_k)` (:math:`\Phi_k = x - F_k`): there the full
    Newton step :math:`x - 3(x - c_k)` overshoots to twice the distance on the other side
    (:math:`|F_k|` grows by :math:`2^{1/3}`), and the half step lands at half the distance
    (:math:`|F_k|` shrinks): one halving every sweep. Records the number of points of every
    evaluation of F or Phi."""
    calls = []

    def F(x, idx):
        calls.append(idx.size)
        d = x[0] - c[idx]
        return [np.where(idx == k, np.cbrt(d), d)]

    def dF(x, idx):
        d = x[0] - c[idx]
        with np.errstate(divide="ignore"):
            return [np.where(idx == k, 1 / (3 * np.cbrt(d) ** 2), 1.0)]

    def phi(x, idx):
        return [x[0] - F(x, idx)[0]]

    def dphi(x, idx):
        return [1 - dF(x, idx)[0]]

    return phi, dphi, F, dF, calls


def test_step_halving_evaluates_only_the_points_still_halving():
    """Eight points start at 99; point 4 (c = 100) needs one halving of its Newton step every
    sweep, the others (c near 99) are solved by their first step. Both grid solvers converge
    everywhere to c, and each halving evaluates the map only at the one point still halving
    (before: at all eight points, each halving)."""
    from replica.numerics.newton import newton_grid

    c = np.array([99.5, 98.25, 99.75, 98.5, 100.0, 98.75, 99.25, 98.0])
    phi, dphi, F, dF, calls = _halving_system(c, 4)
    x, done, _, _ = iterate_grid(phi, dphi, np.full((1, c.size), 99.0), fixed_point=True,
                                 positive=True, rtol=1e-13, maxiter=200)
    assert done.all() and np.max(np.abs(x[0] - c) / c) < 1e-12
    # sweep 1: Phi at the 8 points, the full step at the 8 (7 accepted), the half step at 1
    assert calls[:3] == [8, 8, 1], calls[:6]
    calls.clear()
    x, done, _, _ = newton_grid(F, dF, np.full((1, c.size), 99.0), rtol=1e-13)
    assert done.all() and np.max(np.abs(x[0] - c) / c) < 1e-12
    assert calls[:3] == [8, 8, 1], calls[:6]


def test_phi_is_never_evaluated_twice_at_the_same_iterate():
    """Phi(x) = a / (1 + x) from x = 1/2, Newton sweeps: Phi at the iterate a Newton step
    reached was evaluated to accept the step, and the next sweep reads that value (before, it
    evaluated Phi there again: once more per point and sweep)."""
    a = np.linspace(0.5, 40.0, 12)
    seen = []

    def phi(x, idx):
        seen.extend(zip(idx.tolist(), x[0].tolist()))
        return [a[idx] / (1 + x[0])]

    def jac(x, idx):
        return [-a[idx] / (1 + x[0]) ** 2]

    x, done, iters, _ = iterate_grid(phi, jac, np.full((1, a.size), 0.5), fixed_point=True,
                                     positive=True)
    assert done.all() and iters.max() >= 4
    assert len(seen) == len(set(seen)), len(seen) - len(set(seen))


def _kept_jacobian_map(a, first_off=1.0):
    """Phi(x) = a / (1 + x) (fixed point (sqrt(1 + 4a) - 1)/2) with its exact derivative, except
    that the first Jacobian evaluation makes ``I - Phi'`` ``first_off`` times the true one;
    counts the points of every Jacobian evaluation."""
    jac_points = []

    def phi(x, idx):
        return [a[idx] / (1 + x[0])]

    def jac(x, idx):
        d = -a[idx] / (1 + x[0]) ** 2
        if not jac_points:
            d = 1 - first_off * (1 - d)
        jac_points.append(idx.size)
        return [d]

    return phi, jac, jac_points


def test_a_kept_jacobian_serves_later_steps_and_the_fixed_point_is_the_same():
    """With ``reuse``, Newton steps near the iterate where the Jacobian was evaluated reuse it:
    fewer Jacobian evaluations (counted in points), the same fixed point to rounding."""
    a = np.linspace(0.5, 40.0, 30)
    exact = (np.sqrt(1 + 4 * a) - 1) / 2
    out = {}
    for reuse in (0.0, 1e-2):
        phi, jac, jac_points = _kept_jacobian_map(a)
        x, done, iters, _ = iterate_grid(phi, jac, np.full((1, a.size), 0.5), fixed_point=True,
                                         positive=True, reuse=reuse)
        assert done.all()
        assert np.max(np.abs(x[0] - exact) / exact) < 1e-12
        out[reuse] = sum(jac_points)
    assert out[1e-2] < 0.8 * out[0.0], out


def test_a_rejected_chord_step_is_retried_with_a_jacobian_evaluated_there():
    """The first ``I - Phi'`` is 1/1000 of the true one (a stand-in for a Jacobian evaluated far
    away): its Newton step, 1000 times too long, overshoots at every halving and is rejected (a damped step follows, with or
    without ``reuse``). With ``reuse``, the next sweep's step with that kept matrix is rejected
    too, and the point takes, in the same sweep, the Newton step of a Jacobian evaluated at its
    iterate -- as without ``reuse`` -- instead of a second damped step."""
    a = np.array([3.0, 6.0, 12.0])
    exact = (np.sqrt(1 + 4 * a) - 1) / 2
    after_two = []
    for reuse in (0.0, 10.0):
        phi, jac, _ = _kept_jacobian_map(a, first_off=1e-3)
        x, done, iters, _ = iterate_grid(phi, jac, np.full((1, a.size), 0.5), fixed_point=True,
                                         positive=True, reuse=reuse, maxiter=50)
        assert done.all() and np.max(np.abs(x[0] - exact) / exact) < 1e-12
        phi, jac, _ = _kept_jacobian_map(a, first_off=1e-3)
        x, _, _, _ = iterate_grid(phi, jac, np.full((1, a.size), 0.5), fixed_point=True,
                                  positive=True, reuse=reuse, maxiter=2)
        after_two.append(x[0])
    assert np.array_equal(after_two[0], after_two[1]), after_two


def test_continued_grid_reaches_the_same_fixed_points_in_fewer_evaluations():
    """``iterate_grid_continued`` on Phi(x) = a / (1 + x) (one fixed point, (sqrt(1 + 4a) - 1)/2,
    for each a > 0) over 60 values of a, from x = 1/2: every point converges to that closed form
    (to 1e-12), the seeds every CONTINUATION_STRIDE-th point and the last one, the others from the
    interpolation of their solved neighbours -- fewer evaluations of Phi (counted in points)
    than the same grid from x = 1/2 at every point (seen: 330 against 478 with seeds every 10th
    point and linear starts)."""
    from replica.numerics.newton import iterate_grid_continued

    a = np.linspace(0.5, 40.0, 60)
    exact = (np.sqrt(1 + 4 * a) - 1) / 2
    points = {}
    for solver in (iterate_grid, iterate_grid_continued):
        phi, jac, calls = _map(a)
        x, done, iters, _ = solver(phi, jac, np.full((1, a.size), 0.5), fixed_point=True,
                                   positive=True, reuse=1e-2)
        assert done.all()
        assert np.max(np.abs(x[0] - exact) / exact) < 1e-12
        points[solver.__name__] = sum(calls)
    assert points["iterate_grid_continued"] < 0.75 * points["iterate_grid"], points


def test_continued_grid_solves_a_point_again_from_its_own_start_where_the_neighbours_fail():
    """Phi(x) = a / (1 + x), not finite at point 5 where x > 1.5 (its fixed point is 1, its own
    start 1/2; its neighbours' solutions, near 3, lie beyond 1.5): from the interpolated start
    that point stops at once, not converged, and is solved again from its own start -- it
    converges to its fixed point, its iterations the sum of both solves' sweeps (the first 1)."""
    from replica.numerics.newton import iterate_grid_continued

    a = np.full(12, 12.0)
    a[5] = 2.0  # fixed point 1
    exact = (np.sqrt(1 + 4 * a) - 1) / 2

    def phi(x, idx):
        aa = a[idx]
        with np.errstate(invalid="ignore"):
            return [np.where((idx == 5) & (x[0] > 1.5), np.nan, aa / (1 + x[0]))]

    def jac(x, idx):
        return [-a[idx] / (1 + x[0]) ** 2]

    x, done, iters, _ = iterate_grid_continued(phi, jac, np.full((1, a.size), 0.5),
                                               stride=4, fixed_point=True, positive=True)
    assert done.all()
    assert np.max(np.abs(x[0] - exact) / exact) < 1e-12
    five = np.array([5])
    _, _, own, _ = iterate_grid(lambda x, i: phi(x, five), lambda x, i: jac(x, five),
                                np.full((1, 1), 0.5), fixed_point=True, positive=True)
    assert iters[5] == own[0] + 1, (iters[5], own[0])


def test_local_cubic_weights_reproduce_cubics_and_clamp_outside():
    """``_local_cubic``: at every point between 11 unevenly spaced nodes the weights of the 4
    nearest nodes give a cubic's value exactly (to rounding: written here, x^3 - 2x^2 + x/3
    - 5), sum to 1, and points beyond the ends take the end node's value; with 2 nodes, the
    linear interpolation."""
    from replica.numerics.newton import _local_cubic

    nodes = np.array([0.0, 3.0, 7.0, 10.0, 20.0, 21.0, 30.0, 44.0, 50.0, 61.0, 70.0])

    def cubic(t):
        return t**3 - 2 * t**2 + t / 3 - 5

    t = np.setdiff1d(np.linspace(0.0, 70.0, 141), nodes)
    win, w = _local_cubic(t, nodes)
    assert win.shape == w.shape == (t.size, 4)
    got = np.sum(w * cubic(nodes)[win], axis=1)
    assert np.max(np.abs(got - cubic(t)) / np.abs(cubic(t))) < 1e-12
    assert np.allclose(w.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    win, w = _local_cubic(np.array([-4.0, 75.0]), nodes)
    assert np.array_equal(np.sum(w * cubic(nodes)[win], axis=1), cubic(nodes[[0, -1]]))
    win, w = _local_cubic(np.array([1.0, 2.5]), np.array([0.0, 4.0]))
    assert np.allclose(np.sum(w * np.array([1.0, 9.0])[win], axis=1), [3.0, 6.0])


def test_continued_grid_evaluates_no_jacobian_between_its_seeds():
    """``iterate_grid_continued`` with ``reuse`` (the float64 grid's) on Phi(x) = a / (1 + x)
    over 60 values of a, seeds every 10th point: the points between the seeds start from the
    cubic through the solved seeds around them and take their Newton steps with the seeds'
    matrices ``I - Phi'``
    (evaluated once at the seeds' solutions, interpolated the same way): most of those 54
    points evaluate no Jacobian of their own (seen: 12 do, at a < 7, where the map's curvature
    makes the interpolated matrix too rough for a chord step that shrinks the change 100 times),
    and every point converges to the closed form (1e-12). Before, each of them evaluated its
    own Jacobian."""
    from replica.numerics.newton import iterate_grid_continued

    a = np.linspace(0.5, 40.0, 60)
    exact = (np.sqrt(1 + 4 * a) - 1) / 2
    seeds = np.unique(np.r_[np.arange(0, a.size, 10), a.size - 1])
    jac_at = []

    def phi(x, idx):
        return [a[idx] / (1 + x[0])]

    def jac(x, idx):
        jac_at.append(np.array(idx))
        return [-a[idx] / (1 + x[0]) ** 2]

    x, done, iters, _ = iterate_grid_continued(phi, jac, np.full((1, a.size), 0.5), stride=10,
                                               fixed_point=True, positive=True, reuse=1e-2)
    assert done.all()
    assert np.max(np.abs(x[0] - exact) / exact) < 1e-12
    rest = np.setdiff1d(np.arange(a.size), seeds)
    between = np.intersect1d(np.concatenate(jac_at), rest)  # (the grid's own indices)
    assert between.size <= rest.size // 4, between


def test_approximate_start_matrices_that_fail_are_replaced_by_evaluated_ones():
    """``iterate_grid(jacobians=...)``: matrices 1000 times too small (a Newton step 1000 times
    too long, rejected at the halvings at two of the three points) make those points evaluate
    their Jacobians and converge as without them; NaN matrices are not used at all."""
    a = np.array([3.0, 6.0, 12.0])
    exact = (np.sqrt(1 + 4 * a) - 1) / 2
    x0 = np.full((1, a.size), 2.0)
    true = 1 + a / (1 + x0[0]) ** 2
    for bad in (1e-3 * true, np.full(a.size, np.nan)):
        phi, jac, jac_points = _kept_jacobian_map(a)
        x, done, iters, _ = iterate_grid(phi, jac, x0, fixed_point=True, positive=True,
                                         reuse=1e-2, jacobians=bad.reshape(a.size, 1, 1))
        assert done.all() and np.max(np.abs(x[0] - exact) / exact) < 1e-12
        assert sum(jac_points) >= a.size - 1, jac_points  # (replaced by evaluated ones)


def test_the_ghost_rule_stops_a_saddle_node_ghost_and_changes_no_converging_point():
    r"""``iterate_grid(ghost=32)`` (``_second_look``'s) on :math:`\Phi(x) = x + c + (x - 1)^2`,
    one point per :math:`c`: for :math:`c > 0` the equation :math:`\Phi(x) = x` has no root
    (:math:`\Phi - x \ge c`): past the fold, the ghost of the saddle-node of :math:`c = 0`,
    where the damped iterates crawl through :math:`x \approx 1` with relative change
    :math:`\approx c` and every Newton step (:math:`-(c + (x-1)^2)/(2(x-1))`, huge there) is
    rejected. For :math:`c < 0` the roots are :math:`1 \pm \sqrt{-c}`, the lower one reached
    from 0.5 (a fold 1e-3 away for :math:`c = -10^{-6}`). The ghost point stops, not converged,
    within the rule's 32 sweeps of stalling (35-38 sweeps); without the rule it crawls on to
    the cap (150 here); the converging points end bit for bit as without the rule, at the
    closed-form root; the damped iteration alone is never stopped. (~0.2 s at load 12.)"""
    from replica.numerics.newton import GHOST_SWEEPS

    c = np.array([1e-4, 3e-3, -1e-6, -1e-2, -0.2])

    def phi(x, idx):
        return [x[0] + c[idx] + (x[0] - 1) ** 2]

    def jac(x, idx):
        return [1 + 2 * (x[0] - 1)]

    kw = dict(fixed_point=True, positive=True, rtol=1e-13, maxiter=150, reuse=1e-2)
    x0 = np.full((1, c.size), 0.5)
    x, done, iters, rel = iterate_grid(phi, jac, x0, ghost=GHOST_SWEEPS, **kw)
    x_off, done_off, iters_off, _ = iterate_grid(phi, jac, x0, **kw)
    ghost = c > 0
    assert not done[ghost].any() and done[~ghost].all(), (done, iters)
    # the ghost points stopped within the rule's sweeps of the stall (a few to reach it)
    assert np.all(iters[ghost] <= GHOST_SWEEPS + 16), iters
    assert np.all(iters_off[ghost] == 150), iters_off  # (the cap: still crawling)
    # there (x near 1) the change is about c: small and bounded away from 0, not converged
    assert np.all(rel[ghost] >= 0.5 * c[ghost]) and np.all(rel[ghost] <= 1e-2), rel
    assert np.all(np.abs(x[0][ghost] - 1) < 0.1), x
    # the converging points: as without the rule, bit for bit, at 1 - sqrt(-c)
    assert np.array_equal(x[:, ~ghost], x_off[:, ~ghost])
    assert np.array_equal(iters[~ghost], iters_off[~ghost])
    np.testing.assert_allclose(x[0][~ghost], 1 - np.sqrt(-c[~ghost]), rtol=1e-9)
    # the damped iteration alone (no Newton step tried, newton_from = 0) is never stopped
    damped = dict(kw, newton_from=0.0, maxiter=100)
    got = iterate_grid(phi, jac, x0, ghost=GHOST_SWEEPS, **damped)
    ref = iterate_grid(phi, jac, x0, **damped)
    for a, b in zip(got, ref):
        assert np.array_equal(a, b)
