"""Finite-size simulations: side by side with the authors' code, CG vs direct ridge, samplers,
how far d can go.

1. **Side by side** (tau = 4, primal): one seed of the authors' simulation (paper A's
   ``final_gamma`` + ``trace_formula_gamma``, loaded from the checkout named by
   ``$REPLICA_AUTHORS_A``; it is fetched for the measurement and never part of this repository)
   against one seed of ``replica`` with ``--solver direct`` (chunked Khatri--Rao Gram + Cholesky)
   and ``--solver cg`` (preconditioned conjugate gradients) at d = 32, 64, 80, 120, interleaved.
   The baseline is validated first: on the same data the authors' ridge and replica's give the
   same Gamma*. Without ``$REPLICA_AUTHORS_A`` the authors' column reads "not run".
2. **Dual** (tau = 1/2): the authors' seed against replica's kernel solve.
3. **A figure's scores**: one trained Gamma on five test covariances (the authors' ``run.py``
   loop) against ``replica simulate --test A,B,...``.
4. **Equal d** against the naive dense solver, and the two context samplers.
5. **Largest d in 10 minutes**: one full seed at growing d (tau = 4: CG; tau = 1/2: dual); the
   flop rate at the largest measured d and the operation count give the d at which a seed takes
   10 minutes on one core (nothing is run for 10 minutes).

Timing: CPU seconds of this process (``time.process_time``) with **one** BLAS thread, for the
authors' code as for replica. On a shared machine wall-clock times depend on the other
processes; CPU time with one thread does not (much). No GPU was available for these
measurements.

Run: ``REPLICA_AUTHORS_A=/path/to/task_alignment_governs_icl_preprint python -m
benchmarks.simulate_speed`` (rewrites its section of ``benchmarks/README.md``).
"""

from __future__ import annotations

import time

import numpy as np

from replica.simulate import make_experiment, run_seed, sampling, seed_sequences, solver
from replica.simulate.experiment import with_scores

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


def flops(d, tau, iterations=34):
    """Leading floating-point operation count of the ridge solve ``auto`` picks at dimension d:
    dual n^2 (d + p) (kernel) + n^3/3; CG ``iterations`` x 4 n d p (two products per matvec);
    direct primal n P^2 (Gram by syrk) + P^3/3 (Cholesky)."""
    n, P = int(tau * d * d), d * (d + 1)
    method = solver.choose_method(n, P)
    if method == "dual":
        return n**2 * (2 * d + 1) + n**3 / 3
    if method == "cg":
        return iterations * 4 * n * P
    return n * P**2 + P**3 / 3


def largest_d(tau, ds):
    """Time one seed at each d; extrapolate to 600 s on one core with the operation count of the
    largest measured size (its flop rate) and, for comparison, a power law through the last
    three."""
    times = []
    for d in ds:
        t, method = one_seed_time(d, tau)
        times.append((d, t, method))
    d_big, t_big, _ = times[-1]
    rate = flops(d_big, tau) / t_big  # one thread
    d600 = d_big
    while flops(d600 + 1, tau) / rate < 600.0:
        d600 += 1
    tail = times[-3:]
    slope = np.polyfit(np.log([d for d, _, _ in tail]), np.log([t for _, t, _ in tail]), 1)[0]
    return times, rate, slope, d600


# ---------------------------------------------------------------------------------------------
# Side by side with the authors' simulation code (paper A), fetched for the measurement only
# ---------------------------------------------------------------------------------------------
AUTHORS_ENV = "REPLICA_AUTHORS_A"
ALIGN = dict(alpha="2", kappa="1", rho="1/100", lam="1/1000000", train="piano", test="piano")


def authors_module():
    """Paper A's ``Linear_Simulations/Error_Against_Kappa/common.py`` from the checkout named by
    ``$REPLICA_AUTHORS_A`` (the repository root or that folder), or ``None``."""
    import importlib.util
    import os

    root = os.environ.get(AUTHORS_ENV)
    if not root:
        return None
    for path in (os.path.join(root, "Linear_Simulations", "Error_Against_Kappa", "common.py"),
                 os.path.join(root, "common.py")):
        if os.path.exists(path):
            spec = importlib.util.spec_from_file_location("authors_a_common", path)
            mod = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(mod)
            return mod
    raise SystemExit(f"${AUTHORS_ENV}={root} holds no Linear_Simulations/.../common.py")


