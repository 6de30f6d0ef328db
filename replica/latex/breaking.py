r"""Line breaks for displays wider than a column.

A two-column journal page (``revtex4-2``) has columns about 246 pt wide; many displays of the
appendices are wider. :func:`display_lines` prints a SymPy relation or expression as a list of
lines, each estimated to fit :data:`COLUMN_EM` (the width in em of the narrowest column the
appendices are set in, less room for the equation number). A line is broken only at a top-level
``+`` or ``-`` of a sum -- the sum itself, or one nested in a product, a power or a function, whose
brackets then become fixed-size ``\biggl( ... \biggr)`` so that they may open on one line and close
on another. The lines are set in ``split`` (aligned at the relation sign) by the template.

The width of a piece of LaTeX is estimated by :func:`estimate_width` (em at the body font: letters
about half an em, scripts at 70 %, a fraction as wide as its wider part); a display that fits stays
on one line. The estimate is measured on the display names of the symbols (not on the notation
macros, whose definitions the printed LaTeX does not show).

A Gaussian integral :math:`\int \mathcal{D}z\, (f)` breaks inside its brackets like a function
of one argument. A display that does not fit and holds Gaussian integrals first has each of them
named (:class:`IntegralNames`): :math:`\mathcal{I}_k` in the display, and a "where" clause
:math:`\mathcal{I}_k = \int \mathcal{D}z\, (\ldots)` after it, the innermost integrals named
first (an integral inside another's integrand appears there by its name), the same integral by the
same name throughout a document. The closed map of a saddle point repeats one integral many
times, nested in other integrands; written out it is thousands of points wide.
"""

from __future__ import annotations

import re

import sympy

from ..symbolic.gaussian import GaussianIntegral
from .printing import to_latex

#: The estimated width (em of the body font) a display line may take: the 246 pt column of
#: ``revtex4-2`` at 10 pt is 24.6 em; the equation number and its separation take about 4 em,
#: and :func:`estimate_width` errs on the narrow side by up to 10 %.
COLUMN_EM = 18.0

_ZERO_WIDTH = {"left", "right", "bigl", "bigr", "Bigl", "Bigr", "biggl", "biggr", "big", "Big",
               "bigg", "Bigg", "displaystyle", "textstyle", "limits", "nolimits", "mathrm",
               "operatorname", "text", "mathit", "mathbf", "mathcal", "mathbb", "mathsf",
               "boldsymbol", "rm", "hat", "bar", "tilde", "check", "dot", "ddot", "vec",
               "widehat", "widetilde", "overline"}
_SPACES = {",": 0.17, ";": 0.28, ":": 0.22, "!": -0.17, "quad": 1.0, "qquad": 2.0, " ": 0.33}
_BINARY = {"cdot", "times", "pm", "mp", "otimes", "circ"}
_RELATIONS = {"to", "le", "ge", "ne", "leq", "geq", "approx", "sim", "equiv", "in", "mapsto",
              "rightarrow", "leftarrow", "propto"}
_OPERATOR_NAMES = {"ln", "log", "exp", "det", "max", "min", "lim", "sin", "cos", "tan", "sup",
                   "inf", "arg"}


def _group(tex: str, i: int) -> tuple[str, int]:
    """The braced group (or single token) starting at ``tex[i]`` and the index after it."""
    while i < len(tex) and tex[i] == " ":
        i += 1
    if i >= len(tex):
        return "", i
    if tex[i] == "{":
        depth = 0
        for j in range(i, len(tex)):
            if tex[j] == "{":
                depth += 1
            elif tex[j] == "}":
                depth -= 1
                if depth == 0:
                    return tex[i + 1:j], j + 1
        return tex[i + 1:], len(tex)
    if tex[i] == "\\":
        m = re.match(r"\\(?:[A-Za-z]+|.)", tex[i:])
        return m.group(0), i + m.end()
    return tex[i], i + 1


