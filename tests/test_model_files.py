"""Models declared in a file: the ridge-regression example against independent closed forms and
simulations, the ``--model`` command line, ``replica equations``, and clear errors for bad files."""

import json
import os
import textwrap

import mpmath
import numpy as np
import pytest
import sympy

from replica.cli import main
from replica.modeling import ModelError, load_model_file
from replica.numerics.driver import solve

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RIDGE = os.path.join(REPO, "examples", "ridge_regression.py")


@pytest.fixture(scope="module")
def ridge():
    return load_model_file(RIDGE)


def marchenko_pastur_ridge(alpha, lam, sigma):
    r"""Test and training error of ridge regression with C = I from random-matrix theory alone.

    With :math:`A = X^\top X/d` (:math:`n = \alpha d`), :math:`G(z) = \lim\frac1d\mathrm{tr}(A -
    z)^{-1} = \frac1\alpha s(z/\alpha)`, :math:`s` the Marchenko--Pastur transform of ratio
    :math:`\gamma = 1/\alpha`. :math:`\hat w = (A + \lambda)^{-1}X^\top y/\sqrt d`, so
    :math:`w - \hat w = \lambda(A+\lambda)^{-1}w - \sigma(A+\lambda)^{-1}X^\top\varepsilon/\sqrt d`
    and :math:`E_{\rm test} = \sigma^2 + \lambda^2 G' + \sigma^2(G - \lambda G')` at
    :math:`z = -\lambda`; the training residual is :math:`\lambda(K + \lambda)^{-1}y` with
    :math:`K = XX^\top/d`, whose spectrum is :math:`A`'s plus :math:`n - d` zeros, so
    :math:`E_{\rm train} = \lambda^2(G - \lambda G' + \sigma^2 G')/\alpha + (1 - 1/\alpha)\sigma^2`.
    At :math:`\lambda = 0` (:math:`\alpha > 1`): the limits :math:`\sigma^2\alpha/(\alpha-1)` and
    :math:`\sigma^2(1 - 1/\alpha)`."""
    alpha, lam, sigma = (mpmath.mpf(sympy.Rational(v).p) / sympy.Rational(v).q
                         for v in (alpha, lam, sigma))
    if lam == 0:
        return sigma**2 * alpha / (alpha - 1), sigma**2 * (1 - 1 / alpha)
    g = 1 / alpha

    def s(z):
        return ((1 - g - z) - mpmath.sqrt((1 - g - z) ** 2 - 4 * g * z)) / (2 * g * z)

    def G(z):
        return s(z / alpha) / alpha

    G0, G1 = G(-lam), mpmath.diff(G, -lam)
    s2 = sigma**2
    test = s2 + lam**2 * G1 + s2 * (G0 - lam * G1)
    train = lam**2 * (G0 - lam * G1 + s2 * G1) / alpha + (1 - 1 / alpha) * s2
    return test, train


@pytest.mark.parametrize("alpha,lam,sigma", [("2", "1/10", "1/2"), ("1/2", "1/3", "1/5"),
                                             ("3", "0", "1/2"), ("5/4", "1/100", "0"),
                                             ("10", "2", "1")])
def test_ridge_equals_marchenko_pastur_to_30_digits(ridge, alpha, lam, sigma):
    r = solve(ridge, dps=40, alpha=alpha, lam=lam, sigma=sigma)
    assert r.converged and r.digits >= 35
    with mpmath.workdps(50):
        test, train = marchenko_pastur_ridge(alpha, lam, sigma)
        for key, ref in (("test", test), ("train", train)):
            got = r.all_values[key]
            assert abs(got - ref) <= mpmath.mpf(10) ** -32 * abs(ref), (key, got, ref)


def _simulate_ridge(alpha, lam, sigma, variances, seeds, rng):
    """Test and training errors of ridge regression on sampled data (C diagonal)."""
    d = len(variances)
    n = int(alpha * d)
    root = np.sqrt(variances)
    test, train = [], []
    for _ in range(seeds):
        w = rng.standard_normal(d)
        X = rng.standard_normal((n, d)) * root
        y = X @ w / np.sqrt(d) + sigma * rng.standard_normal(n)
        wh = np.linalg.solve(X.T @ X / d + lam * np.eye(d), X.T @ y / np.sqrt(d))
        e = w - wh
        test.append(sigma**2 + e @ (variances * e) / d)
        train.append(np.mean((y - X @ wh / np.sqrt(d)) ** 2))
    return [(np.mean(v), np.std(v, ddof=1) / np.sqrt(seeds)) for v in (test, train)]


