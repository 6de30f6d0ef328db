r"""Certified solves: ball-arithmetic enclosures that prove existence, uniqueness and digits.

A verified solve (:func:`replica.numerics.driver.solve_params`) measures its digits by agreement
with a re-solve at higher precision: strong evidence, not proof. This module turns a computed
solution into a *proof* with interval (ball) arithmetic, python-flint's ``arb``, evaluating the
same SymPy expressions through the code generator's ``"arb"`` backend.

The Krawczyk test
-----------------
Let :math:`F(x; p) = 0` be a declared square system (a fixed-point system :math:`x = \Phi(x)` as
:math:`F = x - \Phi`), :math:`\tilde x` an approximate solution and :math:`s` positive scales (powers
of two near :math:`|\tilde x_j|`), so that in the unknowns :math:`y_j = x_j/s_j` a box of radius
:math:`r` is relative. With a preconditioner :math:`Y \approx J(\tilde y)^{-1}` (an exactly
represented matrix; its accuracy affects only how tight the test is, never its truth) the
Krawczyk operator of a box :math:`X \ni \tilde y` is

.. math::  K(X) = \tilde y - Y F(\tilde y) + \bigl(I - Y J(X)\bigr)(X - \tilde y),

where :math:`J(X)` is a ball enclosure of the Jacobian over all of :math:`X`. If
:math:`K(X) \subset \operatorname{int} X`, then :math:`X` contains **exactly one** solution of
:math:`F = 0` (Krawczyk 1969; the uniqueness part is due to Moore and to Rump): by the mean-value
theorem the Newton-like map :math:`g(y) = y - Y F(y)` sends :math:`X` into :math:`K(X)`, so Brouwer's
theorem gives a fixed point of :math:`g`, a zero of :math:`F` because :math:`Y` is then nonsingular;
and :math:`\|I - YJ(X)\| < 1` makes :math:`g` a contraction, so the zero is unique. Every
evaluation is done in ball arithmetic, so rounding cannot invalidate the inclusion.

The box radius is found by :math:`\varepsilon`-inflation: it starts at a few times
:math:`|Y F(\tilde y)|`, grows while the inclusion fails, and the search gives up with a reason
(a singular Jacobian, an expression that cannot be enclosed on the box, a box that would have to be
larger than :data:`MAX_RADIUS`). After success the box is tightened by
:math:`X' \leftarrow \bigl(\tilde y - Y F(\tilde y) + (I - Y J(X))(X' - \tilde y)\bigr) \cap X'`,
starting from :math:`X' = X`, with the Jacobian enclosure :math:`J(X)` of the box that passed
the test: each step keeps the solution :math:`y^*`, because :math:`g(y^*) = y^*` and the mean
value form of :math:`g` between :math:`\tilde y` and :math:`y^* \in X' \subseteq X` needs the
Jacobian on that segment, which lies in the convex box :math:`X` (so its enclosure
:math:`J(X)` serves every step, and no step evaluates the Jacobian again).

The preconditioner may come from the solve: the Jacobian of the verifying re-solve's last Newton
step (``NewtonReport.jacobian``, at a point within that step of
:math:`\tilde x`), or, where that solve iterated in mpmath, its last iteration matrix
(``NewtonReport.chord``), inverted at the midpoints by python-flint; only where the inclusion
fails with it is the Jacobian evaluated at :math:`\tilde y` and the test run again.

How much work an enclosure gets never decides whether it is one. :math:`J(X)` is enclosed first
at :data:`JACOBIAN_DIGITS` with its Gaussian integrals aiming at :data:`JACOBIAN_GOAL` bits (the
test needs a few digits of it), at the working precision only where the inclusion fails because
of that width; with the digits asked for given (:func:`certify_point`), the integrals of
:math:`F(\tilde y)` and of the reported values aim at those digits plus :data:`GOAL_MARGIN`,
and the certification is repeated at full accuracy where that proves fewer digits.

What is enclosed
----------------
The parameters enter as exact balls (rationals are balls around :math:`p/q` of the working radius;
integers and binary numbers are exact), the spectral pairs of a covariance as balls containing the
exact eigenvalue pairs (:func:`replica.spectra.spectral_pairs_ball`), the solution as the box, and
every reported value is evaluated over the box: its ball contains the exact value of the model at
the exact parameters. The admissibility conditions of the system must hold *for every point of the
box* (each enclosure strictly positive), so a solution on an inadmissible branch is not certified.
Values computed directly from the parameters (:class:`replica.problem.Direct`) are enclosed where
their declaration provides a ball evaluation.

A certificate's digits are those its enclosures prove, for every reported value: a ball
:math:`m \pm r` proves :math:`k` significant digits when :math:`r / (|m| - r) \le 10^{-k}` -- a
purely relative measure with no absolute floor (the same as the agreement digits of an uncertified
solve), so a value near :math:`10^{-73}` is held to its own significant digits; a ball that
contains 0 proves none (an exact ball, zero included, proves all).
"""

