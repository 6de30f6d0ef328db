"""The command-line contract for `replica solve alignment|isotropic`."""

import json

import mpmath
import numpy as np
import pytest

ALIGN = ["solve", "alignment", "--alpha", "2", "--tau", "4", "--kappa", "2", "--rho", "0.01",
         "--d", "120", "--train", "piano", "--test", "piano"]
ISO = ["solve", "isotropic", "--alpha", "2", "--tau", "1/2", "--kappa", "1/2", "--rho", "0.01"]


def test_alignment_json_contract(cli):
    rc, out, err = cli(*ALIGN, "--dps", "40", "--json")
    assert rc == 0, err
    data = json.loads(out)
    for key in ("model", "params", "dps", "digits", "converged", "residual", "condition", "notes",
                "errors", "intermediates", "measures"):
        assert key in data
    assert data["model"] == "alignment" and data["dps"] == 40 and data["converged"] is True
    assert data["params"]["rho"] == "1/100" and data["params"]["alpha"] == "2"
    assert set(data["errors"]) == {"e_icl", "e_scalar", "e_misalign", "e_idg", "e_tm"}
    assert set(data["intermediates"]) == {"q", "sigma", "lambda_tilde", "M", "M_prime"}
    assert set(data["measures"]) == {"e_misalign", "resolvent", "inverse", "cka_inv"}
    assert all(isinstance(v, str) for v in data["errors"].values())
    assert data["digits"] >= 38
    assert any("derived for every C_train" in n for n in data["notes"])
    # values are decimal strings with the guaranteed digits
    with mpmath.workdps(50):
        q = mpmath.mpf(data["intermediates"]["q"])
        assert abs(q - mpmath.mpf("0.0929626003")) < 1e-10
    assert len(data["intermediates"]["q"].replace("0.0", "").replace(".", "")) >= 38


@pytest.mark.slow
def test_isotropic_json_and_text(cli):
    rc, out, err = cli(*ISO, "--json")
    assert rc == 0, err
    data = json.loads(out)
    assert data["model"] == "isotropic" and "measures" not in data
    assert float(data["intermediates"]["lambda_tilde"]) > 0
    rc, out, err = cli(*ISO)
    assert rc == 0 and "e_icl" in out and "digits guaranteed" in out


@pytest.mark.slow
def test_kappa_inf_and_fraction_input(cli):
    rc, out, _ = cli("solve", "isotropic", "--alpha", "3", "--tau", "2", "--kappa", "inf",
                     "--rho", "1/10", "--json")
    assert rc == 0 and json.loads(out)["params"]["kappa"] == "inf"


BAD = [
    (["--alpha", "-1"], "--alpha"),
    (["--alpha", "two"], "--alpha"),
    (["--kappa", "0"], "--kappa"),
    (["--rho", "-0.1"], "--rho"),
    (["--lam", "-1"], "--lam"),
    (["--tau", "1"], "--tau"),
    (["--tau", "0"], "--tau"),
    (["--dps", "abc"], "--dps"),
]


@pytest.mark.slow
@pytest.mark.parametrize("override,name", BAD)
def test_bad_input_one_line_exit_2(cli, override, name):
    args = list(ISO)
    flag = override[0]
    if flag in args:
        i = args.index(flag)
        args[i + 1] = override[1]
    else:
        args += override
    rc, out, err = cli(*args)
    assert rc == 2
    assert "Traceback" not in err and err.count("\n") == 1 and name in err


@pytest.mark.parametrize("train,test,name,fragment", [
    ("piano", "spike:121", "--test", "outside"),
    ("piano", "spike:0", "--test", "outside"),
    ("lowrank:0.001", "identity", "--train", "rank"),
    ("powerlaw:x", "identity", "--train", "powerlaw"),
    ("banana", "identity", "--train", "unknown"),
])
def test_bad_covariance_specs(cli, train, test, name, fragment):
    args = list(ALIGN)
    args[args.index("--train") + 1] = train
    args[args.index("--test") + 1] = test
    rc, _, err = cli(*args)
    assert rc == 2 and name in err and fragment in err and "Traceback" not in err
    assert err.count("\n") == 1


def test_non_psd_and_wrong_size_matrix_files(cli, tmp_path):
    bad = np.array([[1.0, 2.0], [2.0, 1.0]])  # eigenvalues 3, -1
    np.save(tmp_path / "bad.npy", bad)
    args = [*ALIGN[:ALIGN.index("--d")], "--d", "2", "--train", f"file:{tmp_path}/bad.npy",
            "--test", "identity"]
    rc, _, err = cli(*args)
    assert rc == 2 and "positive semi-definite" in err and "Traceback" not in err
    (tmp_path / "ev.txt").write_text("3 2 1\n")
    args = [*ALIGN[:ALIGN.index("--d")], "--d", "4", "--train", f"file:{tmp_path}/ev.txt",
            "--test", "identity"]
    rc, _, err = cli(*args)
    assert rc == 2 and "expected d = 4" in err
    (tmp_path / "asym.txt").write_text("1 0\n1 1\n")
    args[args.index("--d") + 1] = "2"
    args[args.index("--train") + 1] = f"file:{tmp_path}/asym.txt"
    rc, _, err = cli(*args)
    assert rc == 2 and "symmetric" in err


@pytest.mark.slow
def test_text_file_eigenvalues_are_exact(cli, tmp_path):
    (tmp_path / "ev.txt").write_text("# piano d=4\n4 3 2 1\n")
    a = cli(*ALIGN[:ALIGN.index("--d")], "--d", "4", "--train", f"file:{tmp_path}/ev.txt",
            "--test", "spike:1", "--json")
    b = cli(*ALIGN[:ALIGN.index("--d")], "--d", "4", "--train", "piano", "--test", "spike:1",
            "--json")
    assert a[0] == 0 and b[0] == 0
    assert json.loads(a[1])["errors"] == json.loads(b[1])["errors"]


def test_missing_required_and_help(cli):
    rc, _, err = cli("solve", "alignment", "--alpha", "2")
    assert rc == 2 and err.count("\n") == 1
    rc, out, _ = cli("solve", "alignment", "--help")
    assert rc == 0 and "variance" in out and "--train" in out


def test_python_api_errors_are_typed():
    import replica
    from replica.errors import ParameterError

    with pytest.raises(ParameterError, match="--kappa"):
        replica.solve("isotropic", alpha=1, tau=2, kappa=-1, rho=0)
    with pytest.raises(ParameterError, match="model"):
        replica.solve("nosuch")
    r = replica.solve("isotropic", alpha=1, tau=2, kappa=1, rho=0, dps=20)
    assert r.converged and r.digits >= 18 and r.iterations >= 0