@pytest.mark.slow
def test_ridge_anisotropic_covariance_agrees_with_simulation(ridge):
    """The theory over the d eigenvalues of a power-law covariance against 150 sampled data sets
    per d: within 4 standard errors (and the theory changes with d by more than that)."""
    from replica.spectra import parse_spec

    rng = np.random.default_rng(1)
    theory = {}
    for d in (80, 160):
        r = solve(ridge, dps=20, alpha="2", lam="1/10", sigma="1/2", covariance="powerlaw:1",
                  d=d)
        theory[d] = (float(r.all_values["test"]), float(r.all_values["train"]))
        variances = np.asarray(parse_spec("powerlaw:1", d).diag_f64(), float)
        sims = _simulate_ridge(2, 0.1, 0.5, variances, 150, rng)
        for (mean, se), th, what in zip(sims, theory[d], ("test", "train")):
            assert abs(mean - th) < 4 * se, (d, what, mean, th, se)
    # the anisotropic theory is not the isotropic one
    iso = solve(ridge, dps=20, alpha="2", lam="1/10", sigma="1/2")
    assert abs(float(iso.all_values["test"]) - theory[160][0]) > 0.005


def test_cli_solve_model_file_acceptance(capsys):
    rc = main(["solve", "--model", RIDGE, "--alpha", "2", "--lam", "1/10", "--sigma", "1/2",
               "--dps", "40", "--json"])
    out = capsys.readouterr().out
    assert rc == 0
    data = json.loads(out)
    assert data["model"] == "ridge_regression" and data["converged"] is True
    digits = data["digits"]
    assert digits == 40
    with mpmath.workdps(50):
        test, train = marchenko_pastur_ridge("2", "1/10", "1/2")
        for key, ref in (("test", test), ("train", train)):
            got = mpmath.mpf(data["errors"][key])
            assert abs(got - ref) <= mpmath.mpf(10) ** (1 - digits) * abs(ref)


