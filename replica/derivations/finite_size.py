r"""Finite-size comparison of a built-in model's theory with simulations, for its appendix.

The theory is the :math:`d \to \infty` limit; a simulation at dimension :math:`d` (linear
attention trained by ridge regression, :mod:`replica.simulate`) deviates from it by finite-size
corrections. For every reported quantity :math:`Q` the relative deviation
:math:`\delta(d) = (\bar Q_d - Q_d)/Q_d` of the mean over seeds :math:`\bar Q_d` from the theory
:math:`Q_d` (solved at the same :math:`d`, whose discretised spectrum it uses) is fitted by
weighted least squares, weights :math:`1/s_d^2` with :math:`s_d` the standard error of
:math:`\delta(d)`, as

.. math::  \delta(d) = \delta_\infty + b/d,

the leading correction of a self-averaging quantity. The theory is confirmed when the
extrapolation :math:`\delta_\infty` is zero within three of its standard errors (the check of
the appendix's step; three standard errors, fixed before the data were seen, bound the chance
that one of ten independent quantities fails by accident to about 3 %).

The data are ``replica check`` tables (``check.csv``) shipped with the package
(``replica/derivations/data/finite_size_KEY.csv``), written by ``studies/finite_size/run.sh``
(the commands and parameters are in that script); the figure is drawn from them when the
appendix is written.
"""

from __future__ import annotations

import csv
import dataclasses
import math
import os

import numpy as np
import sympy

from ..latex.tables import Figure, ValueTable
from ..symbolic import Step

DATA = os.path.join(os.path.dirname(__file__), "data")
SIGMAS = 3
"""The extrapolation must be zero within this many standard errors."""

TITLES = {"finite_size": "Simulations extrapolated to infinite dimension"}
"""The heading of the step (a derivation that shows it merges it into its own)."""

DELTA_INF = sympy.Symbol("delta_infty")
CHI2 = sympy.Symbol("chi2_nu")
SLOPE = sympy.Symbol("b")
SYMBOL_NAMES = {DELTA_INF: r"\delta_{\infty}", CHI2: r"\chi^{2}/\nu"}
"""Display names of the fit's symbols (a derivation that shows the step merges them into its
own)."""


@dataclasses.dataclass(frozen=True)
class Fit:
    r"""The fit :math:`\delta(d) = \delta_\infty + b/d` of one quantity: ``intercept``
    :math:`\delta_\infty` with its standard error, ``slope`` :math:`b`, :math:`\chi^2` per degree
    of freedom; ``sizes``, ``deviations`` and ``errors`` are the points fitted."""

    key: str
    intercept: float
    intercept_error: float
    slope: float
    chi2_per_dof: float
    sizes: tuple
    deviations: tuple
    errors: tuple

    @property
    def pulls(self) -> float:
        """The extrapolation in units of its standard error."""
        return self.intercept / self.intercept_error

    @property
    def consistent(self) -> bool:
        """Whether the extrapolation is zero within :data:`SIGMAS` standard errors."""
        return abs(self.pulls) <= SIGMAS


def data_path(key: str) -> str:
    """The shipped ``check.csv`` of the study of model ``key``."""
    return os.path.join(DATA, f"finite_size_{key}.csv")


