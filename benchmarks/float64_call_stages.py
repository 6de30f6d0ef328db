"""Where one float64 call's time goes, this tree against another checkout side by side.

``python -m benchmarks.float64_call_stages --baseline PATH`` (e.g. a worktree of the commit before
issue 29): each tree in fresh processes, alternating twice (base, new; new, base), CPU time per
public ``replica.solve_float64`` call (10^4 calls, 2000 for the curve, after 50 warm-up calls),
and in the same calls the time inside ``Kernel.__call__`` and inside its compiled
``solve_points`` (each wrapped by a CPU timer: about 1 us a call is the timers'). The cases:
paper A at d = 120, alpha = 2, tau = 4, rho = 0.01, piano / piano, one point with SPECs and with
d x d matrices, a 30-point kappa curve; paper B's isotropic point. Rewrites its section of
``benchmarks/README.md``.
"""

from __future__ import annotations

import os
import statistics

try:
    from ._util import baseline_argument, child_json, machine_line, table, write_section
except ImportError:  # run as a script
    from _util import (baseline_argument, child_json, machine_line, table,  # type: ignore
                       write_section)

NAME = "float64_call_stages"

_CHILD = r"""
import json, sys, time
import numpy as np
import replica
from replica.numerics import kernels as K
D = 120
c = np.diag(np.arange(D, 0, -1).astype(float)); ctr = c * (D / np.trace(c))
kap = np.linspace(0.05, 2.15, 30)
cases = {
    "point, SPECs": lambda: replica.solve_float64("alignment", d=D, train="piano", test="piano", alpha=2.0, tau=4.0, kappa=0.5, rho=0.01),
    "point, matrices": lambda: replica.solve_float64("alignment", train=ctr, test=ctr, alpha=2.0, tau=4.0, kappa=0.5, rho=0.01),
    "isotropic point": lambda: replica.solve_float64("isotropic", alpha=2.0, tau=4.0, kappa=0.5, rho=0.01),
    "curve, SPECs": lambda: replica.solve_float64("alignment", d=D, train="piano", test="piano", alpha=2.0, tau=4.0, kappa=kap, rho=0.01),
}
clock = {"call": 0.0, "solve": 0.0}
orig = K.Kernel.__call__
def call(self, *a, **kw):
    if "solve" not in self.__dict__ or not hasattr(self.solve, "_wrapped"):
        inner = self.solve
        def solve(*args):
            t = time.process_time()
            try:
                return inner(*args)
            finally:
                clock["solve"] += time.process_time() - t
        solve._wrapped = True
        self.solve = solve
    t = time.process_time()
    try:
        return orig(self, *a, **kw)
    finally:
        clock["call"] += time.process_time() - t
K.Kernel.__call__ = call
out = {}
for name, f in cases.items():
    n = 10000 if "curve" not in name else 2000
    for _ in range(50): f()
    # whole call without the timers
    K.Kernel.__call__ = orig
    t = time.process_time()
    for _ in range(n): f()
    whole = (time.process_time() - t) / n
    K.Kernel.__call__ = call
    for _ in range(5): f()
    clock.update(call=0.0, solve=0.0)
    t = time.process_time()
    for _ in range(n): f()
    timed = (time.process_time() - t) / n
    out[name] = dict(whole=whole, timed=timed, kernel_call=clock["call"] / n, compiled=clock["solve"] / n)
print(json.dumps(out))
"""


def _run(tree: str) -> dict:
    return child_json(tree, _CHILD)


def main():
    baseline = baseline_argument("float64_call_stages")
    if baseline is None:
        return
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    start = os.getloadavg()[0]
    runs = {"base": [], "new": []}
    for r in range(2):
        for side in (("base", "new") if r % 2 == 0 else ("new", "base")):
            runs[side].append(_run(baseline if side == "base" else here))

    def us(side, case, f):
        return f"{statistics.mean(f(x[case]) for x in runs[side]) * 1e6:.0f} us"

    def whole(v):
        return v["whole"]

    def compiled(v):
        return v["compiled"]

    def wrapper(v):
        return v["kernel_call"] - v["compiled"]

    def around(v):
        return v["timed"] - v["kernel_call"]

    rows = [[case] + [us(side, case, f) for f in (whole, compiled, wrapper, around)
                      for side in ("base", "new")] for case in runs["new"][0]]
    md = ["## Issue 29: where one float64 call's time goes, before and after", "",
          f"Machine: {machine_line()}; load average {start:.1f} at the start, "
          f"{os.getloadavg()[0]:.1f} at the end (shared 2 cores). Baseline "
          f"`{os.path.basename(os.path.normpath(baseline))}`; `python -m "
          "benchmarks.float64_call_stages --baseline PATH`. CPU time per public "
          "`replica.solve_float64` call (10^4 calls, 2000 for the curve), the two trees in "
          "fresh processes alternating twice, averaged; d = 120, alpha = 2, tau = 4, kappa = "
          "1/2 (the curve: 30 kappa in [0.05, 2.15]), rho = 0.01, piano / piano. *compiled*: "
          "inside the Numba `solve_points` call (its dispatch included); *wrapper*: the rest of "
          "`Kernel.__call__` (argument and output arrays); *Python around*: everything else in "
          "the call (entry, parsing and validation, variant, spectral pairs, output dict). The "
          "timers on the two inner calls cost about 1 us a call.", "",
          table(["case", "whole call before", "after", "compiled before", "after",
                 "wrapper before", "after", "Python around before", "after"], rows)]
    write_section(NAME, "\n".join(md))
    print("\n".join(md))


if __name__ == "__main__":
    main()
