"""Growth envelopes with a quadratic exponent, reciprocals and logarithms of erfc (issue 26:
``--certify`` on the Bayes-optimal teacher and the hinge SVM).

Checked against computations written here:

* every envelope :math:`C e^{Qz^2 + B|z|}|z|^P` of :func:`growth_envelope` dominates its
  integrand's absolute value, evaluated by mpmath at 40 digits, at many points
  :math:`|z| \\ge 1` and several parameter values, including positive quadratic coefficients
  (where dropping :math:`Q` or taking its sign wrong makes the envelope too small);
* the factoring :math:`g = e^{A}R` of :func:`exponential_factor` is the same function;
* :func:`tail_bound` is at least the tail integral of the envelope itself, by ``mpmath.quad``;
* shapes without a bound are refused with their reason;
* the certified enclosures of the two examples contain values computed independently at 50
  digits: the teacher's published state evolution (``m = mhat/(1 + mhat)`` or
  ``E tanh(mhat + sqrt(mhat) Z)``, ``mhat = 2 alpha/(1 - m) Int Dxi N(c xi)^2/H(c xi)``) and its
  free entropy by quadrature; the SVM's two equations ``1 - R^2 = alpha F``,
  ``2R = -alpha dF/dR`` with ``F`` and ``dF/dR`` by quadrature.
"""

import mpmath
import pytest
import sympy
from sympy.codegen.cfunctions import log1p

from replica.modeling import gauss
from replica.symbolic.codegen import Evaluator, NotEnclosable
from replica.symbolic.gaussian import (EnvelopeError, exp_rational_bound, exponential_factor,
                                       growth_envelope, log_erfc, nonnegative_terms,
                                       root_offset, tail_bound)
from replica.symbolic.implicit import implicit_root

z = sympy.Symbol("z", real=True)
m, q, b, k = sympy.symbols("m q b k", real=True)

ZS = [s * mpmath.mpf(v) for s in (1, -1) for v in
      ("1", "1.5", "2", "3", "4.5", "6", "8", "11", "15", "20", "27", "35", "50")]


def _value(expr, subs):
    """``expr`` at the substitution, by mpmath at the working precision (lambdified to
    mpmath's functions; ``log_erfc`` as the logarithm of mpmath's ``erfc``)."""
    names = sorted(subs, key=str)
    f = sympy.lambdify(names, expr, modules=[
        {"log_erfc": lambda x: mpmath.log(mpmath.erfc(x)), "log1p": mpmath.log1p}, "mpmath"])
    return mpmath.mpmathify(f(*[mpmath.mpmathify(sympy.N(subs[n], mpmath.mp.dps))
                                for n in names]))


def assert_dominates(F, points, switches=(), var=z):
    """|F(z)| <= C exp(Q z^2 + B |z|) |z|^P at every z of ZS and every parameter point, the
    switches at 0 and 1, under the envelope's conditions (which must hold at the points)."""
    C, B, P, Q, conditions = growth_envelope(F, var, switches)
    with mpmath.workdps(40):
        for point in points:
            for cond, kind in conditions:
                v = _value(cond, point)
                assert {"positive": v > 0, "nonnegative": v >= 0,
                        "real": mpmath.im(v) == 0}[kind], (cond, kind, point)
            c, bb, qq = (_value(e, point) for e in (C, B, Q))
            for sw in ([{}] if not switches else [{s: v for s in switches} for v in (0, 1)]):
                for zz in ZS:
                    f = abs(_value(F, {**point, **sw, var: zz}))
                    bound = c * mpmath.exp(qq * zz**2 + bb * abs(zz)) * abs(zz) ** P
                    # (equality where the envelope is tight, e^{bz} at z > 0: 40-digit
                    # rounding of both sides apart, hence the relative 1e-30)
                    assert f <= bound * (1 + mpmath.mpf(10) ** -30), (F, point, zz, f, bound)


