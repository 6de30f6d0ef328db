"""The numerical replacement of an appendix's step checks, side by side with a baseline tree.

    python -m benchmarks.appendix_checks --baseline PATH [--repeats 3] [--models a,b] [--no-write]

An appendix step whose symbolic check runs past its budget (20 s) is decided by
:func:`replica.derivations.model.numeric_identity` (random rational points, 50 digits; Gaussian
integrals as unknowns, then against a random discrete measure, then by quadrature). This
benchmark calls that numerical replacement of every such step of a model's appendix directly
(as on a machine where each symbolic check overruns), in a fresh process per tree and model, the
trees alternating, fresh code cache each time; CPU seconds (``time.process_time``) of the
numerical checks, minimum and median of ``--repeats``, and whether every step's verdict equals
the baseline's. (The symbolic checks' budget, wall time in a child process, is the same in both
trees and not measured.)

Writes the README section ``slowe``."""

from __future__ import annotations

import os
import statistics
import sys
import tempfile

from ._util import baseline_argument, child_json, machine_line, table, write_section

MODELS = ["logistic_regression", "perceptron_teacher", "lasso"]  # (hinge_svm: none bounded)

CHILD = r"""
import json, time
from replica.modeling import load_model_file
from replica.derivations.model import derivation_for
doc = derivation_for(load_model_file("examples/%s.py"))
out = {}
for step in doc.steps:
    code = getattr(step.check, "__code__", None)
    cells = dict(zip(code.co_freevars, step.check.__closure__ or ())) if code else {}
    if "numeric" not in cells:  # not a bounded check
        continue
    t = time.process_time()
    verdict = bool(cells["numeric"].cell_contents())
    out[step.name] = [verdict, time.process_time() - t]
print(json.dumps(out))
"""


def _one(tree: str, model: str) -> dict:
    with tempfile.TemporaryDirectory() as cache:
        os.environ["REPLICA_LAMBDIFY_CACHE"] = cache
        return child_json(tree, CHILD % model)


def main() -> None:
    baseline = baseline_argument("appendix_checks")
    if baseline is None:
        return
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    repeats = int(sys.argv[sys.argv.index("--repeats") + 1]) if "--repeats" in sys.argv else 3
    models = sys.argv[sys.argv.index("--models") + 1].split(",") if "--models" in sys.argv \
        else MODELS
    load0 = os.getloadavg()[0]
    rows, failures = [], []
    for model in models:
        times = {"base": [], "this": []}
        verdicts = {}
        for _ in range(repeats):
            for side, tree in (("base", baseline), ("this", here)):
                res = _one(tree, model)
                times[side].append(sum(cpu for _, cpu in res.values()))
                verdicts.setdefault(side, {k: v for k, (v, _) in res.items()})
                if {k: v for k, (v, _) in res.items()} != verdicts[side]:
                    failures.append(f"{model} ({side}: verdicts differ between runs)")
        same = verdicts["base"] == verdicts["this"]
        if not same:
            failures.append(model)
        b, t = times["base"], times["this"]
        rows.append([model, len(verdicts["this"]),
                     f"{min(b):.2f} / {statistics.median(b):.2f}",
                     f"{min(t):.2f} / {statistics.median(t):.2f}",
                     f"{statistics.median(b) / max(statistics.median(t), 1e-9):.1f}x",
                     "identical" if same else "DIFFER",
                     ", ".join(k for k, v in verdicts["this"].items() if not v) or "all pass"])
        print(rows[-1], flush=True)
    load1 = os.getloadavg()[0]
    lines = ["## The numerical replacement of appendix step checks (slowe)", "",
             f"`python -m benchmarks.appendix_checks --baseline ../base-9306f51 --repeats "
             f"{repeats}`; {machine_line()}; load average {load0:.1f} -> {load1:.1f}. CPU "
             "seconds of the numerical checks of every bounded step (min / median), fresh "
             "process and code cache per run, trees alternating.", "",
             table(["model", "bounded steps", "baseline (s)", "this (s)", "median ratio",
                    "verdicts", "failing steps"], rows)]
    if "--no-write" not in sys.argv:
        write_section("slowe", "\n".join(lines))
    print("\n".join(lines))
    if failures:
        raise SystemExit(f"verdicts disagree with the baseline: {', '.join(failures)}")


if __name__ == "__main__":
    main()
