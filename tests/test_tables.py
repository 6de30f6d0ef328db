"""Tables for pandas and xarray: numeric CSV columns with the exact strings beside them, sweeps,
simulations, checks and phase-diagram grids as DataFrames and Datasets; pandas stays optional."""

import subprocess
import sys

import numpy as np
import pytest

from replica.cli import main

pd = pytest.importorskip("pandas")
xr = pytest.importorskip("xarray")


def test_sweep_csv_has_numeric_and_exact_columns(tmp_path):
    out = tmp_path / "theory.csv"
    assert main(["sweep", "isotropic", "--alpha", "1,9/4", "--tau", "3", "--kappa", "1/2,inf",
                 "--rho", "0.01", "--cache", "none", "--no-progress", "--workers", "1",
                 "-o", str(out)]) == 0
    frame = pd.read_csv(out)          # plain pandas, no help from replica
    for name in ("alpha", "tau", "kappa", "rho", "lam", "e_icl", "e_idg"):
        assert frame[name].dtype == np.float64, name
    assert sorted(set(frame["alpha"])) == [1.0, 2.25]
    assert np.isinf(frame["kappa"]).sum() == 2
    from replica.tables import read_csv

    exact = read_csv(out)
    assert list(exact["alpha_exact"]) == ["1", "1", "9/4", "9/4"]
    assert list(exact["kappa_exact"]) == ["1/2", "inf"] * 2
    assert exact["rho_exact"].iloc[0] == "1/100" and exact["e_icl"].dtype == np.float64


def test_simulation_sweep_as_pandas_and_xarray():
    from replica.simulate import sweep

    points = sweep.expand_grid({"alpha": ["1", "9/4"], "tau": "3", "kappa": ["1/2", "1"],
                                "rho": "1/100"})
    jobs = sweep.make_jobs("isotropic", points, ds=[6, 8], seeds=2)
    run = sweep.run_jobs(jobs, executor="serial", progress=False)
    table = sweep.sweep_table("isotropic", jobs, run)
    frame = table.to_pandas()
    assert len(frame) == 8 and frame["e_icl_mean"].dtype == np.float64
    assert frame["d"].dtype == np.int64 and frame.attrs["model"] == "isotropic"
    ds = table.to_xarray()
    assert set(ds["e_icl_mean"].dims) == {"alpha", "kappa", "d"}
    assert list(ds["alpha"].values) == [1.0, 2.25]
    assert list(ds["alpha_exact"].values) == ["1", "9/4"]
    assert ds.attrs["tau_exact"] == "3"
    # the Dataset holds the same numbers as the rows
    row = frame[(frame.alpha == 2.25) & (frame.kappa == 0.5) & (frame.d == 8)].iloc[0]
    assert ds["e_icl_mean"].sel(alpha=2.25, kappa=0.5, d=8).item() == row["e_icl_mean"]
    assert ds["e_icl_theory"].sel(alpha=2.25, kappa=0.5, d=8).item() == row["e_icl_theory"]


def test_simulation_result_tables():
    from replica.simulate import simulate

    r = simulate("isotropic", d=8, seeds=3, alpha=2, tau=3, kappa=1, rho="1/100")
    summary = r.to_pandas()
    assert list(summary.index) == ["e_icl", "e_idg"]
    assert summary.loc["e_icl", "mean"] == r.errors["e_icl"].mean
    assert summary.loc["e_icl", "theory"] == r.errors["e_icl"].theory
    assert summary.loc["e_idg", "z"] == pytest.approx(r.errors["e_idg"].z)
    seeds = r.to_pandas(per_seed=True)
    assert len(seeds) == 3 and seeds["e_icl"].mean() == pytest.approx(r.errors["e_icl"].mean)
    ds = r.to_xarray()
    assert ds["e_icl"].dims == ("seed",) and ds.attrs["rho"] == "1/100"
    assert ds["e_icl_theory"].item() == r.errors["e_icl"].theory


def test_phase_diagram_grid_as_xarray(tmp_path):
    from replica.analysis.phase_diagram import isotropic_nonmonotone
    from replica.tables import read_grid

    kappas, rhos = np.linspace(0.1, 2, 6), np.linspace(0.01, 1, 4)
    inside, _ = isotropic_nonmonotone(tmp_path, tau="0.5", kappas=kappas, rhos=rhos,
                                      bisection_steps=2)
    path = next(tmp_path.glob("*_grid.csv"))
    frame = pd.read_csv(path)
    # every column numeric but the float64 path's status of each cell (a word)
    assert all(pd.api.types.is_numeric_dtype(frame[c]) for c in frame if c != "status")
    assert set(frame["status"]) <= {"converged", "not-verified"}
    ds = read_grid(path).to_xarray()
    assert ds["nonmonotone"].dims == ("rho", "kappa")
    np.testing.assert_allclose(ds["kappa"], np.round(kappas, 6), rtol=1e-5)
    np.testing.assert_array_equal(ds["nonmonotone"].values, inside.T.astype(float))
    assert ds["status"].dims == ("rho", "kappa") and set(ds["status"].values.ravel()) == set(
        frame["status"])
    long = read_grid(path).to_pandas()
    assert len(long) == 24 and list(long.columns) == ["kappa", "rho", "nonmonotone", "status"]


def test_pandas_is_optional(monkeypatch):
    code = ("import sys, replica, replica.tables, replica.simulate.sweep,"
            " replica.numerics.result; assert 'pandas' not in sys.modules"
            " and 'xarray' not in sys.modules, 'imported'")
    subprocess.run([sys.executable, "-c", code], check=True)
    from replica.tables import Table

    monkeypatch.setitem(sys.modules, "pandas", None)   # as if not installed
    monkeypatch.setitem(sys.modules, "xarray", None)
    table = Table(["alpha"], [["1.0"]], ["alpha"])
    with pytest.raises(ImportError, match=r"pip install replica\[data\]") as info:
        table.to_pandas()
    assert "\n" not in str(info.value)
    with pytest.raises(ImportError, match=r"pip install replica\[data\]"):
        table.to_xarray()