def estimate_width(tex: str, scale: float = 1.0, nested: bool = False) -> float:
    """Estimated width in em (at the body font) of math-mode LaTeX ``tex``."""
    w, i, prev_operand = 0.0, 0, False
    while i < len(tex):
        c = tex[i]
        if c == "\\":
            m = re.match(r"\\([A-Za-z]+|.)", tex[i:])
            name = m.group(1)
            i += m.end()
            if name == "frac" or name in ("dfrac", "tfrac"):
                num, i = _group(tex, i)
                den, i = _group(tex, i)
                inner = scale * (0.75 if nested else 1.0)
                w += max(estimate_width(num, inner, True), estimate_width(den, inner, True)) \
                    + 0.3 * scale
                prev_operand = True
            elif name in ("sqrt",):
                body, i = _group(tex, i)
                w += estimate_width(body, scale, nested) + 0.9 * scale
                prev_operand = True
            elif name in ("sp", "sb"):
                body, i = _group(tex, i)
                w += estimate_width(body, scale * 0.7, True)
            elif name in _SPACES:
                w += _SPACES[name] * scale
            elif name in _ZERO_WIDTH:
                pass
            elif name in _BINARY:
                w += 1.2 * scale
                prev_operand = False
            elif name in _RELATIONS:
                w += 1.6 * scale
                prev_operand = False
            elif name in _OPERATOR_NAMES:
                w += (0.5 * len(name) + 0.2) * scale
                prev_operand = True
            elif name in ("sum", "prod", "int", "infty", "partial"):
                w += 1.1 * scale
                prev_operand = True
            elif name in ("langle", "rangle", "{", "}", "|", "lvert", "rvert"):
                w += 0.45 * scale
            elif name in ("begin", "end"):
                _env, i = _group(tex, i)
            else:  # a Greek letter or another symbol
                w += 0.6 * scale
                prev_operand = True
        elif c in "^_":
            body, i = _group(tex, i + 1)
            width = estimate_width(body, scale * 0.7, True)
            # A subscript and a superscript on the same base overlap.
            if i < len(tex) and tex[i] in "^_" and tex[i] != c:
                other, i = _group(tex, i + 1)
                width = max(width, estimate_width(other, scale * 0.7, True))
            w += width
        elif c in "{}":
            i += 1
        elif c == " " or c == "&":
            i += 1
        elif c in "+-":
            w += (1.25 if prev_operand else 0.8) * scale
            prev_operand = False
            i += 1
        elif c in "=<>":
            w += 1.6 * scale
            prev_operand = False
            i += 1
        elif c in "()[]|/":
            w += 0.4 * scale
            prev_operand = c in ")]|"
            i += 1
        elif c in ",;":
            w += 0.45 * scale
            prev_operand = False
            i += 1
        elif c.isdigit() or c == ".":
            w += 0.5 * scale
            prev_operand = True
            i += 1
        else:  # a letter: capitals are wider
            w += (0.75 if c.isupper() else 0.55) * scale
            prev_operand = True
            i += 1
    return w


class _Printer:
    """Prints with the output names (macros) and measures with the display names."""

    def __init__(self, names, display, **settings):
        self.names, self.display, self.settings = names, display, settings

    def tex(self, expr) -> str:
        return to_latex(expr, self.names, **self.settings)

    def width(self, expr) -> float:
        return estimate_width(to_latex(expr, self.display, **self.settings))


def _unbraced_split(tex: str, inner: str):
    """``(left, right)``: ``tex`` around the one occurrence of ``\\left<d> inner \\right<d>``,
    the delimiters made ``\\biggl``/``\\biggr`` and a brace group enclosing exactly them dropped,
    when both sides are then balanced; else ``None``."""
    k = tex.find(inner)
    if k < 0 or tex.find(inner, k + 1) >= 0:
        return None
    left, right = tex[:k], tex[k + len(inner):]
    ml = re.search(r"\\left(\\[A-Za-z]+|.)\s*$", left)
    mr = re.match(r"\s*\\right(\\[A-Za-z]+|.)", right)
    if not (ml and mr):
        return None
    left = left[:ml.start()]
    right = right[mr.end():]
    if left.endswith("{") and right.startswith("}"):
        left, right = left[:-1], right[1:]
    if left.count("{") != left.count("}") or right.count("{") != right.count("}"):
        return None
    return left + r"\biggl" + ml.group(1), r"\biggr" + mr.group(1) + right


