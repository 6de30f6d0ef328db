"""Long displays of the model appendices broken across lines (issue 26): Gaussian integrals whose
integrands run to thousands of points, repeated inside one display and nested in each other's
integrands (the closed map of a saddle point), set with their integrals and repeated
subexpressions named in a "where" clause (:class:`replica.latex.breaking.IntegralNames`).

What is checked: on a synthetic display, that every printed line is estimated to fit and that
LaTeX itself (where installed) sets it with no overfull box, and that the named form with its
definitions substituted back is the display itself (nothing is lost or changed by the naming);
in the slow tier, that the appendices of the five worked examples of issue 26 typeset, in the
one-column article and in two-column revtex, with no overfull box over 1 pt."""

from __future__ import annotations

import importlib.util
import os
import re
import shutil

import pytest
import sympy

from conftest import REPO
from replica.latex.breaking import IntegralNames, estimate_width
from replica.latex.document import _display_block
from replica.symbolic.gaussian import GaussianIntegral

a, b, m = sympy.symbols("a b m", positive=True)
z = sympy.Symbol("z", real=True)
WIDTH = 34.0  # em: the standalone article's display width (DISPLAY_WIDTH_EM["article"])


def _long_display():
    """``m = (1 + a I) / (b + I^2 + J)``: ``I`` a Gaussian integral with a twelve-term integrand,
    ``J`` one whose integrand holds ``I`` (nested) and a square root twice -- printed on one
    line, hundreds of em."""
    inner = GaussianIntegral(sum((a + k) * sympy.log(1 + sympy.exp(b * z + k)) / (m + k)
                                 for k in range(12)), z)
    root = sympy.sqrt(1 + m * z**2 + a**2 + b**2)  # twice in the outer integrand
    outer = GaussianIntegral(sympy.cosh(inner * z + a) / root + sympy.erfc(z * root + inner), z)
    return sympy.Eq(m, (1 + a * inner) / (b + inner**2 + outer)), inner, outer


def _all_lines(block) -> list:
    lines = list(block["lines"]) or [block["tex"]]
    for d in block["where"]:
        lines += list(d["lines"]) or [d["tex"]]
    return lines


def test_a_long_display_is_named_and_broken_to_fit():
    display, inner, outer = _long_display()
    from replica.latex.printing import to_latex

    assert estimate_width(to_latex(display)) > 5 * WIDTH  # it would not fit unbroken
    block = _display_block(display, {}, {}, WIDTH, IntegralNames())
    assert block["where"], "the integrals are named in a where clause"
    for line in _all_lines(block):
        assert estimate_width(line.replace("&", "")) <= WIDTH, line
    assert not any(r"\int" in line for line in (block["lines"] or [block["tex"]]))


def _expand(expr, definitions: dict):
    """``expr`` with every name replaced by its definition, until none is left."""
    for _ in range(20):
        new = expr.xreplace(definitions)
        if new == expr:
            return expr
        expr = new
    raise AssertionError("the definitions refer to each other in a cycle")


def test_the_named_form_with_its_definitions_is_the_display():
    display, inner, outer = _long_display()
    names = IntegralNames()
    short, needed = names.shorten(display)
    assert not short.has(GaussianIntegral) and len(needed) == 2
    assert names.definitions[needed[1]].has(needed[0])  # the outer integrand holds I_1
    assert _expand(short, names.definitions) == display
    exprs, named = names.name_repeats([short, *(names.definitions[s] for s in needed)],
                                      {}, {}, least=2.0)
    assert named, "a repeated subexpression wider than 2 em is named"
    shown = dict(zip(needed, exprs[1:]))  # as displayed: with the subexpressions' names
    shown.update({s: names.shown_definition(s, named) for s, _ in named})
    assert _expand(exprs[0], shown) == display


def test_latex_sets_the_broken_display_without_an_overfull_box(tmp_path):
    if shutil.which("latexmk") is None:
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail("latexmk not on PATH")
        pytest.skip("latexmk not on PATH (TeX Live)")
    from replica.latex import compile_pdf
    from replica.latex.pdf import log_problems

    display, _, _ = _long_display()
    block = _display_block(display, {}, {}, WIDTH, IntegralNames())
    body = []
    for d in [block, *block["where"]]:
        body.append(r"\begin{equation*}" + (r"\begin{split}" + " \\\\\n".join(d["lines"])
                                             + r"\end{split}" if d["lines"] else d["tex"])
                    + r"\end{equation*}")
    tex = tmp_path / "long.tex"
    tex.write_text("\\documentclass[11pt]{article}\\usepackage[margin=2.3cm]{geometry}"
                   "\\usepackage{amsmath,amssymb}\\begin{document}\n" + "\n".join(body)
                   + "\n\\end{document}\n")
    with open(compile_pdf(str(tex)).log, encoding="latin-1") as fh:
        problems = [p for p in log_problems(fh.read()) if p.startswith("Overfull")]
    assert problems == []


# --- the five examples of issue 26 (slow) ----------------------------------------------------
EXAMPLES = ("perceptron_capacity", "perceptron_teacher", "logistic_regression", "lasso",
            "hinge_svm")


@pytest.fixture(scope="module")
def example_derivations():
    return {}


def _derivation(name):
    from replica.derivations.model import derivation_for

    spec = importlib.util.spec_from_file_location(
        f"example_{name}", os.path.join(REPO, "examples", f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    model = module.MODEL
    return derivation_for(getattr(model, "problem", model))


def _revtex_available() -> bool:
    import subprocess

    kpse = shutil.which("kpsewhich")
    return kpse is not None and bool(subprocess.run(
        [kpse, "revtex4-2.cls"], capture_output=True, text=True).stdout.strip())


@pytest.mark.slow
@pytest.mark.pdf
@pytest.mark.parametrize("document_class", ("article", "revtex"))
@pytest.mark.parametrize("name", EXAMPLES)
def test_example_appendix_has_no_overfull_box(name, document_class, example_derivations,
                                              tmp_path):
    from conftest import require_tex_tools
    from replica.derivations.base import CheckOutcome
    from replica.latex import compile_pdf, render_parts
    from replica.latex.bibliography import BIB_NAME
    from replica.latex.pdf import log_problems

    require_tex_tools()
    if document_class == "revtex" and not _revtex_available():
        pytest.skip("revtex4-2.cls not installed (Debian: apt-get install texlive-publishers)")
    doc = example_derivations.setdefault(name, _derivation(name))
    # The checks run in the appendix command's tests; here only the typesetting is tested.
    parts = render_parts(doc, outcomes=[CheckOutcome(s.name, True) for s in doc.steps],
                         document_class=document_class)
    (tmp_path / f"{doc.key}.tex").write_text(parts.standalone, encoding="utf-8")
    (tmp_path / f"{BIB_NAME}.bib").write_text(parts.bib, encoding="utf-8")
    report = compile_pdf(str(tmp_path / f"{doc.key}.tex"))
    with open(report.log, encoding="latin-1") as fh:
        overfull = [p for p in log_problems(fh.read()) if p.startswith("Overfull")]
    assert overfull == [], overfull
    assert re.search(r"\\begin\{(?:equation|split)\}", parts.standalone)
