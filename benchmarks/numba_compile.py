"""What a user pays for the fused float64 kernels' compilation (Numba): the first
``replica.solve_float64`` call in a fresh process on fresh caches (the generated code, the
kernel's source and Numba's compiled code all made), and the same call in a second process on
the caches the first left (Numba's cache beside the kernel's source in the code cache is
loaded), side by side with another checkout.

Per round and per tree (the trees alternating, A B then B A): a fresh code cache
(``REPLICA_LAMBDIFY_CACHE``), one process for the cold call, one for the warm call, each timing
the call's CPU time (``time.process_time``; Numba compiles on the calling thread), one BLAS and
one Numba thread, ``REPLICA_NUMBA=1``. Every reported array of both trees' calls is compared
bit for bit (a disagreement is a failure). Cases: ``paperA`` (alignment, d = 120, piano
training and test, alpha = 2, tau = 4, kappa = 1/2, rho = 0.01: paper A's point) and
``lowrank`` (the low-rank model, 5 alphas, tau = 2.25, kappa = 1.5, rho = 0.5, sigma = 0.3,
``outside:1/4`` test: ``tests/test_float64_fast_call.py``'s case).

Run ``python -m benchmarks.numba_compile --baseline PATH [--rounds N] [--cases paperA,lowrank]``
(it prints the table; the numbers of session 51 are in ``benchmarks/README.md``, section
``numbac``)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile

from ._util import machine_line, table

CASES = {
    "paperA": ('"alignment", d=120, train="piano", test="piano", alpha=2.0, tau=4.0, '
               'kappa=0.5, rho=0.01'),
    "lowrank": ('"lowrank", alpha=np.logspace(-0.5, 2, 5), tau=2.25, kappa=1.5, rho=0.5, '
                'sigma=0.3, test="outside:1/4"'),
}

CHILD = """
import json, resource, time
import numpy as np
import replica
t = time.process_time()
r = replica.solve_float64({args}, strict=False)
cpu = time.process_time() - t
ru = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({{"cpu": cpu, "process_cpu": ru.ru_utime + ru.ru_stime,
                  "values": {{k: np.asarray(v).astype(str).tolist() if np.asarray(v).dtype.kind
                             in "OUSb" else np.asarray(v, float).view(np.int64).tolist()
                             for k, v in r.items()}}}}))
"""


def run(tree: str, case: str, cache: str) -> dict:
    env = dict(os.environ, PYTHONPATH=tree, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1",
               MKL_NUM_THREADS="1", NUMBA_NUM_THREADS="1", REPLICA_NUMBA="1",
               REPLICA_LAMBDIFY_CACHE=cache)
    env.pop("NUMBA_CACHE_DIR", None)
    proc = subprocess.run([sys.executable, "-c", CHILD.format(args=CASES[case])], cwd=tree,
                          env=env, capture_output=True, text=True, check=True)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main():
    argv = sys.argv[1:]
    if "--baseline" not in argv:
        print("usage: python -m benchmarks.numba_compile --baseline PATH [--rounds N] "
              "[--cases paperA,lowrank]")
        return
    base = os.path.abspath(argv[argv.index("--baseline") + 1])
    rounds = int(argv[argv.index("--rounds") + 1]) if "--rounds" in argv else 2
    cases = (argv[argv.index("--cases") + 1].split(",") if "--cases" in argv
             else list(CASES))
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    trees = {"this": here, "baseline": base}
    got = {(c, t, w): [] for c in cases for t in trees for w in ("cold", "warm")}
    values, failures = {}, []
    load = [os.getloadavg()[0]]
    for r in range(rounds):
        for case in cases:
            order = list(trees) if r % 2 == 0 else list(trees)[::-1]
            for name in order:
                cache = tempfile.mkdtemp(prefix=f"numba-compile-{name}-")
                try:
                    for when in ("cold", "warm"):
                        out = run(trees[name], case, cache)
                        got[case, name, when].append(out["cpu"])
                        values.setdefault((case, name), out["values"])
                        if out["values"] != values[case, name]:
                            failures.append(f"{case} {name} {when}: values changed")
                        print(f"round {r} {case} {name} {when}: {out['cpu']:.2f} s CPU",
                              flush=True)
                finally:
                    shutil.rmtree(cache, ignore_errors=True)
                load.append(os.getloadavg()[0])
        for case in cases:
            if values[case, "this"] != values[case, "baseline"]:
                failures.append(f"{case}: the two trees' values differ")
    rows = []
    for case in cases:
        for when in ("cold", "warm"):
            b, t = min(got[case, "baseline", when]), min(got[case, "this", when])
            rows.append([case, when, f"{b:.2f}", f"{t:.2f}", f"{b / t:.2f}x",
                         "identical" if values[case, "this"] == values[case, "baseline"]
                         else "DIFFER"])
    md = table(["case", "caches", "baseline s CPU (min)", "this s CPU (min)", "ratio",
                "values (bit for bit)"], rows)
    print(md)
    print(f"rounds {rounds}, load average {min(load):.1f}..{max(load):.1f}; {machine_line()}")
    if failures:
        raise SystemExit("; ".join(failures))


if __name__ == "__main__":
    main()
