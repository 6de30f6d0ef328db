r"""One finite-size experiment per model: parameters, one seed, and the theory to compare with.

Sizes, computed exactly from the rational parameters:
:math:`\ell = \lfloor\alpha d\rfloor`, :math:`n = \lfloor\tau d^2\rfloor`,
:math:`k = \lfloor\kappa d\rfloor` (``kappa = inf``: a fresh task per context), and for the
low-rank model :math:`r = \lfloor\rho D\rfloor`, :math:`\tilde L = \lfloor\tilde\alpha D\rfloor`.
With ``balanced`` (paper B) every task is used :math:`\mathrm{round}(\tau d^2/k)` times and
:math:`n` is that multiple of :math:`k`.

One seed (:func:`run_seed`) of a model declared by a
:class:`~replica.capabilities.LinearAttentionICL` (its task law, noise convention, features,
ridge normalisation and errors; the built-in models declare theirs in
``replica/registry/NAME.py``):

* **Gaussian task law**: pretraining tasks :math:`\mathcal N(0, C_{\rm train})` (the identity
  without a train covariance; or uniform on the sphere :math:`\|w\| = \sqrt d` with
  ``task_law="sphere"`` where the model offers it), contexts assigned uniformly (or balanced),
  :math:`h = (\hat w; s)`, ridge with regulariser :math:`n\lambda/d`, noise a variance. Errors
  on fresh tasks :math:`\mathcal N(0, C_{\rm test})` with test context length
  :math:`\lfloor\alpha_{\rm test}d\rfloor`, and on the pretraining tasks with the training
  context length (the theory's :math:`\tau q` has no test length).
* **subspace task law** (:math:`\rho = r/D`, :math:`\sigma` = noise **standard deviation**): a
  Haar subspace ``A``, :math:`M_0 = k` tasks :math:`\sqrt{D/r}Av`, :math:`h = \hat w`, ridge with
  regulariser :math:`\lambda M_0`. Errors on the training tasks, fresh tasks in the same
  subspace, fresh tasks of fresh subspaces and the declared test law, test length
  :math:`\tilde L`, test noise :math:`\tilde\sigma`; finite-D order parameters of
  :func:`replica.simulate.evaluate.lowrank_order_parameters`.

Errors are the exact closed-form expectations for the trained :math:`\Gamma`
(:mod:`replica.simulate.evaluate`), or Monte-Carlo averages over ``test_prompts`` sampled prompts.
The same trained :math:`\Gamma` can also be scored on further rows, one per combination of test
covariance and test context length (:func:`with_scores`); training and its random streams do
not depend on the rows.
"""

from __future__ import annotations

import dataclasses
import math
from fractions import Fraction

import numpy as np

from ..errors import ParameterError
from ..params import (INF, compact_str, exact_str, parse_exact)
from ..spectra import Covariance
from . import sampling
from .evaluate import TaskMoments, expected_error, lowrank_order_parameters, monte_carlo_error
from .solver import blas_threads_for, ridge_objective, ridge_structured
from .source import ModelSource, as_source

SAMPLER_NAMES = ("fast", "direct")
SOLVER_NAMES = ("auto", "direct", "cg", "primal", "dual", "naive")
TASK_LAWS = ("gaussian", "sphere")


def _floor(x: Fraction, d: int) -> int:
    return math.floor(Fraction(x) * d)


def _opt(name: str) -> str:
    return "--" + name.replace("_", "-")


