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


@dataclasses.dataclass(frozen=True)
class Transition:
    r"""A transition or crossover a model declares: where the reported value ``quantity``, as
    a function of the parameter ``vary`` on ``between = (lo, hi)`` (the other parameters as given
    on the command line), has a ``kind`` of feature: ``"kink"`` (a jump of its slope),
    ``"crossover"`` (an extremum of its curvature), ``"max"``/``"min"`` (an interior extremum)
    or ``"level"`` (where it crosses ``level``)."""

    name: str
    quantity: str
    vary: str
    kind: str
    between: tuple = ()
    level: str | None = None
    definition: str = ""