# --- the envelopes dominate ------------------------------------------------------------------
def test_quadratic_exponents_of_either_sign():
    """exp(q z^2 + b z + 1/3) with q of either sign: Q = q (dropping it, or taking its sign
    wrong, makes the envelope too small at the points with q > 0)."""
    F = z * sympy.exp(q * z**2 + b * z + sympy.Rational(1, 3))
    assert_dominates(F, [{q: sympy.Rational(1, 5), b: sympy.Rational(3, 10)},
                         {q: sympy.Rational(9, 20), b: -1},
                         {q: -sympy.Rational(7, 10), b: 2}])
    # cosh/sinh of a quadratic argument: |cosh u| <= e^|u|
    assert_dominates(sympy.cosh(q * z**2 - b) + sympy.sinh(b * z + q * z**2),
                     [{q: sympy.Rational(1, 5), b: sympy.Rational(1, 2)},
                      {q: -sympy.Rational(1, 5), b: -sympy.Rational(1, 2)}])


def test_the_quadratic_coefficient_is_the_exponents():
    C, B, P, Q, _ = growth_envelope(sympy.exp(q * z**2 + b * z), z)
    assert sympy.simplify(Q - q) == 0 and P == 0


def test_teacher_shapes_reciprocal_of_shared_exponentials_and_log_erfc():
    """The sign channel's Jacobian integrand: 1/(m e^A - e^A) = e^-A/(m - 1) with
    A = m z^2/(2 - 2m), log erfc(c z/sqrt 2), and e^{-y^2}/erfc(y)^k (Mills ratios)."""
    A = m * z**2 / (2 - 2 * m)
    c = sympy.sqrt(m / (1 - m))
    y = c * z / sympy.sqrt(2)
    F = (z * sympy.log(sympy.erfc(y)) / (m * sympy.exp(A) - sympy.exp(A))
         - z * sympy.log(2) / (m * sympy.exp(A) - sympy.exp(A))
         - z * sympy.exp(-A) * sympy.log(sympy.erfc(y)) / sympy.sqrt(m))
    points = [{m: sympy.Rational(v)} for v in ("3/10", "56/100", "9/10")]
    assert_dominates(F, points)
    assert_dominates(sympy.exp(-y**2) / sympy.erfc(y), points)
    assert_dominates(sympy.exp(-2 * y**2) / sympy.erfc(y) ** 2 * z, points)
    assert_dominates(1 / sympy.erfc(q * z + b),  # y = a z + b with b != 0, either sign of a
                     [{q: sympy.Rational(7, 10), b: sympy.Rational(3, 10)},
                      {q: sympy.Rational(7, 10), b: 2},
                      {q: -sympy.Rational(7, 10), b: -sympy.Rational(1, 2)}])


def test_logarithms_of_erfc_and_log1p():
    points = [{q: sympy.Rational(3, 2), b: sympy.Rational(-1, 3)},
              {q: -sympy.Rational(1, 4), b: 2}]
    assert_dominates(sympy.log(sympy.erfc(q * z + b) / 2), points)
    assert_dominates(log_erfc(q * z + b), points)
    assert_dominates(sympy.log(-sympy.erfc(q * z + b)), points)  # a negative k: + pi
    # the Rademacher prior's log cosh u = log1p(2 sinh(u/2)^2) and its derivative's 1/cosh
    u = (b + sympy.sqrt(q) * z) / 2
    assert_dominates(log1p(2 * sympy.sinh(u) ** 2), [{q: sympy.Rational(3, 2), b: 1},
                                                      {q: 16, b: 0}])
    assert_dominates(sympy.sinh(2 * u) / (1 + 2 * sympy.sinh(u) ** 2),
                     [{q: sympy.Rational(3, 2), b: sympy.Rational(-2, 3)}])


def test_the_hinge_svm_integrand():
    t, theta, kappa = sympy.symbols("t theta kappa", real=True)
    s = sympy.Symbol("switch_0", real=True)
    F = (s * (kappa - t) ** 2 * (-sympy.sqrt(2) * t / 2 - sympy.sqrt(2) * t * sympy.cos(theta) ** 2
                                  / (2 * sympy.sin(theta) ** 2))
         * sympy.exp(-t**2 * sympy.cos(theta) ** 2 / (2 * sympy.sin(theta) ** 2)))
    C, B, P, Q, conditions = growth_envelope(F, t, [s])
    assert not conditions and sympy.simplify(Q + sympy.cot(theta) ** 2 / 2) == 0
    assert_dominates(F, [{theta: sympy.Rational(59, 100), kappa: sympy.Rational(45, 100)},
                         {theta: sympy.Rational(3, 2), kappa: 2}], switches=[s], var=t)


