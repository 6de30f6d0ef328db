"""The high-precision quadrature of Gaussian integrals (replica.symbolic.quadrature, used by the
mpmath evaluation of ``gauss(...)`` in replica.symbolic.codegen): closed forms at 30 and 50
digits (kinks, heavy tails, products of error functions), the error estimate refusing an
under-resolved integrand, and float64 against mpmath."""

import os

import mpmath
import numpy as np
import pytest
import sympy

from replica.symbolic.codegen import Evaluator, mp_function
from replica.symbolic.gaussian import gauss
from replica.symbolic.quadrature import (NotResolved, gauss_legendre_pieces, gauss_truncation,
                                         legendre_rule)

z = sympy.Symbol("z", real=True)
a, b, k = sympy.symbols("a b k", real=True)


def Phi(x):
    return sympy.erfc(-x / sympy.sqrt(2)) / 2


def _phi(x):
    return mpmath.exp(-x * x / 2) / mpmath.sqrt(2 * mpmath.pi)


def _Phi(x):
    return mpmath.erfc(-x / mpmath.sqrt(2)) / 2


# (integrand, arguments, values, closed form as a function of the values at the working precision)
CASES = {
    "z^2 theta(z - k)": (z**2 * sympy.Heaviside(z - k), [k], ["0.7"],
                         lambda k: k * _phi(k) + _Phi(-k)),
    "|z - k|": (sympy.Abs(z - k), [k], ["-1.3"],
                lambda k: 2 * _phi(k) + k * (2 * _Phi(k) - 1)),
    "z^2 exp(b z) (heavy tail)": (z**2 * sympy.exp(b * z), [b], ["3"],
                                  lambda b: (1 + b * b) * mpmath.exp(b * b / 2)),
    "exp(z^2/4) (a tail beyond the truncation point)": (
        sympy.exp(z**2 / 4), [], [], lambda: mpmath.sqrt(2)),
    "exp(3 z^2/8) (a tail that is not small)": (
        sympy.exp(3 * z**2 / 8), [], [], lambda: mpmath.mpf(2)),
    "cosh(a + b z)": (sympy.cosh(a + b * z), [a, b], ["0.4", "1.5"],
                      lambda a, b: mpmath.cosh(a) * mpmath.exp(b * b / 2)),
    "Phi(a z + b)": (Phi(a * z + b), [a, b], ["1.7", "0.3"],
                     lambda a, b: _Phi(b / mpmath.sqrt(1 + a * a))),
    "Phi(a z)^2 (an erfc product)": (Phi(a * z)**2, [a], ["1.2"],
                                     lambda a: mpmath.mpf(1) / 4
                                     + mpmath.asin(a * a / (1 + a * a)) / (2 * mpmath.pi)),
    "z^3 theta(z - k) exp(z) (kink and tail)": (
        z**3 * sympy.exp(z) * sympy.Heaviside(z - k), [k], ["0.5"],
        # E[z^3 e^z; z > k] = e^{1/2} E[(y+1)^3; y > k - 1], y standard normal
        lambda k: mpmath.exp(mpmath.mpf(1) / 2) * (
            ((k - 1)**2 + 2) * _phi(k - 1) + 3 * ((k - 1) * _phi(k - 1) + _Phi(1 - k))
            + 3 * _phi(k - 1) + _Phi(1 - k))),
}


@pytest.mark.parametrize("dps", [30, 50])
@pytest.mark.parametrize("name", sorted(CASES))
def test_closed_forms(name, dps):
    expr, args, values, exact = CASES[name]
    f = mp_function(args, gauss(expr, z))
    with mpmath.workdps(dps):
        vals = [mpmath.mpf(v) for v in values]
        got = f(*vals)
        with mpmath.workdps(dps + 20):
            want = exact(*[mpmath.mpf(v) for v in values])
        assert abs(got - want) <= mpmath.mpf(10) ** -dps * abs(want), (name, got, want)


