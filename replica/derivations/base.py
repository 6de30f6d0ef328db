r"""Derivations: ordered lists of :class:`~replica.symbolic.Step` records, grouped in sections.

A :class:`Derivation` is what an appendix is generated from. Its steps hold the SymPy objects
(equations built from the model modules, never retyped), a sentence of justification and a check.
:meth:`Derivation.run_checks` runs every check and reports each outcome; a check that raises counts
as a failure, with the exception as the reason.

Sentences may contain ``{name}`` (an inline formula: ``name`` is a key of
:attr:`Derivation.inline`) and ``[[step]]`` or ``[[step.key]]`` (a reference to the first
displayed equation of a step, or to one of its objects) or ``[[cite:KEY]]`` (a citation of a
paper of :data:`replica.latex.bibliography.PAPERS`).
"""

from __future__ import annotations

import dataclasses
import functools
import time
from typing import Any, Mapping

from ..symbolic import Step


@dataclasses.dataclass(frozen=True)
class Section:
    """A titled group of steps; ``intro`` is prose (same placeholders as a sentence)."""

    title: str
    steps: tuple
    intro: str = ""


@dataclasses.dataclass(frozen=True)
class CheckOutcome:
    """Result of one step's check: ``passed``, the reason for a failure, and the time taken."""

    step: str
    passed: bool
    reason: str = ""
    seconds: float = 0.0


@dataclasses.dataclass(frozen=True)
class Derivation:
    """One paper's derivation.

    ``key`` names it (``"alignment"``), ``symbol_names`` maps symbols to LaTeX display names,
    ``inline`` maps placeholder names to SymPy objects, ``titles`` maps step names to headings,
    ``missing`` lists (as prose) what is not derived here and why.
    """

    key: str
    title: str
    sections: tuple
    intro: str = ""
    symbol_names: Mapping[Any, str] = dataclasses.field(default_factory=dict)
    inline: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    titles: Mapping[str, str] = dataclasses.field(default_factory=dict)
    missing: tuple = ()
    sources: tuple = ()
    citations: tuple = ()
    """BibTeX keys (:data:`replica.latex.bibliography.PAPERS`) the appendix cites besides those
    cited in its prose with ``[[cite:KEY]]``."""
    origin: str = ""
    """Where the steps come from, for the generated file's header (default: the derivation's
    module, ``replica/derivations/KEY.py``)."""

    def __post_init__(self):
        names = [s.name for s in self.steps]
        dup = {n for n in names if names.count(n) > 1}
        if dup:
            raise ValueError(f"derivation {self.key!r}: duplicate step names {sorted(dup)}")

    @property
    def steps(self) -> list[Step]:
        """The steps in order."""
        return [step for section in self.sections for step in section.steps]

    def step(self, name: str) -> Step:
        for s in self.steps:
            if s.name == name:
                return s
        raise KeyError(name)

    def title_of(self, step: Step) -> str:
        return self.titles.get(step.name) or step.name.replace("_", " ").capitalize()

    def run_checks(self) -> list[CheckOutcome]:
        """Run every step's check, in order; never raises for a failing check."""
        return [run_check(step) for step in self.steps]


def run_check(step: Step) -> CheckOutcome:
    """Run ``step.verify()``; an exception is a failure whose reason is the exception."""
    t0 = time.perf_counter()
    try:
        ok = step.verify()
        reason = "" if ok else "check returned False"
    except Exception as exc:  # a broken check is a failed check, reported with its cause
        ok, reason = False, f"{type(exc).__name__}: {exc}"
    return CheckOutcome(step.name, bool(ok), reason, time.perf_counter() - t0)


def cached_solver(problem, dps: int):
    """The engine's verified solve of ``problem`` at ``dps`` digits, memoised on its keyword
    arguments (the appendix solves the same parameter points for several steps and tables)."""
    from ..numerics.driver import solve

    @functools.lru_cache(maxsize=None)
    def _cached(items):
        return solve(problem, dps=dps, **dict(items))

    def solver(**kw):
        return _cached(tuple(sorted(kw.items())))

    solver.__doc__ = f"Cached solve of the {problem.name} model at {dps} digits."
    return solver
