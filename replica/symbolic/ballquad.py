r"""A rigorous Gauss--Legendre rule for the ball-arithmetic Gaussian integrals (issue 29).

:func:`enclose` returns an ``arb`` enclosure of :math:`\int_a^b f(s)\,ds` for an integrand
``f(s, analytic)`` of the kind python-flint's ``acb.integral`` takes (an ``acb`` ball in, an
``acb`` ball out, non-finite where the function is not analytic on the ball), or ``None``
where it cannot prove one (the caller then uses ``acb.integral``).

**The bound** (stated: L. N. Trefethen, *Approximation Theory and Approximation Practice*,
SIAM 2013, Theorem 19.3). Let :math:`f` be analytic in the open Bernstein ellipse
:math:`E_r` of :math:`[-1, 1]` (foci :math:`\pm 1`, semi-axes :math:`(r + r^{-1})/2` and
:math:`(r - r^{-1})/2`, :math:`r > 1`) with :math:`|f| \le M` there. Then the :math:`n`-point
Gauss--Legendre rule :math:`I_n` satisfies

.. math::  \Bigl|\int_{-1}^1 f - I_n\Bigr| \le \frac{64}{15}\,\frac{M\,r^{-2n}}{r^2 - 1}.

*Derived* (here): on :math:`[a, b]` with :math:`c = (a + b)/2`, :math:`h = (b - a)/2`, the
substitution :math:`s = c + hx` gives :math:`\int_a^b f = h\int_{-1}^1 f(c + hx)\,dx`, so the
error is at most :math:`h` times the bound above with :math:`M` the bound of :math:`|f|` on
:math:`c + hE_r` (semi-axes :math:`A = h(r + r^{-1})/2`, :math:`B = h(r - r^{-1})/2`).

**M and analyticity** from ball evaluations: the closed ellipse is covered by vertical strips
(``acb`` boxes :math:`[x_j - \epsilon, x_{j+1} + \epsilon] \times [-y_j, y_j]`, each as tall as
the ellipse over its abscissae, neighbours overlapping); a finite value of ``f`` on a box
means ``f`` is analytic on it (the contract of ``acb.integral``'s integrands; the proximal
roots of :mod:`replica.symbolic.implicit` enclose the analytic continuation of the real root
on boxes that meet the real axis, as these do). Every box contains a real segment and two
neighbours' boxes overlap in an open rectangle that meets the real axis, where both
functions are the real integrand: by the identity theorem they agree on the overlap, so the
strips carry one analytic function on a neighbourhood of the ellipse, bounded by the largest
:math:`|f|` on the boxes. Where a box fails, a thinner ellipse in more strips is tried
(:data:`SHAPES`); where none passes the
interval is halved (up to :data:`MAX_DEPTH` times) and at last ``None`` is returned.

**The sum**: the nodes and weights are python-flint's enclosures
(``arb.legendre_p_root``), ``f`` is evaluated on the node balls, and the error bound is
added as a radius; :math:`n` is the smallest with the bound below the tolerance handed in
(the tolerance only sets :math:`n`: the enclosure holds whatever it is), capped at
:data:`MAX_NODES` (beyond, the interval is halved).

**Negligible intervals** (job cert, issue 29): where the caller hands in an upper bound
:math:`E` of :math:`\int_a^b |f|` (``negligible``; :mod:`replica.symbolic.codegen` takes it
from the integrand's growth envelope) and :math:`E` is below the interval's tolerance, the
interval's enclosure is :math:`[-E, E]` (:math:`|\int_a^b \operatorname{Re} f| \le
\int_a^b |f|`), without evaluating ``f``: the far tails inside the truncation point, where ball
evaluations on complex boxes (an ``erfc`` in a denominator) are not finite and the intervals
were halved up to :data:`MAX_DEPTH` times to find an ellipse. **The whole range first**: with
``pieces > 1``, the ellipses :data:`WHOLE` on the whole range are tried before the pieces (an
entire integrand such as a polynomial times the Gaussian weight on a piece between kinks needs
fewer nodes in one rule than the pieces together, each with its own boxes).
"""

from __future__ import annotations

import math

__all__ = ["enclose", "gauss_legendre", "ellipse_bound", "NodePlan", "SHAPES", "WHOLE",
           "WHOLE_NODES", "MAX_NODES", "MAX_DEPTH"]

