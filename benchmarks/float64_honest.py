"""The float64 path's ``converged``: how often it is wrong, and what the honest status costs.

* **Wrongly converged**: random valid points of each built-in model (``isotropic``,
  ``lowrank``, ``alignment`` with ``d`` in 16..40 and identity / power-law covariances), every
  numeric parameter log-uniform over wide ranges (``alpha, tau, kappa`` in ``[1e-5, 1e5]``,
  ``kappa = inf`` and ``lam = 0`` with some probability), solved by ``replica.solve_float64``
  and by the verified mpmath ``replica.solve`` (20 digits). A point is *wrongly converged* when
  float64 marks it ``converged`` and some reported value differs from the verified one by more
  than :data:`CLAIM` relatively, or an error (an MSE) is negative.
* **Throughput**: a 100 x 100 isotropic plane (``alpha`` x ``kappa``, log-spaced, ridgeless
  ``tau = 4``) and a 100 x 100 low-rank plane (``alpha`` x ``rho``), ``solve_float64`` on the
  whole grid at once; points per second, median of 3.

``python -m benchmarks.float64_honest [N]`` prints both (``N`` random points per model,
default 100) and rewrites its README section.
"""

from __future__ import annotations

import math
import os
import sys
import time

import numpy as np

import replica
from replica.errors import ConvergenceError

CLAIM = 1e-8
"""The relative accuracy a ``converged`` float64 value is checked against."""


def _log(rng, lo, hi):
    return float(10 ** rng.uniform(math.log10(lo), math.log10(hi)))


def _g(x):
    """A float as the shortest decimal string (read exactly by both paths)."""
    return repr(float(x))


def random_point(model: str, rng) -> dict:
    """One random valid parameter point of ``model`` (strings, read exactly by both paths)."""
    if model == "lowrank":
        p = {"alpha": _log(rng, 1e-5, 1e5), "tau": _log(rng, 1e-3, 1e5),
             "rho": _log(rng, 1e-5, 1.0), "sigma": 0.0 if rng.random() < 0.2
             else _log(rng, 1e-3, 1e2)}
        kinf = rng.random() < 0.15
        p["kappa"] = "inf" if kinf else _g(_log(rng, 1e-5, 1e5))
        if kinf or (rng.random() < 0.5 and p["tau"] > 1.0 + 1e-6):
            p["lam"] = 0.0
            p["tau"] = max(p["tau"], 1.0 + 10 ** rng.uniform(-3, 2))
        else:
            p["lam"] = _log(rng, 1e-5, 1e3)
        return {k: v if isinstance(v, str) else _g(v) for k, v in p.items()}
    p = {"alpha": _log(rng, 1e-5, 1e5), "tau": _log(rng, 1e-5, 1e5),
         "rho": 0.0 if rng.random() < 0.1 else _log(rng, 1e-5, 1e5)}
    p["kappa"] = "inf" if rng.random() < 0.1 else _g(_log(rng, 1e-5, 1e5))
    if rng.random() < 0.5:
        p["lam"] = 0.0
        if abs(p["tau"] - 1) < 1e-6:
            p["tau"] = 2.0
    else:
        p["lam"] = _log(rng, 1e-5, 1e5)
    out = {k: v if isinstance(v, str) else _g(v) for k, v in p.items()}
    if model == "alignment":
        out["d"] = int(rng.integers(16, 41))
        for side in ("train", "test"):
            out[side] = ("identity" if rng.random() < 0.3
                         else f"powerlaw:{rng.uniform(0.1, 2.0):.3f}")
    return out


def float64_point(model: str, p: dict) -> dict:
    """``solve_float64`` at one point: ``{name: float}`` plus ``status``."""
    args = {k: (v if k in ("d", "train", "test") else
                (math.inf if v == "inf" else float(v))) for k, v in p.items()}
    if model == "alignment":
        from replica.spectra import parse_spec

        args["train"] = parse_spec(p["train"], p["d"])
        args["test"] = parse_spec(p["test"], p["d"])
    out = replica.solve_float64(model, strict=False, **args)
    return {k: (v.item() if isinstance(v, np.ndarray) else v) for k, v in out.items()}


def verified_point(model: str, p: dict, dps: int = 20):
    """The verified mpmath solve at ``p`` (``None`` where it fails)."""
    try:
        return replica.solve(model, dps=dps, **p)
    except ConvergenceError:
        return None


def wrong(model: str, f: dict, r, claim: float = CLAIM):
    """Why the float64 point ``f`` marked converged is wrong against the verified ``r``, or
    ``""``: the first value off by more than ``claim`` relatively, or a negative error."""
    problem = replica._problem(model)
    for name in getattr(problem, "nonnegative", ()):
        if name in f and f[name] < 0:
            return f"{name} = {f[name]:.6g} < 0 (a mean-squared error)"
    for name, v64 in f.items():
        if name in ("converged", "status", "iterations", "residual", "condition",
                    "error_estimate"):
            continue
        ref = r.all_values.get(name) if name in r.all_values else (
            r[name] if name in r else None)
        if ref is None:
            continue
        ref = float(ref)
        if not (math.isfinite(v64) and abs(v64 - ref) <= claim * abs(ref)):
            return f"{name}: float64 {v64!r}, verified {ref!r}"
    return ""


