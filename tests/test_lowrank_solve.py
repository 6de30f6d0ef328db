"""Low-rank model: solving the saddle point (golden values, precision, closed forms, limits,
errors and their decomposition, float64 grids, parameter checks)."""

from fractions import Fraction as Fr

import mpmath
import numpy as np
import pytest

import replica
from replica.errors import ParameterError
from replica.models import lowrank as L
from replica.models.lowrank_problem import PROBLEM as LOWRANK
from replica.numerics import agreement_digits
from replica.numerics.driver import solve_params
from replica.numerics.machine import evaluate
from replica.params import to_mpf

# Golden fixed points of the authors' public code, with sigma_test = 0 and alpha_test = alpha. (alpha, tau, kappa, lam,
# sigma, rho) -> values with the decimals given there.
GOLDEN = {
    1: (("2", "2.25", "1.5", "0", "0.3", "0.9"),
        dict(q="0.68939357", m="0.71924379", chi="0.41211921", qbar="0.59900035",
             chibar="0.71170788", qhat="0.83333333", mhat="0.83333333", chihat="0.30896351",
             qbarhat="0.45416667", chibarhat="0.16838511", z="-0.545", mbar="0.51514901",
             m0="0.57238779", q0="0.60508602", tm="0.55040616", idg="0.75981063",
             odg="0.86820251")),
    2: (("2.3", "1.7", "1.0", "3.0", "0.003", "0.2"),
        dict(q="0.47800230", m="0.67868216", chi="0.08878183", qbar="0.08914485",
             chibar="0.24137060", qhat="1.42411179", chihat="0.19017079", qbarhat="0.61918461",
             chibarhat="0.08268369", z="-2.54136272", q0="0.42047444", m0="0.63217627",
             tm="0.15939661", idg="0.19488052", odg="0.87503298")),
    3: (("1", "0.5", "0.5", "0.1", "0.5", "0.3"),
        dict(q="0.55901707", m="0.58464011", chi="5.02954779", qbar="0.31866619",
             chibar="10.52134309", qhat="0.05213431", z="-3.16812267", q0="0.45891236",
             chihat="0.00282146", mbar="0.13110600", m0="0.43702000", tm="0.70840304",
             idg="0.90353856", odg="1.37512039")),
}


def _half_ulp(text):
    decimals = len(text.split(".")[1]) if "." in text else 0
    return mpmath.mpf(5) * mpmath.mpf(10) ** (-decimals - 1)


def _solve_golden(n, dps=30):
    (a, t, k, lam, s, r), _ = GOLDEN[n]
    return replica.solve("lowrank", alpha=a, tau=t, kappa=k, rho=r, sigma=s, lam=lam, dps=dps)


@pytest.fixture(scope="module")
def golden_results():
    return {n: _solve_golden(n) for n in GOLDEN}


@pytest.mark.parametrize("n", sorted(GOLDEN))
def test_golden_fixed_points_to_all_digits_given(golden_results, n):
    res = golden_results[n]
    _, want = GOLDEN[n]
    assert res.converged and res.digits == 30
    with mpmath.workdps(30):
        for key, text in want.items():
            got = res[key]
            assert abs(got - mpmath.mpf(text)) <= _half_ulp(text), (key, got, text)


@pytest.mark.parametrize("method", ["start", "damped"])
def test_golden_fixed_points_float64(method):
    for n, ((a, t, k, lam, s, r), want) in GOLDEN.items():
        out = replica.solve_float64("lowrank", alpha=float(a), tau=float(t), kappa=float(k),
                                    rho=float(r), sigma=float(s), lam=float(lam), method=method)
        assert bool(out["converged"])
        for key, text in want.items():
            assert abs(float(out[key]) - float(text)) <= float(_half_ulp(text)) + 1e-12, \
                (n, key)