SHAPES = ((1.0, 4), (0.5, 4), (0.25, 8), (0.125, 16), (0.0625, 16))
r"""The ellipses tried in turn: :math:`\tau = B/h` (the semi-minor axis over the interval's
half-length; :math:`r = \tau + \sqrt{\tau^2 + 1}`) and the number of strips covering it.
An interval of :func:`enclose` starts at the shape before the one that passed on the interval
to its left (the first where none did)."""

WHOLE = ((0.5, 8),)
"""The ellipse tried first on the whole range of :func:`enclose` (before its ``pieces``): an
integrand that is entire or nearly (a polynomial times a Gaussian on a piece between kinks)
needs fewer nodes there than on many short intervals, each with its own boxes."""

WHOLE_NODES = 16
"""The whole range is taken in one rule when it needs at most this many nodes per piece."""

MAX_NODES = 160
"""The most Gauss--Legendre nodes on one interval (more: the interval is halved)."""

MAX_DEPTH = 4
"""How often an interval is halved before :func:`enclose` gives up on it."""

_RULES: dict = {}


def gauss_legendre(n: int, prec: int):
    """The ``n`` nodes and weights of the Gauss--Legendre rule on :math:`[-1, 1]` as ``arb``
    enclosures at ``prec`` bits (python-flint's ``arb.legendre_p_root``), remembered."""
    import flint

    key = (n, prec)
    rule = _RULES.get(key)
    if rule is None:
        old, flint.ctx.prec = flint.ctx.prec, prec
        try:
            rule = [flint.arb.legendre_p_root(n, k, weight=True) for k in range(n)]
        finally:
            flint.ctx.prec = old
        _RULES[key] = rule
    return rule


def ellipse_bound(f, c, h, r, strips: int):
    r"""An upper bound (``arb``) of :math:`|f|` on a neighbourhood of the closed Bernstein
    ellipse :math:`c + hE_r` (``c``, ``h``, ``r`` exact ``arb`` numbers, :math:`r > 1`) on
    which ``f`` is analytic, from ``strips`` overlapping boxes (module docstring), or ``None``
    where ``f`` is not finite on one of them."""
    import flint

    acb, arb = flint.acb, flint.arb
    A = h * (r + 1 / r) / 2
    B = h * (r - 1 / r) / 2
    A_up = arb(A.upper())
    B_up = arb(B.upper())
    step = 2 * A_up / strips
    eps = step / 64
    M = arb(0)
    # (the tallest strips first: where the ellipse fails, it mostly fails there)
    for j in sorted(range(strips), key=lambda j: abs(2 * j + 1 - strips)):
        x0 = -A_up + j * step - eps
        x1 = -A_up + (j + 1) * step + eps
        # the ellipse's height over [x0, x1]: B sqrt(1 - d^2/A^2), d the distance from the
        # centre's abscissa (0 when the strip holds it); an upper bound of it
        if x0 < 0 < x1:
            d = arb(0)
        else:
            d = arb(min(abs(x0).lower(), abs(x1).lower()))
        if d >= A:
            y = arb(0)
        else:
            y = arb((B_up * (1 - d * d / (A_up * A_up)).sqrt()).upper())
        y = arb(y.upper()) * (1 + arb(2) ** -20) + arb(2) ** -40 * h  # (a margin: the strip is
        # taller than the ellipse, never lower)
        mid = c + (x0 + x1) / 2
        rad = (x1 - x0) / 2
        box = acb(arb(mid.mid(), (rad + abs(mid - mid.mid())).upper()), arb(0, y.upper()))
        v = f(box, True)
        if not v.is_finite():
            return None
        M = arb(max(arb(M.upper()), arb(abs(v).upper())).upper())
    return M


def _nodes_needed(M, h, r, tol):
    r"""The smallest :math:`n` with :math:`\frac{64}{15}hMr^{-2n}/(r^2 - 1) \le` ``tol`` (a
    float or ``arb``: a tolerance below float64's range stays representable; the bound itself is
    computed again in ball arithmetic)."""
    import flint

    arb = flint.arb
    m = arb(M.upper()) * arb(h.upper()) * 64 / 15 / (arb(r.lower()) ** 2 - 1)
    if not m > 0 or m <= tol:
        return 1
    ratio = (m.log() - arb(tol).log()) / (2 * arb(r.lower()).log())
    return max(1, math.ceil(float(ratio.upper())))


