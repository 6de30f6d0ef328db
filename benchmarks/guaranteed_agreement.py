"""Every quadrature example's values at 30 and 50 digits, this tree beside a baseline tree,
compared to the digits both guarantee (session 52, ``logi30c``: the predicted stops of the
verified solve change the last, unguaranteed digits of an iterate, not the guaranteed ones).

    python -m benchmarks.guaranteed_agreement --baseline PATH [--dps 30,50] [--only NAMES]
                                              [--caches DIR]

Each command runs ``replica solve ... --dps D --json`` in a fresh process per tree (each tree
its own code cache: fresh, or kept under ``--caches DIR``; entries are keyed on contents). For every reported value (the groups of the JSON output, the replicon
included) it prints the significant digits on which the two trees agree
(:func:`replica.numerics.precision.agreement_digits`, read at ``D + 10`` digits) against
``min(digits)`` of the two runs; a value that agrees on fewer is a FAIL. It also says whether
the printed values are identical character for character, and each tree's status, digits,
iterations and residual. Writes nothing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile

COMMANDS = {
    "logistic": "examples/logistic_regression.py --alpha 2 --lam 1/10 --eta 1",
    "logistic_a3": "examples/logistic_regression.py --alpha 3 --lam 1/10",
    "glm_logistic": "examples/glm_logistic.py --alpha 2 --lam 1/10 --eta 9/10",
    "teacher_gaussian": "examples/perceptron_teacher.py --alpha 1 --prior gaussian",
    "teacher_rademacher": "examples/perceptron_teacher.py --alpha 1 --prior rademacher",
    "lasso": "examples/lasso.py --alpha 1/2 --eps 1/10 --lam 1/2 --sigma 1/10",
    "glm_lasso": "examples/glm_lasso.py --alpha 1/2 --eps 1/10 --lam 1/2 --sigma 1/10",
    "hinge_svm": "examples/hinge_svm.py --alpha 2",
    "capacity": "examples/perceptron_capacity.py --kappa 0",
    "gardner": "examples/perceptron_gardner.py --alpha 1 --kappa -1/2",
    "bayes_relu": "examples/glm_bayes_relu.py --alpha 1",
    "bayes_sign": "examples/glm_bayes_sign.py --alpha 1",
    "glm_relu": "examples/glm_relu.py --alpha 2 --lam 1/10 --sigma 1/2",
    "glm_relu_huber": "examples/glm_relu_huber.py --alpha 2 --lam 1/10 --sigma 1/2 --delta 1",
    "phase_retrieval": "examples/phase_retrieval.py --alpha 1",
    "separability": "examples/logistic_separability.py --eta 1/2",
    "glm_ridge": "examples/glm_ridge.py --alpha 2 --lam 1/10 --sigma 1/2",
}


def _arg(flag, default):
    return sys.argv[sys.argv.index(flag) + 1] if flag in sys.argv else default


def run(tree: str, cache: str, command: str, dps: int) -> dict:
    env = dict(os.environ, PYTHONPATH=tree, REPLICA_LAMBDIFY_CACHE=cache)
    proc = subprocess.run([sys.executable, "-m", "replica", "solve", "--model",
                           *command.split(), "--dps", str(dps), "--json"], cwd=tree, env=env,
                          capture_output=True, text=True)
    if proc.returncode != 0:
        return {"exit": proc.returncode, "error": (proc.stderr or proc.stdout).strip()[-300:]}
    return json.loads(proc.stdout)


def values(out: dict) -> dict:
    """The reported values: every string leaf of the groups that reads as a number."""
    skip = {"model", "params", "dps", "digits", "digits_how", "status", "converged",
            "iterations", "residual", "condition", "notes", "certificate"}
    got = {}

    def walk(node, path):
        if isinstance(node, dict):
            for k, v in node.items():
                walk(v, path + (k,))
        elif isinstance(node, str):
            try:
                float(node)
            except ValueError:
                return
            got[".".join(path)] = node
    for k, v in out.items():
        if k not in skip:
            walk(v, (k,))
    return got


def main():
    import mpmath

    from replica.numerics.precision import agreement_digits

    trees = {"baseline": os.path.abspath(_arg("--baseline", "")),
             "this": os.path.dirname(os.path.dirname(os.path.abspath(__file__)))}
    dpss = [int(d) for d in _arg("--dps", "30,50").split(",")]
    names = _arg("--only", ",".join(COMMANDS)).split(",")
    keep = _arg("--caches", None)  # a folder whose code caches (one per tree) are kept
    caches = {side: (os.path.join(keep, side) if keep
                     else tempfile.mkdtemp(prefix=f"agree-{side}-")) for side in trees}
    fails = 0
    for name in names:
        for dps in dpss:
            outs = {side: run(tree, caches[side], COMMANDS[name], dps)
                    for side, tree in trees.items()}
            if any("exit" in o for o in outs.values()):
                same_exit = len({json.dumps(o.get("exit")) for o in outs.values()}) == 1
                print(f"{name} dps {dps}: " + "; ".join(
                    f"{s}: exit {o.get('exit')} {o.get('error', '')[-120:]!r}"
                    for s, o in outs.items()) + ("" if same_exit else "  FAIL"))
                fails += not same_exit
                continue
            a, b = (values(outs[s]) for s in trees)
            dig = min(outs[s]["digits"] for s in trees)
            worst, bad = dig, []
            with mpmath.workdps(dps + 10):
                for k in a:
                    if k not in b:
                        bad.append(k)
                        continue
                    x, y = mpmath.mpf(a[k]), mpmath.mpf(b[k])
                    if not (mpmath.isfinite(x) and mpmath.isfinite(y)):  # (inf: as printed)
                        agree = dps + 10 if a[k] == b[k] else 0
                    else:
                        agree = agreement_digits(x, y, dps + 10)
                    worst = min(worst, agree)
                    if agree < dig:
                        bad.append(f"{k} ({agree} < {dig})")
            fails += bool(bad) or set(a) != set(b)
            info = " | ".join(f"{s}: {o['status']}, digits {o['digits']}, it {o['iterations']}, "
                              f"res {o['residual']}" for s, o in outs.items())
            print(f"{name} dps {dps}: {len(a)} values, agree on >= {worst} digits "
                  f"(guaranteed by both: {dig}); printed values "
                  f"{'identical' if a == b else 'DIFFER'}; {info}"
                  + (f"  FAIL {bad}" if bad else ""), flush=True)
    print(f"{fails} failures")
    sys.exit(1 if fails else 0)


if __name__ == "__main__":
    main()
