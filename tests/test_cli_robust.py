"""Regression tests for issue 25, "No silent wrong answer on any path": each reproducer of the
issue, run as the user runs it (``python -m replica.cli`` in a subprocess, under a timeout so
that a hang fails the test instead of stalling the suite), must end as the command line's rules
say -- bad input exit 2 with one line on stderr naming the parameter and no traceback -- or, for
the inputs that have an answer, with the right answer checked against an independent closed
form.
"""

import os
import subprocess
import sys

import mpmath
import pytest

from conftest import REPO

ALIGN = ["solve", "alignment", "--alpha", "2", "--tau", "4", "--kappa", "2", "--rho", "0.01",
         "--d", "16", "--test", "identity"]
RIDGE = os.path.join(REPO, "examples", "ridge_regression.py")


def _refused(result, *names):
    """``result`` is exit 2 with a single stderr line naming every one of ``names``."""
    rc, out, err = result
    lines = err.strip().splitlines()
    assert rc == 2, (rc, err[-600:])
    assert len(lines) == 1, err[-600:]
    assert "Traceback" not in err and "internal error" not in err
    for name in names:
        assert name in lines[0], (name, lines[0])
    return lines[0]


# -- 1. power laws with huge exponents ----------------------------------------------------------
@pytest.mark.parametrize("p", ["1e10", "1e999"])
def test_powerlaw_with_a_huge_exponent_is_refused_with_its_range(cli, p):
    """``powerlaw:1e10`` exited 1 (OverflowError writing a number of 10^(10^10)) and
    ``powerlaw:1e999`` hung in an integer power: both are refused at once, naming the SPEC and
    the allowed range of the exponent at this d."""
    line = _refused(cli(*ALIGN, "--train", f"powerlaw:{p}", timeout=60), "--train",
                    f"powerlaw:{p}")
    assert "[0, 83048.2]" in line  # 10^5 decades / log10(16)


def test_powerlaw_inside_the_range_is_solved(cli):
    """A steep power law inside the range is solved, and its ``inverse`` measure has the
    magnitude of the smallest eigenvalue's inverse, ``d**P`` up to a factor of order one
    (``lambda_d = d**(1-P) / sum_j j**-P`` at ``d = 16``; the measure is ``<1/lambda>``-like)."""
    rc, out, err = cli(*ALIGN, "--train", "powerlaw:1000", "--json", timeout=120)
    assert rc == 0, err[-600:]
    import json

    inverse = mpmath.mpf(json.loads(out)["measures"]["inverse"])
    magnitude = float(mpmath.log10(inverse)) - 1000 * float(mpmath.log10(16))
    assert abs(magnitude) < 3, magnitude


# -- 2. output folders that refuse new files ----------------------------------------------------
@pytest.mark.slow
@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs a /proc file system")
def test_proc_as_output_or_cache_folder_is_exit_2(cli, tmp_path):
    """``/proc`` passes every permission test for the superuser but refuses new files: it was an
    internal error (FileNotFoundError) after the work; now exit 2 naming the option, at once."""
    _refused(cli("phase-diagram", "isotropic", "-o", "/proc/foo", timeout=60), "--out")
    _refused(cli("sweep", "isotropic", "--alpha", "1,2", "--tau", "2", "--kappa", "1", "--rho",
                 "0.1", "--no-progress", "-o", str(tmp_path / "o.csv"), "--cache", "/proc/x",
                 timeout=60), "--cache")
    _refused(cli("sweep", "isotropic", "--alpha", "1,2", "--tau", "2", "--kappa", "1", "--rho",
                 "0.1", "--no-progress", "-o", "/proc/x.csv", "--cache", "none", timeout=60),
             "--output")


# -- 3. file: SPECs that are no covariance ------------------------------------------------------
def test_file_spec_of_a_device_is_refused_before_reading(cli):
    """``file:/dev/zero`` read for 34 s and failed with an empty reason."""
    line = _refused(cli(*ALIGN, "--train", "file:/dev/zero", timeout=30), "--train",
                    "file:/dev/zero")
    assert "not a regular file" in line


def test_file_spec_larger_than_a_matrix_is_refused_by_its_size(cli, tmp_path):
    """A file larger than any ``d x d`` matrix in text (200 bytes an entry plus 1 MiB) is refused
    from its size, before it is read (the content here would not even parse)."""
    big = tmp_path / "big.txt"
    big.write_bytes(b"x" * (200 * 16 * 16 + (1 << 20) + 1))
    line = _refused(cli(*ALIGN, "--train", f"file:{big}", timeout=30), "--train")
    assert "16x16" in line


