"""Every cache is keyed on contents, never on names (issue: no silent wrong answer on any path).

* generated code: the key covers every source file of the package, so a changed closed form in
  ``replica/spectra.py`` (which no hand-kept list of "symbolic" files named) regenerates it;
* sweeps: a ``file:`` covariance enters the key by its bytes;
* model files: what the file reads while it runs (a data file, an environment variable) and
  the files it declares in ``INPUTS`` enter the key.

Each test runs the real command twice with one cache folder and a change in between, and asserts
that the second result is the new one: with a name-keyed cache it would be the old one.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap

import mpmath
import numpy as np
import pytest

from conftest import REPO


def _cli(args, env_extra, cwd, timeout=300):
    env = dict(os.environ, **env_extra)
    return subprocess.run([sys.executable, "-m", "replica.cli", *map(str, args)],
                          capture_output=True, text=True, env=env, cwd=cwd, timeout=timeout)


@pytest.mark.slow
def test_a_changed_closed_form_in_spectra_changes_the_next_result(tmp_path):
    """A copy of the package whose Marchenko-Pastur transform is changed (2 -> 3 in its
    numerator) gives a different isotropic solve from the same warm code cache."""
    pkg = tmp_path / "pkg"
    shutil.copytree(os.path.join(REPO, "replica"), pkg / "replica",
                    ignore=shutil.ignore_patterns("__pycache__"))
    env = {"REPLICA_LAMBDIFY_CACHE": str(tmp_path / "cache"), "PYTHONPATH": str(pkg)}
    args = ["solve", "isotropic", "--alpha", "2", "--tau", "1/2", "--kappa", "1/2", "--rho",
            "1/100", "--dps", "20", "--json"]

    def e_icl():
        out = _cli(args, env, tmp_path)
        assert out.returncode == 0, out.stderr
        data = json.loads(out.stdout)
        return data["errors"]["e_icl"]

    before = e_icl()
    spectra = pkg / "replica" / "spectra.py"
    text = spectra.read_text()
    old = "    return 2 / (b + sympy.sqrt(b**2 + 4 * c * z / kappa))"
    assert text.count(old) == 1
    spectra.write_text(text.replace(old, old.replace("return 2 /", "return 3 /")))
    after = e_icl()
    assert after != before
    spectra.write_text(text)
    assert e_icl() == before


def test_package_digest_covers_every_source_file(tmp_path, monkeypatch):
    """The digest changes with any ``.py`` file of the package, including ones no list names."""
    from replica.symbolic import codegen

    pkg = tmp_path / "replica"
    (pkg / "models").mkdir(parents=True)
    (pkg / "spectra.py").write_text("X = 1\n")
    (pkg / "models" / "parameters.py").write_text("Y = 1\n")
    (pkg / "notes.txt").write_text("not source\n")
    monkeypatch.setattr(codegen, "PACKAGE_ROOT", str(pkg))
    digests = []
    for change in (None, ("spectra.py", "X = 2\n"), ("models/parameters.py", "Y = 2\n"),
                   ("notes.txt", "still not source\n")):
        if change:
            (pkg / change[0]).write_text(change[1])
        codegen.package_digest.cache_clear()
        digests.append(codegen.package_digest())
    codegen.package_digest.cache_clear()
    assert len(set(digests[:3])) == 3  # each source change is seen
    assert digests[3] == digests[2]  # a file that is not source is not


def test_a_sweep_keys_a_file_covariance_on_its_bytes(tmp_path):
    """Two sweeps with the same ``file:`` SPEC text but different file contents: the second
    computes afresh (theory rows of the new spectrum), not the first's cached rows."""
    from replica.simulate.sweep import make_jobs, run_jobs

    path = tmp_path / "train.txt"
    point = dict(alpha="2", tau="4", kappa="2", rho="1/100", train=f"file:{path}",
                 test="identity")
    np.savetxt(path, [1, 1, 1, 1, 1, 1, 1, 1])
    first_jobs = make_jobs("alignment", [point], [8], 0, dps=15)
    first_digest = first_jobs[0].digest()
    first = run_jobs(first_jobs, tmp_path / "cache", executor="serial", progress=False)
    np.savetxt(path, [4, 1, 1, 1, 1, 1, 1, 1])
    second_jobs = make_jobs("alignment", [point], [8], 0, dps=15)
    assert second_jobs[0].digest() != first_digest
    second = run_jobs(second_jobs, tmp_path / "cache", executor="serial", progress=False)
    assert second.computed == 1 and second.cached == 0
    a = next(iter(first.results.values()))["errors"]["e_icl"]
    b = next(iter(second.results.values()))["errors"]["e_icl"]
    assert a != b
    np.savetxt(path, [1, 1, 1, 1, 1, 1, 1, 1])  # the first contents again: a cache hit
    third = run_jobs(make_jobs("alignment", [point], [8], 0, dps=15), tmp_path / "cache",
                     executor="serial", progress=False)
    assert third.cached == 1 and next(iter(third.results.values()))["errors"]["e_icl"] == a


