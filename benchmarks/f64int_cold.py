"""Float64 grids of the models with exponentials, cold (fresh code cache) and warm: this tree vs
a baseline, and their values compared bit for bit (issue 26, the logistic forms of the float64
Gaussian integrands, ``codegen._logistic_safe``).

Per model a grid of ``replica.solve_float64`` (one call, ``strict=False``): logistic_regression
and glm_logistic over alpha (0.5, 1, 2, 3, 5) x lam (1, 0.1, 0.01) x eta (two values),
hinge_svm over six alphas, logistic_separability over four etas. Each tree in its own processes
(``PYTHONPATH`` the tree), its code cache emptied before the cold process and kept for the warm
one, the trees alternating (order reversed on the second repeat); CPU time of the child
(``os.wait4``: user + system, code generation included). The reported arrays (values as hex,
statuses) of the two trees are compared point by point.

``python -m benchmarks.f64int_cold --baseline DIR [--repeats N] [MODEL ...]``; prints, writes
nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

GRIDS = {
    "logistic_regression": {"alpha": [0.5, 1, 2, 3, 5], "lam": [1, 0.1, 0.01], "eta": [0.9, 1.0]},
    "glm_logistic": {"alpha": [0.5, 1, 2, 3, 5], "lam": [1, 0.1, 0.01], "eta": [0.9, 0.5]},
    "hinge_svm": {"alpha": [0.5, 1, 2, 3, 5, 10]},
    "logistic_separability": {"eta": [0.1, 0.5, 0.9, 0.99], "alpha": [1.0]},
}

CHILD = r"""
import json, sys
import numpy as np
import replica
model, grid, out = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3]
prob = replica.load_model(f"examples/{model}.py")
mesh = np.meshgrid(*[np.array(v, float) for v in grid.values()], indexing="ij")
res = replica.solve_float64(prob, strict=False, **{n: m.ravel() for n, m in zip(grid, mesh)})
json.dump({k: [x.hex() if isinstance(x, float) else str(x) for x in np.asarray(v).ravel().tolist()]
           for k, v in res.items()}, open(out, "w"))
"""


def _run(tree: str, model: str, cache: str, out: str) -> float:
    env = dict(os.environ, PYTHONPATH=tree, REPLICA_LAMBDIFY_CACHE=cache)
    p = subprocess.Popen([sys.executable, "-c", CHILD, model, json.dumps(GRIDS[model]), out],
                         cwd=tree, env=env)
    _, status, ru = os.wait4(p.pid, 0)
    if status:
        raise SystemExit(f"{model} in {tree} failed ({status})")
    return ru.ru_utime + ru.ru_stime


def main(argv=None) -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--baseline", required=True)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("models", nargs="*", default=list(GRIDS))
    args = ap.parse_args(argv)
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    trees = [("this", here), ("baseline", os.path.abspath(args.baseline))]
    work = tempfile.mkdtemp(prefix="f64int-")
    try:
        for model in args.models:
            for rep in range(args.repeats):
                for name, tree in (trees if rep % 2 == 0 else trees[::-1]):
                    cache = os.path.join(work, f"cache-{name}")
                    shutil.rmtree(cache, ignore_errors=True)
                    out = os.path.join(work, f"{model}-{name}.json")
                    cold, warm = (_run(tree, model, cache, out) for _ in range(2))
                    print(f"{model:22s} rep {rep} {name:8s} cold {cold:6.2f} s  warm {warm:6.2f} s"
                          f"  load {os.getloadavg()[0]:.1f}", flush=True)
            a, b = (json.load(open(os.path.join(work, f"{model}-{n}.json")))
                    for n in ("baseline", "this"))
            n = len(a["status"])
            differ = [i for i in range(n) if any(a[k][i] != b[k][i] for k in a)]
            changed = [(a["status"][i], b["status"][i]) for i in differ
                       if a["status"][i] != b["status"][i]]
            print(f"{model}: {n - len(differ)} of {n} points bit-identical; statuses changed: "
                  f"{changed or 'none'}", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
