"""Typesetting of every appendix, standalone and as a fragment, in ``article`` and in two-column
``revtex4-2`` (marked ``slow`` and ``pdf``; needs TeX Live, texlive-publishers and poppler-utils).

Each document is compiled with :func:`replica.latex.compile_pdf` (an error or an undefined
reference raises); the final log must hold no overfull box over 1 pt and no other warning, and the
text of the PDF (``pdftotext``) no software word or ASCII identifier (:data:`PDF_DEFECTS`), the
LaTeX source no prose-math defect (:data:`TEX_DEFECTS`). The revtex checks are skipped, with the
reason, where ``revtex4-2.cls`` is not installed (``.ci/run`` installs it). The last tests show
that each scan finds what it looks for.
"""

import importlib.util
import os
import re
import shutil
import subprocess

import pytest

from conftest import REPO, require_tex_tools
from replica.derivations import get
from replica.derivations.base import CheckOutcome
from replica.latex import compile_pdf, render_parts
from replica.latex.bibliography import BIB_NAME
from replica.latex.pdf import log_problems

pytestmark = [pytest.mark.pdf, pytest.mark.slow]

#: Software words and ASCII identifiers that must not reach the text of a PDF: (pattern, what).
PDF_DEFECTS = (
    (r":(?:func|mod|class|meth|math|data|attr):", "reST role"),
    (r"`", "backtick"),
    (r"‘[^‘’\s]{1,40}‘", "name in backticks"),
    (r"\b[A-Za-z]+_[A-Za-z0-9_]+\b", "_-joined identifier"),
    (r"ESCALAR|[a-z’'][A-Z]{4,}|\b[A-Z]+_[A-Z]+", "constant name"),
    (r"\boo\b", "oo for infinity"),
    (r"\b(?:spike|powerlaw|lowrank|file|identity|piano|twolevel):\S", "SPEC string"),
    (r"\b[A-Za-z]{1,4}(?:hat|bar|tilde)\d*\b(?<![wW]hat)(?<![tT]hat)(?<![cC]hat)",
     "accent spelled out"),
    (r"\bhat\b|\bwhat what\b|\b\w-hat\b", "accent spelled out"),
    (r"\(x\)", "(x) for a Kronecker product"),
    (r"\\[A-Za-z]+", "LaTeX command as text"),
    (r"\?\?", "undefined reference"),
    (r"\bexpand[ _]averages\b|\bcheck[ _]decomposition\b|\bcallable\b", "function name"),
)

#: Defects of the LaTeX source (prose): (pattern, what).
TEX_DEFECTS = (
    (r"(?<!\\)\\_", "underscore in prose"),
    (r"(?:\\to|=|<|>|\\le|\\ge)\s*\$\s*-?\d", "formula cut before its operand"),
    (r"\$(?:a|an|the|of|is) \\", "English word inside a formula"),
    (r"\\mathrm\{(?:PRIME|CLOSED|SCALAR|kappa|alpha|tau|hat)\}", "identifier as a subscript"),
    (r"'\$s\b", "possessive inside a formula"),
)


def pdf_defects(text: str) -> list:
    text = re.sub(r"\s+", " ", text)
    return [(what, text[max(0, m.start() - 30):m.end() + 30])
            for pattern, what in PDF_DEFECTS for m in re.finditer(pattern, text)]


def tex_defects(tex: str) -> list:
    tex = re.sub(r"(?m)^%.*$", "", tex)
    return [(what, tex[max(0, m.start() - 40):m.end() + 20])
            for pattern, what in TEX_DEFECTS for m in re.finditer(pattern, tex)]


def _pdf_text(pdf) -> str:
    # -raw: the text in the order TeX set it (column by column); the default reading-order
    # reconstruction can splice a word of one column into the other (a hyphenated title word of
    # the bibliography joined to a formula of the verification table read as a constant name).
    return subprocess.run(["pdftotext", "-raw", str(pdf), "-"], capture_output=True, text=True,
                          check=True).stdout


def _revtex_available() -> bool:
    kpse = shutil.which("kpsewhich")
    if kpse is None:
        return False
    out = subprocess.run([kpse, "revtex4-2.cls"], capture_output=True, text=True)
    return bool(out.stdout.strip())


@pytest.fixture(autouse=True)
def tex_tools():
    require_tex_tools()


CLASSES = ("article", "revtex")
DOCUMENTS = ("alignment", "lowrank", "ridge_regression", "structured_teacher")
#: The model appendices carry a table of the solution at a point (``--at``).
POINTS = {"ridge_regression": dict(alpha="2", lam="1/10", sigma="1/2"),
          "structured_teacher": dict(alpha="2", lam="1/100", sigma="1/10")}

