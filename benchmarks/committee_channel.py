"""Cost and value of the committee machine's channel term (``examples/committee_machine.py``),
a two-dimensional Gaussian integral, in mpmath at ``--dps`` digits (default 30) at ``q = 3/10``
(and ``--q``): each evaluation in a fresh process (code generation before the clock), CPU
time, the trees alternating, ``--repeats`` times (default 3); prints the medians and the
values to the digits asked for (the same in both trees where the estimate accepted both).

    python -m benchmarks.committee_channel --baseline PATH [--dps 30] [--q 3/10] [--repeats 3]

Prints only (no README section is written)."""

from __future__ import annotations

import os
import statistics
import sys

from ._util import baseline_argument, child_json, machine_line, table

CHILD = """
import json, os, resource, runpy, mpmath, sympy
from fractions import Fraction
from replica.glm.committee import channel_term
from replica.symbolic.codegen import Evaluator
def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime
MODEL = runpy.run_path(os.path.join("examples", "committee_machine.py"))["MODEL"]
q = sympy.Symbol("q", positive=True)
ev = Evaluator([channel_term(MODEL)], [q])
ev.functions("mp")
with mpmath.workdps(DPS):
    Q = mpmath.mpf(Fraction(QV).numerator) / Fraction(QV).denominator
    t = cpu()
    v = ev.mp([Q])[0]
    print(json.dumps({"s": cpu() - t, "value": mpmath.nstr(v, DPS)}))
"""


def main():
    base = baseline_argument("committee_channel")
    if base is None:
        return
    arg = (lambda k, d: sys.argv[sys.argv.index(k) + 1] if k in sys.argv else d)
    dps, qv, repeats = int(arg("--dps", "30")), arg("--q", "3/10"), int(arg("--repeats", "3"))
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    code = CHILD.replace("DPS", str(dps)).replace("QV", repr(qv))
    load0 = os.getloadavg()[0]
    runs = {"base": [], "this": []}
    for _ in range(repeats):
        runs["base"].append(child_json(base, code))
        runs["this"].append(child_json(here, code))
    load1 = os.getloadavg()[0]
    old = statistics.median(r["s"] for r in runs["base"])
    new = statistics.median(r["s"] for r in runs["this"])
    values = {k: sorted({r["value"] for r in v}) for k, v in runs.items()}
    print(f"committee channel term, q = {qv}, {dps} digits, CPU s, median of {repeats} "
          f"({machine_line()}, load {load0:.1f} -> {load1:.1f}); baseline {base}\n")
    print(table(["evaluation", "baseline", "this tree", "baseline / this"],
                [[f"channel term, {dps} digits", f"{old:.3g}", f"{new:.3g}",
                  f"{old / new:.2f}x"]]))
    print(f"\nvalues: baseline {values['base']}, this tree {values['this']}")
    print("all runs (s): baseline", [round(r["s"], 2) for r in runs["base"]],
          "this", [round(r["s"], 2) for r in runs["this"]])


if __name__ == "__main__":
    main()