def authors_commit():
    import os
    import subprocess

    root = os.environ.get(AUTHORS_ENV, "")
    try:
        return subprocess.run(["git", "-C", root, "rev-parse", "HEAD"], capture_output=True,
                              text=True, check=True).stdout.strip()[:12]
    except (OSError, subprocess.CalledProcessError):
        return "unknown commit"


def authors_seed(mod, d, tau, covs):
    """One seed as the authors' ``run.py`` does it: ``final_gamma`` (fast per-context sampler in
    a Python loop, dense Gram ``H H^T``, ``np.linalg.solve``), then ``trace_formula_gamma`` on
    each test covariance. CPU time."""
    np.random.seed(0)
    t = time.process_time()
    gamma = mod.final_gamma(d, tau, 2.0, 1.0, 0.01, covs[0], lam=1e-6)
    errs = [mod.trace_formula_gamma(d, 0.01, 2 * d, np.zeros(d), c, gamma) for c in covs]
    return time.process_time() - t, errs


def replica_seed(d, tau, method, tests=("piano",)):
    """One seed of ``replica simulate alignment`` (data, ridge, every test row): CPU time and
    the run_seed output."""
    exp = make_experiment("alignment", d, tau=str(tau), solver=method,
                          **dict(ALIGN, test=tests[0]))
    if len(tests) > 1:
        exp = with_scores(exp, test=list(tests))
    ss = seed_sequences(0, 1)[0]
    t = time.process_time()
    out = run_seed(exp, ss)
    return time.process_time() - t, out


def validate_authors(mod, d=24, tau=4):
    """The authors' ridge (``compute_Gamma_star``: the n x P design of vec(x_q h^T), its Gram,
    ``inv``) on the same data as replica's CG and direct solves: largest relative difference."""
    X, H, y = _data(d, tau)
    n = len(y)
    reg = 1e-6 * n / d
    H_Z = X[:, :, None] * H[:, None, :]
    g_auth = mod.compute_Gamma_star(n, d, H_Z, y, 1e-6)
    g_cg, _ = solver.ridge_cg(X, H, y, reg)
    g_dir, _ = solver.ridge_primal(X, H, y, reg)
    rel = lambda a, b: float(np.abs(a - b).max() / np.abs(b).max())  # noqa: E731
    return rel(g_cg, g_auth), rel(g_dir, g_auth)


def side_by_side(ds=(32, 64, 80, 120), authors_up_to=80, direct_up_to=80):
    """tau = 4: the authors' seed, replica's direct primal (the solver of main) and CG, one
    BLAS thread each, interleaved at each d."""
    from replica.spectra import parse_spec

    mod = authors_module()
    rows, raw = [], []
    for d in ds:
        cov = parse_spec("piano", d).matrix_f64()
        t_a = authors_seed(mod, d, 4, [cov])[0] if mod and d <= authors_up_to else None
        t_dir, out_dir = (replica_seed(d, 4, "direct") if d <= direct_up_to else (None, None))
        t_cg, out_cg = replica_seed(d, 4, "cg")
        e_cg = out_cg["errors"]["e_icl"]
        diff = (abs(e_cg - out_dir["errors"]["e_icl"]) / out_dir["errors"]["e_icl"]
                if out_dir else None)
        raw.append((d, t_a, t_dir, t_cg))
        rows.append([d, 4 * d * d, d * (d + 1), _fmt(t_a) if t_a else "not run",
                     _fmt(t_dir) if t_dir else "not run", _fmt(t_cg),
                     out_cg["ridge"]["iterations"],
                     f"{t_a / t_cg:.0f}x" if t_a else "-",
                     f"{t_dir / t_cg:.0f}x" if t_dir else "-",
                     f"{diff:.1e}" if diff is not None else "-"])
    return rows, raw


