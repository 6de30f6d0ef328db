"""A float64 grid with a parameter value outside its domain (job f64status, session 53).

Every model's float64 grid is refused as a whole where one value lies outside its parameter's
declared domain -- the one check of ``replica.numerics.grid`` (``_check_grid_domains``), for
built-in models and model files alike, as a single point outside the domain is (exit 2 on the
command line); tests/test_float64_fast_call.py and tests/test_fuzz_s51_float64_grids.py pin the
refusal. The error now says which value, at how many points, and the domain's own words
(before: "out of its domain at some grid point").
"""

from __future__ import annotations

import numpy as np
import pytest

import replica
from replica.errors import ParameterError

ISO = dict(alpha=2.0, tau=4.0, kappa=2.0, rho=0.01)


def _refused(model, **kw):
    with pytest.raises(ParameterError) as info:
        replica.solve_float64(model, strict=False, **kw)
    return info.value.parameter, str(info.value)


def test_the_refusal_names_the_value_and_how_many_points():
    """(about 2 s wall at load 11, building the built-in declaration; refused before any code
    is generated) Every example's grids are refused the same way (a survey of each numeric
    parameter of every file in examples/, session 53's f64status report)."""
    option, msg = _refused("isotropic", **dict(ISO, alpha=np.array([2.0, -1.0, 3.0, -2.0])))
    assert option == "--alpha"
    assert "must be positive, got -1.0 at 2 of 4 grid points" in msg, msg
    option, msg = _refused("isotropic", **dict(ISO, rho=np.array([[0.01, np.nan]])))
    assert option == "--rho" and "got nan at 1 of 2 grid points" in msg, msg

