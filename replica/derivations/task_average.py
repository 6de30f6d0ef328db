r"""The average over the training tasks of the low-rank derivation, checked on the trained
:math:`\Gamma`.

The replica computation of the low-rank model (:mod:`replica.derivations.lowrank_from_model`)
meets, for a prompt with task :math:`w_\nu` (one of the :math:`k = \kappa D` training tasks), the
residual covariance :math:`\sigma^2 + \|w_\nu\|^2/D - 2m_\nu + Q_\nu + \varepsilon\bar Q`, with the
per-task overlaps

.. math::  m_\nu = w_\nu^\top\Gamma w_\nu/D, \qquad Q_\nu = w_\nu^\top\Gamma^\top\Gamma w_\nu/D,

and it replaces every per-task value by its mean over the training tasks. Two facts are needed:

1. The means are the traces of the order parameters, exactly: with the empirical task covariance
   :math:`S = \frac1k\sum_\nu w_\nu w_\nu^\top`, :math:`\frac1k\sum_\nu m_\nu =
   \operatorname{tr}(\Gamma S)/D = m` and :math:`\frac1k\sum_\nu Q_\nu =
   \operatorname{tr}(\Gamma S\Gamma^\top)/D = q` (cyclicity of the trace).
2. The per-task values concentrate on their mean (stated, not derived): their relative spread
   over the training tasks vanishes as :math:`D\to\infty`, like :math:`D^{-1/2}` for a quadratic
   form of a Gaussian vector in :math:`\rho D` dimensions.

Both are measured here on the :math:`\Gamma` of the simulation (exact ridge regression over
:math:`\tau D^2` sampled prompts, :func:`replica.simulate.experiment.train_lowrank`, the same draw
as ``replica simulate lowrank``) at one point with :math:`\lambda > 0`, for several :math:`D`
and seeds; the task means are also compared with the theory's :math:`m` and :math:`q` by the
finite-size fit of :mod:`replica.derivations.finite_size`
(:math:`\delta(D) = \delta_\infty + b/D`).

A control quantity that does **not** concentrate is recorded with the same draws: the contribution
of one coordinate, :math:`c_\nu = w_{\nu,1}(\Gamma w_\nu)_1` (its task mean is
:math:`(\Gamma S)_{11}`, a single diagonal entry, not the normalised trace). Its relative spread
over the tasks stays of order one at every :math:`D`, and the concentration criterion rejects it.

The table of per-seed summaries is shipped as ``data/task_average_lowrank.csv`` (written by
:func:`write_table`, run by ``studies/task_average/run.py``); the check recomputes its smallest
sizes live from the same seeds.
"""

from __future__ import annotations

import csv
import math
import os

import numpy as np

from . import finite_size

POINT = dict(alpha="2", tau="9/4", kappa="3/2", rho="1/2", sigma="3/10", lam="1/10")
"""The simulated point (every size below realises the ratios exactly: ``D`` even)."""

SIZES = (16, 24, 32, 48, 64)
SEEDS = 128
BASE_SEED = 2028
"""Seed ``i`` at size ``D`` is ``SeedSequence(BASE_SEED + D).spawn(SEEDS)[i]`` (the draw of
``replica simulate lowrank --d D --seed BASE_SEED+D --seeds SEEDS``): independent draws at
different sizes, so that the fits over the sizes have independent points."""

LIVE_SIZES = (16, 24)
LIVE_SEEDS = 3
"""The rows recomputed live by the check."""

DATA = os.path.join(os.path.dirname(__file__), "data", "task_average_lowrank.csv")
COLUMNS = ("d", "seed", "m_mean", "q_mean", "m_trace", "q_trace", "m_spread", "q_spread",
           "control_spread", "norm_mean")
"""Per seed: the task means of the per-task overlaps and the traces they must equal, the
relative spreads (standard deviation over the tasks over the mean) of the two overlaps and of
the control, and the mean of the squared task norms over D."""

MIN_DOUBLING = 2 ** 0.25
"""A concentrating quantity must shrink by at least this factor per doubling of D (a quarter
power; the expected rate is the half power), by three standard errors."""