def test_golden_point_2_through_replica_solve():
    res = replica.solve("lowrank", alpha="2.3", tau="1.7", kappa=1, rho="0.2", sigma="0.003",
                        lam=3, dps=20)
    assert res.model == "lowrank" and res.digits == 20
    with mpmath.workdps(20):
        assert abs(res["tm"] - mpmath.mpf("0.15939661")) < mpmath.mpf("5e-9")


def test_dps60_agrees_with_dps40_and_residual():
    for n in (2, 3):
        r40, r60 = _solve_golden(n, dps=40), _solve_golden(n, dps=60)
        assert r40.digits == 40 and r60.digits == 60
        assert r60.residual < mpmath.mpf(10) ** -(60 - 5)
        assert r40.residual < mpmath.mpf(10) ** -(40 - 5)
        for key in L.REPORTED_ORDER + L.ERROR_KEYS:
            assert agreement_digits(r40[key], r60[key], 40) >= 35, key
        for prot in L.ERROR_KEYS:
            for part in L.PART_KEYS:
                a = r40.groups["decomposition"][prot][part]
                b = r60.groups["decomposition"][prot][part]
                assert agreement_digits(a, b, 40) >= 35


@pytest.mark.parametrize("params", [
    ("2", "2.25", "1.5", "0.9", "0.3"),
    ("1e6", "2.6", "0.4", "0.7", "0.01"),
    ("3", "1.001", "0.7", "0.35", "0.5"),
    ("1/2", "5", "3", "1", "0"),
    ("7", "13/10", "1/4", "1/2", "2"),
])
def test_lambda0_closed_form_equals_the_solved_fixed_point(params):
    """(T1)-(T5) vs the Newton solution of the derived equations, >= 40 digits at dps 50;
    qhat = (tau-1)/kappa and Delta = tau/(tau-1) exactly; E_tr = tau X/(tau-1) = TM error at
    sigma_test = sigma."""
    a, t, k, r, s = params
    res = replica.solve("lowrank", alpha=a, tau=t, kappa=k, rho=r, sigma=s, lam=0, sigma_test=s,
                        dps=50)
    cf = evaluate(LOWRANK, "lambda0", alpha=a, tau=t, kappa=k, rho=r, sigma=s, dps=50)
    assert res.digits == 50
    with mpmath.workdps(50):
        for key, val in cf.items():
            if key in L.ERROR_KEYS:  # the closed form's errors are at sigma_test = 0
                continue
            if key == "E_tr":
                assert agreement_digits(val, res["tm"], 50) >= 40
                continue
            assert agreement_digits(val, res[key], 50) >= 40, key
        tau_, kap = to_mpf(Fr(t)), to_mpf(Fr(k))
        assert agreement_digits(res["qhat"], (tau_ - 1) / kap, 50) >= 45
        delta = 1 + res["chi"] + (1 + to_mpf(Fr(s)) ** 2) / to_mpf(Fr(a)) * res["chibar"]
        assert agreement_digits(delta, tau_ / (tau_ - 1), 50) >= 45


def test_rho_one_idg_equals_odg():
    for lam in ("0", "0.2"):
        res = replica.solve("lowrank", alpha="3", tau="1.6", kappa="0.8", rho="1", sigma="0.4",
                            lam=lam, dps=30)
        assert agreement_digits(res["idg"], res["odg"], 30) >= 29
        assert agreement_digits(res["m0"], res["mbar"], 30) >= 29
        assert agreement_digits(res["q0"], res["qbar"], 30) >= 29
        d = res.groups["decomposition"]
        for part in L.PART_KEYS:
            assert agreement_digits(d["idg"][part], d["odg"][part], 30) >= 28