@dataclasses.dataclass(frozen=True)
class Experiment:
    """Validated parameters of a finite-size experiment (exact rationals; ``kappa`` may be
    ``"inf"``), the dimension ``d`` and the simulation options."""

    model: str  # the model's name (as results print it)
    params: tuple  # ((name, Fraction | "inf" | Covariance spec string), ...) in declared order
    d: int
    task_law: str = "gaussian"
    balanced: bool = False
    sampler: str = "fast"
    solver: str = "auto"
    test_prompts: int = 0
    train_cov: Covariance | None = None
    test_cov: Covariance | None = None
    backend: str = "numpy"
    scores: tuple = ()  # Experiment variants, one per (test, test length) row (with_scores)
    sim: object = None  # the model's LinearAttentionICL declaration
    source: ModelSource | None = None  # where the model comes from (its theory)

    def __getattr__(self, name):
        for key, val in object.__getattribute__(self, "params"):
            if key == name:
                return val
        raise AttributeError(name)

    def echo(self) -> dict:
        """Exact parameter strings (JSON ``"params"``), in the model's order."""
        return {k: (v if isinstance(v, str) else getattr(v, "spec", None) or exact_str(v))
                for k, v in self.params}

    def options(self) -> dict:
        """Simulation options that change the outcome (part of a cache key; the solver and the
        array backend change it only by rounding or the CG tolerance). ``backend`` is listed
        only when it is not the default ``numpy``, so keys of NumPy runs stay as they were."""
        out = {"task_law": self.task_law, "balanced": self.balanced, "sampler": self.sampler,
               "solver": self.solver, "test_prompts": self.test_prompts}
        if self.backend != "numpy":
            out["backend"] = self.backend
        return out

    @property
    def sizes(self) -> dict:
        """Integer sizes: ``ell``, ``n``, ``k`` (``None`` for kappa = inf), ``ell_test``; with
        subspace tasks also ``r``; and the number of parameters ``P``."""
        d = self.d
        kappa = dict(self.params)["kappa"]
        k = None if kappa == INF else _floor(kappa, d)
        n = _floor(dict(self.params)["tau"], d * d)
        if self.balanced and k:
            reps = math.floor(Fraction(n, 1) / k + Fraction(1, 2))
            n = reps * k
        out = {"ell": _floor(self.alpha, d), "n": n, "k": k,
               "ell_test": _floor(self.alpha_test, d) if "alpha_test" in dict(self.params)
               else _floor(self.alpha, d)}
        if self.sim.rank:
            out["r"] = _floor(dict(self.params)[self.sim.rank], d)
        out["P"] = d * (d + 1) if self.sim.summary else d * d
        return out

    def effective(self) -> dict:
        """The ratios the finite sizes realise (``ell/d``, ``n/d^2``, ``k/d``, ``r/D``)."""
        s, d = self.sizes, self.d
        out = {"alpha": Fraction(s["ell"], d), "tau": Fraction(s["n"], d * d)}
        if s["k"] is not None:
            out["kappa"] = Fraction(s["k"], d)
        if "r" in s:
            out[self.sim.rank] = Fraction(s["r"], d)
        if "alpha_test" in dict(self.params):
            out["alpha_test"] = Fraction(s["ell_test"], d)
        return out

    def notes(self, theory_at: str = "nominal") -> list[str]:
        out = []
        nominal = dict(self.params)
        which = ("the theory uses the realised value" if theory_at == "realised"
                 else "the theory uses the nominal value (--theory-at realised to change)")
        for key, val in self.effective().items():
            if nominal[key] != val:
                out.append(f"finite size: {key} = {compact_str(nominal[key])} realised as "
                           f"{compact_str(val)} at d = {self.d}; {which}")
        if self.sim.tasks == "subspace" and self.sim.test_law:
            test, r = dict(self.params)[self.sim.test_law], self.sizes["r"]
            if test.kind == "shared" and test * r != _test_outside_rank(test, r):
                out.append(f"finite size: {test.spec} shares round(F r) = "
                           f"{r - _test_outside_rank(test, r)} of the r = {r} directions at "
                           f"d = {self.d}; the theory uses the nominal F")
        out.extend(self.sim.notes)
        return out


MAX_TEST_WORK = 10 ** 12
"""Most floating-point operations (``prompts * d^2``) the Monte Carlo test errors may take per
error and seed (about a quarter of an hour at 10^9 per second)."""


from ..estimates import available_memory  # noqa: E402  (one definition, shared with the CLI)


