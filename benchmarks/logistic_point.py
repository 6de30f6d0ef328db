"""A 30-digit point of logistic regression and of the other quadrature examples (issue 26's
"a 30-digit point of a quadrature model costs <= 1 s"), the ``replica solve`` command of each in
a fresh process with a warm code cache (and, ``lowrank``, a built-in model's 15-digit point:
the command's start-up on the path that imports no SymPy), this tree beside a baseline tree
(and, with ``--start PATH``, a third: the start commit of a branch); plus where the logistic
point's time goes, counted and timed inside one process of this tree.

    python -m benchmarks.logistic_point --baseline PATH [--start PATH] [--repeats 5]
                                        [--commands logistic,lasso,...] [--no-write]
                                        [--collector]

Each tree gets its own code cache, warmed by one run that is not timed (the first run pays for
code generation, which is not what this measures), and its own bytecode cache
(``PYTHONPYCACHEPREFIX``; this machine's environment sets ``PYTHONDONTWRITEBYTECODE``, which
would make every run compile the package's modules again, about 0.1 s that an installed package
does not pay). CPU seconds (user + system) of the child process, median of ``--repeats`` runs,
the trees alternating; the printed output of every run is compared character for character
(every reported value to its printed digits, ``digits``, the way they were guaranteed, the
status).

The breakdown (this tree only, one process, warm code cache): the Gaussian-integral
evaluations of the solve (``_gauss_mp_rule`` calls, by working precision), the quadrature
nodes they evaluate, the Gauss--Legendre rules built (cache misses of
:func:`replica.symbolic.quadrature.legendre_rule`'s cache, by ``(n, precision)``) and used,
the implicit roots solved at ball midpoints (and those found in the per-evaluation memo), and
the CPU time inside the quadrature against the whole ``replica.cli.main`` call.

Per command and tree the same counts, summed (evaluations, nodes, roots solved), are the
table's 'work' column: trees that do the same work and differ in time differ by the machine's
noise (a machine shared with other jobs), not by the code.

``--collector``: instead, the CPU seconds Python's cyclic garbage collector spends in the first
command's process (the ``replica`` command's own entry point, :func:`replica.cli.console`, whose
start-up may pause it), timed by a ``gc.callbacks`` hook installed before the command starts,
median of ``--repeats`` processes per tree, the trees alternating; nothing is written.

Writes the README section ``logistic_point``."""

from __future__ import annotations

import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile

from ._util import machine_line, table, write_section

COMMANDS = {
    "logistic": "--model examples/logistic_regression.py --alpha 2 --lam 1/10 --eta 1 --dps 30",
    "teacher_gaussian": "--model examples/perceptron_teacher.py --alpha 1 --prior gaussian "
                        "--dps 30",
    "teacher_rademacher": "--model examples/perceptron_teacher.py --alpha 1 --prior rademacher "
                          "--dps 30",
    "lasso": "--model examples/lasso.py --alpha 1/2 --eps 1/10 --lam 1/2 --sigma 1/10 --dps 30",
    "hinge_svm": "--model examples/hinge_svm.py --alpha 2 --dps 30",
    "capacity": "--model examples/perceptron_capacity.py --kappa 0 --dps 40",
    "glm_logistic": "--model examples/glm_logistic.py --alpha 2 --lam 1/10 --eta 9/10 --dps 30",
    # a built-in model's 15-digit point: the command's start-up without SymPy (for reference)
    "lowrank": "--model lowrank --sigma 1/10 --test outside:1/3 --alpha 2 --kappa 1/2 "
               "--rho 1/100 --tau 2 --lam 1/10 --dps 15",
}


def _arg(flag, default):
    return sys.argv[sys.argv.index(flag) + 1] if flag in sys.argv else default


