r"""Curves, located points and parameter planes for any declared model (built-in or a model file).

Everything here asks the engine for a named reported value :math:`Q` of a problem as a function of
one parameter :math:`x` (the others fixed), and never looks inside the model:

* :func:`locate` finds where :math:`Q` has an interior maximum or minimum in :math:`x`
  (:math:`dQ/dx = 0`; e.g. a double-descent peak) or crosses a level (:math:`Q = L`). A float64
  scan (:func:`replica.numerics.driver.solve_float64`) brackets it; the bracket is refined by a
  bracketing root finder on the condition evaluated from solves at a raised precision :math:`w`
  (:math:`dQ/dx` by a central difference with step :math:`h = 10^{-w/3}|x|`, whose truncation
  error :math:`O(h^2)` and rounding error :math:`O(10^{-w}/h)` are both :math:`10^{-2w/3}`; with
  :math:`w \approx 1.5\,\mathrm{dps} + 10` both lie below the requested digits). The whole
  location is repeated at :math:`w + \max(10, w/2)` digits, and the reported ``digits`` are the
  agreement of the two (capped at ``dps``) -- evidence, not an enclosure.
* ``kind="kink"``: a non-analytic point of :math:`Q`, where its one-sided slopes differ,
  :math:`Q'(x_c^-) \ne Q'(x_c^+)` (e.g. :math:`Q = \max(a(x), b(x))` with :math:`a, b` analytic, at
  :math:`a = b`). The float64 scan brackets it (the largest second difference); at the working
  precision the two analytic branches are fitted by polynomials through points on each side and
  intersected, the points closing in until the intersection settles
  (:func:`replica.numerics.continuation.locate_kink`). The result is accepted only if the jump of
  the slope is there: the one-sided slopes, from fits at two scales :math:`h` and :math:`h/16`,
  give the same jump :math:`J = Q'(x_c^+) - Q'(x_c^-)` (a smooth :math:`Q` gives a "jump" of
  order :math:`h^{5}`, which changes by :math:`16^5` between the scales).
* ``kind="crossover"``: the extremum of the curvature of a smooth :math:`Q`, the root of
  :math:`d^3Q/dx^3 = 0` where :math:`|d^2Q/dx^2|` is largest (the built-in models' definition of a
  finite-size crossover, :func:`replica.numerics.continuation.locate_crossover`: derivatives by
  ``mpmath.diff`` of solves at its raised precision, Anderson--Bjorck on the third derivative,
  error bound from a Newton correction with the fourth).

  For both, the digits are the fewer of those the locator's error bound gives and those on which
  the location agrees with the same location at a higher working precision (capped at ``dps``).

Every located point carries a ``status`` (:class:`~replica.numerics.result.Status`):
``converged`` when it passed these checks; a search that fails them raises
:class:`~replica.errors.ConvergenceError` (exit status 3) saying what was tried.

* :func:`plane` solves a float64 grid over two parameters, writes it as CSV and draws :math:`Q` as
  a map (:func:`plane_figure`, written as PNG, PDF and SVG), with the level set :math:`Q = L`
  (:func:`level_set`) or the line of maxima along :math:`x` traced on it.
"""

from __future__ import annotations

import csv
import dataclasses
import json
import math
import os
from fractions import Fraction

import mpmath
import numpy as np

from ..capabilities import SCAN_KINDS
from ..errors import ConvergenceError, ParameterError
from ..numerics.driver import solve_float64, solve_params
from ..numerics.result import Status
from ..numerics.precision import agreement_digits, precision
from ..numerics.result import decimal_string
from ..problem import REPLICON
from ..params import to_mpf

KINDS = SCAN_KINDS
#: The kinds located from the shape of Q (its slope or curvature), not from a scalar condition.
SHAPE_KINDS = ("kink", "crossover")


def _continuous(p) -> bool:
    return p.is_continuous


def _numeric_parameter(problem, name: str, option: str):
    valid = ", ".join(p.name for p in problem.schema.parameters if _continuous(p))
    if name not in problem.schema:
        raise ParameterError(option, f"unknown parameter {name!r} (the continuous parameters "
                                     f"of {problem.name}: {valid})")
    p = problem.schema[name]
    if not _continuous(p):
        raise ParameterError(option, f"{name!r} is not a continuous numeric parameter (those "
                                     f"of {problem.name}: {valid})")
    return p


def _quantity(problem, quantity: str):
    names = problem.report_names()
    if quantity not in names:
        raise ParameterError("--quantity", f"unknown quantity {quantity!r} (this model reports "
                                           f"{', '.join(names)})")
    return quantity


def _exact(x) -> Fraction:
    """An mpf (or float) as the exact rational it represents, sign included (``mpf.man_exp``
    gives the mantissa without its sign: the sign is read from ``_mpf_``)."""
    x = mpmath.mpf(x)
    sign, man, exp, _ = x._mpf_
    value = Fraction(int(man)) * (Fraction(2) ** int(exp))
    return -value if sign else value


