"""``replica --help`` stays light: building the parser imports no numerical library, and the help
of every command and model prints (exit 0). Timings are measured by benchmarks, not here."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

import pytest

from conftest import REPO
from replica.cli import build_parser

#: Not imported by ``build_parser()``: each command imports what it needs when it runs.
HEAVY_MODULES = ("sympy", "mpmath", "numpy", "scipy", "matplotlib", "dask", "distributed")


def _subcommands(parser: argparse.ArgumentParser) -> dict:
    """``{name: sub-parser}`` of a parser's sub-commands (empty when it has none)."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _help_invocations() -> list[tuple]:
    out = [()]
    for command, sub in _subcommands(build_parser()).items():
        out.append((command,))
        out.extend((command, model) for model in _subcommands(sub))
    return out


def test_building_the_parser_imports_no_heavy_module():
    code = ("import json, sys\n"
            "from replica.cli import build_parser\n"
            "build_parser()\n"
            f"print(json.dumps([m for m in {HEAVY_MODULES!r} if m in sys.modules]))\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO,
                          timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == []


def test_every_command_and_model_is_listed():
    invocations = _help_invocations()
    assert ("solve", "lowrank") in invocations and ("appendix",) in invocations
    assert len({i[0] for i in invocations if i}) == 9


@pytest.mark.parametrize("words", _help_invocations(), ids=lambda w: " ".join(w) or "replica")
def test_help_exits_0(words):
    proc = subprocess.run([sys.executable, "-m", "replica.cli", *words, "--help"],
                          capture_output=True, text=True, cwd=REPO, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("usage: replica " + " ".join(words))
    assert proc.stderr == ""


def test_written_out_choices_equal_the_library_lists():
    from replica import registry
    from replica.analysis import asymptotics
    from replica.derivations import DERIVATIONS

    declared = {e.declared("DERIVATION") for e in registry.builtins()} - {None}
    assert declared == set(DERIVATIONS)
    lowrank = registry.builtin("lowrank").declared
    assert lowrank("SIDES") == asymptotics.SIDES
    assert lowrank("QUANTITIES") == asymptotics.QUANTITIES


_SOLVE_IN_PROCESS = (
    "import contextlib, io, json, sys\n"
    "from replica.cli import main\n"
    "out = io.StringIO()\n"
    "with contextlib.redirect_stdout(out):\n"
    "    try:\n"
    "        main(sys.argv[1:])\n"
    "    except SystemExit as exc:\n"
    "        code = exc.code\n"
    "    else:\n"
    "        code = 0\n"
    "print(json.dumps({'code': code, 'sympy': 'sympy' in sys.modules, 'out': out.getvalue()}))\n")


_ALIGNMENT = ("alignment", "--d", "12", "--train", "piano", "--test", "spike:1")


@pytest.mark.slow
@pytest.mark.parametrize("model, extra", [
    (_ALIGNMENT, ("--tau", "4")), (_ALIGNMENT, ("--tau", "1/2", "--kappa", "inf")),
    (("isotropic",), ("--tau", "1/2", "--lam", "1/10")),
    (("lowrank", "--sigma", "1/10", "--test", "outside:1/3"), ("--tau", "2", "--lam", "1/10"))],
    ids=["alignment-interpolating", "alignment-ridge-kappa-inf", "isotropic-ridge",
         "lowrank-finite"])
def test_a_cached_solve_imports_no_sympy(model, extra):
    """Once its evaluators and the systems' outlines are in the code cache, ``replica solve``
    (every built-in model is declared apart from its equations) builds no system and imports no
    SymPy, and
    prints what the run that generated them printed (the first run may generate; the second
    must not need to)."""
    args = ["solve", *model, "--alpha", "2", "--kappa", "1/2", "--rho", "1/100", "--dps", "15",
            "--json", *extra]
    runs = []
    for _ in range(2):
        proc = subprocess.run([sys.executable, "-c", _SOLVE_IN_PROCESS, *args],
                              capture_output=True, text=True, cwd=REPO, timeout=300)
        assert proc.returncode == 0, proc.stderr
        runs.append(json.loads(proc.stdout))
    first, second = runs
    assert first["code"] == second["code"] == 0
    assert second["sympy"] is False
    assert json.loads(second["out"]) == json.loads(first["out"])
