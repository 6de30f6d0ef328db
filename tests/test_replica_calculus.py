"""The Gaussian replica calculus: each operation against explicit matrices (n = 1..6) or
numerical quadrature, and each check shown to reject a deliberately wrong formula."""

import pytest
import sympy

from replica.symbolic.replica_calculus import (BETA, N_REPLICAS as n, RSBlock,
                                               average_common_field, check_against_explicit,
                                               check_gaussian_integral, coupling_term,
                                               gaussian_integral_log, log_det_average,
                                               replica_limit, zero_temperature)
from replica.symbolic.spectral import LAMBDA_I, SpectralAverage

a, b, c, e = sympy.symbols("a b c e", real=True)
VALUES = {a: sympy.Rational(7, 3), b: sympy.Rational(-2, 5), c: sympy.Rational(3, 2),
          e: sympy.Rational(1, 7)}
SCALAR = RSBlock.scalar(a, b)
BLOCK = RSBlock([[a, c], [c, 2]], [[b, e], [e, sympy.Rational(1, 3)]])


def explicit(M):
    return lambda nv: M.at(nv).explicit(nv, VALUES)


@pytest.mark.parametrize("M", [SCALAR, BLOCK], ids=["scalar", "2x2 blocks"])
def test_algebra_against_explicit_matrices(M):
    other = RSBlock.scalar(c, e) if M.k == 1 else RSBlock([[1, e], [e, c]], [[e, 0], [0, b]])
    assert check_against_explicit(M @ other, lambda nv: explicit(M)(nv) * explicit(other)(nv),
                                  subs=VALUES)
    assert check_against_explicit(M.inverse(), lambda nv: explicit(M)(nv).inv(), subs=VALUES)
    assert check_against_explicit(M.det(), lambda nv: explicit(M)(nv).det(), subs=VALUES)
    assert check_against_explicit(M.trace(), lambda nv: explicit(M)(nv).trace(), subs=VALUES)
    h = sympy.Matrix([c, e][:M.k])

    def form(nv):
        v = sympy.Matrix([h[i % M.k] for i in range(M.k * nv)])
        return (v.T * explicit(M)(nv) * v)[0, 0]

    assert check_against_explicit(M.constant_form(h), form, subs=VALUES)


def test_wrong_formulas_are_rejected():
    """The same comparisons fail for a wrong exponent, a wrong sign or a missing factor n."""
    wrong_det = SCALAR.A.det() ** n * (SCALAR.A + n * SCALAR.B).det()
    assert not check_against_explicit(wrong_det, lambda nv: explicit(SCALAR)(nv).det(),
                                      subs=VALUES)
    inv = SCALAR.inverse()
    wrong_inv = RSBlock(inv.A, -inv.B)
    assert not check_against_explicit(wrong_inv, lambda nv: explicit(SCALAR)(nv).inv(),
                                      subs=VALUES)
    wrong_product = RSBlock(SCALAR.A ** 2, 2 * SCALAR.A * SCALAR.B + SCALAR.B ** 2)  # no n
    assert not check_against_explicit(wrong_product, lambda nv: explicit(SCALAR)(nv) ** 2,
                                      subs=VALUES)


@pytest.mark.slow
@pytest.mark.parametrize("M,h,nv", [(RSBlock.scalar(a, b), [c], 1),
                                    (RSBlock.scalar(a, b), [c], 2),
                                    (RSBlock([[a, e], [e, 2]], [[0, 0], [0, 0]]), [c, e], 1)])
def test_gaussian_integral_against_quadrature(M, h, nv):
    values = {a: sympy.Rational(5, 2), b: sympy.Rational(1, 2), c: sympy.Rational(1, 3),
              e: sympy.Rational(1, 5)}
    assert check_gaussian_integral(M, h, values, nv, dps=12)
    # the same check rejects a field term with the wrong sign of n B, and a det without n - 1
    hv = sympy.Matrix(h)
    wrong_field = (M.k * n / 2 * sympy.log(2 * sympy.pi) - M.log_det() / 2
                   + n / 2 * (hv.T * (M.A - n * M.B).inv() * hv)[0, 0])
    wrong_det = gaussian_integral_log(M, h) + M.log_det() / 2 - n * sympy.log(M.A.det()) / 2 \
        - sympy.log((M.A + n * M.B).det()) / 2
    for wrong in (wrong_field, wrong_det):
        if sympy.simplify((wrong - gaussian_integral_log(M, h)).subs(n, nv).subs(values)) != 0:
            assert not check_gaussian_integral(M, h, values, nv, dps=12, log_value=wrong)


