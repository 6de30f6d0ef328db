"""Cost of the noisy ReLU Bayes-optimal model's two-dimensional integrals
(``examples/glm_bayes_relu_noisy.py``): one evaluation of the fixed-point map and of its
Jacobian in mpmath at ``--dps`` digits (at m = 1/2, alpha = 1, sigma = 1/2, after a warm-up
evaluation at m = 2/5 that generates the code and sets the rule's remembered levels, as in a
Newton iteration), and the float64 map (tensor product of the fixed rules) with whether it is
finite; each tree in a fresh process, CPU time, interleaved with the baseline tree.

    python -m benchmarks.relu2d_map --baseline PATH [--dps 15]

Writes the README section ``relu2d_map``."""

from __future__ import annotations

import os
import sys

from ._util import baseline_argument, child_json, machine_line, table, write_section

CHILD = """
import json, resource, mpmath, numpy as np
from fractions import Fraction
from replica.glm import BayesOptimal, Gaussian, ReLU
from replica.numerics.machine import machine
from replica.numerics.precision import precision
def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime
M = BayesOptimal("bench_relu_noisy", prior=Gaussian(), channel=ReLU("sigma"))
params = M.problem.schema.parse({"alpha": Fraction(1), "sigma": Fraction(1, 2)})
mach = machine(M.problem, M.problem.variant_of(params))
out = {}
with np.errstate(all="ignore"):
    f64 = [np.float64(1), np.float64(0.5)]
    mach.evaluate("equations", "numpy", [np.float64(0.4)], f64, None)
    t = cpu()
    v = mach.evaluate("equations", "numpy", [np.float64(0.5)], f64, None)[0]
    out["f64_s"], out["f64_value"] = cpu() - t, float(v)
with precision(DPS):
    P = mach.parameter_values_mp(params)
    for group in ("equations", "jacobian"):
        mach.evaluate(group, "mp", [mpmath.mpf(2) / 5], P, None)
        t = cpu()
        v = mach.evaluate(group, "mp", [mpmath.mpf(1) / 2], P, None)
        out[group + "_s"], out[group] = cpu() - t, mpmath.nstr(v[0], DPS)
print(json.dumps(out))
"""


def main():
    base = baseline_argument("relu2d_map")
    if base is None:
        return
    dps = int(sys.argv[sys.argv.index("--dps") + 1]) if "--dps" in sys.argv else 15
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    code = CHILD.replace("DPS", str(dps))
    load0 = os.getloadavg()[0]
    new, old = child_json(here, code), child_json(base, code)
    load1 = os.getloadavg()[0]
    rows = []
    for key, what in (("f64_s", "float64 map"), ("equations_s", f"map, {dps} digits"),
                      ("jacobian_s", f"Jacobian, {dps} digits")):
        rows.append([what, f"{old[key]:.3g}", f"{new[key]:.3g}", f"{old[key] / new[key]:.2f}x"])
    text = (f"Noisy ReLU Bayes-optimal model, m = 1/2, alpha = 1, sigma = 1/2, CPU seconds per "
            f"evaluation ({machine_line()}, load {load0:.1f} -> {load1:.1f}); baseline "
            f"{base}.\n\n" + table(["evaluation", "baseline", "this tree", "speed-up"], rows)
            + f"\n\nfloat64 map: baseline {old['f64_value']}, this tree {new['f64_value']}; "
            f"mpmath map: baseline {old['equations']}, this tree {new['equations']}; "
            f"Jacobian: baseline {old['jacobian']}, this tree {new['jacobian']}.\n")
    print(text)
    write_section(f"relu2d_map_{dps}", text)


if __name__ == "__main__":
    main()
