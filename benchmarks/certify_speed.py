"""Certified solves and ball arithmetic: what a proof costs, and what ball arithmetic saves.

Side by side in one run, at each point:

1. a verified solve with Newton's evaluations in mpmath only (the baseline: how every solve ran
   before ball arithmetic was added, ``replica.numerics.machine.ball_evaluation(False)``; this also
   switches off the ball-arithmetic bound on the rounding of the reported values, so the baseline
   verifies less);
2. the same verified solve with the evaluations (equations, Jacobian, reported values, the
   alignment measures) and the linear solves in python-flint's ball arithmetic, midpoints used
   as values (the default);
3. the certified solve (``certify=True``: the verified solve plus the Krawczyk proof and the
   enclosures of every reported value).

The overhead of certification is (3)/(2) (issue 29's target: <= 1.5x on every row). The issue's
targets for (2) are 5 ms for a 50-digit low-rank point and 10 ms for an alignment point at
d = 120 and 50 digits. A second table times one evaluation of the equations and the Jacobian,
mpmath vs arb.

Times are process CPU times (``time.process_time``; the machine is shared), medians of the runs.
``--baseline PATH`` adds (2) and (3) side by side with another checkout (e.g. a worktree of the
commit before), each tree in its own process, alternating three times (medians over the rounds
of each process's median), with whether every reported value and digit count is the same.

Run ``python -m benchmarks.certify_speed [--baseline PATH]`` (rewrites its section of
``benchmarks/README.md``).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time


from replica import models
from replica.modeling import load_model_file
from replica.numerics import certify as C
from replica.numerics.driver import solve_params
from replica.numerics.machine import ball_evaluation, machine
from replica.numerics.precision import ball_precision, precision

try:
    from ._util import machine_line, table, write_section
except ImportError:  # run as a script
    from _util import machine_line, table, write_section  # type: ignore


def median_time(fn, repeats=5):
    """Median CPU time of ``fn()`` over ``repeats`` calls (and the last return value)."""
    times, out = [], None
    for _ in range(repeats):
        t = time.process_time()
        out = fn()
        times.append(time.process_time() - t)
    return statistics.median(times), out

NAME = "certify_speed"
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

POINTS = [
    ("lowrank golden point 2, 50 digits", "lowrank",
     dict(alpha="2.3", tau="1.7", kappa="1", rho="0.2", sigma="0.003", lam="3"), 50),
    ("lowrank README example, 50 digits", "lowrank",
     dict(alpha="2", tau="9/4", kappa="3/2", rho="0.9", sigma="0.3"), 50),
    ("alignment d=120 piano/spike:1, 50 digits", "alignment",
     dict(alpha="2", tau="4", kappa="2", rho="0.01", d="120", train="piano", test="spike:1"), 50),
    ("alignment d=120 powerlaw:1 ridge, 50 digits", "alignment",
     dict(alpha="2", tau="1/2", kappa="1/2", rho="0.01", lam="1/10", d="120",
          train="powerlaw:1", test="identity"), 50),
    ("isotropic ridge, 40 digits", "isotropic",
     dict(alpha="10", tau="3/2", kappa="2", rho="0.01", lam="0.001"), 40),
    ("model file ridge_regression.py, 40 digits", "examples/ridge_regression.py",
     dict(alpha="2", lam="1/10", sigma="1/2"), 40),
]


def _problem(name):
    if name.endswith(".py"):
        return load_model_file(os.path.join(REPO, name))
    return models.get(name)


def solve_rows():
    rows, overheads = [], []
    for label, name, raw, dps in POINTS:
        problem = _problem(name)
        params = problem.schema.parse(raw)
        solve_params(problem, params, dps=dps, certify=True)  # generate and cache the code
        with ball_evaluation(False):
            solve_params(problem, params, dps=dps)
            t_mp, r_mp = median_time(lambda: solve_params(problem, params, dps=dps), repeats=7)
        t_ball, r_ball = median_time(lambda: solve_params(problem, params, dps=dps), repeats=7)
        t_cert, r_cert = median_time(
            lambda: solve_params(problem, params, dps=dps, certify=True), repeats=7)
        cert = r_cert.certificate
        overheads.append(t_cert / t_ball)
        rows.append([label, f"{t_mp * 1e3:.1f} ms", f"{t_ball * 1e3:.1f} ms",
                     f"{t_mp / t_ball:.1f}x", f"{t_cert * 1e3:.1f} ms",
                     f"{t_cert / t_ball:.2f}x", f"{r_mp.digits}/{r_ball.digits}/{r_cert.digits}",
                     "yes" if cert.certified else f"no ({cert.reason})",
                     C.directed_decimal(cert.radius, 2, up=True) if cert.radius else "0"])
    return rows, overheads


def evaluation_rows():
    rows = []
    for label, name, raw, dps in POINTS[:3]:
        problem = models.get(name)
        params = problem.schema.parse(raw)
        m = machine(problem, problem.variant_of(params))
        with precision(dps):
            _, rep, _ = m.solve_mp_once(params, None)
            P, spec = m.parameter_values_mp(params), m.spectrum(params, "mp")
            x = list(rep.x)

            def mp_eval():
                m.evaluate("equations", "mp", x, P, spec)
                m.evaluate("jacobian", "mp", x, P, spec)

            t_mp, _ = median_time(mp_eval, repeats=21)
        with ball_precision(dps), precision(dps):
            Pb, specb = C.parameter_balls(m, params), m.spectrum(params, "arb")
            xb = [C.exact_ball(v) for v in x]

            def ball_eval():
                m.evaluate("equations", "arb", xb, Pb, specb)
                m.evaluate("jacobian", "arb", xb, Pb, specb)

            ball_eval()
            t_b, _ = median_time(ball_eval, repeats=21)
        rows.append([label, str(m.n), f"{t_mp * 1e3:.2f} ms", f"{t_b * 1e3:.2f} ms",
                     f"{t_mp / t_b:.1f}x"])
    return rows


_SIDE = r"""
import json, statistics, sys, time
import mpmath
from benchmarks.certify_speed import POINTS, _problem
from replica.numerics.driver import solve_params

