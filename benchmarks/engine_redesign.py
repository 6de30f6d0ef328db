"""Engine redesign: the solver paths before and after, side by side, as ratios.

The baseline is a commit of this repository from before the engine redesign (default
``c7787f4``); it is checked out into a temporary ``git worktree`` (removed at the end, also on
error). Every probe runs in a fresh subprocess of the same interpreter, with ``cwd`` and
``PYTHONPATH`` set to the tree under test (the baseline worktree or the working tree, so
``import replica`` resolves to that tree's code; each tree's ``replica.__file__`` is checked once)
and ``OPENBLAS_NUM_THREADS=OMP_NUM_THREADS=1``. The runs are interleaved (baseline, current,
baseline, current, ...), ``--repeats`` each, and the medians are compared.

A probe subprocess imports ``replica``, makes one untimed warm-up call (imports done, the
generated-code cache in ``~/.cache/replica/lambdify`` warm), then times ``K`` calls with
``time.perf_counter`` and prints the per-call median and the computed values as JSON. The
command-line probes time the whole process instead (after one untimed run per tree). Each probe
also records whether both versions give the same values (to 10 significant digits): a speed-up
that computes something else does not count.

The probe scripts work with both APIs: the new one (``replica.solve_float64(model, ...)``,
``replica.analysis.transitions``) and the old one (``replica.models.<model>.solve_float64``,
``replica.transitions``); ``replica.solve(model, dps=, verify=, **params)`` exists in both.

Run ``python -m benchmarks.engine_redesign`` (rewrites its section of ``benchmarks/README.md``);
``--quick`` (2 repeats, smaller inner counts) prints the table only; ``--baseline REF`` picks
another baseline.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time

try:
    from ._util import machine_line, table, write_section
except ImportError:  # run as a script
    from _util import machine_line, table, write_section  # type: ignore

NAME = "engine_redesign"
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_BASELINE = "c7787f4"
SIGNIFICANT = 10  # digits to which the two versions' values must agree

# ---------------------------------------------------------------------------------------------
# Probe scripts (run with ``python -c``; ``K`` inner calls from argv[1])
# ---------------------------------------------------------------------------------------------
PRELUDE = """\
import json, statistics, sys, time
import numpy as np
import replica
K = int(sys.argv[1])
NEW = hasattr(replica, "solve_float64")

def mp_values(r, keys):
    return {k: str(r[k]) for k in keys}

def f64_values(out, keys):
    return {k: [repr(float(v)) for v in np.ravel(out[k])] for k in keys}

def covariance(spec, d):
    from replica.spectra import parse_spec
    return parse_spec(spec, d)

def alignment_f64(C_train, C_test, **arrays):
    if NEW:
        return replica.solve_float64("alignment", train=C_train, test=C_test, **arrays)
    from replica.models import alignment
    return alignment.solve_float64(train=C_train, test=C_test, **arrays)

def lowrank_f64(**arrays):
    if NEW:
        return replica.solve_float64("lowrank", **arrays)
    from replica.models import lowrank
    return lowrank.solve_float64(**arrays)

def transitions():
    if NEW:
        from replica.analysis import transitions as T
    else:
        from replica import transitions as T
    return T
"""

TIMER = """\
out = run()  # warm-up: imports, generated-code cache
times = []
for _ in range(K):
    t0 = time.perf_counter()
    out = run()
    times.append(time.perf_counter() - t0)
print(json.dumps({"file": replica.__file__, "seconds": statistics.median(times),
                  "value": value(out)}))
"""

# (label, body defining run() and value(out), K, K in quick mode)
PROBES = [
    ("lowrank golden point 2, 50 digits, verified", """
def run():
    return replica.solve("lowrank", alpha="2.3", tau="1.7", kappa=1, rho="0.2", sigma="0.003",
                         lam=3, dps=50, verify=True)
def value(r):
    return mp_values(r, ["tm", "idg", "odg", "q", "m"])
""", 3, 1),
    ("lowrank README point, 30 digits, verified", """
