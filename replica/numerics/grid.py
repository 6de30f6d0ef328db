r"""Float64 solves over parameter grids: the vectorised start and iteration of every point at
once (:func:`solve_grid`, behind :func:`replica.numerics.driver.solve_float64`), each point with
its honest status, and the float64 start of one point for the verified solve
(:func:`float64_start`).
"""

from __future__ import annotations

import functools
import math

import numpy as np

from ..errors import ConvergenceError, ParameterError
from ..params import INF
from ..problem import Params, Problem
from .result import Status
from .float64_checks import STATUS_DTYPE
from .machine import Machine, machine, shaped



START_SWEEPS = 2000
"""Sweeps the float64 iteration may take for the start of one verified solve: it is only a
start (the mpmath start takes over when it fails), and a point where float64 cannot converge --
e.g. a rank ratio of 1e-30, below float64's resolution of the atom -- otherwise spent a minute in
20000 sweeps first."""


def float64_start(problem: Problem, params: Params, start=None):
    """The float64 solution's unknowns at one point, or ``(None, reason)``; ``start`` (floats,
    in the order of the unknowns) begins the iteration there instead of at the declared
    start."""
    m = machine(problem, problem.variant_of(params))
    if m.n == 0:
        return [], ""
    values = {}
    try:
        for name in problem.schema.names:
            v = params[name]
            if name in m.outline.parameters:
                values[name] = math.inf if v == INF else float(v)
                if not (math.isfinite(values[name]) or v == INF):
                    return None, "a parameter overflows float64"
            else:
                values[name] = v
    except OverflowError:
        return None, "a parameter overflows float64"
    try:
        out = _grid_variant(m, params, values, (), strict=True, maxiter=START_SWEEPS,
                            start=None if start is None else [np.float64(v) for v in start])
    except (ConvergenceError, FloatingPointError, OverflowError, ZeroDivisionError) as exc:
        return None, str(exc)
    x = [float(v) for v in out["_x"]]
    if not all(np.isfinite(x)):
        return None, "the float64 solution is not finite"
    return x, ""


# ---------------------------------------------------------------------------------------------
# Float64 grids
# ---------------------------------------------------------------------------------------------
class _Arrays:
    def __init__(self, values):
        self.__dict__.update(values)


class _Layout:
    """What :func:`solve_grid` reads of a schema on every call, worked out once per schema: the
    numeric parameters (grids) and the others (covariances, SPECs, integers) in the schema's
    order, and each numeric parameter's domain."""

    def __init__(self, schema):
        self.schema = schema
        self.numeric, self.other = [], []
        self.domains = {}
        for p in schema.parameters:
            if p.is_covariance or p.is_spec or p.resolved_domain().integer:
                self.other.append(p)
            else:
                self.numeric.append(p)
                self.domains[p.name] = p.resolved_domain()
        # each domain's bounds as floats (read on every call)
        self.bounds = {name: _Bounds(dom) for name, dom in self.domains.items()}


class _Bounds:
    """A numeric domain's bounds as floats (``None`` where it has none)."""

    def __init__(self, dom):
        self.lower = None if dom.lower is None else float(dom.lower)
        self.upper = None if dom.upper is None else float(dom.upper)
        self.lower_open, self.upper_open = dom.lower_open, dom.upper_open
        self.allow_inf = dom.allow_inf
        self.describe = dom.describe or "out of its domain"


_LAYOUTS: dict = {}
_OTHER: dict = {}
"""Parsed non-grid parameters, by the parameter (the object, checked on a hit) and its exact
raw value (a string or an integer; with the size a covariance SPEC is read at): the parsed
values are immutable (covariances, fractions, integers)."""


def _layout(schema) -> _Layout:
    hit = _LAYOUTS.get(id(schema))
    if hit is not None and hit.schema is schema:
        return hit
    out = _LAYOUTS[id(schema)] = _Layout(schema)
    return out


def _parse_other(p, v, known):
    """``p.parse(v, known)``, remembered for a string or number ``v`` (the parsed value is the
    same for the same text, and for a covariance SPEC the same size -- except a covariance read
    from a file, :func:`~replica.spectra.remembered_spec`)."""
    if type(v) not in (str, int):
        return p.parse(v, known)
    size = known.get(p.size_from) if p.is_covariance else None
    key = (id(p), v, size if type(size) is int else None)
    hit = _OTHER.get(key)
    if hit is not None and hit[0] is p and (size is None or type(size) is int):
        return hit[1]
    parsed = p.parse(v, known)
    from ..spectra import remembered_spec

    if p.is_covariance and not remembered_spec(v):
        return parsed  # (a file SPEC: its file may change between calls; read every time)
    if size is None or type(size) is int:
        if len(_OTHER) > 512:
            _OTHER.clear()
        _OTHER[key] = (p, parsed)
    return parsed


