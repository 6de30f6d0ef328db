"""Property-based tests over wide parameter ranges, for all three built-in models.

Each property is a statement about *every* admissible input, checked by hypothesis on examples
drawn over many decades (exact decimal strings, so every drawn point is an exact rational):

* **digits that hold** -- every value a solve reports agrees with a solve at a much higher
  precision to the digits it claims (less one: the last printed digit is correctly rounded to
  within one unit); an input that cannot be solved is a typed failure (exit 2 or 3), never a
  wrong number;
* **identities of the reported values** -- paper A's ``e_icl = e_scalar + e_misalign`` and the
  low-rank decomposition ``eps = signal + memorization + structural + noise``, to the claimed
  digits;
* **floors** -- no test error is below the irreducible label noise of the test prompt;
* **exit statuses** -- a command line assembled from valid and invalid pieces ends with 0, 2
  or 3, never 1 (the internal error).

The examples are drawn deterministically (``derandomize=True``) so that CI is reproducible; the
number of examples is set for the suite's time budget (a few seconds per property on 2 cores);
``REPLICA_PROPERTY_EXAMPLES`` raises it for a longer fuzzing run.
"""

from __future__ import annotations

import os
from fractions import Fraction

import mpmath
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from replica import models
from replica.cli import main
from replica.errors import ReplicaError
from replica.numerics.driver import solve_params

EXAMPLES = int(os.environ.get("REPLICA_PROPERTY_EXAMPLES", "25"))
LOW, HIGH = 20, 60  # working precision of the solve under test, and of the reference