def per_task(gamma: np.ndarray, W0: np.ndarray) -> dict:
    r"""The per-task quantities of one trained :math:`\Gamma` and the training tasks ``W0``
    (rows :math:`w_\nu`): :math:`m_\nu = w_\nu^\top\Gamma w_\nu/D`,
    :math:`Q_\nu = |\Gamma w_\nu|^2/D`, the control :math:`c_\nu = w_{\nu,1}(\Gamma w_\nu)_1`
    and the squared norms over :math:`D`."""
    D = gamma.shape[0]
    GW = W0 @ gamma.T  # rows Gamma w_nu
    return {"m": np.sum(W0 * GW, axis=1) / D, "q": np.sum(GW * GW, axis=1) / D,
            "control": W0[:, 0] * GW[:, 0], "norm": np.sum(W0 * W0, axis=1) / D}


def _spread(x: np.ndarray) -> float:
    """Standard deviation over the tasks relative to the mean."""
    return float(np.std(x) / abs(np.mean(x)))


def seed_row(d: int, seed: int) -> dict:
    """One row of the table: train the seed's Gamma at dimension ``d`` and summarise its
    per-task quantities."""
    from ..simulate.experiment import make_experiment, train_lowrank

    exp = make_experiment("lowrank", d, **POINT)
    gamma, W0, _ = train_lowrank(exp, np.random.SeedSequence(BASE_SEED + d).spawn(SEEDS)[seed])
    t = per_task(gamma, W0)
    S = W0.T @ W0 / W0.shape[0]
    return dict(d=d, seed=seed, m_mean=float(t["m"].mean()), q_mean=float(t["q"].mean()),
                m_trace=float(np.trace(gamma @ S) / d),
                q_trace=float(np.trace(gamma @ S @ gamma.T) / d),
                m_spread=_spread(t["m"]), q_spread=_spread(t["q"]),
                control_spread=_spread(t["control"]), norm_mean=float(t["norm"].mean()))


def write_table(path: str = DATA, sizes=SIZES, seeds: int = SEEDS) -> None:
    """Sample every size and seed and write the table (``csv``, full float precision)."""
    with open(path, "w", newline="", encoding="utf-8") as fh:
        out = csv.DictWriter(fh, fieldnames=COLUMNS)
        out.writeheader()
        for d in sizes:
            for i in range(seeds):
                out.writerow({k: repr(v) for k, v in seed_row(d, i).items()})


def read_table(path: str = DATA) -> list[dict]:
    """The shipped rows (``d`` and ``seed`` as ints, the rest as floats)."""
    with open(path, newline="", encoding="utf-8") as fh:
        return [{k: (int(v) if k in ("d", "seed") else float(v)) for k, v in r.items()}
                for r in csv.DictReader(fh)]


def by_size(rows: list[dict], key: str) -> dict:
    """``{D: (mean over seeds, standard error, seeds)}`` of column ``key``."""
    out = {}
    for d in sorted({r["d"] for r in rows}):
        x = np.array([r[key] for r in rows if r["d"] == d])
        out[d] = (float(x.mean()), float(x.std(ddof=1) / math.sqrt(len(x))), len(x))
    return out


def identity_residual(rows: list[dict]) -> float:
    """The largest relative difference between a task mean and its trace."""
    return max(abs(r[f"{k}_mean"] - r[f"{k}_trace"]) / abs(r[f"{k}_trace"])
               for r in rows for k in ("m", "q"))


def spread_power(rows: list[dict], key: str) -> tuple:
    r"""The power :math:`p` of :math:`\text{spread}\propto D^{p}` fitted by weighted least
    squares to the logarithms of the seed means (weights from their standard errors), with its
    standard error."""
    s = by_size(rows, key)
    d = np.array(sorted(s), dtype=float)
    y = np.log([s[k][0] for k in sorted(s)])
    e = np.array([s[k][1] / s[k][0] for k in sorted(s)])
    X = np.column_stack([np.ones_like(d), np.log(d)])
    w = 1 / e**2
    cov = np.linalg.inv(X.T @ (w[:, None] * X))
    beta = cov @ X.T @ (w * y)
    return float(beta[1]), float(math.sqrt(cov[1, 1]))


def doublings(rows: list[dict], key: str) -> list:
    """``(D, ratio, standard error)``: the spread at D over the spread at 2D, for every D of the
    table whose double is in it (errors propagated from the seeds' standard errors)."""
    s = by_size(rows, key)
    out = []
    for d in sorted(s):
        if 2 * d in s:
            (a, ea, _), (b, eb, _) = s[d], s[2 * d]
            ratio = a / b
            out.append((d, ratio, ratio * math.hypot(ea / a, eb / b)))
    return out


