"""The mp quadrature's noise plateau (``replica.symbolic.quadrature._plateau``): top Legendre
coefficients that do not shrink from one level to the next are estimated by their floor, never
by a decay read off their random ratios, and a knee -- coefficients that appear only at the
larger rule -- is still refined, never credited.

Against closed forms written here: :math:`\\int_{-2}^{2} e^{-z^2/2}\\,dz = \\sqrt{2\\pi}(\\Phi(2) -
\\Phi(-2))`, and mpmath.quad at 80 digits with the bump's centre and flanks as points."""

import mpmath
import pytest

from replica.symbolic import quadrature as Q


def _noisy(bits):
    """e^{-z^2/2} evaluated as (e^{-z^2/2} + 2^bits) - 2^bits: rounding noise of about
    2^(bits - p) at every node (a cancellation inside the integrand that no ball radius
    reports), deterministic (the nodes are)."""
    K = mpmath.mpf(2) ** bits
    return lambda z: [(mpmath.exp(-z * z / 2) + K) - K]


@pytest.mark.parametrize("bits", [50, 60])
def test_a_noise_plateau_is_estimated_by_its_floor(bits):
    """(0.3 s) At 30 digits (the rule at 20 guard bits) the noise is 2^(bits - 120), 1e-21 to
    1e-18, far above the claim. The 4-piece rule must not accept it: main's estimate read the
    random ratios of the plateau as a decay and accepted with 2.1e-33 (bits 50: true error
    3.3e-23; mpest3's 1.1e-30 against 4.7e-23). Now: NotResolved at once, its ``floor`` set and
    at least the true error of the value as it stood; on a piece at 64 nodes (the second level
    of the plateau) the flag is set and the estimate bounds the piece's true error."""
    f = _noisy(bits)
    with mpmath.workdps(30):
        rtol = mpmath.mpf(10) ** -30 / 2
        with mpmath.workprec(mpmath.mp.prec + 20):
            with mpmath.workdps(60):
                exact = mpmath.sqrt(2 * mpmath.pi) * (mpmath.ncdf(2) - mpmath.ncdf(-2))
            pieces = [(mpmath.mpf(a), mpmath.mpf(a + 1), f, (a,)) for a in range(-2, 2)]
            with pytest.raises(Q.NotResolved) as info:
                Q.gauss_legendre_fused(pieces, rtol, {}, plateau_exit=True)
            exc = info.value
            assert exc.floor is not None and exc.floor > rtol
            value, _, size = exc.partial
            assert abs(value[0] - exact) <= exc.floor * size[0], (value[0] - exact, exc.floor)
            piece = Q._Piece(mpmath.mpf(0), mpmath.mpf(1), 0, 4, f)  # 32 nodes
            piece.raise_level()  # 64
            with mpmath.workdps(60):
                part = mpmath.sqrt(2 * mpmath.pi) * (mpmath.ncdf(1) - mpmath.ncdf(0))
            assert piece.plateau == [True]
            assert piece.est[0] >= abs(piece.value[0] - part)
            assert piece.est[0] >= 2 * max(abs(t) for t in piece.tails[0])


def test_no_plateau_without_the_level_below():
    """A piece's first rule (no level below) and a decay of more than the factor 4 per level
    are no plateau; a rounding-level tail is none either."""
    with mpmath.workdps(30):
        assert not Q._plateau([1e-20] * 4, None, 32, 1, 0)
        assert Q._plateau([1e-20] * 4, 3e-20, 32, 1, 0)
        assert not Q._plateau([1e-20] * 4, 5e-20, 32, 1, 0)
        assert not Q._plateau([mpmath.mpf(10) ** -40] * 4, 1e-40, 32, 1, 0)  # below 32 * 2^(4-p)


@pytest.mark.parametrize("A, w, c", [("1e-6", "0.02", "0.7"), ("1e-6", "0.01", "0.63"),
                                     ("1e-10", "0.03", "1.3")])
