"""``--certify`` with the Gauss--Legendre rule of :mod:`replica.symbolic.ballquad` (issue 29,
job logcert): the certification overhead (certified / verified CPU time at 30 digits) of the
logistic models and of the rows of ``certify_tails``, side by side with another checkout.

Each point runs in a fresh process per tree with its own warm code cache (an untimed verified
and certified solve first, then timed ones: ``benchmarks/certify_tails.py``'s child), the trees
alternating; the logistic models one timed run of each kind per round, the others medians of 3.
Run ``python -m benchmarks.certify_quadrature --baseline PATH [--rounds N]``; it rewrites the
section ``certify_quadrature`` of ``benchmarks/README.md``.
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile

try:
    from ._util import baseline_argument, machine_line, table, write_section
    from .certify_tails import LOGISTIC_POINTS, POINTS, REPO, measure
except ImportError:  # run as a script
    from _util import baseline_argument, machine_line, table, write_section  # type: ignore
    from certify_tails import LOGISTIC_POINTS, POINTS, REPO, measure  # type: ignore

NAME = "certify_quadrature"


def main():
    baseline = baseline_argument(NAME)
    if baseline is None:
        return
    rounds = int(sys.argv[sys.argv.index("--rounds") + 1]) if "--rounds" in sys.argv else 1
    trees = {"baseline": os.path.abspath(baseline), "this": REPO}
    caches = {k: tempfile.mkdtemp(prefix=f"certify-quadrature-{k}-") for k in trees}
    rows = []
    loads = [os.getloadavg()[0]]
    for label, path, raw in LOGISTIC_POINTS[:2] + POINTS:
        repeats = 1 if "logistic" in path else 3
        runs = {k: [] for k in trees}
        for _ in range(rounds):
            for k, tree in trees.items():
                runs[k].append(measure(tree, caches[k], path, raw, repeats))
                loads.append(os.getloadavg()[0])
        med = {k: {q: statistics.median(r[q] for r in runs[k]) for q in ("verified", "certified")}
               for k in trees}
        same = runs["baseline"][-1]["values"] == runs["this"][-1]["values"]
        proved = {k: "proved" if runs[k][-1]["proved"] else "NOT proved" for k in trees}
        rows.append([label, f"{med['baseline']['verified']:.2f} s",
                     f"{med['this']['verified']:.2f} s",
                     f"{med['baseline']['certified']:.2f} s ({proved['baseline']})",
                     f"{med['this']['certified']:.2f} s ({proved['this']})",
                     f"{med['this']['certified'] / med['baseline']['certified']:.2f}x",
                     f"{med['baseline']['certified'] / med['baseline']['verified']:.2f}x",
                     f"{med['this']['certified'] / med['this']['verified']:.2f}x",
                     "identical" if same else "DIFFERENT"])
        print(rows[-1], flush=True)
    md = [f"Machine: {machine_line()}, load average {min(loads):.1f}-{max(loads):.1f} during "
          f"the runs (shared); baseline `{trees['baseline']}`. CPU times (`time.process_time` "
          f"of the child), {rounds} round(s) alternating the trees; logistic models one timed "
          "run of each kind per round, the others medians of 3.", "",
          table(["point (30 digits unless said)", "verified, baseline", "verified, this",
                 "--certify, baseline", "--certify, this", "certify this/baseline",
                 "certify/verified (baseline)", "certify/verified (this)",
                 "verified values"], rows)]
    write_section(NAME, "\n".join(md))
    print("\n".join(md))


if __name__ == "__main__":
    main()
