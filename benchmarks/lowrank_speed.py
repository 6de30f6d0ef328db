"""Low-rank model (arXiv 2510.04548): speed of the float64 grid solver and of a 50-digit solve,
and where float64 loses digits (large alpha).

1. ``lowrank.solve_float64`` on grids of 10^4 points (100 alphas x 100 rank ratios, and a
   tau < 1 ridge grid), with the default method (effective-ridge start, Newton-accelerated damped
   iteration) and with the authors' scheme (``method="damped"``: start at theta = 1, damped
   iteration alone); every point converged to a relative change below 1e-13 (or the float64
   rounding floor).
2. One point (golden point 2 of the authors' tabulated values) at 50 digits, with and without the verifying re-solve.
3. float64 against a verified 30-digit solve as alpha grows (lambda = 0, tau = 2.6, kappa = 0.4,
   rho = 0.7, sigma = 0.01), over every reported value (order parameters, errors, all twelve
   decomposition parts): with the atom of the spectrum split off analytically
   (g = -p0/z + rho h(z)) float64 keeps 11+ digits up to alpha = 1e14, and the mpmath solve
   certifies 30 digits with its default guard digits.

4. Side by side with another checkout (``--baseline PATH``, e.g. a worktree of the commit before
   issue 29): the same grids' float64 solve and the verified 50-digit point, CPU time (median of
   repeats, one BLAS thread) in fresh processes, the two trees alternating three times; points
   per second for the grids, and how much of a grid's time is the extended-precision check
   (``Machine.assess``) that makes each point's status honest.

Run ``python -m benchmarks.lowrank_speed [--baseline PATH [--rounds N]]`` (rewrites its
section of ``benchmarks/README.md``).
"""

from __future__ import annotations


import json
import os
import statistics
import subprocess
import sys
import tempfile

import mpmath
import numpy as np

import replica
from replica.models import lowrank as L
from replica.numerics.kernels import PARALLEL_MIN

try:
    from ._util import machine_line, median_time, table, write_section
except ImportError:  # run as a script
    from _util import machine_line, median_time, table, write_section  # type: ignore

NAME = "lowrank_speed"


def grid_rows():
    A, R = np.meshgrid(np.logspace(-0.5, 3, 100), np.linspace(0.05, 1.0, 100))
    cases = [
        ("alpha x rho, tau=2.25, kappa=1/2, sigma=0.3, lam=0", dict(alpha=A, tau=2.25,
                                                                   kappa=0.5, rho=R,
                                                                   sigma=0.3, lam=0.0)),
        ("alpha x rho, tau=2.25, kappa=1/2, sigma=0.3, lam=0.1", dict(alpha=A, tau=2.25,
                                                                     kappa=0.5, rho=R,
                                                                     sigma=0.3, lam=0.1)),
        ("alpha x rho, tau=1/2, kappa=1/2, sigma=0.5, lam=0.1", dict(alpha=A, tau=0.5,
                                                                    kappa=0.5, rho=R,
                                                                    sigma=0.5, lam=0.1)),
    ]
    rows = []
    for label, kw in cases:
        cells = [label]
        for method in ("start", "damped"):
            t, out = median_time(lambda: replica.solve_float64("lowrank", method=method, **kw),
                                 repeats=3)
            assert np.all(out["converged"])
            cells += [f"{t:.3f} s", f"{int(out['iterations'].max())}"]
        rows.append(cells)
    return rows


def point_rows():
    point = dict(alpha="2.3", tau="1.7", kappa="1", rho="0.2", sigma="0.003", lam="3")
    rows = []
    for verify in (False, True):
        t, res = median_time(lambda: replica.solve("lowrank", **point, dps=50, verify=verify),
                             repeats=15)
        rows.append(["golden point 2, dps 50" + (" + verification" if verify else ""),
                     f"{t * 1000:.0f} ms", str(res.digits), mpmath.nstr(res.residual, 3)])
    return rows


