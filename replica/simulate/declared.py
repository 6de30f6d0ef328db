r"""Simulations a model file declares: ``SIMULATION = Simulation(sample, train, measure)``
(:class:`replica.capabilities.Simulation`), run against the model's own theory.

Seed :math:`i` of a run of :math:`N` seeds with base seed :math:`S` draws from
``numpy.random.default_rng(SeedSequence(S).spawn(N)[i])`` (the same child as
``SeedSequence(S, spawn_key=(i,))``, so ``replica sweep`` and ``replica simulate`` agree seed by
seed): ``instance = sample(rng, d, params)``, ``estimate = train(instance, params)``,
``values = measure(instance, estimate, params)``. For every measured name :math:`Q` the result
holds the mean :math:`\bar Q` over seeds, its standard error :math:`s/\sqrt N` (:math:`s` the
sample standard deviation), the theory :math:`Q_\infty` -- the value of that name in the model's
solve at the same parameters (:func:`replica.numerics.driver.solve_params`; ``errors.test`` or
``test``) -- and :math:`z = (\bar Q - Q_\infty)/(s/\sqrt N)`.

When the model has a parameter ``d`` (e.g. the size at which a covariance SPEC is evaluated), the
simulation's dimension is that parameter, so the theory is solved at the same finite-``d``
spectrum the samples are drawn from.
"""

from __future__ import annotations

import numpy as np

from ..errors import ParameterError
from ..modeling import ModelError
from ..params import parse_exact
from .source import ModelSource, as_source


def no_simulation(source: ModelSource) -> ParameterError:
    """The one-line error for a model that declares no simulation."""
    return ParameterError("--model", f"{source.path or source.name} declares no SIMULATION: "
                                     "define SIMULATION = Simulation(sample, train, measure) "
                                     "(from replica.capabilities) in the model file to simulate "
                                     "it")


def declared_simulation(source: ModelSource):
    """The model's plain :class:`~replica.capabilities.Simulation` (an error naming what to
    declare if there is none)."""
    from ..capabilities import Simulation

    sim = source.simulation
    if sim is None:
        raise no_simulation(source)
    if not isinstance(sim, Simulation):
        raise ModelError(f"{source.label}: SIMULATION must be a replica.capabilities.Simulation, "
                         f"got {type(sim).__name__}")
    return sim


def parse_d(d, option: str = "--d") -> int:
    """The simulation's dimension: an integer at least 1."""
    dd = parse_exact(d, option)
    if dd != int(dd) or dd < 1:
        raise ParameterError(option, f"must be a positive integer, got {d!r}")
    return int(dd)


def point(source: ModelSource, d: int, raw: dict):
    """The parsed parameters (:class:`~replica.problem.Params`) of one point at dimension ``d``
    (``d`` is the model's own parameter ``d`` when it has one)."""
    schema = source.schema
    raw = {k: v for k, v in raw.items() if v is not None}
    if "d" in schema:
        raw["d"] = d
    return schema.parse(raw)


def run_declared_seed(source: ModelSource, d: int, params, seed_seq) -> dict:
    """One seed: ``{"errors": {name: float}}`` from the model's sample, train and measure."""
    sim = declared_simulation(source)
    rng = np.random.default_rng(seed_seq)
    instance = sim.sample(rng, d, params)
    estimate = sim.train(instance, params)
    values = sim.measure(instance, estimate, params)
    if not isinstance(values, dict) or not values:
        raise ModelError(f"{source.label}: SIMULATION.measure must return a non-empty dict "
                         f"{{name: value}}, got {type(values).__name__}")
    out = {}
    for key, v in values.items():
        try:
            out[str(key)] = float(v)
        except (TypeError, ValueError):
            raise ModelError(f"{source.label}: SIMULATION.measure returned {v!r} for {key!r}, "
                             "not a number") from None
    return {"errors": out}


def theory_value(result, key: str, source: ModelSource):
    """The value named ``key`` (``group.name`` or ``name``) of a solve of the model."""
    group, _, name = key.rpartition(".")
    groups = getattr(result, "groups", None) or {}
    if group and group in groups and name in groups[group] \
            and not isinstance(groups[group][name], dict):
        return groups[group][name]
    try:
        return result[key if not group else name]
    except KeyError:
        names = ", ".join(source.problem.report_names())
        raise ModelError(f"{source.label}: SIMULATION.measure returned {key!r}, which the "
                         f"model does not report (it reports {names})") from None


def solve_theory(source: ModelSource, params, dps: int):
    """The model's verified solve at ``params``."""
    from ..numerics.driver import solve_params

    return solve_params(source.problem, params, dps=dps)


def simulate_declared(model, d, seeds: int = 10, seed: int = 0, *, with_theory: bool = True,
                      dps: int = 20, progress=None, **raw):
    """Simulate a model with a declared :class:`~replica.capabilities.Simulation` at dimension
    ``d`` over ``seeds`` seeds and compare each measured value with the theory; returns a
    :class:`replica.simulate.SimulationResult` (its ``errors`` are the measured values)."""
    from .result import seed_sequences

    source = as_source(model)
    declared_simulation(source)  # one line naming what to declare, if there is none
    d = parse_d(d)
    seeds_i, seed_i = int(seeds), int(seed)
    if seeds_i < 1:
        raise ParameterError("--seeds", f"must be at least 1, got {seeds_i}")
    if seed_i < 0:
        raise ParameterError("--seed", f"must be non-negative, got {seed_i}")
    params = point(source, d, raw)
    per_seed = []
    for ss in seed_sequences(seed_i, seeds_i):
        per_seed.append(run_declared_seed(source, d, params, ss))
        if progress:
            progress(len(per_seed), seeds_i)
    keys = list(per_seed[0]["errors"])
    for r in per_seed[1:]:
        if list(r["errors"]) != keys:
            raise ModelError(f"{source.label}: SIMULATION.measure returned different names for "
                             f"different seeds ({keys} and {list(r['errors'])})")
    th, status = {}, None
    if with_theory:
        res = solve_theory(source, params, dps)
        th = {k: float(theory_value(res, k, source)) for k in keys}
        status = res.status.value
    return result(source, params, d, seed_i, per_seed, th if with_theory else None,
                  dps if with_theory else None, theory_status=status)


def result(source, params, d, seed, per_seed, theory, dps, theory_status=None):
    """A :class:`replica.simulate.SimulationResult` from per-seed values and the theory
    (``{name: float}`` or ``None``; ``theory_status`` the status of its solve)."""
    from .result import Estimate, SimulationResult

    sim = declared_simulation(source)
    keys = list(per_seed[0]["errors"])
    errors = {k: Estimate.from_values([r["errors"][k] for r in per_seed],
                                      None if theory is None else theory.get(k))
              for k in keys}
    notes = []
    if theory is None:
        notes.append("no theory value: not requested")
    if len(per_seed) < 2:
        notes.append("one seed: no standard error, no z-score")
    sizes = {k: int(v) for k, v in (sim.sizes(d, params) if sim.sizes else {}).items()}
    echo = {k: v for k, v in params.echo().items() if k != "d"}
    return SimulationResult(source.name, echo, d, seed, sizes, {}, errors, {}, per_seed, dps,
                            notes, theory_status=theory_status)
