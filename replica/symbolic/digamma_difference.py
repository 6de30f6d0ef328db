r"""The digamma difference :math:`D_n(z) = \psi^{(n)}(1 + z) - \psi^{(n)}(\tfrac12 + z)` at any
precision, in ball arithmetic and in float64: the numerics behind
``replica.symbolic.gaussian.digamma_difference`` in generated code
(:mod:`replica.symbolic.codegen`). Real phase retrieval's radial average
:math:`G(a) = 2a + \log 2 - \tfrac12D_0(1/(8a))` (``replica.glm.builders._psi_out_abs``) is
evaluated at every quadrature node with its derivatives :math:`D_1, D_2`; as one function the
difference costs one evaluation instead of two, and it keeps its relative precision where the
two digamma values nearly cancel (:math:`D_0(z) \approx 1/(2z)` against
:math:`\psi \approx \log z`).

**Representations** (:math:`y = z + \tfrac12`, :math:`z > -\tfrac12`):

* *the asymptotic series of the difference.* By Legendre's duplication formula
  :math:`\psi(2y) = \tfrac12\psi(y) + \tfrac12\psi(y + \tfrac12) + \log 2`,
  :math:`D_0 = 2\psi(2y) - 2\psi(y) - 2\log 2`, and with
  :math:`\psi(x) = \log x - \tfrac1{2x} - \sum_{k=1}^K\frac{B_{2k}}{2kx^{2k}} + R_K(x)`,

  .. math::
      D_0(z) = \frac1{2y} + \sum_{k=1}^K\frac{(1 - 4^{-k})B_{2k}}{k\,y^{2k}} + E_K,\qquad
      D_n(z) = (-1)^n y^{-n}\Big[\frac{n!}{2y} + \sum_{k=1}^K\frac{(1 - 4^{-k})B_{2k}}{k}
      (2k)_n\,y^{-2k}\Big] + E_{K,n}

  (the :math:`n`-th derivative termwise; :math:`(2k)_n` the rising factorial). The remainder
  is :math:`E_{K,n} = 2^{n+1}R^{(n)}_K(2y) - 2R^{(n)}_K(y)`; for real :math:`x > 0` the
  remainder :math:`R^{(n)}_K(x)` of the series of :math:`\psi^{(n)}` lies between 0 and the
  first omitted term (:math:`n = 0`: DLMF 5.11(ii); :math:`n \ge 1`: Alzer, Math. Comp. 66
  (1997), the complete monotonicity of the remainders), so the two have one sign and

  .. math::
      |E_{K,n}| \le \max\big(2^{n+1}T(2y), 2T(y)\big) = 2T(y),\qquad
      T(x) = \frac{|B_{2K+2}|\,(2K + n + 1)!}{(2K + 2)!\,x^{2K+n+2}}.

  Used where at most ``MAX_TERMS`` terms bring :math:`2T(y_-)` below :math:`2^{-p-4}` of the
  leading term (:math:`y \gtrsim 28` at 196 bits); the sum is a polynomial in :math:`1/y^2`
  evaluated by Arb (``arb_poly``) on the ball, the bound taken at the ball's lower end
  :math:`y_-` and added to the radius.
* *Taylor series about fixed centres.* :math:`D_0(c + t) = \sum_k d_kt^k` with
  :math:`d_k = D_k(c)/k!`; for :math:`k \ge 1`, :math:`d_k = (-1)^{k+1}[\zeta(k + 1, 1 + c) -
  \zeta(k + 1, \tfrac12 + c)]` (Hurwitz), a difference of two positive terms of which the
  second is larger, so with :math:`a = c + \tfrac12`

  .. math::
      |d_k| \le \zeta(k + 1, a) \le a^{-k-1} + \int_a^\infty u^{-k-1}\,du
      = a^{-k-1}(1 + a/k),

  and the :math:`n`-th derivative of the series truncated after :math:`L` terms, at
  :math:`|t| \le \rho a`, is off by at most
  :math:`\sum_{k\ge L}k^{\underline n}|d_k|(\rho a)^{k-n} \le L^{\underline n}(1 + a/L)
  a^{-1-n}\rho^{L-n}/(1 - g)`, :math:`g = \rho(L + 1)/(L + 1 - n)` (each term at most
  :math:`g` times the one before). The centres are :math:`a_j = \tfrac12 2^{j/8}` (rounded
  to 24 bits; :math:`c_j = a_j - \tfrac12` exact), :math:`\rho` = ``RHO`` = 1/16 (the
  neighbouring discs overlap), the coefficients from Arb's ``lgamma`` power series at
  :math:`1 + c` and :math:`\tfrac12 + c` (differentiated: the series of :math:`\psi`) at the
  precision plus ``GUARD`` bits (and :math:`L\log_2(\rho a)` more where :math:`\rho a > 1`: the
  coefficients' radii are on the scale of the first ones), computed once per centre and
  precision; the polynomial is
  evaluated by Arb on the ball :math:`t = z - c` (every point of it: an enclosure) and the
  bound added to the radius.
* *the hull of the values at the ends* on a finite ball right of :math:`-\tfrac12` that no
  series takes whole (:math:`D_n` is monotone there: :func:`hull_ball`);
* *Arb's functions* elsewhere (a ball that is not finite or reaches :math:`z \le -\tfrac12`,
  and the ends of a hull that no series takes): :math:`\psi(1 + z) - \psi(\tfrac12 + z)`
  by ``arb.digamma`` and :math:`D_n = (-1)^{n+1}n!\,[\zeta(n + 1, 1 + z) - \zeta(n + 1,
  \tfrac12 + z)]` by ``arb.zeta``.

The balls are remembered per (order, precision, midpoint, radius), up to ``MEMO_SIZE``
entries. At mpmath's working precision (:func:`digamma_difference_mp`) the two polygamma
values are taken at enough further bits to cover their cancellation; in float64
(:func:`digamma_difference_np`) SciPy's two values and their difference, as before.
"""