def test_a_knee_is_refined_not_credited(A, w, c):
    """(0.5-1 s) A narrow Gaussian bump of amplitude A, width w on the piece [0, 2] (no cut at
    it): its coefficients are hidden at 16 and 32 nodes and appear at 64 (a knee: they grow,
    or shrink by less than 4 per level), which the plateau test flags. Flagged, the estimate
    is the floor 2 max|c|, which bounds the rule's true error at each such level (credited as
    a decay, 2^8 E^2/s, it claimed 1.7e-11 of the scale at 64 nodes against an error of
    3e-10); with ``plateau_exit`` the rule reports the floor (the caller's answer is more bits
    and a full refinement), and the full refinement is accepted within the claim."""
    with mpmath.workdps(30):
        A_, w_, c_ = mpmath.mpf(A), mpmath.mpf(w), mpmath.mpf(c)

        def f(z):
            return [mpmath.npdf(z) * (1 + A_ * mpmath.exp(-((z - c_) / w_) ** 2))]
        rtol = mpmath.mpf(10) ** -30 / 2
        lo, hi = mpmath.mpf(0), mpmath.mpf(2)
        with mpmath.workprec(mpmath.mp.prec + 20):
            with mpmath.workdps(80):
                exact = mpmath.quad(lambda z: f(z)[0], [0, c_ - 5 * w_, c_, c_ + 5 * w_, 2])
            piece = Q._Piece(lo, hi, 0, 1, f)
            flagged = 0
            for level in range(2, 6):
                piece.raise_level()
                if piece.plateau[0]:
                    flagged += 1
                    assert piece.est[0] >= abs(piece.value[0] - exact), (level, piece.est[0])
            assert flagged
            with pytest.raises(Q.NotResolved) as info:
                Q.gauss_legendre_fused([(lo, hi, f, 0)], rtol, {}, plateau_exit=True)
            assert info.value.floor is not None
            value, error, size = Q.gauss_legendre_pieces([(lo, hi, lambda z: f(z)[0], 0)],
                                                         rtol, {})
            assert error <= rtol * size
            assert abs(value - exact) <= rtol * size, (value - exact) / size


def test_an_unresolved_piece_is_no_plateau():
    """(0.1 s) A piece whose coefficients are of the order of its scale and shrink slowly is
    not yet resolved, not on a noise plateau: e^{-2z^2} on [8, 10] at 8 and 16 nodes, top
    coefficients 2.6 and 0.23..1.07 of the scale (the pattern of the logistic point's tail
    pieces in its 52-digit re-solve, which, taken for a plateau, sent the whole fused group
    to 27 more bits: +17 % nodes). Its estimate stays E unsquared, it is refined, not
    reported by ``plateau_exit``, and the value is within the claim of the closed form
    sqrt(pi/8) (erfc(8 sqrt 2) - erfc(10 sqrt 2))."""
    with mpmath.workdps(30):
        assert not Q._plateau([0.9, 0.6, 0.4, 0.2], 2.6, 16, 1, 0)
        assert not Q._plateau([1e-2, 1e-2, 1e-2, 1e-2], 2e-2, 16, 1, 0)  # 2^8 E >= s
        assert Q._plateau([1e-3, 1e-3, 1e-1, 1e-3], 2e-3, 16, 1000, 0)

        def f(z):
            return [mpmath.exp(-2 * z * z)]
        rtol = mpmath.mpf(10) ** -30 / 2
        lo, hi = mpmath.mpf(8), mpmath.mpf(10)
        with mpmath.workprec(mpmath.mp.prec + 20):
            piece = Q._Piece(lo, hi, 0, 1, f)  # 8 nodes
            piece.raise_level()  # 16
            assert piece.plateau == [False]
            assert piece.est[0] > rtol * piece.scale[0]
            totals, errors, sizes = Q.gauss_legendre_fused([(lo, hi, f, 0)], rtol, {},
                                                           plateau_exit=True)
            with mpmath.workdps(60):
                r2 = mpmath.sqrt(2)
                exact = mpmath.sqrt(mpmath.pi / 8) * (mpmath.erfc(8 * r2) - mpmath.erfc(10 * r2))
            assert errors[0] <= rtol * sizes[0]
            assert abs(totals[0] - exact) <= rtol * sizes[0], (totals[0] - exact) / sizes[0]


# --- the recomputation's budget (codegen._gauss_mp_rule) --------------------------------------
def _point_wise(value):
    """A one-dimensional Gaussian integral with the integrand ``value(z)`` (times the density
    already), no kinks, no features, no ball version (the point-wise path), and a log of the
    working precisions it was evaluated at."""
    from replica.symbolic.codegen import _GaussFunctions

    precs = []

    def integrand(z):
        precs.append(mpmath.mp.prec)
        return value(z)
    return _GaussFunctions(integrand, lambda z: [], lambda: []), precs


