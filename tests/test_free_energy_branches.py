"""Free-energy values, several solutions, first-order transitions and spinodals on the command
line, and replica-symmetry stability (the replicon) in the output and in phase diagrams.

Every located value is checked against a closed form or an independent plain-mpmath
computation written here:

* a saddle-point model whose free energy at the saddle point is ``a^2/2`` (solved by hand);
* the Curie--Weiss model ``m = tanh(beta m + h - 1/4)`` with the free energy
  ``beta m^2/2 - log(2 cosh(beta m + h - 1/4))``: by the symmetry ``m -> -m`` its two
  magnetised branches have equal free energies exactly at ``h = 1/4`` (the first-order
  transition), and the branch ``m < 0`` ends where ``beta (1 - m^2) = 1`` (the spinodal,
  ``h = 1/4 + beta sqrt(1 - 1/beta) - atanh(sqrt(1 - 1/beta))``); its "replicon"
  ``1 - beta (1 - m^2)`` (the curvature of the free energy along the solution) is a toy
  stability that is negative on the middle, unstable solution;
* a model whose replicon is ``1 - a b``: its AT line in the (a, b) plane is ``a b = 1``.
"""

from __future__ import annotations

import csv
import json
import textwrap

import mpmath
import pytest

import replica
from replica.cli import main

SADDLE = """
import sympy
from replica.modeling import Parameter, SaddlePointModel
a = sympy.Symbol("a", positive=True)
m, mhat = sympy.symbols("m mhat", real=True)
MODEL = SaddlePointModel("quadratic", free_energy=m * mhat - mhat**2 / 2 - m**2 + a * m,
                         pairs=[(m, mhat)], parameters=[Parameter("a", "a")])
"""

CURIE_WEISS = """
import sympy
from replica.capabilities import Branch, Transition
from replica.modeling import FixedPointModel, Parameter, Stability
beta = sympy.Symbol("beta", positive=True)
h = sympy.Symbol("h", real=True)
m = sympy.Symbol("m", real=True)
X = beta * m + h - sympy.Rational(1, 4)
MODEL = FixedPointModel(
    "curie_weiss", equations={m: sympy.tanh(X)},
    parameters=[Parameter("beta", "inverse temperature"),
                Parameter("h", "field", domain="real")],
    free_energy=beta * m**2 / 2 - sympy.log(2 * sympy.cosh(X)),
    stability=Stability(replicon=1 - beta * (1 - m**2), source="toy: the free energy's curvature"),
    start={m: sympy.Rational(1, 2)})
TRANSITIONS = [
    Transition("flip", quantity="free_energy", vary="h", kind="first-order",
               between=("0", "1/2"), params={"beta": "2"},
               branches=(Branch("up", start={"m": "0.9"}, accept=("m > 0",)),
                         Branch("down", start={"m": "-0.9"}, accept=("m < 0",)))),
    Transition("end-down", quantity="m", vary="h", kind="spinodal", guess="3/4",
               params={"beta": "2"}, branches=(Branch("down", start={"m": "-0.75"}),)),
]
"""

HYPERBOLA = """
import sympy
from replica.modeling import FixedPointModel, Parameter, Stability
a, b = sympy.symbols("a b", positive=True)
x = sympy.Symbol("x", real=True)
MODEL = FixedPointModel("hyperbola", residuals=[x - a * b], unknowns=[x],
                        parameters=[Parameter("a", "a"), Parameter("b", "b")],
                        stability=Stability(replicon=1 - x, source="toy"), start={x: 1})
"""

ESCAPE = """
import sympy
from replica.modeling import FixedPointModel, Parameter
a = sympy.Symbol("a", positive=True)
x = sympy.Symbol("x", real=True)
MODEL = FixedPointModel("escape", residuals=[(x - a) * sympy.exp(a - x)], unknowns=[x],
                        parameters=[Parameter("a", "a")], start={x: sympy.Rational(1, 2)})
"""


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("models")
    for name, text in (("saddle", SADDLE), ("cw", CURIE_WEISS), ("hyperbola", HYPERBOLA),
                       ("escape", ESCAPE)):
        (d / f"{name}.py").write_text(textwrap.dedent(text))
    return d


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def cw_solution(beta, h, m0):
    """m = tanh(beta m + h - 1/4) by plain mpmath, and its free energy."""
    beta, h = mpmath.mpf(beta), mpmath.mpf(h)
    m = mpmath.findroot(lambda x: x - mpmath.tanh(beta * x + h - mpmath.mpf(1) / 4), m0)
    f = beta * m**2 / 2 - mpmath.log(2 * mpmath.cosh(beta * m + h - mpmath.mpf(1) / 4))
    return m, f


