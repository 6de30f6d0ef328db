"""Checks shared by both derivations (replica.derivations): every step verifies, every step is
titled and checked, and the committed .tex equals a fresh rendering."""

import importlib
import os

import pytest
from conftest import REPO

from replica.derivations import get
from replica.latex import comparable, render

pytestmark = pytest.mark.slow  # builds both derivations and runs every step check

NAMES = ("alignment", "lowrank")
_OUTCOMES = {}


def outcomes(name):
    if name not in _OUTCOMES:
        _OUTCOMES[name] = get(name).run_checks()
    return _OUTCOMES[name]


def titles(name) -> dict:
    """The step names of a derivation, from its module's static ``TITLES`` (building the
    derivation takes seconds: collecting the tests must not; that ``TITLES`` names exactly the
    steps is asserted below)."""
    return importlib.import_module(f"replica.derivations.{name}").TITLES


@pytest.mark.parametrize("name,step", [(n, s) for n in NAMES for s in titles(n)])
def test_step_check_passes(name, step):
    (o,) = [o for o in outcomes(name) if o.step == step]
    assert o.passed, o.reason


@pytest.mark.parametrize("name", NAMES)
def test_every_step_has_a_check_and_a_title(name):
    steps = get(name).steps
    for s in steps:
        assert s.check is not None, s.name
        assert s.name in titles(name)
        assert s.objects and s.sentence
    assert sorted(titles(name)) == sorted(s.name for s in steps)


@pytest.mark.parametrize("name", NAMES)
def test_committed_tex_is_regenerated(name):
    path = os.path.join(REPO, "derivations", f"{name}.tex")
    with open(path, encoding="utf-8") as fh:
        committed = fh.read()
    generated = render(get(name), outcomes=outcomes(name))
    assert comparable(committed) == comparable(generated), (
        f"derivations/{name}.tex is stale: run `replica appendix {name} -o derivations`")
