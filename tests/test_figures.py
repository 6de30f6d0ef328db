"""Figures (replica.figures and the plotting functions): the three file formats, complete legends,
readable labels and ticks, the phase-diagram command for any plane of a built-in model, and the
notebooks executed as Jupyter notebooks with their figures inline."""

from __future__ import annotations

import csv
import os
import sys

import numpy as np
import pytest

import replica
from replica import figures
from replica.cli import main

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MAGIC = {"png": b"\x89PNG\r\n\x1a\n", "pdf": b"%PDF-"}


def assert_figure_files(stem):
    """``stem.png``, ``.pdf``, ``.svg`` exist, are non-empty and are what their suffix says."""
    for fmt in figures.FORMATS:
        data = open(f"{stem}.{fmt}", "rb").read()
        assert len(data) > 1000, (stem, fmt)
        if fmt == "svg":
            assert data.lstrip().startswith(b"<?xml") and b"<svg" in data[:2000], stem
        else:
            assert data.startswith(MAGIC[fmt]), (stem, fmt)


def legend_texts(ax):
    legend = ax.get_legend()
    assert legend is not None, "no legend"
    return [t.get_text() for t in legend.get_texts()]


@pytest.mark.slow
def test_save_figure_writes_png_pdf_svg_and_drops_a_given_suffix(tmp_path):
    fig, ax = figures.new_figure()
    ax.plot([1, 2, 3], [1, 4, 9], label="a")
    paths = figures.save_figure(fig, tmp_path / "sub" / "curve.png")
    assert paths == [str(tmp_path / "sub" / f"curve.{f}") for f in ("png", "pdf", "svg")]
    assert_figure_files(tmp_path / "sub" / "curve")
    # no creation date in the vector files: a rerun writes the same bytes
    first = [open(p, "rb").read() for p in paths[1:]]
    figures.save_figure(fig, tmp_path / "sub" / "curve")
    assert [open(p, "rb").read() for p in paths[1:]] == first


@pytest.mark.slow
def test_isotropic_phase_diagram_files_and_legend(tmp_path):
    from replica.analysis.phase_diagram import isotropic_nonmonotone, nonmonotone_figure

    kappas, rhos = np.linspace(0.1, 2.1, 9), np.linspace(0.01, 1.0, 4)
    inside, boundary = isotropic_nonmonotone(tmp_path, tau="0.5", kappas=kappas, rhos=rhos,
                                             alphas=np.logspace(-2, 3, 60), bisection_steps=3)
    assert_figure_files(tmp_path / "isotropic_nonmonotone_e_icl_tau0.5")
    fig = nonmonotone_figure(kappas, rhos, inside, boundary, tau="0.5")
    ax = fig.axes[0]
    # the shaded region, the boundary points and the dashed reference line are all named
    assert legend_texts(ax) == [r"$E_{\rm ICL}$ non-monotone in $\alpha$",
                                "boundary (bisection)", r"$\kappa=\min(\tau,1)$"]
    assert ax.get_xlabel() == r"task diversity $\kappa$" and "$" in ax.get_title()


def _check_report():
    from replica.simulate.report import CheckReport, CheckRow

    rows = [CheckRow(x, d, "errors", key, th * (1 + 1 / d), 0.01, 4, th, 1.0, 1 / d)
            for x, base in (("1", 1.0), ("2", 0.6)) for d in (8, 16)
            for key, th in (("e_icl", base), ("e_idg", base / 2))]
    line = {"x": [1.0, 1.5, 2.0], "errors": {"e_icl": [1.0, 0.8, 0.6],
                                             "e_idg": [0.5, 0.4, 0.3]}}
    return CheckReport("isotropic", "alpha", {"tau": "3", "kappa": "1", "rho": "1/100"},
                       [8, 16], 4, rows, line, 0, 0, [])


@pytest.mark.slow
def test_check_figure_legend_has_every_theory_and_every_simulation_size(tmp_path):
    from replica.simulate.report import check_figure, write_plot

    report = _check_report()
    fig = check_figure(report)
    texts = legend_texts(fig.axes[0])
    assert texts == [r"$E_{\rm ICL}$ theory", r"$e_{\rm IDG}$ theory",
                     "simulation, $d = 8$ (mean ± s.e.)", "simulation, $d = 16$ (mean ± s.e.)"]
    # every quantity has simulation points drawn (error bars), in its theory's colour
    colours = {figures.colour(0), figures.colour(1)}
    drawn = {c.lines[0].get_color() for c in fig.axes[0].containers}
    assert drawn == colours
    assert fig.axes[0].get_xlabel() == r"$\alpha$"
    assert set(legend_texts(fig.axes[1])) >= {r"$E_{\rm ICL}$", r"$e_{\rm IDG}$"}
    paths = write_plot(report, tmp_path)
    assert [p.name for p in paths] == ["check.png", "check.pdf", "check.svg"]
    assert_figure_files(tmp_path / "check")


