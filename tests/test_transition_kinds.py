"""``replica transition`` from the registry: kinks and crossovers of any model, declared
transitions (``TRANSITIONS``, ``--name``) and one status for every located point.

Every located point is checked against a closed form written here, independently of the
library: a model whose solved unknown has a kink at ``a = sqrt(2)`` (its equation has
``max(a^2, 2)`` on the right), a model with a smooth crossover (curvature extremum) at
``a = sqrt(2)``, and ridge regression's noiseless test error, whose curvature extremum in alpha
at a small ridge is found here from the Marchenko--Pastur law by SymPy and ``mpmath.findroot``.
"""

import json
import textwrap

import mpmath
import pytest
import sympy

from conftest import REPO
from replica.cli import main

RIDGE = f"{REPO}/examples/ridge_regression.py"

#: x^2 + x = max(a^2, 2): x = 1 for a <= sqrt(2), x = (sqrt(1 + 4 a^2) - 1)/2 beyond. The slope
#: dx/da jumps at a = sqrt(2) from 0 to 2a/sqrt(1 + 4a^2) = 2 sqrt(2)/3.
KINKED = """
import sympy
from replica.capabilities import Transition
from replica.modeling import FixedPointModel, Parameter
a = sympy.Symbol("a", positive=True)
x = sympy.Symbol("x", real=True)
MODEL = FixedPointModel("kinked", residuals=[x**2 + x - sympy.Max(a**2, 2)], unknowns=[x],
                        parameters=[Parameter("a", "a")], observables={"y": 2 * x},
                        start={x: 1}, positive_unknowns=True)
TRANSITIONS = [Transition("onset", quantity="y", vary="a", kind="kink", between=("1/2", "3"),
                          definition="onset of growth")]
"""

#: x^2 = (a - sqrt(2))^2 + 1/4: x = sqrt((a - sqrt 2)^2 + 1/4), whose curvature
#: x'' = (1/4) ((a - sqrt 2)^2 + 1/4)^(-3/2) is largest at a = sqrt(2) (x''' = 0 there).
SMOOTH = """
import sympy
from replica.modeling import FixedPointModel, Parameter
a = sympy.Symbol("a", positive=True)
x = sympy.Symbol("x", real=True)
R = x**2 - (a - sympy.sqrt(2))**2 - sympy.Rational(1, 4)
MODEL = FixedPointModel("smooth", residuals=[R], unknowns=[x], parameters=[Parameter("a", "a")],
                        observables={"y": x},
                        start={x: 1}, positive_unknowns=True)
"""


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    d = tmp_path_factory.mktemp("models")
    (d / "kinked.py").write_text(textwrap.dedent(KINKED))
    (d / "smooth.py").write_text(textwrap.dedent(SMOOTH))
    return d


def _run(capsys, *argv):
    rc = main(["transition", *map(str, argv)])
    out = capsys.readouterr()
    return rc, out.out, out.err


def _close(got: str, exact, digits: int) -> bool:
    """``got`` agrees with ``exact`` (a number, or a function computing it at 60 digits) to
    ``digits`` significant digits, up to one unit in the last."""
    with mpmath.workdps(60):
        exact = exact() if callable(exact) else exact
        return abs(mpmath.mpf(got) - exact) <= mpmath.mpf(10) ** (1 - digits) * abs(exact)


def SQRT2():
    return mpmath.sqrt(2)


# ---------------------------------------------------------------------------------------------
# Kinks
# ---------------------------------------------------------------------------------------------
def test_kink_of_a_model_file_is_at_sqrt_2(models, capsys):
    rc, out, err = _run(capsys, "--model", models / "kinked.py", "--vary", "a", "--between",
                        "1/2,3", "--quantity", "y", "--kind", "kink", "--json")
    assert rc == 0, err
    data = json.loads(out)
    assert data["kind"] == "kink" and data["status"] == "converged" and data["converged"] is True
    assert data["digits"] >= 25
    with mpmath.workdps(60):
        assert _close(data["location"], SQRT2, data["digits"]), data["location"]
        assert _close(data["value"], mpmath.mpf(2), data["digits"])  # y = 2x = 2 at the kink
        # the one-sided slopes of y = 2x: 0 on the left, 4 sqrt(2)/3 on the right
        note = next(n for n in data["notes"] if n.startswith("slope"))
        left, right = [mpmath.mpf(t.split()[0]) for t in note.split(": ", 1)[1].split(", ")]
        assert abs(left) < 1e-6 and abs(right - 4 * mpmath.sqrt(2) / 3) < 1e-6, note
    assert "non-analytic" in data["definition"] and "branches" in data["method"]


