"""A model's stated unique fixed point (``unique_fixed_point``): a float64 grid of such a model
starts most points from their solved neighbours
(:func:`replica.numerics.newton.iterate_grid_continued`); a model without it starts every point
from its declared start. On a toy map written here (one fixed point, in closed form), and on
``examples/logistic_regression.py``, whose uniqueness is stated: from random admissible starts
its float64 iteration reaches one fixed point."""
from pathlib import Path

import numpy as np
import pytest
import sympy

import replica
from replica.modeling import FixedPointModel, ModelError, Parameter
from conftest import record_continued_grids

ROOT = Path(__file__).resolve().parents[1]
x = sympy.Symbol("x", positive=True)
a = sympy.Symbol("a", positive=True)


def _toy(name, unique):
    """x = a / (1 + x): one positive fixed point, (sqrt(1 + 4a) - 1)/2."""
    return FixedPointModel(name, parameters=[Parameter("a", "scale")],
                           equations={x: a / (1 + x)}, start={x: sympy.Rational(1, 2)},
                           positive_unknowns=True, unique_fixed_point=unique)


@pytest.fixture
def spy(monkeypatch):
    """The grids :meth:`Machine.grid` solved by ``iterate_grid_continued`` (their sizes)."""
    return record_continued_grids(monkeypatch)


def test_only_a_declared_unique_fixed_point_is_continued(spy):
    """The toy map over 40 values of a: with ``unique_fixed_point`` the grid is continued and
    takes fewer sweeps (seen: 187 against 277); without it, or with fewer than
    ``CONTINUATION_MIN`` points, every point is solved from the declared start. Every point is
    converged at the closed form (1e-12) either way."""
    grid = np.linspace(0.5, 40.0, 40)
    exact = (np.sqrt(1 + 4 * grid) - 1) / 2
    sweeps = {}
    for unique in ("", "x = a/(1 + x) has one positive root"):
        r = replica.solve_float64(_toy("toy_unique_" + str(bool(unique)), unique), a=grid)
        assert r["converged"].all()
        assert np.max(np.abs(r["x"] - exact) / exact) < 1e-12
        sweeps[bool(unique)] = int(r["iterations"].sum())
    assert spy == [40]
    assert sweeps[True] < sweeps[False], sweeps
    spy.clear()
    replica.solve_float64(_toy("toy_unique_small", "one root"), a=grid[:8])
    assert spy == []


def test_unique_fixed_point_is_a_text():
    with pytest.raises(ModelError, match="unique_fixed_point= is a text"):
        _toy("toy_unique_bad", True)


@pytest.mark.slow
def test_logistic_regression_reaches_one_fixed_point_from_random_admissible_starts():
    """The uniqueness the example states, tested: at three points (lam 1/10, eta 1, alpha 1/2
    and 3; lam 1/100, eta 9/10, alpha 2), 20 random starts each in the admissible domain
    (m in (0, 3), q - eta^2 m^2 in (0.05, 6), V in (0.1, 30)), solved in float64 from there
    (no continuation: a start is given): every start that converges reaches the declared
    start's solution (1e-9 relative in m, q, V), and most do (seen: 60 of 60)."""
    model = replica.load_model(str(ROOT / "examples" / "logistic_regression.py"))
    at = [(0.5, 0.1, 1.0), (3.0, 0.1, 1.0), (2.0, 0.01, 0.9)]
    ref = replica.solve_float64(model, alpha=np.array([p[0] for p in at]),
                                lam=np.array([p[1] for p in at]),
                                eta=np.array([p[2] for p in at]))
    k = 20
    rng = np.random.default_rng(7)
    alpha, lam, eta = (np.repeat([p[i] for p in at], k) for i in range(3))
    m = rng.uniform(0, 3, alpha.size)
    q = eta**2 * m**2 + rng.uniform(0.05, 6, alpha.size)
    V = rng.uniform(0.1, 30, alpha.size)
    r = replica.solve_float64(model, alpha=alpha, lam=lam, eta=eta, start=[m, q, V],
                              strict=False)
    done = r["converged"]
    assert done.sum() >= 0.8 * done.size, done.sum()
    for name in ("m", "q", "V"):
        want = np.repeat(ref[name], k)
        assert np.max(np.abs(r[name][done] - want[done]) / want[done]) < 1e-9, name
