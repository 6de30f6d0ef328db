r"""Rendering a :class:`~replica.derivations.base.Derivation` to a LaTeX document.

Layout: one ``\section`` per section of the derivation, one ``\subsection`` per step. A step shows
its sentence, then each of its objects in order -- a SymPy relation or expression as a numbered
display (``equation``, or breqn's ``dmath`` when it is long enough to need line breaks), a
:class:`~replica.latex.tables.ValueTable` as a booktabs table -- then a paragraph saying what the
check does (the check's docstring) and whether it passed.

Every display carries a ``\label``; ``[[step]]`` / ``[[step.key]]`` in prose become ``\eqref``
(or ``Table~\ref``) to it, so equation numbers and cross-references are LaTeX's own. A reference
to a label that does not exist is an error at rendering time, not a "??" in the PDF.
"""

from __future__ import annotations

import functools
import inspect
import re

import sympy

from ..errors import ReplicaError
from .printing import escape_text, prose_to_latex, to_latex
from .tables import ValueTable
from .templates import environment

#: Displays whose LaTeX is longer than this (characters) are set with breqn's ``dmath``.
LONG_DISPLAY = 150
#: In long displays, fractions whose numerator prints longer than this are written as
#: ``\frac{1}{den}\left(num\right)`` so that breqn can break them.
BREAK_FRACTIONS = 100


class CheckFailedError(ReplicaError):
    """A derivation step's check failed, so no appendix is written for it."""

    exit_status = 1


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", str(text)).strip("-").lower() or "x"


def _is_display(obj) -> bool:
    return isinstance(obj, (sympy.Basic, sympy.MatrixBase))


def _check_text(step) -> str:
    if step.check is None:
        return "This step is a definition; there is nothing to check."
    check = step.check
    while isinstance(check, functools.partial):  # the docstring of the function it wraps
        check = check.func
    doc = inspect.getdoc(check)
    return " ".join(doc.split()) if doc else "The step's check callable ran."


def render(doc, symbol_names=None, outcomes=None, run_checks: bool = True) -> str:
    """The LaTeX source of the appendix for derivation ``doc``.

    ``symbol_names`` overrides entries of ``doc.symbol_names``. ``outcomes`` are precomputed
    :class:`~replica.derivations.base.CheckOutcome` records; otherwise the checks are run here when
    ``run_checks`` is true (statuses read "not run" when it is false). A failed check raises
    :class:`CheckFailedError`: no document states a step whose check fails.
    """
    names = dict(doc.symbol_names)
    names.update(symbol_names or {})
    if outcomes is None and run_checks:
        outcomes = doc.run_checks()
    status = {}
    if outcomes is not None:
        status = {o.step: o for o in outcomes}
        failed = [o for o in outcomes if not o.passed]
        if failed:
            raise CheckFailedError("derivation %r: check failed for step(s) %s" % (
                doc.key, "; ".join(f"{o.step} ({o.reason})" for o in failed)))

    # First pass: labels of every step and object, so references may point forwards.
    labels: dict[str, tuple[str, str]] = {}
    for step in doc.steps:
        step_label = f"step:{doc.key}:{_slug(step.name)}"
        first = None
        for key, obj in step.objects.items():
            kind = "table" if isinstance(obj, ValueTable) else "equation"
            label = f"{'tab' if kind == 'table' else 'eq'}:{doc.key}:{_slug(step.name)}:{_slug(key)}"
            labels[f"{step.name}.{key}"] = (kind, label)
            if first is None and kind == "equation":
                first = (kind, label)
        labels[step.name] = first or ("step", step_label)

    def ref(name: str) -> str:
        if name not in labels:
            raise KeyError(f"derivation {doc.key!r}: reference [[{name}]] names no step or object")
        kind, label = labels[name]
        if kind == "equation":
            return r"\eqref{%s}" % label
        if kind == "table":
            return r"Table~\ref{%s}" % label
        return r"Step~\ref{%s}" % label

    by_name = {k.name: k for k in names if isinstance(k, (sympy.Symbol, sympy.MatrixSymbol))}

    def inline(name: str) -> str:
        # A named object of the derivation, else a symbol with that name (display names apply).
        if name in doc.inline:
            return to_latex(doc.inline[name], names)
        return to_latex(by_name.get(name, sympy.Symbol(name)), names)

    def prose(text: str) -> str:
        return prose_to_latex(text, inline, ref)

    sections = []
    for si, section in enumerate(doc.sections, 1):
        steps = []
        for step in section.steps:
            blocks = []
            for key, obj in step.objects.items():
                kind, label = labels[f"{step.name}.{key}"]
                if kind == "table":
                    t = obj.to_latex(names)
                    blocks.append(dict(kind="table", label=label, caption=prose(obj.caption), **t))
                elif _is_display(obj):
                    tex = to_latex(obj, names)
                    long = len(tex) > LONG_DISPLAY
                    if long:
                        tex = to_latex(obj, names, break_fractions=BREAK_FRACTIONS)
                    blocks.append(dict(kind="equation", label=label, tex=tex, long=long))
                else:
                    raise TypeError(f"step {step.name!r}: object {key!r} of type "
                                    f"{type(obj).__name__} cannot be displayed")
            outcome = status.get(step.name)
            if step.check is None:
                state = "(definition)"
            elif outcome is None:
                state = "not run"
            else:
                state = "passed"
            steps.append(dict(title=escape_text(doc.title_of(step)), sentence=prose(step.sentence),
                              label=f"step:{doc.key}:{_slug(step.name)}", blocks=blocks,
                              check=prose(_check_text(step)), status=state))
        sections.append(dict(title=escape_text(section.title), label=f"sec:{doc.key}:{si}",
                             intro=prose(section.intro) if section.intro else "", steps=steps))
    context = dict(key=doc.key, origin=doc.origin or f"replica/derivations/{doc.key}.py",
                   title=escape_text(doc.title), intro=prose(doc.intro),
                   sections=sections, missing=[prose(m) for m in doc.missing],
                   sources=[prose(s) for s in doc.sources])
    text = environment().get_template("appendix.tex").render(doc=context)
    return normalise(text)


def normalise(text: str) -> str:
    """Canonical whitespace: no trailing blanks, at most one empty line in a row, one final
    newline. (Applied to generated text and used when comparing with committed files.)"""
    lines = [ln.rstrip() for ln in text.splitlines()]
    out = []
    for ln in lines:
        if ln == "" and out and out[-1] == "":
            continue
        out.append(ln)
    return "\n".join(out).strip("\n") + "\n"


def comparable(text: str) -> str:
    """``text`` with the differences that SymPy versions make in printing removed: all whitespace,
    thin spaces ``\\,`` and the ``\\left``/``\\right`` size markers. Two documents that agree
    after this differ only in typesetting, not in content (used to compare regenerated appendices
    with the committed ones)."""
    text = re.sub(r"\\(left|right)(?![a-zA-Z])", "", text)
    text = text.replace("\\,", "")
    return re.sub(r"\s+", "", text)