def run():
    return replica.solve("lowrank", alpha=2, tau="9/4", kappa="3/2", rho="0.9", sigma="0.3",
                         dps=30, verify=True)
def value(r):
    return mp_values(r, ["tm", "idg", "odg", "q", "m"])
""", 5, 2),
    ("alignment piano/piano d=120, 30 digits, verified", """
def run():
    return replica.solve("alignment", d=120, train="piano", test="piano", alpha=2, tau=4,
                         kappa=2, rho="0.01", dps=30, verify=True)
def value(r):
    return mp_values(r, ["e_icl", "e_scalar", "e_misalign", "e_idg", "M"])
""", 3, 1),
    ("alignment piano/spike:1 d=120, 30 digits, verified", """
def run():
    return replica.solve("alignment", d=120, train="piano", test="spike:1", alpha=2,
                         tau="1/2", kappa="1/2", rho="0.01", dps=30, verify=True)
def value(r):
    return mp_values(r, ["e_icl", "e_scalar", "e_misalign", "e_idg", "M"])
""", 3, 1),
    ("alignment float64, one point (piano/piano d=120)", """
C = covariance("piano", 120)
def run():
    return alignment_f64(C, C, alpha=2.0, tau=4.0, kappa=2.0, rho=0.01)
def value(out):
    return f64_values(out, ["e_icl", "e_idg", "M"])
""", 200, 50),
    ("alignment float64, 30-point kappa curve", """
C = covariance("piano", 120)
KAPPA = np.linspace(0.2, 3, 30)
def run():
    return alignment_f64(C, C, alpha=2.0, tau=4.0, kappa=KAPPA, rho=0.01)
def value(out):
    return f64_values(out, ["e_icl", "e_idg", "M"])
""", 50, 15),
    ("isotropic closed form, 30 digits, verified", """
def run():
    return replica.solve("isotropic", alpha=2, tau="1/2", kappa="1/2", rho="0.01", dps=30,
                         verify=True)
def value(r):
    return mp_values(r, ["e_icl"])
""", 50, 15),
    ("isotropic ridge lam=0.001, 30 digits, verified", """
def run():
    return replica.solve("isotropic", alpha=10, tau="3/2", kappa=2, rho="0.01", lam="0.001",
                         dps=30, verify=True)
def value(r):
    return mp_values(r, ["e_icl"])
""", 30, 10),
    ("lowrank float64 grid, 10^4 points", """
RHO = np.linspace(0.05, 1, 10000)
def run():
    return lowrank_f64(alpha=2.0, tau=2.25, kappa=0.5, rho=RHO, sigma=0.3)
def value(out):
    return f64_values(out, ["tm", "idg", "odg"])
""", 5, 2),
    ("lowrank_transition kappa=0.4 tau=2.6 sigma=0.01, 50 digits", """
def run():
    return transitions().lowrank_transition(kappa="0.4", tau="2.6", sigma="0.01", dps=50)
def value(t):
    return {t.key: str(t.location.value)}
""", 1, 1),
    ("alignment_transition rank 1/2 tau=2 rho=0.01, 50 digits", """
def run():
    return transitions().alignment_transition(rank_fraction="1/2", tau=2, rho="0.01", dps=50)
def value(t):
    return {t.key: str(t.location.value)}
