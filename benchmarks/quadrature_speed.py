"""Gaussian-integral models at 30 digits and float64 learning curves: this tree vs a baseline.

Side by side, each in its own process (``python -m replica`` run from each tree, each with its
own warm code cache, one untimed run first):

1. a verified 30-digit point (``replica solve ... --dps 30 --json``: Newton at 35 digits with
   exact Jacobians, a re-solve at 57 digits) of each example declared with ``gauss(...)``;
   the CPU time of the process (user + system, ``resource.getrusage`` of the child) and its
   wall time; the reported values of both trees must agree to the digits both guarantee
   (``digits`` of the JSON): a relative difference of at most :math:`2\\cdot 10^{-d}`;
2. a float64 learning curve: ``replica.solve_float64`` over 100 values of :math:`\\alpha`
   (one call; the model file loaded and its generated code loaded by an untimed call
   first, and SciPy's error functions imported untimed: the two-point load call evaluates
   ``erf``/``erfc`` without SciPy, ``codegen._small_erf``), CPU time in the process;
   the converged points of both trees must agree to the float64 claim (relative 1e-8).

The issue's targets: (1) at most 1 s, (2) at most 1 s.

``python -m benchmarks.quadrature_speed [--baseline DIR] [--repeats N] [--only NAME,...]
[--no-write]`` (``DIR``: a checkout of the baseline commit, e.g. ``git worktree add
/tmp/base <commit>``; default: none, this tree only). Rewrites its section of
``benchmarks/README.md`` unless ``--no-write``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

try:
    from ._util import machine_line, table, finish
except ImportError:  # run as a script
    from _util import machine_line, table, finish  # type: ignore

NAME = "quadrature_speed"
HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

POINTS = {
    "perceptron_teacher": ["--model", "examples/perceptron_teacher.py", "--alpha", "1",
                           "--prior", "rademacher"],
    "perceptron_capacity": ["--model", "examples/perceptron_capacity.py", "--kappa", "0"],
    "hinge_svm": ["--model", "examples/hinge_svm.py", "--alpha", "2"],
    "lasso": ["--model", "examples/lasso.py", "--alpha", "1/2", "--eps", "1/10", "--lam", "1/2",
              "--sigma", "1/10"],
    "logistic_separability": ["--model", "examples/logistic_separability.py", "--eta", "1/2"],
    "logistic_regression": ["--model", "examples/logistic_regression.py", "--alpha", "2",
                            "--lam", "1/10", "--eta", "1"],
}

CURVES = {
    "perceptron_teacher": ("examples/perceptron_teacher.py", {"prior": "gaussian"}),
    "logistic_regression": ("examples/logistic_regression.py", {"lam": 0.1, "eta": 1}),
}

CURVE_SCRIPT = r"""
import json, sys, time
import numpy as np
import replica
model, extra = replica.load_model(sys.argv[1]), json.loads(sys.argv[2])
alpha = np.linspace(0.2, 3.0, 100)
replica.solve_float64(model, alpha=alpha[:2], strict=False, **extra)  # load the code
try:  # SciPy's error functions, which grids of this size use (a two-point grid does not):
    import scipy.special  # noqa: F401 - imported untimed, as every tree's load call once did
except ImportError:
    pass
t = time.process_time()
r = replica.solve_float64(model, alpha=alpha, strict=False, **extra)
cpu = time.process_time() - t
skip = {"status", "converged", "iterations", "residual", "condition", "error_estimate"}
print(json.dumps({"cpu": cpu, "converged": r["converged"].tolist(),
                  "status": [str(s) for s in r["status"]],
                  "values": {k: np.asarray(v, float).tolist() for k, v in r.items()
                             if k not in skip}}))
"""


def _env(tree: str) -> dict:
    env = dict(os.environ)
    env["REPLICA_LAMBDIFY_CACHE"] = os.path.join(tempfile.gettempdir(),
                                                 "replica-quad-bench-" + str(abs(hash(tree))))
    env["PYTHONPATH"] = tree
    return env


def _run(tree: str, argv: list) -> tuple:
    """``(cpu, wall, stdout)`` of ``python argv`` run in ``tree``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    out = subprocess.run([sys.executable] + argv, cwd=tree, env=_env(tree), check=True,
                         capture_output=True, text=True).stdout
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, wall, out


def _values(doc: dict) -> dict:
    skip = {"model", "params", "dps", "digits", "digits_how", "status", "converged",
            "iterations", "residual", "condition", "notes"}
    out = {}
    for group, vals in doc.items():
        if group in skip or not isinstance(vals, dict):
            continue
        for k, v in vals.items():
            out[f"{group}.{k}"] = v
    return out


