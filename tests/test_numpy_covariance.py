"""NumPy arrays as covariances wherever a SPEC is accepted in the Python API: a d x d symmetric
PSD matrix or a 1-D array of eigenvalues, converted exactly; bad arrays are ParameterErrors."""

from fractions import Fraction

import numpy as np
import pytest

import replica
from replica.errors import ParameterError
from replica.spectra import covariance_from_array

D = 12
BASE = dict(alpha=2, tau=4, kappa=2, rho="0.01")


def _rotation(d, seed=1):
    q, _ = np.linalg.qr(np.random.default_rng(seed).standard_normal((d, d)))
    return q


def test_eigenvalues_are_exact_and_equal_a_file(tmp_path):
    ev = np.linspace(2.0, 0.1, D)
    cov = covariance_from_array(ev)
    total = sum(Fraction(float(v)) for v in ev)
    assert cov.d == D and cov.diagonal == tuple(Fraction(float(v)) * D / total for v in ev)
    np.save(tmp_path / "ev.npy", ev)
    r_array = replica.solve("alignment", train=ev, test=ev, dps=30, **BASE)
    r_file = replica.solve("alignment", d=D, train=f"file:{tmp_path / 'ev.npy'}",
                           test=f"file:{tmp_path / 'ev.npy'}", dps=30, **BASE)
    assert r_array.digits >= 28
    assert r_array.to_dict() == r_file.to_dict()
    assert r_array.params["d"] == str(D) and r_array.params["train"].startswith("array:12:")


def test_a_rotated_matrix_pair_gives_the_theory_of_its_eigenvalues():
    # the theory is invariant under one rotation of both covariances
    q = _rotation(D)
    train_ev, test_ev = np.linspace(3.0, 0.2, D), np.linspace(0.5, 1.5, D)
    train, test = q @ np.diag(train_ev) @ q.T, q @ np.diag(test_ev) @ q.T
    train, test = (train + train.T) / 2, (test + test.T) / 2
    rotated = replica.solve("alignment", train=train, test=test, dps=20, **BASE)
    diagonal = replica.solve("alignment", train=train_ev, test=test_ev, dps=20, **BASE)
    for k in ("e_icl", "e_scalar", "e_misalign", "q"):
        assert float(rotated[k]) == pytest.approx(float(diagonal[k]), rel=1e-12), k
    grid = replica.solve_float64("alignment", train=train, test=test,
                                 alpha=np.array([1.0, 2.0]), tau=4, kappa=2, rho=0.01)
    assert grid["e_icl"][1] == pytest.approx(float(diagonal.e_icl), rel=1e-10)


def test_simulate_takes_arrays():
    from replica.simulate import simulate

    ev = np.linspace(2.0, 0.5, 8)
    r = simulate("alignment", d=8, seeds=2, train=ev, test=np.diag(ev), **BASE)
    assert r.params["train"].startswith("array:8:") and r.params["test"].startswith("array:8x8:")
    assert r.errors["e_icl"].theory == pytest.approx(
        float(replica.solve("alignment", train=ev, test=ev, dps=20, **BASE).e_icl), rel=1e-12)


_SYM = np.eye(D) + np.triu(np.full((D, D), 0.1), 1)


@pytest.mark.parametrize("bad, message", [
    (_SYM, "not symmetric"),
    (np.eye(D)[:5], "must be square"),
    (np.full(D, np.nan), "NaN"),
    (np.diag(np.r_[1.0, -0.5, np.ones(D - 2)]), "not positive semi-definite"),
    (-np.ones(D), "not PSD"),
    (np.zeros(D), "zero"),
    (np.ones((2, 2, 2)), "shape"),
    (np.array(["1"] * D), "real numbers"),
    (np.ones(D) + 0j, "complex"),
    (np.ones(D, bool), "real numbers"),
])
def test_bad_arrays_name_the_parameter(bad, message):
    with pytest.raises(ParameterError, match=message) as info:
        replica.solve("alignment", train=bad, dps=20, **BASE)
    assert str(info.value).startswith("train:") and "\n" not in str(info.value)


def test_size_must_match_d():
    with pytest.raises(ParameterError, match="expected d = 30"):
        replica.solve("alignment", train=np.ones(D), d=30, dps=20, **BASE)
    with pytest.raises(ParameterError, match="^test:"):
        replica.solve("alignment", train=np.ones(D), test=np.ones(D + 1), dps=20, **BASE)


def test_float64_grids_refuse_bad_arrays_too():
    with pytest.raises(ParameterError, match="^test: the array: eigenvalues must be >= 0"):
        replica.solve_float64("alignment", train=np.ones(D), test=-np.ones(D),
                              alpha=np.array([1.0, 2.0]), tau=4, kappa=2, rho=0.01)