_READING_MODEL = """
    import os
    import sympy
    from replica.modeling import FixedPointModel, Parameter
    COEFF = {reader}
    a = sympy.Symbol("a", positive=True)
    x = sympy.Symbol("x", positive=True)
    MODEL = FixedPointModel("reading_model", equations={{x: COEFF * a / (1 + x)}},
                            parameters=[Parameter("a", "a")], positive_unknowns=True)
    {extra}
"""


def _solve_x(model, env, cwd):
    out = _cli(["solve", "--model", model, "--a", "4", "--json"], env, cwd, timeout=120)
    assert out.returncode == 0, out.stderr
    return mpmath.mpf(json.loads(out.stdout)["order_parameters"]["x"])


def _root(coeff):
    """x = coeff a / (1 + x) at a = 4: the positive root of x^2 + x - 4 coeff."""
    return (mpmath.sqrt(1 + 16 * coeff) - 1) / 2


@pytest.mark.slow
@pytest.mark.parametrize("how", ["file", "environment", "declared"])
def test_a_model_files_inputs_enter_its_cache_key(tmp_path, how):
    """A model whose coefficient comes from a data file it reads, from an environment variable
    it looks up, or from a file read where the watched run cannot see it (by another process)
    and declared in ``INPUTS``: changing that input changes the next solve (one cache folder
    throughout)."""
    data = tmp_path / "coeff.txt"
    data.write_text("2")
    reader, extra = {
        "file": ("int(open(os.path.join(os.path.dirname(__file__), 'coeff.txt')).read())", ""),
        "environment": ("int(os.environ.get('MODEL_COEFF', '2'))", ""),
        # read by another process: the watched run cannot see it; INPUTS declares it
        "declared": ("int(__import__('subprocess').check_output(['cat', 'coeff.txt'], "
                     "cwd=os.path.dirname(__file__)))", "INPUTS = ['coeff.txt']"),
    }[how]
    text = textwrap.dedent(_READING_MODEL.format(reader=reader, extra=extra))
    model = tmp_path / "model.py"
    model.write_text(text)
    env = {"REPLICA_LAMBDIFY_CACHE": str(tmp_path / "cache"), "MODEL_COEFF": "2"}
    with mpmath.workdps(30):
        assert abs(_solve_x(model, env, tmp_path) - _root(2)) < 1e-25
        if how == "environment":
            env["MODEL_COEFF"] = "3"
        else:
            data.write_text("3")
        assert abs(_solve_x(model, env, tmp_path) - _root(3)) < 1e-25


