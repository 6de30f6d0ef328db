"""Root finders used by every model.

* :func:`bracketed_newton` -- a scalar root of a *monotone* function, Newton steps safeguarded by a
  bracket that is shrunk at each evaluation (bisection when Newton would leave it). Works with
  ``mpmath.mpf`` or Python floats; the arithmetic follows the inputs.
* :func:`bracketed_newton_vec` -- the same, vectorised over NumPy arrays in float64 (one independent
  root per array element: parameter grids are solved in one call).
* :func:`newton_system` -- Newton's method for a square system in mpmath with an exact Jacobian,
  backtracking on the residual norm; reports iterations, residual and the Jacobian's condition.

Non-convergence raises :class:`replica.errors.ConvergenceError` with what was tried.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable

import mpmath
import numpy as np

from ..errors import ConvergenceError


def bracketed_newton(fdf: Callable, lo, hi, x0, *, increasing: bool, rtol, maxiter: int = 200,
                     what: str = "root"):
    """Root of a monotone ``f`` on the open interval ``(lo, hi)`` (``hi`` may be ``inf``).

    ``fdf(x)`` returns ``(f(x), f'(x))``. Each evaluation moves one end of the bracket (by the
    sign of ``f`` and the known direction of monotonicity), so the iteration cannot leave the
    interval where the root is unique. Returns ``(x, iterations)``; stops when the Newton step is
    below ``rtol * |x|``.
    """
    x = x0
    inf = mpmath.inf if isinstance(x0, mpmath.mpf) else float("inf")
    for it in range(1, maxiter + 1):
        fx, dfx = fdf(x)
        if fx == 0:
            return x, it
        if (fx > 0) == increasing:
            hi = x
        else:
            lo = x
        step = fx / dfx if dfx != 0 else None
        xn = x - step if step is not None else None
        if xn is None or not (lo < xn < hi):
            xn = (lo + hi) / 2 if hi != inf else (2 * x if x > 0 else 1 + abs(x))
            if lo == -inf:
                xn = x - 2 * abs(x) - 1
            step = x - xn
        if abs(step) <= rtol * abs(xn) or hi - lo <= rtol * abs(xn):
            return xn, it
        x = xn
    raise ConvergenceError(f"{what}: no convergence in {maxiter} safeguarded Newton steps",
                           tried=f"bracket ({lo}, {hi}), start {x0}")


def bracketed_newton_vec(fdf: Callable, lo, hi, x0, *, increasing: bool, rtol: float = 1e-15,
                         maxiter: int = 200, what: str = "root"):
    """Vectorised float64 :func:`bracketed_newton`: one root per element of the arrays.

    ``fdf(x)`` maps an array to ``(f, f')`` arrays of the same shape. ``hi`` may hold ``inf``.
    Returns ``(x, iterations)`` with ``iterations`` the largest count over the elements.
    """
    x = np.array(x0, dtype=float, copy=True)
    lo = np.broadcast_to(np.asarray(lo, dtype=float), x.shape).copy()
    hi = np.broadcast_to(np.asarray(hi, dtype=float), x.shape).copy()
    active = np.ones(x.shape, dtype=bool)
    for it in range(1, maxiter + 1):
        fx, dfx = fdf(x)
        fx = np.asarray(fx, dtype=float)
        dfx = np.asarray(dfx, dtype=float)
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
            return x, it
    raise ConvergenceError(f"{what}: {int(active.sum())} grid points did not converge in "
                           f"{maxiter} safeguarded Newton steps (float64)")


@dataclasses.dataclass
class NewtonReport:
    x: list
    iterations: int
    residual: Any
    condition: Any


def newton_system(F: Callable, J: Callable, x0, *, tol=None, maxiter: int = 60,
                  what: str = "system") -> NewtonReport:
    """Newton's method in mpmath for ``F(x) = 0`` with the exact Jacobian ``J``.

    ``F(x)`` returns a list of ``n`` mpf, ``J(x)`` an ``n x n`` ``mpmath.matrix``. Steps are halved
    (up to 30 times) while they do not decrease the max-norm of ``F``. Converged when the max-norm
    of ``F`` is below ``tol`` (default ``10**(-dps + 3)`` times the scale of ``x``) or the step is
    below the working epsilon relative to ``x``. The condition number is the infinity-norm
    condition of ``J`` at the solution.
    """
    eps = mpmath.eps
    if tol is None:
        tol = mpmath.mpf(10) ** (-mpmath.mp.dps + 3)
    x = mpmath.matrix([mpmath.mpf(v) for v in x0])
    n = len(x)

    def norm(v):
        return max(abs(vi) for vi in v) if len(v) else mpmath.mpf(0)

    fx = F(list(x))
    res = norm(fx)
    for it in range(1, maxiter + 1):
        Jx = J(list(x))
        try:
            dx = mpmath.lu_solve(Jx, mpmath.matrix([-v for v in fx]))
        except ZeroDivisionError as exc:  # singular Jacobian
            raise ConvergenceError(f"{what}: singular Jacobian", tried=f"Newton, step {it}") from exc
        t = mpmath.mpf(1)
        for _ in range(30):
            xn = x + t * dx
            fn = F(list(xn))
            rn = norm(fn)
            if rn <= res or rn <= tol:
                break
            t /= 2
        small_step = norm(t * dx) <= 8 * eps * max(norm(x), 1)
        x, fx, res = xn, fn, rn
        if res <= tol or small_step:
            Jx = J(list(x))
            try:
                cond = mpmath.norm(Jx, mpmath.inf) * mpmath.norm(mpmath.inverse(Jx), mpmath.inf)
            except ZeroDivisionError:
                cond = mpmath.inf
            return NewtonReport([x[i] for i in range(n)], it, res, cond)
    raise ConvergenceError(f"{what}: Newton did not converge in {maxiter} steps "
                           f"(residual {mpmath.nstr(res, 3)})", tried="damped Newton, exact Jacobian")


def system_report(F, J, scale=None) -> NewtonReport:
    """Residual and condition of a square system at a solution found by other means.

    ``F`` is the list of equation values, ``J`` the exact Jacobian (``mpmath.matrix``). The
    residual is the max-norm of ``F_i / scale_i`` (relative to the size of the unknown that
    equation determines, when ``scale`` is given); the condition number is the infinity-norm
    condition of ``J``.
    """
    n = len(F)
    sc = [1] * n if scale is None else [max(abs(v), mpmath.eps) for v in scale]
    res = max(abs(f) / s for f, s in zip(F, sc))
    try:
        cond = mpmath.norm(J, mpmath.inf) * mpmath.norm(mpmath.inverse(J), mpmath.inf)
    except ZeroDivisionError:
        cond = mpmath.inf
    return NewtonReport([], 0, res, cond)