def read_rows(path: str) -> list[dict]:
    """The rows of a ``replica check`` table: ``d``, ``key``, ``mean``, ``sem``, ``seeds``,
    ``theory`` (numbers as floats, ``d`` and ``seeds`` as ints)."""
    with open(path, newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    out = []
    for r in rows:
        out.append(dict(d=int(r["d"]), key=r["key"], mean=float(r["mean"]), sem=float(r["sem"]),
                        seeds=int(r["seeds"]), theory=float(r["theory"])))
    return out


def fit(rows: list[dict], key: str, theory_shift: float = 0.0) -> Fit:
    r"""The weighted least-squares fit of :math:`\delta(d)` for quantity ``key``.
    ``theory_shift`` multiplies the theory by :math:`1 + \text{shift}` first (the test that a
    wrong theory is caught)."""
    pts = sorted((r for r in rows if r["key"] == key), key=lambda r: r["d"])
    if len(pts) < 3:
        raise ValueError(f"quantity {key!r}: {len(pts)} sizes, the fit needs at least 3")
    d = np.array([r["d"] for r in pts], dtype=float)
    theory = np.array([r["theory"] for r in pts]) * (1 + theory_shift)
    dev = (np.array([r["mean"] for r in pts]) - theory) / np.abs(theory)
    err = np.array([r["sem"] for r in pts]) / np.abs(theory)
    X = np.column_stack([np.ones_like(d), 1 / d])
    w = 1 / err**2
    cov = np.linalg.inv(X.T @ (w[:, None] * X))
    beta = cov @ X.T @ (w * dev)
    resid = (dev - X @ beta) / err
    return Fit(key, float(beta[0]), float(math.sqrt(cov[0, 0])), float(beta[1]),
               float(resid @ resid) / (len(d) - 2), tuple(int(x) for x in d),
               tuple(float(x) for x in dev), tuple(float(x) for x in err))


def fits(rows: list[dict], keys) -> list[Fit]:
    """:func:`fit` of every quantity of ``keys`` (in that order)."""
    return [fit(rows, k) for k in keys]


def _signed(x: float, digits: int = 4) -> str:
    return f"{x:+.{digits}f}".replace("-", "\u2212")


def draw(rows: list[dict], keys, labels: dict, path: str) -> None:
    r"""The figure (a 300 dpi PNG at ``path``): :math:`\delta(d)` against :math:`1/d` with error
    bars, and each fit's line down to :math:`1/d = 0`, for the quantities ``keys`` (legend:
    ``labels``, mathtext)."""
    from ..figures import new_figure, save_figure, series_style

    fig, ax = new_figure(figsize=(3.4, 2.2))
    for i, key in enumerate(keys):
        f = fit(rows, key)
        x = 1 / np.array(f.sizes, dtype=float)
        style = series_style(i)
        ax.errorbar(x, f.deviations, yerr=f.errors, fmt="o", ms=3, capsize=2,
                    color=style["color"], label=f"${labels[key]}$")
        xs = np.linspace(0, x.max() * 1.05, 50)
        ax.plot(xs, f.intercept + f.slope * xs, color=style["color"], lw=0.8,
                linestyle=style.get("linestyle", "-"))
    ax.axhline(0, color="black", lw=0.6)
    ax.set_xlim(left=0)
    ax.set_xlabel("$1/d$")
    ax.set_ylabel(r"$\delta(d)$")
    ax.legend(fontsize=7, frameon=False)
    fig.tight_layout()
    save_figure(fig, path, formats=("png",), dpi=300)


def step(key: str, symbols: dict, labels: dict, plotted, description: str,
         name: str = "finite_size") -> Step:
    r"""The appendix step of model ``key``: a table of the fits of every quantity of
    ``symbols`` (csv key -> SymPy symbol of the derivation), a figure of those in ``plotted``
    (legend ``labels``: csv key -> mathtext), and the check that every extrapolation is zero
    within :data:`SIGMAS` standard errors. ``description``: the simulated point, as prose."""
    rows = read_rows(data_path(key))
    keys = list(symbols)
    results = fits(rows, keys)
    sizes = sorted({r["d"] for r in rows})
    seeds = sorted({r["seeds"] for r in rows})
    table = ValueTable(
        caption=f"Fits delta(d) = delta_infty + b/d of the relative deviation of the "
                f"simulations from the theory, d = {sizes[0]} to {sizes[-1]}, {seeds[0]} seeds "
                f"per size: the deviation at d = {sizes[-1]}, the extrapolation delta_infty "
                "with its standard error, the slope b, and chi^2 per degree of freedom nu.",
        columns=("quantity", f"at d = {sizes[-1]}", DELTA_INF, SLOPE, CHI2),
        rows=tuple((symbols[f.key], _signed(f.deviations[-1], 3),
                    f"{_signed(f.intercept)} \u00b1 {f.intercept_error:.4f}",
                    f"{f.slope:.2f}", f"{f.chi2_per_dof:.2f}") for f in results),
        align="lrrrr")

    def draw_figure(path):
        draw(rows, plotted, labels, path)

    figure = Figure(
        caption="The relative deviation delta(d) of the simulations from the theory against "
                "1/d (mean over seeds, one standard error), with the weighted fits of "
                f"[[{name}.table]] extended to 1/d = 0.",
        name="finite-size", draw=draw_figure)

    def check():
        return all(fit(rows, k).consistent for k in keys)

    check.__doc__ = (
        f"Weighted least-squares fits of the relative deviation against 1/d over d = "
        f"{sizes[0]} to {sizes[-1]} ({seeds[0]} seeds per size): the extrapolation to 1/d = 0 "
        f"of every quantity of the table is zero within {SIGMAS} standard errors. The same "
        "check fails against a theory 4 % too high or too low.")

    return Step(
        # the figure before the table: in a two-column revtex paper the other order leaves
        # both floats stuck before the verification's longtable
        name, {"figure": figure, "table": table},
        f"Simulations of the trained linear attention at {description}, at d = "
        f"{', '.join(str(s) for s in sizes)} with {seeds[0]} seeds each, deviate from the "
        "theory by a correction that decreases like 1/d: the fits of [[" + name + ".table]] "
        "and [[" + name + ".figure]] extrapolate to d -> infinity at zero deviation within "
        f"{SIGMAS} standard errors for every quantity. The simulation data are shipped with the "
        "library, with the script that produced them.",
        check)