def test_cli_model_help_lists_declared_parameters(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["solve", "--model", RIDGE, "--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    assert "--lam LAM" in out and "ridge penalty" in out and "--covariance" in out
    assert "replica solve --model" in out


def test_equations_lowrank_latex_has_the_ten_saddle_point_equations(capsys):
    assert main(["equations", "lowrank", "--latex"]) == 0
    out = capsys.readouterr().out
    fixed = out.split("% Fixed-point form")[1].split("\\begin{align*}")[1]
    fixed = fixed.split("\\end{align*}")[0]
    rows = [r for r in fixed.split("\\\\") if "&=" in r]
    assert len(rows) == 10
    assert rows[0].strip().startswith(r"\hat{q} &=")


def test_equations_model_file_text_and_json_rebuild(capsys):
    from replica.symbolic import SpectralAverage

    assert main(["equations", "--model", RIDGE]) == 0
    text = capsys.readouterr().out
    assert "mhat = alpha/(V + 1)" in text and "Stationarity conditions" in text
    assert main(["equations", "--model", RIDGE, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    block = next(b for b in data["blocks"] if b["key"] == "fixed_point")
    assert len(block["equations"]) == 6
    namespace = dict(vars(sympy))
    namespace["SpectralAverage"] = SpectralAverage
    model = load_model_file(RIDGE).model
    for eq in block["equations"]:
        lhs = eval(eq["lhs"]["srepr"], namespace)
        rhs = eval(eq["rhs"]["srepr"], namespace)
        assert sympy.simplify(rhs - model.fixed_point_equations[lhs]) == 0


# ---------------------------------------------------------------------------------------------
# Bad model files: exit 2, one line naming the problem
# ---------------------------------------------------------------------------------------------
HEADER = """
import sympy
from replica.modeling import Parameter, SaddlePointModel, FixedPointModel
a = sympy.Symbol("a", positive=True)
x, xh = sympy.symbols("x xh", real=True)
"""

BAD_FILES = {
    "not_linear": ("MODEL = SaddlePointModel('m', free_energy=x*xh**3 - a*x**2/2 + xh**2/2, "
                   "pairs=[(x, xh)], parameters=[Parameter('a', 'a')])", "not linear in xh"),
    "unpaired": ("y = sympy.Symbol('y')\nMODEL = SaddlePointModel('m', free_energy=x*xh - "
                 "a*x**2/2 + y*xh**2/2, pairs=[(x, xh)], parameters=[Parameter('a', 'a')])",
                 "symbol(s) y in the free energy"),
    "bad_default": ("MODEL = SaddlePointModel('m', free_energy=x*xh - a*x**2/2 - xh**2/2, "
                    "pairs=[(x, xh)], parameters=[Parameter('a', 'a', default=-1)])",
                    "default of parameter 'a'"),
    "bad_observable": ("MODEL = SaddlePointModel('m', free_energy=x*xh - a*x**2/2 - xh**2/2, "
                       "pairs=[(x, xh)], parameters=[Parameter('a', 'a')], "
                       "observables={'e': x + sympy.Symbol('w')})",
                       "observable 'e' refers to unknown symbol(s) w"),
    "no_model": ("z = 1", "declares no model"),
    "syntax": ("MODEL = (", "syntax error"),
    "raises": ("MODEL = 1 / 0", "ZeroDivisionError while running the model file"),
    "unused_parameter": ("MODEL = FixedPointModel('m', equations={x: a}, parameters=["
                         "Parameter('a', 'a'), Parameter('b', 'b')])",
                         "parameter 'b' appears in no equation"),
}


@pytest.mark.parametrize("case", sorted(BAD_FILES))
def test_bad_model_files_exit_2_with_one_line(tmp_path, capsys, case):
    body, expected = BAD_FILES[case]
    path = tmp_path / f"{case}.py"
    path.write_text(HEADER + textwrap.dedent(body) + "\n")
    rc = main(["solve", "--model", str(path), "--a", "1"])
    err = capsys.readouterr().err
    assert rc == 2, err
    assert expected in err and err.count("\n") == 1 and "Traceback" not in err


def test_parameter_outside_domain_names_it(capsys):
    rc = main(["solve", "--model", RIDGE, "--alpha", "-2", "--lam", "1", "--sigma", "0"])
    err = capsys.readouterr().err
    assert rc == 2 and "--alpha" in err and "positive" in err


def test_model_error_raised_in_python(tmp_path):
    path = tmp_path / "m.py"
    path.write_text(HEADER + BAD_FILES["not_linear"][0] + "\n")
    with pytest.raises(ModelError, match="not linear"):
        load_model_file(str(path))


# ---------------------------------------------------------------------------------------------
# transition, phase-diagram, sweep, appendix on a model file
# ---------------------------------------------------------------------------------------------
@pytest.mark.slow
def test_transition_peak_equals_the_marchenko_pastur_peak(capsys):
    """The double-descent peak of the test error in alpha (lam = 1/100, sigma = 1/2), located by
    the generic command, against the maximum of the random-matrix closed form."""
    rc = main(["transition", "--model", RIDGE, "--vary", "alpha", "--between", "1/2,3",
               "--quantity", "test", "--lam", "1/100", "--sigma", "1/2", "--dps", "25",
               "--json"])
    assert rc == 0
    data = json.loads(capsys.readouterr().out)
    assert data["digits"] >= 20
    with mpmath.workdps(40):
        def dtest(a):
            return mpmath.diff(lambda t: marchenko_pastur_ridge_mp(t)[0], a)

        peak = mpmath.findroot(dtest, mpmath.mpf("0.99"))
        got = mpmath.mpf(data["location"])
        assert abs(got - peak) < mpmath.mpf(10) ** (1 - data["digits"]) * peak, (got, peak)
        value = marchenko_pastur_ridge_mp(peak)[0]
        assert abs(mpmath.mpf(data["value"]) - value) < mpmath.mpf(10) ** (1 - data["digits"])


def marchenko_pastur_ridge_mp(alpha):
    """:func:`marchenko_pastur_ridge` at an mpf alpha (lam = 1/100, sigma = 1/2)."""
    lam, s2 = mpmath.mpf(1) / 100, mpmath.mpf(1) / 4
    g = 1 / alpha

    def G(z):
        w = z / alpha
        return ((1 - g - w) - mpmath.sqrt((1 - g - w) ** 2 - 4 * g * w)) / (2 * g * w) / alpha

    G0, G1 = G(-lam), mpmath.diff(G, -lam)
    return (s2 + lam**2 * G1 + s2 * (G0 - lam * G1),)


def test_transition_reports_a_missing_extremum_as_exit_3(capsys):
    rc = main(["transition", "--model", RIDGE, "--vary", "alpha", "--between", "2,5",
               "--quantity", "test", "--lam", "1/100", "--sigma", "1/2"])
    err = capsys.readouterr().err
    assert rc == 3 and "at its end" in err


@pytest.mark.slow
def test_phase_diagram_and_sweep_on_a_model_file(tmp_path, capsys):
    import csv

    out = tmp_path / "pd"
    rc = main(["phase-diagram", "--model", RIDGE, "--x", "alpha:0.2:5:24", "--y",
               "lam:1e-3:1:6:log", "--quantity", "test", "--sigma", "1/2", "--trace-max",
               "-o", str(out)])
    assert rc == 0, capsys.readouterr().err
    rows = list(csv.DictReader(open(out / "ridge_regression_test_alpha_lam.csv")))
    assert len(rows) == 24 * 6 and all(r["converged"] == "True" for r in rows)
    # a grid value against the closed form
    r0 = rows[7]
    a, lam = sympy.Rational(r0["alpha"]), sympy.Rational(r0["lam"])
    with mpmath.workdps(30):
        ref = marchenko_pastur_ridge(a, lam, "1/2")[0]
    assert abs(float(r0["test"]) - float(ref)) < 1e-10
    assert (out / "ridge_regression_test_alpha_lam.png").stat().st_size > 10000
    boundary = list(csv.DictReader(open(out / "ridge_regression_test_alpha_lam_boundary.csv")))
    assert boundary and all(0.8 < float(b["alpha_at_max"]) < 1.3 for b in boundary)
    csv_path = tmp_path / "sweep.csv"
    rc = main(["sweep", "--model", RIDGE, "--alpha", "2,4", "--lam", "1/10", "--sigma", "1/2",
               "--dps", "20", "-o", str(csv_path), "--no-progress"])
    assert rc == 0
    rows = list(csv.DictReader(open(csv_path)))
    assert [r["alpha"] for r in rows] == ["2.0", "4.0"] and rows[0]["lam_exact"] == "1/10"
    assert rows[0]["status"] == "converged" and int(rows[0]["digits"]) == 20
    with mpmath.workdps(30):
        assert abs(mpmath.mpf(rows[0]["test"]) - marchenko_pastur_ridge("2", "1/10", "1/2")[0]) \
            < 1e-19
    capsys.readouterr()
    rc = main(["sweep", "--model", RIDGE, "--alpha", "2", "--lam", "1/10", "--sigma", "1/2",
               "-o", str(csv_path)])
    assert rc == 2 and "exists" in capsys.readouterr().err


@pytest.mark.pdf
@pytest.mark.slow
def test_appendix_of_a_model_file_compiles(tmp_path, capsys):
    from replica.latex import latexmk_path

    try:
        latexmk_path()
    except Exception:
        if os.environ.get("CI"):
            raise
        pytest.skip("latexmk not installed")
    rc = main(["appendix", "--model", RIDGE, "-o", str(tmp_path), "--pdf", "--at",
               "alpha=2,lam=1/10,sigma=1/2"])
    out = capsys.readouterr().out
    assert rc == 0 and "21/21 step checks passed" in out
    assert "From the model to the free energy" in (tmp_path / "ridge-regression.tex").read_text()
    tex = (tmp_path / "ridge-regression.tex").read_text()
    assert r"\hat{V}" in tex and "$0.4426645465$" in tex  # 10 digits, correctly rounded
    assert (tmp_path / "ridge-regression.pdf").exists()


# ---------------------------------------------------------------------------------------------
# FixedPointModel, aliases and abstract spectral functions
# ---------------------------------------------------------------------------------------------
def _susceptibility_model(spectral, parameters):
    r"""The ridge susceptibility alone, as residuals: with :math:`\hat V = \alpha/(1+V)` and
    :math:`z = -\lambda/\hat V`, :math:`V = \langle c/(\lambda + \hat V c)\rangle =
    (1 + z g(z))/\hat V` for :math:`g(z) = \langle 1/(c - z)\rangle`."""
    from replica.modeling import Alias, FixedPointModel, spectral_family

    alpha, lam = sympy.symbols("alpha lam", positive=True)
    V, z = sympy.symbols("V z", real=True)
    g = spectral_family("g_test")
    Vhat = alpha / (1 + V)
    return FixedPointModel(
        "susceptibility", residuals=[V * Vhat - (1 + z * g[0](z))], unknowns=[V],
        aliases=[Alias(z, -lam * (1 + V) / alpha)], spectral={g: spectral(g)},
        parameters=parameters, observables={"dV": sympy.diff(g[0](z), z)},
        start={V: 1}, positive_unknowns=True)


def test_fixed_point_model_with_stieltjes_of_a_spectrum(ridge):
    from replica.modeling import Parameter, StieltjesOf

    model = _susceptibility_model(lambda g: StieltjesOf("covariance"), [
        Parameter("alpha", "a"), Parameter("lam", "l"),
        Parameter("d", "d", domain="positive_integer", default=1),
        Parameter("covariance", "C", domain="covariance", default="identity")])
    for cov, d in (("identity", 1), ("powerlaw:1", 30)):
        r = model.solve(dps=30, alpha=2, lam="1/10", covariance=cov, d=d)
        ref = solve(ridge, dps=30, alpha=2, lam="1/10", sigma=0, covariance=cov, d=d)
        with mpmath.workdps(40):
            assert abs(r["V"] - ref["V"]) < mpmath.mpf(10) ** -28


def test_fixed_point_model_with_a_closed_form_spectral_function(ridge):
    from replica.modeling import Parameter

    z = sympy.Symbol("w")
    model = _susceptibility_model(lambda g: (lambda w: 1 / (1 - w)),  # g of C = I
                                  [Parameter("alpha", "a"), Parameter("lam", "l")])
    r = model.solve(dps=30, alpha="1/2", lam="1/3")
    ref = solve(ridge, dps=30, alpha="1/2", lam="1/3", sigma=0)
    with mpmath.workdps(40):
        assert abs(r["V"] - ref["V"]) < mpmath.mpf(10) ** -28
        zz = -mpmath.mpf(1) / 3 * (1 + r["V"]) * 2
        assert abs(r["dV"] - 1 / (1 - zz) ** 2) < mpmath.mpf(10) ** -28  # g' from the closed form
    assert z not in model.problem.system("main").parameters


# ---------------------------------------------------------------------------------------------
# expand: series derived from the equations
# ---------------------------------------------------------------------------------------------
def test_series_of_the_ridgeless_risk_is_the_geometric_series(ridge):
    """At lam = 0 the test error is sigma^2 alpha/(alpha - 1) for every covariance C (the
    averages cancel): its 1/alpha series is sigma^2 (1 + 1/alpha + ... ), derived order by
    order from the saddle-point equations with the spectrum kept abstract."""
    from replica.analysis.series import series

    out = series(ridge, "alpha", 4, "test", values={"lam": 0})
    sigma = sympy.Symbol("sigma", nonnegative=True)
    assert out["quantity"] == [sigma**2] * 5


@pytest.mark.slow
def test_series_approaches_the_solution_at_the_expected_rate(ridge):
    """lam = 1/10, sigma = 1/2, C = I: the order-3 series in 1/alpha against verified solves at
    alpha = 50, 100, 200; the error falls by about 2^4 per doubling (the first omitted term)."""
    from replica.analysis.series import series
    from replica.symbolic.spectral import LAMBDA_I, SpectralAverage

    out = series(ridge, "alpha", 3, "test", values={"lam": "1/10", "sigma": "1/2"})
    alpha = sympy.Symbol("alpha", positive=True)
    at_identity = out["series"].replace(lambda e: isinstance(e, SpectralAverage),
                                        lambda e: e.args[0].subs(LAMBDA_I, 1))
    errs = []
    for a in (50, 100, 200):
        r = solve(ridge, dps=30, alpha=a, lam="1/10", sigma="1/2")
        with mpmath.workdps(30):
            errs.append(abs(r["test"] - mpmath.mpf(sympy.N(at_identity.subs(alpha, a), 40))))
    for e1, e2 in zip(errs, errs[1:]):
        assert 12 < e1 / e2 < 20, errs


def test_cli_expand_model_file(capsys):
    assert main(["expand", "--model", RIDGE, "--parameter", "alpha", "--quantity", "test",
                 "--order", "2", "--lam", "0", "--sigma", "1/2"]) == 0
    assert "test = 1/4 + 1/(4*alpha) + 1/(4*alpha**2) + O(1/alpha^3)" in capsys.readouterr().out


@pytest.mark.slow
def test_cli_expand_of_a_singular_series_is_exit_3(capsys):
    """The low-rank spectrum has an atom at 0, so its transforms kept abstract are infinite at
    the alpha -> oo expansion point: the series is refused (exit 3, one line pointing to the
    built-in expansions), not printed as nan."""
    assert main(["--quiet", "expand", "--model", "lowrank", "--parameter", "alpha", "--at", "inf",
                 "--quantity", "idg", "--order", "1", "--tau", "9/4", "--kappa", "3/2",
                 "--rho", "1/2", "--sigma", "3/10"]) == 3
    captured = capsys.readouterr()
    assert "nan" not in captured.out
    err = captured.err.strip().splitlines()
    assert len(err) == 1 and "not finite" in err[0] and "replica expand lowrank" in err[0]


@pytest.mark.slow
def test_generated_code_cache_follows_the_files_a_model_imports(tmp_path):
    """The disk cache of a model file's generated code is keyed on the file, the package and the
    user's helper modules it imports: changing a helper changes the result (two processes
    sharing one cache folder)."""
    import subprocess
    import sys

    (tmp_path / "helper.py").write_text("COEFF = 2\n")
    (tmp_path / "model.py").write_text(textwrap.dedent("""
        import sympy
        from helper import COEFF
        from replica.modeling import FixedPointModel, Parameter
        a = sympy.Symbol("a", positive=True)
        x = sympy.Symbol("x", positive=True)
        MODEL = FixedPointModel("helper_model", equations={x: COEFF * a / (1 + x)},
                                parameters=[Parameter("a", "a")], positive_unknowns=True)
    """))
    env = dict(os.environ, REPLICA_LAMBDIFY_CACHE=str(tmp_path / "cache"),
               PYTHONPATH=str(tmp_path) + os.pathsep + REPO)

    def solve_x():
        out = subprocess.run([sys.executable, "-m", "replica.cli", "solve", "--model",
                              str(tmp_path / "model.py"), "--a", "4", "--json"],
                             capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
        assert out.returncode == 0, out.stderr
        return mpmath.mpf(json.loads(out.stdout)["order_parameters"]["x"])

    with mpmath.workdps(30):
        assert abs(solve_x() - (mpmath.sqrt(33) - 1) / 2) < 1e-25  # x^2 + x = 8
        (tmp_path / "helper.py").write_text("COEFF = 3\n")
        assert abs(solve_x() - (mpmath.sqrt(49) - 1) / 2) < 1e-25  # x^2 + x = 12: x = 3


@pytest.mark.slow
def test_generic_transition_on_a_builtin_model_matches_its_own_locator(capsys):
    """``--model isotropic`` goes through the generic commands: the maximum of e_icl in tau
    located by ``replica transition --model`` equals paper B's interpolation peak located by the
    model's own ``transition isotropic --interpolation-peak`` (two different methods)."""
    from replica.analysis.transitions import isotropic_interpolation_peak

    rc = main(["transition", "--model", "isotropic", "--vary", "tau", "--between", "1/2,3",
               "--quantity", "e_icl", "--alpha", "10", "--kappa", "inf", "--rho", "1/100",
               "--lam", "1/1000", "--dps", "20", "--json"])
    assert rc == 0
    data = json.loads(capsys.readouterr().out)
    own = isotropic_interpolation_peak("10", "inf", "1/100", "1/1000", dps=20).to_json_dict()
    digits = min(data["digits"], own["digits"])
    assert digits >= 15
    with mpmath.workdps(30):
        a, b = mpmath.mpf(data["location"]), mpmath.mpf(own["tau_peak"])
        assert abs(a - b) <= mpmath.mpf(10) ** (1 - digits) * abs(b), (a, b)
