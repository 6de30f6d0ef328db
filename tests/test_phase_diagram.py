"""Phase diagrams (replica.analysis.phase_diagram): files written, boundaries on the zero set."""

import csv

import numpy as np
import pytest

import replica
from replica.analysis.phase_diagram import (_powerlaw, alignment_specialisation,
                                            isotropic_nonmonotone, nonmonotone_indicator)


@pytest.mark.slow
def test_alignment_specialisation_boundary_is_a_zero_of_the_gain(tmp_path):
    pts = alignment_specialisation(tmp_path, d=16, kappas=np.linspace(0.4, 2.2, 10),
                                   dps_range=np.linspace(-0.2, 2.0, 12), dps=20)
    for name in ("alignment_specialisation.png", "alignment_specialisation_grid.csv",
                 "alignment_specialisation_boundary.csv"):
        assert (tmp_path / name).stat().st_size > 0
    assert len(pts) >= 3
    test = _powerlaw("0.9", 16)
    for k, dp in pts[:: max(1, len(pts) // 3)]:
        tr = _powerlaw(0.9 + float(dp), 16)
        e = replica.solve_float64("alignment", train=tr, test=test, alpha=1, tau=4, kappa=float(k),
                                  rho=0.01)
        e0 = replica.solve_float64("alignment", train=test, test=test, alpha=1, tau=4,
                                   kappa=float(k), rho=0.01)
        assert abs(float(e["e_icl"] - e0["e_icl"])) < 1e-9
        # just below the boundary steeper pretraining helps, just above it hurts
        lo = replica.solve_float64("alignment", train=_powerlaw(0.9 + float(dp) - 0.05, 16),
                                   test=test, alpha=1, tau=4, kappa=float(k), rho=0.01)["e_icl"]
        hi = replica.solve_float64("alignment", train=_powerlaw(0.9 + float(dp) + 0.05, 16),
                                   test=test, alpha=1, tau=4, kappa=float(k), rho=0.01)["e_icl"]
        assert lo < e0["e_icl"] < hi
    with open(tmp_path / "alignment_specialisation_grid.csv") as fh:
        rows = list(csv.DictReader(fh))
    zero = [float(r["gain_percent"]) for r in rows if abs(float(r["p_train_minus_p_test"])) < 1e-12]
    assert zero and max(abs(z) for z in zero) < 1e-9  # matched pretraining: no gain


@pytest.mark.slow
def test_isotropic_nonmonotone_region_and_boundary(tmp_path):
    kappas = np.linspace(0.1, 2.1, 11)
    rhos = np.array([0.1, 0.5, 0.9])
    alphas = np.logspace(-2, 3, 120)
    inside, boundary = isotropic_nonmonotone(tmp_path, tau="0.5", kappas=kappas, rhos=rhos,
                                             alphas=alphas, bisection_steps=8)
    assert inside.shape == (11, 3)
    assert (tmp_path / "isotropic_nonmonotone_e_icl_tau0.5.png").exists()
    assert len(boundary) >= 3
    for k, r, w in boundary:
        left = nonmonotone_indicator(np.array([k - 2 * w - 1e-3])[:, None], r, 0.5,
                                     alphas[None, :])[0]
        right = nonmonotone_indicator(np.array([k + 2 * w + 1e-3])[:, None], r, 0.5,
                                      alphas[None, :])[0]
        assert left != right  # the indicator flips across each boundary point


@pytest.mark.slow
def test_phase_diagram_cli(cli, tmp_path):
    rc, out, err = cli("phase-diagram", "alignment", "-o", tmp_path, "--d", "12")
    assert rc == 0, err
    assert (tmp_path / "alignment_specialisation.png").exists()
    rc, _, err = cli("phase-diagram", "alignment", "-o", tmp_path, "--d", "-3")
    assert rc == 2 and "--d" in err


@pytest.mark.slow
def test_lowrank_phase_diagram(tmp_path):
    from replica.analysis.phase_diagram import lowrank_phase_diagram

    rows = lowrank_phase_diagram(tmp_path, alphas=("1e3",), kappas=["0.3", "0.6"], grid=9,
                                 dps=30)
    for suffix in (".png", ".pdf", ".svg"):
        assert (tmp_path / f"lowrank_phase_diagram{suffix}").stat().st_size > 0
    grid = list(csv.DictReader(open(tmp_path / "lowrank_phase_diagram_grid.csv")))
    assert len(grid) == 9 * 9 and all(g["converged"] == "True" for g in grid)
    g = grid[40]
    ref = replica.solve("lowrank", alpha="1e3", tau="9/4", kappa=g["kappa"],
                        rho=g["rho"], sigma="3/10", dps=20, verify=False)["idg"]
    assert abs(float(g["idg"]) / float(ref) - 1) < 1e-9
    assert float(g["idg_over_alpha"]) == pytest.approx(float(g["idg"]) / 1e3, rel=1e-12)
    located = {r[0]: float(r[2]) for r in rows if r[1] == "inf"}
    assert abs(located[0.3] - 0.3) < 1e-15 and abs(located[0.6] - 0.6) < 1e-15
    cross = {r[0]: float(r[2]) for r in rows if r[1] == "1e3"}
    assert 0.29 < cross[0.3] < 0.3 and 0.59 < cross[0.6] < 0.6  # crossover below rho_c