from __future__ import annotations

import dataclasses
import decimal
from fractions import Fraction
from typing import Any

import mpmath

from ..params import INF
from ..symbolic.codegen import NotEnclosable, arb_of, integral_goal
from .precision import ball_precision, precision

MAX_RADIUS = Fraction(1, 1000)
"""Largest relative box radius the inflation tries before giving up."""

INFLATIONS = 14
"""Number of inflation steps of the box radius."""

TIGHTENINGS = 3
"""Steps :math:`X \\leftarrow K(X) \\cap X` after the inclusion succeeded."""

JACOBIAN_DIGITS = 19
"""Ball precision (decimal digits, about 64 bits) of the Jacobian over the box on the first
try: the Krawczyk test needs :math:`\\|I - YJ(X)\\|` well below 1, a few digits of
:math:`J(X)`; where the test fails because of that Jacobian's width, it is repeated with the
Jacobian at the working precision before the box is inflated."""

JACOBIAN_GOAL = 32
"""Accuracy goal (bits) of the Gaussian integrals in the second try of that Jacobian
(:class:`~replica.symbolic.codegen.integral_goal`), where the first, at
:data:`JACOBIAN_FEW_GOAL`, fails because of its width."""

JACOBIAN_FEW_GOAL = 10
r"""Accuracy goal (bits) of the Gaussian integrals in the first try of the Jacobian over the
box: each integral to about :math:`2^{-10}` of the integral of its integrand's modulus. The
test needs :math:`\|I - YJ(X)\|` well below 1 (below 1/2 is enough for the first box, four
times :math:`|YF(\tilde y)|`), a few bits of :math:`J(X)`; the Gauss--Legendre rule's nodes
grow with the bits asked (about 3 a bit on the thin ellipses of the logistic models' central
intervals), so these integrals take half the nodes of :data:`JACOBIAN_GOAL`'s (glm_logistic,
alpha = 2: 4,540 against 10,171). Where the test fails because of that Jacobian's width, it
is repeated at :data:`JACOBIAN_GOAL`, then at the working precision: the rung changes the
work and the tightened box's width, never the proof."""

JACOBIAN_GOALS = (JACOBIAN_FEW_GOAL, JACOBIAN_GOAL)
"""The goals (bits) of the Jacobian's tries at :data:`JACOBIAN_DIGITS` before the working
precision."""

GOAL_MARGIN = 6
"""Decimal digits beyond those asked for that the integrals of the equations at the centre and
of the reported values over the box aim at on the first try (:func:`certify_point`).

Chosen by measurement (``benchmarks/certify_tails.py``, its README section): the digits proved
fall 4-5 short of the goal (the Krawczyk box, a power of two above :math:`|Y F(\tilde y)|`, and
the reported values' sensitivity to it), so with 6 the perceptron teacher (both priors, alpha
1/2 to 2, Rademacher at 6/5 and at its transition 1.249), the hinge SVM, the capacity and LASSO
at 20, 30 and 50 digits prove at least one digit more than asked on the first try; with 5 the
Rademacher teacher at 6/5 and 1.249 proves exactly the digits asked (no slack left), with 8 (before)
three to five digits more, at more work (the table of that section). Where the first try proves fewer digits than asked
the certification is repeated at full accuracy: never a weaker certificate."""


