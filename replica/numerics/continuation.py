r"""Numerical continuation and the location of transitions, crossovers and boundaries.

Generic methods, independent of any model (the models' transitions built on them are in
:mod:`replica.analysis.transitions`), run at high precision.

The transitions of these models are sharp only in a limit (alpha -> oo, or an implicit ridge
``(1 + noise)/alpha -> 0``); at finite alpha they are smooth crossovers that sharpen. The tools:

* :func:`limit_to_zero` -- the ``s -> 0+`` limit of a function with an expansion
  ``v(s) = v_0 + c_1 s + c_2 s^2 + ...``, by Richardson (Neville) extrapolation on ``s_j = s_0 r^j``.
  Used for the mass of the atom at zero of a spectral law, :math:`A = \lim_{s\to0^+} s\,M(s)`.
* :func:`locate_kink` -- the non-analytic point of a piecewise-analytic function of one
  parameter: a scan of second differences brackets it; then the two analytic branches are fitted
  (polynomials of degree 4 through five points on each side, at distances ``h, ..., 5h``) and
  intersected, and
  ``h`` shrinks until the intersection stops moving. The reported error bound is the change of
  the location between the last two refinements (plus the evaluation error of the indicator
  propagated through the intersection).
* :func:`one_sided_slopes` -- the slopes :math:`f'(x^\pm)` of a piecewise-analytic function at a
  point, each from a polynomial fitted on one side only (a kink's jump of the slope is their
  difference).
* :func:`locate_crossover` -- the finite-alpha crossover: the point of extremal curvature of a
  smooth indicator (``f''' = 0`` with ``f''`` extremal), derivatives by ``mpmath.diff``.
* :func:`continuation` -- natural-parameter continuation with warm starts, in both directions
  from a starting point.
* :func:`trace_boundary` -- a curve ``f(p1, p2) = 0`` through a plane: for each ``p1`` the root in
  ``p2`` is found by a secant iteration warm-started from the extrapolation of the previous points;
  steps are halved where the curve bends (adaptive refinement), and each point is polished to the
  working precision.

Everything runs in mpmath at the working precision; precision is set by the caller's context.
"""

from __future__ import annotations

import dataclasses
from typing import Callable, Sequence

import mpmath

from ..errors import ConvergenceError


# ---------------------------------------------------------------------------------------------
# Limits
# ---------------------------------------------------------------------------------------------
def neville_at_zero(xs: Sequence, ys: Sequence):
    """Value at 0 of the polynomial through ``(xs[i], ys[i])`` (Neville's algorithm)."""
    p = list(ys)
    n = len(xs)
    for m in range(1, n):
        for i in range(n - m):
            p[i] = (xs[i + m] * p[i] - xs[i] * p[i + 1]) / (xs[i + m] - xs[i])
    return p[0]


def limit_to_zero(fn: Callable, s0, levels: int = 5, ratio=None):
    """``lim_{s -> 0+} fn(s)`` for ``fn`` analytic in ``s`` at 0 (from the right).

    Evaluates ``fn`` at ``s0 r^j`` (``r = 1/2`` by default, ``j < levels``) and extrapolates with
    Neville's algorithm. Returns ``(value, error_estimate)``, the estimate being the difference
    between the extrapolations with ``levels`` and ``levels - 1`` points.
    """
    r = mpmath.mpf(1) / 2 if ratio is None else ratio
    xs = [s0 * r**j for j in range(levels)]
    ys = [fn(x) for x in xs]
    best = neville_at_zero(xs, ys)
    prev = neville_at_zero(xs[1:], ys[1:])
    return best, abs(best - prev)


# ---------------------------------------------------------------------------------------------
# Kinks (non-analytic points of a limit function)
# ---------------------------------------------------------------------------------------------
@dataclasses.dataclass
class Location:
    """A located transition or crossover point."""

    value: object
    error_bound: object
    iterations: int
    method: str
    history: list = dataclasses.field(default_factory=list)

    def digits(self):
        """Decimal digits guaranteed by ``error_bound`` relative to ``|value|``."""
        if self.error_bound == 0:
            return mpmath.mp.dps
        rel = self.error_bound / max(abs(self.value), mpmath.eps)
        return max(0, int(mpmath.floor(-mpmath.log10(rel))))