def memory_estimate(P: int, d: int, n: int, solver: str = "auto", k: int | None = None) -> int:
    """Peak bytes of one seed at dimension ``d`` with ``n`` pretraining contexts: about six
    ``n x d`` float64 arrays (tasks per context, context statistics, queries, features), the
    ``k x d`` array of the ``k`` distinct tasks (``None``: a fresh task per context) and the
    ridge solve's matrix for ``P`` weights (dual: ``n x n``; primal: ``P x P`` plus one chunk;
    naive: the ``n x P``
    design; conjugate gradients: four ``n x p`` arrays and a few ``d x p``)."""
    from .solver import CHUNK_BYTES, choose_method

    p = P // d
    if solver == "auto":
        solver = choose_method(n, P)
    elif solver == "direct":
        solver = "dual" if n < P else "primal"
    ridge = {"dual": n * n, "primal": P * P + CHUNK_BYTES // 8,
             "naive": (n + P) * P, "cg": 4 * n * p + 8 * P + 2 * p * p}[solver]
    return 8 * (6 * n * d + (k or 0) * d + ridge)


def _check_memory(exp: "Experiment") -> None:
    """Refuse (exit 2) a simulation whose :func:`memory_estimate` exceeds the machine's memory,
    naming ``--d`` if even ``tau = 1`` would not fit at this ``d``, else ``--tau``."""
    from ..spectra import amount_text

    s, d = exp.sizes, exp.d
    need = memory_estimate(s["P"], d, s["n"], exp.solver, s["k"])
    have = available_memory()
    from ..estimates import OVERRIDE, force_large

    if need <= have or force_large():
        return
    if memory_estimate(s["P"], d, d * d, exp.solver, d) > have:
        option = "--d"
    elif memory_estimate(s["P"], d, s["n"], exp.solver) <= have:
        option = "--kappa"  # the k x d array of distinct tasks alone does not fit
    else:
        option = "--tau"
    tasks = f" and k = {compact_str(s['k'])} tasks" if s["k"] is not None else ""
    raise ParameterError(option, f"the simulation at d = {compact_str(d)} with n = "
                                 f"{compact_str(s['n'])} "
                                 f"contexts{tasks} would need "
                                 + (f"about {amount_text(float(need), 'B')} of memory"
                                    if need < 10 ** 30 else "more memory than any machine has")
                                 + f"; this machine has {amount_text(have, 'B')} available "
                                 f"(lower {option}, or pass {OVERRIDE} to run it anyway)")


