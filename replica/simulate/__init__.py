r"""Finite-size simulations of linear attention trained by exact ridge regression.

>>> from replica.simulate import simulate
>>> r = simulate("isotropic", d=8, seeds=3, alpha=2, tau=3, kappa=1, rho="1/100")
>>> sorted(r.errors)
['e_icl', 'e_idg']
>>> r.errors["e_icl"].seeds
3

Each seed ``i`` of a run with base seed ``S`` uses ``numpy.random.SeedSequence(S).spawn(N)[i]``,
so a run is reproducible and seed ``i`` is the same in any run (``simulate``, ``replica sweep``).
For every error (and every declared order parameter) the result holds the mean over seeds, its
standard error (sample standard deviation / sqrt(N)), the theory value at the nominal parameters
and the z-score ``(mean - theory) / sem``.

Modules: :mod:`.sampling` (tasks, contexts, the exact-in-law fast sampler), :mod:`.solver`
(structured primal/dual ridge, preconditioned conjugate gradients, naive dense reference),
:mod:`.backend` (NumPy or PyTorch arrays for the CG solver), :mod:`.evaluate` (exact expected test
error, Monte Carlo, order parameters), :mod:`.experiment` (one seed of each model, theory),
:mod:`.report` (theory-vs-simulation tables and plots), :mod:`.sweep` (grids of points, cached on
disk, run locally or on Dask).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from .experiment import Experiment, make_experiment, run_seed, score_row, theory, with_scores


def _num(x):
    """A float as its shortest round-trip decimal string (``None`` stays ``None``)."""
    return None if x is None else repr(float(x))


@dataclasses.dataclass
class Estimate:
    """Mean over seeds with its standard error, the theory value and the z-score."""

    mean: float
    sem: float | None
    seeds: int
    theory: float | None = None

    @property
    def z(self) -> float | None:
        if self.theory is None or self.sem is None or self.sem == 0:
            return None
        return (self.mean - self.theory) / self.sem

    @property
    def relative_deviation(self) -> float | None:
        if self.theory is None or self.theory == 0:
            return None
        return (self.mean - self.theory) / abs(self.theory)

    @classmethod
    def from_values(cls, values, theory_value=None) -> "Estimate":
        v = np.asarray(values, dtype=float)
        sem = float(v.std(ddof=1) / math.sqrt(v.size)) if v.size > 1 else None
        return cls(float(v.mean()), sem, int(v.size), theory_value)

    def to_json_dict(self) -> dict:
        return {"mean": _num(self.mean), "sem": _num(self.sem), "seeds": self.seeds,
                "theory": _num(self.theory), "z": _num(self.z)}


@dataclasses.dataclass
class SimulationResult:
    """Outcome of :func:`simulate` (its JSON output: ``errors``,
    ``order_parameters`` where the model declares them, ``d``, ``seed``)."""

    model: str
    params: dict
    d: int
    seed: int
    sizes: dict
    options: dict
    errors: dict
    order_parameters: dict
    per_seed: list
    theory_dps: int | None
    notes: list
    scores: list = dataclasses.field(default_factory=list)
    """One row per (test covariance, test context length) the trained Gammas were scored on:
    ``{"test": spec (alignment), "alpha_test": ..., "ell_test": int, "errors": {key:
    Estimate}}`` (empty unless lists were given)."""

    def score_table(self) -> list[dict]:
        """The score rows flattened, one dict per (row, error key): the row's parameters,
        ``key``, ``mean``, ``sem``, ``seeds``, ``theory``, ``z`` (floats or ``None``)."""
        out = []
        for row in self.scores:
            label = {k: v for k, v in row.items() if k != "errors"}
            for key, e in row["errors"].items():
                out.append({**label, "key": key, "mean": e.mean, "sem": e.sem,
                            "seeds": e.seeds, "theory": e.theory, "z": e.z})
        return out

    def to_json_dict(self) -> dict:
        out = {"model": self.model, "params": dict(self.params), "d": self.d, "seed": self.seed,
               "seeds": len(self.per_seed), "sizes": dict(self.sizes),
               "options": dict(self.options), "theory_dps": self.theory_dps,
               "errors": {k: e.to_json_dict() for k, e in self.errors.items()}}
        if self.order_parameters:
            out["order_parameters"] = {k: e.to_json_dict()
                                       for k, e in self.order_parameters.items()}
        if self.scores:
            out["scores"] = [{**{k: v for k, v in row.items() if k != "errors"},
                              "errors": {k: e.to_json_dict() for k, e in row["errors"].items()}}
                             for row in self.scores]
        out["notes"] = list(self.notes)
        return out

    def _estimates(self) -> dict:
        return {**{k: ("errors", e) for k, e in self.errors.items()},
                **{k: ("order_parameters", e) for k, e in self.order_parameters.items()}}

    def to_pandas(self, per_seed: bool = False):
        """A ``pandas.DataFrame``: one row per quantity (``group``, ``mean``, ``sem``,
        ``seeds``, ``theory``, ``z``, ``relative_deviation``, indexed by the quantity), or with
        ``per_seed`` one row per seed (``seed`` 0..N-1, a column per quantity). The parameters
        (exact strings), ``d`` and the model are in ``.attrs``."""
        from ..tables import require

        pd = require("pandas")
        if per_seed:
            frame = pd.DataFrame([{"seed": i, **r["errors"], **r.get("order_parameters", {})}
                                  for i, r in enumerate(self.per_seed)])
        else:
            frame = pd.DataFrame(
                [{"quantity": k, "group": g, "mean": e.mean, "sem": e.sem, "seeds": e.seeds,
                  "theory": e.theory, "z": e.z, "relative_deviation": e.relative_deviation}
                 for k, (g, e) in self._estimates().items()]).set_index("quantity")
            for c in ("mean", "sem", "theory", "z", "relative_deviation"):
                frame[c] = frame[c].astype("float64")
        frame.attrs.update(model=self.model, d=self.d, seed=self.seed, **self.params)
        return frame

    def to_xarray(self):
        """An ``xarray.Dataset`` over ``seed``: every quantity's value per seed, and
        ``QUANTITY_theory`` (NaN where there is none); parameters, ``d`` and model in
        ``attrs``."""
        from ..tables import require

        xr = require("xarray")
        per = self.to_pandas(per_seed=True).set_index("seed")
        ds = xr.Dataset.from_dataframe(per)
        for k, (_, e) in self._estimates().items():
            ds[k + "_theory"] = float("nan") if e.theory is None else float(e.theory)
        ds.attrs.update(model=self.model, d=self.d, seed=self.seed,
                        **{k: str(v) for k, v in self.params.items()})
        return ds


def aggregate(exp: Experiment, per_seed: list, theory_values: dict | None, seed: int,
              theory_dps: int | None, theory_at: str = "nominal",
              score_theory: list | None = None) -> SimulationResult:
    """Combine per-seed results (as returned by :func:`run_seed`) into a result;
    ``score_theory`` holds the theory of each score row (:func:`theory` of its variant)."""
    th = theory_values or {}
    errors = {k: Estimate.from_values([r["errors"][k] for r in per_seed],
                                      th.get("errors", {}).get(k))
              for k in exp.sim.error_keys}
    order = {k: Estimate.from_values([r["order_parameters"][k] for r in per_seed],
                                     th.get("order_parameters", {}).get(k))
             for k in exp.sim.order_parameters}
    notes = exp.notes(theory_at)
    if theory_values is None:
        notes.append("no theory value: " + ("not requested" if theory_dps is None else
                                            "the model's theory is not available"))
    if len(per_seed) < 2:
        notes.append("one seed: no standard error, no z-score")
    sizes = {k: v for k, v in exp.sizes.items() if v is not None}
    scores = []
    for i, variant in enumerate(exp.scores):
        th_row = ((score_theory or [None] * len(exp.scores))[i] or {}).get("errors", {})
        scores.append({**score_row(variant), "errors": {
            k: Estimate.from_values([r["scores"][i][k] for r in per_seed], th_row.get(k))
            for k in exp.sim.score_errors}})
    return SimulationResult(exp.model, exp.echo(), exp.d, seed, sizes, exp.options(), errors,
                            order, per_seed, theory_dps if theory_values else None, notes,
                            scores)


def seed_sequences(seed: int, seeds: int) -> list:
    """``numpy.random.SeedSequence(seed).spawn(seeds)``."""
    return np.random.SeedSequence(int(seed)).spawn(int(seeds))


def simulate(model, d, seeds: int = 10, seed: int = 0, *, with_theory: bool = True,
             dps: int = 20, task_law: str = "gaussian", balanced: bool = False,
             sampler: str = "fast", solver: str = "auto", test_prompts: int = 0,
             theory_at: str = "nominal", backend: str = "numpy", progress=None,
             **params) -> SimulationResult:
    """Simulate ``model`` at dimension ``d`` over ``seeds`` independent draws and compare with
    the theory. ``model``: a built-in model's name, a registry entry
    (:mod:`replica.registry`) or a :class:`~replica.simulate.source.ModelSource`; a model whose
    ``SIMULATION`` is a plain :class:`~replica.capabilities.Simulation` (a model file's sample,
    train and measure) runs through :func:`replica.simulate.declared.simulate_declared` (the
    options of linear attention do not apply to it).

    ``params`` are the model's parameters, as for ``solve`` (``alpha, tau, kappa, rho, lam`` and
    ``train, test, alpha_test`` for alignment; ``sigma, alpha_test, sigma_test, test`` for
    lowrank), as
    exact strings, ints or Fractions. ``test_prompts = 0`` evaluates each error by its exact
    closed-form expectation; ``N > 1`` by ``N`` sampled test prompts per error and seed.
    ``theory_at = "realised"`` evaluates the theory at the ratios the integer sizes realise.

    Scoring one trained Gamma on several test laws: the model's declared ``score_parameters``
    (alignment ``test`` and ``alpha_test``, lowrank ``test`` and ``alpha_test``) may be lists (or
    comma-separated strings); ``errors`` then hold the first combination and ``scores`` every
    combination, each with its own theory value. ``solver`` is ``auto``, ``direct``, ``cg``,
    ``primal``, ``dual`` or ``naive`` (:func:`replica.simulate.solver.ridge_structured`);
    ``backend`` (``numpy`` or ``torch``) holds the conjugate-gradient solver's arrays.
    ``progress``: a ``report(done, total)`` callback, called after each seed.
    """
    from ..errors import ParameterError

    try:
        seeds_i, seed_i = int(seeds), int(seed)
    except (TypeError, ValueError):
        raise ParameterError("--seeds", f"seeds and seed must be integers, got {seeds!r}, "
                                        f"{seed!r}") from None
    if seeds_i < 1:
        raise ParameterError("--seeds", f"must be at least 1, got {seeds_i}")
    if seed_i < 0:
        raise ParameterError("--seed", f"must be non-negative, got {seed_i}")
    from ..capabilities import LinearAttentionICL
    from .source import as_source

    source = as_source(model)
    sim = source.simulation
    if not isinstance(sim, LinearAttentionICL):
        from .declared import simulate_declared

        return simulate_declared(source, d, seeds_i, seed_i, with_theory=with_theory, dps=dps,
                                 progress=progress, **params)
    lists = {}
    for key in sim.score_parameters:
        val = params.get(key)
        if isinstance(val, (list, tuple)) or (isinstance(val, str) and "," in val):
            items = [str(v).strip() for v in (val.split(",") if isinstance(val, str) else val)]
            if not items or any(not v for v in items):
                raise ParameterError("--" + key.replace("_", "-"),
                                     f"empty item in the list {val!r}")
            lists[key] = items
            params[key] = items[0]
    exp = make_experiment(source, d, task_law=task_law, balanced=balanced, sampler=sampler,
                          solver=solver, test_prompts=test_prompts, backend=backend, **params)
    exp = with_scores(exp, **lists)
    per_seed = []
    for ss in seed_sequences(seed_i, seeds_i):
        per_seed.append(run_seed(exp, ss))
        if progress:
            progress(len(per_seed), seeds_i)
    th = theory(exp, dps, theory_at) if with_theory else None
    th_rows = ([theory(v, dps, theory_at) for v in exp.scores] if with_theory and exp.scores
               else None)
    return aggregate(exp, per_seed, th, seed_i, dps if with_theory else None, theory_at,
                     th_rows)


__all__ = ["Estimate", "Experiment", "SimulationResult", "aggregate", "make_experiment",
           "run_seed", "seed_sequences", "simulate", "theory"]
