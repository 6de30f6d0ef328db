"""The glue between the ball-arithmetic integrands and the mpmath quadrature
(:mod:`replica.symbolic.codegen`): a ball's midpoint as an ``mpf`` (``_mid_mpf``), the integer
power of an argument that is not a ball (``_ball_ipow``), and the rule's sums on a half-line
tail (``_HalfLine.weighted_sums``, its arguments joined once per piece).

Checked against computations that share no code with the path under test: the midpoint's
exact rational value (``Fraction``) rounded to the nearest ``prec``-bit number by integer
arithmetic written here, and a tail integral's closed form
:math:`\\int_c^\\infty e^{-z^2/2}dz = \\sqrt{\\pi/2}\\,\\mathrm{erfc}(c/\\sqrt2)`."""

import os
import random
from fractions import Fraction

import mpmath
import pytest

flint = pytest.importorskip("flint")

from replica.symbolic import codegen as C  # noqa: E402
from replica.symbolic import quadrature as Q  # noqa: E402


def _nearest(x: Fraction, prec: int) -> Fraction:
    """``x`` rounded to the nearest number with a ``prec``-bit mantissa, ties to even (the
    rounding mpmath's default ``'n'`` does), by integer arithmetic."""
    if x == 0:
        return Fraction(0)
    sign = -1 if x < 0 else 1
    a = abs(x)
    e = a.numerator.bit_length() - a.denominator.bit_length()  # 2^e <= a < 2^(e+2)
    while Fraction(2) ** e > a:
        e -= 1
    while Fraction(2) ** (e + 1) <= a:
        e += 1
    scale = Fraction(2) ** (prec - 1 - e)  # a * scale in [2^(prec-1), 2^prec)
    q, r = divmod(a * scale, 1)
    q = int(q)
    if r > Fraction(1, 2) or (r == Fraction(1, 2) and q % 2):
        q += 1
    return sign * q / scale


def _balls():
    """Balls whose midpoints carry more bits than the precisions tried below (computed at
    600 bits), of both signs, tiny and huge, and exact ones (an integer, a dyadic, zero)."""
    rng = random.Random(20261207)
    out = [flint.arb(0), flint.arb(1), flint.arb(-3) / 8, flint.arb(2) ** 200]
    old = flint.ctx.prec
    try:
        flint.ctx.prec = 600
        for _ in range(60):
            v = flint.arb(rng.randint(1, 10 ** 40)) / rng.randint(3, 10 ** 30)
            v *= flint.arb(2) ** rng.randint(-300, 300)
            out.append(-v if rng.random() < 0.5 else v)
        out.append(flint.arb(1) / 3 + flint.arb("1e-200"))
    finally:
        flint.ctx.prec = old
    return out


@pytest.mark.parametrize("prec", [30, 53, 120, 140, 196, 400])
def test_a_balls_midpoint_is_rounded_once_to_the_working_precision(prec):
    """``_mid_mpf`` is the ball's midpoint rounded to the nearest ``prec``-bit number (mpmath's
    precision at the call), exactly: compared as rationals with the rounding written here."""
    for b in _balls():
        man, exp = b.mid().man_exp()
        exact = Fraction(int(man)) * Fraction(2) ** int(exp)
        with mpmath.workprec(prec):
            got = C._mid_mpf(b)
        assert type(got) is mpmath.mpf
        s, m, e, _ = got._mpf_
        value = Fraction(0) if not m else (-1) ** s * Fraction(m) * Fraction(2) ** e
        assert value == _nearest(exact, prec), (prec, b)


def test_integer_powers_of_arguments_that_are_not_balls():
    """The generated code's ``ball_ipow`` of an ``mpf`` or an integer (a constant of the code)
    is the exact power, as a ball (the fast path is taken for balls only)."""
    with mpmath.workprec(140):
        got = C._ball_ipow(mpmath.mpf(1.5), 3)
        assert type(got) is flint.arb and got == flint.arb(27) / 8 and got.rad() == 0
        got = C._ball_ipow(3, -2)
        assert type(got) is flint.arb and (got - flint.arb(1) / 9).contains(0)
        got = C._ball_ipow(mpmath.mpf(-0.5), 2)
        assert type(got) is flint.arb and got == flint.arb(1) / 4


def _gaussian_rule():
    def f(z, *args):  # the density's kernel, one member; ``args`` as the generated code gets
        assert len(args) == 3 and args[0] == 1 and args[2] == 7
        return [(-z * z / 2).exp()]

    return C._BallRule(f, [1], [mpmath.mpf(2), 7], None)