def make_experiment(model, d, *, task_law: str = "gaussian", balanced: bool = False,
                    sampler: str = "fast", solver: str = "auto", test_prompts: int = 0,
                    check_sizes: bool = True, check_memory: bool | None = None,
                    backend: str = "numpy", **params) -> Experiment:
    """Validate parameters (strings such as ``"3/10"``, ints, Fractions) for ``model`` (a
    built-in model's name, a :class:`~replica.simulate.source.ModelSource` or a registry entry,
    whose simulation is a :class:`~replica.capabilities.LinearAttentionICL`); raise
    :class:`~replica.errors.ParameterError` naming the option on any bad input.
    ``check_sizes=False`` skips the check that every size (``l, n, k, r``) is at least 1 at this
    ``d`` (for theory-only use); ``check_memory`` (default: ``check_sizes``) refuses a seed
    that would need more memory than the machine has (:func:`memory_estimate`)."""
    from ..capabilities import LinearAttentionICL

    source = as_source(model)
    sim = source.simulation
    if not isinstance(sim, LinearAttentionICL):
        raise ParameterError("model", f"{source.label} is not a linear-attention model "
                                      "(its SIMULATION is not a LinearAttentionICL)")
    model = source.name
    dd = parse_exact(d, "--d")
    if dd != int(dd) or dd < 2:
        raise ParameterError("--d", f"must be an integer >= 2, got {compact_str(dd)}")
    d = int(dd)
    names = sim.parameters
    unknown = set(params) - set(names)
    if unknown:
        raise ParameterError(_opt(sorted(unknown)[0]), f"is not a parameter of {model}")
    if sampler not in SAMPLER_NAMES:
        raise ParameterError("--sampler", f"must be one of {', '.join(SAMPLER_NAMES)}")
    if solver not in SOLVER_NAMES:
        raise ParameterError("--solver", f"must be one of {', '.join(SOLVER_NAMES)}")
    from .backend import BACKENDS

    if backend not in BACKENDS:
        raise ParameterError("--backend", f"must be one of {', '.join(BACKENDS)}")
    if backend != "numpy" and solver not in ("cg", "auto"):
        raise ParameterError("--backend", f"{backend} runs the conjugate-gradient solver only "
                                          "(--solver cg or auto)")
    if task_law not in TASK_LAWS:
        raise ParameterError("--task-law", f"must be one of {', '.join(TASK_LAWS)}")
    if task_law not in sim.task_laws:
        raise ParameterError("--task-law", f"{task_law} is not a task law of {model} (it "
                                           f"offers {', '.join(sim.task_laws)})")
    try:
        test_prompts = int(test_prompts)
    except (TypeError, ValueError):
        raise ParameterError("--test-prompts", f"must be an integer, got {test_prompts!r}") \
            from None
    if test_prompts < 0 or test_prompts == 1:
        raise ParameterError("--test-prompts", "must be 0 (closed form) or at least 2")
    if test_prompts * (d + 1) * d > MAX_TEST_WORK:
        from ..spectra import amount_text

        raise ParameterError("--test-prompts", f"{compact_str(test_prompts)} Monte Carlo "
                                               f"prompts at d = {compact_str(d)} cost about "
                                               f"{test_prompts * d * d:.2g} "
                                               f"operations per error and seed (about "
                                               f"{amount_text(test_prompts * d * d / 1e9, 's')}); "
                                               f"at most {MAX_TEST_WORK:.0e} are allowed")
    # the model's parameters are validated by its declared schema (domains, defaults, rules)
    schema = source.schema
    raw = {k: params.get(k) for k in names}
    if "d" in schema:
        raw["d"] = d
    p = schema.parse(raw)
    if sim.finite_kappa and p.kappa == INF:
        raise ParameterError("--kappa", sim.finite_kappa)
    vals = {k: p[k] for k in names}
    train_cov = test_cov = None
    if sim.train_covariance:
        train_cov = p[sim.train_covariance]
        vals[sim.train_covariance] = train_cov.spec
    if sim.test_covariance:
        test_cov = p[sim.test_covariance]
        vals[sim.test_covariance] = test_cov.spec
    exp = Experiment(model, tuple((k, vals[k]) for k in names), d, task_law, bool(balanced),
                     sampler, solver, test_prompts, train_cov, test_cov, backend, sim=sim,
                     source=source)
    s = exp.sizes if check_sizes else {}
    if s and solver == "cg" and s["n"] < s["P"]:
        raise ParameterError("--solver", f"cg solves the primal system, which needs n >= P: at "
                                         f"d = {d}, n = {s['n']} < P = {s['P']} (use auto, "
                                         "direct or dual)")
    for key, what, opt in (("ell", "context length l = int(alpha d)", "--alpha"),
                           ("n", "number of contexts n = int(tau d^2)", "--tau"),
                           ("k", "number of tasks k = int(kappa d)", "--kappa"),
                           ("r", f"rank r = int({sim.rank} d)", _opt(sim.rank or "rho")),
                           ("ell_test", "test context length int(alpha_test d)", "--alpha-test")):
        if key in s and s[key] is not None and s[key] < 1:
            raise ParameterError(opt, f"at d = {d} the {what} is 0: increase --d or {opt}")
    if check_sizes if check_memory is None else check_memory:
        _check_memory(exp)
    return exp


