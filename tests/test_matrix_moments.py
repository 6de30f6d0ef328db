"""Gaussian moments of matrix expressions at a symbolic dimension (replica.symbolic.matrix_moments):
the rules against explicit components, the general-D residual covariance against the component
computation at D = 2, and a planted wrong covariance caught."""

import numpy as np
import pytest
import sympy

from replica.derivations import unified as U
from replica.symbolic.matrix_moments import (MomentError, expand_traces, gaussian_average,
                                             replace_forms, scalar)

D = sympy.Symbol("D", positive=True)


def test_quadratic_form_and_outer_product_rules_match_components():
    """E[u^T v v^T w + v^T A v + 3] for v ~ N(0, Sigma) at D = 3 with random numbers: the
    general-D average, written out, equals the component-wise value u^T Sigma w + tr(A Sigma) + 3."""
    rng = np.random.default_rng(0)
    A, S = sympy.MatrixSymbol("A", D, D), sympy.MatrixSymbol("Sigma", D, D)
    u, v, w = (sympy.MatrixSymbol(n, D, 1) for n in "uvw")
    expr = u.T * v * v.T * w + v.T * A * v + 3 * sympy.Identity(1) + u.T * v
    avg = expand_traces(scalar(gaussian_average(expr, v, S)))
    An, Bn = rng.standard_normal((3, 3)), rng.standard_normal((3, 3))
    Sn = Bn @ Bn.T
    un, wn = rng.standard_normal((3, 1)), rng.standard_normal((3, 1))
    vals = {A.subs(D, 3): sympy.Matrix(An), S.subs(D, 3): sympy.Matrix(Sn),
            u.subs(D, 3): sympy.Matrix(un), w.subs(D, 3): sympy.Matrix(wn)}
    got = float(avg.subs(D, 3).subs(vals).doit())
    want = float((un.T @ Sn @ wn)[0, 0] + np.trace(An @ Sn) + 3)
    assert got == pytest.approx(want, rel=1e-12)


def test_higher_degree_is_refused():
    v = sympy.MatrixSymbol("v", D, 1)
    with pytest.raises(MomentError):
        gaussian_average(v.T * v * v.T * v, v, sympy.Identity(D))


def test_residual_covariance_is_derived_at_every_dimension():
    K = U.residual_covariance_general_d()
    typed = (U.L.sigma**2 + U.c_train - U.m_a - U.m_b + U.Q_ab + U.eps_sym * U.Qbar_ab
             + U.Q_ab / U.L_context)
    assert sympy.expand(K - typed) == 0


def test_a_wrong_query_covariance_is_caught():
    """With the query covariance I instead of I/D the general-D average is not the residual
    covariance (the check of the low-rank step compares exactly this expression)."""
    Ga, Gb = sympy.MatrixSymbol("Gamma_a", D, D), sympy.MatrixSymbol("Gamma_b", D, D)
    w, x = sympy.MatrixSymbol("w", D, 1), sympy.MatrixSymbol("x", D, 1)
    r_a, r_b = x.T * w - x.T * Ga * w, x.T * w - x.T * Gb * w
    wrong = expand_traces(scalar(gaussian_average(r_a.T * r_b, x, sympy.Identity(D))))
    right = expand_traces(scalar(gaussian_average(r_a.T * r_b, x, sympy.Identity(D) / D)))
    forms = {w.T * w: D * U.c_train, w.T * Ga * w: D * U.m_a, w.T * Gb * w: D * U.m_b,
             w.T * Ga.T * Gb * w: D * U.Q_ab}
    assert sympy.expand(replace_forms(right, forms) - (U.c_train - U.m_a - U.m_b + U.Q_ab)) == 0
    assert sympy.expand(replace_forms(wrong, forms) - (U.c_train - U.m_a - U.m_b + U.Q_ab)) != 0


def test_low_rank_step_check_passes():
    from replica.derivations import lowrank_from_model as M
    assert M._check_residual_covariance()
