r"""LaTeX printing of the library's SymPy objects.

Everything mathematical in an appendix goes through :func:`to_latex`, a thin layer over
:func:`sympy.latex` with the settings a derivation document needs:

* ``symbol_names`` -- display names such as ``\hat{q}``, ``\bar{\chi}``, ``\tilde{\lambda}``; the
  derivation supplies its table, the caller may override entries (a renamed symbol changes every
  equation it occurs in). Names also apply to :class:`sympy.MatrixSymbol` objects.
* ``order="none"`` -- SymPy's stored argument order is printed as is (no re-sorting by degree).
* relations (``Eq``) print as ``lhs = rhs``; block matrices print with brackets.

:func:`escape_text` makes prose safe for LaTeX, and :func:`prose_to_latex` turns a step's sentence
into LaTeX: ``{name}`` renders a named SymPy object inline (``$...$``; the derivation's ``inline``
table first, else the symbol of that name with its display name), ``[[label]]`` becomes a reference
(``\eqref{...}`` to an equation, ``Table~\ref{...}`` to a table). Nothing in the prose is
interpreted as LaTeX; a few plain-text conventions are typeset: ``->`` as an arrow, ``x^T`` /
``S^2`` / ``A^-1`` / ``c^(n-1)`` as superscripts, Unicode Greek letters (with combining hats,
tildes, bars) and common math characters in math mode.
"""

from __future__ import annotations

import re
import unicodedata

import sympy
from sympy.printing.latex import LatexPrinter

from ..errors import ParameterError

DEFAULT_SETTINGS = dict(order="none", mul_symbol=None, ln_notation=True)


class AppendixPrinter(LatexPrinter):
    """:class:`LatexPrinter` whose ``symbol_names`` also rename matrix symbols and functions.

    With ``break_fractions = N`` a fraction whose numerator is a sum printing longer than ``N``
    characters is written ``\\frac{1}{den}\\left(num\\right)``: breqn can break a display
    inside ``\\left( ... \\right)`` but never inside ``\\frac``.
    """

    _default_settings = dict(LatexPrinter._default_settings, break_fractions=None)

    def _print_Mul(self, expr):
        limit = self._settings.get("break_fractions")
        if limit:
            num, den = sympy.fraction(expr)
            if den != 1 and num.is_Add:
                num_tex = self._print(num)
                if len(num_tex) > limit:
                    return r"\frac{1}{%s} \left(%s\right)" % (self._print(den), num_tex)
        return super()._print_Mul(expr)

    def _print_MatrixSymbol(self, expr, **kwargs):
        names = self._settings.get("symbol_names") or {}
        if expr in names:
            return names[expr]
        return super()._print_MatrixSymbol(expr, **kwargs)

    def _print_Function(self, expr, exp=None):
        names = self._settings.get("symbol_names") or {}
        head = expr.func
        key = next((k for k in names if isinstance(k, str) and k == head.__name__), None)
        if key is None or not isinstance(expr, sympy.core.function.AppliedUndef):
            return super()._print_Function(expr, exp)
        args = ", ".join(self._print(a) for a in expr.args)
        tex = r"%s\left(%s\right)" % (names[key], args)
        return tex if exp is None else r"%s^{%s}" % (tex, exp)


def to_latex(obj, symbol_names=None, **settings) -> str:
    """LaTeX of a SymPy object (or anything ``sympify`` accepts) for a display or inline formula.

    ``symbol_names`` maps :class:`sympy.Symbol`/:class:`sympy.MatrixSymbol` objects (or, for
    undefined functions, their name as a string) to LaTeX. ``break_fractions=N`` rewrites long
    fractions so that breqn can break them (see :class:`AppendixPrinter`).
    """
    opts = dict(DEFAULT_SETTINGS)
    opts.update(settings)
    names = dict(symbol_names or {})
    # SymPy's own printer accepts only Symbol keys in symbol_names; others are handled above.
    opts["symbol_names"] = {k: v for k, v in names.items() if isinstance(k, sympy.Symbol)}
    printer = AppendixPrinter(opts)
    printer._settings["symbol_names"] = names
    if not isinstance(obj, sympy.Basic):
        obj = sympy.sympify(obj)
    return printer.doprint(obj)


_SPECIALS = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#",
             "_": r"\_", "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}",
             "^": r"\textasciicircum{}", "<": "$<$", ">": "$>$", "|": "$|$"}
_TEXT_UNICODE = {"\u2013": "--", "\u2014": "---", "\u2018": "`", "\u2019": "'", "\u201c": "``",
                 "\u201d": "''", "\u00a0": "~", "\u2026": r"\ldots{}"}