def with_scores(exp: Experiment, **lists) -> Experiment:
    r"""``exp`` with the rows on which each trained :math:`\Gamma` is scored: every combination
    of the lists given for the model's ``score_parameters`` (e.g.
    ``test=["piano", "identity"], alpha_test=["1", "2"]``), tests outermost, each validated
    as a parameter of its own experiment (a bad entry raises
    :class:`~replica.errors.ParameterError` naming its option). A row with ``exp``'s own
    parameters repeats its ``errors``; the rows are only scored, training is unchanged."""
    import itertools

    allowed = exp.sim.score_parameters
    for key in lists:
        if key not in allowed:
            raise ParameterError(_opt(key), f"is not a list parameter of {exp.model}")
    base = exp.echo()
    names = [k for k in allowed if lists.get(k)]
    if not names:
        return exp
    variants = []
    opts = dict(task_law=exp.task_law, balanced=exp.balanced, sampler=exp.sampler,
                solver=exp.solver, test_prompts=exp.test_prompts, backend=exp.backend)
    for combo in itertools.product(*(lists[k] for k in names)):
        params = {k: v for k, v in base.items() if v is not None}
        params.update(dict(zip(names, combo)))
        variants.append(make_experiment(exp.source, exp.d, check_memory=False, **opts, **params))
    return dataclasses.replace(exp, scores=tuple(variants))


def score_row(variant: Experiment) -> dict:
    """The parameters that label a score row (the model's ``score_parameters``, e.g. ``test``
    and ``alpha_test``) and the integer test length ``ell_test``."""
    out = {k: variant.echo()[k] for k in variant.sim.score_parameters}
    out["ell_test"] = variant.sizes["ell_test"]
    return out


# ---------------------------------------------------------------------------------------------
# One seed
# ---------------------------------------------------------------------------------------------
def _covariance_sampler(cov: Covariance):
    if cov.is_diagonal:
        diag = cov.diag_f64()
        return lambda rng, m: sampling.gaussian_tasks(rng, m, cov.d, diag=diag)
    root = sampling.covariance_sqrt(cov.matrix_f64())
    return lambda rng, m: sampling.gaussian_tasks(rng, m, cov.d, cov_sqrt=root)


def _contexts(exp: Experiment, rng_tasks, draw_tasks):
    """Pretraining tasks (rows) and the task of each context."""
    s = exp.sizes
    if s["k"] is None:
        W = draw_tasks(rng_tasks, s["n"])
        return W, W
    W0 = draw_tasks(rng_tasks, s["k"])
    idx = sampling.assign_tasks(rng_tasks, s["n"], s["k"], exp.balanced)
    return W0, W0[idx]


def _train(exp: Experiment, rng_data, W_ctx, noise: float, with_s: bool):
    s = exp.sizes
    w_hat, sq = sampling.SAMPLERS[exp.sampler](rng_data, W_ctx, s["ell"], noise)
    xq, yq = sampling.query(rng_data, W_ctx, noise)
    H = np.hstack([w_hat, sq[:, None]]) if with_s else w_hat
    reg = regulariser(exp)
    gamma, info = ridge_structured(xq, H, yq, reg, exp.solver, backend=exp.backend)
    info.objective = ridge_objective(xq, H, yq, gamma, reg)
    return gamma, info


def regulariser(exp: Experiment) -> float:
    r"""The ridge term :math:`c` of :math:`(\sum\phi\phi^\top + cI)\operatorname{vec}\Gamma =
    \sum\phi y`: with ``ridge = "contexts"`` (papers A/B) the objective is
    :math:`\sum_\mu(\cdot)^2 + \frac nd\lambda\|\Gamma\|^2`, so :math:`c = n\lambda/d`; with
    ``ridge = "tasks"`` (the low-rank paper) it is :math:`\frac12\sum_\mu(\cdot)^2 +
    \frac{\lambda M_0}2\|\Gamma\|^2`, so :math:`c = \lambda M_0` with :math:`M_0 = k`."""
    s = exp.sizes
    if exp.sim.ridge == "tasks":
        return float(exp.lam) * s["k"]
    return float(exp.lam) * s["n"] / exp.d


def _noise_variance(exp: Experiment, name: str) -> float:
    """The noise variance given by the parameter ``name`` (squared if the model declares noise
    standard deviations)."""
    v = float(dict(exp.params)[name])
    return v ** 2 if exp.sim.noise_scale == "std" else v