def _arb():
    import flint

    return flint.arb


def ball_fraction(b, which: str) -> Fraction:
    """The exact lower (``which="lo"``), upper (``"hi"``) endpoint or midpoint (``"mid"``) of a
    finite ball as a Fraction."""
    end = {"lo": b.lower, "hi": b.upper, "mid": b.mid}[which]()
    man, exp = end.man_exp()
    man, exp = int(man), int(exp)
    return Fraction(man * 2 ** exp) if exp >= 0 else Fraction(man, 2 ** (-exp))


def ball_to_mpf(b):
    """The midpoint of a finite ball as an ``mpf`` (exact when the working precision holds it)."""
    man, exp = b.mid().man_exp()
    return mpmath.mpf((int(man), int(exp)))


def is_finite(b) -> bool:
    return bool(b.is_finite())


def directed_decimal(x: Fraction, digits: int, up: bool) -> str:
    """``x`` rounded to ``digits`` significant decimal digits, down (toward -inf) or up."""
    ctx = decimal.Context(prec=max(int(digits), 1),
                          rounding=decimal.ROUND_CEILING if up else decimal.ROUND_FLOOR,
                          Emax=decimal.MAX_EMAX, Emin=decimal.MIN_EMIN)
    value = ctx.divide(decimal.Decimal(x.numerator), decimal.Decimal(x.denominator))
    return format(value, "e") if value != 0 else "0"


def ball_digits(b, cap: int) -> int:
    r"""Significant decimal digits a ball :math:`m \pm r` proves, at most ``cap``: the largest
    :math:`k` with :math:`r \le 10^{-k} (|m| - r)`, i.e. every point of the ball agrees with
    every other to :math:`k` significant digits relative to the smallest magnitude in it. The
    measure is purely relative (no absolute floor): a ball around :math:`10^{-73}` of radius
    :math:`10^{-80}` proves 7 digits, whatever the working precision. A ball that contains 0
    (:math:`r \ge |m|`) proves none, an exact ball (:math:`r = 0`, zero included) all ``cap``;
    a non-finite ball none."""
    if not is_finite(b):
        return 0
    # the endpoints as integers in units of 2**e (exact; the same numbers as ball_fraction's)
    hm, he = (int(v) for v in b.upper().man_exp())
    mm, me = (int(v) for v in b.mid().man_exp())
    e = min(he, me)
    hi, mid = hm << (he - e), mm << (me - e)
    rad = hi - mid
    if rad == 0:
        return cap
    mid = abs(mid)
    if mid <= rad:
        return 0
    den = mid - rad  # rel = rad / den
    if rad >= den:
        return 0
    # the largest k with rel <= 10**-k (an estimate, then exact comparisons)
    k = max(0, min(cap, int((den.bit_length() - rad.bit_length()) * 0.30103)))
    while k > 0 and rad * 10 ** k > den:
        k -= 1
    while k < cap and rad * 10 ** (k + 1) <= den:
        k += 1
    return min(k, cap)


@dataclasses.dataclass
class Proof:
    """What every proof reports: whether it holds (``certified``), why not (``reason``), how it
    was done (``method``) and the ball precision in decimal digits."""

    certified: bool
    reason: str = ""
    method: str = ""
    precision: int = 0