""", 1, 1),
]

# (label, command-line arguments after ``python -m replica.cli``, path of a value in its JSON)
CLI_PROBES = [
    ("CLI `solve lowrank ... --json` (process wall time)",
     ["solve", "lowrank", "--alpha", "2", "--tau", "9/4", "--kappa", "3/2", "--rho", "0.9",
      "--sigma", "0.3", "--json"], ("errors", "tm")),
    ("CLI `--help` (process wall time)", ["--help"], None),
]


# ---------------------------------------------------------------------------------------------
# Running
# ---------------------------------------------------------------------------------------------
def tree_env(tree):
    env = dict(os.environ)
    env["PYTHONPATH"] = tree
    env["OPENBLAS_NUM_THREADS"] = "1"
    env["OMP_NUM_THREADS"] = "1"
    env["MKL_NUM_THREADS"] = "1"
    return env


def run_probe(tree, body, k):
    """One probe subprocess in ``tree``: its JSON (``file``, ``seconds``, ``value``)."""
    script = PRELUDE + textwrap.dedent(body) + TIMER
    proc = subprocess.run([sys.executable, "-c", script, str(k)], cwd=tree, env=tree_env(tree),
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"probe failed in {tree}:\n{proc.stderr.strip()[-2000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def run_cli(tree, args):
    """Wall time of one ``python -m replica.cli ARGS`` process in ``tree``, and its stdout."""
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "replica.cli", *args], cwd=tree,
                          env=tree_env(tree), capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise RuntimeError(f"`replica {' '.join(args)}` failed in {tree} (exit "
                           f"{proc.returncode}):\n{proc.stderr.strip()[-2000:]}")
    return wall, proc.stdout


def check_import(tree):
    """``replica.__file__`` in a subprocess for ``tree``; it must lie inside the tree."""
    proc = subprocess.run([sys.executable, "-c", "import replica; print(replica.__file__)"],
                          cwd=tree, env=tree_env(tree), capture_output=True, text=True,
                          check=True)
    path = os.path.realpath(proc.stdout.strip())
    root = os.path.realpath(tree)
    assert os.path.commonpath([path, root]) == root, f"replica from {path}, not from {root}"
    return path


def same_value(a, b, digits=SIGNIFICANT):
    """Whether two probe values (dicts of decimal strings or lists of them) agree to ``digits``
    significant digits (NaN matches NaN)."""
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, dict):
        return (isinstance(b, dict) and a.keys() == b.keys()
                and all(same_value(a[k], b[k], digits) for k in a))
    if isinstance(a, list):
        return (isinstance(b, list) and len(a) == len(b)
                and all(same_value(x, y, digits) for x, y in zip(a, b)))
    x, y = float(a), float(b)
    if math.isnan(x) or math.isnan(y):
        return math.isnan(x) and math.isnan(y)
    return math.isclose(x, y, rel_tol=10.0 ** -digits, abs_tol=1e-300)


def cli_value(stdout, path):
    if path is None:
        return None
    data = json.loads(stdout)
    for key in path:
        data = data[key]
    return {".".join(path): data}


def interleave(trees, repeats, one):
    """``one(tree) -> (seconds, value)`` run b, c, b, c, ... ``repeats`` times each: the median
    seconds per tree and the values of the last run per tree."""
    times = {t: [] for t in trees}
    values = {}
    for _ in range(repeats):
        for t in trees:
            s, v = one(t)
            times[t].append(s)
            values[t] = v
    return {t: statistics.median(times[t]) for t in trees}, values


def measure(base, cur, repeats, quick, only=None, log=print):
    """Rows ``(label, baseline s, current s, ratio, same)`` for every probe."""
    rows = []
    trees = (base, cur)
    for label, body, k, k_quick in PROBES:
        if only and only not in label:
            continue
        k = k_quick if quick else k
        med, vals = interleave(trees, repeats, lambda t: (lambda j: (j["seconds"], j["value"]))(
            run_probe(t, body, k)))
        rows.append((label, med[base], med[cur], med[cur] / med[base],
                     same_value(vals[base], vals[cur])))
        log(f"  {label}: {med[base]:.4g} s -> {med[cur]:.4g} s ({med[cur] / med[base]:.2f}x)",
            flush=True)
    for label, args, path in CLI_PROBES:
        if only and only not in label:
            continue
        for t in trees:  # untimed: the code cache warm
            run_cli(t, args)
        med, outs = interleave(trees, repeats, lambda t: run_cli(t, args))
        rows.append((label, med[base], med[cur], med[cur] / med[base],
                     same_value(cli_value(outs[base], path), cli_value(outs[cur], path))))
        log(f"  {label}: {med[base]:.4g} s -> {med[cur]:.4g} s ({med[cur] / med[base]:.2f}x)",
            flush=True)
    return rows


# ---------------------------------------------------------------------------------------------
# Report
# ---------------------------------------------------------------------------------------------
def fmt_seconds(s):
    if s >= 1:
        return f"{s:.2f} s"
    if s >= 1e-3:
        return f"{s * 1e3:.3g} ms"
    return f"{s * 1e6:.3g} µs"


def fmt_ratio(r):
    if r < 1:
        return f"{r:.2f} ({1 / r:.1f}x faster)"
    return f"{r:.2f} ({r:.1f}x slower)" if r > 1 else "1.00"


def markdown(rows, baseline, commit, repeats):
    header = ["probe", f"baseline `{baseline}`", "current", "ratio current/baseline",
              "same value"]
    body = [(label, fmt_seconds(b), fmt_seconds(c), fmt_ratio(r),
             "yes" if same else "**no**") for label, b, c, r, same in rows]
    faster = [r for r in rows if r[3] < 1]
    slower = [r for r in rows if r[3] > 1]
    differ = [r for r in rows if not r[4]]
    if slower:
        worst = max(slower, key=lambda r: r[3])
        largest = f"largest slowdown {worst[3]:.2f}x ({worst[0]})"
    else:
        largest = "no slowdown"
    summary = (f"{len(faster)} of {len(rows)} probes faster, {len(slower)} slower; {largest}; "
               + (f"{len(differ)} with different values." if differ
                  else "every value agrees to " f"{SIGNIFICANT} significant digits."))
    return "\n".join([
        "## Engine redesign: before/after, side by side",
        "",
        machine_line(),
        "",
        f"Baseline commit `{baseline}` ({commit[:10]}, a temporary git worktree) against the "
        f"working tree: each probe in its own subprocess, baseline and current runs interleaved, "
        f"medians of {repeats} runs each (each run the median of its inner timed calls after one "
        f"warm-up call; the CLI rows time the whole process), one BLAS thread.",
        "",
        table(header, body),
        "",
        summary,
    ])


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m benchmarks.engine_redesign",
                                 description=__doc__.splitlines()[0])
    ap.add_argument("--baseline", default=DEFAULT_BASELINE, metavar="REF",
                    help=f"git ref of the baseline (default {DEFAULT_BASELINE})")
    ap.add_argument("--repeats", type=int, default=7, metavar="N",
                    help="interleaved runs per tree and probe (default 7)")
    ap.add_argument("--quick", action="store_true",
                    help="2 repeats, smaller inner counts; print the table, do not write README")
    ap.add_argument("--only", metavar="TEXT",
                    help="only the probes whose label contains TEXT (does not write README)")
    args = ap.parse_args(sys.argv[1:] if argv is None else argv)
    repeats = 2 if args.quick else args.repeats

    commit = subprocess.run(["git", "-C", REPO, "rev-parse", "--verify",
                             f"{args.baseline}^{{commit}}"], capture_output=True, text=True,
                            check=True).stdout.strip()
    tmp = tempfile.mkdtemp(prefix="replica-baseline-")
    worktree = os.path.join(tmp, "tree")
    subprocess.run(["git", "-C", REPO, "worktree", "add", "--detach", worktree, commit],
                   check=True, capture_output=True, text=True)
    try:
        for tree in (worktree, REPO):
            print(f"replica from {check_import(tree)}", flush=True)
        rows = measure(worktree, REPO, repeats, args.quick, args.only)
    finally:
        subprocess.run(["git", "-C", REPO, "worktree", "remove", "--force", worktree],
                       capture_output=True, text=True)
        shutil.rmtree(tmp, ignore_errors=True)

    md = markdown(rows, args.baseline, commit, repeats)
    print(md)
    if not args.quick and not args.only:
        write_section(NAME, md)
    return rows


if __name__ == "__main__":
    main()
