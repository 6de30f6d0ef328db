"""The average over the training tasks of the low-rank derivation, on the trained Gamma
(:mod:`replica.derivations.task_average`): the shipped table is the code's output, the task
means are the traces, the per-task overlaps concentrate like D^(-1/2) while a one-coordinate
control does not, the task means extrapolate to the theory, and planted wrong claims fail."""

from __future__ import annotations

import numpy as np
import pytest

from replica.derivations import task_average as TA


@pytest.fixture(scope="module")
def rows():
    return TA.read_table()


def test_the_table_holds_every_size_and_draw(rows):
    assert sorted({r["d"] for r in rows}) == list(TA.SIZES)
    for d in TA.SIZES:
        assert sorted(r["seed"] for r in rows if r["d"] == d) == list(range(TA.SEEDS))
    # independent draws at different sizes (seed i at D is not seed i at another D): the
    # task-norm means of seed 0 differ from size to size
    norms = [next(r["norm_mean"] for r in rows if r["d"] == d and r["seed"] == 0)
             for d in TA.SIZES]
    assert len(set(norms)) == len(norms)


def test_the_first_draws_are_recomputed_equal(rows):
    live = TA.live_rows(sizes=(16,), seeds=2)
    assert TA.same_rows(live, rows)
    bad = [dict(r) for r in rows]
    bad[1]["q_mean"] *= 1 + 1e-7
    assert not TA.same_rows(live, bad)
    assert not TA.same_rows([dict(live[0], seed=TA.SEEDS)], rows)  # a draw not in the table


def test_task_means_are_the_traces_on_any_gamma():
    """The identity of part (1) on a random non-symmetric Gamma and random tasks, and the
    product in the wrong order differs."""
    rng = np.random.default_rng(3)
    D, k = 12, 7
    G, W0 = rng.standard_normal((D, D)), rng.standard_normal((k, D))
    S = W0.T @ W0 / k
    t = TA.per_task(G, W0)
    assert abs(t["m"].mean() - np.trace(G @ S) / D) < 1e-13
    assert abs(t["q"].mean() - np.trace(G @ S @ G.T) / D) < 1e-13
    assert abs(TA.per_task(G.T, W0)["q"].mean() - np.trace(G @ S @ G.T) / D) > 1e-2
    assert np.allclose(t["control"], W0[:, 0] * (W0 @ G.T)[:, 0])


def test_on_the_trained_gamma_the_means_are_the_traces_and_the_wrong_order_is_not(rows):
    assert TA.identity_residual(rows) < 1e-12
    assert TA.transposed_identity_residual() > 1e-3


def test_the_overlaps_concentrate_like_the_half_power_and_the_control_does_not(rows):
    for key in ("m_spread", "q_spread"):
        assert TA.concentrates(rows, key)
        p, e = TA.spread_power(rows, key)
        assert abs(p + 0.5) < 3 * e, (key, p, e)
    assert not TA.concentrates(rows, "control_spread")
    p, e = TA.spread_power(rows, "control_spread")
    assert abs(p) < 0.1


def test_the_concentration_criterion_on_planted_spreads():
    """Synthetic spreads: a D^(-1/2) law passes; a constant one, and a slow D^(-1/10) one,
    fail."""
    rng = np.random.default_rng(0)

    def planted(power):
        return [dict(d=d, x=0.5 * (d / 16) ** power * (1 + 0.05 * rng.standard_normal()))
                for d in TA.SIZES for _ in range(64)]
    assert TA.concentrates(planted(-0.5), "x")
    assert not TA.concentrates(planted(0.0), "x")
    assert not TA.concentrates(planted(-0.1), "x")


def test_the_task_means_extrapolate_to_the_theory(rows):
    th = TA.theory()
    for f in TA.convergence(rows, th).values():
        assert f.consistent, (f.key, f.intercept, f.intercept_error)
        assert 0.2 < f.chi2_per_dof < 3  # independent points, honest error bars


@pytest.mark.parametrize("shift", (-TA.SHIFT, TA.SHIFT))
def test_a_theory_three_percent_off_is_caught(rows, shift):
    th = TA.theory()
    for f in TA.convergence(rows, th, shift).values():
        assert not f.consistent, (f.key, f.pulls)


def test_the_check_rejects_a_table_with_shifted_means(rows):
    """Task means (and their traces) planted 3 % above the simulation's, the spreads kept: the
    recomputed draws no longer match, and the extrapolation alone also fails."""
    bad = [dict(r, **{k: r[k] * 1.03 for k in ("m_mean", "m_trace", "q_mean", "q_trace")})
           for r in rows]
    assert not TA.check_trained(bad)
    assert not any(f.consistent for f in TA.convergence(bad, TA.theory()).values())


def test_the_table_has_a_row_per_size_and_the_fits():
    import sympy

    names = ("D", "m_nu", "Q_nu", "c_nu", "delta_m", "delta_q")
    t = TA.table({k: sympy.Symbol(k) for k in names})
    assert [r[0] for r in t.rows] == [*TA.SIZES, "fit"]
    assert f"{TA.SEEDS} independent draws" in t.caption