def test_a_noise_plateau_is_answered_by_more_bits():
    """(0.5 s) The density e^{-z^2/2}/sqrt(2 pi) computed as (phi(z) + 2^50) - 2^50 at 30
    digits (noise ~1e-22 of the size, integral 1): the rule computes again at the bits the
    floor asks for, within the budget, and the value is within the claim of 1 (without the
    plateau rule this rule refuses it: None, the caller's tanh-sinh fallback then)."""
    from replica.symbolic import codegen

    K = mpmath.mpf(2) ** 50
    g, precs = _point_wise(lambda z: (mpmath.npdf(z) + K) - K)
    with mpmath.workdps(30):
        out = codegen._gauss_mp_rule([g], [[]], None, [], {})
        assert out is not None
        assert abs(out[0] - 1) <= mpmath.mpf(10) ** -30, out[0] - 1
        base = mpmath.mp.prec + 20
    assert max(precs) > base  # it was computed again at more bits
    assert max(precs) <= base + codegen._ROUNDING_MAX_BITS + 64  # (+ feature/guard bits)


def test_noise_that_more_bits_do_not_lower_is_refused_at_once(monkeypatch):
    """(1 s) The density computed in float64 inside (noise ~1e-17 of the size at any
    precision): the first recomputation finds the floor where it was, so the rule stops
    asking for bits (not rounding noise), refines at that precision and refuses (None; the
    caller's fallback then judges it) -- one recomputation, not a chain of them up to the
    budget. (The integrand-rounding probe of trust56, ``codegen._noise_bits``, is off here:
    the plateau rule alone; its evaluations at 64 more bits would enter the log.)"""
    from replica.symbolic import codegen

    monkeypatch.setattr(codegen, "_noise_bits", lambda *a: 0)
    g, precs = _point_wise(lambda z: mpmath.mpf(float(mpmath.npdf(z))))
    with mpmath.workdps(30):
        assert codegen._gauss_mp_rule([g], [[]], None, [], {}) is None
        base = mpmath.mp.prec + 20
    raised = sorted(set(p for p in precs if p > base))
    assert len(raised) == 1, raised  # the one recomputation


def test_a_noise_plateau_beyond_the_budget_is_not_recomputed(monkeypatch):
    """(1 s) The same noise at a chain's budget spent (``spent`` = _ROUNDING_MAX_BITS - 8):
    no bits are added (the rule is refined at its precision and refused), where the rule
    would otherwise add ~60. (The probe of trust56 off, as above: it refuses this one at
    once, tests/test_trust56.py.)"""
    from replica.symbolic import codegen

    monkeypatch.setattr(codegen, "_noise_bits", lambda *a: 0)
    K = mpmath.mpf(2) ** 50
    g, precs = _point_wise(lambda z: (mpmath.npdf(z) + K) - K)
    with mpmath.workdps(30):
        out = codegen._gauss_mp_rule([g], [[]], None, [], {},
                                     spent=codegen._ROUNDING_MAX_BITS - 8)
        base = mpmath.mp.prec + 20
    assert out is None
    assert max(precs) <= base


# --- the two-dimensional inner rule's share (noisy2d, session 56) -----------------------------
@pytest.mark.parametrize("bits", [50, 60])
def test_a_bisected_plateau_keeps_its_floor(bits):
    """(0.5-1 s) The same noise through ``gauss_legendre_pieces`` (no ``plateau_exit``: the
    outer rule of a two-dimensional integral): the plateau pieces [-1, 0], [0, 1] are bisected
    at 128 nodes and their halves restart at 8, where the noise hides under coefficients still
    falling; main accepted them, claiming 8.8e-34 of the size against a true error 1.4e-23
    (bits 60: 1.3e-33 against 1.0e-20). Now each half carries half its parent's floor: the
    rule is not resolved (NotResolved after its refinements), its partial error at least the
    true one; a half of a flagged piece is flagged at its first rule, its estimate at least
    half the parent's floor and its true error."""
    K = mpmath.mpf(2) ** bits

    def f(z):
        return (mpmath.exp(-z * z / 2) + K) - K
    with mpmath.workdps(30):
        rtol = mpmath.mpf(10) ** -30 / 2
        with mpmath.workprec(mpmath.mp.prec + 20):
            with mpmath.workdps(60):
                exact = mpmath.sqrt(2 * mpmath.pi) * (mpmath.ncdf(2) - mpmath.ncdf(-2))
                half = mpmath.sqrt(2 * mpmath.pi) * (mpmath.ncdf(0.5) - mpmath.ncdf(0))
            pieces = [(mpmath.mpf(a), mpmath.mpf(a + 1), f, (a,)) for a in range(-2, 2)]
            with pytest.raises(Q.NotResolved) as info:
                Q.gauss_legendre_pieces(pieces, rtol, {})
            value, error, size = info.value.partial
            assert error > rtol * size
            assert abs(value - exact) <= error, (value - exact, error)
            piece = Q._Piece(mpmath.mpf(0), mpmath.mpf(1), 0, 4, lambda z: [f(z)])
            piece.raise_level()  # 64 nodes: on the plateau
            assert piece.plateau == [True]
            left = piece.halves()[0]  # [0, 1/2] at 8 nodes
            assert left.level == 1 and left.plateau == [True]
            assert left.est[0] >= piece.noise[0] / 2
            assert left.est[0] >= abs(left.value[0] - half)