# --- the free energy's value ------------------------------------------------------------------
def test_saddle_point_model_reports_its_free_energy(files, capsys):
    """Phi = m mhat - mhat^2/2 - m^2 + a m: m = mhat = a, Phi* = a^2/2, reported without the
    model listing it as an observable, in the text and in the JSON, with the result's digits."""
    r = replica.solve(replica.load_model(str(files / "saddle.py")), dps=30, a="3/7")
    with mpmath.workdps(40):
        assert abs(r["free_energy"] - mpmath.mpf(9) / 98) < mpmath.mpf(10) ** -30
    code, out, _ = run(capsys, "solve", "--model", str(files / "saddle.py"), "--a", "3/7",
                       "--json")
    data = json.loads(out)
    assert code == 0 and data["free_energy"]["free_energy"] == r.to_dict()["free_energy"]
    assert len(data["free_energy"]["free_energy"].replace(".", "").lstrip("0")) >= 30
    code, out, _ = run(capsys, "solve", "--model", str(files / "saddle.py"), "--a", "3/7")
    assert "free_energy" in out and "0.09183673469387755102040816326" in out


def test_observable_under_the_free_energy_name_must_be_the_free_energy():
    import sympy

    from replica.modeling import ModelError, Parameter, SaddlePointModel

    a = sympy.Symbol("a", positive=True)
    m, mhat = sympy.symbols("m mhat", real=True)
    f = m * mhat - mhat**2 / 2 - m**2 + a * m
    with pytest.raises(ModelError, match="free_energy"):
        SaddlePointModel("x", free_energy=f, pairs=[(m, mhat)], parameters=[Parameter("a", "a")],
                         observables={"free_energy": m})
    with pytest.raises(ModelError, match="extremum"):
        SaddlePointModel("x", free_energy=f, pairs=[(m, mhat)], parameters=[Parameter("a", "a")],
                         extremum="maximum")


# --- stability ----------------------------------------------------------------------------------
def test_stability_object_in_json_and_one_text_line(files, capsys):
    code, out, _ = run(capsys, "solve", "--model", str(files / "cw.py"), "--beta", "2", "--h",
                       "1/4", "--start", "m=0.9", "--dps", "25", "--json")
    assert code == 0
    sol = json.loads(out)["solutions"][0]
    with mpmath.workdps(40):
        m, _ = cw_solution(2, mpmath.mpf(1) / 4, mpmath.mpf("0.9"))
        lam = 1 - 2 * (1 - m**2)
        assert abs(mpmath.mpf(sol["stability"]["replicon"]) - lam) < mpmath.mpf(10) ** -24
    assert sol["stability"]["stable"] is True
    assert sol["stability"]["how"] == "replicon (toy: the free energy's curvature)"
    # the middle solution (near m = 0) is unstable: the replicon is near 1 - beta = -1
    code, out, _ = run(capsys, "solve", "--model", str(files / "cw.py"), "--beta", "2", "--h",
                       "3/10", "--start", "m=0", "--json")
    sol = json.loads(out)["solutions"][0]
    with mpmath.workdps(40):
        m, _ = cw_solution(2, mpmath.mpf(3) / 10, mpmath.mpf(0))
        lam = 1 - 2 * (1 - m**2)
        assert abs(mpmath.mpf(sol["stability"]["replicon"]) - lam) < mpmath.mpf(10) ** -20
    assert sol["stability"]["stable"] is False and lam < 0
    code, out, _ = run(capsys, "solve", "--model", str(files / "cw.py"), "--beta", "2", "--h",
                       "3/10", "--start", "m=0")
    lines = [ln for ln in out.splitlines() if "stability" in ln]
    assert len(lines) == 1 and "UNSTABLE" in lines[0]


