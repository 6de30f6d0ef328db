r"""One registry of models: what each model is and what it can do, for every command alike.

A model is a *model file*: a Python module that declares

* ``MODEL`` -- its mathematics (a :class:`~replica.modeling.SaddlePointModel`,
  :class:`~replica.modeling.FixedPointModel` or :class:`~replica.problem.Problem`), whose
  parameter schema gives every command its options;
* optionally what it can do besides being solved: ``SIMULATION`` (one finite-size instance and
  the estimator it trains, :class:`replica.capabilities.Simulation`), ``TRANSITIONS`` (the phase
  transitions and crossovers it declares, :class:`replica.capabilities.Transition`),
  ``EXPANSIONS`` and ``COMMANDS`` (a model's own variant of a command, :class:`CommandHook`: the
  papers' fixed-axis phase diagrams, for instance).

The built-in models are model files that ship with the package (``replica/registry/NAME.py``, one
per name in :data:`BUILTIN`); they differ from a user's file only in being loaded lazily (their
parsers are built from the parameter schema in :mod:`replica.models.parameters`, without SymPy).
``replica COMMAND --model PATH`` loads a user's file (:func:`route_model_file`); ``--model NAME``
takes a built-in model through the generic commands (without its own variants).

Every command builds its parsers by iterating :func:`entries` (:func:`add_model_parsers`); no
command branches on a model's name (``tests/test_registry.py`` checks that no built-in name
appears in ``replica/commands/`` or ``replica/simulate/``).
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import os
from typing import Any, Callable, Mapping

#: The built-in models, each the module ``replica.registry.NAME`` (the only place where their
#: names are listed).
BUILTIN = ("alignment", "isotropic", "lowrank")

#: The sub-command token a ``--model PATH`` option is routed to (never typed by a user).
FILE_TOKEN = "@model"


@dataclasses.dataclass(frozen=True)
class CommandHook:
    """How one model answers one command in its own way: the options it adds to its parser
    (``add_arguments(parser)``) and the function that runs it (``run(args) -> exit status``).
    A model without a hook for a command gets the command's generic form."""

    add_arguments: Callable[[Any], None]
    run: Callable[[Any], int]
    help: str = ""
    description: str = ""
    epilog: str = ""


class ModelEntry:
    """One model of the registry: its name, titles, schema, declaration (loaded on first use)
    and the capabilities its model file declares."""

    def __init__(self, name: str, *, title: str, description: str, namespace: Mapping,
                 load: Callable[[], Any], schema=None, path: str | None = None,
                 token: str | None = None, generic: bool = False):
        self.name = name
        self.title = title
        self.description = description
        self.path = path
        self.token = token or name
        self.generic = generic
        self._namespace = namespace
        self._load = load
        self._schema = schema

    def __repr__(self):
        return f"ModelEntry({self.name!r}{', ' + repr(self.path) if self.path else ''})"

    @property
    def problem(self):
        """The model's :class:`~replica.problem.Problem` (a built-in model's is built on first use
        and kept by :func:`replica.models.get`; a file's was built when it was loaded)."""
        return self._load()

    @property
    def schema(self):
        """The parameter schema (for a built-in model, without building the problem)."""
        return self._schema if self._schema is not None else self.problem.schema

    @property
    def is_file(self) -> bool:
        """Whether the model came from ``--model`` (its parsers are the generic ones)."""
        return self.token == FILE_TOKEN

    @property
    def label(self) -> str:
        """How the model is named on the command line: its name, or ``--model PATH``."""
        return f"--model {self.path}" if self.is_file else self.name

    def declared(self, name: str, default=None):
        """The module-level declaration ``name`` of the model file (``SIMULATION``, ...)."""
        value = self._namespace.get(name, default)
        return value() if callable(value) and name in _LAZY else value

    def hook(self, command: str) -> CommandHook | None:
        """The model's own variant of ``command`` (``None``: the generic form)."""
        if self.generic:
            return None
        return (self.declared("COMMANDS") or {}).get(command)

    @property
    def simulation(self):
        """The declared :class:`~replica.capabilities.Simulation` (``None``: cannot simulate)."""
        return self.declared("SIMULATION")

    @property
    def transitions(self) -> tuple:
        """The declared transitions (:class:`~replica.capabilities.Transition`)."""
        return tuple(self.declared("TRANSITIONS") or ())

    @property
    def branches(self) -> tuple:
        """The declared closed-form branches (:class:`~replica.capabilities.Branch` with a
        ``free_energy``), which ``replica solve`` compares each solution with."""
        return tuple(self.declared("BRANCHES") or ())

    @property
    def expansions(self) -> tuple:
        """The declared expansions."""
        return tuple(self.declared("EXPANSIONS") or ())


