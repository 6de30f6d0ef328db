"""Finite-size simulations: structured ridge vs the naive dense solver, and how far d can go.

1. **Equal d.** The same pretraining data (isotropic tasks, alpha = 2, kappa = 1, rho = 0.01) is
   solved by the naive dense reference (full n x d(d+1) design, LAPACK ``gelsd``) and by the
   structured solver (chunked Khatri--Rao Gram + Cholesky for n >= P; Hadamard-product kernel
   for n < P), at tau = 4 (primal) and tau = 1/2 (dual). Reported: both times, the speed-up and
   the largest relative difference of Gamma*.
2. **Samplers.** The direct construction of the l x d context data against the exact-in-law
   O(d) sampler, for the n contexts of a tau = 4 run.
3. **Largest d in 10 minutes.** One full seed (data, ridge, errors) of the structured path at
   growing d for tau = 4 and tau = 1/2; the flop rate reached at the largest measured d and the
   operation count of the solver give the d at which a seed takes 10 minutes on 2 cores
   (nothing is run for 10 minutes; the power-law exponent actually seen is reported too, it
   approaches the asymptotic 6 from below). Memory of the
   structured path: 8 P^2 bytes for the Gram, factorised in place, and one 64 MiB chunk
   (primal), or 8 n^2 bytes (dual).

Timing: CPU seconds of this process (``time.process_time``) with **one** BLAS thread, median of
repeats. On a shared machine wall-clock times depend on the other processes; CPU time with one
thread does not (much). The wall time on a dedicated 2-core machine is taken as CPU time / 2 for
the BLAS-bound large sizes (syrk and Cholesky parallelise well); that is the assumption behind
the 10-minute estimate.

Run: ``python -m benchmarks.simulate_speed`` (rewrites its section of ``benchmarks/README.md``).
"""

from __future__ import annotations

import time

import numpy as np

from replica.simulate import make_experiment, run_seed, sampling, seed_sequences, solver

from ._util import machine_line, table, write_section


def _fmt(t):
    return f"{t * 1e3:.2f} ms" if t < 1 else f"{t:.2f} s"


def median_time(fn, repeats=3):
    """Median CPU time of ``fn()`` over ``repeats`` calls (and the last return value)."""
    times, out = [], None
    for _ in range(repeats):
        t = time.process_time()
        out = fn()
        times.append(time.process_time() - t)
    return float(np.median(times)), out

KW = dict(alpha="2", kappa="1", rho="1/100")


def _data(d, tau, seed=0):
    rng = np.random.default_rng(seed)
    n, ell = int(tau * d * d), 2 * d
    W = rng.standard_normal((d, d))[rng.integers(0, d, n)]
    w_hat, s = sampling.context_statistics_fast(rng, W, ell, 0.01)
    xq, yq = sampling.query(rng, W, 0.01)
    return xq, np.hstack([w_hat, s[:, None]]), yq


def equal_d(ds=(12, 16, 24, 32, 48, 64), taus=(4.0, 0.5)):
    rows = []
    for tau in taus:
        for d in ds:
            X, H, y = _data(d, tau)
            reg = 1e-6 * len(y) / d  # paper A's lambda = 1e-6, normalised (n/d) lambda
            reps = 3 if d <= 16 else 1
            t_naive, (g_naive, _) = median_time(lambda: solver.ridge_naive(X, H, y, reg), reps)
            t_struct, (g_struct, info) = median_time(
                lambda: solver.ridge_structured(X, H, y, reg), max(reps, 3))
            diff = np.abs(g_struct - g_naive).max() / np.abs(g_naive).max()
            rows.append([f"{tau:g}", d, len(y), d * (d + 1), info.method,
                         _fmt(t_naive), _fmt(t_struct), f"{t_naive / t_struct:.0f}x",
                         f"{diff:.1e}"])
    return rows


def samplers(ds=(16, 32, 48)):
    rows = []
    for d in ds:
        rng = np.random.default_rng(1)
        n, ell = 4 * d * d, 2 * d
        W = rng.standard_normal((n, d))
        t_dir, _ = median_time(lambda: sampling.context_statistics_direct(rng, W, ell, 0.01), 1)
        t_fast, _ = median_time(lambda: sampling.context_statistics_fast(rng, W, ell, 0.01), 3)
        rows.append([d, n, ell, _fmt(t_dir), _fmt(t_fast), f"{t_dir / t_fast:.0f}x"])
    return rows


