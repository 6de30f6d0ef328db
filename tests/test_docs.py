"""The documentation site builds with warnings as errors (``-n -W``, as ``make docs`` does) and
says what the code does: every command of the CLI has its section, generated from the parsers;
the API reference documents ``replica.solve``; the theory pages print the declared equations
and parameters; no page refers to material outside the repository."""

from __future__ import annotations

import html
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
DOCS = REPO / "docs"
sys.path.insert(0, str(DOCS / "_ext"))

#: Words that would point a reader at files this repository does not ship.
OUTSIDE_REFERENCES = re.compile(r"\.\./shared|shared/spec|DESIGN\.md|\bspec(ification)?\s+(section|tag)"
                                r"|\bthe spec\b|\bspec/", re.IGNORECASE)


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    out = tmp_path_factory.mktemp("html")
    proc = subprocess.run([sys.executable, "-m", "sphinx", "-b", "html", "-n", "-W",
                           "--keep-going", "-q", "-d", str(out / ".doctrees"), str(DOCS),
                           str(out)], capture_output=True, text=True, timeout=300, cwd=REPO,
                          env=dict(os.environ, PYTHONPATH=str(REPO)))
    assert proc.returncode == 0, proc.stderr[-4000:]
    return out


def option_terms(text: str, section: str) -> list[str]:
    """The texts of the option terms (``<dt>``) of one section of the CLI page, before the
    next section begins."""
    start = text.index(f'id="{section}"')
    end = text.find("<section", start)
    chunk = text[start:end if end >= 0 else len(text)]
    terms = re.findall(r"<dt>(.*?)</dt>", chunk, flags=re.S)
    return [html.unescape(re.sub(r"<[^>]+>", "", t)).strip() for t in terms]


def page(site, name: str) -> str:
    return (site / name).read_text(encoding="utf-8")


@pytest.mark.slow
def test_every_cli_command_has_a_section(site, monkeypatch):
    from cli_reference import section_id, walk

    from replica.cli import build_parser

    text = page(site, "cli.html")
    commands = [(words, parser) for words, _, parser in walk(build_parser())]
    assert len(commands) > 20  # nine commands, most with a sub-command per model
    for words, parser in commands:
        assert f'id="{section_id(words)}"' in text, " ".join(words)
        terms = option_terms(text, section_id(words))
        for action in parser._actions:  # every option is a term of the section's option list
            for option in action.option_strings:
                assert any(piece.split()[0] == option for term in terms
                           for piece in term.split(", ")), (" ".join(words), option)
    # the parsers built for a model file offer its declared parameters
    from cli_reference import model_file_parsers

    from replica.modeling import load_model_file

    declared = load_model_file(str(REPO / "examples" / "ridge_regression.py")).schema
    monkeypatch.chdir(REPO)
    commands = model_file_parsers("examples/ridge_regression.py")
    assert {"solve", "transition", "phase-diagram", "sweep"} <= {c for c, _ in commands}
    for command in ["solve", "transition", "phase-diagram", "sweep"]:  # those given values
        terms = option_terms(text, f"replica-{command}-model")
        for parameter in declared.parameters:
            assert any(t.split()[0] == parameter.option for t in terms), (command, parameter)
    # a sample of the help texts, as argparse has them
    assert "task-RANK RATIO r/D in (0, 1]" in text
    assert "prove the result: a Krawczyk inclusion" in text


@pytest.mark.slow
def test_api_reference_documents_solve_and_the_result(site):
    text = page(site, "api.html")
    for name in ["replica.solve", "replica.solve_float64", "replica.load_model",
                 "replica.numerics.result.Result", "replica.numerics.driver.solve",
                 "replica.modeling.SaddlePointModel", "replica.analysis.scan.locate"]:
        assert f'id="{name}"' in text, name


@pytest.mark.slow
def test_theory_pages_print_the_declared_equations_and_parameters(site):
    from replica.latex.printing import to_latex
    from replica.models import lowrank
    from replica.models.parameters import SCHEMAS

    text = html.unescape(page(site, "theory/lowrank.html"))
    assert to_latex(lowrank.E_TR, symbol_names=lowrank.SYMBOL_NAMES) in text
    for name, schema in SCHEMAS.items():
        theory = html.unescape(page(site, f"theory/{name}.html"))
        for parameter in schema.parameters:
            assert parameter.option in theory and parameter.help in theory, (name, parameter)