def _local_polynomial(ts, ys):
    """Coefficients ``c_0..c_n`` (ascending) of the polynomial through ``(ts[i], ys[i])``."""
    n = len(ts)
    V = mpmath.matrix([[t**j for j in range(n)] for t in ts])
    c = mpmath.lu_solve(V, mpmath.matrix(list(ys)))
    return [c[j] for j in range(n)]


def _intersect_local(left, right):
    """Root nearest ``t = 0`` of the difference of two local polynomials (Newton from 0, then a
    check of all roots by ``polyroots`` if Newton wanders)."""
    diff = [a - b for a, b in zip(left, right)]
    while len(diff) > 1 and diff[-1] == 0:
        diff.pop()
    if len(diff) == 1:
        raise ConvergenceError("kink: the two branches coincide (no intersection)")
    try:
        roots = mpmath.polyroots(diff[::-1], maxsteps=200, extraprec=mpmath.mp.prec)
    except mpmath.libmp.libhyper.NoConvergence:
        raise ConvergenceError("kink: the branch fits do not intersect") from None
    real = [mpmath.re(r) for r in roots if abs(mpmath.im(r)) <= 1e-10 * (1 + abs(r))]
    if not real:
        raise ConvergenceError("kink: the branch fits do not intersect on the real line")
    return min(real, key=abs)