@pytest.mark.parametrize("sigma_test,alpha_test", [("0", None), ("0.7", "5"), ("0.3", "1/3")])
def test_decomposition_sums_to_the_errors_and_signal_is_nonnegative(sigma_test, alpha_test):
    res = replica.solve("lowrank", alpha="2", tau="0.8", kappa="0.6", rho="0.5", sigma="0.3",
                        lam="0.05", alpha_test=alpha_test, sigma_test=sigma_test, dps=30)
    d = res.groups["decomposition"]
    with mpmath.workdps(30):
        st = to_mpf(Fr(sigma_test))
        for prot in L.ERROR_KEYS:
            total = mpmath.fsum(d[prot][p] for p in L.PART_KEYS)
            assert agreement_digits(total, res[prot], 30) >= 28
            assert d[prot]["signal"] >= 0
            assert d[prot]["memorization"] >= 0 and d[prot]["structural"] >= 0
            assert abs(d[prot]["noise"] - st**2) < mpmath.mpf(10) ** -28


def test_decomposition_on_a_float64_grid():
    a = np.array([0.5, 2, 8, 32])[:, None]
    r = np.array([0.1, 0.4, 0.7, 1.0])[None, :]
    out = replica.solve_float64("lowrank", alpha=a, tau=2.25, kappa=0.5, rho=r, sigma=0.3, lam=0.0,
                                sigma_test=0.2)
    for prot in L.ERROR_KEYS:
        parts = sum(out[f"{prot}_{p}"] for p in L.PART_KEYS)
        np.testing.assert_allclose(parts, out[prot], rtol=1e-12)
        assert np.all(out[f"{prot}_signal"] >= 0)
    assert out["tm"].shape == (4, 4) and np.all(out["converged"])
    assert np.all(out["tm"] < out["idg"]) and np.all(out["idg"] <= out["odg"] + 1e-12)


def test_alpha_test_shifts_all_three_errors_by_the_same_amount():
    r1 = replica.solve("lowrank", alpha="4", tau="1.2", kappa="3", rho="0.5", sigma="0.9",
                       lam="0.1", alpha_test="2", dps=25)
    r2 = replica.solve("lowrank", alpha="4", tau="1.2", kappa="3", rho="0.5", sigma="0.9",
                       lam="0.1", alpha_test="8", dps=25)
    with mpmath.workdps(25):
        shifts = [r1[k] - r2[k] for k in L.ERROR_KEYS]
        assert abs(shifts[0] - shifts[1]) < mpmath.mpf(10) ** -22
        assert abs(shifts[0] - shifts[2]) < mpmath.mpf(10) ** -22
        assert agreement_digits(shifts[0], r1["qbar"] * (mpmath.mpf(1) / 2 - mpmath.mpf(1) / 8),
                                25) >= 22


def test_tm_equals_training_error_at_test_equal_train():
    """epsilon_TM(sigma_test = sigma, alpha_test = alpha) = E_tr = Delta^2 chihat kappa/tau."""
    res = replica.solve("lowrank", alpha="3", tau="0.7", kappa="2", rho="0.6", sigma="0.5",
                        lam="0.2", sigma_test="0.5", dps=30)
    with mpmath.workdps(30):
        eps = (1 + mpmath.mpf("0.25")) / 3
        delta = 1 + res["chi"] + eps * res["chibar"]
        e_tr = res["chihat"] * delta**2 * 2 / mpmath.mpf("0.7")
        assert agreement_digits(res["tm"], e_tr, 30) >= 28


def test_effective_ridge_holds_at_the_solution():
    res = replica.solve("lowrank", alpha="1", tau="0.5", kappa="0.5", rho="0.3", sigma="0.5",
                        lam="0.1", dps=30)
    with mpmath.workdps(30):
        lam, eps, kap, tau = mpmath.mpf("0.1"), mpmath.mpf("1.25"), mpmath.mpf("0.5"), \
            mpmath.mpf("0.5")
        uv = lam / res["qhat"]
        assert agreement_digits(-res["z"] - eps, uv, 30) >= 28
        from replica.spectra import lowrank_stieltjes_mp
        g = lowrank_stieltjes_mp(res["z"], kap, mpmath.mpf("0.3"))
        assert abs(uv * g - (1 - tau) - lam * kap / uv) < mpmath.mpf(10) ** -27