def _agreement(a: dict, b: dict) -> float:
    """The smallest number of agreeing significant digits over the numeric values both report
    (99 where every value is printed identically); a value only one tree reports (a replicon
    added since the baseline) and words (``stability.how``, ``stable``) are not compared."""
    import mpmath

    with mpmath.workdps(80):
        worst = mpmath.inf
        for k in sorted(a.keys() & b.keys()):
            if not (isinstance(a[k], str) and isinstance(b[k], str)):
                continue
            try:
                x, y = mpmath.mpf(a[k]), mpmath.mpf(b[k])
            except ValueError:
                continue
            if x == y:
                continue
            worst = min(worst, -mpmath.log10(abs(x - y) / max(abs(x), abs(y))))
        return float(worst) if worst != mpmath.inf else 99.0


def point(tree: str, name: str, repeats: int) -> dict:
    argv = ["-m", "replica", "solve"] + POINTS[name] + ["--dps", "30", "--json"]
    _run(tree, argv)  # warm the code cache
    best = None
    for _ in range(repeats):
        cpu, wall, out = _run(tree, argv)
        if best is None or cpu < best[0]:
            best = (cpu, wall, out)
    doc = json.loads(best[2])
    return {"cpu": best[0], "wall": best[1], "digits": doc["digits"], "values": _values(doc)}


def curve(tree: str, name: str, repeats: int) -> dict:
    path, extra = CURVES[name]
    argv = ["-c", CURVE_SCRIPT, path, json.dumps(extra)]
    best = None
    for _ in range(repeats):
        _, wall, out = _run(tree, argv)
        doc = json.loads(out)
        if best is None or doc["cpu"] < best["cpu"]:
            best = dict(doc, wall=wall)
    return best


def _curve_agreement(a: dict, b: dict) -> float:
    import numpy as np

    both = np.array(a["converged"]) & np.array(b["converged"])
    worst = 0.0
    for k in sorted(a["values"].keys() & b["values"].keys()):  # values both trees report
        x, y = np.array(a["values"][k])[both], np.array(b["values"][k])[both]
        if x.size:
            worst = max(worst, float(np.max(np.abs(x - y) / np.maximum(np.abs(y), 1e-300))))
    return worst


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m benchmarks.quadrature_speed")
    ap.add_argument("--baseline", default=None)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--only", default="")
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args([] if argv is None else argv)  # (python -m benchmarks: defaults)
    only = [s for s in args.only.split(",") if s]
    load = os.getloadavg()[0]
    rows, crow, failures = [], [], []
    for name in POINTS:
        if only and name not in only:
            continue
        new = point(HERE, name, args.repeats)
        row = [name, f"{new['cpu']:.2f} s ({new['wall']:.1f} s)"]
        if args.baseline:
            old = point(args.baseline, name, args.repeats)
            d = min(new["digits"], old["digits"])
            agree = _agreement(new["values"], old["values"])
            ok = agree >= d - 0.31  # a relative difference of at most 2e-d
            failures += [] if ok else [name]
            row[1:1] = [f"{old['cpu']:.2f} s ({old['wall']:.1f} s)"]
            shown = "identical" if agree >= 99 else f"{agree:.1f}"
            row += [f"{old['cpu'] / new['cpu']:.1f}x", f"{shown} (guaranteed {d})"]
        rows.append(row)
        print(" | ".join(row), flush=True)
    for name in CURVES:
        if only and name not in only:
            continue
        new = curve(HERE, name, args.repeats)
        row = [name, f"{new['cpu']:.2f} s", f"{sum(new['converged'])}/100"]
        if args.baseline:
            old = curve(args.baseline, name, args.repeats)
            worst = _curve_agreement(new, old)
            failures += [] if worst <= 1e-8 else [f"{name} (float64)"]
            row[1:1] = [f"{old['cpu']:.2f} s"]
            row += [f"{old['cpu'] / new['cpu']:.1f}x", f"{worst:.1e}"]
        crow.append(row)
        print(" | ".join(row), flush=True)
    base = args.baseline is not None
    md = ["## Gaussian-integral models: 30-digit points and float64 curves", "",
          f"Machine: {machine_line()}; load average {load:.1f} at the start (shared machine: "
          "wall times are inflated by other processes, CPU times are the comparison). "
          f"Best of {args.repeats} CPU time (user + system) per process, wall time in "
          "parentheses; targets: 1 s each.", "",
          table(["30-digit verified point"] + (["baseline CPU (wall)"] if base else [])
                + ["this tree CPU (wall)"] + (["ratio", "agreeing digits"] if base else []),
                rows), "",
          table(["float64, 100 values of alpha"] + (["baseline CPU"] if base else [])
                + ["this tree CPU", "converged"]
                + (["ratio", "max relative difference"] if base else []), crow)]
    finish(NAME, md, failures, write=not args.no_write)


if __name__ == "__main__":
    main(sys.argv[1:])
