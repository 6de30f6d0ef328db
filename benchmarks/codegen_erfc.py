"""The first float64 solve of models whose Gaussian integrands hold ``erfc``, in a fresh process
with a cold code cache: the model file loaded (its derivation), then one
``replica.solve_float64`` call, which generates the float64 code of the map and the Jacobian,
among it the far-tail form of :func:`replica.symbolic.gaussian.scaled_erfc` of every integrand
with an ``erfc`` (the generation is the cost measured; the Newton iterations are fractions of a
second). CPU seconds of each stage, this tree beside a baseline tree (one model at a time,
baseline first), with the number of ``scaled_erfc`` calls, the CPU seconds spent in them, and
the largest relative difference between the two trees' solutions (every reported value).

    python -m benchmarks.codegen_erfc --baseline PATH [--models phase_retrieval,hinge_svm]
                                      [--no-write]

Writes the README section ``codegen_erfc`` (not with ``--no-write``: the table is printed)."""

from __future__ import annotations

import json
import os
import sys

from ._util import baseline_argument, child_json, machine_line, table, write_section

MODELS = {  # example -> the grid of its first float64 solve
    "phase_retrieval": {"alpha": [0.8]},
    "perceptron_teacher": {"alpha": [0.5, 2.0, 5.0]},
    "perceptron_gardner": {"alpha": [0.5, 1.5], "kappa": [0.0, 0.0]},
    "committee_machine": {"alpha": [0.5, 1.5]},
    "glm_bayes_sign": {"alpha": [1.0, 3.0]},
    "logistic_regression": {"alpha": [2.0], "lam": [0.1]},
}

CHILD = """
import json, os, resource, tempfile, time
os.environ["REPLICA_LAMBDIFY_CACHE"] = tempfile.mkdtemp()  # a cold code cache
os.environ["REPLICA_MODEL_LOAD_TIMEOUT"] = "0"
import numpy as np
import replica
from replica.symbolic import gaussian
def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime
spent = [0, 0.0]
plain = gaussian.scaled_erfc
def timed(expr, scale=True, **memo):  # (memo: the code generator's shared rewritings)
    t = cpu()
    try:
        return plain(expr, scale, **memo)
    finally:
        spent[0] += 1
        spent[1] += cpu() - t
gaussian.scaled_erfc = timed
t = cpu()
model = replica.load_model(os.path.join("examples", NAME + ".py"))
load = cpu() - t
t = cpu()
with np.errstate(all="ignore"):
    r = replica.solve_float64(model, strict=False, **{k: np.array(v) for k, v in GRID.items()})
out = {"load_s": load, "solve_s": cpu() - t, "calls": spent[0], "scaled_s": spent[1],
       "status": [str(s) for s in np.ravel(r["status"])],
       "values": {k: np.ravel(np.asarray(v, dtype=float)).tolist() for k, v in r.items()
                  if np.asarray(v).dtype.kind == "f"}}
print(json.dumps(out))
"""


def _largest_difference(old: dict, new: dict) -> float:
    worst = 0.0
    for key, a in old["values"].items():
        for x, y in zip(a, new["values"].get(key, [])):
            if x == y or (x != x and y != y):  # (equal, or both NaN)
                continue
            worst = max(worst, abs(x - y) / max(abs(x), abs(y)) if x == x and y == y
                        else float("inf"))
    return worst


def main():
    base = baseline_argument("codegen_erfc")
    if base is None:
        return
    names = (sys.argv[sys.argv.index("--models") + 1].split(",") if "--models" in sys.argv
             else list(MODELS))
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    load0 = os.getloadavg()[0]
    rows, notes = [], []
    for name in names:
        code = CHILD.replace("NAME", repr(name)).replace("GRID", repr(MODELS[name]))
        old, new = child_json(base, code), child_json(here, code)
        print(name, json.dumps({"baseline": {k: old[k] for k in ("load_s", "solve_s", "calls",
                                                                 "scaled_s", "status")},
                                "this tree": {k: new[k] for k in ("load_s", "solve_s",
                                                                  "calls", "scaled_s",
                                                                  "status")}}), flush=True)
        grid = ", ".join(f"{k} = {v}" for k, v in MODELS[name].items())
        rows.append([f"{name} ({grid})", f"{old['load_s']:.3g}", f"{old['solve_s']:.3g}",
                     f"{new['solve_s']:.3g}", f"{old['solve_s'] / new['solve_s']:.3g}x",
                     f"{new['calls']}: {old['scaled_s']:.3g} -> {new['scaled_s']:.3g}",
                     f"{_largest_difference(old, new):.2g}"])
        if old["status"] != new["status"]:
            notes.append(f"{name}: status baseline {old['status']}, this tree {new['status']}")
    load1 = os.getloadavg()[0]
    text = (f"First float64 solve in a fresh process with a cold code cache, CPU seconds "
            f"({machine_line()}, load {load0:.1f} -> {load1:.1f}); baseline {base}. "
            f"'load': the model file's derivation (the same code in both trees, baseline "
            f"shown); 'solve': the first `replica.solve_float64` (code generation included); "
            f"'scaled_erfc': its calls and the CPU seconds in them; 'max rel. diff.': the "
            f"largest relative difference of any reported value between the trees.\n\n"
            + table(["model (grid)", "load", "solve, baseline", "solve, this tree",
                     "speed-up", "scaled_erfc calls: s", "max rel. diff."], rows)
            + ("\n\nStatus differences: " + "; ".join(notes) if notes else
               "\n\nThe same status at every grid point in both trees.") + "\n")
    print(text)
    if "--no-write" not in sys.argv:
        write_section("codegen_erfc", text)


if __name__ == "__main__":
    main()