def test_an_inner_integrals_noise_plateau_is_answered_by_more_bits():
    """(1 s) ``partial`` (the inner integral of a two-dimensional one, ``_gauss_mp_error``)
    with the noisy density (phi + 2^50) - 2^50 at 30 digits: recomputed at the bits the floor
    asks for, within the budget, the value within 1e-30 of 1 and its error within the
    tolerance. (Main: no plateau exit for an inner integral; its 64 refinements spent, 2,896
    evaluations, the value 6e-23 off, its error 2.4e-22.)"""
    from replica.symbolic import codegen

    K = mpmath.mpf(2) ** 50
    g, precs = _point_wise(lambda z: (mpmath.npdf(z) + K) - K)
    with mpmath.workdps(30):
        values, errors = codegen._gauss_mp_rule([g], [[]], None, [], {}, partial=True)
        assert abs(values[0] - 1) <= mpmath.mpf(10) ** -30, values[0] - 1
        assert errors[0] <= mpmath.mpf(10) ** -30
        base = mpmath.mp.prec + 20
    assert base < max(precs) <= base + codegen._ROUNDING_MAX_BITS + 64
    assert len(precs) < 2000, len(precs)


def test_an_inner_integrals_noise_beyond_the_budget_goes_back_with_its_floor():
    """(0.5 s) The same at a chain's budget spent (``spent`` = _ROUNDING_MAX_BITS - 8): no
    bits added; the rule stops at the plateau exit (no refinement lowers the floor) and returns
    the value with an error above the tolerance that bounds its true error, for the outer
    rule to judge -- after 688 evaluations, not the 64 refinements (main: 2,896)."""
    from replica.symbolic import codegen

    K = mpmath.mpf(2) ** 50
    g, precs = _point_wise(lambda z: (mpmath.npdf(z) + K) - K)
    with mpmath.workdps(30):
        values, errors = codegen._gauss_mp_rule([g], [[]], None, [], {}, partial=True,
                                                spent=codegen._ROUNDING_MAX_BITS - 8)
        assert errors[0] > mpmath.mpf(10) ** -30
        assert abs(values[0] - 1) <= errors[0], (values[0] - 1, errors[0])
        base = mpmath.mp.prec + 20
    assert max(precs) <= base
    assert len(precs) < 1000, len(precs)


def test_settle_lowers_a_remembered_level_that_is_more_than_needed():
    """(0.3 s) ``settle`` (the inner integrals of a two-dimensional one): e^{-z^2/2} on
    [0, 2] at 30 digits, remembered at 128 nodes (the level a harder argument needed): without
    it every evaluation starts and stays there; with it the remembered level falls one per
    evaluation while the top coefficients say the level below suffices, to within one level of
    what the full ladder from 8 nodes accepts, each value within the claim of the closed form
    sqrt(2 pi) (Phi(2) - 1/2)."""
    def f(z):
        return [mpmath.exp(-z * z / 2)]
    with mpmath.workdps(30):
        rtol = mpmath.mpf(10) ** -30 / 2
        with mpmath.workprec(mpmath.mp.prec + 20):
            with mpmath.workdps(60):
                exact = mpmath.sqrt(2 * mpmath.pi) * (mpmath.ncdf(2) - mpmath.ncdf(0))
            pieces = [(mpmath.mpf(0), mpmath.mpf(2), f, ("c",))]
            ladder: dict = {}
            Q.gauss_legendre_fused(pieces, rtol, ladder)  # from 8 nodes up
            needed = ladder[("c",)]
            assert needed < Q.MAX_LEVEL
            kept = {("c",): Q.MAX_LEVEL}
            Q.gauss_legendre_fused(pieces, rtol, kept)
            assert kept[("c",)] == Q.MAX_LEVEL  # (the ratchet: never lowered)
            memory = {("c",): Q.MAX_LEVEL}
            seen = []
            for _ in range(Q.MAX_LEVEL):
                values, errors, sizes = Q.gauss_legendre_fused(pieces, rtol, memory, settle=True)
                assert abs(values[0] - exact) <= rtol * sizes[0], values[0] - exact
                seen.append(memory[("c",)])
            assert seen[0] == Q.MAX_LEVEL - 1
            assert needed - 1 <= seen[-1] <= needed, (seen, needed)
