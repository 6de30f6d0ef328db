"""The float64 paths without per-call overhead give the values of the general paths.

* a single point runs the bracketed Newton in Python floats: the same iterates as the vectorised
  one, bit for bit;
* a batch of points (one vectorised call) equals the same points solved one call each, and both
  equal the verified 30-digit solve to float64 accuracy;
* the NumPy namespace of the generated code is ``lambdify``'s, less the submodules it would import;
* a built-in SPEC is parsed once per ``(spec, d)``; a file is read again on every call.
"""

from __future__ import annotations

import numpy as np
import pytest
import sympy

import replica
from replica.numerics.roots import bracketed_newton_vec
from replica.spectra import parse_spec
from replica.symbolic import codegen


def _cubic(x):
    """A monotone function with a root near 1.3247 (the plastic number) and a far start."""
    return x**3 - x - 1, 3 * x**2 - 1


@pytest.mark.parametrize("x0, lo, hi", [(5.0, 1.0, np.inf), (1.0001, 1.0, 2.0),
                                        (40.0, 0.6, 50.0)])
def test_one_point_newton_has_the_iterates_of_the_vectorised_one(x0, lo, hi):
    one, it1 = bracketed_newton_vec(_cubic, lo, hi, np.array([x0]), increasing=True,
                                    rtol=4e-16)
    # two elements take the vectorised path; the first is the same point
    both, it2 = bracketed_newton_vec(_cubic, lo, hi, np.array([x0, 1.5]), increasing=True,
                                     rtol=4e-16)
    assert one.shape == (1,)
    assert one[0] == both[0]  # bit for bit
    # the real root, to the rounding of f near it (a few ulps)
    assert abs(one[0] - 1.3247179572447460260) <= 1e-15
    assert it1 <= it2


def test_one_point_newton_bisects_where_the_derivative_vanishes():
    # f' = 0 at the start: Newton's step is undefined, the bracket's midpoint is taken
    f = lambda x: (x**3 - 1, 3 * x**2)  # noqa: E731
    one, _ = bracketed_newton_vec(f, -1.0, 3.0, np.array([0.0]), increasing=True, rtol=4e-16)
    both, _ = bracketed_newton_vec(f, -1.0, 3.0, np.array([0.0, 2.0]), increasing=True,
                                   rtol=4e-16)
    assert one[0] == both[0] == 1.0


ALIGN = dict(d=40, train="piano", alpha=2.0, rho=0.01)
KAPPAS = np.array([0.1, 0.45, 1.3, 2.5])


@pytest.mark.parametrize("test, tau", [("piano", 4.0), ("spike:3", 0.5)])
def test_alignment_batch_equals_points_and_the_verified_solve(test, tau):
    batch = replica.solve_float64("alignment", test=test, tau=tau, kappa=KAPPAS, **ALIGN)
    for i, k in enumerate(KAPPAS):
        point = replica.solve_float64("alignment", test=test, tau=tau, kappa=float(k), **ALIGN)
        for name in ("e_icl", "e_idg", "M", "q"):
            assert point[name] == pytest.approx(batch[name][i], rel=1e-14, abs=0), name
    k = float(KAPPAS[1])
    exact = replica.solve("alignment", test=test, tau=repr(tau), kappa=repr(k), d=40,
                          train="piano", alpha=2, rho="1/100", dps=30, verify=False)
    assert float(exact["e_icl"]) == pytest.approx(batch["e_icl"][1], rel=1e-13)


def test_isotropic_batch_equals_points_and_the_verified_solve():
    alphas = np.array([0.3, 1.0, 4.0, 30.0])
    taus = np.array([0.5, 0.8, 1.7, 3.0])
    batch = replica.solve_float64("isotropic", alpha=alphas, tau=taus, kappa=0.5, rho=0.01)
    for a, t, e, g in zip(alphas, taus, batch["e_icl"], batch["e_idg"]):
        point = replica.solve_float64("isotropic", alpha=a, tau=t, kappa=0.5, rho=0.01)
        assert point["e_icl"] == e and point["e_idg"] == g  # same closed forms, elementwise
        exact = replica.solve("isotropic", alpha=repr(float(a)), tau=repr(float(t)),
                              kappa="1/2", rho="1/100", dps=30, verify=False)
        assert float(exact["e_icl"]) == pytest.approx(e, rel=1e-13)
        assert float(exact["e_idg"]) == pytest.approx(g, rel=1e-13)


def test_numpy_namespace_is_lambdifys_without_the_submodules():
    ours = codegen._numpy_namespace()
    theirs = dict(sympy.lambdify([], [], modules="numpy").__globals__)
    missing = {k for k in theirs if k not in ours and not k.startswith("__")}
    assert all(type(theirs[k]) is type(np) for k in missing), sorted(missing)
    # the additions: SciPy's error functions, for Gaussian integrals (erfcx: far in the tail of
    # erfc, replica.symbolic.gaussian.scaled_erfc), and the log-space functions of
    # replica.symbolic.gaussian (log_erfc, rerfcx, softplus, sigmoid), and SciPy's polygamma
    # (the digamma form of phase retrieval's channel term)
    added = set(ours) - set(theirs)
    assert added <= {"erf", "erfc", "erfcx", *codegen._LOG_SPACE_MP, *codegen._SPECIAL_NP}, \
        sorted(added)
    for k, v in ours.items():
        assert k in added or v is theirs[k] or v == theirs[k], k


def test_polygamma_in_every_backend():
    """SymPy's polygamma(n, x) as the generated code calls it: float64 (SciPy) to 1e-14
    relative, longdouble (float64 plus the first-order correction) to 1e-14, and a ball
    (digamma, Hurwitz zeta) whose midpoint is the 30-digit mpmath value to 1e-28 and whose
    radius is below 1e-25, for n = 0..3 and x from 0.3 to 1e6."""
    import mpmath
    from flint import arb, ctx

    f64 = codegen._numpy_namespace()["polygamma"]
    for n in range(4):
        for x in ("0.3", "1.7", "12.5", "1e6"):
            with mpmath.workdps(30):
                ref = mpmath.polygamma(n, mpmath.mpf(x))
            got = f64(n, np.array([float(x)]))[0]
            assert abs(got - float(ref)) <= 1e-14 * abs(float(ref)), (n, x, got, ref)
            ld = f64(n, np.array([float(x)], dtype=np.longdouble))[0]
            assert abs(float(ld) - float(ref)) <= 1e-14 * abs(float(ref)), (n, x, ld, ref)
            old = ctx.prec
            ctx.prec = 110
            try:
                ball = codegen._ball_polygamma(n, arb(x))
                with mpmath.workdps(30):
                    mid = mpmath.mpf(ball.mid().str(32, radius=False))
                    assert abs(mid - ref) <= mpmath.mpf("1e-28") * abs(ref), (n, x, ball)
                assert float(ball.rad()) < 1e-25 * abs(float(ref)), (n, x, ball)
            finally:
                ctx.prec = old


def test_builtin_specs_are_parsed_once_files_every_time(tmp_path):
    assert parse_spec("piano", 30) is parse_spec(" piano ", 30)
    assert parse_spec("piano", 30) is not parse_spec("piano", 31)
    path = tmp_path / "c.txt"
    path.write_text("1 2 3\n")
    first = parse_spec(f"file:{path}", 3)
    path.write_text("3 2 1\n")
    second = parse_spec(f"file:{path}", 3)
    assert first.diag_f64().tolist() != second.diag_f64().tolist()
