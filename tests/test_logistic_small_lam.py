"""Ridge logistic regression where the data are (nearly) separable: small ridge and label noise
independent of the teacher.

1. ``--alpha 3 --lam 1/10000 --eta 9/10`` exited 3 saying that the iteration "runs to the
   boundary of q > eta^2 m^2" at a margin of 671: the damped start iteration moves away from
   the fixed point (its change grows at the floor damping: the damped map is unstable there),
   no run to the boundary. It then exited 3 saying that the iteration diverges: the float64
   start's Gaussian integrands held e^{2p}, which overflows where the proximal map passes
   p = 354, and its iteration got NaN. With their logistic forms (codegen._logistic_safe,
   issue 26) the float64 start converges and the solve from the declared start exits 0.
   Newton from its last iterate (or from ``--start``) converges; the reported training error then
   failed its quadrature: SymPy writes the label probability erfc(-z)/2 as 1 - erfc(z)/2, which
   cancels every digit where it is tiny, and the training error's integrand lives there (fixed:
   the model declares that factor as erfc of a positive argument). Checked here against a hand-written free energy
   (bisection for the proximal map, mpmath quadrature, central differences) and a hand-written
   training error.
2. The float64 path at ``alpha = 1/2, lam = 1/100, eta = 0`` ran for minutes: the fixed point has
   m = 0 exactly (labels independent of the teacher: mhat = 0), and the iteration, which required
   every unknown > 0, rejected every Newton step that reached it while the damped steps shrank m
   by a constant factor (relative change 1 forever) for 20000 sweeps. Checked against the
   hand-written stationarity conditions of the (q, V) system at m = 0.
3. The route to the small-lam point from lam = 1/10: ``--follow lam:1/10000:6:log`` (geometric
   steps, the predictor in the logarithms; the linear ``--follow lam:1/10000:10`` found nothing
   in 580 s), checked against the hand-written fixed point of tests/test_logistic.py.
"""

import time
from pathlib import Path

import mpmath
import numpy as np
import pytest
from logistic_prox import prox_bisection

ROOT = Path(__file__).resolve().parents[1]
LOGISTIC = str(ROOT / "examples" / "logistic_regression.py")


def _psi(m, q, V, eta, bits=70):
    r""":math:`2\int\mathcal D\xi\,\Phi(\eta m\xi/\sqrt{q - \eta^2m^2})\,\mathcal M_V(1,
    \sqrt q\,\xi)`, :math:`\mathcal M_V(1, \omega) = \min_p[(p - \omega)^2/(2V) + \log(1 +
    e^{-p})]` (the model's docstring), the minimiser by bisection, the integral by mpmath."""
    s = mpmath.sqrt(q - eta**2 * m**2)

    def f(x):
        w = mpmath.sqrt(q) * x
        p = prox_bisection(w, V, bits)
        env = (p - w) ** 2 / (2 * V) + mpmath.log1p(mpmath.exp(-p))
        return mpmath.ncdf(eta * m * x / s) * env * mpmath.npdf(x)

    return 2 * mpmath.quad(f, [-mpmath.inf, -4, -1, 0, 1, 4, mpmath.inf])


def _stationarity_defects(v, alpha, lam, eta):
    r"""Relative defects of the six stationarity conditions of :math:`\Phi = -m\hat m +
    q\hat V/2 - V\hat q/2 + (\hat m^2 + \hat q)/(2(\lambda + \hat V)) - \alpha\Psi(m, q, V)`:
    three in closed form, three by central differences of :math:`\Psi` (``_psi``)."""
    m, q, V, mh, qh, Vh = (v[k] for k in ("m", "q", "V", "mhat", "qhat", "Vhat"))
    out = {"m": abs(m - mh / (lam + Vh)) / max(abs(m), 1e-300) if m else abs(mh),
           "V": abs(V - 1 / (lam + Vh)) / V,
           "q": abs(q - (mh**2 + qh) / (lam + Vh) ** 2) / q}
    h = mpmath.mpf(10) ** -6
    d_q = (_psi(m, q + h, V, eta) - _psi(m, q - h, V, eta)) / (2 * h)
    d_V = (_psi(m, q, V + h, eta) - _psi(m, q, V - h, eta)) / (2 * h)
    out["Vhat"] = abs(Vh - 2 * alpha * d_q) / abs(Vh)
    out["qhat"] = abs(qh + 2 * alpha * d_V) / abs(qh)
    if eta and m:
        d_m = (_psi(m + h, q, V, eta) - _psi(m - h, q, V, eta)) / (2 * h)
        out["mhat"] = abs(mh + alpha * d_m) / abs(mh)
    return out


