r"""Owen's :math:`T` function and its complement at any precision, and the complement in float64:
the numerics behind ``replica.symbolic.gaussian.owens_t`` and ``owens_u`` in generated code
(:mod:`replica.symbolic.codegen`).

.. math::
    T(h, a) = \frac1{2\pi}\int_0^a\frac{e^{-h^2(1 + x^2)/2}}{1 + x^2}\,dx,\qquad
    U(h, a) = \tfrac14\operatorname{erfc}\frac h{\sqrt2} - T(h, a)
            = \frac1{2\pi}\int_a^\infty\frac{e^{-h^2(1 + x^2)/2}}{1 + x^2}\,dx\quad(h \ge 0),

the last equality because :math:`T(h, \infty) = \tfrac14\operatorname{erfc}(|h|/\sqrt2)` (the
integral of :math:`e^{-h^2(1 + x^2)/2}` over the quarter plane in polar form). Both
integrands are positive, so no form below cancels (the difference form of :math:`U` is used
only where its terms are within a few digits of it, at extra precision). :math:`T` is even in
:math:`h` and odd in :math:`a`.

**The forms** (:math:`h \ge 0`, :math:`a > 0`), each a finite interval with an analytic
integrand, integrated by Gauss--Legendre rules (nodes from python-flint's
``arb.legendre_p_root``, sums in ``arb`` at the working precision plus :data:`GUARD` bits) on
geometric panels :math:`[0, 2w], [2w, 4w], \dots` with :math:`w` the poles' distance from the
real axis (one panel where the interval is at most :math:`2w`: the committee machine's
:math:`a \le 2`):

* :math:`T = \frac{e^{-h^2/2}}{2\pi}\int_0^a\frac{e^{-h^2x^2/2}}{1 + x^2}dx` for :math:`h \le 1`
  (poles at :math:`\pm i`);
* :math:`T = \frac{e^{-h^2/2}}{2\pi h}\int_0^{\min(ah, L)}\frac{e^{-u^2/2}}{1 + u^2/h^2}du`
  for :math:`h > 1` (:math:`x = u/h`; poles at :math:`\pm ih`), :math:`L` with
  :math:`e^{-L^2/2}/L \le 2^{-p-8}` at :math:`p` bits: the neglected
  :math:`\int_L^\infty` is below that relative to the integral (which exceeds
  :math:`\int_0^1e^{-u^2/2}du/2 > 0.4` when :math:`ah \ge L`);
* :math:`U = \frac{e^{-h^2(1 + a^2)/2}}{2\pi h}\int_0^V\frac{e^{-ahv - v^2/2}}{1 + (a +
  v/h)^2}dv` for :math:`h > 2` or :math:`ah > 4` (:math:`u = ah + v`; poles at distance
  :math:`h` from the real axis), :math:`V` the root of
  :math:`ahV + V^2/2 = (p + 8)\log 2` (the neglected part is below :math:`2^{-p-8}` of the
  integral);
* :math:`U = \tfrac14\operatorname{erfc}(h/\sqrt2) - T` for :math:`h \le 2` and
  :math:`ah \le 4` (also :math:`h < 0`, where :math:`U \ge 1/4 - T(0, a)` has no cancellation), at
  :math:`\lceil h^2a^2\log_2e/2\rceil + 10` further bits (:math:`U/T(h, \infty) \ge
  e^{-h^2a^2/2}/5` there).

**The error control**: the rule with :math:`n` nodes is accepted when its difference
:math:`d` from the rule with :math:`n/2` nodes, or :math:`2^8d^2/|G_n|`, is at most
:math:`2^{-p}|G_n|` (Gauss--Legendre converges geometrically here, so the error of the finer
rule is about :math:`d^2/|G_n|`: the estimate of :mod:`replica.symbolic.quadrature`, with its
factor :math:`2^8`); :math:`n` starts at the last accepted count of the same form and
precision (at least 16), doubles up to
:data:`MAX_NODES`, else :class:`~replica.symbolic.quadrature.QuadratureError` is raised (the caller's
refusal). The float64 :math:`U` (:func:`owens_u_np`) is SciPy's ``owens_t`` in the difference
form for :math:`h \le 1` and a fixed 48-node rule of the tail form above (both measured against
the mpmath form in ``tests/test_owen.py``).

**In ball arithmetic** (:func:`owens_t_ball`, :func:`owens_u_ball`: what generated real-ball
code calls, the integrands of the mpmath quadrature's fast path among them), every truncation
bounded and added to the radius, for balls :math:`h`, :math:`a` (:math:`s = h^2/2`,
:math:`S = \sup sa^2`):

* :math:`S \le` :data:`SERIES_MAX`: :math:`T = \frac{e^{-s}}{2\pi}\sum_k\frac{(-s)^k}{k!}
  m_k(a)`, :math:`m_k = \int_0^ax^{2k}/(1 + x^2)dx` (expand :math:`e^{-sx^2}` under the
  integral; :math:`m_0 = \arctan a`, :math:`m_k = a^{2k-1}/(2k - 1) - m_{k-1}`), the terms
  from :math:`N > S` on bounded by :math:`|a|S^N/(N!(2N + 1))/(1 - S/(N + 1))`, summed at
  :math:`S\log_2e` further bits (their cancellation); :math:`U` as the difference at twice
  those;
* beyond: :math:`U = \frac{e^{-s(1 + a^2)}}{2\pi}\int_0^\infty\frac{e^{-2sav -
  sv^2}}{1 + (a + v)^2}dv` (:math:`h, a > 0`) by python-flint's rigorous ``acb.integral`` on
  :math:`[0, V]` and :math:`\int_V^\infty \le e^{-2saV - sV^2}/((1 + (a + V)^2)2s(a +
  V))`; :math:`T = \tfrac14\operatorname{erfc}(h/\sqrt2) - U`.

These forms are evaluated at *point* balls only: for balls with a radius, :math:`h = h_0 \pm
r`, :math:`a = a_0 \pm \rho` (the quadrature's nodes and the order parameters carry their
rounding), the value is the mean-value enclosure :math:`T(h_0, a_0) \pm (r\sup|\partial_hT| +
\rho\sup|\partial_aT|)` over the box (``_mean_value``; :math:`\partial_hT = -\varphi(h)(\Phi(ah) -
\tfrac12)`, :math:`\partial_aT = e^{-h^2(1 + a^2)/2}/(2\pi(1 + a^2))`, :math:`\partial_hU =
-\varphi(h)\Phi(-ah)`, :math:`\partial_aU = -\partial_aT`, bounded in ``_derivative_bounds``),
likewise for :math:`U`: the series evaluated at a ball :math:`s` would widen by about
:math:`e^{S}` (its Horner sum of the terms' absolute values), and :math:`U`'s difference lose as
many bits again (up to 145 of 196 in the committee's 30-digit solve before).

Where an integrand names :math:`T(h, a)` and :math:`U(h, a)` (the committee's channel), both
come from one evaluation: within the series, :math:`T` is taken (rounded) from the
higher-precision sum of :math:`U`'s difference form; beyond, :math:`T = \tfrac14
\operatorname{erfc} - U` with :math:`U` from the memo (one tail integral for both).

There is no complex-ball version (``acb``): ``--certify`` refuses an integrand with
:math:`T`.
"""

