r"""What a simulation returns: per quantity the mean over seeds :math:`\bar Q`, its standard
error :math:`s/\sqrt N` (:math:`s` the sample standard deviation of the :math:`N` seeds), the
theory :math:`Q_\infty` and the z-score :math:`(\bar Q - Q_\infty)/(s/\sqrt N)`
(:class:`Estimate`), gathered in a :class:`SimulationResult`; and the seeds themselves
(:func:`seed_sequences`). Re-exported by :mod:`replica.simulate`.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np


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
    theory_status: str | None = None
    """The :class:`~replica.numerics.result.Status` value of the theory solve the means are
    compared with (``converged``: its digits verified by a re-solve; ``not-verified``: solved
    without the re-solve, as the linear-attention simulations do at ``theory_dps`` digits, far
    beyond a simulation's error bar), ``None`` without a theory."""

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
               "theory_status": self.theory_status,
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


def seed_sequences(seed: int, seeds: int) -> list:
    """``numpy.random.SeedSequence(seed).spawn(seeds)``."""
    return np.random.SeedSequence(int(seed)).spawn(int(seeds))
