r"""Tables of solved values for the appendices.

A :class:`ValueTable` holds a caption, a header and rows of cells. A cell is prose (``str``), an
integer, a SymPy object (printed in math mode), or a :class:`Value`: a number together with the
significant digits it is guaranteed to (taken from the ``digits`` of a
:class:`replica.numerics.Result`, or from an agreement count). A :class:`Value` prints exactly those digits, so every number in an
appendix states its own accuracy.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import sympy

from ..numerics.result import decimal_string
from .printing import escape_text, to_latex


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
        return decimal_string(self.value, self.digits)


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

    def cell_latex(self, cell, symbol_names=None) -> str:
        if isinstance(cell, Value):
            return "$%s$" % cell.text().replace("e", r"\mathrm{e}")
        if isinstance(cell, bool):
            return "yes" if cell else "no"
        if isinstance(cell, int):
            return "$%d$" % cell
        if isinstance(cell, str):
            return escape_text(cell)
        if isinstance(cell, sympy.Basic):
            return "$%s$" % to_latex(cell, symbol_names)
        raise TypeError(f"cannot put {type(cell).__name__} in a table cell")

    def to_latex(self, symbol_names=None) -> dict:
        """The pieces the template needs: ``align``, ``header`` and ``body`` (lists of LaTeX)."""
        align = self.align or ("l" + "r" * (len(self.columns) - 1))
        header = [self.cell_latex(c, symbol_names) for c in self.columns]
        body = [[self.cell_latex(c, symbol_names) for c in row] for row in self.rows]
        return dict(align=align, header=header, body=body)
