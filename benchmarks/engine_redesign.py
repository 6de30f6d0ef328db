"""The engine redesign, before and after: the same solver paths timed side by side.

A baseline commit of this repository (the version before models became declarations solved by one
engine) is checked out into a temporary git worktree; each probe runs in a fresh subprocess on the
baseline and on the working tree alternately (one BLAS thread, warm code caches, one untimed
warm-up call), and the medians are compared as ratios. Each probe also prints its value, so the
table shows that both versions compute the same number.

``python -m benchmarks.engine_redesign [--baseline REF] [--repeats N] [--quick]`` (``--quick``
prints the table without writing the README section).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

from ._util import machine_line, table, write_section

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Each probe: (label, setup, call, inner count). ``setup`` and ``call`` run with ``replica``
# imported; the API differences between the versions are bridged by NEW (``replica`` has
# ``solve_float64`` after the redesign).
PRELUDE = """
import json, statistics, sys, time
import numpy as np
import replica
NEW = hasattr(replica, "solve_float64")
def f64(model, **kw):
    if NEW:
        return replica.solve_float64(model, **kw)
    import importlib
    return importlib.import_module("replica.models." + model).solve_float64(**kw)
def transitions():
    try:
        from replica.analysis import transitions as T
    except ImportError:
        from replica import transitions as T
    return T
