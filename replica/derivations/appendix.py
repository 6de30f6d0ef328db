"""Write one paper's appendix: run the checks of its derivation, render the ``.tex`` with
:mod:`replica.latex`, optionally compile the PDF."""

from __future__ import annotations

import dataclasses
import os

from ..latex import CompileReport, compile_pdf, latexmk_path, render
from . import get


@dataclasses.dataclass(frozen=True)
class AppendixResult:
    """Paths written, the check outcomes, and the PDF compilation report (if any)."""

    tex: str
    outcomes: tuple
    pdf: CompileReport | None = None


def write_appendix(name, outdir: str, pdf: bool = False, symbol_names=None,
                   outcomes=None, point: dict | None = None, dps: int = 30) -> AppendixResult:
    """Write ``OUTDIR/NAME.tex`` for derivation ``name`` (and ``NAME.pdf`` when ``pdf``).

    The checks of every step run first (unless ``outcomes`` are given); a failing check raises
    :class:`~replica.latex.document.CheckFailedError` and nothing is written. With ``pdf`` a
    missing ``latexmk`` is reported before any work is done. ``name`` may also be a declared
    model's :class:`~replica.problem.Problem` (:func:`replica.derivations.model.derivation_for`,
    with a table of the solution at ``point``, solved at ``dps`` digits).
    """
    if pdf:
        latexmk_path()
    if isinstance(name, str):
        doc = get(name)
    else:
        from .model import derivation_for

        doc = derivation_for(name, point=point, dps=dps)
        name = doc.key
    if outcomes is None:
        outcomes = doc.run_checks()
    text = render(doc, symbol_names=symbol_names, outcomes=outcomes)
    os.makedirs(outdir, exist_ok=True)
    tex = os.path.join(outdir, f"{name}.tex")
    with open(tex, "w", encoding="utf-8") as fh:
        fh.write(text)
    report = compile_pdf(tex) if pdf else None
    return AppendixResult(tex, tuple(outcomes), report)