def concentrates(rows: list[dict], key: str) -> bool:
    """Every doubling of D shrinks the relative spread by more than :data:`MIN_DOUBLING`, by
    three standard errors, and the fitted power is below minus a quarter by three of its
    standard errors."""
    p, ep = spread_power(rows, key)
    return (all(r - finite_size.SIGMAS * e > MIN_DOUBLING for _, r, e in doublings(rows, key))
            and p + finite_size.SIGMAS * ep < -0.25)


def theory(point: dict = POINT) -> dict:
    """The theory's ``m`` and ``q`` at the point (the verified solve, 20 digits)."""
    from ..models.lowrank_problem import PROBLEM
    from .base import cached_solver

    r = cached_solver(PROBLEM, 20)(**point)
    return {"m": float(r["m"]), "q": float(r["q"])}


def fit_rows(rows: list[dict], theory_values: dict) -> list[dict]:
    """The task means in the row format of :func:`replica.derivations.finite_size.fit`."""
    out = []
    for key in ("m", "q"):
        for d, (mean, sem, n) in by_size(rows, f"{key}_mean").items():
            out.append(dict(d=d, key=key, mean=mean, sem=sem, seeds=n,
                            theory=theory_values[key]))
    return out


def convergence(rows: list[dict], theory_values: dict, theory_shift: float = 0.0) -> dict:
    """``{key: Fit}``: the fit of the relative deviation of the task means from the theory,
    the theory multiplied by ``1 + theory_shift`` first."""
    fr = fit_rows(rows, theory_values)
    return {k: finite_size.fit(fr, k, theory_shift) for k in ("m", "q")}


SHIFT = 0.03
"""The planted wrong theory: the theory's values multiplied by ``1 +- SHIFT``."""


def live_rows(sizes=LIVE_SIZES, seeds: int = LIVE_SEEDS) -> list[dict]:
    """The first rows of the table, recomputed now."""
    return [seed_row(d, i) for d in sizes for i in range(seeds)]


def same_rows(live: list[dict], shipped: list[dict], rtol: float = 1e-9) -> bool:
    """Every live row is in the shipped table with the same values (to ``rtol``: the ridge
    solve is repeated with another BLAS, so only rounding may differ)."""
    index = {(r["d"], r["seed"]): r for r in shipped}
    for r in live:
        s = index.get((r["d"], r["seed"]))
        if s is None or any(abs(r[k] - s[k]) > rtol * abs(s[k]) for k in COLUMNS[2:]):
            return False
    return True


def transposed_identity_residual(d: int = LIVE_SIZES[0], seed: int = 0) -> float:
    r"""The planted wrong identity: the relative difference between the task mean of
    :math:`w_\nu^\top\Gamma\Gamma^\top w_\nu/D` (the product in the wrong order) and
    :math:`\operatorname{tr}(\Gamma S\Gamma^\top)/D`, on a trained :math:`\Gamma` (not
    symmetric, so the two differ)."""
    from ..simulate.experiment import make_experiment, train_lowrank

    exp = make_experiment("lowrank", d, **POINT)
    gamma, W0, _ = train_lowrank(exp, np.random.SeedSequence(BASE_SEED + d).spawn(SEEDS)[seed])
    wrong = per_task(gamma.T, W0)["q"].mean()
    S = W0.T @ W0 / W0.shape[0]
    right = np.trace(gamma @ S @ gamma.T) / d
    return float(abs(wrong - right) / abs(right))


def check_text() -> str:
    """The check of :func:`check_trained`, as prose for the appendix's verification table."""
    return (
        f"Stated step, checked on the trained Gamma of the simulation (exact ridge regression "
        f"over the sampled prompts) at {describe()}, for D = "
        f"{', '.join(str(d) for d in SIZES)} with {SEEDS} independent draws each (shipped; "
        f"the first {LIVE_SEEDS} draws at D = {' and '.join(str(d) for d in LIVE_SIZES)} "
        "recomputed and found equal to 1e-9). (1) The task means of the per-task overlaps "
        "equal tr(Gamma S)/D and tr(Gamma S Gamma^T)/D to 1e-12, and with the product in the "
        "wrong order, Gamma Gamma^T, the second differs by more than 1e-3. (2) The relative "
        "spreads over the tasks shrink by more than 2^(1/4) per doubling of D and their fitted "
        "power is below -1/4, each by three standard errors; the contribution of one "
        "coordinate, which does not concentrate, fails this test. (3) The task means "
        "extrapolate to the theory's m and q: the fit delta(D) = delta_infty + b/D of their "
        f"relative deviation has delta_infty within {finite_size.SIGMAS} standard errors of 0, "
        f"and fails against a theory {round(100 * SHIFT)} % too high or too low.")