# --- the rewrite is the same function ---------------------------------------------------------
def test_exponential_factor_is_the_same_function():
    A = m * z**2 / (2 - 2 * m)
    g = m * sympy.exp(A) - sympy.exp(A) + 3 * sympy.exp(A / 2) ** 2 * k
    E, R = exponential_factor(g, z)
    assert not R.has(z)
    with mpmath.workdps(30):
        for point in ({m: sympy.Rational(1, 3), k: 2}, {m: sympy.Rational(4, 5), k: -1}):
            for zz in ("0.3", "-2", "7"):
                sub = {**point, z: sympy.Rational(zz)}
                lhs = _value(g, sub)
                rhs = _value(sympy.exp(E) * R, sub)
                assert abs(lhs - rhs) <= mpmath.mpf(10) ** -25 * abs(lhs), (zz, lhs, rhs)
    # terms that do not share their exponential are not factored
    assert exponential_factor(sympy.exp(z) + sympy.exp(2 * z), z) is None
    assert exponential_factor(sympy.exp(z) + 1, z) is None


def test_nonnegative_terms_and_their_conditions():
    L, conditions = nonnegative_terms(1 + 2 * sympy.sinh(b + q * z) ** 2 + k * z**2, z)
    assert L == 1
    assert (k, "nonnegative") in conditions and (q, "real") in conditions
    assert nonnegative_terms(1 + sympy.sinh(z), z) is None  # an odd power
    assert nonnegative_terms(1 + sympy.log(z) ** 2, z) is None  # log: not real for z < 0


# --- the tail bound ---------------------------------------------------------------------------
@pytest.mark.parametrize("C,B,P,Q,T", [("2", "1.5", 2, "0.3", 14), ("1", "0", 1, "-0.6", 6),
                                        ("5", "3", 0, "0", 9), ("1", "0.5", 3, "0.45", 30)])
def test_tail_bound_is_above_the_tail_of_the_envelope(C, B, P, Q, T):
    from flint import arb

    bound = tail_bound(arb(C), arb(B), sympy.Rational(P), arb(T), arb(Q))
    with mpmath.workdps(30):
        c, bb, qq = mpmath.mpf(C), mpmath.mpf(B), mpmath.mpf(Q)

        def f(x):
            return (c * mpmath.exp(qq * x * x + bb * x) * x**P * mpmath.exp(-x * x / 2)
                    / mpmath.sqrt(2 * mpmath.pi))

        tail = 2 * mpmath.quad(f, [T, 2 * T, mpmath.inf])
        assert tail > 0
        assert mpmath.mpf(bound.mid().str(30, radius=False)) >= tail, (bound, tail)
        assert mpmath.mpf(bound.mid().str(30, radius=False)) <= 10 * tail * (T + 10)  # not vacuous


# --- refusals ---------------------------------------------------------------------------------
def test_shapes_without_a_bound_are_refused_with_the_reason():
    from flint import arb

    with pytest.raises(NotEnclosable, match="not below 1/2"):  # Q = 3/5 > 1/2
        Evaluator([gauss(sympy.exp(3 * z**2 / 5), z)], []).arb([])
    with pytest.raises(NotEnclosable, match="degree at most two"):
        Evaluator([gauss(sympy.exp(-z**4), z)], []).arb([])
    with pytest.raises(NotEnclosable, match="positive on the box"):  # k may be <= 0 there
        Evaluator([gauss(1 / (k + sympy.sinh(z) ** 2), z)], [k]).arb([arb("0.1", "0.2")])
    with pytest.raises(NotEnclosable, match="non-negative on the box"):
        Evaluator([gauss(1 / (1 + k * sympy.sinh(z) ** 2), z)], [k]).arb([arb("0.1", "0.2")])
    with pytest.raises(NotEnclosable, match="reciprocal"):
        Evaluator([gauss(1 / (2 + sympy.sinh(z)), z)], []).arb([])