def _settings(examples=EXAMPLES):
    return settings(max_examples=examples, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def decimal(lo: int, hi: int):
    """An exact decimal ``m e k`` with a two-digit mantissa and ``lo <= k <= hi``."""
    return st.builds(lambda m, k: f"{m}e{k}", st.integers(1, 99), st.integers(lo, hi))


def ratio(lo: int, hi: int, den: int = 100):
    """An exact fraction ``p/den`` with ``lo <= p <= hi``."""
    return st.builds(lambda p: f"{p}/{den}", st.integers(lo, hi))


def exact(text: str):
    """The exact rational of a decimal string, as an mpf at the reference precision."""
    q = Fraction(text)
    with mpmath.workdps(HIGH + 10):
        return mpmath.mpf(q.numerator) / q.denominator


def solve(name: str, dps: int, raw: dict):
    problem = models.get(name)
    return solve_params(problem, problem.schema.parse(raw), dps=dps)


def solved_pair(name: str, raw: dict):
    """The solve under test and its high-precision reference, or None for a typed failure."""
    try:
        res = solve(name, LOW, raw)
    except ReplicaError:
        return None
    return res, solve(name, HIGH, raw)


def assert_digits_hold(res, ref, raw):
    """Every reported value within one unit of its ``digits``-th significant digit of the
    reference, relative to the value itself: no absolute floor, so a value of 1e-63 must be right
    to its claimed significant digits, not to 1e-20 (written out here, not through the engine's
    own :func:`~replica.numerics.precision.agreement_digits`)."""
    with mpmath.workdps(HIGH + 10):
        for key, value in res.all_values.items():
            if value is None:
                continue
            truth = ref.all_values[key]
            assert abs(value - truth) <= mpmath.mpf(10) ** (1 - res.digits) * abs(truth), (
                raw, key, value, truth, res.digits)


def assert_sum(res, total: str, parts: list[str], raw):
    """``total == sum(parts)`` to the digits the result claims (relative to the largest term)."""
    v = res.all_values
    with mpmath.workdps(HIGH):
        scale = max(abs(v[total]), *(abs(v[p]) for p in parts))
        gap = abs(v[total] - mpmath.fsum(v[p] for p in parts))
        assert gap <= scale * mpmath.mpf(10) ** (1 - res.digits), (raw, total, gap, scale)


def assert_floor(res, names: list[str], floor, raw):
    """Every error in ``names`` is at least the noise ``floor`` (up to the claimed digits)."""
    with mpmath.workdps(HIGH):
        tol = mpmath.mpf(10) ** (1 - res.digits)
        for name in names:
            value = res.all_values[name]
            assert value >= floor * (1 - tol) - tol * abs(value), (raw, name, value, floor)


# -- isotropic (paper B) -------------------------------------------------------------------------

ISOTROPIC = st.fixed_dictionaries({
    "alpha": decimal(-60, 60),
    "tau": st.one_of(ratio(1, 999), decimal(-30, 30)),
    "kappa": st.one_of(st.just("inf"), ratio(1, 999), decimal(-30, 30)),
    "rho": st.one_of(st.just("0"), decimal(-30, 2)),
    "lam": st.one_of(st.just("0"), decimal(-8, 1), decimal(-30, 30)),
})


@_settings()
@given(raw=ISOTROPIC)
@example(raw={"alpha": "768e23", "tau": "171e24", "kappa": "inf", "rho": "0", "lam": "25e17"})
def test_isotropic_digits_identity_and_floor(raw):
    pair = solved_pair("isotropic", raw)
    if pair is None:
        return
    res, ref = pair
    assert res.digits > 0
    assert_digits_hold(res, ref, raw)
    assert_sum(res, "e_icl", ["e_scalar", "e_misalign"], raw)
    assert_floor(res, ["e_icl"], exact(raw["rho"]), raw)


# -- alignment (paper A) -------------------------------------------------------------------------

SPECS = st.one_of(st.just("identity"), st.just("piano"),
                  st.builds(lambda j: f"spike:{j}", st.integers(1, 2)),
                  st.builds(lambda p: f"powerlaw:{p}", st.sampled_from(["1/2", "1", "3/2", "2"])),
                  st.builds(lambda r: f"lowrank:{r}", st.sampled_from(["1/2", "3/4"])))

ALIGNMENT = st.fixed_dictionaries({
    "alpha": decimal(-6, 6),
    "tau": ratio(10, 900),
    "kappa": ratio(10, 900),
    "rho": decimal(-4, 0),
    "lam": st.one_of(st.just("0"), decimal(-6, 0)),
    "d": st.sampled_from(["4", "8"]),
    "train": SPECS,
    "test": SPECS,
})


@_settings(max(EXAMPLES // 2, 5))
@given(raw=ALIGNMENT)
def test_alignment_digits_identity_and_floor(raw):
    pair = solved_pair("alignment", raw)
    if pair is None:
        return
    res, ref = pair
    assert res.digits > 0
    assert_digits_hold(res, ref, raw)
    assert_sum(res, "e_icl", ["e_scalar", "e_misalign"], raw)
    assert_floor(res, ["e_icl", "e_scalar"], exact(raw["rho"]), raw)


# -- low rank --------------------------------------------------------------------------------------

LOWRANK = st.fixed_dictionaries({
    "alpha": decimal(-2, 6),
    "tau": ratio(110, 900),
    "kappa": ratio(5, 300),
    "rho": ratio(5, 100),
    "sigma": decimal(-3, 0),
    "lam": st.one_of(st.just("0"), decimal(-6, -1)),
    "sigma_test": st.one_of(st.just("0"), decimal(-2, 0)),
})


@_settings(max(EXAMPLES // 2, 5))
@given(raw=LOWRANK)
def test_lowrank_digits_decomposition_and_floor(raw):
    pair = solved_pair("lowrank", raw)
    if pair is None:
        return
    res, ref = pair
    assert res.digits > 0
    assert_digits_hold(res, ref, raw)
    for err in ("tm", "idg", "odg"):
        assert_sum(res, err, [f"{err}_{p}" for p in ("signal", "memorization", "structural",
                                                     "noise")], raw)
    assert_floor(res, ["idg", "odg"], exact(raw["sigma_test"]) ** 2, raw)


# -- exit statuses -------------------------------------------------------------------------------

NUMBERS = st.one_of(decimal(-400, 400), ratio(-50, 500), st.sampled_from(
    ["0", "-1", "inf", "-inf", "nan", "", "1/0", "abc", "1e", "2.5.1", " 3", "1_000", "0x10"]))

VALID = {
    "isotropic": {"--alpha": "2", "--tau": "1/2", "--kappa": "1/2", "--rho": "1/100"},
    "alignment": {"--alpha": "2", "--tau": "4", "--kappa": "2", "--rho": "1/100", "--d": "4",
                  "--train": "spike:1", "--test": "identity"},
    "lowrank": {"--alpha": "2", "--tau": "9/4", "--kappa": "1/2", "--rho": "3/10",
                "--sigma": "3/10"},
}
EXTRA = {"isotropic": ["--lam"], "alignment": ["--lam", "--alpha-test"],
         "lowrank": ["--lam", "--alpha-test", "--sigma-test"]}
SPEC_VALUES = st.one_of(SPECS, st.sampled_from(["spike:0", "spike:99", "powerlaw:-1", "lowrank:2",
                                                "nosuch", "file:/nonexistent.npy", "piano:3"]))


@st.composite
def command_lines(draw):
    """A valid ``replica solve`` command line with some values replaced by hostile ones, some
    options dropped and some optional ones added (``--opt=value``, so that values starting with
    ``-`` reach the option)."""
    model = draw(st.sampled_from(sorted(VALID)))
    options = dict(VALID[model])
    for option in draw(st.lists(st.sampled_from(sorted(options) + EXTRA[model]), max_size=3)):
        options[option] = draw(SPEC_VALUES if option in ("--train", "--test") else
                               st.sampled_from(["1", "2.5", "0", "-3", "1e9", "x"])
                               if option == "--d" else NUMBERS)
    if draw(st.booleans()):
        options.pop(draw(st.sampled_from(sorted(options))))
    argv = ["solve", model] + [f"{k}={v}" for k, v in options.items()]
    if draw(st.booleans()):
        argv.append("--dps=" + draw(st.sampled_from(["15", "30", "0", "-3", "10001", "x"])))
    if draw(st.booleans()):
        argv.append("--json")
    return argv


@_settings(EXAMPLES * 2)
@given(argv=command_lines())
def test_command_lines_end_with_0_2_or_3(argv):
    try:
        rc = main(argv)
    except SystemExit as exc:  # argparse's own usage errors
        rc = exc.code
    assert rc in (0, 2, 3), argv


def test_a_wrong_claim_is_caught():
    """The digit property can fail: a result whose value is off in its 10th digit but claims 20
    digits is rejected by the same assertion the properties use."""
    raw = dict(alpha="2", tau="1/2", kappa="1/2", rho="1/100")
    res, ref = solved_pair("isotropic", raw)
    with mpmath.workdps(HIGH):
        res.all_values["e_icl"] *= 1 + mpmath.mpf(10) ** -10
    with pytest.raises(AssertionError):
        assert_digits_hold(res, ref, raw)
    with pytest.raises(AssertionError):
        assert_sum(res, "e_icl", ["e_scalar", "e_misalign"], raw)


# -- the example model files ---------------------------------------------------------------------

def _example(name: str):
    from conftest import REPO

    from replica.modeling import load_model_file

    return load_model_file(os.path.join(REPO, "examples", f"{name}.py"))


def assert_float64_claim_holds(problem, raw, ref):
    """The float64 path at the same point: where it says ``converged``, every reported value is
    within its claimed relative error (:data:`~replica.numerics.float64_checks.CLAIM_RTOL`) of the
    60-digit reference; otherwise it claims nothing (``not-verified`` or a failure)."""
    import numpy as np

    from replica.numerics.driver import solve_float64
    from replica.numerics.float64_checks import CLAIM_RTOL

    numeric = {k: np.array([float(Fraction(v))]) for k, v in raw.items()
               if not problem.schema[k].is_covariance and k != "d"}
    other = {k: v for k, v in raw.items() if k not in numeric}
    if "d" in other:
        other["d"] = int(other["d"])
    out = solve_float64(problem, strict=False, **numeric, **other)
    if str(out["status"][0]) != "converged":
        return
    for key, truth in ref.all_values.items():
        if truth is None or key not in out:
            continue
        got = float(out[key][0])
        assert abs(got - float(truth)) <= 2 * CLAIM_RTOL * abs(float(truth)), (
            raw, key, got, truth)


MODEL_FILE_POINTS = {
    "ridge_regression": st.fixed_dictionaries({
        "alpha": decimal(-30, 30), "lam": decimal(-30, 30), "sigma": st.one_of(
            st.just("0"), decimal(-4, 2)),
        "d": st.just("12"), "covariance": st.sampled_from(["identity", "piano", "powerlaw:1",
                                                           "lowrank:1/2"])}),
    "structured_teacher": st.fixed_dictionaries({
        "alpha": decimal(-30, 30), "lam": decimal(-30, 30), "sigma": decimal(-20, 10),
        "d": st.just("10"), "covariance": st.sampled_from(["identity", "piano", "powerlaw:1"]),
        "teacher": st.sampled_from(["identity", "spike:1", "piano"])}),
    "lowrank_partial_overlap": st.fixed_dictionaries({
        "alpha": decimal(-20, 20), "tau": ratio(110, 900), "kappa": ratio(10, 900),
        "rho": ratio(5, 95), "sigma": decimal(-3, 0), "phi": ratio(0, 100)}),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(MODEL_FILE_POINTS))
def test_model_file_digits_hold(name):
    """The campaign on the example model files: random valid points solved at 20 digits, at 60
    and in float64; every claimed significant digit is right and every float64 ``converged`` is
    within its claimed error, or the solve is a typed failure."""
    problem = _example(name)
    solved = []

    @_settings(max(EXAMPLES // 3, 5))
    @given(raw=MODEL_FILE_POINTS[name])
    def check(raw):
        try:
            res = solve_params(problem, problem.schema.parse(raw), dps=LOW)
        except ReplicaError:
            return
        ref = solve_params(problem, problem.schema.parse(raw), dps=HIGH)
        assert res.digits > 0
        assert_digits_hold(res, ref, raw)
        assert_float64_claim_holds(problem, raw, ref)
        solved.append(raw)

    check()
    assert len(solved) >= 3, f"too few points solved for {name}: {solved}"