@pytest.mark.slow
def test_kappa_infinite_is_the_limit():
    inf = replica.solve("lowrank", alpha="2", tau="2.25", kappa="inf", rho="0.9", sigma="0.3",
                        lam=0, dps=30)
    big = replica.solve("lowrank", alpha="2", tau="2.25", kappa="1e15", rho="0.9", sigma="0.3",
                        lam=0, dps=30)
    assert inf.digits == 30
    for key in ("q", "m", "chi", "qbar", "chibar", "z", "mbar", "m0", "q0", "tm", "idg", "odg"):
        assert agreement_digits(inf[key], big[key], 30) >= 13, key
    assert inf["qhat"] == 0 and inf["chihat"] == 0
    assert any("kappa = inf" in n for n in inf.notes)
    cf = evaluate(LOWRANK, "lambda0_kappa_infinite", alpha="2", tau="2.25", kappa="inf",
                  rho="0.9", sigma="0.3", dps=30)
    assert agreement_digits(cf["q0"], inf["q0"], 30) >= 28
    out = replica.solve_float64("lowrank", alpha=2.0, tau=2.25, kappa=np.inf, rho=0.9, sigma=0.3)
    assert abs(float(out["tm"]) - float(inf["tm"])) < 1e-12


def test_mpmath_fallback_start_and_huge_alpha():
    p = LOWRANK.parse(alpha="2.3", tau="1.7", kappa="1", rho="0.2", sigma="0.003", lam="3")
    a = solve_params(LOWRANK, p, dps=30)
    b = solve_params(LOWRANK, p, dps=30, force_mp_start=True)
    assert any("float64 start unavailable" in n for n in b.notes)
    for key in L.REPORT_KEYS[:17]:
        assert agreement_digits(a[key], b[key], 30) >= 29, key
    # alpha beyond float64: the float64 start fails and the mpmath path takes over, with the
    # guard digits needed for the O(alpha) / O(1/alpha) cancellations
    huge = replica.solve("lowrank", alpha="1e400", tau="2.6", kappa="0.4", rho="0.7", sigma="0.01",
                         lam=0, dps=20)
    assert huge.digits == 20 and any("float64 start unavailable" in n for n in huge.notes)
    with mpmath.workdps(20):
        # alpha -> oo: m0 -> min(kappa, rho)/rho, TM -> sigma^2 min(kappa,rho)/(tau-1) (T4)
        assert agreement_digits(huge["m0"], mpmath.mpf("0.4") / mpmath.mpf("0.7"), 20) >= 18
        ratio = huge["idg"] / mpmath.mpf(10) ** 400
        want = mpmath.mpf("0.0001") * mpmath.mpf("0.3") / (mpmath.mpf("0.7") * mpmath.mpf("1.6")
                                                            * mpmath.mpf("1.0001"))
        assert agreement_digits(ratio, want, 20) >= 15


def test_large_alpha_expansion_has_order_one_over_alpha_residual():
    """Large-alpha limit: eps_IDG/alpha -> sigma^2 (rho-kappa)_+ / (rho (tau-1)(1+sigma^2)) with
    an O(1/alpha) correction (halving when alpha doubles), on both sides of rho = kappa."""
    for rho_ in ("0.3", "0.7"):
        devs = []
        for a in ("1e6", "2e6"):
            res = replica.solve("lowrank", alpha=a, tau="2.25", kappa="0.5", rho=rho_, sigma="0.3",
                                lam=0, dps=30)
            with mpmath.workdps(30):
                r, k, s2 = mpmath.mpf(rho_), mpmath.mpf("0.5"), mpmath.mpf("0.09")
                lim = s2 * max(r - k, 0) / (r * mpmath.mpf("1.25") * (1 + s2))
                devs.append(abs(res["idg"] / mpmath.mpf(a) - lim))
        with mpmath.workdps(30):
            assert 1.8 < devs[0] / devs[1] < 2.2


