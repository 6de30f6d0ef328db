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

    def _print_Symbol(self, expr, style="plain"):
        names = self._settings.get("symbol_names") or {}
        if expr in names:
            return names[expr]
        m = re.fullmatch(r"([A-Za-z]+)_(hat|bar|tilde)", expr.name)
        if m:  # w_hat: an accent, not the subscript "hat"
            return r"\%s{%s}" % (m.group(2), super()._print_Symbol(sympy.Symbol(m.group(1))))
        return _upright_words(super()._print_Symbol(expr, style))

    def _print_Function(self, expr, exp=None):
        names = self._settings.get("symbol_names") or {}
        head = expr.func
        key = next((k for k in names if isinstance(k, str) and k == head.__name__), None)
        if key is None or not isinstance(expr, sympy.core.function.AppliedUndef):
            return super()._print_Function(expr, exp)
        args = ", ".join(self._print(a) for a in expr.args)
        tex = r"%s\left(%s\right)" % (names[key], args)
        return tex if exp is None else r"%s^{%s}" % (tex, exp)


def _upright_words(tex: str) -> str:
    r"""Subscripts and superscripts that are words set upright: ``\varepsilon_{test}`` ->
    ``\varepsilon_{\mathrm{test}}`` (three letters or more; ``K_{ab}`` keeps its indices)."""
    return re.sub(r"([_^])\{([A-Za-z]{3,})\}", r"\1{\\mathrm{\2}}", tex)


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
                 "\u03b5": r"\varepsilon", "\u03d5": r"\phi", "\u03c6": r"\varphi",
                 "\u2297": r"\otimes"}
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


def escape_text(text: str, words=None) -> str:
    """Escape prose for LaTeX, with every mathematical symbol in math mode.

    Runs of ASCII mathematics (``kappa qhat = tau - 1 + u g``, ``gtilde'``, ``epsilon_IDG``,
    ``1e-25``, ``E[w w^T]``) are found by :func:`math_runs` and typeset as one formula each
    (``$\\kappa \\hat{q} = \\tau - 1 + u g$``, ``$10^{-25}$``); ``words`` maps further symbol
    names (two characters or more, e.g. ``"E_tr"``) to their LaTeX. Unicode mathematical characters
    (Greek letters with combining accents, minus, inequalities, ...) are set in math mode; any other
    non-ASCII character raises :class:`ParameterError` rather than producing a document that will
    not compile."""
    out = []
    for is_math, piece in math_runs(text, words):
        out.append(piece if is_math else _escape_plain(piece))
    return merge_formulas("".join(out))


def _escape_plain(text: str) -> str:
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
                out.append("$^{%s}$" % _escape_plain(body).replace("$", ""))
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


# ---------------------------------------------------------------------------------------------
# ASCII mathematics in prose
# ---------------------------------------------------------------------------------------------
_GREEK = ("alpha beta gamma delta epsilon varepsilon zeta eta theta vartheta iota kappa lambda mu "
          "nu xi pi varpi rho varrho sigma varsigma tau upsilon phi varphi chi psi omega Gamma Delta "
          "Theta Lambda Xi Pi Sigma Upsilon Phi Psi Omega").split()
#: Greek names whose LaTeX differs from ``\\name`` (``epsilon`` is the paper's varepsilon).
_GREEK_LATEX = {"epsilon": r"\varepsilon", "eps": r"\epsilon", "lam": r"\lambda", "ell": r"\ell"}
_FUNCTIONS = {"log": r"\log", "exp": r"\exp", "min": r"\min", "max": r"\max", "lim": r"\lim",
              "det": r"\det", "sin": r"\sin", "cos": r"\cos", "tr": r"\operatorname{tr}",
              "diag": r"\operatorname{diag}", "vec": r"\operatorname{vec}", "sqrt": r"\sqrt"}
#: English words that look like a letter with an accent suffix (``t`` + ``hat``).
_NOT_SYMBOLS = {"that", "what", "chat", "Chat", "That", "What"}
_ACCENT_WORDS = {"hat": r"\hat", "bar": r"\bar", "tilde": r"\tilde"}
_WORD = re.compile(r"(?P<base>[A-Za-z]+?)(?P<mods>(?:hat|bar|tilde|prime)*)(?P<digits>\d*)"
                   r"(?:_(?P<sub>[A-Za-z0-9]+))?(?P<primes>'*)")
