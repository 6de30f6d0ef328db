"""The 100-point float64 curves of the quadrature examples, side by side with a baseline tree
(issue 26: "a float64 learning curve of 100 points <= 1 s"), for the ghost rule of
:func:`replica.numerics.newton.iterate_grid` (the second look at a point past a spinodal).

For each model of :data:`benchmarks.quad30_points.MODELS` named, one fresh Python process per
run and tree (``PYTHONPATH`` the tree, its own warm code cache as in ``quad30_points``): the
model loaded and the code loaded by an untimed two-point call, SciPy imported untimed, then
``replica.solve_float64`` over ``np.linspace(lo, hi, 100)`` of the model's parameter, its CPU
(``time.process_time``), and what ``newton._second_look`` spent (CPU, evaluations of Phi per
point). The trees alternate run by run. Reported: median (min) CPU per tree, the statuses, the
second look's share, and whether every output array (statuses, values, iterations, residuals,
conditions, error estimates) is identical between the trees, bit for bit.

``python -m benchmarks.ghost_curves --baseline DIR [--repeats 3] [--only NAME,...]
[--no-write] [--section ghost]``; a tree without ``newton._second_look`` (curves32: the
second look goes on in place inside ``iterate_grid``) reports no second look of its own.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

try:
    from ._util import machine_line, table, write_section
    from .quad30_points import MODELS, cache_dir
except ImportError:  # run as a script
    from _util import machine_line, table, write_section  # type: ignore
    from quad30_points import MODELS, cache_dir  # type: ignore

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NAME = "ghost"
DEFAULT = ("perceptron_teacher_rademacher,glm_bayes_sign,phase_retrieval,"
           "perceptron_teacher_gaussian,perceptron_teacher_rademacher_branch,"
           "logistic_regression,hinge_svm")

CHILD = r"""
import hashlib, json, sys, time
import numpy as np
path, param, lo, hi, extra = sys.argv[1:6]
extra = json.loads(extra)
import replica
import replica.numerics.newton as newton
model = replica.load_model(path)
grid = np.linspace(float(lo), float(hi), 100)
replica.solve_float64(model, **{param: grid[:2]}, strict=False, **extra)
try:
    import scipy.special  # noqa: F401
except ImportError:
    pass
looked = {"cpu": 0.0, "evaluations": 0, "points": 0}
look = getattr(newton, "_second_look", None)  # (none since curves32: the look in place)
def counted(phi, jac, X0, X, done, iters, rel, drift, **kw):
    sub = np.flatnonzero(drift.stopped & (drift.falls == 0) & ~drift.unresolved)
    def phi_counted(xv, ix):
        looked["evaluations"] += np.size(ix)
        return phi(xv, ix)
    t = time.process_time()
    look(phi_counted, jac, X0, X, done, iters, rel, drift, **kw)
    looked["cpu"] += time.process_time() - t
    looked["points"] += int(sub.size)
if look is not None:
    newton._second_look = counted
t = time.process_time()
r = replica.solve_float64(model, **{param: grid}, strict=False, **extra)
cpu = time.process_time() - t
st = [str(getattr(s, "value", s)) for s in r["status"]]
h = hashlib.sha1()
for k in sorted(r):
    v = np.asarray(r[k])
    h.update(k.encode())
    h.update(np.asarray([str(s) for s in v]).astype("U").tobytes() if v.dtype == object
             else np.ascontiguousarray(v).tobytes())
print("GHOST " + json.dumps({"cpu": cpu, "statuses": {s: st.count(s) for s in sorted(set(st))},
                             "second_look": looked, "hash": h.hexdigest()}))
"""


def run(tree: str, name: str) -> dict:
    path, _, param, (lo, hi), extra = MODELS[name]
    env = dict(os.environ, PYTHONPATH=tree, REPLICA_LAMBDIFY_CACHE=cache_dir(tree),
               OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    proc = subprocess.run([sys.executable, "-c", CHILD, path, param, str(lo), str(hi),
                           json.dumps(extra)], cwd=tree, env=env, capture_output=True,
                          text=True)
    lines = [t for t in proc.stdout.splitlines() if t.startswith("GHOST ")]
    if not lines:
        return {"failed": (proc.stderr.strip().splitlines() or ["?"])[-1][:200]}
    return json.loads(lines[-1][6:])


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m benchmarks.ghost_curves")
    ap.add_argument("--baseline", required=True)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--only", default=DEFAULT)
    ap.add_argument("--no-write", action="store_true")
    ap.add_argument("--section", default=NAME, help="the README section written")
    args = ap.parse_args(sys.argv[1:] if argv is None else argv)
    trees = {"baseline": os.path.abspath(args.baseline), "this": HERE}
    load0 = os.getloadavg()[0]
    rows = []
    for name in [n for n in args.only.split(",") if n]:
        runs = {side: [] for side in trees}
        for side, tree in trees.items():  # (warms the code cache; not timed)
            run(tree, name)
        for i in range(args.repeats):
            order = list(trees.items())
            for side, tree in (order if i % 2 == 0 else order[::-1]):
                got = run(tree, name)
                print(name, side, json.dumps(got), flush=True)
                runs[side].append(got)
        hashes = {r.get("hash") for side in trees for r in runs[side]}
        for side in trees:
            rs = [r for r in runs[side] if "cpu" in r]
            if not rs:
                rows.append([name, side, runs[side][-1].get("failed", "?"), "-", "-", "-"])
                continue
            cpus = [r["cpu"] for r in rs]
            look = rs[-1]["second_look"]
            rows.append([name, side, f"{statistics.median(cpus):.2f} ({min(cpus):.2f})",
                         ", ".join(f"{k} {v}" for k, v in rs[-1]["statuses"].items()),
                         f"{statistics.median(r['second_look']['cpu'] for r in rs):.2f} s, "
                         f"{look['points']} points, {look['evaluations']} evaluations",
                         "identical" if len(hashes) == 1 else "DIFFERENT"])
        print(json.dumps(rows[-2:]), flush=True)
    load1 = os.getloadavg()[0]
    md = [f"## {args.section}", "",
          f"`python -m benchmarks.ghost_curves --baseline DIR --repeats {args.repeats}`: "
          f"100-point float64 curves (the ranges of `quad30_points`), CPU seconds of "
          f"`solve_float64`, median (min) of {args.repeats} fresh processes per tree, the trees "
          f"alternating; code loaded by an untimed two-point call. Machine: {machine_line()}; "
          f"load average {load0:.1f} at the start, {load1:.1f} at the end (shared machine). "
          f"'outputs': every output array of every run, both trees, bit for bit.", "",
          table(["curve", "tree", "CPU (s)", "statuses", "second look", "outputs"], rows)]
    if not args.no_write:
        write_section(args.section, "\n".join(md))
    print("\n".join(md))


if __name__ == "__main__":
    main()
