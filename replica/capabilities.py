r"""What a model can do besides being solved, declared in its model file next to ``MODEL``
(:mod:`replica.registry` reads them; every command offers what a model declares):

* ``SIMULATION = Simulation(...)`` -- one finite-size instance of the model and the estimator
  trained on it, so that ``replica simulate``, ``check`` and ``sweep`` compare the theory with
  simulations;
* ``TRANSITIONS = [Transition(...), ...]`` -- the phase transitions and crossovers the model
  declares, located by ``replica transition``;
* ``BRANCHES = [Branch(..., free_energy=...), ...]`` -- solutions known in closed form (a branch
  at infinity, such as perfect recovery), which ``replica solve`` compares each solution with.

These are plain declarations (no SymPy, no NumPy at import): the commands that use them live in
:mod:`replica.simulate` and ``replica.analysis``.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, Mapping


@dataclasses.dataclass(frozen=True)
class Simulation:
    r"""A finite-size simulation of a model at dimension ``d``.

    * ``sample(rng, d, params)`` -- one random instance (data, teacher, ...) drawn with the
      ``numpy.random.Generator`` ``rng``; ``params`` are the model's parsed parameters
      (:class:`~replica.problem.Params`, exact values: convert with ``float``; a covariance
      parameter is a :class:`~replica.spectra.Covariance` of size ``d``);
    * ``train(instance, params)`` -- the estimator trained on it;
    * ``measure(instance, estimate, params)`` -- ``{name: value}``, each ``name`` a value the
      theory reports (as ``replica solve`` prints it, e.g. ``errors.test`` or ``test``), each
      value its finite-size counterpart, so the mean over seeds is compared with the theory;
    * ``sizes(d, params)`` (optional) -- ``{name: int}``, the integer sizes of an instance at
      ``d`` (e.g. the number of samples), printed with the result.

    Seed ``i`` of a run with base seed ``S`` draws with
    ``numpy.random.default_rng(numpy.random.SeedSequence(S).spawn(N)[i])``
    (:mod:`replica.simulate.declared`). When the model has a parameter ``d``, the simulation's
    dimension is that parameter: the theory is solved at the same ``d``.
    """

    sample: Callable[..., Any]
    train: Callable[..., Any]
    measure: Callable[..., Mapping[str, float]]
    description: str = ""
    sizes: Callable[..., Mapping[str, int]] | None = None


@dataclasses.dataclass(frozen=True)
class Option:
    r"""One model parameter as an option of ``replica simulate``, ``check`` and ``sweep`` (the
    parameter's own name; ``--name-with-dashes`` on the command line). ``scored``: in
    ``replica simulate`` a comma-separated list scores one trained estimator on each value (a
    test-side parameter); in ``check`` and ``sweep`` every option may be a list."""

    name: str
    help: str
    required: bool = True
    default: str | None = None
    scored: bool = False


#: The task laws of :class:`LinearAttentionICL` and their pretraining draws.
ICL_TASKS = ("gaussian", "subspace")
#: The test laws an error of :class:`LinearAttentionICL` may be measured on.
ICL_LAWS = ("test", "pretraining", "subspace", "fresh-subspace")


@dataclasses.dataclass(frozen=True)
class LinearAttentionICL:
    r"""In-context linear regression learned by linear attention, trained by ridge regression,
    declared by what differs from one model of it to another (the simulation itself is
    :mod:`replica.simulate.experiment`).

    One seed at dimension :math:`d`: :math:`n = \lfloor\tau d^2\rfloor` contexts of
    :math:`\ell = \lfloor\alpha d\rfloor` examples :math:`y = \langle w, x\rangle + \text{noise}`,
    :math:`x \sim \mathcal N(0, I_d)`, each with one of :math:`k = \lfloor\kappa d\rfloor`
    pretraining tasks (``kappa = inf``: a fresh task per context) drawn from the **task law**
    ``tasks``:

    * ``"gaussian"``: :math:`w \sim \mathcal N(0, C_{\rm train})`, :math:`C_{\rm train}` the
      covariance parameter ``train_covariance`` (the identity without one); with ``task_laws``
      offering ``"sphere"``, ``--task-law sphere`` draws :math:`w` uniformly on
      :math:`\|w\| = \sqrt d`;
    * ``"subspace"``: :math:`w = \sqrt{d/r}\,Av`, :math:`A` a Haar-random :math:`d\times r` frame,
      :math:`v \sim \mathcal N(0, I_r)`, :math:`r = \lfloor\rho d\rfloor` (``rank`` names the
      parameter :math:`\rho`).

    The **noise** parameter ``noise`` is a variance (``noise_scale = "variance"``) or a standard
    deviation (``"std"``); ``test_noise`` names the test noise parameter (same scale; default:
    the training noise). Features: :math:`h = (\hat w; s)` with the context's mean squared
    label :math:`s` (``summary``), else :math:`h = \hat w`; :math:`P = d\,\dim h` weights. The
    **ridge** term is :math:`c = n\lambda/d` (``ridge = "contexts"``, objective
    :math:`\sum_\mu(\cdot)^2 + \frac nd\lambda\|\Gamma\|^2`) or :math:`c = \lambda k`
    (``"tasks"``, objective :math:`\frac12\sum_\mu(\cdot)^2 + \frac{\lambda k}2\|\Gamma\|^2`).

    **Errors** ``errors = ((key, law, length), ...)``: the expected squared error of the
    trained :math:`\Gamma` on fresh prompts whose task follows ``law`` -- ``"test"`` (the test
    covariance ``test_covariance``, identity without one; subspace tasks: the law named by the
    parameter ``test_law`` relative to :math:`A`), ``"pretraining"`` (uniform over the :math:`k`
    pretraining tasks), ``"subspace"`` (fresh tasks in :math:`A`), ``"fresh-subspace"`` (fresh
    tasks of a fresh subspace) -- with test context length ``"test"``
    (:math:`\lfloor\alpha_{\rm test}d\rfloor`) or ``"train"`` (:math:`\ell`). Each key is also
    a value the model's theory reports. ``score_parameters``: the parameters that may be lists in
    ``replica simulate`` (one trained :math:`\Gamma` scored on every combination, on the errors
    ``score_errors``); ``order_parameters``: finite-:math:`d` order parameters measured on
    subspace tasks, reported by the theory under the same names.
    """

    help: str
    options: tuple
    tasks: str = "gaussian"
    train_covariance: str | None = None
    test_covariance: str | None = None
    rank: str | None = None
    test_law: str | None = None
    noise: str = "rho"
    noise_scale: str = "variance"
    test_noise: str | None = None
    summary: bool = True
    ridge: str = "contexts"
    errors: tuple = ()
    score_parameters: tuple = ()
    score_errors: tuple = ()
    order_parameters: tuple = ()
    task_laws: tuple = ("gaussian",)
    task_law_help: str = ""
    finite_kappa: str = ""
    theory_at_d: bool = False
    notes: tuple = ()

    def __post_init__(self):
        if self.tasks not in ICL_TASKS:
            raise ValueError(f"tasks must be one of {ICL_TASKS}, got {self.tasks!r}")
        if self.noise_scale not in ("variance", "std"):
            raise ValueError(f"noise_scale must be variance or std, got {self.noise_scale!r}")
        if self.ridge not in ("contexts", "tasks"):
            raise ValueError(f"ridge must be contexts or tasks, got {self.ridge!r}")
        for key, law, length in self.errors:
            if law not in ICL_LAWS or length not in ("test", "train"):
                raise ValueError(f"error {key!r}: law in {ICL_LAWS}, length test or train")

    @property
    def parameters(self) -> tuple:
        """The parameter names, in the order of the options (and of the JSON ``params``)."""
        return tuple(o.name for o in self.options)

    @property
    def error_keys(self) -> tuple:
        return tuple(key for key, _, _ in self.errors)


#: The kinds of feature located on one solution curve, from a float64 scan of a reported value
#: (:func:`replica.analysis.scan.locate`).
SCAN_KINDS = ("max", "min", "level", "kink", "crossover")
#: The kinds located from solution branches (:mod:`replica.analysis.first_order`): where the
#: free energies of two branches cross (``first-order``) and where a branch ends (``spinodal``).
BRANCH_KINDS = ("first-order", "spinodal")
#: The kinds of feature a transition is located by (``replica transition --kind``).
TRANSITION_KINDS = SCAN_KINDS + BRANCH_KINDS


@dataclasses.dataclass(frozen=True)
class Branch:
    r"""One branch of solutions of a model, as plain data (``replica transition --kind
    first-order`` / ``spinodal``; :func:`replica.analysis.first_order.declared_branch` turns it
    into a :class:`replica.analysis.first_order.Branch`):

    * ``start``: ``{unknown: value}`` (raw strings, e.g. ``{"m": "0.7"}``), where Newton's
      method starts; the solution reached is the branch's point;
    * ``accept``: conditions the solution must satisfy to be on the branch, each
      ``"NAME < VALUE"`` (or ``>``, ``<=``, ``>=``) on a reported value, e.g. ``("m < 1",)``;
    * ``free_energy``: instead of a start, the branch's free energy in closed form, a formula
      in the model's parameters (SymPy syntax, e.g. ``"-log(2)"``) -- a branch at infinity such
      as perfect recovery, whose free energy is a limit.

    * ``when``: where a closed-form branch exists: ``{parameter: raw value}`` (e.g.
      ``{"prior": "rademacher"}``) or conditions ``("alpha >= 1",)`` on the parameters (empty:
      at every point). Its ``free_energy`` may be ``"oo"`` (a free entropy that diverges, such
      as perfect recovery with a continuous prior).

    On the command line: ``--branch LABEL:ITEM,ITEM,...`` with items ``NAME=VALUE`` (a start
    value; ``FREE_ENERGY_NAME=FORMULA`` for a closed form) and ``NAME<VALUE`` (a condition).

    A model file's ``BRANCHES = [Branch(..., free_energy=...), ...]`` declares the closed-form
    branches that ``replica solve`` compares every solution with: where one of them has the
    better free energy (the smaller, or the larger free entropy), the solution is reported as
    metastable and that branch as the equilibrium (a branch at infinity, such as perfect
    recovery, is never reached by Newton's method, so without it a metastable solution would
    read as the answer)."""

    label: str
    start: Mapping[str, str] = dataclasses.field(default_factory=dict)
    accept: tuple = ()
    free_energy: str | None = None
    when: Any = dataclasses.field(default_factory=dict)

    def __post_init__(self):
        if (self.free_energy is None) == (not self.start):
            raise ValueError(f"branch {self.label!r}: give start= (a start for Newton's method) "
                             "or free_energy= (a closed form), not both")


@dataclasses.dataclass(frozen=True)
class Transition:
    r"""A transition or crossover a model declares: where the reported value ``quantity``, as
    a function of the parameter ``vary`` on ``between = (lo, hi)`` (the other parameters as given
    on the command line, by default ``params``), has a ``kind`` of feature (one of
    :data:`TRANSITION_KINDS`): ``"kink"`` (a jump of its slope :math:`dQ/dx`), ``"crossover"``
    (an extremum of its curvature, :math:`d^3Q/dx^3 = 0`), ``"max"``/``"min"`` (an interior
    extremum, :math:`dQ/dx = 0`) or ``"level"`` (where it crosses ``level``); or, from solution
    branches (``branches``, :class:`Branch` records): ``"first-order"`` (where the free energies
    of the two ``branches`` are equal, in the bracket ``between``; ``quantity`` defaults to the
    model's free energy) or ``"spinodal"`` (where the one branch ends: the fold of its
    equations, searched by Newton's method from ``guess`` and the branch's start).

    ``replica transition --model FILE --name NAME [--PARAM V ...]`` locates it: every field is a
    default that the command line's ``--vary``, ``--between``, ``--quantity``, ``--kind``,
    ``--level``, ``--branch``, ``--guess`` and ``--PARAM`` options override; ``definition`` is
    printed with the result."""

    name: str
    quantity: str
    vary: str
    kind: str
    between: tuple = ()
    level: str | None = None
    definition: str = ""
    params: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    """Values of the other parameters (raw, as on the command line) the transition is located
    at unless the command line gives them."""
    branches: tuple = ()
    """:class:`Branch` records: two for ``first-order``, one for ``spinodal``."""
    guess: str | None = None
    """``spinodal``: the value of ``vary`` near the fold where Newton's method starts."""
    when: Any = dataclasses.field(default_factory=dict)
    """Where the transition exists, as ``Branch.when``: ``{parameter: raw value}`` (e.g.
    ``{"prior": "rademacher"}``: a first-order transition of one prior only) or conditions
    ``("kappa < 0",)`` on the other parameters (empty: wherever it is located). ``replica
    transition --name`` refuses, before any solve, other values of those parameters (exit 2
    naming them and the values declared): the transition is not there to locate."""

    def __post_init__(self):
        if self.kind not in TRANSITION_KINDS:
            raise ValueError(f"transition {self.name!r}: kind must be one of "
                             f"{', '.join(TRANSITION_KINDS)}, got {self.kind!r}")
        need = {"first-order": 2, "spinodal": 1}.get(self.kind)
        if need is not None and self.branches and len(self.branches) != need:
            raise ValueError(f"transition {self.name!r}: a {self.kind} transition has {need} "
                             f"branch(es), got {len(self.branches)}")
        for b in self.branches:
            if not isinstance(b, Branch):
                raise ValueError(f"transition {self.name!r}: branches are Branch records")
        if not isinstance(self.when, (Mapping, tuple, list)):
            raise ValueError(f"transition {self.name!r}: when is {{parameter: value}} or a "
                             "tuple of conditions")
