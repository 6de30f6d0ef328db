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


# -- arrays prepared once: float64 entries without rationals, exact ones on demand -----------------
def _legacy(arr, raw=False):
    """The covariance of ``arr`` by the exact route (every entry a Fraction first)."""
    from replica.spectra import _covariance_of_entries, _exact_entries

    return _covariance_of_entries("legacy", _exact_entries(arr), arr.ndim, arr.shape[0], "train",
                                  raw, "the array")


def _arrays(seed=0):
    rng = np.random.default_rng(seed)
    out = []
    for d in (1, 3, 12, 31):
        q = np.linalg.qr(rng.standard_normal((d, d)))[0]
        m = q @ np.diag(rng.random(d) * 10.0 ** rng.uniform(-5, 5)) @ q.T
        x = rng.standard_normal((d, 2 * d))
        a = rng.integers(-3, 4, (d, d))
        out += [rng.random(d) * 10.0 ** rng.uniform(-30, 30), (rng.random(d) * 3).astype(np.float32),
                rng.integers(0, 1000, d), (m + m.T) / 2, x @ x.T, a + a.T + 300 * np.eye(d, dtype=int)]
    return out


@pytest.mark.parametrize("raw", [False, True])
def test_array_entries_equal_the_exact_conversion(raw):
    for arr in _arrays():
        # a diagonal matrix (here d = 1) is the covariance of its diagonal
        diagonal = arr.ndim == 2 and np.count_nonzero(arr) == np.count_nonzero(np.diagonal(arr))
        new = covariance_from_array(arr, raw=raw)
        old = _legacy(np.diagonal(arr) if diagonal else arr, raw)
        assert new.diag_f64().tobytes() == old.diag_f64().tobytes()  # bit for bit
        assert new.matrix_f64().tobytes() == old.matrix_f64().tobytes()
        assert (new.diagonal, new.matrix, new.scale) == (old.diagonal, old.matrix, old.scale)
        assert new.is_diagonal == old.is_diagonal and new.rank() == old.rank()
        assert new.trace_fraction() == old.trace_fraction()


def test_a_diagonal_matrix_is_the_covariance_of_its_diagonal():
    ev = np.linspace(2.0, 0.1, D)
    mat, vec = covariance_from_array(np.diag(ev)), covariance_from_array(ev)
    assert mat.is_diagonal and mat.diagonal == vec.diagonal and mat.matrix is None
    assert mat.diag_f64().tobytes() == vec.diag_f64().tobytes()
    assert mat.spec.startswith(f"array:{D}x{D}:")


def test_arrays_are_prepared_once_by_content():
    ev = np.linspace(2.0, 0.1, D)
    first = covariance_from_array(ev)
    assert covariance_from_array(ev.copy()) is first  # equal content: the same object
    assert covariance_from_array(ev, raw=True) is not first
    kept = first.diag_f64()
    ev[0] = 7.0  # the caller changes its array: a new covariance, the first one unchanged
    assert covariance_from_array(ev) is not first
    assert first.diag_f64().tobytes() == kept.tobytes()
    assert covariance_from_array(ev.astype(np.float32)).spec != covariance_from_array(ev).spec


@pytest.mark.parametrize("spec, d", [("identity", 20), ("spike:3", 20), ("lowrank:1/2", 20),
                                     ("piano", 63)])
def test_a_matrix_gives_the_float64_values_of_its_spec(spec, d):
    # entries that are exact binary fractions of trace d (piano at d = 63: (63 - j)/32), so the
    # matrix and the SPEC are the same covariance: every float64 value agrees to the last bit
    from replica.spectra import parse_spec

    mat = np.diag(parse_spec(spec, d).diag_f64())
    grid = dict(alpha=np.array([0.5, 2.0]), tau=np.array([4.0, 0.5]), kappa=0.7, rho=0.01)
    by_spec = replica.solve_float64("alignment", d=d, train=spec, test="piano", **grid)
    by_matrix = replica.solve_float64("alignment", d=d, train=mat,
                                      test=np.diag(parse_spec("piano", d).diag_f64()), **grid)
    assert list(by_spec) == list(by_matrix)
    for k in by_spec:
        a, b = by_spec[k], by_matrix[k]
        assert a.tobytes() == b.tobytes() if a.dtype.kind == "f" else np.array_equal(a, b), k


def test_the_mp_path_of_a_full_matrix_is_the_exact_route():
    q = _rotation(D, seed=3)
    train = q @ np.diag(np.linspace(3.0, 0.2, D)) @ q.T
    train = (train + train.T) / 2
    test = np.linspace(0.5, 1.5, D)
    args = dict(dps=20, **BASE)
    new = replica.solve("alignment", train=train, test=test, **args)
    old = replica.solve("alignment", train=_legacy(train), test=_legacy(test), **args)
    assert new.digits >= 18 and new.all_values == old.all_values
