"""Finite-size simulation machinery: solvers, samplers, test-error formulas, reproducibility."""

from __future__ import annotations


import numpy as np
import pytest
import scipy.stats

import replica
from replica.errors import ParameterError
from replica.simulate import make_experiment, run_seed, seed_sequences, simulate
from replica.simulate import evaluate, sampling, solver


def _data(rng, d, n, ell, noise, with_s=True):
    W = rng.standard_normal((n, d))
    w_hat, s = sampling.context_statistics_fast(rng, W, ell, noise)
    xq, yq = sampling.query(rng, W, noise)
    H = np.hstack([w_hat, s[:, None]]) if with_s else w_hat
    return xq, H, yq


# ---------------------------------------------------------------------------------------------
# Structured solvers equal the dense reference
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("with_s", [True, False])
@pytest.mark.parametrize("reg", [0.0, 0.7])
@pytest.mark.parametrize("n_factor", [0.6, 2.5])  # n < P (dual) and n > P (primal)
def test_structured_equals_naive(with_s, reg, n_factor):
    rng = np.random.default_rng(11)
    d = 6
    P = d * (d + 1 if with_s else d)
    n = int(n_factor * P)
    X, H, y = _data(rng, d, n, 9, 0.2, with_s)
    ref, _ = solver.ridge_naive(X, H, y, reg)
    scale = np.abs(ref).max()
    for method in ("auto", "primal", "dual"):
        if reg == 0 and ((method == "primal" and n < P) or (method == "dual" and n > P)):
            continue  # the ridgeless limit is only well posed in the matching form
        got, info = solver.ridge_structured(X, H, y, reg, method, chunk_bytes=8 * P * 7)
        assert info.factor == "cholesky"
        assert np.abs(got - ref).max() <= 1e-10 * scale, method
    _, info = solver.ridge_structured(X, H, y, reg)
    assert info.method == ("dual" if n < P else "primal")


def test_singular_system_falls_back_to_the_pseudo_inverse():
    v = np.array([1.0, 2.0, 2.0])
    builds = []

    def build():
        builds.append(1)
        return np.asfortranarray(np.outer(v, v))  # rank one: Cholesky meets a zero pivot

    x, how = solver._spd_solve(build, v.copy(), upper_only=False)
    assert how == "eigh-pinv" and len(builds) == 2
    assert np.allclose(x, v / (v @ v))  # the minimum-norm solution A^+ b


def test_primal_chunking_is_exact_and_never_builds_the_design(monkeypatch):
    """The primal Gram is accumulated chunk by chunk: no Khatri-Rao block has more rows than a
    chunk, and the result does not depend on the chunk size."""
    rng = np.random.default_rng(3)
    d, n = 5, 400
    X, H, y = _data(rng, d, n, 7, 0.1)
    P = d * (d + 1)
    rows = []
    real = solver.khatri_rao_rows

    def spy(a, b):
        rows.append(a.shape[0])
        return real(a, b)

    monkeypatch.setattr(solver, "khatri_rao_rows", spy)
    g1, _ = solver.ridge_primal(X, H, y, 0.0, chunk_bytes=8 * P * 37)
    assert max(rows) == 37 and sum(rows) == n
    g2, _ = solver.ridge_primal(X, H, y, 0.0, chunk_bytes=8 * P * n)
    assert np.abs(g1 - g2).max() <= 1e-11 * np.abs(g2).max()


def test_ridge_normalisations_in_run_seed():
    """run_seed with the naive solver and with the structured one give the same errors (both
    use the paper's regulariser: (n/d) lambda for papers A/B, lambda M0 for lowrank)."""
    for model, params in (("isotropic", dict(alpha=2, tau="1/2", kappa=1, rho="0.1", lam="0.3")),
                          ("alignment", dict(alpha=1, tau=2, kappa="1/2", rho="0.1", lam="0.2",
                                             train="piano", test="spike:2")),
                          ("lowrank", dict(alpha=2, tau=2, kappa=1, rho="0.5", sigma="0.3",
                                           lam="0.5"))):
        ss = seed_sequences(5, 1)[0]
        a = run_seed(make_experiment(model, 6, solver="naive", **params), ss)
        b = run_seed(make_experiment(model, 6, **params), ss)
        for k in a["errors"]:
            assert a["errors"][k] == pytest.approx(b["errors"][k], rel=1e-9)


def test_regulariser_follows_each_papers_normalisation():
    from replica.simulate.experiment import regulariser

    e = make_experiment("lowrank", 10, alpha=2, tau=2, kappa="0.7", rho="0.5", sigma=0, lam="0.3")
    assert regulariser(e) == pytest.approx(0.3 * 7)  # lambda M0, M0 = k = 7 (not n)
    e = make_experiment("isotropic", 10, alpha=2, tau=2, kappa="0.7", rho=0, lam="0.3")
    assert regulariser(e) == pytest.approx(0.3 * 200 / 10)  # (n/d) lambda
    e = make_experiment("alignment", 10, alpha=2, tau="1/2", kappa=1, rho=0, lam=2,
                        train="piano", test="identity")
    assert regulariser(e) == pytest.approx(2 * 50 / 10)


