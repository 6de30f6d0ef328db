"""Helpers shared by the figure notebooks (``notebooks/*.py``); not a notebook itself.

Every notebook is a jupytext ``py:percent`` file that also runs headless as a script::

    python notebooks/<name>.py [--quick] [--out DIR] [--no-sim]

``--quick`` selects small sizes, few seeds and coarse grids (used by ``tests/test_notebooks.py``
and ``make demo``); ``--out`` is the output folder (default ``out/figures``); ``--no-sim`` draws
the theory only. Inside Jupyter the command line of the kernel is ignored (``parse_known_args``),
``REPLICA_QUICK=1`` in the environment selects the quick mode and ``REPLICA_OUT`` the output
folder.

Figures take the package's style (:mod:`replica.figures`: Okabe--Ito colours, mathtext) and are
written as PNG, PDF and SVG; run as a script they are closed after saving, in a Jupyter kernel
they are shown inline (``make notebooks`` writes the executed ``.ipynb`` files).
"""

from __future__ import annotations

import argparse
import csv
import math
import os
import sys

DEFAULT_OUT = os.path.join("out", "figures")


def parse_args(description: str, argv=None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--quick", action="store_true",
                    help="small d, few seeds, coarse grids (seconds instead of minutes)")
    default_out = os.environ.get("REPLICA_OUT") or DEFAULT_OUT
    ap.add_argument("--out", default=default_out,
                    help=f"output folder (default {DEFAULT_OUT}, or $REPLICA_OUT)")
    ap.add_argument("--no-sim", action="store_true", help="theory curves only, no simulations")
    args, _ = ap.parse_known_args(sys.argv[1:] if argv is None else argv)
    if os.environ.get("REPLICA_QUICK") == "1":
        args.quick = True
    os.makedirs(args.out, exist_ok=True)
    return args


def in_kernel() -> bool:
    """True inside a Jupyter (IPython) kernel."""
    if "ipykernel" not in sys.modules:
        return False
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    shell = get_ipython()
    return shell is not None and getattr(shell, "kernel", None) is not None


def pyplot():
    """matplotlib.pyplot in the package's style (:func:`replica.figures.rc_params`): the Agg
    backend (headless) in a script; in a kernel the inline backend, so that figures display
    (it is selected when the environment chose the non-interactive Agg, e.g. ``MPLBACKEND``)."""
    import matplotlib

    from replica.figures import rc_params

    if in_kernel():
        if matplotlib.get_backend().lower() == "agg":
            from IPython import get_ipython

            get_ipython().run_line_magic("matplotlib", "inline")
    else:
        matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    matplotlib.rcParams.update(rc_params())
    return plt


def show(fig) -> None:
    """Display ``fig`` inline in a kernel (once: pyplot's copy is closed), close it in a
    script."""
    if in_kernel():
        from IPython.display import display

        display(fig)
    import matplotlib.pyplot as plt

    plt.close(fig)


def show_file(path: str) -> None:
    """Display a PNG written by the library (e.g. a phase diagram) inline in a kernel."""
    if in_kernel():
        from IPython.display import Image, display

        display(Image(filename=path))


def simulate_or_none():
    """``replica.simulate.simulate`` if the simulation package is installed, else ``None``."""
    try:
        from replica.simulate import simulate
    except ImportError:
        return None
    return simulate


def num(x) -> str:
    """A float written with 17 significant digits (round-trip); empty for ``None``/NaN."""
    if x is None:
        return ""
    x = float(x)
    return "" if math.isnan(x) else f"{x:.17g}"


class Outputs:
    """Collects the files a notebook writes and prints them at the end."""

    def __init__(self, out_dir: str, stem: str):
        self.out = out_dir
        self.stem = stem
        self.files: list[str] = []

    def path(self, suffix: str) -> str:
        return os.path.join(self.out, self.stem + suffix)

    def csv(self, suffix: str, header, rows) -> str:
        p = self.path(suffix)
        with open(p, "w", newline="") as fh:
            w = csv.writer(fh)
            w.writerow(header)
            for r in rows:
                w.writerow([num(v) if isinstance(v, float) else v for v in r])
        self.files.append(p)
        return p

    def figure(self, fig, suffix: str = "") -> str:
        """Write ``fig`` as ``STEM+suffix`` ``.png``, ``.pdf`` and ``.svg``
        (:func:`replica.figures.save_figure`), then :func:`show` it; returns the PNG's path."""
        from replica.figures import save_figure

        paths = save_figure(fig, self.path(suffix))
        self.files.extend(paths)
        show(fig)
        return paths[0]

    def add(self, path: str) -> None:
        self.files.append(path)

    def report(self) -> None:
        print(f"{self.stem}: wrote")
        for f in self.files:
            print("  " + f)
