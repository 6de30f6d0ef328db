r"""Rendering a :class:`~replica.derivations.base.Derivation` to LaTeX.

Layout: one ``\section`` per section of the derivation, one ``\subsection`` per step. A step shows
its sentence, then each of its objects in order -- a SymPy relation or expression as a numbered
display (``equation``; a display wider than the line is broken at the top-level signs of its
sums and set in ``split``, see :mod:`replica.latex.breaking` -- in the ``\input``-able body the
line is a two-column journal's column, in the standalone document its own text width), a
:class:`~replica.latex.tables.ValueTable` as a booktabs table (``table*`` when it is wider than a
column), a :class:`~replica.latex.tables.Figure` as a ``figure`` of the column's width (its PDF
written beside the ``.tex`` by the appendix writer). The checks of all steps are listed
once, in a verification table at the end (step, what is checked and how, whether the result is
computed or stated, outcome); steps whose check is the same share a row.

Every display carries a ``\label``; ``[[step]]`` / ``[[step.key]]`` in prose become ``\eqref``
(or ``Table~\ref``, ``Figure~\ref``) to it, so equation numbers and cross-references are LaTeX's own;
``[[cite:KEY]]`` becomes ``\cite{KEY}`` (:mod:`replica.latex.bibliography`). A reference to a
label that does not exist is an error at rendering time, not a "??" in the PDF.

Notation: every symbol whose display name is more than a letter or one command gets a macro named
after it (``\hat{q}`` -> ``\qhat``, ``\varepsilon_{\rm IDG}`` -> ``\epsIDG``), used throughout the
body. :func:`render_parts` returns the standalone document (macros defined with ``\newcommand``,
so a clash with a package is an error), the ``\input``-able body, the macro file
(``\providecommand``: two appendices' files load together) and the ``.bib``.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import re

import sympy

from ..errors import ReplicaError
from .bibliography import BIB_NAME, PAPERS, bibtex
from ..symbolic.gaussian import GaussianIntegral
from .breaking import COLUMN_EM, IntegralNames, display_lines, estimate_width
from .printing import escape_text, prose_to_latex, to_latex
from .tables import Figure, ValueTable
from .templates import PACKAGES, environment

#: The document classes of the standalone appendix: ``article`` (one column, 11 pt) and
#: ``revtex`` (``revtex4-2``, two columns, as in a Physical Review paper).
DOCUMENT_CLASSES = ("article", "revtex")
#: The estimated width (em) a display line of the standalone document may take: the column of
#: two-column revtex (:data:`~replica.latex.breaking.COLUMN_EM`), the 467 pt text of the 11 pt
#: article less the equation number and a margin for the estimate.
DISPLAY_WIDTH_EM = {"article": 34.0, "revtex": COLUMN_EM}


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


@dataclasses.dataclass(frozen=True)
class AppendixSource:
    r"""The generated LaTeX of one appendix.

    ``standalone`` is a complete document (its bibliography is ``replica-papers.bib``); ``body`` the
    same appendix without preamble, to ``\input`` into a paper; ``macros`` its notation
    (``\providecommand``) and the packages the body needs, to ``\input`` in that paper's
    preamble; ``bib`` the text of ``replica-papers.bib`` (every paper the library cites; BibTeX
    prints the ``citations``).
    """

    key: str
    standalone: str
    body: str
    macros: str
    bib: str
    citations: tuple
    notation: tuple
    figures: tuple = ()
    """``(file name, draw)`` of every figure: ``draw(path)`` writes the PDF the body includes."""


#: Prefixes of LaTeX words that are not part of a macro's name.
_SKIP_WORDS = {"rm", "mathrm", "operatorname", "big", "Big", "left", "right", "text", "mathit"}
_WORD_NAMES = {"varepsilon": "eps", "epsilon": "eps", "mathcal": "cal", "mathbb": "bb",
               "mathsf": "sf", "mathbf": "bf", "top": "T"}
_DIGIT_NAMES = dict(zip("0123456789", ("zero", "one", "two", "three", "four", "five", "six",
                                       "seven", "eight", "nine")))
_CHAR_NAMES = {"|": "norm", "'": "prime", "*": "star", "+": "plus", "=": "eq", "<": "lt", ">": "gt"}
_ACCENT_NAMES = ("hat", "bar", "tilde", "check", "dot", "ddot", "breve")


def macro_name(tex: str) -> str:
    r"""A letters-only macro name for the LaTeX of a symbol: ``\varepsilon_{\rm IDG}`` ->
    ``epsIDG``, ``\hat{\bar{\chi}}`` -> ``chibarhat``, ``\tilde{p}_{0}`` -> ``ptildezero``."""
    out, pending = [], []
    for tok in re.findall(r"[A-Za-z]+|\d|[*'+=<>|]", tex):
        if tok in _ACCENT_NAMES:
            pending.append(tok)
            continue
        if tok in _SKIP_WORDS:
            continue
        word = _WORD_NAMES.get(tok) or _DIGIT_NAMES.get(tok) or _CHAR_NAMES.get(tok) or tok
        out.append(word + "".join(reversed(pending)) if pending and tok.isalpha() else word)
        if tok.isalpha():
            pending = []
    return "".join(out) + "".join(reversed(pending))


#: Short names TeX or LaTeX already use (a clash would silently keep their meaning under
#: ``\providecommand``; the standalone document's ``\newcommand`` makes any other clash an error).
_RESERVED = {"fi", "if", "or", "do", "to", "in", "ne", "le", "ge", "gg", "ll", "mp", "pm", "wp",
             "Re", "Im", "ni", "mu", "nu", "xi", "pi", "aa", "ae", "oe", "ss", "AA", "AE", "OE",
             "dh", "dj", "th", "ng", "ij", "IJ", "atop", "over", "max", "min", "sup", "inf",
             "lim", "log", "exp", "det", "deg", "dim", "arg", "hom", "ker", "sec", "sin", "cos",
             "tan", "cot", "csc", "bar", "hat", "vec", "dot", "top", "bot", "mid", "sim", "neq",
             "leq", "geq", "cap", "cup", "vee", "eth", "par", "end", "day", "box", "Box", "line",
             "vline", "hline", "span", "char", "mark", "mathit", "what"}


def _mathrm(tex: str) -> str:
    r"""``{\rm IDG}`` -> ``\mathrm{IDG}``."""
    return re.sub(r"\{\\rm\s*([^{}]*)\}", r"{\\mathrm{\1}}", tex)


def _is_composite(tex: str) -> bool:
    # A single letter or a single command (\kappa, \Gamma) needs no macro.
    return re.fullmatch(r"\\?[A-Za-z]+|[A-Za-z]", tex.strip()) is None


def _symbols_of(doc) -> list:
    found = set()

    def collect(obj):
        if isinstance(obj, (sympy.Basic, sympy.MatrixBase)):
            found.update(obj.atoms(sympy.Symbol, sympy.MatrixSymbol))
        elif isinstance(obj, ValueTable):
            for cell in list(obj.columns) + [c for row in obj.rows for c in row]:
                collect(cell)

    for step in doc.steps:
        for obj in step.objects.values():
            collect(obj)
    for obj in doc.inline.values():
        collect(obj)
    for key in doc.symbol_names:
        if isinstance(key, (sympy.Symbol, sympy.MatrixSymbol)):
            found.add(key)
    return sorted(found, key=lambda s: (s.name, type(s).__name__))


def notation(doc, names) -> dict:
    r"""``{symbol: (macro, definition)}`` for every symbol of ``doc`` whose display name is more
    than a letter or one command (``\hat{q}`` -> ``\qhat``). Two symbols printed alike share a
    macro; two printed differently never do (a clash of names gets a letter suffix)."""
    by_tex, used, out = {}, {}, {}
    for sym in _symbols_of(doc):
        tex = to_latex(sym, names)
        if not _is_composite(tex) or "\\" not in tex and "_" not in tex and "'" not in tex:
            continue
        if tex not in by_tex:
            base = macro_name(tex) or "sym"
            if base in _RESERVED or len(base) < 2:
                base += "var"
            name, k = base, 0
            while name in used and used[name] != tex:
                k += 1
                name = base + "x" * k
            used[name] = tex
            by_tex[tex] = name
        out[sym] = (by_tex[tex], tex)
    return out


def render(doc, symbol_names=None, outcomes=None, run_checks: bool = True,
           fragment: bool = False) -> str:
    """The LaTeX source of the appendix for derivation ``doc`` (a standalone document, or its
    ``\\input``-able body when ``fragment``); see :func:`render_parts`."""
    parts = render_parts(doc, symbol_names, outcomes, run_checks)
    return parts.body if fragment else parts.standalone


def _script_safe(latex: str) -> str:
    r"""``^`` and ``_`` in the formulas of ``latex`` written ``\sp`` and ``\sb`` (the same
    scripts, as control sequences that survive a round trip through the ``.aux`` file)."""
    def fix(m):
        return m.group(0).replace("^", r"\sp ").replace("_", r"\sb ")
    return re.sub(r"\$[^$]+\$", fix, latex)


def _pdf_safe(title: str) -> str:
    r"""Formulas in a heading wrapped in ``\texorpdfstring`` (PDF bookmarks hold plain text)."""
    def plain(m):
        t = re.sub(r"\\(?:hat|bar|tilde)\{([^{}]*)\}", r"\1", m.group(0))
        t = re.sub(r"\\(?:rm|mathrm|sp|sb)(?![A-Za-z])\s*", "", t)
        t = re.sub(r"[\\{}^_$]", "", t)
        return r"\texorpdfstring{%s}{%s}" % (m.group(0), " ".join(t.split()))
    return re.sub(r"\$[^$]+\$", plain, title)


def appendix_names(doc, symbol_names=None):
    """``(display, macros, names)``: the display names of ``doc``'s symbols (``symbol_names``
    override the derivation's), their notation macros (:func:`notation`), and the names the body
    prints with (a symbol with a macro prints as ``\\macro``)."""
    display = dict(doc.symbol_names)
    display.update(symbol_names or {})
    # ``{\rm X}`` in a caption or heading makes LaTeX ask for a rerun on every run (the label text
    # that hyperref stores never compares equal); ``\mathrm{X}`` does not.
    display = {k: _mathrm(v) if isinstance(v, str) else v for k, v in display.items()}
    macros = notation(doc, display)
    names = dict(display)
    for sym, (macro, _tex) in macros.items():
        names[sym] = "\\" + macro
    return display, macros, names


def _display_block(obj, names, display, width: float = COLUMN_EM,
                   integrals: IntegralNames | None = None) -> dict:
    """``tex`` of a display on one line, or ``lines`` of a display set in ``split`` (aligned at
    its relation sign) when it is wider than ``width`` em (:func:`~replica.latex.breaking.
    display_lines`). A display that does not fit and holds Gaussian integrals is printed with
    the integrals named by ``integrals`` (:class:`~replica.latex.breaking.IntegralNames`), and
    ``where`` holds the displays (``tex``/``lines``) of their definitions."""
    if integrals is not None and isinstance(obj, sympy.Basic) and obj.has(GaussianIntegral) \
            and estimate_width(to_latex(obj, display)) > width:  # (not breaking it first)
        short, needed = integrals.shorten(obj)
        names = {**names, **integrals.names}
        display = {**display, **integrals.names}
        exprs, repeats = integrals.name_repeats(
            [short, *(integrals.definitions[s] for s in needed)], names, display, width / 4)
        names = {**names, **integrals.names}
        display = {**display, **integrals.names}
        block = _split_block(exprs[0], names, display, width)
        defined = [(s, e) for s, e in zip(needed, exprs[1:])]
        defined += [(s, integrals.shown_definition(s, repeats)) for s, _ in repeats]
        where = tuple(_split_block(sympy.Eq(s, e, evaluate=False), names, display, width)
                      for s, e in defined)
        return dict(block, where=where)
    return dict(_split_block(obj, names, display, width), where=())


def _split_block(obj, names, display, width: float) -> dict:
    """``tex`` of ``obj`` on one line, or its ``lines`` for ``split``."""
    lhs, lines = display_lines(obj, names, display, width=width)
    if len(lines) == 1:
        return dict(tex=to_latex(obj, names), lines=())
    out = []
    if lhs and estimate_width(lhs) > width / 2:
        out.append("&" + lhs[:-1].rstrip())
        out.append(r"&\quad{}= " + lines[0])
        out.extend(r"&\qquad{}" + ln for ln in lines[1:])
    elif lhs:
        out.append(lhs[:-1].rstrip() + " &= " + lines[0])
        out.extend(r"&\quad{}" + ln for ln in lines[1:])
    else:
        out.append("&" + lines[0])
        out.extend(r"&\quad{}" + ln for ln in lines[1:])
    return dict(tex="", lines=tuple(out))


def _with_displays(sections, names, display, width: float) -> list:
    """The sections' template data with every display printed for a line of ``width`` em."""
    out, integrals = [], IntegralNames()
    for section in sections:
        steps = []
        for step in section["steps"]:
            blocks = [dict(b, **_display_block(b["obj"], names, display, width, integrals))
                      if b["kind"] == "equation" else b for b in step["blocks"]]
            steps.append(dict(step, blocks=blocks))
        out.append(dict(section, steps=steps))
    return out