def _paren(expr, p: _Printer) -> str:
    tex = p.tex(expr)
    return r"\left(%s\right)" % tex if isinstance(expr, sympy.Add) else tex


def _pieces(expr, p: _Printer, budget: float) -> list[str]:
    """LaTeX fragments whose concatenation prints ``expr``; a line may break between two."""
    if p.width(expr) <= budget:
        return [p.tex(expr)]
    if isinstance(expr, sympy.Add):
        from .printing import DEFAULT_SETTINGS, AppendixPrinter

        terms = AppendixPrinter(dict(DEFAULT_SETTINGS, **p.settings))._as_ordered_terms(expr)
        out: list[str] = []
        for k, term in enumerate(terms):
            sign = ""
            if k > 0:
                if term.could_extract_minus_sign():
                    sign, term = "- ", -term
                else:
                    sign = "+ "
            sub = _pieces(term, p, budget - 1.3)
            sub[0] = sign + sub[0]
            out.extend(sub)
        return [x for x in out if x]
    if isinstance(expr, sympy.Mul):
        if expr.could_extract_minus_sign():
            sub = _pieces(-expr, p, budget - 0.8)
            sub[0] = "- " + sub[0]
            return sub
        num, den = sympy.fraction(expr, exact=True)
        factors = list(sympy.Mul.make_args(num)) + [f ** -1 for f in sympy.Mul.make_args(den)
                                                    if f != 1]
        candidates = [f for f in factors if _breakable(f) and p.width(f) > budget / 3]
        target = max(candidates, key=p.width) if candidates else None
        rest = expr / target if candidates else None
        if candidates and len(sympy.srepr(rest)) < len(sympy.srepr(expr)):
            if rest == 1:
                head, head_w = "", 0.0
            else:
                head, head_w = _paren(rest, p) + " ", p.width(rest)
            inner_budget = budget - head_w if head_w < budget / 2 else budget
            sub = _wrap(target, p, inner_budget)
            if head_w >= budget / 2:
                first = _wrap(rest, p, budget) if isinstance(rest, sympy.Add) else \
                    _pieces(rest, p, budget)
                return [*first, *sub]
            sub[0] = head + sub[0]
            return sub
        # No factor to break inside: break between the factors.
        out = [p.tex(1 / den)] if den != 1 else []
        out += [_paren(f, p) for f in sympy.Mul.make_args(num) if f != 1]
        return out
    if _breakable(expr):
        return _wrap(expr, p, budget)
    return [p.tex(expr)]


def _breakable(expr) -> bool:
    if isinstance(expr, sympy.Add):
        return True
    if isinstance(expr, GaussianIntegral):  # broken inside its integrand's brackets
        return True
    if isinstance(expr, sympy.Pow):
        return isinstance(expr.base, sympy.Add) and expr.exp.is_Integer and expr.exp != 0
    if isinstance(expr, sympy.Function) and len(expr.args) == 1:
        return True
    return False


def _wrap(expr, p: _Printer, budget: float) -> list[str]:
    """``expr`` (a sum, an integer power of a sum, a function of one argument) broken inside
    its brackets, which become ``\\biggl( ... \\biggr)``."""
    if isinstance(expr, sympy.Add):
        inner = _pieces(expr, p, budget - 0.8)
        if len(inner) == 1:
            return [r"\biggl(" + inner[0] + r"\biggr)"]
        return [r"\biggl(" + inner[0], *inner[1:-1], inner[-1] + r"\biggr)"]
    if isinstance(expr, sympy.Pow):
        inner = _wrap(expr.base, p, budget - 0.8)
        inner[-1] += "^{%s}" % p.tex(expr.exp)
        return inner
    arg = expr.args[0]  # a function's argument, a Gaussian integral's integrand
    split = _unbraced_split(p.tex(expr), p.tex(arg))
    if split is None:
        return [p.tex(expr)]
    left, right = split
    inner = _pieces(arg, p, budget - 1.5)
    if len(inner) == 1:
        return [p.tex(expr)]
    return [left + inner[0], *inner[1:-1], inner[-1] + right]