out = {}
for label, name, raw, dps in POINTS:
    problem = _problem(name)
    params = problem.schema.parse(raw)
    solve_params(problem, params, dps=dps, certify=True)
    solve_params(problem, params, dps=dps)
    row = []
    for cert in (False, True):
        ts = []
        for _ in range(9):
            t = time.process_time()
            r = solve_params(problem, params, dps=dps, certify=cert)
            ts.append(time.process_time() - t)
        row.append(statistics.median(ts))
        row.append([r.digits] + sorted((k, v if v is None else mpmath.nstr(v, dps))
                                       for k, v in r.all_values.items()))
    out[label] = row
print(json.dumps(out))
"""


def _side_run(tree: str) -> dict:
    env = dict(os.environ, PYTHONPATH=tree, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1",
               MKL_NUM_THREADS="1")
    proc = subprocess.run([sys.executable, "-c", _SIDE], cwd=tree, env=env,
                          capture_output=True, text=True, check=True)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def side_by_side(baseline: str, rounds: int = 3) -> list:
    """Rows of the verified and certified solves of this tree and ``baseline`` (CPU times,
    medians over ``rounds`` alternating processes of each process's median of 9)."""
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    runs: dict = {"base": [], "new": []}
    for _ in range(rounds):
        runs["base"].append(_side_run(baseline))
        runs["new"].append(_side_run(here))
    rows = []
    for label, *_ in POINTS:
        vb, vn, cb, cn = (statistics.median(r[label][i] for r in runs[w])
                          for w, i in (("base", 0), ("new", 0), ("base", 2), ("new", 2)))
        same = all(runs["base"][0][label][i] == runs["new"][0][label][i] for i in (1, 3))
        rows.append([label, f"{vb * 1e3:.1f} ms", f"{vn * 1e3:.1f} ms", f"{vb / vn:.2f}x",
                     f"{cb * 1e3:.1f} ms", f"{cn * 1e3:.1f} ms", f"{cb / vb:.2f}x",
                     f"{cn / vn:.2f}x", "identical" if same else "DIFFERENT"])
    return rows


def main():
    t0 = time.perf_counter()
    baseline = None
    if "--baseline" in sys.argv:
        baseline = sys.argv[sys.argv.index("--baseline") + 1]
    load0 = os.getloadavg()[0]
    rows, overheads = solve_rows()
    ev = evaluation_rows()
    md = [
        "## Certified solves: the cost of a proof, and ball arithmetic in the verified solve",
        "",
        f"Machine: {machine_line()}, load average {load0:.1f} at the start (shared). Median "
        "CPU time of 7 runs, each point's code generated and cached "
        "first. *mpmath*: the verified solve with Newton's evaluations in mpmath only (the "
        "baseline, as before ball arithmetic); *ball*: the same verified solve with evaluations "
        "and linear solves in python-flint arb, midpoints as values (the default); *certified*: "
        "`certify=True` (the verified solve plus the Krawczyk proof and every enclosure). The "
        "baseline also skips the rounding bound of the reported values (ball arithmetic), which "
        "the default verification adds. "
        "Digits: verified (mpmath) / verified (ball) / proved. Radius: of the box, relative.",
        "",
        table(["point", "verified, mpmath", "verified, ball", "speed-up", "certified",
               "overhead", "digits", "certified?", "radius"], rows),
        "",
        f"Certification overhead over the verified solve: {min(overheads):.2f}x to "
        f"{max(overheads):.2f}x (target <= 1.5x). What the proof adds to the verified solve: "
        "the equations at the centre, the Jacobian over one box, the admissibility conditions "
        "and the reported values over the box; it reuses the verifying re-solve's last "
        "Jacobian (the preconditioner, inverted by python-flint), its balls of the values "
        "computed from the covariances (same precision), and the Jacobian enclosure of the "
        "box that passed the test for the tightening steps.",
        "",
        "One evaluation of the equations and the Jacobian at the solution (the work of one "
        "Newton step besides the linear solve):",
        "",
        table(["point", "unknowns", "mpmath", "arb", "arb speed-up"], ev),
    ]
    if baseline is not None:
        side = side_by_side(baseline)
        md += [
            "",
            f"Side by side with `{os.path.basename(os.path.normpath(baseline))}` "
            "(`--baseline PATH`, a worktree of the commit before): CPU time, medians over "
            "3 alternating processes per tree of each process's median of 9 solves; *values*: "
            "every reported value to the requested digits (`mpmath.nstr`) and the digits, "
            "verified and certified, the same in both trees or not.",
            "",
            table(["point", "verified, before", "verified, now", "speed-up",
                   "certified, before", "certified, now", "overhead before", "overhead now",
                   "values"], side),
        ]
    md += ["", f"(run time {time.perf_counter() - t0:.0f} s, load average "
               f"{os.getloadavg()[0]:.1f} at the end)"]
    write_section(NAME, "\n".join(md))
    print("\n".join(md))


if __name__ == "__main__":
    main()
