"""The shortcuts of the first solve's code generation (issue 26) leave every generated expression
as it was: each is compared, on the examples' own equations, Jacobians and integrands, with the
same expression computed the old way inside this test (SymPy ``==``: the same tree).

* :func:`replica.symbolic.walk.distinct_atoms` (a walk that visits each distinct subexpression
  once) against SymPy's ``expr.atoms`` (every node);
* :func:`replica.numerics.machine.total_derivative` with the shared ``partials`` (each
  :math:`\\partial e/\\partial a` once per expression) against the chain rule written out here,
  every partial derivative computed afresh;
* :func:`replica.symbolic.gaussian.scaled_erfc` with the code generator's process-wide memo
  (:func:`replica.symbolic.codegen._scaled_erfc_memo`) against a fresh call.

Planted errors these tests caught (each made in the code, seen to fail here, reverted): the
walk's ``seen`` keyed on ``str(node)`` (names, not contents: two different Dummies named alike
are one); the ``partials`` key ``sym`` instead of ``(expr, sym)`` (the first equation's partial
derivative reused for the next); the memo shared between ``scale=True`` and ``scale=False``.

The solved values themselves, bit for bit in float64 and at 30 digits, and the generated source
text (alpha-renamed Dummies) are compared with the baseline tree by
``python -m benchmarks.first_solve --baseline PATH`` (values identical for the five examples;
the source identical except where ``lambdify`` prints a product's factors in the order of its
Dummies' names as strings, which depends on how many Dummies the process made before:
``benchmarks/README.md``, section ``first_solve_logistic``).
"""

from __future__ import annotations

import os

import pytest
import sympy

import replica
from replica.numerics.machine import Machine, total_derivative
from replica.symbolic.codegen import _scaled_erfc_memo
from replica.symbolic.gaussian import GaussianIntegral, prepare, scaled_erfc
from replica.symbolic.walk import distinct_atoms

from conftest import REPO

FAST = ["perceptron_teacher", "lasso", "committee_machine"]
SLOW = ["logistic_regression", "phase_retrieval"]

_MACHINES: dict = {}


def _machine(name):
    if name not in _MACHINES:
        problem = replica._problem(replica.load_model(os.path.join(REPO, "examples",
                                                                   name + ".py")))
        variant = problem.variants[0][0]
        _MACHINES[name] = Machine(problem, variant)
    return _MACHINES[name]


def _old_total_derivative(expr, var, aliases):
    out = sympy.diff(expr, var)
    for sym, definition in aliases:
        da = sympy.diff(definition, var)
        if da != 0:
            out += sympy.diff(expr, sym) * da
    return out


def _check_example(name):
    m = _machine(name)
    equations = m.abstract_equations
    # the Jacobian's entries: shared partial derivatives == each computed afresh
    partials: dict = {}
    jacobian = []
    for e in equations:
        for v in m.x:
            new = total_derivative(e, v, m.alias_definitions, partials)
            assert new == _old_total_derivative(e, v, m.alias_definitions), (name, v)
            jacobian.append(m.evaluation_form(new, jacobian=True))
    forms = [m.evaluation_form(e) for e in equations] + jacobian
    # the walks: distinct_atoms == atoms, for every class the code generator looks for
    from replica.symbolic.saddle import SpectralFunction
    from replica.symbolic.spectral import SpectralAverage

    integrals = set()
    for e in forms + list(equations):
        for cls in (GaussianIntegral, sympy.Function, sympy.erfc, SpectralAverage,
                    SpectralFunction):
            assert distinct_atoms(e, cls) == e.atoms(cls), (name, cls)
        integrals |= e.atoms(GaussianIntegral)
    # scaled_erfc: through the shared memo == a fresh call, both scales, every integrand
    checked = 0
    for g in sorted(integrals, key=sympy.default_sort_key):
        if g.args[0].atoms(GaussianIntegral):
            continue  # (an outer integral of a two-dimensional one: its inner is checked)
        f = prepare(g).integrand
        if not f.atoms(sympy.erfc):
            continue
        for scale in (True, False):
            assert scaled_erfc(f, scale, memo=_scaled_erfc_memo(scale)) == scaled_erfc(f, scale)
            checked += 1
    return checked


@pytest.mark.parametrize("name", FAST)
def test_generated_expressions_unchanged(name):
    _check_example(name)


@pytest.mark.slow
@pytest.mark.parametrize("name", SLOW)
def test_generated_expressions_unchanged_slow(name):
    assert _check_example(name) > 0  # (both hold erfc integrands)


def test_distinct_atoms_keys_on_contents_not_names():
    """Two different Dummies with the same name are two atoms (a walk keyed on names finds
    one); equal subtrees are walked once and still found."""
    f = sympy.Function("f")
    a, b = sympy.Dummy("x"), sympy.Dummy("x")
    e = f(a) * sympy.exp(f(b)) + f(a) ** 2 + sympy.sin(f(a) * sympy.exp(f(b)))
    assert distinct_atoms(e, sympy.Dummy) == e.atoms(sympy.Dummy) == {a, b}
    assert distinct_atoms(e, f) == e.atoms(f) == {f(a), f(b)}
    assert distinct_atoms(e, sympy.exp, sympy.sin) == e.atoms(sympy.exp, sympy.sin)
    with pytest.raises(TypeError):
        distinct_atoms(e)


def test_partials_key_on_the_expression():
    """One ``partials`` dict across two expressions with the same alias: each gets its own
    partial derivative (a key on the alias alone gives the second the first's)."""
    z, q, m = sympy.symbols("z q m")
    aliases = [(z, q ** 2 + m)]
    partials: dict = {}
    for e in (z ** 3 * q, sympy.log(z) + m * z):
        for v in (q, m):
            assert (total_derivative(e, v, aliases, partials)
                    == _old_total_derivative(e, v, aliases))


def test_scaled_erfc_memo_per_scale():
    """The memo of ``scale=True`` is not that of ``scale=False``: ``erfc`` rewritten as
    ``erfcx`` in one, kept in the other."""
    y = sympy.Symbol("y")
    f = sympy.exp(-y ** 2) / sympy.erfc(y) + sympy.log(sympy.erfc(2 * y))
    for scale in (True, False, True):
        assert scaled_erfc(f, scale, memo=_scaled_erfc_memo(scale)) == scaled_erfc(f, scale)
