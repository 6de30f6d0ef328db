r"""High-precision quadrature of Gaussian integrals: adaptive piecewise Gauss--Legendre.

:func:`gauss_legendre_pieces` computes :math:`\int_{-T}^{T} f(z)\,dz` for an integrand
:math:`f` (the switched integrand times the normal density, :mod:`replica.symbolic.codegen`)
that is analytic on each piece between given breakpoints (the kinks of its Heaviside
functions), at the working precision of mpmath.

**The rule.** On a piece :math:`[a, b]` (midpoint :math:`m`, half-width :math:`h`) the
:math:`n`-point Gauss--Legendre rule is

.. math::  G_n = h\sum_{j=1}^n w_j\, f(m + h x_j),

:math:`x_j` the zeros of the Legendre polynomial :math:`P_n` and :math:`w_j` their weights
(computed once per ``(n, precision)`` by python-flint's ``arb.legendre_p_root``, rigorous balls
rounded to the working precision, and cached; kept between processes where a
:data:`RULE_STORE` is installed). The orders are the levels
:math:`n_k = 4\cdot 2^k`, :math:`k = 1, \dots,` :data:`MAX_LEVEL`. For :math:`f` analytic inside
the Bernstein ellipse :math:`E_\rho` of the piece the error is :math:`O(\rho^{-2n})`.

**The error estimate.** It comes from the rule's own nodes (nested: no second rule is
evaluated). The ``n`` values :math:`f_i = f(m + hx_i)` determine the polynomial of degree
:math:`n - 1` interpolating :math:`f` at the nodes, :math:`\sum_{j<n} c_jP_j`, whose
coefficients the rule itself gives exactly,
:math:`c_j = \tfrac{2j+1}2\sum_i w_iP_j(x_i)f_i` (:func:`tail_weights`; the rule is exact for
the products, of degree at most :math:`2n - 2`). For :math:`f` analytic inside
:math:`E_\rho` the coefficients decay like :math:`\rho^{-j}`, so the top two,

.. math::  E = 2h\max(|c_{n-1}|, |c_{n-2}|)

(two: an integrand even or odd about the midpoint has every other coefficient 0; the top two
of the :data:`TAILS` that :func:`tail_weights` gives), are of the
size :math:`\rho^{-n}` of the error of the half-length rule :math:`G_{n/2}` -- the quantity
:math:`|G_{n_k} - G_{n_{k-1}}|` that a coarse rule would measure, at a third more nodes --
and slightly above it (:math:`c_{n-1}` against the coefficients of degree :math:`\ge n` that
:math:`G_{n/2}` misses). In the geometric regime the error of :math:`G_n` is about
:math:`E^2/s`, with :math:`s` the piece's scale :math:`h\sum_j w_j|f(m + h x_j)|` (the error
exponent doubles with :math:`n`); the estimate used is the more cautious

.. math::  \hat e = \min\big(E,\; 2^8 E^2/s\big),

(a factor :math:`2^8` above the leading-order value) -- where the coefficients are seen to
decay at the rate that :math:`E^2/s` assumes. That rate is :math:`c_j \approx s\rho^{-j}`: the
coefficients' amplitude that of the piece. Next to a narrow feature (a piece
:math:`[c + 4w, c + 16w]` beside a step of width :math:`w`) the sequence has a knee: the
smooth part's coefficients (of scale :math:`s`) fall fast, the feature's (of amplitude
:math:`A \ll s`) slowly, the top ones are the feature's, and the error is about
:math:`E^2/A`, not :math:`E^2/s`. So :func:`tail_weights` gives the top four coefficients, the
decay seen there, :math:`q^n` (``_seen_decay``: from the ratios
:math:`|c_{n-1}/c_{n-3}|`, :math:`|c_{n-2}/c_{n-4}|`; 1 where none is seen), bounds the
estimate from below, and the estimate used is

.. math::  \hat e = \min\big(E,\; 2^8 E\max(E/s,\, q^n)\big)

(never below the squared one: an integral accepted now was accepted before, at the same
levels or higher). A noise plateau -- top coefficients that do not shrink by a factor 4
from one level to the next, above the rounding level (``_plateau``: the integrand's evaluation
noise, which no more nodes lower) -- is estimated by its floor,
:math:`\hat e \ge 2\max_k |c_{n-k}|`, nothing read from the coefficients' random ratios;
where that floor exceeds the tolerance the caller is told (``NotResolved.floor``) and raises
the working precision. The floor stays with the piece (``_Piece.noise``): at its later levels,
where the maximum of the noise may happen to fall by more than the factor 4 (a 12x fall,
then read as a decay, claimed :math:`10^{-34}` against a true :math:`10^{-23}`), and, halved
(the noise's coefficients are proportional to the half-width), on the halves of a piece
bisected (which restart at 8 nodes, the noise hidden under coefficients still falling, with
no level below to compare); it is dropped only where the piece's top coefficients are below
1/:data:`NOISE_DROP` of it at two successive levels (a knee resolved, not noise). An integrand object whose
``weighted_sums`` gives no coefficients (no ``nested`` attribute) shows no decay: its
estimate is :math:`E = |G_{n_k} - G_{n_{k-1}}|` itself (the error of the coarser rule,
evaluated too), never squared (:mod:`replica.symbolic.codegen`'s integrands, the outer one of
a two-dimensional integral included, all give the coefficients). The integral is accepted
when the summed estimates are at most ``rtol`` times the sum of the pieces' absolute values;
until then the piece with the largest estimate is refined -- raised one level, or, at
:data:`MAX_LEVEL`, bisected (each half restarting at level 1) -- at most
:data:`MAX_REFINEMENTS` times, after which :class:`NotResolved` is raised and the caller falls
back to another method. The estimate is a heuristic, like every estimate from the values of a
rule (mpmath's ``quad`` extrapolates its levels in the same way); it is what guards a silent
wrong digit, and an integrand that is not analytic on a piece (an undeclared kink, a nearby
pole) keeps its top coefficients large, which the refinement either resolves or reports.

**Ball sums.** An integrand object with a ``weighted_sums(m, h, nodes, weights)`` method
computes a rule's two sums itself (:mod:`replica.symbolic.codegen` evaluates the integrand in
python-flint ball arithmetic there) and returns ``(value, scale, rounding)``: ``rounding``, a
bound on the sums' rounding error from the balls' radii, is added to the piece's estimate; it
returns ``None`` to have the rule evaluate the integrand point by point instead. Where the
object has a true ``nested`` attribute, it is called as ``weighted_sums(m, h, nodes, weights,
tails)`` with the vectors of :func:`tail_weights` and returns a fourth entry, per member the
magnitudes :math:`|h\sum_i v_if_i|` of the four coefficients (their rounding added).

The level at which each breakpoint cell was accepted is remembered per integrand and
precision (``memory``): the next evaluation at nearby parameters starts there, so a Newton
iteration pays for two rules per piece, not the whole ladder.

**The tails.** :func:`gauss_truncation` gives the truncation point :math:`T` with
:math:`\varphi(T) = e^{-T^2/2}/\sqrt{2\pi} \le 2^{-p-30}` at ``p`` bits; the tails
:math:`|z| > T` are not assumed small: the caller integrates them by the same rule, as further
pieces of the same call (the half-line beyond the last kink mapped onto :math:`[0, 1]` by
:math:`z = c \pm t/(1 - t)`), so their error estimates enter the same total.
"""