@dataclasses.dataclass
class Certificate(Proof):
    """The outcome of a certification: ``certified`` (the Krawczyk inclusion held, the box is
    admissible and every reported value has a finite enclosure), ``reason`` (why not, else
    ``""``), the ``box`` of the unknowns and the ``enclosures`` of the reported values (``arb``
    balls; a value with no enclosure is listed in ``not_enclosed`` with the reason), the
    ``precision`` (decimal digits) of the ball arithmetic and the relative ``radius`` of the box
    in scaled unknowns."""

    radius: Any = None
    box: dict = dataclasses.field(default_factory=dict)
    enclosures: dict = dataclasses.field(default_factory=dict)
    not_enclosed: dict = dataclasses.field(default_factory=dict)
    _min_digits: dict = dataclasses.field(default_factory=dict, repr=False, compare=False)

    def digits(self, name: str, cap: int) -> int:
        b = self.enclosures.get(name)
        if b is None:
            return 0
        with ball_precision(self.precision + 10):  # endpoints are read at this precision
            return ball_digits(b, cap)

    def min_digits(self, cap: int) -> int:
        """Digits proved for every enclosed value (``cap`` if there is none); remembered per
        ``cap`` and the enclosures (the balls themselves)."""
        balls = tuple(self.enclosures.values())
        hit = self._min_digits.get(cap)
        if hit is None or len(hit[0]) != len(balls) or any(
                a is not b for a, b in zip(hit[0], balls)):
            with ball_precision(self.precision + 10):  # endpoints are read at this precision
                hit = (balls, min([ball_digits(b, cap) for b in balls] + [cap]))
            self._min_digits[cap] = hit
        return hit[1]

    def interval(self, name: str, digits: int) -> list | None:
        """``[lo, hi]`` decimal strings, rounded outward, that contain the value."""
        return self.interval_of(self.enclosures.get(name), digits)

    def to_json_dict(self, digits: int = 20) -> dict:
        """The certificate for the JSON output: enclosures as outward-rounded ``[lo, hi]``
        strings with ``digits + 3`` significant digits."""
        out = {"certified": self.certified, "reason": self.reason or None,
               "method": self.method, "precision": self.precision,
               "radius": None if self.radius is None else directed_decimal(
                   Fraction(self.radius), 3, up=True)}
        nd = max(int(digits), 1) + 3
        out["box"] = {k: self.interval_of(v, nd) for k, v in self.box.items()}
        out["enclosures"] = {k: self.interval(k, nd) for k in self.enclosures}
        if self.not_enclosed:
            out["not_enclosed"] = dict(self.not_enclosed)
        return out

    def interval_of(self, b, digits):
        """``[lo, hi]`` of a ball as outward-rounded decimal strings."""
        if b is None or not is_finite(b):
            return None
        with ball_precision(self.precision + 10):
            return [directed_decimal(ball_fraction(b, "lo"), digits, up=False),
                    directed_decimal(ball_fraction(b, "hi"), digits, up=True)]

    def value(self, name: str):
        """The midpoint of the enclosure of ``name`` as an ``mpf`` (at the certificate's
        precision), or ``None``."""
        return self.values([name])[name]

    def values(self, names) -> dict:
        """:meth:`value` of each of ``names``."""
        with precision(self.precision + 10):
            return {k: (None if self.enclosures.get(k) is None else
                        ball_to_mpf(self.enclosures[k])) for k in names}


def fraction_ball(f: Fraction):
    """A ball containing the rational ``f`` (exact when its denominator is a power of two)."""
    return _arb()(f.numerator) / f.denominator


def parameter_balls(machine, params) -> list:
    """The numeric parameters of a compiled system as exact balls (in its argument order)."""
    arb = _arb()
    out = []
    for name in machine.outline.parameters:
        v = params[name]
        if v == INF:
            out.append(arb.pos_inf())
        elif isinstance(v, Fraction):
            out.append(fraction_ball(v))
        elif isinstance(v, int):
            out.append(arb(v))
        else:
            raise NotEnclosable(f"parameter {name} has no exact value")
    return out


def _power_of_two(v) -> int:
    """An exponent ``e`` with ``2**e`` near ``|v|`` (``0`` for zero)."""
    if v == 0:
        return 0
    _, e = mpmath.frexp(abs(v))
    return int(e)