def test_ridge_regulariser_value_matters():
    """The regulariser is (n/d) lambda: doubling lambda on the run equals doubling n/d."""
    rng = np.random.default_rng(4)
    d, n = 4, 30
    X, H, y = _data(rng, d, n, 6, 0.2)
    lam = 0.4
    g, _ = solver.ridge_structured(X, H, y, n * lam / d)
    # stationarity of  sum (y - <G, H>)^2 + (n/d) lam |G|^2
    Phi = solver.khatri_rao_rows(X, H)
    grad = -2 * Phi.T @ (y - Phi @ g.ravel()) + 2 * (n / d) * lam * g.ravel()
    assert np.abs(grad).max() < 1e-10


# ---------------------------------------------------------------------------------------------
# Fast sampler: exact in law given w
# ---------------------------------------------------------------------------------------------
def _moment_z(samples, exact):
    """z-scores of sample means against exact expectations (per entry)."""
    mean = samples.mean(axis=0)
    sem = samples.std(axis=0, ddof=1) / np.sqrt(samples.shape[0])
    return (mean - exact) / sem


@pytest.mark.parametrize("w_scale, noise", [(1.0, 0.3), (1.7, 0.0), (0.0, 0.5)])
def test_fast_sampler_first_two_moments(w_scale, noise):
    """Both samplers reproduce E[h|w] and E[h h^T|w] (exact, sampling.conditional_moments), and
    agree with each other in distribution (two-sample KS tests on s and on w.w_hat)."""
    d, ell, N = 4, 6, 120_000
    w = w_scale * np.array([1.2, -0.4, 0.9, 0.3])
    mean, second = sampling.conditional_moments(w, ell, noise)
    iu = np.triu_indices(d + 1)
    hs = {}
    for name in ("fast", "direct"):
        rng = np.random.default_rng(21 if name == "fast" else 22)
        w_hat, s = sampling.SAMPLERS[name](rng, np.tile(w, (N, 1)), ell, noise)
        h = np.hstack([w_hat, s[:, None]])
        hs[name] = h
        z1 = _moment_z(h, mean)
        outer = (h[:, :, None] * h[:, None, :])[:, iu[0], iu[1]]
        z2 = _moment_z(outer, second[iu])
        assert np.abs(z1).max() < 4.5, (name, z1)
        assert np.abs(z2).max() < 4.5, (name, z2)
    for stat in (lambda h: h[:, -1], lambda h: h[:, :d] @ (w + 0.3), lambda h: h[:, 0]):
        p = scipy.stats.ks_2samp(stat(hs["fast"]), stat(hs["direct"])).pvalue
        assert p > 1e-4


def test_fast_sampler_is_cheap_and_shapes():
    rng = np.random.default_rng(0)
    W = rng.standard_normal((50, 7))
    w_hat, s = sampling.context_statistics_fast(rng, W, 1, 0.1)  # ell = 1: no chi2(0) draw
    assert w_hat.shape == (50, 7) and s.shape == (50,) and np.all(s >= 0)


# ---------------------------------------------------------------------------------------------
# Tasks
# ---------------------------------------------------------------------------------------------
def test_task_laws():
    rng = np.random.default_rng(1)
    A = sampling.haar_subspace(rng, 12, 5)
    assert np.allclose(A.T @ A, np.eye(5), atol=1e-12)
    W = sampling.lowrank_tasks(rng, A, 20000)
    R = W.T @ W / len(W)
    assert np.abs(R - (12 / 5) * A @ A.T).max() < 0.15  # covariance P / rho
    assert np.allclose(W @ (np.eye(12) - A @ A.T), 0, atol=1e-10)  # in the subspace
    S = sampling.sphere_tasks(rng, 100, 9)
    assert np.allclose(np.linalg.norm(S, axis=1), 3.0)
    F = sampling.fresh_subspace_tasks(rng, 40000, 10, 3)
    norms = np.einsum("ij,ij->i", F, F) / 10
    assert norms.mean() == pytest.approx(1.0, abs=0.03)
    assert (norms**2).mean() == pytest.approx(1 + 2 / 3, abs=0.06)
    idx = sampling.assign_tasks(rng, 12, 4, balanced=True)
    assert np.bincount(idx).tolist() == [3, 3, 3, 3]


