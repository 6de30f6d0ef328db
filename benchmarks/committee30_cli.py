"""The committee machine's 30-digit point from the command line, side by side with a baseline
tree (issue 26: "a 30-digit point of a quadrature model costs <= 1 s").

``replica solve --model examples/committee_machine.py --alpha A --dps D --json`` in a fresh
process per run, ``PYTHONPATH`` the tree, each tree with a code cache of its own (a new
temporary ``REPLICA_LAMBDIFY_CACHE``): one cold run per tree (the cache filled), then
``--repeats`` warm runs, the trees alternating. CPU seconds (user + sys of the child, from
``getrusage``), wall seconds, and whether the printed values (``q``, ``qhat``, ``gibbs``,
``free_entropy``), the status and the digits are identical between the trees.

``python -m benchmarks.committee30_cli --baseline DIR [--repeats 3] [--alpha 1] [--dps 30]``
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

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run(tree: str, cache: str, alpha: str, dps: str):
    """``(cpu, wall, json)`` of one solve in a fresh process."""
    env = dict(os.environ, PYTHONPATH=tree, REPLICA_LAMBDIFY_CACHE=cache)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    r = subprocess.run([sys.executable, "-m", "replica", "solve", "--model",
                        "examples/committee_machine.py", "--alpha", alpha, "--dps", dps,
                        "--json"], cwd=tree, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    out = json.loads(r.stdout) if r.returncode == 0 else {"status": f"exit {r.returncode}"}
    return cpu, wall, out


def values(out: dict) -> dict:
    keep = {k: out.get(k) for k in ("status", "digits")}
    for sec in ("order_parameters", "conjugates", "errors", "free_energy"):
        keep.update(out.get(sec, {}))
    return keep


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--baseline", required=True)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--alpha", default="1")
    p.add_argument("--dps", default="30")
    a = p.parse_args(argv)
    trees = {"baseline": os.path.abspath(a.baseline), "this": HERE}
    caches = {k: tempfile.mkdtemp(prefix=f"c30-{k}-") for k in trees}
    print(f"load {open('/proc/loadavg').read().split()[:3]}")
    last = {}
    for rep in range(a.repeats + 1):
        for k, tree in trees.items():
            cpu, wall, out = run(tree, caches[k], a.alpha, a.dps)
            last[k] = values(out)
            print(f"{k:8s} {'cold' if rep == 0 else 'warm'} {cpu:7.2f} s CPU {wall:7.2f} s wall "
                  f"{out.get('status')}", flush=True)
    print(f"load {open('/proc/loadavg').read().split()[:3]}")
    for key in last["this"]:
        print(f"{key:14s} {last['baseline'].get(key)} {last['this'][key]} "
              f"{'same' if last['baseline'].get(key) == last['this'][key] else 'DIFFERENT'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
