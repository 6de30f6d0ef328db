"""Paper A's float64 point and 30-point curve, this tree against another checkout side by side.

``python -m benchmarks.float64_side_by_side --baseline PATH`` (e.g. a worktree of the commit
before issue 29): each tree in fresh processes, the two alternating three times (base, new;
new, base; base, new), CPU time per call (median of 5 blocks of 200 calls per process, then of
the three processes), one BLAS thread; the ratio is formed process pair by process pair. The
cases are those of ``benchmarks/authors_baselines.py`` (d = 120, alpha = 2, tau = 4, rho = 0.01,
piano / piano; kappa = 1/2, or 30 kappa in [0.05, 2.15]) with the covariances as SPECs and as
d x d NumPy matrices; the first values of ``e_icl`` are printed by both trees for comparison.
Rewrites its section of ``benchmarks/README.md``.
"""

from __future__ import annotations

import os
import statistics

try:
    from ._util import baseline_argument, child_json, machine_line, table, write_section
except ImportError:  # run as a script
    from _util import (baseline_argument, child_json, machine_line, table,  # type: ignore
                       write_section)

NAME = "float64_side_by_side"

_CHILD = r"""
import hashlib, json, time
import numpy as np
import replica

D = 120
c = np.diag(np.arange(D, 0, -1).astype(float))
ctr = c * (D / np.trace(c))
kap = np.linspace(0.05, 2.15, 30)
cases = {
    "point, SPECs": lambda: replica.solve_float64("alignment", d=D, train="piano", test="piano",
                                                  alpha=2.0, tau=4.0, kappa=0.5, rho=0.01),
    "point, matrices": lambda: replica.solve_float64("alignment", train=ctr, test=ctr,
                                                     alpha=2.0, tau=4.0, kappa=0.5, rho=0.01),
    "30-point curve, SPECs": lambda: replica.solve_float64(
        "alignment", d=D, train="piano", test="piano", alpha=2.0, tau=4.0, kappa=kap, rho=0.01),
    "30-point curve, matrices": lambda: replica.solve_float64(
        "alignment", train=ctr, test=ctr, alpha=2.0, tau=4.0, kappa=kap, rho=0.01),
}
out = {}
for k, f in cases.items():
    for _ in range(10):
        f()
    reps = []
    for _ in range(5):
        t = time.process_time()
        for _ in range(200):
            f()
        reps.append((time.process_time() - t) / 200)
    r = f()
    digest = hashlib.sha256()  # every output array, the check's condition and estimate included
    for key in sorted(r):
        a = np.asarray(r[key])
        digest.update(key.encode() + (a.astype(str).tobytes() if a.dtype.kind in "OU"
                                      else np.ascontiguousarray(a).tobytes()))
    out[k] = [sorted(reps)[2], [repr(float(v)) for v in np.atleast_1d(r["e_icl"])[:2]],
              sorted(set(str(s) for s in np.atleast_1d(r["status"]))), digest.hexdigest()]
print(json.dumps(out))
"""


def _run(tree: str) -> dict:
    return child_json(tree, _CHILD)


def main():
    baseline = baseline_argument("float64_side_by_side")
    if baseline is None:
        return
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    _run(baseline), _run(here)  # generate / compile what each tree caches, untimed
    start = os.getloadavg()[0]
    runs = {"base": [], "new": []}
    for r in range(3):
        for side in (("base", "new") if r % 2 == 0 else ("new", "base")):
            runs[side].append(_run(baseline if side == "base" else here))
    rows = []
    for case in runs["new"][0]:
        tb = statistics.median(x[case][0] for x in runs["base"])
        tn = statistics.median(x[case][0] for x in runs["new"])
        ratios = [b[case][0] / n[case][0] for b, n in zip(runs["base"], runs["new"])]
        same = runs["base"][0][case][1] == runs["new"][0][case][1]
        rows.append([case, f"{tb * 1e3:.3f} ms", f"{tn * 1e3:.3f} ms",
                     f"{statistics.median(ratios):.2f}x ({min(ratios):.2f}-{max(ratios):.2f})",
                     ", ".join(runs["new"][0][case][1]),
                     "identical" if same else "DIFFERENT: " + ", ".join(runs["base"][0][case][1]),
                     " / ".join(runs["new"][0][case][2]),
                     "identical" if runs["base"][0][case][3] == runs["new"][0][case][3]
                     else "DIFFERENT"])
    md = ["## Paper A float64, side by side with a baseline checkout", "",
          f"Machine: {machine_line()}; load average {start:.1f} at the start, "
          f"{os.getloadavg()[0]:.1f} at the end (shared 2 cores: absolute times are upper bounds, "
          f"the ratios are the measurement). Baseline `{os.path.basename(os.path.normpath(baseline))}`; "
          "`python -m benchmarks.float64_side_by_side --baseline PATH`. CPU time per public "
          "`replica.solve_float64` call, d = 120, alpha = 2, tau = 4, rho = 0.01, piano / piano; "
          "fused Numba kernels in both trees (after: with the compiled double-double check).", "",
          table(["case", "before", "after", "speed-up (range)", "e_icl after (first values)",
                 "e_icl before", "statuses after",
                 "every output array before / after (sha256)"], rows)]
    write_section(NAME, "\n".join(md))
    print("\n".join(md))


if __name__ == "__main__":
    main()