def test_log_cosh_against_a_series():
    """:math:`\\int\\mathcal{D}z\\,\\log\\cosh(a + bz)` against its expansion
    :math:`\\log\\cosh u = |u| - \\log 2 + \\sum_{n\\ge1} (-1)^{n+1} e^{-2n|u|}/n` integrated in closed form
    term by term (each term a Gaussian integral of an exponential on a half-line)."""
    f = mp_function([a, b], gauss(sympy.log(sympy.cosh(a + b * z)), z))
    with mpmath.workdps(30):
        A, B = mpmath.mpf("0.8"), mpmath.mpf("1.1")
        got = f(A, B)
        with mpmath.workdps(50):
            A, B = mpmath.mpf("0.8"), mpmath.mpf("1.1")
            c = -A / B  # a + b z > 0 for z > c

            def half(s, t):  # E[exp(s z + t); z > c] and E[...; z < c]
                e = mpmath.exp(s * s / 2 + t)
                return e * _Phi(s - c), e * _Phi(c - s)

            absu = B * (2 * _phi(c)) + A * (2 * _Phi(-c) - 1)  # E|a + bz|
            series = mpmath.nsum(lambda n: (-1)**(n + 1) / n * (
                half(-2 * n * B, -2 * n * A)[0] + half(2 * n * B, 2 * n * A)[1]), [1, mpmath.inf])
            want = absu - mpmath.log(2) + series
        assert abs(got - want) <= mpmath.mpf(10) ** -30 * abs(want)


def test_legendre_rule_is_exact_for_polynomials():
    with mpmath.workdps(50):
        xs, ws = legendre_rule(12)
        assert abs(mpmath.fsum(ws) - 2) < mpmath.mpf(10) ** -48
        assert abs(mpmath.fdot(ws, [x**22 for x in xs]) - mpmath.mpf(2) / 23) < \
            mpmath.mpf(10) ** -48
        assert len(xs) == 12


def test_error_estimate_refuses_an_under_resolved_integrand():
    """A kink the rule is not told about (:math:`|z - 0.3|`, not a breakpoint) converges only
    algebraically: within a small refinement budget the estimate must refuse it, while the
    same budget resolves the smooth integrand (so the refusal is the estimate's doing); with
    the default budget it is refused too rather than returned wrong."""
    with mpmath.workdps(30):
        smooth = [(mpmath.mpf(-1), mpmath.mpf(1), lambda x: mpmath.exp(x) * _phi(x), 0)]
        value, error, size = gauss_legendre_pieces(smooth, mpmath.mpf(10) ** -30,
                                                   max_refinements=4)
        want = mpmath.exp(mpmath.mpf(1) / 2) * (_Phi(mpmath.mpf(0)) - _Phi(mpmath.mpf(-2)))
        assert abs(value - want) < mpmath.mpf(10) ** -30
        kinked = [(mpmath.mpf(-1), mpmath.mpf(1), lambda x: abs(x - mpmath.mpf("0.3")), 0)]
        with pytest.raises(NotResolved):
            gauss_legendre_pieces(kinked, mpmath.mpf(10) ** -30, max_refinements=4)
        with pytest.raises(NotResolved):
            gauss_legendre_pieces(kinked, mpmath.mpf(10) ** -30)


def test_remembered_levels_start_the_next_evaluation():
    memory = {}
    with mpmath.workdps(30):
        pieces = [(mpmath.mpf(-2), mpmath.mpf(0), lambda x: mpmath.cos(3 * x) * _phi(x), "L"),
                  (mpmath.mpf(0), mpmath.mpf(2), lambda x: mpmath.cos(3 * x) * _phi(x), "R")]
        v1, _, _ = gauss_legendre_pieces(pieces, mpmath.mpf(10) ** -30, memory)
        assert memory["L"] > 1 and memory["R"] > 1
        v2, _, _ = gauss_legendre_pieces(pieces, mpmath.mpf(10) ** -30, memory)
        assert abs(v1 - v2) < mpmath.mpf(10) ** -30


