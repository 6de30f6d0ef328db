"""``docs/tutorial_glm.md`` runs as written (as ``tests/test_tutorial.py`` runs the first
tutorial): its Python blocks are executed (``# file: NAME`` saves the block as that file) and
each ``$ replica ...`` command runs in-process with exit status 0, in a temporary folder."""

import os
import shlex

import pytest

from doc_blocks import code_blocks
from replica.cli import main

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TUTORIAL = os.path.join(REPO, "docs", "tutorial_glm.md")


def blocks():
    return code_blocks(TUTORIAL)


@pytest.mark.slow
def test_glm_tutorial_runs(tmp_path, monkeypatch, capsys):
    """Minutes: the logistic model's solves evaluate an implicit proximal map at every
    quadrature node."""
    monkeypatch.chdir(tmp_path)
    ran = {"python": 0, "console": 0}
    for kind, body in blocks():
        if kind == "python":
            first = body.splitlines()[0]
            if first.startswith("# file:"):
                (tmp_path / first.split(":", 1)[1].strip()).write_text(body)
            else:
                exec(compile(body, "tutorial_glm", "exec"), {})
        else:
            for line in body.splitlines():
                if line.startswith("$ replica "):
                    rc = main(shlex.split(line[len("$ replica "):]))
                    assert rc == 0, (line, capsys.readouterr().err)
        ran[kind] += 1
    assert ran == {"python": 3, "console": 6}  # the logistic diagram is a text block
    out = capsys.readouterr().out
    assert "[stated: the general formula" in out and "[derived]" in out
    assert '"generalisation": "0.252804217943349"' in out  # the value the page quotes
    assert "replicon" in out
    assert '"model": "my_ridge"' in out and '"errors.risk"' in out  # the simulation section
    assert (tmp_path / "curve.csv").read_text().count("\n") == 1 + 2
    assert (tmp_path / "diagram" / "my_ridge_test_alpha_lam.png").exists()
    assert (tmp_path / "appendix" / "my-logistic.tex").exists()


def test_glm_tutorial_declares_through_the_builder():
    code = [b for k, b in blocks() if k == "python"]
    assert "ERM(" in code[0] and "free_energy" not in code[0]
