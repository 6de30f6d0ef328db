"""The conjugate-gradient primal solver, its array backends, and scoring one trained Gamma on
several test laws and lengths."""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest

from replica import cli
from replica.errors import ConvergenceError, ParameterError
from replica.simulate import (evaluate, make_experiment, run_seed, sampling, seed_sequences,
                              simulate, solver, sweep)
from replica.simulate.backend import torch_available


def _data(d, n, ell=None, k=None, with_s=True, seed=3, noise=0.01):
    """Pretraining data of k tasks (a fresh task per context if k is None)."""
    rng = np.random.default_rng(seed)
    ell = ell or 2 * d
    W = rng.standard_normal((k or n, d))
    if k:
        W = W[rng.integers(0, k, n)]
    w_hat, s = sampling.context_statistics_fast(rng, W, ell, noise)
    xq, yq = sampling.query(rng, W, noise)
    H = np.hstack([w_hat, s[:, None]]) if with_s else w_hat
    return xq, H, yq


def _dense_gram(X, H, reg):
    Phi = solver.khatri_rao_rows(X, H)
    return Phi.T @ Phi + reg * np.eye(Phi.shape[1])


def test_matvec_is_the_dense_gram():
    X, H, _ = _data(5, 70)
    G = np.random.default_rng(0).standard_normal((5, 6))
    xp = solver_backend()
    got = solver.gram_matvec(xp, X, H, G, 0.3)
    want = (_dense_gram(X, H, 0.3) @ G.ravel()).reshape(5, 6)
    assert np.abs(got - want).max() <= 1e-12 * np.abs(want).max()


def solver_backend():
    from replica.simulate.backend import array_module

    return array_module("numpy")


@pytest.mark.parametrize("with_s", [True, False])
@pytest.mark.parametrize("reg", [0.0, 0.5])
@pytest.mark.parametrize("k", [None, 12])
def test_cg_agrees_with_the_direct_solve_within_its_stated_tolerance(with_s, reg, k):
    """The relative error of Gamma is at most cond(A) * rtol (the residual bound), and the
    expected test error agrees to 1e-9 relative."""
    d = 12
    P = d * (d + 1 if with_s else d)
    X, H, y = _data(d, 4 * P, k=k, with_s=with_s)
    ref, _ = solver.ridge_primal(X, H, y, reg)
    got, info = solver.ridge_cg(X, H, y, reg)
    assert info.method == "cg" and info.residual <= solver.CG_RTOL and info.iterations < 80
    ev = np.linalg.eigvalsh(_dense_gram(X, H, reg))
    rel = np.linalg.norm(got - ref) / np.linalg.norm(ref)
    assert rel <= (ev[-1] / ev[0]) * solver.CG_RTOL
    assert rel <= 1e-8
    mom = evaluate.TaskMoments.gaussian(np.eye(d))
    if with_s:
        e_ref, e_got = (evaluate.expected_error(g, mom, 2 * d, 0.01) for g in (ref, got))
        assert abs(e_got - e_ref) <= 1e-9 * e_ref


def test_a_wrong_matvec_is_caught_by_the_comparison():
    """The comparison with the direct solve can fail: CG with a Gram operator that pairs each
    query with the wrong context converges (to its own system) but far from the ridge solution."""
    d = 10
    X, H, y = _data(d, 4 * d * (d + 1))
    ref, _ = solver.ridge_primal(X, H, y, 0.0)

    def shifted(xp, X, H, G, reg):
        return solver.gram_matvec(xp, X, np.roll(H, 1, axis=0), G, reg)

    got, info = solver.ridge_cg(X, H, y, 0.0, matvec=shifted)
    assert np.linalg.norm(got - ref) / np.linalg.norm(ref) > 1e-2


def test_preconditioner_is_exact_when_queries_and_contexts_decouple():
    """If every query meets every context (all pairs), the Gram matrix is exactly
    (X^T X) kron (H^T H) / n, the preconditioner is its inverse and CG stops after one step."""
    rng = np.random.default_rng(5)
    d, p, a, b = 4, 5, 7, 9
    xs, hs = rng.standard_normal((a, d)), rng.standard_normal((b, p))
    X, H = np.repeat(xs, b, axis=0), np.tile(hs, (a, 1))
    y = rng.standard_normal(a * b)
    got, info = solver.ridge_cg(X, H, y, 0.2)
    assert info.iterations == 1
    ref, _ = solver.ridge_primal(X, H, y, 0.2)
    assert np.abs(got - ref).max() <= 1e-10 * np.abs(ref).max()


