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

from .experiment import Experiment, make_experiment, run_seed, score_row, theory, with_scores
from .result import Estimate, SimulationResult, seed_sequences


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
                            scores, theory_status=th.get("status"))


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