def count_wrong(model: str, n: int, seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    tally = {"points": 0, "converged": 0, "wrong": 0, "not_verified": 0, "mp_failed": 0,
             "examples": []}
    for _ in range(n):
        p = random_point(model, rng)
        f = float64_point(model, p)
        tally["points"] += 1
        if f["status"] != "converged":
            tally["not_verified"] += 1
            continue
        tally["converged"] += 1
        r = verified_point(model, p)
        if r is None:
            tally["mp_failed"] += 1
            continue
        why = wrong(model, f, r)
        if why:
            tally["wrong"] += 1
            if len(tally["examples"]) < 3:
                tally["examples"].append((p, why))
    return tally


def throughput(repeats: int = 3) -> dict:
    """Points per second of 100 x 100 float64 planes (median of ``repeats``)."""
    a = np.geomspace(1e-2, 1e3, 100)[None, :]
    planes = {
        "isotropic alpha x kappa (tau = 4, rho = 0.1)":
            lambda: replica.solve_float64("isotropic", alpha=a, tau=4.0,
                                          kappa=np.geomspace(1e-2, 1e2, 100)[:, None], rho=0.1,
                                          strict=False),
        "isotropic alpha x lam (ridge, tau = 1/2, kappa = 1/2)":
            lambda: replica.solve_float64("isotropic", alpha=a, tau=0.5, kappa=0.5, rho=0.1,
                                          lam=np.geomspace(1e-3, 1e1, 100)[:, None],
                                          strict=False),
        "lowrank alpha x rho (tau = 9/4, kappa = 1/2, sigma = 0.3)":
            lambda: replica.solve_float64("lowrank", alpha=a, tau=2.25, kappa=0.5,
                                          rho=np.linspace(0.05, 1.0, 100)[:, None], sigma=0.3,
                                          strict=False),
    }
    out = {}
    for name, fn in planes.items():
        fn()  # generate / load the code first
        times, res = [], None
        for _ in range(repeats):
            t = time.perf_counter()
            res = fn()
            times.append(time.perf_counter() - t)
        t = sorted(times)[len(times) // 2]
        st = np.asarray(res["status"])
        out[name] = {"seconds": t, "points_per_s": st.size / t,
                     "converged": int(np.sum(st == "converged"))}
    return out


def main(n: int | None = None):
    from ._util import machine_line, table, write_section

    n = int(sys.argv[1]) if n is None and len(sys.argv) > 1 else (n or 100)
    load = os.getloadavg()[0]
    rows, lines = [], []
    for model in ("isotropic", "lowrank", "alignment"):
        t = time.perf_counter()
        tally = count_wrong(model, n)
        line = (f"{model}: {tally['points']} points, {tally['converged']} converged, "
                f"{tally['wrong']} of them wrong, {tally['not_verified']} not verified, "
                f"{tally['mp_failed']} converged without a verified value "
                f"({time.perf_counter() - t:.0f} s)")
        print(line, flush=True)
        for p, why in tally["examples"]:
            print(f"    {p}: {why}")
        rows.append((model, tally["points"], tally["converged"], tally["wrong"],
                     tally["points"] - tally["converged"]))
    speed = []
    for name, r in throughput().items():
        print(f"{name}: {r['seconds'] * 1e3:.1f} ms, {r['points_per_s']:,.0f} points/s, "
              f"{r['converged']} of 10,000 converged")
        speed.append((name, f"{r['seconds'] * 1e3:.1f} ms", f"{r['points_per_s']:,.0f}",
                      f"{r['converged']:,}"))
    print(f"load average when started: {load:.2f}")
    write_section("float64_honest", "\n".join([
        "## Float64 statuses: how often `converged` is wrong, and what the check costs", "",
        f"Machine: {machine_line()} (load average {load:.1f} when started). "
        f"`python -m benchmarks.float64_honest {n}`: {n} random valid points per model "
        "(log-uniform over wide ranges, see the module), `solve_float64` against the verified "
        "20-digit `solve`; *wrong* = marked `converged` with some reported value off by more "
        f"than {CLAIM:g} relatively, or a negative mean-squared error.", "",
        table(["model", "points", "converged", "wrong among converged", "not converged"], rows),
        "", "100 x 100 float64 planes, `solve_float64` on the whole grid, median of 3:", "",
        table(["plane", "time", "points/s", "converged"], speed)]))


if __name__ == "__main__":
    main()
