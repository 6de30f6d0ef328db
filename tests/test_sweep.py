"""Sweeps: grids, cache keys, resuming after an interruption, local processes and Dask."""

from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
import sys
import time

import pytest

from replica.simulate import sweep
from replica.cli import main
from replica.simulate.sweep import Cache, make_jobs, run_jobs

ISO = dict(alpha=2, tau=3, kappa=1, rho="0.01")


def _jobs(seeds=3, ds=(6, 8)):
    points = sweep.expand_grid({"alpha": ["1", "2"], "tau": "3", "kappa": "1", "rho": "0.01"})
    return make_jobs("isotropic", points, ds, seeds, seed=5, dps=15)


def _values(run):
    return {job: res for job, res in run.results.items()}


def _same(a, b, rel=1e-9):
    """Equal results up to BLAS round-off (a different thread count changes summation order)."""
    a, b = _values(a), _values(b)
    assert a.keys() == b.keys()
    for job in a:
        for group in ("errors", "order_parameters"):
            x, y = a[job].get(group) or {}, b[job].get(group) or {}
            assert x.keys() == y.keys()
            for k in x:
                assert float(x[k]) == pytest.approx(float(y[k]), rel=rel), (job, k)
    return True


def test_grid_and_exact_values():
    g = sweep.expand_grid({"a": ["1", "2"], "b": "x", "c": ["3", "4", "5"]})
    assert len(g) == 6 and g[0] == {"a": "1", "b": "x", "c": "3"}
    assert sweep.linspace_exact("1/2", 1, 3) == ["1/2", "3/4", "1"]
    assert sweep.split_list("1, 3/10 ,inf", "--x") == ["1", "3/10", "inf"]
    with pytest.raises(Exception, match="--x"):
        sweep.split_list("1,,2", "--x")


def test_cache_key_is_canonical_and_complete():
    a = make_jobs("isotropic", [dict(ISO, rho="0.01")], [8], 1, seed=0)[0]
    b = make_jobs("isotropic", [dict(ISO, rho="1/100")], [8], 1, seed=0)[0]
    assert a.digest() == b.digest()  # exact parameter strings, canonicalised
    others = [make_jobs("isotropic", [ISO], [10], 1, seed=0)[0],
              make_jobs("isotropic", [ISO], [8], 1, seed=1)[0],
              make_jobs("isotropic", [ISO], [8], 2, seed=0)[1],
              make_jobs("isotropic", [ISO], [8], 1, seed=0, options={"sampler": "direct"})[0],
              make_jobs("isotropic", [dict(ISO, tau="3.5")], [8], 1, seed=0)[0]]
    assert len({a.digest()} | {o.digest() for o in others}) == 6
    key = a.key()
    assert key["code"].startswith("0.") and "+" in key["code"]
    theory = make_jobs("isotropic", [ISO], [8, 10], 0, dps=25)
    assert len(theory) == 1 and theory[0].dps == 25 and theory[0].d is None  # d-free theory
    al = make_jobs("alignment", [dict(ISO, train="piano", test="identity")], [8, 10], 0)
    assert [j.d for j in al] == [8, 10]  # alignment theory depends on the d spectrum


def test_cached_results_are_reused_and_identical(tmp_path):
    jobs = _jobs()
    first = run_jobs(jobs, tmp_path, executor="serial", progress=False)
    assert first.computed == len(jobs) and first.cached == 0
    assert Cache(tmp_path).count() == len(jobs)
    again = run_jobs(jobs, tmp_path, executor="serial", progress=False)
    assert again.computed == 0 and again.cached == len(jobs)
    assert _values(again) == _values(first)
    stored = json.loads(Cache(tmp_path).path(jobs[0]).read_text())
    assert isinstance(next(iter(stored["result"]["errors"].values())), str)  # decimal strings


def test_injected_failure_then_resume_recomputes_only_missing(tmp_path, monkeypatch):
    jobs = _jobs()
    real = sweep.compute_job
    calls = []

    def flaky(job):
        calls.append(job)
        if len(calls) == 4:
            raise RuntimeError("injected failure")
        return real(job)

    monkeypatch.setattr(sweep, "compute_job", flaky)
    with pytest.raises(RuntimeError, match="injected"):
        run_jobs(jobs, tmp_path, executor="serial", progress=False)
    assert Cache(tmp_path).count() == 3
    monkeypatch.setattr(sweep, "compute_job", real)
    resumed = run_jobs(jobs, tmp_path, executor="serial", progress=False)
    assert resumed.computed == len(jobs) - 3 and resumed.cached == 3
    fresh = run_jobs(jobs, None, executor="serial", progress=False)
    assert _values(resumed) == _values(fresh)  # same process, same BLAS: bitwise


