"""A transition located exactly at 0 (found by the issue-26 audit): the two refinements of a
zero agree on no significant digit (values of size 1e-61 of either sign), and `transition`
exited 3 "does not agree between 55 and 82 digits". The Gardner capacity's replica-symmetry
ratio alpha_c(kappa) int Dz theta(z + kappa) crosses 1 at kappa = 0 exactly (alpha_c(0) = 2,
int Dz theta(z) = 1/2, and the ratio is monotone in kappa): the location must be reported as 0
with an absolute bound, the digits counting decimal places of the interval."""

import json

import mpmath

from replica.analysis.scan import location_digits

CAP = "examples/perceptron_capacity.py"


def test_a_level_crossing_at_zero_is_located_as_zero_with_a_bound(cli):
    rc, out, err = cli("transition", "--model", CAP, "--vary", "kappa", "--between", "-1/2,1/3",
                       "--quantity", "at_ratio", "--kind", "level", "--level", "1", "--json")
    assert rc == 0, err
    data = json.loads(out)
    assert data["location"] == "0" and data["converged"] and data["digits"] == 30
    assert any("a zero has no significant digits" in n for n in data["notes"])
    # the value there is the ratio at kappa = 0, 2 * 1/2 = 1, to its 30 digits; the strings are
    # read at 40 digits (at mpmath's default 15 a value wrong at the 20th digit reads as 1)
    with mpmath.workdps(40):
        assert mpmath.mpf(data["location_bound"]) < mpmath.mpf("1e-50")
        assert abs(mpmath.mpf(data["value"]) - 1) < mpmath.mpf("1e-29")


def test_the_text_output_shows_the_bound_not_significant_digits(cli):
    rc, out, err = cli("transition", "--model", CAP, "--vary", "kappa", "--between", "-1/2,1/2",
                       "--quantity", "at_ratio", "--kind", "level", "--level", "1")
    assert rc == 0, err
    assert "kappa = 0  (|kappa| <= " in out


def test_location_digits():
    with mpmath.workdps(90):
        one = mpmath.mpf(1)
        # zero to the working precision: reported as 0, the bound = max size + disagreement
        d, x, bound = location_digits(mpmath.mpf("1e-62"), mpmath.mpf("-3e-63"), one, 55)
        assert x == 0 and d == 55 and bound == mpmath.mpf("1e-62") + mpmath.mpf("1.3e-62")
        # the decimal places the bound fixes, relative to the interval's scale
        d, x, bound = location_digits(mpmath.mpf("4e-50"), mpmath.mpf("-4e-50"), 10**6 * one,
                                      55)
        assert x == 0 and d == 54  # |x| <= 1.2e-49 = 1.2e-55 * 10^6: 54 decimal places of 10^6
        # small but clearly nonzero (above 10^-cap of the scale): its significant digits stand
        a, b = mpmath.mpf("1.234567e-40"), mpmath.mpf("1.234568e-40")
        d, x, bound = location_digits(a, b, one, 55)
        assert bound is None and x == a and d == 6
        # an ordinary location
        d, x, bound = location_digits(mpmath.mpf("1.5"), mpmath.mpf("1.5") + mpmath.mpf("1e-40"),
                                      one, 30)
        assert bound is None and d == 30
        # two exact zeros
        assert location_digits(mpmath.mpf(0), mpmath.mpf(0), one, 30) == (30, 0, None)