def test_truncation_point_makes_the_density_negligible():
    for prec in (53, 120, 200):
        T = gauss_truncation(prec)
        assert _phi(mpmath.mpf(T)) <= mpmath.mpf(2) ** -(prec + 30)


@pytest.mark.parametrize("name", ["z^2 theta(z - k)", "Phi(a z)^2 (an erfc product)",
                                  "cosh(a + b z)"])
def test_float64_agrees_with_mpmath(name):
    expr, args, values, _ = CASES[name]
    ev = Evaluator([gauss(expr, z)], args)
    with mpmath.workdps(30):
        mp_value = ev.mp([mpmath.mpf(v) for v in values])[0]
    f64 = float(ev.f64([np.array(float(v)) for v in values])[0])
    assert f64 == pytest.approx(float(mp_value), rel=1e-13)


class _Sums:
    """A piece's integrand whose rule sums come with a rounding bound (as the ball-arithmetic
    evaluation of replica.symbolic.codegen reports them)."""

    def __init__(self, rounding):
        self.rounding = rounding

    def __call__(self, x):
        return mpmath.exp(x) * _phi(x)

    def weighted_sums(self, m, h, xs, ws):
        fs = [self(m + h * x) for x in xs]
        return (h * mpmath.fdot(ws, fs), h * mpmath.fdot(ws, [abs(v) for v in fs]),
                mpmath.mpf(self.rounding))


def test_the_rounding_bound_of_ball_sums_enters_the_error_estimate():
    """Rule sums computed in ball arithmetic carry the radius of their balls: a piece whose
    rounding bound is above the tolerance is not accepted, however well the rule converges."""
    with mpmath.workdps(30):
        tol = mpmath.mpf(10) ** -30
        value, error, _ = gauss_legendre_pieces([(-1, 1, _Sums(0), 0)], tol)
        assert error < tol
        with pytest.raises(NotResolved):
            gauss_legendre_pieces([(-1, 1, _Sums("1e-20"), 0)], tol, max_refinements=8)


def test_a_rounding_floor_stops_the_refinement_and_reports_the_rounding():
    """rounding_floor (the inner integrals of a two-dimensional one): a piece resolved but for
    its rounding bound is not refined further -- refinement does not lower that bound -- and
    its error comes back with the bound in it, above the tolerance, for the caller to judge;
    the rule's own (truncation) error is still brought below the tolerance: the value equals
    the closed form int_{-1}^{1} e^x phi(x) dx = e^{1/2} (Phi(0) - Phi(-2)) to it."""
    with mpmath.workdps(30):
        tol = mpmath.mpf(10) ** -30
        exact = mpmath.exp(mpmath.mpf(1) / 2) * (_Phi(0) - _Phi(-2))
        value, error, size = gauss_legendre_pieces([(-1, 1, _Sums("1e-20"), 0)], tol,
                                                   max_refinements=8, rounding_floor=True)
        assert mpmath.mpf("1e-20") <= error < mpmath.mpf("2e-20")
        assert abs(value - exact) < tol * size, (value, exact)


