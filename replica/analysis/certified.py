r"""Certified transitions: interval proofs of where a crossover or a kink lies.

:mod:`replica.analysis.transitions` locates transitions numerically (an error bound that is an
estimate). Where the indicator has a closed form -- an explicit SymPy expression in the varied
parameter, built from rational operations, square roots and absolute values -- this module turns
the located value into an enclosure that is proved in ball arithmetic (python-flint ``arb``,
through the code generator's ``"arb"`` backend):

**Finite-alpha crossover** (extremal curvature of the indicator :math:`I(v)`, i.e. a root of
:math:`I'''`). Near the located root every :math:`|u(v)|` in :math:`I` has a fixed sign, so
:math:`|u|` is replaced by :math:`\pm u` (the sign of :math:`u` at the root; the proof checks that
:math:`\pm u > 0` on the whole box), :math:`g = \partial_v^3 I` and :math:`g' = \partial_v^4 I`
are differentiated by SymPy, and the interval Newton test
(:func:`replica.numerics.certify.interval_newton_root`) shows that a box :math:`X` contains
exactly one root of :math:`g`, inside :math:`N(X) = \tilde v - g(\tilde v)/g'(X)`.

**The alpha -> oo transition** (a kink of :math:`\lim_{\alpha\to\infty} I`). The limit is taken
by SymPy (``sympy.limit``) of the closed form; a closed form built from analytic pieces and
absolute values is analytic wherever no :math:`|u|` argument vanishes, so its kinks in the
interval are the roots of those arguments. Each is enclosed by interval Newton; the kink is
*proved* to be one by the jump of the one-sided first derivatives there (a ball that excludes
zero), and the rest of the interval is checked analytic piecewise in ball arithmetic (every
denominator and square-root radicand bounded away from zero on the pieces, by bisection). The
certificate then also says whether the numerically located value lies within its reported error
bound of the proved point.

Anything else (an indicator that is only defined through a solved system, a ``Piecewise``) is
reported as not certified, with the reason: its bound stays numerical.
"""

from __future__ import annotations

import dataclasses
from fractions import Fraction
from typing import Any

import mpmath
import sympy

from ..numerics.certify import (Proof, ball_digits, ball_fraction, directed_decimal,
                                fraction_ball, interval_newton_root, is_finite)
from ..numerics.precision import ball_precision, precision
from ..symbolic.codegen import Evaluator, NotEnclosable


@dataclasses.dataclass
class TransitionCertificate(Proof):
    """The proof (or why there is none) of a transition's location: ``enclosure`` is an ``arb``
    ball that contains the exact point; ``checks`` lists what was shown, in words."""

    enclosure: Any = None
    checks: list = dataclasses.field(default_factory=list)
    consistent: bool | None = None
    """Whether the numerically located value lies within its error bound of the enclosure."""

    def digits(self, cap: int) -> int:
        if self.enclosure is None:
            return 0
        with ball_precision(self.precision + 10):
            return ball_digits(self.enclosure, cap)

    def midpoint(self):
        """The midpoint of the enclosure as an ``mpf``."""
        from ..numerics.certify import ball_to_mpf

        with ball_precision(self.precision + 10), mpmath.workdps(self.precision + 10):
            return ball_to_mpf(self.enclosure)

    def bound_for(self, value) -> Any:
        """A rigorous bound on ``|value - exact|`` (an ``mpf``), from the enclosure."""
        with ball_precision(self.precision + 10), mpmath.workdps(self.precision + 10):
            lo, hi = ball_fraction(self.enclosure, "lo"), ball_fraction(self.enclosure, "hi")
            d = max(abs(_fraction(value) - lo), abs(_fraction(value) - hi))
            return mpmath.mpf(d.numerator) / d.denominator

    def interval(self, digits: int) -> list | None:
        if self.enclosure is None:
            return None
        with ball_precision(self.precision + 10):
            return [directed_decimal(ball_fraction(self.enclosure, "lo"), digits, up=False),
                    directed_decimal(ball_fraction(self.enclosure, "hi"), digits, up=True)]

    def to_json_dict(self, digits: int) -> dict:
        return {"certified": self.certified, "reason": self.reason or None,
                "method": self.method, "precision": self.precision,
                "enclosure": self.interval(max(digits, 1) + 3), "checks": list(self.checks),
                "numerical_bound_holds": self.consistent}


