"""Low-rank float64 grids on one and two Numba threads (issue 29, session 54's ``lrgrid2``):
the time a user waits for ``replica.solve_float64("lowrank", **grid)`` on the three 10^4-point
grids of :func:`benchmarks.lowrank_grid_parts.grids`, and where it goes.

Per tree and thread count, in a fresh process (one BLAS thread, ``REPLICA_NUMBA=1``): for each
grid, after a warm-up call, ``--repeats`` calls (default 15), and of those the minimum and the
median of the wall clock, the minimum of the process's CPU time, the minimum of the Python
around the kernel (``solve_float64`` less the kernel call, ``Kernel.__call__``), and the CPU
time of each part's ``solve_points`` call on its own thread (``time.thread_time``; medians):
the two parts' balance, and whether the parts cost more than one thread's whole loop (their
sum against the 1-thread kernel). The trees alternate (``--rounds``, default 2); the minimum
over the rounds is printed.

``--fifo`` runs each process under ``chrt -f 10`` (real-time priority: the other jobs of a
shared machine do not take its two cores while it runs, a few seconds a process) -- the
nearest this shared machine gets to idle cores; without it the wall clocks of two threads
measure the load. Report it with the numbers.

Run: ``python benchmarks/lrgrid2.py [--baseline PATH] [--baseline-cache DIR] [--threads 1,2]
[--rounds N] [--repeats N] [--fifo]`` (``--baseline-cache``: the baseline's code cache,
``REPLICA_LAMBDIFY_CACHE``; default the caller's). Results: ``benchmarks/README.md``, section
``lrgrid2``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def measure(repeats: int) -> list:
    """Per grid: ``[wall min, wall median, CPU min, Python outside the kernel min,
    part CPU medians...]`` in seconds, in this process."""
    sys.path.insert(0, HERE)
    from lowrank_grid_parts import grids

    import replica
    from replica.numerics import kernels as K

    call, parts = K.Kernel.__call__, {}
    inside = [0.0]

    def timed_call(self, *a, **k):
        if "solve" not in self.__dict__ or not hasattr(self.solve, "_lrgrid2"):
            solve = self.module.solve_points

            def part(*args):  # one part's solve_points, on the thread that calls it
                t = time.thread_time()
                r = solve(*args)
                parts.setdefault(args[-2], []).append(time.thread_time() - t)
                return r
            part._lrgrid2 = True
            self.solve = part
        t = time.perf_counter()
        try:
            return call(self, *a, **k)
        finally:
            inside[0] = time.perf_counter() - t

    K.Kernel.__call__ = timed_call
    out = []
    for kw in grids():
        replica.solve_float64("lowrank", **kw)
        parts.clear()
        wall, cpu, py = [], [], []
        for _ in range(repeats):
            t, c = time.perf_counter(), time.process_time()
            replica.solve_float64("lowrank", **kw)
            wall.append(time.perf_counter() - t)
            cpu.append(time.process_time() - c)
            py.append(wall[-1] - inside[0])
        out.append([min(wall), float(np.median(wall)), min(cpu), min(py)]
                   + [float(np.median(v)) for _, v in sorted(parts.items())])
    return out


def _run(tree: str, threads: int, cache: str, repeats: int, fifo: bool) -> list:
    env = dict(os.environ, PYTHONPATH=tree, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1",
               MKL_NUM_THREADS="1", NUMBA_NUM_THREADS=str(threads), REPLICA_NUMBA="1")
    if cache:
        env["REPLICA_LAMBDIFY_CACHE"] = cache
    cmd = ([sys.executable, os.path.abspath(__file__), "--measure", str(repeats)])
    if fifo:
        cmd = ["chrt", "-f", "10"] + cmd
    got = subprocess.run(cmd, env=env, cwd=tree, capture_output=True, text=True, check=True)
    lines = got.stdout.strip().splitlines()
    assert json.loads(lines[-2]) == os.path.realpath(tree), got.stdout
    return json.loads(lines[-1])


def main(argv):
    if argv[:1] == ["--measure"]:
        import replica

        print(json.dumps(os.path.realpath(os.path.dirname(os.path.dirname(replica.__file__)))))
        print(json.dumps(measure(int(argv[1]))))
        return
    opt = (lambda k, d: argv[argv.index(k) + 1] if k in argv else d)
    base, bcache = opt("--baseline", None), opt("--baseline-cache", "")
    rounds, repeats = int(opt("--rounds", 2)), int(opt("--repeats", 15))
    threads = [int(t) for t in opt("--threads", "1,2").split(",")]
    fifo = "--fifo" in argv
    here = os.path.dirname(HERE)
    trees = ([("before", base, bcache)] if base else []) + [("after", here, "")]
    print("load average:", os.getloadavg(), "fifo" if fifo else "")
    runs: dict = {}
    for _ in range(rounds):
        for t in threads:
            for tag, tree, cache in trees:
                runs.setdefault((tag, t), []).append(_run(tree, t, cache, repeats, fifo))
    print("load average:", os.getloadavg())
    for (tag, t), rs in sorted(runs.items(), key=lambda kv: (kv[0][1], kv[0][0] != "before")):
        for g in range(len(rs[0])):
            r = np.array([x[g][:4] for x in rs]).min(axis=0) * 1e3
            partsg = np.array([x[g][4:] for x in rs]).min(axis=0) * 1e3
            print(f"{tag} {t} thread(s) grid {g}: wall min {r[0]:.2f} ms (median {r[1]:.2f}; "
                  f"{1e7 / r[0]:.3g} points/s), CPU {r[2]:.2f} ms, Python around the kernel "
                  f"{r[3]:.2f} ms, parts' CPU " + " / ".join(f"{p:.2f}" for p in partsg) + " ms")


if __name__ == "__main__":
    main(sys.argv[1:])
