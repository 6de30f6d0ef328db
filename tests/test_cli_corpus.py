"""A corpus of hostile command lines (issue 16): every one is bad or borderline input, and each
must end with exit status 2 (bad input) or 3 (no convergence) -- never 1, the internal error --
with one line on stderr that names the option, and without hanging. A few borderline inputs
that can be handled exactly (huge entries in a ``file:`` covariance) must succeed instead.

Most cases run in-process through :func:`replica.cli.main` (fast); those that used to hang run
as subprocesses under a timeout, so that a regression fails instead of stalling the suite.
"""

import http.server
import socket
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

from conftest import REPO
from replica.cli import main
from replica.errors import ParameterError

ISO = ["solve", "isotropic", "--tau", "1/2", "--kappa", "1/2", "--rho", "0.01"]
ALIGN = ["solve", "alignment", "--alpha", "2", "--tau", "4", "--kappa", "2", "--rho", "0.01",
         "--train", "identity", "--test", "identity"]
SIM = ["simulate", "isotropic", "--alpha", "2", "--kappa", "1", "--rho", "0.1", "--seeds", "1",
       "--no-theory"]
SWEEP = ["sweep", "isotropic", "--alpha", "2", "--tau", "2", "--kappa", "1", "--rho", "0.1",
         "--no-progress"]
PEAK = ["transition", "isotropic", "--interpolation-peak", "--alpha", "10", "--kappa", "inf",
        "--rho", "0.01", "--lam", "0.001"]


@pytest.fixture
def files(tmp_path):
    """Paths the cases refer to: an existing file, a folder, covariance files."""
    (tmp_path / "afile").write_text("x")
    (tmp_path / "adir").mkdir()
    (tmp_path / "huge.txt").write_text("1e999 0\n0 1\n")
    (tmp_path / "huge308.txt").write_text("1e308 1e308\n1e308 1e308\n")
    np.save(tmp_path / "complex.npy", np.array([1 + 1j, 2, 3]))
    np.save(tmp_path / "huge308.npy", np.array([[1e308, 1e307], [1e307, 1e308]]))
    pd = tmp_path / "pd"
    pd.mkdir()
    (pd / "isotropic_nonmonotone_e_icl_tau1_2.png").write_text("")  # from an earlier run
    return tmp_path