@pytest.mark.slow
def test_killed_sweep_resumes(tmp_path):
    """A real `replica sweep` process is killed (SIGKILL) after some jobs are cached; the rerun
    computes exactly the missing ones and the result equals an uninterrupted sweep."""
    cache = tmp_path / "cache"
    argv = ["isotropic", "--alpha", "2", "--tau", "3", "--kappa", "1", "--rho", "0.01",
            "--ds", "32", "--seeds", "30", "--seed", "3", "--no-theory", "--workers", "1",
            "--cache", str(cache), "-o", str(tmp_path / "killed.csv"), "--no-progress"]
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
    proc = subprocess.Popen([sys.executable, "-m", "replica.cli", "sweep"] + argv, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    try:
        while Cache(cache).count() < 3 and time.monotonic() < deadline:
            assert proc.poll() is None, "the sweep ended before it could be killed"
            time.sleep(0.005)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    done = Cache(cache).count()
    assert 3 <= done < 30  # 30 jobs: a loaded machine may finish several before the kill lands
    # a kill during a write may leave a .tmp- file, but no half-written entry counts as a result
    entries = [p for p in cache.rglob("*.json") if not p.name.startswith(".tmp-")]
    assert len(entries) == done
    for p in entries:
        json.loads(p.read_text())
    jobs = make_jobs("isotropic", [dict(ISO)], [32], 30, seed=3, with_theory=False)
    resumed = run_jobs(jobs, cache, executor="serial", progress=False)
    assert resumed.cached == done and resumed.computed == 30 - done
    fresh = run_jobs(jobs, None, executor="serial", progress=False)
    assert _same(resumed, fresh)


def test_local_processes_match_serial(tmp_path):
    jobs = _jobs(seeds=2, ds=(6,))
    serial = run_jobs(jobs, None, executor="serial", progress=False)
    procs = run_jobs(jobs, tmp_path, executor="process", workers=2, progress=False)
    assert procs.computed == len(jobs)
    assert _same(procs, serial)


def test_dask_local_cluster_matches_serial(tmp_path):
    distributed = pytest.importorskip("distributed")
    jobs = _jobs(seeds=2, ds=(6,))
    serial = run_jobs(jobs, None, executor="serial", progress=False)
    # scheduler and one worker in this process, talking TCP on the loopback interface
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False,
                                  protocol="tcp://", host="127.0.0.1",
                                  dashboard_address=None) as cluster:
        assert cluster.scheduler_address.startswith("tcp://127.0.0.1:")
        run = run_jobs(jobs, tmp_path, executor="dask", scheduler=cluster.scheduler_address,
                       progress=False)
        assert run.computed == len(jobs)
        with distributed.Client(cluster) as client:  # an existing client works too
            again = run_jobs(jobs, None, executor="dask", scheduler=client, progress=False)
    assert _same(run, serial) and _same(again, serial)


def test_progress_bar_on_stderr(tmp_path, capsys, monkeypatch):
    import io

    monkeypatch.setenv("REPLICA_PROGRESS_AFTER", "0")
    monkeypatch.setenv("REPLICA_PROGRESS_EVERY", "0")
    buf = io.StringIO()  # not a terminal: plain lines, no carriage returns
    jobs = _jobs(seeds=1, ds=(6,))
    run_jobs(jobs, None, executor="serial", progress=True, stream=buf)
    text = buf.getvalue()
    lines = text.strip().splitlines()
    assert "\r" not in text and all(line.startswith("sweep: ") for line in lines)
    n = len(set(jobs))
    assert f"{n}/{n} jobs (100%)" in lines[-1]