def test_float64_grid_matches_high_precision_and_reports():
    alphas = np.array([1.0, 4.0, 16.0])
    out = replica.solve_float64("lowrank", alpha=alphas, tau=0.5, kappa=0.5, rho=0.3, sigma=0.5,
                                lam=0.1)
    assert set(L.REPORT_KEYS) <= set(out) and out["iterations"].shape == (3,)
    assert np.all(out["residual"] < 1e-11)
    for i, a in enumerate(alphas):
        res = replica.solve("lowrank", alpha=int(a), tau="0.5", kappa="0.5", rho="0.3", sigma="0.5",
                            lam="0.1", dps=20, verify=False)
        for key in ("q", "qbar", "chibar", "tm", "idg", "odg", "q0"):
            assert abs(float(out[key][i]) - float(res[key])) <= 1e-11 * abs(float(res[key]))


def test_float64_near_the_interpolation_threshold_and_tiny_ridge():
    names = ("alpha", "tau", "kappa", "rho", "sigma", "lam")
    for args in [(2, 1.001, 1.5, 0.9, 0.3, 0.0), (1, 0.99, 0.5, 0.3, 0.5, 1e-6)]:
        out = replica.solve_float64("lowrank", **dict(zip(names, args)))
        res = replica.solve("lowrank", **dict(zip(names, map(str, args))), dps=20, verify=False)
        assert abs(float(out["tm"]) - float(res["tm"])) < 1e-9 * float(res["tm"])


def test_float64_parameter_errors():
    with pytest.raises(ParameterError, match="--lam"):
        replica.solve_float64("lowrank", alpha=2.0, tau=0.5, kappa=1.0, rho=0.5, sigma=0.3, lam=0.0)
    with pytest.raises(ParameterError, match="--rho"):
        replica.solve_float64("lowrank", alpha=2.0, tau=2.0, kappa=1.0, rho=np.array([0.5, 1.5]),
                              sigma=0.3, lam=0.0)
    with pytest.raises(ParameterError, match="--lam"):
        replica.solve_float64("lowrank", alpha=2.0, tau=2.0, kappa=np.array([1.0, np.inf]),
                              rho=0.5, sigma=0.3, lam=np.array([0.0, 0.1]))


@pytest.mark.slow
def test_float64_grid_mixing_finite_and_infinite_kappa():
    """Each grid point is solved by the variant of the model that applies there (kappa = inf
    has its own), with the values of separate solves."""
    kw = dict(alpha=2.0, tau=2.0, rho=0.5, sigma=0.3, lam=0.0)
    mixed = replica.solve_float64("lowrank", kappa=np.array([1.0, np.inf]), **kw)
    finite = replica.solve_float64("lowrank", kappa=1.0, **kw)
    infinite = replica.solve_float64("lowrank", kappa=np.inf, **kw)
    for key in ("q", "m0", "tm", "idg"):
        assert mixed[key][0] == finite[key] and mixed[key][1] == infinite[key]
    assert mixed["converged"].all()


@pytest.mark.parametrize("kwargs,name", [
    (dict(rho="0"), "--rho"), (dict(rho="1.01"), "--rho"), (dict(rho="-1"), "--rho"),
    (dict(sigma="-0.1"), "--sigma"), (dict(kappa="0"), "--kappa"), (dict(lam="-1"), "--lam"),
    (dict(tau="0"), "--tau"), (dict(alpha="-2"), "--alpha"), (dict(alpha="x"), "--alpha"),
    (dict(tau="0.5"), "--lam"), (dict(tau="1"), "--tau"), (dict(kappa="inf", lam="1"), "--lam"),
    (dict(alpha_test="0"), "--alpha-test"), (dict(sigma_test="-1"), "--sigma-test"),
])
def test_parameter_errors_name_the_parameter(kwargs, name):
    base = dict(alpha="2", tau="2", kappa="1", rho="0.5", sigma="0.3", lam="0")
    base.update(kwargs)
    with pytest.raises(ParameterError) as exc:
        replica.solve("lowrank", **base, dps=15)
    assert exc.value.parameter == name
    if kwargs == dict(tau="0.5"):
        assert "no admissible solution" in str(exc.value) and "--lam > 0" in str(exc.value)