def test_labels_ticks_and_text_contrast():
    from matplotlib import colormaps

    assert figures.label("kappa") == r"$\kappa$"
    assert figures.label("idg") == r"$\varepsilon_{\rm IDG}$"
    assert figures.label("my_error") == r"$\mathrm{my}_{\mathrm{error}}$"
    assert figures.value_text("lam", "1e-4") == r"$\lambda = 10^{-4}$"
    assert figures.value_text("kappa", "inf") == r"$\kappa = \infty$"
    fig, ax = figures.new_figure()
    ax.plot([1e-2, 1e3], [1, 2])
    figures.log_axis(ax, "x")
    assert "10^{2}" in ax.xaxis.get_major_formatter()(100.0)
    fig, ax = figures.new_figure()
    ax.plot([0.5, 8], [1, 2])
    figures.log_axis(ax, "x")  # under two decades: plain numbers at 1, 2, 5
    assert ax.xaxis.get_major_formatter()(2.0) == "$2$"
    cmap = colormaps[figures.SEQUENTIAL]
    assert figures.text_colour(cmap(1.0)) == "black"  # never white on the yellow end
    assert figures.text_colour(cmap(0.0)) == "white"
    # series differ in marker and line style as well as colour (greyscale print)
    styles = [figures.series_style(i) for i in range(len(figures.OKABE_ITO))]
    assert len({s["marker"] for s in styles}) == len({str(s["linestyle"]) for s in styles}) \
        == len(styles)


def test_lowrank_figure_writes_region_names_in_a_contrasting_colour():
    from replica.analysis.phase_diagram import lowrank_phase_figure

    kg = rg = np.linspace(0.05, 1.0, 8)
    K, R = np.meshgrid(kg, rg, indexing="ij")
    field = 10.0 ** (-3 + 2 * (R > K))  # bright (large) where rho > kappa, dark below
    rows = [(0.3, "inf", "0.3", "1e-20"), (0.3, "16", "0.28", "1e-10"),
            (0.6, "inf", "0.6", "1e-20"), (0.6, "16", "0.57", "1e-10")]
    fig = lowrank_phase_figure(kg, rg, field, rows, tau="9/4", sigma="3/10", alphas=("16",))
    ax = fig.axes[0]
    colour = {t.get_text().split(" ")[0]: t.get_color() for t in ax.texts}
    assert colour == {"task-rich": "white", "task-scarce": "black"}
    assert legend_texts(ax) == [r"$\rho_c$ ($\alpha\to\infty$, located)",
                                r"crossover $\rho^*$, $\alpha = 16$"]


def test_phase_diagram_of_a_builtin_model_over_any_plane(tmp_path, capsys):
    out = tmp_path / "pd"
    rc = main(["phase-diagram", "isotropic", "--x", "alpha:0.5:8:14:log", "--y",
               "kappa:0.2:2:9", "--quantity", "e_icl", "--level", "0.5", "--tau", "2",
               "--rho", "1/100", "-o", str(out)])
    assert rc == 0, capsys.readouterr().err
    stem = out / "isotropic_e_icl_alpha_kappa"
    assert_figure_files(stem)
    rows = list(csv.DictReader(open(f"{stem}.csv")))
    assert list(rows[0]) == ["alpha", "kappa", "e_icl", "converged", "status"] \
        and len(rows) == 14 * 9
    assert all(r["status"] == "converged" for r in rows)
    assert "float64 status: 126 of 126 points converged" in capsys.readouterr().out
    r = rows[20]
    ref = replica.solve("isotropic", alpha=r["alpha"], tau=2, kappa=r["kappa"], rho="1/100",
                        dps=20, verify=False)["e_icl"]
    assert abs(float(r["e_icl"]) - float(ref)) < 1e-10
    # the level set e_icl = 0.5: interpolated on the grid, within the grid's resolution
    boundary = list(csv.DictReader(open(f"{stem}_boundary.csv")))
    assert list(boundary[0]) == ["alpha", "kappa", "segment"] and len(boundary) >= 5
    pts = boundary[:: max(1, len(boundary) // 4)]
    e = replica.solve_float64("isotropic", alpha=np.array([float(b["alpha"]) for b in pts]),
                              tau=2.0, kappa=np.array([float(b["kappa"]) for b in pts]),
                              rho=0.01)["e_icl"]
    assert np.all(np.abs(e - 0.5) < 0.02), e


@pytest.mark.parametrize("argv, option, listed", [
    (["--x", "kapa:0.2:2:4", "--y", "alpha:1:2:4", "--quantity", "idg"], "--x", "kappa"),
    (["--x", "kappa:0.2:2:4", "--y", "alpha:1:2:4", "--quantity", "edg"], "--quantity", "idg"),
])
def test_phase_diagram_plane_bad_names_are_exit_2_listing_the_valid_ones(tmp_path, capsys,
                                                                         argv, option, listed):
    rc = main(["phase-diagram", "lowrank"] + argv + ["-o", str(tmp_path / "x")])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and option in err[0] and listed in err[0], err


@pytest.mark.slow
def test_notebook_executes_in_jupyter_with_an_inline_figure(tmp_path):
    """One notebook (quick mode) converted by jupytext and executed by nbclient in a kernel:
    its figure is a display item with an image/png, shown once."""
    pytest.importorskip("nbclient")
    pytest.importorskip("jupytext")
    import nbformat

    sys.path.insert(0, os.path.join(REPO, "notebooks"))
    try:
        import _execute
    finally:
        sys.path.pop(0)
    path = _execute.execute("a5_test_context_length", str(tmp_path), quick=True, timeout=300)
    nb = nbformat.read(path, as_version=4)
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.output_type == "error"]
    images = [o for o in outputs if "image/png" in o.get("data", {})]
    assert len(images) == 1
    assert_figure_files(tmp_path / "files" / "a5_test_context_length")
