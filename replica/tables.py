"""Tables and grids of results for the scientific Python ecosystem (pandas, xarray).

Two shapes cover what the workbench computes over many points:

* :class:`Table` -- rows of named cells, as in the CSV files the command line writes (a sweep, a
  theory-versus-simulation check): numeric columns hold numbers (a parameter given as ``9/4``
  is the float ``2.25`` in column ``alpha``), its exact string is in ``alpha_exact``, a
  covariance SPEC (``piano``) is text. :meth:`Table.to_pandas` gives a ``DataFrame`` of float64
  columns (``*_exact`` and text columns as strings); :meth:`Table.to_xarray` a ``Dataset``
  whose dimensions are the parameters that vary.
* :class:`Grid` -- fields over a rectangular grid of two parameters (a phase diagram):
  :meth:`Grid.to_xarray` is a ``Dataset`` with the two parameters as coordinates,
  :meth:`Grid.to_pandas` the long table, one row per grid point.

pandas and xarray are optional (``pip install replica[data]``); importing :mod:`replica` does
not import them, and a conversion without them is an ``ImportError`` that says what to install.
:func:`read_csv` reads any CSV the command line writes with those column types.
"""

from __future__ import annotations

import csv
import dataclasses
from typing import Any

EXACT_SUFFIX = "_exact"
"""Suffix of the column holding a parameter's exact string (``alpha_exact``: ``9/4``)."""