@pytest.mark.parametrize("c, sign", [(1, 1), (mpmath.mpf(-0.75), -1), (mpmath.mpf(0.5), 1)])
def test_half_line_sums_against_the_closed_form(c, sign):
    r""":math:`\int_c^{\pm\infty} e^{-z^2/2}dz` by ``_HalfLine.weighted_sums`` (the rule's
    arguments passed through: switches, then values) on
    eight pieces of :math:`[0, 1]`, 64 nodes each, against
    :math:`\sqrt{\pi/2}\,\mathrm{erfc}(\pm c/\sqrt2)` (an independent closed form), to 1e-30;
    the rounding bound the balls give is returned and tiny."""
    half = C._HalfLine(None, _gaussian_rule(), c, sign)
    with mpmath.workdps(40):
        xs, ws = Q.legendre_rule(64)
        total = 0
        for k in range(8):
            value, scale, rounding, coefficients = half.weighted_sums(
                mpmath.mpf(2 * k + 1) / 16, mpmath.mpf(1) / 16, xs, ws, Q.tail_weights(64))
            assert rounding[0] < mpmath.mpf(10) ** -35 and len(coefficients[0]) == 4
            total += value[0]
        exact = mpmath.sqrt(mpmath.pi / 2) * mpmath.erfc(sign * c / mpmath.sqrt(2))
        assert abs(total - exact) < mpmath.mpf(10) ** -30 * exact


def test_half_line_with_no_real_ball_for_its_end_falls_back_to_mpmath():
    """A cut ``c`` with no real ball (complex: a numeric identity check's point) gives ``None``
    (the quadrature then evaluates point by point in mpmath), as a node's value with no real
    ball does, instead of raising."""
    half = C._HalfLine(None, _gaussian_rule(), mpmath.mpc(1, 1), 1)
    with mpmath.workdps(30):
        xs, ws = Q.legendre_rule(8)
        assert half.weighted_sums(mpmath.mpf(1) / 2, mpmath.mpf(1) / 2, xs, ws) is None


def test_ball_rule_sums_pass_switches_then_values():
    r""":math:`\int_{-1}^{1} e^{-z^2/2}dz = \sqrt{2\pi}\,\mathrm{erf}(1/\sqrt2)` by
    ``_BallRule.weighted_sums`` (one piece, 64 nodes; the integrand checks that it gets the
    switches, then the values, after the node), to 1e-35."""
    with mpmath.workdps(40):
        xs, ws = Q.legendre_rule(64)
        value, _, rounding = _gaussian_rule().weighted_sums(mpmath.mpf(0), mpmath.mpf(1), xs, ws)
        exact = mpmath.sqrt(2 * mpmath.pi) * mpmath.erf(1 / mpmath.sqrt(2))
        assert abs(value[0] - exact) < mpmath.mpf(10) ** -35 and rounding[0] < 1e-36


# ---------------------------------------------------------------------------------------------
# The Gauss--Legendre rules kept in the code cache (codegen.GaussRuleFiles, quadrature.RULE_STORE)
# ---------------------------------------------------------------------------------------------
@pytest.fixture
def rule_files(tmp_path, monkeypatch):
    """A :class:`GaussRuleFiles` in an empty code cache, installed as the quadrature's store
    for the test (the store, the rules' in-process caches and the cache folder as they were
    afterwards)."""
    monkeypatch.setenv("REPLICA_LAMBDIFY_CACHE", str(tmp_path))
    C.CodeCache.folder.cache_clear()
    saved = list(Q.RULE_STORE)
    try:
        files = C.GaussRuleFiles()
        Q.RULE_STORE[:] = [files]
        Q._rule.cache_clear()
        Q._tail_rule.cache_clear()
        yield files
    finally:
        Q.RULE_STORE[:] = saved
        Q._rule.cache_clear()
        Q._tail_rule.cache_clear()
        C.CodeCache.folder.cache_clear()


def _computed(n, prec):
    """The rule and its coefficient vectors computed in this process (no store)."""
    saved = list(Q.RULE_STORE)
    try:
        Q.RULE_STORE.clear()
        Q._rule.cache_clear()
        Q._tail_rule.cache_clear()
        return Q.legendre_rule(n, prec), Q.tail_weights(n, prec)
    finally:
        Q.RULE_STORE[:] = saved
        Q._rule.cache_clear()
        Q._tail_rule.cache_clear()


def _exact(vectors):
    return [[(type(v), v._mpf_) for v in vector] for vector in vectors]