def test_declared_kink_by_name_and_help(models, capsys):
    with pytest.raises(SystemExit):
        main(["transition", "--model", str(models / "kinked.py"), "--help"])
    assert "onset" in capsys.readouterr().out
    rc, out, err = _run(capsys, "--model", models / "kinked.py", "--name", "onset", "--dps", "20",
                        "--json")
    assert rc == 0, err
    data = json.loads(out)
    assert data["name"] == "onset" and data["definition"].startswith("onset of growth")
    assert data["digits"] >= 15 and _close(data["location"], SQRT2, data["digits"])


def test_a_smooth_quantity_has_no_kink_exit_3(models, capsys):
    rc, out, err = _run(capsys, "--model", models / "smooth.py", "--vary", "a", "--between",
                        "1/2,3", "--quantity", "y", "--kind", "kink")
    assert rc == 3 and out == ""
    assert err.count("\n") == 1 and "kink of y in a" in err and "tried:" in err, err


# ---------------------------------------------------------------------------------------------
# Crossovers
# ---------------------------------------------------------------------------------------------
def test_crossover_of_a_model_file_is_at_sqrt_2(models, capsys):
    rc, out, err = _run(capsys, "--model", models / "smooth.py", "--vary", "a", "--between",
                        "1/2,3", "--quantity", "y", "--kind", "crossover", "--json")
    assert rc == 0, err
    data = json.loads(out)
    assert data["status"] == "converged" and data["digits"] >= 25
    assert _close(data["location"], SQRT2, data["digits"]), data["location"]
    assert _close(data["value"], mpmath.mpf(1) / 2, data["digits"])
    assert "d^3 y/d a^3 = 0" in data["definition"]


def ridge_crossover(lam):
    """The root of d^3 E/d alpha^3 near alpha = 1 for ridge regression's noiseless test error
    E(alpha) = lam^2 E[(s + lam)^-2] (C = I, teacher N(0, I)), s in the spectrum of
    X^T X/d = alpha W, W Marchenko--Pastur of ratio g = 1/alpha with Stieltjes transform
    m(z) = ((1 - g - z) - sqrt((1 - g - z)^2 - 4 g z))/(2 g z); E[1/(s + t)] = m(-t/alpha)/alpha
    and E = -lam^2 d/dt E[1/(s + t)] at t = lam."""
    al, t = sympy.symbols("alpha t", positive=True)
    g, z = 1 / al, -t / al
    m = ((1 - g - z) - sympy.sqrt((1 - g - z) ** 2 - 4 * g * z)) / (2 * g * z)
    E = (-t ** 2 * sympy.diff(m / al, t)).subs(t, sympy.Rational(lam))
    second = sympy.lambdify(al, sympy.diff(E, al, 2), "mpmath")
    third = sympy.lambdify(al, sympy.diff(E, al, 3), "mpmath")
    with mpmath.workdps(60):
        grid = [mpmath.mpf(6) / 10 + mpmath.mpf(j) / 200 for j in range(181)]  # [0.6, 1.5]
        k = max(range(1, 180), key=lambda j: abs(second(grid[j])))  # the curvature peak
        root = mpmath.findroot(third, (grid[k - 1], grid[k + 1]), solver="anderson")
        return root, sympy.lambdify(al, E, "mpmath")


@pytest.mark.slow
@pytest.mark.parametrize("override", [(), ("--lam", "1/50")])
def test_declared_interpolation_crossover_of_ridge(capsys, override):
    """``--name interpolation`` of examples/ridge_regression.py (declared at lam = 1/100,
    sigma = 0; a ``--lam`` on the command line overrides) against the closed form."""
    lam = override[1] if override else "1/100"
    rc, out, err = _run(capsys, "--model", RIDGE, "--name", "interpolation", *override, "--json")
    assert rc == 0, err
    data = json.loads(out)
    assert data["params"]["lam"] == lam and data["params"]["sigma"] == "0"
    assert data["kind"] == "crossover" and data["digits"] >= 25 and data["converged"]
    root, E = ridge_crossover(lam)
    with mpmath.workdps(60):
        assert _close(data["location"], root, data["digits"]), (data["location"], root)
        assert _close(data["value"], E(root), data["digits"])


def test_generic_options_are_required_without_a_name(capsys):
    rc, out, err = _run(capsys, "--model", RIDGE, "--between", "1/2,2", "--quantity", "test")
    assert rc == 2 and "--vary" in err and "--name" in err and err.count("\n") == 1