def test_exact_parameters_echo():
    res = replica.solve("lowrank", alpha="0.3e1", tau="9/4", kappa="1.5", rho="0.9", sigma="3/10",
                        dps=15, verify=False)
    assert res.params == {"alpha": "3", "tau": "9/4", "kappa": "3/2", "rho": "9/10",
                          "sigma": "3/10", "lam": "0", "alpha_test": "3", "sigma_test": "0",
                          "test": "idg"}


def test_float64_keeps_its_digits_at_huge_alpha():
    """With the atom of the spectrum split off (g = -p0/z + rho h), every reported float64 value,
    including the small decomposition parts, stays accurate at alpha = 1e12 (z ~ -1e-12, g ~ 1e12)."""
    out = replica.solve_float64("lowrank", alpha=1e12, tau=2.6, kappa=0.4, rho=0.7, sigma=0.01,
                                lam=0.0)
    ref = replica.solve("lowrank", alpha="1e12", tau="2.6", kappa="0.4", rho="0.7", sigma="0.01",
                        lam=0, dps=30)
    flat = dict(ref.values())
    for prot in L.ERROR_KEYS:
        for part in L.PART_KEYS:
            flat[f"{prot}_{part}"] = ref.groups["decomposition"][prot][part]
    for key, val in flat.items():
        if val == 0:
            assert float(out[key]) == 0.0
            continue
        assert abs(float(out[key]) - float(val)) <= 1e-10 * abs(float(val)), key


GOLDEN_2_AT_50 = dict(
    q="0.47800229793704277714179139203473823515121723106365",
    m="0.67868215791008214045361117385409676283237558233798",
    chi="0.088781832556562975962692292603439912919521852321375",
    qbar="0.089144852329481877090881340157634600633724424295136",
    chibar="0.24137059579423263526918136767060634756337594667317",
    tm="0.15939661356447931236103919222116844889243320738558",
    idg="0.19488052439138758167600580666869580267826247003918",
    odg="0.87503297527860609387851057527678922658004194292928")
"""Golden point 2 at 50 digits as the verified solve gave it before the re-solve started from the
first solve's solution and Newton ran in ball arithmetic end to end (commit 2db9fd2)."""


def test_golden_point_2_at_50_digits_unchanged():
    res = replica.solve("lowrank", alpha="2.3", tau="1.7", kappa=1, rho="0.2", sigma="0.003",
                        lam=3, dps=50)
    assert res.digits == 50
    for key, text in GOLDEN_2_AT_50.items():
        assert mpmath.nstr(res[key], 50) == text, key


def test_the_verifying_re_solve_sees_an_inaccurate_first_solve(monkeypatch):
    """The re-solve starts from the first solve's solution but is a complete Newton solve at the
    higher precision: a first solution wrong in its 30th digit (a perturbation applied at the
    first working precision only) is caught -- the agreement falls to about 30 digits and the
    driver raises the working precision until the 50 digits hold."""
    from replica.numerics.machine import Machine

    newton = Machine.newton

    def perturbed(self, x0, P, spec, balls=None, condition=True, **kw):
        rep = newton(self, x0, P, spec, balls, condition, **kw)
        if mpmath.mp.dps == 55:  # the first working precision (50 + 5 guard digits)
            rep.x = [v * (1 + mpmath.mpf(10) ** -30) for v in rep.x]
        return rep

    monkeypatch.setattr(Machine, "newton", perturbed)
    res = replica.solve("lowrank", alpha="2.3", tau="1.7", kappa=1, rho="0.2", sigma="0.003",
                        lam=3, dps=50)
    assert "working precision 55 digits" not in res.digits_how, res.digits_how
    assert res.digits == 50
    for key, text in GOLDEN_2_AT_50.items():
        assert mpmath.nstr(res[key], 50) == text, key