def _check_grid_domains(problem: Problem, arrays: dict, other: dict | None = None,
                        domains: dict | None = None):
    """Every grid value inside its parameter's domain and every rule of the schema satisfied
    (``other``: the parsed non-grid parameters, e.g. a SPEC that a rule also reads;
    ``domains``: the numeric parameters' domains, :class:`_Layout`)."""
    if domains is None:
        domains = _layout(problem.schema).bounds
    for name, dom in domains.items():
        v = arrays.get(name)
        if not isinstance(v, np.ndarray):
            continue
        if v.size == 1 and _scalar_in_domain(float(v.reshape(-1)[0]), dom):
            continue  # one point inside its domain (the array test below finds the others)
        if v.size and v.dtype.kind == "f" and v.dtype.itemsize <= 8 and _scalar_in_domain(
                float(v.min()), dom) and _scalar_in_domain(float(v.max()), dom):
            # every value lies between two values inside the interval (binary32/64: min and
            # max exact as floats; NaN where a value is NaN; -inf never inside, +inf only
            # where allowed): all inside -- the array test's answer with two reductions
            # instead of its six passes. A grid with a value outside goes on to the array
            # test, which names it
            continue
        ok = np.isfinite(v) | (np.isinf(v) & (v > 0) & dom.allow_inf)
        if dom.lower is not None:
            ok &= (v > dom.lower) if dom.lower_open else (v >= dom.lower)
        if dom.upper is not None:
            ok &= (v < dom.upper) if dom.upper_open else (v <= dom.upper)
        if not np.all(ok):  # (the grid is refused as a whole, as a single point would be)
            bad = v[~ok]
            raise ParameterError(problem.schema[name].option,
                                 f"{dom.describe}, got {float(bad.flat[0])!r} at {bad.size} of "
                                 f"{v.size} grid points (a grid with a value outside the domain "
                                 "is refused)")
    cmp = _Arrays({**(other or {}), **arrays})
    with np.errstate(all="ignore"):
        for rule in problem.schema.rules:
            refused = rule.refuse(cmp)
            if refused.any() if isinstance(refused, np.ndarray) else np.any(refused):
                raise ParameterError("--" + rule.parameter.replace("_", "-"),
                                     f"{rule.message} (at some grid point)")
    return cmp


def _scalar_in_domain(x: float, dom: _Bounds) -> bool:
    """Whether one float lies in ``dom`` (the test of :func:`_check_grid_domains` for a point)."""
    if not (math.isfinite(x) or (x == math.inf and dom.allow_inf)):
        return False
    if dom.lower is not None and not (x > dom.lower if dom.lower_open else x >= dom.lower):
        return False
    return dom.upper is None or (x < dom.upper if dom.upper_open else x <= dom.upper)


