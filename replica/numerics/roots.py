"""Root finders used by every model.

* :func:`bracketed_newton` -- a scalar root of a *monotone* function, Newton steps safeguarded by a
  bracket that is shrunk at each evaluation (bisection when Newton would leave it). Works with
  ``mpmath.mpf`` or Python floats; the arithmetic follows the inputs.
* :func:`bracketed_newton_vec` -- the same, vectorised over NumPy arrays in float64 (one independent
  root per array element: parameter grids are solved in one call).

Non-convergence raises :class:`replica.errors.ConvergenceError` with what was tried.
"""

from __future__ import annotations

from typing import Callable

import math

import mpmath
import numpy as np

from ..errors import ConvergenceError


def bracketed_newton(fdf: Callable, lo, hi, x0, *, increasing: bool, rtol, maxiter: int = 200,
                     what: str = "root"):
    """Root of a monotone ``f`` on the open interval ``(lo, hi)`` (``hi`` may be ``inf``).

    ``fdf(x)`` returns ``(f(x), f'(x))``. Each evaluation moves one end of the bracket (by the
    sign of ``f`` and the known direction of monotonicity), so the iteration cannot leave the
    interval where the root is unique. Returns ``(x, iterations)``; stops when the Newton step is
    below ``rtol * |x|``, or -- at the rounding floor of ``f``, where the steps stop shrinking
    (less than halving twice in a row) -- once they are below ``sqrt(rtol) * |x|``: ``f`` is then
    evaluated to fewer digits than ``rtol`` asks for, and the digits obtained are for the caller's
    verification to measure.
    """
    x = x0
    inf = mpmath.inf if isinstance(x0, mpmath.mpf) else float("inf")
    floor_ok = rtol ** 0.5 if not isinstance(rtol, mpmath.mpf) else mpmath.sqrt(rtol)
    prev, stalls = None, 0
    for it in range(1, maxiter + 1):
        fx, dfx = fdf(x)
        if fx == 0:
            return x, it
        if fx != fx:  # NaN: no sign to move the bracket by (it would bisect to one end)
            raise ConvergenceError(f"{what}: the function is NaN at {x}",
                                   tried=f"bracketed Newton, step {it}", status="non-finite")
        if (fx > 0) == increasing:
            hi = x
        else:
            lo = x
        step = fx / dfx if dfx != 0 else None
        if step is not None and abs(step) <= rtol * abs(x):
            # converged; tested before the bracket check, since x - step may round to x == lo
            return x - step, it
        xn = x - step if step is not None else None
        if xn is None or not (lo < xn < hi):
            xn = (lo + hi) / 2 if hi != inf else (2 * x if x > 0 else 1 + abs(x))
            if lo == -inf:
                xn = x - 2 * abs(x) - 1
            step = x - xn
        if abs(step) <= rtol * abs(xn) or hi - lo <= rtol * abs(xn):
            return xn, it
        stalls = stalls + 1 if prev is not None and abs(step) > abs(prev) / 2 else 0
        if stalls >= 2 and abs(step) <= floor_ok * abs(xn):
            return xn, it
        prev = step
        x = xn
    raise ConvergenceError(f"{what}: no convergence in {maxiter} safeguarded Newton steps",
                           tried="bracketed Newton", status="max-iterations")


ROOT_OUT_OF_STEPS = 1
"""A point's code in ``failed`` (:func:`bracketed_newton_vec` with ``per_point``): its root did
not converge in ``maxiter`` steps, the function finite at its last step."""
ROOT_NOT_FINITE = 2
"""A point's code in ``failed``: its root did not converge, the function or its derivative not
finite at its last step."""


