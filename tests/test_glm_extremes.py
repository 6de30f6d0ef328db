"""The GLM zoo at extreme sample ratios (issue 26): the max-margin classifier
(``examples/hinge_svm.py``) at large alpha and ridge logistic regression
(``examples/logistic_regression.py``) at tiny alpha, each against a computation written here.

Hinge SVM. At large alpha the student--teacher angle theta ~ 1.57/alpha and the margin
kappa ~ 1/alpha: the model's Gaussian integrals vary on the scale sin(theta) of the field, which is
why the example declares them on the scaled variable t = x sin(theta). Checked:

* the asymptote eps_g ~ c/alpha with c computed here from its own equations: on the scale
  t = rho x (rho = sin theta, k = kappa/rho fixed), F = 2 int Dt H(-R t/rho) (kappa - t)_+^2
  -> 2 phi(0) rho^3 G(k) with G(k) = int_{-oo}^k Phi(x) (k - x)^2 dx, and the two saddle-point
  equations become alpha rho = 1/(2 phi(0) G(k)) and G(k) = k G'(k); so
  c = lim alpha theta/pi = 1/(sqrt(2 pi) G(k)). G is integrated here by mpmath (not the closed
  form of the example's docstring), k found by findroot; c = 0.50049..., the 0.5005 Engel and
  Van den Broeck (Statistical Mechanics of Learning, 2001, maximal stability) quote;
* at alpha = 1000 the saddle point itself, solved here by mpmath in (rho, kappa) with the
  quadrature's breakpoints put at the scale rho by hand, against the engine's 30 digits.
"""

from __future__ import annotations

import os

import mpmath
import pytest

import replica

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SVM = os.path.join(REPO, "examples", "hinge_svm.py")
LOGISTIC = os.path.join(REPO, "examples", "logistic_regression.py")


def _H(x):
    return mpmath.erfc(x / mpmath.sqrt(2)) / 2


def max_margin_constant():
    """c = lim alpha eps_g: k the root of G(k) = k G'(k), c = 1/(sqrt(2 pi) G(k)), with
    G(k) = int_{-oo}^k Phi(x) (k - x)^2 dx and G'(k) = 2 int_{-oo}^k Phi(x) (k - x) dx by
    quadrature."""
    def G(k):
        return mpmath.quad(lambda x: mpmath.ncdf(x) * (k - x) ** 2, [-mpmath.inf, -3, 0, k])

    def dG(k):
        return 2 * mpmath.quad(lambda x: mpmath.ncdf(x) * (k - x), [-mpmath.inf, -3, 0, k])

    k = mpmath.findroot(lambda k: G(k) - k * dG(k), mpmath.mpf("0.6"))
    return k, 1 / (mpmath.sqrt(2 * mpmath.pi) * G(k))


def max_margin_saddle_point(alpha):
    """(theta, kappa) of the hard-margin SVM by mpmath: the equations 1 - R^2 = alpha F and
    2R = -alpha dF/dR, F = 2 int Dt H(-R t/rho) (kappa - t)_+^2, rho = sqrt(1 - R^2), written in
    (rho, kappa) (no cancellation in 1 - R^2), dH(-R t/rho)/dR = phi(R t/rho) t/rho^3, and the
    breakpoints at multiples of rho, where the integrands vary."""
    alpha = mpmath.mpf(alpha)

    def equations(rho, kap):
        R = mpmath.sqrt(1 - rho * rho)
        pts = [-mpmath.inf] + [-j * rho for j in (40, 10, 4, 2, 1)] + [0, kap]
        F = 2 * mpmath.quad(lambda t: mpmath.npdf(t) * _H(-R * t / rho) * (kap - t) ** 2, pts)
        dF = 2 * mpmath.quad(lambda t: mpmath.npdf(t) * mpmath.npdf(R * t / rho) * t / rho**3
                             * (kap - t) ** 2, pts)
        return [(rho * rho - alpha * F) / rho**2, (2 * R + alpha * dF) * rho]

    k, c = max_margin_constant()
    rho0 = mpmath.pi * c / alpha
    rho, kap = mpmath.findroot(equations, (rho0, k * rho0))
    return mpmath.asin(rho), kap


