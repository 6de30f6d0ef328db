"""What the built-in models' own command variants share (the papers' fixed-axis phase diagrams)."""

from __future__ import annotations

#: The file formats of every figure (:data:`replica.figures.FORMATS`, without importing it).
FIGURE_SUFFIXES = (".png", ".pdf", ".svg")

TAU_ONE = ("the ridgeless (lambda = 0) diagram diverges at tau = 1, the interpolation threshold: "
           "choose tau != 1")


def figure_files(stem: str) -> list:
    return [stem + s for s in FIGURE_SUFFIXES]


def diagram_outputs(stem: str) -> list:
    """The files a paper's diagram writes: its figures, ``_grid.csv`` and ``_boundary.csv``."""
    return figure_files(stem) + [stem + "_grid.csv", stem + "_boundary.csv"]


def progress(label: str):
    from ..commands.common import progress_bar

    return progress_bar(label, unit="row")


def add_out(parser) -> None:
    parser.add_argument("-o", "--out", required=True, help="output folder")
    parser.add_argument("--force", action="store_true", help="overwrite files already in --out")


def transition_epilog(name: str) -> str:
    return (f"Any reported quantity and parameter: replica transition --model {name} --vary NAME "
            "--between LO,HI --quantity Q --kind max|min|level|kink|crossover [--PARAM V ...] "
            f"(see replica transition --model {name} --help).")


def plane_epilog(name: str) -> str:
    return (f"Any two parameters and any reported quantity: replica phase-diagram {name} "
            "--x NAME:LO:HI[:N][:log] --y NAME:LO:HI[:N][:log] --quantity Q -o DIR (see replica "
            f"phase-diagram --model {name} --help).")