def _train_error(m, q, V, eta):
    r"""The fraction of misclassified training points written from the docstring:
    :math:`2\int_{-\infty}^{\xi_0}\mathcal D\xi\,\Phi(\eta m\xi/\sqrt{q - \eta^2m^2})`,
    :math:`\xi_0 = -V/(2\sqrt q)`, with :math:`\xi = \xi_0 - t` and the integrand divided by its
    value at :math:`t = 0` (mpmath's quadrature stops on an absolute error: this integral is
    near 1e-75)."""
    s = mpmath.sqrt(q - eta**2 * m**2)
    x0 = -V / (2 * mpmath.sqrt(q))

    def g(t):
        x = x0 - t
        return mpmath.ncdf(eta * m * x / s) * mpmath.npdf(x)

    scale = g(0)
    return 2 * scale * mpmath.quad(lambda t: g(t) / scale, [0, mpmath.mpf(1) / 10, 1, 5,
                                                             mpmath.inf])


@pytest.mark.slow
def test_small_lam_separable_point_from_a_start_is_stationary():
    """``replica solve --start m=21,q=700,V=680`` at alpha = 3, lam = 1e-4, eta = 9/10
    converges (it ended in a failed quadrature of the training error: Newton had converged), and
    its values make the hand-written free energy stationary (1e-7 relative) and give the
    hand-written training error (1e-20 relative). At these parameters the data are separable
    (the training error, 6e-75, vanishes as lam -> 0) and V grows like 1/lam: V = 72.8 at
    lam = 1e-3, 677.6 here. (From the declared start the solve converges too since issue 26:
    see the module docstring.)"""
    import json
    import subprocess
    import sys

    alpha, lam = 3, mpmath.mpf(1) / 10000
    proc = subprocess.run([sys.executable, "-m", "replica", "solve", "--model", LOGISTIC,
                           "--alpha", "3", "--lam", "1/10000", "--eta", "9/10", "--json",
                           "--start", "m=21,q=700,V=680"],
                          capture_output=True, text=True, cwd=ROOT, timeout=1200)
    assert proc.returncode == 0, proc.stderr
    (out,) = json.loads(proc.stdout)["solutions"]  # (with --start: a list of solutions)
    assert out["status"] == "converged", out["status"]
    flat = {}
    for group in out.values():
        if isinstance(group, dict):
            flat.update({k: x for k, x in group.items() if isinstance(x, str)})
    with mpmath.workdps(40):  # (the values' 30 digits, not mpmath's default 15)
        v = {k: mpmath.mpf(flat[k]) for k in ("m", "q", "V", "mhat", "qhat", "Vhat")}
        eta = mpmath.mpf(9) / 10
    assert v["V"] > 500  # (the separable regime: V ~ 1/lam)
    with mpmath.workdps(20):
        defects = _stationarity_defects(v, alpha, lam, eta)
    assert max(defects.values()) <= 1e-7, defects
    with mpmath.workdps(40):
        want = _train_error(v["m"], v["q"], v["V"], eta)
        got = mpmath.mpf(flat["train_error"])
        assert 0 < want < mpmath.mpf(10) ** -70
        assert abs(got - want) <= mpmath.mpf(10) ** -20 * want, (got, want)


@pytest.mark.slow
def test_small_lam_from_the_declared_start_converges():
    """From the declared start (m, q, V = 1/2, 1, 1) at alpha = 3, lam = 1e-4, eta = 9/10 the
    solve exits 0, converged at 30 digits, at the fixed point of the hand-written
    replica-symmetric equations (tests/test_logistic.py ``rs_fixed_point``) to 1e-14 relative.
    It exited 3 ("the damped iteration diverges"): its float64 start iterated on NaN where the
    integrands' e^{2p} overflowed (issue 26)."""
    import json
    import subprocess
    import sys

    from test_logistic import rs_fixed_point

    proc = subprocess.run([sys.executable, "-m", "replica", "solve", "--model", LOGISTIC,
                           "--alpha", "3", "--lam", "1/10000", "--eta", "9/10", "--json"],
                          capture_output=True, text=True, cwd=ROOT, timeout=1200)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["status"] == "converged" and out["digits"] == 30, (out["status"], out["digits"])
    ref = rs_fixed_point(3, "0.0001", "0.9", start=(21, 700, 680), dps=16)
    with mpmath.workdps(40):
        for key, want in zip(("m", "q", "V"), ref):
            got = mpmath.mpf(out["order_parameters"][key])
            assert abs(got - want) <= mpmath.mpf(10) ** -14 * want, (key, got, want)