FRAGMENT_PAPER = {
    "article": r"""\documentclass[11pt]{article}
\usepackage[margin=2.3cm]{geometry}
\input{%(key)s-macros}
\usepackage{hyperref}
\begin{document}
\section{Introduction}
Our results use the theory of the appendix \cite{lu2024asymptotic}.
\appendix
\input{%(key)s-body}
\bibliographystyle{unsrt}
\bibliography{%(bib)s}
\end{document}
""",
    "revtex": r"""\documentclass[aps,pre,twocolumn,10pt,floatfix]{revtex4-2}
\input{%(key)s-macros}
\usepackage{hyperref}
\begin{document}
\title{A paper}
\author{A. Author}
\noaffiliation
\maketitle
\section{Introduction}
Our results use the theory of the appendix \cite{lu2024asymptotic}.
\appendix
\input{%(key)s-body}
\bibliography{%(bib)s}
\end{document}
"""}


def _derivation(name):
    if name in ("alignment", "lowrank"):
        return get(name)
    from replica.derivations.model import derivation_for

    spec = importlib.util.spec_from_file_location(
        f"example_{name}", os.path.join(REPO, "examples", f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    model = module.MODEL
    return derivation_for(getattr(model, "problem", model), point=POINTS[name])


@pytest.fixture(scope="module")
def derivations():
    return {}


def _write(doc, document_class, folder):
    # The checks run in test_derivations*.py and test_model_files.py; here they count as passed.
    parts = render_parts(doc, outcomes=[CheckOutcome(s.name, True) for s in doc.steps],
                         document_class=document_class)
    folder.mkdir(parents=True, exist_ok=True)
    files = {f"{doc.key}.tex": parts.standalone, f"{BIB_NAME}.bib": parts.bib,
             f"{doc.key}-body.tex": parts.body, f"{doc.key}-macros.tex": parts.macros,
             "paper.tex": FRAGMENT_PAPER[document_class] % dict(key=doc.key, bib=BIB_NAME)}
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    for name, draw in parts.figures:
        draw(str(folder / name))
    return parts


def _problems(report) -> list:
    with open(report.log, encoding="latin-1") as fh:
        return log_problems(fh.read())


@pytest.mark.parametrize("document_class", CLASSES)
@pytest.mark.parametrize("name", DOCUMENTS)
def test_appendix_typesets_cleanly(name, document_class, derivations, tmp_path):
    if document_class == "revtex" and not _revtex_available():
        msg = "revtex4-2.cls not installed (Debian: apt-get install texlive-publishers)"
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail(msg)
        pytest.skip(msg)
    doc = derivations.setdefault(name, _derivation(name))
    parts = _write(doc, document_class, tmp_path)
    assert tex_defects(parts.body) == []
    for base in (doc.key, "paper"):  # the standalone appendix, then the fragment in a paper
        report = compile_pdf(str(tmp_path / f"{base}.tex"))  # raises on undefined references
        assert report.undefined_references == ()
        assert _problems(report) == [], (base, _problems(report)[:10])
        text = _pdf_text(report.pdf)
        assert pdf_defects(text) == [], (base, pdf_defects(text)[:10])
        # Every arXiv identifier of the bibliography is printed once.
        for arxiv in set(re.findall(r"\d{4}\.\d{5}", parts.bib)):
            assert re.sub(r"\s+", "", text).count(arxiv) <= 1, arxiv


# ---------------------------------------------------------------------------------------------
# The scans can fail
# ---------------------------------------------------------------------------------------------
def test_the_pdf_scan_finds_software_words(tmp_path):
    tex = tmp_path / "words.tex"
    tex.write_text("\\documentclass{article}\\begin{document}"
                   ":func:`check\\_decomposition`, as $d \\to$ oo, x (x) w, the model's ESCALAR, "
                   "spike:1, Cov\\_{w hat}, Ewhat, y\\_hat\\end{document}\n")
    found = {what for what, _ in pdf_defects(_pdf_text(compile_pdf(str(tex)).pdf))}
    assert {"reST role", "oo for infinity", "(x) for a Kronecker product", "constant name",
            "SPEC string", "accent spelled out", "function name"} <= found


def test_the_tex_scan_finds_prose_math_defects():
    bad = (r"as $n \to$ 0; fixed by $a \delta$ function; expand\_averages; "
           r"$F_{\mathrm{PRIME}}$; the model'$s F$")
    assert {what for what, _ in tex_defects(bad)} == {
        "underscore in prose", "formula cut before its operand", "English word inside a formula",
        "identifier as a subscript", "possessive inside a formula"}


def test_an_overfull_display_is_reported(tmp_path):
    tex = tmp_path / "wide.tex"
    tex.write_text("\\documentclass[twocolumn]{article}\\begin{document}\\begin{equation}"
                   + " + ".join(f"x_{{{k}}}" for k in range(60))
                   + "\\end{equation}\\end{document}\n")
    problems = _problems(compile_pdf(str(tex)))
    assert any(p.startswith("Overfull box") for p in problems)