# Mathematical characters that may occur in prose written by hand (mostly Greek letters); they
# are set in math mode. Combining accents (U+0302 hat, U+0303 tilde, U+0304 bar, U+0305
# overline) apply to the preceding character.
_MATH_UNICODE = {"\u2212": "-", "\u00b1": r"\pm", "\u00d7": r"\times", "\u2264": r"\le",
                 "\u2265": r"\ge", "\u2260": r"\ne", "\u2248": r"\approx", "\u2192": r"\to",
                 "\u221e": r"\infty", "\u2202": r"\partial", "\u2207": r"\nabla",
                 "\u27e8": r"\langle", "\u27e9": r"\rangle", "\u2211": r"\sum", "\u221a": r"\surd",
                 "\u00b2": "^{2}", "\u00b3": "^{3}", "\u2032": "'", "\u2208": r"\in",
                 "\u03b5": r"\varepsilon", "\u03d5": r"\phi", "\u03c6": r"\varphi"}
_SUPERSCRIPT = re.compile(r"\^(-?[A-Za-z0-9]+|\([^()]*\))")
_ACCENTS = {"\u0302": r"\hat", "\u0303": r"\tilde", "\u0304": r"\bar", "\u0305": r"\bar"}


def _unicode_math(ch: str) -> str | None:
    if ch in _MATH_UNICODE:
        return _MATH_UNICODE[ch]
    name = unicodedata.name(ch, "")
    m = re.fullmatch(r"GREEK (SMALL|CAPITAL) LETTER ([A-Z]+)", name)
    if m:
        letter = m.group(2).lower()
        if m.group(1) == "CAPITAL":
            letter = letter.capitalize()
            if letter in ("Alpha", "Beta", "Epsilon", "Zeta", "Eta", "Iota", "Kappa", "Mu",
                          "Nu", "Omicron", "Rho", "Tau", "Chi"):
                return {"Alpha": "A", "Beta": "B", "Epsilon": "E", "Zeta": "Z", "Eta": "H",
                        "Iota": "I", "Kappa": "K", "Mu": "M", "Nu": "N", "Omicron": "O",
                        "Rho": "P", "Tau": "T", "Chi": "X"}[letter]
        if letter == "lamda":
            letter = "lambda" if m.group(1) == "SMALL" else "Lambda"
        if letter == "omicron":
            return "o"
        return "\\" + letter
    return None


def escape_text(text: str) -> str:
    """Escape prose for LaTeX. Unicode mathematical characters (Greek letters with combining
    accents, minus, inequalities, ...) are set in math mode; any other non-ASCII character raises
    :class:`ParameterError` rather than producing a document that will not compile."""
    out = []
    i = 0
    while i < len(text):
        ch = text[i]
        if text.startswith("->", i):
            out.append(r"$\to$")
            i += 2
            continue
        sup = _SUPERSCRIPT.match(text, i)
        if sup:  # x^T, S^2, (S - z)^-1, chi^(n-1): a superscript in math mode
            body = sup.group(1)
            if body == "T":
                out.append(r"$^{\top}$")
            else:
                body = body[1:-1] if body.startswith("(") else body
                out.append("$^{%s}$" % escape_text(body).replace("$", ""))
            i = sup.end()
            continue
        if ch in _SPECIALS:
            out.append(_SPECIALS[ch])
        elif ch in _TEXT_UNICODE:
            out.append(_TEXT_UNICODE[ch])
        elif ord(ch) < 128:
            out.append(ch)
        elif ch in _ACCENTS:
            raise ParameterError("prose", f"combining accent without a base character in {text!r}")
        else:
            math = _unicode_math(ch)
            if math is None:
                raise ParameterError("prose", f"cannot set character {ch!r} "
                                              f"({unicodedata.name(ch, '?')}) in {text!r}")
            j = i + 1
            while j < len(text) and text[j] in _ACCENTS:
                math = r"%s{%s}" % (_ACCENTS[text[j]], math)
                j += 1
            out.append("$%s$" % math)
            i = j
            continue
        i += 1
    return "".join(out)


_TOKEN = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}|\[\[([A-Za-z0-9_:.\-]+)\]\]")


def prose_to_latex(text: str, inline, ref) -> str:
    """Prose with placeholders to LaTeX.

    ``{name}`` is replaced by ``$inline(name)$`` (``inline`` returns the printed LaTeX of the
    object called ``name``); ``[[label]]`` by ``ref(label)``, which returns LaTeX (an ``\\eqref``)
    or raises :class:`KeyError` for an unknown label. Other text is escaped.
    """
    out = []
    pos = 0
    for m in _TOKEN.finditer(text):
        out.append(escape_text(text[pos:m.start()]))
        if m.group(1):
            out.append("$%s$" % inline(m.group(1)))
        else:
            out.append(ref(m.group(2)))
        pos = m.end()
    out.append(escape_text(text[pos:]))
    return "".join(out)


def plain_text(text: str) -> str:
    """The sentence with placeholders spelled out (``{lambda_tilde}`` -> ``lambda_tilde``,
    ``[[m_prime]]`` -> ``(m_prime)``), for terminals and logs."""
    return _TOKEN.sub(lambda m: m.group(1) if m.group(1) else "(%s)" % m.group(2), text)
