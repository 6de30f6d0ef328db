"""The ridge-regression free energy computed from the model by the Gaussian replica calculus
equals the one ``examples/ridge_regression.py`` declares (and the steps' checks pass)."""

import os
import runpy

import pytest
import sympy

from replica.derivations import gaussian_ridge
from replica.symbolic.spectral import on_symbolic_spectrum

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_derived_free_energy_equals_the_declared_one():
    declared = runpy.run_path(os.path.join(REPO, "examples", "ridge_regression.py"))
    derived = gaussian_ridge.free_energy()
    diff = on_symbolic_spectrum(derived - declared["FREE_ENERGY"])
    assert sympy.simplify(diff) == 0
    # and the comparison can fail: a wrong sign of the noise, or a missing factor 1/2
    sigma = gaussian_ridge.sigma
    for wrong in (derived.subs(sigma, sympy.I * sigma), derived + gaussian_ridge.m / 2):
        assert sympy.simplify(on_symbolic_spectrum(wrong - declared["FREE_ENERGY"])) != 0


@pytest.mark.slow
@pytest.mark.parametrize("step", gaussian_ridge.steps(), ids=lambda s: s.name)
def test_steps_verify(step):
    assert step.verify()