def solve_grid(problem: Problem, *, start=None, method: str = "start", rtol: float = 1e-13,
               maxiter: int = 20000, damping: float = 0.5, **values) -> tuple:
    r"""The float64 solve of ``problem`` over parameter grids behind
    :func:`replica.numerics.driver.solve_float64` (which documents the values, the statuses and
    their meaning): ``(out, arrays, numeric)`` -- the output arrays (every point's values and
    honest status), the numeric parameters as float arrays of the common shape, and their names.
    """
    schema = problem.schema
    layout = _layout(schema)
    for k in values:
        if k not in schema:
            raise ParameterError(k, "unknown parameter")
    arrays, other = {}, {}
    numeric = [p.name for p in layout.numeric]
    for p in layout.other:
        v = values.get(p.name)
        if v is None and not p.required and not hasattr(p.default, "name"):
            v = p.default
        other[p.name] = v
    conv = []
    for p in layout.numeric:
        v = values.get(p.name)
        if v is None:
            if hasattr(p.default, "name"):  # the same as another parameter
                v = values.get(p.default.name)
                if v is None and not schema[p.default.name].required:
                    v = schema[p.default.name].default
            elif not p.required:
                v = p.default
        if isinstance(v, str):
            v = math.inf if v.strip().lower() == "inf" else float(_exact_float(v, p.option))
        conv.append(v if type(v) is np.ndarray and v.dtype == np.float64
                    else np.asarray(v, dtype=float))
    shape = np.broadcast_shapes(*(c.shape for c in conv)) if conv else ()
    arrays = {name: (np.array(np.broadcast_to(c, shape)) if c.shape != shape else c.copy())
              for name, c in zip(numeric, conv)}
    parsed_other = {}
    for name, v in other.items():
        parsed_other[name] = (_parse_other(schema[name], v, parsed_other)
                              if v is not None else None)
    cmp = _check_grid_domains(problem, arrays, parsed_other, layout.bounds)
    # variants by mask
    remaining = None
    out: dict = {}
    boundary: dict = {}  # _boundary_margins over the variants
    drift: dict = {}  # drift_summary over the variants
    with np.errstate(all="ignore"):  # every variant's condition at every point
        conds = [None if cond is None else np.asarray(cond(cmp), bool)
                 for _, cond in problem.variants]
    for (vname, _), c in zip(problem.variants, conds):
        if c is None:
            mask = remaining
        else:
            mask = c if remaining is None else remaining & c
            if c.shape != shape:
                mask = np.broadcast_to(mask, shape)
        if mask is not None and not mask.any():
            continue
        whole = not out and (mask is None or mask.all())  # one variant at every point
        m = machine(problem, vname)
        if whole:  # the points in a row, as the masked selection below gives them
            N = int(np.prod(shape, dtype=int))
            sub = {k: (v.reshape(N) if isinstance(v, np.ndarray) else v) for k, v in
                   cmp.__dict__.items()}
            part = None if start is None else [shaped(v, shape).reshape(N) for v in start]
            n_sub = (N,)
        else:
            sub = {k: (v[mask] if isinstance(v, np.ndarray) else v) for k, v in
                   cmp.__dict__.items()}
            part = _sub(start, mask)
            n_sub = (int(mask.sum()),)
        res = _grid_variant(m, None, sub, n_sub, strict=False, start=part, method=method,
                            rtol=rtol, maxiter=maxiter, damping=damping, assess=True)
        if whole:
            for k, v in res.items():
                if not k.startswith("_"):
                    v = v if v.flags.writeable else v.copy()
                    out[k] = v if v.shape == shape else v.reshape(shape)
            remaining = np.zeros(shape, bool)
            boundary.update(res.get("_boundary", {}))
            drift.update(res.get("_drift", {}))
            break
        for k, v in res.items():
            if k.startswith("_"):
                continue
            if k not in out:
                fill, dtype = _FILL.get(k, (np.nan, float))
                out[k] = np.full(shape, fill, dtype=dtype)
            out[k][mask] = v
        remaining = ~mask if remaining is None else remaining & ~mask
        for label, (n, g) in res.get("_boundary", {}).items():
            was = boundary.get(label, (0, math.inf))
            boundary[label] = (was[0] + n, min(was[1], g))
        merge_drift(drift, res.get("_drift", {}))
    if remaining is None or remaining.any():
        raise ParameterError(problem.name, "no variant of the model applies at some grid point")
    if boundary:
        out["_boundary"] = boundary
    if drift:
        out["_drift"] = drift
    return out, arrays, numeric


_FILL = {"converged": (False, bool), "iterations": (0, int),
         "status": (Status.MAX_ITERATIONS.value, STATUS_DTYPE)}
"""The fill value and dtype of the output arrays that are not reported values (``float`` and
``nan`` for those) at the points no variant has filled yet."""


GRID_KEYS = ("converged", "status", "iterations", "residual", "condition", "error_estimate")
"""The keys of :func:`~replica.numerics.driver.solve_float64`'s output that are not reported values."""


def _sub(start, mask):
    if start is None:
        return None
    return [shaped(v, mask.shape)[mask] for v in start]


@functools.lru_cache(maxsize=256)
def _exact_float(text, option):
    """The exact value of a number given as text (remembered: a default such as ``"0"`` is
    parsed on every float64 call otherwise; a ``Fraction`` is immutable, an error is not kept)."""
    from ..params import parse_exact

    return parse_exact(text, option)