def run_seed(exp: Experiment, seed_seq: np.random.SeedSequence) -> dict:
    r"""Simulate one independent draw (tasks, pretraining data, ridge, test errors).

    Returns ``{"errors": {key: float}, "order_parameters": {...} (where declared),
    "ridge": {...}}``,
    and with score rows (:func:`with_scores`) ``"scores"``: one ``{key: float}`` per row (the
    same :math:`\Gamma` on each row's test law and length).
    The sub-streams of ``seed_seq`` are: 0 tasks (and subspace), 1 pretraining data, 2 test."""
    with blas_threads_for(min(exp.sizes["n"], exp.sizes["P"])):
        return _run_seed(exp, seed_seq)


def _test_outside_rank(test, r: int) -> int:
    """Directions of a shared:F test subspace that lie in the complement: round((1 - F) r)
    (``test`` is phi = 1 - F)."""
    return int(Fraction(test) * r + Fraction(1, 2))


def subspace_test_law(test, A: np.ndarray, rng: np.random.Generator):
    r"""``(TaskMoments, sampler)`` of the ``--test`` law of a low-rank experiment with task
    subspace ``A`` (``D x r``): ``idg`` :math:`\frac Dr AA^\top`; ``outside:PHI``
    :math:`(1-\phi)\frac Dr P + \phi\frac{D}{D-r}(I-P)`; ``shared:F`` the subspace of the first
    :math:`r - s` columns of ``A`` and ``s = round((1-F) r)`` directions of the complement;
    ``rotation:THETA`` the span of :math:`\cos\theta\,a_i + \sin\theta\,b_i` (``B`` a
    Haar-random ``r``-frame of the complement, drawn from ``rng`` when needed). Tasks are
    Gaussian with that covariance."""
    D, r = A.shape
    P = A @ A.T
    if test.kind == "outside" and 0 < test:
        phi = float(test)
        cov = (1 - phi) * (D / r) * P + phi * (D / (D - r)) * (np.eye(D) - P)
    elif test.kind == "shared" and _test_outside_rank(test, r):
        s = _test_outside_rank(test, r)
        U = np.hstack([A[:, :r - s], sampling.complement_frame(rng, A, s)])
        cov = (D / r) * U @ U.T
    elif test.kind == "rotation" and 0 < test:
        c, sn = math.sqrt(1 - float(test)), math.sqrt(float(test))
        U = c * A + sn * sampling.complement_frame(rng, A, r)
        cov = (D / r) * U @ U.T
    else:  # idg, and the zero cases of the others
        return (TaskMoments.gaussian((D / r) * P), lambda g, m: sampling.lowrank_tasks(g, A, m))
    root = sampling.covariance_sqrt(cov)
    return TaskMoments.gaussian(cov), lambda g, m: sampling.gaussian_tasks(g, m, D,
                                                                              cov_sqrt=root)


def _train_subspace(exp: Experiment, rng_tasks, rng_data):
    s, d = exp.sizes, exp.d
    A = sampling.haar_subspace(rng_tasks, d, s["r"])
    W0, W_ctx = _contexts(exp, rng_tasks, lambda rng, m: sampling.lowrank_tasks(rng, A, m))
    gamma, info = _train(exp, rng_data, W_ctx, _noise_variance(exp, exp.sim.noise),
                         with_s=exp.sim.summary)
    return gamma, info, W0, A


def _train_gaussian(exp: Experiment, rng_tasks, rng_data):
    d = exp.d
    if exp.train_cov is not None:
        draw_train = _covariance_sampler(exp.train_cov)
    elif exp.task_law == "sphere":
        draw_train = lambda rng, m: sampling.sphere_tasks(rng, m, d)  # noqa: E731
    else:
        draw_train = lambda rng, m: sampling.gaussian_tasks(rng, m, d)  # noqa: E731
    W0, W_ctx = _contexts(exp, rng_tasks, draw_train)
    gamma, info = _train(exp, rng_data, W_ctx, _noise_variance(exp, exp.sim.noise),
                         with_s=exp.sim.summary)
    return gamma, info, W0, None


