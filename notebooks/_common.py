"""Helpers shared by the figure notebooks (``notebooks/*.py``); not a notebook itself.

Every notebook is a jupytext ``py:percent`` file that also runs headless as a script::

    python notebooks/<name>.py [--quick] [--out DIR] [--no-sim]

``--quick`` selects small sizes, few seeds and coarse grids (used by ``tests/test_notebooks.py``
and ``make demo``); ``--out`` is the output folder (default ``out/figures``); ``--no-sim`` draws
the theory only. Inside Jupyter the command line of the kernel is ignored (``parse_known_args``)
and ``REPLICA_QUICK=1`` in the environment selects the quick mode.
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
    ap.add_argument("--out", default=DEFAULT_OUT, help=f"output folder (default {DEFAULT_OUT})")
    ap.add_argument("--no-sim", action="store_true", help="theory curves only, no simulations")
    args, _ = ap.parse_known_args(sys.argv[1:] if argv is None else argv)
    if os.environ.get("REPLICA_QUICK") == "1":
        args.quick = True
    os.makedirs(args.out, exist_ok=True)
    return args


def pyplot():
    """matplotlib.pyplot with the Agg backend (headless), unless running inside a kernel."""
    import matplotlib

    if "ipykernel" not in sys.modules:
        matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


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

    def figure(self, fig, suffix: str = ".png", dpi: int = 130) -> str:
        p = self.path(suffix)
        fig.savefig(p, dpi=dpi)
        self.files.append(p)
        return p

    def add(self, path: str) -> None:
        self.files.append(path)

    def report(self) -> None:
        print(f"{self.stem}: wrote")
        for f in self.files:
            print("  " + f)