class _Scaled:
    """The system in scaled unknowns ``y = x / s`` with ``s`` powers of two (exact scaling)."""

    def __init__(self, machine, P, spec, x_mp):
        arb = _arb()
        self.m, self.P, self.spec = machine, P, spec
        self.exps = [_power_of_two(v) for v in x_mp]
        self.s = [arb((1, e)) for e in self.exps]
        self.y_mid = [exact_ball(v) / si for v, si in zip(x_mp, self.s)]

    def x_of(self, y):
        return [yi * si for yi, si in zip(y, self.s)]

    def F(self, y):
        x = self.x_of(y)
        fx = self.m.evaluate("equations", "arb", x, self.P, self.spec)
        if self.m.fixed_point:
            fx = [xi - fi for xi, fi in zip(x, fx)]
        return fx

    def J(self, y, rough=False):
        """The Jacobian in the scaled unknowns over the balls ``y``; ``rough`` (a goal in bits,
        ``True``: :data:`JACOBIAN_GOAL`): at :data:`JACOBIAN_DIGITS` with its integrals aiming
        at that goal (an enclosure all the same, only wider)."""
        if not rough:
            jx = self.m.evaluate("jacobian", "arb", self.x_of(y), self.P, self.spec)
            return self.scaled_jacobian(jx)
        goal = JACOBIAN_GOAL if rough is True else int(rough)
        with ball_precision(JACOBIAN_DIGITS), integral_goal(goal):
            jx = self.m.evaluate("jacobian", "arb", self.x_of(y), self.P, self.spec)
        return self.scaled_jacobian(jx)

    def chord_jacobian(self, chord):
        """The scaled Jacobian from a solve's ``chord`` (``NewtonReport.chord``: the Jacobian
        of the residual map :math:`F` in the unknowns ``x``, an ``mpmath.matrix``), as exact
        balls of its entries: a preconditioner's source only."""
        from flint import arb_mat

        n = self.m.n
        return arb_mat([[exact_ball(chord[i, j]) * self.s[j] for j in range(n)]
                        for i in range(n)])

    def scaled_jacobian(self, jx):
        """The Jacobian in the scaled unknowns from the values ``jx`` of the generated
        ``jacobian`` group (row-major, in the unknowns ``x``)."""
        from flint import arb_mat

        n = self.m.n
        rows = []
        for i in range(n):
            row = []
            for j in range(n):
                v = jx[n * i + j]
                if self.m.fixed_point:
                    v = (1 if i == j else 0) - v
                row.append(v * self.s[j])
            rows.append(row)
        return arb_mat(rows)


def exact_ball(v):
    """An ``mpf`` as the exact ball of its binary value."""
    return arb_of(v if isinstance(v, mpmath.mpf) else mpmath.mpf(v))


def _finite_all(balls) -> bool:
    return all(is_finite(b) for b in balls)


def _upper(b) -> Fraction:
    """An upper bound of ``|b|`` as a Fraction."""
    return max(abs(ball_fraction(b, "lo")), abs(ball_fraction(b, "hi")))


def krawczyk(machine, P, spec, x_mp, dps: int, jacobian=None, chord=None):
    """Run the Krawczyk test around ``x_mp``: ``(box of the unknowns as balls, radius, "")`` on
    success, ``(None, radius, reason)`` otherwise. ``jacobian`` (the ``jacobian`` group's values
    near ``x_mp``, ``NewtonReport.jacobian``) or else ``chord`` (the Jacobian of the residual
    map of the solve's last Newton step, ``NewtonReport.chord``) gives the preconditioner;
    without them, or where the inclusion fails with them, the Jacobian is evaluated at
    ``x_mp``."""
    n = machine.n
    sc = _Scaled(machine, P, spec, x_mp)
    f_mid = sc.F(sc.y_mid)
    if not _finite_all(f_mid):
        return None, None, "the equations cannot be enclosed at the computed solution"
    jacobian = [arb_of(v) for v in jacobian] if jacobian is not None else None
    if jacobian is not None and len(jacobian) == n * n and _finite_all(jacobian):
        out = _inclusion(sc, f_mid, sc.scaled_jacobian(jacobian), dps)
        if out[0] is not None:
            return out
    elif chord is not None and (chord.rows, chord.cols) == (n, n) and all(
            mpmath.isfinite(chord[i, j]) for i in range(n) for j in range(n)):
        out = _inclusion(sc, f_mid, sc.chord_jacobian(chord), dps)
        if out[0] is not None:
            return out
    return _inclusion(sc, f_mid, sc.J(sc.y_mid), dps)