# -- 4. transition --model --kind level ---------------------------------------------------------
def _ridge_test_error(alpha, lam, sigma):
    """Independent closed form of ridge regression's test error (C = I, teacher N(0, I)):
    ``sigma^2 + lam^2 E[(s+lam)^-2] + sigma^2 E[s (s+lam)^-2]`` over the spectrum of
    ``S = X^T X / d``, which is ``alpha`` times a Marchenko--Pastur law of ratio
    ``gamma = 1/alpha``; its Stieltjes transform ``m(z) = E[1/(w - z)]`` is the positive root of
    ``gamma z m^2 - (1 - gamma - z) m + 1 = 0`` at ``z < 0``."""
    alpha, lam, sigma = mpmath.mpf(alpha), mpmath.mpf(lam), mpmath.mpf(sigma)
    gamma = 1 / alpha

    def g(t):  # E[1/(s + t)] = m(-t/alpha)/alpha
        z = -t / alpha
        a, b = gamma * z, -(1 - gamma - z)
        roots = [(-b + sgn * mpmath.sqrt(b * b - 4 * a)) / (2 * a) for sgn in (1, -1)]
        return max(roots) / alpha

    g0, g1 = g(lam), mpmath.diff(g, lam)
    return sigma ** 2 - lam ** 2 * g1 + sigma ** 2 * (g0 + lam * g1)


def _located(cli, *args):
    import json

    rc, out, err = cli("transition", "--model", RIDGE, "--vary", "alpha", "--quantity", "test",
                       "--kind", "level", *args, "--json", timeout=300)
    assert rc == 0, err[-600:]
    return json.loads(out)


@pytest.mark.slow
def test_level_of_a_model_file_ridgeless_closed_form(cli):
    """Every ``--kind level`` search exited 1 (``mpmath.mpf(Fraction)``). Ridgeless
    (``lam = 0``, ``alpha > 1``): the test error is ``sigma^2 alpha/(alpha - 1)`` (least squares:
    excess risk ``sigma^2 d/(n - d)``), so the level 1/3 at ``sigma = 1/2`` is crossed at
    ``alpha = 4`` exactly -- a grid point of the float64 scan, which also exercises a bracket
    ending on the root."""
    data = _located(cli, "--between", "3/2,5", "--level", "1/3", "--lam", "0", "--sigma", "1/2")
    assert data["digits"] >= 25
    with mpmath.workdps(40):  # read at 40 digits: at the default 15 the check sees 15 digits
        assert abs(mpmath.mpf(data["location"]) - 4) < mpmath.mpf(10) ** -25


@pytest.mark.slow
def test_level_of_a_model_file_ridge_closed_form(cli):
    """With ``lam = 1/10``: the level is the closed-form test error at ``alpha = 2``, written to
    40 digits; the located ``alpha`` must be 2 to the digits it claims (at least 20)."""
    with mpmath.workdps(50):
        level = mpmath.nstr(_ridge_test_error(2, mpmath.mpf(1) / 10, mpmath.mpf(1) / 2), 40)
    data = _located(cli, "--between", "3/2,3", "--level", level, "--lam", "1/10",
                    "--sigma", "1/2")
    assert data["digits"] >= 20
    with mpmath.workdps(50):
        assert abs(mpmath.mpf(data["location"]) - 2) < mpmath.mpf(10) ** -(data["digits"] - 2)


