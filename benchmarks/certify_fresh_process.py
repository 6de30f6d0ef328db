"""``--certify`` in a fresh process with a warm code cache (issue 26, job certcache): the CPU
time (user + system, of the child process, from ``os.wait4``) of one ``replica solve ...
--certify`` command, per tree, medians of ``--repeats`` runs alternating the trees. Unlike
``benchmarks/certify_tails.py`` (which times certified solves inside one process after an untimed
one), this includes what each process builds before certifying: the ball-arithmetic code of the
equations, the Jacobian and the reported values, and their integrals' growth envelopes, unless
loaded from the code cache.

``python -m benchmarks.certify_fresh_process --baseline PATH [--warm]`` prints a table (each
tree keeps its own cache folder, ``--cache-this``/``--cache-baseline``; ``--warm`` runs each
command once untimed first, so that the cache holds what the tree stores).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

POINTS = {
    "logistic": ["examples/logistic_regression.py", "--alpha", "2", "--lam", "1/10", "--eta", "1"],
    "glm_logistic": ["examples/glm_logistic.py", "--alpha", "2", "--lam", "1/10", "--eta", "1"],
    "teacher": ["examples/perceptron_teacher.py", "--prior", "rademacher", "--alpha", "1"],
}


def cpu_of(tree: str, cache: str, point: str) -> float:
    """CPU seconds (user + system) of one certified solve of ``point`` in a fresh process."""
    model, *rest = POINTS[point]
    cmd = [sys.executable, "-m", "replica", "solve", "--model", os.path.join(tree, model),
           *rest, "--dps", "30", "--certify"]
    env = dict(os.environ, PYTHONPATH=tree, REPLICA_LAMBDIFY_CACHE=cache)
    proc = subprocess.Popen(cmd, cwd=tree, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL)
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0 or b"certified" not in out:
        raise SystemExit(f"{point} in {tree}: exit {os.waitstatus_to_exitcode(status)}")
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--baseline", required=True)
    ap.add_argument("--points", nargs="+", default=list(POINTS), choices=list(POINTS))
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--cache-this")
    ap.add_argument("--cache-baseline")
    ap.add_argument("--warm", action="store_true")
    a = ap.parse_args()
    trees = {"baseline": os.path.abspath(a.baseline), "this": REPO}
    caches = {"baseline": a.cache_baseline or tempfile.mkdtemp(prefix="fresh-base-"),
              "this": a.cache_this or tempfile.mkdtemp(prefix="fresh-this-")}
    print(f"load before: {os.getloadavg()[0]:.2f}", flush=True)
    for point in a.points:
        if a.warm:
            for k in trees:
                cpu_of(trees[k], caches[k], point)
        runs: dict = {k: [] for k in trees}
        for _ in range(a.repeats):
            for k in trees:
                runs[k].append(cpu_of(trees[k], caches[k], point))
        b, t = (statistics.median(runs[k]) for k in ("baseline", "this"))
        print(f"{point}: baseline {b:.1f} s, this {t:.1f} s CPU (median of {a.repeats}; "
              f"runs {runs}), ratio {t / b:.2f}; load {os.getloadavg()[0]:.2f}", flush=True)


if __name__ == "__main__":
    main()