#: Declarations a built-in module may give as a function (called on first use), so that
#: building the parsers imports nothing heavy.
_LAZY = ("SIMULATION", "TRANSITIONS", "EXPANSIONS")


@functools.lru_cache(maxsize=None)
def builtin(name: str) -> ModelEntry:
    """The entry of the built-in model ``name``."""
    from ..errors import ParameterError

    if name not in BUILTIN:
        raise ParameterError("model", f"unknown model {name!r} ({', '.join(BUILTIN)})")
    module = importlib.import_module(f"{__name__}.{name}")
    return ModelEntry(name, title=module.TITLE, description=module.DESCRIPTION,
                      namespace=vars(module), load=module.load_problem, schema=module.SCHEMA)


def builtins() -> list:
    """The entries of every built-in model, in :data:`BUILTIN` order."""
    return [builtin(name) for name in BUILTIN]


def load(path_or_name: str) -> ModelEntry:
    """The entry of the model file ``path_or_name``, or -- when it names a built-in model and no
    such file exists -- of that built-in model on the generic path (its own command variants
    left out). A file that cannot be used is a :class:`~replica.modeling.ModelError`."""
    if path_or_name in BUILTIN and not os.path.exists(path_or_name):
        b = builtin(path_or_name)
        return ModelEntry(b.name, title=b.title, description=b.description,
                          namespace=b._namespace, load=lambda: b.problem, schema=b._schema,
                          path=path_or_name, token=FILE_TOKEN, generic=True)
    from ..modeling import load_model_namespace

    problem, namespace = load_model_namespace(path_or_name)
    return ModelEntry(problem.name, title=getattr(problem, "title", problem.name),
                      description=namespace.get("__doc__") or "", namespace=namespace,
                      load=lambda: problem, path=path_or_name, token=FILE_TOKEN, generic=True)


_CURRENT: dict = {}


def loaded() -> ModelEntry | None:
    """The entry loaded by :func:`route_model_file` in this process (``None`` if none)."""
    return _CURRENT.get("entry")


def entries() -> list:
    """Every model a command offers: the built-in models, then the loaded model file."""
    out = builtins()
    if loaded() is not None:
        out.append(loaded())
    return out


def forget_model_file() -> None:
    """Forget the model file :func:`route_model_file` loaded: after a command has run, the
    parsers built in this process offer the built-in models only again."""
    _CURRENT.clear()


def route_model_file(argv: list) -> list:
    """``argv`` with ``--model PATH`` (or ``--model=PATH``) after the command word replaced by
    :data:`FILE_TOKEN` right after the command; the model is loaded (:func:`load`) so that the
    command's parser can offer its parameters. Without ``--model`` the list is returned
    unchanged."""
    from ..errors import ParameterError

    argv = list(argv)
    _CURRENT.clear()
    idx = next((i for i, t in enumerate(argv) if t == "--model" or t.startswith("--model=")),
               None)
    if idx is None:
        return argv
    if idx == 0:
        raise ParameterError("--model", "comes after the command (replica solve --model PATH)")
    if argv[idx] == "--model":
        if idx + 1 >= len(argv):
            raise ParameterError("--model", "expected a model file PATH")
        path = argv[idx + 1]
        del argv[idx:idx + 2]
    else:
        path = argv[idx][len("--model="):]
        del argv[idx]
    _CURRENT["entry"] = load(path)
    command = next(i for i, t in enumerate(argv) if not t.startswith("-"))
    argv.insert(command + 1, FILE_TOKEN)
    return argv


def add_model_parsers(subparsers, command: str,
                      generic: Callable[[ModelEntry], CommandHook | None]) -> list:
    """One parser per model of :func:`entries` under a command's ``MODEL`` sub-parsers: the
    model's own :class:`CommandHook` for ``command`` if it declares one, else ``generic(entry)``
    (``None``: the model cannot do this command and gets no parser). Each parser's defaults
    carry ``run`` and ``entry``. Returns the parsers made."""
    made = []
    for entry in entries():
        hook = entry.hook(command) or generic(entry)
        if hook is None:
            continue
        kwargs = {"help": hook.help or entry.title,
                  "description": hook.description or hook.help or entry.description
                  or entry.title}
        if entry.is_file:
            kwargs["prog"] = f"replica {command} --model {entry.path}"
            kwargs["help"] = f"the model in {entry.path}"
            kwargs["description"] = f"{entry.title}. {hook.description}".strip()
        if hook.epilog:
            kwargs["epilog"] = hook.epilog
        sp = subparsers.add_parser(entry.token, **kwargs)
        sp.set_defaults(run=hook.run, entry=entry)
        hook.add_arguments(sp)
        made.append(sp)
    return made