@pytest.mark.parametrize("n, prec", [(8, 96), (16, 140), (64, 196)])
def test_rules_read_back_from_the_code_cache_are_the_rules_computed(rule_files, n, prec):
    """A rule and its coefficient vectors stored by one process and read by the next (the
    in-process caches emptied between) are the computed ones value for value; and they are
    Gauss--Legendre rules: nodes zeros of :math:`P_n` (mpmath's ``legendre``), weights summing
    to 2 and integrating :math:`x^{2n-2}` exactly."""
    Q.legendre_rule(n, prec), Q.tail_weights(n, prec)  # computed and stored
    assert rule_files.load("rule", n, prec, 2) is not None
    assert rule_files.load("tails", n, prec, Q.TAILS) is not None
    Q._rule.cache_clear()
    Q._tail_rule.cache_clear()
    read, read_tails = Q.legendre_rule(n, prec), Q.tail_weights(n, prec)
    fresh, fresh_tails = _computed(n, prec)
    assert _exact(read) == _exact(fresh) and _exact(read_tails) == _exact(fresh_tails)
    xs, ws = read
    with mpmath.workprec(prec + 40):
        tol = mpmath.ldexp(1, 8 - prec)
        assert all(abs(mpmath.legendre(n, x)) < tol * n * n for x in xs)
        assert abs(mpmath.fsum(ws) - 2) < tol
        exact = mpmath.mpf(2) / (2 * n - 1)
        assert abs(mpmath.fdot(ws, [x ** (2 * n - 2) for x in xs]) - exact) < tol


def _rewrite(files, name, edit, reseal=True):
    path = files.cache.path(name, ".json")
    with open(path) as fh:
        text = fh.read()
    head, _, body = text.partition("\n")
    body = edit(body)
    with open(path, "w") as fh:
        fh.write(C._sealed(body) if reseal else head + "\n" + body)


def test_a_damaged_or_misplaced_rule_file_is_not_read(rule_files):
    """A stored rule is read only if it is the one asked for, intact: a digit changed (the seal
    no longer holds), another precision's file under this name (sealed again), values of more
    bits than the precision, a wrong count or length -- each is refused (``None``), and the
    quadrature then computes the rule, the same as without a store."""
    import json

    n, prec = 16, 140
    Q.legendre_rule(n, prec)
    name = rule_files._name("rule", n, prec)
    good = rule_files.load("rule", n, prec, 2)
    assert _exact(good) == _exact(_computed(n, prec)[0])

    def digit(body):  # one hexadecimal digit of the first node's mantissa changed
        doc = json.loads(body)
        man = doc["values"][0][0][1]
        doc["values"][0][0][1] = man[:-2] + ("1" if man[-2] != "1" else "3") + man[-1]
        return json.dumps(doc)

    _rewrite(rule_files, name, digit, reseal=False)
    assert rule_files.load("rule", n, prec, 2) is None
    Q._rule.cache_clear()
    assert _exact(Q.legendre_rule(n, prec)) == _exact(good)  # computed again (and stored)

    for bits in (96, 196):  # another precision's rule, sealed, under the 140-bit name
        Q.legendre_rule(n, bits)
        with open(rule_files.cache.path(rule_files._name("rule", n, bits), ".json")) as fh:
            body = C._unsealed(fh.read())
        _rewrite(rule_files, name, lambda _: body)
        assert rule_files.load("rule", n, prec, 2) is None
    # ... the 196-bit one named as the 140-bit rule: its values have more than 140 bits
    _rewrite(rule_files, name, lambda body: body.replace(f'"rule": ["rule", {n}, 196]',
                                                         f'"rule": ["rule", {n}, {prec}]'))
    assert rule_files.load("rule", n, prec, 2) is None
    # the right file, asked for as a rule of another length
    Q._rule.cache_clear()
    Q.legendre_rule(n, prec)
    assert rule_files.load("rule", n, prec, 2) is not None
    assert rule_files.load("rule", n, prec, 3) is None
    # ... and as the rule of twice as many nodes, named so and filed under that name
    _rewrite(rule_files, name, lambda body: body.replace(f'"rule": ["rule", {n}, {prec}]',
                                                         f'"rule": ["rule", {2 * n}, {prec}]'))
    os.replace(rule_files.cache.path(name, ".json"),
               rule_files.cache.path(rule_files._name("rule", 2 * n, prec), ".json"))
    assert rule_files.load("rule", 2 * n, prec, 2) is None
