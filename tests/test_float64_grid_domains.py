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



def _inside(x: float, dom) -> bool:
    """Whether one value lies in ``dom`` -- the domain's definition, written out here: finite,
    or +inf where allowed; above the lower bound (strictly where it is open) and below the upper
    one."""
    if x != x or x == -np.inf or (x == np.inf and not dom.allow_inf):
        return False
    if dom.lower is not None and (x <= dom.lower if dom.lower_open else x < dom.lower):
        return False
    return dom.upper is None or (x < dom.upper if dom.upper_open else x <= dom.upper)


def test_the_domain_test_of_a_grid_is_every_value_s():
    """(about 0.1 s) ``_check_grid_domains`` accepts a grid exactly where every value lies in
    its parameter's domain (session 54: a grid whose minimum and maximum are inside is accepted
    after two reductions -- min and max are NaN where a value is, -inf is never inside, +inf
    only where allowed -- and any other grid goes on to the value-by-value test). For every
    numeric domain of three built-in models, 400 random small grids of the values at and one
    ulp around each bound, 0.5, 1, NaN and +-inf: the verdict against the definition applied
    value by value here, and a refused grid names its parameter."""
    from types import SimpleNamespace

    from replica.models import get
    from replica.numerics.grid import _check_grid_domains, _layout

    rng = np.random.default_rng(54)
    seen = set()
    for model in ("lowrank", "isotropic", "alignment"):
        schema = get(model).schema
        for name, dom in _layout(schema).bounds.items():
            key = (dom.lower, dom.lower_open, dom.upper, dom.upper_open, dom.allow_inf)
            special = [0.5, 1.0, 2.0, np.nan, np.inf, -np.inf]
            for b in (dom.lower, dom.upper):
                if b is not None:
                    special += [b, np.nextafter(b, -np.inf), np.nextafter(b, np.inf)]
            # a problem with this one parameter and no rules: the domain test alone
            problem = SimpleNamespace(schema=type("S", (), {
                "rules": (), "__getitem__": lambda self, k: SimpleNamespace(option=f"--{k}")})())
            for _ in range(400):
                v = rng.choice(special, size=rng.integers(2, 6))
                want = all(_inside(float(x), dom) for x in v)
                seen.add((key, want))
                try:
                    _check_grid_domains(problem, {name: v}, {}, {name: dom})
                    got = True
                except ParameterError as exc:
                    assert exc.parameter == f"--{name}"
                    got = False
                assert got == want, (model, name, v)
    assert {w for _, w in seen} == {True, False}