def test_sweep_cli_writes_csv_and_resumes(tmp_path, capsys):
    out = tmp_path / "grid.csv"
    argv = ["sweep", "isotropic", "--alpha", "1,2", "--tau", "3", "--kappa", "1/2,1",
            "--rho", "0.01", "--ds", "6,8", "--seeds", "2", "--cache", str(tmp_path / "c"),
            "-o", str(out), "--no-progress", "--workers", "1"]
    assert main(argv) == 0
    rows = list(csv.DictReader(out.open()))
    assert len(rows) == 2 * 2 * 2
    assert {"alpha", "kappa", "d", "seeds", "e_icl_mean", "e_icl_sem", "e_icl_theory",
            "e_icl_z", "e_idg_mean"} <= set(rows[0])
    assert rows[0]["seeds"] == "2" and float(rows[0]["e_icl_theory"]) > 0
    err = capsys.readouterr().err
    assert "0 from the cache" in err
    assert main(argv) == 2  # -o never overwrites silently
    assert "--force" in capsys.readouterr().err
    assert main(argv + ["--force"]) == 0
    assert "0 jobs computed" in capsys.readouterr().err
    assert list(csv.DictReader(out.open())) == rows
    theory_out = tmp_path / "theory.csv"
    assert main(["sweep", "lowrank", "--alpha", "2,4", "--tau", "2.25", "--kappa", "1.5",
                 "--rho", "0.9", "--sigma", "0.3", "--dps", "20", "--cache", "none",
                 "-o", str(theory_out), "--no-progress"]) == 0
    trows = list(csv.DictReader(theory_out.open()))
    assert len(trows) == 2 and trows[0]["tm"].startswith("0.5504061604522808")


@pytest.mark.parametrize("argv, name", [
    (["--alpha", "1,,2", "--ds", "6", "--seeds", "1"], "--alpha"),
    (["--alpha", "1", "--seeds", "2"], "--d"),
    (["--alpha", "1", "--ds", "6,x", "--seeds", "1"], "--ds"),
    (["--alpha", "0", "--ds", "6", "--seeds", "1"], "--alpha"),
])
def test_sweep_cli_bad_input(tmp_path, capsys, argv, name):
    base = ["sweep", "isotropic", "--tau", "3", "--kappa", "1", "--rho", "0.01",
            "-o", str(tmp_path / "x.csv"), "--cache", "none", "--no-progress"]
    assert main(base + argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and name in err[0] and "Traceback" not in err[0]


def test_cache_count_ignores_partial_writes(tmp_path):
    (tmp_path / "ab").mkdir()
    (tmp_path / "ab" / "done.json").write_text("{}")
    (tmp_path / "ab" / ".tmp-x1y2.json").write_text("{")  # left by a killed writer
    assert Cache(tmp_path).count() == 1


def _session_processes(sid: int) -> list[int]:
    out = subprocess.run(["ps", "-eo", "pid=,sid="], capture_output=True, text=True).stdout
    return [int(p) for p, s in (ln.split() for ln in out.splitlines() if ln.strip())
            if int(s) == sid]


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="ps -o sid, Linux only")
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM])
def test_pool_workers_die_with_a_killed_sweep(tmp_path, sig):
    """A sweep with 2 pool workers is killed (SIGKILL: no cleanup at all; SIGTERM: a plain
    `kill PID`) while it runs: within seconds no process of its session is left -- no worker and
    no multiprocessing resource tracker (they used to stay, 100-145 MB each, for minutes)."""
    cache = tmp_path / "cache"
    argv = [sys.executable, "-m", "replica.cli", "sweep", "isotropic", "--alpha", "2", "--tau",
            "3", "--kappa", "1", "--rho", "0.01", "--ds", "40", "--seeds", "60", "--no-theory",
            "--workers", "2", "--cache", str(cache), "-o", str(tmp_path / "k.csv"),
            "--no-progress"]
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
    with open(tmp_path / "stderr", "w") as err:  # a file: a pipe would block on the survivors
        proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=err,
                                start_new_session=True)
    sid = proc.pid
    try:
        deadline = time.monotonic() + 120
        while Cache(cache).count() < 1 and time.monotonic() < deadline:
            assert proc.poll() is None, (tmp_path / "stderr").read_text()[-500:]
            time.sleep(0.02)
        assert len(_session_processes(sid)) >= 3  # the sweep, its workers, the tracker
        proc.send_signal(sig)
        proc.wait(timeout=30)
        deadline = time.monotonic() + 10
        while _session_processes(sid) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert _session_processes(sid) == []
    finally:
        if proc.poll() is None:
            proc.kill()
        for pid in _session_processes(sid):  # never leave a survivor behind a failed test
            os.kill(pid, signal.SIGKILL)
    if sig == signal.SIGTERM:
        assert proc.returncode == 130 and "interrupted" in (tmp_path / "stderr").read_text()
