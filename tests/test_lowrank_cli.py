"""``replica solve lowrank``: the JSON contract and one-line errors."""

import json

import pytest
import replica

ORDER = "q m chi qbar chibar qhat mhat chihat qbarhat chibarhat z mbar m0 q0 q_perp".split()
PARTS = ["signal", "memorization", "structural", "noise"]
BASE = ["solve", "lowrank", "--alpha", "2", "--tau", "2.25", "--kappa", "1.5", "--rho", "0.9",
        "--sigma", "0.3"]


@pytest.mark.slow
def test_json_contract(cli):
    rc, out, err = cli(*BASE, "--dps", "20", "--json")
    assert rc == 0, err
    data = json.loads(out)
    assert data["model"] == "lowrank"
    assert data["params"] == {"alpha": "2", "tau": "9/4", "kappa": "3/2", "rho": "9/10",
                              "sigma": "3/10", "lam": "0", "alpha_test": "2",
                              "sigma_test": "0", "test": "idg"}
    assert data["dps"] == 20 and data["digits"] == 20 and data["converged"] is True
    assert "re-solve" in data["digits_how"]
    assert isinstance(data["residual"], str) and isinstance(data["condition"], str)
    assert list(data["order_parameters"]) == ORDER
    assert list(data["errors"]) == ["tm", "idg", "odg", "test"]
    assert data["errors"]["test"] == data["errors"]["idg"]  # the default test law is IDG
    assert set(data["decomposition"]) == {"tm", "idg", "odg", "test"}
    for prot, parts in data["decomposition"].items():
        assert list(parts) == PARTS
        assert all(isinstance(v, str) for v in parts.values())
        total = sum(float(v) for v in parts.values())
        assert abs(total - float(data["errors"][prot])) < 1e-15
    assert all(isinstance(v, str) for v in data["order_parameters"].values())
    assert data["errors"]["tm"].startswith("0.55040616045")
    assert any("INFERRED" in n for n in data["notes"])
    assert any("rank ratio" in n for n in data["notes"])


@pytest.mark.slow
def test_kappa_inf_and_test_conditions(cli):
    rc, out, err = cli(*BASE[:7], "inf", *BASE[8:], "--alpha-test", "4", "--sigma-test", "0.5",
                       "--dps", "15", "--json")
    assert rc == 0, err
    data = json.loads(out)
    assert data["params"]["kappa"] == "inf" and data["params"]["alpha_test"] == "4"
    assert float(data["decomposition"]["idg"]["noise"]) == 0.25


def test_human_readable_output(cli):
    rc, out, err = cli(*BASE, "--lam", "0.1", "--dps", "15")
    assert rc == 0, err
    assert "order_parameters" in out and "decomposition" in out and "idg" in out


def test_help_says_rho_is_the_rank_ratio(cli):
    rc, out, err = cli("solve", "lowrank", "--help")
    assert rc == 0
    text = " ".join(out.split())
    assert "RANK RATIO" in text and "STANDARD DEVIATION" in text


@pytest.mark.slow
@pytest.mark.parametrize("change,name", [
    (("--rho", "0"), "--rho"), (("--rho", "1.5"), "--rho"), (("--sigma", "-1"), "--sigma"),
    (("--kappa", "0"), "--kappa"), (("--lam", "-0.1"), "--lam"), (("--tau", "0"), "--tau"),
    (("--alpha", "-1"), "--alpha"), (("--alpha", "two"), "--alpha"),
    (("--tau", "0.5"), "--lam"), (("--tau", "1"), "--tau"), (("--dps", "x"), "--dps"),
])
def test_bad_input_exits_2_with_one_line(cli, change, name):
    args = list(BASE)
    i = args.index(change[0]) if change[0] in args else None
    if i is None:
        args += list(change)
    else:
        args[i + 1] = change[1]
    rc, out, err = cli(*args)
    assert rc == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err
    assert name in lines[0]
    if change == ("--tau", "0.5"):
        assert "no admissible solution" in lines[0] and "--lam > 0" in lines[0]


def test_kappa_inf_with_ridge_is_a_clear_error(cli):
    args = list(BASE)
    args[args.index("--kappa") + 1] = "inf"
    rc, out, err = cli(*args, "--lam", "1")
    assert rc == 2 and "--lam" in err and len(err.strip().splitlines()) == 1


def test_float64_nonconvergence_is_a_convergence_error():
    from replica.errors import ConvergenceError

    with pytest.raises(ConvergenceError, match="tried"):
        replica.solve_float64("lowrank", alpha=2.0, tau=2.25, kappa=1.5, rho=0.9, sigma=0.3,
                              method="damped", maxiter=3)
    out = replica.solve_float64("lowrank", alpha=2.0, tau=2.25, kappa=1.5, rho=0.9, sigma=0.3,
                                method="damped", maxiter=3, strict=False)
    assert not bool(out["converged"]) and out["tm"] != out["tm"]  # NaN, flagged


@pytest.mark.slow
def test_generated_code_cache_gives_identical_results(tmp_path):
    """The disk cache of generated evaluator code (REPLICA_LAMBDIFY_CACHE) is transparent: a
    fresh generation and a load from the cache print identical JSON."""
    import os
    import subprocess
    import sys

    from conftest import REPO

    def run(setting):
        env = dict(os.environ, REPLICA_LAMBDIFY_CACHE=setting)
        proc = subprocess.run([sys.executable, "-m", "replica.cli", *BASE, "--lam", "0.1",
                               "--dps", "25", "--json"], capture_output=True, text=True,
                              env=env, cwd=REPO, timeout=300)
        assert proc.returncode == 0, proc.stderr
        return json.loads(proc.stdout)

    folder = str(tmp_path / "cache")
    fresh = run(folder)
    assert any(name.startswith("lowrank-") for name in os.listdir(folder))
    cached = run(folder)
    for key in ("order_parameters", "errors", "decomposition", "digits"):
        assert fresh[key] == cached[key]