def _mp(r, name):
    return mpmath.mpf(str(r[name]))


def test_max_margin_constant_is_the_published_one():
    """c = 0.5005 (Engel and Van den Broeck), and k solves k^3 Phi(k) + (k^2 - 1) phi(k) = 0 (the
    example docstring's closed form, a second route to the same number)."""
    with mpmath.workdps(30):
        k, c = max_margin_constant()
        assert abs(c - mpmath.mpf("0.5005")) < 5e-5
        closed = k**3 * mpmath.ncdf(k) + (k * k - 1) * mpmath.npdf(k)
        assert abs(closed) < mpmath.mpf(10) ** -25


@pytest.mark.slow
@pytest.mark.parametrize("alpha", ["10000", "1000000"])
def test_max_margin_generalisation_tends_to_c_over_alpha(alpha):
    """30 digits verified at alpha = 1e4, 1e6 (the quadrature at the field's scale), and
    alpha eps_g within 2/alpha^2 of c (the next order measured: alpha eps_g = c - 0.9/alpha^2)."""
    r = replica.solve(SVM, dps=30, alpha=alpha)
    assert r.converged and r.digits >= 30
    with mpmath.workdps(40):
        a = mpmath.mpf(alpha)
        _, c = max_margin_constant()
        got = a * _mp(r, "generalisation")
        assert abs(got - c) <= 2 / a**2, (got, c)
        assert 0 < _mp(r, "replicon") < 2 / a  # support vectors fill the dimension


@pytest.mark.slow
def test_max_margin_at_alpha_1000_against_the_saddle_point_by_hand():
    """alpha = 1000: theta and kappa of the engine (30 digits verified) against mpmath's root of
    the equations written here, to 28 digits."""
    r = replica.solve(SVM, dps=30, alpha="1000")
    assert r.converged and r.digits >= 30
    with mpmath.workdps(40):
        theta, kap = max_margin_saddle_point(1000)
        for name, ref in (("theta", theta), ("kappa", kap),
                          ("generalisation", theta / mpmath.pi)):
            got = _mp(r, name)
            assert abs(got - ref) <= mpmath.mpf(10) ** -28 * abs(ref), (name, got, ref)


# ---------------------------------------------------------------------------------------------
# Logistic regression at tiny alpha
# ---------------------------------------------------------------------------------------------
def logistic_small_alpha_limit(lam, eta=1):
    r"""(m/alpha, q/alpha, lam V) as alpha -> 0, derived here. With n = alpha d << d samples the
    ridge dominates: V -> 1/lam and w = (1/lam) sum_i y_i x_i (-l'(p_i))/sqrt(d) to leading
    order, where each training point's output p_i keeps its own O(1) contribution
    |x_i|^2/d = 1: p_i = -V l'(p_i), i.e. p0 = V/(1 + e^{p0}) (the proximal map at omega = 0,
    V = 1/lam). So -l'(p0) = lam p0, m = alpha E[y u] p0 = alpha eta sqrt(2/pi) p0 and
    q = alpha p0^2 (the n independent terms' squared norms; the cross terms are O(alpha^2))."""
    V0 = 1 / mpmath.mpf(lam)
    p0 = mpmath.findroot(lambda p: p - V0 / (1 + mpmath.exp(p)), 1)
    return eta * mpmath.sqrt(2 / mpmath.pi) * p0, p0**2, mpmath.mpf(1)


@pytest.mark.parametrize("lam", ["1/10", "1"])
def test_logistic_order_parameters_at_small_alpha(lam):
    """alpha = 1e-3: m/alpha, q/alpha, lam V within a relative 2 alpha of the limit derived above
    (the next order is O(alpha); measured 1.9e-4 at lam = 1/10), 30 digits verified."""
    alpha = mpmath.mpf("1e-3")
    r = replica.solve(LOGISTIC, dps=30, alpha="1/1000", lam=lam, eta="1")
    assert r.converged and r.digits >= 30
    with mpmath.workdps(30):
        mlim, qlim, vlim = logistic_small_alpha_limit(mpmath.mpf(sympy_rational(lam)))
        for got, ref in ((_mp(r, "m") / alpha, mlim), (_mp(r, "q") / alpha, qlim),
                         (_mp(r, "V") * mpmath.mpf(sympy_rational(lam)), vlim)):
            assert abs(got - ref) <= 2 * alpha * abs(ref), (got, ref)


