"""Result objects: a solve never returns a bare number, and its status says what happened.

:class:`Result` carries the values (``mpmath.mpf`` at the working precision, grouped as in the
JSON output) together with how far they can be trusted: ``status`` (a :class:`Status`: what the
driver observed), ``iterations``, ``residual`` (max-norm of the scaled equations at the solution),
``condition`` (of the scaled Jacobian, where there is one), ``digits`` (significant digits
guaranteed by agreement with a re-solve at higher precision or, in a certified solve, proved by
ball-arithmetic enclosures: then ``certificate`` holds the proof) and ``notes`` (caveats).
"""

from __future__ import annotations

import dataclasses
import enum
import json
from typing import Any

import mpmath

from .precision import allow_integer_strings


class Status(str, enum.Enum):
    """What a solve observed. Only ``CONVERGED`` and ``NOT_VERIFIED`` are results; ``NOT_CERTIFIED``
    is returned (with its certificate) by a certified solve whose proof failed, and the command
    line exits 3 on it; every other status is raised as a
    :class:`~replica.errors.ConvergenceError` (exit status 3)."""

    CONVERGED = "converged"
    """Newton converged and the re-solve at higher precision agreed on at least one digit."""
    NOT_VERIFIED = "not-verified"
    """Newton converged; no re-solve was asked for (``verify=False``), so no digit is claimed."""
    NO_DIGITS = "no-digits"
    """A solution was found, but the re-solve at higher precision agrees on no digit."""
    MAX_ITERATIONS = "max-iterations"
    """The iteration limit was reached before convergence."""
    SINGULAR_JACOBIAN = "singular-jacobian"
    """The Jacobian of the system is singular at an iterate."""
    STALLED = "stalled"
    """No step lowers the residual any more, far from the working precision."""
    INADMISSIBLE = "inadmissible"
    """The iteration left the domain where the equations hold (e.g. a spectral argument >= 0)."""
    NON_FINITE = "non-finite"
    """An equation evaluated to a non-finite number."""
    NOT_CERTIFIED = "not-certified"
    """A certified solve was asked for and the ball-arithmetic proof failed (the certificate says
    why): the values are those of the solve, and no digit is claimed."""

    @property
    def is_result(self) -> bool:
        return self in (Status.CONVERGED, Status.NOT_VERIFIED)


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
        # mpmath converts the mantissa scaled by the decimal exponent: integers of up to
        # (mantissa bits + |binary exponent|) log10(2) digits
        _, _, exponent, bits = x._mpf_
        allow_integer_strings(digits + 64 + int(0.302 * (bits + abs(exponent))))
        return mpmath.nstr(x, digits, strip_zeros=False, min_fixed=-6, max_fixed=12)


@dataclasses.dataclass
class Result:
    """Outcome of one solve of a problem's equations at one parameter point."""

    model: str
    params: dict[str, str]
    dps: int
    groups: dict[str, dict[str, Any]]
    status: Status
    iterations: int
    residual: Any
    condition: Any = None
    digits: int | None = None
    digits_how: str = ""
    notes: list[str] = dataclasses.field(default_factory=list)
    variant: str = ""
    all_values: dict[str, Any] = dataclasses.field(default_factory=dict, repr=False)
    """Every value the system reports (also those no group shows, e.g. a coefficient used by a
    consumer), by name."""
    certificate: Any = None
    """The :class:`~replica.numerics.certify.Certificate` of a certified solve, else ``None``."""

    @property
    def converged(self) -> bool:
        """Whether the solve converged (a consequence of :attr:`status`, never a constant)."""
        return self.status.is_result

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
        ndig = self.digits if self.digits else self.dps

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
            "status": self.status.value,
            "converged": self.converged,
            "iterations": self.iterations,
            "residual": _finite_or_none(self.residual),
            "condition": _finite_or_none(self.condition),
            "notes": list(self.notes),
        }
        for gname, group in self.groups.items():
            out[gname] = conv(group)
        if self.certificate is not None:
            out["certified"] = bool(self.certificate.certified)
            out["certificate"] = self.certificate.to_json_dict(max(ndig, 1))
        return out

    def to_json(self) -> str:
        return json.dumps(self.to_json_dict(), indent=2)


def _finite_or_none(x):
    """A diagnostic number as a 5-digit string; ``"inf"`` for an infinite condition number."""
    if x is None:
        return None
    with mpmath.workdps(20):
        v = mpmath.mpf(x)
        if mpmath.isinf(v):
            return "inf"
        if mpmath.isnan(v):
            return "nan"
    return decimal_string(x, 5)
