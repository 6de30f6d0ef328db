"""Result objects: a solve never returns a bare number, and its status says what happened.

:class:`Result` carries the values (``mpmath.mpf`` at the working precision, grouped as in the
JSON output) together with how far they can be trusted: ``status`` (a :class:`Status`: what the
driver observed), ``iterations``, ``residual`` (max-norm of the scaled equations at the solution),
``condition`` (of the scaled Jacobian, where there is one), ``digits`` (significant digits
guaranteed by agreement with a re-solve at higher precision or, in a certified solve, proved by
ball-arithmetic enclosures: then ``certificate`` holds the proof) and ``notes`` (caveats).

A result is also a read-only mapping from the names of its values to the values, with the names
of the JSON output of ``replica solve --json`` (a nested group such as the low-rank
``decomposition`` contributes ``tm_signal``, ``tm_memorization``, ...): ``r["q"]``, ``r.q``,
``dict(r)``, ``list(r)``, ``r.to_dict(kind="str")`` (decimal strings with the digits the result
carries, as in the JSON) or ``kind="float"``. ``repr(r)``, ``str(r)`` and ``r._repr_latex_()``
(a table Jupyter renders) print every value with those digits.
"""

from __future__ import annotations

import dataclasses
import enum
import json
from typing import Any

import mpmath

from ..problem import REPLICON
from .precision import allow_integer_strings


class Status(str, enum.Enum):
    """What a solve observed. Only ``CONVERGED`` and ``NOT_VERIFIED`` are results; ``NOT_CERTIFIED``
    is returned (with its certificate) by a certified solve whose proof failed, and the command
    line exits 3 on it; every other status is raised as a
    :class:`~replica.errors.ConvergenceError` (exit status 3)."""

    CONVERGED = "converged"
    """Newton converged and the re-solve at higher precision agreed on at least one digit. (A
    float64 grid point, :func:`~replica.numerics.driver.solve_float64`: every reported value
    within a relative 1e-8 by its extended-precision error estimate.)"""
    NOT_VERIFIED = "not-verified"
    """Newton converged; no re-solve was asked for (``verify=False``), so no digit is claimed.
    (A float64 grid point: solved, but its error estimate, condition or sign of a mean-squared
    error does not support the float64 claim; the values are a start.)"""
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
        if abs(exponent) > _HUGE_EXPONENT:
            return _scientific(x, digits)
        allow_integer_strings(digits + 64 + int(0.302 * (bits + abs(exponent))))
        return mpmath.nstr(x, digits, strip_zeros=False, min_fixed=-6, max_fixed=12)


_HUGE_EXPONENT = 100_000
"""A binary exponent beyond which :func:`decimal_string` writes the decimal exponent itself:
mpmath's conversion goes through an integer of about 0.3 |exponent| digits (quadratic time,
and beyond the C int that bounds Python's integer-to-string limit near 2^31 digits), e.g. a
training error of order exp(-10^10) at a tiny sample ratio."""


def _scientific(x, digits: int) -> str:
    r"""``x`` (finite, nonzero, mpf) as :math:`d.ddd\ldots\mathrm{e}E` with ``digits``
    significant digits: :math:`E = \lfloor\log_{10}|x|\rfloor` and the mantissa
    :math:`x/10^E \in [1, 10)`, computed with the digits of :math:`E` as guard digits (so the
    mantissa is as accurate as the value), the same form as mpmath's ``nstr``."""
    with mpmath.workdps(mpmath.mp.dps + 10):
        E = int(mpmath.floor(mpmath.log10(abs(x))))
    with mpmath.workdps(mpmath.mp.dps + len(str(abs(E))) + 10):
        mant = x / mpmath.power(10, E)
        if abs(mant) >= 10:
            mant, E = mant / 10, E + 1
        elif abs(mant) < 1:
            mant, E = mant * 10, E - 1
        text = mpmath.nstr(mant, digits, strip_zeros=False, min_fixed=-6, max_fixed=12)
    if text.lstrip("-").startswith("10."):  # rounded up to 10
        mant, E = mant / 10, E + 1
        text = mpmath.nstr(mant, digits, strip_zeros=False, min_fixed=-6, max_fixed=12)
    return f"{text}e{E:+d}"


class CarriedValue(mpmath.mpf):
    """An ``mpmath.mpf`` that remembers how many significant digits it carries and prints with
    them (``str``, ``repr``), whatever the current mpmath precision: ``result.q`` of a 50-digit
    solve prints 50 digits, not mpmath's default 15. Arithmetic on it gives plain ``mpf``
    values at the current precision, as for any ``mpf``; the binary value is the result's,
    unrounded."""

    __slots__ = ("digits",)

    def __new__(cls, value, digits: int):
        v = object.__new__(cls)
        v._mpf_ = value._mpf_   # the value itself: mpf(value) would round to the current precision
        v.digits = max(int(digits), 1)
        return v

    def __str__(self) -> str:
        if not mpmath.isfinite(self):
            return mpmath.mpf.__str__(self)
        return decimal_string(self, self.digits)

    __repr__ = __str__

    def __reduce__(self):
        return (_carried_value, (self._mpf_, self.digits))