def _cases(t):
    """``(argv, option)``: the command must exit 2 (or 3) with one line naming ``option``."""
    return [
        (ISO + ["--alpha", "1" + "0" * 5000], "--alpha"),
        (ISO + ["--alpha", "1e10001"], "--alpha"),
        (ALIGN + ["--d", "1e999"], "--d"),
        (ALIGN + ["--d", "1.5"], "--d"),
        (ALIGN[:-4] + ["--d", "2", "--train", f"file:{t}/huge.txt:raw", "--test", "identity"],
         "--train"),
        (ALIGN[:-4] + ["--d", "3", "--train", f"file:{t}/complex.npy", "--test", "identity"],
         "--train"),
        (SIM + ["--tau", "2", "--d", "3000"], "--d"),
        (SIM + ["--tau", "1e30", "--d", "8"], "--tau"),
        (SIM + ["--tau", "2", "--d", "1.5"], "--d"),
        (SIM + ["--tau", "2", "--d", "1e999"], "--d"),
        (SIM + ["--tau", "2", "--d", "8", "--test-prompts", "99999999999"], "--test-prompts"),
        (SWEEP + ["-o", f"{t}/adir", "--cache", "none"], "--output"),
        (SWEEP + ["-o", f"{t}/missing/x.csv", "--cache", "none"], "--output"),
        (SWEEP + ["-o", "", "--cache", "none"], "--output"),
        (SWEEP + ["-o", f"{t}/afile", "--cache", "none"], "--output"),  # never overwritten
        (SWEEP + ["-o", f"{t}/o.csv", "--cache", f"{t}/afile"], "--cache"),
        (SWEEP + ["-o", f"{t}/o.csv", "--cache", ""], "--cache"),
        (SWEEP + ["-o", f"{t}/o.csv", "--cache", "none", "--scheduler", "notanaddress"],
         "--scheduler"),
        (SWEEP + ["-o", f"{t}/o.csv", "--cache", "none", "--scheduler", ""], "--scheduler"),
        (SWEEP + ["-o", f"{t}/o.csv", "--cache", "none", "--scheduler", "http://127.0.0.1:80"],
         "--scheduler"),
        (SWEEP + ["-o", f"{t}/o.csv", "--cache", "none", "--scheduler", "tls://127.0.0.1:8786"],
         "--scheduler"),
        (SWEEP + ["-o", f"{t}/o.csv", "--cache", "none", "--scheduler", "inproc://x"],
         "--scheduler"),
        (SWEEP + ["-o", f"{t}/o.csv", "--cache", "none", "--scheduler", "tcp://host:port"],
         "--scheduler"),
        (["check", "isotropic", "--alpha", "2", "--tau", "2", "--kappa", "1", "--rho", "0.1",
          "--ds", "4,5", "--seeds", "2", "-o", f"{t}/afile"], "--output"),
        (["appendix", "alignment", "-o", f"{t}/afile"], "--out"),
        (["appendix", "alignment", "-o", f"{t}/afile/sub"], "--out"),
        (["phase-diagram", "isotropic", "-o", f"{t}/afile"], "--out"),
        (["phase-diagram", "isotropic", "-o", ""], "--out"),
        # a tau typed as a fraction becomes a file name without "/" (tau1_2): the existing file
        # is found before any work (it was an internal error after 10 s of work)
        (["phase-diagram", "isotropic", "-o", f"{t}/pd", "--tau", "1/2"], "tau1_2"),
        (["phase-diagram", "isotropic", "-o", f"{t}/pd", "--tau", "1 / 2"], "tau1_2"),
        (["phase-diagram", "isotropic", "-o", f"{t}/pd", "--tau", "1"], "--tau"),
        (["phase-diagram", "lowrank", "-o", f"{t}/pd", "--alphas", ""], "--alphas"),
        (["phase-diagram", "lowrank", "-o", f"{t}/pd", "--alphas", "1e2,,1e3"], "--alphas"),
        (PEAK + ["--tau", "2"], "--tau"),
        (["transition", "isotropic", "--tau", "2", "--rho", "0.01", "--lam", "0.1"], "--lam"),
    ]


N_CASES = len(_cases("T"))


@pytest.mark.parametrize("index", range(N_CASES))
def test_corpus_case_is_exit_2_or_3(files, capsys, index):
    argv, option = _cases(str(files))[index]
    rc = main(argv)
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert rc in (2, 3), (rc, err[-400:])
    assert len(lines) == 1 and lines[0].startswith("replica: error: "), err[-400:]
    assert option in lines[0], lines[0]
    assert "internal error" not in err and "Traceback" not in err


def test_tau_one_message_suggests_no_missing_option(files, capsys):
    assert main(["phase-diagram", "isotropic", "-o", str(files / "pd"), "--tau", "1"]) == 2
    assert "--lam" not in capsys.readouterr().err  # phase-diagram isotropic has no --lam


@pytest.mark.parametrize("name", ["huge.txt", "huge308.txt", "huge308.npy"])
def test_file_covariance_with_extreme_entries_is_solved(files, capsys, name):
    """Entries beyond (or at) the float64 range are normalised exactly, not overflowed."""
    rc = main(ALIGN[:-4] + ["--d", "2", "--train", f"file:{files}/{name}", "--test",
                            f"file:{files}/{name}", "--dps", "15"])
    out = capsys.readouterr().out
    assert rc == 0 and "e_icl" in out and "inf" not in out.split("e_icl")[1].split()[0]


# ---------------------------------------------------------------------------------------------
# Cases that used to hang: subprocesses under a timeout
# ---------------------------------------------------------------------------------------------
def _run(argv, timeout):
    t0 = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "replica.cli", *argv], capture_output=True,
                          text=True, timeout=timeout, cwd=REPO)
    return proc.returncode, proc.stderr, time.monotonic() - t0


