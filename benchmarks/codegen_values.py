"""How far did the float64 values of the standard grids move with a change of the generated
code's operation order? (job canon2, session 54: ``codegen.lambdify_canonical``)

Each tree solves, in a fresh process with a fresh code cache and the NumPy path
(``REPLICA_NUMBA=0``), the four curves of ``benchmarks/f64logi_curves.py`` (100 values of
alpha in [0.2, 3]) and grids of the three built-in models; the first tree is the reference.
Per grid: the points whose status differs, and over the points ``converged`` in both trees,
every reported value's largest difference in units in the last place and relative to the
point's error estimate (the larger of the two trees'), the worst over the values.

``python -m benchmarks.codegen_values BASE TREE [TREE ...]`` (minutes per tree).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile

INNER = r'''
import sys
import numpy as np
import replica
a100 = np.linspace(0.2, 3.0, 100)
grids = {
    "logistic_regression": ("examples/logistic_regression.py", dict(alpha=a100, lam=0.1, eta=1)),
    "perceptron_teacher": ("examples/perceptron_teacher.py", dict(alpha=a100, prior="gaussian")),
    "hinge_svm": ("examples/hinge_svm.py", dict(alpha=a100)),
    "glm_logistic": ("examples/glm_logistic.py", dict(alpha=a100, lam=0.1, eta=1)),
    "isotropic": ("isotropic", dict(alpha=np.linspace(0.5, 4, 50), tau=4.0, kappa=2.0,
                                    rho=0.01)),
    "lowrank": ("lowrank", dict(alpha=np.logspace(-0.5, 3, 50), rho=0.5, tau=2.25, kappa=0.5,
                                sigma=0.3, lam=1e-3)),
    "alignment": ("alignment", dict(d=120, train="piano", test="piano",
                                    alpha=np.linspace(0.2, 5, 50), tau=4.0, kappa=2.0,
                                    rho=0.01)),
}
out = {}
for name, (model, kw) in grids.items():
    r = replica.solve_float64(model, strict=False, **kw)
    out.update({f"{name}__{k}": np.asarray(v) for k, v in r.items()})
np.savez(sys.argv[1], **out)
'''

GRID_KEYS = ("converged", "status", "iterations", "residual", "condition", "error_estimate")


def run_tree(tree: str, tmp: str) -> dict:
    import numpy as np

    cache = tempfile.mkdtemp(dir=tmp)
    out = os.path.join(cache, "out.npz")
    env = dict(os.environ, PYTHONPATH=tree, REPLICA_LAMBDIFY_CACHE=cache, REPLICA_NUMBA="0")
    subprocess.run([sys.executable, "-c", INNER, out], cwd=tree, env=env, check=True,
                   capture_output=True)
    return dict(np.load(out))


def compare(a: dict, b: dict) -> dict:
    import numpy as np

    rows = {}
    for grid in sorted({k.split("__")[0] for k in a}):
        sa, sb = a[f"{grid}__status"], b[f"{grid}__status"]
        both = (sa == "converged") & (sb == "converged")
        est = np.maximum(a[f"{grid}__error_estimate"], b[f"{grid}__error_estimate"])[both]
        ulps = rel_est = 0.0
        moved = 0
        worst = ""
        for key in a:
            g, name = key.split("__")
            if g != grid or name in GRID_KEYS:
                continue
            x, y = a[key][both].astype(float), b[key][both].astype(float)
            d = np.abs(x - y)
            u = d / np.spacing(np.maximum(np.abs(x), np.abs(y)))
            moved += int(np.sum(d > 0))
            with np.errstate(all="ignore"):
                r = np.where(d > 0, d / np.abs(x) / np.where(est > 0, est, np.inf), 0.0)
            if u.size and u.max() > ulps:
                ulps, worst = float(u.max()), name
            rel_est = max(rel_est, float(r.max()) if r.size else 0.0)
        rows[grid] = dict(points=int(sa.size), status_differ=int(np.sum(sa != sb)),
                          converged_both=int(both.sum()), values_moved=moved,
                          max_ulps=ulps, worst=worst, max_over_estimate=rel_est)
    return rows


def main(argv=None):
    trees = [os.path.abspath(t) for t in (argv if argv is not None else sys.argv[1:])]
    with tempfile.TemporaryDirectory() as tmp:
        results = [run_tree(t, tmp) for t in trees]
    for t, r in zip(trees[1:], results[1:]):
        print(f"{t} against {trees[0]}:")
        for grid, row in compare(results[0], r).items():
            print(f"  {grid}: {row['points']} points, statuses differing {row['status_differ']}, "
                  f"converged in both {row['converged_both']}, values moved "
                  f"{row['values_moved']}, at most {row['max_ulps']:.0f} ulps ({row['worst']}), "
                  f"difference / error estimate at most {row['max_over_estimate']:.2g}")


if __name__ == "__main__":
    main()
