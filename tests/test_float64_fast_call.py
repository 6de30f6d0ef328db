"""The float64 call's lean path (``replica.numerics.driver._whole_kernel_grid``): one variant at
every point, solved and checked by its fused kernel, with less Python around the kernel.

* it gives :func:`~replica.numerics.grid.solve_grid`'s arrays bit for bit (values, statuses,
  dtypes, shapes, key order), for points and grids, SPECs and matrices, every built-in model;
* it remembers nothing of a call's values: after a call has been answered, a changed value --
  a SPEC string, a number, an array changed in place, a new array with the same name -- is
  validated and solved anew, and a bad one raises the one-line error naming the parameter;
* it declines (``None``: :func:`solve_grid` answers) what it does not handle.

The kernels need Numba and compile per variant in the session's fresh cache (tens of seconds):
the tests that call them are in the slow tier; the validation alone is tested without them.
"""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

import replica
from replica.errors import ParameterError
from replica.numerics import driver
from replica.numerics.grid import solve_grid

numba_missing = pytest.mark.skipif(importlib.util.find_spec("numba") is None,
                                   reason="Numba is not installed")
D = 24


def _matrix(d=D, seed=0):
    """A symmetric positive-definite d x d matrix (a non-diagonal C)."""
    rng = np.random.default_rng(seed)
    q, _ = np.linalg.qr(rng.standard_normal((d, d)))
    return (q * np.linspace(0.25, 3.0, d)) @ q.T


def _same(a: dict, b: dict):
    """``a`` and ``b`` the same arrays: keys in order, dtypes, shapes, types, bits (NaN as NaN),
    and writeable."""
    assert list(a) == list(b)
    for k in a:
        x, y = a[k], b[k]
        assert type(x) is type(y) and x.dtype == y.dtype and x.shape == y.shape, k
        assert x.flags.writeable, k
        if x.dtype.kind == "f":
            np.testing.assert_array_equal(x.view(np.uint64), y.view(np.uint64), err_msg=k)
        else:
            np.testing.assert_array_equal(x, y, err_msg=k)


# ---------------------------------------------------------------------------------------------
# Validation (no kernel needed)
# ---------------------------------------------------------------------------------------------
ALIGN = dict(d=D, train="piano", test="piano", alpha=2.0, tau=4.0, kappa=0.5, rho=0.01)


def _accepted(problem, args) -> bool:
    """Whether the lean path's validation accepts ``args`` (it declines by returning ``None``
    or raising: :func:`~replica.numerics.driver._whole_kernel_grid` then calls solve_grid)."""
    try:
        return driver._validated_whole(problem, args) is not None
    except Exception:  # noqa: BLE001
        return False


@pytest.mark.parametrize("bad, option", [
    (dict(alpha=-1.0), "--alpha"),
    (dict(alpha=float("nan")), "--alpha"),
    (dict(kappa=0.0), "--kappa"),
    (dict(rho=-1e-300), "--rho"),
    (dict(lam=-0.5), "--lam"),
    (dict(alpha=float("inf")), "--alpha"),
    (dict(tau=1.0), "--tau"),  # the rule lam = 0 & tau = 1
    (dict(test="spike:0"), "--test"),
    (dict(test="nonsense"), "--test"),
    (dict(d=0), "--d"),
    (dict(kappa=np.array([0.5, -1.0])), "--kappa"),
    (dict(tau=np.array([2.0, 1.0])), "--tau"),
    (dict(kappa=np.array([0.5, 1.0]), alpha=-1.0), "--alpha"),  # a bad scalar beside a grid
    (dict(kappa=np.array([0.5, 1.0]), rho=-1.0), "--rho"),
    (dict(kappa=np.array([0.5, 1.0]), tau=1.0), "--tau"),
    (dict(alpha_typo=1.0), "alpha_typo"),
])
def test_a_bad_value_after_good_calls_is_refused(bad, option):
    """The lean path declines every bad input (so the full path raises its error), also right
    after it accepted the good ones: nothing is remembered of a call's values."""
    problem = replica.models.get("alignment")
    for _ in range(2):
        assert driver._validated_whole(problem, dict(ALIGN)) is not None
    args = dict(ALIGN, **bad)
    assert not _accepted(problem, args)
    with pytest.raises(ParameterError) as exc:
        solve_grid(problem, **args)
    assert exc.value.parameter == option