def test_an_implicit_root_inside_an_integrand_is_evaluated_at_ball_midpoints():
    """The mpmath quadrature evaluates integrands in ball arithmetic (midpoints), an implicit
    root there by its midpoint iteration: the value agrees with an independent quadrature of
    the closed-form root (Cardano) at 30 digits."""
    from replica.symbolic.implicit import implicit_root

    p, x = sympy.symbols("p x", real=True)
    R = implicit_root("cubic_root_q", p**3 + p - x, p, (x,), bracket=(-1 - abs(x), 1 + abs(x)))
    numeric = R._imp_
    calls = []
    original = numeric.midpoint
    numeric.midpoint = lambda *args: calls.append(1) or original(*args)
    ev = Evaluator([gauss(R(a + z) ** 2, z)], [a])

    def root(t):
        s = mpmath.sqrt(t * t / 4 + mpmath.mpf(1) / 27)
        cbrt = lambda u: mpmath.sign(u) * abs(u) ** (mpmath.mpf(1) / 3)  # noqa: E731
        return cbrt(t / 2 + s) + cbrt(t / 2 - s)

    with mpmath.workdps(30):
        value = ev.mp([mpmath.mpf("0.4")])[0]
        with mpmath.workdps(40):
            want = mpmath.quad(lambda t: root(mpmath.mpf("0.4") + t) ** 2 * _phi(t),
                               [-mpmath.inf, -0.4, mpmath.inf])
        assert abs(value - want) < mpmath.mpf(10) ** -28 * abs(want)
    assert calls, "the implicit root was not evaluated at ball midpoints"


# ---------------------------------------------------------------------------------------------
# Fused integrands: several integrals on the same pieces and nodes, error control per member
# ---------------------------------------------------------------------------------------------
def _fused_pieces(f):
    return [(mpmath.mpf(-1), mpmath.mpf(0), f, "L"), (mpmath.mpf(0), mpmath.mpf(1), f, "R")]


@pytest.mark.parametrize("order", ["easy first", "hard first"])
def test_the_fused_rule_controls_every_members_error(order):
    r"""Two members on the same nodes: :math:`e^x` (resolved at the first levels) and the
    Lorentzian :math:`1/(1 + 25x^2)` (poles at :math:`\pm i/5`: it needs bisection). Each
    member's value meets 30 digits against its closed form (:math:`e - 1/e`,
    :math:`\tfrac25\arctan 5`) whichever comes first: the rule does not stop on one member's
    estimate."""
    from replica.symbolic.quadrature import gauss_legendre_fused

    with mpmath.workdps(30):
        easy = (lambda x: mpmath.exp(x), mpmath.e - 1 / mpmath.e)
        hard = (lambda x: 1 / (1 + 25 * x * x), 2 * mpmath.atan(5) / 5)
        members = [easy, hard] if order == "easy first" else [hard, easy]
        tol = mpmath.mpf(10) ** -30
        values, errors, sizes = gauss_legendre_fused(
            _fused_pieces(lambda x: [f(x) for f, _ in members]), tol)
        for (_, want), value, error, size in zip(members, values, errors, sizes):
            assert error <= tol * size
            assert abs(value - want) <= 10 * tol * abs(want)


def test_the_fused_rule_equals_the_members_own_rules():
    """A fused member that needs no more refinement than it would alone gets the same value
    as its own rule; the one-member fused rule is the scalar rule exactly."""
    from replica.symbolic.quadrature import gauss_legendre_fused

    with mpmath.workdps(30):
        tol = mpmath.mpf(10) ** -30
        f = lambda x: mpmath.cos(3 * x) * _phi(x)  # noqa: E731
        alone = gauss_legendre_pieces(_fused_pieces(f), tol)
        one = gauss_legendre_fused(_fused_pieces(lambda x: [f(x)]), tol)
        assert (one[0][0], one[1][0], one[2][0]) == alone
        both = gauss_legendre_fused(_fused_pieces(lambda x: [f(x), f(x) * 2]), tol)
        assert both[0][0] == alone[0] and abs(both[0][1] - 2 * alone[0]) <= tol


