r"""What a model can do besides being solved, declared in its model file next to ``MODEL``
(:mod:`replica.registry` reads them; every command offers what a model declares):

* ``SIMULATION = Simulation(...)`` -- one finite-size instance of the model and the estimator
  trained on it, so that ``replica simulate``, ``check`` and ``sweep`` compare the theory with
  simulations;
* ``TRANSITIONS = [Transition(...), ...]`` -- the phase transitions and crossovers the model
  declares, located by ``replica transition``.

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
      (:class:`~replica.problem.Params`, exact values: convert with ``float``);
    * ``train(instance, params)`` -- the estimator trained on it;
    * ``measure(instance, estimate, params)`` -- ``{name: value}``, each ``name`` a value the
      theory reports (as ``replica solve`` prints it, e.g. ``errors.test`` or ``test``), each
      value its finite-size counterpart, so the mean over seeds is compared with the theory.
    """

    sample: Callable[..., Any]
    train: Callable[..., Any]
    measure: Callable[..., Mapping[str, float]]
    description: str = ""


#: The kinds of feature a transition is located by (``replica transition --kind``).
TRANSITION_KINDS = ("max", "min", "level", "kink", "crossover")


@dataclasses.dataclass(frozen=True)
class Transition:
    r"""A transition or crossover a model declares: where the reported value ``quantity``, as
    a function of the parameter ``vary`` on ``between = (lo, hi)`` (the other parameters as given
    on the command line, by default ``params``), has a ``kind`` of feature (one of
    :data:`TRANSITION_KINDS`): ``"kink"`` (a jump of its slope :math:`dQ/dx`), ``"crossover"``
    (an extremum of its curvature, :math:`d^3Q/dx^3 = 0`), ``"max"``/``"min"`` (an interior
    extremum, :math:`dQ/dx = 0`) or ``"level"`` (where it crosses ``level``).

    ``replica transition --model FILE --name NAME [--PARAM V ...]`` locates it: every field is a
    default that the command line's ``--vary``, ``--between``, ``--quantity``, ``--kind``,
    ``--level`` and ``--PARAM`` options override; ``definition`` is printed with the result."""

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