def test_validation_reads_each_call_s_values():
    """The variant, the parameters and the covariances are those of each call, not of the call
    before (a cache keyed on a parameter's name, or on an array's identity, fails here)."""
    problem = replica.models.get("alignment")
    m1, cmp1, num1, _ = driver._validated_whole(problem, dict(ALIGN))
    m2, cmp2, num2, _ = driver._validated_whole(problem, dict(ALIGN, tau=0.5, test="spike:3"))
    assert (m1.variant, m2.variant) == ("interpolating", "ridge")
    assert float(num2["tau"]) == 0.5 and cmp2.test.spec == "spike:3" and cmp1.test.spec == "piano"
    c = _matrix()
    _, cmp3, _, _ = driver._validated_whole(problem, dict(ALIGN, train=c, test=c, d=None))
    first = cmp3.train.matrix_f64().copy()
    c[0, 0] += 0.5  # the same array, changed in place
    _, cmp4, _, _ = driver._validated_whole(problem, dict(ALIGN, train=c, test=c, d=None))
    assert cmp4.train is cmp4.test
    assert not np.array_equal(cmp4.train.matrix_f64(), first)
    c2 = _matrix(seed=1)
    _, cmp5, _, _ = driver._validated_whole(problem, dict(ALIGN, train=c, test=c2, d=None))
    assert cmp5.train is cmp4.train and cmp5.test is not cmp5.train
    np.testing.assert_allclose(cmp5.test.matrix_f64(), c2 * (D / np.trace(c2)), rtol=1e-14,
                               atol=1e-15)
    c[0, 1] += 1.0  # no longer symmetric: refused, by name
    assert not _accepted(problem, dict(ALIGN, train=c, d=None))
    with pytest.raises(ParameterError) as exc:
        solve_grid(problem, **dict(ALIGN, train=c, d=None))
    assert exc.value.parameter == "train"


def test_a_file_spec_is_read_on_every_call(tmp_path):
    """A ``file:`` covariance is read on every call (its file may change between calls): the
    float64 call's values follow the file (here on the NumPy path, ``REPLICA_NUMBA=0``, which
    shares the parse cache with the lean path) and so does the lean path's validation; a cache
    keyed on the SPEC's text fails here."""
    path = tmp_path / "c.npy"
    args = dict(ALIGN, d=20, train=f"file:{path}")
    problem = replica.models.get("alignment")
    values = []
    for top in (3.0, 30.0):
        np.save(path, np.linspace(1.0, top, 20))
        values.append(float(replica.solve_float64("alignment", **args)["e_icl"]))
        _, cmp, _, _ = driver._validated_whole(problem, dict(args))
        np.testing.assert_allclose(cmp.train.diag_f64(),  # (normalised to trace d)
                                   np.linspace(1.0, top, 20) * (2 / (1 + top)), rtol=1e-14)
    assert values[0] != values[1]
    ref = replica.solve("alignment", **dict(args, alpha=2, tau=4, kappa="1/2", rho="1/100"),
                        dps=15)
    assert abs(values[1] - float(ref["e_icl"])) < 1e-12


def test_declines_what_it_does_not_handle():
    problem = replica.models.get("alignment")
    for other in (dict(alpha=[1.0, 2.0]), dict(alpha=np.float32(2.0)),
                  dict(kappa=np.array([], float)), dict(alpha=True),
                  dict(tau=np.array([0.5, 4.0]))):  # two variants on one grid
        assert not _accepted(problem, dict(ALIGN, **other)), other