def _table_width_em(table: dict) -> float:
    """Estimated width (em of the body font) of a table set in ``\\footnotesize``."""
    rows = [table["header"]] + list(table["body"])
    widths = [0.0] * len(table["header"])
    for row in rows:
        for k, cell in enumerate(row):
            parts = re.split(r"(\$[^$]*\$)", cell)
            w = sum(estimate_width(x[1:-1]) if x.startswith("$") else 0.5 * len(x)
                    for x in parts if x)
            widths[k] = max(widths[k], w)
    return 0.8 * (sum(widths) + 0.8 * len(widths))


def render_parts(doc, symbol_names=None, outcomes=None, run_checks: bool = True,
                 document_class: str = "article") -> AppendixSource:
    """All the generated files of the appendix for derivation ``doc``.

    ``symbol_names`` overrides entries of ``doc.symbol_names``. ``outcomes`` are precomputed
    :class:`~replica.derivations.base.CheckOutcome` records; otherwise the checks are run here when
    ``run_checks`` is true (statuses read "not run" when it is false). A failed check raises
    :class:`CheckFailedError`: no document states a step whose check fails.
    """
    if document_class not in DOCUMENT_CLASSES:
        raise ValueError(f"document_class must be one of {', '.join(DOCUMENT_CLASSES)}, "
                         f"not {document_class!r}")
    if outcomes is None and run_checks:
        outcomes = doc.run_checks()
    status = {}
    if outcomes is not None:
        status = {o.step: o for o in outcomes}
        failed = [o for o in outcomes if not o.passed]
        if failed:
            raise CheckFailedError("derivation %r: check failed for step(s) %s" % (
                doc.key, "; ".join(f"{o.step} ({o.reason})" for o in failed)))

    display, macros, names = appendix_names(doc, symbol_names)
    words = {}
    for key, value in names.items():
        name = getattr(key, "name", None)
        if name and len(name) > 1 and isinstance(key, sympy.Symbol):
            words[name] = value

    # First pass: labels of every step and object, so references may point forwards.
    labels: dict[str, tuple[str, str]] = {}
    for step in doc.steps:
        step_label = f"step:{doc.key}:{_slug(step.name)}"
        first = None
        for key, obj in step.objects.items():
            kind = ("table" if isinstance(obj, ValueTable) else
                    "figure" if isinstance(obj, Figure) else "equation")
            prefix = {"table": "tab", "figure": "fig", "equation": "eq"}[kind]
            label = f"{prefix}:{doc.key}:{_slug(step.name)}:{_slug(key)}"
            labels[f"{step.name}.{key}"] = (kind, label)
            if first is None and kind == "equation":
                first = (kind, label)
        labels[step.name] = first or ("step", step_label)

    citations = list(getattr(doc, "citations", ()) or ())

    def ref(name: str) -> str:
        if name.startswith("cite:"):
            keys = [k.strip() for k in name[5:].split(",")]
            for k in keys:
                if k not in PAPERS:
                    raise KeyError(f"derivation {doc.key!r}: [[{name}]] cites no known paper")
                if k not in citations:
                    citations.append(k)
            return r"\cite{%s}" % ",".join(keys)
        if name == "verification":
            return r"\ref{sec:%s:verification}" % doc.key
        if name not in labels:
            raise KeyError(f"derivation {doc.key!r}: reference [[{name}]] names no step or object")
        kind, label = labels[name]
        if kind == "equation":
            return r"\eqref{%s}" % label
        if kind == "table":
            return r"Table~\ref{%s}" % label
        if kind == "figure":
            return r"Figure~\ref{%s}" % label
        return r"Step~\ref{%s}" % label

    by_name = {k.name: k for k in names if isinstance(k, (sympy.Symbol, sympy.MatrixSymbol))}

    def inline(name: str) -> str:
        # A named object of the derivation, else a symbol with that name (display names apply).
        if name in doc.inline:
            return to_latex(doc.inline[name], names)
        return to_latex(by_name.get(name, sympy.Symbol(name)), names)

    def prose(text: str) -> str:
        return prose_to_latex(text, inline, ref, words)

    # Headings and captions are copied into the .aux file (as label texts). breqn makes ``^`` and
    # ``_`` active in math, so a label text holding them never compares equal to its re-read
    # copy and LaTeX asks for a rerun on every run. There the display names are used (not the
    # macros, which would expand to ``_``), with ``\sp`` / ``\sb`` for the scripts.
    display_words = {k: v for k, v in words.items()}
    for key, value in display.items():
        if isinstance(key, sympy.Symbol) and len(key.name) > 1:
            display_words[key.name] = value

    def inline_display(name: str) -> str:
        if name in doc.inline:
            return to_latex(doc.inline[name], display)
        return to_latex(by_name.get(name, sympy.Symbol(name)), display)

    def caption(text: str) -> str:
        return _script_safe(prose_to_latex(text, inline_display, ref, display_words))

    def text(title: str) -> str:
        return _pdf_safe(_script_safe(escape_text(title, display_words)))

    sections = []
    figures = []
    rows: dict[str, dict] = {}
    for si, section in enumerate(doc.sections, 1):
        steps = []
        for step in section.steps:
            blocks = []
            for key, obj in step.objects.items():
                kind, label = labels[f"{step.name}.{key}"]
                if kind == "table":
                    t = obj.to_latex(names, words)
                    blocks.append(dict(kind="table", label=label, caption=caption(obj.caption),
                                       wide=_table_width_em(t) > COLUMN_EM + 4, **t))
                elif kind == "figure":
                    filename = f"{doc.key}-{_slug(obj.name)}.png"
                    figures.append((filename, obj.draw))
                    blocks.append(dict(kind="figure", label=label, file=filename,
                                       caption=caption(obj.caption)))
                elif _is_display(obj):
                    blocks.append(dict(kind="equation", label=label, obj=obj))
                else:
                    raise TypeError(f"step {step.name!r}: object {key!r} of type "
                                    f"{type(obj).__name__} cannot be displayed")
            step_label = f"step:{doc.key}:{_slug(step.name)}"
            outcome = status.get(step.name)
            stated = getattr(step, "stated", "") or ""
            if step.check is None:
                state, basis = "--", "definition"
            else:
                state = "not run" if outcome is None else "passed"
                basis = "stated" if stated else "computed"
            check = prose(_check_text(step))
            if stated:
                check += " Stated, not derived: " + prose(stated)
            row = rows.setdefault(check, dict(steps=[], check=check, basis=basis,
                                              outcome=state))
            row["steps"].append(r"\ref{%s}" % step_label)
            steps.append(dict(title=text(doc.title_of(step)), sentence=prose(step.sentence),
                              label=step_label, blocks=blocks))
        sections.append(dict(title=text(section.title), label=f"sec:{doc.key}:{si}",
                             intro=prose(section.intro) if section.intro else "", steps=steps))
    verification = [dict(r, steps=", ".join(r["steps"])) for r in rows.values()]
    n_run = sum(1 for s in doc.steps if s.check is not None)
    n_passed = sum(1 for s in doc.steps if s.check is not None and s.name in status)
    if outcomes is None:
        summary = (f"The checks of the {n_run} steps with a claim were not run for this file.")
    else:
        summary = (f"Every step with a claim carries a check, run when this file was generated: "
                   f"{n_passed} of {n_run} passed. A check marked computed verifies the step's "
                   f"displayed result (symbolically, by a limit, or numerically); steps whose "
                   f"check is the same share a row.")
    intro_text = prose(doc.intro)
    context = dict(key=doc.key, origin=doc.origin or f"replica/derivations/{doc.key}.py",
                   title=text(doc.title), intro=intro_text,
                   sections=sections, missing=[prose(m) for m in doc.missing],
                   sources=[prose(s) for s in doc.sources], verification=verification,
                   verification_intro=summary,
                   macros=[dict(name=m, definition="{%s}" % t) for m, t in
                           sorted(set(macros.values()))],
                   citations=citations, bib_name=BIB_NAME, document_class=document_class)
    env = environment()
    # The fragment's displays fit a two-column journal's column (the paper it goes into may have
    # two); the standalone document's fit its own text width.
    body = normalise(env.get_template("body.tex").render(
        doc=dict(context, sections=_with_displays(sections, names, display, COLUMN_EM))))
    own = DISPLAY_WIDTH_EM[document_class]
    own_body = body if own == COLUMN_EM else normalise(env.get_template("body.tex").render(
        doc=dict(context, sections=_with_displays(sections, names, display, own))))
    standalone = normalise(env.get_template("appendix.tex").render(
        doc=context, body=own_body.split("\n", 2)[2], packages=PACKAGES))
    macro_text = normalise(env.get_template("macros.tex").render(doc=context,
                                                                 packages=PACKAGES))
    return AppendixSource(doc.key, standalone, body, macro_text,
                          bibtex(), tuple(citations),
                          tuple(sorted(set(macros.values()))), tuple(figures))


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