_MATH_TOKEN = re.compile(r"""
    (?P<tilde>tilde\s+[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)?'*(?![A-Za-z0-9_]))
  | (?P<num>\d+(?:\.\d+)?(?:e[-+]?\d+)?(?![A-Za-z_]))
  | (?P<word>[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)?'*(?!s\b))
  | (?P<sup>\^(?:-?[A-Za-z0-9]+|\([^()]*\)))
  | (?P<op>->|<=|>=|!=|[=+\-*/<>])
  | (?P<open>[(\[])
  | (?P<close>[)\]])
  | (?P<comma>,)
  | (?P<space>[ ]+)
  | (?P<other>.)
""", re.VERBOSE | re.DOTALL)
_OPS = {"->": r"\to", "<=": r"\le", ">=": r"\ge", "!=": r"\ne", "*": r"\cdot"}


def _symbol_latex(word: str, words=None):
    """``(latex, strong)`` for an ASCII symbol name, or ``None`` for an ordinary word. ``strong``
    symbols (Greek names, accents, subscripts, primes) make a run of text a formula on their own;
    a bare single letter does only next to an operator."""
    if words and len(word) > 1 and word in words:
        return words[word], True
    head, _, accent = word.partition("_")
    if words and accent in _ACCENT_WORDS and head + accent in words:  # lambda_tilde
        return words[head + accent], True
    if word in _NOT_SYMBOLS:
        return None
    m = _WORD.fullmatch(word)
    if m is None:
        return None
    base, mods, digits, sub, primes = (m.group("base"), m.group("mods"), m.group("digits"),
                                       m.group("sub"), m.group("primes"))
    if base in _GREEK or base in _GREEK_LATEX:
        tex = _GREEK_LATEX.get(base, "\\" + base)
    elif len(base) == 1:
        tex = base
        if digits and base.isupper():
            return None  # "R2", "L1": labels and names, not symbols
    else:
        return None
    strong = tex != base or bool(mods or digits or sub or primes)
    for mod in re.findall("hat|bar|tilde|prime", mods):
        tex = tex + "'" if mod == "prime" else r"%s{%s}" % (_ACCENT_WORDS[mod], tex)
    if digits:
        tex += "_{%s}" % digits
    if sub in _ACCENT_WORDS:  # w_hat: the accent, not a subscript
        tex, sub, strong = r"%s{%s}" % (_ACCENT_WORDS[sub], tex), None, True
    if sub:
        tex += "_{%s}" % (sub if len(sub) == 1 or sub.isdigit() else r"\mathrm{%s}" % sub)
    return tex + primes, strong


def _number_latex(text: str):
    """``1e-25`` -> ``10^{-25}``, ``1.5e6`` -> ``1.5\\times 10^{6}``; plain numbers unchanged."""
    mant, e, exp = text.partition("e")
    if not e:
        return text, False
    exp = str(int(exp))
    return (r"10^{%s}" % exp if mant == "1" else r"%s \times 10^{%s}" % (mant, exp)), True