def test_converged_is_the_status_named_converged():
    """(milliseconds) The lean path's ``converged`` (session 54: ``code == 0``,
    :func:`~replica.numerics.float64_checks.converged_of_codes`, instead of comparing 10^4
    strings) is ``status == "converged"`` at every status code, in every shape the lean path
    passes it (the kernel's flat codes: a grid, a point), with a kernel that iterates and one
    that does not."""
    from replica.numerics.float64_checks import (converged_of_codes, start_not_finite,
                                                 status_of_codes)

    rng = np.random.default_rng(54)
    for code in (np.arange(6, dtype=np.int8), rng.integers(0, 6, (7, 3)).astype(np.int8),
                 np.array([0], dtype=np.int8), np.array([1], dtype=np.int8)):
        for iterated in (True, False):
            c = start_not_finite(code, iterated)
            got = converged_of_codes(c)
            want = status_of_codes(c)[0] == "converged"
            assert got.dtype == want.dtype and got.shape == want.shape
            np.testing.assert_array_equal(got, want)


# ---------------------------------------------------------------------------------------------
# The lean path against solve_grid (Numba)
# ---------------------------------------------------------------------------------------------
KAPPA = np.linspace(0.05, 2.15, 7)
CASES = [
    ("alignment", ALIGN),
    ("alignment", dict(ALIGN, test="spike:2", tau=0.5, kappa=KAPPA)),
    ("alignment", dict(ALIGN, kappa=KAPPA.reshape(7, 1), alpha=np.array([1.0, 3.0]), lam=0.1)),
    ("alignment", dict(ALIGN, train=_matrix(), test=_matrix(seed=1), d=None, tau=4, kappa="1/2")),
    ("alignment", dict(ALIGN, kappa=np.array([1e-12, 0.5, 1e12]), alpha=1e-9)),
    ("alignment", dict(ALIGN, rho=np.array([1e300, 0.01]))),  # a non-finite point beside one
    ("isotropic", dict(alpha=np.logspace(-1, 2, 9), tau=4.0, kappa=0.5, rho=0.01)),
    ("isotropic", dict(alpha=2.0, tau=0.5, kappa=0.5, rho=0.01, lam=0.01)),
    ("lowrank", dict(alpha=np.logspace(-0.5, 2, 5), tau=2.25, kappa=1.5, rho=0.5, sigma=0.3,
                     test="outside:1/4")),
]


@numba_missing
@pytest.mark.slow
@pytest.mark.parametrize("model, args", CASES)
def test_lean_path_gives_solve_grid_s_arrays(monkeypatch, model, args):
    monkeypatch.setenv("REPLICA_NUMBA", "1")
    problem = replica.models.get(model)
    lean = driver._whole_kernel_grid(problem, dict(args), 1e-13)
    assert lean is not None  # (the lean path answered)
    _same(lean, solve_grid(problem, **args)[0])
    _same(replica.solve_float64(model, strict=False, **args), lean)


@numba_missing
@pytest.mark.slow
def test_a_changed_value_after_a_call_is_validated_and_solved(monkeypatch):
    """Through the public call with the kernels: after answered calls, a changed SPEC, number or
    array (in place) is read anew -- its values are those of a fresh full solve -- and a bad
    one raises the error naming its parameter."""
    monkeypatch.setenv("REPLICA_NUMBA", "1")
    problem = replica.models.get("alignment")
    first = replica.solve_float64("alignment", **ALIGN)
    for change in (dict(test="spike:3"), dict(kappa=0.75), dict(tau=0.5)):
        again = replica.solve_float64("alignment", **dict(ALIGN, **change))
        assert again["e_icl"] != first["e_icl"]
        _same(again, solve_grid(problem, **dict(ALIGN, **change))[0])
    c = _matrix()
    args = dict(ALIGN, train=c, test=c, d=None)
    before = replica.solve_float64("alignment", **args)
    c *= np.linspace(1.0, 2.0, D)[:, None] * np.linspace(1.0, 2.0, D)[None, :]  # still SPD
    after = replica.solve_float64("alignment", **args)
    assert after["e_icl"] != before["e_icl"]
    _same(after, solve_grid(problem, **args)[0])
    c[0, 1] += 1.0
    with pytest.raises(ParameterError) as exc:
        replica.solve_float64("alignment", **args)
    assert exc.value.parameter == "train"
    for bad, option in ((dict(alpha=-2.0), "--alpha"), (dict(test="spike:0"), "--test"),
                        (dict(tau=1.0), "--tau")):
        with pytest.raises(ParameterError) as exc:
            replica.solve_float64("alignment", **dict(ALIGN, **bad))
        assert exc.value.parameter == option