def test_cg_that_does_not_converge_raises():
    X, H, y = _data(8, 300)
    with pytest.raises(ConvergenceError, match="conjugate gradients"):
        solver.ridge_cg(X, H, y, 0.0, maxiter=2)


def test_auto_falls_back_to_the_direct_solve_when_cg_does_not_converge(monkeypatch):
    X, H, y = _data(32, 4 * 32 * 33, k=32)
    monkeypatch.setattr(solver, "CG_MAXITER", 2)
    g, info = solver.ridge_structured(X, H, y, 0.0)
    assert info.method == "primal" and "cg did not converge" in info.factor
    ref, _ = solver.ridge_primal(X, H, y, 0.0)
    assert np.array_equal(g, ref)
    with pytest.raises(ConvergenceError):
        solver.ridge_structured(X, H, y, 0.0, "cg")


def test_auto_choice_of_the_form():
    assert solver.choose_method(500, 1056) == "dual"
    assert solver.choose_method(1500, 1056) == "primal"  # n < 2P: ill-conditioned for CG
    assert solver.choose_method(4096, 1056) == "cg"
    assert solver.choose_method(4 * 272, 272) == "primal"  # small: Cholesky is as fast
    X, H, y = _data(6, 300)
    for method, form in (("direct", "primal"), ("cg", "cg"), ("auto", "primal")):
        assert solver.ridge_structured(X, H, y, 0.1, method)[1].method == form


@pytest.mark.skipif(not torch_available(), reason="torch (optional extra 'gpu') not installed")
def test_torch_backend_agrees_with_numpy():
    X, H, y = _data(10, 4 * 110, k=7)
    g_np, i_np = solver.ridge_cg(X, H, y, 0.0, backend="numpy")
    g_t, i_t = solver.ridge_cg(X, H, y, 0.0, backend="torch")
    assert i_t.residual <= solver.CG_RTOL and abs(i_t.iterations - i_np.iterations) <= 1
    assert np.linalg.norm(g_t - g_np) / np.linalg.norm(g_np) <= 1e-9
    exp = make_experiment("isotropic", 12, alpha=2, tau=4, kappa=1, rho="1/100", solver="cg",
                          backend="torch")
    ss = seed_sequences(0, 1)[0]
    e_t = run_seed(exp, ss)["errors"]
    e_np = run_seed(make_experiment("isotropic", 12, alpha=2, tau=4, kappa=1, rho="1/100",
                                    solver="direct"), ss)["errors"]
    assert all(abs(e_t[k] - e_np[k]) <= 1e-9 * e_np[k] for k in e_np)


def test_backend_and_solver_options_are_validated():
    with pytest.raises(ParameterError, match="--backend"):
        make_experiment("isotropic", 8, alpha=2, tau=4, kappa=1, rho="0", backend="jax")
    with pytest.raises(ParameterError, match="--backend"):
        make_experiment("isotropic", 8, alpha=2, tau=4, kappa=1, rho="0", backend="torch",
                        solver="dual")
    with pytest.raises(ParameterError, match="--solver.*n >= P"):
        make_experiment("isotropic", 8, alpha=2, tau="1/2", kappa=1, rho="0", solver="cg")


def test_seed_errors_agree_between_cg_and_direct():
    ss = seed_sequences(4, 1)[0]
    kw = dict(alpha=2, tau=4, kappa="1/2", rho="1/100", train="piano", test="identity")
    e = {m: run_seed(make_experiment("alignment", 12, solver=m, **kw), ss) for m in
         ("cg", "direct")}
    assert e["cg"]["ridge"]["method"] == "cg" and e["direct"]["ridge"]["method"] == "primal"
    for key, ref in e["direct"]["errors"].items():
        assert abs(e["cg"]["errors"][key] - ref) <= 1e-9 * ref


def test_sweep_workers_use_the_conjugate_gradient_solver():
    """A sweep job (what a Dask or process worker runs) at d = 32, tau = 4 picks CG by itself
    and reproduces the direct solve's errors."""
    (job_auto,) = sweep.make_jobs("isotropic", [dict(alpha="2", tau="4", kappa="1",
                                                     rho="1/100")], ds=[32], seeds=1,
                                  with_theory=False)
    out = sweep.compute_job(job_auto)
    assert out["ridge"]["method"] == "cg"
    (job_direct,) = sweep.make_jobs("isotropic", [dict(alpha="2", tau="4", kappa="1",
                                                       rho="1/100")], ds=[32], seeds=1,
                                    with_theory=False, options={"solver": "direct"})
    ref = sweep.compute_job(job_direct)
    assert ref["ridge"]["method"] == "primal"
    for key, val in ref["errors"].items():
        assert abs(float(out["errors"][key]) - float(val)) <= 1e-9 * float(val)


