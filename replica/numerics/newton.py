r"""Newton's method for square systems, in mpmath (one point) and in float64 (parameter grids).

* :func:`newton_mp` -- Newton with the exact Jacobian at the working precision, with step halving
  on the max-norm of the residual. It stops when the full Newton step is below ``1000 eps``
  relative to the iterate (quadratic convergence has reached the working precision), or at the
  rounding floor of the equations: the step is already below ``10**(-dps/2)`` and either no step
  lowers the residual any more or the step shrank by less than 4x (quadratic convergence would
  square it; a residual made of cancelling terms of size :math:`T` cannot fall below about
  :math:`T\,\varepsilon`, and the steps it drives stop shrinking) -- the digits actually obtained
  are then measured by the caller's re-solve at higher precision. Past a third of the working
  precision its steps reuse the last Jacobian (chord steps, see :func:`newton_mp`).
  Otherwise it raises :class:`~replica.errors.ConvergenceError` with the
  :class:`~replica.numerics.result.Status` that describes the failure.
* :func:`newton_arb` -- the same iteration with every number a python-flint ball midpoint at the
  working precision (equations and Jacobian from the generated ``arb`` code, linear solves by
  ``arb_mat``), with no conversion between mpmath and flint inside the loop; past half the
  working precision its last step reuses the previous Jacobian (a chord step).
* :func:`damped_mp` -- the damped fixed-point iteration :math:`x \leftarrow x + d(\Phi(x) - x)`
  with adaptive damping, the slow but robust start for :func:`newton_mp` when no float64 start
  exists.
* :func:`iterate_grid` -- the same two ideas vectorised over the points of a float64 grid: at each
  sweep a Newton step (batched linear solves, step halving, accepted only where the relative change
  drops) and, for fixed-point systems, a damped step where Newton is rejected; every point keeps its
  own damping and its own convergence flag, and a point whose damped iteration diverges towards
  the boundary of the admissible domain is stopped by :func:`damped_mp`'s rule.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable

import mpmath
import numpy as np

from ..errors import ConvergenceError
from .result import Status


@dataclasses.dataclass
class NewtonReport:
    r"""Where :func:`newton_mp` stopped: the solution, the steps taken, the max-norm of the residual
    there, and the infinity-norm condition number of the Jacobian there.

    ``jacobian`` (where the iteration ran in ball arithmetic, :meth:`Machine.newton
    <replica.numerics.machine.Machine.newton>`; else ``None``): the midpoints, as exact balls,
    of the generated ``jacobian`` group (:math:`\partial\Phi_i/\partial x_j` or
    :math:`\partial F_i/\partial x_j`, row-major, in the unknowns themselves) at the iterate of
    which the last Newton step was computed (within that step of ``x``): an approximate
    Jacobian at ``x`` that a certification may take for its preconditioner
    (:func:`replica.numerics.certify.krawczyk`), where any approximation keeps the proof valid."""

    x: list
    iterations: int
    residual: Any
    condition: Any
    jacobian: Any = None
    chord: Any = None
    """(:func:`newton_mp`) the Jacobian of the last step, an ``mpmath.matrix`` in the
    iteration's own (scaled) unknowns: the first iteration matrix of a later solve of the same
    system (``J0``)."""
    rate: Any = None
    """(:func:`newton_mp`) the contraction observed for ``chord``: the largest ratio of a
    step taken with that matrix to the step before it (``None`` where no step followed the one
    that computed it), the ``rate`` of a later solve that starts with it."""
    start_residual: Any = None
    """(:func:`newton_mp`) the max-norm of the residual at the start ``y0``."""


def _condition(Jm, balls: bool = False) -> Any:
    try:
        inv = _ball_inverse(Jm) if balls else None
        inv = inv if inv is not None else mpmath.inverse(Jm)
        return mpmath.norm(Jm, mpmath.inf) * mpmath.norm(inv, mpmath.inf)
    except ZeroDivisionError:
        return mpmath.inf


def _ball_matrix(Jm):
    from flint import arb_mat

    from ..symbolic.codegen import arb_of

    return arb_mat([[arb_of(Jm[i, j]) for j in range(Jm.cols)] for i in range(Jm.rows)])


def _from_ball_matrix(M):
    from .certify import ball_to_mpf

    if not all(M[i, j].is_finite() for i in range(M.nrows()) for j in range(M.ncols())):
        return None
    return mpmath.matrix([[ball_to_mpf(M[i, j]) for j in range(M.ncols())]
                          for i in range(M.nrows())])


def _ball_inverse(Jm):
    """The inverse by python-flint at the working precision (midpoints), ``None`` where the
    ball computation cannot show ``Jm`` nonsingular (mpmath decides then)."""
    from .precision import ball_precision

    with ball_precision(mpmath.mp.dps):
        try:
            return _from_ball_matrix(_ball_matrix(Jm).inv(nonstop=True))
        except ZeroDivisionError:
            return None


def _ball_solve(Jm, rhs):
    """``Jm^-1 rhs`` by python-flint at the working precision (midpoints; the same Gaussian
    elimination as mpmath's LU, in C), mpmath's LU where the ball solve cannot proceed."""
    from flint import arb_mat

    from ..symbolic.codegen import arb_of
    from .precision import ball_precision

    with ball_precision(mpmath.mp.dps):
        out = _ball_matrix(Jm).solve(arb_mat([[arb_of(rhs[i])] for i in range(rhs.rows)]),
                                     nonstop=True)
        out = _from_ball_matrix(out)
    return out if out is not None else mpmath.lu_solve(Jm, rhs)



def jacobian_digits(dps: int) -> int:
    r"""The digits at which :func:`newton_mp`'s iteration matrix is evaluated for a solve at
    ``dps`` digits: :math:`\lfloor dps/2\rfloor + 5` (``dps`` itself where that is not fewer).

    The Jacobian only chooses the steps, never the iterate's equations or the stopping tests:
    with an iteration matrix of relative error :math:`\delta` a step from an iterate of error
    :math:`e` leaves :math:`O(\kappa\delta e + e^2)`, so the iteration converges to the root
    the equations define at ``dps`` digits whatever :math:`\delta` is, at a rate
    :math:`\kappa\delta` once :math:`e < \delta` (the chord steps of :func:`newton_mp`, whose
    contraction is checked, and which fall back to a fresh matrix when it fails). At
    :math:`\delta = 10^{-dps/2 - 5}` the steps from a float64 start (:math:`e \approx
    10^{-16}`) are those of the exact Jacobian to :math:`O(\kappa 10^{-dps/2 - 5})`, and the
    verifying re-solve at :math:`\approx 1.5\,dps` digits, which starts from this solve's
    solution with this matrix, gains :math:`dps/2 + 5` digits a step, its first step reaching
    its own precision as with the exact matrix. For a Jacobian that holds Gaussian integrals
    (the derivatives under the integral sign, the costliest evaluation of a solve) the
    quadrature at fewer digits takes fewer nodes, each cheaper."""
    return min(dps, dps // 2 + 5)


NEWTON_TRIED = "Newton with the exact Jacobian and step halving"


def stalled(what: str, res, step) -> ConvergenceError:
    """The error of a Newton iteration whose step halving found no decrease of the residual
    ``res`` (an ``mpf``) while the step ``step`` is still above the stopping floor."""
    return ConvergenceError(f"{what}: Newton stalled (residual {mpmath.nstr(res, 3)}, "
                            f"step {mpmath.nstr(step, 3)})", tried=NEWTON_TRIED,
                            status=Status.STALLED)


def not_converged(what: str, maxiter: int, res) -> ConvergenceError:
    """The error of a Newton iteration that used its ``maxiter`` steps (last residual ``res``)."""
    return ConvergenceError(f"{what}: Newton did not converge in {maxiter} steps "
                            f"(residual {mpmath.nstr(res, 3)})", tried=NEWTON_TRIED,
                            status=Status.MAX_ITERATIONS)


def newton_mp(F: Callable, J: Callable, y0, *, maxiter: int = 60, what: str = "system",
              balls: bool = False, condition: bool = True,
              residual: bool = True, J0=None, last_step: bool = True,
              inside: Callable | None = None, predict=False,
              rate=None) -> NewtonReport:
    r"""Solve ``F(y) = 0`` (``F`` returns a list, ``J`` an ``mpmath.matrix``) from ``y0``; with
    ``balls`` the linear solves and the condition number use python-flint (midpoints at the
    working precision, 5-10x faster than mpmath's LU for the systems here).

    The reported condition is that of the Jacobian of the last Newton step, at the iterate
    before the final correction (which is below ``1000 eps`` relative: the two Jacobians differ
    by that much, far below any digit a condition number is read to); ``condition=False``
    (a verifying re-solve, whose condition nobody reads) skips it (``None``).

    As in :func:`newton_arb`, once the last step :math:`\delta_{k-1}` is below
    ``10**(-dps/3)`` (relative) the next step is the chord step
    :math:`-J(y_{k-1})^{-1}F(y_k)` with the Jacobian of that last step: it differs from the
    Newton step by a relative :math:`O(\kappa\,|\delta_{k-1}|)`, so it decides the stopping
    tests as the Newton step would, and the iterate it gives has an error
    :math:`O(|\delta_{k-1}|\,|\delta_k|)` (chord steps converge linearly with the rate
    :math:`O(\kappa\,|\delta_{k-1}|) \le O(\kappa\,10^{-dps/3})`: from a float64 start,
    whose first step is about :math:`10^{-15}`, every later step reuses the first Jacobian);
    a chord step above ``10**(-dps/3)`` is discarded for a Newton step with a fresh Jacobian. (For a model whose
    equations are Gaussian integrals the Jacobian, the derivatives under the integral, is the
    costliest evaluation.) ``residual=False`` (a verifying re-solve) skips the evaluation of
    ``F`` after the final step: the report's residual is then the one before it.
    ``last_step=False`` (with ``residual=False``): the final step -- the one below
    ``1000 eps`` (relative) that ends the iteration -- is not taken; the solution reported is
    the iterate at which ``F`` was evaluated last, with that evaluation's residual, and its
    error is about that step's size (taking it would leave :math:`O(\kappa\,|\delta|^2)`):
    within ``1000 eps`` at the working precision (three digits), for a caller that reads
    fewer (the agreement check of a verifying re-solve at ``w + max(10, w // 2)`` digits reads
    ``w``, :func:`replica.numerics.driver.solve_params`) and evaluates its values where ``F``
    was evaluated: the same quadrature nodes, whose implicit roots the evaluation remembers
    (:meth:`replica.symbolic.implicit._Numeric.midpoint`).

    ``J0`` (optional): a Jacobian of the same system near ``y0`` (the last Jacobian of a solve
    at lower precision whose solution is ``y0``), taken for the first step as a chord step
    under the same rule: the step is kept only if it is below ``10**(-dps/3)`` (then it
    differs from the Newton step by a relative :math:`O(\kappa\,|y_0 - y_{J_0}|)`), else a
    fresh Jacobian is computed; so is every chord step that does not shrink at least 4x from
    the step before (a matrix that does not contract). The iterate, its equations and the
    stopping tests are those of this precision whatever ``J0`` is.

    ``inside`` (optional): a predicate on an iterate; a trial point of the line search where it
    is false is not evaluated, the step is halved as where ``F`` cannot be evaluated (the
    caller's declared domain: an admissible condition, positive unknowns).

    ``predict=True`` (a caller that verifies the solution by a re-solve at higher precision,
    :func:`replica.numerics.driver.solve_params`): the stopping test may be *predicted*
    instead of evaluated. A chord step :math:`\delta_k = -J_c^{-1}F(y_k)` with an iteration
    matrix :math:`J_c` whose contraction :math:`\rho` has been observed (the largest ratio
    :math:`|\delta_{j+1}|/|\delta_j|` of consecutive steps taken with it, this solve's or,
    ``rate``, the solve that computed ``J0``) leaves :math:`y_{k+1} = y_k + \delta_k` an error
    of about :math:`\rho\,|\delta_k|` (the chord map contracts errors by :math:`\theta =
    \|I - J_c^{-1}J\|`, and the ratio after a Newton step is about :math:`\theta/2`); where
    :math:`4\rho\,|\delta_k|` is already below the stopping test's ``1000 eps`` (relative;
    ``predict`` a number: that tolerance instead, for a re-solve whose caller reads fewer
    digits than it carries) and :math:`\delta_k` below ``10**(-dps/3)``, :math:`y_{k+1}` is
    returned without evaluating ``F`` there: the next step, which the evaluation would only
    measure to be below the tolerance, is predicted to be. The report's ``residual`` is then
    ``None`` (``F`` was not evaluated at the solution; the caller's re-solve evaluates it
    there, at its higher precision, ``start_residual``), and its ``rate`` is :math:`\rho`.
    Likewise an evaluated stop (a step below ``1000 eps``) takes that step without
    evaluating ``F`` after it for the residual (``None``); a step that is exactly 0 (``F``
    rounded to 0) ends where ``F`` was evaluated, and measures no contraction. Nothing of this is
    claimed unchecked: the caller's re-solve measures the digits of the solution returned
    (a prediction that fails shows as fewer agreeing digits, and more guard digits follow).
    Without ``predict`` every stopping test is evaluated, as above."""
    solve = _ball_solve if balls else mpmath.lu_solve
    y = mpmath.matrix([mpmath.mpf(v) for v in y0])
    n = len(y)

    def norm(v):
        return max(abs(v[i]) for i in range(n)) if n else mpmath.mpf(0)

    def as_list(v):
        return [v[i] for i in range(n)]

    try:
        fy = F(as_list(y))
    except (OverflowError, ZeroDivisionError, TypeError, ValueError) as exc:  # (a start at the
        # edge of the domain where a conjugate diverges: cosh of a number whose exponent mpmath
        # cannot represent; a start outside it, e.g. a user's --start q=1.5 where an integrand's
        # kink is complex; the message names the error, so an error of the code still shows)
        err = ConvergenceError(f"{what}: the equations cannot be evaluated at the start "
                               f"({type(exc).__name__}: {exc})",
                               tried="Newton with the exact Jacobian",
                               status=Status.NON_FINITE)
        err.division_at_start = isinstance(exc, ZeroDivisionError)
        raise err from None
    if not all(mpmath.isfinite(v) for v in fy):
        raise ConvergenceError(f"{what}: the equations are not finite at the start",
                               tried="Newton with the exact Jacobian", status=Status.NON_FINITE)
    res = start_res = norm(fy)
    small = mpmath.eps * 1000
    floor_ok = mpmath.mpf(10) ** (-(mpmath.mp.dps // 2))
    chord_ok = mpmath.mpf(10) ** (-(mpmath.mp.dps // 3))
    prev_step, prev_fresh, force_fresh = None, False, False
    Jy = J0
    chord_first = J0 is not None  # J0's step is taken as a chord step
    rho = rate if J0 is not None else None  # Jy's observed contraction (the docstring)
    tol = None if not predict else small if predict is True else mpmath.mpf(predict)

    def done(yv, it, r):
        return NewtonReport(as_list(yv), it, r, _condition(Jy, balls) if condition else None,
                            chord=Jy, rate=rho, start_residual=start_res)

    def step_with(Jm):
        try:
            d = solve(Jm, mpmath.matrix([-v for v in fy]))
        except ZeroDivisionError:
            return None
        return d if d is not None and all(mpmath.isfinite(d[i]) for i in range(n)) else None

    for it in range(1, maxiter + 1):
        scale_y = max(norm(y), 1)
        dy = None
        if Jy is not None and not force_fresh and (
                chord_first or (prev_step is not None and prev_step <= chord_ok * scale_y)):
            chord_first = False
            # the chord step (see the docstring): the Jacobian of the last step is accurate
            # to a relative 10^(-dps/3) here, and so is this step
            dy = step_with(Jy)
            if dy is not None and (norm(dy) > chord_ok * scale_y or (
                    prev_step is not None and norm(dy) > prev_step / 4) or (
                    prev_step is None and norm(dy) <= small * scale_y)):
                # not in the quadratic regime after all, or an iteration matrix that does not
                # contract (a chord step shrinks by a factor O(kappa 10^(-dps/3))), or J0's
                # first step, whose size alone would end the iteration (its contraction is not
                # seen yet): a fresh Jacobian
                dy = None
        fresh = dy is None
        if dy is None:
            Jy = J(as_list(y))
            rho = None  # a new matrix: its contraction not seen yet
            dy = step_with(Jy)
        if dy is None:
            raise ConvergenceError(f"{what}: singular Jacobian at step {it}",
                                   tried="Newton with the exact Jacobian",
                                   status=Status.SINGULAR_JACOBIAN)
        step = norm(dy)
        if not fresh and prev_step is not None and prev_step != 0 and step != 0:
            # (a chord step: the same matrix as the step before; a step that is exactly 0, F
            # rounding to 0, measures no contraction)
            ratio = step / prev_step
            rho = ratio if rho is None else max(rho, ratio)
        if step <= small * scale_y:
            if not (residual or last_step) or step == 0:  # the iterate where F was evaluated
                return done(y, it, res)
            y = y + dy
            if not residual:
                return done(y, it, res)
            if tol is not None:  # (a verified solve: the residual there is the re-solve's)
                return done(y, it, None)
            fy = F(as_list(y))
            return done(y, it, norm(fy))
        if (tol is not None and not fresh and rho is not None and step <= chord_ok * scale_y
                and 4 * rho * step <= tol * scale_y):
            # the predicted stop (docstring): y + dy is within 1000 eps of the root by the
            # contraction observed for this matrix; F is not evaluated there
            return done(y + dy, it, None)
        if (step <= floor_ok * scale_y and prev_step is not None and step > prev_step / 4
                and fresh and prev_fresh):  # (two Newton steps: chord steps shrink or go)
            # Past half the working precision Newton contracts quadratically (each step about
            # the square of the last); a step that shrinks by less than 4x here is driven by the
            # rounding noise of F, not by F itself (terms of size 1e20 that cancel leave a
            # residual of 1e20 eps): the iterate is as good as this precision makes it. Step
            # halving would otherwise keep accepting noise that happens to lower the residual
            # until the iteration limit. The digits obtained are measured by the caller.
            return done(y, it, res)
        prev_step, prev_fresh = step, fresh
        t = mpmath.mpf(1)
        for _ in range(30):
            yn = y + t * dy
            if inside is not None and not inside(as_list(yn)):
                t /= 2  # a trial point outside the caller's domain is not evaluated (docstring)
                continue
            try:
                fn = F(as_list(yn))
            except (OverflowError, ZeroDivisionError, TypeError, ValueError):
                # a trial point outside the equations' domain, where they cannot be evaluated
                # (the hyperbolic functions of a huge complex argument, whose exponent mpmath
                # cannot represent; a complex kink of an integrand at an overlap q > 1, which
                # the quadrature cannot place): no lower residual there, a shorter step
                t /= 2
                continue
            rn = norm(fn)
            if rn < res and all(mpmath.isfinite(v) for v in fn):
                break
            t /= 2
        else:
            if not fresh:  # a chord step that lowers no residual: a Newton step instead
                force_fresh = True
                continue
            if step <= floor_ok * scale_y:
                return done(y, it, res)
            raise stalled(what, res, step)
        y, fy, res = yn, fn, rn
        force_fresh = False
    raise not_converged(what, maxiter, res)


class DivisionAtStart(ZeroDivisionError):
    """A division by zero where the equations are first evaluated, at Newton's start
    (:func:`newton_arb`; :func:`newton_mp` marks its :class:`~replica.errors.ConvergenceError`
    with ``division_at_start``): the verified solve then asks, once, whether the start makes a
    denominator exactly 0 (:meth:`replica.numerics.machine.Machine.exact_singularity`) before
    it raises the precision."""


class BallsNotFinite(ArithmeticError):
    """A ball of :func:`newton_arb`'s evaluations is not finite (the caller then runs
    :func:`newton_mp`, whose evaluations fall back to mpmath)."""


def _mids(values) -> list:
    """The midpoints of finite balls as exact balls (radius 0)."""
    out = []
    for b in values:
        if not b.is_finite():
            raise BallsNotFinite
        out.append(b.mid())
    return out


def newton_arb(F: Callable, J: Callable, y0, *, maxiter: int = 60, what: str = "system",
               condition: bool = True, residual: bool = True,
               inside: Callable | None = None) -> NewtonReport:
    r""":func:`newton_mp` with every number a python-flint ball midpoint at the working precision
    (``F`` returns a list of balls, ``J`` an ``arb_mat``; ``y0`` a list of ``mpf``): the same
    iteration, step halving and stopping tests, without converting between mpmath and flint at
    every evaluation and every linear solve. The balls' radii are dropped (each operation's
    midpoint is the working-precision value); a ball that is not finite raises
    :class:`BallsNotFinite`. The report holds ``mpf`` values.

    One difference in the steps: once the last step :math:`\delta_{k-1}` is below
    ``10**(-dps/2)`` (relative), the next is the chord step :math:`-J(y_{k-1})^{-1}F(y_k)` with
    the Jacobian of that last step instead of a fresh one. It differs from the Newton step
    :math:`-J(y_k)^{-1}F(y_k)` by a relative :math:`O(\kappa\,|\delta_{k-1}|)` (:math:`J` is
    Lipschitz, :math:`y_k - y_{k-1} = \delta_{k-1}`), so its size decides the stopping tests as
    the Newton step would, and the iterate it gives has an error
    :math:`O(|\delta_{k-1}|\,|\delta_k|)`, below the working precision: the Jacobian of the
    final step (usually the costliest evaluation) is not computed. A chord step above
    ``10**(-dps/2)`` is discarded for a Newton step with a fresh Jacobian.

    ``residual=False`` (a verifying re-solve, whose residual nobody reads, as its condition
    with ``condition=False``) skips the evaluation of ``F`` after the final step: the report's
    residual is then the one before it."""
    from flint import arb, arb_mat

    from ..symbolic.codegen import arb_of
    from .certify import ball_to_mpf

    n = len(y0)
    y = [arb_of(mpmath.mpf(v)) for v in y0]
    zero = arb(0)

    def norm(v):
        out = zero
        for b in v:
            a = abs(b)
            if a > out:
                out = a
        return out

    def solve(Jm, rhs):
        try:
            out = Jm.solve(arb_mat([[b] for b in rhs]), nonstop=True)
        except ZeroDivisionError:
            return None
        vals = [out[i, 0] for i in range(n)]
        return _mids(vals) if all(b.is_finite() for b in vals) else None

    def cond(Jm):
        try:
            inv = Jm.inv(nonstop=True)
        except ZeroDivisionError:
            return mpmath.inf
        if not all(inv[i, j].is_finite() for i in range(n) for j in range(n)):
            return mpmath.inf
        # as _condition: mpmath.norm(., inf) of a matrix is its largest entry in magnitude
        nj = norm([Jm[i, j].mid() for i in range(n) for j in range(n)])
        ni = norm([inv[i, j].mid() for i in range(n) for j in range(n)])
        return ball_to_mpf((nj * ni).mid())

    try:
        fy = _mids(F(y))
    except ZeroDivisionError as exc:
        raise DivisionAtStart(str(exc)) from exc
    res = norm(fy)
    small = arb_of(mpmath.eps * 1000)
    floor_ok = arb_of(mpmath.mpf(10) ** (-(mpmath.mp.dps // 2)))
    one = arb(1)
    prev_step = None

    def report(yv, it, r, Jm):
        return NewtonReport([ball_to_mpf(b) for b in yv], it, ball_to_mpf(r),
                            cond(Jm) if condition else None)

    Jy = None
    for it in range(1, maxiter + 1):
        ny = norm(y)
        scale_y = ny if ny > one else one
        half = (floor_ok * scale_y).mid()
        dy = None
        if Jy is not None and prev_step is not None and prev_step <= half:
            # the chord step: past half the working precision the Jacobian of the last step,
            # taken that step away, is accurate to it (relative 10^(-dps/2)), and so is this step
            dy = solve(Jy, [-v for v in fy])
            if dy is not None and norm(dy) > half:
                dy = None  # not in the quadratic regime after all: a fresh Jacobian
        if dy is None:
            Jy = J(y)
            dy = solve(Jy, [-v for v in fy])
        if dy is None:
            raise ConvergenceError(f"{what}: singular Jacobian at step {it}",
                                   tried="Newton with the exact Jacobian",
                                   status=Status.SINGULAR_JACOBIAN)
        step = norm(dy)
        if step <= (small * scale_y).mid():
            y = [(a + b).mid() for a, b in zip(y, dy)]
            if not residual:
                return report(y, it, res, Jy)
            fy = _mids(F(y))
            return report(y, it, norm(fy), Jy)
        if step <= half and prev_step is not None and step > (prev_step / 4).mid():
            return report(y, it, res, Jy)  # rounding noise: see newton_mp
        prev_step = step
        t = one
        for _ in range(30):
            yn = [(a + t * b).mid() for a, b in zip(y, dy)]
            if inside is not None and not inside([ball_to_mpf(b) for b in yn]):
                t = t / 2  # outside the caller's domain: not evaluated (see newton_mp)
                continue
            fn = _mids(F(yn))
            rn = norm(fn)
            if rn < res:
                break
            t = t / 2
        else:
            if step <= half:
                return report(y, it, res, Jy)
            raise stalled(what, ball_to_mpf(res), ball_to_mpf(step))
        y, fy, res = yn, fn, rn
    raise not_converged(what, maxiter, ball_to_mpf(res))


#: sweeps in a row after which :func:`damped_mp` reads a steady drift towards the boundary of the
#: admissible domain as the iterate running to that boundary (see there)
BOUNDARY_RUN_SWEEPS = 12


def damped_mp(phi: Callable, x, *, admissible: Callable | None = None, damping=None,
              rtol=None, maxiter: int = 50000, what: str = "system",
              margins: Callable | None = None) -> tuple[list, int]:
    r"""Damped fixed-point iteration of ``x = phi(x)`` in mpmath with a relative stopping rule;
    the damping halves (down to 1/64) whenever the relative change grows. Where the map
    contracts strongly between the last two iterates, :math:`\max_i|\phi_i(x_k) -
    \phi_i(x_{k-1})| \le \tfrac14\max_i|x_{k,i} - x_{k-1,i}|` (a map nearly constant, such as
    the state evolution at a tiny sample ratio, whose fixed point lies orders of magnitude below
    the start), the step is undamped, :math:`x \leftarrow \phi(x)`: a damped step would only
    shrink the distance to the fixed point by the factor :math:`1 - d` per sweep (thousands of
    sweeps from :math:`m = 1/2` to :math:`m = 10^{-300}`), the undamped one contracts it by the
    map's own factor. Returns ``(x, sweeps)``.

    ``margins`` (optional): ``x -> [(label, g), ...]``, the admissibility conditions
    :math:`g(x) > 0` with their labels (``"m < 1"`` for :math:`g = 1 - m`). An iterate that runs
    to the boundary of that domain is stopped: when for :data:`BOUNDARY_RUN_SWEEPS` sweeps in a
    row, with the damping at its floor 1/64, the relative change grew at every sweep and one
    margin :math:`g` fell at every sweep, the iterate is pushed towards :math:`g = 0` harder
    the closer it gets -- the opposite of an iteration that approaches a fixed point, whose
    change shrinks (by the factor :math:`1 - d(1 - \lambda)` per sweep for a map with
    derivative :math:`\lambda < 1` there). Without the stop, the iteration crawls at the floor
    damping towards the boundary, where the equations' unknowns conjugate to :math:`g` grow
    without bound (the Rademacher teacher above its algorithmic threshold: :math:`m \to 1`,
    :math:`\hat m \to \infty`, integrals of :math:`\cosh` of ever larger arguments), for
    thousands of sweeps and minutes. So is an iterate at which the map cannot be evaluated
    (an error of the map: a quadrature that fails, an overflow) after a margin fell at every one
    of the last ``BOUNDARY_RUN_SWEEPS // 2`` sweeps (at a large sample ratio the iteration
    reaches :math:`1 - m = 10^{-4}` in 13 sweeps, where the quadrature of the teacher's
    integrals fails); without such a fall the map's error is raised as it is. The error
    (status ``inadmissible``) names the condition
    and how far its margin fell: it reports what the iteration did, not a proof that no fixed
    point lies between the last iterate and the boundary. The same stop fires where the
    iteration diverges from a fixed point that repels it (a Jacobian eigenvalue of the map
    above 1, for every damping) while a margin happens to fall far from its boundary (logistic
    regression at alpha = 3, lam = 1e-4, eta = 9/10: the margin of q > eta^2 m^2 falls from 671
    to 666, while Newton from a start near the solution converges): so the message says that
    the iteration diverges and which margin fell how far, and that a start nearer a solution
    may reach one, not that the boundary was reached."""
    d = mpmath.mpf(1) / 2 if damping is None else mpmath.mpf(damping)
    floor = mpmath.mpf(1) / 64
    drift = []  # the margins of the sweeps since the change last failed to grow
    trail = []  # the margins of the last sweeps
    rtol = rtol if rtol is not None else mpmath.mpf(10) ** (-min(mpmath.mp.dps - 5, 14))
    prev = mpmath.inf
    last = None  # (x, phi(x)) of the sweep before
    for it in range(1, maxiter + 1):
        if admissible is not None and not admissible(x):
            raise ConvergenceError(f"{what}: the iteration left the admissible domain",
                                   tried=f"damped fixed-point iteration, sweep {it}",
                                   status=Status.INADMISSIBLE)
        if margins is not None:
            trail = (trail + [margins(x)])[-(BOUNDARY_RUN_SWEEPS + 1):]
        try:
            fx = phi(x)
        except (ConvergenceError, OverflowError, ZeroDivisionError, ValueError) as exc:
            fell = _falling_margin(trail, BOUNDARY_RUN_SWEEPS // 2)
            if fell is None:
                if it == 1 and isinstance(exc, ZeroDivisionError):
                    raise DivisionAtStart(str(exc)) from exc
                raise
            label, seq = fell
            raise ConvergenceError(
                f"{what}: the iteration runs towards the boundary of the domain {label} (its "
                f"margin fell from {mpmath.nstr(seq[0], 3)} to {mpmath.nstr(seq[-1], 3)} in the "
                f"last {len(seq) - 1} sweeps), where the equations could not be evaluated at sweep "
                f"{it}: no solution with {label} was reached",
                tried="damped fixed-point iteration in mpmath from the declared start",
                status=Status.INADMISSIBLE) from None
        if not all(mpmath.isfinite(v) for v in fx):
            raise ConvergenceError(f"{what}: non-finite map value",
                                   tried=f"damped fixed-point iteration, sweep {it}",
                                   status=Status.NON_FINITE)
        if any(isinstance(v, mpmath.mpc) and v.imag != 0 for v in fx):
            # (a square root or logarithm of a value that crossed 0 -- at alpha = 1e-300 the
            # teacher's map cancels 150 digits): the next iterate would not be real
            raise ConvergenceError(f"{what}: the map has a complex value: the iterate left the "
                                   "real domain", tried=f"damped fixed-point iteration, sweep "
                                   f"{it}", status=Status.INADMISSIBLE)
        fx = [v.real if isinstance(v, mpmath.mpc) else v for v in fx]
        if margins is not None:
            _refuse_on_boundary(fx, margins, trail, what, it)
        r = max(abs(a - b) / max(abs(a), abs(b)) for a, b in zip(fx, x))
        if r < rtol:
            return list(fx), it
        if r >= prev:
            d = max(d / 2, floor)
        if margins is not None:
            drift = _boundary_drift(drift, r, prev, d == floor, trail[-1], what, it)
        prev = r
        step = d
        if last is not None:
            moved = max(abs(a - b) for a, b in zip(x, last[0]))
            if moved > 0 and max(abs(a - b) for a, b in zip(fx, last[1])) <= moved / 4:
                step = 1  # a strong contraction: the undamped step
        last = (x, fx)
        # the undamped step is phi(x) itself, not x + (phi(x) - x): where phi(x) is far below
        # x (m = 0.25 -> 7.6e-301 at alpha = 1e-300) the difference rounds to -x and the sum
        # to exactly 0, where the map divides by m
        x = list(fx) if step == 1 else [xi + step * (fi - xi) for xi, fi in zip(x, fx)]
    raise ConvergenceError(f"{what}: the damped iteration did not converge in {maxiter} sweeps",
                           tried="damped fixed-point iteration in mpmath (adaptive damping)",
                           status=Status.MAX_ITERATIONS)


def _refuse_on_boundary(fx, margins: Callable, trail: list, what: str, sweep: int) -> None:
    r"""Raises :class:`ConvergenceError` (``inadmissible``) where the map's value ``fx`` lies
    on the boundary of the declared domain to the working precision, or beyond it (a margin
    :math:`g(\phi)` at most its change when one value :math:`\phi_i` moves by
    :math:`2^{4-p}\phi_i` at :math:`p` bits -- :math:`1 - m` against :math:`2^{4-p}` at
    :math:`m \approx 1`, :math:`-z` against :math:`2^{4-p}|z|`, so a tiny :math:`z` is resolved:
    a point whose margin the working precision does not resolve is not shown to be inside): no
    such iterate is a solution with
    :math:`g > 0`, though the map may be evaluable there (the Rademacher teacher above its
    algorithmic threshold, whose fixed point is perfect recovery, :math:`m = 1`: at 30 digits
    :math:`\phi(m) = 1` at :math:`1 - m = 2\cdot10^{-4}` and at :math:`1 - m = 5\cdot10^{-21}`,
    where Newton and the verifying re-solve then fail). The message says how the margin fell
    before, where it did at every one of the last ``BOUNDARY_RUN_SWEEPS // 2`` sweeps (as the
    stop where the map cannot be evaluated)."""
    at = margins(fx)
    eps = mpmath.mpf(2) ** (4 - mpmath.mp.prec)
    moved = [margins([v * (1 + eps) if j == i else v for j, v in enumerate(fx)])
             for i in range(len(fx))]
    bad = [label for k, (label, g) in enumerate(at)
           if not _real(g) > max(abs(_real(m[k][1]) - _real(g)) for m in moved)]
    if not bad:
        return
    fell = _falling_margin(trail + [at], BOUNDARY_RUN_SWEEPS // 2)
    if fell is not None and fell[0] in bad:
        label, seq = fell
        how = (f"the iteration runs towards the boundary of the domain {label} (its margin "
               f"fell from {mpmath.nstr(seq[0], 3)} to {mpmath.nstr(seq[-2], 3)} in the last "
               f"{len(seq) - 2} sweeps), where the map's value lies on the boundary at sweep "
               f"{sweep}")
    else:
        label = bad[0]
        how = f"the map's value lies on the boundary of the domain {label} at sweep {sweep}"
    raise ConvergenceError(f"{what}: {how}: no solution with {label} was reached",
                           tried="damped fixed-point iteration in mpmath from the declared start",
                           status=Status.INADMISSIBLE)


def _falling_margin(trail: list, sweeps: int):
    """``(label, margins)`` of the first condition whose margin fell at every one of the last
    ``sweeps`` sweeps of ``trail`` (``[[(label, g), ...], ...]``, one entry a sweep), or
    ``None``."""
    if len(trail) <= sweeps:
        return None
    for j, (label, _) in enumerate(trail[-1]):
        seq = [_real(t[j][1]) for t in trail]
        k = len(seq) - 1
        while k > 0 and seq[k] < seq[k - 1]:
            k -= 1
        if len(seq) - 1 - k >= sweeps:
            return label, seq[k:]
    return None


def _real(g):
    return g.real if isinstance(g, mpmath.mpc) else g


def _boundary_drift(drift: list, r, prev, at_floor: bool, margin_values, what: str,
                    sweep: int) -> list:
    """The bookkeeping of :func:`damped_mp`'s stop at the boundary: ``drift`` extended by this
    sweep (``r``: its relative change, ``prev`` the one before, ``at_floor``: the damping is at
    its floor, ``margin_values``: ``[(label, g), ...]`` at the iterate), or emptied where the
    change did not grow; raises :class:`ConvergenceError` when a margin fell at every one of
    :data:`BOUNDARY_RUN_SWEEPS` such sweeps in a row."""
    values = [(label, _real(g)) for label, g in margin_values]
    if not (at_floor and r > prev):
        return [values]
    drift = drift + [values]
    if len(drift) <= BOUNDARY_RUN_SWEEPS:
        return drift
    drift = drift[-(BOUNDARY_RUN_SWEEPS + 1):]
    for j, (label, _) in enumerate(values):
        seq = [sweep_values[j][1] for sweep_values in drift]
        if all(b < a for a, b in zip(seq, seq[1:])):
            raise ConvergenceError(
                f"{what}: the damped iteration diverges (each of its last "
                f"{BOUNDARY_RUN_SWEEPS} changes larger than the one before at the floor damping "
                f"1/64, at sweep {sweep}) and runs towards the boundary of the domain {label} "
                f"(its margin fell from "
                f"{mpmath.nstr(seq[0], 3)} to {mpmath.nstr(seq[-1], 3)}): no solution with "
                f"{label} was reached from this start (one nearer a solution may reach it)",
                tried="damped fixed-point iteration in mpmath from the declared start",
                status=Status.INADMISSIBLE)
    return drift


CHORD_SHRINK = 100.0
"""A chord step of :func:`iterate_grid` (``reuse > 0``) that shrinks a point's relative change
less than this many times ends the reuse of its Jacobian: the next Newton step there evaluates
one."""

GRID_REUSE = 1e-2
"""The ``reuse`` of :func:`iterate_grid` on the float64 path
(:meth:`~replica.numerics.machine.Machine.grid`): a point's Jacobian serves its Newton steps
while its iterate stays within a relative 1e-2 of where it was evaluated."""


def _grid_state(x):
    """Bookkeeping of a grid iteration on ``x`` (shape ``(n, *grid)``): ``(n, grid shape, number
    of points, the iterates flattened to (n, N), converged flags, iteration counts, last
    change)``."""
    n, shape = x.shape[0], x.shape[1:]
    N = int(np.prod(shape, dtype=int))
    return (n, shape, N, np.array(x, dtype=float).reshape(n, N), np.zeros(N, bool),
            np.zeros(N, int), np.full(N, np.inf))


def _grid_result(X, done, iters, rel, n, shape):
    return (X.reshape((n,) + shape), done.reshape(shape), iters.reshape(shape),
            rel.reshape(shape))


def _relative_change(new, old):
    scale = np.maximum(np.maximum(np.abs(new), np.abs(old)), 1e-300)
    return np.max(np.abs(new - old) / scale, axis=0)


def iterate_grid(phi: Callable, jac: Callable, x, *, fixed_point: bool, positive: bool,
                 damping=0.5, rtol=1e-13, maxiter=20000, newton_from=np.inf, reuse=0.0,
                 margins: Callable | None = None, precise: tuple | None = None,
                 jacobians=None, ghost: int = 0):
    r"""Solve :math:`x = \Phi(x)` at every point of a float64 grid (vectorised over the points
    still active).

    ``phi(xa, idx)`` returns :math:`\Phi` at the points ``idx`` (an ``(n, m)`` array for ``xa`` of
    shape ``(n, m)``), ``jac(xa, idx)`` the ``n*n`` entries of :math:`d\Phi/dx` (row-major). A
    root system :math:`F = 0` may be passed as :math:`\Phi = x - F` with ``fixed_point=False``
    (then only Newton steps are taken), but :func:`newton_grid` is the solver for those. Each sweep tries, at points whose relative change
    :math:`\max_i |\Phi_i - x_i|/|x_i|` is below ``newton_from``, a Newton step on
    :math:`x - \Phi(x)` (step halving, accepted only if the relative change drops); elsewhere --
    and where Newton is rejected -- a fixed-point system takes the damped step
    :math:`x \mathrel{+}= d(\Phi - x)`, each point halving its own ``d`` (down to 1/64) when its
    change grows. With ``positive``, a point with a negative unknown is not admissible; an exact
    0 is, as in the mpmath start iteration (ridge logistic regression with labels independent
    of the teacher, :math:`\eta = 0`, has its fixed point at :math:`m = 0` exactly: Newton steps
    that reached it were rejected, and the damped steps shrank :math:`m` by a constant factor,
    relative change 1, for all ``maxiter`` sweeps).
    A point has converged when its relative change is below ``rtol`` (or stays within
    ``100 rtol``, the rounding floor); a point where :math:`\Phi` is not finite and no Newton
    step was accepted takes no step, so it stops there, not converged. As in :func:`damped_mp`,
    a point where the map contracts strongly between its last two damped iterates,
    :math:`\max_i|\Phi_i(x_k) - \Phi_i(x_{k-1})| \le \tfrac14\max_i|x_{k,i} - x_{k-1,i}|`, takes
    the undamped step :math:`x \leftarrow \Phi(x)` (with ``positive``, only where
    :math:`\Phi(x) \ge 0`): a map nearly constant (a committee at :math:`\alpha = 10^{-300}`,
    whose fixed point is near :math:`10^{-301}` while the start is 1/2) would otherwise shrink the
    distance by :math:`1 - d` per sweep, with :math:`d` halved to 1/64 because the relative change
    stays 1 -- thousands of sweeps.

    **Work not repeated.** Where a Newton step was accepted, :math:`\Phi` at the new iterate was
    evaluated to accept it; the next sweep uses that value instead of evaluating
    :math:`\Phi` there again (only points that took a damped step, or none, are evaluated).
    With ``reuse`` :math:`= \tau > 0` (a chord step), a point keeps the matrix
    :math:`I - \Phi'(x_J)` of its latest Jacobian evaluation and takes its next Newton steps
    with it while its iterate is within a relative :math:`\tau` of :math:`x_J`
    (:math:`\max_i |x_i - x_{J,i}|/|x_i| \le \tau`) and each such step shrank the relative
    change at least :data:`CHORD_SHRINK` times; otherwise ``jac`` is evaluated, at those points
    only. A chord step is the Newton step of a Jacobian off by about :math:`\tau` relative,
    so it contracts the error by about :math:`\kappa\tau` instead of squaring it: the fixed
    point (where :math:`\Phi(x) = x`, the same map) and the convergence test are unchanged,
    the iterates and the sweep count differ. A point whose chord step is rejected at every
    halving takes, in the same sweep, the Newton step of a Jacobian evaluated at its iterate
    (the step of ``reuse = 0``) before any damped step, so the damped iteration sees only what
    it saw before. ``jacobians`` (with ``reuse > 0``; an ``(N, n, n)`` array, the grid's
    points flattened): matrices :math:`I - \Phi'` that approximate those at the start ``x``
    (:func:`iterate_grid_continued` interpolates its seeds'), kept as if evaluated there: a
    point's first Newton steps are chord steps with its matrix (where finite), under the same
    rules -- a step rejected at every halving is retried with a Jacobian evaluated at the
    iterate, and one that shrinks the change less than :data:`CHORD_SHRINK` times ends the
    matrix's use. Returns ``(x, converged, iterations, relative change)``.

    **A point that diverges** (``margins``, a fixed-point system): ``margins(xa, idx)``
    returns the admissibility margins :math:`g_k(x)` (``K`` arrays of the points ``idx``;
    the condition is :math:`g_k > 0`). A point stops, not converged, by the rule of
    :func:`damped_mp`: when at each of :data:`BOUNDARY_RUN_SWEEPS` sweeps in a row it took the
    damped step (no Newton step accepted, :math:`\Phi` finite) with its damping at the floor
    1/64, its relative change grew (larger at the sweep's iterate than at the previous sweep's
    iterate), and one margin fell strictly at every one of them (from the iterate before the
    run to the run's last: ``BOUNDARY_RUN_SWEEPS + 1`` iterates) -- the iterate is pushed away
    from any fixed point while it approaches the boundary of the admissible domain. The margins
    are evaluated only at points whose sweep met the first conditions (and, where such a run
    begins, at the iterate of the sweep before), so they cost nothing where no point diverges;
    the other points' iterations, values and statuses are those without ``margins``. A point
    the first rule stops then has a second look: its iteration without the rule, up to
    :data:`SECOND_LOOK_SWEEPS` sweeps from its start, with the ghost rule below (``ghost`` =
    :data:`GHOST_SWEEPS`): where that converges (a Newton step caught a slow approach: glm_ridge
    at alpha = 0.2, lam = 1e-3, sigma = 1/2, V growing from 1 to ~800 while the margin
    rho + sigma^2 - 2m + q falls from 27 to its value 1.11 at the solution, stopped at sweep 23,
    converged at sweep 56), the point is converged, else it keeps the first rule's stop (its
    iterate, sweep, change and reason). Since the rule changes no iterate, the iteration
    without it is this one up to the stop: the second look goes on from there, in place (the
    point's state kept, its sweeps counted from its start), and ends where the iteration from
    the start would -- at a sweep where the ghost rule's condition holds (tracked at every
    point from its first sweep; one met before the stop ends the look at once), where the map
    is not finite, or at the cap -- neither rule of the margins nor the check ``precise``
    acting on it. (Session 55 began it again from the start: the Rademacher teacher's
    alpha = 1.5010, stopped at sweep 24, its first 24 sweeps evaluated twice, 565 evaluations
    of Phi for the point and a converging neighbour against 348 now.) And by
    :func:`damped_mp`'s second rule: a point whose map is not finite at its iterate (where no
    Newton step was accepted it stops there, not converged, in any case -- an overflow, a
    quadrature that fails: the float64 form of the map's error that ``damped_mp`` catches) after
    a margin fell strictly at each of the last ``BOUNDARY_RUN_SWEEPS // 2`` sweeps (its
    iterates at the sweeps' starts, whatever step -- damped or Newton -- led from one to the
    next) is recorded as stopped at the boundary, with the fall over up to
    :data:`BOUNDARY_RUN_SWEEPS` sweeps back (the Rademacher teacher above its algorithmic
    threshold: :math:`1 - m` falls from 0.15 to 1e-5 in 12 sweeps, where the teacher's
    integrals overflow); without such a fall it stops as before. The last
    ``BOUNDARY_RUN_SWEEPS + 1`` iterates of every point are kept for that (an array of
    ``13 n N`` floats), their margins evaluated only at the points whose map failed. Returns
    then ``(x, converged, iterations, relative change, drift)``, ``drift`` a
    :class:`GridDrift` of the points stopped.

    **A point float64 cannot resolve** (``precise``, a fixed-point system: ``(phi_x, jac_x)``,
    :math:`\Phi` and :math:`\Phi'` as ``phi`` and ``jac`` but evaluated in extended
    precision, ``longdouble`` arrays): at a sweep where a point's damping is at most
    ``damping / 4`` (its damped iteration's change grew at two sweeps at least, recently) and
    its Newton step is taken with a Jacobian evaluated there, that step :math:`\delta = (I - \Phi')^{-1}(\Phi - x)` is computed again from the
    extended-precision :math:`\Phi, \Phi'` (eliminated in ``longdouble``); where the two
    differ, in the unknowns' relative scale (:math:`\max_i|\cdot_i|/|x_i|`), by more than half
    the extended-precision step, the float64 step has no correct digit. At
    :data:`BOUNDARY_RUN_SWEEPS` such sweeps in a row (a chord step between them neither counts
    nor ends the run; a damping above ``damping / 4`` or a checked step with a digit ends it)
    the point stops, recorded in ``drift``
    (``unresolved``, status ``stalled``; ``first``: the median of those sweeps' relative step
    errors, ``last``: the last one's): neither its damped iteration nor float64 Newton steps can converge there (the
    noiseless LASSO at lam = 1e-5, where the risk eps - 2m + q ~ 1e-10 cancels 9 digits and the
    Newton matrix in the relative scale has condition 1e13-1e19: the float64 iteration wandered
    for 10906 sweeps, the same iteration with the map in extended precision converges). The
    check costs an extended-precision evaluation at those points and sweeps only; it changes no
    iterate.

    **A ghost** (``ghost`` :math:`= K > 0`; the second look's is :data:`GHOST_SWEEPS`): a point whose relative
    change :math:`r_k` after sweep :math:`k` has not fallen below half its reference value
    (:math:`r` at the last sweep that halved it, or at the first sweep) for :math:`K` sweeps in
    a row, each of which tried a Newton step (a sweep without one ends the run: a damped
    iteration alone, ``newton_from = 0``, is never stopped), that reference being at most
    :data:`GHOST_CHANGE`, stops there, not converged. Every such sweep tried a Newton step
    from a Jacobian at its iterate (a rejected chord step is retried with one) and halved it
    to :math:`t = 1/16` without lowering :math:`r`: the iterate stays where
    :math:`\|\Phi(x) - x\|` is small but bounded away from 0 and :math:`I - \Phi'` is nearly
    singular -- the ghost of a saddle-node past its spinodal, where
    :math:`\Phi(x) - x` keeps a positive minimum (the Rademacher teacher at alpha = 1.501,
    :math:`r \approx 1.29\times 10^{-3}` for 140 sweeps; phase retrieval at alpha = 1.132,
    :math:`r = 4.43\times 10^{-4}` for 400). Near a regular or a double root the Newton steps
    halve :math:`r` at least every few sweeps; the slow approach the second look exists for
    (glm_ridge, above) stalls at :math:`r \approx 0.3`-:math:`0.5`, far above
    :data:`GHOST_CHANGE`, and is never stopped by this rule.
    """
    n, shape, N, X, done, iters, rel = _grid_state(x)
    f_known = np.full((n, N), np.nan)  # Phi at a point's iterate, where already evaluated
    has_f = np.zeros(N, bool)
    A_kept = np.zeros((N, n, n))  # a point's latest I - Phi' and where it was evaluated
    x_kept = np.full((n, N), np.nan)
    has_A = np.zeros(N, bool)
    if jacobians is not None and reuse > 0:  # (approximate matrices at the start: chord steps)
        A_kept = np.array(jacobians, dtype=float).reshape(N, n, n)
        has_A = np.all(np.isfinite(A_kept), axis=(1, 2))
        x_kept = np.where(has_A, X, np.nan)
    d = np.full(N, float(damping))
    prev = np.full(N, np.inf)
    idx = np.arange(N)
    eye = np.eye(n)
    last_x = np.full((n, N), np.nan)  # a point's last damped iterate and Phi there (NaN: none)
    last_f = np.full((n, N), np.nan)
    floor = 1 / 64
    watch = margins is not None and fixed_point
    drift = GridDrift.none(N)
    resolve = precise is not None and fixed_point and newton_from > 0
    if resolve:
        noisy = np.zeros(N, int)  # sweeps in a row whose float64 Newton step had no digit
        noise = np.full((BOUNDARY_RUN_SWEEPS, N), np.nan)  # (their relative step errors)
    if ghost > 0:
        ref = np.full(N, np.inf)  # r at a point's last sweep that halved it
        since = np.zeros(N, int)  # sweeps since then
    if watch:  # (the rule of damped_mp, see the docstring)
        # the second look (see the docstring): a point the first rule stops iterates on in
        # place, without the rule, as its iteration from the start without it would
        look_cap = min(maxiter, SECOND_LOOK_SWEEPS)
        looking = np.zeros(N, bool)  # (the points now in their second look)
        ghosted = np.zeros(N, bool)  # the ghost rule's condition met at some sweep
        look_ref = np.full(N, np.inf)  # (the ghost rule's reference and sweeps, every point)
        look_since = np.zeros(N, int)
        kept_X = np.full((n, N), np.nan)  # the iterate, sweep and change at the first rule's
        kept_iters = np.zeros(N, int)  # stop, which a point keeps where its second look
        kept_rel = np.full(N, np.inf)  # does not converge
        r_before = np.full(N, np.inf)  # the relative change at a point's previous iterate
        x_before = np.full((n, N), np.nan)  # and that iterate
        in_run = np.zeros(N, bool)  # the previous sweep met the conditions of a run
        falls = g_last = g_first = None  # (K, N): a margin's falls in a row, its last value,
        # and its value before the first of those falls (allocated at the first run)
        T = BOUNDARY_RUN_SWEEPS + 1
        trail = np.full((T, n, N), np.nan)  # the iterates of a point's last T sweeps (sweep s
        # at s % T), whose margins are evaluated only where the map fails

    def F(xv, ix):
        m = ix.size
        with np.errstate(all="ignore"):
            return np.array([np.broadcast_to(v, (m,)) for v in phi(xv, ix)], dtype=float)

    def change(fx, xv):
        with np.errstate(all="ignore"):
            r = _relative_change(fx, xv)
        ok = np.all(np.isfinite(fx), axis=0)
        if positive:
            ok &= np.all(xv >= 0, axis=0)
        return np.where(ok, r, np.inf)

    def jacobian_matrices(xa, ix):
        """``I - Phi'`` at the points ``ix`` (iterates ``xa``), an ``(m, n, n)`` array."""
        m = ix.size
        with np.errstate(all="ignore"):
            Jm = np.array([np.broadcast_to(v, (m,)) for v in jac(xa, ix)], dtype=float)
        return eye - np.moveaxis(Jm.reshape(n, n, m), -1, 0)

    def newton_trials(xa, r, fx, A, pts, newton, f_new):
        """The Newton step (matrices ``A``) at the positions ``pts`` of the sweep, halved until
        the relative change drops (up to 5 times); marks ``newton``, updates ``xa``, ``r`` and
        ``f_new`` (Phi at the accepted iterates). Returns which of ``pts`` had a step to try
        (``A`` and the residual finite, the systems solved)."""
        b = (fx[:, pts] - xa[:, pts]).T
        good = np.all(np.isfinite(A), axis=(1, 2)) & np.all(np.isfinite(b), axis=1)
        A = np.where(good[:, None, None], A, eye)
        b[~good] = 0.0
        try:
            dx = np.linalg.solve(A, b[..., None])[..., 0].T
        except np.linalg.LinAlgError:
            return np.zeros(pts.size, bool)
        t = 1.0
        for _ in range(5):  # (Phi evaluated only at the points still trying a step)
            sel = np.flatnonzero(good & ~newton[pts])
            if sel.size == 0:
                break
            trial = pts[sel]
            xn = xa[:, trial] + t * dx[:, sel]
            fn = F(xn, idx[trial])
            rn = change(fn, xn)
            acc = rn < r[trial]
            if positive:
                acc &= np.all(xn >= 0, axis=0)
            hit = trial[acc]
            xa[:, hit] = xn[:, acc]
            f_new[:, hit] = fn[:, acc]
            r[hit] = rn[acc]
            newton[hit] = True
            t /= 2
        return good

    for it in range(1, maxiter + 1):
        if idx.size == 0:
            break
        m = idx.size
        xa = X[:, idx]
        if watch:
            trail[it % T][:, idx] = xa
        known = has_f[idx]
        if known.all():
            fx = f_known[:, idx]
        elif not known.any():
            fx = F(xa, idx)
        else:
            fx = f_known[:, idx]
            fx[:, ~known] = F(xa[:, ~known], idx[~known])
        r = change(fx, xa)
        r0 = r.copy()
        newton = np.zeros(m, bool)
        f_new = np.full((n, m), np.nan)
        cand = (r < newton_from) & (r >= rtol)
        checked = None  # (positions, float64 step had no digit, its relative error)
        if cand.any():
            chord = np.zeros(m, bool)
            if reuse > 0:
                with np.errstate(all="ignore"):
                    near = np.max(np.abs(xa - x_kept[:, idx])
                                  / np.maximum(np.abs(xa), 1e-300), axis=0) <= reuse
                chord = cand & has_A[idx] & near
            fresh = np.flatnonzero(cand & ~chord)
            if fresh.size:
                A = jacobian_matrices(xa[:, fresh], idx[fresh])
                if resolve:
                    sel = d[idx[fresh]] <= damping / 4
                    if watch:  # (a point in its second look is not checked)
                        sel &= ~looking[idx[fresh]]
                    low = fresh[sel]
                    if low.size:
                        checked = (low,) + _step_without_digit(
                            precise, xa[:, low], fx[:, low], A[sel], idx[low])
                cand[fresh[~newton_trials(xa, r, fx, A, fresh, newton, f_new)]] = False
                if reuse > 0:  # (xa[:, fresh] is the iterate where A was evaluated only
                    # where no step was accepted; x_kept is where A was evaluated)
                    keep = np.all(np.isfinite(A), axis=(1, 2))
                    A_kept[idx[fresh[keep]]] = A[keep]
                    x_kept[:, idx[fresh[keep]]] = X[:, idx[fresh[keep]]]
                    has_A[idx[fresh]] = keep
            pts = np.flatnonzero(chord)
            if pts.size:
                newton_trials(xa, r, fx, A_kept[idx[pts]], pts, newton, f_new)
                # a chord step that shrank the change less than CHORD_SHRINK times: its next
                # step with a Jacobian evaluated there
                slow = pts[newton[pts] & ~(r[pts] * CHORD_SHRINK <= r0[pts])]
                has_A[idx[slow]] = False
                missed = pts[~newton[pts]]  # rejected at every halving: the step of reuse = 0
                if missed.size:
                    A = jacobian_matrices(xa[:, missed], idx[missed])
                    cand[missed[~newton_trials(xa, r, fx, A, missed, newton, f_new)]] = False
                    keep = np.all(np.isfinite(A), axis=(1, 2))
                    A_kept[idx[missed[keep]]] = A[keep]
                    x_kept[:, idx[missed[keep]]] = X[:, idx[missed[keep]]]
                    has_A[idx[missed]] = keep
        plain = ~newton
        worse = r >= prev[idx]
        d[idx] = np.where(plain & worse, np.maximum(d[idx] / 2, floor),
                          np.where(plain, np.minimum(d[idx] * 1.05, damping), d[idx]))
        prev[idx] = np.where(plain, r, prev[idx])
        ok = np.all(np.isfinite(fx), axis=0)
        if fixed_point:
            step_ok = plain & ok & (r >= rtol)
            with np.errstate(all="ignore"):  # (NaN where a point has no last damped iterate)
                contracts = (np.max(np.abs(fx - last_f[:, idx]), axis=0)
                             <= 0.25 * np.max(np.abs(xa - last_x[:, idx]), axis=0))
            if positive:
                contracts &= np.all(fx >= 0, axis=0)
            last_x[:, idx] = np.where(step_ok, xa, np.nan)
            last_f[:, idx] = np.where(step_ok, fx, np.nan)
            # (the undamped step is Phi(x) itself: x + (Phi - x) rounds to 0 when Phi << x)
            xa = np.where(step_ok, np.where(contracts, fx, xa + d[idx] * (fx - xa)), xa)
            d[idx] = np.where(plain & ~ok, np.maximum(d[idx] / 4, floor), d[idx])
        moved = newton.copy()
        if fixed_point:
            moved |= step_ok
        stop = np.zeros(m, bool)
        if watch:
            # a sweep of a run: damped, the damping at its floor, the change grown since the
            # previous iterate (X[:, idx] still holds this sweep's iterates)
            grew = plain & ok & np.isfinite(r0) & (r0 > r_before[idx]) & (d[idx] <= floor)
            grew &= ~looking[idx]  # (a point in its second look: without the rule)
            pos = np.flatnonzero(grew)
            if pos.size:
                ix = idx[pos]
                g_now = _margin_rows(margins, X[:, ix], ix)
                if falls is None:
                    K = g_now.shape[0]
                    falls = np.zeros((K, N), int)
                    g_last, g_first = np.full((K, N), np.nan), np.full((K, N), np.nan)
                first = ix[~in_run[ix]]  # a run begins: its first iterate, the sweep before's
                if first.size:
                    g_prev = _margin_rows(margins, x_before[:, first], first)
                    g_last[:, first] = g_first[:, first] = g_prev
                    falls[:, first] = 0
                with np.errstate(invalid="ignore"):
                    fell = g_now < g_last[:, ix]  # (NaN: no fall)
                falls[:, ix] = np.where(fell, falls[:, ix] + 1, 0)
                g_first[:, ix] = np.where(fell, g_first[:, ix], g_now)
                g_last[:, ix] = g_now
                hit = falls[:, ix] >= BOUNDARY_RUN_SWEEPS
                gone = np.flatnonzero(hit.any(axis=0))
                if gone.size:
                    k = np.argmax(hit[:, gone], axis=0)  # the first condition whose margin fell
                    drift.record(ix[gone], k, g_first[k, ix[gone]], g_now[k, gone], it)
                    stop[pos[gone]] = True
            in_run[idx] = grew
            r_before[idx] = r0
            x_before[:, idx] = X[:, idx]
        f_known[:, idx] = np.where(newton, f_new, fx)  # Phi at the iterate where known
        has_f[idx] = newton | ~moved
        X[:, idx] = xa
        iters[idx] = it
        rel[idx] = r
        fin = (r < rtol) | ((cand & ~newton) | (plain & worse)) & (r < 100 * rtol)
        # a point whose Phi is not finite at its iterate, where no Newton step was accepted, took
        # no step: its next sweep would evaluate the same x again, so it can never move -- it
        # stops, not converged (before, it swept on until maxiter)
        fin |= plain & ~ok
        if not fixed_point:
            # a root system takes no damped steps: a point Newton cannot improve has failed
            stuck = plain & ~fin
            fin |= stuck & (it >= 3)
        done[idx[fin & (r < 100 * rtol)]] = True
        if ghost > 0:  # (see the docstring: a stalled small change, not converged)
            fell = r < 0.5 * ref[idx]
            ref[idx] = np.where(fell, r, ref[idx])
            # (a sweep that tried no Newton step -- newton_from, a map not finite -- ends a run)
            since[idx] = np.where(fell, 0, np.where(cand, since[idx] + 1, 0))
            fin |= (since[idx] >= ghost) & (ref[idx] <= GHOST_CHANGE)
        if watch:  # the ghost rule's state, as the second look's iteration would have it
            fell = r < 0.5 * look_ref[idx]
            look_ref[idx] = np.where(fell, r, look_ref[idx])
            look_since[idx] = np.where(fell, 0, np.where(cand, look_since[idx] + 1, 0))
            ghosted[idx] |= (look_since[idx] >= GHOST_SWEEPS) & (look_ref[idx] <= GHOST_CHANGE)
        if stop.any():  # (a point that converged in this sweep is not stopped)
            drift.stopped[idx[stop & fin]] = False
            # the second look: on from here, unless its iteration would have ended already
            # (the ghost rule met, or its cap)
            on = np.flatnonzero(stop & ~fin & ~ghosted[idx] & (it < look_cap))
            if on.size:
                ix = idx[on]
                looking[ix] = True
                kept_X[:, ix], kept_iters[ix], kept_rel[ix] = X[:, ix], iters[ix], rel[ix]
                stop[on] = False
            fin |= stop
        if resolve:
            hits = np.zeros(m, bool)
            err_now = np.full(m, np.nan)
            # a sweep that took no checked step (a chord step) neither counts nor ends the run;
            # one whose damping is above damping / 4, or whose checked step had a digit, ends it
            keep = d[idx] <= damping / 4
            if checked is not None:
                hits[checked[0]] = checked[1]
                err_now[checked[0]] = checked[2]
                keep[checked[0]] = checked[1]
            noisy[idx] = np.where(hits, noisy[idx] + 1, np.where(keep, noisy[idx], 0))
            noise[:, idx] = np.where(hits, np.roll(noise[:, idx], -1, axis=0),
                                     np.where(keep, noise[:, idx], np.nan))
            noise[-1, idx] = np.where(hits, err_now, noise[-1, idx])
            gone = np.flatnonzero((noisy[idx] >= BOUNDARY_RUN_SWEEPS) & ~fin & ~stop
                                  & ~(looking[idx] if watch else False))
            if gone.size:
                ix = idx[gone]
                drift.record(ix, -1, np.median(noise[:, ix], axis=0), noise[-1, ix], it)
                drift.unresolved[ix] = True
                fin[gone] = True
        if watch and not (ok | newton).all():
            # the map not finite at a point's iterate (it stops here, above): damped_mp's
            # second rule, after a margin fell at each of the last BOUNDARY_RUN_SWEEPS // 2
            # sweeps
            pos = np.flatnonzero(plain & ~ok & ~looking[idx])
            ix = idx[pos]
            depth = min(it, T)
            g = np.array([_margin_rows(margins, trail[s % T][:, ix], ix)
                          for s in range(it - depth + 1, it + 1)])  # (depth, K, points)
            with np.errstate(invalid="ignore"):
                fell = g[1:] < g[:-1]  # (NaN: no fall)
            run = np.cumprod(fell[::-1], axis=0).sum(axis=0)  # (K, points): trailing falls
            hit = run >= BOUNDARY_RUN_SWEEPS // 2
            gone = np.flatnonzero(hit.any(axis=0))
            if gone.size:
                k = np.argmax(hit[:, gone], axis=0)  # the first condition whose margin fell
                k_run = run[k, gone]
                drift.record(ix[gone], k, g[depth - 1 - k_run, k, gone], g[-1, k, gone], it,
                             falls=k_run)
        if watch and looking[idx].any():  # the second looks that end here
            lk = looking[idx]
            conv = lk & done[idx]  # converged: the point is not stopped
            drift.stopped[idx[conv]] = False
            # not converged (its map not finite, the ghost rule, the cap): the first rule's stop
            end = lk & ~done[idx] & (fin | ghosted[idx] | (it >= look_cap))
            ix = idx[end]
            X[:, ix], iters[ix], rel[ix] = kept_X[:, ix], kept_iters[ix], kept_rel[ix]
            fin |= end
            looking[idx[conv | end]] = False
        idx = idx[~fin]
    out = _grid_result(X, done, iters, rel, n, shape)
    return out + (drift.reshaped(shape),) if margins is not None or resolve else out


#: the sweeps of :func:`iterate_grid`'s second look at a point its first rule stopped
SECOND_LOOK_SWEEPS = 400

#: the second look's ghost rule (:func:`iterate_grid`'s ``ghost``): this many sweeps in a row
#: without halving a relative change of at most :data:`GHOST_CHANGE` stop a point
GHOST_SWEEPS = 32

#: the largest relative change at which :func:`iterate_grid`'s ghost rule stops a stalled
#: point: 1e-2, thirty times below the stall of glm_ridge's slow approach (0.34-0.48)
GHOST_CHANGE = 1e-2


def _step_without_digit(precise: tuple, xa, fx, A, ix):
    """:func:`iterate_grid`'s check of its float64 Newton step at the points ``ix`` (iterates
    ``xa``, float64 ``Phi`` values ``fx`` and matrices ``A`` = I - Phi'): ``(no digit, relative
    error)``, the step solved from ``A`` against the one from the extended-precision ``Phi``
    and ``Phi'`` (``precise``), eliminated in ``longdouble``; the error in the unknowns'
    relative scale, relative to the extended-precision step's size."""
    n, m = xa.shape
    phi_x, jac_x = precise
    with np.errstate(all="ignore"):
        xl = xa.astype(np.longdouble)
        fl = np.array([np.broadcast_to(np.asarray(v, dtype=np.longdouble), (m,))
                       for v in phi_x(xl, ix)])
        Jl = np.array([np.broadcast_to(np.asarray(v, dtype=np.longdouble), (m,))
                       for v in jac_x(xl, ix)])
        Al = np.eye(n, dtype=np.longdouble) - np.moveaxis(Jl.reshape(n, n, m), -1, 0)
        step_x = _solve_longdouble(Al, (fl - xl).T)
        good = np.all(np.isfinite(A), axis=(1, 2)) & np.all(np.isfinite(fx), axis=0)
        step = np.zeros((m, n))
        if good.any():
            try:
                step[good] = np.linalg.solve(A[good], (fx - xa).T[good][..., None])[..., 0]
            except np.linalg.LinAlgError:
                good[:] = False
        scale = np.maximum(np.abs(xa.T), 1e-300)
        size = np.max(np.abs(step_x.astype(float)) / scale, axis=1)
        err = np.max(np.abs((step - step_x).astype(float)) / scale, axis=1) / size
    err = np.where(good & np.isfinite(err), err, np.nan)
    return err > 0.5, err


def _solve_longdouble(A, b):
    """``A x = b`` for a batch (``A``: ``(m, n, n)``, ``b``: ``(m, n)``) in ``longdouble``, by
    Gaussian elimination with partial pivoting (NumPy's ``solve`` has no ``longdouble``)."""
    A, b = A.copy(), b.copy()
    m, n = b.shape
    rows = np.arange(m)
    for k in range(n):
        p = k + np.argmax(np.abs(A[:, k:, k]), axis=1)
        A[rows, k], A[rows, p] = A[rows, p].copy(), A[rows, k].copy()
        b[rows, k], b[rows, p] = b[rows, p].copy(), b[rows, k].copy()
        for i in range(k + 1, n):
            f = A[:, i, k] / A[:, k, k]
            A[:, i, k:] -= f[:, None] * A[:, k, k:]
            b[:, i] -= f * b[:, k]
    x = np.zeros_like(b)
    for i in range(n - 1, -1, -1):
        x[:, i] = (b[:, i] - np.sum(A[:, i, i + 1:] * x[:, i + 1:], axis=1)) / A[:, i, i]
    return x


def _margin_rows(margins: Callable, xa, ix) -> np.ndarray:
    """``margins(xa, ix)`` as a ``(K, m)`` float array (real parts)."""
    with np.errstate(all="ignore"):
        return np.array([np.broadcast_to(np.real(np.asarray(g)).astype(float), (ix.size,))
                         for g in margins(xa, ix)], dtype=float)


@dataclasses.dataclass
class GridDrift:
    """The points :func:`iterate_grid` stopped because their iteration diverged towards the
    boundary of the admissible domain (its ``margins``): ``stopped`` (bool), and there
    ``label`` (the index of the condition whose margin fell at every sweep of the run), the
    margin before the run (``first``) and at its last iterate (``last``), and the sweep at
    which the point stopped (``sweep``); arrays of the grid's shape. ``falls``: 0 where the
    point stopped by the first rule of :func:`damped_mp` (the damped iteration diverged while the
    margin fell); where it stopped by the second (the map could not be evaluated at its
    iterate -- not finite -- after the margin fell at each of at least
    ``BOUNDARY_RUN_SWEEPS // 2`` sweeps), the number of sweeps of that fall (``first`` is then
    the margin where it began, at most :data:`BOUNDARY_RUN_SWEEPS` sweeps back).
    ``unresolved``: the point stopped because its float64 Newton steps had no correct digit
    (:func:`iterate_grid`'s ``precise``; ``label`` -1, ``first`` and ``last`` the median and the
    last relative step error)."""

    stopped: np.ndarray
    label: np.ndarray
    first: np.ndarray
    last: np.ndarray
    sweep: np.ndarray
    falls: np.ndarray
    unresolved: np.ndarray

    @classmethod
    def none(cls, shape) -> "GridDrift":
        """No point stopped, at points of ``shape``."""
        return cls(np.zeros(shape, bool), np.full(shape, -1), np.full(shape, np.nan),
                   np.full(shape, np.nan), np.zeros(shape, int), np.zeros(shape, int),
                   np.zeros(shape, bool))

    def record(self, points, label, first, last, sweep, falls=0):
        self.stopped[points] = True
        self.label[points] = label
        self.first[points] = first
        self.last[points] = last
        self.sweep[points] = sweep
        self.falls[points] = falls

    def reshaped(self, shape) -> "GridDrift":
        return GridDrift(*(a.reshape(shape) for a in self._arrays()))

    def put(self, where, part: "GridDrift") -> None:
        """Set the points ``where`` (a mask or indices) to ``part``'s."""
        for a, b in zip(self._arrays(), part._arrays()):
            a[where] = b

    def _arrays(self) -> list:
        return [getattr(self, f.name) for f in dataclasses.fields(self)]


CONTINUATION_STRIDE = 14
"""The seeds of :func:`iterate_grid_continued`: every this many points of the grid (and its last
one) are solved from the declared start. 10 while the other points started from the linear
interpolation; with the cubic start and the interpolated matrices, on the 100-point logistic
curve of ``benchmarks/f64logi_curves.py`` (one process, strides alternating, best of 4, load
11-15): strides 10, 14, 20 took 0.80, 0.73, 0.76 s (an earlier run: 0.74, 0.68, 0.71 s; 25
and 33: 0.70, 0.73 s), 259, 278, 330 sweeps."""

CONTINUATION_MIN = 16
"""The fewest points on which :meth:`~replica.numerics.machine.Machine.grid` solves a grid by
:func:`iterate_grid_continued` (where the model declares its fixed point unique); a smaller grid
is solved from the declared start at every point."""


def iterate_grid_continued(phi: Callable, jac: Callable, x, *, stride=None, **kw):
    r""":func:`iterate_grid` for a system whose fixed point is **unique** (in the domain the
    iteration keeps to: the caller's declaration, e.g. the ridge-penalised convex losses of
    ``examples/logistic_regression.py``; never for a system with several, such as the
    Rademacher perceptron's branches, where a point must be the declared start's fixed point):
    every ``stride``-th point (default :data:`CONTINUATION_STRIDE`) of the flattened grid and its
    last point (the seeds) are solved from their start ``x`` (the declared start); every other
    point starts from the cubic through the 4 converged seeds nearest it, in the flattened
    index (``_local_cubic``; the linear interpolation of the two around it where the cubic
    has a negative unknown and ``positive`` is set; the nearest seed beyond the last), and a
    point that does not converge from there is solved again from its own ``x``, as
    :func:`iterate_grid` solves it. With ``reuse > 0`` (the float64 grid's), the Jacobian is
    evaluated once at the seeds' solutions and its matrices :math:`I - \Phi'`, interpolated
    the same way, are the other points' first chord matrices (``iterate_grid(jacobians=)``:
    a point whose chord step fails or shrinks the change too little evaluates its own). Where
    the fixed point is unique, a point that converges is the same fixed point whichever start
    it came from (the convergence test is unchanged), so only the sweeps differ: a point of a
    100-point logistic regression curve (``benchmarks/f64logi_curves.py``) takes 2-3 sweeps
    and no Jacobian of its own from its neighbours' solution (linear start, own Jacobian: 3-4
    sweeps and one Jacobian) instead of 6-7 sweeps from the declared start, whose first Newton
    steps leave the domain. ``kw``: those of
    :func:`iterate_grid` (``margins`` included: a point stopped as diverging from its
    neighbours' solution is solved again from its own ``x``, like one that did not converge,
    and its :class:`GridDrift` entry is that of its last solve). Returns what it returns, the
    iterations of a point that was solved twice being the sum of both solves' sweeps."""
    n, shape, N, X0, done, iters, rel = _grid_state(x)
    X = X0.copy()
    margins = kw.pop("margins", None)
    precise = kw.pop("precise", None)
    drift = GridDrift.none(N)

    def solve(points, start, jacobians=None):
        watch = None if margins is None else (lambda xa, i: margins(xa, points[i]))
        more = {} if precise is None else {"precise": tuple(
            (lambda xa, i, f=f: f(xa, points[i])) for f in precise)}
        got = iterate_grid(lambda xa, i: phi(xa, points[i]), lambda xa, i: jac(xa, points[i]),
                           start, margins=watch, jacobians=jacobians, **kw, **more)
        if len(got) > 4:
            drift.put(points, got[4])
        return got[:4]

    stride = CONTINUATION_STRIDE if stride is None else max(int(stride), 1)
    seeds = np.unique(np.r_[np.arange(0, N, stride), N - 1])
    X[:, seeds], done[seeds], iters[seeds], rel[seeds] = solve(seeds, X0[:, seeds])
    rest = np.setdiff1d(np.arange(N), seeds)
    good = seeds[done[seeds]]
    again = rest
    if rest.size and good.size:
        win, w = _local_cubic(rest, good)
        start = np.array([np.interp(rest, good, X[j, good]) for j in range(n)])
        with np.errstate(all="ignore"):
            cubic = np.einsum("mk,jmk->jm", w, X[:, good][:, win])
        use = np.all(np.isfinite(cubic), axis=0)
        if kw.get("positive"):  # (an overshoot below 0: the linear start)
            use &= np.all(cubic >= 0, axis=0)
        start = np.where(use, cubic, start)
        X[:, rest], done[rest], iters[rest], rel[rest] = solve(
            rest, start, _interpolated_jacobians(jac, X, good, rest, n, win, w)
            if kw.get("reuse", 0) > 0 else None)
        again = rest[~done[rest]]
    if again.size:  # (from the declared start, as without the seeds)
        before = iters[again]
        X[:, again], done[again], iters[again], rel[again] = solve(again, X0[:, again])
        iters[again] += before
    out = _grid_result(X, done, iters, rel, n, shape)
    return out + (drift.reshaped(shape),) if margins is not None or precise is not None else out


def _local_cubic(t, nodes):
    """Weights of the cubic through the 4 nodes nearest each of the points ``t`` (the two
    either side of its interval; at the ends, the first or last 4; fewer nodes, fewer): an
    ``(m, k)`` array of positions into ``nodes`` and the ``(m, k)`` Lagrange weights, which sum
    to 1 and reproduce polynomials of degree ``k - 1``. A point outside ``[nodes[0],
    nodes[-1]]`` takes the nearest node's value (as ``numpy.interp`` does)."""
    t = np.asarray(t, dtype=float)
    nodes = np.asarray(nodes, dtype=float)
    k = min(4, nodes.size)
    right = np.clip(np.searchsorted(nodes, t), 1, max(nodes.size - 1, 1))  # nodes[right-1] < t
    first = np.clip(right - k // 2, 0, nodes.size - k)
    win = first[:, None] + np.arange(k)
    s = nodes[win]
    w = np.ones(win.shape)
    for i in range(k):
        for j in range(k):
            if i != j:
                w[:, i] *= (t - s[:, j]) / (s[:, i] - s[:, j])
    outside = (t <= nodes[0]) | (t >= nodes[-1])
    if outside.any():
        win[outside] = np.where(t[outside] <= nodes[0], 0, nodes.size - 1)[:, None]
        w[outside] = 0.0
        w[outside, 0] = 1.0
    return win, w


def _interpolated_jacobians(jac: Callable, X, good, rest, n, win, w):
    """The matrices :math:`I - \\Phi'` at the solved seeds ``good`` (one evaluation of ``jac``
    at their solutions ``X[:, good]``), interpolated to the points ``rest`` as
    :func:`iterate_grid_continued` interpolates their start (the weights ``w`` of the seeds
    ``win``, ``_local_cubic``; linearly where a seed of the window has no finite matrix):
    an ``(m, n, n)`` array (NaN where no seed's matrix is finite)."""
    with np.errstate(all="ignore"):
        Jm = np.array([np.broadcast_to(v, (good.size,)) for v in jac(X[:, good], good)],
                      dtype=float)
    A = np.eye(n) - np.moveaxis(Jm.reshape(n, n, good.size), -1, 0)
    ok = np.all(np.isfinite(A), axis=(1, 2))
    out = np.full((rest.size, n, n), np.nan)
    if ok.any():
        for i in range(n):
            for j in range(n):
                out[:, i, j] = np.interp(rest, good[ok], A[ok, i, j])
        with np.errstate(all="ignore"):
            cubic = np.einsum("mk,mkij->mij", w, A[win])
        fine = np.all(ok[win] | (w == 0), axis=1)
        out[fine] = cubic[fine]
    return out


def newton_grid(F: Callable, J: Callable, x, *, rtol=1e-13, maxiter=60):
    """Newton's method for a root system :math:`F(x) = 0` at every point of a float64 grid.

    ``F(xa, idx)`` returns the ``n`` residuals at the points ``idx`` (an ``(n, m)`` array for
    ``xa`` of shape ``(n, m)``), ``J(xa, idx)`` the ``n*n`` entries of :math:`dF/dx`
    (row-major). Each sweep takes the Newton step (batched solves), halved up to 10 times until
    the max-norm of :math:`F` decreases. A point has converged when its step is below ``rtol``
    relative to the iterate (or its residual is exactly 0); a point whose Jacobian is singular or
    whose values are not finite stops, not converged. Returns ``(x, converged, iterations,
    relative step)``."""
    n, shape, N, X, done, iters, rel = _grid_state(x)
    idx = np.arange(N)

    def resid(xv, ix):
        with np.errstate(all="ignore"):
            return np.array([np.broadcast_to(v, (ix.size,)) for v in F(xv, ix)], dtype=float)

    for it in range(1, maxiter + 1):
        if idx.size == 0:
            break
        m = idx.size
        xa = X[:, idx]
        fx = resid(xa, idx)
        res = np.max(np.abs(fx), axis=0)
        with np.errstate(all="ignore"):
            Jm = np.array([np.broadcast_to(v, (m,)) for v in J(xa, idx)], dtype=float)
        A = np.moveaxis(Jm.reshape(n, n, m), -1, 0)
        ok = np.all(np.isfinite(A), axis=(1, 2)) & np.all(np.isfinite(fx), axis=0)
        ok &= np.abs(np.linalg.det(np.where(ok[:, None, None], A, np.eye(n)))) > 0
        A[~ok] = np.eye(n)
        with np.errstate(all="ignore"):
            dx = np.linalg.solve(A, (-fx.T)[..., None])[..., 0].T
        dx[:, ~ok] = 0.0
        t = np.ones(m)
        xn = xa + dx
        trying = np.flatnonzero(ok)  # the points whose step has not yet lowered the residual
        for _ in range(10):  # (F evaluated only at those)
            better = np.max(np.abs(resid(xn[:, trying], idx[trying])), axis=0) < res[trying]
            trying = trying[~better]
            if trying.size == 0:
                break
            t[trying] /= 2
            xn[:, trying] = xa[:, trying] + t[trying] * dx[:, trying]
        with np.errstate(all="ignore"):
            step = np.max(np.abs(t * dx) / np.maximum(np.abs(xn), 1e-300), axis=0)
        X[:, idx] = np.where(ok, xn, xa)
        iters[idx] = it
        rel[idx] = np.where(ok, step, np.inf)
        conv = ok & ((step < rtol) | (res == 0))
        done[idx[conv]] = True
        idx = idx[ok & ~conv]
    return _grid_result(X, done, iters, rel, n, shape)