def one_seed_time(d, tau):
    exp = make_experiment("isotropic", d, tau=str(tau), **KW)
    ss = seed_sequences(0, 1)[0]
    t = time.process_time()
    out = run_seed(exp, ss)
    return time.process_time() - t, out["ridge"]["method"]


def flops(d, tau):
    """Leading floating-point operation count of the structured ridge at dimension d:
    primal n P^2 (Gram by syrk) + P^3/3 (Cholesky); dual n^2 (d + p) (kernel) + n^3/3."""
    n, P = int(tau * d * d), d * (d + 1)
    if n >= P:
        return n * P**2 + P**3 / 3
    return n**2 * (2 * d + 1) + n**3 / 3


def largest_d(tau, ds):
    """Time one seed at each d; extrapolate to 600 s with the operation count of the largest
    measured size (its flop rate) and, for comparison, a power law through the last three."""
    times = []
    for d in ds:
        t, method = one_seed_time(d, tau)
        times.append((d, t, method))
    d_big, t_big, _ = times[-1]
    rate = flops(d_big, tau) / t_big  # one thread
    d600 = d_big
    while flops(d600 + 1, tau) / (2 * rate) < 600.0:  # two cores
        d600 += 1
    tail = times[-3:]
    slope = np.polyfit(np.log([d for d, _, _ in tail]), np.log([t for _, t, _ in tail]), 1)[0]
    return times, rate, slope, d600


def main():
    ctl = solver._controller()
    if ctl is None:
        raise SystemExit("the benchmark needs threadpoolctl (pip install threadpoolctl)")
    with ctl.limit(limits=1, user_api="blas"):
        _main()


def _main():
    rows_eq = equal_d()
    rows_s = samplers()
    fits = {}
    for tau, ds in ((4.0, (16, 24, 32, 48, 64, 80)), (0.5, (16, 32, 48, 64, 80, 96))):
        fits[tau] = largest_d(tau, ds)
    md = ["## Finite-size simulations: structured vs naive ridge, samplers, largest d", "",
          f"Machine: {machine_line()}. Times are CPU seconds with one BLAS thread (median of 3 "
          "where cheap); the 10-minute estimates assume the two cores halve the BLAS-bound "
          "time.", "",
          "Equal d, same data: naive dense solver (full n x d(d+1) design, LAPACK gelsd) vs "
          "the structured solver (chunked Khatri-Rao Gram + Cholesky when n >= P, kernel "
          "(X X^T) * (H H^T) when n < P). lambda = 1e-6 with the (n/d) lambda normalisation.",
          "",
          table(["tau", "d", "n", "P = d(d+1)", "structured form", "naive", "structured",
                 "speed-up", "max rel. diff of Gamma*"], rows_eq), "",
          "Context statistics for n = 4 d^2 contexts of length l = 2d: direct construction of "
          "the l x d data vs the exact-in-law O(d) sampler (2x2 Bartlett-Wishart draw plus one "
          "Gaussian d-vector per context).", "",
          table(["d", "n", "l", "direct", "fast", "speed-up"], rows_s), ""]
    for tau, (times, rate, slope, d600) in fits.items():
        n600 = int(tau * d600 * d600)
        P600 = int(d600 * (d600 + 1))
        mem = (8 * P600**2 if n600 >= P600 else 8 * n600**2) / 2**30
        md += [f"One full seed (data, ridge, both errors), tau = {tau:g}, alpha = 2, kappa = 1, "
               "CPU time with one thread: "
               + ", ".join(f"d={d}: {_fmt(t)} ({m})" for d, t, m in times)
               + f". Flop rate at the largest d: {rate / 1e9:.0f} GFLOP/s per core; with the "
               f"operation count (primal n P^2 + P^3/3, dual n^2 (2d+1) + n^3/3) a seed takes "
               f"10 minutes on 2 cores at "
               f"**d = {d600}** (estimated, not run; memory there about {mem:.1f} GiB). "
               f"Power-law exponent seen over the three largest d: {slope:.2f} "
               "(the asymptotic exponent is 6).", ""]
    d100 = 100 * 101
    md += [f"Memory at d = 100 (tau >= 1, primal): the Gram 8 P^2 = {8 * d100**2 / 2**30:.2f} GiB "
           "(Cholesky in place) plus a 64 MiB chunk: well inside 24 GiB. The n x P design that "
           f"the naive solver needs would be {8 * 4e4 * d100 / 2**30:.1f} GiB at tau = 4 (and "
           "gelsd needs workspace on top)."]
    write_section("simulate_speed", "\n".join(md))
    print("\n".join(md))


if __name__ == "__main__":
    main()
