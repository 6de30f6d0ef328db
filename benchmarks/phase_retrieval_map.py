"""Cost of Bayes-optimal phase retrieval's channel term (``examples/phase_retrieval.py``,
``AbsoluteValue(0)``): one evaluation of the fixed-point map and of its Jacobian in mpmath at
``--dps`` digits (at m = 0.85, alpha = 1.1, after a warm-up evaluation at m = 0.8 that generates
the code and sets the rule's remembered levels, as in a Newton iteration), and the float64 map;
each tree in a fresh process, CPU time, interleaved with the baseline tree (the baseline's
domain of alpha is (1/2, 1): both trees get alpha = 0.95 there, the map's value differs, its
cost does not depend on alpha).

    python -m benchmarks.phase_retrieval_map --baseline PATH [--dps 15] [--map-only]

(``--map-only``: no Jacobian, for the baseline's 30-digit two-dimensional rule, whose Jacobian
costs minutes.)

Writes the README section ``phase_retrieval_map_DPS``."""

from __future__ import annotations

import os
import sys

from ._util import baseline_argument, child_json, machine_line, table, write_section

CHILD = """
import json, resource, mpmath, numpy as np
from fractions import Fraction
from replica.glm import AbsoluteValue, BayesOptimal, Gaussian
from replica.numerics.machine import machine
from replica.numerics.precision import precision
def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime
M = BayesOptimal("bench_phase_retrieval", prior=Gaussian(), channel=AbsoluteValue(0))
params = M.problem.schema.parse({"alpha": Fraction(19, 20)})
mach = machine(M.problem, M.problem.variant_of(params))
out = {}
with np.errstate(all="ignore"):
    f64 = [np.float64(0.95)]
    mach.evaluate("equations", "numpy", [np.float64(0.8)], f64, None)
    t = cpu()
    v = mach.evaluate("equations", "numpy", [np.float64(0.85)], f64, None)[0]
    out["f64_s"], out["f64_value"] = cpu() - t, float(v)
with precision(DPS):
    P = mach.parameter_values_mp(params)
    for group in GROUPS:
        mach.evaluate(group, "mp", [mpmath.mpf(4) / 5], P, None)
        t = cpu()
        v = mach.evaluate(group, "mp", [mpmath.mpf(17) / 20], P, None)
        out[group + "_s"], out[group] = cpu() - t, mpmath.nstr(v[0], DPS)
print(json.dumps(out))
"""


def main():
    base = baseline_argument("phase_retrieval_map")
    if base is None:
        return
    dps = int(sys.argv[sys.argv.index("--dps") + 1]) if "--dps" in sys.argv else 15
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    groups = ("equations",) if "--map-only" in sys.argv else ("equations", "jacobian")
    code = CHILD.replace("DPS", str(dps)).replace("GROUPS", repr(groups))
    load0 = os.getloadavg()[0]
    new, old = child_json(here, code), child_json(base, code)
    load1 = os.getloadavg()[0]
    rows = []
    for key, what in (("f64_s", "float64 map"), ("equations_s", f"map, {dps} digits"),
                      ("jacobian_s", f"Jacobian, {dps} digits")):
        if key not in new:
            continue
        rows.append([what, f"{old[key]:.3g}", f"{new[key]:.3g}", f"{old[key] / new[key]:.3g}x"])
    text = (f"Bayes-optimal phase retrieval, m = 0.85, alpha = 0.95, CPU seconds per evaluation "
            f"({machine_line()}, load {load0:.1f} -> {load1:.1f}); baseline {base}.\n\n"
            + table(["evaluation", "baseline", "this tree", "speed-up"], rows)
            + f"\n\nfloat64 map: baseline {old['f64_value']}, this tree {new['f64_value']}; "
            f"mpmath map: baseline {old['equations']}, this tree {new['equations']}"
            + (f"; Jacobian: baseline {old['jacobian']}, this tree {new['jacobian']}"
               if "jacobian" in new else "") + ".\n")
    print(text)
    write_section(f"phase_retrieval_map_{dps}", text)


if __name__ == "__main__":
    main()
