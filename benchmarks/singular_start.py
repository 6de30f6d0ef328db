"""Time to the error of a solve whose declared start makes a denominator exactly 0 (job sstart).

``examples/lasso.py`` with its former start m = q = 1/20 (written to a temporary model file) at
alpha = 9/10, eps = 1/20, lam = 1e-4, sigma = 0, where the risk eps - 2m + q of the start is
exactly 0 and the equations divide by lam/sqrt(qhat) = lam/0; and the one-unknown fixed point
x = 1/(c - x) from x = c (c = 3) of ``tests/test_exact_singular_start.py``. Each repeat is a
fresh process (as ``replica solve`` is; its code cache warm after a first, untimed run) that
times ``solve_params`` to its :class:`~replica.errors.ConvergenceError`, wall and CPU, and
prints the error's status and the first words of its message.

``python -m benchmarks.singular_start TREE [TREE ...] [--repeats N]`` runs the trees' checkouts
interleaved (``PYTHONPATH`` = each tree), N repeats each (default 5), and prints min / median.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile

INNER = r'''
import json, sys, time
import sympy
import replica
from replica.errors import ConvergenceError
from replica.numerics.driver import solve_params
from replica.problem import Parameter, Problem, Schema, Start, System

which, path = sys.argv[1], sys.argv[2]
if which == "lasso":
    prob = replica.load_model(path)
    raw = dict(alpha="9/10", eps="1/20", lam="1e-4", sigma="0")
else:
    x = sympy.Symbol("x")
    c = sympy.Symbol("c", positive=True)
    prob = Problem("pole", Schema([Parameter("c", "a positive constant")]), title="pole",
                   variants=[("only", None)], groups={"values": ["x"]},
                   systems=lambda _v: System(unknowns=(x,), parameters=(c,), symbols={"c": c},
                                             fixed_point={x: 1 / (c - x)}, report=[("x", x)],
                                             start=Start(values={x: c})))
    raw = dict(c="3")
params = prob.schema.parse(raw)
t, p = time.perf_counter(), time.process_time()
try:
    solve_params(prob, params, dps=30)
    msg, status = "solved", "converged"
except ConvergenceError as exc:
    msg, status = str(exc), exc.status
print(json.dumps({"wall": time.perf_counter() - t, "cpu": time.process_time() - p,
                  "status": status, "message": msg[:90]}))
'''


def old_lasso(repo: str, folder: str) -> str:
    """``examples/lasso.py`` of ``repo`` with its former start m = q = 1/20, V = 1/2."""
    text = open(os.path.join(repo, "examples", "lasso.py")).read()
    new = "start={m: eps / 2, q: eps / 2, V: sympy.Rational(1, 2)}"
    old = "start={m: sympy.Rational(1, 20), q: sympy.Rational(1, 20), V: sympy.Rational(1, 2)}"
    assert new in text
    path = os.path.join(folder, "lasso_old_start.py")
    with open(path, "w") as f:
        f.write(text.replace(new, old))
    return path


def run(tree: str, which: str, path: str) -> dict:
    env = dict(os.environ, PYTHONPATH=tree)
    out = subprocess.run([sys.executable, "-c", INNER, which, path], env=env, cwd=tree,
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv):
    repeats = 5
    if "--repeats" in argv:
        i = argv.index("--repeats")
        repeats = int(argv[i + 1])
        argv = argv[:i] + argv[i + 2:]
    trees = [os.path.abspath(t) for t in argv]
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    with tempfile.TemporaryDirectory() as folder:
        path = old_lasso(here, folder)
        for which in ("lasso", "pole"):
            times = {t: [] for t in trees}
            last = {}
            for t in trees:  # (untimed: the code cache)
                run(t, which, path)
            for _ in range(repeats):
                for t in trees:
                    got = run(t, which, path)
                    times[t].append((got["wall"], got["cpu"]))
                    last[t] = got
            for t in trees:
                w = [a for a, _ in times[t]]
                c = [b for _, b in times[t]]
                print(f"{which:5s} {os.path.basename(t):16s} wall min {min(w):.3f} median "
                      f"{statistics.median(w):.3f} s, cpu min {min(c):.3f} median "
                      f"{statistics.median(c):.3f} s; {last[t]['status']}: "
                      f"{last[t]['message']}")


if __name__ == "__main__":
    main(sys.argv[1:])
