"""What the solver needs of a compiled system at run time, by name: its :class:`Outline`.

A :class:`~replica.problem.System` holds SymPy expressions; once the evaluators generated from them
are in the disk cache (:class:`~replica.symbolic.codegen.CodeCache`), solving needs only the
*shape* of the system: the names and order of its unknowns and parameters, how many aliases and
spectral inputs are staged, the reported names, whether it is a fixed-point system, the
admissibility conditions' descriptions, and the structure of its start (the nested scalar roots,
each with its direction of monotonicity). That is an :class:`Outline`. It is written to the code
cache beside the generated code, under the same key (the contents of this package's source files,
of the problem's files outside it and the library versions), so a process that finds both builds
neither the system nor the expressions, and imports no SymPy.

An outline is taken from the system itself (:meth:`Outline.of`) and stored only when it can stand
for it: the system's spectrum is the problem's declared one (a callable cannot be stored), and
each parameter symbol has a schema name.
"""

from __future__ import annotations

import dataclasses
import json
import os

OUTLINE_FORMAT = 1
"""Version of the stored outline's layout (a file of another version is ignored)."""


OUTLINE_NAME = "outline"
"""The outline's name in the code cache. The cache key covers every file of this package
(:func:`~replica.symbolic.codegen.package_digest`), this module included, so an outline stored by
other code is never read."""


@dataclasses.dataclass(frozen=True)
class RootOutline:
    """One scalar root of the start: its direction of monotonicity and its name in messages."""

    increasing: bool
    what: str


@dataclasses.dataclass(frozen=True)
class Outline:
    """A system's run-time shape (see the module docstring). ``parameters`` are schema names in
    the generated code's argument order; ``roots`` the start's chains of nested roots, outer
    first; ``start_aliases`` whether the start stages aliases (``False``: it declares none)."""

    unknowns: tuple
    parameters: tuple
    aliases: int
    inputs: int
    report: tuple
    fixed_point: bool
    positive_unknowns: bool
    admissible: tuple
    exact_start: bool
    start_aliases: bool
    roots: tuple
    spectrum: bool
    portable: bool = True

    @classmethod
    def of(cls, system, problem) -> "Outline":
        """The outline of ``system`` (a :class:`~replica.problem.System` of ``problem``)."""
        names = {sym: name for name, sym in system.symbols.items()}
        params = tuple(names.get(s, str(s)) for s in system.parameters)
        chains = []
        for r in system.start.roots:
            chain = []
            while r is not None:
                chain.append(RootOutline(bool(r.increasing), str(r.what)))
                r = r.inner
            chains.append(tuple(chain))
        aliases = system.start.aliases
        start_aliases = callable(aliases) or bool(aliases)
        portable = (all(s in names for s in system.parameters)
                    and (system.spectrum is None or system.spectrum is problem.spectrum))
        return cls(unknowns=tuple(str(u) for u in system.unknowns), parameters=params,
                   aliases=len(system.aliases), inputs=len(system.spectral_inputs),
                   report=tuple(entry[0] for entry in system.report),
                   fixed_point=system.fixed_point is not None,
                   positive_unknowns=bool(system.positive_unknowns),
                   admissible=tuple(str(what) for _, what in system.admissible),
                   exact_start=bool(system.start.exact), start_aliases=start_aliases,
                   roots=tuple(chains), spectrum=system.spectrum is not None, portable=portable)

    def to_json(self) -> str:
        data = dataclasses.asdict(self)
        data["format"] = OUTLINE_FORMAT
        return json.dumps(data, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> "Outline | None":
        """The outline stored as ``text``, or ``None`` if it is of another format or damaged."""
        try:
            data = json.loads(text)
            if data.pop("format", None) != OUTLINE_FORMAT:
                return None
            data["roots"] = tuple(tuple(RootOutline(**r) for r in chain)
                                  for chain in data["roots"])
            for key in ("unknowns", "parameters", "report", "admissible"):
                data[key] = tuple(data[key])
            return cls(**data)
        except (ValueError, TypeError, KeyError):
            return None


def load_outline(cache) -> Outline | None:
    """The outline stored in ``cache`` (a :class:`~replica.symbolic.codegen.CodeCache`), if any."""
    path = None if cache is None else cache.path(OUTLINE_NAME, ".json")
    if path is None or not os.path.exists(path):
        return None
    try:
        with open(path) as fh:
            return Outline.from_json(fh.read())
    except OSError:
        return None


def store_outline(cache, outline: Outline) -> None:
    """Store ``outline`` in ``cache`` when it can stand for its system."""
    if cache is not None and outline.portable:
        cache.store(OUTLINE_NAME, outline.to_json(), ".json")


def load_fact(cache, name: str) -> bool | None:
    """A yes/no fact about the system stored in ``cache`` under ``name`` by :func:`store_fact`
    (e.g. whether its equations hold an implicit root), or ``None`` if not stored (or no cache).
    Facts are learned from the system's expressions after the outline was written; stored under
    the same key, they spare a later process building the system (and importing SymPy) to learn
    them again."""
    path = None if cache is None else cache.path(f"fact-{name}", ".json")
    if path is None or not os.path.exists(path):
        return None
    try:
        with open(path) as fh:
            value = json.loads(fh.read())
    except (OSError, ValueError):
        return None
    return value if isinstance(value, bool) else None


def store_fact(cache, name: str, value: bool) -> None:
    """Store the fact ``name`` = ``value`` in ``cache`` (see :func:`load_fact`)."""
    if cache is not None:
        cache.store(f"fact-{name}", json.dumps(bool(value)), ".json")