def train_lowrank(exp: Experiment, seed_seq: np.random.SeedSequence):
    r"""The trained :math:`\Gamma` of one seed of a subspace-task experiment (the same draw as
    :func:`run_seed`), with the pretraining tasks ``W0`` (rows) and the subspace basis ``A``
    (``D x r``), so that it can be tested on any task law
    (:func:`replica.simulate.evaluate.expected_error`)."""
    if exp.sim.tasks != "subspace":
        raise ValueError("train_lowrank needs an experiment with subspace tasks")
    rng_tasks, rng_data, _ = sampling.substreams(seed_seq, 3)
    with blas_threads_for(min(exp.sizes["n"], exp.sizes["P"])):
        gamma, _, W0, A = _train_subspace(exp, rng_tasks, rng_data)
    return gamma, W0, A


def training_objective(exp: Experiment, seed_seq: np.random.SeedSequence) -> float:
    r"""The minimal ridge objective of one seed's pretraining draw (the same draw as
    :func:`run_seed`) per :math:`kd`: :math:`\min_\Gamma[\frac12\sum_\mu(y_\mu -
    \hat y_\mu)^2 + \frac c2\|\Gamma\|_F^2]/(kd)`, :math:`c` = :func:`regulariser`
    (:func:`replica.simulate.solver.ridge_objective`), :math:`k = \lfloor\kappa d\rfloor`
    pretraining tasks. For the low-rank model (:math:`c = \lambda M_0`, :math:`M_0 = k`) this is
    the objective (M6) per :math:`\kappa D^2`, whose :math:`D\to\infty` limit is the free energy
    (R1) at the saddle point (:data:`replica.models.lowrank.FREE_ENERGY_NAME`); for papers A/B
    (:math:`c = n\lambda_A/d`) it is half their objective per :math:`\kappa d^2`, whose limit is
    the free energy they report (:func:`replica.models.alignment.free_energy_at_solution`; the
    :math:`y^2` column of their features is an :math:`O(1/d)` change). Needs a finite number of
    tasks."""
    k = exp.sizes["k"]
    if k is None:
        raise ParameterError("--kappa", "the training objective per k d needs a finite kappa")
    rng_tasks, rng_data, _ = sampling.substreams(seed_seq, 3)
    train = _train_subspace if exp.sim.tasks == "subspace" else _train_gaussian
    with blas_threads_for(min(exp.sizes["n"], exp.sizes["P"])):
        _, info, _, _ = train(exp, rng_tasks, rng_data)
    return info.objective / (k * exp.d)


def _test_law(exp: Experiment, A, rng_tasks):
    """``(TaskMoments, sampler)`` of the experiment's test tasks: the subspace test law, or
    Gaussian with the test covariance (the identity without one)."""
    d = exp.d
    if exp.sim.tasks == "subspace":
        return subspace_test_law(dict(exp.params)[exp.sim.test_law], A, rng_tasks) \
            if exp.sim.test_law else (TaskMoments.gaussian((d / A.shape[1]) * (A @ A.T)),
                                      lambda rng, m: sampling.lowrank_tasks(rng, A, m))
    if exp.test_cov is not None:
        return (TaskMoments.gaussian(exp.test_cov.matrix_f64()),
                _covariance_sampler(exp.test_cov))
    return (TaskMoments.gaussian(np.eye(d)),
            lambda rng, m: sampling.gaussian_tasks(rng, m, d))