def sympy_rational(text):
    num, _, den = text.partition("/")
    return mpmath.mpf(num) / mpmath.mpf(den or 1)


def training_error_by_hand(m, q, V, eta=1):
    r"""2 P(xi < xi0, L > 0) = 2 int_{-oo}^{xi0} phi(xi) Phi(a xi) dxi, xi0 = -V/(2 sqrt q),
    a = eta m/sqrt(q - eta^2 m^2), written here as phi(xi0) int_0^oo e^{xi0 u - u^2/2}
    Phi(a (xi0 - u)) du (xi = xi0 - u) with breakpoints at multiples of 1/|xi0|."""
    xi0 = -V / (2 * mpmath.sqrt(q))
    a = eta * m / mpmath.sqrt(q - eta**2 * m**2)
    s = 1 / abs(xi0)
    pts = [0] + [j * s for j in (1, 4, 16, 64)] + [mpmath.inf]
    inner = mpmath.quad(lambda u: mpmath.exp(xi0 * u - u * u / 2) * mpmath.ncdf(a * (xi0 - u)),
                        pts)
    return 2 * mpmath.npdf(xi0) * inner


@pytest.mark.slow
@pytest.mark.parametrize("den", [10**6, 10**10, 10**30])
def test_logistic_at_tiny_alpha(den):
    """alpha = 1e-6, 1e-10, 1e-30 (lam = 1/10): converged with 60 digits verified; m/alpha,
    q/alpha, lam V at the limit derived above (relative 2 alpha); the training error, a number
    like exp(-V^2/(8 q)) = 10^(-2e10) at 1e-10, against the integral by hand (25 digits)."""
    r = replica.solve(LOGISTIC, dps=60, alpha=f"1/{den}", lam="1/10", eta="1")
    assert r.converged and r.digits >= 60
    # (60 digits: the error is about exp(-V^2/(8q)), so rounded inputs lose log10(V^2/(8q))
    # digits in the integral by hand, 31 of them at 1e-30)
    with mpmath.workdps(70):
        a = mpmath.mpf(1) / den
        mlim, qlim, vlim = logistic_small_alpha_limit(mpmath.mpf("0.1"))
        m, q, V = _mp(r, "m"), _mp(r, "q"), _mp(r, "V")
        for got, ref in ((m / a, mlim), (q / a, qlim), (V / 10, vlim)):
            assert abs(got - ref) <= 2 * a * abs(ref), (got, ref)
        ref = training_error_by_hand(m, q, V)
        got = _mp(r, "train_error")
        assert abs(got - ref) <= mpmath.mpf(10) ** -25 * ref, (got, ref)


def test_decimal_string_of_a_huge_exponent():
    """Values beyond mpmath's integer conversion print with their own decimal exponent: read
    back, they are the value to the digits printed, and the form is mpmath's below it."""
    from replica.numerics.result import decimal_string

    with mpmath.workdps(40):
        for text in ("4.01469244429395613143734040361e-20344769132",
                     "-9.87654321098765432109876543210e+3000000", "9.99999999999999999e-400000"):
            x = mpmath.mpf(text)
            out = decimal_string(x, 30)
            back = mpmath.mpf(out)
            assert abs(back - x) <= mpmath.mpf(10) ** -29 * abs(x), (text, out)
            assert out.split("e")[0].lstrip("-")[0] in "123456789" and "." in out
        small = mpmath.mpf("2.5e-30000")  # both routes print this one
        assert decimal_string(small, 12) == mpmath.nstr(small, 12, strip_zeros=False)
