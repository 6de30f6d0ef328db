"""The ridge-regression free energy computed from the model by the Gaussian replica calculus
equals the one ``examples/ridge_regression.py`` declares (and the steps' checks pass)."""

import os
import runpy

import pytest
import sympy

from replica.derivations import gaussian_ridge
from replica.symbolic.spectral import LAMBDA_I, SpectralAverage

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def on_symbolic_spectrum(expr, k=3):
    r"""Every average replaced by its value on a spectrum of ``k`` symbolic eigenvalues
    :math:`c_1..c_k` with weights :math:`1/k`. Two expressions linear in the averages that agree
    identically in :math:`c_1..c_k` agree for every spectrum (set the :math:`c_j` equal)."""
    cs = sympy.symbols(f"c1:{k + 1}", positive=True)
    return expr.replace(lambda e: isinstance(e, SpectralAverage),
                        lambda e: sum(e.args[0].subs(LAMBDA_I, cj) for cj in cs) / k)


def test_derived_free_energy_equals_the_declared_one():
    declared = runpy.run_path(os.path.join(REPO, "examples", "ridge_regression.py"))
    derived = gaussian_ridge.free_energy()
    diff = on_symbolic_spectrum(derived - declared["FREE_ENERGY"])
    assert sympy.simplify(diff) == 0
    # and the comparison can fail: a wrong sign of the noise, or a missing factor 1/2
    sigma = gaussian_ridge.sigma
    for wrong in (derived.subs(sigma, sympy.I * sigma), derived + gaussian_ridge.m / 2):
        assert sympy.simplify(on_symbolic_spectrum(wrong - declared["FREE_ENERGY"])) != 0


@pytest.mark.parametrize("step", gaussian_ridge.steps(), ids=lambda s: s.name)
def test_steps_verify(step):
    assert step.verify()