def _env(tree: str, cache: str, pyc: str) -> dict:
    env = dict(os.environ, PYTHONPATH=tree, REPLICA_LAMBDIFY_CACHE=cache,
               PYTHONPYCACHEPREFIX=pyc, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1",
               MKL_NUM_THREADS="1")
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def _run(tree: str, cache: str, pyc: str, command: str):
    """``(cpu seconds, stdout, exit status)`` of ``replica solve COMMAND`` in ``tree``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run([sys.executable, "-m", "replica", "solve", *command.split()],
                          cwd=tree, env=_env(tree, cache, pyc), capture_output=True, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, proc.stdout, proc.returncode


BREAKDOWN = r"""
import collections, io, json, sys, time
import mpmath
import replica.symbolic.codegen as cg
import replica.symbolic.implicit as im
import replica.symbolic.quadrature as qd
from replica.cli import main
calls = collections.Counter(); nodes = collections.Counter(); seconds = collections.Counter()
rules = collections.Counter()
roots = {"solved": 0, "memo": 0}
current = [None]  # the working precision of the evaluation (the rules run 20 bits above it)
rule_sums = cg._gauss_mp_rule
def counted(*a, **k):
    prec = current[0] = mpmath.mp.prec
    t = time.process_time()
    try:
        return rule_sums(*a, **k)
    finally:
        seconds[prec] += time.process_time() - t
        calls[prec] += 1
cg._gauss_mp_rule = counted
piece_rule = qd._Piece._rule
def counted_rule(self, level):
    nodes[current[0]] += qd.level_nodes(level)
    rules["used"] += 1
    return piece_rule(self, level)
qd._Piece._rule = counted_rule
polish = im._Numeric._ball_polish
def counted_polish(self, args):
    roots["solved"] += 1
    return polish(self, args)
im._Numeric._ball_polish = counted_polish
midpoint = im._Numeric.midpoint
def counted_midpoint(self, *args):
    roots["memo"] += 1
    return midpoint(self, *args)
im._Numeric.midpoint = counted_midpoint
out, sys.stdout = sys.stdout, io.StringIO()
t = time.process_time()
main(["solve", *@COMMAND@.split()])
total = time.process_time() - t
sys.stdout = out
info = qd._rule.cache_info()
print(json.dumps({"calls": calls, "nodes": nodes, "seconds": seconds, "total": total,
                  "rules_built": info.misses, "rules_used": rules["used"],
                  "roots_solved": roots["solved"],
                  "roots_memo": roots["memo"] - roots["solved"]}))
"""


COLLECTOR = r"""
import atexit, gc, json, sys, time
spent = [0.0, 0, 0.0]  # CPU seconds in collections, collections, the current one's start
def timed(phase, info):
    if phase == "start":
        spent[2] = time.process_time()
    else:
        spent[0] += time.process_time() - spent[2]
        spent[1] += 1