from __future__ import annotations

import itertools
import math

import mpmath

__all__ = ["owens_t_mp", "owens_u_mp", "owens_u_np", "owens_t_ball", "owens_u_ball", "GUARD",
           "MAX_NODES", "SAFETY", "MEMO", "SERIES_MAX"]

GUARD = 24
"""Guard bits of the ball sums."""

MAX_NODES = 1024
"""The most nodes of one rule before the evaluation is refused."""

SAFETY = 256
"""The factor of the squared estimate (as ``replica.symbolic.quadrature.SAFETY``)."""

MEMO = 16384
"""Values remembered (keyed on the arguments' binary values, the function and the precision):
an integrand and its derivatives name the same :math:`T(h, a)` several times."""

_RULES: dict = {}
_START: dict = {}
_MEMO: dict = {}


def _rule(n: int, prec: int):
    """``(x, w)``: the ``n``-point Gauss--Legendre rule on :math:`[0, 1]` as ``arb`` lists at
    ``prec`` bits (cached)."""
    key = (n, prec)
    hit = _RULES.get(key)
    if hit is None:
        from .quadrature import legendre_balls

        hit = _RULES[key] = legendre_balls(n, prec, lambda x: ((x + 1) / 2).mid(),
                                           lambda w: (w / 2).mid())
    return hit


def _integral(f, length, prec: int, form: str, width=None):
    r""":math:`\int_0^{\rm length}f` on the geometric panels :math:`[0, 2w]`, :math:`[2w, 4w]`,
    :math:`[4w, 8w]`, ... (``width`` :math:`w`: the distance of the integrand's poles from the
    real axis; each panel then lies inside a Bernstein ellipse of parameter :math:`\ge 2.4`
    free of them), each by ``_panel``; one panel where ``width`` is ``None``."""
    if width is None or length <= 2 * width:
        return _panel(f, 0 * length, length, prec, form)
    total, lo, k = 0 * length, 0 * length, 0
    hi = 2 * width
    while True:
        last = not (hi < length)
        top = length if last else hi
        total += _panel(f, lo, top - lo, prec, f"{form}{k}")
        if last:
            return total
        lo, hi, k = hi, 2 * hi, k + 1