def dual_side_by_side(ds=(64, 96), authors_up_to=64):
    from replica.spectra import parse_spec

    mod = authors_module()
    rows = []
    for d in ds:
        cov = parse_spec("piano", d).matrix_f64()
        t_a = authors_seed(mod, d, 0.5, [cov])[0] if mod and d <= authors_up_to else None
        t_r, out = replica_seed(d, "1/2", "auto")
        rows.append([d, d * d // 2, _fmt(t_a) if t_a else "not run", _fmt(t_r),
                     out["ridge"]["method"], f"{t_a / t_r:.0f}x" if t_a else "-"])
    return rows


FIGURE_TESTS = ("piano", "identity", "powerlaw:1/2", "spike:1", "lowrank:1/2")


def figure_scores(d=32):
    """A figure's worth of scores: one trained Gamma on five test covariances (the authors'
    run.py pattern) against replica's ``--test A,B,...`` rows."""
    from replica.spectra import parse_spec

    mod = authors_module()
    covs = [parse_spec(spec, d).matrix_f64() for spec in FIGURE_TESTS]
    t_a = authors_seed(mod, d, 4, covs)[0] if mod else None
    t_r, out = replica_seed(d, 4, "auto", FIGURE_TESTS)
    assert len(out["scores"]) == len(FIGURE_TESTS)
    return t_a, t_r


def main():
    ctl = solver._controller()
    if ctl is None:
        raise SystemExit("the benchmark needs threadpoolctl (pip install threadpoolctl)")
    with ctl.limit(limits=1, user_api="blas"):
        _main()