def _carried_value(mpf_tuple, digits):
    v = object.__new__(CarriedValue)
    v._mpf_ = mpf_tuple
    v.digits = digits
    return v


def _carry(value, digits: int):
    """``value`` as a :class:`CarriedValue` when it is an ``mpf`` (other values unchanged)."""
    if isinstance(value, mpmath.mpf) and not isinstance(value, CarriedValue):
        return CarriedValue(value, digits)
    return value


def _carry_group(group: dict, digits: int) -> dict:
    return {k: _carry_group(v, digits) if isinstance(v, dict) else _carry(v, digits)
            for k, v in group.items()}


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
    stability: Any = None
    """The problem's :class:`~replica.problem.Stability` record (``None``: nothing stated): with
    a replicon, its value is the reported value ``replicon``; see :meth:`stability_dict`."""

    @property
    def converged(self) -> bool:
        """Whether the solve converged (a consequence of :attr:`status`, never a constant)."""
        return self.status.is_result

    def _flat(self) -> dict[str, Any]:
        """Every reported value by its JSON name, in the order of the groups; an entry ``inner``
        of a nested group ``outer`` is named ``outer_inner``; a name in two groups (the
        alignment model's ``e_misalign``) is the same value and appears once."""
        out: dict[str, Any] = {}
        for group in self.__dict__.get("groups", {}).values():
            for key, val in group.items():
                if isinstance(val, dict):
                    for inner, w in val.items():
                        out.setdefault(f"{key}_{inner}", w)
                else:
                    out.setdefault(key, val)
        return out

    def __getitem__(self, name: str):
        """Look a value up by name in any group: ``result["q"]``, ``result["e_icl"]``; a nested
        group's entry as ``result["tm_signal"]`` (a value no group shows, by its name in
        :attr:`all_values`), as a :class:`CarriedValue`. An unknown name is a ``KeyError`` that lists the known ones."""
        n = self.carried_digits
        for group in self.groups.values():
            if name in group and not isinstance(group[name], dict):
                return _carry(group[name], n)
        flat = self._flat()
        if name in flat:
            return _carry(flat[name], n)
        if name in self.all_values:
            return _carry(self.all_values[name], n)
        raise KeyError(f"{name!r}: no such value of this {self.model} result; the values are "
                       f"{', '.join(flat)}")

    def __getattr__(self, name: str):
        """``result.q``: a value by its name (see :meth:`__getitem__`) or a group by its name
        (``result.errors``, a dict); values are :class:`CarriedValue` numbers, which print with
        :attr:`carried_digits` digits. Fields such as ``status`` or ``digits`` take precedence,
        and ``result["name"]`` always reaches a value."""
        if name.startswith("__"):
            raise AttributeError(name)
        d = self.__dict__
        groups = d.get("groups") or {}
        if name in groups:
            return _carry_group(groups[name], self.carried_digits)
        flat = self._flat()
        if name in flat or name in (d.get("all_values") or {}):
            return self[name]
        raise AttributeError(f"{type(self).__name__} of {d.get('model', '?')!r} has no value "
                             f"{name!r}; the values are {', '.join(flat)}; the groups "
                             f"{', '.join(groups)}")

    def keys(self):
        """The names of the reported values (as in :meth:`to_dict`), so ``dict(result)``
        works."""
        return self._flat().keys()

    def __iter__(self):
        return iter(self._flat())

    def __len__(self) -> int:
        return len(self._flat())

    def __contains__(self, name) -> bool:
        return name in self._flat()

    def __bool__(self) -> bool:
        return True

    def items(self):
        return self._flat().items()

    @property
    def carried_digits(self) -> int:
        """The significant digits the values are printed with: ``digits`` when some are
        guaranteed, else the working precision (a result without verification)."""
        return max(self.digits if self.digits else self.dps, 1)

    def to_dict(self, kind: str = "str") -> dict[str, Any]:
        """Every reported value by its name (``None`` where a value is undefined at this point).

        ``kind="str"``: decimal strings with :attr:`carried_digits` significant digits, the last
        correctly rounded to within one unit (the strings of the JSON output);
        ``kind="float"``: the nearest binary64 numbers; ``kind="mpf"``: the ``mpmath.mpf``
        values at the working precision."""
        if kind == "str":
            return {k: decimal_string(v, self.carried_digits) for k, v in self._flat().items()}
        if kind == "float":
            return {k: None if v is None else float(v) for k, v in self._flat().items()}
        if kind == "mpf":
            return dict(self._flat())
        from ..errors import ParameterError
        raise ParameterError("kind", f"must be 'str', 'float' or 'mpf', got {kind!r}")

    def __repr__(self) -> str:
        params = ", ".join(f"{k}={v}" for k, v in self.params.items())
        vals = ", ".join(f"{k}={'None' if v is None else v}" for k, v in self.to_dict().items())
        return (f"Result({self.model}({params}); {self.status.value}, digits={self.digits}, "
                f"dps={self.dps}; {vals})")

    def __str__(self) -> str:
        return self.to_text()

    def to_text(self) -> str:
        """The readable table ``replica solve`` prints without ``--json``."""
        from ..params import compact_str

        data = self.to_json_dict()  # its params stay exact; the header shows them compactly
        params = ", ".join(f"{k}={compact_str(v)}" for k, v in data["params"].items())
        lines = [f"{data['model']}  ({params})",
                 f"  status {data['status']}; dps {data['dps']}, digits guaranteed: "
                 f"{data['digits']} ({data['digits_how']}); residual {data['residual']}, "
                 f"condition {data['condition']}, iterations {data['iterations']}"]
        stab = self.stability_dict()
        for group in self.groups:
            members = {k: v for k, v in data[group].items()
                       if not (stab is not None and group == "stability" and k in stab)}
            if not members:
                continue  # the replicon alone: the stability line below
            lines.append(f"  {group}:")
            for k, v in members.items():
                if isinstance(v, dict):
                    lines.append(f"    {k}: " + ", ".join(f"{a}={b}" for a, b in v.items()))
                else:
                    lines.append(f"    {k:<14} {v if v is not None else '(undefined)'}")
        if stab is not None:
            word = {True: "stable", False: "UNSTABLE (replica symmetry broken)",
                    None: "undetermined"}[stab["stable"]]
            lines.append(f"  stability: RS {word}" + (
                f", replicon {stab['replicon']}" if stab["replicon"] is not None else "")
                + f" ({stab['how']})")
        if "certificate" in data:
            c = data["certificate"]
            lines.append(f"  certified: {'yes' if c['certified'] else 'no'} ({c['method']}"
                         + (f"; {c['reason']}" if c["reason"] else "") + ")")
            for k, iv in c["enclosures"].items():
                lines.append(f"    {k:<14} in [{iv[0]}, {iv[1]}]")
        lines += [f"  note: {n}" for n in data["notes"]]
        return "\n".join(lines) + "\n"

    def _repr_latex_(self) -> str:
        """A LaTeX table of the values with the digits they carry (rendered by Jupyter)."""
        def name(k):
            return r"\mathtt{" + k.replace("_", r"\_") + "}"

        def num(v):
            if v is None:
                return r"\text{undefined}"
            s = decimal_string(v, self.carried_digits)
            mant, _, exp = s.partition("e")
            return mant + (r"\times 10^{" + str(int(exp)) + "}" if exp else "")

        params = ", ".join(f"{name(k)} = " + r"\text{" + _latex_text(v) + "}"
                           for k, v in self.params.items())
        rows = [rf"\text{{{_latex_text(self.model)}}} & {params} \\",
                rf"\text{{status}} & \text{{{self.status.value}, {self.digits} digits "
                rf"guaranteed (dps {self.dps})}} \\ \hline"]
        rows += [f"{name(k)} & {num(v)} \\\\" for k, v in self._flat().items()]
        return "$\\begin{array}{ll}\n" + "\n".join(rows) + "\n\\end{array}$"

    def values(self) -> dict[str, Any]:
        """All scalar values, flattened (nested groups such as a decomposition are skipped)."""
        out = {}
        for group in self.groups.values():
            for key, val in group.items():
                if not isinstance(val, dict):
                    out[key] = val
        return out

    def stability_dict(self) -> dict[str, Any] | None:
        """The ``stability`` object of the JSON output (``None`` when the model states none):
        ``replicon`` (the replicon eigenvalue with the result's digits, ``None`` when replica
        symmetry is exact), ``stable`` (the replica-symmetric solution is locally stable: the
        replicon is positive, or replica symmetry is exact) and ``how`` (``replicon (source)``
        or ``exact: <reason>``)."""
        st = self.stability
        if st is None:
            return None
        if st.replicon is None:
            return {"replicon": None, "stable": True, "how": st.describe()}
        value = self.all_values.get(REPLICON)
        if value is None:
            return {"replicon": None, "stable": None,
                    "how": st.describe() + "; undefined at this point"}
        return {"replicon": decimal_string(value, self.carried_digits),
                "stable": bool(value > 0), "how": st.describe()}

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
        stab = self.stability_dict()
        if stab is not None:
            out["stability"] = {**out.get("stability", {}), **stab}
        if self.certificate is not None:
            out["certified"] = bool(self.certificate.certified)
            out["certificate"] = self.certificate.to_json_dict(max(ndig, 1))
        return out

    def to_json(self) -> str:
        return json.dumps(self.to_json_dict(), indent=2)


_LATEX_SPECIAL = {"\\": r"\textbackslash{}", "_": r"\_", "%": r"\%", "&": r"\&", "#": r"\#",
                  "$": r"\$", "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}",
                  "^": r"\textasciicircum{}"}


def _latex_text(text) -> str:
    """``text`` with LaTeX's special characters escaped (for ``\\text{...}``)."""
    return "".join(_LATEX_SPECIAL.get(ch, ch) for ch in str(text))


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