# ---------------------------------------------------------------------------------------------
# Test errors: closed form against Monte Carlo
# ---------------------------------------------------------------------------------------------
def _some_gamma(rng, d, p):
    g = 0.25 * rng.standard_normal((d, p)) / np.sqrt(d)
    g[:, :d] += 0.6 * np.eye(d)
    return g


@pytest.mark.parametrize("case", ["gaussian-mean", "empirical", "lowrank-odg"])
def test_trace_formula_matches_monte_carlo(case):
    rng = np.random.default_rng(7)
    d, ell, noise, N = 6, 10, 0.2, 300_000
    if case == "gaussian-mean":
        diag = np.linspace(0.3, 1.8, d)
        mu = np.linspace(-0.5, 0.5, d)
        mom = evaluate.TaskMoments.gaussian(np.diag(diag), mu)
        draw = lambda r, m: mu + sampling.gaussian_tasks(r, m, d, diag=diag)  # noqa: E731
        gamma = _some_gamma(rng, d, d + 1)
    elif case == "empirical":
        W0 = sampling.sphere_tasks(rng, 5, d) * np.linspace(0.5, 1.5, 5)[:, None]
        mom = evaluate.TaskMoments.empirical(W0)
        draw = lambda r, m: W0[r.integers(0, 5, m)]  # noqa: E731
        gamma = _some_gamma(rng, d, d + 1)
    else:
        mom = evaluate.TaskMoments.fresh_subspace(d, 2)
        draw = lambda r, m: sampling.fresh_subspace_tasks(r, m, d, 2)  # noqa: E731
        gamma = _some_gamma(rng, d, d)
    exact = evaluate.expected_error(gamma, mom, ell, noise)
    mc, sem = evaluate.monte_carlo_error(gamma, rng, draw, ell, noise, N)
    assert abs(mc - exact) < 4 * sem, (mc, exact, sem)
    assert sem < 0.01 * exact


def test_paper_a_trace_formula_is_the_large_d_limit():
    """Paper A's formula drops O(1/l) and O(1/d) terms: its gap to the exact expectation shrinks
    like 1/d at fixed alpha for the shrinkage estimator Gamma = [C (C + s I)^-1, 0]."""
    gaps = []
    for d in (20, 80):
        C = np.diag(np.arange(d, 0, -1.0))  # piano, normalised to trace d
        C *= d / np.trace(C)
        gamma = np.hstack([C @ np.linalg.inv(C + 0.5 * np.eye(d)), np.zeros((d, 1))])
        ex = evaluate.expected_error(gamma, evaluate.TaskMoments.gaussian(C), 2 * d, 0.1)
        pa = evaluate.paper_a_trace_formula(gamma, C, 0.1, 2.0)
        gaps.append(abs(ex - pa))
    assert gaps[1] < 0.4 * gaps[0] and gaps[1] < 0.01


def test_lowrank_error_is_e1_with_finite_d_order_parameters():
    """For Gamma D x D and the training-task law, the exact expected error is (E1) written with
    the finite-D order parameters: sigma~^2 + TrS/D - 2m + (1 + 1/L~) q + (D/L~)(TrS/D +
    sigma~^2) qbar."""
    rng = np.random.default_rng(2)
    D, r, k, L = 9, 4, 13, 17
    A = sampling.haar_subspace(rng, D, r)
    W0 = sampling.lowrank_tasks(rng, A, k)
    gamma = _some_gamma(rng, D, D)
    op = evaluate.lowrank_order_parameters(gamma, W0, A)
    trS = np.einsum("ij,ij->", W0, W0) / (k * D)
    s2 = 0.09
    e1 = s2 + trS - 2 * op["m"] + (1 + 1 / L) * op["q"] + (D / L) * (trS + s2) * op["qbar"]
    got = evaluate.expected_error(gamma, evaluate.TaskMoments.empirical(W0), L, s2)
    assert got == pytest.approx(e1, rel=1e-12)
    ident = evaluate.lowrank_order_parameters(np.eye(D), W0, A)
    assert ident["qbar"] == ident["mbar"] == pytest.approx(1.0)
    assert ident["q0"] == pytest.approx(1.0) and ident["m0"] == pytest.approx(1.0)
    assert ident["q"] == pytest.approx(trS) and ident["m"] == pytest.approx(trS)


# ---------------------------------------------------------------------------------------------
# Experiments: sizes, seeds, validation
# ---------------------------------------------------------------------------------------------
def test_sizes_are_exact_floors():
    e = make_experiment("lowrank", 70, alpha="2.3", tau="1.7", kappa="0.5", rho="0.2",
                        sigma="0.003", lam=3)
    assert e.sizes == {"ell": 161, "n": 8330, "k": 35, "ell_test": 161, "r": 14, "P": 4900}
    e = make_experiment("isotropic", 10, alpha="0.3", tau=2, kappa="inf", rho=0)
    assert e.sizes["ell"] == 3 and e.sizes["k"] is None  # 0.3 * 10 is exactly 3
    e = make_experiment("isotropic", 10, alpha=1, tau="2.03", kappa="0.3", rho=0, balanced=True)
    assert e.sizes["k"] == 3 and e.sizes["n"] == 204  # round(203 / 3) = 68 repetitions


