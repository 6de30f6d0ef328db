"""Result objects: a solve never returns a bare number.

:class:`SolveResult` carries the values (``mpmath.mpf`` at the working precision, grouped as the
JSON contract of ``DESIGN.md`` groups them) together with how far they can be trusted:
``converged``, ``iterations``, ``residual`` (max-norm of the equations at the solution),
``condition`` (of the Jacobian, where there is one), ``digits`` (significant digits guaranteed
by agreement with a re-solve at higher precision) and ``notes`` (caveats).
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import mpmath


def decimal_string(x, digits: int) -> str | None:
    """A number as a decimal string with ``digits`` significant digits (``None`` stays ``None``)."""
    if x is None:
        return None
    if isinstance(x, str):
        return x
    digits = max(int(digits), 1)
    # mpf(x) would round x to the *current* precision: print inside a context wide enough.
    with mpmath.workdps(digits + 10):
        if not isinstance(x, mpmath.mpf):
            x = mpmath.mpf(x)
        if mpmath.isnan(x) or mpmath.isinf(x):
            raise ArithmeticError(f"refusing to serialise a non-finite value {x}")
        return mpmath.nstr(x, digits, strip_zeros=False, min_fixed=-6, max_fixed=12)


@dataclasses.dataclass
class SolveResult:
    """Outcome of one solve of a model's equations at one parameter point."""

    model: str
    params: dict[str, str]
    dps: int
    groups: dict[str, dict[str, Any]]
    converged: bool
    iterations: int
    residual: Any
    condition: Any = None
    digits: int | None = None
    digits_how: str = ""
    notes: list[str] = dataclasses.field(default_factory=list)

    def __getitem__(self, name: str):
        """Look a value up by name in any group: ``result["q"]``, ``result["e_icl"]``."""
        for group in self.groups.values():
            if name in group:
                return group[name]
        raise KeyError(name)

    def values(self) -> dict[str, Any]:
        """All scalar values, flattened (nested groups such as a decomposition are skipped)."""
        out = {}
        for group in self.groups.values():
            for key, val in group.items():
                if not isinstance(val, dict):
                    out[key] = val
        return out

    def to_json_dict(self) -> dict[str, Any]:
        ndig = self.digits if self.digits is not None else self.dps

        def conv(v):
            if isinstance(v, dict):
                return {k: conv(w) for k, w in v.items()}
            return decimal_string(v, max(ndig, 1))

        out: dict[str, Any] = {
            "model": self.model,
            "params": dict(self.params),
            "dps": self.dps,
            "digits": self.digits,
            "digits_how": self.digits_how,
            "converged": self.converged,
            "iterations": self.iterations,
            "residual": decimal_string(self.residual, 5),
            "condition": decimal_string(self.condition, 5),
            "notes": list(self.notes),
        }
        for gname, group in self.groups.items():
            out[gname] = conv(group)
        return out

    def to_json(self) -> str:
        return json.dumps(self.to_json_dict(), indent=2)