def display_lines(obj, names, display=None, width: float = COLUMN_EM,
                  **settings) -> tuple[str, list[str]]:
    """``(lhs, lines)``: a display split into lines that fit ``width`` em. For a relation ``lhs``
    is its left side with the relation sign (``"x ="``) and ``lines`` the right side; otherwise
    ``lhs`` is empty. One line means the display fits as it is."""
    p = _Printer(names, display if display is not None else names, **settings)
    if isinstance(obj, sympy.Equality):
        lhs_tex = p.tex(obj.lhs) + " ="
        lhs_w = p.width(obj.lhs) + 1.6
        if lhs_w > width / 2:  # a long left side: the right side starts on the next line
            budget = width - 2.0
        else:
            budget = width - lhs_w
        rhs = obj.rhs
    elif isinstance(obj, sympy.Basic) and not isinstance(obj, sympy.MatrixBase):
        lhs_tex, lhs_w, budget, rhs = "", 0.0, width, obj
    else:
        return "", [p.tex(obj)]
    if isinstance(obj, sympy.Equality) and p.width(obj.lhs) + 1.6 + p.width(rhs) <= width:
        return lhs_tex, [p.tex(rhs)]
    if not isinstance(obj, sympy.Equality) and p.width(rhs) <= width:
        return "", [p.tex(rhs)]
    tail = ""
    if isinstance(obj, sympy.Equality) and p.width(obj.lhs) > width - 2.0 \
            and p.width(rhs) < width / 3:
        # A long left side and a short right side (``... = 0``): break the left side.
        lhs_tex, budget, tail = "", width, " = " + p.tex(rhs)
        rhs = obj.lhs
    pieces = _pieces(rhs, p, budget - 1.0)
    if tail:
        pieces.append(tail)
    lines, current, current_w = [], "", 0.0
    for piece in pieces:
        w = estimate_width(_display_form(piece, p))
        limit = budget if not lines else budget - 1.0  # continuation lines are indented
        if current and current_w + w > limit:
            lines.append(current)
            current, current_w = piece, w
        else:
            current = (current + " " + piece).strip()
            current_w += w
    if current:
        lines.append(current)
    return lhs_tex, lines


def _display_form(piece: str, p: _Printer) -> str:
    """``piece`` with the notation macros replaced by the display names they stand for."""
    for key, macro in p.names.items():
        if isinstance(macro, str) and macro.startswith("\\") and key in p.display and \
                p.display[key] != macro:
            piece = re.sub(re.escape(macro) + r"(?![A-Za-z])", lambda _m: p.display[key], piece)
    return piece


#: The name of the k-th Gaussian integral named in a document's "where" clauses.
INTEGRAL_NAME = r"\mathcal{I}_{%d}"
#: The name of the k-th repeated subexpression named in a document's "where" clauses.
REPEATED_NAME = r"\mathcal{S}_{%d}"