from __future__ import annotations

import functools
import math

import mpmath

from ..errors import ConvergenceError

__all__ = ["QuadratureError", "legendre_rule", "tail_weights", "gauss_legendre_pieces", "gauss_legendre_fused", "gauss_truncation",
           "NotResolved", "LevelHints",
           "MAX_LEVEL", "MAX_REFINEMENTS", "TAILS", "RULE_STORE", "NOISE_DROP", "level_nodes"]

class QuadratureError(ConvergenceError):
    """A Gaussian integral whose quadrature error estimate is not below the working precision
    (mpmath), or whose value is not finite: the equations cannot be evaluated there (exit
    status 3, like a solve that does not converge; status ``non-finite``)."""

    def __init__(self, message: str, tried: str = "mpmath.quad on the pieces between the kinks"):
        super().__init__(message, tried=tried, status="non-finite")



MAX_LEVEL = 5
"""The highest level, :math:`n = 4\\cdot 2^5 = 128` nodes; a piece not resolved there is
bisected."""

MAX_REFINEMENTS = 64
"""Refinements (a level raised or a piece bisected) before :class:`NotResolved`."""

SAFETY = 256
"""The factor of the error estimate :math:`\\min(E, 2^8 E\\max(E/s, q^n))`."""

TAILS = 4
"""The top Legendre coefficients of the interpolant that :func:`tail_weights` gives."""


class NotResolved(ArithmeticError):
    """The error estimate did not fall below the tolerance within :data:`MAX_REFINEMENTS`;
    ``partial`` holds ``(value, error, size)`` as they stood (None where a piece was not
    finite), ``rounding`` the part of each error that is the balls' rounding bound (zeros
    without balls); ``floor``, where the pieces on a noise plateau (``_plateau``) alone exceed
    the tolerance of a member not accepted, the largest such sum of their estimates relative to
    the member's size (refinement cannot lower it; more working precision can), else
    ``None``."""

    partial = None
    rounding = None
    floor = None