def locate_kink(indicator: Callable, lo, hi, *, n_scan: int = 33, tol=None, h_min=None,
                max_refine: int = 40, degree: int = 4, what: str = "transition") -> Location:
    """Non-analytic point of ``indicator`` on ``(lo, hi)``.

    ``indicator(p)`` returns the value of a piecewise-analytic function (for example the atom
    mass of a limiting spectrum as a function of task diversity). Returns a :class:`Location`.
    """
    lo, hi = mpmath.mpf(lo), mpmath.mpf(hi)
    if tol is None:
        tol = mpmath.mpf(10) ** (-(mpmath.mp.dps * 2) // 3)
    grid = [lo + (hi - lo) * k / (n_scan - 1) for k in range(n_scan)]
    vals = [indicator(p) for p in grid]
    second = [abs(vals[k + 1] - 2 * vals[k] + vals[k - 1]) for k in range(1, n_scan - 1)]
    k = max(range(len(second)), key=lambda i: second[i]) + 1
    step = grid[1] - grid[0]
    scale = max(abs(v) for v in vals) or mpmath.mpf(1)
    if second[k - 1] <= mpmath.mpf(10) ** (-mpmath.mp.dps // 2) * scale:
        raise ConvergenceError(f"{what}: no kink found on ({mpmath.nstr(lo, 8)}, "
                               f"{mpmath.nstr(hi, 8)})", tried=f"scan of {n_scan} points")
    centre = grid[k]
    h = step
    # rounding floor: the fits extrapolate (amplification 2^(degree+1) - 1 per branch) values
    # known to a few ulps; no location is claimed more precisely than ~100 ulps
    floor = 100 * mpmath.eps * max(1, abs(centre))
    h_floor = h_min or mpmath.mpf(10) ** (-(mpmath.mp.dps // 4))
    history = [centre]
    estimates = []
    for it in range(1, max_refine + 1):
        npts = degree + 1
        if centre - npts * h <= lo or centre + npts * h >= hi:
            h = min(centre - lo, hi - centre) / (npts + 1)
            if h <= 0:
                break
            continue
        tl = [-mpmath.mpf(j) for j in range(npts, 0, -1)]
        tr = [mpmath.mpf(j) for j in range(1, npts + 1)]
        left = _local_polynomial(tl, [indicator(centre + h * t) for t in tl])
        right = _local_polynomial(tr, [indicator(centre + h * t) for t in tr])
        new = centre + h * _intersect_local(left, right)
        history.append(new)
        if not (centre - 2 * h < new < centre + 2 * h):
            # the kink is not inside the fitted window: re-centre, keep the window wide
            h = max(h, abs(new - centre))
            centre = new
            estimates.clear()
            continue
        centre = new
        estimates.append(new)
        if len(estimates) >= 2:
            diffs = [abs(estimates[j] - estimates[j - 1]) for j in range(1, len(estimates))]
            if diffs[-1] <= tol:
                return Location(new, max(diffs[-1], floor), it, "branch intersection", history)
            if len(diffs) >= 2 and diffs[-1] >= diffs[-2]:
                # noise floor of the indicator reached: shrinking h no longer helps
                return Location(new, max(diffs[-1], diffs[-2], floor), it, "branch intersection",
                                history)
            if h <= h_floor:
                return Location(new, max(diffs[-1], floor), it, "branch intersection", history)
        h = max(h / 8, h_floor)
    raise ConvergenceError(f"{what}: the kink location did not settle in {max_refine} refinements",
                           tried="scan + branch intersection")


def one_sided_slopes(f: Callable, x, h, degree: int = 4) -> tuple:
    r"""The one-sided slopes :math:`f'(x^-)` and :math:`f'(x^+)` of a piecewise-analytic ``f``:
    the derivatives at :math:`x` of the polynomials of degree ``degree`` through ``f`` at
    :math:`x - jh` and at :math:`x + jh` (:math:`j = 1, \dots, \mathrm{degree} + 1`), each
    fitted on one analytic branch only (``f(x)`` itself is not used). Their truncation error is
    :math:`O(h^{\mathrm{degree}})`; at a kink the difference tends to the jump of the slope,
    for an ``f`` analytic at :math:`x` it vanishes like :math:`h^{\mathrm{degree}}`."""
    npts = degree + 1
    tl = [-mpmath.mpf(j) for j in range(npts, 0, -1)]
    tr = [mpmath.mpf(j) for j in range(1, npts + 1)]
    left = _local_polynomial(tl, [f(x + h * t) for t in tl])
    right = _local_polynomial(tr, [f(x + h * t) for t in tr])
    return left[1] / h, right[1] / h


# ---------------------------------------------------------------------------------------------
# Crossovers (finite alpha)
# ---------------------------------------------------------------------------------------------
CROSSOVER_METHOD = ("zooming scan for the curvature peak, then Anderson-Bjorck on the third "
                    "derivative (mpmath.diff); error bound from a Newton correction")


def bracket_curvature_peak(indicator: Callable, lo, hi, n: int = 33, max_zoom: int = 40):
    """Bracket the extremum of ``|f''|``: scan ``n`` points, and zoom in on the largest second
    difference until the peak is resolved (its neighbours carry at least a quarter of it).
    Returns ``(guess, (left, right))``."""
    a, b = mpmath.mpf(lo), mpmath.mpf(hi)
    for _ in range(max_zoom):
        grid = [a + (b - a) * k / (n - 1) for k in range(n)]
        vals = [indicator(x) for x in grid]
        sec = [abs(vals[i + 1] - 2 * vals[i] + vals[i - 1]) for i in range(1, n - 1)]
        i = max(range(len(sec)), key=lambda j: sec[j])
        resolved = 0 < i < len(sec) - 1 and min(sec[i - 1], sec[i + 1]) > sec[i] / 4
        i += 1
        if resolved:
            break
        a, b = grid[max(i - 2, 0)], grid[min(i + 2, n - 1)]
    return grid[i], (grid[i - 1], grid[i + 1])


def locate_crossover(indicator: Callable, lo, hi, *, what: str = "crossover"):
    """Point of extremal curvature of a smooth ``indicator`` on ``(lo, hi)``: the root of
    the third derivative inside the bracket of :func:`bracket_curvature_peak`.

    Derivatives by ``mpmath.diff`` (which raises the working precision internally). The error
    bound is twice the size of a final Newton correction (third over fourth derivative).
    """
    def third(p):
        return mpmath.diff(indicator, p, 3)

    _, bracket = bracket_curvature_peak(indicator, lo, hi)
    try:
        a, b = bracket
        if mpmath.sign(third(a)) == mpmath.sign(third(b)):
            raise ValueError("no sign change of the third derivative on the bracket")
        root = mpmath.findroot(third, (a, b), solver="anderson", verify=False)
    except (ValueError, ZeroDivisionError) as exc:
        # mpmath's messages carry the full-precision iterates (hundreds of characters)
        why = str(exc).split("(")[0].strip().rstrip(".") or type(exc).__name__
        raise ConvergenceError(f"{what}: the root of the third derivative was not found ({why}) "
                               f"on ({mpmath.nstr(bracket[0], 8)}, {mpmath.nstr(bracket[1], 8)})",
                               tried="Anderson-Bjorck on mpmath.diff third derivative") from None
    # a posteriori: one Newton correction with the fourth derivative estimates the error left
    f3 = third(root)
    f4 = mpmath.diff(indicator, root, 4)
    if f4 == 0 or not mpmath.isfinite(root):
        raise ConvergenceError(f"{what}: degenerate curvature extremum", tried="Anderson-Bjorck")
    err = abs(f3 / f4)
    if err > mpmath.mpf(10) ** (-(mpmath.mp.dps // 3)) * max(1, abs(root)):
        raise ConvergenceError(f"{what}: the iteration stopped {mpmath.nstr(err, 3)} from a root",
                               tried="Anderson-Bjorck on mpmath.diff third derivative")
    return Location(root, 2 * err + mpmath.eps * abs(root) * 16, 0,
                    "extremal curvature (third derivative = 0)")


# ---------------------------------------------------------------------------------------------
# Continuation and boundary tracing
# ---------------------------------------------------------------------------------------------
def continuation(solve_at: Callable, values: Sequence, start_index: int = 0, start=None):
    """Natural-parameter continuation: ``solve_at(p, warm_start) -> solution`` along ``values``.

    Starts at ``values[start_index]`` and walks up and then down the list, each solve warm-started
    from its neighbour's solution (both directions). Returns the solutions in the order of
    ``values``.
    """
    n = len(values)
    out: list = [None] * n
    out[start_index] = solve_at(values[start_index], start)
    for i in range(start_index + 1, n):
        out[i] = solve_at(values[i], out[i - 1])
    for i in range(start_index - 1, -1, -1):
        out[i] = solve_at(values[i], out[i + 1])
    return out


def _secant_root(f, x0, x1, tol, maxiter=80, lo=None, hi=None):
    f0, f1 = f(x0), f(x1)
    for _ in range(maxiter):
        if f1 == f0:
            break
        x2 = x1 - f1 * (x1 - x0) / (f1 - f0)
        if lo is not None and x2 <= lo:
            x2 = (x1 + lo) / 2
        if hi is not None and x2 >= hi:
            x2 = (x1 + hi) / 2
        x0, f0, x1 = x1, f1, x2
        f1 = f(x1)
        if abs(x1 - x0) <= tol * max(1, abs(x1)):
            return x1
    if abs(f1) <= mpmath.eps * 1e6:
        return x1
    raise ConvergenceError("boundary: secant iteration did not converge",
                           tried=f"secant from {mpmath.nstr(x0, 6)}")


def trace_boundary(f: Callable, p1_values: Sequence, p2_guess, *, p2_bounds=(None, None),
                   max_turn=0.2, min_step=None, tol=None):
    """Trace ``f(p1, p2) = 0`` for ``p1`` across ``p1_values`` (refined adaptively).

    For each ``p1`` the root ``p2`` is found by secant, warm-started by linear extrapolation of
    the last two points. Between consecutive ``p1`` values the step is halved while the slope of
    the curve changes by more than ``max_turn`` (relative) -- so points cluster where the curve
    bends. Returns a list of ``(p1, p2)``.
    """
    if tol is None:
        tol = mpmath.mpf(10) ** (-mpmath.mp.dps + 5)
    lo, hi = p2_bounds
    pts = []
    p2 = mpmath.mpf(p2_guess)
    vals = [mpmath.mpf(v) for v in p1_values]
    if min_step is None:
        min_step = (vals[-1] - vals[0]) / (len(vals) * 64)

    def solve(p1, guess):
        g = lambda y: f(p1, y)  # noqa: E731
        dy = max(abs(guess) * mpmath.mpf(10) ** -4, mpmath.mpf(10) ** -6)
        return _secant_root(g, guess, guess + dy, tol, lo=lo, hi=hi)

    def predict(p1):
        if len(pts) >= 2:
            (a1, a2), (b1, b2) = pts[-2], pts[-1]
            return b2 + (b2 - a2) * (p1 - b1) / (b1 - a1)
        return pts[-1][1] if pts else p2

    pts.append((vals[0], solve(vals[0], p2)))
    for target in vals[1:]:
        p1 = pts[-1][0]
        while p1 < target:
            step = target - p1
            while True:
                cand = p1 + step
                y = solve(cand, predict(cand))
                if len(pts) >= 2 and step > min_step:
                    (a1, a2), (b1, b2) = pts[-2], pts[-1]
                    s_old = (b2 - a2) / (b1 - a1)
                    s_new = (y - b2) / (cand - b1)
                    turn = abs(s_new - s_old) / (1 + abs(s_old))
                    if turn > max_turn:
                        step /= 2
                        continue
                break
            pts.append((cand, y))
            p1 = cand
    return pts