def test_quadratic_envelopes_give_correct_ball_integrals():
    """Enclosed over a box at 200 bits, against closed forms: a positive quadratic exponent,
    Int Dz e^{q z^2} = (1 - 2q)^{-1/2}; Int Dz 1/cosh(z) by mpmath; Int Dz 1/(1 + z^2) (a
    reciprocal bounded by 1, refused before)."""
    from flint import arb, ctx

    old = ctx.prec
    ctx.prec = 200
    try:
        ev = Evaluator([gauss(sympy.exp(q * z**2), z),
                        gauss(1 / (1 + 2 * sympy.sinh(z / 2) ** 2), z),
                        gauss(1 / (1 + z**2), z)], [q])
        ball, sech, cauchy = ev.arb([arb("0.3", "1e-70")])
        with mpmath.workdps(70):
            exact = 1 / mpmath.sqrt(1 - 2 * mpmath.mpf("0.3"))
            ref = mpmath.quad(lambda x: mpmath.npdf(x) / mpmath.cosh(x),
                              [-mpmath.inf, 0, mpmath.inf])
            # Int Dz 1/(1 + z^2) = sqrt(pi/2) e^{1/2} erfc(1/sqrt 2)
            closed = mpmath.sqrt(mpmath.pi / 2) * mpmath.exp(0.5) * mpmath.erfc(1 / mpmath.sqrt(2))
            for got, want in ((ball, exact), (sech, ref), (cauchy, closed)):
                assert got.rad() < 1e-50, got
                assert got.overlaps(arb(mpmath.nstr(want, 70), "1e-66")), (got, want)
    finally:
        ctx.prec = old


# --- the two examples, certified, against independent values ----------------------------------
def _certified(path, raw):
    from replica.modeling import load_model_file
    from replica.numerics.driver import solve_params

    problem = load_model_file(path)
    res = solve_params(problem, problem.schema.parse(raw), dps=30, certify=True)
    cert = res.certificate
    assert cert.certified, cert.reason
    return cert


def _contains(ball, value, name):
    from flint import arb

    assert ball.rad() < 1e-28 * max(1, abs(float(ball.mid()))), (name, ball)
    assert ball.overlaps(arb(mpmath.nstr(value, 50), "1e-46")), (name, ball, value)


def _H(x):
    return mpmath.erfc(x / mpmath.sqrt(2)) / 2


def _teacher_state_evolution(alpha, prior):
    """(m, mhat, free entropy) of the published state evolution, at 50 digits."""
    inf = mpmath.inf

    def E(f):  # Int Dz f(z)
        return mpmath.quad(lambda x: mpmath.npdf(x) * f(x), [-inf, -5, 0, 5, inf])

    def out_hat(m):  # 2 alpha/(1 - m) Int Dxi N(c xi)^2/H(c xi), N the normal density
        c = mpmath.sqrt(m / (1 - m))
        return 2 * alpha / (1 - m) * E(lambda x: mpmath.npdf(c * x) ** 2 / _H(c * x))

    def prior_m(mh):
        if prior == "gaussian":
            return mh / (1 + mh)
        return E(lambda x: mpmath.tanh(mh + mpmath.sqrt(mh) * x))

    m, mh = mpmath.findroot(lambda a, b: [a - prior_m(b), b - out_hat(a)],
                            (mpmath.mpf("0.5"), mpmath.mpf("1")))
    c = mpmath.sqrt(m / (1 - m))
    if prior == "gaussian":
        psi = (mh - mpmath.log(1 + mh)) / 2
    else:
        psi = E(lambda x: mpmath.log(mpmath.cosh(mh + mpmath.sqrt(mh) * x))) - mh / 2
    psi_out = 2 * E(lambda x: _H(c * x) * mpmath.log(_H(c * x)))
    return m, mh, -m * mh / 2 + psi + alpha * psi_out