class NodePlan:
    r"""The node counts already used on each interval by the integrals of one group (the
    Gaussian integrals of one evaluation, :func:`replica.symbolic.codegen._gauss_arb`, which
    share their argument balls and hence, at the same node ball, their integrands' inner
    functions -- the proximal root of :mod:`replica.symbolic.implicit`, whose enclosures are
    remembered under the exact balls). :meth:`nodes` raises an integral's :math:`n` to the
    smallest count at most :data:`SHARE` times it already used on the same interval (exact
    endpoints, the same precision): the same node balls, so those enclosures are found in the
    memo. Any :math:`n' \ge n` keeps the bound of the module docstring below the tolerance
    (:math:`r^{-2n'} \le r^{-2n}`), and the error added is computed for the :math:`n'` used,
    so a plan changes the work, never what is proved. An interval one integral halved is
    halved by the others (:meth:`was_halved`), so that they meet on the same intervals."""

    SHARE = 3
    """A count used on the interval is taken where it is at most this many times the one
    needed (an evaluation at a shared node costs the integrand without the root, about a
    third of a fresh one at the logistic point)."""

    def __init__(self):
        self._used: dict = {}
        self._halved: set = set()

    def halved(self, c, h, prec) -> None:
        """Remember that an integral halved the interval (centre ``c``, half-length ``h``)."""
        key = self._key(c, h, prec)
        if key is not None:
            self._halved.add(key)

    def was_halved(self, c, h, prec) -> bool:
        """Whether an integral of the plan halved the interval: :func:`enclose` then halves it
        too (the halves' nodes are shared; halving changes the work, never the bound)."""
        key = self._key(c, h, prec)
        return key is not None and key in self._halved

    @staticmethod
    def _key(c, h, prec):
        if c.rad() != 0 or h.rad() != 0:
            return None
        return (c.mid().man_exp(), h.mid().man_exp(), prec)

    def nodes(self, c, h, prec, n: int) -> int:
        """The node count to use on the interval of centre ``c`` and half-length ``h``
        (``arb``) where ``n`` are needed: a count already used there in ``[n, SHARE n]``, the
        smallest, or :meth:`rung` of ``n`` (then remembered)."""
        key = self._key(c, h, prec)
        if key is None:
            return n
        used = self._used.setdefault(key, [])
        fits = [m for m in used if n <= m <= self.SHARE * n]
        if fits:
            return min(fits)
        m = self.rung(n)
        used.append(m)
        return m

    @staticmethod
    def rung(n: int) -> int:
        """``n`` rounded up to four significant bits (at most 1/8 more; ``n`` itself up to
        16): the integrals of a group need nearly the same counts (90, 91, 92 nodes on one
        interval), which then fall on one count."""
        if n <= 16:
            return n
        step = 1 << (n.bit_length() - 4)
        return -(-n // step) * step


SEGMENT = [True]
r"""Whether ``_one`` tries the zero-order enclosure of ``_segment`` first."""


def _segment(f, a, b, tol):
    r"""The zero-order enclosure :math:`(b - a)\,\operatorname{Re} f([a, b])` of
    :math:`\int_a^b \operatorname{Re} f` where its radius is at most ``tol``, else ``None``.

    *Why it holds*: ``f`` evaluated on the real ball :math:`[a, b]` encloses
    :math:`\operatorname{Re} f(s)` for every :math:`s` there, so
    :math:`\inf \le \operatorname{Re} f \le \sup` on the interval with the ball's ends, and
    integrating, :math:`(b - a)\inf \le \int_a^b \operatorname{Re} f \le (b - a)\sup`
    (no analyticity or continuity needed, only the enclosure). One evaluation of ``f``: where
    the integrand is far below the interval's share of the tolerance (the Gaussian tails inside
    the truncation point that the growth envelope of ``negligible`` bounds too loosely), it
    replaces the boxes of an ellipse and the nodes of a rule."""
    import flint

    v = f(flint.acb(a.union(b)), False)
    if not v.is_finite():
        return None
    part = v.real * (b - a)
    if not part.is_finite() or part.rad() > tol:
        return None
    return part


def _one(f, a, b, tol, prec, depth, start=0, negligible=None, shapes=None, cap=None,
         plan=None):
    r"""One interval: ``[-B, B]`` where ``negligible(a, b)`` (an upper bound of
    :math:`\int_a^b |f|`, or ``None``) is at most ``tol``; else the rule on the first ellipse of
    ``shapes`` (:data:`SHAPES`) from index ``start`` on which ``f`` is bounded and which needs
    at most ``cap`` (:data:`MAX_NODES`) nodes, the interval halved otherwise (up to
    :data:`MAX_DEPTH`); ``plan`` (a :class:`NodePlan`) may raise the node count to one
    another integral used on the same interval. Which shapes are tried changes the work, never
    the bound. Returns
    ``(enclosure or None, index of the shape that passed first or None)``."""
    import flint

    arb = flint.arb
    if negligible is not None:
        bound = negligible(a, b)
        if bound is not None and bound.is_finite() and bound <= tol:
            return arb(0, arb(bound.upper()).upper()), None
    if SEGMENT[0]:
        part = _segment(f, a, b, tol)
        if part is not None:
            return part, None
    c = (a + b) / 2
    h = (b - a) / 2
    best = None
    passed = None
    shapes = SHAPES if shapes is None else shapes
    # (an interval another integral of the plan halved is halved at once: its halves' nodes
    # are shared, where this one might have passed on a thin ellipse with nodes of its own)
    follow = plan is not None and depth < MAX_DEPTH and plan.was_halved(c, h, prec)
    for k in range(start, 0 if follow else len(shapes)):
        tau, strips = shapes[k]
        r = arb(tau + math.sqrt(tau * tau + 1))  # (an exact double: the bound uses it as is)
        M = ellipse_bound(f, c, h, r, strips)
        if M is None or not M.is_finite():
            continue
        n = _nodes_needed(M, h, r, tol)
        best = (n, r, M)
        passed = k
        break
    if best is None or best[0] > (MAX_NODES if cap is None else cap):
        if depth >= MAX_DEPTH:
            return None, passed
        if plan is not None:
            plan.halved(c, h, prec)
        left, _ = _one(f, a, c, tol / 2, prec, depth + 1, 0, negligible, plan=plan)
        if left is None:
            return None, passed
        right, _ = _one(f, c, b, tol / 2, prec, depth + 1, 0, negligible, plan=plan)
        if right is None:
            return None, passed
        return left + right, passed
    n, r, M = best
    if plan is not None:
        n = plan.nodes(c, h, prec, n)
    total = flint.acb(0)
    for x, w in gauss_legendre(n, prec):
        total += w * f(flint.acb(c + h * x), False)
    if not total.is_finite():
        return None, passed
    error = arb(64) / 15 * M * h / (r * r - 1) / r ** (2 * n)
    return total.real * h + arb(0, error.upper()), passed


def enclose(f, a, b, tol: float, pieces: int = 1, negligible=None, plan=None):
    r"""An ``arb`` enclosure of :math:`\int_a^b \operatorname{Re} f` (``a < b`` exact ``arb``
    numbers) by the Gauss--Legendre rule with its error bound (module docstring) on
    ``pieces`` equal intervals, each aiming at an error of ``tol/pieces``; ``None`` where
    an interval's ellipse cannot be bounded (the caller falls back to ``acb.integral``).
    ``plan`` (a :class:`NodePlan` shared by integrals over the same intervals) may raise an
    interval's node count to one already used there."""
    import flint

    prec = flint.ctx.prec
    tol = flint.arb(tol)
    total = flint.arb(0)
    step = (b - a) / pieces
    start = 0
    if pieces > 1 and WHOLE:
        part, _ = _one(f, a, b, tol, prec, MAX_DEPTH, 0, negligible, WHOLE, WHOLE_NODES * pieces)
        if part is not None:
            return part
    for k in range(pieces):
        lo = a + k * step
        hi = b if k == pieces - 1 else a + (k + 1) * step
        part, passed = _one(f, lo, hi, tol / pieces, prec, 0, start, negligible, plan=plan)
        if part is None:
            return None
        total += part
        start = 0 if passed is None else max(0, passed - 1)
    return total