def test_builtin_model_states_why_replica_symmetry_is_exact():
    r = replica.solve("isotropic", dps=15, alpha="2", tau="2", kappa="1", rho="1/10", lam="0")
    st = r.to_json_dict()["stability"]
    assert st["stable"] is True and st["replicon"] is None
    assert st["how"].startswith("exact: ") and "minimum-norm" in st["how"]
    # it reports its free energy (R1) at the solution (tests/test_free_energy_instances.py)
    assert r["free_energy"] > 0 and not any("not reported" in n for n in r.notes)


# --- several solutions ----------------------------------------------------------------------------
def test_several_starts_give_the_distinct_solutions_and_the_equilibrium(files, capsys):
    """beta = 2, h = 3/10 (effective field 1/20 > 0): three solutions; the equilibrium one (the
    smallest free energy) is the one magnetised along the field."""
    code, out, _ = run(capsys, "solve", "--model", str(files / "cw.py"), "--beta", "2", "--h",
                       "3/10", "--start", "m=0.9", "--start", "m=-0.9", "--start", "m=0",
                       "--start", "m=0.95", "--dps", "20", "--json")
    # (m = 0 is not a solution here: the effective field is 1/20)
    assert code == 0
    data = json.loads(out)
    sols = data["solutions"]
    assert len(sols) == 3  # m=0.9 and m=0.95 reach the same solution
    assert sorted(len(s["starts"]) for s in sols) == [1, 1, 2]
    with mpmath.workdps(30):
        for s in sols:
            m = mpmath.mpf(s["order_parameters"]["m"])
            ref_m, ref_f = cw_solution(2, mpmath.mpf(3) / 10, m)
            assert abs(m - ref_m) < mpmath.mpf(10) ** -19
            assert abs(mpmath.mpf(s["free_energy"]["free_energy"]) - ref_f) < mpmath.mpf(10) ** -19
        fs = [mpmath.mpf(s["free_energy"]["free_energy"]) for s in sols]
    assert data["extremum"] == "min" and data["equilibrium"] == fs.index(min(fs))
    assert mpmath.mpf(sols[data["equilibrium"]]["order_parameters"]["m"]) > 0.5


def test_bad_start_is_one_line_exit_2(files, capsys):
    code, out, err = run(capsys, "solve", "--model", str(files / "cw.py"), "--beta", "2", "--h",
                         "0", "--start", "q=0.5")
    assert code == 2 and "--start" in err and len(err.strip().splitlines()) == 1


def test_a_start_newton_leaves_is_exit_3_not_another_solution(files, capsys):
    """f(x) = (x - a) exp(a - x): Newton's step is x - (x - a)/(1 - (x - a)), so from x - a > 1
    it runs away to infinity, while from the declared start (x - a = -1/2) it converges to a.
    A solution reached from the declared start is not reported as the one through the given
    start: one start is exit 3 saying so; among several starts it is listed as failed."""
    code, out, err = run(capsys, "solve", "--model", str(files / "escape.py"), "--a", "1",
                         "--start", "x=3", "--dps", "20")
    assert code == 3 and "no start converged" in err and "x=3" in err
    assert "from --start x=3: max-iterations" in out and "given start" in out
    code, out, _ = run(capsys, "solve", "--model", str(files / "escape.py"), "--a", "1",
                       "--start", "x=3", "--start", "x=1/2", "--dps", "20", "--json")
    assert code == 0
    data = json.loads(out)
    assert [s["starts"] for s in data["solutions"]] == [["x=1/2"]]
    assert [f["start"] for f in data["failed"]] == ["x=3"]
    assert "converged from the given start (x=0.5)" in " ".join(data["solutions"][0]["notes"])
    code, out, _ = run(capsys, "solve", "--model", str(files / "escape.py"), "--a", "1",
                       "--dps", "20", "--json")  # the declared start itself converges
    assert code == 0 and json.loads(out)["status"] == "converged"