def _flat(res):
    out = dict(res.values())
    for prot in L.ERROR_KEYS:
        for part in L.PART_KEYS:
            out[f"{prot}_{part}"] = res.groups["decomposition"][prot][part]
    return out


def precision_rows():
    rows = []
    for e in (2, 6, 10, 14):
        a = f"1e{e}"
        out = replica.solve_float64("lowrank", alpha=10.0**e, tau=2.6, kappa=0.4, rho=0.7,
                                    sigma=0.01, lam=0.0)
        t, ref = median_time(lambda: replica.solve("lowrank", alpha=a, tau="2.6", kappa="0.4",
                                                   rho="0.7", sigma="0.01", lam=0, dps=30),
                             repeats=1)
        worst, worst_key = 0.0, ""
        for key, val in _flat(ref).items():
            if val == 0:
                continue
            with mpmath.workdps(40):
                rel = float(abs(mpmath.mpf(float(out[key])) - val) / abs(val))
            if rel > worst:
                worst, worst_key = rel, key
        rows.append([f"10^{e}", f"{worst:.1e} ({worst_key})",
                     f"{max(0.0, -np.log10(max(worst, 1e-17))):.1f}", str(ref.digits),
                     ref.digits_how.split("(")[-1].rstrip(")"), f"{t:.2f} s"])
    return rows


def cold_start_times():
    """Seconds for import + one 30-digit solve in a fresh process: generating the evaluators
    (empty code cache), then loading them from the cache."""
    code = ("import time; t = time.perf_counter(); import replica; "
            "replica.solve('lowrank', alpha=2, tau='9/4', kappa='3/2', rho='9/10', sigma='3/10', "
            "dps=30); "
            "print(time.perf_counter() - t)")
    out = []
    with tempfile.TemporaryDirectory() as folder:
        env = dict(os.environ, REPLICA_LAMBDIFY_CACHE=folder)
        for _ in range(2):
            proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                  env=env, check=True)
            out.append(float(proc.stdout.strip()))
    return out


_SIDE = r"""
import hashlib, json, sys, time, statistics
import numpy as np
import replica
from replica.numerics import machine as M

spent = [0.0]
extra = [0.0]
assess = M.Machine.assess


def timed(self, *a, **k):
    t = time.process_time()
    try:
        return assess(self, *a, **k)
    finally:
        spent[0] += time.process_time() - t


M.Machine.assess = timed
try:  # a tree whose kernel checks in compiled code: the check is the kernel's time less the
    # same call without it (made once more here, and not counted in the grid's time)
    from replica.numerics import kernels as K
    kcall = K.Kernel.__call__
    import inspect
    if "check" in inspect.signature(kcall).parameters:
        def kspy(self, *a, **kw):
            t = time.process_time()
            out = kcall(self, *a, **kw)
            t1 = time.process_time()
            if kw.get("check") and getattr(self, "checked", False):
                kcall(self, *a, **dict(kw, check=False))
                t2 = time.process_time()
                spent[0] += (t1 - t) - (t2 - t1)
                extra[0] += t2 - t1
            return out
        K.Kernel.__call__ = kspy
except ImportError:
    pass
A, R = np.meshgrid(np.logspace(-0.5, 3, 100), np.linspace(0.05, 1.0, 100))
out = {}
for label, kw in json.loads(sys.argv[1]):
    kw = {k: (A if v == "A" else R if v == "R" else v) for k, v in kw.items()}
    res = replica.solve_float64("lowrank", **kw)  # compile / load, warm
    ts, checks, walls = [], [], []
    for _ in range(5):
        spent[0] = extra[0] = 0.0
        w = time.perf_counter()
        t = time.process_time()
        res = replica.solve_float64("lowrank", **kw)
        ts.append(time.process_time() - t - extra[0])
        checks.append(spent[0])
        w1 = time.perf_counter()
        res = replica.solve_float64("lowrank", **kw)  # the wall clock: a call as a user makes it
        walls.append(time.perf_counter() - w1)
    digest = hashlib.sha256()
    for key in sorted(res):  # every value and status but the check's estimate, bit for bit
        a = np.asarray(res[key])
        if key != "error_estimate" and a.shape == A.shape:
            digest.update(key.encode() + np.ascontiguousarray(a).tobytes())
    out[label] = [statistics.median(ts), statistics.median(checks),
                  int(np.sum(res["status"] == "converged")), int(res["status"].size),
                  statistics.median(walls), digest.hexdigest(),
                  np.asarray(res["error_estimate"], dtype=float).ravel().tolist()]
point = dict(alpha="2.3", tau="1.7", kappa="1", rho="0.2", sigma="0.003", lam="3")
for _ in range(3):
    r = replica.solve("lowrank", **point, dps=50)
ts = []
for _ in range(30):
    t = time.process_time()
    r = replica.solve("lowrank", **point, dps=50)
    ts.append(time.process_time() - t)
out["point"] = [statistics.median(ts), r.digits, str(r["tm"])]
print(json.dumps(out))
"""