@pytest.mark.slow
@pytest.mark.parametrize("prior", ["gaussian", "rademacher"])
def test_teacher_certified_enclosures_contain_the_state_evolution(prior):
    cert = _certified("examples/perceptron_teacher.py", dict(alpha="1", prior=prior))
    with mpmath.workdps(50):
        m_, mh, phi = _teacher_state_evolution(1, prior)
        _contains(cert.enclosures["m"], m_, "m")
        _contains(cert.enclosures["mhat"], mh, "mhat")
        _contains(cert.enclosures["free_entropy"], phi, "free_entropy")
        _contains(cert.enclosures["bayes"], mpmath.acos(mpmath.sqrt(m_)) / mpmath.pi, "bayes")


@pytest.mark.slow
def test_hinge_svm_certified_enclosures_contain_the_gardner_margin():
    cert = _certified("examples/hinge_svm.py", dict(alpha="2"))
    alpha = 2
    with mpmath.workdps(50):
        inf = mpmath.inf

        def F_and_dF(R, kap):  # F = 2 Int_{t < kappa} Dt H(-R t/s) (kappa - t)^2, s = sqrt(1-R^2)
            s = mpmath.sqrt(1 - R * R)
            F = 2 * mpmath.quad(lambda t: mpmath.npdf(t) * _H(-R * t / s) * (kap - t) ** 2,
                                [-inf, -5, 0, kap])
            # d/dR H(-R t/s) = npdf(R t/s) t/s^3
            dF = 2 * mpmath.quad(lambda t: mpmath.npdf(t) * mpmath.npdf(R * t / s) * t / s**3
                                 * (kap - t) ** 2, [-inf, -5, 0, kap])
            return F, dF

        def equations(R, kap):
            F, dF = F_and_dF(R, kap)
            return [1 - R * R - alpha * F, 2 * R + alpha * dF]

        R, kap = mpmath.findroot(equations, (mpmath.mpf("0.83"), mpmath.mpf("0.45")))
        theta = mpmath.acos(R)
        _contains(cert.enclosures["theta"], theta, "theta")
        _contains(cert.enclosures["kappa_max"], kap, "kappa_max")
        _contains(cert.enclosures["R"], R, "R")
        _contains(cert.enclosures["generalisation"], theta / mpmath.pi, "generalisation")


# --- growth through an implicit root (issue 26: --certify on ridge logistic regression) --------
pp, ww, VV = sympy.symbols("p omega V_", real=True)
qq, Vp = sympy.symbols("qq Vp", positive=True)
LOSS = sympy.log(1 + sympy.exp(-pp))
PROX_L = implicit_root("prox_envelope_test", pp - ww + VV * sympy.diff(LOSS, pp), pp, (ww, VV),
                       bracket=(ww, ww + VV))
R = PROX_L(sympy.sqrt(qq) * z, Vp)
ROOT_POINTS = [{qq: sympy.Rational(41, 10), Vp: sympy.Rational(4)},
               {qq: sympy.Rational(1, 4), Vp: sympy.Rational(1, 10)},
               {qq: sympy.Integer(9), Vp: sympy.Integer(25)}]


def _prox_by_bisection(omega, v):
    """The logistic proximal map by bisection written in ``tests/test_logistic.py``
    (``prox_bisection``: p - omega - v/(1 + e^p) increases in p on [omega, omega + v]), to the
    working precision."""
    from test_logistic import prox_bisection

    return prox_bisection(omega, v, mpmath.mp.prec)