def level_nodes(k: int) -> int:
    """The number of nodes of level ``k``: :math:`4\\cdot 2^k`."""
    return 4 << k


RULE_STORE: list = []
"""Where the rules of :func:`legendre_rule` and :func:`tail_weights` are kept between processes:
empty (each process computes the rules it uses), or one object with ``load(kind, n, prec,
count)`` -- the ``count`` vectors of ``n`` ``mpf`` of the rule ``kind`` (``"rule"``: nodes and
weights; ``"tails"``: the :data:`TAILS` vectors) at ``prec`` bits, or ``None`` -- and
``store(kind, n, prec, vectors)``. :mod:`replica.symbolic.codegen` installs its code cache's
(``codegen.GaussRuleFiles``) where it integrates in mpmath. A rule read back must be the one
computed, value for value (exact binary numbers: the store checks its files' seal and every
value's form), so the store changes no value, only who computes it."""


def _stored(kind: str, n: int, prec: int, count: int):
    """The rule ``kind`` from :data:`RULE_STORE`, or ``None`` (no store, not stored yet)."""
    return RULE_STORE[0].load(kind, n, prec, count) if RULE_STORE else None


def _keep(kind: str, n: int, prec: int, vectors) -> None:
    if RULE_STORE:
        RULE_STORE[0].store(kind, n, prec, vectors)


def legendre_balls(n: int, prec: int, node, weight):
    r"""The ``n``-point Gauss--Legendre rule on :math:`[-1, 1]`: its nodes :math:`x_k` and
    weights :math:`w_k` as python-flint ``arb`` balls at ``prec + 16`` bits (Legendre roots
    enclosed by arb), each passed through ``node`` / ``weight`` while that precision is in
    force (so a map such as :math:`(x + 1)/2` is rounded at it too); two lists."""
    import flint

    old = flint.ctx.prec
    try:
        flint.ctx.prec = prec + 16
        xs, ws = [], []
        for k in range(n):
            x, w = flint.arb.legendre_p_root(n, k, weight=True)
            xs.append(node(x))
            ws.append(weight(w))
    finally:
        flint.ctx.prec = old
    return xs, ws


@functools.lru_cache(maxsize=None)
def _rule(n: int, prec: int):
    hit = _stored("rule", n, prec, 2)
    if hit is not None:
        return hit
    xs, ws = legendre_balls(n, prec, lambda x: _to_mpf(x, prec), lambda w: _to_mpf(w, prec))
    out = tuple(xs), tuple(ws)
    _keep("rule", n, prec, out)
    return out


@functools.lru_cache(maxsize=None)
def _tail_rule(n: int, prec: int):
    r"""The :data:`TAILS` weight vectors :math:`v^{(j)}_i = \tfrac{2j+1}2 w_i P_j(x_i)`,
    :math:`j = n - 1, n - 2, n - 3, n - 4`, of the ``n``-point rule (:func:`legendre_rule`'s nodes and
    weights, the latter as rounded to ``prec`` bits): :math:`\sum_i v^{(j)}_i f(x_i)` is the coefficient :math:`c_j` of :math:`P_j` in
    the polynomial of degree :math:`n - 1` that interpolates :math:`f` at the nodes (the rule is
    exact for the products, of degree at most :math:`2n - 2`). Balls rounded to ``prec`` bits,
    as ``mpf``; cached."""
    hit = _stored("tails", n, prec, TAILS)
    if hit is not None:
        return hit
    import flint

    xs, ws = _rule(n, prec)
    old = flint.ctx.prec
    try:
        flint.ctx.prec = prec + 16
        balls = [(_from_mpf(x), _from_mpf(w)) for x, w in zip(xs, ws)]
        out = tuple(tuple(_to_mpf(w * x.legendre_p(j) * (2 * j + 1) / 2, prec) for x, w in balls)
                    for j in range(n - 1, n - 1 - TAILS, -1))
    finally:
        flint.ctx.prec = old
    _keep("tails", n, prec, out)
    return out