def check_trained(rows: list[dict] | None = None) -> bool:
    """The first three parts of the check on the trained Gamma (:func:`check_text`)."""
    rows = read_table() if rows is None else rows
    live = live_rows()
    if not same_rows(live, rows):
        return False
    # (1) the task means are the traces, to rounding; the wrong order of the product is not
    if identity_residual(rows) > 1e-12 or identity_residual(live) > 1e-12:
        return False
    if transposed_identity_residual() < 1e-3:
        return False
    # (2) the per-task overlaps concentrate; the control does not
    if not (concentrates(rows, "m_spread") and concentrates(rows, "q_spread")):
        return False
    if concentrates(rows, "control_spread"):
        return False
    # (3) the task means extrapolate to the theory; (4) a theory shifted by SHIFT is rejected
    th = theory()
    if not all(f.consistent for f in convergence(rows, th).values()):
        return False
    return all(not f.consistent for s in (SHIFT, -SHIFT)
               for f in convergence(rows, th, s).values())


def _pm(mean: float, err: float, digits: int, signed: bool = False) -> str:
    text = f"{mean:+.{digits}f}" if signed else f"{mean:.{digits}f}"
    return f"{text} \u00b1 {err:.{digits}f}".replace("-", "\u2212")


def table(symbols: dict, rows: list[dict] | None = None):
    """The appendix table: per size, the seeds' mean relative spreads of the two per-task
    overlaps and of the control, and the relative deviations of the task means from the
    theory, each with its standard error; the last row the fitted spread powers and the
    extrapolated deviations. ``symbols``: the SymPy symbols of the headers (keys ``D``,
    ``m_nu``, ``Q_nu``, ``c_nu``, ``delta_m``, ``delta_q``; the spreads' headers name the
    symbol in prose, which the appendix typesets by its display name)."""
    from ..latex.tables import ValueTable

    rows = read_table() if rows is None else rows
    th = theory()
    fits = convergence(rows, th)
    spreads = {k: by_size(rows, f"{k}_spread") for k in ("m", "q", "control")}
    body = []
    for d in sorted(spreads["m"]):
        cells = [d] + [_pm(*spreads[k][d][:2], 3) for k in ("m", "q", "control")]
        for key in ("m", "q"):
            f = fits[key]
            i = f.sizes.index(d)
            cells.append(_pm(f.deviations[i], f.errors[i], 4, signed=True))
        body.append(tuple(cells))
    body.append(("fit", *[_pm(*spread_power(rows, f"{k}_spread"), 3, signed=True)
                          for k in ("m", "q", "control")],
                 *[_pm(fits[k].intercept, fits[k].intercept_error, 4, signed=True)
                   for k in ("m", "q")]))
    seeds = sorted({n for *_, n in by_size(rows, "m_mean").values()})
    return ValueTable(
        caption=f"The trained Gamma at {describe()}, {seeds[0]} independent draws per size: "
                "the relative spread over the training tasks (standard deviation over mean) of "
                "m_nu, Q_nu and the control c_nu, and the relative deviations delta_m, delta_q "
                f"of their task means from the theory's m = {th['m']:.6f} and q = {th['q']:.6f}, "
                "each the mean over the draws with one standard error. Last row: the exponent "
                "of a power-law fit of the spread, proportional to D^p, and the extrapolation "
                "delta_infty of the fit delta(D) = delta_infty + b/D.",
        columns=(symbols["D"], *[f"spread of {symbols[k]}" for k in ("m_nu", "Q_nu", "c_nu")],
                 symbols["delta_m"], symbols["delta_q"]),
        rows=tuple(body), align="lrrrrr")


def describe() -> str:
    """The simulated point, as prose."""
    names = {"alpha": "alpha", "tau": "tau", "kappa": "kappa", "rho": "rho", "sigma": "sigma",
             "lam": "lambda"}
    return ", ".join(f"{names[k]} = {v}" for k, v in POINT.items())
