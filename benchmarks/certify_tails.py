"""``--certify`` on the Bayes-optimal teacher and the hinge SVM (issue 26): what the proof costs
against a verified solve, side by side with another checkout.

At each point, in a fresh process per tree with its own warm code cache (one untimed solve and
one untimed certified solve first): the CPU time (``time.process_time``; the machine is shared)
of a verified solve at 30 digits and of a certified one (``certify=True``: the verified solve
plus the Krawczyk proof and the enclosure of every reported value), medians of 3 runs;
``--baseline PATH`` adds the same for another checkout (where these points are not certifiable
the certified solve ends with ``certified: no`` and its time is that of trying), alternating the
trees twice (medians over the rounds), and whether the verified solves report the same values
and digits at 30 digits in both trees (``digits_how`` apart: where the integrals have a ball
evaluation it adds the bound on the reported values' rounding, a check the baseline could not
make for these models). Issue 29's target for the certification overhead: <= 1.5x.

Run ``python -m benchmarks.certify_tails --baseline PATH`` (rewrites its section of
``benchmarks/README.md``).
"""

from __future__ import annotations

import os
import statistics
import tempfile

try:
    from ._util import baseline_argument, child_json, machine_line, table, write_section
except ImportError:  # run as a script
    from _util import (baseline_argument, child_json, machine_line, table,  # type: ignore
                       write_section)

NAME = "certify_tails"
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

POINTS = [
    ("perceptron_teacher, alpha = 1, Rademacher", "examples/perceptron_teacher.py",
     {"alpha": "1", "prior": "rademacher"}),
    ("perceptron_teacher, alpha = 1, Gaussian", "examples/perceptron_teacher.py",
     {"alpha": "1", "prior": "gaussian"}),
    ("hinge_svm, alpha = 2", "examples/hinge_svm.py", {"alpha": "2"}),
]

NOTE = """Why: the teacher's verified solve now also bounds the rounding of its reported values
in ball arithmetic (``digits_how`` says so; the baseline had no ball evaluation of these
integrals), one rigorous ``acb.integral`` per integral at the working precision; its Newton
iteration stays in mpmath (``machine._integrals_in_balls``: in ball Newton the same solve took
3.4x the baseline). The certified solve adds the Krawczyk proof over a box, each integral
enclosed by ``acb.integral`` plus the tail bound of its growth envelope; the sign channel's
integrands (``log erfc``, ``1/erfc``, Gaussian factors ``e^{-m z^2/(2 - 2m)}``) need
1,400-4,600 integrand evaluations each at 52 digits. Not chased further (issue 26 asked for
the ratio)."""

CHILD = r"""
import json, os, statistics, sys, time
os.environ["REPLICA_LAMBDIFY_CACHE"] = {cache!r}
from replica.modeling import load_model_file
from replica.numerics.driver import solve_params
problem = load_model_file({path!r})
params = problem.schema.parse({raw!r})

def timed(**kw):
    times, out = [], None
    for _ in range(3):
        t = time.process_time()
        out = solve_params(problem, params, dps=30, **kw)
        times.append(time.process_time() - t)
    return statistics.median(times), out

solve_params(problem, params, dps=30)
solve_params(problem, params, dps=30, certify=True)
t_ver, ver = timed()
t_cert, cert = timed(certify=True)
values = json.dumps({{k: v for k, v in ver.to_json_dict().items()
                     if k not in ("residual", "condition", "iterations", "notes",
                                  "digits_how")}},
                    sort_keys=True, default=str)
c = cert.certificate
print(json.dumps({{"verified": t_ver, "certified": t_cert, "values": values,
                  "proved": bool(c is not None and c.certified)}}))
"""


def measure(tree, cache, path, raw):
    return child_json(tree, CHILD.format(cache=cache, path=os.path.join(tree, path), raw=raw))


def main():
    baseline = baseline_argument(NAME)
    if baseline is None:
        return
    trees = {"baseline": os.path.abspath(baseline), "this": REPO}
    caches = {k: tempfile.mkdtemp(prefix=f"certify-tails-{k}-") for k in trees}
    rows, ratios = [], []
    for label, path, raw in POINTS:
        runs = {k: [] for k in trees}
        for _ in range(2):
            for k, tree in trees.items():
                runs[k].append(measure(tree, caches[k], path, raw))
        med = {k: {q: statistics.median(r[q] for r in runs[k]) for q in ("verified", "certified")}
               for k in trees}
        same = runs["baseline"][-1]["values"] == runs["this"][-1]["values"]
        ratio = med["this"]["certified"] / med["this"]["verified"]
        ratios.append(ratio)
        rows.append([label, f"{med['baseline']['verified']:.2f} s",
                     f"{med['this']['verified']:.2f} s",
                     f"{med['this']['verified'] / med['baseline']['verified']:.2f}x",
                     f"{med['baseline']['certified']:.2f} s "
                     f"({'proved' if runs['baseline'][-1]['proved'] else 'not proved'})",
                     f"{med['this']['certified']:.2f} s "
                     f"({'proved' if runs['this'][-1]['proved'] else 'not proved'})",
                     f"{ratio:.2f}x", "identical" if same else "DIFFERENT"])
    md = [f"Machine: {machine_line()}; baseline `{trees['baseline']}`. CPU times, medians.", "",
          table(["point (30 digits)", "verified, baseline", "verified, this", "this/baseline",
                 "--certify, baseline", "--certify, this", "certify/verified (this)",
                 "verified values"], rows), "",
          f"Certification overhead (issue 29's target <= 1.5x): "
          f"{', '.join(f'{r:.2f}x' for r in ratios)}.", "", NOTE]
    write_section(NAME, "\n".join(md))
    print("\n".join(md))


if __name__ == "__main__":
    main()
