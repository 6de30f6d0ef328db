"""Is a model's generated code (and so its float64 values) the same in every process? (job
f64status, session 53)

Two fresh processes per tree, each with its own fresh code cache: ``plain`` solves the float64
grids below at once; ``history`` first makes 777 SymPy symbols and solves two other models
(what a pytest worker has done before it reaches a module, or another tree's process). The
generated files of the two caches are compared byte for byte and after numbering SymPy's dummy
names in order of appearance (``semantic``: the same code up to names), and every output array
bit for bit. Before ``codegen.lambdify_canonical`` the two processes' hinge SVM and logistic
regression code differed in the order of operations, and hinge SVM's float64 values in their
last bits at 3 of 9 points (SymPy's process-wide Dummy counter names lambdify's arguments).
Reverted once in session 53 (the new order broke tests that had passed by an exact
cancellation), re-landed in session 54 (job canon2) with those causes fixed -- see
benchmarks/README.md, sections ``f64status`` and ``canon2``.

``python -m benchmarks.codegen_history TREE [TREE ...]`` (each tree's checkout on
``PYTHONPATH``; minutes per tree: code generation of three example models twice).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile

INNER = r'''
import sys
import numpy as np
import replica
out_file, mode = sys.argv[1], sys.argv[2]
if mode == "history":
    import sympy
    for _ in range(777):
        sympy.Dummy()
    replica.solve_float64("examples/perceptron_gardner.py", strict=False,
                          alpha=np.array([1.5]), kappa=0.0)
    replica.solve_float64("isotropic", strict=False, alpha=np.linspace(0.5, 4, 9), tau=4.0,
                          kappa=2.0, rho=0.01)
out = {"hinge": replica.solve_float64("examples/hinge_svm.py", strict=False,
                                      alpha=np.linspace(0.5, 4, 9)),
       "logistic": replica.solve_float64("examples/logistic_regression.py", strict=False,
                                         alpha=np.array([3.0]), lam=1e-4, eta=0.9)}
np.savez(out_file, **{f"{k}__{n}": v for k, r in out.items() for n, v in r.items()})
'''


def _renamed(text: str) -> str:
    """``text`` without its seal line, SymPy's dummy names numbered in order of appearance
    within each function."""
    text = re.sub(r"^# sha256.*$", "", text, flags=re.M)
    parts = []
    for block in re.split(r"(?=^def )", text, flags=re.M):
        names: dict = {}
        parts.append(re.sub(r"_?Dummy_\d+", lambda m: names.setdefault(m.group(0),
                                                                      f"D{len(names)}"), block))
    return "".join(parts)


def run_tree(tree: str) -> dict:
    import numpy as np

    with tempfile.TemporaryDirectory() as tmp:
        results, caches = {}, {}
        for mode in ("plain", "history"):
            cache = caches[mode] = os.path.join(tmp, f"cache-{mode}")
            os.makedirs(cache)
            env = dict(os.environ, PYTHONPATH=tree, REPLICA_LAMBDIFY_CACHE=cache,
                       REPLICA_NUMBA="0")
            out = os.path.join(tmp, f"{mode}.npz")
            subprocess.run([sys.executable, "-c", INNER, out, mode], cwd=tree, env=env,
                           check=True, capture_output=True)
            results[mode] = dict(np.load(out))
        files, other = ({f for f in os.listdir(caches[m]) if f.endswith(".py")}
                        for m in ("plain", "history"))
        if not files <= other:  # (history also made other models' files; a key that
            # differs means the tree changed between the two runs)
            raise SystemExit(f"{tree}: files of the plain run missing from the other: "
                             f"{sorted(files - other)[:4]}")
        files = sorted(files)
        byte = semantic = 0
        for f in files:
            a = open(os.path.join(caches["plain"], f)).read()
            b = open(os.path.join(caches["history"], f)).read()
            byte += a != b
            semantic += _renamed(a) != _renamed(b)
        a, b = results["plain"], results["history"]
        differing = {k: int(np.sum(~((a[k] == b[k]) | (np.isnan(a[k]) & np.isnan(b[k])))))
                     if a[k].dtype.kind == "f" else int(np.sum(a[k] != b[k])) for k in a}
        return {"files": len(files), "byte": byte, "semantic": semantic,
                "arrays": len(a), "arrays_differing": {k: n for k, n in differing.items() if n}}


def main(argv=None):
    trees = [os.path.abspath(t) for t in (argv if argv is not None else sys.argv[1:])]
    for tree in trees:
        r = run_tree(tree)
        print(f"{tree}: {r['files']} generated files, {r['byte']} differ byte-wise, "
              f"{r['semantic']} beyond dummy names; {r['arrays']} output arrays, points "
              f"differing: {r['arrays_differing'] or 'none'}")


if __name__ == "__main__":
    main()
