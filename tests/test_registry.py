"""No command and no simulation module knows a built-in model by name: what is model-specific is
declared in ``replica/registry/NAME.py`` and reaches them through the registry.

The check reads every module under ``replica/commands/`` and ``replica/simulate/`` and looks for
the built-in names as words in its code, string literals included (a help text or a message that
names a model is model-specific too), leaving out docstrings and comments and a name followed by
``:`` (a covariance SPEC such as ``lowrank:F``)."""

from __future__ import annotations

import ast
import json
import io
import re
import tokenize
from pathlib import Path

import pytest

from conftest import REPO
from replica.registry import BUILTIN

CHECKED = ("replica/commands", "replica/simulate")
NAMES = re.compile(r"\b(" + "|".join(BUILTIN) + r")\b(?!:)")


def _docstring_lines(tree) -> set:
    """Lines of every docstring (module, class, function) and of bare string statements."""
    lines = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) \
                and isinstance(node.value.value, str):
            lines.update(range(node.lineno, node.end_lineno + 1))
    return lines


def model_names_in_code(source: str) -> list:
    """``(line, text)`` of every built-in name in the code of ``source`` (not in a docstring or
    a comment, not followed by ``:``)."""
    docs = _docstring_lines(ast.parse(source))
    found = []
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.COMMENT:
            continue
        if tok.type == tokenize.STRING and tok.start[0] in docs:
            continue
        for match in NAMES.finditer(tok.string):
            found.append((tok.start[0], match.group(0)))
    return found


def _hits() -> dict:
    out = {}
    for folder in CHECKED:
        for path in sorted((Path(REPO) / folder).rglob("*.py")):
            found = model_names_in_code(path.read_text(encoding="utf-8"))
            if found:
                out[str(path.relative_to(REPO))] = found
    return out


def test_no_model_name_in_commands_or_simulate():
    bad = [f"{rel}:{line}: {name}" for rel, found in _hits().items() for line, name in found]
    assert not bad, "model names outside the registry:\n" + "\n".join(bad)


def test_the_check_finds_a_name_and_skips_docs_comments_and_specs():
    source = ('"""Module docstring: lowrank."""\n'
              'def f(model):\n'
              '    """alignment in a docstring."""\n'
              '    # isotropic in a comment\n'
              '    spec = "lowrank:0.5"\n'
              '    if model == "lowrank":\n'
              '        return "the isotropic model"\n'
              '    return alignment_table\n')
    assert model_names_in_code(source) == [(6, "lowrank"), (7, "isotropic")]
    # an identifier that merely contains a name is not the name
    assert model_names_in_code("x = lowrank_tasks\n") == []


def test_every_builtin_declares_its_simulation():
    from replica import registry
    from replica.capabilities import LinearAttentionICL

    for entry in registry.builtins():
        sim = entry.simulation
        assert isinstance(sim, LinearAttentionICL), entry.name
        # every error is a value the model's theory reports
        assert set(sim.error_keys) <= set(entry.problem.report_names()), entry.name
        assert set(sim.order_parameters) <= set(entry.problem.report_names()), entry.name
        assert set(sim.score_errors) <= set(sim.error_keys)
        assert set(sim.score_parameters) <= set(sim.parameters)
        assert set(sim.parameters) <= set(entry.schema.names), entry.name


# ---------------------------------------------------------------------------------------------
# Every command works on a model file that declares everything (examples/ridge_regression.py)
# ---------------------------------------------------------------------------------------------
RIDGE = str(Path(REPO) / "examples" / "ridge_regression.py")
POINT = ["--lam", "1/10", "--sigma", "1/2"]
EVERY_COMMAND = {
    "solve": ["--alpha", "2", *POINT, "--json"],
    "equations": ["--json"],
    "transition": ["--name", "double-descent", "--json"],
    "phase-diagram": ["--x", "alpha:1/2:3:6", "--y", "lam:1/100:1:5:log", "--quantity", "test",
                      "--sigma", "1/2", "-o", "{out}"],
    "expand": ["--parameter", "alpha", "--quantity", "test", "--order", "1"],
    "appendix": ["-o", "{out}"],
    "simulate": ["--alpha", "2", *POINT, "--d", "40", "--seeds", "2", "--json"],
    "sweep": ["--alpha", "1,2", *POINT, "--d", "30", "--seeds", "2", "-o", "{out}"],
    "check": ["--alpha", "1,2", *POINT, "--ds", "20,30", "--seeds", "2", "-o", "{out}"],
}


def test_every_command_is_covered():
    """The list below names every command of the program (a new command joins it)."""
    from replica.cli import COMMAND_MODULES

    assert {m.rsplit(".", 1)[1].replace("_", "-") for m in COMMAND_MODULES} == set(EVERY_COMMAND)


@pytest.mark.slow
@pytest.mark.parametrize("command", sorted(EVERY_COMMAND))
def test_every_command_runs_on_one_model_file(command, tmp_path, capsys):
    """One model file -- its declaration, its SIMULATION and its TRANSITIONS -- is all every
    command needs: each runs on it, exits 0 and writes what it says."""
    from replica.cli import main

    args = [a.replace("{out}", str(tmp_path / "out")) for a in EVERY_COMMAND[command]]
    rc = main([command, "--model", RIDGE, *args, "--quiet"])
    out = capsys.readouterr()
    assert rc == 0, out.err
    if "--json" in args:
        data = json.loads(out.out)
        assert data
        if command in ("solve", "transition"):
            assert data["status"] == "converged"
        if command == "simulate":
            est = data["errors"]["test"] if "errors" in data else data["values"]["test"]
            assert abs(float(est["z"])) < 4
    if "-o" in args:  # a folder of files, or (sweep) one CSV file
        out_path = tmp_path / "out"
        assert out_path.is_file() or any(out_path.iterdir())