def _grid_variant(m: Machine, params, values: dict, shape, *, strict, start=None,
                  method="start", rtol=1e-13, maxiter=20000, damping=0.5,
                  assess=False) -> dict:
    """Solve one variant at the points ``values`` (float arrays of ``shape``, or scalars); with
    ``assess``, each point's honest status (:meth:`~replica.numerics.machine.Machine.assess`)."""
    P = [shaped(values[name], shape) for name in m.outline.parameters]
    spec = None
    if m.outline.spectrum:
        spec = m.spectrum(_Arrays(values) if params is None else params, "np")
    x, done, iters, rel, rep, status = m.grid(P, spec, shape, rtol=rtol, maxiter=maxiter,
                                              damping=damping, start=start, method=method,
                                              assess=assess, fused=assess)
    drift = m.last_drift
    if strict and not np.all(done):
        if np.any(m.last_root_failed):
            raise ConvergenceError(f"{m.problem.name} float64: a scalar root of the declared "
                                   "start was not found", tried="safeguarded Newton steps",
                                   status=Status.MAX_ITERATIONS)
        stopped = drift_summary(m, drift)
        if stopped and np.all(done | drift.stopped):  # (every point not done diverged)
            raise ConvergenceError(f"{m.problem.name} float64: {drift_note(stopped)}",
                                   tried=f"{DRIFT_TRIED_START}, {drift_tried(stopped)}",
                                   status=Status.STALLED
                                   if {k for _, k in stopped} == {"unresolved"}
                                   else Status.INADMISSIBLE)
        raise ConvergenceError(f"{m.problem.name} float64 iteration did not converge",
                               tried="declared start, then damped/Newton iteration",
                               status=Status.MAX_ITERATIONS)
    if rep:  # every value at once (NaN where the point is not a result)
        rows = np.where(done, np.array(list(rep.values())), np.nan)
        out = dict(zip(rep, rows))
    else:
        out = {}
    out["converged"] = np.asarray(done)
    out["iterations"] = np.asarray(iters)
    out["residual"] = np.asarray(rel)
    if assess:
        cond, err = m.last_assessment
        out["status"] = status
        out["_boundary"] = _boundary_margins(m, x, P, spec, status, shape,
                                             m.last_root_failed > 0)
        out["_drift"] = drift_summary(m, drift)
        out["converged"] = status == Status.CONVERGED.value
        out["condition"] = np.where(done, cond, np.nan)
        out["error_estimate"] = np.where(done, err, np.nan)
    out["_x"] = x
    return out


DRIFT_TRIED_START = "declared start, then damped/Newton iteration in float64"


def drift_tried(drift: dict) -> str:
    """The ``tried`` words of a float64 error for :func:`drift_summary`'s points."""
    kinds = {kind for _, kind in drift}
    return "; ".join(w for k, w in (
        ("diverges", "a point stopped where its damped iteration diverged"),
        ("unevaluable", "a point stopped where its equations could not be evaluated after a "
                        "margin fell"),
        ("unresolved", "a point stopped where its float64 Newton steps had no correct digit "
                       "(compared with extended precision)")) if k in kinds)


def drift_summary(m: Machine, drift) -> dict:
    """``{(label, kind): (points, first, last, sweep, falls)}`` of a grid's
    :class:`~replica.numerics.newton.GridDrift`: for each declared admissibility condition and
    each of :func:`~replica.numerics.newton.damped_mp`'s two rules -- ``kind`` ``"diverges"``
    (the damped iteration diverged while the condition's margin fell) or ``"unevaluable"`` (the
    equations were not finite after the margin fell) -- how many points stopped so, and, at
    the one of them that stopped first, the margin where the fall began, at its end, the sweep
    and the number of sweeps of the fall (``falls``, 0 for ``"diverges"``). Empty where no point
    stopped."""
    stopped = np.asarray(drift.stopped, bool)
    if not stopped.any():
        return {}
    out = {}
    label, sweep = np.asarray(drift.label)[stopped], np.asarray(drift.sweep)[stopped]
    first, last = np.asarray(drift.first)[stopped], np.asarray(drift.last)[stopped]
    falls = np.asarray(drift.falls)[stopped]
    unresolved = np.asarray(drift.unresolved)[stopped]
    if unresolved.any():
        at = np.flatnonzero(unresolved)
        j = at[np.argmin(sweep[at])]
        out[("", "unresolved")] = (int(at.size), float(first[j]), float(last[j]), int(sweep[j]),
                                   0)
    for k in np.unique(label[~unresolved]):
        for kind, sel in (("diverges", falls == 0), ("unevaluable", falls > 0)):
            at = np.flatnonzero((label == k) & sel & ~unresolved)
            if at.size:
                j = at[np.argmin(sweep[at])]
                out[(m.outline.admissible[int(k)], kind)] = (
                    int(at.size), float(first[j]), float(last[j]), int(sweep[j]), int(falls[j]))
    return out


def merge_drift(into: dict, more: dict) -> None:
    """Add :func:`drift_summary` ``more`` (another variant's points) to ``into``."""
    for key, (n, *rest) in more.items():
        was = into.get(key)
        if was is None or rest[2] < was[3]:
            into[key] = (n + (was[0] if was else 0), *rest)
        else:
            into[key] = (was[0] + n,) + was[1:]


