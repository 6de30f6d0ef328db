"""Write one paper's appendix: run the checks, render the ``.tex``, optionally compile the PDF."""

from __future__ import annotations

import dataclasses
import os

from .pdf import CompileReport, compile_pdf, latexmk_path
from .document import render


@dataclasses.dataclass(frozen=True)
class AppendixResult:
    """Paths written, the check outcomes, and the PDF compilation report (if any)."""

    tex: str
    outcomes: tuple
    pdf: CompileReport | None = None


def write_appendix(name: str, outdir: str, pdf: bool = False, symbol_names=None,
                   outcomes=None) -> AppendixResult:
    """Write ``OUTDIR/NAME.tex`` for derivation ``name`` (and ``NAME.pdf`` when ``pdf``).

    The checks of every step run first (unless ``outcomes`` are given); a failing check raises
    :class:`~replica.latex.document.CheckFailedError` and nothing is written. With ``pdf`` a
    missing ``latexmk`` is reported before any work is done.
    """
    from ..derivations import get

    if pdf:
        latexmk_path()
    doc = get(name)
    if outcomes is None:
        outcomes = doc.run_checks()
    text = render(doc, symbol_names=symbol_names, outcomes=outcomes)
    os.makedirs(outdir, exist_ok=True)
    tex = os.path.join(outdir, f"{name}.tex")
    with open(tex, "w", encoding="utf-8") as fh:
        fh.write(text)
    report = compile_pdf(tex) if pdf else None
    return AppendixResult(tex, tuple(outcomes), report)