def test_integrals_with_the_same_kinks_are_evaluated_together():
    r"""An evaluator's integrals with the same kink (:math:`z = k`) form one fused group (one
    call of the group's ball integrand per node); one without the kink is on its own. Each
    value against its closed form at 30 digits: :math:`E[z^2\theta(z - k)] = k\varphi(k) +
    \Phi(-k)`, :math:`E[\theta(z - k)] = \Phi(-k)`, :math:`E[e^{bz}\theta(z - k)] =
    e^{b^2/2}\Phi(b - k)`, :math:`E[z^2 e^{bz}] = (1 + b^2)e^{b^2/2}`."""
    exprs = [gauss(z**2 * sympy.Heaviside(z - k), z), gauss(sympy.Heaviside(z - k), z),
             gauss(sympy.exp(b * z) * sympy.Heaviside(z - k), z), gauss(z**2 * sympy.exp(b * z), z)]
    ev = Evaluator(exprs, [k, b])
    with mpmath.workdps(30):
        kv, bv = mpmath.mpf("0.7"), mpmath.mpf("1.5")
        got = ev.mp([kv, bv])
        groups = ev._fused["mp"]
        assert [len(g.members) for g in groups] == [3]
        calls = []
        fast = groups[0].fast
        groups[0].fast = lambda *args: calls.append(1) or fast(*args)
        again = ev.mp([kv + mpmath.mpf(10) ** -3, bv])
        assert calls and len(again) == 4
        wants = [kv * _phi(kv) + _Phi(-kv), _Phi(-kv),
                 mpmath.exp(bv**2 / 2) * _Phi(bv - kv), (1 + bv**2) * mpmath.exp(bv**2 / 2)]
        for value, want in zip(got, wants):
            assert abs(value - want) <= mpmath.mpf(10) ** -30 * abs(want)


def test_a_group_that_uses_an_earlier_integral_waits_for_it():
    r"""Two integrals whose integrands hold a third (:math:`A = E[z^2] = 1`, substituted into
    both) are one group one level deeper, evaluated after it: :math:`E[e^{Abz}] =
    e^{A^2b^2/2}` and :math:`E[z\,e^{Abz}] = Ab\,e^{A^2b^2/2}` at 30 digits, where :math:`A`
    is written as :math:`E[z^2 + c] - c`."""
    c = sympy.Symbol("c", real=True)
    inner = gauss(z**2 + c, z) - c
    ev = Evaluator([gauss(sympy.exp(inner * b * z), z), gauss(z * sympy.exp(inner * b * z), z)],
                   [b, c])
    with mpmath.workdps(30):
        bv = mpmath.mpf("0.8")
        got = ev.mp([bv, mpmath.mpf("0.3")])
        groups = ev._fused["mp"]
        assert [(len(g.members), len(g.deps)) for g in groups] == [(2, 1)]
        wants = [mpmath.exp(bv**2 / 2), bv * mpmath.exp(bv**2 / 2)]
        for value, want in zip(got, wants):
            assert abs(value - want) <= mpmath.mpf(10) ** -30 * abs(want)


# ---------------------------------------------------------------------------------------------
# Starting levels from other integrals (LevelHints)
# ---------------------------------------------------------------------------------------------
def test_level_hints_keep_the_smallest_level_and_fall_back_to_a_lower_precision():
    """``get`` gives the smallest level noted for a cell at its precision, else the one noted
    at the nearest lower precision, never one from a higher precision; cells not keyed by a
    precision are ignored."""
    from replica.symbolic.quadrature import LevelHints

    hints = LevelHints()
    hints.note({(100, -2): 4, (100, 0): 3, "L": 5})
    hints.note({(100, -2): 3, (100, 0): 4})  # a simpler integrand on the same cells
    assert hints.get((100, -2)) == 3 and hints.get((100, 0)) == 3
    hints.note({(60, -2): 2, (200, 0): 5})
    assert hints.get((150, -2)) == 3  # the nearest lower precision, 100 bits
    assert hints.get((80, -2)) == 2
    assert hints.get((50, -2)) is None  # only higher precisions noted
    assert hints.get((150, 0)) == 3 and hints.get((250, 0)) == 5
    assert hints.get((100, 2)) is None and hints.get("L") is None


def _counted(f, calls):
    def g(x):
        calls.append(1)
        return f(x)
    return g