def require(module: str):
    """Import ``pandas`` or ``xarray``; without it, an ``ImportError`` of one line naming the
    extra that installs it."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError:
        raise ImportError(f"this conversion needs {module}: pip install replica[data]") from None


def _number(cell) -> float:
    """A CSV cell as a float: ``""`` (undefined) is NaN; ``inf`` is infinity."""
    if cell is None or cell == "":
        return float("nan")
    if isinstance(cell, bool):
        return float(cell)
    return float(cell)


def _is_number(cell) -> bool:
    if cell is None or cell == "":
        return True
    if isinstance(cell, bool):
        return False
    try:
        float(cell)
    except (TypeError, ValueError):
        return False
    return True


def _is_int(cell) -> bool:
    return isinstance(cell, int) and not isinstance(cell, bool) or \
        (isinstance(cell, str) and cell.lstrip("-").isdigit())


@dataclasses.dataclass
class Table:
    """Rows of cells under a header (what a CSV of the command line holds).

    ``parameters`` names the columns that are inputs (the candidates for dimensions of
    :meth:`to_xarray`); ``attrs`` holds what is fixed for the whole table (the model...)."""

    header: list
    rows: list
    parameters: list = dataclasses.field(default_factory=list)
    attrs: dict = dataclasses.field(default_factory=dict)

    def column(self, name: str) -> list:
        j = self.header.index(name)
        return [row[j] for row in self.rows]

    def numeric(self, name: str) -> bool:
        """Whether column ``name`` holds numbers (floats, ``inf``, empty cells) and is not an
        exact-string column."""
        if name.endswith(EXACT_SUFFIX):
            return False
        values = self.column(name)
        return all(_is_number(v) for v in values) and any(v not in ("", None) for v in values) \
            if values else False

    def write_csv(self, path) -> None:
        with open(path, "w", newline="") as fh:
            w = csv.writer(fh)
            w.writerow(self.header)
            for row in self.rows:
                w.writerow(["" if v is None else v for v in row])

    def to_pandas(self):
        """A ``pandas.DataFrame``: numeric columns as float64 (empty cells NaN, ``inf``
        infinite; a column of integers such as ``d`` as int64), boolean columns as bool, exact
        and text columns as strings."""
        pd = require("pandas")
        data = {}
        for name in self.header:
            values = self.column(name)
            if values and all(isinstance(v, bool) or v in ("True", "False") for v in values):
                data[name] = pd.array([v is True or v == "True" for v in values], dtype=bool)
            elif self.numeric(name) and all(_is_int(v) for v in values):
                data[name] = pd.array([int(v) for v in values], dtype="int64")
            elif self.numeric(name):
                data[name] = pd.array([_number(v) for v in values], dtype="float64")
            else:
                data[name] = pd.array(["" if v is None else str(v) for v in values],
                                      dtype=object)
        frame = pd.DataFrame(data, columns=list(self.header))
        frame.attrs.update(self.attrs)
        return frame

    def to_xarray(self, dims=None):
        """An ``xarray.Dataset`` whose dimensions are ``dims`` (default: the parameter columns
        with more than one distinct value, in header order) and whose variables are the other
        numeric columns; a parameter's exact strings become a coordinate ``NAME_exact`` along
        its dimension. Two rows at the same coordinates are refused (ValueError)."""
        xr = require("xarray")
        frame = self.to_pandas()
        if dims is None:
            dims = [p for p in self.parameters
                    if p in frame and frame[p].nunique(dropna=False) > 1]
        dims = list(dims)
        if frame.duplicated(subset=dims).any():
            raise ValueError(f"rows repeat the coordinates {dims}: give more dims")
        values = [c for c in frame.columns if c not in dims and self.numeric(c)
                  and (c not in self.parameters or frame[c].nunique(dropna=False) > 1)]
        indexed = frame.set_index(dims) if dims else frame
        ds = xr.Dataset.from_dataframe(indexed[values]) if dims else \
            xr.Dataset({c: ("row", frame[c].to_numpy()) for c in values})
        for p in dims:
            exact = p + EXACT_SUFFIX
            if exact in frame:
                pairs = dict(zip(frame[p], frame[exact]))
                ds = ds.assign_coords({exact: (p, [pairs[v] for v in ds[p].values])})
        fixed = {c: frame[c].iloc[0] for c in frame.columns
                 if c not in dims and c not in values and len(frame) and
                 frame[c].nunique(dropna=False) == 1}
        ds.attrs.update({k: (v.item() if hasattr(v, "item") else v) for k, v in fixed.items()})
        ds.attrs.update(self.attrs)
        return ds


@dataclasses.dataclass
class Grid:
    """Fields over the grid of two parameters: ``fields[name][j, i]`` is the value at
    ``(x[i], y[j])``. ``attrs``: what is fixed (model, quantity, other parameters)."""

    x_name: str
    x: Any
    y_name: str
    y: Any
    fields: dict
    attrs: dict = dataclasses.field(default_factory=dict)

    def to_xarray(self):
        """An ``xarray.Dataset``: every field a variable over ``(y_name, x_name)``, the two
        parameters as coordinates."""
        xr = require("xarray")
        import numpy as np

        ds = xr.Dataset({k: ((self.y_name, self.x_name), np.asarray(v))
                         for k, v in self.fields.items()},
                        coords={self.x_name: np.asarray(self.x, float),
                                self.y_name: np.asarray(self.y, float)})
        ds.attrs.update({k: str(v) for k, v in self.attrs.items()})
        return ds

    def to_pandas(self):
        """A ``pandas.DataFrame`` with one row per grid point: the two parameters, then the
        fields (the same rows as the grid CSV)."""
        pd = require("pandas")
        import numpy as np

        X, Y = np.meshgrid(np.asarray(self.x, float), np.asarray(self.y, float))
        data = {self.x_name: X.ravel(), self.y_name: Y.ravel()}
        data.update({k: np.asarray(v).ravel() for k, v in self.fields.items()})
        frame = pd.DataFrame(data)
        frame.attrs.update(self.attrs)
        return frame

    @classmethod
    def from_csv(cls, path, x: str | None = None, y: str | None = None, attrs=None) -> "Grid":
        """The grid of a long CSV (one row per point, columns ``x``, ``y`` and the fields), as
        the phase-diagram commands write it (``*_grid.csv``, the plane of ``phase-diagram
        --model``); ``x`` and ``y`` default to its first two columns. Every ``(x, y)`` pair
        must occur once. A column of numbers becomes a float array, one of ``True``/``False`` a
        boolean array, any other (the ``status`` of each point) an array of strings."""
        import numpy as np

        table = read_table(path)
        x = table.header[0] if x is None else x
        y = table.header[1] if y is None else y
        xs = np.array([_number(v) for v in table.column(x)])
        ys = np.array([_number(v) for v in table.column(y)])
        xv, yv = np.unique(xs), np.unique(ys)
        if len(xv) * len(yv) != len(table.rows):
            raise ValueError(f"{path}: the rows are not a complete {x} x {y} grid")
        ix, iy = np.searchsorted(xv, xs), np.searchsorted(yv, ys)
        fields = {}
        for name in table.header:
            if name in (x, y):
                continue
            values = table.column(name)
            if all(v in ("True", "False") for v in values):
                arr = np.zeros((len(yv), len(xv)), bool)
                arr[iy, ix] = [v == "True" for v in values]
            elif all(_is_number(v) for v in values):
                arr = np.full((len(yv), len(xv)), np.nan)
                arr[iy, ix] = [_number(v) for v in values]
            else:  # words, e.g. the float64 path's status of each point
                arr = np.full((len(yv), len(xv)), "", dtype=object)
                arr[iy, ix] = values
            fields[name] = arr
        return cls(x, xv, y, yv, fields, dict(attrs or {}))


def read_table(path, parameters=None) -> Table:
    """A CSV file as a :class:`Table` of strings (``parameters``: default the columns that have
    an exact twin ``NAME_exact``, and ``d``)."""
    with open(path, newline="") as fh:
        rows = list(csv.reader(fh))
    header, body = rows[0], rows[1:]
    if parameters is None:
        parameters = [h for h in header if h + EXACT_SUFFIX in header] + \
            [h for h in ("d",) if h in header]
    return Table(header, body, list(parameters))


def read_grid(path, x: str | None = None, y: str | None = None) -> Grid:
    """A grid CSV of the phase-diagram commands as a :class:`Grid` (see :meth:`Grid.from_csv`):
    ``read_grid(path).to_xarray()``."""
    return Grid.from_csv(path, x, y, {"source": str(path)})


def read_csv(path):
    """Any CSV the command line writes, as a ``pandas.DataFrame`` with float64 numeric
    columns and the exact strings (``*_exact``) as text (``pandas.read_csv`` alone would read
    ``1`` in an exact column as an integer)."""
    return read_table(path).to_pandas()
