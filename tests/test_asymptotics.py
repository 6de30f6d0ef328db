"""alpha -> oo expansions of the low-rank model (replica.analysis.asymptotics) against direct
solves."""

import pytest
import sympy

import replica
from replica.analysis import asymptotics as S
from replica.models import lowrank as L
from replica.numerics import agreement_digits, precision

pytestmark = pytest.mark.slow  # series against direct solves at alpha = 1e12

POINTS = {"scarce": dict(tau="13/5", kappa="2/5", rho="7/10", sigma="3/10"),
          "rich": dict(tau="9/4", kappa="1/2", rho="3/10", sigma="1/2"),
          "critical": dict(tau="9/4", kappa="1/2", rho="1/2", sigma="3/10")}


@pytest.mark.parametrize("side", S.SIDES)
@pytest.mark.parametrize("name", ["m0", "q0", "qbar", "idg", "odg", "tm"])
def test_expansion_matches_direct_solve_at_alpha_1e12(side, name):
    p = POINTS[side]
    alpha = 10**12
    r = replica.solve("lowrank", alpha=alpha, tau=p["tau"], kappa=p["kappa"], rho=p["rho"],
                      sigma=p["sigma"], dps=40, verify=False)
    with precision(40):
        approx = S.evaluate(name, side, alpha, **p)
        exact = r[name]
        assert agreement_digits(approx, exact, 40) >= 20, (side, name, approx, exact)


@pytest.mark.parametrize("side", ["scarce", "rich"])
def test_truncation_error_scales_like_alpha_cubed(side):
    """The series stops before varepsilon^3: doubling alpha divides the error by ~8."""
    p = POINTS[side]
    errs = []
    for alpha in (10**4, 2 * 10**4):
        r = replica.solve("lowrank", alpha=alpha, tau=p["tau"], kappa=p["kappa"], rho=p["rho"],
                          sigma=p["sigma"], dps=40, verify=False)
        with precision(40):
            errs.append(abs(S.evaluate("q0", side, alpha, **p) - r["q0"]))
    with precision(40):
        assert 6 < errs[0] / errs[1] < 10


def test_powers_of_alpha_change_form_at_the_transition():
    assert S.powers_of_alpha("q0", "scarce") == [1, 0, -1, -2]   # structural noise O(alpha)
    assert S.powers_of_alpha("q0", "rich") == [0, -1, -2]        # O(1): the structure is learnt
    crit = S.powers_of_alpha("q0", "critical")
    assert sympy.Rational(1, 2) in crit and sympy.Rational(-1, 2) in crit
    assert max(crit) == sympy.Rational(1, 2)                      # q0 ~ sqrt(alpha) at rho = kappa
    assert S.powers_of_alpha("m0", "critical")[:2] == [0, sympy.Rational(-1, 2)]


def test_spec_expansions_of_qbar_and_q0_section_4_3b():
    """The two leading orders at large alpha: qbar = sigma^2 p0/(tau-1) alpha/(1+sigma^2)
    + m* + (m* p0 + sigma^2 G1)/(tau-1) + O(1/alpha); q0 likewise (task-scarce side includes
    the O(1) term m* p0~/(tau-1) the authors' notebook leaves out)."""
    a, t, k, r, s = L.alpha, L.tau, L.kappa, L.rho, L.sigma
    for side in ("scarce", "rich"):
        ms = k if side == "scarce" else r
        p0 = 1 - ms
        pt0 = (1 - k / r) if side == "scarce" else 0
        G1 = k**2 * r / (r - k) if side == "scarce" else k * r**2 / (k - r)
        qbar_spec = s**2 * p0 / (t - 1) * a / (1 + s**2) + ms + (ms * p0 + s**2 * G1) / (t - 1)
        q0_spec = ms / r + s**2 * G1 / (r * (t - 1)) + s**2 * pt0 / (t - 1) * a / (1 + s**2) \
            + ms * pt0 / (t - 1)
        for name, spec in (("qbar", qbar_spec), ("q0", q0_spec)):
            ours = sympy.expand(S.expansion(name, side))
            lead = sum(term for term in sympy.Add.make_args(ours)
                       if term.as_coeff_exponent(a)[1] >= 0)
            assert sympy.simplify(lead - spec) == 0, (side, name)


def test_expand_cli(cli):
    rc, out, err = cli("expand", "lowrank", "--quantity", "m0", "--side", "critical")
    assert rc == 0, err
    assert "-1/2" in out.splitlines()[0]
    rc, _, err = cli("expand", "lowrank", "--quantity", "m0", "--side", "middle")
    assert rc == 2 and err.count("\n") == 1