def _run_seed(exp: Experiment, seed_seq: np.random.SeedSequence) -> dict:
    rng_tasks, rng_data, rng_test = sampling.substreams(seed_seq, 3)
    s, d, sim = exp.sizes, exp.d, exp.sim
    out: dict = {}
    train = _train_subspace if sim.tasks == "subspace" else _train_gaussian
    gamma, info, W0, A = train(exp, rng_tasks, rng_data)
    noise = _noise_variance(exp, sim.test_noise or sim.noise)
    r = s.get("r")
    # each law once, in the order of the declared errors; the subspace test law draws its
    # complement frames after everything training drew
    laws: dict = {}
    for _, law, _ in sim.errors:
        if law in laws:
            continue
        if law == "pretraining":
            laws[law] = (TaskMoments.empirical(W0),
                         lambda rng, m: W0[rng.integers(0, len(W0), m)])
        elif law == "subspace":
            laws[law] = (TaskMoments.gaussian((d / r) * (A @ A.T)),
                         lambda rng, m: sampling.lowrank_tasks(rng, A, m))
        elif law == "fresh-subspace":
            laws[law] = (TaskMoments.fresh_subspace(d, r),
                         lambda rng, m: sampling.fresh_subspace_tasks(rng, m, d, r))
        else:
            laws[law] = _test_law(exp, A, rng_tasks)
    if sim.order_parameters:
        out["order_parameters"] = lowrank_order_parameters(gamma, W0, A)
    law_of = {key: law for key, law, _ in sim.errors}
    ells = {key: s["ell_test"] if length == "test" else s["ell"]
            for key, _, length in sim.errors}

    def score(mom, draw, ell):
        if exp.test_prompts:
            return monte_carlo_error(gamma, rng_test, draw, ell, noise, exp.test_prompts,
                                     exp.sampler)[0]
        return expected_error(gamma, mom, ell, noise)

    errors = {key: score(*laws[law_of[key]], ells[key]) for key in sim.error_keys}
    out["errors"] = errors
    if exp.scores:
        rows = []
        test_param = sim.test_covariance or sim.test_law
        for variant in exp.scores:
            if variant.echo() == exp.echo():
                rows.append({k: errors[k] for k in sim.score_errors})
                continue
            ell = variant.sizes["ell_test"]
            row_laws = laws
            if test_param and variant.echo()[test_param] != exp.echo()[test_param]:
                row_laws = dict(laws, test=_test_law(variant, A, rng_tasks))
            rows.append({k: score(*row_laws[law_of[k]], ell) for k in sim.score_errors})
        out["scores"] = rows
    out["ridge"] = {"method": info.method, "factor": info.factor, "seconds": info.seconds,
                    "iterations": info.iterations, "residual": info.residual}
    return out


# ---------------------------------------------------------------------------------------------
# Theory
# ---------------------------------------------------------------------------------------------
def theory_result(exp: Experiment, dps: int = 20, at: str = "nominal"):
    """The ``d = infinity`` theory at the nominal parameters (``at="realised"``: at the ratios
    ``ell/d, n/d^2, k/d, r/D`` the integer sizes realise, which removes the O(1/d) rounding
    offset, e.g. ``r = int(0.2 D)`` at ``D = 32, 48, 64``) as a
    :class:`~replica.numerics.Result` (not digit-verified), solved by the engine from the model's
    declaration (where the model declares ``theory_at_d``, at the finite-d spectrum of the
    experiment's covariances). The conventions of the simulation and the theory agree (tasks,
    noise, ridge per distinct task)."""
    from ..numerics.driver import solve

    p = exp.echo()
    if at == "realised":
        p = dict(p)
        p.update({k: exact_str(v) for k, v in exp.effective().items()})
    elif at != "nominal":
        raise ParameterError("--theory-at", f"choose nominal or realised, got {at!r}")
    problem = exp.source.problem
    raw = {k: v for k, v in p.items() if k in problem.schema and not
           problem.schema[k].is_covariance and k != "d"}
    if exp.sim.theory_at_d:
        raw["d"] = exp.d
        for name, cov in ((exp.sim.train_covariance, exp.train_cov),
                          (exp.sim.test_covariance, exp.test_cov)):
            if name:
                raw[name] = cov
    return solve(problem, dps=dps, verify=False, **raw)


def theory(exp: Experiment, dps: int = 20, at: str = "nominal") -> dict | None:
    """:func:`theory_result` as floats: ``{"errors": {...}, "order_parameters": {...},
    "status": ...}`` (``order_parameters`` where the model declares them; ``status`` the solve's
    :class:`~replica.numerics.result.Status` value), or ``None``."""
    res = theory_result(exp, dps, at)
    if res is None:
        return None
    out = {"errors": {k: float(res[k]) for k in exp.sim.error_keys},
           "status": res.status.value}
    if exp.sim.order_parameters:
        out["order_parameters"] = {k: float(res[k]) for k in exp.sim.order_parameters}
    return out
