"""Certified solves (``replica solve ... --certify``): ball-arithmetic proofs of every digit.

What is checked:

* every golden point and README example of the three built-in models, and the example model
  files, certifies with all requested digits, and every enclosure contains the value of an
  independent solve at twice the precision;
* a deliberately wrong candidate is refused: a perturbed solution (no inclusion), the second root
  of the ridge equation and a spurious root of the alignment system (admissibility not proved);
* a failure is a status with its reason (a full C_train, whose eigenvectors are not enclosed),
  exit 3 on the command line, and ``digits`` is then 0;
* the ball backend itself: integer powers of a ball that contains zero, signs of binary
  constants (two defects that made the proof fail or lie before they were fixed).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import sys
from fractions import Fraction

import mpmath
import pytest

from replica import models
from replica.numerics import certify as C
from replica.numerics.driver import solve_params
from replica.numerics.machine import machine
from replica.numerics.precision import ball_precision, precision

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(HERE, "regression"))
from freeze import CASES  # noqa: E402  (the golden points and README examples)

pytestmark = pytest.mark.slow  # ball-arithmetic proofs at many points

sys.path.pop(0)


def run(argv):
    """``replica ARGV`` in-process: (exit status, stdout)."""
    from replica.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        try:
            status = main(list(argv))
        except SystemExit as exc:
            status = exc.code
    return status, out.getvalue()


def mpf_fraction(v) -> Fraction:
    """An ``mpf`` as the exact Fraction of its binary value."""
    sign, man, exp, _ = v._mpf_
    f = Fraction(man * 2 ** exp) if exp >= 0 else Fraction(man, 2 ** -exp)
    return -f if sign else f


def contains(interval, value, dps) -> bool:
    """Whether the decimal ``[lo, hi]`` contains ``value``, allowed the reference's own error
    (relative ``10^-(dps - 5)``, far below the enclosure radius unless the value is exact)."""
    lo, hi = (Fraction(s) for s in interval)
    v = Fraction(value)
    slack = abs(v) * Fraction(1, 10 ** (dps - 5)) + Fraction(1, 10 ** (dps * 2))
    return lo - slack <= v <= hi + slack


def reference_values(problem, params, dps) -> dict:
    """Every reported value from a solve at ``dps`` digits (no verification, no certificate)."""
    res = solve_params(problem, params, dps=dps, verify=False)
    with mpmath.workdps(dps + 10):
        return {k: (None if v is None else mpmath.mpf(v)) for k, v in res.all_values.items()}


def check_enclosures(data, problem, raw, dps):
    params = problem.schema.parse(raw)
    ref = reference_values(problem, params, 2 * dps)
    encl = data["certificate"]["enclosures"]
    assert encl, "no value was enclosed"
    bad = []
    with mpmath.workdps(2 * dps + 10):
        for name, interval in encl.items():
            if ref.get(name) is not None:
                v = mpf_fraction(ref[name])
                if not contains(interval, v, 2 * dps):
                    bad.append(f"{name}: {mpmath.nstr(ref[name], 20)} not in {interval}")
    assert not bad, bad


def raw_of(argv) -> tuple:
    """(model name, raw parameters, dps) of a ``replica solve`` argument list."""
    name, rest = argv[1], argv[2:]
    raw, dps = {}, 30
    for key, val in zip(rest[::2], rest[1::2]):
        if key == "--dps":
            dps = int(val)
        else:
            raw[key[2:].replace("-", "_")] = val
    return name, raw, dps


@pytest.mark.parametrize("case", sorted(CASES))
def test_golden_points_certify_and_enclose_a_2x_solve(case):
    argv = CASES[case]
    status, out = run(list(argv) + ["--json", "--certify"])
    assert status == 0, out
    data = json.loads(out)
    assert data["certified"] is True and data["certificate"]["reason"] is None
    assert data["digits"] == data["dps"], data["digits_how"]
    assert "enclosures proved" in data["digits_how"]
    name, raw, dps = raw_of(argv)
    check_enclosures(data, models.get(name), raw, dps)


@pytest.mark.parametrize("argv", [
    ["examples/ridge_regression.py", "--alpha", "2", "--lam", "1/10", "--sigma", "1/2",
     "--dps", "40"],
    ["examples/ridge_regression.py", "--alpha", "2", "--lam", "1/10", "--sigma", "1/2",
     "--d", "50", "--covariance", "powerlaw:1"],
    ["examples/structured_teacher.py", "--alpha", "2", "--lam", "1/10", "--sigma", "1/2",
     "--d", "30", "--covariance", "powerlaw:1", "--teacher", "spike:2"],
    ["examples/lowrank_partial_overlap.py", "--alpha", "2", "--tau", "9/4", "--kappa", "3/2",
     "--rho", "9/10", "--sigma", "3/10", "--phi", "1/4"],
], ids=["ridge", "ridge-powerlaw", "structured-teacher", "partial-overlap"])
def test_model_files_certify(argv):
    path = os.path.join(REPO, argv[0])
    status, out = run(["solve", "--model", path, *argv[1:], "--json", "--certify"])
    assert status == 0, out
    data = json.loads(out)
    assert data["certified"] is True and data["digits"] == data["dps"]
    from replica.modeling import load_model_file

    problem = load_model_file(path)
    raw = {k[2:].replace("-", "_"): v for k, v in zip(argv[1::2], argv[2::2]) if k != "--dps"}
    check_enclosures(data, problem, raw, data["dps"])


@pytest.mark.parametrize("argv", [
    # at the low-rank transition rho = kappa exactly (the spectral closed forms have |kappa - rho|)
    ["lowrank", "--alpha", "1000", "--tau", "2", "--kappa", "2/5", "--rho", "2/5",
     "--sigma", "1/100"],
    # near it on the task-scarce side, at huge alpha
    ["lowrank", "--alpha", "1000000", "--tau", "2", "--kappa", "2/5", "--rho", "3/5",
     "--sigma", "1/100"],
    # the interpolation threshold tau = 1 with a small ridge
    ["isotropic", "--alpha", "2", "--tau", "1", "--kappa", "1/2", "--rho", "1/100",
     "--lam", "1/1000"],
    ["lowrank", "--alpha", "2", "--tau", "1", "--kappa", "1/2", "--rho", "1/4",
     "--sigma", "1/10", "--lam", "1/1000"],
    ["alignment", "--alpha", "2", "--tau", "1", "--kappa", "1", "--rho", "1/100", "--lam",
     "1/1000", "--d", "10", "--train", "spike:4", "--test", "identity"],
], ids=["lowrank-rho=kappa", "lowrank-alpha=1e6", "isotropic-tau=1", "lowrank-tau=1",
        "alignment-tau=1"])
def test_near_transitions_certify(argv):
    status, out = run(["solve", *argv, "--json", "--certify"])
    data = json.loads(out)
    # either a valid proof of all digits, or a failure with its reason (exit 3)
    if data["certified"]:
        assert status == 0 and data["digits"] == data["dps"]
        name, raw, dps = raw_of(["solve", *argv])
        check_enclosures(data, models.get(name), raw, dps)
    else:
        assert status == 3 and data["certificate"]["reason"] and data["digits"] == 0
    # these points are in fact all proved today; a regression to a failure should be noticed
    assert data["certified"], data["certificate"]["reason"]


# ---------------------------------------------------------------------------------------------
# Wrong candidates fail
# ---------------------------------------------------------------------------------------------
def _machine(name, raw):
    problem = models.get(name)
    params = problem.schema.parse(raw)
    return machine(problem, problem.variant_of(params)), params


RIDGE_ISO = ("isotropic", dict(alpha="2", tau="1/2", kappa="1/2", rho="1/100", lam="1/10"))
RIDGE_ALIGN = ("alignment", dict(alpha="2", tau="1/2", kappa="1/2", rho="1/100", lam="1/10",
                                 d="4", train="spike:2", test="identity"))
LOWRANK = ("lowrank", dict(alpha="2", tau="3/2", kappa="1/2", rho="1/4", sigma="1/10"))


@pytest.mark.parametrize("case", [RIDGE_ISO, RIDGE_ALIGN, LOWRANK], ids=lambda c: c[0])
def test_perturbed_candidate_fails_and_a_close_one_encloses_the_solution(case):
    m, params = _machine(*case)
    with precision(45):
        _, rep, _ = m.solve_mp_once(params, None)
        far = [v * (1 + mpmath.mpf("1e-2")) for v in rep.x]
        near = [v * (1 + mpmath.mpf("1e-25")) for v in rep.x]
    cert = C.certify_point(m, params, far, 45)
    assert not cert.certified and "no inclusion" in cert.reason
    cert = C.certify_point(m, params, near, 45)
    assert cert.certified
    with ball_precision(55):
        for sym, v in zip(m.x, rep.x):
            b = cert.box[str(sym)]
            lo, hi = C.ball_fraction(b, "lo"), C.ball_fraction(b, "hi")
            assert lo <= mpf_fraction(v) <= hi


@pytest.mark.parametrize("case,start", [(RIDGE_ISO, [-0.1]), (RIDGE_ALIGN, [0.5, -0.07])],
                         ids=["isotropic", "alignment"])
def test_wrong_branch_is_a_root_but_fails_admissibility(case, start):
    m, params = _machine(*case)
    with precision(45):
        Pm = m.parameter_values_mp(params)
        spec = m.spectrum(params, "mp")

        def F(*x):
            return m.evaluate("equations", "mp", list(x), Pm, spec)

        root = mpmath.findroot(F, [mpmath.mpf(s) for s in start] if len(start) > 1
                               else mpmath.mpf(start[0]))
        root = list(root) if isinstance(root, mpmath.matrix) else [root]
        assert max(abs(v) for v in F(*root)) < mpmath.mpf(10) ** -40  # a genuine root ...
        _, rep, _ = m.solve_mp_once(params, None)
        assert max(abs(a - b) for a, b in zip(root, rep.x)) > 0.1  # ... not the solution
    cert = C.certify_point(m, params, root, 45)
    assert not cert.certified
    assert cert.reason == "admissibility (lambda_tilde > 0) is not proved on the box"


def test_full_train_covariance_is_not_enclosable_and_exits_3(tmp_path):
    import numpy as np

    mat = np.array([[2.0, 0.5, 0.0], [0.5, 1.0, 0.25], [0.0, 0.25, 0.5]])
    np.save(tmp_path / "tr.npy", mat)
    status, out = run(["solve", "alignment", "--alpha", "2", "--tau", "4", "--kappa", "2",
                       "--rho", "0.01", "--d", "3", "--train", f"file:{tmp_path}/tr.npy",
                       "--test", "identity", "--json", "--certify"])
    assert status == 3
    data = json.loads(out)
    assert data["certified"] is False and data["status"] == "not-certified"
    assert data["digits"] == 0 and data["converged"] is False
    assert "not enclosable" in data["certificate"]["reason"]
    assert "eigenvectors" in data["certificate"]["reason"]
    assert any(n.startswith("not certified") for n in data["notes"])


def test_uncertified_output_is_unchanged_by_the_option_existing():
    status, out = run(list(CASES["readme_isotropic"]) + ["--json"])
    data = json.loads(out)
    assert status == 0 and "certified" not in data and "certificate" not in data


def test_text_output_shows_the_enclosures():
    status, out = run(list(CASES["readme_lowrank"]) + ["--certify"])
    assert status == 0
    assert "certified: yes (Krawczyk inclusion" in out
    printed = next(line.split()[1] for line in out.splitlines() if line.startswith("    q "))
    lo, hi = next(line.split(" in [")[1].rstrip("]").split(", ") for line in out.splitlines()
                  if line.startswith("    q ") and " in [" in line)
    # the 50 printed digits of q (about 0.8) are within one unit of the last place of every
    # point of the enclosure
    p = Fraction(printed)
    assert len(printed.replace("0.", "", 1)) == 50
    assert max(abs(p - Fraction(lo)), abs(p - Fraction(hi))) <= Fraction(1, 10 ** 50)


# ---------------------------------------------------------------------------------------------
# The ball backend
# ---------------------------------------------------------------------------------------------
def test_integer_power_of_a_ball_around_zero_is_finite():
    import flint

    from replica.symbolic.codegen import _ball_ipow

    with ball_precision(30):
        x = flint.arb(0, flint.arb("1e-20"))
        assert not (x ** 2).is_finite()  # why the printer emits ball_ipow (python-flint 0.9)
        sq = _ball_ipow(x, 2)
        assert sq.is_finite() and sq.contains(0) and sq.rad() < 1e-39
        assert _ball_ipow(flint.arb(-2), 3) == -8 and _ball_ipow(flint.arb(2), -2) == flint.arb(1) / 4


def test_binary_constants_keep_their_sign():
    from replica.symbolic.codegen import arb_of

    with ball_precision(30), precision(30):
        v = mpmath.mpf(-1) / 3
        b = arb_of(v)
        assert b < 0 and b.rad() == 0 and C.ball_to_mpf(b) == v
        assert C.exact_ball(mpmath.mpf("-2.5")) == -2.5


def test_ball_digits_and_outward_rounding():
    import flint

    with ball_precision(40):
        b = flint.arb(1) / 3
        assert C.ball_digits(b, 30) == 30  # radius ~1e-41
        wide = flint.arb(Fraction(1, 3).numerator) / 3 + flint.arb(0, flint.arb("1e-10"))
        assert 9 <= C.ball_digits(wide, 30) <= 10
    assert C.directed_decimal(Fraction(1, 3), 5, up=False) == "3.3333e-1"
    assert C.directed_decimal(Fraction(1, 3), 5, up=True) == "3.3334e-1"
    assert C.directed_decimal(Fraction(-1, 3), 5, up=False) == "-3.3334e-1"


def test_a_candidate_where_no_root_exists_is_refused():
    """F(x) = (x - 1)^2 + c has no real root for c > 0; at x = 1 + 1e-10 with c = 1e-40 the
    residual is tiny (1e-20) and the Newton step looks convergent (5e-11), yet no box around it
    can pass the inclusion test. (Skipping that test would 'certify' this candidate.)"""
    import sympy

    from replica.problem import Parameter, Problem, Schema, Start, System

    x, c = sympy.Symbol("x"), sympy.Symbol("c", positive=True)
    schema = Schema([Parameter("c", "a positive constant")])

    def system(_variant):
        return System(unknowns=(x,), parameters=(c,), symbols={"c": c},
                      residuals=[(x - 1) ** 2 + c], report=[("x", x)],
                      start=Start(values={x: 1}))

    problem = Problem("noroot", schema, title="no real root", variants=[("only", None)],
                      systems=system, groups={"values": ["x"]})
    params = schema.parse({"c": "1e-40"})
    m = machine(problem, "only")
    with precision(60):
        candidate = [1 + mpmath.mpf("1e-10")]
        f = m.evaluate("equations", "mp", candidate, m.parameter_values_mp(params), None)
        assert abs(f[0]) < mpmath.mpf("1.1e-20")
    cert = C.certify_point(m, params, candidate, 60)
    assert not cert.certified and "no inclusion" in cert.reason


@pytest.mark.parametrize("case", ["readme_lowrank", "readme_alignment", "isotropic_ridge",
                                  "lowrank_golden_3"])
def test_ball_and_mpmath_evaluation_give_the_same_verified_digits(case):
    """Newton evaluates in ball arithmetic (midpoints) by default; mpmath alone is the baseline.
    Both verified solves agree to the digits they claim."""
    from replica.numerics.machine import ball_evaluation
    from replica.numerics.precision import agreement_digits

    name, raw, dps = raw_of(CASES[case])
    problem = models.get(name)
    params = problem.schema.parse(raw)
    fast = solve_params(problem, params, dps=dps)
    with ball_evaluation(False):
        slow = solve_params(problem, params, dps=dps)
    assert fast.digits == slow.digits == dps
    with mpmath.workdps(dps + 10):
        for k, v in fast.all_values.items():
            if v is not None:
                assert agreement_digits(v, slow.all_values[k], dps) >= dps - 1, k


# ---------------------------------------------------------------------------------------------
# Certified transitions
# ---------------------------------------------------------------------------------------------
def test_interval_newton_proves_a_root_and_refuses_a_non_root():
    import sympy

    from replica.symbolic.codegen import Evaluator

    t = sympy.Symbol("t")
    for expr, start, ok in [(t**2 - 2, "1.4142", True), (t**2 + sympy.Rational(1, 10**6),
                                                          "0.0001", False)]:
        ev = Evaluator([expr, sympy.diff(expr, t)], [t])
        with precision(40):
            ball, why = C.interval_newton_root(lambda b: ev.arb([b])[0],
                                               lambda b: ev.arb([b])[1], mpmath.mpf(start), 40)
        if ok:
            with ball_precision(50), mpmath.workdps(60):
                lo, hi = C.ball_fraction(ball, "lo"), C.ball_fraction(ball, "hi")
                assert lo < mpf_fraction(mpmath.sqrt(2)) < hi  # 1.4142 is 1.4e-5 off
        else:
            assert ball is None and why


@pytest.mark.parametrize("F", ["1/2", "3/10", "1"])
def test_closed_form_spectral_indicator_equals_the_solved_resolvent(F):
    """The certificate of the alignment/isotropic transitions uses M_kappa(z) = g(-z) with the
    low-rank Stieltjes transform (a stated identity of spectral laws); here it is compared with
    eq. (17) solved by the engine for the same two-atom spectrum."""
    import sympy

    from replica.analysis import transitions as T

    with precision(40):
        M = T.resolvent(T.two_atom_pairs(Fraction(F)))  # pairs at the working precision
        for s, k in [("1/100", "3/10"), ("1/1000", "7/10"), ("2", "5/4")]:
            expr = T.spectral_indicator_expr(Fraction(F), Fraction(s)).subs(
                T.KAPPA, sympy.Rational(k))
            solved = mpmath.mpf(Fraction(s).numerator) / Fraction(s).denominator * M(
                mpmath.mpf(Fraction(s).numerator) / Fraction(s).denominator,
                mpmath.mpf(Fraction(k).numerator) / Fraction(k).denominator)
            assert abs(mpmath.mpf(sympy.N(expr, 50)) - solved) < mpmath.mpf(10) ** -35


CROSSOVERS = [
    ("lowrank", dict(kappa="0.4", tau="2.6", sigma="0.01", alpha="1e6"), 40),
    ("lowrank", dict(kappa="1/2", tau="9/4", sigma="3/10", alpha="100"), 30),
    ("lowrank", dict(kappa="0.4", tau="2.6", sigma="0.01", alpha="1e4",
                     indicator="idg_over_alpha"), 30),
    ("alignment", dict(rank_fraction="1/2", tau="2", rho="0.01", alpha="80"), 30),
    ("isotropic", dict(tau="2", rho="0.01", alpha="1000"), 30),
]


@pytest.mark.parametrize("model,kw,dps", CROSSOVERS,
                         ids=["lowrank-1e6", "lowrank-100", "lowrank-idg", "alignment", "iso"])
def test_finite_alpha_crossover_is_certified_and_encloses_a_2x_location(model, kw, dps):
    from replica.analysis import transitions as T

    fn = {"lowrank": T.lowrank_transition, "alignment": T.alignment_transition,
          "isotropic": T.isotropic_transition}[model]
    res = fn(**kw, dps=dps, certify=True)
    cert = res.certificate
    assert cert.certified, cert.reason
    data = res.to_json_dict()
    assert data["certified"] and data["digits"] == dps
    # the numerical error bound of the located value holds against the proved enclosure
    assert cert.consistent is True
    ref = fn(**kw, dps=2 * dps).location.value  # independent, numerical, twice the digits
    with ball_precision(cert.precision + 10), mpmath.workdps(2 * dps + 10):
        lo, hi = C.ball_fraction(cert.enclosure, "lo"), C.ball_fraction(cert.enclosure, "hi")
        slack = Fraction(1, 10 ** (2 * dps - 8))
        assert lo - slack <= mpf_fraction(ref) <= hi + slack


@pytest.mark.parametrize("model,kw,exact", [
    ("lowrank", dict(kappa="0.4", tau="2.6", sigma="0.01"), Fraction(2, 5)),
    ("lowrank", dict(kappa="0.4", tau="2.6", sigma="0.01", indicator="idg_over_alpha"),
     Fraction(2, 5)),
    ("alignment", dict(rank_fraction="3/10", tau="2", rho="0.01"), Fraction(3, 10)),
    ("isotropic", dict(tau="2", rho="0.01"), Fraction(1)),
], ids=["lowrank-m0", "lowrank-idg", "alignment", "isotropic"])
def test_alpha_infinity_kink_is_proved_where_the_theory_puts_it(model, kw, exact):
    """The enclosure comes from the closed-form limit (never from the expected answer); that it
    contains rho_c = kappa, kappa_c = F or 1 is the check."""
    from replica.analysis import transitions as T

    fn = {"lowrank": T.lowrank_transition, "alignment": T.alignment_transition,
          "isotropic": T.isotropic_transition}[model]
    res = fn(**kw, dps=30, certify=True)
    cert = res.certificate
    assert cert.certified, cert.reason
    with ball_precision(cert.precision + 10):
        assert C.ball_fraction(cert.enclosure, "lo") <= exact <= C.ball_fraction(
            cert.enclosure, "hi")
    assert cert.consistent is True
    assert any("kink" in c for c in cert.checks)


def test_kink_certificate_refuses_a_smooth_limit():
    import sympy

    from replica.analysis.certified import kink_certificate

    v = sympy.Symbol("v", positive=True)
    with precision(30):
        cert = kink_certificate(1 / (1 + v**2), v, mpmath.mpf("0.1"), mpmath.mpf(2),
                                mpmath.mpf("0.5"), mpmath.mpf("1e-20"), 30)
    assert not cert.certified and "zeros of |u| arguments" in cert.reason
    # |v - 1|^3 has continuous first derivatives where its |u| argument vanishes: no kink of the
    # kind the certificate proves (a jump of the first derivative)
    with precision(30):
        cert = kink_certificate(1 / (1 + v**2) + sympy.Abs(v - 1) ** 3, v, mpmath.mpf("0.1"),
                                mpmath.mpf(2), mpmath.mpf("1.0000001"), mpmath.mpf("1e-3"), 30)
    assert not cert.certified and "jump" in cert.reason
    # a kink at 1, but a pole at 3/2 in the same interval: not the only non-analytic point
    with precision(30):
        cert = kink_certificate(sympy.Abs(v - 1) + 1 / (v - sympy.Rational(3, 2)), v,
                                mpmath.mpf("0.1"), mpmath.mpf(2), mpmath.mpf("1.0000001"),
                                mpmath.mpf("1e-3"), 30)
    assert not cert.certified and "cannot show the limit analytic near 1.5" in cert.reason


def test_interpolation_peak_says_its_bound_is_numerical():
    status, out = run(["transition", "isotropic", "--interpolation-peak", "--alpha", "10",
                       "--kappa", "inf", "--rho", "0.01", "--lam", "0.001", "--certify",
                       "--json"])
    data = json.loads(out)
    assert status == 3 and data["certified"] is False
    assert "the error bound is numerical" in data["certificate"]["reason"]
