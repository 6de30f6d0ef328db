"""Freeze the outputs of ``replica solve`` at the golden points and the README examples.

Run once on a trusted version (``python tests/regression/freeze.py``); it writes
``solve_outputs.json`` beside this file, which ``tests/test_regression.py`` compares against.
Each case is a ``replica solve`` argument list; the frozen record is its JSON output.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import sys

CASES = {
    # README examples
    "readme_alignment": ["solve", "alignment", "--alpha", "2", "--tau", "4", "--kappa", "2",
                         "--rho", "0.01", "--d", "120", "--train", "piano", "--test", "spike:1",
                         "--dps", "50"],
    "readme_isotropic": ["solve", "isotropic", "--alpha", "2", "--tau", "1/2", "--kappa", "1/2",
                         "--rho", "0.01"],
    "readme_lowrank": ["solve", "lowrank", "--alpha", "2", "--tau", "9/4", "--kappa", "3/2",
                       "--rho", "0.9", "--sigma", "0.3", "--dps", "50"],
    # low-rank golden points (alpha, tau, kappa, lam, sigma, rho)
    "lowrank_golden_1": ["solve", "lowrank", "--alpha", "2", "--tau", "2.25", "--kappa", "1.5",
                         "--lam", "0", "--sigma", "0.3", "--rho", "0.9"],
    "lowrank_golden_2": ["solve", "lowrank", "--alpha", "2.3", "--tau", "1.7", "--kappa", "1.0",
                         "--lam", "3.0", "--sigma", "0.003", "--rho", "0.2"],
    "lowrank_golden_3": ["solve", "lowrank", "--alpha", "1", "--tau", "0.5", "--kappa", "0.5",
                         "--lam", "0.1", "--sigma", "0.5", "--rho", "0.3"],
    "lowrank_kappa_inf": ["solve", "lowrank", "--alpha", "3", "--tau", "2", "--kappa", "inf",
                          "--rho", "1/2", "--sigma", "0.1"],
    "lowrank_test_shift": ["solve", "lowrank", "--alpha", "2", "--tau", "9/4", "--kappa", "1/2",
                           "--rho", "0.9", "--sigma", "0.3", "--lam", "1/10", "--alpha-test", "5",
                           "--sigma-test", "0.2", "--dps", "40"],
    # alignment golden point (piano, d = 120) and other regimes
    "alignment_piano_golden": ["solve", "alignment", "--alpha", "2", "--tau", "4", "--kappa", "2",
                               "--rho", "0.01", "--d", "120", "--train", "piano", "--test",
                               "piano"],
    "alignment_ridgeless_tau_lt_1": ["solve", "alignment", "--alpha", "2", "--tau", "1/2",
                                     "--kappa", "1/2", "--rho", "0.01", "--d", "40", "--train",
                                     "powerlaw:0.9", "--test", "spike:3"],
    "alignment_ridge": ["solve", "alignment", "--alpha", "3", "--tau", "2", "--kappa", "3/2",
                        "--rho", "0.1", "--lam", "0.01", "--d", "30", "--train", "lowrank:1/2",
                        "--test", "identity", "--alpha-test", "4"],
    "alignment_kappa_inf": ["solve", "alignment", "--alpha", "2", "--tau", "4", "--kappa", "inf",
                            "--rho", "0.01", "--d", "20", "--train", "piano", "--test",
                            "identity", "--dps", "40"],
    # isotropic regimes
    "isotropic_tau_gt_1": ["solve", "isotropic", "--alpha", "2", "--tau", "4", "--kappa", "1/2",
                           "--rho", "1/100"],
    "isotropic_ridge": ["solve", "isotropic", "--alpha", "10", "--tau", "3/2", "--kappa", "2",
                        "--rho", "0.01", "--lam", "0.001", "--dps", "40"],
    "isotropic_kappa_inf": ["solve", "isotropic", "--alpha", "5", "--tau", "2", "--kappa", "inf",
                            "--rho", "0.1"],
}


def run(argv) -> dict:
    from replica.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        status = main(list(argv) + ["--json"])
    if status != 0:
        raise SystemExit(f"{argv}: exit status {status}")
    return json.loads(out.getvalue())


def main() -> None:
    records = {name: {"argv": argv, "output": run(argv)} for name, argv in CASES.items()}
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "solve_outputs.json")
    with open(path, "w") as fh:
        json.dump(records, fh, indent=1, sort_keys=True)
        fh.write("\n")
    sys.stdout.write(f"wrote {len(records)} cases to {path}\n")


if __name__ == "__main__":
    main()