# ---------------------------------------------------------------------------------------------
# One status for every located point
# ---------------------------------------------------------------------------------------------
def test_a_transition_without_digits_is_no_digits_and_exit_3(capsys):
    from replica.analysis.transitions import TransitionResult, located_status
    from replica.commands.transition import print_transition
    from replica.errors import ConvergenceError
    from replica.numerics.continuation import Location
    from replica.numerics.result import Status

    good = Location(mpmath.mpf(1), mpmath.mpf(10) ** -20, 3, "test")
    bad = Location(mpmath.mpf(1), mpmath.mpf(3), 3, "test")
    assert located_status(good, 30) == Status.CONVERGED
    assert located_status(bad, 30) == Status.NO_DIGITS
    res = TransitionResult("m", {}, 30, "kappa_c", bad, "d", "tried this", [])
    assert res.status == Status.NO_DIGITS
    with pytest.raises(ConvergenceError) as exc:
        print_transition(res, True)
    data = json.loads(capsys.readouterr().out)
    assert data["status"] == "no-digits" and data["converged"] is False
    assert exc.value.status == "no-digits" and "tried this" in str(exc.value)
    assert TransitionResult("m", {}, 30, "kappa_c", good, "d", "m", []).to_json_dict()[
        "converged"] is True


def test_builtin_transition_reports_its_status(capsys):
    rc, out, err = _run(capsys, "isotropic", "--tau", "2", "--rho", "1/100", "--dps", "20",
                        "--json")
    assert rc == 0, err
    data = json.loads(out)
    assert data["status"] == "converged" and data["converged"] is True
    assert _close(data["kappa_c"], mpmath.mpf(1), data["digits"]) and data["digits"] >= 15


def test_slope_jump_check_tells_a_kink_from_a_smooth_function():
    """The check behind ``--kind kink``: |x - c| has slopes -1 and 1 at c; a smooth function
    (however curved) has none, and a kink located off by more than the fit scale is refused."""
    from replica.analysis.scan import _slope_jump
    from replica.errors import ConvergenceError
    from replica.numerics.continuation import one_sided_slopes

    with mpmath.workdps(50):
        c = mpmath.sqrt(3)
        left, right = _slope_jump(lambda x: abs(x - c) + x ** 2, c, mpmath.mpf(10) ** -30, 50,
                                  "k")
        assert abs(left - (2 * c - 1)) < 1e-20 and abs(right - (2 * c + 1)) < 1e-20
        l, r = one_sided_slopes(mpmath.exp, mpmath.mpf(1), mpmath.mpf(10) ** -5)
        assert abs(l - mpmath.e) < 1e-15 and abs(r - mpmath.e) < 1e-15
        with pytest.raises(ConvergenceError, match="no jump of the slope"):
            _slope_jump(lambda x: mpmath.sqrt((x - c) ** 2 + mpmath.mpf(10) ** -6), c,
                        mpmath.mpf(10) ** -30, 50, "k")
        with pytest.raises(ConvergenceError, match="no jump of the slope"):
            _slope_jump(lambda x: abs(x - c), c + mpmath.mpf(10) ** -3, mpmath.mpf(10) ** -30,
                        50, "k")


@pytest.mark.slow
def test_generic_crossover_of_lowrank_equals_its_own_locator(capsys):
    """Two code paths for one definition: the crossover in rho of m0 at alpha = 1000, lam = 0,
    located by the generic ``--kind crossover`` on the solved saddle point (``--model lowrank``)
    and by the model's own ``transition lowrank --alpha`` on its lambda = 0 closed form. (The
    generic search once froze alpha_test, a default that follows alpha, and passed the parsed
    test law to the float64 scan, which read it as '0'.)"""
    common = ["--kappa", "1/2", "--tau", "9/4", "--sigma", "3/10", "--alpha", "1000",
              "--dps", "20", "--json"]
    rc, out, err = _run(capsys, "--model", "lowrank", "--vary", "rho", "--between",
                        "1/20,999/1000", "--quantity", "m0", "--kind", "crossover", "--lam", "0",
                        *common)
    assert rc == 0, err
    generic = json.loads(out)
    rc, out, err = _run(capsys, "lowrank", *common)
    assert rc == 0, err
    own = json.loads(out)
    digits = min(generic["digits"], own["digits"])
    assert digits >= 15 and generic["converged"] and own["converged"]
    assert _close(generic["location"], lambda: mpmath.mpf(own["rho_c"]), digits)
