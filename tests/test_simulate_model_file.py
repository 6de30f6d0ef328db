"""A model file's declared simulation (``SIMULATION = Simulation(sample, train, measure)``) in
``replica simulate``, ``sweep`` and ``check``: agreement with the theory, seeds, the one-line
error of a model without a simulation, and sweeps of a model file that cache (keyed on the file's
contents), resume after a killed run and run on local processes and Dask."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time

import mpmath
import pytest

from conftest import REPO
from replica.cli import main
from replica.simulate import sweep
from replica.simulate.source import ModelSource

RIDGE = os.path.join(REPO, "examples", "ridge_regression.py")
NO_SIMULATION = os.path.join(REPO, "examples", "lowrank_partial_overlap.py")
ACCEPTANCE = ["simulate", "--model", RIDGE, "--alpha", "2", "--lam", "1/10", "--sigma", "1/2",
              "--d", "200", "--seeds", "4", "--json"]
POINT = {"alpha": "2", "lam": "1/10", "sigma": "1/2"}


def marchenko_pastur_test_error(alpha, lam, sigma):
    r"""The ridge test error with C = I from random-matrix theory alone (independent of the
    replica solve): :math:`\sigma^2 + \lambda^2 G'(-\lambda) + \sigma^2(G - \lambda G')`, with
    :math:`G(z) = s(z/\alpha)/\alpha` and :math:`s` the Marchenko--Pastur transform of ratio
    :math:`1/\alpha` (as in ``tests/test_model_files.py``)."""
    g = 1 / alpha

    def G(z):
        z = z / alpha
        return ((1 - g - z) - mpmath.sqrt((1 - g - z) ** 2 - 4 * g * z)) / (2 * g * z) / alpha

    G0, G1 = G(-lam), mpmath.diff(G, -lam)
    return sigma**2 + lam**2 * G1 + sigma**2 * (G0 - lam * G1)


def agrees_within_error_bar(estimate: dict, sigmas: float = 3.0) -> bool:
    """The simulated mean lies within ``sigmas`` standard errors of the theory."""
    mean, sem, theory = (float(estimate[k]) for k in ("mean", "sem", "theory"))
    return abs(mean - theory) <= sigmas * sem


def _acceptance(capsys, argv=ACCEPTANCE):
    rc = main(list(argv))
    out = capsys.readouterr().out
    assert rc == 0
    return json.loads(out)


def test_acceptance_mean_agrees_with_the_theory(capsys):
    data = _acceptance(capsys)
    assert data["model"] == "ridge_regression" and data["d"] == 200 and data["seeds"] == 4
    assert data["sizes"] == {"n": 400} and data["theory_dps"] == 30
    assert set(data["errors"]) == {"test", "train"}
    for key, est in data["errors"].items():
        assert est["seeds"] == 4 and float(est["sem"]) > 0
        assert agrees_within_error_bar(est), (key, est)
        assert float(est["z"]) == pytest.approx(
            (float(est["mean"]) - float(est["theory"])) / float(est["sem"]))
    # the theory is the model's own value, which random-matrix theory confirms
    with mpmath.workdps(30):
        ref = marchenko_pastur_test_error(mpmath.mpf(2), mpmath.mpf(1) / 10, mpmath.mpf(1) / 2)
    assert float(data["errors"]["test"]["theory"]) == pytest.approx(float(ref), rel=1e-14)


def _variant(tmp_path, old: str, new: str) -> str:
    text = open(RIDGE).read()
    assert old in text
    path = tmp_path / "ridge_variant.py"
    path.write_text(text.replace(old, new))
    return str(path)


def test_a_biased_simulation_fails_the_agreement(tmp_path, capsys):
    """The agreement test can fail: a simulation measuring the test error with one noise
    variance too many lies many standard errors from the theory."""
    biased = _variant(tmp_path, "test = float(params.sigma) ** 2 + ",
                      "test = 2 * float(params.sigma) ** 2 + ")
    argv = [biased if a == RIDGE else a for a in ACCEPTANCE]
    data = _acceptance(capsys, argv)
    assert not agrees_within_error_bar(data["errors"]["test"])
    assert agrees_within_error_bar(data["errors"]["train"])


def test_a_measured_name_the_theory_does_not_report_is_one_line(tmp_path, capsys, monkeypatch):
    # (progress lines appear on stderr when the simulation takes over 2 s on a loaded machine;
    # the error itself must still be the only other line)
    monkeypatch.setenv("REPLICA_QUIET", "1")
    wrong = _variant(tmp_path, 'return {"test": test', 'return {"tset": test')
    argv = [wrong if a == RIDGE else a for a in ACCEPTANCE]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "'tset'" in err[0] and "does not report" in err[0]


def test_a_model_without_simulation_is_one_line_exit_2(tmp_path, capsys):
    rc = main(["simulate", "--model", NO_SIMULATION, "--alpha", "2", "--d", "10", "--seeds", "2"])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1
    assert "declares no SIMULATION" in err[0] and "Simulation(sample, train, measure)" in err[0]
    for command in (["sweep", "--seeds", "2", "--ds", "8", "-o", str(tmp_path / "x.csv"),
                     "--cache", "none"],
                    ["check", "--ds", "8", "-o", str(tmp_path / "x"), "--cache", "none"]):
        rc = main([command[0], "--model", NO_SIMULATION, *command[1:]])
        err = capsys.readouterr().err.strip().splitlines()
        assert rc == 2 and len(err) == 1 and "declares no SIMULATION" in err[0], err


def test_seeds_are_reproducible_and_shared_between_runs():
    from replica.simulate import simulate

    source = ModelSource("ridge_regression", RIDGE)
    a = simulate(source, 40, seeds=3, seed=5, with_theory=False, **POINT)
    b = simulate(source, 40, seeds=3, seed=5, with_theory=False, **POINT)
    c = simulate(source, 40, seeds=2, seed=5, with_theory=False, **POINT)
    assert a.per_seed == b.per_seed  # bit for bit
    assert a.per_seed[:2] == c.per_seed  # seed i is SeedSequence(S).spawn(N)[i] for any N
    d = simulate(source, 40, seeds=2, seed=6, with_theory=False, **POINT)
    assert d.per_seed != c.per_seed


def _jobs(path=RIDGE, seeds=3, ds=(30, 40)):
    points = sweep.expand_grid({"alpha": ["2", "3"], "lam": "1/10", "sigma": "1/2"})
    return sweep.make_jobs(ModelSource("ridge_regression", path), points, ds, seeds, seed=2,
                           dps=15)


def test_sweep_of_a_model_file_caches_on_its_contents(tmp_path):
    copy = tmp_path / "ridge.py"
    shutil.copy(RIDGE, copy)
    jobs = _jobs(str(copy))
    assert len(jobs) == 2 * 2 * 3 + 2 * 2  # the theory depends on d (the model's parameter d)
    first = sweep.run_jobs(jobs, tmp_path / "c", executor="serial", progress=False)
    assert first.computed == len(jobs) and first.cached == 0
    again = sweep.run_jobs(jobs, tmp_path / "c", executor="serial", progress=False)
    assert again.computed == 0 and again.cached == len(jobs)
    assert again.results == first.results
    # the same file under its contents: a changed file is a new key, computed again
    with open(copy, "a") as fh:
        fh.write("\n# an edit\n")
    changed = sweep.run_jobs(jobs, tmp_path / "c", executor="serial", progress=False)
    assert changed.computed == len(jobs)
    table = sweep.sweep_table(ModelSource("ridge_regression", str(copy)), jobs, first)
    rows = table.rows
    assert len(rows) == 4 and "test_theory" in table.header and "test_z" in table.header


@pytest.mark.slow
def test_sweep_of_a_model_file_on_two_workers_matches_serial(tmp_path):
    jobs = _jobs(seeds=2, ds=(30,))
    serial = sweep.run_jobs(jobs, None, executor="serial", progress=False)
    procs = sweep.run_jobs(jobs, tmp_path, executor="process", workers=2, progress=False)
    assert procs.computed == len(jobs)
    assert serial.results.keys() == procs.results.keys()
    for job, res in serial.results.items():
        other = procs.results[job]
        if job.kind == "theory":
            assert other == res
        else:  # the workers' BLAS may sum in another order
            for k, v in res["errors"].items():
                assert float(other["errors"][k]) == pytest.approx(float(v), rel=1e-10)


def test_sweep_of_a_model_file_on_dask_matches_serial(tmp_path):
    distributed = pytest.importorskip("distributed")
    jobs = _jobs(seeds=2, ds=(30,))
    serial = sweep.run_jobs(jobs, None, executor="serial", progress=False)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                                  protocol="tcp://", host="127.0.0.1",
                                  dashboard_address=None) as cluster:
        run = sweep.run_jobs(jobs, tmp_path, executor="dask",
                             scheduler=cluster.scheduler_address, progress=False)
    assert run.computed == len(jobs) and run.results == serial.results


def _sweep_argv(tmp_path, out, extra=()):
    return ["sweep", "--model", RIDGE, "--alpha", "2", "--lam", "1/10", "--sigma", "1/2",
            "--ds", "700", "--seeds", "14", "--seed", "3", "--no-theory", "--workers", "1",
            "--cache", str(tmp_path / "cache"), "-o", str(tmp_path / out), "--no-progress",
            *extra]


@pytest.mark.slow
def test_killed_sweep_of_a_model_file_resumes(tmp_path):
    """A real ``replica sweep --model FILE`` is killed (SIGKILL) after some jobs are cached; the
    rerun computes exactly the missing ones, and its CSV equals an uninterrupted sweep's."""
    cache = tmp_path / "cache"
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
    proc = subprocess.Popen([sys.executable, "-m", "replica.cli",
                             *_sweep_argv(tmp_path, "killed.csv")], env=env, cwd=REPO,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    try:
        while sweep.Cache(cache).count() < 3 and time.monotonic() < deadline:
            assert proc.poll() is None, "the sweep ended before it could be killed"
            time.sleep(0.005)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    done = sweep.Cache(cache).count()
    assert 3 <= done < 14
    resumed = subprocess.run([sys.executable, "-m", "replica.cli",
                              *_sweep_argv(tmp_path, "resumed.csv")], env=env, cwd=REPO,
                             capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    assert f"({14 - done} jobs computed, {done} from the cache" in resumed.stderr
    fresh = subprocess.run([sys.executable, "-m", "replica.cli",
                            *_sweep_argv(tmp_path, "fresh.csv", ["--cache", "none"])],
                           env=env, cwd=REPO, capture_output=True, text=True, timeout=300)
    assert fresh.returncode == 0, fresh.stderr
    assert (tmp_path / "resumed.csv").read_text() == (tmp_path / "fresh.csv").read_text()


@pytest.mark.slow
def test_check_of_a_model_file(tmp_path, capsys):
    import csv

    out = tmp_path / "chk"
    rc = main(["check", "--model", RIDGE, "--alpha", "2,4", "--lam", "1/10", "--sigma", "1/2",
               "--ds", "40,60", "--seeds", "6", "--workers", "1", "--line-points", "5",
               "--cache", str(tmp_path / "c"), "-o", str(out), "--no-progress"])
    assert rc == 0, capsys.readouterr().err
    rows = list(csv.DictReader(open(out / "check.csv")))
    assert len(rows) == 2 * 2 * 2 and {r["key"] for r in rows} == {"test", "train"}
    assert all(r["theory"] and abs(float(r["z"])) < 4 for r in rows)
    assert (out / "check.png").stat().st_size > 10000