@dataclasses.dataclass
class Located:
    """A located point: ``location`` of ``vary`` where ``quantity`` has its ``kind``."""

    model: str
    params: dict
    vary: str
    quantity: str
    kind: str
    level: str | None
    location: object
    value: object
    digits: int
    agreement: object
    dps: int
    definition: str
    method: str
    notes: list
    status: Status = Status.CONVERGED
    """What the locator observed: ``CONVERGED`` when the point passed its checks (a search that
    fails them raises :class:`~replica.errors.ConvergenceError` instead)."""
    name: str | None = None
    """The declared transition (:class:`replica.capabilities.Transition`) located, if any."""
    location_bound: object = None
    """Set where the location is zero to the working precision (:func:`location_digits`):
    ``location`` is then exactly 0 and ``|true location| <= location_bound`` is the claim; a
    zero has no significant digits, so ``digits`` counts decimal places of the interval's scale."""

    @property
    def converged(self) -> bool:
        return self.status == Status.CONVERGED

    def to_json_dict(self) -> dict:
        nd = max(self.digits, 1)
        out = {"model": self.model, "params": self.params, "vary": self.vary,
               "quantity": self.quantity, "kind": self.kind, "level": self.level,
               "location": decimal_string(self.location, nd),
               "value": decimal_string(self.value, nd), "digits": self.digits,
               "agreement": decimal_string(self.agreement, 3), "dps": self.dps,
               "definition": self.definition, "method": self.method,
               "status": Status(self.status).value, "converged": self.converged,
               "notes": self.notes}
        if self.location_bound is not None:
            out["location"] = "0"
            out["location_bound"] = decimal_string(self.location_bound, 3)
        if self.name is not None:
            out = {"name": self.name, **out}
        return out

    def to_json(self) -> str:
        return json.dumps(self.to_json_dict(), indent=2)


def _scan_float64(problem, fixed: dict, vary: str, xs: np.ndarray, quantity: str):
    """The float64 values of ``quantity`` along ``xs``, NaN where float64 found none. Points
    that are ``not-verified`` keep their values: the scan only brackets, and the bracket's
    sign change is checked again at raised precision (:func:`_refine`), which every reported
    digit comes from."""
    out = solve_float64(problem, strict=False, **{**fixed, vary: xs})
    usable = np.isin(out["status"], (Status.CONVERGED.value, Status.NOT_VERIFIED.value))
    return np.where(usable, out[quantity], np.nan)


#: At most this many points of a scan that float64 could not solve are solved in mpmath.
MP_FILL = 16


def _fill_mp(problem, fixed_params: dict, vary: str, xs, q, quantity: str):
    """``q`` with (at most :data:`MP_FILL`, evenly spread) of its non-finite entries (NaN: no
    float64 solution; an infinity: an overflow) replaced by the
    value at 15 digits in mpmath (without verification: the scan only brackets; a point that
    does not converge stays NaN)."""
    q = np.array(q, dtype=float)
    missing = np.nonzero(~np.isfinite(q))[0]
    if len(missing) > MP_FILL:
        missing = missing[np.unique(np.linspace(0, len(missing) - 1, MP_FILL).round()
                                    .astype(int))]
    for i in missing:
        try:
            params = problem.schema.parse({**fixed_params, vary: _exact(mpmath.mpf(xs[i]))})
            with precision(15):
                r = solve_params(problem, params, dps=15, verify=False)
            v = r.all_values.get(quantity)
            q[i] = np.nan if v is None else float(v)
        except (ConvergenceError, ArithmeticError, ValueError):
            pass
    return q


def _bracket(xs, q, kind, level):
    """Indices ``(i, j)`` of a float64 bracket of the condition, or a message why there is none."""
    if np.all(np.isnan(q)):
        return None, "no point of the float64 scan converged"
    if kind in ("max", "min"):
        s = q if kind == "max" else -q
        i = int(np.nanargmax(s))
        if i == 0 or i == len(xs) - 1:
            return None, f"the {kind}imum over the interval is at its end (x = {xs[i]:.6g})"
        return (i - 1, i + 1), ""
    f = q - level
    sign = np.sign(f)
    finite = np.nonzero(np.isfinite(f))[0]  # consecutive solved points (NaN gaps skipped)
    for i, j in zip(finite[:-1], finite[1:]):
        if sign[i] * sign[j] < 0:
            return (int(i), int(j)), ""
    return None, f"the quantity does not cross {level:.6g} on the interval"


