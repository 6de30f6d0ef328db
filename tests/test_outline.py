"""A system's outline (:mod:`replica.numerics.outline`): what a solve needs of it at run time,
stored in the code cache so that a later process builds no system. It must round-trip exactly,
equal the outline taken from the system it stands for, and never be stored where it could not
stand for it."""

from __future__ import annotations

import dataclasses

import pytest

from replica.models.alignment_problem import PROBLEM as ALIGNMENT
from replica.models.isotropic_problem import PROBLEM as ISOTROPIC
from replica.models.lowrank_problem import PROBLEM as LOWRANK
from replica.numerics.machine import Machine
from replica.numerics.outline import Outline, load_fact, load_outline, store_fact, store_outline
from replica.symbolic.codegen import CodeCache

VARIANTS = ([(ALIGNMENT, name) for name, _ in ALIGNMENT.variants]
            + [(ALIGNMENT, "resolvent"), (ALIGNMENT, "resolvent_kappa_infinite")]
            + [(ISOTROPIC, name) for name, _ in ISOTROPIC.variants]
            + [(LOWRANK, name) for name, _ in LOWRANK.variants] + [(LOWRANK, "lambda0")])


@pytest.mark.parametrize("problem, variant", VARIANTS, ids=lambda v: getattr(v, "name", v))
def test_the_stored_outline_is_the_systems(problem, variant):
    m = Machine(problem, variant)
    taken = Outline.of(problem.system(variant), problem)
    assert taken.portable
    assert Outline.from_json(taken.to_json()) == taken
    assert load_outline(m.cache) == taken
    assert m.outline == taken
    # the names a solve uses are the system's
    S = problem.system(variant)
    assert list(taken.unknowns) == [str(u) for u in S.unknowns]
    assert list(taken.report) == [entry[0] for entry in S.report]
    declared = []
    for r in S.start.roots:
        chain = []
        while r is not None:
            chain.append((r.increasing, r.what))
            r = r.inner
        declared.append(chain)
    assert [[(r.increasing, r.what) for r in chain] for chain in taken.roots] == declared


def test_a_damaged_or_foreign_outline_is_ignored():
    good = Outline.of(ALIGNMENT.system("ridge"), ALIGNMENT)
    assert Outline.from_json("{not json") is None
    assert Outline.from_json(good.to_json().replace('"format": 1', '"format": 0')) is None
    assert Outline.from_json('{"format": 1, "unknowns": []}') is None


def test_an_outline_whose_spectrum_is_not_the_problems_is_not_stored(tmp_path, monkeypatch):
    monkeypatch.setenv("REPLICA_LAMBDIFY_CACHE", str(tmp_path))
    CodeCache.folder.cache_clear()
    try:
        S = ALIGNMENT.system("ridge")
        own = dataclasses.replace(S, spectrum=lambda p: (p.train, p.test))
        outline = Outline.of(own, ALIGNMENT)
        assert not outline.portable
        cache = CodeCache("test-outline")
        store_outline(cache, outline)
        assert load_outline(cache) is None
        store_outline(cache, Outline.of(S, ALIGNMENT))
        assert load_outline(cache) == Outline.of(S, ALIGNMENT)
    finally:
        CodeCache.folder.cache_clear()


@pytest.mark.parametrize("model, holds_root", [("logistic_regression", True), (None, False)],
                         ids=["logistic_regression", "isotropic"])
def test_whether_the_equations_hold_a_root_is_stored_beside_the_outline(model, holds_root):
    """Whether a system's equations hold an implicit root (a verified solve then keeps mpmath:
    ``Machine._roots_in_equations``) is learned from its SymPy expressions once and stored
    under the code-cache key, so that a second machine reads it without building the system
    (found by the fresh clone's ``make test``: learning it imported SymPy in every cached solve
    of a built-in model, ``test_cli_startup``). Ridge logistic regression's proximal map is a
    root, the isotropic model has none."""
    import os

    from replica.modeling import load_model_file

    if model is None:
        problem, variant = ISOTROPIC, ISOTROPIC.variants[0][0]
    else:
        repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        problem = load_model_file(os.path.join(repo, "examples", f"{model}.py"))
        variant = problem.variants[0][0]
    first = Machine(problem, variant)
    assert first._roots_in_equations() is holds_root
    assert load_fact(first.cache, "implicit-roots") is holds_root
    second = Machine(problem, variant)
    assert second._roots_in_equations() is holds_root
    assert "system" not in second.__dict__  # read from the cache, the system not built


def test_a_stored_fact_round_trips_and_a_damaged_one_is_ignored(tmp_path, monkeypatch):
    monkeypatch.setenv("REPLICA_LAMBDIFY_CACHE", str(tmp_path))
    CodeCache.folder.cache_clear()
    try:
        cache = CodeCache("fact-test-key")
        assert load_fact(cache, "implicit-roots") is None
        for value in (True, False):
            store_fact(cache, "implicit-roots", value)
            assert load_fact(cache, "implicit-roots") is value
        for text in ("not json", "1", '"yes"'):
            with open(cache.path("fact-implicit-roots", ".json"), "w") as fh:
                fh.write(text)
            assert load_fact(cache, "implicit-roots") is None
        assert load_fact(None, "implicit-roots") is None
    finally:
        CodeCache.folder.cache_clear()