def _preconditioner(j_mid):
    """An exactly represented approximate inverse of the Jacobian ``j_mid`` (an ``arb_mat``):
    the midpoints of python-flint's inverse of its midpoints (mpmath's inverse where flint
    cannot invert them), ``None`` if it is singular."""
    from flint import arb_mat

    n = j_mid.nrows()
    A = arb_mat([[j_mid[i, j].mid() for j in range(n)] for i in range(n)])
    try:
        inv = A.inv(nonstop=True)
    except ZeroDivisionError:
        inv = None
    if inv is not None and all(is_finite(inv[i, j]) for i in range(n) for j in range(n)):
        return arb_mat([[inv[i, j].mid() for j in range(n)] for i in range(n)])
    try:
        Ainv = mpmath.inverse(mpmath.matrix([[ball_to_mpf(A[i, j]) for j in range(n)]
                                             for i in range(n)]))
    except (ZeroDivisionError, ValueError):
        return None
    return arb_mat([[exact_ball(Ainv[i, j]) for j in range(n)] for i in range(n)])


def _inclusion(sc, f_mid, j_mid, dps: int):
    """The inflation and tightening of :func:`krawczyk` with the preconditioner from
    ``j_mid``."""
    from flint import arb_mat

    arb = _arb()
    n = sc.m.n
    if not all(is_finite(j_mid[i, j]) for i in range(n) for j in range(n)):
        return None, None, "the Jacobian is singular at the computed solution"
    Y = _preconditioner(j_mid)
    if Y is None:
        return None, None, "the Jacobian is singular at the computed solution"
    c = Y * arb_mat([[v] for v in f_mid])
    step = max([_upper(c[i, 0]) for i in range(n)] + [Fraction(0)])
    floor = Fraction(1, 2 ** max(int(dps * 3.32) - 20, 10))
    radius = max(4 * step, floor)
    identity = arb_mat([[1 if i == j else 0 for j in range(n)] for i in range(n)])
    for _ in range(INFLATIONS):
        if radius > MAX_RADIUS:
            return None, radius, (f"no inclusion for boxes up to relative radius {float(MAX_RADIUS)}"
                                  " (the Jacobian may be near-singular on the box, or the "
                                  "candidate is not close to a solution)")
        radius = _power_of_two_above(radius)
        r = arb(0, arb((1, _log2(radius))))
        delta = arb_mat([[r] for _ in range(n)])
        box = [yi + r for yi in sc.y_mid]
        # the Jacobian over the box, first at a few digits (JACOBIAN_DIGITS) with its integrals
        # at a few bits (JACOBIAN_GOALS), then, where the inclusion fails with that, at the
        # working precision
        for rough in (*JACOBIAN_GOALS, False):
            try:
                jb = sc.J(box, rough=rough)
            except NotEnclosable:
                if rough:
                    continue
                raise
            if not all(is_finite(jb[i, j]) for i in range(n) for j in range(n)):
                if rough:
                    continue
                return None, radius, "the Jacobian cannot be enclosed on the box (an " \
                                     "expression is undefined on part of it)"
            M = identity - Y * jb
            k = M * delta
            K = [sc.y_mid[i] - c[i, 0] + k[i, 0] for i in range(n)]
            if all(box[i].contains_interior(K[i]) for i in range(n)):
                break
            if rough and max(_upper(k[i, 0]) for i in range(n)) < radius / 2:
                break  # (I - YJ) contracts: the box is too small for Y F, not J too wide
        if all(box[i].contains_interior(K[i]) for i in range(n)):
            for _ in range(TIGHTENINGS):  # J(box) of this box: see the module's docstring
                box = [K[i].intersection(box[i]) for i in range(n)]
                k = M * arb_mat([[box[i] - sc.y_mid[i]] for i in range(n)])
                K = [sc.y_mid[i] - c[i, 0] + k[i, 0] for i in range(n)]
                if not all(box[i].contains(K[i]) for i in range(n)):
                    break
            return sc.x_of(box), radius, ""
        grow = max(_upper(K[i] - sc.y_mid[i]) for i in range(n))
        radius = max(radius * 8, 2 * grow) if is_finite_fraction(grow) else radius * 8
    return None, radius, f"no inclusion after {INFLATIONS} inflations of the box"