@pytest.mark.slow
def test_common_field_average_shifts_the_replica_block():
    r"""E_xi exp(xi 1^T x) = exp(s^2 (1^T x)^2 / 2) for xi ~ N(0, s^2): integrating xi out of the
    Gaussian integral equals the integral of the shifted matrix (n = 2, explicit)."""
    s2 = sympy.Rational(1, 4)
    M = RSBlock.scalar(3, sympy.Rational(1, 2))
    shifted = average_common_field(M, [[s2]])
    assert shifted.B[0, 0] == sympy.Rational(1, 2) - s2
    x1, x2, xi = sympy.symbols("x1 x2 xi", real=True)
    Mx = M.at(2).explicit(2)
    quad = (sympy.Matrix([x1, x2]).T * Mx * sympy.Matrix([x1, x2]))[0, 0]
    inner = sympy.integrate(sympy.exp(-xi**2 / (2 * s2) + xi * (x1 + x2))
                            / sympy.sqrt(2 * sympy.pi * s2), (xi, -sympy.oo, sympy.oo))
    lhs = sympy.simplify(sympy.log(inner) - quad / 2 + quad / 2)
    Sx = shifted.at(2).explicit(2)
    rhs_quad = (sympy.Matrix([x1, x2]).T * (Mx - Sx) * sympy.Matrix([x1, x2]))[0, 0] / 2
    assert sympy.simplify(lhs - rhs_quad) == 0


def test_replica_limit_of_the_rs_gaussian_integral():
    r"""lim (1/n) log of the RS Gaussian integral = (1/2) log 2 pi - (1/2)(log a + b/a)
    + h^2/(2a); a wrong limit (the n -> 0 of log det without 1/n) is different."""
    M = RSBlock.scalar(a, b)
    h = sympy.Symbol("h", real=True)
    pos = {a: sympy.Symbol("A", positive=True)}
    lim = replica_limit(gaussian_integral_log(M, [h]).subs(pos))
    A = pos[a]
    expected = sympy.log(2 * sympy.pi) / 2 - (sympy.log(A) + b / A) / 2 + h**2 / (2 * A)
    assert sympy.simplify(lim - expected) == 0
    assert sympy.simplify(lim - (sympy.log(2 * sympy.pi) / 2 - sympy.log(A) / 2
                                 + h**2 / (2 * A))) != 0
    with pytest.raises(ValueError):
        replica_limit(1 + n)


def test_coupling_term_replica_limit():
    Qd, q, Qhd, qh = sympy.symbols("Q_d q Qhat_d qhat", real=True)
    Q = RSBlock.from_entries(Qd, q)
    Qh = RSBlock.from_entries(Qhd, qh)
    t = coupling_term(Q, Qh)
    assert check_against_explicit(t, lambda nv: (Qh.at(nv).explicit(nv) * Q.at(nv).explicit(nv)
                                                 ).trace() / 2)
    assert sympy.simplify(replica_limit(t) - (Qhd * Qd - qh * q) / 2) == 0


def test_zero_temperature_leading_order():
    r"""With Q_d = q + chi/beta and the conjugates scaled as Qhat_d - qhat = beta Vhat,
    qhat = beta^2 chihat, the beta^2 terms of the coupling (Qhat_d Q_d - qhat q)/2 cancel and it
    grows like beta with coefficient (q Vhat + chi chihat)/2 (expanded by hand:
    (beta Vhat + beta^2 chihat)(q + chi/beta) - beta^2 chihat q = beta (Vhat q + chihat chi)
    + Vhat chi)."""
    q, chi, Vh, chih = sympy.symbols("q chi Vhat chihat", real=True)
    Qd, qh_full, Qhd = sympy.symbols("Q_d qh Qhd", real=True)
    expr = (Qhd * Qd - qh_full * q) / 2
    power, coeff = zero_temperature(expr, {Qd: q + chi / BETA, Qhd: BETA * Vh + BETA**2 * chih,
                                           qh_full: BETA**2 * chih})
    assert power == 1 and sympy.simplify(coeff - (Vh * q + chih * chi) / 2) == 0
    power, coeff = zero_temperature(BETA**3 * a + BETA * b, {})
    assert (power, coeff) == (3, a)


def test_log_det_average_on_an_explicit_spectrum():
    lam = [sympy.Rational(1, 2), 1, sympy.Rational(3, 2)]
    x, y = sympy.Rational(2), sympy.Rational(1, 3)
    expr = log_det_average(x, y)
    value = expr.replace(lambda t: isinstance(t, SpectralAverage),
                         lambda t: sum(t.args[0].subs(LAMBDA_I, v) for v in lam) / 3)
    direct = sympy.log(sympy.Matrix.diag(*[x + y * v for v in lam]).det()) / 3
    assert abs(sympy.N(value - direct, 30)) < 1e-28