def _seen_decay(c, n: int, scale, rounding):
    r"""The factor :math:`q^n` by which the error of the ``n``-point rule is below :math:`E`
    where the top coefficients :math:`|c_{n-1}|, \dots, |c_{n-4}|` (``c``, in that order) are
    seen to decay geometrically, :math:`|c_j| \approx A q^j`: :math:`r^{n/2}` with :math:`r`
    (for :math:`q^2`) the geometric mean of the two parities' ratios :math:`|c_{n-1}|/|c_{n-3}|`
    and :math:`|c_{n-2}|/|c_{n-4}|` (by parity: an integrand even or odd about the midpoint has
    every other coefficient 0; the mean: one parity's ratio alone is thrown off by a
    coefficient near a zero of the sequence's modulation, both are not), 1 where that is not
    below 1 (no decay seen: the estimate stays :math:`E`). The rounding's level is
    :math:`\delta = n(\varepsilon + 2^{4-p}s)`, :math:`\varepsilon` the piece's rounding
    bound, :math:`p` the working precision in bits, :math:`s` the scale: a parity whose two
    coefficients are both below it is resolved and left out (both: 0), a lower coefficient
    below it counts as :math:`\delta`. The ratio is the decay seen at the top of the
    interpolant: a coefficient sequence with a knee -- a smooth part of scale :math:`s` whose
    coefficients fall fast, plus a feature of amplitude :math:`A \ll s` whose coefficients fall
    slowly, as next to a narrow step -- shows there the feature's rate, which :math:`E/s`
    (:math:`A = s` assumed) does not."""
    if len(c) < TAILS:
        return 1
    floor = n * (rounding + scale * _ulp16(mpmath.mp.prec))
    # (the ratios as floats: one below 1e-308 gives 0, where 2^8 E q^n is negligible anyway)
    ratios = [float(top / (low if low > floor else floor))
              for top, low in ((c[0], c[2]), (c[1], c[3])) if top > floor or low > floor]
    if not ratios:
        return 0
    r = math.sqrt(ratios[0] * ratios[1]) if len(ratios) == 2 else ratios[0]
    return r ** (n // 2) if r < 1 else 1


PLATEAU = 4
"""A piece's top coefficients are on a plateau (``_plateau``) where the largest of them
has shrunk by less than this factor from one level to the next."""


def _plateau(c, below, n: int, scale, rounding) -> bool:
    r"""Whether the top coefficients ``c`` (:math:`|c_{n-1}|, \dots, |c_{n-4}|` of the
    ``n``-point rule) sit on a noise plateau: their largest, :math:`C_n`, is above the rounding
    level :math:`\delta` of :func:`_seen_decay` and has not shrunk by the factor
    :data:`PLATEAU` since the rule of the level below (``below``, :math:`C_{n/2}`; ``None``
    where the piece was not evaluated there: no plateau), :math:`C_n \ge C_{n/2}/4`, while
    the coefficients are far below the piece's scale :math:`s`, :math:`2^8 E < s`
    (:math:`E = 2\max(|c_{n-1}|, |c_{n-2}|)`: where the estimate would be read from them at
    all). A piece not yet resolved -- coefficients of the order of its scale, shrinking slowly
    in the pre-asymptotic regime, e.g. a Gaussian tail piece :math:`[8, 10]` at 16 nodes,
    :math:`C_{16} \approx 0.9s`, :math:`C_8 \approx 2.6s` -- is no plateau: its estimate
    is :math:`E` unsquared and it is refined as before (taken for a plateau, it would send
    the caller to more working precision, which does not resolve it).

    Why it is not an unseen decay. For :math:`f` analytic near the piece the interpolant's
    coefficients are those of :math:`f`, :math:`|c_j| \lesssim A q^j`, folded by aliasing
    (:math:`\tilde c_{n-k} \approx c_{n-k} - c_{n+k} + \dots`): both at :math:`n/2` and at
    :math:`n` of the size :math:`A q^{n}` resp. :math:`A q^{n/2}` or below, so that
    :math:`C_n/C_{n/2} \approx q^{n/2}`: a knee -- a slow component hidden below a fast one at
    the lower level -- makes the ratio larger than the fast rate, never larger than about 1.
    Values :math:`f_i + \epsilon_i` with an evaluation noise :math:`\epsilon_i` (rounding
    amplified by a cancellation inside the integrand, which no ball radius bounds on the
    point-wise path) add :math:`h\sum_i v^{(j)}_i\epsilon_i` to each coefficient, of the size
    :math:`2h\sigma\sqrt{j/n}` for independent :math:`\epsilon_i` of size :math:`\sigma`
    (:math:`\sum_i w_i^2 P_j(x_i)^2 \approx 4/(nj)`): the same at every :math:`n`, a
    plateau, while the rule's own error from the noise is :math:`h\sum_i w_i\epsilon_i`, of
    the size :math:`h\sigma\pi/\sqrt{2n}`, below :math:`2C_n`. On the plateau the
    coefficients' ratios are random, and the squared or extrapolated estimate read from them
    an arbitrary decay (the teacher perceptron's channel integrand at :math:`\alpha =
    10^{-30}`, 126 bits: top coefficients :math:`10^{-23}` of the scale at 32, 64 and 128
    nodes, estimates :math:`10^{-43}` of it). So a piece on a plateau is estimated by the floor
    itself, :math:`\hat e \ge 2C_n` (the error of the rule at most the floor, nothing
    extrapolated below it); where the floor is above the tolerance, no level or bisection helps
    (the noise is per node): :func:`gauss_legendre_fused` reports it (``NotResolved.floor``)
    and the caller raises the working precision (:mod:`replica.symbolic.codegen`). The factor
    is safe for a true decay: a ratio :math:`q^{n/2} \ge 1/4` already gives :math:`q^n \ge
    1/16` and the estimate :math:`E` unsquared; only a ratio read at random off a plateau is
    taken back. A knee whose coefficients appear only at the larger :math:`n` is flat or
    rising: it is estimated by its floor and refined as before, never credited."""
    if below is None:
        return False
    top = max(c)
    floor = n * (rounding + scale * _ulp16(mpmath.mp.prec))
    return top > floor and PLATEAU * top >= below and SAFETY * 2 * max(c[:2]) < scale


SETTLE = 1024
"""``settle`` of :func:`gauss_legendre_fused`: a cell's remembered level is lowered by one
where its top coefficients are at most :math:`1/2^{10}` of its pieces' share of the
tolerance."""

NOISE_DROP = 64
"""A noise floor seen on a piece (``_Piece.noise``: its own plateau's, or half of the piece's
it was cut from) stays a lower bound of its estimate until its top coefficients are below
1/``NOISE_DROP`` of it at two successive levels."""


@functools.lru_cache(maxsize=None)
def _ulp16(prec: int):
    """:math:`2^{4-p}` as an ``mpf``."""
    return mpmath.ldexp(1, 4 - prec)


def _from_mpf(v):
    import flint

    sign, man, exp, _ = v._mpf_
    return flint.arb((-man if sign else man, exp))


def tail_weights(n: int, prec: int | None = None):
    """:func:`_tail_rule` at ``prec`` bits (the working precision by default)."""
    return _tail_rule(n, mpmath.mp.prec if prec is None else prec)


def _to_mpf(b, prec):
    man, exp = b.mid().man_exp()
    with mpmath.workprec(prec):
        return +mpmath.mpf((int(man), int(exp)))


def legendre_rule(n: int, prec: int | None = None):
    """``(nodes, weights)`` of the ``n``-point Gauss--Legendre rule on :math:`[-1, 1]` as
    ``mpf`` at ``prec`` bits (the working precision by default), cached."""
    return _rule(n, mpmath.mp.prec if prec is None else prec)


def gauss_truncation(prec: int | None = None):
    r"""The truncation point :math:`T = \lceil\sqrt{2(p + 30)\log 2}\rceil`, where the normal
    density is below :math:`2^{-p-30}` (``p`` bits, the working precision by default)."""
    p = mpmath.mp.prec if prec is None else prec
    return int(math.ceil(math.sqrt(2 * (p + 30) * math.log(2))))


class _Piece:
    """One piece of the rule for a vector of integrands (``f`` returns one value per member, or
    its ``weighted_sums`` the three lists): the members' values, coarser values (``None`` where
    the estimate is the nested one, from the rule's own nodes), scales and error estimates."""

    __slots__ = ("a", "b", "cell", "level", "value", "coarse", "scale", "est", "f", "rounding",
                 "tails", "trunc", "top", "plateau", "noise")

    def __init__(self, a, b, cell, level, f, noise=None):
        self.a, self.b, self.cell, self.level, self.f = a, b, cell, level, f
        self.coarse = None
        self.top = None  # per member the largest top coefficient of the level below (or None)
        # per member the noise floor this piece (or the piece it was cut from) was seen on, or
        # None (_estimate: kept as a lower bound of the estimate until the coefficients fall
        # well below it, NOISE_DROP)
        self.noise = noise
        self.value, self.scale = self._rule(level)
        if self.tails is None:  # an integrand whose sums give no coefficients: the coarse rule
            self.coarse = self._rule(level - 1)[0]
        self._estimate()

    def _rule(self, level):
        n = level_nodes(level)
        xs, ws = legendre_rule(n)
        m, h = (self.a + self.b) / 2, (self.b - self.a) / 2
        sums = getattr(self.f, "weighted_sums", None)
        if sums is not None:  # the rule's sums computed by the integrand's owner (balls)
            if getattr(self.f, "nested", False):
                vs = tail_weights(n)
                out = sums(m, h, xs, ws, vs)
                if out is not None:
                    value, scale, self.rounding, self.tails = out
                    return value, scale
            else:
                out = sums(m, h, xs, ws)
                if out is not None:
                    value, scale, self.rounding = out
                    self.tails = None
                    return value, scale
        fs = [self.f(m + h * x) for x in xs]
        members = range(len(fs[0]))
        self.rounding = [0] * len(fs[0])
        self.tails = [[h * mpmath.fdot(v, [f[i] for f in fs]) for v in tail_weights(n)]
                      for i in members]
        return ([h * mpmath.fdot(ws, [v[i] for v in fs]) for i in members],
                [h * mpmath.fdot(ws, [abs(v[i]) for v in fs]) for i in members])

    def _estimate(self):
        self.est, self.trunc, self.plateau = [], [], []
        n = level_nodes(self.level)
        if self.noise is None:
            self.noise = [None] * len(self.value)
        for r, (value, scale, rounding) in enumerate(zip(self.value, self.scale,
                                                         self.rounding)):
            flat, below = False, None
            if self.tails is not None:
                c = [abs(t) for t in self.tails[r]]
                E = 2 * max(c[:2])
                below = None if self.top is None else self.top[r]
                flat = _plateau(c, below, n, scale, rounding)
            else:  # no coefficients: no decay seen (_seen_decay 1), the estimate is E
                c, E = (), abs(value - self.coarse[r])
            if not (mpmath.isfinite(value) and mpmath.isfinite(E)):
                raise NotResolved("a non-finite value on a piece")
            if not scale > 0:
                est = E
            else:
                square = E / scale  # the geometric regime: the error about E^2/s
                if SAFETY * square < 1:  # (else est = E anyway)
                    square = max(square, _seen_decay(c, n, scale, rounding))
                est = min(E, SAFETY * E * square)
            if flat:  # a noise plateau: the rule's error is its floor, nothing extrapolated
                est = max(est, 2 * max(c))
                self.noise[r] = 2 * max(c)
            elif self.noise[r] is not None:  # a floor seen before (this piece's, its parent's)
                if c and below is not None and NOISE_DROP * max(c) < self.noise[r] \
                        and NOISE_DROP * below < self.noise[r]:
                    self.noise[r] = None  # two levels well below it: not noise here
                else:
                    flat = True
                    est = max(est, self.noise[r])
            self.plateau.append(flat)
            self.trunc.append(est)
            self.est.append(est + rounding)

    def raise_level(self):
        self.level += 1
        coarse = self.value
        self.top = None if self.tails is None else [max(abs(t) for t in c) for c in self.tails]
        self.value, self.scale = self._rule(self.level)
        self.coarse = coarse if self.tails is None else None
        self._estimate()

    def halves(self):
        mid = (self.a + self.b) / 2
        # a noise floor is per node, its coefficients proportional to the half-width h: each
        # half inherits half of it (the halves restart at 8 nodes, where the noise hides under
        # coefficients still falling -- no level below to compare with)
        noise = [None if f is None else f / 2 for f in self.noise]
        if all(f is None for f in noise):
            noise = None
        return [_Piece(self.a, mid, self.cell, 1, self.f, noise and list(noise)),
                _Piece(mid, self.b, self.cell, 1, self.f, noise and list(noise))]


def gauss_legendre_fused(pieces, rtol, memory=None, start_level: int = 1,
                         max_refinements: int = MAX_REFINEMENTS, hints=None,
                         rounding_floor: bool = False, plateau_exit: bool = False,
                         settle: bool = False):
    r"""``(values, errors, sizes)``, one entry per member, of the integrals
    :math:`\sum_i \int_{a_i}^{b_i} f_i^{(r)}` of a vector of integrands that share their pieces
    and nodes: ``pieces`` a list of ``(a, b, f, cell)`` as for :func:`gauss_legendre_pieces`,
    but ``f(z)`` returns the members' values at ``z`` (a sequence), and its ``weighted_sums``
    (where it has one) three sequences (values, scales, rounding bounds). Each member's
    integrand is evaluated once per node with the others (a fused integrand shares their common
    subexpressions). The error control is per member: the integral is accepted when, for every
    member :math:`r`, the sum over the pieces of its estimate :math:`\hat e^{(r)}` is at most
    ``rtol`` times the sum of its pieces' absolute values :math:`s^{(r)}`; until then the piece
    refined is the one with the largest :math:`\hat e^{(r)}/s^{(r)}` over the members not yet
    accepted (its largest :math:`\hat e` where one member is left, exactly the rule of
    :func:`gauss_legendre_pieces`). Raises :class:`NotResolved` where that is not reached within
    ``max_refinements``.

    ``hints`` (optional; an object with ``get(cell)`` and ``note(levels)``, e.g.
    :class:`LevelHints`): the starting level of a cell that ``memory`` does not hold (the
    integrals' first evaluation) is ``hints.get(cell)`` where that is not ``None``, and the
    accepted levels are noted there. A starting level changes only where the refinement
    starts: every piece is accepted by the same error control.

    ``rounding_floor`` (for a caller that judges the errors itself, as ``partial`` of
    :class:`NotResolved`: a two-dimensional integral's inner ones): a member whose estimate
    without the rounding bounds (the rule's truncation estimate) is at most ``rtol`` times its
    size is not refined further even where its rounding bound keeps its error above that --
    refinement does not lower a rounding bound (the integrand's balls' radii summed with the
    weights, about the same on any rule) -- and the result is returned, its ``errors`` the
    full estimates (rounding included), above ``rtol * sizes`` for such a member: the caller
    must check them.

    ``settle`` (for integrals computed at many different arguments in turn: the inner ones of a
    two-dimensional integral, one per outer node): the level remembered for a cell is one below
    the accepted one where every member's top coefficient there, :math:`C_n`, is at most
    :math:`\tau S/(2^{10} N)` (:math:`\tau` = ``rtol``, :math:`S` the member's size, :math:`N`
    the number of pieces) -- where the rule of the level below would have been accepted on its
    own share: for :math:`|c_j| \approx sq^j` its estimate is :math:`2^8(2C_{n/2})^2/s \approx
    2^{10}C_n`. Without it a cell's remembered level only rises (it is the level accepted, and
    the next evaluation starts there), so the hardest argument met sets the level of every later
    one (the noisy ReLU's inner integrals: 263,000 nodes per map at 15 digits, against 173,000
    started at level 1 each time). A starting level changes only where the refinement starts.

    ``plateau_exit``: :class:`NotResolved` is raised at once, its ``floor`` set, where for every
    member not accepted the pieces on a noise plateau (``_plateau``) alone exceed its
    tolerance -- no refinement lowers a floor set by the integrand's evaluation noise (a level
    raised keeps it, a bisection halves each half's), and the caller that can raise the working
    precision asks for it instead of the :data:`MAX_REFINEMENTS` refinements; without it
    ``floor`` is set only when the refinements are spent."""
    memory = {} if memory is None else memory

    def plateau_floor(failing, sizes):
        """The largest share of the tolerance-exceeding plateau pieces' estimates, or None."""
        worst = None
        for r in failing:
            flat = mpmath.fsum(p.trunc[r] for p in live if p.plateau[r])
            if not flat > rtol * sizes[r]:
                return None
            share = flat / sizes[r] if sizes[r] > 0 else mpmath.inf
            worst = share if worst is None else max(worst, share)
        return worst

    def first(cell):
        level = memory.get(cell)
        if level is None and hints is not None:
            level = hints.get(cell)
        return start_level if level is None else level

    live = [_Piece(a, b, cell, max(1, min(MAX_LEVEL, first(cell))), f)
            for a, b, f, cell in pieces]
    members = range(len(live[0].value))
    for _ in range(max_refinements + 1):
        sizes = [mpmath.fsum(abs(p.value[r]) for p in live) for r in members]
        errors = [mpmath.fsum(p.est[r] for p in live) for r in members]
        failing = [r for r in members if not errors[r] <= rtol * sizes[r]]
        if rounding_floor:  # a member resolved but for its rounding: refinement cannot help
            failing = [r for r in failing
                       if not mpmath.fsum(p.trunc[r] for p in live) <= rtol * sizes[r]]
        if not failing:
            levels: dict = {}
            for p in live:
                level = p.level
                if settle and level > 1 and p.tails is not None and all(
                        SETTLE * max(abs(t) for t in p.tails[r]) <= rtol * sizes[r] / len(live)
                        for r in members):
                    level -= 1  # the level below would have been accepted (``settle``)
                levels[p.cell] = max(levels.get(p.cell, 1), level)
            memory.update(levels)
            if hints is not None:
                hints.note(levels)
            return [mpmath.fsum(p.value[r] for p in live) for r in members], errors, sizes
        if plateau_exit:
            floor = plateau_floor(failing, sizes)
            if floor is not None:
                exc = NotResolved(f"the error estimate {mpmath.nstr(errors[failing[0]], 3)} of "
                                  f"the size {mpmath.nstr(sizes[failing[0]], 3)} is held above "
                                  f"{mpmath.nstr(rtol, 3)} by a noise plateau of "
                                  f"{mpmath.nstr(floor, 3)} of it")
                exc.partial = ([mpmath.fsum(p.value[k] for p in live) for k in members],
                               errors, sizes)
                exc.rounding = [mpmath.fsum(p.rounding[k] for p in live) for k in members]
                exc.floor = floor
                raise exc
        est = [p.trunc if rounding_floor else p.est for p in live]
        if len(failing) == 1:
            r = failing[0]
            worst = max(range(len(live)), key=lambda i: est[i][r])
        else:
            def badness(i):
                return max(est[i][r] / sizes[r] if sizes[r] > 0 else
                           (mpmath.inf if est[i][r] > 0 else 0) for r in failing)
            worst = max(range(len(live)), key=badness)
        p = live[worst]
        if p.level < MAX_LEVEL:
            p.raise_level()
        else:
            live[worst:worst + 1] = p.halves()
    r = failing[0]
    exc = NotResolved(f"the error estimate {mpmath.nstr(errors[r], 3)} stays above "
                      f"{mpmath.nstr(rtol, 3)} of the size {mpmath.nstr(sizes[r], 3)}"
                      + (f" (member {r} of {len(sizes)})" if len(sizes) > 1 else ""))
    exc.partial = ([mpmath.fsum(p.value[k] for p in live) for k in members], errors, sizes)
    exc.rounding = [mpmath.fsum(p.rounding[k] for p in live) for k in members]
    exc.floor = plateau_floor(failing, sizes)
    raise exc


class LevelHints:
    r"""Starting levels for the first evaluation of an integral, from the levels other
    integrals were accepted at (:func:`gauss_legendre_fused`'s ``hints``). The cells are keyed
    ``(prec, *where)`` (the working precision in bits first, as the layouts of
    :mod:`replica.symbolic.codegen` key them); :meth:`get` gives the smallest level noted for
    the cell at that precision, else the smallest noted at the nearest lower precision (a rule
    that resolved an integrand to fewer bits is the cheapest place to start at more: the error
    of the :math:`n`-point rule falls geometrically in :math:`n`, so more bits need the same
    level or higher), else ``None``. The smallest, not the latest: a start below a cell's
    accepted level costs the coarser rules on the way up (at most the cost of the level
    below the accepted one, a third of the accepted pair's), a start above it costs a rule
    twice as long as needed. Bounded: cleared past ``LIMIT`` cells."""

    LIMIT = 100_000

    def __init__(self):
        self._levels: dict = {}  # where -> {prec: smallest accepted level}

    def get(self, cell, lower: bool = True):
        """The level for ``cell`` (see the class); ``lower=False``: only one noted at the
        cell's own precision."""
        if not (isinstance(cell, tuple) and cell and isinstance(cell[0], int)):
            return None
        by_prec = self._levels.get(cell[1:])
        if not by_prec:
            return None
        prec = cell[0]
        if prec in by_prec:
            return by_prec[prec]
        if not lower:
            return None
        lower = [p for p in by_prec if p < prec]
        return by_prec[max(lower)] if lower else None

    def note(self, levels: dict):
        if len(self._levels) > self.LIMIT:
            self._levels.clear()
        for cell, level in levels.items():
            if not (isinstance(cell, tuple) and cell and isinstance(cell[0], int)):
                continue
            by_prec = self._levels.setdefault(cell[1:], {})
            old = by_prec.get(cell[0])
            by_prec[cell[0]] = level if old is None else min(old, level)

    def clear(self):
        self._levels.clear()


class _One:
    """A scalar integrand as a one-member vector for :func:`gauss_legendre_fused`."""

    __slots__ = ("f",)

    def __init__(self, f):
        self.f = f

    def __call__(self, z):
        return [self.f(z)]

    @property
    def weighted_sums(self):
        sums = getattr(self.f, "weighted_sums", None)
        if sums is None:
            return None

        def vector(m, h, xs, ws, *tails):
            out = sums(m, h, xs, ws, *tails)
            if out is None:
                return None
            return tuple([v] for v in out[:3]) + tuple([v] for v in out[3:])
        return vector

    @property
    def nested(self):
        return getattr(self.f, "nested", False)


def gauss_legendre_pieces(pieces, rtol, memory=None, start_level: int = 1,
                          max_refinements: int = MAX_REFINEMENTS, rounding_floor: bool = False):
    r"""``(value, error, size)`` of :math:`\sum_i \int_{a_i}^{b_i} f_i`, for ``pieces`` a list of
    ``(a, b, f, cell)`` (``f`` analytic on :math:`[a, b]`; ``cell`` a key under which the
    accepted level is remembered in the dict ``memory``), by the adaptive rule of the module
    docstring, at the working precision: the summed error estimate ``error`` is at most
    ``rtol * size``, ``size`` the sum of the pieces' absolute values. Raises
    :class:`NotResolved` where that is not reached within ``max_refinements``, its ``partial``
    the ``(value, error, size)`` as they stood (for a caller that can judge the error itself: a
    two-dimensional integral's inner one). (The one-member case of
    :func:`gauss_legendre_fused`, ``rounding_floor`` as there.)"""
    try:
        values, errors, sizes = gauss_legendre_fused([(a, b, _One(f), cell)
                                                      for a, b, f, cell in pieces],
                                                     rtol, memory, start_level, max_refinements,
                                                     rounding_floor=rounding_floor)
    except NotResolved as exc:
        if exc.partial is not None:
            exc.partial = tuple(x[0] for x in exc.partial)
        raise
    return values[0], errors[0], sizes[0]