gc.callbacks.append(timed)
atexit.register(lambda: sys.stderr.write("COLLECTOR " + json.dumps(spent[:2]) + "\n"))
from replica.cli import console
console()
"""


def collector(tree: str, cache: str, pyc: str, command: str) -> tuple:
    """``(CPU seconds in collections, collections, CPU seconds of the process)`` of
    ``replica COMMAND`` run through :func:`replica.cli.console` in ``tree``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run([sys.executable, "-c", COLLECTOR, "solve", *command.split()],
                          cwd=tree, env=_env(tree, cache, pyc), capture_output=True, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    line = [t for t in proc.stderr.splitlines() if t.startswith("COLLECTOR ")][-1]
    seconds, count = json.loads(line.split(" ", 1)[1])
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return seconds, count, cpu


def collector_main(trees: dict, dirs: dict, name: str, repeats: int) -> None:
    command = COMMANDS[name]
    got = {side: [] for side in trees}
    for side, tree in trees.items():  # the warm-up: code generation, not counted
        _run(tree, *dirs[side], command)
    for _ in range(repeats):
        for side, tree in trees.items():
            got[side].append(collector(tree, *dirs[side], command))
    for side, runs in got.items():
        med = [statistics.median(r[i] for r in runs) for i in range(3)]
        print(f"{side}: the collector {med[0]:.3f} s CPU in {med[1]:.0f} collections, the "
              f"process {med[2]:.2f} s CPU (medians of {repeats}; `replica solve {command}`)")


def breakdown(tree: str, cache: str, pyc: str, name: str = "logistic") -> dict:
    code = BREAKDOWN.replace("@COMMAND@", repr(COMMANDS[name]))
    proc = subprocess.run([sys.executable, "-c", code], cwd=tree, env=_env(tree, cache, pyc),
                          capture_output=True, text=True, check=True)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main():
    if "--baseline" not in sys.argv:
        print("usage: python -m benchmarks.logistic_point --baseline PATH [--start PATH] "
              "[--repeats 5] [--commands NAMES] [--no-write]")
        return
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    trees = {"baseline": os.path.abspath(_arg("--baseline", ""))}
    if "--start" in sys.argv:
        trees["start"] = os.path.abspath(_arg("--start", ""))
    trees["this"] = here
    repeats = int(_arg("--repeats", "5"))
    names = _arg("--commands", ",".join(COMMANDS)).split(",")
    scratch = tempfile.mkdtemp(prefix="logistic-point-")
    dirs = {side: (os.path.join(scratch, side, "code"), os.path.join(scratch, side, "pyc"))
            for side in trees}
    for c, p in dirs.values():
        os.makedirs(c)
        os.makedirs(p)
    if "--collector" in sys.argv:
        try:
            collector_main(trees, dirs, names[0], repeats)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        return
    load0 = os.getloadavg()[0]
    rows, notes = [], []
    try:
        for name in names:
            command = COMMANDS[name]
            outputs, times = {}, {side: [] for side in trees}
            for side, tree in trees.items():  # the warm-up: code generation, not timed
                _, outputs[side], rc = _run(tree, *dirs[side], command)
                if rc != 0:
                    notes.append(f"{name}: exit {rc} in {side}")
            same = True
            for _ in range(repeats):
                for side, tree in trees.items():
                    cpu, out, rc = _run(tree, *dirs[side], command)
                    times[side].append(cpu)
                    same = same and out == outputs["baseline"] and rc == 0
            med = {side: statistics.median(ts) for side, ts in times.items()}
            row = [f"`replica solve {command}`"]
            row += [f"{med[side]:.2f}" for side in trees]
            row += [f"{med['baseline'] / med[side]:.2f}x" for side in trees if side != "baseline"]
            row.append("identical" if same else "DIFFERENT")
            # the work done, counted (the same in every run of a tree: a timing difference
            # between trees that do the same work is the machine's, not the code's)
            work = {side: breakdown(tree, *dirs[side], name) for side, tree in trees.items()}
            row.append(" / ".join(
                f"{sum(w['calls'].values())}, {sum(w['nodes'].values())}, {w['roots_solved']}"
                for w in work.values()))
            print(json.dumps(row), flush=True)
            rows.append(row)
        br = breakdown(here, *dirs["this"])
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    load1 = os.getloadavg()[0]
    header = ["command"] + [f"{side} (s)" for side in trees]
    header += [f"baseline / {side}" for side in trees if side != "baseline"] + ["output"]
    header.append("work (" + " / ".join(trees) + ")")
    precs = sorted(br["calls"], key=int)
    quad = sum(br["seconds"].values())
    lines = [f"- working precision {p} bits (the rules at {int(p) + 20}): {br['calls'][p]} "
             f"evaluations of Gaussian integrals, {br['nodes'][p]} quadrature nodes, "
             f"{br['seconds'][p]:.2f} s" for p in precs]
    text = (
        "A 30-digit point of the quadrature examples (issue 26: <= 1 s), `replica solve` in a "
        f"fresh process with a warm code cache, CPU seconds (user + system), median of {repeats} "
        f"runs per tree, the trees alternating ({machine_line()}, load average {load0:.1f} -> "
        f"{load1:.1f}: the machine shared with other jobs); "
        + ", ".join(f"{side} `{tree}`" for side, tree in trees.items())
        + ". Bytecode cached per tree (an installed package does not compile its modules at "
        "each start). 'output': every run's printed output, character for character, the same "
        "as the baseline's. 'work': per tree, counted in one more run (warm cache), the "
        "evaluations of Gaussian integrals, their quadrature nodes and the implicit roots "
        "polished at ball midpoints (not found in the memo).\n\n" + table(header, rows)
        + "\n\nWhere the logistic point's time goes (this tree, one process, warm code cache; "
        f"CPU {br['total']:.2f} s in `replica.cli.main`, of which {quad:.2f} s in the "
        "Gaussian integrals' quadrature, the rest loading SymPy, the model file and the "
        "generated code, Newton's linear algebra and the report):\n\n" + "\n".join(lines)
        + f"\n- Gauss--Legendre rules: {br['rules_built']} built (one per (nodes, precision),"
        f" cached), {br['rules_used']} used; implicit roots at ball midpoints: "
        f"{br['roots_solved']} solved, {br['roots_memo']} found in the memo (the integrals of "
        "one evaluation share their nodes)\n"
        + ("\n" + "; ".join(notes) + "\n" if notes else ""))
    print(text)
    if "--no-write" not in sys.argv:
        write_section("logistic_point", text)


if __name__ == "__main__":
    main()