def test_training_error_integrand_keeps_its_digits_in_the_tail():
    """The training error's declared integrand, evaluated as written (SymPy's lambdify to
    mpmath) at 30 digits on the side of its step function at the solution of lam = 1e-4 (m =
    20.87, q = 702.7, V = 677.6), agrees with the same evaluation at 80 digits to 25 digits:
    the label factor there is about 1e-37, and SymPy's rewrite of erfc(-z)/2 as
    1 - erfc(z)/2 (the declaration before) lost 35 digits."""
    import runpy

    import sympy

    ns = runpy.run_path(LOGISTIC)
    (integral,) = [a for a in sympy.preorder_traversal(ns["TRAIN_ERROR"])
                   if type(a).__name__ == "GaussianIntegral"]
    integrand, y = integral.args[0], ns["y_"]
    (step,) = integrand.atoms(sympy.Heaviside)
    names = [ns[k] for k in ("m", "q", "V", "eta")] + [y]
    f = sympy.lambdify(names, integrand.xreplace({step: 1}), modules="mpmath")
    side = sympy.lambdify([y], step.args[0], modules="mpmath")
    point = ("20.865788403157", "702.70953251947", "677.60878700281", "0.9")
    checked = 0
    for t in ("-3", "-1", "-0.25", "0.25", "1", "3"):
        if side(mpmath.mpf(t)) <= 0:
            continue
        with mpmath.workdps(80):
            want = f(*[mpmath.mpf(a) for a in point], mpmath.mpf(t))
        with mpmath.workdps(30):
            got = f(*[mpmath.mpf(a) for a in point], mpmath.mpf(t))
        assert 0 < want < 1e-30
        assert abs(got - want) <= mpmath.mpf(10) ** -25 * want, (t, got, want)
        checked += 1
    assert checked == 3


@pytest.mark.slow
def test_float64_point_with_teacher_independent_labels_converges_fast():
    """``replica.solve_float64`` at alpha = 1/2, lam = 1/100, eta = 0 (it ran > 240 s): status
    ``converged`` with m = mhat = 0 exactly (eta = 0: the labels carry no information about the
    teacher), q and V stationary for the hand-written free energy (1e-6 relative, central
    differences), within a CPU bound of 60 s (a bound for a hang, not a timing)."""
    import replica

    before = time.process_time()
    out = replica.solve_float64(LOGISTIC, alpha=np.array([0.5]), lam=np.array([0.01]),
                                eta=np.array([0.0]), strict=False)
    cpu = time.process_time() - before
    assert list(out["status"]) == ["converged"], out["status"]
    assert out["m"][0] == 0.0 and out["mhat"][0] == 0.0
    assert out["generalisation"][0] == 0.5
    v = {k: mpmath.mpf(float(out[k][0])) for k in ("m", "q", "V", "mhat", "qhat", "Vhat")}
    with mpmath.workdps(20):
        defects = _stationarity_defects(v, mpmath.mpf(1) / 2, mpmath.mpf(1) / 100, 0)
    assert max(defects.values()) <= 1e-6, defects
    assert cpu < 60, cpu


def _geometric(lo, hi, n, digits=6):
    """The points lo (hi/lo)^(i/n) written as decimals of ``digits`` significant digits (the
    ends as given), then as exact fractions: the path ``--follow NAME:TO:N:log`` documents."""
    import decimal
    from fractions import Fraction

    out = []
    with mpmath.workdps(40):
        for i in range(n + 1):
            if i in (0, n):
                x = Fraction(lo if i == 0 else hi)
            else:
                r = Fraction(hi) / Fraction(lo)
                v = mpmath.mpf(lo.numerator) / lo.denominator * (
                    (mpmath.mpf(r.numerator) / r.denominator) ** (mpmath.mpf(i) / n))
                x = Fraction(decimal.Decimal(mpmath.nstr(v, 30)).normalize(
                    decimal.Context(prec=digits)))
            out.append(str(x))
    return out


