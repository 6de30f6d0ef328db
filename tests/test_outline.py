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
from replica.numerics.outline import Outline, load_outline, store_outline
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