def _panel(f, lo, length, prec: int, form: str):
    r""":math:`\int_0^{\rm length}f`: the Gauss--Legendre rules with :math:`n` and :math:`n/2`
    nodes until they agree to :math:`2^{-{\rm prec}}` (module docstring). ``f`` maps an ``arb``
    node to an ``arb`` value; ``length`` is an ``arb``; flint's precision is set by the
    caller."""
    import flint

    from .quadrature import QuadratureError

    key = (form, prec)
    n = _START.get(key, 16)
    tol = flint.arb((1, -prec))
    coarse = _rule_sum(f, lo, length, n // 2, prec)
    while n <= MAX_NODES:
        fine = _rule_sum(f, lo, length, n, prec)
        diff = abs(fine - coarse).upper()
        size = abs(fine).lower()
        if diff <= tol * size or diff * diff * SAFETY <= tol * size * size:
            _START[key] = n
            return fine
        coarse, n = fine, 2 * n
    raise QuadratureError(f"Owen's T: the {form} form's Gauss-Legendre rules do not agree at "
                          f"{MAX_NODES} nodes", tried=f"Gauss-Legendre with up to {MAX_NODES} "
                          f"nodes at {prec} bits")


def _rule_sum(f, lo, length, n: int, prec: int):
    xs, ws = _rule(n, prec)
    total = 0 * length
    for x, w in zip(xs, ws):
        total += w * f(lo + length * x)
    return total * length


def _cutoff(prec: int):
    """:math:`L` with :math:`e^{-L^2/2}/L \\le 2^{-p-8}`: :math:`\\sqrt{2(p + 8)\\log 2}`
    (:math:`L > 1`)."""
    return math.sqrt(2 * (prec + 8) * math.log(2)) + 1


def _t_arb(h, a, prec: int):
    """:math:`T(h, a)` for ``arb`` :math:`h \\ge 0`, :math:`a > 0` (module docstring), at
    ``prec`` bits."""
    import flint

    arb = flint.arb
    two_pi = 2 * arb.pi()
    if h <= 1:
        h2 = h * h / 2
        return (-h2).exp() / two_pi * _integral(
            lambda x: (-h2 * x * x).exp() / (1 + x * x), a, prec, "T-x", arb(1))
    upper = a * h
    cut = arb(_cutoff(prec))
    if upper > cut:
        upper = cut
    ih2 = 1 / (h * h)
    return (-h * h / 2).exp() / (two_pi * h) * _integral(
        lambda u: (-u * u / 2).exp() / (1 + u * u * ih2), upper, prec, "T-u", h)


def _u_tail_arb(h, a, prec: int):
    """:math:`U(h, a)` for ``arb`` :math:`h > 2`, :math:`a > 0` by the tail form."""
    import flint

    arb = flint.arb
    ah = a * h
    c = (prec + 8) * arb(2).log()
    V = 2 * c / (ah + (ah * ah + 2 * c).sqrt())  # (the root, without a difference)
    ih = 1 / h
    return ((-h * h * (1 + a * a) / 2).exp() / (2 * arb.pi() * h)) * _integral(
        lambda v: (-ah * v - v * v / 2).exp() / (1 + (a + v * ih) ** 2), V, prec, "U-tail", h)


def _special(h, a, which: str):
    r""":math:`T(h, a)` (``which == "T"``) or :math:`U(h, a)` (``"U"``) at the working
    precision of mpmath, as an ``mpf`` (remembered: :data:`MEMO`)."""
    h, a = mpmath.mpf(h), mpmath.mpf(a)
    key = (which, h._mpf_, a._mpf_, mpmath.mp.prec)
    hit = _MEMO.get(key)
    if hit is not None:
        return hit
    out = _evaluate(h, a, which)
    if len(_MEMO) >= MEMO:
        _MEMO.clear()
    _MEMO[key] = out
    return out


def _evaluate(h, a, which: str):
    import flint

    from .quadrature import QuadratureError

    if not (mpmath.isfinite(h) and mpmath.isfinite(a)):
        raise QuadratureError(f"Owen's {which}({h}, {a}): an argument is not finite")
    sign = 1
    if which == "T":
        if a < 0:
            a, sign = -a, -1
        if a == 0:
            return mpmath.mpf(0)
        h = abs(h)
    elif a <= 0:
        raise QuadratureError(f"Owen's U({mpmath.nstr(h, 5)}, {mpmath.nstr(a, 5)}): a must be "
                              "positive")
    prec = mpmath.mp.prec
    old = flint.ctx.prec
    # e^{-h^2(1 + a^2)/2}: an exponent M known to p bits is a factor e^{M 2^-p} uncertain, so
    # the balls carry log2 M further bits (mpmath's exp does the same); the result is checked
    # to have prec relative bits below
    big = h * h * (1 + a * a)
    scale = max(0, int(mpmath.floor(mpmath.log(big, 2))) + 2) if big > 1 else 0
    try:
        if which == "U" and (h <= 0 or h <= 2 and a * h <= 4):  # the difference form, at
            # the bits its terms cancel
            extra = int(math.ceil(float(h * h * a * a) * 0.7213475204444817)) + 10 \
                if h > 0 else 10
            flint.ctx.prec = prec + GUARD + extra + scale
            hb, ab = _ball(h), _ball(a)
            quarter = (hb / flint.arb(2).sqrt()).erfc() / 4
            value = quarter - _t_arb(abs(hb), ab, prec + extra)
        else:
            flint.ctx.prec = prec + GUARD + scale
            hb, ab = _ball(h), _ball(a)
            if h == 0:
                value = ab.atan() / (2 * flint.arb.pi())
            elif which == "T":
                value = _t_arb(hb, ab, prec)
            else:
                value = _u_tail_arb(hb, ab, prec)
        if not value.is_finite():
            raise QuadratureError(f"Owen's {which}({mpmath.nstr(h, 5)}, "
                                  f"{mpmath.nstr(a, 5)}) is not finite")
        if value.rel_accuracy_bits() < prec:  # (rounding only: the rules' agreement is above)
            raise QuadratureError(f"Owen's {which}({mpmath.nstr(h, 5)}, "
                                  f"{mpmath.nstr(a, 5)}): the ball arithmetic kept "
                                  f"{value.rel_accuracy_bits()} of {prec} bits",
                                  tried=f"Gauss-Legendre in arb at {flint.ctx.prec} bits")
        out = sign * _mpf(value.mid())
    finally:
        flint.ctx.prec = old
    return +out


def _ball(x):
    from .balls import arb_of

    return arb_of(x)


def _mpf(b):
    """The ``mpf`` of an exact ``arb`` midpoint."""
    man, exp = b.man_exp()
    return mpmath.mpf((int(man), int(exp)))


def owens_t_mp(h, a):
    r"""Owen's :math:`T(h, a)` at mpmath's working precision (module docstring)."""
    return _special(h, a, "T")


def owens_u_mp(h, a):
    r""":math:`U(h, a) = \tfrac14\operatorname{erfc}(h/\sqrt2) - T(h, a)` at mpmath's working
    precision, :math:`a > 0` (module docstring)."""
    return _special(h, a, "U")


_NP_RULE: list = []


def owens_u_np(h, a):
    r""":math:`U(h, a)` in float64 (arrays broadcast): SciPy's ``owens_t`` in the difference
    form for :math:`h \le 1` and a fixed 48-node Gauss--Legendre rule of the tail form for
    :math:`h > 1` (module docstring), :math:`a > 0`; where it underflows, the least subnormal
    number (so that :math:`U\log U` and :math:`U'^2/U` stay finite: an absolute change below
    :math:`5\cdot10^{-324}`)."""
    import numpy as np
    from scipy import special

    h, a = np.broadcast_arrays(np.asarray(h, dtype=float), np.asarray(a, dtype=float))
    if not _NP_RULE:
        x, w = np.polynomial.legendre.leggauss(48)
        _NP_RULE.append(((x + 1) / 2, w / 2))
    x, w = _NP_RULE[0]
    out = np.empty(h.shape)
    small = h <= 1
    with np.errstate(all="ignore"):
        out[small] = special.erfc(h[small] / math.sqrt(2)) / 4 - special.owens_t(h[small],
                                                                                a[small])
        hb, ab = h[~small][..., None], a[~small][..., None]
        ah = ab * hb
        V = 2 * 61 * math.log(2) / (ah + np.sqrt(ah * ah + 2 * 61 * math.log(2)))
        v = V * x
        s = np.sum(w * np.exp(-ah * v - v * v / 2) / (1 + (ab + v / hb) ** 2), axis=-1) \
            * V[..., 0]
        out[~small] = (np.exp(-hb[..., 0]**2 * (1 + ab[..., 0]**2) / 2)
                       / (2 * math.pi * hb[..., 0]) * s)
    # below the least subnormal number the value is that number (not 0, whose U log U and
    # scores U'^2/U would be 0 * inf): an absolute change below 5e-324
    return np.where((out == 0) & np.isfinite(h), np.nextafter(0, 1), out)


# ---------------------------------------------------------------------------------------------
# Ball arithmetic: enclosures of T and U with rigorous truncation bounds
# ---------------------------------------------------------------------------------------------
SERIES_MAX = 48
r"""The largest :math:`S = \sup s a^2` (:math:`s = h^2/2`) at which :func:`owens_t_ball` and
:func:`owens_u_ball` sum the series in :math:`s` (its terms cancel by about :math:`S\log_2e`
bits, worked at that many further bits); beyond it, the tail integral."""

_POLYS: dict = {}


def _coefficients(a, bits: int, n: int):
    r"""The ``arb_poly`` :math:`\sum_{k<n}(-1)^km_k(a)s^k/k!`, :math:`m_k(a) = \int_0^a
    x^{2k}/(1 + x^2)\,dx`, from :math:`m_k + m_{k-1} = a^{2k-1}/(2k - 1)` (an identity for
    every real :math:`a`), with ``n`` rounded up to a multiple of 16 and ``bits`` to one of 64,
    remembered for the ball ``a`` (midpoint and radius), those bits and ``n``; ``None`` for
    a ball :math:`a` about :math:`|a| = 1/2` (neither recursion below applies to all of it). The recursion in the
    stable direction, so that the coefficients' errors are relative to them:

    * :math:`|a| \ge 1`: upward from :math:`m_0 = \arctan a` (:math:`m_k` grows; the
      absolute errors do not), at ``bits`` + 16;
    * :math:`1/2 \le |a| < 1`: upward, whose relative error grows like :math:`a^{-2k}`: at
      :math:`\lceil s_{\max}(1 - a^2)\log_2e\rceil + 16` further bits, :math:`s_{\max} =`
      :data:`SERIES_MAX` :math:`/a^2` (the error of :math:`\sum_k s^km_k/k!` is then about
      :math:`e^s` times the rounding, against terms of :math:`e^{sa^2}`);
    * :math:`|a| < 1/2`: downward from :math:`K = n + d`, :math:`|a|^{2d} \le
      2^{-{\rm bits}-16}`, started from the ball :math:`m_K \in [-b, b]`, :math:`b =
      |a|^{2K+1}/(2K + 1)` (:math:`1/(1 + x^2) \le 1`); its error is carried down unchanged
      while :math:`m_k` grows like :math:`a^{-2}` a step."""
    import flint

    arb = flint.arb
    n = -(-n // 16) * 16
    bits = -(-bits // 64) * 64
    key = (a.mid().man_exp(), a.rad().man_exp(), bits, n)
    hit = _POLYS.get(key)
    if hit is not None:
        return hit
    lo, up = float(abs(a).lower()), float(abs(a).upper())
    if not (up < 0.5 or lo >= 0.5):
        return None
    old = flint.ctx.prec
    try:
        if up == 0:
            ms = [arb(0)] * n
        elif lo >= 0.5:
            extra = 0 if lo >= 1 else int(math.ceil(SERIES_MAX / (lo * lo) * (1 - lo * lo)
                                                    * 1.4426950408889634))
            flint.ctx.prec = bits + 16 + extra
            m = a.atan()
            a2, power, ms = a * a, a, [m]
            for k in range(1, n):
                m = power / (2 * k - 1) - m
                power *= a2
                ms.append(m)
        else:
            flint.ctx.prec = bits + 16
            K = n + int(math.ceil((bits + 16) / (2 * math.log2(1 / up))))
            a2 = a * a
            powers = [a]  # a^(2k - 1) for k = 1, ..., K
            for _ in range(1, K):
                powers.append(powers[-1] * a2)
            m = arb(0, (arb(up) ** (2 * K + 1) / (2 * K + 1)).upper())
            ms = [None] * n
            for k in range(K, 0, -1):
                m = powers[k - 1] / (2 * k - 1) - m  # m_{k-1}
                if k - 1 < n:
                    ms[k - 1] = m
        out, factorial = [], arb(1)
        for k, m in enumerate(ms):
            if k:
                factorial *= k
            out.append(m / factorial if k % 2 == 0 else -m / factorial)
    finally:
        flint.ctx.prec = old
    if len(_POLYS) >= 256:
        _POLYS.clear()
    hit = _POLYS[key] = flint.arb_poly(out)
    return hit


def _exact_length(a, bits: int, n: int):
    """The polynomial of :func:`_coefficients` cut to exactly ``n`` terms (tests)."""
    import flint

    poly = _coefficients(a, bits, n)
    return None if poly is None else flint.arb_poly([poly[k] for k in range(n)])


def _length(S: float, floor: float) -> int:
    r"""The least :math:`n \ge 2S + 2` with :math:`n\log S - \log n! \le` ``floor`` (the
    logarithm of the series' term bound over :math:`|a|`; decreasing in :math:`n` beyond
    :math:`S`), by doubling and bisection on ``math.lgamma``."""
    n = int(2 * S) + 2
    if S <= 0:
        return n
    log_s = math.log(S)

    def above(m):
        return m * log_s - math.lgamma(m + 1) > floor

    if not above(n):
        return n
    lo, hi = n, 2 * n
    while above(hi):
        lo, hi = hi, 2 * hi
    while hi - lo > 1:  # above(lo), not above(hi)
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if above(mid) else (lo, mid)
    return hi


def _series_f(h, a, bits: int, terms=None):
    r"""The ball :math:`F(s, a) = \int_0^a e^{-sx^2}/(1 + x^2)\,dx = \sum_k(-s)^km_k(a)/k!`
    (:math:`s = h^2/2`; an entire function of :math:`s`) at ``bits`` bits, ``a`` of either sign,
    with the terms :math:`k \ge N` bounded and added to the radius: :math:`|m_k| \le
    |a|^{2k+1}/(2k + 1)` (:math:`1/(1 + x^2) \le 1`), so with :math:`S \ge s a^2` and
    :math:`N + 1 > S` the tail is at most :math:`|a|S^N/(N!(2N + 1))\cdot1/(1 - S/(N + 1))`
    (a geometric series of ratio :math:`S/(N + 1)`). :math:`N` is the first index past
    :math:`2S` whose bound is below :math:`2^{-{\rm bits}}\min(|a|, s^{-1/2})/4` (a lower
    bound of :math:`F`'s order: the choice only sizes the sum, the bound is added whatever
    it is); ``terms`` (tests) fixes the sum's length instead (the coefficients' length then,
    at least :math:`S + 1`)."""
    import flint

    arb = flint.arb
    s = h * h / 2
    A = float(abs(a).upper())
    S = float(s.upper()) * A * A
    target = -bits * math.log(2) + math.log(max(min(A, 1 / math.sqrt(max(float(s.upper()),
                                                                           1e-300))), 1e-300) / 4)
    n = _length(S, target - (math.log(A) if A > 0 else 0.0))
    if terms is not None:
        n = int(terms)
    poly = _coefficients(a, bits, n) if terms is None else _exact_length(a, bits, n)
    if poly is None or (S > 0 and not poly.length() > S):  # (the bound needs N + 1 > S)
        return _nan()
    old = flint.ctx.prec
    try:
        flint.ctx.prec = bits
        value = poly(s)
        # the terms from len(poly) on (at least n): |a| S^N/(N! (2N + 1))/(1 - S/(N + 1))
        N = poly.length()
        Sb = arb(abs(s).upper()) * arb(abs(a).upper()) ** 2
        tail = arb(abs(a).upper()) * Sb ** N / (arb(N).fac() * (2 * N + 1)) / (1 - Sb / (N + 1))
        return value + arb(0, tail.upper())
    finally:
        flint.ctx.prec = old


def _u_tail_ball(h, a, bits: int, cut=None):
    r""":math:`U(h, a)` for balls :math:`h > 0`, :math:`a > 0`:
    :math:`\frac{e^{-s(1 + a^2)}}{2\pi}\int_0^\infty\frac{e^{-2sav - sv^2}}{1 + (a + v)^2}dv`
    (:math:`x = a + v`, :math:`s = h^2/2`), the integral over :math:`[0, V]` by python-flint's
    ``acb.integral`` (rigorous: the integrand is meromorphic, its poles :math:`v = -a \pm i` at
    distance 1 from the interval), :math:`V` the root of :math:`2saV + sV^2 = ({\rm bits} +
    8)\log2` (``cut`` in tests), and the rest bounded and added to the radius:
    :math:`1/(1 + x^2)` decreases and :math:`\int_X^\infty e^{-sx^2}dx \le
    e^{-sX^2}/(2sX)`, so :math:`\int_V^\infty \le e^{-2saV - sV^2}/((1 + (a + V)^2)
    \,2s(a + V))`."""
    import flint

    arb, acb = flint.arb, flint.acb
    old = flint.ctx.prec
    try:
        flint.ctx.prec = bits
        s = h * h / 2
        sa = s * a
        c = (bits + 8) * math.log(2)
        sl, sal = float(s.lower()), float(sa.lower())
        V = arb(2 * c / (2 * sal + math.sqrt(4 * sal * sal + 4 * sl * c)) if cut is None
                else cut)  # (an exact float)
        ac, sc, sac = acb(a), acb(s), acb(2 * sa)

        def f(v, _):
            w = ac + v
            return (-(sac + sc * v) * v).exp() / (1 + w * w)

        part = acb.integral(f, 0, V, rel_tol=arb(2) ** -(bits + 4)).real
        lo = s * a  # (the bound at V, all in balls)
        rest = (-(2 * lo + s * V) * V).exp() / ((1 + (a + V) ** 2) * 2 * s * (a + V))
        total = part + arb(0, abs(rest).upper())
        return (-s * (1 + a * a)).exp() / (2 * arb.pi()) * total
    finally:
        flint.ctx.prec = old


def _nan():
    import flint

    return flint.arb("nan")


def _as_ball(x):
    import flint

    return x if isinstance(x, flint.arb) else _ball(mpmath.mpf(x) if not isinstance(x, int)
                                                    else x)


def owens_t_ball(h, a):
    r"""An enclosure of Owen's :math:`T(h, a)` for real balls at flint's working precision
    (``_t_ball``), remembered (:data:`MEMO` values, keyed on the balls' midpoints and radii and
    the precision: an integrand and its derivatives name the same :math:`T` several times, and
    the solver evaluates its integrands at the same nodes more than once)."""
    return _remembered("T", h, a)


def owens_u_ball(h, a):
    r""":math:`U(h, a)` for real balls (``_u_ball``), remembered as :func:`owens_t_ball`."""
    return _remembered("U", h, a)


_BALL_MEMO: dict = {}


def _parts(h, a):
    """The balls' midpoints and radii as exact ``(mantissa, exponent)`` pairs (the memo's key,
    computed once per call: ~1 us each)."""
    return (h.mid().man_exp(), h.rad().man_exp(), a.mid().man_exp(), a.rad().man_exp())


def _memo_key(which: str, h, a, parts=None):
    import flint

    return (which, parts or _parts(h, a), flint.ctx.prec)


def _remember(key, value):
    if len(_BALL_MEMO) >= MEMO:  # (the older half goes: a solve's last values stay for the next)
        for old in list(itertools.islice(_BALL_MEMO, MEMO // 2)):
            del _BALL_MEMO[old]
    _BALL_MEMO[key] = value


def _remembered(which: str, h, a, share: bool = True, parts=None):
    import flint

    if type(h) is not flint.arb or type(a) is not flint.arb:
        h, a = _as_ball(h), _as_ball(a)
    if parts is None:
        parts = (h.mid().man_exp(), h.rad().man_exp(), a.mid().man_exp(), a.rad().man_exp())
    key = (which, parts, flint.ctx.prec)  # (_memo_key's, inline: a call at every node)
    hit = _BALL_MEMO.get(key)
    if hit is None:
        if parts[1] != _ZERO or parts[3] != _ZERO:
            hit = _mean_value(which, h, a, parts)
        else:
            hit = _t_ball(h, a, share, parts) if which == "T" else _u_ball(h, a, parts)
        _remember(key, hit)
    return hit


_ZERO = (0, 0)
"""The ``(mantissa, exponent)`` of a zero radius."""

_U_WANTED: set = set()
"""The ``(midpoint of a, precision)`` at which :math:`U` has been evaluated (``_u_ball``):
``_t_ball`` shares its series with :math:`U` only there (a cost, never a value: the ball is an
enclosure either way)."""


def _derivatives(which: str, h, a):
    r"""Balls of the partial derivatives :math:`(\partial_h, \partial_a)` of :math:`T(h, a)`
    (``which == "T"``) or :math:`U(h, a)` (``"U"``) over the balls ``h``, ``a`` (each an
    enclosure of the derivative's values on the whole box: arb's range enclosures), at flint's
    working precision:

    .. math::
        \partial_hT = -\varphi(h)\,\tfrac12\operatorname{erf}\frac{ah}{\sqrt2},\qquad
        \partial_aT = \frac{e^{-h^2(1 + a^2)/2}}{2\pi(1 + a^2)},\qquad
        \partial_hU = -\varphi(h)\,\tfrac12\operatorname{erfc}\frac{ah}{\sqrt2},\qquad
        \partial_aU = -\partial_aT,

    :math:`\varphi(h) = e^{-h^2/2}/\sqrt{2\pi}`: differentiating under the integral,
    :math:`\partial_hT = -\frac{h}{2\pi}e^{-h^2/2}\int_0^ae^{-h^2x^2/2}dx = -\varphi(h)
    (\Phi(ah) - \tfrac12)`; the integrand at :math:`x = a` gives :math:`\partial_aT`; and
    :math:`\partial_h\tfrac14\operatorname{erfc}(h/\sqrt2) = -\varphi(h)/2`, so
    :math:`\partial_hU = -\varphi(h)(1 - \Phi(ah)) = -\varphi(h)\Phi(-ah)`."""
    import flint

    arb = flint.arb
    h2 = h * h
    phi = (-h2 / 2).exp() / (2 * arb.pi()).sqrt()
    x = a * h / arb(2).sqrt()
    da = (-h2 * (1 + a * a) / 2).exp() / (2 * arb.pi() * (1 + a * a))
    if which == "T":
        return -phi * x.erf() / 2, da
    return -phi * x.erfc() / 2, -da


def _mean_value(which: str, h, a, parts=None):
    r"""An enclosure of :math:`T(h, a)` or :math:`U(h, a)` (``which``) for balls with a radius,
    :math:`h = h_0 \pm r`, :math:`a = a_0 \pm \rho`, at flint's working precision: by the
    mean-value theorem on the segment from :math:`(h_0, a_0)` to :math:`(h, a)` (inside the box),

    .. math::
        T(h, a) \in T(h_0, a_0) + [-1, 1]\,\bigl(r\sup_{\rm box}|\partial_hT| +
        \rho\sup_{\rm box}|\partial_aT|\bigr),

    the value at the exact midpoint a point ball (the series or the tail form, whose balls are
    then tight: the series' Horner evaluation of a ball :math:`s` would widen by about
    :math:`e^{sa^2}`, and :math:`U`'s difference lose that many bits again), the suprema from
    ``_derivatives`` over the box. :math:`U` needs :math:`a > 0` on the whole ball (NaN
    otherwise), as ``_u_ball``."""
    import flint

    arb = flint.arb
    if not (h.is_finite() and a.is_finite()) or (which == "U" and not a > 0):
        return _nan()
    parts = parts or _parts(h, a)
    center = _remembered(which, arb(h.mid()), arb(a.mid()),
                         parts=(parts[0], _ZERO, parts[2], _ZERO))
    if not center.is_finite():
        return center
    key = (parts, flint.ctx.prec)  # (T and U of one box: one evaluation of the bounds)
    bounds = _BOUNDS.get(key)
    if bounds is None:
        if len(_BOUNDS) >= MEMO:
            _BOUNDS.clear()
        bounds = _BOUNDS[key] = _derivative_bounds("TU", h, a)
    dh, da = bounds[0] if which == "T" else bounds[1], bounds[2]
    spread = dh * h.rad() + da * a.rad()
    if not spread.is_finite():
        return _nan()
    return center + arb(0, spread.upper())


_BOUNDS: dict = {}


def _derivative_bounds(which: str, h, a):
    r"""Upper bounds ``(Dh, Da)`` (``arb``) of :math:`\sup|\partial_hT|` and
    :math:`\sup|\partial_aT|` (or :math:`U`'s) over the balls ``h``, ``a``, from the formulas
    of ``_derivatives`` with the error functions bounded by exponentials (the error functions
    of balls cost 15-20 us, 20 times an exponential): :math:`|\operatorname{erf}x| \le \min(1,
    2|x|/\sqrt\pi)`,
    :math:`\operatorname{erfc}x \le e^{-x^2}\min(1, 1/(x\sqrt\pi))` for :math:`x > 0`
    (:math:`\le 2` else), so with :math:`E = e^{-h^2(1 + a^2)/2}`

    .. math::
        |\partial_hT| \le \frac{\varphi(h)}2\min\Bigl(1, \frac{\sqrt2|ah|}{\sqrt\pi}\Bigr),
        \quad
        |\partial_hU| \le \frac{E}{2\sqrt{2\pi}}\min\Bigl(1, \frac{\sqrt2}{ah\sqrt\pi}
        \Bigr)\ (ah > 0;\ \varphi(h)\text{ else}),\quad
        |\partial_aT| = |\partial_aU| = \frac{E}{2\pi(1 + a^2)},

    (the last an equality), each taken at the upper end of its ball over the box (arb's range
    enclosures). Evaluated at
    :math:`64 + \log_2 M` bits, :math:`M \ge h^2(1 + a^2)`: an exponent :math:`M` known to
    :math:`q` bits is a factor :math:`e^{M2^{-q}} < 1 + 2^{-60}` uncertain, so the bounds are
    within that of the suprema of the bounding formulas. ``which == "TU"``: ``(Dh of T, Dh of
    U, Da)``."""
    import flint

    arb = flint.arb
    big = float((h * h * (1 + a * a)).upper()) if h.is_finite() and a.is_finite() else math.inf
    if not math.isfinite(big):
        return arb("inf"), arb("inf")
    old = flint.ctx.prec
    try:
        flint.ctx.prec = 64 + (max(0, math.frexp(big)[1]) if big > 1 else 0)
        h2 = h * h
        a2 = 1 + a * a
        root = (2 * arb.pi()).sqrt()
        E = (-h2 * a2 / 2).exp()
        da = arb(abs(E / (2 * arb.pi() * a2)).upper())
        phi = (-h2 / 2).exp() / root
        ah = a * h
        out = []
        if "T" in which:
            dh = phi / 2
            x = abs(ah).upper() / arb(2).sqrt()  # |erf x| <= 2|x|/sqrt(pi) as well
            if x * 2 < arb.pi().sqrt():
                dh = dh * 2 * x / arb.pi().sqrt()
            out.append(arb(abs(dh).upper()))
        if "U" in which:
            if ah > 0:
                x = ah.lower() / arb(2).sqrt()
                dh = E / (2 * root)
                if x * arb.pi().sqrt() > 1:
                    dh = dh / (x * arb.pi().sqrt())
            else:
                dh = phi
            out.append(arb(abs(dh).upper()))
        return (*out, da)
    finally:
        flint.ctx.prec = old


def _t_ball(h, a, share: bool = True, parts=None):
    r"""An enclosure of Owen's :math:`T(h, a)` for real balls (python-flint ``arb``) at
    flint's working precision :math:`p`: where :math:`S = \sup s a^2 \le` :data:`SERIES_MAX`,
    :math:`T = e^{-s}F(s, a)/(2\pi)` by the series of ``_series_f`` at :math:`p + 24 +
    \lceil S\log_2e\rceil` bits (its terms are at most :math:`|a|e^S` in sum); beyond,
    :math:`T(h, a) = \operatorname{sign}(a)[\tfrac14\operatorname{erfc}(|h|/\sqrt2) -
    U(|h|, |a|)]` with :math:`U` by ``_u_tail_ball`` (no cancellation: :math:`U` is the
    smaller part). Every truncation is bounded and in the radius; a non-finite ball (NaN)
    where neither applies (:math:`S` large and :math:`h` or :math:`a` a ball about 0)."""
    import flint

    h, a = _as_ball(h), _as_ball(a)
    if not (h.is_finite() and a.is_finite()):
        return _nan()
    p = flint.ctx.prec
    S = float((h * h / 2).upper()) * float(abs(a).upper()) ** 2
    if S <= SERIES_MAX:
        parts = parts or _parts(h, a)
        if share and a > 0 and (parts[2], p) in _U_WANTED:
            # T and U from one series: U's difference form sums T at its (higher) precision
            # and leaves that T, rounded to p, in the memo -- only where U has been asked at
            # this a and precision (an integrand naming T(h, a) and U(h, a): the committee's
            # channel; its first node pays a second series); an integrand naming T alone (the
            # Gibbs error) sums T at T's precision and no U
            _remembered("U", h, a, parts=parts)
            hit = _BALL_MEMO.get(_memo_key("T", h, a, parts))
            if hit is not None:
                return hit
        bits = p + GUARD + int(math.ceil(S * 1.4426950408889634)) + 8
        old = flint.ctx.prec
        try:
            flint.ctx.prec = bits
            value = (-h * h / 2).exp() * _series_f(h, a, bits) / (2 * flint.arb.pi())
        finally:
            flint.ctx.prec = old
        return +value
    if not ((h > 0 or h < 0) and (a > 0 or a < 0)):
        return _nan()
    ha, aa = abs(h), abs(a)
    u = owens_u_ball(ha, aa)  # (the tail form at p + GUARD bits, remembered: the channel's
    # integrand names U(h, a) after T(h, a), which then costs no second tail integral)
    old = flint.ctx.prec
    try:
        flint.ctx.prec = p + GUARD
        value = (ha / flint.arb(2).sqrt()).erfc() / 4 - u
        if a < 0:
            value = -value
    finally:
        flint.ctx.prec = old
    return +value


def _u_ball(h, a, parts=None):
    r"""An enclosure of :math:`U(h, a) = \tfrac14\operatorname{erfc}(h/\sqrt2) - T(h, a)` for
    real balls, :math:`a > 0` (NaN otherwise), at flint's working precision :math:`p`: where
    :math:`S = \sup s a^2 \le` :data:`SERIES_MAX` the difference, :math:`T` by the series at
    :math:`p + 24 + 2\lceil S\log_2e\rceil + 16` bits (:math:`U \ge T(h, \infty)
    e^{-h^2a^2/2}/5` there: the difference loses at most :math:`S\log_2e + 3` bits, the
    series as many again); beyond, for :math:`h > 0` the tail integral ``_u_tail_ball``, for
    :math:`h < 0` the difference with :math:`T(|h|, a)` (:math:`\tfrac14\operatorname{erfc}
    (h/\sqrt2) > \tfrac14 > T`: no cancellation)."""
    import flint

    h, a = _as_ball(h), _as_ball(a)
    if not (h.is_finite() and a.is_finite() and a > 0):
        return _nan()
    p = flint.ctx.prec
    S = float((h * h / 2).upper()) * float(a.upper()) ** 2
    parts = parts or _parts(h, a)
    if (parts[2], p) not in _U_WANTED:
        if len(_U_WANTED) >= MEMO:
            _U_WANTED.clear()
        _U_WANTED.add((parts[2], p))
    old = flint.ctx.prec
    try:
        if S <= SERIES_MAX or h < 0:
            bits = p + GUARD + 2 * int(math.ceil(S * 1.4426950408889634)) + 16 \
                if S <= SERIES_MAX else p + GUARD
            flint.ctx.prec = bits
            t_hi = _remembered("T", h, a, share=False, parts=parts)
            value = (h / flint.arb(2).sqrt()).erfc() / 4 - t_hi
        elif h > 0:
            t_hi = None
            value = _u_tail_ball(h, a, p + GUARD)
        else:
            return _nan()
    finally:
        flint.ctx.prec = old
    if t_hi is not None and S <= SERIES_MAX:
        key = _memo_key("T", h, a, parts)  # (at p: T(h, a) named next costs no second series)
        if key not in _BALL_MEMO:
            _remember(key, +t_hi)
    return +value