@pytest.mark.slow
def test_small_lam_reached_by_a_geometric_follow_from_lam_one_tenth():
    """``--lam 1/10 --start m=1.9,q=5,V=2.7 --follow lam:1/10000:6:log`` (two steps a decade,
    the predictor in log lam and log of the unknowns; each verified solve started from the
    float64 solution reached from the prediction where that converges) exits 0 with every point
    converged at 30 digits, at the geometric values 10^(-1 - i/2) rounded to 6 significant
    digits; its last point is the fixed point of the hand-written replica-symmetric equations
    (tests/test_logistic.py ``rs_fixed_point``: bisection-free mpmath root of the proximal map,
    mpmath quadrature, mpmath's multidimensional root finder from (21, 700, 680), 16 digits) to
    1e-14 relative. (The linear --follow lam:1/10000:10 found nothing in 580 s; from the
    declared start the solve now converges too: see the test above.)"""
    import json
    import subprocess
    import sys
    from fractions import Fraction

    from test_logistic import rs_fixed_point

    proc = subprocess.run([sys.executable, "-m", "replica", "solve", "--model", LOGISTIC,
                           "--alpha", "3", "--lam", "1/10", "--eta", "9/10", "--json",
                           "--start", "m=1.9,q=5,V=2.7", "--follow", "lam:1/10000:6:log"],
                          capture_output=True, text=True, cwd=ROOT, timeout=1200)
    assert proc.returncode == 0, proc.stderr
    points = json.loads(proc.stdout)["points"]
    assert [p["lam"] for p in points] == _geometric(Fraction(1, 10), Fraction(1, 10000), 6)
    assert all(p["status"] == "converged" and p["digits"] == 30 for p in points), points
    last = points[-1]["order_parameters"]
    ref = rs_fixed_point(3, "0.0001", "0.9", start=(21, 700, 680), dps=16)
    with mpmath.workdps(40):
        for key, want in zip(("m", "q", "V"), ref):
            got = mpmath.mpf(last[key])
            assert abs(got - want) <= mpmath.mpf(10) ** -14 * want, (key, got, want)
        assert mpmath.mpf(last["V"]) > 500  # the separable regime: V ~ 1/lam


@pytest.mark.parametrize("follow, says", [
    ("lam:1/10000:6:geo", "the spacing after N must be 'log', got 'geo'"),
    ("lam:0:6:log", "log steps need the given --lam and TO nonzero and of one sign"),
    ("lam:1/10000:6:log:x", "expected NAME:TO[:N[:log]]"),
    ("lam:1/10000:40000000:log", "at most 1000 steps"),
    ("lam:1/10000:40000000", "at most 1000 steps")])
def test_follow_log_bad_input_is_one_line_exit_2(follow, says):
    """A bad spacing or a geometric path through 0: exit 2, one line naming --follow, before any
    solve."""
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-m", "replica", "solve", "--model", LOGISTIC,
                           "--alpha", "3", "--lam", "1/10", "--eta", "9/10",
                           "--start", "m=1.9,q=5,V=2.7", "--follow", follow],
                          capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert proc.returncode == 2, proc.stderr
    (line,) = proc.stderr.strip().splitlines()
    assert "--follow" in line and says in line, line


def test_log_point_is_the_rounded_geometric_point():
    """``log_point`` against the decimal rounding written here (``_geometric``): exact powers
    stay exact (1/100 a third of the way in log from 1/10 to 1/10000), the others
    are 6 significant digits, in order strictly between the ends."""
    from fractions import Fraction

    from replica.analysis.first_order import log_point

    for lo, hi, n in ((Fraction(1, 10), Fraction(1, 10000), 3),
                      (Fraction(1, 10), Fraction(1, 10000), 10), (Fraction(2), Fraction(7), 5),
                      (Fraction(-3), Fraction(-1, 1000), 4)):
        got = [log_point(lo, hi, Fraction(i, n)) for i in range(n + 1)]
        assert [str(x) for x in got] == _geometric(lo, hi, n), (lo, hi, n, got)
        inner = got[1:-1]
        assert all(min(lo, hi) < x < max(lo, hi) for x in inner)
        assert inner == sorted(inner, reverse=hi < lo)
