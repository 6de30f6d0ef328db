"""Integrals of one evaluation sharing their Gauss--Legendre nodes
(:class:`replica.symbolic.ballquad.NodePlan`, issue 29): two Gaussian integrals through the
logistic proximal root, enclosed one after the other under one plan, each contain a value
computed here by mpmath at 75 digits (the root by ``findroot`` of the equation written by
hand, the integral by ``mpmath.quad``) with a radius below the tolerance asked, and the second
one's root enclosures are mostly found in the memo (its nodes are the first one's); the plan
never hands out fewer nodes than asked."""

from __future__ import annotations

import mpmath
import pytest

flint = pytest.importorskip("flint")

from logistic_prox import declared_prox  # noqa: E402
from replica.symbolic import ballquad, implicit  # noqa: E402

arb, acb = flint.arb, flint.acb
PROX, _ = declared_prox()
Q, V = 4, 4  # q and V near the solution of the logistic example (4.15, 3.98)
A, B, PIECES = -6, 6, 6
PREC, TOL = 200, 2.0 ** -185


def _prox_mp(w):
    """The root of p - w - V/(1 + e^p) = 0 on [w, w + V] (mpmath, the working precision)."""
    return mpmath.findroot(lambda p: p - w - V / (1 + mpmath.exp(p)), (w, w + V),
                           solver="anderson")


def _root(z):
    return PROX._imp_.ball(acb(arb(Q).sqrt()) * z, acb(V))


def _phi(z):
    return acb.exp(-z * z / 2) / acb.pi().sqrt() / acb(2).sqrt()


def _first(z, analytic):
    """phi(z) log(1 + e^(-p)), p = prox(sqrt(q) z, V)."""
    return _phi(z) * acb.log(1 + acb.exp(-_root(z)), True)


def _second(z, analytic):
    """phi(z) z p / (1 + e^p): another integrand of the same root (a larger n on some
    intervals than the first, a smaller one on others)."""
    p = _root(z)
    return _phi(z) * z * p / (1 + acb.exp(p))


def _truths():
    with mpmath.workdps(75):
        pts = mpmath.linspace(A, B, 13)

        def first(z):
            return mpmath.npdf(z) * mpmath.log(1 + mpmath.exp(-_prox_mp(2 * z)))

        def second(z):
            p = _prox_mp(2 * z)
            return mpmath.npdf(z) * z * p / (1 + mpmath.exp(p))

        return [mpmath.nstr(mpmath.quad(f, pts), 72) for f in (first, second)]


def _enclosures(plan, monkeypatch):
    """The two integrals under ``plan`` (or none), each with the number of Krawczyk tests it
    ran (the memo emptied first)."""
    tests = [0]
    real = PROX._imp_._krawczyk

    def counted(args, complex_):
        tests[0] += 1
        return real(args, complex_)

    monkeypatch.setattr(PROX._imp_, "_krawczyk", counted)
    implicit.forget_ball_enclosures()
    out = []
    old, flint.ctx.prec = flint.ctx.prec, PREC
    try:
        for f in (_first, _second):
            before = tests[0]
            out.append((ballquad.enclose(f, arb(A), arb(B), TOL, PIECES, plan=plan),
                        tests[0] - before))
    finally:
        flint.ctx.prec = old
        implicit.forget_ball_enclosures()
        monkeypatch.undo()
    return out


def test_shared_nodes_enclose_mpmath_values_and_find_the_roots_in_the_memo(monkeypatch):
    truths = _truths()
    shared = _enclosures(ballquad.NodePlan(), monkeypatch)
    alone = _enclosures(None, monkeypatch)
    old, flint.ctx.prec = flint.ctx.prec, PREC
    try:
        for (value, _), truth in zip(shared + alone, truths + truths):
            assert value is not None
            assert value.contains(arb(truth))  # (the string at 200 bits: a ball of ~1e-60)
            assert value.rad() < arb(TOL)  # (the rule's bound met the tolerance asked)
    finally:
        flint.ctx.prec = old
    (_, first), (_, second) = shared
    (_, first_alone), (_, second_alone) = alone
    # alone, the second integral encloses the root at nodes of its own; under the plan at the
    # first one's nodes and boxes (remembered), a few intervals excepted; the first one's
    # counts rounded up to four significant bits: at most 1/8 more nodes
    assert first <= first_alone * 9 / 8
    assert second_alone > first_alone / 2
    assert second < first / 4


def test_the_plan_never_hands_out_fewer_nodes_and_shares_within_its_rule():
    plan = ballquad.NodePlan()
    c, h = arb(1) / 2, arb(1) / 4
    assert plan.nodes(c, h, 144, 90) == 96  # (four significant bits: 90 -> 96)
    assert plan.nodes(c, h, 144, 92) == 96  # (a count used there, within 3x)
    assert plan.nodes(c, h, 144, 40) == 96
    assert plan.nodes(c, h, 144, 20) == 20  # (96 > 3 x 20: a count of its own)
    assert plan.nodes(c, h, 144, 97) == 104
    assert plan.nodes(c, h, 56, 40) == 40  # (per precision: 96 is at 144 bits)
    assert plan.nodes(arb(1) / 3, h, 144, 30) == 30  # (ends not exact: no sharing, n itself)
    for n in range(1, 400):
        assert n <= ballquad.NodePlan.rung(n) <= n + n // 8
        assert plan.nodes(arb(n), h, 144, n) >= n
