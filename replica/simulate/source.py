"""Where a simulated model comes from: a built-in model of the registry (by name) or a model file
(by path), in a form a job can carry to a worker process, which looks the model up again there.

A built-in model's declarations -- its problem, schema and simulation -- live in the declarations
layer (:mod:`replica.models`, :mod:`replica.models.simulations`), where this module looks them up
by name, so that a library call such as ``simulate("NAME", ...)`` works without this layer
knowing any model. A model file is
loaded once per process (:func:`replica.modeling.load_model_namespace`) and re-run by path in a
worker; a process that has already loaded it (the command line) hands it over with
:func:`remember`.
"""

from __future__ import annotations

import dataclasses
import os

from ..errors import ParameterError

_FILES: dict = {}


def remember(path: str, problem, simulation) -> None:
    """Record the model file ``path`` loaded in this process (its problem and ``SIMULATION``)."""
    _FILES[os.path.abspath(path)] = (problem, simulation)


def _file(path: str) -> tuple:
    key = os.path.abspath(path)
    if key not in _FILES:
        from ..modeling import load_model_namespace

        problem, namespace = load_model_namespace(key)
        _FILES[key] = (problem, namespace.get("SIMULATION"))
    return _FILES[key]


@dataclasses.dataclass(frozen=True)
class _Builtin:
    """A built-in model's declarations, from the declarations layer."""

    name: str

    @property
    def simulation(self):
        from ..models.simulations import SIMULATIONS

        return SIMULATIONS.get(self.name)

    @property
    def problem(self):
        from ..models import get

        return get(self.name)

    @property
    def schema(self):
        from ..models.parameters import SCHEMAS

        return SCHEMAS[self.name]


def _builtin(name: str) -> _Builtin:
    from ..models import NAMES

    if name not in NAMES:
        raise ParameterError("model", f"unknown model {name!r} ({', '.join(NAMES)})")
    return _Builtin(name)


@dataclasses.dataclass(frozen=True)
class ModelSource:
    """A built-in model's ``name`` (``path`` None) or a model file's ``path`` (``name``: its
    problem's name)."""

    name: str
    path: str | None = None

    @property
    def is_file(self) -> bool:
        return self.path is not None

    @property
    def simulation(self):
        """The declared simulation (``None``: the model declares none)."""
        return _file(self.path)[1] if self.path else _builtin(self.name).simulation

    @property
    def problem(self):
        """The model's :class:`~replica.problem.Problem`."""
        return _file(self.path)[0] if self.path else _builtin(self.name).problem

    @property
    def schema(self):
        """The parameter schema (a built-in model's without building its problem)."""
        return _file(self.path)[0].schema if self.path else _builtin(self.name).schema

    @property
    def label(self) -> str:
        """How the command line names the model."""
        return f"--model {self.path}" if self.path else self.name

    def digests(self) -> dict:
        """``{file: SHA-256}`` of what a model file's results depend on: the file and every input
        the loader recorded (the problem's ``source_files``), plus its
        ``cache_salt``; empty for a built-in model (whose code is in every key)."""
        if not self.path:
            return {}
        from ..symbolic.codegen import file_digest

        problem = self.problem
        out = {os.path.abspath(self.path): file_digest(self.path)}
        for f in problem.source_files:
            if os.path.isfile(f):
                out[f] = file_digest(f)
        if problem.cache_salt:
            out["salt"] = problem.cache_salt
        return out


def as_source(model) -> ModelSource:
    """A :class:`ModelSource` from a built-in model's name, a source, or a registry entry (an
    object with ``name``, ``path`` and ``simulation``: a model file is remembered here)."""
    if isinstance(model, ModelSource):
        return model
    if isinstance(model, str):
        _builtin(model)  # an unknown name is a ParameterError naming the model
        return ModelSource(model)
    path = getattr(model, "path", None)
    if path and os.path.isfile(path):
        remember(path, model.problem, model.simulation)
        return ModelSource(model.problem.name, os.path.abspath(path))
    name = getattr(model, "name", None)
    if name is None:
        raise ParameterError("model", f"not a model: {model!r}")
    return as_source(name)