class IntegralNames:
    r"""Names :math:`\mathcal{I}_1, \mathcal{I}_2, \ldots` of the Gaussian integrals of the
    displays of one document, numbered in the order they are first named.

    ``names`` maps each name's symbol to its LaTeX; ``definitions`` maps it to its integral, in
    which the integrals nested in the integrand appear by their names."""

    def __init__(self):
        self.names: dict = {}
        self.definitions: dict = {}
        self._symbol: dict = {}  # integral as it occurs -> its name's symbol
        self._repeats = self._integrals = 0
        self._depends: dict = {}  # a subexpression's name -> the integration variables it holds

    def shorten(self, expr) -> tuple:
        """``(short, needed)``: ``expr`` with every Gaussian integral replaced by its name, and
        the names whose definitions ``short`` needs (with those their definitions need), in the
        order of their numbers."""
        integrals = sorted(expr.atoms(GaussianIntegral),
                           key=lambda g: (len(g.args[0].atoms(GaussianIntegral)),
                                          sympy.default_sort_key(g)))
        for g in integrals:  # innermost first: an outer integrand holds its inner names
            if g in self._symbol:
                continue
            inner = {h: self._symbol[h] for h in g.args[0].atoms(GaussianIntegral)}
            body = GaussianIntegral(g.args[0].xreplace(inner), g.args[1], evaluate=False)
            known = next((s for s, d in self.definitions.items() if d == body), None)
            if known is None:
                self._integrals += 1
                known = sympy.Dummy(f"I{self._integrals}")
                self.names[known] = INTEGRAL_NAME % self._integrals
                self.definitions[known] = body
            self._symbol[g] = known
        short = expr.xreplace({g: self._symbol[g] for g in integrals})
        needed, todo = set(), [short]
        while todo:
            for s in todo.pop().atoms(sympy.Dummy):
                if s in self.definitions and s not in needed:
                    needed.add(s)
                    todo.append(self.definitions[s])
        order = list(self.names)
        return short, sorted(needed, key=order.index)

    def name_repeats(self, exprs, names, display, least: float) -> tuple:
        """``(exprs, named)``: ``exprs`` (a display and the integrals' definitions it needs) with
        each subexpression that occurs at least twice among them and prints at least ``least`` em
        wide (printed with ``display``, :func:`estimate_width`) replaced by a name
        :math:`\\mathcal{S}_k`, the narrowest first (naming it narrows those that hold it), and
        ``named``, the ``(name, subexpression)`` pairs in the order they were named. A subexpression of an integration variable is a function of
        it, named with it as argument (:math:`\\mathcal{S}_1(\\xi)`)."""
        exprs = list(exprs)
        bound = set()
        for e in exprs:
            bound |= {g.args[1] for g in e.atoms(GaussianIntegral)}
        named, widths = [], {}
        while True:
            p = _Printer({**names, **self.names}, {**display, **self.names})
            counts: dict = {}
            for e in exprs:
                for sub in sympy.preorder_traversal(e):
                    if sub.args and not isinstance(sub, GaussianIntegral):
                        counts[sub] = counts.get(sub, 0) + 1
            for sub, k in counts.items():
                if k >= 2 and sub not in widths:
                    widths[sub] = p.width(sub)
            # the smallest tree first: it holds no other candidate, and naming it narrows those
            # that hold it (which may then fit unnamed)
            wide = [(_size(sub), sympy.default_sort_key(sub), sub)
                    for sub, k in counts.items() if k >= 2 and widths[sub] >= least]
            if not wide:
                return exprs, named
            sub = min(wide)[2]
            symbol = next((s for s, d in self.definitions.items() if d == sub), None)
            if symbol is None:
                self._repeats += 1
                symbol = sympy.Dummy(f"S{self._repeats}")
                variables = set(sub.free_symbols & bound)
                for other in sub.free_symbols & set(self._depends):
                    variables |= self._depends[other]
                self._depends[symbol] = variables
                variables = sorted(variables, key=sympy.default_sort_key)
                self.names[symbol] = REPEATED_NAME % self._repeats + (
                    r"\left(%s\right)" % ", ".join(p.tex(v) for v in variables)
                    if variables else "")
                self.definitions[symbol] = sub
            named.append((symbol, sub))
            exprs = [_replace_keeping_integrals(e, {sub: symbol}) for e in exprs]

    def shown_definition(self, symbol, named) -> sympy.Basic:
        """The definition of ``symbol`` (one of ``named``, the ``(symbol, subexpression)`` pairs
        :meth:`name_repeats` returned, in order) with the names that came after it in it."""
        definition = self.definitions[symbol]
        later = [pair for pair in named[[s for s, _ in named].index(symbol) + 1:]]
        for other, sub in later:
            definition = _replace_keeping_integrals(definition, {sub: other})
        return definition


def _size(expr) -> int:
    """The number of nodes of ``expr``'s tree."""
    return sum(1 for _ in sympy.preorder_traversal(expr))


def _replace_keeping_integrals(expr, mapping):
    """``expr.xreplace(mapping)``, with each Gaussian integral rebuilt unevaluated (SymPy would
    otherwise take the factors independent of the variable out of it)."""
    if expr in mapping:
        return mapping[expr]
    if not expr.args:
        return expr
    args = [_replace_keeping_integrals(a, mapping) for a in expr.args]
    if isinstance(expr, GaussianIntegral):
        return GaussianIntegral(*args, evaluate=False)
    return expr.func(*args) if args != list(expr.args) else expr
