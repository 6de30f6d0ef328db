"""What a certification may reuse from the verified solve, and the fused spectral sums of ball
arithmetic, checked against exact arithmetic and against wrong candidates.

* The averages of one nesting level evaluated together (``_SpectralLevel``: pair-independent
  parts once, the weighted sums as one ball matrix product) enclose the exact value of nested
  averages computed with Fractions, and overlap the per-pair loop they replace.
* The Krawczyk test with the preconditioner taken from the solve's last Jacobian
  (``NewtonReport.jacobian``) proves the true solution and refuses corrupted ones: a
  candidate moved off the solution, a root of the wrong branch, and a candidate where no root
  exists, even when the preconditioner given is that of the true solution.
* The tightened box still contains the solution (computed independently at twice the
  precision).
"""

from __future__ import annotations

import os
from fractions import Fraction

import mpmath
import pytest
import sympy

from replica import models
from replica.numerics import certify as C
from replica.numerics.machine import machine
from replica.numerics.precision import ball_precision, precision
from replica.spectra import SpectralPairs
from replica.symbolic.codegen import Evaluator
from replica.symbolic.spectral import LAMBDA_I, MU_I, SpectralAverage


def _fraction(b, which="mid") -> Fraction:
    return C.ball_fraction(b, which)


def _contains(b, exact: Fraction) -> bool:
    """Whether the ball ``b`` contains ``exact`` (endpoints read at 200 digits)."""
    with ball_precision(200):
        return _fraction(b, "lo") <= exact <= _fraction(b, "hi")


# ---------------------------------------------------------------------------------------------
# Fused spectral averages
# ---------------------------------------------------------------------------------------------
A, B = sympy.symbols("a b", positive=True)
LAM = [Fraction(1, 3), Fraction(2), Fraction(5, 7), Fraction(9, 4)]
MU = [Fraction(1), Fraction(1, 5), Fraction(3), Fraction(7, 6)]
W = [Fraction(1, 8), Fraction(3, 8), Fraction(1, 4), Fraction(1, 4)]


def _nested_exprs():
    """Two levels: a resolvent-like average, and averages holding it (shared denominators,
    a pair-independent part, a constant term, and an integer power)."""
    g = SpectralAverage(LAMBDA_I / (LAMBDA_I * A + B))
    return [g,
            SpectralAverage(MU_I / (LAMBDA_I * A + B + g) ** 2) + A * g,
            SpectralAverage(LAMBDA_I * MU_I / (LAMBDA_I * A + B + g) + 3 * A / (g + 1)) - B]


def _exact(a: Fraction, b: Fraction) -> list:
    g = sum(w * lam / (lam * a + b) for lam, w in zip(LAM, W))
    s1 = sum(w * mu / (lam * a + b + g) ** 2 for lam, mu, w in zip(LAM, MU, W))
    s2 = sum(w * (lam * mu / (lam * a + b + g) + 3 * a / (g + 1))
             for lam, mu, w in zip(LAM, MU, W))
    return [g, s1 + a * g, s2 - b]


def _ball_pairs():
    import flint

    def ball(v):
        return flint.arb(v.numerator) / v.denominator

    return SpectralPairs([ball(v) for v in LAM], [ball(v) for v in MU], [ball(v) for v in W],
                         True)


def test_fused_levels_enclose_the_exact_nested_averages_and_the_per_pair_loop():
    import flint

    ev = Evaluator(_nested_exprs(), [A, B])
    a, b = Fraction(3, 5), Fraction(7, 3)
    with ball_precision(60):
        args = [flint.arb(a.numerator) / a.denominator, flint.arb(b.numerator) / b.denominator]
        pairs = _ball_pairs()
        fused = ev.arb(args, pairs)
        assert ev._levels is not None and len(ev._levels) == 2  # two nesting levels
        levels, ev._levels = ev._levels, None  # the per-pair loop, as before
        loop = ev.arb(args, pairs)
        ev._levels = levels
    exact = _exact(a, b)
    for f, l_, e in zip(fused, loop, exact):
        assert _contains(f, e) and _contains(l_, e)
        assert f.overlaps(l_)
        assert f.rad() < 1e-55 * abs(float(e))
    # a wrong value is not enclosed (the check can fail)
    assert not _contains(fused[1], exact[1] * (1 + Fraction(1, 10 ** 40)))