def _fraction(v) -> Fraction:
    if isinstance(v, Fraction):
        return v
    sign, man, exp, _ = mpmath.mpf(v)._mpf_
    f = Fraction(man * 2 ** exp) if exp >= 0 else Fraction(man, 2 ** -exp)
    return -f if sign else f


def _abs_arguments(expr) -> list:
    """The arguments ``u`` of every ``Abs(u)`` in ``expr`` (each once)."""
    out = []
    for a in expr.atoms(sympy.Abs):
        if a.args[0] not in out:
            out.append(a.args[0])
    return out


def _value_at(expr, var, v, dps):
    with mpmath.workdps(dps + 20):
        return sympy.N(expr.subs(var, sympy.Float(mpmath.mpf(v), dps + 20)), dps + 10)


def _sided(expr, var, at, dps):
    """``expr`` with each ``|u|`` replaced by ``s u``, ``s`` the sign of ``u`` at ``at``;
    returns ``(expr, [s u ...])`` (the conditions ``s u > 0`` the proof must show)."""
    conds, subs = [], {}
    for u in _abs_arguments(expr):
        s = 1 if _value_at(u, var, at, dps) > 0 else -1
        subs[sympy.Abs(u)] = s * u
        conds.append(s * u)
    return expr.xreplace(subs), conds


