"""Load and first-solve cost of the ReLU-channel GLM models, cold (``REPLICA_LAMBDIFY_CACHE=0``:
the derivation and the generated code from scratch), each in a fresh process, CPU time.

    python -m benchmarks.glm_relu_load [BASELINE_TREE]

With a baseline tree (a worktree of an earlier commit) the models that exist there are timed
in both trees, interleaved, and the ratios reported; the new models (Huber on the ReLU channel,
Bayes-optimal noiseless ReLU) are reported against the Huber loss on the linear channel of the
same tree (a model of the same kind that existed before). Writes the README section
``glm_relu_load``."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from ._util import machine_line, write_section

CASES = {
    "square ridge, ReLU": ('ERM("a", loss=Square(), penalty=Ridge("lam"), '
                           'teacher=Teacher(ReLU("sigma")))', dict(alpha=2, lam="1/10",
                                                                   sigma="1/2"), True),
    "huber ridge, linear": ('ERM("b", loss=Huber("delta"), penalty=Ridge("lam"), '
                            'teacher=Teacher(Linear("sigma")))',
                            dict(alpha=2, lam="1/10", sigma="1/2", delta=1), True),
    "huber ridge, ReLU": ('ERM("c", loss=Huber("delta"), penalty=Ridge("lam"), '
                          'teacher=Teacher(ReLU("sigma")))',
                          dict(alpha=2, lam="1/10", sigma="1/2", delta=1), False),
    "bayes, ReLU(0)": ('BayesOptimal("d", prior=Gaussian(), channel=ReLU(0))', dict(alpha=1),
                       False),
}

SCRIPT = """
import json, resource, sys, time, sympy
def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime
t0 = cpu()
from replica.glm import *
M = {decl}
t1 = cpu()
r = M.solve(dps=30, **{{k: sympy.Rational(str(v)) for k, v in {params!r}.items()}})
t2 = cpu()
print(json.dumps({{"declare": t1 - t0, "solve": t2 - t1, "converged": bool(r.converged)}}))
"""


def run(tree, decl, params):
    env = dict(os.environ, PYTHONPATH=tree, REPLICA_LAMBDIFY_CACHE="0")
    out = subprocess.run([sys.executable, "-c", SCRIPT.format(decl=decl, params=params)],
                         cwd=tree, env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv):
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    base = argv[0] if argv else None
    rows = []
    for name, (decl, params, in_base) in CASES.items():
        new = run(here, decl, params)
        old = run(base, decl, params) if base and in_base else None
        rows.append((name, new, old))
    load = os.getloadavg()[0]
    lines = [f"Machine: {machine_line()}; load average {load:.1f} (shared). CPU seconds of one "
             "fresh process each, no code cache (the derivation, the code generation and the "
             "first 30-digit solve at alpha = 2, lam = 1/10, sigma = 1/2, delta = 1; alpha = 1 "
             "for Bayes).", "",
             "| model | declare | first solve | baseline declare | baseline solve | ratio "
             "(total, this/baseline) |", "|---|---|---|---|---|---|"]
    ref = next(n for name, n, _ in rows if name == "huber ridge, linear")
    for name, new, old in rows:
        tot = new["declare"] + new["solve"]
        if old:
            ratio = f"{tot / (old['declare'] + old['solve']):.2f}"
            bd, bs = f"{old['declare']:.2f} s", f"{old['solve']:.2f} s"
        else:
            ratio = (f"new; {tot / (ref['declare'] + ref['solve']):.2f} x huber-linear of this "
                     "tree")
            bd = bs = "--"
        lines.append(f"| {name} | {new['declare']:.2f} s | {new['solve']:.2f} s | {bd} | {bs} | "
                     f"{ratio} |")
    md = "## ReLU-channel GLMs: cold load and first solve\n\n" + "\n".join(lines)
    print(md)
    write_section("glm_relu_load", md)


if __name__ == "__main__":
    main(sys.argv[1:])