# ---------------------------------------------------------------------------------------------
# One trained Gamma, several test covariances and test lengths
# ---------------------------------------------------------------------------------------------
KW = dict(alpha=2, tau=3, kappa=1, rho="1/100", train="powerlaw:1")


def test_scores_equal_separate_runs_with_the_same_seeds():
    res = simulate("alignment", 8, seeds=2, seed=7, test="identity,spike:2",
                   alpha_test="1,3/2", **KW)
    rows = [(r["test"], r["alpha_test"], r["ell_test"]) for r in res.scores]
    assert rows == [("identity", "1", 8), ("identity", "3/2", 12), ("spike:2", "1", 8),
                    ("spike:2", "3/2", 12)]
    assert res.errors["e_icl"].mean == res.scores[0]["errors"]["e_icl"].mean
    for row in res.scores[1:]:
        one = simulate("alignment", 8, seeds=2, seed=7, test=row["test"],
                       alpha_test=row["alpha_test"], **KW)
        assert row["errors"]["e_icl"].mean == pytest.approx(one.errors["e_icl"].mean,
                                                            rel=1e-12)
        assert row["errors"]["e_icl"].theory == pytest.approx(one.errors["e_icl"].theory,
                                                              rel=1e-12)
    # the rows differ from each other: each is scored on its own law and length
    assert len({round(r["errors"]["e_icl"].mean, 12) for r in res.scores}) == 4


def test_lowrank_scores_over_test_lengths():
    res = simulate("lowrank", 8, seeds=2, alpha=2, tau=3, kappa="1/2", rho="1/2",
                   sigma="1/10", alpha_test="1,2,4", with_theory=False)
    assert [r["ell_test"] for r in res.scores] == [8, 16, 32]
    idg = [r["errors"]["idg"].mean for r in res.scores]
    assert idg[0] > idg[1] > idg[2]  # longer test contexts: better in-context estimates


def test_cli_scores_json_and_csv(tmp_path, capsys):
    out = tmp_path / "scores.csv"
    rc = cli.main(["simulate", "alignment", "--d", "8", "--seeds", "2", "--alpha", "2",
                   "--tau", "3", "--kappa", "1", "--rho", "1/100", "--train", "powerlaw:1",
                   "--test", "identity,powerlaw:1", "--alpha-test", "1,2", "--json",
                   "--csv", str(out)])
    assert rc == 0
    data = json.loads(capsys.readouterr().out)
    assert len(data["scores"]) == 4 and data["scores"][3]["test"] == "powerlaw:1"
    assert data["scores"][3]["errors"]["e_icl"]["theory"] is not None
    rows = list(csv.DictReader(out.open()))
    assert [(r["test"], r["alpha_test"], r["key"]) for r in rows] == [
        ("identity", "1", "e_icl"), ("identity", "2", "e_icl"), ("powerlaw:1", "1", "e_icl"),
        ("powerlaw:1", "2", "e_icl")]
    assert float(rows[1]["mean"]) == pytest.approx(float(
        data["scores"][1]["errors"]["e_icl"]["mean"]), rel=1e-15)


@pytest.mark.parametrize("argv, option", [
    (["--test", "identity,bogus:3"], "--test"),
    (["--test", "identity,,piano"], "--test"),
    (["--test", "identity", "--alpha-test", "1,-2"], "--alpha-test"),
    (["--test", "identity", "--alpha-test", "1,x"], "--alpha-test"),
    (["--test", "identity", "--solver", "cg", "--tau", "1/2"], "--solver"),
])
def test_cli_bad_list_entries_exit_2_naming_the_option(capsys, argv, option):
    base = ["simulate", "alignment", "--d", "8", "--seeds", "1", "--alpha", "2", "--tau", "3",
            "--kappa", "1", "--rho", "1/100", "--train", "identity", "--no-theory"]
    rc = cli.main(base + argv)
    err = capsys.readouterr().err
    assert rc == 2 and option in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1