def crossover_certificate(indicator, var, root, dps: int) -> TransitionCertificate:
    """Certify the root near ``root`` of the third ``var``-derivative of the closed-form
    ``indicator`` (a SymPy expression whose only free symbol is ``var``). The proof runs at
    ``dps + max(10, dps/2)`` digits (the high derivatives cancel digits), from ``root`` polished
    by Newton steps at that precision, so the enclosure can prove all ``dps`` digits."""
    dps = dps + max(10, dps // 2)
    method = (f"interval Newton on the third derivative (SymPy) of the closed-form indicator, in "
              f"ball arithmetic at {dps} digits (python-flint arb)")
    try:
        sided, conds = _sided(indicator, var, root, dps)
        g = sympy.diff(sided, var, 3)
        ev = Evaluator([g, sympy.diff(g, var)] + conds, [var])
        with ball_precision(dps):
            ev.functions("arb")
    except NotEnclosable as exc:
        return TransitionCertificate(False, f"not enclosable: {exc}", method, dps)

    def G(b):
        return ev.arb([b])[0]

    def dG(b):
        return ev.arb([b])[1]

    root = _polish(G, dG, root, dps)
    ball, why = interval_newton_root(G, dG, root, dps)
    if ball is None:
        return TransitionCertificate(False, why, method, dps)
    checks = ["exactly one root of the third derivative in the enclosure (interval Newton)"]
    with ball_precision(dps):
        signs = ev.arb([ball])[2:]
        if not all(is_finite(c) and c > 0 for c in signs):
            return TransitionCertificate(False, "an absolute value in the indicator changes sign "
                                                "on the box", method, dps)
        fourth = dG(ball)
    if conds:
        checks.append("the sign of every |u| in the indicator is constant on the enclosure")
    checks.append("the fourth derivative is "
                  f"{'negative' if fourth < 0 else 'positive'} there: the curvature is extremal")
    return TransitionCertificate(True, "", method, dps, ball, checks)


def _polish(g, dg, x, dps, steps: int = 4):
    """A few Newton steps on midpoints at ``dps`` digits (a better candidate for the proof; the
    proof itself does not rely on them)."""
    from ..numerics.certify import exact_ball, ball_to_mpf

    with ball_precision(dps), precision(dps):
        x = mpmath.mpf(x)
        for _ in range(steps):
            b = exact_ball(x)
            gv, dv = g(b), dg(b)
            if not (is_finite(gv) and is_finite(dv)) or dv == 0:
                break
            x = x - ball_to_mpf(gv) / ball_to_mpf(dv)
        return x


def kink_certificate(limit, var, lo, hi, located, error_bound, dps: int,
                     pieces: int = 64) -> TransitionCertificate:
    """Certify the non-analytic point of the closed-form ``limit`` (a SymPy expression in
    ``var`` built from analytic pieces and absolute values) on ``(lo, hi)``, and compare it with
    the numerically ``located`` value and its ``error_bound``."""
    method = (f"kinks of the closed-form limit (sympy.limit) are zeros of its |u| arguments: "
              f"enclosed by interval Newton, the jump of the one-sided derivatives proved, the "
              f"rest of the interval checked analytic on {pieces} pieces, in ball arithmetic at "
              f"{dps} digits (python-flint arb)")
    args = _abs_arguments(limit)
    roots = []
    with precision(dps):
        for u in args:
            if not u.free_symbols <= {var}:
                return TransitionCertificate(False, f"the limit depends on {u.free_symbols - {var}}"
                                             , method, dps)
            try:
                r = mpmath.findroot(lambda t: mpmath.mpf(_value_at(u, var, t, dps)), located)
            except (ValueError, ZeroDivisionError):
                continue
            if lo < r < hi:
                roots.append((u, r))
    if len(roots) != 1:
        return TransitionCertificate(False, f"{len(roots)} zeros of |u| arguments in the interval "
                                            "near the located value (need exactly one)", method,
                                     dps)
    u, r = roots[0]
    ev_u = Evaluator([u, sympy.diff(u, var)], [var])
    ball, why = interval_newton_root(lambda b: ev_u.arb([b])[0], lambda b: ev_u.arb([b])[1], r,
                                     dps)
    if ball is None:
        return TransitionCertificate(False, why, method, dps)
    checks = [f"exactly one zero of {u} in the enclosure (interval Newton)"]
    # one-sided derivatives differ: the point is a kink, not an analytic point
    left = limit.xreplace({sympy.Abs(u): -u})
    right = limit.xreplace({sympy.Abs(u): u})
    jump = Evaluator([sympy.diff(left - right, var)], [var])
    with ball_precision(dps):
        j = jump.arb([ball])[0]
        if not (is_finite(j) and (j > 0 or j < 0)):
            return TransitionCertificate(False, "the jump of the one-sided derivatives is not "
                                                "bounded away from zero", method, dps)
    checks.append("the one-sided first derivatives differ there (a kink)")
    ok, why = _analytic_elsewhere(limit, var, lo, hi, u, dps, pieces)
    if not ok:
        return TransitionCertificate(False, why, method, dps, ball, checks)
    checks.append("no other non-analytic point in the interval (denominators and square-root "
                  "radicands bounded away from zero, no other |u| argument vanishing)")
    cert = TransitionCertificate(True, "", method, dps, ball, checks)
    with precision(dps):
        cert.consistent = bool(cert.bound_for(located) <= error_bound) if error_bound is not None \
            else None
    return cert


def _singular_parts(expr) -> list:
    """Expressions whose vanishing can make a closed form non-analytic: denominators, square-root
    radicands and absolute-value arguments."""
    out = []
    for p in sympy.preorder_traversal(expr):
        if isinstance(p, sympy.Pow) and p.exp.is_negative:
            out.append(p.base)
        elif isinstance(p, sympy.Pow) and p.exp.is_Rational and not p.exp.is_Integer:
            out.append(p.base)
        elif isinstance(p, sympy.Abs):
            out.append(p.args[0])
    return list(dict.fromkeys(out))


def _analytic_elsewhere(limit, var, lo, hi, u, dps, pieces):
    """Check on ``pieces`` sub-intervals of ``[lo, hi]`` that no singular part of ``limit``
    other than the kink's argument ``u`` vanishes, and that ``u'`` does not (so the enclosed zero
    is ``u``'s only one); a sub-interval where the enclosure is too wide to decide is bisected,
    up to 8 times."""
    from flint import arb

    parts = [p for p in _singular_parts(limit) if sympy.simplify(p - u) != 0
             and sympy.simplify(p + u) != 0] + [sympy.diff(u, var)]
    parts = [p for p in parts if p.free_symbols]  # constants: nothing to check
    if not parts:
        return True, ""
    ev = Evaluator(parts, [var])
    with ball_precision(dps):
        lo, hi = _fraction(lo), _fraction(hi)
        step = (hi - lo) / pieces
        todo = [(lo + i * step, lo + (i + 1) * step, 0) for i in range(pieces)]
        while todo:
            a, b, depth = todo.pop()
            mid = (a + b) / 2
            X = fraction_ball(mid) + arb(0, fraction_ball((b - a) / 2))
            vals = ev.arb([X])
            if all(is_finite(v) and not v.contains(0) for v in vals):
                continue
            if depth >= 8:
                return False, (f"cannot show the limit analytic near {float(mid):.6g} (a "
                               "denominator, radicand or |u| argument may vanish there)")
            todo += [(a, mid, depth + 1), (mid, b, depth + 1)]
    return True, ""
