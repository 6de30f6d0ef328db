"""Compiling the committed appendices to PDF (marked ``pdf``; needs TeX Live and poppler-utils).

Without ``latexmk``/``pdftotext`` these tests fail in CI (``CI=true``, where ``.ci/run`` installs
them) and are skipped elsewhere, with the reason.
"""

import os
import re
import shutil
import subprocess
import time

import pytest

from conftest import REPO, require_tex_tools
from replica.derivations import get, names
from replica.derivations.appendix import write_appendix
from replica.derivations.base import CheckOutcome
from replica.latex import LatexCompileError, compile_pdf
from replica.latex.pdf import log_problems

pytestmark = [pytest.mark.pdf, pytest.mark.slow]  # compiles PDFs


@pytest.fixture(autouse=True)
def tex_tools():
    require_tex_tools()


def _pdf_text(pdf) -> str:
    out = subprocess.run(["pdftotext", "-layout", str(pdf), "-"], capture_output=True,
                         text=True, check=True).stdout
    return re.sub(r"\s+", " ", out)


def _compile_committed(name, tmp_path):
    folder = os.path.join(REPO, "derivations")
    figures = [f for f in os.listdir(folder) if f.startswith(f"{name}-") and f.endswith(".png")]
    for f in (f"{name}.tex", "replica-papers.bib", *figures):
        shutil.copy(os.path.join(folder, f), tmp_path / f)
    t0 = time.perf_counter()
    report = compile_pdf(str(tmp_path / f"{name}.tex"))  # raises on an error or undefined ref
    return report, time.perf_counter() - t0


def _assert_clean(report):
    """No LaTeX error, undefined reference or citation, overfull box over 1 pt, rerun request
    or other warning in the final log (:func:`replica.latex.pdf.log_problems`)."""
    log = open(report.log, encoding="latin-1").read()
    assert "! " not in "\n".join(ln[:2] for ln in log.splitlines())
    assert report.undefined_references == ()
    assert report.warnings == (), report.warnings
    assert log_problems(log) == []


#: ASCII names of symbols that must not appear outside math mode.
ASCII_SYMBOLS = re.compile(
    r"\b(?:kappa|rho|alpha|tau|lambda|lam|sigma|beta|chi\w*|q\w*hat|m\w*hat|gtilde'?|"
    r"epsilon\w*|varepsilon\w*|eps|[a-z]bar|e_\w+)\b|\b\d+(?:\.\d+)?e-?\d+\b")
# (pdftotext prints a subscript m_0 as "m0": such names are scanned in the .tex, test_latex.py.)


@pytest.mark.parametrize("name", names())
def test_committed_appendix_compiles(name, tmp_path):
    report, seconds = _compile_committed(name, tmp_path)
    assert os.path.getsize(report.pdf) > 10_000
    _assert_clean(report)
    assert seconds < 120
    text = _pdf_text(report.pdf)
    doc = get(name)
    assert "Check: passed." not in text
    assert text.count("Verification") >= 2  # contents line and the section
    assert "References" in text  # the bibliography
    # No equation tags of other documents, no design-document or module names, no "??".
    # No Sphinx roles or literals from docstrings, no ASCII prose math (sqrt(), ||x||, "~").
    for bad in (r"\([RTEM]\d+\)", r"\bspec\b", r"\breplica\.\w", r"[A-Z]+_[A-Z_]+", r"\?\?",
                r":(?:func|mod|data|class|meth|attr):", r"``", r"\bsqrt\s*\(", r"\|\s*\|",
                r" ~ ", r"\b[a-z] x [a-z]\b"):
        assert re.search(bad, text) is None, (bad, re.search(bad, text))
    found = ASCII_SYMBOLS.findall(text)
    assert found == [], found[:20]
    # Every step is in the document (titles as LaTeX prints them, Greek as Unicode).
    assert len(re.findall(r"\\subsection\{", open(tmp_path / f"{name}.tex").read())) == \
        len(doc.steps)


def test_a_symbol_name_in_text_mode_is_found(tmp_path):
    # The scan above can fail: a document with ASCII symbol names in its text is caught.
    tex = tmp_path / "ascii.tex"
    tex.write_text("\\documentclass{article}\\begin{document}kappa qhat = tau - 1, gtilde', "
                   "1e-25\\end{document}\n")
    report = compile_pdf(str(tex))
    assert len(ASCII_SYMBOLS.findall(_pdf_text(report.pdf))) == 5