"""

PROBES = [
    ("lowrank golden 2, 50 digits verified", "",
     "replica.solve('lowrank', alpha='2.3', tau='1.7', kappa='1', rho='0.2', sigma='0.003', "
     "lam='3', dps=50)['tm']", 10),
    ("lowrank README point, 30 digits verified", "",
     "replica.solve('lowrank', alpha=2, tau='9/4', kappa='3/2', rho='0.9', sigma='0.3', "
     "dps=30)['tm']", 10),
    ("alignment piano/piano d=120, 30 digits verified", "",
     "replica.solve('alignment', alpha=2, tau=4, kappa=2, rho='0.01', d=120, train='piano', "
     "test='piano', dps=30)['e_icl']", 5),
    ("alignment piano/spike:1 tau=1/2 d=120, 30 digits verified", "",
     "replica.solve('alignment', alpha=2, tau='1/2', kappa='1/2', rho='0.01', d=120, "
     "train='piano', test='spike:1', dps=30)['e_icl']", 3),
    ("alignment float64, one point, d=120",
     "from replica.spectra import parse_spec; P = parse_spec('piano', 120)",
     "float(f64('alignment', train=P, test=P, alpha=2.0, tau=4.0, kappa=2.0, rho=0.01)"
     "['e_icl'])", 50),
    ("alignment float64, 30-point kappa curve, d=120",
     "from replica.spectra import parse_spec; P = parse_spec('piano', 120); "
     "K = np.linspace(0.2, 3, 30)",
     "float(f64('alignment', train=P, test=P, alpha=2.0, tau=4.0, kappa=K, rho=0.01)"
     "['e_icl'][7])", 20),
    ("isotropic ridgeless, 30 digits verified", "",
     "replica.solve('isotropic', alpha=2, tau='1/2', kappa='1/2', rho='0.01')['e_icl']", 20),
    ("isotropic ridge, 30 digits verified", "",
     "replica.solve('isotropic', alpha=10, tau='3/2', kappa=2, rho='0.01', lam='0.001')"
     "['e_icl']", 10),
    ("lowrank float64 grid, 10^4 points", "R = np.linspace(0.05, 1, 10000)",
     "float(f64('lowrank', alpha=2.0, tau=2.25, kappa=0.5, rho=R, sigma=0.3)['tm'][1234])", 5),
    ("rho_c located at 50 digits", "T = transitions()",
     "T.lowrank_transition(kappa='0.4', tau='2.6', sigma='0.01', dps=50).location.value", 1),
    ("kappa_c located at 50 digits", "T = transitions()",
     "T.alignment_transition(rank_fraction='1/2', tau=2, rho='0.01', dps=50).location.value", 1),
]

CLI_PROBES = [
    ("command line: replica solve lowrank --json (per process)",
     ["solve", "lowrank", "--alpha", "2", "--tau", "9/4", "--kappa", "3/2", "--rho", "0.9",
      "--sigma", "0.3", "--json"]),
    ("command line: replica --help (per process)", ["--help"]),
]


def _env(tree):
    env = dict(os.environ, PYTHONPATH=tree, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    return env


def probe_script(setup, call, inner):
    return (PRELUDE + f"\n{setup}\nvalue = {call}\n"
            f"times = []\nfor _ in range({inner}):\n    t = time.perf_counter()\n"
            f"    value = {call}\n    times.append(time.perf_counter() - t)\n"
            "print(json.dumps({'t': statistics.median(times), 'v': str(value)[:14], "
            "'file': replica.__file__}))\n")


def run_probe(tree, script):
    out = subprocess.run([sys.executable, "-c", script], cwd=tree, env=_env(tree),
                         capture_output=True, text=True, timeout=600)
    if out.returncode != 0:
        raise RuntimeError(out.stderr.strip().splitlines()[-1] if out.stderr else "failed")
    data = json.loads(out.stdout.strip().splitlines()[-1])
    if not os.path.abspath(data["file"]).startswith(os.path.abspath(tree)):
        raise RuntimeError(f"replica imported from {data['file']}, not from {tree}")
    return data


def run_cli(tree, args):
    import time

    t = time.perf_counter()
    subprocess.run([sys.executable, "-m", "replica.cli", *args], cwd=tree, env=_env(tree),
                   capture_output=True, text=True, timeout=600, check=True)
    return time.perf_counter() - t


def fmt(t):
    return f"{t * 1e3:.1f} ms" if t < 1 else f"{t:.2f} s"


def compare(trees, repeats, quick):
    rows = []
    for label, setup, call, inner in PROBES:
        inner = max(1, inner // 5) if quick else inner
        script = probe_script(setup, call, inner)
        res = {k: [] for k in trees}
        vals = {}
        for _ in range(repeats):
            for key, tree in trees.items():
                d = run_probe(tree, script)
                res[key].append(d["t"])
                vals[key] = d["v"]
        rows.append((label, statistics.median(res["baseline"]), statistics.median(res["current"]),
                     vals["baseline"][:12] == vals["current"][:12]))
        print(f"  {label}: {fmt(rows[-1][1])} -> {fmt(rows[-1][2])}", flush=True)
    for label, args in CLI_PROBES:
        res = {k: [] for k in trees}
        for key, tree in trees.items():
            run_cli(tree, args)  # warm the code cache
        for _ in range(repeats):
            for key, tree in trees.items():
                res[key].append(run_cli(tree, args))
        rows.append((label, statistics.median(res["baseline"]), statistics.median(res["current"]),
                     None))
        print(f"  {label}: {fmt(rows[-1][1])} -> {fmt(rows[-1][2])}", flush=True)
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m benchmarks.engine_redesign",
                                 description=__doc__.splitlines()[0])
    ap.add_argument("--baseline", default="c7787f4", help="git revision before the redesign")
    ap.add_argument("--repeats", type=int, default=5, help="runs per probe and version")
    ap.add_argument("--quick", action="store_true", help="2 repeats, print only")
    args = ap.parse_args(argv)
    repeats = 2 if args.quick else args.repeats
    tmp = tempfile.mkdtemp(prefix="replica-baseline-")
    base = os.path.join(tmp, "tree")
    subprocess.run(["git", "-C", REPO, "worktree", "add", "--detach", base, args.baseline],
                   check=True, capture_output=True)
    try:
        rows = compare({"baseline": base, "current": REPO}, repeats, args.quick)
    finally:
        subprocess.run(["git", "-C", REPO, "worktree", "remove", "--force", base],
                       capture_output=True)
    body = [(label, fmt(b), fmt(c), f"{c / b:.2f}", "yes" if same else ("-" if same is None
                                                                         else "NO"))
            for label, b, c, same in rows]
    slower = [(c / b, label) for label, b, c, _ in rows if c > b * 1.05]
    faster = sum(1 for _, b, c, _ in rows if c < b / 1.05)
    summary = (f"{faster} of {len(rows)} probes faster, {len(slower)} slower"
               + (f" (largest slowdown {max(slower)[0]:.2f}x: {max(slower)[1]})" if slower
                  else "") + ".")
    md = "\n".join([
        "## Engine redesign: before/after, side by side", "",
        f"Machine: {machine_line()}. Baseline: commit `{args.baseline}` (before the redesign) in "
        "a temporary worktree, against the working tree; each probe in fresh subprocesses, "
        f"alternating the two versions, median of {repeats} runs (each the median of several "
        "calls after a warm-up), one BLAS thread; ratio = after / before.", "",
        table(["probe", "before", "after", "ratio", "same value"], body), "", summary])
    print(md)
    if not args.quick:
        write_section("engine_redesign", md)


if __name__ == "__main__":
    main()
