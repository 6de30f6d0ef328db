r"""Tables of solved values for the appendices.

A :class:`ValueTable` holds a caption, a header and rows of cells. A cell is prose (``str``), an
integer, a SymPy object (printed in math mode), or a :class:`Value`: a number together with the
significant digits it is guaranteed to (taken from the ``digits`` of a
:class:`replica.numerics.Result`, or
from an agreement count). A :class:`Value` prints exactly those digits, so every number in an
appendix states its own accuracy. In a table a value shows at most :data:`TABLE_DIGITS` of them
(rounded), in fixed notation between ``1e-4`` and ``1e6`` and as ``$1.234\times 10^{-7}$``
outside.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable

import sympy

import mpmath

from ..numerics.result import decimal_string
from .printing import escape_text, to_latex

#: Significant digits a table cell shows at most (a value known to fewer shows fewer).
TABLE_DIGITS = 10


def number_latex(value, digits: int) -> str:
    r"""Math-mode LaTeX (without ``$``) of ``value`` rounded to ``digits`` significant digits:
    ``0.5504061605``, ``1.002391021\times 10^{-7}``, ``0``."""
    digits = max(int(digits), 1)
    with mpmath.workdps(digits + 10):
        x = mpmath.mpf(value)
        if mpmath.isnan(x) or mpmath.isinf(x):
            raise ArithmeticError(f"refusing to print a non-finite value {x}")
        if x == 0:
            return "0"
        text = mpmath.nstr(x, digits, strip_zeros=False, min_fixed=-4, max_fixed=6)
    mant, e, exp = text.partition("e")
    if not e:
        return text
    return r"%s\times 10^{%d}" % (mant, int(exp))


@dataclasses.dataclass(frozen=True)
class Value:
    """A number printed with ``digits`` significant digits (the digits it is guaranteed to)."""

    value: Any
    digits: int

    @classmethod
    def from_result(cls, result, key: str, digits: int | None = None) -> "Value":
        """``result[key]`` with the result's guaranteed digits (``digits`` caps them)."""
        if result.digits is None:
            raise ValueError(f"{result.model}: result has no guaranteed digits (verify=False?)")
        nd = result.digits if digits is None else min(digits, result.digits)
        return cls(result[key], nd)

    def text(self) -> str:
        """All the guaranteed digits, as a decimal string."""
        return decimal_string(self.value, self.digits)

    def latex(self, max_digits: int = TABLE_DIGITS) -> str:
        """Math-mode LaTeX with at most ``max_digits`` significant digits."""
        return number_latex(self.value, min(self.digits, max_digits))


@dataclasses.dataclass(frozen=True)
class Figure:
    """A figure of an appendix: ``draw(path)`` writes it as a PNG at ``path`` (the appendix writer
    calls it, in the output folder, as ``KEY-NAME.png``; a raster image, so that its labels are
    not mixed into the text of the PDF, which the typesetting tests scan); ``caption`` is prose
    (same placeholders as a sentence). Its width is the column's."""

    caption: str
    name: str
    draw: Callable[[str], Any]


@dataclasses.dataclass(frozen=True)
class ValueTable:
    """A booktabs table; ``columns`` and the cells of ``rows`` are prose, ints, SymPy objects or
    :class:`Value`. ``align`` is a LaTeX column spec (default: ``l`` then ``r`` columns)."""

    caption: str
    columns: tuple
    rows: tuple
    align: str | None = None

    def __post_init__(self):
        width = len(self.columns)
        for row in self.rows:
            if len(row) != width:
                raise ValueError(f"table {self.caption!r}: row {row!r} has {len(row)} cells, "
                                 f"expected {width}")

    def cell_latex(self, cell, symbol_names=None, words=None) -> str:
        if isinstance(cell, Value):
            return "$%s$" % cell.latex()
        if isinstance(cell, bool):
            return "yes" if cell else "no"
        if isinstance(cell, int):
            return "$%d$" % cell
        if isinstance(cell, str):
            return escape_text(cell, words)
        if isinstance(cell, sympy.Basic):
            return "$%s$" % to_latex(cell, symbol_names)
        raise TypeError(f"cannot put {type(cell).__name__} in a table cell")

    def to_latex(self, symbol_names=None, words=None) -> dict:
        """The pieces the template needs: ``align``, ``header`` and ``body`` (lists of LaTeX);
        ``words`` maps symbol names in prose cells to LaTeX (see
        :func:`~replica.latex.printing.escape_text`)."""
        align = self.align or ("l" + "r" * (len(self.columns) - 1))
        header = [self.cell_latex(c, symbol_names, words) for c in self.columns]
        body = [[self.cell_latex(c, symbol_names, words) for c in row] for row in self.rows]
        return dict(align=align, header=header, body=body)
