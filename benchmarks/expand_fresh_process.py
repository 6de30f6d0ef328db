"""``replica expand`` in a fresh process (job slowb, session 49): the CPU time (user + system, of
the child process, from ``os.wait4``) of one ``expand`` command per tree, with a fresh code cache
each run (what CI pays), medians of ``--repeats`` runs alternating the trees; each run's exit
status, standard output and one-line error must be the same in both trees (else exit 1).

The points: the max-margin classifier at alpha -> oo (``hinge_svm``: SymPy cannot solve the
leading-order equations, exit 3; the slow path that the masked leading-order solve of
:func:`replica.analysis.series._solve_masked` shortens) and two expansions that succeed (the
Gardner capacity at kappa = 0, ridge regression at alpha -> oo), to show the masked solve
changes neither their output nor their cost.

``python -m benchmarks.expand_fresh_process --baseline PATH [--repeats N] [--points ...]``
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

POINTS = {
    "hinge_svm": ["examples/hinge_svm.py", "--parameter", "alpha", "--quantity",
                  "generalisation", "--order", "1"],
    "capacity": ["examples/perceptron_capacity.py", "--parameter", "kappa", "--at", "0",
                 "--quantity", "alpha_c", "--order", "2"],
    "ridge": ["examples/ridge_regression.py", "--parameter", "alpha", "--quantity", "test",
              "--order", "2"],
}


def run_of(tree: str, point: str):
    """``(stdout, stderr, exit status)`` of one ``expand`` of ``point`` in a fresh
    process with an empty code cache."""
    model, *rest = POINTS[point]
    cmd = [sys.executable, "-m", "replica", "expand", "--model", os.path.join(tree, model),
           *rest, "--quiet"]
    with tempfile.TemporaryDirectory(prefix="expand-cache-") as cache:
        env = dict(os.environ, PYTHONPATH=tree, REPLICA_LAMBDIFY_CACHE=cache)
        proc = subprocess.Popen(cmd, cwd=tree, env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE)
        out, err = proc.communicate()
    return out.decode(), err.decode().replace(tree, "TREE"), proc.returncode


def cpu_run(tree: str, point: str):
    """``(CPU seconds of the child, exit status, stdout, stderr)`` (the child's user + system
    time: the difference of ``RUSAGE_CHILDREN`` around the run, which reaps it)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out, err, code = run_of(tree, point)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, code, out, err


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--baseline", required=True)
    ap.add_argument("--points", nargs="+", default=list(POINTS), choices=list(POINTS))
    ap.add_argument("--repeats", type=int, default=3)
    a = ap.parse_args()
    trees = {"baseline": os.path.abspath(a.baseline), "this": REPO}
    print(f"load before: {os.getloadavg()[0]:.2f}", flush=True)
    differ = []
    for point in a.points:
        runs: dict = {k: [] for k in trees}
        seen: dict = {}
        for _ in range(a.repeats):
            for k in trees:
                cpu, code, out, err = cpu_run(trees[k], point)
                runs[k].append(round(cpu, 1))
                seen.setdefault(k, (code, out, err))
        if seen["baseline"] != seen["this"]:
            differ.append(point)
        b, t = (statistics.median(runs[k]) for k in ("baseline", "this"))
        print(f"{point}: exit {seen['this'][0]}; baseline {b:.1f} s, this {t:.1f} s CPU "
              f"(median of {a.repeats}; runs {runs}), ratio {t / b:.3f}; output "
              f"{'DIFFERS' if point in differ else 'identical'}; load {os.getloadavg()[0]:.2f}",
              flush=True)
    if differ:
        raise SystemExit(f"output differs from the baseline: {', '.join(differ)}")


if __name__ == "__main__":
    main()