from __future__ import annotations

import bisect
import functools
import math

import mpmath

from .balls import _arb, arb_of, ball_key

MAX_TERMS = 40
"""The most terms of the asymptotic series before the Taylor series (or Arb) is used."""

RHO = 1 / 16
"""The largest :math:`|t|/a` at which a Taylor centre is used."""

CENTRES_PER_OCTAVE = 8
"""The centres :math:`a_j = \\tfrac12 2^{j/8}` (eight per doubling of :math:`a`)."""

GUARD = 20
"""Further bits of the Taylor coefficients."""

MEMO_SIZE = 1 << 16

_MEMO: dict = {}


def _prec() -> int:
    import flint

    return flint.ctx.prec


def digamma_difference_ball(n, z):
    r""":math:`D_n(z)` (the module's docstring) for an integer order :math:`n \ge 0` and a ball
    ``z``: the asymptotic series, a Taylor series or Arb's functions, whichever applies first;
    remembered per (order, precision, midpoint, radius)."""
    arb = _arb()
    n = int(n)
    z = z if type(z) is arb else arb_of(z)
    prec = _prec()
    key = (n, prec, *ball_key(z))
    got = _MEMO.get(key)
    if got is not None:
        return got
    got = asymptotic_ball(n, z, prec=prec)
    if got is None:
        got = taylor_ball(n, z, prec=prec)
    if got is None:
        got = hull_ball(n, z, prec)
    if got is None:
        got = arb_ball(n, z)
    if len(_MEMO) >= MEMO_SIZE:
        _MEMO.clear()
    _MEMO[key] = got
    return got


def hull_ball(n: int, z, prec=None):
    r"""An enclosure of :math:`D_n` on a finite ball ``z`` right of :math:`-\tfrac12` that no
    series takes whole (a ball wider than a Taylor disc): :math:`D_n` is monotone there
    (:math:`D_{n+1}` has the constant sign :math:`(-1)^{n+1}`: each term of
    :math:`D_{n+1}(z) = (-1)^n(n + 1)!\sum_k[(k + \tfrac12 + z)^{-n-2} - (k + 1 +
    z)^{-n-2}]` has it), so its values on the ball lie between those at the ball's ends,
    each enclosed by a series (or Arb) on a ball holding that end; ``None`` elsewhere."""
    arb = _arb()
    if prec is None:
        prec = _prec()
    if not z.is_finite() or not z.lower() > -arb(1) / 2:
        return None
    mid, rad = z.mid(), z.rad()
    ends = []
    for e in (mid - rad, mid + rad):  # (balls holding the exact ends)
        got = asymptotic_ball(n, e, prec=prec)
        if got is None:
            got = taylor_ball(n, e, prec=prec)
        if got is None:
            got = arb_ball(n, e)
        ends.append(got)
    return ends[0].union(ends[1])


