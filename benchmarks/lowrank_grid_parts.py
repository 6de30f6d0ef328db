"""Low-rank float64 grids (issue 29): where a 10^4-point grid's time goes, side by side with
another checkout, and whether every value is the same.

Per tree, in fresh processes (one BLAS and one Numba thread, CPU time): for each of the three
grids of ``benchmarks/lowrank_speed.py``, ``solve_float64``, and the kernel call with and
without its compiled check (the check: the difference), minimum of 7 in a process; the two trees
alternate ``--rounds`` times and the minimum over the processes is printed. ``--same`` instead
writes every array of ``solve_float64`` on the three grids, 2 x 4000 random points and four
small batches to an ``.npz`` (compare two trees' files with ``--compare A B``: bit for bit).

``--threads 1,2`` instead times the wall clock (and CPU) of ``solve_float64`` with that many Numba
threads (minimum of 15 in a process), the two trees alternating.

Run ``python -m benchmarks.lowrank_grid_parts --baseline PATH [--rounds N] [--threads 1,2]
[--baseline-cache DIR]`` (the baseline's code cache, ``REPLICA_LAMBDIFY_CACHE``; default: the
caller's); the numbers of the eighth round are in ``benchmarks/README.md`` (section ``grid``),
of the ninth in section ``lowrank_grid_s46``, of session 53's (the first Newton sweep eight
points at a time) in section ``lrgrid``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import numpy as np


def grids():
    A, R = np.meshgrid(np.logspace(-0.5, 3, 100), np.linspace(0.05, 1.0, 100))
    return [dict(alpha=A, tau=2.25, kappa=0.5, rho=R, sigma=0.3, lam=0.0),
            dict(alpha=A, tau=2.25, kappa=0.5, rho=R, sigma=0.3, lam=0.1),
            dict(alpha=A, tau=0.5, kappa=0.5, rho=R, sigma=0.5, lam=0.1)]


def times() -> list:
    """``[solve_float64, kernel with check, kernel without]`` seconds per grid (min of 7)."""
    import replica
    from replica.numerics import kernels as K

    out, call = [], K.Kernel.__call__
    for kw in grids():
        replica.solve_float64("lowrank", **kw)
        total = []
        for _ in range(7):
            t = time.process_time()
            replica.solve_float64("lowrank", **kw)
            total.append(time.process_time() - t)
        seen = []
        K.Kernel.__call__ = lambda self, *a, **k: seen.append((self, a, k)) or call(self, *a, **k)
        try:
            replica.solve_float64("lowrank", **kw)
        finally:
            K.Kernel.__call__ = call
        kernel, a, k = seen[0]
        parts = []
        for check in (True, False):
            tt = []
            for _ in range(7):
                t = time.process_time()
                call(kernel, *a, **dict(k, check=check))
                tt.append(time.process_time() - t)
            parts.append(min(tt))
        out.append([min(total)] + parts)
    return out


def walls(repeats: int = 15) -> list:
    """``[wall seconds, CPU seconds]`` of one ``solve_float64`` call per grid (minimum of
    ``repeats`` after a warm-up call), with the process's Numba thread count
    (``NUMBA_NUM_THREADS``): the time a user waits, on as many cores as the threads get."""
    import replica

    out = []
    for kw in grids():
        replica.solve_float64("lowrank", **kw)
        wall, cpu = [], []
        for _ in range(repeats):
            t, c = time.perf_counter(), time.process_time()
            replica.solve_float64("lowrank", **kw)
            wall.append(time.perf_counter() - t)
            cpu.append(time.process_time() - c)
        out.append([min(wall), min(cpu)])
    return out


def same(path: str):
    """Every array of ``solve_float64`` on the grids and on random points, to ``path``."""
    import replica

    rng = np.random.default_rng(29)
    cases = grids()
    for _ in range(2):
        N = 4000
        tau = rng.uniform(0.3, 4, N)
        cases.append(dict(alpha=10 ** rng.uniform(-1, 6, N), tau=tau,
                          kappa=rng.uniform(0.2, 2, N), rho=rng.uniform(0.01, 1, N),
                          sigma=10 ** rng.uniform(-3, 0.5, N),
                          lam=np.where((rng.random(N) < 0.3) & (tau > 1), 0.0,
                                       10 ** rng.uniform(-4, 1, N))))
    for N in (1, 3, 9, 17):
        cases.append(dict(alpha=10 ** rng.uniform(-1, 3, N), tau=2.25, kappa=0.5,
                          rho=rng.uniform(0.05, 1, N), sigma=0.3, lam=0.1))
    out = {}
    for c, kw in enumerate(cases):
        for key, v in replica.solve_float64("lowrank", strict=False, **kw).items():
            a = np.asarray(v)
            out[f"{c}:{key}"] = a.astype(str) if a.dtype.kind in "OU" else a
    np.savez(path, **out)


def compare(a_path: str, b_path: str) -> int:
    a, b = np.load(a_path), np.load(b_path)
    differ = sorted(set(a.files) ^ set(b.files))
    for key in set(a.files) & set(b.files):
        x, y = a[key], b[key]
        if x.dtype.kind in "UOb":
            ok = x.shape == y.shape and np.array_equal(x, y)
        else:
            ok = x.shape == y.shape and x.dtype == y.dtype and np.array_equal(
                x.view(np.uint8), y.view(np.uint8))
        if not ok:
            differ.append(key)
    print(f"{len(a.files)} arrays compared, {len(differ)} differ {sorted(differ)[:10]}")
    return len(differ)


def _run(tree: str, threads: int = 0, cache: str = "") -> list:
    env = dict(os.environ, PYTHONPATH=tree, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1",
               MKL_NUM_THREADS="1", NUMBA_NUM_THREADS=str(max(threads, 1)))
    if cache:
        env["REPLICA_LAMBDIFY_CACHE"] = cache
    what = ["--walls"] if threads else ["--times"]
    # this file run by its path from the tree's root: ``replica`` is imported from PYTHONPATH,
    # the tree's (with ``-m`` the working directory would come first on the path, and a
    # baseline run from this tree's root would import this tree's package)
    got = subprocess.run([sys.executable, os.path.abspath(__file__)] + what, env=env, cwd=tree,
                         capture_output=True, text=True, check=True)
    assert json.loads(got.stdout.strip().splitlines()[-2]) == os.path.realpath(tree), got.stdout
    return json.loads(got.stdout.strip().splitlines()[-1])


def main(argv):
    if argv[:1] in (["--times"], ["--walls"]):
        import replica

        print(json.dumps(os.path.realpath(os.path.dirname(os.path.dirname(replica.__file__)))))
        print(json.dumps(times() if argv[0] == "--times" else walls()))
    elif argv[:1] == ["--same"]:
        same(argv[1])
    elif argv[:1] == ["--compare"]:
        sys.exit(1 if compare(argv[1], argv[2]) else 0)
    else:
        base = argv[argv.index("--baseline") + 1] if "--baseline" in argv else None
        rounds = int(argv[argv.index("--rounds") + 1]) if "--rounds" in argv else 5
        bcache = argv[argv.index("--baseline-cache") + 1] if "--baseline-cache" in argv else ""
        here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        threads = [int(t) for t in argv[argv.index("--threads") + 1].split(",")] if (
            "--threads" in argv) else []
        print("load average:", os.getloadavg())
        if threads:  # the wall clock of solve_float64 with 1, 2, ... Numba threads
            runs = {(tag, t): [] for t in threads for tag in ("before", "after")}
            for _ in range(rounds):
                for t in threads:
                    if base:
                        runs["before", t].append(_run(base, t, bcache))
                    runs["after", t].append(_run(here, t))
            print("load average:", os.getloadavg())
            for (tag, t), rs in runs.items():
                if rs:
                    m = np.min(np.array(rs), axis=0) * 1e3
                    for g, (wall, cpu) in enumerate(m):
                        print(f"{tag} {t} thread(s) grid {g}: wall {wall:.2f} ms "
                              f"({1e7 / wall:.3e} points/s), CPU {cpu:.2f} ms")
            return
        runs = {"before": [], "after": []}
        for _ in range(rounds):
            if base:
                runs["before"].append(_run(base, 0, bcache))
            runs["after"].append(_run(here))
        print("load average:", os.getloadavg())
        for tag, rs in runs.items():
            if rs:
                m = np.min(np.array(rs), axis=0) * 1e3
                for g, (tot, chk, solve) in enumerate(m):
                    print(f"{tag} grid {g}: solve_float64 {tot:.1f} ms ({1e7 / tot:.2e} points/s),"
                          f" kernel without check {solve:.1f} ms, check {chk - solve:.1f} ms")


if __name__ == "__main__":
    main(sys.argv[1:])