def test_fused_levels_enclose_over_a_box():
    """Over a box of arguments the fused evaluation encloses the averages at every point of it
    (checked at its two corners, exactly)."""
    import flint

    ev = Evaluator(_nested_exprs(), [A, B])
    a, b = Fraction(3, 5), Fraction(7, 3)
    r = Fraction(1, 10 ** 6)
    with ball_precision(40):
        ball = [flint.arb(a.numerator) / a.denominator + flint.arb(0, flint.arb(r.numerator)
                                                                   / r.denominator),
                flint.arb(b.numerator) / b.denominator]
        out = ev.arb(ball, _ball_pairs())
    for corner in (a - r, a + r):
        for o, e in zip(out, _exact(corner, b)):
            assert _contains(o, e)


# ---------------------------------------------------------------------------------------------
# Certification with the solve's Jacobian
# ---------------------------------------------------------------------------------------------
RIDGE_ALIGN = ("alignment", dict(alpha="2", tau="1/2", kappa="1/2", rho="1/100", lam="1/10",
                                 d="4", train="spike:2", test="identity"))
LOWRANK = ("lowrank", dict(alpha="2", tau="3/2", kappa="1/2", rho="1/4", sigma="1/10"))


def _machine(name, raw):
    """A machine built afresh: the per-process one may have been left without ball arithmetic
    for a group by an earlier test in the same worker (then Newton runs in mpmath and reports
    no Jacobian)."""
    machine.cache_clear()
    problem = models.get(name)
    params = problem.schema.parse(raw)
    return machine(problem, problem.variant_of(params)), params


def _solve(m, params, dps):
    with precision(dps):
        _, rep, _ = m.solve_mp_once(params, None)
    return rep


@pytest.mark.parametrize("case", [RIDGE_ALIGN, LOWRANK], ids=lambda c: c[0])
def test_the_solves_jacobian_certifies_and_the_box_holds_a_2x_solution(case):
    m, params = _machine(*case)
    rep = _solve(m, params, 45)
    assert rep.jacobian is not None and len(rep.jacobian) == m.n ** 2
    cert = C.certify_point(m, params, rep.x, 45, jacobian=rep.jacobian)
    assert cert.certified, cert.reason
    ref = _solve(m, params, 90)
    with ball_precision(100):
        for sym, v in zip(m.x, ref.x):
            assert _contains(cert.box[str(sym)], C.ball_fraction(C.exact_ball(v), "mid")), sym
            # the box is tight: the tightening kept it within the working precision
            b = cert.box[str(sym)]
            assert float(b.rad()) < abs(float(b.mid())) * 1e-40


@pytest.mark.parametrize("case", [RIDGE_ALIGN, LOWRANK], ids=lambda c: c[0])
def test_a_corrupted_solution_is_not_certified_with_the_true_jacobian(case):
    """The preconditioner of the true solution does not make a wrong candidate pass: every
    reused quantity only sharpens a test whose conclusion rests on the candidate's own
    enclosures."""
    m, params = _machine(*case)
    rep = _solve(m, params, 45)
    with precision(45):
        far = [v * (1 + mpmath.mpf("1e-2")) for v in rep.x]
    cert = C.certify_point(m, params, far, 45, jacobian=rep.jacobian)
    assert not cert.certified and "no inclusion" in cert.reason
    # a Jacobian that is not the system's (zeros: singular) is not used, and changes nothing
    good = C.certify_point(m, params, rep.x, 45, jacobian=[0] * (m.n ** 2))
    assert good.certified


def test_the_wrong_branch_with_the_true_jacobian_fails_admissibility():
    m, params = _machine(*RIDGE_ALIGN)
    rep = _solve(m, params, 45)
    with precision(45):
        Pm = m.parameter_values_mp(params)
        spec = m.spectrum(params, "mp")

        def F(*x):
            return m.evaluate("equations", "mp", list(x), Pm, spec)

        root = list(mpmath.findroot(F, [mpmath.mpf("0.5"), mpmath.mpf("-0.07")]))
        assert max(abs(v) for v in F(*root)) < mpmath.mpf(10) ** -40
    cert = C.certify_point(m, params, root, 45, jacobian=rep.jacobian)
    assert not cert.certified
    assert cert.reason == "admissibility (lambda_tilde > 0) is not proved on the box"