SIDE_CASES = [
    ("tau=2.25, kappa=1/2, sigma=0.3, lam=0", dict(alpha="A", rho="R", tau=2.25, kappa=0.5,
                                                   sigma=0.3, lam=0.0)),
    ("tau=2.25, kappa=1/2, sigma=0.3, lam=0.1", dict(alpha="A", rho="R", tau=2.25, kappa=0.5,
                                                     sigma=0.3, lam=0.1)),
    ("tau=1/2, kappa=1/2, sigma=0.5, lam=0.1", dict(alpha="A", rho="R", tau=0.5, kappa=0.5,
                                                    sigma=0.5, lam=0.1)),
]


def _side_run(tree: str, threads: int = 1) -> dict:
    env = dict(os.environ, PYTHONPATH=tree, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1",
               MKL_NUM_THREADS="1", NUMBA_NUM_THREADS=str(threads))
    proc = subprocess.run([sys.executable, "-c", _SIDE, json.dumps(SIDE_CASES)], cwd=tree,
                          env=env, capture_output=True, text=True, check=True)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def side_by_side(baseline: str, rounds: int = 3):
    """``(grid rows, point row)``: this tree against ``baseline``, alternating ``rounds``
    times, medians over the rounds of each process's median CPU time."""
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    runs: dict = {"base": [], "new": [], "base2": [], "new2": []}
    for _ in range(rounds):
        runs["base"].append(_side_run(baseline))
        runs["new"].append(_side_run(here))
        runs["base2"].append(_side_run(baseline, threads=2))
        runs["new2"].append(_side_run(here, threads=2))

    def med(which, key, i):
        return statistics.median(r[key][i] for r in runs[which])

    rows, caps, threads, values = [], [], [], []
    for label, _ in SIDE_CASES:
        tb, tn = med("base", label, 0), med("new", label, 0)
        cb, cn = med("base", label, 1), med("new", label, 1)
        n = runs["new"][0][label][3]
        conv = f"{runs['base'][0][label][2]} / {runs['new'][0][label][2]}"
        rows.append([label, f"{tb * 1000:.0f} ms", f"{tn * 1000:.0f} ms", f"{tb / tn:.2f}x",
                     f"{n / tb:.2e}", f"{n / tn:.2e}", f"{cb * 1000:.0f} ms ({cb / tb:.0%})",
                     f"{cn * 1000:.0f} ms ({cn / tn:.0%})",
                     f"{n / max(tn - cn, 1e-9):.2e}", conv])
        caps.append(n / cn)
        wb, w1, w2 = med("base", label, 4), med("new", label, 4), med("new2", label, 4)
        wb2 = med("base2", label, 4)
        one = {r[label][5] for r in runs["base"] + runs["new"]}
        two = {r[label][5] for r in runs["base2"] + runs["new2"]}
        eb, en = (np.array(runs[k][0][label][6]) for k in ("base", "new"))
        ok = np.isfinite(eb) & np.isfinite(en) & (eb > 0)
        ratio = en[ok] / eb[ok]
        values.append([label, "identical" if len(one) == 1 else "DIFFERENT",
                       "identical" if one == two else "different (see below)",
                       f"{ratio.min():.6g} - {ratio.max():.6g}" if ratio.size else "-",
                       "same" if np.array_equal(np.isfinite(eb), np.isfinite(en)) else
                       "DIFFERENT"])
        threads.append([label, f"{n / wb:.2e}", f"{n / w1:.2e}", f"{n / wb2:.2e}",
                        f"{n / w2:.2e}", f"{w1 / w2:.2f}x", f"{wb2 / w2:.2f}x"])
    pb, pn = med("base", "point", 0), med("new", "point", 0)
    same = runs["base"][0]["point"][2] == runs["new"][0]["point"][2]
    point = [f"{pb * 1000:.1f} ms", f"{pn * 1000:.1f} ms", f"{pb / pn:.2f}x",
             f"{runs['base'][0]['point'][1]} / {runs['new'][0]['point'][1]}",
             "identical" if same else "DIFFERENT"]
    return rows, point, (min(caps), max(caps)), threads, values