def test_hinted_levels_start_the_first_evaluation_and_keep_every_digit():
    r"""An integral evaluated first with hints noted by another on the same cells starts at
    their levels: fewer evaluations of its integrand than the climb from level 1, and its
    value still meets 30 digits against the closed form
    :math:`\int_{-2}^{2}\cos(3x)\varphi(x)\,dx = e^{-9/2}\,\mathrm{Re}\,
    \mathrm{erf}((2 + 3i)/\sqrt2)` (the error control, not the start, decides)."""
    from replica.symbolic.quadrature import LevelHints, gauss_legendre_fused

    def pieces(f):
        return [(mpmath.mpf(-2), mpmath.mpf(0), f, (100, "L")),
                (mpmath.mpf(0), mpmath.mpf(2), f, (100, "R"))]

    with mpmath.workdps(30):
        tol = mpmath.mpf(10) ** -30
        g = lambda x: [mpmath.cos(3 * x) * _phi(x)]  # noqa: E731
        want = mpmath.exp(-mpmath.mpf(9) / 2) * (mpmath.erf(mpmath.sqrt(2) + 3j / mpmath.sqrt(2))
                                                 ).real
        cold, hinted, hints = [], [], LevelHints()
        first = gauss_legendre_fused(pieces(_counted(g, cold)), tol, {}, hints=hints)
        levels = {}
        gauss_legendre_fused(pieces(g), tol, levels)
        assert hints.get((100, "L")) == levels[(100, "L")] > 1
        again = gauss_legendre_fused(pieces(_counted(g, hinted)), tol, {}, hints=hints)
        assert len(hinted) < len(cold)
        for value, error, size in (first, again):
            assert error[0] <= tol * size[0]
            assert abs(value[0] - want) <= 10 * tol * abs(want)


def test_levels_remembered_on_disk_start_a_later_process_and_never_rise(monkeypatch):
    r"""An evaluator's integrals' accepted levels are stored next to its generated code (under
    the code's key) when the process ends, and a later process that loads the code starts its
    first evaluation there: fewer Gauss--Legendre nodes than the climb from level 1, the value
    :math:`E\cos(bz) = e^{-b^2/2}` at 30 digits either way. A cell's stored level is the
    smallest accepted so far: a process that accepted a higher one does not raise it."""
    import replica.symbolic.codegen as C
    from replica.symbolic import quadrature as Q

    nodes = []
    rule = Q._Piece._rule

    def counted(self, level):
        nodes.append(Q.level_nodes(level))
        return rule(self, level)

    monkeypatch.setattr(Q._Piece, "_rule", counted)
    key = C.cache_key("test-remembered-levels", [])
    bz = sympy.Symbol("b", positive=True)

    def process():
        """A fresh evaluator of the same code (a later process: no hints, its levels read)."""
        C._LEVEL_HINTS.clear()
        nodes.clear()
        ev = Evaluator([gauss(sympy.cos(bz * z), z)], [bz], cache=C.CodeCache(key), name="cos")
        with mpmath.workdps(30):
            value = ev.mp([mpmath.mpf(3)])[0]
            assert abs(value - mpmath.exp(-mpmath.mpf(9) / 2)) <= mpmath.mpf(10) ** -29 * value
        return ev, sum(nodes)

    try:
        first_ev, first = process()
        C._REMEMBERED_LEVELS.store()  # (what the end of the process does)
        path = first_ev.cache.path("cos-mp", C._RememberedLevels.SUFFIX)
        assert path is not None and os.path.exists(path)
        later_ev, later = process()
        assert later < first, (later, first)
        (g,) = later_ev._gauss["mp"]
        assert g.prior and all(g.levels[c] >= g.prior[c] for c in g.prior)
        high = {cell: level + 1 for cell, level in g.prior.items()}  # a process that needed more
        g.levels.update(high)
        C._REMEMBERED_LEVELS.store()
        again_ev, again = process()
        assert again_ev._gauss["mp"][0].prior == g.prior and again == later
    finally:
        C._LEVEL_HINTS.clear()