def test_root_offset_is_derived_from_the_declared_equation():
    """|prox(omega, V) - omega| <= M = |V| (l' = -1/(1 + e^p) in (-1, 0)), against bisection at
    omega far out on both sides, where the offset tends to V (omega -> -inf) and 0 (+inf): a
    bound below V (planted: M/2) fails at omega = -50. Equations not of the form p - a + G
    with G bounded are refused, naming the function."""
    j, M, conditions = root_offset(PROX_L)
    assert j == 0 and conditions == []
    with mpmath.workdps(40):
        for v in ("0.1", "1", "4", "25"):
            Mv = _value(M, {VV: sympy.Rational(v)})
            for om in ("-50", "-8", "-1", "0", "0.5", "3", "40"):
                om_, v_ = mpmath.mpf(om), mpmath.mpf(v)
                off = abs(_prox_by_bisection(om_, v_) - om_)
                assert off <= Mv, (om, v, off, Mv)
            # tight: at omega = -50 the offset is V up to e^-(50 - V)
            assert off >= 0 and abs(_prox_by_bisection(mpmath.mpf(-50), v_) + 50) > Mv * 0.99
    cubic = implicit_root("cubic_envelope_test", pp**3 + pp - ww, pp, (ww,), bracket=(ww - 1, 1 + ww))
    with pytest.raises(EnvelopeError, match="cubic_envelope_test"):
        root_offset(cubic)
    shifted = implicit_root("scaled_envelope_test", 2 * pp - ww + sympy.tanh(pp), pp, (ww,),
                            bracket=(ww / 2 - 1, ww / 2 + 1))
    with pytest.raises(EnvelopeError, match="scaled_envelope_test"):
        root_offset(shifted)


def test_envelopes_through_the_root_dominate():
    """The shapes of the logistic integrands: the root itself, exponentials and cosh of it, the
    loss log(1 + e^{-p}), reciprocals of the slope 1 + V l''(p) and of V + 4 cosh^2(p/2), and
    the second derivatives of the label-weighted envelope that the Jacobian integrates (SymPy's
    implicit-function derivatives: sums of reciprocals of rational functions of e^p)."""
    lpp = sympy.diff(LOSS, pp, 2).subs(pp, R)
    label = sympy.erfc(-z / 3) / 2
    envelope = (R - sympy.sqrt(qq) * z) ** 2 / (2 * Vp) + LOSS.subs(pp, R)
    shapes = [z * R**2, sympy.exp(R), sympy.exp(-2 * R + z), sympy.cosh(R / 2) * z,
              sympy.log(1 + sympy.exp(-R)), 1 / (1 + Vp * lpp), z**2 / (1 + Vp * lpp) ** 2,
              label / (Vp + 4 * sympy.cosh(R / 2) ** 2) ** 2,
              sympy.exp(-z**2 / 5) * z * R / (1 + sympy.exp(-R)),
              label * sympy.diff(envelope, Vp), label * sympy.diff(envelope, qq, Vp),
              label * sympy.diff(envelope, Vp, 2)]
    for F in shapes:
        assert_dominates(F, ROOT_POINTS)


def test_growth_of_the_root_and_its_exponentials_is_not_dropped():
    """The coefficients the root contributes (planted: the root's share of B dropped from
    exp(u), or |R| bounded by |omega| alone, or the offset M left out of C): exp(R) grows like
    exp(sqrt(q) z) at z -> +inf, so B >= sqrt(q); |R| > |omega| where omega < 0."""
    C, B, P, Q, _ = growth_envelope(sympy.exp(R), z)
    assert sympy.simplify(B - sympy.sqrt(qq)) == 0 and Q == 0
    C, B, P, Q, _ = growth_envelope(R, z)
    assert P == 1 and B == 0 and sympy.simplify(C - sympy.sqrt(qq) - Vp) == 0