def arb_ball(n: int, z):
    r""":math:`D_n(z)` from Arb's digamma (:math:`n = 0`) or Hurwitz zeta (:math:`n \ge 1`): the
    fallback, and the definition the other forms are tested against."""
    arb = _arb()
    half = arb(1) / 2
    if n == 0:
        return (z + 1).digamma() - (z + half).digamma()
    s = arb(n + 1)
    return (-1) ** (n + 1) * math.factorial(n) * (s.zeta(z + 1) - s.zeta(z + half))


@functools.lru_cache(maxsize=16)
def _asymptotic_coefficients(n: int):
    r"""The exact coefficients :math:`e_k = (1 - 4^{-k})B_{2k}(2k)_n/k`, :math:`k = 1, \dots,`
    ``MAX_TERMS``, as ``(p, q)`` pairs; the exact bound factors
    :math:`2|B_{2K+2}|(2K + n + 1)!/(2K + 2)!` for :math:`K = 1, \dots,` ``MAX_TERMS`` (same
    form); and :math:`\log_2` of the bound factors (floats: to choose :math:`K` only)."""
    coeffs, bounds, logs = [], [], []
    for k in range(1, MAX_TERMS + 1):
        p, q = mpmath.bernfrac(2 * k)
        p *= (4 ** k - 1) * math.factorial(2 * k + n - 1)
        q *= 4 ** k * k * math.factorial(2 * k - 1)
        g = math.gcd(p, q)
        coeffs.append((p // g, q // g))
        bp, bq = mpmath.bernfrac(2 * k + 2)
        bp = 2 * abs(bp) * math.factorial(2 * k + n + 1)
        bq *= math.factorial(2 * k + 2)
        g = math.gcd(bp, bq)
        bounds.append((bp // g, bq // g))
        logs.append(math.log2(bp) - math.log2(bq))
    return tuple(coeffs), tuple(bounds), tuple(logs)


@functools.lru_cache(maxsize=64)
def _asymptotic_poly(n: int, prec: int):
    """The ``arb_poly`` :math:`\\sum_k e_kx^{k-1}` of :func:`_asymptotic_coefficients` at
    ``prec`` bits (each coefficient one rounding), for each number of terms (a tuple)."""
    import flint

    arb = _arb()
    old = flint.ctx.prec
    try:
        flint.ctx.prec = prec
        c = [arb(p) / q for p, q in _asymptotic_coefficients(n)[0]]
        return tuple(flint.arb_poly(c[:K]) for K in range(0, MAX_TERMS + 1))
    finally:
        flint.ctx.prec = old


@functools.lru_cache(maxsize=64)
def _least_log2_y(n: int, prec: int):
    r"""For :math:`K = 1, \dots,` ``MAX_TERMS``: the least :math:`\log_2y` at which some
    :math:`K' \le K` terms bring the bound of :func:`asymptotic_ball` below :math:`2^{-p-4}`
    of the leading term :math:`n!/(2y^{n+1})` (a non-increasing list: the least :math:`K`
    with :math:`\log_2y` at least its entry is the least that suffices)."""
    logs = _asymptotic_coefficients(n)[2]
    target = -(prec + 4) + math.log2(math.factorial(n) / 2)
    out, best = [], math.inf
    for K in range(1, MAX_TERMS + 1):
        best = min(best, (logs[K - 1] - target) / (2 * K + 1))
        out.append(best)
    return tuple(out)


def asymptotic_ball(n: int, z, terms=None, prec=None, tail_scale=1):
    r"""An enclosure of :math:`D_n(t)` for every :math:`t` in the ball ``z`` by the asymptotic
    series (the module's docstring), with ``terms`` (:math:`K`) or the least
    :math:`K \le` ``MAX_TERMS`` whose bound at the ball's lower end is below :math:`2^{-p-4}`
    times the leading term; ``None`` where there is none (or the ball reaches
    :math:`y \le 1`). ``tail_scale`` multiplies the bound (tests only: a bound too small must
    show)."""
    arb = _arb()
    if prec is None:
        prec = _prec()
    if not z.is_finite():
        return None
    y = z + arb(1) / 2
    lo = y.lower()
    if not lo > 1:
        return None
    bounds = _asymptotic_coefficients(n)[1]
    if terms is None:
        ly = math.log2(float(lo.mid()))  # (rounded: the choice of K only, not the bound)
        least = _least_log2_y(n, prec)
        if not ly >= least[-1]:  # (NaN, or too near 0 for MAX_TERMS terms)
            return None
        terms = bisect.bisect_left(least, -ly, key=lambda v: -v) + 1
    inv = 1 / y
    u = inv * inv
    s = (_asymptotic_poly(n, prec)[terms](u) * u + arb(math.factorial(n)) / 2 * inv) * inv ** n
    p, q = bounds[terms - 1]
    tail = (arb(p) / q * (1 / lo) ** (2 * terms + n + 2)).abs_upper() * tail_scale
    s = s + arb(0, tail)
    return s if n % 2 == 0 else -s


def _centre(j: int) -> float:
    """:math:`a_j = \\tfrac12 2^{j/8}` rounded to 24 bits (an exact binary number, as is
    :math:`a_j - \\tfrac12`)."""
    a = 0.5 * 2.0 ** (j / CENTRES_PER_OCTAVE)
    e = math.frexp(a)[1]
    return math.ldexp(round(math.ldexp(a, 24 - e)), e - 24)


TABLE_BITS = 196
"""The Taylor coefficients are computed once per centre at ``max(p, TABLE_BITS) + GUARD`` bits
and serve every precision up to that (each its own number of terms)."""


def _terms(prec: int, n: int, a: float) -> int:
    r"""The number of Taylor terms :math:`L` at ``prec`` bits for :math:`D_n` about
    :math:`a_j = a`: :math:`\rho^{L-n}` below :math:`2^{-p-8-8n}/(1 + a)` (the bound of the
    module's docstring is then below :math:`2^{-p-4}` of :math:`|D_n|`)."""
    return int(math.ceil((prec + 8 + n * 8 + math.log2(1 + a)) / -math.log2(RHO))) + n


@functools.lru_cache(maxsize=512)
def _taylor_series(j: int, bits: int):
    r"""The Taylor coefficients :math:`d_k` of :math:`D_0(c_j + t)` about the centre :math:`j`
    (``_terms(bits, 3, a_j)`` of them): Arb's ``lgamma`` power series of
    :math:`\log\Gamma(1 + c + t) - \log\Gamma(\tfrac12 + c + t)`, differentiated, at
    ``bits + GUARD`` bits and :math:`L\log_2(\rho a_j)` more where :math:`\rho a_j > 1` (the
    coefficients' radii are on the scale of the first ones, and the powers of :math:`|t|` up
    to :math:`(\rho a_j)^L` multiply them)."""
    import flint

    arb = _arb()
    a_f = _centre(j)
    c = arb(a_f - 0.5)  # (exact: a_j has 24 bits and a_j >= 1/2)
    L = _terms(bits, 3, a_f)
    work = bits + GUARD + int(math.ceil(L * max(0.0, math.log2(RHO * a_f))))
    old, old_cap = flint.ctx.prec, flint.ctx.cap
    try:
        flint.ctx.prec, flint.ctx.cap = work, L + 2  # (a series is cut at ctx.cap terms)
        s1 = flint.arb_series([c + 1, 1], prec=L + 2).lgamma()
        s2 = flint.arb_series([c + arb(1) / 2, 1], prec=L + 2).lgamma()
        d = (s1 - s2).derivative().coeffs()[:L]
    finally:
        flint.ctx.prec, flint.ctx.cap = old, old_cap
    if len(d) != L:  # pragma: no cover - (a series shorter than asked: no bound)
        raise ArithmeticError(f"the Taylor series of the digamma difference has {len(d)} "
                              f"terms, not {L}")
    return tuple(d)


@functools.lru_cache(maxsize=2048)
def _taylor_table(j: int, prec: int, n: int, terms=None):
    r"""For the centre :math:`j` at ``prec`` bits and the order :math:`n`: ``(c, r, poly,
    tail)`` -- the centre (a ball, exact), the disc radius :math:`r = \rho a_j`, the
    ``arb_poly`` :math:`\sum_{n \le k < L}k^{\underline n}d_kt^{k-n}` (the truncated series
    of :math:`D_n(c + t)`), and the bound on the rest at :math:`|t| \le r` (the module's
    docstring). ``terms``: :math:`L` (tests only; by default ``_terms``)."""
    import flint

    arb = _arb()
    a_f = _centre(j)
    a = arb(a_f)
    L = _terms(prec, n, a_f) if terms is None else terms
    poly = flint.arb_poly(list(_taylor_series(j, max(prec, TABLE_BITS))[:L]))
    for _ in range(n):
        poly = poly.derivative()
    rho = arb(RHO)
    falling = arb(1)
    for i in range(n):
        falling *= L - i
    g = rho * (L + 1) / (L + 1 - n)
    tail = (falling * (1 + a / L) * a ** (-1 - n) * rho ** (L - n) / (1 - g)).abs_upper()
    return arb(a_f - 0.5), RHO * a_f, poly, tail


def taylor_ball(n: int, z, prec=None, tail_scale=1, terms=None):
    r"""An enclosure of :math:`D_n(t)` for every :math:`t` in the ball ``z`` by the Taylor
    series about the nearest centre whose disc :math:`|t - c_j| \le \rho a_j` holds the ball
    (the module's docstring); ``None`` where none does. ``tail_scale``: as in
    :func:`asymptotic_ball`; ``terms``: the number of terms (tests only)."""
    arb = _arb()
    if prec is None:
        prec = _prec()
    if not z.is_finite():
        return None
    y = float(z.mid()) + 0.5
    if not y >= 0.5 * (1 - RHO) or not math.isfinite(y):
        return None
    j0 = max(0, round(CENTRES_PER_OCTAVE * math.log2(2 * y)))
    for j in (j0, j0 - 1, j0 + 1):
        if j < 0:
            continue
        c, r, poly, tail = _taylor_table(j, prec, n, terms)
        t = z - c
        if t.abs_upper() <= r:
            return poly(t) + arb(0, tail * tail_scale)
    return None


def digamma_difference_mp(n, z):
    r""":math:`D_n(z)` at mpmath's working precision :math:`p`: for real :math:`y = z +
    \tfrac12` far enough out that at most ``MAX_TERMS`` terms of the asymptotic series reach
    :math:`2^{-p-4}` (as :func:`asymptotic_ball`), that series at :math:`p + 10` bits;
    elsewhere ``mpmath.polygamma`` at both points with enough further bits for their
    cancellation (:math:`\log_2(2y\log y) + 20`, at most :math:`p + 64`)."""
    n = int(n)
    prec = mpmath.mp.prec
    half = mpmath.mpf(1) / 2
    if isinstance(z, mpmath.mpf) and mpmath.isfinite(z) and z + half > 1:
        y = z + half
        ly = float(mpmath.log(y, 2))
        least = _least_log2_y(n, prec)
        if ly >= least[-1]:
            terms = bisect.bisect_left(least, -ly, key=lambda v: -v) + 1
            with mpmath.extraprec(10):
                u = 1 / (y * y)
                acc = mpmath.mpf(0)
                for p, q in _asymptotic_coefficients(n)[0][terms - 1::-1]:
                    acc = acc * u + mpmath.mpf(p) / q
                out = (acc * u + mpmath.factorial(n) / (2 * y)) / y ** n
            return +out if n % 2 == 0 else -out
    y = abs(z + half)
    extra = 20 + (int(mpmath.log(2 * y * max(1, mpmath.log(y)), 2)) + 1 if y > 2 else 0)
    with mpmath.extraprec(min(extra, prec + 64)):
        out = mpmath.polygamma(n, z + 1) - mpmath.polygamma(n, z + half)
    return +out


def digamma_difference_np(n, z):
    r""":math:`D_n(z)` in float64 (NumPy arrays or scalars): SciPy's ``psi`` (:math:`n = 0`) or
    ``polygamma`` at both points and their difference -- what the generated code computed
    before this function (two ``polygamma`` calls), so that float64 curves are unchanged. (Its
    relative error grows like :math:`2y\log y` units in the last place, :math:`y = z +
    \tfrac12`; the asymptotic series of the module's docstring would keep 16 digits at large
    :math:`z`, but it changed the float64 iteration at a non-converging point of phase
    retrieval's curve above :math:`\alpha_{\rm alg}` (inadmissible -> max-iterations, +0.7 s
    of the curve), so it is not used here.)"""
    import numpy as np
    from scipy import special

    n = int(n)
    with np.errstate(all="ignore"):
        if n == 0:
            return special.psi(z + 1) - special.psi(z + 0.5)
        return special.polygamma(n, z + 1) - special.polygamma(n, z + 0.5)
