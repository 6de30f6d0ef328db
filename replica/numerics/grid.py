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


def float64_start(problem: Problem, params: Params):
    """The float64 solution's unknowns at one point, or ``(None, reason)``."""
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
        out = _grid_variant(m, params, values, (), strict=True, maxiter=START_SWEEPS)
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


def _check_grid_domains(problem: Problem, arrays: dict, other: dict | None = None):
    """Every grid value inside its parameter's domain and every rule of the schema satisfied
    (``other``: the parsed non-grid parameters, e.g. a SPEC that a rule also reads)."""
    for p in problem.schema.parameters:
        if p.is_covariance or p.is_spec or p.name not in arrays:
            continue
        v = arrays[p.name]
        if not isinstance(v, np.ndarray):
            continue
        dom = p.resolved_domain()
        if v.size == 1 and _scalar_in_domain(float(v.reshape(-1)[0]), dom):
            continue  # one point inside its domain (the array test below finds the others)
        ok = np.isfinite(v) | (np.isinf(v) & (v > 0) & dom.allow_inf)
        if dom.lower is not None:
            ok &= (v > float(dom.lower)) if dom.lower_open else (v >= float(dom.lower))
        if dom.upper is not None:
            ok &= (v < float(dom.upper)) if dom.upper_open else (v <= float(dom.upper))
        if not np.all(ok):
            raise ParameterError(p.option, "out of its domain at some grid point")
    cmp = _Arrays({**(other or {}), **arrays})
    for rule in problem.schema.rules:
        with np.errstate(all="ignore"):
            if np.any(rule.refuse(cmp)):
                raise ParameterError("--" + rule.parameter.replace("_", "-"),
                                     f"{rule.message} (at some grid point)")


def _scalar_in_domain(x: float, dom) -> bool:
    """Whether one float lies in ``dom`` (the test of :func:`_check_grid_domains` for a point)."""
    if not (math.isfinite(x) or (x == math.inf and dom.allow_inf)):
        return False
    if dom.lower is not None and not (x > float(dom.lower) if dom.lower_open
                                      else x >= float(dom.lower)):
        return False
    return dom.upper is None or (x < float(dom.upper) if dom.upper_open
                                 else x <= float(dom.upper))
def solve_grid(problem: Problem, *, start=None, method: str = "start", rtol: float = 1e-13,
               maxiter: int = 20000, damping: float = 0.5, **values) -> tuple:
    r"""The float64 solve of ``problem`` over parameter grids behind
    :func:`replica.numerics.driver.solve_float64` (which documents the values, the statuses and
    their meaning): ``(out, arrays, numeric)`` -- the output arrays (every point's values and
    honest status), the numeric parameters as float arrays of the common shape, and their names.
    """
    schema = problem.schema
    arrays, other = {}, {}
    numeric = []
    for p in schema.parameters:
        v = values.get(p.name)
        if v is None and not p.required and not hasattr(p.default, "name"):
            v = p.default
        if p.is_covariance or p.is_spec or p.resolved_domain().integer:
            other[p.name] = v
        else:
            numeric.append(p.name)
            if v is None and hasattr(p.default, "name"):
                continue
            arrays[p.name] = v
    for name in numeric:
        if name not in arrays:
            arrays[name] = arrays[schema[name].default.name]
    unknown = [k for k in values if k not in schema]
    if unknown:
        raise ParameterError(unknown[0], "unknown parameter")
    conv = []
    for name in numeric:
        v = arrays[name]
        if isinstance(v, str):
            v = math.inf if v.strip().lower() == "inf" else float(
                _exact_float(v, schema[name].option))
        conv.append(np.asarray(v, dtype=float))
    bc = np.broadcast_arrays(*conv)
    arrays = {name: np.array(a, dtype=float) for name, a in zip(numeric, bc)}
    shape = bc[0].shape if bc else ()
    parsed_other = {}
    for name, v in other.items():
        p = schema[name]
        parsed_other[name] = p.parse(v, {**parsed_other}) if v is not None else None
    _check_grid_domains(problem, arrays, parsed_other)
    full = dict(arrays)
    full.update(parsed_other)
    # variants by mask
    cmp = _Arrays(full)
    remaining = np.ones(shape, bool)
    out: dict = {}
    for vname, cond in problem.variants:
        with np.errstate(all="ignore"):
            mask = remaining & (np.broadcast_to(np.asarray(cond(cmp), bool), shape)
                                if cond is not None else True)
        if not np.any(mask):
            continue
        remaining &= ~mask
        m = machine(problem, vname)
        sub = {k: (v[mask] if isinstance(v, np.ndarray) else v) for k, v in full.items()}
        res = _grid_variant(m, None, sub, (int(mask.sum()),), strict=False, start=_sub(start,
                            mask), method=method, rtol=rtol, maxiter=maxiter, damping=damping,
                            assess=True)
        whole = not out and not np.any(remaining)  # one variant at every point
        for k, v in res.items():
            if k.startswith("_"):
                continue
            fill, dtype = _FILL.get(k, (np.nan, float))
            if whole:
                out[k] = np.array(v, dtype=dtype).reshape(shape)
                continue
            if k not in out:
                out[k] = np.full(shape, fill, dtype=dtype)
            out[k][mask] = v
    if np.any(remaining):
        raise ParameterError(problem.name, "no variant of the model applies at some grid point")
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
    if strict and not np.all(done):
        raise ConvergenceError(f"{m.problem.name} float64 iteration did not converge",
                               tried="declared start, then damped/Newton iteration",
                               status=Status.MAX_ITERATIONS)
    out = {k: np.where(done, v, np.nan) for k, v in rep.items()}
    out["converged"] = np.asarray(done)
    out["iterations"] = np.asarray(iters)
    out["residual"] = np.asarray(rel)
    if assess:
        cond, err = m.last_assessment
        out["status"] = status
        out["converged"] = status == Status.CONVERGED.value
        out["condition"] = np.where(done, cond, np.nan)
        out["error_estimate"] = np.where(done, err, np.nan)
    out["_x"] = x
    return out