def test_driver_certificate_digits_and_values_unchanged_by_the_reuse():
    """The certified solve (which passes the re-solve's Jacobian) and a certification of the same
    point from scratch prove the same digits and agree on every value to them."""
    from replica.numerics.driver import solve_params

    name, raw = RIDGE_ALIGN
    problem = models.get(name)
    params = problem.schema.parse(raw)
    res = solve_params(problem, params, dps=30, certify=True)
    assert res.certificate.certified and res.digits == 30
    m = machine(problem, problem.variant_of(params))
    cp = res.certificate.precision
    rep = _solve(m, params, cp)
    fresh = C.certify_point(m, params, rep.x, cp)
    assert fresh.certified and fresh.min_digits(30) == 30
    with precision(40):
        for k in fresh.enclosures:
            if k in res.all_values and res.all_values[k] is not None:
                v = fresh.value(k)
                assert abs(res.all_values[k] - v) <= abs(v) * mpmath.mpf(10) ** -30, k


def test_fused_levels_from_the_disk_cache_give_the_same_balls():
    """The level functions are stored with the generated code and, loaded again, give the same
    balls (midpoints and radii) as when they were generated."""
    import uuid

    import flint

    from replica.symbolic.codegen import CodeCache

    if CodeCache.folder() is None:
        pytest.skip("code cache disabled")
    cache = CodeCache(f"test-levels-{uuid.uuid4().hex}")
    a, b = Fraction(3, 5), Fraction(7, 3)
    with ball_precision(50):
        args = [flint.arb(a.numerator) / a.denominator, flint.arb(b.numerator) / b.denominator]
        pairs = _ball_pairs()
        fresh = Evaluator(_nested_exprs(), [A, B], cache=cache, name="nested")
        first = fresh.arb(args, pairs)
        loaded = Evaluator(build=lambda: pytest.fail("generated again"), args=[A, B],
                           cache=cache, name="nested")
        again = loaded.arb(args, pairs)
        assert loaded._levels is not None and len(loaded._levels) == 2
    assert all(x.mid() == y.mid() and x.rad() == y.rad() for x, y in zip(first, again))
    try:
        os.remove(cache.path("nested-arb"))
    except OSError:
        pass


def test_fused_levels_with_elementary_functions_enclose_an_independent_value():
    """Averages of elementary functions (square root, logarithm, exponential), nested: the
    fused balls contain the value computed independently in mpmath at 80 digits."""
    import flint

    g = SpectralAverage(sympy.sqrt(LAMBDA_I * A + B))
    exprs = [g, SpectralAverage(sympy.log(1 + MU_I * g) * sympy.exp(-LAMBDA_I * A)) * B]
    ev = Evaluator(exprs, [A, B])
    a, b = Fraction(3, 5), Fraction(7, 3)
    with ball_precision(50):
        args = [flint.arb(a.numerator) / a.denominator, flint.arb(b.numerator) / b.denominator]
        out = ev.arb(args, _ball_pairs())
        assert ev._levels is not None and len(ev._levels) == 2
    with mpmath.workdps(80):
        am, bm = mpmath.mpf(a.numerator) / a.denominator, mpmath.mpf(b.numerator) / b.denominator
        lam = [mpmath.mpf(v.numerator) / v.denominator for v in LAM]
        mu = [mpmath.mpf(v.numerator) / v.denominator for v in MU]
        w = [mpmath.mpf(v.numerator) / v.denominator for v in W]
        gm = mpmath.fsum(wi * mpmath.sqrt(li * am + bm) for li, wi in zip(lam, w))
        hm = bm * mpmath.fsum(wi * mpmath.log(1 + mi * gm) * mpmath.exp(-li * am)
                              for li, mi, wi in zip(lam, mu, w))
        for ball, ref in ((out[0], gm), (out[1], hm)):
            with ball_precision(200):  # the endpoints exactly
                lo, hi = (C.ball_fraction(ball, k) for k in ("lo", "hi"))
                r = C.ball_fraction(C.exact_ball(ref), "mid")
            slack = abs(r) * Fraction(1, 10 ** 75)
            assert lo - slack <= r <= hi + slack
            assert float(ball.rad()) < 1e-45 * abs(float(ref))