# --- first-order transitions and spinodals on the command line -----------------------------------
def test_first_order_crossing_of_the_declared_branches(files, capsys):
    code, out, _ = run(capsys, "transition", "--model", str(files / "cw.py"), "--name", "flip",
                       "--dps", "20", "--json")
    assert code == 0
    data = json.loads(out)
    assert data["status"] == "converged" and data["digits"] == 20
    with mpmath.workdps(30):
        assert abs(mpmath.mpf(data["location"]) - mpmath.mpf(1) / 4) < mpmath.mpf(10) ** -20
    # below h = 1/4 the field favours m < 0 (the smaller free energy), above it m > 0
    assert data["equilibrium"] == {"below": "down", "above": "up"}


def test_first_order_from_command_line_branches_and_spinodal(files, capsys):
    code, out, _ = run(capsys, "transition", "--model", str(files / "cw.py"), "--kind",
                       "first-order", "--vary", "h", "--between", "1/8,1/2", "--beta", "3",
                       "--branch", "up:m=0.9,m>0", "--branch", "down:m=-0.9,m<0", "--dps", "15",
                       "--json")
    assert code == 0 and abs(float(json.loads(out)["location"]) - 0.25) < 1e-15
    code, out, _ = run(capsys, "transition", "--model", str(files / "cw.py"), "--name",
                       "end-down", "--dps", "20", "--json")
    assert code == 0
    data = json.loads(out)
    with mpmath.workdps(30):
        ms = mpmath.sqrt(1 - mpmath.mpf(1) / 2)
        h = mpmath.mpf(1) / 4 + 2 * ms - mpmath.atanh(ms)
        assert abs(mpmath.mpf(data["location"]) - h) < mpmath.mpf(10) ** -19 * h
        assert abs(mpmath.mpf(data["point"]["m"]) + ms) < mpmath.mpf(10) ** -19


def test_branch_mistakes_are_one_line_exit_2(files, capsys):
    for branch in (["--branch", "nolabel"], ["--branch", "up:q=0.9", "--branch", "b:m=-1"],
                   ["--branch", "up:m=0.9"]):
        code, out, err = run(capsys, "transition", "--model", str(files / "cw.py"), "--kind",
                             "first-order", "--vary", "h", "--between", "0,1/2", "--beta", "2",
                             *branch)
        assert code == 2 and "--branch" in err and len(err.strip().splitlines()) == 1, err


def test_branches_that_do_not_cross_exit_3_saying_what_was_tried(files, capsys):
    code, out, err = run(capsys, "transition", "--model", str(files / "cw.py"), "--name", "flip",
                         "--between", "3/10,1/2", "--dps", "15")
    assert code == 3 and "do not cross" in err and "sign change" in err


# --- the AT line in phase diagrams ----------------------------------------------------------------
def test_phase_diagram_draws_and_writes_the_at_line(files, tmp_path, capsys):
    code, out, _ = run(capsys, "phase-diagram", "--model", str(files / "hyperbola.py"), "--x",
                       "a:0.5:2:9", "--y", "b:0.5:2:7", "--quantity", "x", "-o", str(tmp_path))
    assert code == 0 and "_at_line.csv" in out
    with open(tmp_path / "hyperbola_x_a_b_at_line.csv") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) >= 5
    for row in rows:  # replicon = 1 - a b, linear along each grid edge: the contour is exact
        assert abs(float(row["a"]) * float(row["b"]) - 1) < 1e-12
    with open(tmp_path / "hyperbola_x_a_b.csv") as fh:
        first = next(csv.DictReader(fh))
    assert float(first["replicon"]) == pytest.approx(1 - 0.25)


