"""``make demo`` (``python -m replica.demo``): a quick run writes every part and reports it."""

from __future__ import annotations

import csv
import os
import subprocess
import sys

import pytest

from replica import demo

pytestmark = pytest.mark.slow  # runs the quick demo end to end (about a minute)

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture(scope="module")
def quick_demo(tmp_path_factory):
    out = str(tmp_path_factory.mktemp("demo"))
    proc = subprocess.run([sys.executable, "-m", "replica.demo", "--quick", "--out", out,
                           "--notebooks", "a3_alignment_measures"], capture_output=True,
                          text=True, cwd=REPO, timeout=900)
    return out, proc


def test_quick_demo_succeeds_and_lists_its_files(quick_demo):
    out, proc = quick_demo
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    for i, step in enumerate(demo.STEPS, 1):
        assert f"[{i}/{len(demo.STEPS) + 1}] {step}" in proc.stdout
    listed = [ln.strip() for ln in proc.stdout.split("wrote")[-1].splitlines()
              if ln.startswith("  ")]
    assert listed and all(os.path.isfile(p) for p in listed)
    for rel in ("summary.txt", "transitions.csv", "derivation_checks.csv",
                "appendices/alignment.tex", "phase_diagrams/alignment_specialisation.png",
                "phase_diagrams/isotropic_nonmonotone_e_icl_tau0.5.png",
                "figures/a3_alignment_measures.png", "figures/a3_alignment_measures_spearman.csv",
                "models/ridge_regression_equations.tex", "models/appendix/ridge-regression.tex",
                "models/ridge_regression_test_alpha_lam.png"):
        assert os.path.join(out, rel) in listed, rel


def test_quick_demo_contents(quick_demo):
    out, _ = quick_demo
    with open(os.path.join(out, "derivation_checks.csv")) as fh:
        checks = list(csv.DictReader(fh))
    assert {"alignment"} <= {r["derivation"] for r in checks}
    assert all(r["passed"] == "True" for r in checks)
    with open(os.path.join(out, "transitions.csv")) as fh:
        tr = list(csv.DictReader(fh))
    sharp = {r["transition"]: float(r["value"]) for r in tr if r["alpha"] == "inf"}
    expected = {"alignment": 0.5, "isotropic (paper B)": 1.0, "lowrank": 0.5}
    for label, value in sharp.items():
        key = next(k for k in expected if label.startswith(k))
        assert abs(value - expected[key]) < 1e-5, label
    for r in tr:
        if r["alpha"] == "100":  # the finite-alpha crossover lies below the sharp transition
            assert float(r["value"]) < sharp[r["transition"]]
    summary = open(os.path.join(out, "summary.txt")).read()
    assert "FAILURES" not in summary
    for gold in ("0.5504061604", "0.1593966135", "0.7084030437"):  # golden points of the authors' code
        assert gold in summary
    # the model files: ridge regression's Marchenko-Pastur value and its double-descent peak
    assert "0.44266454647306691891" in summary and "0.99362749950664536" in summary


def test_demo_functions_and_bad_notebook_name(tmp_path, capsys):
    text = demo.alignment_section(20)
    assert "piano, test=train, kappa=2" in text and "A agrees" in text
    text, fails = demo.lowrank_section(20)
    assert fails == [] and "golden 3" in text
    assert demo.notebook_names() and "_common" not in demo.notebook_names()
    rc = demo.main(["--out", str(tmp_path), "--skip", "derive", "--skip", "solve", "--skip",
                    "transitions", "--skip", "appendix", "--skip", "phase", "--notebooks",
                    "no_such_notebook"])
    assert rc == 1
    assert "unknown notebooks: no_such_notebook" in capsys.readouterr().out
    assert "FAILURES" in (tmp_path / "summary.txt").read_text()