# ---------------------------------------------------------------------------------------------
# newton_arb's chord step
# ---------------------------------------------------------------------------------------------
def _system_balls():
    """F(y) = (y0^2 - 2, y0 y1 - 3) with its Jacobian, in balls; counts the Jacobians."""
    from flint import arb_mat

    calls = {"J": 0}

    def F(y):
        return [y[0] * y[0] - 2, y[0] * y[1] - 3]

    def J(y):
        calls["J"] += 1
        return arb_mat([[2 * y[0], 0], [y[1], y[0]]])

    return F, J, calls


@pytest.mark.parametrize("start", [["1.4142135623730951", "2.1213203435596424"], ["1", "1"]],
                         ids=["float64-start", "far-start"])
def test_newton_arb_chord_step_reaches_the_working_precision(start):
    from replica.numerics.newton import newton_arb

    F, J, calls = _system_balls()
    with precision(60), ball_precision(60):
        rep = newton_arb(F, J, [mpmath.mpf(v) for v in start])
        exact = [mpmath.sqrt(2), 3 / mpmath.sqrt(2)]
        err = max(abs(a - b) / abs(b) for a, b in zip(rep.x, exact))
    assert err < mpmath.mpf(10) ** -58, err
    # one Jacobian fewer than Newton steps: the last step is a chord step
    assert calls["J"] == rep.iterations - 1, (calls, rep.iterations)


# ---------------------------------------------------------------------------------------------
# newton_mp's chord steps (past a third of the working precision)
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("start", [["1.4142135623730951", "2.1213203435596424"], ["1", "1"]],
                         ids=["float64-start", "far-start"])
@pytest.mark.parametrize("residual", [True, False])
def test_newton_mp_chord_steps_reach_the_working_precision(start, residual):
    from replica.numerics.newton import newton_mp

    calls = {"J": 0, "F": 0}

    def F(y):
        calls["F"] += 1
        return [y[0] * y[0] - 2, y[0] * y[1] - 3]

    def J(y):
        calls["J"] += 1
        return mpmath.matrix([[2 * y[0], 0], [y[1], y[0]]])

    with precision(40):
        rep = newton_mp(F, J, [mpmath.mpf(v) for v in start], residual=residual)
        exact = [mpmath.sqrt(2), 3 / mpmath.sqrt(2)]  # the root, written independently
        err = max(abs(a - b) / abs(b) for a, b in zip(rep.x, exact))
    assert err < mpmath.mpf(10) ** -38, err
    if start[0] != "1":
        # a float64 start's first step (~1e-16) is past a third of 40 digits: every later
        # step is a chord step with the first Jacobian
        assert calls["J"] == 1 and rep.iterations >= 3, (calls, rep.iterations)
    else:
        assert calls["J"] < rep.iterations, (calls, rep.iterations)
    # without the final residual, one evaluation of F fewer
    assert calls["F"] == rep.iterations + (1 if residual else 0), (calls, rep.iterations)


def _counted_system(calls, jacobian_dps=None):
    r"""``F, J`` of :math:`y_0^2 = 2,\ y_0 y_1 = 3` with ``J`` evaluated at
    ``jacobian_dps(dps)`` digits (the working precision where ``None``), counting calls."""
    def F(y):
        calls["F"] += 1
        return [y[0] * y[0] - 2, y[0] * y[1] - 3]

    def J(y):
        calls["J"] += 1
        digits = mpmath.mp.dps if jacobian_dps is None else jacobian_dps(mpmath.mp.dps)
        with mpmath.workdps(digits):
            y = [+v for v in y]  # the iterate rounded to those digits, as a generated code sees
            rows = [[2 * y[0], 0 * y[0]], [+y[1], +y[0]]]
        return mpmath.matrix(rows)
    return F, J


