"""`replica simulate` and `replica check`: JSON contract, readable output, bad input."""

from __future__ import annotations

import csv
import json
import subprocess
import sys

import pytest

from replica.cli import main
from replica.simulate.report import run_check, write_report

ISO = ["--alpha", "2", "--tau", "3", "--kappa", "1", "--rho", "0.01"]
LOW = ["--alpha", "2", "--tau", "2.25", "--kappa", "1.5", "--rho", "0.75", "--sigma", "0.3"]


def _json(capsys, argv):
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


def _check_estimate(obj, seeds):
    assert set(obj) == {"mean", "sem", "seeds", "theory", "z"}
    assert obj["seeds"] == seeds
    for k in ("mean", "sem", "theory", "z"):
        assert isinstance(obj[k], str)
        float(obj[k])
    z = (float(obj["mean"]) - float(obj["theory"])) / float(obj["sem"])
    assert z == pytest.approx(float(obj["z"]))


def test_simulate_isotropic_json(capsys):
    data = _json(capsys, ["simulate", "isotropic"] + ISO + ["--d", "8", "--seeds", "3",
                                                            "--seed", "4", "--json"])
    assert data["model"] == "isotropic" and data["d"] == 8 and data["seed"] == 4
    assert data["params"] == {"alpha": "2", "tau": "3", "kappa": "1", "rho": "1/100", "lam": "0"}
    assert set(data["errors"]) == {"e_icl", "e_idg"}
    for obj in data["errors"].values():
        _check_estimate(obj, 3)
    assert data["sizes"] == {"ell": 16, "n": 192, "k": 8, "ell_test": 16, "P": 72}
    again = _json(capsys, ["simulate", "isotropic"] + ISO + ["--d", "8", "--seeds", "3",
                                                             "--seed", "4", "--json"])
    assert again["errors"] == data["errors"]  # reproducible


def test_simulate_lowrank_json_has_order_parameters(capsys):
    data = _json(capsys, ["simulate", "lowrank"] + LOW + ["--d", "8", "--seeds", "2", "--json",
                                                          "--dps", "20"])
    assert set(data["errors"]) == {"tm", "idg", "odg", "test"}
    assert data["params"]["test"] == "idg"
    assert data["errors"]["test"]["mean"] == data["errors"]["idg"]["mean"]
    assert set(data["order_parameters"]) == {"q", "m", "qbar", "mbar", "q0", "m0"}
    for group in ("errors", "order_parameters"):
        for obj in data[group].values():
            _check_estimate(obj, 2)
    assert data["errors"]["tm"]["theory"].startswith("0.50")