def _condition(problem, fixed_params: dict, vary: str, quantity: str, kind: str, level, work):
    """The scalar condition at ``work`` digits: ``dQ/dx`` or ``Q - level``."""
    schema = problem.schema

    def Q(x):
        params = schema.parse({**fixed_params, vary: _exact(x)})
        r = solve_params(problem, params, dps=work, verify=False)
        return r.all_values[quantity]

    if kind == "level":
        lv = to_mpf(level)  # the exact level (a Fraction) at the working precision
        return (lambda x: Q(x) - lv), Q

    def dQ(x):
        h = mpmath.mpf(10) ** (-(work // 3)) * max(abs(x), mpmath.mpf(1) / 1000)
        return (Q(x + h) - Q(x - h)) / (2 * h)

    return dQ, Q


def _refine(cond, a, b, work, lo=None, hi=None):
    """A root of ``cond`` in the bracket ``[a, b]`` at ``work`` digits (Illinois regula falsi
    with bisection safeguards, stopping at relative width ``10^-(work - 5)``).

    The float64 bracket can end on the root itself (a level crossed exactly at a grid point:
    the float64 sign there is rounding, and at ``work`` digits it may agree with the other
    end); then the end nearer the root (smaller ``|cond|``) is moved out by one bracket width,
    not beyond ``[lo, hi]``, so that the root is bracketed inside and located like any other."""
    fa, fb = cond(a), cond(b)
    if fa == 0:
        return a, 0
    if fb == 0:
        return b, 0
    if fa * fb > 0:
        width = b - a
        if abs(fa) <= abs(fb):
            a2 = a - width if lo is None else max(a - width, mpmath.mpf(lo))
            if a2 < a:
                a, fa = a2, cond(a2)
        else:
            b2 = b + width if hi is None else min(b + width, mpmath.mpf(hi))
            if b2 > b:
                b, fb = b2, cond(b2)
    if fa * fb > 0:
        raise ConvergenceError("the condition has no sign change on the refined bracket",
                               tried="float64 bracket, then the condition at raised precision",
                               status="stalled")
    tol = mpmath.mpf(10) ** (-(work - 5))
    side = 0
    for it in range(400):
        c = (a * fb - b * fa) / (fb - fa)
        if not (min(a, b) < c < max(a, b)) or it % 6 == 5:
            c = (a + b) / 2
        fc = cond(c)
        if fc == 0 or abs(b - a) <= tol * max(abs(c), 1):
            return c, it + 1
        if fa * fc < 0:
            b, fb = c, fc
            if side == -1:
                fa /= 2
            side = -1
        else:
            a, fa = c, fc
            if side == 1:
                fb /= 2
            side = 1
    raise ConvergenceError("the located point did not converge", tried="400 bracketing steps",
                           status="max-iterations")


def locate(problem, fixed: dict, vary: str, lo, hi, quantity: str, kind: str = "max",
           level=None, dps: int = 30, points: int = 64, log: bool | None = None,
           progress=None, name: str | None = None, definition: str = "") -> Located:
    """Locate the interior maximum / minimum (``kind``) of ``quantity`` in ``vary`` on
    ``[lo, hi]``, where it crosses ``level`` (``kind="level"``), its kink (``"kink"``) or its
    crossover (``"crossover"``), the other parameters at ``fixed`` (raw values by name). See the
    module docstring for the methods. ``name`` and ``definition`` (a declared transition's,
    :class:`replica.capabilities.Transition`) are carried into the result."""
    if kind not in KINDS:
        raise ParameterError("--kind", f"must be one of {', '.join(KINDS)}")
    p = _numeric_parameter(problem, vary, "--vary")
    _quantity(problem, quantity)
    if vary in fixed:
        raise ParameterError(p.option, f"is the varied parameter (--vary {vary}); do not fix it")
    lo_v = p.parse(lo, {})
    hi_v = p.parse(hi, {})
    if not lo_v < hi_v:
        raise ParameterError("--between", f"needs LO < HI, got {lo} and {hi}")
    if kind == "level":
        if level is None:
            raise ParameterError("--level", "is required with --kind level")
        from ..params import parse_exact

        level = parse_exact(level, "--level")
    elif level is not None:
        raise ParameterError("--level", "is only for --kind level")
    base = problem.schema.parse({**fixed, vary: lo_v})  # validates the fixed parameters
    # only the given parameters are fixed: a default that follows the varied one (the low-rank
    # model's alpha_test = alpha) is derived again at every point
    fixed_params = {k: v for k, v in fixed.items() if k != vary}
    echo_hi = problem.schema.parse({**fixed, vary: hi_v}).echo()
    shown = {k: v for k, v in base.echo().items() if k != vary and echo_hi.get(k) == v}
    if log is None:
        log = lo_v > 0 and hi_v / lo_v >= 100
    xs = (np.geomspace(float(lo_v), float(hi_v), points) if log
          else np.linspace(float(lo_v), float(hi_v), points))
    q = _scan_float64(problem, fixed_params, vary, xs, quantity)
    if kind in SHAPE_KINDS:
        res = _locate_shape(problem, shown, fixed_params, vary, quantity, kind, xs, q, dps,
                            progress, (lo, hi))
        res.name = name
        if definition:
            res.definition = f"{definition} ({res.definition})"
        return res
    br, why = _bracket(xs, q, kind, float(level) if level is not None else None)
    scanned = f"float64 scan of {points} points"
    if br is None and kind == "level" and not np.all(np.isfinite(q)):
        # float64 solved only part of the interval (a quantity that under- or overflows in
        # float64, e.g. log H far in the tail): the points it missed are solved in mpmath
        q = _fill_mp(problem, fixed_params, vary, xs, q, quantity)
        br, why = _bracket(xs, q, kind, float(level))
        scanned += (f", the {MP_FILL} points float64 missed (at most) solved at 15 digits in "
                    "mpmath")
    if br is None:
        raise ConvergenceError(f"{problem.name}: cannot locate the {kind} of {quantity} in "
                               f"{vary}: {why}", tried=scanned, status="stalled")
    works = []
    w1 = int(math.ceil(1.5 * dps)) + 10
    works = [w1, w1 + max(10, w1 // 2)]
    found = []
    for w in works:
        with precision(w):
            cond, Q = _condition(problem, fixed_params, vary, quantity, kind, level, w)
            a, b = mpmath.mpf(xs[br[0]]), mpmath.mpf(xs[br[1]])
            x, its = _refine(cond, a, b, w, xs[0], xs[-1])
            found.append((x, Q(x), its))
        if progress:
            progress(len(found), len(works))
    (x1, q1, its), (x2, q2, _) = found
    with precision(works[1]):
        xd, x1, bound = location_digits(x1, x2, max(abs(lo_v), abs(hi_v), hi_v - lo_v),
                                        works[0])
        digits = min(dps, xd, agreement_digits(q1, q2, works[0]))
        diff = abs(found[0][0] - x2)
    if digits <= 0:
        raise ConvergenceError(f"{problem.name}: the located point does not agree between "
                               f"{works[0]} and {works[1]} digits", tried="two refinements",
                               status="no-digits")
    what = {"max": f"the interior maximum of {quantity} in {vary}",
            "min": f"the interior minimum of {quantity} in {vary}",
            "level": f"where {quantity} = {level} in {vary}"}[kind]
    cond_text = (f"d {quantity}/d {vary} = 0" if kind != "level" else f"{quantity} - {level} = 0")
    return Located(
        model=problem.name, params=shown,
        vary=vary, quantity=quantity, kind=kind,
        level=None if level is None else str(level), location=x1, value=q1, digits=digits,
        agreement=diff, dps=dps,
        definition=(f"{definition} (the root of {cond_text} on [{lo}, {hi}])" if definition
                    else f"{what} on [{lo}, {hi}]: the root of {cond_text}"),
        method=(f"{scanned} to bracket it; bracketing root finder on "
                f"{cond_text} at {works[0]} digits"
                + (" (derivative by central difference with step 10^-"
                   f"{works[0] // 3}|x|)" if kind != "level" else "")
                + f", {its} steps; digits = agreement with the same location at {works[1]} "
                  "digits"),
        notes=_zero_notes(vary, bound, lo_v, hi_v), status=Status.CONVERGED, name=name,
        location_bound=bound)


def location_digits(x1, x2, scale, cap: int):
    r"""The digits of a location found twice (``x1``, ``x2``, at two working precisions):
    ``(digits, location, bound)``.

    Usually the significant digits on which the two agree (``bound`` is ``None``). A location
    that is zero to the working precision has none (two values of size :math:`10^{-60}` of either
    sign agree on no digit): when both are below :math:`10^{-\mathrm{cap}}` times ``scale`` (the
    size of the searched interval), the location is reported as 0 with the bound
    :math:`|x| \le \max(|x_1|, |x_2|) + |x_1 - x_2|` and ``digits`` is the number of decimal places
    of ``scale`` that bound fixes (at most ``cap``); otherwise the relative agreement stands,
    so a small but clearly nonzero location keeps its significant digits."""
    rel = agreement_digits(x1, x2, cap)
    size = max(abs(x1), abs(x2))
    if isinstance(scale, Fraction):
        scale = mpmath.mpf(scale.numerator) / scale.denominator
    scale = abs(mpmath.mpf(scale))
    if rel >= cap or scale == 0 or size > scale * mpmath.mpf(10) ** (-cap):
        return rel, x1, None
    bound = size + abs(x1 - x2)
    if bound == 0:
        return cap, mpmath.mpf(0), mpmath.mpf(0)
    places = int(mpmath.floor(-mpmath.log10(bound / scale)))
    return max(0, min(cap, places)), mpmath.mpf(0), bound


def _zero_notes(vary: str, bound, lo, hi) -> list:
    """The note of a location that is zero to the working precision (none otherwise)."""
    if bound is None:
        return []
    return [f"{vary} = 0 to the working precision: |{vary}| <= {mpmath.nstr(bound, 3)} (both "
            f"refinements; a zero has no significant digits, so the digits count decimal places "
            f"of the interval [{lo}, {hi}])"]


def _second_derivatives(xs, q):
    """Divided second differences of ``q`` on the (possibly uneven) grid ``xs``: the estimate
    of ``Q''`` at ``xs[1:-1]`` (NaN where a neighbour is NaN)."""
    h0, h1 = np.diff(xs)[:-1], np.diff(xs)[1:]
    return 2 * (q[2:] * h0 - q[1:-1] * (h0 + h1) + q[:-2] * h1) / (h0 * h1 * (h0 + h1))


def _shape_bracket(xs, q, kind, margin: int = 4):
    """``(lo, hi)`` of the float64 grid around the largest ``|Q''|`` (``margin`` grid steps each
    side, clipped to the interval), or ``None`` and why."""
    d2 = np.abs(_second_derivatives(xs, q))
    if np.all(np.isnan(d2)):
        return None, "no three neighbouring points of the float64 scan converged"
    i = int(np.nanargmax(d2)) + 1
    if kind == "crossover" and (i == 1 or i == len(xs) - 2):
        return None, (f"the largest curvature on the interval is at its end (x = {xs[i]:.6g}): "
                      "widen --between")
    return (xs[max(i - margin, 0)], xs[min(i + margin, len(xs) - 1)]), ""


def _value_at_context(problem, fixed_params: dict, vary: str, quantity: str):
    """``x -> Q(x)`` solved at the current mpmath precision (so that ``mpmath.diff``, which
    raises it, gets values to its precision)."""
    schema = problem.schema

    def Q(x):
        params = schema.parse({**fixed_params, vary: _exact(x)})
        return solve_params(problem, params, dps=mpmath.mp.dps, verify=False).all_values[quantity]

    return Q


def _slope_jump(Q, x, err, work: int, what: str):
    r"""The one-sided slopes at the located kink ``x`` and the check that the slope jumps:
    :func:`~replica.numerics.continuation.one_sided_slopes` at :math:`h` and :math:`h/16`
    (:math:`h = \max(10^{-w/6}, 100\,\mathrm{err})\max(|x|, 1)`, beyond the location's
    error) must give the same jump to a relative :math:`10^{-3}`, and the jump must exceed
    :math:`10^{-w/4}` times the slopes' scale. Returns ``(left, right)``; a failed check raises
    :class:`~replica.errors.ConvergenceError`."""
    from ..numerics.continuation import one_sided_slopes

    scale = max(abs(x), mpmath.mpf(1))
    h = max(mpmath.mpf(10) ** (-(work // 6)), 100 * err) * scale
    l1, r1 = one_sided_slopes(Q, x, h)
    l2, r2 = one_sided_slopes(Q, x, h / 16)
    j1, j2 = r1 - l1, r2 - l2
    size = max(abs(l2), abs(r2), mpmath.mpf(1))
    if not (abs(j2) > mpmath.mpf(10) ** (-(work // 4)) * size
            and abs(j1 - j2) <= abs(j2) / 1000):
        raise ConvergenceError(
            f"{what}: no jump of the slope at {mpmath.nstr(x, 12)} (the one-sided slopes differ "
            f"by {mpmath.nstr(j1, 3)} at h = {mpmath.nstr(h, 3)} and {mpmath.nstr(j2, 3)} at h/16:"
            " the quantity looks analytic there; try --kind crossover)",
            tried=f"branch intersection at {work} digits, then one-sided slope fits at two "
                  "scales", status="stalled")
    return l2, r2


def _locate_shape(problem, shown, fixed_params, vary, quantity, kind, xs, q, dps, progress,
                  between) -> Located:
    """:func:`locate` for ``kind`` ``"kink"`` or ``"crossover"`` (module docstring)."""
    from ..numerics.continuation import CROSSOVER_METHOD, locate_crossover, locate_kink

    br, why = _shape_bracket(xs, q, kind)
    what = f"{problem.name}: the {kind} of {quantity} in {vary}"
    if br is None:
        raise ConvergenceError(f"{what}: {why}", tried=f"float64 scan of {len(xs)} points",
                               status="stalled")
    w1 = int(math.ceil(1.5 * dps)) + 10
    works = [w1, w1 + max(10, w1 // 2)]
    found = []
    for w in works:
        with precision(w):
            Q = _value_at_context(problem, fixed_params, vary, quantity)
            a, b = mpmath.mpf(br[0]), mpmath.mpf(br[1])
            try:
                if kind == "kink":
                    loc = locate_kink(Q, a, b, what=what)
                    slopes = _slope_jump(Q, loc.value, loc.error_bound, w, what)
                else:
                    loc = locate_crossover(Q, a, b, what=what)
                    slopes = None
            except ConvergenceError as exc:
                if str(exc).startswith(what):
                    raise
                raise ConvergenceError(
                    f"{what}: {str(exc).split(': ', 1)[-1]}", status=exc.status,
                    tried=exc.tried or f"float64 scan, then the {kind} locator at {w} digits "
                                       f"on [{mpmath.nstr(a, 8)}, {mpmath.nstr(b, 8)}]") from None
            found.append((loc, Q(loc.value), loc.digits(), slopes))
        if progress:
            progress(len(found), len(works))
    (loc1, q1, d1, slopes), (loc2, q2, _, _) = found
    lo, hi = between
    with precision(works[1]):
        xd, location, bound = location_digits(loc1.value, loc2.value,
                                              max(abs(br[0]), abs(br[1]), br[1] - br[0]),
                                              works[0])
        digits = min(dps, d1 if bound is None else xd, xd,
                     agreement_digits(q1, q2, works[0]))
        diff = abs(loc1.value - loc2.value)
    if digits <= 0:
        raise ConvergenceError(f"{what}: the located point does not agree between {works[0]} and "
                               f"{works[1]} digits", tried=f"{kind} located twice",
                               status="no-digits")
    notes = _zero_notes(vary, bound, lo, hi)
    if kind == "kink":
        with precision(works[0]):
            notes.append(f"slope d {quantity}/d {vary}: {mpmath.nstr(slopes[0], 8)} on the left, "
                         f"{mpmath.nstr(slopes[1], 8)} on the right")
        definition = (f"the kink of {quantity} in {vary} on [{lo}, {hi}]: the non-analytic point "
                      f"where the one-sided slopes d {quantity}/d {vary} differ")
        method = (f"float64 scan of {len(xs)} points (largest second difference) to bracket it; "
                  f"at {works[0]} digits: scan and intersection of degree-4 polynomial fits of "
                  f"the two analytic branches, {loc1.iterations} refinements (error bound = last "
                  "change of the location); slope jump checked by one-sided fits at two scales; "
                  f"digits = the error bound and the agreement with the same location at "
                  f"{works[1]} digits")
    else:
        definition = (f"the crossover of {quantity} in {vary} on [{lo}, {hi}]: the extremum of "
                      f"its curvature d^2 {quantity}/d {vary}^2, the root of d^3 {quantity}/"
                      f"d {vary}^3 = 0")
        method = (f"float64 scan of {len(xs)} points (largest second difference) to bracket it; "
                  f"at {works[0]} digits: {CROSSOVER_METHOD}; digits = the error bound and the "
                  f"agreement with the same location at {works[1]} digits")
    return Located(
        model=problem.name, params=shown,
        vary=vary, quantity=quantity, kind=kind, level=None, location=location, value=q1,
        digits=digits, agreement=diff, dps=dps, definition=definition, method=method,
        notes=notes, status=Status.CONVERGED, location_bound=bound)


def plane(problem, fixed: dict, x: tuple, y: tuple, quantity: str, out_dir: str, *,
          level=None, trace_max: bool = False, progress=None) -> dict:
    """Solve ``quantity`` on a float64 grid over two parameters and draw it.

    ``x`` and ``y`` are ``(name, lo, hi, n, log)``. Writes ``MODEL_QUANTITY_X_Y.csv`` (one row per
    grid point: the two parameters under their own names, the quantity, ``converged`` and the
    point's ``status`` from :func:`~replica.numerics.driver.solve_float64`: ``converged`` claims
    every reported value to a relative 1e-8; a ``not-verified`` row carries the float64 value,
    which is only a start; other rows carry NaN) and the figure of :func:`plane_figure` as
    ``.png``, ``.pdf`` and ``.svg``, where only converged points are coloured and the others are
    drawn grey; level sets and maxima use converged points only. When the model declares a
    replicon (:class:`~replica.problem.Stability`), its values are a column ``replicon`` of the
    CSV, and the de Almeida--Thouless line, replicon = 0 over the converged points, is drawn
    (a dotted red line, labelled) and written as ``_at_line.csv`` (columns ``x``, ``y`` names and
    ``segment``); the path is returned as ``at_line``. Where the grid has no such line (the
    replicon has one sign at every converged point) nothing is drawn and the figure says so in
    words (:func:`replicon_summary`: stable, or unstable, on the whole grid). With ``level``
    the level set ``quantity = level`` is drawn and its points written as ``_boundary.csv``
    (columns ``x``, ``y`` names and ``segment``, one number per connected piece); with
    ``trace_max`` the maximum along x for each y (columns ``y``, ``X_at_max``,
    ``QUANTITY_max``). Returns the paths by kind (``csv``, ``png``, ``pdf``, ``svg``,
    ``boundary``)."""
    from .. import figures

    _quantity(problem, quantity)
    if level is not None and trace_max:
        raise ParameterError("--level", "draws one boundary: give --level or --trace-max")
    if level is not None:
        from ..params import parse_exact

        level_value = float(parse_exact(level, "--level"))
    for spec, option in ((x, "--x"), (y, "--y")):
        if not spec[3] >= 2:
            raise ParameterError(option, f"needs at least 2 points, got {spec[3]}")
    axes = []
    for spec, option in ((x, "--x"), (y, "--y")):
        name, lo, hi, n, log = spec
        p = _numeric_parameter(problem, name, option)
        if name in fixed:
            raise ParameterError(p.option, f"is an axis ({option} {name}); do not fix it")
        lo_v, hi_v = p.parse(lo, {}), p.parse(hi, {})
        if not lo_v < hi_v:
            raise ParameterError(option, f"needs LO < HI, got {lo} and {hi}")
        if log and lo_v <= 0:
            raise ParameterError(option, "a log axis needs LO > 0")
        axes.append((name, (lo_v, hi_v, n), log))
    from ..estimates import check, plane_estimate

    est = plane_estimate(x[3], y[3], f"a {x[3]} x {y[3]} grid of {quantity}", out_dir)
    est.option = "--x" if x[3] >= y[3] else "--y"  # the larger axis sets the size
    check(est)
    for k, (name, (lo_v, hi_v, n), log) in enumerate(axes):
        vals = (np.geomspace(float(lo_v), float(hi_v), n) if log
                else np.linspace(float(lo_v), float(hi_v), n))
        axes[k] = (name, vals, log)
    if axes[0][0] == axes[1][0]:
        continuous = [p.name for p in problem.schema.parameters if _continuous(p)]
        if len(continuous) < 2:  # no other --y to give: say so
            raise ParameterError("--y", f"{problem.name} has only one continuous parameter "
                                        f"({continuous[0]}): a phase diagram needs two (along "
                                        "one parameter: replica sweep or replica transition)")
        raise ParameterError("--y", "must differ from --x")
    (xn, xv, xlog), (yn, yv, ylog) = axes
    problem.schema.parse({**fixed, xn: str(Fraction(xv[0]).limit_denominator(10**12)),
                          yn: str(Fraction(yv[0]).limit_denominator(10**12))})
    X, Y = np.meshgrid(xv, yv)
    Q = np.full(X.shape, np.nan)
    stab = getattr(problem, "stability", None)
    replicon = stab is not None and stab.replicon is not None
    R = np.full(X.shape, np.nan)
    status = np.full(X.shape, Status.MAX_ITERATIONS.value, dtype=object)
    for j in range(len(yv)):
        out = solve_float64(problem, strict=False, **{**fixed, xn: X[j], yn: Y[j]})
        status[j] = out["status"]
        Q[j] = out[quantity]  # NaN where no float64 value (neither converged nor not-verified)
        if replicon:
            R[j] = out[REPLICON]
        if progress:
            progress(j + 1, len(yv))
    conv = status == Status.CONVERGED.value
    os.makedirs(out_dir, exist_ok=True)
    stem = os.path.join(out_dir, f"{problem.name}_{quantity}_{xn}_{yn}")
    with open(stem + ".csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow([xn, yn, quantity] + ([REPLICON] if replicon and quantity != REPLICON
                                         else []) + ["converged", "status"])
        for j in range(len(yv)):
            for i in range(len(xv)):
                w.writerow([repr(float(X[j, i])), repr(float(Y[j, i])), repr(float(Q[j, i]))]
                           + ([repr(float(R[j, i]))] if replicon and quantity != REPLICON
                              else []) + [bool(conv[j, i]), status[j, i]])
    unsure = ~conv
    Q = np.where(conv, Q, np.nan)  # boundaries and the figure use converged points only
    paths = {"csv": stem + ".csv"}
    boundary = None
    if trace_max:
        with np.errstate(all="ignore"):
            idx = np.array([np.nanargmax(r) if np.any(np.isfinite(r)) else -1 for r in Q])
        interior = np.nonzero((idx > 0) & (idx < len(xv) - 1))[0]
        boundary = [(float(xv[idx[j]]), float(yv[j])) for j in interior]
        with open(stem + "_boundary.csv", "w", newline="") as fh:
            w = csv.writer(fh)
            w.writerow([yn, f"{xn}_at_max", f"{quantity}_max"])
            for j in interior:
                w.writerow([repr(float(yv[j])), repr(float(xv[idx[j]])),
                            repr(float(Q[j, idx[j]]))])
        paths["boundary"] = stem + "_boundary.csv"
    segments = None
    if level is not None:
        segments = level_set(xv, yv, Q, level_value)
        with open(stem + "_boundary.csv", "w", newline="") as fh:
            w = csv.writer(fh)
            w.writerow([xn, yn, "segment"])
            for k, seg in enumerate(segments):
                for px, py in seg:
                    w.writerow([repr(float(px)), repr(float(py)), k])
        paths["boundary"] = stem + "_boundary.csv"
    at_segments = None
    if replicon:
        # the de Almeida-Thouless line: replicon = 0 (converged points only), as a polyline
        at_segments = level_set(xv, yv, np.where(conv, R, np.nan), 0.0)
        with open(stem + "_at_line.csv", "w", newline="") as fh:
            w = csv.writer(fh)
            w.writerow([xn, yn, "segment"])
            for k, seg in enumerate(at_segments):
                for px, py in seg:
                    w.writerow([repr(float(px)), repr(float(py)), k])
        paths["at_line"] = stem + "_at_line.csv"
    stability_note = (replicon_summary(R[conv], len(at_segments)) if replicon
                      and not at_segments else None)
    fig = plane_figure(problem, fixed, (xn, xv, xlog), (yn, yv, ylog), Q, quantity,
                       level=level, level_segments=segments, trace=boundary, unsure=unsure,
                       at_segments=at_segments, stability_note=stability_note)
    for path in figures.save_figure(fig, stem):
        paths[path.rsplit(".", 1)[1]] = path
    return paths


def replicon_summary(values, segments: int) -> str:
    """One sentence on replica-symmetry stability over a grid: ``values`` the replicon at its
    converged points (NaN where undefined), ``segments`` the number of pieces of the AT line
    (replicon = 0) found on it. Where the replicon has one sign everywhere there is no AT line
    on the grid, and the sentence says whether replica symmetry is stable or unstable there
    (with the smallest or largest replicon) instead of a line being drawn."""
    v = np.asarray(values, dtype=float).ravel()
    finite = v[np.isfinite(v)]
    if finite.size == 0:
        return "replicon: no converged point with a value; stability unknown on this grid"
    counted = f"{finite.size} converged point{'s' if finite.size != 1 else ''}"
    if segments:
        unstable = int(np.sum(finite < 0))
        return (f"AT line (replicon = 0): {segments} segment{'s' if segments != 1 else ''}; "
                f"replica symmetry unstable (replicon < 0) at {unstable} of {counted}")
    if np.all(finite > 0):
        return (f"no AT line: replicon > 0 at all {counted} (smallest {finite.min():.4g}), "
                "replica symmetry stable on the whole grid")
    if np.all(finite < 0):
        return (f"no AT line: replicon < 0 at all {counted} (largest {finite.max():.4g}), "
                "replica symmetry unstable on the whole grid")
    return (f"no AT line resolved: the replicon changes sign between {counted} "
            f"(range {finite.min():.4g} to {finite.max():.4g}) without a contour")


def level_set(xv, yv, Q, level: float) -> list:
    """The level set ``Q = level`` of the grid ``Q[j, i]`` at ``(xv[i], yv[j])`` (points that did
    not converge, NaN, are left out): a list of polylines, each an ``(n, 2)`` array of ``(x, y)``,
    by marching squares with linear interpolation (``contourpy``, matplotlib's contouring)."""
    import contourpy

    X, Y = np.meshgrid(xv, yv)
    gen = contourpy.contour_generator(X, Y, np.ma.masked_invalid(Q),
                                      line_type=contourpy.LineType.Separate)
    return [np.asarray(seg) for seg in gen.lines(level) if len(seg) > 1]


def plane_figure(problem, fixed: dict, x: tuple, y: tuple, Q, quantity: str, *, level=None,
                 level_segments=None, trace=None, unsure=None, at_segments=None,
                 stability_note=None):
    """The figure of :func:`plane`: ``Q[j, i]`` at ``(x values[i], y values[j])`` as a colour map
    (``x``, ``y`` are ``(name, values, log)``), with the level set ``Q = level`` (its polylines
    ``level_segments``, computed by :func:`level_set` when not given) or the traced maxima
    ``trace`` (``[(x, y), ...]``), each named in the legend; log axes carry :math:`10^k` ticks.
    ``at_segments`` (polylines of replicon = 0) are drawn as the AT line; ``stability_note``
    (a sentence of :func:`replicon_summary`, given where there is no line) is written in the
    lower right corner.
    ``unsure`` (a boolean grid like ``Q``) marks the points that are not ``converged``: drawn in
    grey and counted in a legend, never coloured as values. Returns the Figure."""
    from .. import figures

    (xn, xv, xlog), (yn, yv, ylog) = x, y
    with figures.style():
        fig, ax = figures.new_figure(figsize=(6, 4.5))
        X, Y = np.meshgrid(xv, yv)
        mesh = ax.pcolormesh(X, Y, Q, shading="auto", cmap=figures.SEQUENTIAL)
        fig.colorbar(mesh, ax=ax, label=figures.label(quantity))
        if unsure is not None and np.any(unsure):
            from matplotlib.colors import ListedColormap
            from matplotlib.patches import Patch

            ax.pcolormesh(X, Y, np.ma.masked_where(~np.asarray(unsure), np.ones(X.shape)),
                          shading="auto", cmap=ListedColormap(["0.75"]), vmin=0, vmax=2)
            ax.add_artist(ax.legend(handles=[Patch(
                facecolor="0.75", label=f"not verified / not converged "
                                        f"({int(np.sum(unsure))} of {np.size(unsure)})")],
                loc="upper left", fontsize=7))
        # boundaries in black over a white halo: visible on every colour of the map
        if level is not None:
            segs = level_set(xv, yv, Q, float(level)) if level_segments is None else level_segments
            for k, seg in enumerate(segs):
                ax.plot(seg[:, 0], seg[:, 1], color="w", ls="-", lw=3)
                ax.plot(seg[:, 0], seg[:, 1], color="k", ls="-", lw=1.5,
                        label=None if k else
                        figures.value_text(quantity, level) + " (level set)")
        if at_segments:
            for k, seg in enumerate(at_segments):
                ax.plot(seg[:, 0], seg[:, 1], color="w", ls="-", lw=3)
                ax.plot(seg[:, 0], seg[:, 1], color="tab:red", ls=":", lw=2,
                        label=None if k else "AT line (replicon = 0; RS unstable where < 0)")
        if stability_note:
            import textwrap

            ax.text(0.99, 0.01, textwrap.fill(stability_note, 48), transform=ax.transAxes,
                    ha="right",
                    va="bottom", fontsize=6.5, color="tab:red",
                    bbox={"facecolor": "w", "edgecolor": "none", "alpha": 0.8, "pad": 1.5})
        if trace is not None:
            ax.plot([p[0] for p in trace], [p[1] for p in trace], color="w", ls="-", lw=3)
            ax.plot([p[0] for p in trace], [p[1] for p in trace], color="k", ls="--", lw=1.5,
                    label=f"maximum of {figures.label(quantity)} along {figures.label(xn)}")
        if ax.get_legend_handles_labels()[1]:
            ax.legend(loc="best", fontsize=8)
        if xlog:
            figures.log_axis(ax, "x")
        if ylog:
            figures.log_axis(ax, "y")
        ax.set_xlabel(figures.label(xn))
        ax.set_ylabel(figures.label(yn))
        fixed_text = ", ".join(figures.value_text(k, v) for k, v in fixed.items())
        ax.set_title(f"{problem.title or problem.name}: {figures.label(quantity)}"
                     + (f"\n{fixed_text}" if fixed_text else ""), fontsize=9)
        fig.tight_layout()
    return fig


def sweep_rows(problem, grid: list, dps: int, progress=None) -> list:
    """One verified solve per grid point (``{name: raw}``): rows with the exact parameters, the
    status, the verified digits and every reported value (``None`` where the solve failed)."""
    from ..numerics.driver import solve

    rows = []
    names = problem.report_names()
    for i, point in enumerate(grid):
        params = problem.schema.parse(point)
        row = {"params": params.echo()}
        try:
            r = solve(problem, dps=dps, **point)
            row.update(status=r.status.value, digits=r.digits,
                       values={n: r.all_values.get(n) for n in names})
        except ConvergenceError as exc:
            row.update(status=exc.status, digits=0, values={n: None for n in names})
        rows.append(row)
        if progress:
            progress(i + 1, len(grid))
    return rows


def sweep_table(problem, rows: list):
    """The rows of :func:`sweep_rows` as a :class:`replica.tables.Table` (``.to_pandas()``,
    ``.to_xarray()``, the CSV of ``sweep --model``): each parameter as a float (``NAME``) and
    exactly (``NAME_exact``; covariances as their SPEC), ``status``, ``digits`` and each
    reported value to its verified digits (empty where the solve failed)."""
    from ..params import float_str
    from ..tables import Table

    names = problem.report_names()
    numeric = [p.name for p in problem.schema.parameters
               if not (p.is_covariance or p.is_spec)]
    other = [p.name for p in problem.schema.parameters if p.is_covariance or p.is_spec]
    header = numeric + [f"{n}_exact" for n in numeric] + other + ["status", "digits"] + names
    cells_of = []
    for row in rows:
        echo = row["params"]
        cells = [float_str(echo[n]) for n in numeric]
        cells += [echo[n] for n in numeric] + [echo[n] for n in other]
        cells += [row["status"], row["digits"]]
        cells += ["" if row["values"][n] is None
                  else decimal_string(row["values"][n], max(row["digits"], 1)) for n in names]
        cells_of.append(cells)
    return Table(header, cells_of, numeric + other, {"model": problem.name})


def write_sweep_csv(path: str, problem, rows: list) -> None:
    """The CSV of :func:`sweep_table`, written atomically (temporary file + rename)."""
    tmp = path + ".tmp"
    sweep_table(problem, rows).write_csv(tmp)
    os.replace(tmp, path)