def _main():
    mod = authors_module()
    val = validate_authors(mod) if mod else None
    rows_side, raw = side_by_side()
    rows_dual = dual_side_by_side()
    t_fig_a, t_fig_r = figure_scores()
    rows_eq = equal_d(ds=(12, 16, 24, 32, 48))
    rows_s = samplers()
    fits = {}
    for tau, ds in ((4.0, (32, 48, 64, 80, 96, 120)), (0.5, (16, 32, 48, 64, 80, 96))):
        fits[tau] = largest_d(tau, ds)
    who = (f"the authors' code (paper A, `Linear_Simulations/Error_Against_Kappa/common.py` at "
           f"commit {authors_commit()}, fetched for the measurement and not part of this "
           "repository)" if mod else
           f"the authors' code (not run: set ${AUTHORS_ENV} to a checkout of "
           "Pehlevan-Group/task_alignment_governs_icl_preprint)")
    md = ["## Finite-size simulations: side by side with the authors' code, CG vs direct, "
          "largest d", "",
          f"Machine: {machine_line()}, shared with other jobs. Times are CPU seconds of the "
          "process with one BLAS thread (the authors' code too), one seed, at each d run one "
          "after the other (interleaved), alignment model with piano training and testing, "
          "alpha = 2, kappa = 1, rho = 0.01, lambda = 1e-6 in the (n/d) lambda normalisation "
          "(the authors' default). No GPU was available for this measurement: the optional "
          "torch backend (`--backend torch`) is tested on the CPU only.", ""]
    if val:
        md += [f"Validation of the baseline: on the same data (d = 24, tau = 4) the authors' "
               f"ridge (`compute_Gamma_star`: dense design, Gram, `inv`) and replica's solves "
               f"give the same Gamma* to a largest relative difference of {val[0]:.1e} (CG) "
               f"and {val[1]:.1e} (direct Cholesky).", ""]
    md += [f"tau = 4 (n = 4 d^2 > P, primal): {who}, i.e. `final_gamma` (per-context sampler "
           "in a Python loop, dense Gram H H^T, `np.linalg.solve`) plus `trace_formula_gamma`; "
           "replica `--solver direct` (chunked Khatri-Rao Gram by syrk + Cholesky, the solver "
           "of the main branch) and `--solver cg` (preconditioned conjugate gradients, relative "
           "residual 1e-10; `auto` picks it here). Each replica seed includes the data, the "
           "ridge solve and both exact test errors.", "",
           table(["d", "n", "P", "authors", "replica direct", "replica cg", "CG iterations",
                  "authors / cg", "direct / cg", "rel. diff e_icl (cg vs direct)"], rows_side),
           ""]
    big = [r for r in raw if r[2] is None and r[0] > 80]
    if big:
        d80 = [r for r in raw if r[0] == 80][0]
        for d, _, _, t_cg in big:
            est = d80[2] * flops_direct(d) / flops_direct(80)
            est_a = (d80[1] * flops_direct(d) / flops_direct(80)) if d80[1] else None
            md += [f"At d = {d} the direct solve was not run (estimated from d = 80 by its "
                   f"operation count n P^2 + P^3/3: {_fmt(est)}, i.e. {est / t_cg:.0f}x the "
                   "CG seed"
                   + (f"; the authors' code, which forms the Gram the same way, about "
                      f"{_fmt(est_a)}, {est_a / t_cg:.0f}x" if est_a else "") + ").", ""]
    md += ["tau = 1/2 (n < P, dual kernel solve, replica `auto`):", "",
           table(["d", "n", "authors", "replica", "replica form", "authors / replica"],
                 rows_dual), "",
           "A figure's worth of scores, d = 32, tau = 4: one trained Gamma scored on five test "
           f"covariances ({', '.join(FIGURE_TESTS)}): the authors' `run.py` pattern "
           + (f"{_fmt(t_fig_a)}" if t_fig_a else "(not run)")
           + f"; replica `simulate --test {','.join(FIGURE_TESTS)}` (one training, five exact "
           f"error rows) {_fmt(t_fig_r)}"
           + (f", {t_fig_a / t_fig_r:.0f}x." if t_fig_a else "."), "",
           "Equal d, same data: naive dense solver (full n x d(d+1) design, LAPACK gelsd) vs "
           "the structured solver `auto` picks (CG for P >= 1000 and n >= 2P, Cholesky of the "
           "chunked Gram below, kernel (X X^T) * (H H^T) when n < P). lambda = 1e-6 with the "
           "(n/d) lambda normalisation.", "",
           table(["tau", "d", "n", "P = d(d+1)", "structured form", "naive", "structured",
                  "speed-up", "max rel. diff of Gamma*"], rows_eq), "",
           "Context statistics for n = 4 d^2 contexts of length l = 2d: direct construction of "
           "the l x d data vs the exact-in-law O(d) sampler (2x2 Bartlett-Wishart draw plus one "
           "Gaussian d-vector per context).", "",
           table(["d", "n", "l", "direct", "fast", "speed-up"], rows_s), ""]
    for tau, (times, rate, slope, d600) in fits.items():
        n600 = int(tau * d600 * d600)
        P600 = int(d600 * (d600 + 1))
        method = solver.choose_method(n600, P600)
        mem = {"dual": 8 * n600**2, "cg": 8 * 6 * n600 * (d600 + 1),
               "primal": 8 * P600**2}[method] / 2**30
        md += [f"One full seed (data, ridge, both errors), isotropic, tau = {tau:g}, alpha = 2, "
               "kappa = 1, CPU time with one thread: "
               + ", ".join(f"d={d}: {_fmt(t)} ({m})" for d, t, m in times)
               + f". Flop rate at the largest d: {rate / 1e9:.0f} GFLOP/s; with the operation "
               "count (CG 34 x 4 n d p, dual n^2 (2d+1) + n^3/3) a seed takes 10 minutes on one "
               f"core at **d = {d600}** (estimated, not run; memory there about {mem:.1f} GiB). "
               f"Power-law exponent seen over the three largest d: {slope:.2f} (asymptotically "
               "5 for CG, 6 for the dual).", ""]
    write_section("simulate_speed", "\n".join(md))
    print("\n".join(md))


def flops_direct(d, tau=4):
    n, P = int(tau * d * d), d * (d + 1)
    return n * P**2 + P**3 / 3


if __name__ == "__main__":
    main()
