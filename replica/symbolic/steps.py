"""Derivation steps: the records that feed the solver, the tests and the LaTeX appendices.

A :class:`Step` names what it produces, holds the SymPy objects, says in one sentence why it
holds, and carries a ``check`` callable that returns ``True`` when the claim verifies (a symbolic
identity, a limit, or a numeric comparison). The tests run every check.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable


@dataclasses.dataclass(frozen=True)
class Step:
    name: str
    objects: dict[str, Any]
    sentence: str
    check: Callable[[], bool] | None = None
    stated: str = ""
    """Non-empty when the step's result is stated rather than derived: the reason (e.g. "taken
    from the paper; its check only confirms consistency"). The appendix labels the step stated."""

    def verify(self) -> bool:
        """Run the step's check (a step without a check is a definition and verifies trivially)."""
        return True if self.check is None else bool(self.check())
