"""The GLM calculus's linear solutions remembered in the code cache
(:func:`replica.glm.calculus._single_solution`, issue 26: :func:`sympy.solve` simplifies its
solution, and :func:`sympy.simplify` imports ``sympy.physics.units``, the largest part of loading
``examples/glm_logistic.py``). A remembered solution must be the very expression a new solve
gives (the same ``srepr``), and an entry that is damaged, for another equation, or that does not
read back as the expression it names is never used. Each test's symbols carry a fresh name, so
its entries are its own (whatever ran before it in the process or the cache folder)."""

from __future__ import annotations

import uuid

import pytest
import sympy

from replica.glm import calculus


def _symbols():
    tag = uuid.uuid4().hex[:10]
    t, b, x, V = sympy.symbols(f"t_{tag} b_{tag} x_{tag} V_{tag}", real=True)
    lam, mu = sympy.symbols(f"lam_{tag} mu_{tag}", positive=True)
    return t, b, x, V, lam, mu


def _equations():
    """Stationarity conditions of the kinds the calculus solves (a ridge penalty's channel, a
    Moreau envelope of the square and the Huber-like pieces, an L1 piece's end), each with
    the variable it is solved for."""
    t, b, x, V, lam, mu = _symbols()
    Vh = sympy.Symbol(V.name + "h", real=True)
    return [
        (Vh * t - b + lam * t, t),                          # ridge: t = b/(lam + Vh)
        ((t - x) / V + t, t),                               # envelope of t^2/2
        ((t - x) / V + mu * sympy.Rational(1, 2), t),      # a linear piece
        (Vh * t - b + lam + mu * t, b),                     # an end solved for the argument
        ((t - x) / V - 1, x),
    ]


def _fresh(eq, var):
    sols = sympy.solve(eq, var, dict=False)
    assert len(sols) == 1
    return sympy.cancel(sols[0])


def test_a_remembered_solution_is_the_expression_a_new_solve_gives(monkeypatch):
    """Solved once (and stored), then read back with :func:`sympy.solve` unavailable: the
    same ``srepr`` as ``cancel(solve(...))`` computed here directly, which also satisfies the
    equation. Planted: the memo never read -> the second pass calls the unavailable solve; the
    entry keyed on the variable alone -> the third and fifth equations (solved for ``t`` and
    ``x`` like others) get another equation's solution."""
    cases = _equations()
    want = [_fresh(eq, var) for eq, var in cases]
    first = [calculus._single_solution(eq, var, "test") for eq, var in cases]

    def refused(*a, **k):
        raise AssertionError("sympy.solve called although the solution is remembered")

    monkeypatch.setattr(sympy, "solve", refused)
    again = [calculus._single_solution(eq, var, "test") for eq, var in cases]
    for (eq, var), w, a, b in zip(cases, want, first, again):
        assert sympy.srepr(a) == sympy.srepr(w), (eq, var)
        assert sympy.srepr(b) == sympy.srepr(w), (eq, var)
        assert sympy.cancel(eq.xreplace({var: b})) == 0, (eq, var, b)


def _entry(eq, var):
    key = f"{sympy.srepr(eq)}\n{sympy.srepr(var)}"
    return key, calculus._solution_entry(key)


@pytest.mark.parametrize("damage", ["another_key", "not_read_back", "seal", "not_sympy"])
def test_an_entry_that_is_not_this_equations_solution_is_not_used(damage):
    """An entry written over the stored one -- for another equation under this name, a
    solution text that does not read back as itself (``Add(Integer(1), Integer(1))`` is
    ``Integer(2)``), a damaged seal, a text that is no SymPy expression -- is ignored and the
    solution computed again (and right). Planted: the key comparison removed ->
    'another_key' fails; the read-back comparison removed -> 'not_read_back' fails."""
    from replica.symbolic.codegen import _sealed

    t, b, x, V, lam, mu = _symbols()
    eq, var = (t - x) / V + lam * t, t
    want = _fresh(eq, var)
    key, cache = _entry(eq, var)
    if cache is None:
        pytest.skip("no code cache folder")
    wrong = sympy.srepr(x + 1)
    text = {"another_key": f"{sympy.srepr(eq + 1)}\n{sympy.srepr(var)}\n=\n{wrong}",
            "not_read_back": f"{key}\n=\nAdd(Integer(1), Integer(1))",
            "seal": f"{key}\n=\n{wrong}",
            "not_sympy": f"{key}\n=\n__import__('os').getcwd()"}[damage]
    sealed = _sealed(text)
    if damage == "seal":
        sealed = sealed.replace("Symbol", "Symbo1", 1)
    with open(cache.path("solution", ".txt"), "w") as fh:
        fh.write(sealed)
    assert calculus._remembered_solution(key) is None
    got = calculus._single_solution(eq, var, "test")
    assert sympy.srepr(got) == sympy.srepr(want)
    # and the entry is this equation's again
    assert sympy.srepr(calculus._remembered_solution(key)) == sympy.srepr(want)
