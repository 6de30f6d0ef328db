r"""Write one paper's appendix: run the checks of its derivation, render the ``.tex`` with
:mod:`replica.latex`, optionally compile the PDF.

Files written in the output folder for derivation ``NAME``:

* ``NAME.tex`` -- a standalone document (notation, body, bibliography) and
  ``replica-papers.bib`` (the same file for every appendix, so that several share it);
* with ``fragment``: ``NAME-body.tex`` (the appendix without preamble, to ``\input`` into a
  paper) and ``NAME-macros.tex`` (its notation as ``\providecommand`` and the packages it needs,
  to ``\input`` in the paper's preamble).
"""

from __future__ import annotations

import dataclasses
import os

from ..latex import CompileReport, compile_pdf, latexmk_path, render_parts
from ..latex.bibliography import BIB_NAME
from . import get
from .base import run_check


@dataclasses.dataclass(frozen=True)
class AppendixResult:
    """Paths written, the check outcomes, and the PDF compilation report (if any)."""

    tex: str
    outcomes: tuple
    pdf: CompileReport | None = None
    files: tuple = ()
    """Every file written (the ``.tex`` first)."""


def appendix_files(name: str, fragment: bool = False) -> list[str]:
    """The names of the files :func:`write_appendix` writes for ``name`` (without the PDF)."""
    files = [f"{name}.tex", f"{BIB_NAME}.bib"]
    if fragment:
        files += [f"{name}-body.tex", f"{name}-macros.tex"]
    return files


def write_appendix(name, outdir: str, pdf: bool = False, symbol_names=None,
                   outcomes=None, point: dict | None = None, dps: int = 30,
                   progress=None, fragment: bool = False,
                   document_class: str = "article") -> AppendixResult:
    r"""Write ``OUTDIR/NAME.tex`` for derivation ``name`` (and ``NAME.pdf`` when ``pdf``).

    The checks of every step run first (unless ``outcomes`` are given); a failing check raises
    :class:`~replica.latex.document.CheckFailedError` and nothing is written. With ``pdf`` a
    missing ``latexmk`` is reported before any work is done. ``name`` may also be a declared
    model's :class:`~replica.problem.Problem` (:func:`replica.derivations.model.derivation_for`,
    with a table of the solution at ``point``, solved at ``dps`` digits). ``progress``: a
    ``report(done, total, note)`` callback, called before each step's check and at the
    rendering. With ``fragment`` the ``\input``-able body and its notation file are written
    too (see the module docstring). ``document_class`` is the standalone document's class:
    ``"article"`` or ``"revtex"`` (two-column ``revtex4-2``); the fragment body is the same for both (its displays fit a column).
    """
    if pdf:
        latexmk_path()
    if progress:
        progress(0, None, "building the derivation")
    if isinstance(name, str):
        doc = get(name)
    else:
        from .model import derivation_for

        doc = derivation_for(name, point=point, dps=dps)
        name = doc.key
    if outcomes is None:
        outcomes = []
        total = len(doc.steps) + 1  # the checks, then the rendering
        for step in doc.steps:
            if progress:
                progress(len(outcomes), total, f"checking {step.name}")
            outcomes.append(run_check(step))
    if progress:
        progress(len(outcomes), len(outcomes) + 1, "rendering")
    parts = render_parts(doc, symbol_names=symbol_names, outcomes=outcomes,
                         document_class=document_class)
    if progress:
        progress(len(outcomes) + 1, len(outcomes) + 1, "written")
    os.makedirs(outdir, exist_ok=True)
    contents = {f"{name}.tex": parts.standalone, f"{BIB_NAME}.bib": parts.bib}
    if fragment:
        contents[f"{name}-body.tex"] = parts.body
        contents[f"{name}-macros.tex"] = parts.macros
    written = []
    for filename, text in contents.items():
        path = os.path.join(outdir, filename)
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)
        written.append(path)
    for filename, draw in parts.figures:
        path = os.path.join(outdir, filename)
        draw(path)
        written.append(path)
    tex = written[0]
    report = compile_pdf(tex) if pdf else None
    return AppendixResult(tex, tuple(outcomes), report, tuple(written))