def test_a_jacobian_at_jacobian_digits_takes_the_steps_of_the_exact_one():
    r"""The driver's pair of solves (35 digits from a float64 start, the verifying re-solve at
    52 from its solution with its last Jacobian as the first iteration matrix) with the
    Jacobian evaluated at :func:`~replica.numerics.newton.jacobian_digits` digits: the same
    evaluations of :math:`F` and :math:`J` as with the exact Jacobian, and the root
    :math:`(\sqrt2, 3/\sqrt2)` to each working precision."""
    from replica.numerics.newton import jacobian_digits, newton_mp

    with mpmath.workdps(80):
        exact = [mpmath.sqrt(2), 3 / mpmath.sqrt(2)]  # the root, written independently
    counts = {}
    for how, digits in (("exact", None), ("reduced", jacobian_digits)):
        calls = {"F": 0, "J": 0}
        F, J = _counted_system(calls, digits)
        with precision(35):
            low = newton_mp(F, J, [mpmath.mpf("1.4142135623730951"),
                                   mpmath.mpf("2.1213203435596424")])
            assert max(abs(a - b) / b for a, b in zip(low.x, exact)) < mpmath.mpf(10) ** -34
        with precision(52):
            high = newton_mp(F, J, low.x, residual=False, J0=low.chord)
            assert max(abs(a - b) / b for a, b in zip(high.x, exact)) < mpmath.mpf(10) ** -51
        counts[how] = (calls["F"], calls["J"], low.iterations, high.iterations)
    assert counts["reduced"] == counts["exact"], counts
    assert jacobian_digits(35) == 22 and jacobian_digits(8) == 8


def test_the_mpmath_newton_evaluates_its_jacobian_at_jacobian_digits():
    """:meth:`~replica.numerics.machine.Machine.newton` (the mpmath path: ball evaluation off)
    evaluates the Jacobian group at :func:`~replica.numerics.newton.jacobian_digits` of the
    working precision, the equations at the working precision, and the verified solve keeps
    its digits."""
    from replica.numerics.driver import solve_params
    from replica.numerics.machine import ball_evaluation
    from replica.numerics.newton import jacobian_digits

    problem = models.get("isotropic")
    params = problem.schema.parse({"alpha": "10", "tau": "3/2", "kappa": "2", "rho": "0.01",
                                   "lam": "0.001"})
    m = machine(problem, problem.variant_of(params))
    seen = {"equations": set(), "jacobian": set()}
    real = m.evaluate

    def spy(group, *a, **k):
        if group in seen:
            seen[group].add(mpmath.mp.dps)
        return real(group, *a, **k)

    m.evaluate = spy
    try:
        with ball_evaluation(False):
            res = solve_params(problem, params, dps=30)
    finally:
        del m.evaluate
    work = 30 + problem.guard_digits
    assert res.digits == 30
    assert work in seen["equations"] and jacobian_digits(work) in seen["jacobian"]
    assert work not in seen["jacobian"], seen


@pytest.mark.parametrize("how", ["lower-precision", "poor"])
def test_newton_mp_first_iteration_matrix_from_an_earlier_solve(how):
    """``J0``: the last Jacobian of a solve at lower precision starts a re-solve at higher
    precision with chord steps and no new Jacobian; a poor ``J0`` (here half the Jacobian: its
    chord steps contract only by 2x) is replaced by a fresh Jacobian, and the root is the same
    to the working precision either way."""
    from replica.numerics.newton import newton_mp

    calls = {"J": 0}

    def F(y):
        return [y[0] * y[0] - 2, y[0] * y[1] - 3]

    def J(y):
        calls["J"] += 1
        return mpmath.matrix([[2 * y[0], 0], [y[1], y[0]]])

    with precision(30):
        low = newton_mp(F, J, [mpmath.mpf("1.4142135623730951"), mpmath.mpf("2.1213203435596424")])
    J0 = low.chord if how == "lower-precision" else low.chord * mpmath.mpf(2)
    calls["J"] = 0
    with precision(60):
        rep = newton_mp(F, J, low.x, residual=False, J0=J0)
        exact = [mpmath.sqrt(2), 3 / mpmath.sqrt(2)]
        err = max(abs(a - b) / abs(b) for a, b in zip(rep.x, exact))
    assert err < mpmath.mpf(10) ** -58, err
    assert calls["J"] == (0 if how == "lower-precision" else 1), calls