@pytest.mark.slow
def test_tutorial_examples_and_gallery_are_in_the_site(site):
    assert "ridge regression" in page(site, "tutorial_own_model.html").lower()
    assert "from a loss and a teacher" in page(site, "tutorial_glm.html").lower()
    examples = page(site, "examples.html")
    for path in sorted((REPO / "examples").glob("*.py")):
        assert path.name in examples
    gallery = page(site, "gallery.html")
    for path in sorted((REPO / "notebooks").glob("[a-z]*.py")):
        assert path.name in gallery  # the command that draws it
    assert "$" not in re.sub(r"<[^>]+>", "", "".join(re.findall(r"<h2>.*?</h2>", gallery)))
    assert r"\(\alpha_{\rm test}\)" in gallery  # a title's math, typeset


@pytest.mark.slow
def test_no_reference_outside_the_repository(site):
    sources = [p for p in DOCS.rglob("*") if p.suffix in {".md", ".rst", ".py"}
               and "_build" not in p.parts]
    built = [p for p in site.rglob("*.html")]
    bad = [str(p) for p in sources + built
           if OUTSIDE_REFERENCES.search(p.read_text(encoding="utf-8"))]
    assert not bad, bad


def test_reference_pattern_catches_what_it_should():
    for text in ["see ../shared/DESIGN.md", "as in the spec", "spec section 3.3", "shared/spec/x"]:
        assert OUTSIDE_REFERENCES.search(text), text
    for text in ["a covariance SPEC", "--train SPEC", "specialisation", "spectrum"]:
        assert not OUTSIDE_REFERENCES.search(text), text


def test_gallery_finds_a_notebooks_figures(tmp_path):
    from gallery import notebook_figures, notebook_title

    nb = tmp_path / "a9_demo.py"
    nb.write_text("# ---\n# jupyter:\n# ---\n\n# %% [markdown]\n# # A title here\n#\n")
    assert notebook_title(str(nb)) == "A title here"
    (tmp_path / "a9_demo.png").write_bytes(b"")
    (tmp_path / "a9_demo").mkdir()
    (tmp_path / "a9_demo" / "inner.png").write_bytes(b"")
    (tmp_path / "a9_demo_theory.csv").write_text("")
    (tmp_path / "a9_demolition.png").write_bytes(b"")  # another notebook's
    assert notebook_figures(str(tmp_path), "a9_demo") == ["a9_demo.png",
                                                         os.path.join("a9_demo", "inner.png")]


def test_help_of_solve_documents_models_result_and_an_example():
    import pydoc

    import replica
    from replica.models import NAMES
    from replica.models.parameters import SCHEMAS

    text = pydoc.render_doc(replica.solve, renderer=pydoc.plaintext)
    for name in NAMES:
        assert f"{name}: " in text, name
        for p in SCHEMAS[name].parameters:  # each parameter with its meaning and default
            assert re.search(rf"^ +{p.name} +{re.escape(p.help)} \((required|default)", text,
                             flags=re.M), (name, p.name)
    for word in ["Status", "converged", "not-verified", "digits", "certificate", "enclosures",
                 "ParameterError", "ConvergenceError", ">>> r = replica.solve("]:
        assert word in text, word


def test_solve_certifies_from_python():
    import replica

    r = replica.solve("isotropic", alpha=2, tau="1/2", kappa="1/2", rho="1/100", lam="1/10",
                      dps=20, certify=True)
    assert r.certificate is not None and r.certificate.certified
    assert r.status.value == "converged" and r.digits >= 15
    assert replica.solve("isotropic", alpha=2, tau=4, kappa=1, rho=0).certificate is None


def test_no_docstring_holds_a_control_character():
    """A ``\\t`` or ``\\b`` in a docstring that is not a raw string becomes a tab or a backspace
    (``\\to`` renders as a tab and "o"); the sources are parsed, nothing is imported."""
    import ast

    bad = []
    for path in sorted((REPO / "replica").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef,
                                 ast.AsyncFunctionDef)):
                doc = ast.get_docstring(node, clean=False) or ""
                if re.search(r"[\x00-\x09\x0b-\x1f]", doc):  # all but the newline
                    bad.append(f"{path.relative_to(REPO)}:{getattr(node, 'name', 'module')}")
    assert not bad, bad
