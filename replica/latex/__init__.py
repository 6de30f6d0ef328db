"""LaTeX rendering of derivations, and compilation to PDF (this package knows no derivation:
the appendices are written by :mod:`replica.derivations.appendix`).

* :func:`to_latex` -- SymPy -> LaTeX with display names (``\\hat{q}``, ``\\tilde{\\lambda}``, ...)
  and the stored term order;
* :class:`ValueTable`, :class:`Value` -- tables of solved values printed to their guaranteed digits;
  :class:`Figure` -- a figure drawn into the appendix's folder;
* :func:`render` -- a :class:`~replica.derivations.base.Derivation` to a LaTeX document (Jinja2
  template, numbered displays with ``\\label``/``\\eqref`` cross-references);
* :func:`compile_pdf` -- ``latexmk -pdf -interaction=nonstopmode -halt-on-error``.
"""

from .bibliography import PAPERS, bibtex
from .document import (AppendixSource, CheckFailedError, comparable, normalise, render,
                       render_parts)
from .pdf import CompileReport, LatexCompileError, LatexToolMissing, compile_pdf, latexmk_path
from .printing import escape_text, plain_text, prose_to_latex, to_latex
from .tables import Figure, Value, ValueTable

__all__ = ["PAPERS", "bibtex", "AppendixSource", "render_parts", "CompileReport", "LatexCompileError", "LatexToolMissing", "compile_pdf",
           "latexmk_path", "CheckFailedError", "comparable", "normalise", "render", "escape_text", "plain_text",
           "prose_to_latex", "to_latex", "Value", "ValueTable", "Figure"]