def bracketed_newton_vec(fdf: Callable, lo, hi, x0, *, increasing: bool, rtol: float = 1e-15,
                         maxiter: int = 200, what: str = "root", per_point: bool = False):
    """Vectorised float64 :func:`bracketed_newton`: one root per element of the arrays.

    ``fdf(x)`` maps an array to ``(f, f')`` arrays of the same shape. ``hi`` may hold ``inf``.
    Returns ``(x, iterations)`` with ``iterations`` the largest count over the elements. A point
    that has not converged after ``maxiter`` steps raises :class:`ConvergenceError` for all of
    them; with ``per_point`` it does not: the return is ``(x, iterations, failed)``, ``x`` NaN at
    the points that did not converge and ``failed`` an ``int8`` array, 0 where the root
    converged, :data:`ROOT_OUT_OF_STEPS` or :data:`ROOT_NOT_FINITE` (what the point's last step
    saw) where it did not; the other points' roots are those of the raising call. A point where
    ``f`` is NaN stops there at once (``ROOT_NOT_FINITE``; without ``per_point``
    :class:`ConvergenceError`, status ``non-finite``): NaN has no sign to move the bracket by,
    and taken as one sign the bracket would shrink to one of its ends.
    """
    x = np.array(x0, dtype=float, copy=True)
    if x.size == 1:
        return _bracketed_newton_one(fdf, lo, hi, x, increasing, rtol, maxiter, what, per_point)
    lo = np.broadcast_to(np.asarray(lo, dtype=float), x.shape).copy()
    hi = np.broadcast_to(np.asarray(hi, dtype=float), x.shape).copy()
    active = np.ones(x.shape, dtype=bool)
    finite = np.ones(x.shape, dtype=bool)  # (the function finite at each point's last step)
    nan = np.zeros(x.shape, dtype=bool)  # points stopped where the function was NaN
    for it in range(1, maxiter + 1):
        fx, dfx = fdf(x)
        fx = np.asarray(fx, dtype=float)
        dfx = np.asarray(dfx, dtype=float)
        if per_point:
            finite = np.where(active, np.isfinite(fx) & np.isfinite(dfx), finite)
        now = active & np.isnan(fx)  # no sign to move the bracket by: stopped at once
        if now.any():
            if not per_point:
                raise ConvergenceError(f"{what}: the function is NaN at {int(now.sum())} grid "
                                       "points (float64)", tried=f"bracketed Newton, step {it}",
                                       status="non-finite")
            nan |= now
            active &= ~now
        up = (fx > 0) == increasing
        hi = np.where(active & up, x, hi)
        lo = np.where(active & ~up, x, lo)
        with np.errstate(divide="ignore", invalid="ignore"):
            xn = x - fx / dfx
        bad = ~np.isfinite(xn) | (xn <= lo) | (xn >= hi)
        mid = np.where(np.isfinite(hi), 0.5 * (lo + hi), np.where(x > 0, 2 * x, 1 + np.abs(x)))
        xn = np.where(bad, mid, xn)
        xn = np.where(fx == 0, x, xn)  # an exact root stays put
        done = (np.abs(xn - x) <= rtol * np.abs(xn)) | (fx == 0) | (hi - lo <= rtol * np.abs(xn))
        x = np.where(active, xn, x)
        active &= ~done
        if not active.any():
            if per_point:
                return (np.where(nan, np.nan, x), it,
                        np.where(nan, ROOT_NOT_FINITE, 0).astype(np.int8))
            return x, it
    if per_point:
        failed = np.where(active, np.where(finite, ROOT_OUT_OF_STEPS, ROOT_NOT_FINITE), 0)
        failed = np.where(nan, ROOT_NOT_FINITE, failed)
        return np.where(active | nan, np.nan, x), maxiter, failed.astype(np.int8)
    raise ConvergenceError(f"{what}: {int(active.sum())} grid points did not converge in "
                           f"{maxiter} safeguarded Newton steps (float64)",
                           status="max-iterations")


def _bracketed_newton_one(fdf, lo, hi, x, increasing, rtol, maxiter, what, per_point=False):
    """:func:`bracketed_newton_vec` at a single point, in Python floats: the same IEEE double
    operations step by step (so the same iterates), without the cost of a dozen NumPy calls on
    one-element arrays per step, which dominates a float64 point."""
    shape = x.shape
    x = float(x.reshape(-1)[0])
    lo = float(np.asarray(lo, dtype=float).reshape(-1)[0])
    hi = float(np.asarray(hi, dtype=float).reshape(-1)[0])
    for it in range(1, maxiter + 1):
        fx, dfx = fdf(np.full(shape, x))
        fx = float(np.asarray(fx, dtype=float).reshape(-1)[0])
        dfx = float(np.asarray(dfx, dtype=float).reshape(-1)[0])
        if math.isnan(fx):  # no sign to move the bracket by: stopped at once
            if per_point:
                return np.full(shape, np.nan), it, np.full(shape, ROOT_NOT_FINITE, np.int8)
            raise ConvergenceError(f"{what}: the function is NaN at {x!r} (float64)",
                                   tried=f"bracketed Newton, step {it}", status="non-finite")
        if (fx > 0) == increasing:
            hi = x
        else:
            lo = x
        if dfx == 0 or not (math.isfinite(fx) and math.isfinite(dfx)):
            xn = math.nan  # NumPy's fx/0 (inf or nan) and non-finite steps: bisect below
        else:
            xn = x - fx / dfx
        if not math.isfinite(xn) or xn <= lo or xn >= hi:
            xn = 0.5 * (lo + hi) if math.isfinite(hi) else (2 * x if x > 0 else 1 + abs(x))
        if fx == 0:  # an exact root stays put
            xn = x
        done = abs(xn - x) <= rtol * abs(xn) or fx == 0 or hi - lo <= rtol * abs(xn)
        x = xn
        if done:
            return ((np.full(shape, x), it, np.zeros(shape, np.int8)) if per_point
                    else (np.full(shape, x), it))
    if per_point:
        last = ROOT_OUT_OF_STEPS if math.isfinite(fx) and math.isfinite(dfx) else ROOT_NOT_FINITE
        return np.full(shape, np.nan), maxiter, np.full(shape, last, np.int8)
    raise ConvergenceError(f"{what}: the point did not converge in {maxiter} safeguarded Newton "
                           "steps (float64)", status="max-iterations")
