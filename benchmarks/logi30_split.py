"""Where the CPU time of a 30-digit point of a quadrature model goes (issue 26: <= 1 s), and the
points side by side with a baseline tree.

    python -m benchmarks.logi30_split --baseline PATH [--repeats 7] [--no-write]

The split: ``replica solve`` of the logistic point (:data:`benchmarks.logistic_point.COMMANDS`)
in one fresh process of this tree, warm code cache (two untimed runs first: the code generated,
then the quadrature levels stored), bytecode cached (``PYTHONPYCACHEPREFIX``, as an installed
package has it), CPU seconds by ``time.process_time`` (which counts from the process's start)
at the boundaries of: ``import replica.cli``, the model file (``route_model_file``: the file's
``import sympy`` and its declarations), the float64 start, the Gaussian integrals' quadrature
by working precision (``_gauss_mp_rule``), the rest of the two ``solve_mp_once`` calls, the rest
of ``main``; the minimum of ``--repeats`` processes per part.

Side by side: each point's ``replica solve`` in fresh processes, the trees alternating, CPU
seconds (user + system) of the child, minimum and median of ``--repeats``, and whether every
run printed the same bytes as the baseline's first warm run.

Writes the README section ``logi30``."""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

from ._util import machine_line, table, write_section
from .logistic_point import COMMANDS, _env, _run

POINTS = ["logistic", "hinge_svm", "teacher_rademacher", "teacher_gaussian", "lasso"]

SPLIT = r"""
import io, json, sys, time
T = time.process_time
t0 = T()
import replica.cli
t1 = T()
import mpmath
import replica.commands.common as common
import replica.numerics.driver as driver
import replica.numerics.machine as machine
import replica.symbolic.codegen as codegen
parts = {}
def timed(owner, name, key):
    orig = getattr(owner, name)
    def wrapper(*a, **k):
        label = key() if callable(key) else key
        t = T()
        try:
            return orig(*a, **k)
        finally:
            parts[label] = parts.get(label, 0.0) + T() - t
    setattr(owner, name, wrapper)
timed(replica.cli, "route_model_file", "model")
timed(driver, "float64_start", "start")
timed(machine.Machine, "solve_mp_once", "solve")
timed(codegen, "_gauss_mp_rule", lambda: f"quad{mpmath.mp.prec}")
out, sys.stdout = sys.stdout, io.StringIO()
replica.cli.main(["solve", *@COMMAND@.split()])
sys.stdout = out
t2 = T()
print(json.dumps({"t0": t0, "t1": t1, "t2": t2, **parts}))
"""


def split(tree: str, cache: str, pyc: str, command: str) -> dict:
    code = SPLIT.replace("@COMMAND@", repr(command))
    proc = subprocess.run([sys.executable, "-c", code], cwd=tree, env=_env(tree, cache, pyc),
                          capture_output=True, text=True, check=True)
    raw = json.loads(proc.stdout.strip().splitlines()[-1])
    quad = {k: v for k, v in raw.items() if k.startswith("quad")}
    out = {"interpreter and site": raw["t0"],
           "import replica.cli": raw["t1"] - raw["t0"],
           "the model file (its import sympy, python-flint included; its declarations)":
               raw["model"], "float64 start": raw["start"]}
    for k in sorted(quad, key=lambda k: int(k[4:])):
        out[f"quadrature at {k[4:]} bits"] = quad[k]
    out["solve_mp_once outside the quadrature (Newton's algebra, cached code)"] = (
        raw["solve"] - sum(quad.values()))
    rest = "the rest: the solve path's imports (NumPy, mpmath, numerics), parser, printing"
    out[rest] = raw["t2"] - raw["t1"] - raw["model"] - raw["start"] - raw["solve"]
    out["whole process (sum)"] = raw["t2"]
    return out


def main():
    if "--baseline" not in sys.argv:
        print(__doc__.split("\n\n")[1])
        return
    baseline = os.path.abspath(sys.argv[sys.argv.index("--baseline") + 1])
    repeats = int(sys.argv[sys.argv.index("--repeats") + 1]) if "--repeats" in sys.argv else 7
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    trees = {"baseline": baseline, "this": here}
    scratch = tempfile.mkdtemp(prefix="logi30-")
    dirs = {}
    for side in trees:
        dirs[side] = (os.path.join(scratch, side, "code"), os.path.join(scratch, side, "pyc"))
        for d in dirs[side]:
            os.makedirs(d)
    load0 = os.getloadavg()[0]
    rows = []
    try:
        for name in POINTS:
            command = COMMANDS[name]
            first = {}
            for side, tree in trees.items():  # untimed: code generation, then levels stored
                _run(tree, *dirs[side], command)
                _, first[side], _ = _run(tree, *dirs[side], command)
            times = {side: [] for side in trees}
            same = first["this"] == first["baseline"]
            for _ in range(repeats):
                for side, tree in trees.items():
                    cpu, out, rc = _run(tree, *dirs[side], command)
                    times[side].append(cpu)
                    same = same and out == first["baseline"] and rc == 0
            row = [f"`replica solve {command}`"]
            row += [f"{min(times[s]):.2f} / {statistics.median(times[s]):.2f}" for s in trees]
            row.append("identical" if same else "DIFFERENT")
            print(json.dumps(row), flush=True)
            rows.append(row)
        runs = [split(here, *dirs["this"], COMMANDS["logistic"]) for _ in range(repeats)]
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    load1 = os.getloadavg()[0]
    parts = [[k, f"{min(r[k] for r in runs):.3f}"] for k in runs[0]]
    text = (
        "## logi30\n\n"
        f"({machine_line()}; load average {load0:.1f} -> {load1:.1f}, a machine shared with "
        f"other jobs; `python -m benchmarks.logi30_split --baseline {baseline} --repeats "
        f"{repeats}`.) Warm code cache, bytecode cached. Side by side, CPU seconds (user + "
        f"system) of a fresh process, min / median of {repeats}, the trees alternating:\n\n"
        + table(["command", "baseline (s)", "this tree (s)", "output"], rows)
        + f"\n\nWhere the logistic point's CPU goes (this tree, one process per run, min of "
        f"{repeats} per part):\n\n" + table(["part", "CPU s"], parts) + "\n")
    print(text)
    if "--no-write" not in sys.argv:
        write_section("logi30", text)


if __name__ == "__main__":
    main()