def _log2(v: Fraction) -> int:
    """``log2`` of a power of two."""
    return v.numerator.bit_length() - 1 if v >= 1 else -(v.denominator.bit_length() - 1)


def _power_of_two_above(v: Fraction) -> Fraction:
    """The smallest power of two ``>= v`` (``v > 0``): box radii are exact balls."""
    k = v.numerator.bit_length() - v.denominator.bit_length()
    p = Fraction(2) ** k
    while p < v:
        p *= 2
    while p / 2 >= v:
        p /= 2
    return p


def is_finite_fraction(v) -> bool:
    return isinstance(v, Fraction)


def certify_point(machine, params, x_mp, dps: int, direct: dict | None = None,
                  jacobian=None, chord=None, digits: int | None = None) -> Certificate:
    """Certify the solution ``x_mp`` (mpf, at least ``dps`` digits accurate) of ``machine``'s
    system at ``params`` with ball arithmetic at ``dps`` digits; ``direct`` maps the names of
    the (defined) values computed from the parameters to ``enclose(params)`` callables returning
    a ball, or to ``None`` where there is no ball evaluation. The certificate holds only if every
    reported value, these included, has a finite enclosure. ``jacobian`` (or ``chord``): the
    solve's Jacobian near ``x_mp`` for the preconditioner (:func:`krawczyk`), which changes no
    conclusion's validity.

    ``digits`` (the significant digits the caller needs proved, fewer than ``dps``): the
    Gaussian integrals are first enclosed aiming at ``digits +`` :data:`GOAL_MARGIN` digits
    (:class:`~replica.symbolic.codegen.integral_goal`) instead of ``dps``; every enclosure is
    rigorous either way, only its width differs. Where that certificate fails, or proves fewer
    than ``digits`` digits for some value, the certification is repeated with the integrals at
    ``dps`` digits, so the outcome is never weaker than without ``digits``."""
    # (imported here: implicit.py imports SymPy, which a cached solve of a built-in model must
    # not load: tests/test_cli_startup.py)
    from ..symbolic.implicit import forget_ball_enclosures

    forget_ball_enclosures()  # (the root enclosures remembered are this proof's own)
    try:
        if digits is not None and digits + GOAL_MARGIN < dps:
            goal = int((digits + GOAL_MARGIN) * 3.33) + 1
            cert = _certify_point(machine, params, x_mp, dps, direct, jacobian, chord, goal)
            if cert.certified and cert.min_digits(digits) >= digits:
                return cert
        return _certify_point(machine, params, x_mp, dps, direct, jacobian, chord, None)
    finally:
        forget_ball_enclosures()


