"""The noisy examples' two-dimensional Gaussian integrals (``examples/glm_bayes_relu_noisy.py``,
``examples/phase_retrieval_noisy.py``): one mpmath evaluation of the fixed-point map at
``--dps`` digits (m = 1/2, alpha = 1, sigma = 1/2, after a warm-up evaluation at m = 2/5 that
generates the code and sets the rules' remembered levels, as in a Newton iteration), this tree
beside a baseline tree, each in a fresh process, the trees alternating, CPU seconds of the
evaluation (``time.process_time``), with its work: the inner integrals computed
(``codegen._gauss_mp_error`` calls), the Gauss--Legendre rules evaluated
(``quadrature._Piece._rule`` calls) and the inner noise-plateau exits.

    python -m benchmarks.noisy2d --baseline PATH [--dps 15] [--repeats 3]
                                 [--models relu,abs] [--no-write]

Writes the README section ``noisy2d_map`` (the section ``noisy2d`` is written by hand)."""

from __future__ import annotations

import os
import statistics
import sys

from ._util import baseline_argument, child_json, machine_line, table, write_section

CHILD = """
import json, time, mpmath
from fractions import Fraction
from replica.glm import BayesOptimal, Gaussian, ReLU, AbsoluteValue
from replica.numerics.machine import machine
from replica.numerics.precision import precision
from replica.symbolic import codegen, quadrature
count = {"inner": 0, "rules": 0, "exits": 0}
inner = codegen._gauss_mp_error
def counted_inner(*a, **k):
    count["inner"] += 1
    return inner(*a, **k)
codegen._gauss_mp_error = counted_inner
rule = quadrature._Piece._rule
def counted_rule(self, level):
    count["rules"] += 1
    return rule(self, level)
quadrature._Piece._rule = counted_rule
fused = quadrature.gauss_legendre_fused
def counted_fused(*a, **k):
    try:
        return fused(*a, **k)
    except quadrature.NotResolved as exc:
        if exc.floor is not None and k.get("plateau_exit"):
            count["exits"] += 1
        raise
quadrature.gauss_legendre_fused = counted_fused
channel = {"relu": ReLU("sigma"), "abs": AbsoluteValue("sigma")}["MODEL"]
M = BayesOptimal("bench_noisy2d_MODEL", prior=Gaussian(), channel=channel)
params = M.problem.schema.parse({"alpha": Fraction(1), "sigma": Fraction(1, 2)})
mach = machine(M.problem, M.problem.variant_of(params))
with precision(DPS):
    P = mach.parameter_values_mp(params)
    mach.evaluate("equations", "mp", [mpmath.mpf(2) / 5], P, None)
    for k in count:
        count[k] = 0
    t = time.process_time()
    v = mach.evaluate("equations", "mp", [mpmath.mpf(1) / 2], P, None)
    out = dict(count, cpu=time.process_time() - t, value=mpmath.nstr(v[0], DPS + 5))
print(json.dumps(out))
"""


def _arg(flag, default):
    return sys.argv[sys.argv.index(flag) + 1] if flag in sys.argv else default


def main():
    base = baseline_argument("noisy2d")
    if base is None:
        return
    dps = int(_arg("--dps", "15"))
    repeats = int(_arg("--repeats", "3"))
    models = _arg("--models", "relu,abs").split(",")
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    load0 = os.getloadavg()[0]
    rows = []
    for model in models:
        code = CHILD.replace("DPS", str(dps)).replace("MODEL", model)
        runs = {"baseline": [], "this": []}
        for _ in range(repeats):
            runs["this"].append(child_json(here, code))
            runs["baseline"].append(child_json(base, code))
        for tree in ("baseline", "this"):
            cpu = [r["cpu"] for r in runs[tree]]
            r = runs[tree][0]
            rows.append([model, tree, f"{statistics.median(cpu):.3g} ({min(cpu):.3g})",
                         str(r["inner"]), str(r["rules"]), str(r["exits"]), r["value"]])
            print(rows[-1], flush=True)
    load1 = os.getloadavg()[0]
    text = (f"One mpmath evaluation of the map at {dps} digits, m = 1/2, alpha = 1, sigma = 1/2 "
            f"({machine_line()}, load {load0:.1f} -> {load1:.1f}; baseline {base}; CPU s, "
            f"median (min) of {repeats}, the trees alternating).\n\n"
            + table(["model", "tree", "CPU s", "inner integrals", "rules", "plateau exits",
                     "value"], rows) + "\n")
    print(text)
    if "--no-write" not in sys.argv:
        write_section(f"noisy2d_map_{dps}", text)


if __name__ == "__main__":
    main()
