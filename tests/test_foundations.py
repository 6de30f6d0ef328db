"""The checks of the appendices' foundations section (replica.derivations.foundations) can fail:
a Hessian without the ridge term, zero ridge below the interpolation threshold, and a minimum in
place of the free energy's saddle are caught."""

import pytest

from replica.derivations import alignment as AD
from replica.derivations import foundations as F


def test_hessian_check_catches_a_missing_ridge_term():
    sizes = {AD.n_ctx: 3, AD.P: 2}
    args = (AD.RIDGE_OBJECTIVE, AD.gamma, AD.H_design, AD.Y_labels)
    assert F.hessian_matches(*args, AD.RIDGE_HESSIAN, sizes, AD.explicit, AD.instantiate)
    wrong = 2 * AD.H_design.T * AD.H_design
    assert not F.hessian_matches(*args, wrong, sizes, AD.explicit, AD.instantiate)


def test_unique_minimiser_needs_the_ridge():
    assert F.unique_minimiser(3, 8, 6, True, c=0.1)
    assert not F.unique_minimiser(3, 8, 6, True, c=0.0)  # a flat valley of interpolators


def test_ridgeless_limit_is_the_minimum_norm_interpolator():
    assert F.ridgeless_limits(3, 8, 6, 48, True)
    assert F.ridgeless_limits(4, 8, 8, 64, False)


@pytest.mark.slow  # builds the low-rank derivation and solves its golden points
def test_extremum_check_rejects_a_minimum(monkeypatch):
    from replica.derivations import lowrank as LD
    from replica.derivations.base import run_check
    orig = LD.saddle_inertia
    monkeypatch.setattr(LD, "saddle_inertia",
                        lambda i: tuple([abs(e) for e in x] for x in orig(i)))
    assert not run_check(LD.derivation().step("which_extremum")).passed