def test_lowrank_pdf_shows_the_saddle_point_equations(tmp_path):
    report, _ = _compile_committed("lowrank", tmp_path)
    text = _pdf_text(report.pdf)
    assert "Saddle-point equations" in text
    doc = get("lowrank")
    saddle = [s for s in doc.sections if s.title == "Saddle-point equations"][0]
    for step in saddle.steps:
        assert doc.title_of(step) in text


def test_latex_error_is_one_line(tmp_path):
    tex = tmp_path / "broken.tex"
    tex.write_text("\\documentclass{article}\\begin{document}\\undefinedmacro\\end{document}\n")
    with pytest.raises(LatexCompileError) as err:
        compile_pdf(str(tex))
    msg = str(err.value)
    assert "Undefined control sequence" in msg and "\n" not in msg


def test_undefined_reference_is_an_error(tmp_path):
    tex = tmp_path / "ref.tex"
    tex.write_text("\\documentclass{article}\\begin{document}See \\ref{nowhere}.\\end{document}\n")
    with pytest.raises(LatexCompileError, match="undefined references nowhere"):
        compile_pdf(str(tex))


def test_cli_pdf(cli, tmp_path):
    code, out, err = cli("appendix", "alignment", "-o", tmp_path, "--pdf", "--fragment")
    assert code == 0, err
    assert (tmp_path / "alignment.pdf").exists() and "latexmk" in out
    assert "step checks passed" in out
    text = (tmp_path / "alignment.tex").read_text()
    assert r"\begin{document}" in text and r"\end{document}" in text
    assert "0 LaTeX warning(s)" in out and "Warning" not in err
    for f in ("replica-papers.bib", "alignment-body.tex", "alignment-macros.tex"):
        assert (tmp_path / f).exists() and f in out
    assert "Effective ridge" in _pdf_text(tmp_path / "alignment.pdf")


def test_warnings_are_reported_one_a_line(tmp_path):
    tex = tmp_path / "warn.tex"
    tex.write_text("\\documentclass{article}\\begin{document}\\hbox to 10pt{"
                   "\\hbox to 30pt{x}}\\hbox to 10pt{\\hbox to 10.5pt{}}"
                   "\\label{a}\\label{a}\\end{document}\n")
    report = compile_pdf(str(tex))
    assert any("multiply defined" in w for w in report.warnings)
    overfull = [w for w in report.warnings if w.startswith("Overfull")]
    assert len(overfull) == 1 and "20.0pt" in overfull[0]  # the 0.5 pt one is tolerated
    assert all("\n" not in w for w in report.warnings)


# ---------------------------------------------------------------------------------------------
# Fragments: each one \input into an article, and both into one article
# ---------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def fragments(tmp_path_factory):
    """Both appendices written once with --fragment (checks marked passed: they run in
    test_derivations.py)."""
    out = tmp_path_factory.mktemp("fragments")
    for name in ("lowrank", "alignment"):
        doc = get(name)
        write_appendix(name, str(out), fragment=True,
                       outcomes=[CheckOutcome(s.name, True) for s in doc.steps])
    return out


ARTICLE = r"""\documentclass[11pt]{article}
\usepackage[margin=2.3cm]{geometry}
%(preamble)s
\usepackage{hyperref}
\begin{document}
\section{Introduction}
Our results use the theory of the appendices \cite{lu2024asymptotic}.
\appendix
%(body)s
\bibliographystyle{unsrt}
\bibliography{%(bibs)s}
\end{document}
"""


def _article(folder, name, parts):
    tex = folder / f"{name}.tex"
    tex.write_text(ARTICLE % dict(
        preamble="\n".join(r"\input{%s-macros}" % p for p in parts),
        body="\n".join(r"\input{%s-body}" % p for p in parts),
        bibs="replica-papers"))
    return compile_pdf(str(tex))


@pytest.mark.parametrize("part", ["lowrank", "alignment"])
def test_fragment_inputs_into_an_article(fragments, part):
    report = _article(fragments, f"paper-{part}", [part])
    _assert_clean(report)
    assert "Verification" in _pdf_text(report.pdf)


def test_two_fragments_compile_together(fragments):
    # A macro both files provide must mean the same in both (\providecommand keeps the first).
    defs = {}
    for part in ("lowrank", "alignment"):
        text = (fragments / f"{part}-macros.tex").read_text()
        for name, body in re.findall(r"\\providecommand\{\\([A-Za-z]+)\}(.*)", text):
            assert defs.setdefault(name, body) == body, name
    report = _article(fragments, "paper-both", ["lowrank", "alignment"])
    _assert_clean(report)
    text = _pdf_text(report.pdf)
    assert "Replica formulation" in text and "Effective ridge" in text
    assert text.count("Verification") >= 2