# ---------------------------------------------------------------------------------------------
# RS Gaussian moments, Gaussian expectations, spectral averages as Stieltjes transforms
# ---------------------------------------------------------------------------------------------
def test_rs_gaussian_moments_against_explicit_inverse():
    from replica.symbolic.replica_calculus import rs_gaussian_moments
    h = sympy.Symbol("h", real=True)
    M = RSBlock.scalar(a, b)
    mom = rs_gaussian_moments(M, h)
    vals = {a: sympy.Rational(5, 2), b: sympy.Rational(-1, 3), h: sympy.Rational(3, 7)}
    assert check_against_explicit(mom["mean"], lambda k: (
        M.at(k).explicit(k).inv() * sympy.Matrix([h] * k))[0], subs=vals)
    assert check_against_explicit(mom["common"], lambda k: M.at(k).explicit(k).inv()[0, 1],
                                  ns=range(2, 7), subs=vals)
    # a mean without the n B of the RS inverse is rejected
    assert not check_against_explicit(h / a, lambda k: (
        M.at(k).explicit(k).inv() * sympy.Matrix([h] * k))[0], subs=vals)


def test_gaussian_expectation_isserlis_against_quadrature():
    import mpmath
    from replica.symbolic.replica_calculus import gaussian_expectation
    x, y = sympy.symbols("x y", real=True)
    v = sympy.Rational(2, 3)
    poly = x**4 * y**2 - 3 * x**2 + x * y + 5
    got = gaussian_expectation(poly, (x, y), v)
    assert got == 3 * v**3 - 3 * v + 5
    with mpmath.workdps(15):
        dens = lambda t: mpmath.exp(-t**2 / (2 * float(v))) / mpmath.sqrt(2 * mpmath.pi * float(v))  # noqa: E731
        qx = [mpmath.quad(lambda t: t**k * dens(t), [-mpmath.inf, mpmath.inf]) for k in range(5)]
    # the polynomial's expectation from the 1-d moments (independence)
    num = qx[4] * qx[2] - 3 * qx[2] + qx[1] * qx[1] + 5
    assert abs(num - float(got)) < 1e-10
    # the same comparison rejects the expectation taken with a wrong variance
    assert abs(num - float(gaussian_expectation(poly, (x, y), 1))) > 1e-3


def test_stieltjes_form_on_an_explicit_spectrum():
    from replica.symbolic.replica_calculus import stieltjes_form
    from replica.symbolic.spectral import MU_I
    z = sympy.Symbol("z", negative=True)
    g = sympy.Function("g")
    gt = sympy.Function("gt")
    spec = [sympy.Rational(1, 2), 1, sympy.Rational(3, 2)]   # <s> = 1
    wts = [1, 0, sympy.Rational(1, 2)]                         # weights mu_i
    zv = sympy.Rational(-1, 3)
    avg = lambda f: sum(f(si, mi) for si, mi in zip(spec, wts)) / 3  # noqa: E731
    G = [avg(lambda si, mi: 1 / (si - zv)), avg(lambda si, mi: 1 / (si - zv)**2)]
    W = [avg(lambda si, mi: mi / (si - zv)), avg(lambda si, mi: mi / (si - zv)**2)]
    expr = SpectralAverage(LAMBDA_I**3 / (LAMBDA_I - z)**2 + MU_I * (LAMBDA_I + 2)
                           / (LAMBDA_I - z)**2)
    moments = {0: 1, 1: 1, ("w", 0): avg(lambda si, mi: mi), ("w", 1): avg(lambda si, mi: mi * si)}
    form = stieltjes_form(expr, z, lambda k: sympy.diff(g(z), z, k) if k else g(z), moments,
                          lambda k: sympy.diff(gt(z), z, k) if k else gt(z), weight=MU_I)

    def evaluate(f, sign=1):
        v = f.subs({sympy.Derivative(g(z), z): sympy.Symbol("G1"),
                    sympy.Derivative(gt(z), z): sympy.Symbol("W1")})
        return v.subs({g(z): sign * G[0], gt(z): W[0], sympy.Symbol("G1"): G[1],
                       sympy.Symbol("W1"): W[1], z: zv})
    direct = avg(lambda si, mi: si**3 / (si - zv)**2 + mi * (si + 2) / (si - zv)**2)
    assert sympy.simplify(evaluate(form) - direct) == 0
    # a wrong sign of the transform (<1/(s - z)> read as -g) is rejected by the same comparison
    assert sympy.simplify(evaluate(form, -1) - direct) != 0
    # a pole away from s = z is refused
    with pytest.raises(ValueError):
        stieltjes_form(SpectralAverage(1 / (LAMBDA_I + z)), z, lambda k: g(z), moments)


def test_fast_replica_limit_equals_the_series():
    M = RSBlock.scalar(a, b)
    h = sympy.Symbol("h", real=True)
    pos = {a: sympy.Symbol("A", positive=True)}
    phi = gaussian_integral_log(M, [h]).subs(pos)
    fast = replica_limit(phi, simplify=False)
    assert sympy.simplify(fast - replica_limit(phi)) == 0
    with pytest.raises(ValueError):
        replica_limit(1 + n, simplify=False)