def test_seeds_are_reproducible_and_prefix_stable():
    kw = dict(alpha=2, tau=2, kappa="1/2", rho="0.1", with_theory=False)
    a = simulate("isotropic", 6, seeds=3, seed=9, **kw)
    b = simulate("isotropic", 6, seeds=2, seed=9, **kw)
    c = simulate("isotropic", 6, seeds=2, seed=10, **kw)
    assert [r["errors"] for r in a.per_seed[:2]] == [r["errors"] for r in b.per_seed]
    assert a.per_seed[0]["errors"] != c.per_seed[0]["errors"]


def test_monte_carlo_option_agrees_with_closed_form():
    kw = dict(alpha=2, tau=3, kappa=1, rho="0.1", with_theory=False)
    exact = simulate("isotropic", 6, seeds=2, seed=1, **kw)
    mc = simulate("isotropic", 6, seeds=2, seed=1, test_prompts=60000, **kw)
    for k in ("e_icl", "e_idg"):
        for a, b in zip(exact.per_seed, mc.per_seed):
            assert b["errors"][k] == pytest.approx(a["errors"][k], rel=0.04)


def test_direct_sampler_option_runs_the_same_pipeline():
    kw = dict(alpha=2, tau=3, kappa=1, rho="0.1", with_theory=False)
    fast = simulate("isotropic", 6, seeds=30, **kw)
    direct = simulate("isotropic", 6, seeds=30, sampler="direct", **kw)
    for k in ("e_icl", "e_idg"):
        a, b = fast.errors[k], direct.errors[k]
        assert abs(a.mean - b.mean) < 4 * np.hypot(a.sem, b.sem)


@pytest.mark.parametrize("model, kwargs, option", [
    ("isotropic", dict(alpha=0, tau=1, kappa=1, rho=0), "--alpha"),
    ("isotropic", dict(alpha=1, tau=1, kappa=1, rho=0), "--tau"),  # ridgeless at tau = 1
    ("isotropic", dict(alpha=1, tau=2, kappa="0.01", rho=0), "--kappa"),  # k = 0 at d = 8
    ("isotropic", dict(alpha=1, tau=2, kappa=1, rho="-1"), "--rho"),
    ("isotropic", dict(alpha="x", tau=2, kappa=1, rho=0), "--alpha"),
    ("lowrank", dict(alpha=1, tau=2, kappa=1, rho="1.5", sigma=0), "--rho"),
    ("lowrank", dict(alpha=1, tau="0.5", kappa=1, rho="0.5", sigma=0), "--lam"),
    ("lowrank", dict(alpha=1, tau=2, kappa="inf", rho="0.5", sigma=0), "--kappa"),
    ("lowrank", dict(alpha=1, tau=2, kappa=1, rho="0.5", sigma="-0.1"), "--sigma"),
    ("alignment", dict(alpha=1, tau=2, kappa=1, rho=0, train="spike:9", test="identity"),
     "--train"),
    ("alignment", dict(alpha=1, tau=2, kappa=1, rho=0, train="piano", test="identity",
                       task_law="sphere"), "--task-law"),
])
def test_bad_parameters(model, kwargs, option):
    with pytest.raises(ParameterError) as exc:
        simulate(model, 8, seeds=1, with_theory=False, **kwargs)
    assert str(exc.value).startswith(option)


def test_theory_at_realised_ratios():
    """--theory-at realised evaluates the theory at ell/d, n/d^2, k/d, r/D of the integer sizes."""
    from fractions import Fraction

    from replica.simulate import make_experiment
    from replica.simulate.experiment import theory_result

    exp = make_experiment("lowrank", 32, alpha="2.3", tau="1.7", kappa="1", rho="0.2",
                          sigma="0.003", lam="3")
    eff = exp.effective()
    assert eff["rho"] == Fraction(6, 32) and eff["alpha"] == Fraction(73, 32)
    r = theory_result(exp, 20, at="realised")
    ref = replica.solve("lowrank", alpha=eff["alpha"], tau=eff["tau"], kappa=eff["kappa"],
                        rho=eff["rho"], sigma="0.003", lam="3", dps=20, verify=False)
    assert abs(r["q0"] - ref["q0"]) < 1e-15
    nominal = theory_result(exp, 20)
    assert abs(nominal["q0"] - r["q0"]) > 1e-3  # the rounding offset it removes
    assert any("realised value" in n for n in exp.notes("realised"))