def math_runs(text: str, words=None) -> list:
    """Split prose into ``(is_math, piece)`` pairs: math pieces are LaTeX formulas (with ``$``),
    text pieces are the original text. A maximal run of symbols, numbers, operators, brackets and
    spaces is a formula when it holds a strong symbol (see :func:`_symbol_latex`), a number in
    exponent form, or an operator between two operands."""
    tokens = []  # (kind, text, latex, strong)
    for m in _MATH_TOKEN.finditer(text):
        kind, tok = m.lastgroup, m.group()
        if kind == "tilde":
            word = tok.split()[-1]
            head, sep, sub = word.partition("_")
            joined = head + "tilde" + sep + sub  # "tilde p_0" names the symbol ptilde_0
            if words and joined in words:
                tokens.append(("sym", tok, words[joined], True))
                continue
            inner = _symbol_latex(word)
            if inner is None:
                tokens.extend([("text", "tilde", None, False), ("space", " ", " ", False)])
                kind, tok = "word", tok.split()[-1]
            else:
                tokens.append(("sym", tok, r"\tilde{%s}" % inner[0] if "_" not in inner[0] else
                               r"\tilde{%s}_%s" % tuple(inner[0].split("_", 1)), True))
                continue
        if kind == "word" and len(tok) == 1 and m.start() > 0 and text[m.start() - 1] == "'":
            tokens.append(("text", tok, None, False))  # a possessive: "the model's F"
            continue
        if kind == "word":
            if tok == "infinity":
                tokens.append(("sym", tok, r"\infty", True))
            elif tok in _FUNCTIONS:
                tokens.append(("func", tok, _FUNCTIONS[tok], False))
            else:
                sym = _symbol_latex(tok, words)
                tokens.append(("text", tok, None, False) if sym is None else
                              ("sym", tok, sym[0], sym[1]))
        elif kind == "num":
            tex, strong = _number_latex(tok)
            tokens.append(("num", tok, tex, strong))
        elif kind == "sup":
            body = tok[1:]
            body = body[1:-1] if body.startswith("(") else body
            if body == "T":
                tex = r"^{\top}"
            else:
                tex = "^{%s}" % _convert_run(body, words)
            tokens.append(("sup", tok, tex, False))
        elif kind == "op":
            if tok == "-" and tokens and tokens[-1][0] == "text" and tokens[-1][1][-1:].isalpha():
                tokens.append(("text", tok, None, False))  # a hyphen: "large-alpha", "rho-dependent"
            else:
                tokens.append(("op", tok, _OPS.get(tok, tok), False))
        elif kind == "comma":
            tokens.append(("comma", tok, tok, False))
        elif kind in ("open", "close", "space"):
            tokens.append((kind, tok, tok, False))
        else:
            tokens.append(("text", tok, None, False))
    out = []
    i = 0
    while i < len(tokens):
        if tokens[i][0] == "text":
            out.append((False, tokens[i][1]))
            i += 1
            continue
        j = i
        while j < len(tokens) and tokens[j][0] != "text":
            j += 1
        out.extend(_split_run(tokens[i:j]))
        i = j
    merged = []
    for is_math, piece in out:
        if merged and not is_math and not merged[-1][0]:
            merged[-1] = (False, merged[-1][1] + piece)
        else:
            merged.append((is_math, piece))
    return merged


def _convert_run(text: str, words=None) -> str:
    """LaTeX (without ``$``) of a piece of ASCII mathematics, e.g. a superscript's body."""
    parts = []
    for is_math, piece in math_runs(text, words):
        parts.append(piece[1:-1] if is_math else piece)
    return "".join(parts)


def _split_run(run) -> list:
    """One run of math-capable tokens -> text and formula pieces. An unmatched bracket splits the
    run (it belongs to the text); spaces and dangling operators at the edges stay text."""
    if not run:
        return []
    stack = []
    for k, tok in enumerate(run):
        if tok[0] == "open":
            stack.append(k)
        elif tok[0] == "close":
            if not stack:
                return _split_run(run[:k]) + [(False, tok[1])] + _split_run(run[k + 1:])
            stack.pop()
    if stack:
        k = stack[0]
        return _split_run(run[:k]) + [(False, run[k][1])] + _split_run(run[k + 1:])
    depth = 0
    for k, tok in enumerate(run):  # a comma outside brackets separates formulas
        depth += (tok[0] == "open") - (tok[0] == "close")
        if tok[0] == "comma" and depth == 0:
            return _split_run(run[:k]) + [(False, tok[1])] + _split_run(run[k + 1:])
    lo, hi = 0, len(run)
    while lo < hi and (run[lo][0] in ("space", "sup") or (run[lo][0] == "op"
                                                           and run[lo][1] != "-")):
        lo += 1
    while hi > lo and run[hi - 1][0] in ("space", "op"):
        hi -= 1
    core = run[lo:hi]
    operands = sum(t[0] in ("sym", "num", "func") for t in core)
    has_symbol = any(t[0] in ("sym", "func") for t in core)
    strong = any(t[3] for t in core)
    ops = any(t[0] in ("op", "sup") for t in core)
    pieces = [(False, "".join(t[1] for t in run[:lo]))] if lo else []
    if core and (strong or (ops and has_symbol) or (ops and operands >= 2)):
        tex = "".join(t[2] for t in core)
        pieces.append((True, "$%s$" % re.sub(r"\s+", " ", tex).strip()))
    elif core:
        pieces.append((False, "".join(t[1] for t in core)))
    if hi < len(run):
        pieces.append((False, "".join(t[1] for t in run[hi:])))
    return pieces