# --- continuation ---------------------------------------------------------------------------------
def test_follow_keeps_the_metastable_branch_and_stops_at_its_end(files, capsys):
    """The branch m < 0 followed in h from 0: past the transition h = 1/4 it is metastable
    (a plain solve would give m > 0) and it ends at the spinodal h = 0.7828...: followed to
    7/10 every point is on it; followed to 1 the continuation stops at 4/5, exit 3."""
    code, out, _ = run(capsys, "solve", "--model", str(files / "cw.py"), "--beta", "2", "--h",
                       "0", "--start", "m=-0.9", "--follow", "h:7/10:7", "--dps", "20", "--json")
    assert code == 0
    points = json.loads(out)["points"]
    assert [p["h"] for p in points] == ["0", "1/10", "1/5", "3/10", "2/5", "1/2", "3/5", "7/10"]
    with mpmath.workdps(30):
        for p in points:
            h = mpmath.mpf(int(p["h"].split("/")[0])) / int((p["h"] + "/1").split("/")[1])
            m, f = cw_solution(2, h, mpmath.mpf("-0.9"))
            assert m < 0 and abs(mpmath.mpf(p["order_parameters"]["m"]) - m) < mpmath.mpf(10) ** -19
            assert abs(mpmath.mpf(p["free_energy"]["free_energy"]) - f) < mpmath.mpf(10) ** -19
    code, out, err = run(capsys, "solve", "--model", str(files / "cw.py"), "--beta", "2", "--h",
                         "0", "--start", "m=-0.9", "--follow", "h:1", "--dps", "15")
    assert code == 3 and "lost at h = 4/5" in err
    assert out.count("converged") == 8 and "h=4/5: stalled" in out


def test_follow_halves_a_step_that_newton_cannot_take(files, capsys, monkeypatch):
    """The branch x = a of ``(x - a) exp(a - x) = 0`` followed from a = 3 to a = 1/2 in one
    step: Newton's method from x = 3 diverges at a = 1/2 (from any x > a + 1 its steps run to
    +infinity, where the residual vanishes), so the step is halved -- a = 7/4 diverges too,
    a = 19/8 converges -- and the branch is followed through 19/8 to 1/2, where the solution is
    the closed form x = a. Without halving (the planted failure) the continuation stops."""
    from replica.analysis import first_order

    argv = ["solve", "--model", str(files / "escape.py"), "--a", "3", "--start", "x=3",
            "--follow", "a:1/2:1", "--dps", "20", "--json"]
    code, out, err = run(capsys, *argv)
    assert code == 0, err
    points = json.loads(out)["points"]
    assert [p["a"] for p in points] == ["3", "1/2"]  # the intermediate values are not printed
    with mpmath.workdps(30):  # read at 30 digits: at the default 15 the check sees 15 digits
        x = mpmath.mpf(points[-1]["order_parameters"]["x"])
        assert abs(x - mpmath.mpf(1) / 2) < mpmath.mpf(10) ** -19, x
    monkeypatch.setattr(first_order, "HALVINGS", 0)
    code, out, err = run(capsys, *argv[:-1])
    assert code == 3 and "lost at a = 1/2" in err and "halved 0 times" in out, (code, out, err)


def test_first_order_needs_a_free_energy(files, capsys):
    code, out, err = run(capsys, "transition", "--model", str(files / "hyperbola.py"), "--kind",
                         "first-order", "--vary", "a", "--between", "1,2", "--b", "1",
                         "--branch", "one:x=1", "--branch", "two:x=2")
    assert code == 2 and "--quantity" in err and "no free energy" in err
    assert len(err.strip().splitlines()) == 1


OVERFLOW = """
import sympy
from replica.modeling import FixedPointModel, Parameter
a = sympy.Symbol("a", positive=True)
x = sympy.Symbol("x", positive=True)
MODEL = FixedPointModel("overflow", residuals=[x - a], unknowns=[x],
                        parameters=[Parameter("a", "a")],
                        observables={"y": sympy.log(sympy.exp(x) + 1)}, start={x: 1})
"""


def test_level_scan_solves_in_mpmath_where_float64_cannot(tmp_path, capsys):
    """y = log(e^a + 1) overflows float64 beyond a = 709.78: the scan's points there are
    solved in mpmath, so the level y = 740 (a = log(e^740 - 1), 740 to 300 digits) is
    bracketed and located."""
    path = tmp_path / "overflow.py"
    path.write_text(textwrap.dedent(OVERFLOW))
    code, out, err = run(capsys, "transition", "--model", str(path), "--kind", "level",
                         "--quantity", "y", "--level", "740", "--vary", "a", "--between",
                         "600,800", "--points", "9", "--dps", "20", "--json")
    assert code == 0, err
    data = json.loads(out)
    with mpmath.workdps(30):
        assert abs(mpmath.mpf(data["location"]) - 740) < mpmath.mpf(10) ** -17
    assert "solved at 15 digits in mpmath" in data["method"]
