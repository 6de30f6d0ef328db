"""Write one paper's appendix: run the checks of its derivation, render the ``.tex`` with
:mod:`replica.latex`, optionally compile the PDF."""

from __future__ import annotations

import dataclasses
import os

from ..latex import CompileReport, compile_pdf, latexmk_path, render
from . import get
from .base import run_check


@dataclasses.dataclass(frozen=True)
class AppendixResult:
    """Paths written, the check outcomes, and the PDF compilation report (if any)."""

    tex: str
    outcomes: tuple
    pdf: CompileReport | None = None


def write_appendix(name, outdir: str, pdf: bool = False, symbol_names=None,
                   outcomes=None, point: dict | None = None, dps: int = 30,
                   progress=None) -> AppendixResult:
    """Write ``OUTDIR/NAME.tex`` for derivation ``name`` (and ``NAME.pdf`` when ``pdf``).

    The checks of every step run first (unless ``outcomes`` are given); a failing check raises
    :class:`~replica.latex.document.CheckFailedError` and nothing is written. With ``pdf`` a
    missing ``latexmk`` is reported before any work is done. ``name`` may also be a declared
    model's :class:`~replica.problem.Problem` (:func:`replica.derivations.model.derivation_for`,
    with a table of the solution at ``point``, solved at ``dps`` digits). ``progress``: a
    ``report(done, total, note)`` callback, called before each step's check and at the
    rendering.
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
    text = render(doc, symbol_names=symbol_names, outcomes=outcomes)
    if progress:
        progress(len(outcomes) + 1, len(outcomes) + 1, "written")
    os.makedirs(outdir, exist_ok=True)
    tex = os.path.join(outdir, f"{name}.tex")
    with open(tex, "w", encoding="utf-8") as fh:
        fh.write(text)
    report = compile_pdf(tex) if pdf else None
    return AppendixResult(tex, tuple(outcomes), report)