def _certify_point(machine, params, x_mp, dps, direct, jacobian, chord, goal) -> Certificate:
    """:func:`certify_point` with the integrals aiming at ``goal`` bits (``None``: ``dps``)."""
    method = (f"Krawczyk inclusion in ball arithmetic at {dps} digits (python-flint arb): a "
              "unique solution in the box; every value enclosed over it")
    if machine.n == 0:
        method = (f"closed form evaluated in ball arithmetic at {dps} digits (python-flint "
                  "arb)")
    with ball_precision(dps), precision(dps), integral_goal(goal):
        try:
            P = parameter_balls(machine, params)
            spec = machine.spectrum(params, "arb")
            if machine.n:
                box, radius, why = krawczyk(machine, P, spec, x_mp, dps, jacobian, chord)
                if box is None:
                    return Certificate(False, reason=why, method=method, precision=dps,
                                       radius=radius)
            else:
                box, radius = [], Fraction(0)
            names = list(machine.outline.unknowns)
            cert = Certificate(True, method=method, precision=dps, radius=radius,
                               box=dict(zip(names, box)))
            if machine.outline.admissible:
                adm = machine.evaluate("admissible", "arb", box, P, spec)
                for value, what in zip(adm, machine.outline.admissible):
                    if not value > 0:
                        cert.certified = False
                        cert.reason = f"admissibility ({what}) is not proved on the box"
                        return cert
            values = machine.evaluate("report", "arb", box, P, spec)
        except NotEnclosable as exc:
            return Certificate(False, reason=f"not enclosable: {exc}", method=method,
                               precision=dps)
        for name, b in zip(machine.report_names, values):
            if is_finite(b):
                cert.enclosures[name] = b
            else:
                cert.not_enclosed[name] = "its enclosure over the box is not finite"
        for name, enclose in (direct or {}).items():
            if enclose is None:
                cert.not_enclosed[name] = "computed from the parameters without a ball evaluation"
                continue
            try:
                b = enclose(params)
            except NotEnclosable as exc:
                cert.not_enclosed[name] = str(exc)
                continue
            if b is None:
                cert.not_enclosed[name] = "its ball evaluation found it undefined"
            elif is_finite(b):
                cert.enclosures[name] = b
            else:
                cert.not_enclosed[name] = "its enclosure is not finite"
        if cert.not_enclosed:
            cert.certified = False
            first = next(iter(cert.not_enclosed))
            cert.reason = f"{first}: {cert.not_enclosed[first]}"
        return cert


# ---------------------------------------------------------------------------------------------
# Scalar roots: interval Newton
# ---------------------------------------------------------------------------------------------
def interval_newton_root(g, dg, x_mp, dps: int, radius=None):
    r"""Prove that the scalar function :math:`g` has exactly one root near ``x_mp``.

    ``g`` and ``dg`` (its derivative) map a ball to a ball enclosing their values over it. For
    :math:`X = [\tilde x - r, \tilde x + r]` the interval Newton operator is
    :math:`N(X) = \tilde x - g(\tilde x)/g'(X)`; if :math:`g'(X) \not\ni 0` and
    :math:`N(X) \subset \operatorname{int} X`, then :math:`X` contains exactly one root of
    :math:`g`, and it lies in :math:`N(X)` (mean-value theorem; :math:`g` is strictly monotone on
    :math:`X`). The radius starts at ``radius`` (or a few times the Newton step) and is inflated
    until the inclusion holds or exceeds :data:`MAX_RADIUS` relative to :math:`|\tilde x|`.
    Returns ``(ball, "")`` or ``(None, reason)``; runs at ``dps`` digits."""
    arb = _arb()
    with ball_precision(dps), precision(dps):
        m = exact_ball(x_mp)
        gm = g(m)
        if not is_finite(gm):
            return None, "the condition cannot be enclosed at the computed root"
        dm = dg(m)
        if not is_finite(dm) or dm.contains(0):
            return None, "the derivative of the condition vanishes at the computed root"
        step = _upper(gm / dm)
        scale = max(abs(ball_fraction(m, "mid")), Fraction(1, 10 ** dps))
        floor = scale * Fraction(1, 2 ** max(int(dps * 3.32) - 20, 10))
        r = max(4 * step, floor) if radius is None else max(Fraction(radius), floor)
        for _ in range(INFLATIONS):
            if r > MAX_RADIUS * scale:
                break
            r = _power_of_two_above(r)
            X = m + arb(0, arb((1, _log2(r))))
            dX = dg(X)
            if is_finite(dX) and not dX.contains(0):
                N = m - gm / dX
                if X.contains_interior(N):
                    return N.intersection(X), ""
                r = max(r * 8, 2 * _upper(N - m)) if is_finite(N) else r * 8
            else:
                return None, ("the derivative of the condition is not bounded away from zero "
                              "on the smallest box")
        return None, ("no interval Newton inclusion (the derivative of the condition may vanish "
                      "near the root, or the candidate is not close to a root)")