def main():
    baseline = None
    if "--baseline" in sys.argv:
        baseline = sys.argv[sys.argv.index("--baseline") + 1]
    load = os.getloadavg()[0]
    cold, warm = cold_start_times()
    g = grid_rows()
    p = point_rows()
    pr = precision_rows()
    md = [
        "## Low-rank model: float64 grids, a 50-digit point, float64 precision at large alpha",
        "",
        f"Machine: {machine_line()} (load average {load:.1f} when started: the machine was "
        f"shared, so times are upper bounds). A fresh process (import + one 30-digit solve) takes "
        f"{cold:.1f} s when it derives the equations from the free energy and generates the "
        f"float64/mpmath evaluators, {warm:.1f} s when it loads them from the code cache "
        f"(`REPLICA_LAMBDIFY_CACHE`).",
        "",
        "Float64 grids of 10^4 points (alpha in [10^-0.5, 10^3] log-spaced x rho in [0.05, 1]), "
        "median of 3 runs; relative tolerance 1e-13 (or the float64 rounding floor). "
        "`start` (default): effective-ridge start + Newton-accelerated damped iteration; "
        "`damped`: the authors' scheme (start at 1, damped iteration alone, adaptive damping).",
        "",
        table(["grid", "start", "max sweeps", "damped", "max sweeps"], g),
        "",
        "One point at 50 digits (median of 15, wall time; the verification re-solves at 82 digits -- "
        "Newton from the first solve's solution, every evaluation anew at 82 digits -- and "
        "compares every reported value):",
        "",
        table(["case", "time", "digits", "residual"], p),
        "",
        "Float64 against the verified 30-digit solve as alpha grows (lambda = 0, tau = 2.6, "
        "kappa = 0.4, rho = 0.7, sigma = 0.01): worst relative error over every reported value "
        "(14 order parameters, 3 errors, 12 decomposition parts). At large alpha, z ~ -1/alpha, "
        "g ~ alpha and the regular combinations (1 + z g, g + z g', ...) are O(1): written "
        "naively they would lose log10(alpha) digits (before the atom split, float64 gave "
        "relative errors of order 100 for the memorization parts at alpha = 1e14). The float64 "
        "path keeps 11-13 digits throughout (the rest is the float64 iteration's stopping "
        "rule and the Jacobian's condition, which grows like alpha), and the mpmath solve "
        "certifies 30 digits with its default 5 guard digits at every alpha (the solver raises "
        "the working precision by itself when its re-solve disagrees).",
        "",
        table(["alpha", "float64 worst rel. error", "float64 digits", "mpmath digits",
               "mpmath working precision", "mpmath time"], pr),
    ]
    if baseline is not None:
        rounds = int(sys.argv[sys.argv.index("--rounds") + 1]) if "--rounds" in sys.argv else 3
        side, point, caps, threads, values = side_by_side(baseline, rounds)
        md += [
            "",
            "### Issue 29: side by side with the tree before it",
            "",
            f"`python -m benchmarks.lowrank_speed --baseline PATH`: the baseline is "
            f"`{os.path.basename(os.path.normpath(baseline))}` (a worktree of the commit before "
            f"the change), this tree beside it; each tree in fresh processes, alternating {rounds} "
            f"times, CPU seconds with one BLAS thread and one Numba thread, median of 5 grids / "
            f"30 points per process "
            f"and of the {rounds} processes. Load average {os.getloadavg()[0]:.1f} at the end: the "
            "2 cores were shared with other jobs, so absolute times are upper bounds and the "
            "ratios are the measurement. Float64 grids of 10^4 points as above (default method; "
            "Numba kernel where installed); `check` is the extended-precision check that gives "
            "every point its honest status -- in a tree whose kernel has the compiled "
            "double-double check (`replica.numerics.fused_check`) the kernel's time less the "
            "same call without the check, in an older tree `Machine.assess` after the kernel "
            "(NumPy `longdouble`) -- and `solve only` the points/s without it.",
            "",
            table(["grid", "before", "after", "speed-up", "points/s before", "points/s after",
                   "check before (share)", "check after (share)", "points/s after, solve only",
                   "converged before / after"], side),
            "",
            f"The target of issue 29 (10^6 points/s): on one thread the extended-precision "
            f"check alone allows {caps[0]:.1e} to {caps[1]:.1e} points/s here (per point: the "
            "residual and all 36 reported values in double-double, a 5 x 5 Jacobian, its "
            "condition by Jacobi rotations and a Newton correction); the solve itself (start, "
            "Newton, reported values) is the `solve only` column.",
            "",
            "Every value and status of the three grids, before and after with one thread, and "
            "with two threads against one (before and after; sha256 of the arrays, all but the "
            "check's own estimate), and the check's error estimate after / before (1 - 1: the "
            "same estimate at every point; a check evaluated with other operations moves it in "
            "its last bits). With two threads a tree with `Kernel._solve_parts_on_threads` "
            "restarts the continuation at the second part's first point: its values may differ "
            "there in the last bits (within the two error estimates, "
            "`tests/test_float64_kernels.py`); on these grids they do not.",
            "",
            table(["grid", "values and statuses, 1 thread", "2 threads against 1",
                   "error estimate after / before", "finite estimates"], values),
            "",
            "The same grids by wall clock (a call as a user makes it; the 2 cores were shared, "
            "so the 2-thread figure is what two loaded cores gave): with Numba's thread count "
            f"(`NUMBA_NUM_THREADS`) above one, a batch of at least {PARALLEL_MIN} points uses "
            "as many Python threads (the compiled code releases the GIL): in a tree with "
            "`Kernel._solve_parts_on_threads` the batch is split into one part of consecutive "
            "points per thread, each part solved and checked on its own thread (its "
            "continuation restarted at its first point); in a tree with "
            "`Kernel._solve_and_check_on_threads`, the calling thread solves in chunks (its "
            "continuation carried from chunk to chunk) while the other threads check the "
            "chunks already solved; in an older tree the checks ran in parts after the whole "
            "solve. The table above is one thread (`NUMBA_NUM_THREADS=1`), CPU time.",
            "",
            table(["grid", "points/s before, 1 thread", "points/s after, 1 thread",
                   "points/s before, 2 threads", "points/s after, 2 threads",
                   "after: 2 threads / 1 thread", "2 threads: after / before"], threads),
            "",
            "Golden point 2 at 50 digits, verified (re-solve at 82 digits), CPU time:",
            "",
            table(["before", "after", "speed-up", "digits before / after", "50-digit values"],
                  [point]),
        ]
    write_section(NAME, "\n".join(md))
    print("\n".join(md))


if __name__ == "__main__":
    main()