@pytest.mark.parametrize("inputs,expected", [
    ("'coeff.txt'", "INPUTS must be a list"),
    ("['missing.txt']", "INPUTS names 'missing.txt', which is not a file"),
])
def test_bad_inputs_declaration_is_one_line(tmp_path, inputs, expected):
    model = tmp_path / "model.py"
    model.write_text(textwrap.dedent(_READING_MODEL.format(reader="2",
                                                           extra=f"INPUTS = {inputs}")))
    out = _cli(["solve", "--model", model, "--a", "4"], {}, tmp_path, timeout=120)
    assert out.returncode == 2, out.stderr
    assert expected in out.stderr and len(out.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("body,expected", [
    ("import sys\nsys.exit(0)\n", "called sys.exit(0)"),
    ("raise SystemExit('bye')\n", "called sys.exit('bye')"),
    ("raise KeyboardInterrupt\n", "interrupted while loading"),
    ("while True:\n    pass\n", "ran for more than 2 s"),
    ("import time\ntry:\n    time.sleep(60)\nexcept Exception:\n    pass\n",
     "ran for more than 2 s"),
])
@pytest.mark.slow
def test_a_model_file_that_exits_or_hangs_is_exit_2(tmp_path, body, expected):
    """``sys.exit(0)`` in a model file used to end every command with exit 0 and no output; an
    endless loop hung it. Each is now one line and exit 2, within the load time limit (an
    ``except Exception`` in the file does not swallow the time limit)."""
    model = tmp_path / "model.py"
    model.write_text(body)
    for command in (["solve", "--model", model, "--a", "1"], ["equations", "--model", model]):
        out = _cli(command, {"REPLICA_MODEL_LOAD_TIMEOUT": "2"}, tmp_path, timeout=60)
        assert out.returncode == 2, (command, out.returncode, out.stdout, out.stderr)
        assert out.stdout == ""
        lines = out.stderr.strip().splitlines()
        assert len(lines) == 1 and expected in lines[0] and str(model) in lines[0], lines


def test_a_malformed_load_timeout_is_named(tmp_path):
    model = tmp_path / "model.py"
    model.write_text(textwrap.dedent(_READING_MODEL.format(reader="2", extra="")))
    out = _cli(["solve", "--model", model, "--a", "4"], {"REPLICA_MODEL_LOAD_TIMEOUT": "soon"},
               tmp_path, timeout=60)
    assert out.returncode == 2 and "REPLICA_MODEL_LOAD_TIMEOUT" in out.stderr


def test_watched_run_restores_the_environment_and_records_reads(tmp_path):
    from replica.watched_run import run_watched

    data = tmp_path / "d.txt"
    data.write_text("x")
    real = os.environ

    def run():
        os.environ.get("REPLICA_TEST_VARIABLE")
        with open(data) as fh:
            return fh.read()

    result, reads = run_watched("f.py", run, timeout=5)
    assert result == "x" and os.environ is real
    assert str(data) in reads.files and "REPLICA_TEST_VARIABLE" in reads.environment


@pytest.mark.parametrize("argv", [
    ["solve", "lowrank", "--alpha", "2", "--tau", "9/4", "--kappa", "3/2", "--rho", "0.9",
     "--sigma", "0.3", "--d", "120"],
    ["solve", "isotropic", "--alpha", "2", "--tau", "1/2", "--kappa", "1/2", "--rho", "0.01",
     "--dp", "20"],
    ["solve", "isotropic", "--alpha", "2", "--tau", "1/2", "--kappa", "1/2", "--rho", "0.01",
     "--js"],
])
def test_no_option_is_read_as_an_abbreviation_of_another(cli, argv):
    """``--d 120`` on the low-rank model was taken as ``--dps 120`` (a silent 120-digit solve)."""
    rc, out, err = cli(*argv)
    assert rc == 2 and out == ""
    assert "unrecognized arguments" in err and len(err.strip().splitlines()) == 1


def test_compiled_generated_code_is_cached_on_its_contents(tmp_path, monkeypatch):
    """The code objects of generated modules are cached (marshal) under the SHA-256 of their
    source: the same source loads the stored code, a different source never does, and a
    damaged file is compiled again."""
    from replica.symbolic import codegen

    monkeypatch.setenv("REPLICA_LAMBDIFY_CACHE", str(tmp_path))
    codegen.CodeCache.folder.cache_clear()
    try:
        ns: dict = {}
        exec(codegen._compiled("x = 1 + 1\n", "<gen>"), ns)  # noqa: S102
        assert ns["x"] == 2
        files = sorted(tmp_path.glob("code-*.marshal"))
        assert len(files) == 1
        # the stored code is what a later load runs (made recognisable here)
        import marshal

        files[0].write_bytes(marshal.dumps(compile("x = 'stored'\n", "<gen>", "exec")))
        ns = {}
        exec(codegen._compiled("x = 1 + 1\n", "<gen>"), ns)  # noqa: S102
        assert ns["x"] == "stored"
        ns = {}
        exec(codegen._compiled("x = 1 + 2\n", "<gen>"), ns)  # noqa: S102 - another source
        assert ns["x"] == 3
        assert len(list(tmp_path.glob("code-*.marshal"))) == 2
        files[0].write_bytes(b"\x00damaged")
        ns = {}
        exec(codegen._compiled("x = 1 + 1\n", "<gen>"), ns)  # noqa: S102
        assert ns["x"] == 2
    finally:
        codegen.CodeCache.folder.cache_clear()
