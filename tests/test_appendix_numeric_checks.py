"""The numerical replacement of an appendix step's check (:func:`replica.derivations.model.
numeric_identity`) made cheap without being made weaker (issue 26: logistic regression's
appendix took over 5 CPU minutes, its fixed-point checks evaluating by quadrature at 60 digits an
integrand with an implicit root at every node).

Two stages come before the quadrature at full precision: the integrals against a random discrete
measure (finite sums: an algebraic step holds for every measure), and a screening quadrature at
:data:`~replica.derivations.model.SCREEN_DPS` digits that rejects sides differing at order one.
What is checked: a step of logistic regression's appendix passes through the measure stage (no
quadrature at all) and the same step with a sign changed is rejected; an identity that holds for
the Gaussian measure only (Stein's lemma) is not rejected by the measure stage but decided by
quadrature, and its wrong variant rejected."""

from __future__ import annotations

import importlib.util
import os

import pytest
import sympy

from conftest import REPO
from replica.derivations import model as dm
from replica.modeling import gauss
from replica.symbolic.gaussian import GaussianIntegral


@pytest.fixture(scope="module")
def logistic():
    spec = importlib.util.spec_from_file_location(
        "example_logistic_regression", os.path.join(REPO, "examples", "logistic_regression.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def evaluations(monkeypatch):
    """The expressions evaluated by generated code or SymPy, recorded (``(a, b)`` pairs; the
    point, their unknowns' values, is passed on)."""
    seen = []
    original = dm._numeric_evaluation

    def spy(a, b, *point):
        seen.append((a, b))
        return original(a, b, *point)

    monkeypatch.setattr(dm, "_numeric_evaluation", spy)
    return seen


def _fixed_point_identity(module, sign=1):
    """The fixed-point step of logistic regression for mhat: the displayed solution substituted
    into the stationarity condition in m (0 when the step is right); ``sign=-1`` records the
    solution with its sign changed."""
    S = module.MODEL.saddle
    t = module.mhat
    return S.stationarity[S.partner(t)].subs(t, sign * S.fixed_point[t])


def test_a_logistic_fixed_point_step_is_checked_without_quadrature(logistic, evaluations):
    assert dm.numeric_identity(_fixed_point_identity(logistic), 0)
    assert evaluations, "the sides were evaluated"
    assert not any(a.has(GaussianIntegral) or b.has(GaussianIntegral) for a, b in evaluations)


def test_a_logistic_fixed_point_step_with_a_sign_changed_is_rejected(logistic):
    assert not dm.numeric_identity(_fixed_point_identity(logistic, sign=-1), 0)


def test_an_identity_of_the_gaussian_measure_only_is_decided_by_quadrature(logistic,
                                                                          evaluations):
    """Stein's lemma, E[z f(z)] = E[f'(z)], holds for the Gaussian measure and no other; here
    with f the logistic proximal map p(z, V) (an implicit root, so the measure stage is tried) and
    f' its derivative by the implicit function theorem. The measure stage must not reject it
    (it is not an identity in the measure), the quadrature confirms it; the same identity with a
    wrong factor is rejected."""
    import random

    V = sympy.Symbol("V", positive=True)
    z = sympy.Symbol("z", real=True)
    p = logistic.PROX(z, V)
    lhs, rhs = gauss(z * p, z), gauss(sympy.diff(p, z), z)
    assert dm._measure_applies(lhs, rhs)
    assert not dm._agree_on_a_random_measure(lhs, rhs, random.Random(1), dm.NUMERIC_DPS)
    assert dm.numeric_identity(lhs, rhs)
    assert any(x.has(GaussianIntegral) for x, _ in evaluations)  # by quadrature
    assert not dm.numeric_identity(lhs, 2 * rhs)


def test_the_generated_code_evaluates_the_sides_at_the_drawn_point():
    """Sides with an implicit root are evaluated by generated code with the unknowns as its
    arguments (not substituted first): each unknown -- a symbol, an abstract function's
    application, its derivative, replaced whole before its argument -- gets its own drawn value.
    Against the closed forms E[m z^2 + q^2] + r(q) = m + q^2 + q^(1/3), r the real cube root
    as an implicit root (p^3 - q = 0), and E[f'(m) z^2 + f(m)] q = (f'(m) + f(m)) q (E z^2 = 1)
    at the exact rationals, to 10^-45 at 60 digits."""
    import mpmath

    from replica.symbolic.implicit import implicit_root

    m, q = sympy.symbols("m q", positive=True)
    z = sympy.Symbol("z", real=True)
    p, x = sympy.symbols("p x", real=True)
    cube_root = implicit_root("cube_root", p**3 - x, p, (x,), bracket=(-1 - abs(x), 1 + abs(x)))
    f = sympy.Function("f")(m)
    df = sympy.Derivative(f, m)
    a = gauss(m * z**2 + q**2, z) + cube_root(q)
    b = gauss(df * z**2 + f, z) * q
    values = {df: sympy.Rational(9, 20), f: sympy.Rational(13, 20), m: sympy.Rational(3, 20),
              q: sympy.Rational(7, 5)}
    with mpmath.workdps(60):
        va, vb = dm._numeric_evaluation(a, b, values)(60)
        m_, q_ = mpmath.mpf(3) / 20, mpmath.mpf(7) / 5
        assert abs(va - (m_ + q_**2 + mpmath.cbrt(q_))) < mpmath.mpf(10) ** -45
        assert abs(vb - (mpmath.mpf(9) / 20 + mpmath.mpf(13) / 20) * q_) < mpmath.mpf(10) ** -45