def _assert_refused(rc, err, option):
    lines = err.strip().splitlines()
    assert rc == 2, (rc, err[-400:])
    assert len(lines) == 1 and option in lines[0], err[-400:]


def test_huge_exponent_and_huge_d_are_refused_at_once():
    rc, err, secs = _run(ISO + ["--alpha", "1e-999999999"], timeout=30)
    _assert_refused(rc, err, "--alpha")
    assert "exponent" in err
    rc, err, secs2 = _run(ALIGN + ["--d", "10000000"], timeout=30)
    _assert_refused(rc, err, "--d")
    assert "would need" in err  # the estimate says what it would take
    assert secs < 10 and secs2 < 10


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.slow
def test_scheduler_connections_fail_within_seconds(tmp_path):
    """A refused port and a server that is not a Dask scheduler (an HTTP server accepts the
    connection but never answers the handshake) both fail in a few seconds."""
    base = SWEEP + ["-o", str(tmp_path / "o.csv"), "--cache", "none", "--scheduler"]
    rc, err, secs = _run(base + [f"tcp://127.0.0.1:{_free_port()}"], timeout=30)
    _assert_refused(rc, err, "--scheduler")
    assert secs < 10
    server = http.server.HTTPServer(("127.0.0.1", 0), http.server.SimpleHTTPRequestHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        rc, err, secs = _run(base + [f"tcp://127.0.0.1:{server.server_port}"], timeout=60)
    finally:
        server.shutdown()
        server.server_close()
    _assert_refused(rc, err, "--scheduler")
    assert secs < 12


# ---------------------------------------------------------------------------------------------
# The API: strict input, NumPy scalars of every kind
# ---------------------------------------------------------------------------------------------
ALIGN_KW = dict(alpha=2, tau=4, kappa=2, rho="0.01", train="identity", test="identity")


@pytest.mark.parametrize("d", [2.5, True, np.bool_(True), 4 + 0j, "1.5"])
def test_api_refuses_non_integer_d(d):
    import replica

    with pytest.raises(ParameterError, match="--d"):
        replica.solve("alignment", d=d, **ALIGN_KW)


@pytest.mark.parametrize("value", [np.float64(2.0), np.float32(2.0), np.float16(2.0),
                                   np.longdouble(2.0), np.int64(2), np.int8(2), np.uint16(2)])
def test_api_accepts_numpy_scalars(value):
    from replica.params import parse_exact

    assert parse_exact(value, "alpha") == 2
    assert parse_exact(np.float32(0.1), "rho") == parse_exact("0.1", "rho")  # its own shortest
    with pytest.raises(ParameterError, match="real"):
        parse_exact(np.complex128(2.0), "alpha")


def test_api_solve_with_numpy_parameters():
    import replica

    r = replica.solve("alignment", d=np.int64(4), alpha=np.float64(2.0), tau=np.float32(4),
                      kappa=np.float64(2.0), rho=np.float64(0.01), train="identity",
                      test="identity", dps=15)
    assert r.params["alpha"] == "2" and r.params["rho"] == "1/100" and r.params["d"] == "4"


@pytest.mark.parametrize("argv", [ISO + ["--alpha", "1e300"], ISO + ["--alpha", "1e999"],
                                  ["solve", "lowrank", "--tau", "2", "--kappa", "1.5", "--rho",
                                   "0.5", "--sigma", "0.3", "--alpha", "1e-300"]])
@pytest.mark.slow
def test_extreme_alpha_in_the_engine(capsys, argv):
    """A difference that cancels to zero at the working precision (ZeroDivisionError) is lost
    digits: more guard digits (alpha = 1e300, 1e999 solve), else exit 3 (alpha = 1e-300: the
    damped start does not converge in its sweep budget), never an internal error."""
    rc = main(argv)
    assert rc in (0, 3), capsys.readouterr().err