_TOKEN = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}|\[\[([A-Za-z0-9_:.,\-]+)\]\]")


_MATH_PIECE = re.compile(r"(\$[^$]*\$)")
_JOINER = re.compile(r"\s*(?:[=+/]\s*)?")
_ENDS_WITH_OPERATOR = re.compile(r"(?:[=<>+/-]|\\le|\\ge|\\ne|\\to)\s*\$$")
# A number after a formula that ends with an operator (``$n \to$ 0`` -> ``$n \to 0$``); a full
# stop after it ends the sentence.
_NUMBER_START = re.compile(r"\s*(-?\d+(?:\.\d+)?(?:/\d+)?)(?!\d|[A-Za-z]|\.\d)")
_NUMBER_AFTER = re.compile(r"(\s*=\s*)(-?\d+(?:\.\d+)?(?:/\d+)?)(?![\d.A-Za-z])")


def merge_formulas(latex: str) -> str:
    """Adjacent formulas separated only by spaces or one of ``= + /`` become one formula
    (``$\\rho$ $<$ $\\kappa$`` -> ``$\\rho < \\kappa$``, ``$\\sigma$ = 0`` -> ``$\\sigma = 0$``)."""
    parts = _MATH_PIECE.split(latex)
    out = []
    for part in parts:
        if part.startswith("$") and part.endswith("$") and len(part) > 1 and len(out) >= 2 \
                and out[-2].startswith("$") and _JOINER.fullmatch(out[-1]) and "$" not in out[-1]:
            joiner = " ".join(out[-1].split())
            out[-2] = "$%s %s %s$" % (out[-2][1:-1], joiner, part[1:-1]) if joiner else \
                "$%s %s$" % (out[-2][1:-1], part[1:-1])
            out.pop()
            continue
        if not (part.startswith("$") and part.endswith("$") and len(part) > 1) and out and \
                out[-1].startswith("$") and len(out[-1]) > 1:
            m = _NUMBER_AFTER.match(part)
            if m:
                out[-1] = "$%s = %s$" % (out[-1][1:-1], m.group(2))
                part = part[m.end():]
            elif _ENDS_WITH_OPERATOR.search(out[-1]):
                m = _NUMBER_START.match(part)
                if m:
                    out[-1] = "$%s %s$" % (out[-1][1:-1].rstrip(), m.group(1))
                    part = part[m.end():]
        out.append(part)
    return "".join(out)


def prose_to_latex(text: str, inline, ref, words=None) -> str:
    """Prose with placeholders to LaTeX (ASCII mathematics in math mode, see :func:`escape_text`;
    ``words`` maps symbol names to LaTeX).

    ``{name}`` is replaced by ``$inline(name)$`` (``inline`` returns the printed LaTeX of the
    object called ``name``); ``[[label]]`` by ``ref(label)``, which returns LaTeX (an ``\\eqref``)
    or raises :class:`KeyError` for an unknown label. Other text is escaped.
    """
    out = []
    pos = 0
    for m in _TOKEN.finditer(text):
        out.append(escape_text(text[pos:m.start()], words))
        if m.group(1):
            out.append("$%s$" % inline(m.group(1)))
        else:
            out.append(ref(m.group(2)))
        pos = m.end()
    out.append(escape_text(text[pos:], words))
    return merge_formulas("".join(out))


def plain_text(text: str) -> str:
    """The sentence with placeholders spelled out (``{lambda_tilde}`` -> ``lambda_tilde``,
    ``[[m_prime]]`` -> ``(m_prime)``), for terminals and logs."""
    return _TOKEN.sub(lambda m: m.group(1) if m.group(1) else "(%s)" % m.group(2), text)