# -- 5. a closed standard output ----------------------------------------------------------------
@pytest.mark.slow
def test_closed_stdout_exits_quietly_with_141():
    """``replica expand ... | head -1`` was an internal error (BrokenPipeError). Here the reader
    closes the pipe before the command writes anything, so its first write fails: exit 141 (as
    for SIGPIPE), nothing on stderr (``--quiet``: on a loaded machine the series takes long
    enough for its progress line, which is not what is tested)."""
    proc = subprocess.Popen([sys.executable, "-m", "replica.cli", "expand", "lowrank",
                             "--quantity", "q0", "--side", "critical", "--quiet"], cwd=REPO,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()
    try:
        _, err = proc.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise
    assert proc.returncode == 141, err.decode()[-600:]
    assert err.decode().strip() == ""


# -- 6. up-front estimates ----------------------------------------------------------------------
GRID = ["phase-diagram", "isotropic", "--quantity", "e_icl", "--kappa", "1", "--rho", "0.1"]


def test_huge_grid_is_refused_at_once_with_its_estimate(cli, tmp_path):
    """A 10^5 x 10^5 grid (10^10 solves) is refused before any work: exit 2 naming the axis,
    what it would need and the override."""
    line = _refused(cli(*GRID, "--x", "alpha:0.1:10:100000", "--y", "tau:0.1:10:100000",
                        "-o", str(tmp_path / "pd"), timeout=30), "--x", "--force-large")
    assert "memory" in line and "TB" in line
    assert not (tmp_path / "pd").exists()


def test_huge_grid_passes_the_estimate_with_force_large(cli, tmp_path):
    """With ``--force-large`` the same grid gets past the estimate (printed, not refused): the
    next check, the first grid point's parameters (``tau = 1``, where the ridgeless theory
    diverges), is the one that refuses it -- before any solve."""
    rc, out, err = cli("--force-large", *GRID, "--x", "alpha:0.1:10:100000", "--y",
                       "tau:1:10:100000", "-o", str(tmp_path / "pd"), timeout=60)
    lines = err.strip().splitlines()
    assert rc == 2 and "Traceback" not in err, err[-600:]
    assert lines[0].startswith("replica: estimate: a 100000 x 100000 grid"), err[-600:]
    assert len(lines) == 2 and "--tau" in lines[1], err[-600:]


def test_estimate_function_and_override():
    """The estimate of a grid scales with its points (measured constants in
    :func:`replica.estimates.plane_estimate`); the issue's 2000 x 2000 grid (7 min, 2.8 GB,
    1.08 GB written) is estimated within a factor of two on each; a 10^5 x 10^5 grid is refused
    unless overridden."""
    from replica.errors import ParameterError
    from replica.estimates import check, plane_estimate, set_force_large

    est = plane_estimate(2000, 2000, "grid")
    assert 210 < est.seconds < 840 and 1.4e9 < est.memory < 5.6e9 and 0.54e9 < est.output < 2.2e9
    huge = plane_estimate(100000, 100000, "grid")
    assert huge.excess()
    with pytest.raises(ParameterError, match="--force-large"):
        check(huge)
    set_force_large(True)
    try:
        assert check(huge, stream=open(os.devnull, "w")) is huge
    finally:
        set_force_large(False)


def test_running_out_of_memory_is_one_line_exit_2(monkeypatch, capsys):
    """A run let through by --force-large that then exhausts memory ended with exit 1 (an
    internal error); it is one line and exit 2, like the refusal it overrode."""
    from replica import cli
    from replica.numerics import driver

    def exhausted(*args, **kwargs):
        raise MemoryError

    monkeypatch.setattr(driver, "solve_params", exhausted)
    rc = cli.main(["solve", "isotropic", "--alpha", "2", "--tau", "1/2", "--kappa", "1/2",
                   "--rho", "0.01", "--force-large"])
    err = capsys.readouterr().err
    assert rc == 2 and err.startswith("replica: error: out of memory")
    assert len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("status, code, err",
                         [(None, 0, ""), (3, 3, ""), ("no luck", 1, "no luck")])
def test_exit_now_runs_the_exit_functions_and_keeps_the_status(tmp_path, status, code, err):
    """``replica.cli.exit_now`` (the end of ``python -m replica`` and the ``replica`` command,
    without the interpreter's teardown): the exit status as ``sys.exit`` reads it, standard
    output flushed (a line without its newline included), the ``atexit`` functions run."""
    marker = tmp_path / "ran"
    code_text = ("import atexit, sys\n"
                 f"atexit.register(lambda: open({str(marker)!r}, 'w').write('yes'))\n"
                 "sys.stdout.write('partial line')\n"
                 "from replica.cli import exit_now\n"
                 f"exit_now({status!r})\n"
                 "print('not reached')\n")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}  # (buffered)
    proc = subprocess.run([sys.executable, "-c", code_text], capture_output=True, text=True,
                          cwd=REPO, timeout=60, env=env)
    assert proc.returncode == code, proc.stderr
    assert proc.stdout == "partial line"
    assert proc.stderr.strip() == err
    assert marker.read_text() == "yes"


def test_python_m_replica_keeps_exit_statuses():
    """``python -m replica`` through :func:`~replica.cli.console`: a usage error exits 2 with one
    line, ``--help`` 0 with the usage."""
    bad = subprocess.run([sys.executable, "-m", "replica", "solve", "--bogus"],
                         capture_output=True, text=True, cwd=REPO, timeout=60)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1, bad.stderr
    ok = subprocess.run([sys.executable, "-m", "replica", "--help"], capture_output=True,
                        text=True, cwd=REPO, timeout=60)
    assert ok.returncode == 0 and ok.stdout.startswith("usage: replica"), ok.stderr