def test_simulate_alignment_table_and_notes(capsys):
    assert main(["simulate", "alignment", "--alpha", "2", "--tau", "4", "--kappa", "0.3",
                 "--rho", "0.01", "--d", "10", "--train", "piano", "--test", "spike:1",
                 "--seeds", "2"]) == 0
    out = capsys.readouterr().out
    assert "e_icl" in out and "e_idg" in out and "theory" in out
    assert "realised" not in out  # k = 3, l = 20, n = 400: exact at d = 10
    assert main(["simulate", "alignment", "--alpha", "2", "--tau", "4", "--kappa", "0.25",
                 "--rho", "0.01", "--d", "10", "--train", "piano", "--test", "identity",
                 "--seeds", "1", "--no-theory", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["errors"]["e_icl"]["sem"] is None and data["errors"]["e_icl"]["z"] is None
    assert any("realised as 1/5" in n for n in data["notes"])  # k = int(2.5) = 2


def test_simulate_isotropic_paper_b_options(capsys):
    data = _json(capsys, ["simulate", "isotropic"] + ISO + [
        "--d", "8", "--seeds", "2", "--task-law", "sphere", "--balanced", "--json",
        "--test-prompts", "2000", "--sampler", "direct", "--solver", "dual"])
    assert data["options"] == {"task_law": "sphere", "balanced": True, "sampler": "direct",
                               "solver": "dual", "test_prompts": 2000}


@pytest.mark.parametrize("argv, name", [
    (["isotropic"] + ISO + ["--d", "0", "--seeds", "2"], "--d"),
    (["isotropic"] + ISO + ["--d", "8", "--seeds", "0"], "--seeds"),
    (["isotropic"] + ISO + ["--d", "8", "--seeds", "two"], "--seeds"),
    (["isotropic", "--alpha", "abc", "--tau", "3", "--kappa", "1", "--rho", "0",
      "--d", "8", "--seeds", "2"], "--alpha"),
    (["isotropic", "--alpha", "1", "--tau", "1", "--kappa", "1", "--rho", "0",
      "--d", "8", "--seeds", "2"], "--tau"),
    (["lowrank", "--alpha", "1", "--tau", "2", "--kappa", "1", "--rho", "2", "--sigma", "0",
      "--d", "8", "--seeds", "2"], "--rho"),
    (["lowrank", "--alpha", "1", "--tau", "2", "--kappa", "inf", "--rho", "0.5", "--sigma",
      "0", "--d", "8", "--seeds", "2"], "--kappa"),
    (["alignment"] + ISO + ["--d", "8", "--train", "piano", "--test", "spike:9",
                            "--seeds", "2"], "--test"),
    (["isotropic"] + ISO + ["--d", "8", "--seeds", "2", "--test-prompts", "1"],
     "--test-prompts"),
])
def test_simulate_bad_input_is_one_line_exit_2(capsys, argv, name):
    assert main(["simulate"] + argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("replica: error: ") and name in err[0]


def test_simulate_subprocess_bad_input_has_no_traceback():
    proc = subprocess.run([sys.executable, "-m", "replica.cli", "simulate", "lowrank", "--alpha",
                           "1", "--tau", "2", "--kappa", "1", "--rho", "0.5", "--sigma", "-1",
                           "--d", "8", "--seeds", "2"], capture_output=True, text=True)
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "--sigma" in proc.stderr
    assert "Traceback" not in proc.stderr


@pytest.mark.slow
def test_check_report_files(tmp_path, capsys):
    out = tmp_path / "report"
    assert main(["check", "isotropic", "--alpha", "1,2", "--tau", "3", "--kappa", "1",
                 "--rho", "0.01", "--ds", "6,8", "--seeds", "3", "--line-points", "5",
                 "--cache", str(tmp_path / "cache"), "--workers", "1", "--no-progress",
                 "-o", str(out)]) == 0
    assert "largest |z|" in capsys.readouterr().out
    rows = list(csv.DictReader((out / "check.csv").open()))
    assert len(rows) == 2 * 2 * 2  # alpha values x d x errors
    # the varied parameter as floats (what pandas reads as numbers) and exactly
    assert [r["alpha"] for r in rows[::4]] == ["1.0", "2.0"]
    assert [r["alpha_exact"] for r in rows[::4]] == ["1", "2"]
    assert {r["key"] for r in rows} == {"e_icl", "e_idg"}
    assert all(float(r["theory"]) > 0 and r["z"] for r in rows)
    md = (out / "check.md").read_text()
    assert "| alpha | d |" in md and "e_icl" in md
    png = (out / "check.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 10_000


@pytest.mark.slow
def test_check_api_lowrank_single_point(tmp_path):
    rep = run_check("lowrank", [dict(alpha="2", tau="2.25", kappa="1.5", rho="0.75",
                                     sigma="0.3")], [8, 12], seeds=3, dps=20,
                    executor="serial", progress=False)
    assert rep.varied is None and rep.line == {}
    assert {r.key for r in rep.rows} == {"tm", "idg", "odg", "test", "q", "m", "qbar", "mbar",
                                         "q0", "m0"}
    assert all(r.theory is not None for r in rep.rows)
    files = write_report(rep, tmp_path)
    assert [f.name for f in files] == ["check.csv", "check.md", "check.png", "check.pdf",
                                       "check.svg"]


def test_check_two_varied_parameters_is_an_error(tmp_path, capsys):
    assert main(["check", "isotropic", "--alpha", "1,2", "--tau", "3,4", "--kappa", "1",
                 "--rho", "0.01", "--ds", "6", "--seeds", "2", "--cache", "none",
                 "-o", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "at most one parameter" in err and err.count("\n") == 1


@pytest.mark.slow
def test_check_with_a_spec_as_the_varied_parameter(tmp_path):
    rep = run_check("alignment", [dict(alpha="2", tau="4", kappa="1", rho="0.01", train="piano",
                                       test=t) for t in ("identity", "spike:1")], [6, 8],
                    seeds=2, dps=20, executor="serial", progress=False)
    assert rep.varied == "test" and rep.line == {"x": []}
    assert {r.x for r in rep.rows} == {"identity", "spike:1"}
    files = write_report(rep, tmp_path)
    assert files[-1].stat().st_size > 10_000