def drift_note(drift: dict) -> str:
    """The words of a float64 error for :func:`drift_summary`'s points, those of the mpmath
    start iteration's stops (:func:`~replica.numerics.newton.damped_mp`): what the iteration
    did, not a proof that no solution lies inside the domain."""
    from .newton import BOUNDARY_RUN_SWEEPS

    def fell(a, b):
        """``a to b`` with 3 significant digits, more where those do not tell them apart."""
        for digits in range(3, 18):
            x, y = f"{a:.{digits}g}", f"{b:.{digits}g}"
            if x != y:
                break
        return f"{x} to {y}"

    def note(label, kind, n, a, b, sw, k):
        first = "" if n == 1 else " at the first of them"
        if kind == "unresolved":
            return (f"not resolvable in float64: {'the' if n == 1 else f'at {n} points the'} "
                    f"float64 Newton step had no correct digit at each of {BOUNDARY_RUN_SWEEPS} "
                    f"checked sweeps in a row (the damping low), at sweep {sw}{first} "
                    f"(it differed from the step of the equations evaluated in extended "
                    f"precision by {a:.2g} times its size, the median of those sweeps) while "
                    f"its damped iteration did not progress: the Newton matrix is singular to "
                    f"float64 precision there, and no float64 step makes progress; the mpmath "
                    f"solve (replica solve) works at more digits")
        if kind == "unevaluable":
            return (f"{'the iteration' if n == 1 else f'at {n} points the iteration'} runs "
                    f"towards the boundary of the domain {label} (its margin fell from "
                    f"{fell(a, b)} in the last {k} sweeps), where the equations could not be "
                    f"evaluated at sweep {sw}{first}: no solution with {label} was reached")
        return (f"{'the damped iteration' if n == 1 else f'at {n} points the damped iteration'} "
                f"diverges (each of its last {BOUNDARY_RUN_SWEEPS} changes larger than the one "
                f"before at the floor damping 1/64, at sweep {sw}{first}) and runs towards the "
                f"boundary of the domain {label} (its margin fell from {fell(a, b)}): no "
                f"solution with {label} was reached from this start (one nearer a solution may "
                f"reach it)")

    return "; ".join(note(label, kind, *v) for (label, kind), v in drift.items())


BOUNDARY_MARGIN = 1e-2
r"""A declared admissibility condition :math:`g > 0` whose margin :math:`g` at the last iterate
of a ``max-iterations`` point is at most this is named in the error of a strict float64 solve
(:func:`boundary_note`)."""


def _boundary_margins(m: Machine, x, P, spec, status, shape, no_start=None) -> dict:
    """``{label: (points, smallest margin)}``: for each declared admissibility condition
    (``m.outline.admissible``), how many ``max-iterations`` points of ``status`` end with the
    condition's margin at their last iterate ``x`` at most :data:`BOUNDARY_MARGIN` (0 where
    the iterate is on or past the boundary), and the smallest such margin. Empty where no point
    ran out of iterations or the model declares no condition. ``no_start``: the points whose
    start's scalar root was not found (no iterate: not counted)."""
    if status is None or not m.outline.admissible:
        return {}
    stuck = np.asarray(status) == Status.MAX_ITERATIONS.value
    if no_start is not None:
        stuck = stuck & ~np.broadcast_to(no_start, stuck.shape)
    if not stuck.any():
        return {}
    with np.errstate(all="ignore"):
        margins = m.evaluate("admissible", "np", x, P, spec)
    out = {}
    for label, g in zip(m.outline.admissible, margins):
        g = np.asarray(shaped(np.real(g), shape), float)
        near = stuck & ((g <= BOUNDARY_MARGIN) | ~np.isfinite(g))
        if near.any():
            fin = g[near & np.isfinite(g)]
            out[label] = (int(near.sum()), max(0.0, float(fin.min())) if fin.size else math.nan)
    return out


def boundary_note(boundary: dict) -> str:
    """The words of a strict float64 solve's error for :func:`_boundary_margins`'s counts:
    which declared admissible region the iteration of the points that ran out of iterations
    ended at the boundary of (what the iteration did, not a proof that no solution lies
    inside: the mpmath solve, ``replica solve``, says more)."""
    return "; ".join(
        f"{n} of them ended at the boundary of the declared admissible region {label} (the "
        f"margin of {label} at their last iterates {g:.3g} or more, at most "
        f"{BOUNDARY_MARGIN:g}): no solution with {label} was reached"
        for label, (n, g) in boundary.items())
