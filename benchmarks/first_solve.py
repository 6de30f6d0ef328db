"""A new user's first solve of five example models (issue 26), this tree beside a baseline tree:
each in a fresh process with a cold code cache, the model file loaded (its derivation) and one
solve -- float64 (``replica.solve_float64``) or at 30 digits (``replica.solve(dps=30)``) -- which
generates the code it needs. CPU seconds of the load and of the solve (median over
``--repeats`` runs, baseline and this tree alternating), whether every reported value is the
same (float64: bit for bit, compared as ``float.hex``; 30 digits: the same decimal strings) and
whether the generated code is the same (every file the solve wrote to its code cache, the
Dummy symbols of each generated function renamed in order of first use: their indices count
the Dummies made earlier in the process).

    python -m benchmarks.first_solve --baseline PATH [--models a,b] [--modes f64,mp30]
                                     [--repeats 3] [--section NAME]

Writes the README section ``first_solve``. Phase retrieval's first solve takes minutes in the
baseline, so this benchmark is not in ``python -m benchmarks``'s list."""

from __future__ import annotations

import json
import os
import re
import shutil
import statistics
import sys
import tempfile

from ._util import baseline_argument, child_json, machine_line, table, write_section

MODELS = {  # example -> its parameter point (the commands of docs/examples.md where there is one)
    "perceptron_teacher": {"alpha": "1"},
    "lasso": {"alpha": "1/2", "eps": "1/10", "lam": "1/2", "sigma": "1/10"},
    "committee_machine": {"alpha": "1"},
    "logistic_regression": {"alpha": "2", "lam": "1/10", "eta": "1"},
    "phase_retrieval": {"alpha": "4/5"},
}

CHILD = """
import json, os, resource, time
os.environ["REPLICA_LAMBDIFY_CACHE"] = @CACHE@  # a cold code cache (an empty folder)
os.environ["REPLICA_MODEL_LOAD_TIMEOUT"] = "0"
from fractions import Fraction
import numpy as np
import replica
def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime
t = cpu()
model = replica.load_model(os.path.join("examples", @NAME@ + ".py"))
load = cpu() - t
t = cpu()
if @MODE@ == "f64":
    with np.errstate(all="ignore"):
        r = replica.solve_float64(model, strict=False, **{k: np.array([float(Fraction(v))])
                                                          for k, v in @POINT@.items()})
    values = {k: [float(x).hex() for x in np.ravel(np.asarray(v, dtype=float))]
              for k, v in r.items() if np.asarray(v).dtype.kind == "f"}
    status = [str(s) for s in np.ravel(r["status"])]
else:
    r = replica.solve(model, dps=30, **@POINT@)
    values = {k: str(v) for k, v in r.values().items()}
    status = str(r.status.value)
print(json.dumps({"load_s": load, "solve_s": cpu() - t, "status": status, "values": values}))
"""


def generated_code(folder: str) -> dict:
    """``{file name without its content key: text}`` of a code cache, each generated
    function's Dummy symbols renamed ``_D0, _D1, ...`` in order of first use."""
    out = {}
    for name in sorted(os.listdir(folder)):
        text = open(os.path.join(folder, name), errors="replace").read()
        blocks = []
        for block in re.split(r"(?m)^(?=def )", text):
            names: dict = {}
            blocks.append(re.sub(r"(?<![A-Za-z0-9])_?Dummy_\d+",
                                 lambda m: names.setdefault(m.group(0), f"_D{len(names)}"),
                                 block))
        out[re.sub(r"-[0-9a-f]{24}-", "-KEY-", name)] = "".join(blocks)
    return out


def _run(tree: str, name: str, mode: str):
    cache = tempfile.mkdtemp(prefix="first-solve-")
    try:
        code = (CHILD.replace("@CACHE@", repr(cache)).replace("@NAME@", repr(name))
                .replace("@MODE@", repr(mode)).replace("@POINT@", repr(MODELS[name])))
        out = child_json(tree, code)
        out["code"] = generated_code(cache)
        return out
    finally:
        shutil.rmtree(cache, ignore_errors=True)


def _arg(flag, default):
    return sys.argv[sys.argv.index(flag) + 1] if flag in sys.argv else default


def main():
    base = baseline_argument("first_solve")
    if base is None:
        return
    names = _arg("--models", ",".join(MODELS)).split(",")
    modes = _arg("--modes", "f64,mp30").split(",")
    repeats = int(_arg("--repeats", "1"))
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    here = os.environ.get("FIRST_SOLVE_TREE", here)  # (another checkout to measure)
    load0 = os.getloadavg()[0]
    rows, notes = [], []
    for name in names:
        for mode in modes:
            runs = {"baseline": [], "this": []}
            for _ in range(repeats):
                runs["baseline"].append(_run(base, name, mode))
                runs["this"].append(_run(here, name, mode))
            med = {side: {k: statistics.median(r[k] for r in rs) for k in ("load_s", "solve_s")}
                   for side, rs in runs.items()}
            old, new = runs["baseline"][0], runs["this"][0]
            same_values = all(r["values"] == old["values"] and r["status"] == old["status"]
                              for r in runs["baseline"] + runs["this"])
            same_code = old["code"] == new["code"]
            if not same_code:
                differ = sorted(k for k in set(old["code"]) | set(new["code"])
                                if old["code"].get(k) != new["code"].get(k))
                notes.append(f"{name} {mode}: generated code differs in {differ}")
            total_old = med["baseline"]["load_s"] + med["baseline"]["solve_s"]
            total_new = med["this"]["load_s"] + med["this"]["solve_s"]
            point = ", ".join(f"{k} = {v}" for k, v in MODELS[name].items())
            row = [f"{name} ({point})", mode,
                   f"{med['baseline']['load_s']:.3g} / {med['this']['load_s']:.3g}",
                   f"{med['baseline']['solve_s']:.3g} / {med['this']['solve_s']:.3g}",
                   f"{total_old:.3g} / {total_new:.3g}", f"{total_old / total_new:.2f}x",
                   "identical" if same_values else "DIFFERENT",
                   f"identical ({len(new['code'])} files)" if same_code else "DIFFERENT"]
            print(json.dumps(row), flush=True)
            rows.append(row)
            _write(base, repeats, load0, rows, notes, done=False)
    _write(base, repeats, load0, rows, notes, done=True)


def _write(base, repeats, load0, rows, notes, done):
    load1 = os.getloadavg()[0]
    text = (f"A first solve in a fresh process with a cold code cache, CPU seconds, baseline / "
            f"this tree ({machine_line()}, load average {load0:.1f} -> {load1:.1f}, the "
            f"machine shared with other jobs; median of {repeats} run(s) per tree, the trees "
            f"alternating); baseline {base}. 'load': the model file's derivation; 'solve': "
            f"the first `replica.solve_float64` (f64) or `replica.solve(dps=30)` (mp30), code "
            f"generation included; 'values': every reported value and status of every run, "
            f"bit for bit (float64 as `float.hex`, 30 digits as decimal strings); 'code': the "
            f"files the solve wrote to its code cache, Dummy symbols renamed in order of use."
            f"\n\n" + table(["model (point)", "solve", "load", "solve", "load + solve",
                             "speed-up", "values", "code"], rows)
            + ("\n\n" + "; ".join(notes) if notes else "")
            + ("" if done else "\n\n(written after each row: the rows measured so far)") + "\n")
    if done:
        print(text)
    if "--no-write" not in sys.argv:
        write_section(_arg("--section", "first_solve"), text)


if __name__ == "__main__":
    main()