def test_exp_rational_bound_dominates_and_checks_its_denominator():
    """|f(t)| <= C e^{lam |t|} for rational functions of e^t (t from -60 to 60); a denominator
    with a coefficient of unknown sign is a condition (1 - V l''(p): 2 - V >= 0, false at V = 8,
    where 1 - V l'' vanishes: planted, the condition dropped, the bound would be claimed
    there), one with a negative number is refused."""
    t = sympy.Symbol("t", real=True)
    s = sympy.exp(t)
    cases = [(-Vp / (1 + s), 0), (s**2 / (1 + s), 1), (1 / (s + 3 * s**3), 1),
             ((1 + s) ** 2 / (s**2 + (2 + Vp) * s + 1), 0), (sympy.exp(-2 * t) * (1 + s), 2)]
    with mpmath.workdps(40):
        for f, lam_expected in cases:
            C, lam, conditions = exp_rational_bound(f, t)
            assert lam == lam_expected, (f, lam)
            assert conditions == []
            for v in ("0.1", "4"):
                c = _value(C, {Vp: sympy.Rational(v)})
                for tt in range(-60, 61, 3):
                    val = abs(_value(f, {Vp: sympy.Rational(v), t: tt}))
                    assert val <= c * mpmath.exp(lam * abs(tt)) * (1 + mpmath.mpf(10) ** -30)
    slope = 1 - Vp * s / (1 + s) ** 2  # 1 - V l''(t): vanishes for V >= 4 somewhere
    C, lam, conditions = exp_rational_bound(1 / slope, t)
    assert conditions == [(2 - Vp, "nonnegative")]
    with pytest.raises(EnvelopeError, match="wrong sign"):
        exp_rational_bound(1 / (1 - 5 * s / (1 + s) ** 2), t)
    with pytest.raises(EnvelopeError, match="integer"):
        exp_rational_bound(1 / (1 + sympy.exp(t / 2)), t)


def test_reciprocal_slope_condition_is_checked_on_the_box():
    """An integrand with 1/(1 - V l''(p)) is refused on a box where 2 - V is not >= 0 (the
    sign of the slope is checked in balls, not assumed)."""
    from flint import arb

    lpp = sympy.diff(LOSS, pp, 2).subs(pp, R)
    integrand = 1 / (1 - Vp * lpp)
    ev = Evaluator([gauss(integrand, z)], [qq, Vp])
    with pytest.raises(NotEnclosable, match="non-negative on the box"):
        ev.arb([arb(4), arb(8)])


@pytest.mark.slow
def test_logistic_certified_enclosures_contain_the_hand_written_fixed_point(capsys):
    """Ridge logistic regression at alpha = 2, lambda = 1/10, eta = 1, certified at 30 digits by
    the command a user types (``solve --certify --json``, about 45 s CPU; this is also issue
    26's every-command row for logistic ``--certify``, run once here instead of twice), against
    the replica-symmetric equations written out by hand in ``tests/test_logistic.py``
    (``rs_fixed_point``: the envelope theorem's derivatives, the proximal map by mpmath's root
    finder, ``mpmath.quad`` at 42 digits, ``mpmath.findroot``; about 18 s CPU), trusted to 34
    digits: every enclosure of m, q, V and of the generalisation error arccos(m/sqrt q)/pi
    contains it, and is narrower than 1e-28 relative."""
    import json
    import os

    from replica.cli import main
    from test_logistic import rs_fixed_point

    model = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                         "examples", "logistic_regression.py")
    code = main(["solve", "--model", model, "--alpha", "2",
                 "--lam", "1/10", "--eta", "1", "--dps", "30", "--certify", "--json",
                 "--quiet"])
    out, err = capsys.readouterr()
    assert code == 0, err
    data = json.loads(out)
    assert data["status"] == "converged" and data["digits"] >= 30, data
    assert data["certified"] is True and data["certificate"]["certified"] is True, data
    assert float(data["stability"]["replicon"]) > 0 and data["stability"]["stable"] is True
    enclosures = data["certificate"]["enclosures"]
    with mpmath.workdps(42):
        ref = rs_fixed_point(2, "0.1", 1, start=("1.72031309", "4.14580362", "3.97654579"),
                             dps=32)
        ref = dict(zip(("m", "q", "V"), ref))
        ref["generalisation"] = mpmath.acos(ref["m"] / mpmath.sqrt(ref["q"])) / mpmath.pi
        for name, value in ref.items():
            lo, hi = (mpmath.mpf(v) for v in enclosures[name])
            assert hi - lo < mpmath.mpf("1e-28") * max(1, abs(lo)), (name, lo, hi)
            slack = mpmath.mpf("1e-34") * max(1, abs(value))
            assert lo - slack <= value <= hi + slack, (name, lo, hi, value)
