"""Covariance models for task vectors, and closed-form Stieltjes transforms.

A covariance of size ``d`` is given by a SPEC string:

====================  ==========================================================================
``identity``          all eigenvalues 1
``powerlaw:P``        eigenvalues proportional to ``(j+1)**-P``, ``j = 0..d-1`` (decreasing)
``lowrank:F``         the first ``r = round(F d)`` eigenvalues equal to ``d/r``, the rest 0
``lowrank:F:piano``   the first ``r`` eigenvalues proportional to ``r, r-1, ..., 1``, the rest 0
                      (a task subspace with an anisotropic spectrum inside it)
``spike:J``           ``d e_J e_J^T`` (``J`` is 1-based; ``spike:1`` is the top direction)
``piano``             eigenvalues proportional to ``d, d-1, ..., 1``
``file:PATH``         a ``.npy``/``.txt`` file: ``d`` eigenvalues, or a ``d x d`` symmetric PSD matrix
``file:PATH:raw``     the same, kept as given (not normalised)
====================  ==========================================================================

Every covariance is normalised to trace ``d`` (normalised trace ``<C> = tr C / d = 1``) unless
``:raw``. Diagonal specs are diagonal in one fixed coordinate basis, in the order written above.
Rational spectra (identity, lowrank, spike, piano, decimal text files) are held as exact
:class:`fractions.Fraction` and normalised exactly; a power law is evaluated at the working
precision.

The Marchenko--Pastur transform (:func:`marchenko_pastur_expr`) is the resolvent trace of a Wishart
matrix ``R_k = (1/k) sum_j t_j t_j^T`` with ``t_j ~ N(0, c I)`` and ``k = kappa d``:

.. math::  M_\\kappa(z; c) = \\lim \\tfrac1d \\operatorname{tr}(R_k + zI)^{-1}
           = \\frac{2}{(z + c - c/\\kappa) + \\sqrt{(z + c - c/\\kappa)^2 + 4cz/\\kappa}},\\quad z>0.
"""

from __future__ import annotations

import dataclasses
import functools
import os
from fractions import Fraction

import importlib

import mpmath
import numpy as np

from .errors import ParameterError
from .params import parse_exact, to_mpf
from .symbolic.codegen import NotEnclosable, mp_function


class _OnFirstUse:
    """A module imported on first attribute access: the closed forms below are SymPy
    expressions, but a process that only reads covariances (e.g. a float64 solve from the code
    cache) should not pay for importing SymPy."""

    def __init__(self, name: str):
        self._name = name

    def __getattr__(self, attr):
        return getattr(importlib.import_module(self._name), attr)


sympy = _OnFirstUse("sympy")

# ---------------------------------------------------------------------------------------------
# Closed-form Stieltjes transforms (SymPy, the single source for every numeric back end)
# ---------------------------------------------------------------------------------------------


def marchenko_pastur_expr(z, kappa, c=1):
    """SymPy expression of ``M_kappa(z; c)`` (resolvent trace at ``-z``, ``z > 0``) of a scaled
    Marchenko--Pastur law with ratio ``d/k = 1/kappa``; it solves ``M = 1/(a c + z)`` with
    ``a = 1 - 1/kappa + z M / kappa``."""
    b = z + c - c / kappa
    return 2 / (b + sympy.sqrt(b**2 + 4 * c * z / kappa))


def marchenko_pastur_prime_expr(z, kappa, c=1):
    """SymPy expression of ``dM_kappa/dz`` in closed form:
    ``-M^2/2 [1 + (z + c + c/kappa)/sqrt((z + c - c/kappa)^2 + 4 c z/kappa)]``."""
    m = marchenko_pastur_expr(z, kappa, c)
    b = z + c - c / kappa
    return -m**2 / 2 * (1 + (z + c + c / kappa) / sympy.sqrt(b**2 + 4 * c * z / kappa))


# -- Low-rank task covariance (arXiv 2510.04548) ---------------------------
#
# S = (1/M0) sum_nu w_nu w_nu^T with w = sqrt(D/r) A v, A a D x r orthonormal frame, M0 = kappa D,
# r = rho D: S = A W A^T / rho with W an r x r Wishart matrix of aspect ratio rho/kappa. Its
# spectrum has an atom of mass 1 - min(kappa, rho) at 0 and a Marchenko--Pastur bulk. Convention
# of that paper: g(z) = int dmu(t)/(t - z), evaluated at real z < 0 only.


def _lowrank_s(z, kappa, rho):
    r""":math:`s = \sqrt{b^2 - 4\rho^2\kappa z}`, :math:`b = \kappa\rho z + \rho - \kappa`, with
    the radicand written as a sum of non-negative terms for :math:`z < 0` (:math:`w = -z`):
    :math:`s^2 = \kappa^2\rho^2w^2 + 2\kappa\rho(\rho+\kappa)w + (\rho-\kappa)^2`. For
    :math:`z < 0`, :math:`s > |b|`."""
    w = -z
    return sympy.sqrt(kappa**2 * rho**2 * w**2 + 2 * kappa * rho * (rho + kappa) * w
                      + (rho - kappa) ** 2)


def lowrank_atom_masses(kappa, rho):
    r"""``(p0, pt0)``: the masses at 0 of the spectrum of S, :math:`p_0 = 1 - \min(\kappa,\rho)`,
    and of the spectrum restricted to the task subspace, :math:`\tilde p_0 = (1 - \kappa/\rho)_+`
    (written with ``Abs``: :math:`\min(\kappa,\rho) = (\kappa + \rho - |\kappa-\rho|)/2`).
    ``kappa = sympy.oo``: ``(1 - rho, 0)``."""
    kappa, rho = sympy.sympify(kappa), sympy.sympify(rho)
    if kappa == sympy.oo:
        return 1 - rho, sympy.Integer(0)
    d = sympy.Abs(rho - kappa)
    return 1 - (kappa + rho - d) / 2, (rho - kappa + d) / (2 * rho)


def lowrank_regular_expr(z, kappa, rho, n: int = 0):
    r""":math:`h^{(n)}(z)`, the atom-free part of the restricted transform:
    :math:`\tilde g(z) = -\tilde p_0/z + h(z)` with

    .. math:: h(z) = \frac{\kappa\,(\kappa + \rho - |\kappa - \rho|)}
                         {s + \kappa\rho w + |\rho - \kappa|},\qquad w = -z,

    i.e. :math:`2\rho\kappa/(s + \kappa\rho w + \kappa - \rho)` for :math:`\rho\le\kappa` and
    :math:`2\kappa^2/(s + \kappa\rho w + \rho - \kappa)` for :math:`\rho > \kappa`. Derivation: the
    root :math:`\tilde g = -(b+s)/(2\rho z)` of the quadratic for :math:`\tilde g` below (the "−√" branch),
    minus the pole, is :math:`(s - \kappa\rho w - |\rho-\kappa|)/(2\rho w)` plus, for
    :math:`\rho\le\kappa`, nothing; multiplying by the conjugate uses :math:`s^2 - (\kappa\rho w +
    |\rho - \kappa|)^2 = 4\kappa\rho\min(\kappa,\rho) w`. Every term is positive for :math:`z < 0`,
    so :math:`h` and (differentiating this form) its derivatives have no cancellation, even as
    :math:`z\to 0^-` where :math:`\tilde g \sim \tilde p_0/|z|`. ``kappa = sympy.oo``:
    :math:`h = \rho/(1 - \rho z)`."""
    z, kappa, rho = sympy.sympify(z), sympy.sympify(kappa), sympy.sympify(rho)
    if n < 0:
        raise ValueError("derivative order must be >= 0")
    x = sympy.Dummy("x", negative=True)
    if kappa == sympy.oo:
        h = rho / (1 - rho * x)
    else:
        d = sympy.Abs(rho - kappa)
        h = kappa * (kappa + rho - d) / (_lowrank_s(x, kappa, rho) - kappa * rho * x + d)
    return sympy.diff(h, x, n).subs(x, z)


def _pole_derivative(p, z, n):
    """n-th derivative of -p/z."""
    return -p * (-1) ** n * sympy.factorial(n) / z ** (n + 1)


def lowrank_stieltjes_tilde_expr(z, kappa, rho):
    r"""Subspace-restricted transform :math:`\tilde g(z) = \frac1r\operatorname{Tr}[A^\top
    (S - z)^{-1} A]` of the low-rank task covariance (the quadratic for :math:`\tilde g` below), a SymPy expression.

    It is the root of :math:`\rho z\tilde g^2 + b\tilde g + \rho\kappa = 0`, :math:`b = \kappa\rho
    z + \rho - \kappa`, on the branch :math:`\tilde g = -(b + s)/(2\rho z)` (the "−√" branch,
    :math:`\tilde g \sim -1/z` as :math:`z\to-\infty`), written as the pole of the atom
    plus the regular part: :math:`\tilde g = -\tilde p_0/z + h(z)` (:func:`lowrank_atom_masses`,
    :func:`lowrank_regular_expr`), a sum of two non-negative terms for :math:`z < 0`.
    ``kappa = sympy.oo`` gives the limit :math:`\rho/(1 - \rho z)` (the spectrum of
    :math:`P/\rho`)."""
    return lowrank_stieltjes_tilde_derivative_expr(z, kappa, rho, 0)


def lowrank_stieltjes_tilde_derivative_expr(z, kappa, rho, n: int = 1):
    r""":math:`\tilde g^{(n)}(z) = \frac{d^n}{dz^n}(-\tilde p_0/z) + h^{(n)}(z)`. (Implicit
    differentiation of the quadratic gives the equivalent :math:`\tilde g' = \rho\tilde g(\tilde g
    + \kappa)/s`; the tests check it.)"""
    z = sympy.sympify(z)
    _, pt0 = lowrank_atom_masses(kappa, rho)
    return _pole_derivative(pt0, z, n) + lowrank_regular_expr(z, kappa, rho, n)


def lowrank_stieltjes_expr(z, kappa, rho):
    r"""Full-space transform :math:`g(z) = \frac1D\operatorname{Tr}(S - z)^{-1}`:
    :math:`g = -(1-\rho)/z + \rho\tilde g = -p_0/z + \rho h(z)` (the complement of the task
    subspace contributes the pure pole). Equal to the published
    :math:`[\kappa+\rho-\kappa\rho z-2-\sqrt{(\rho\kappa z+\rho-\kappa)^2-4\rho^2\kappa z}]/(2z)`."""
    return lowrank_stieltjes_derivative_expr(z, kappa, rho, 0)


def lowrank_stieltjes_prime_expr(z, kappa, rho):
    r""":math:`g'(z) = \frac1D\operatorname{Tr}(S-z)^{-2} = p_0/z^2 + \rho h'(z)`."""
    return lowrank_stieltjes_derivative_expr(z, kappa, rho, 1)


def lowrank_stieltjes_derivative_expr(z, kappa, rho, n: int = 0):
    r""":math:`g^{(n)}(z) = \frac{d^n}{dz^n}(-p_0/z) + \rho\,h^{(n)}(z)`,
    :math:`p_0 = 1 - \min(\kappa, \rho)`."""
    z, rho = sympy.sympify(z), sympy.sympify(rho)
    p0, _ = lowrank_atom_masses(kappa, rho)
    return _pole_derivative(p0, z, n) + rho * lowrank_regular_expr(z, kappa, rho, n)


def lowrank_stieltjes_quadratic(g, z, kappa, rho):
    r"""The quadratic that :math:`g` solves:
    :math:`z^2g^2 + zg(\kappa\rho z + 2 - \kappa - \rho) + (1-\rho)(\kappa\rho z + 1 - \kappa)
    + \rho^2\kappa z`."""
    return (z**2 * g**2 + z * g * (kappa * rho * z + 2 - kappa - rho)
            + (1 - rho) * (kappa * rho * z + 1 - kappa) + rho**2 * kappa * z)


def lowrank_stieltjes_tilde_quadratic(gt, z, kappa, rho):
    r"""The quadratic that :math:`\tilde g` solves:
    :math:`\rho z\tilde g^2 + (\kappa\rho z + \rho - \kappa)\tilde g + \rho\kappa`."""
    return rho * z * gt**2 + (kappa * rho * z + rho - kappa) * gt + rho * kappa


@functools.lru_cache(maxsize=None)
def _lowrank_mp_evaluator(n: int, tilde: bool, kappa_infinite: bool):
    x, k, r = sympy.symbols("x kappa rho")
    kk = sympy.oo if kappa_infinite else k
    if tilde:
        e = lowrank_stieltjes_tilde_derivative_expr(x, kk, r, n)
    else:
        e = lowrank_stieltjes_derivative_expr(x, kk, r, n)
    return mp_function([x, k, r], e)


def lowrank_stieltjes_mp(z, kappa, rho, n: int = 0, tilde: bool = False):
    """Numeric :math:`g^{(n)}(z)` (or :math:`\\tilde g^{(n)}` with ``tilde=True``) at the working
    precision, from the SymPy closed forms above. ``z``, ``kappa``, ``rho`` are mpf (``kappa`` may
    be ``mpmath.inf``). Raises :class:`ParameterError` unless ``z < 0`` (the branch rule: the closed
    form is the Stieltjes transform only there), ``0 < rho <= 1``, ``kappa > 0``.
    """
    z, rho = mpmath.mpf(z), mpmath.mpf(rho)
    kappa = mpmath.mpf(kappa)
    if not z < 0:
        raise ParameterError("z", f"the low-rank Stieltjes transform is evaluated at z < 0 only, "
                                  f"got z = {mpmath.nstr(z, 8)}")
    if not (0 < rho <= 1):
        raise ParameterError("rho", "rank ratio must lie in (0, 1]")
    if not kappa > 0:
        raise ParameterError("kappa", "must be positive")
    kinf = mpmath.isinf(kappa)
    return _lowrank_mp_evaluator(int(n), bool(tilde), kinf)(z, mpmath.mpf(1) if kinf else kappa,
                                                            rho)


# ---------------------------------------------------------------------------------------------
# Covariances
# ---------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Covariance:
    """A ``d x d`` PSD task covariance.

    ``diagonal`` holds the diagonal entries when the matrix is diagonal in the fixed coordinate
    basis (exact ``Fraction`` where possible, else a callable of the precision); ``matrix`` holds a
    full symmetric matrix (exact ``Fraction`` entries from a text file, floats from ``.npy``).
    """

    spec: str
    d: int
    diagonal: tuple | None = None  # exact entries (Fraction) or None
    matrix: tuple | None = None  # tuple of row tuples (Fraction or float)
    power: Fraction | None = None  # powerlaw exponent (entries computed at working precision)
    scale: Fraction | None = None  # multiplies entries of matrix/diagonal loaded from a file

    @property
    def is_diagonal(self) -> bool:
        return self.matrix is None

    @property
    def is_rational(self) -> bool:
        return self.power is None

    # -- entries -------------------------------------------------------------------------------
    def diag_mp(self) -> list:
        """Diagonal entries as ``mpf`` at the working precision (normalised to trace d)."""
        if self.power is not None:
            raw = [mpmath.mpf(j + 1) ** (-to_mpf(self.power)) for j in range(self.d)]
            s = self.d / mpmath.fsum(raw)
            return [v * s for v in raw]
        if self.diagonal is not None:
            return [to_mpf(v) for v in self.diagonal]
        return [self.mat_entry_mp(i, i) for i in range(self.d)]

    def diag_f64(self) -> np.ndarray:
        if self.power is not None:
            raw = (np.arange(self.d) + 1.0) ** (-float(self.power))
            return raw * (self.d / raw.sum())
        if self.diagonal is not None:
            return np.array([float(v) for v in self.diagonal])
        return np.diag(self.matrix_f64()).copy()

    def mat_entry_mp(self, i, j):
        v = self.matrix[i][j]
        v = to_mpf(v) if isinstance(v, Fraction) else mpmath.mpf(v)
        return v * to_mpf(self.scale) if self.scale is not None else v

    def matrix_mp(self) -> mpmath.matrix:
        if self.matrix is None:
            m = mpmath.zeros(self.d, self.d)
            for i, v in enumerate(self.diag_mp()):
                m[i, i] = v
            return m
        m = mpmath.matrix(self.d, self.d)
        for i in range(self.d):
            for j in range(self.d):
                m[i, j] = self.mat_entry_mp(i, j)
        return m

    def matrix_f64(self) -> np.ndarray:
        if self.matrix is None:
            return np.diag(self.diag_f64())
        if self.scale is None:
            return np.array([[float(v) for v in row] for row in self.matrix])
        # exact entries are scaled exactly first: a normalised matrix read from text may hold
        # entries beyond the float64 range
        return np.array([[float(v * self.scale) if isinstance(v, Fraction)
                          else float(v) * float(self.scale) for v in row] for row in self.matrix])

    def trace_fraction(self):
        """Exact normalised trace ``tr C / d`` where the entries are rational, else ``None``."""
        if self.power is not None:
            return Fraction(1)
        if self.diagonal is not None:
            return sum(self.diagonal, Fraction(0)) / self.d
        if all(isinstance(self.matrix[i][i], Fraction) for i in range(self.d)):
            t = sum((self.matrix[i][i] for i in range(self.d)), Fraction(0)) / self.d
            return t * self.scale if self.scale is not None else t
        return None

    def rank(self) -> int:
        """The number of nonzero eigenvalues (of nonzero diagonal entries where the matrix is
        diagonal), computed once per covariance (it is immutable)."""
        r = self.__dict__.get("_rank")
        if r is None:
            r = self._rank_of()
            object.__setattr__(self, "_rank", r)
        return r

    def _rank_of(self) -> int:
        if self.diagonal is not None:
            return sum(1 for v in self.diagonal if v != 0)
        if self.power is not None:
            return self.d
        ev = np.linalg.eigvalsh(self.matrix_f64())
        return int(np.sum(ev > 1e-12 * max(ev.max(), 1e-300)))


def _round_half_up(x: Fraction) -> int:
    return int((x + Fraction(1, 2)).__floor__())


MAX_THEORY_D = 100_000
"""Largest dimension of a covariance the theory solves with: its spectral averages cost about
0.5 ms and 1.5 kB per distinct eigenvalue at 30 digits (a power law at d = 100000 takes about a
minute), so a larger ``d`` is refused up front with an estimate instead of running for hours."""


def amount_text(x: float, unit: str) -> str:
    """``1.5e10, "B"`` -> ``"15 GB"``; ``5000, "s"`` -> ``"1.4 hours"`` (x may be huge; an
    estimate that overflowed float64, ``inf``, is said as beyond the largest float:
    1.8e308 B = 1.8e296 TB, 1.8e308 s = 5.7e300 years)."""
    if x == float("inf"):
        return "over 5e+300 years" if unit == "s" else "over 1e+296 TB"
    if unit == "s":
        for size, name in ((3.15e7, "years"), (86400, "days"), (3600, "hours"), (60, "minutes")):
            if x >= size:
                return f"{x / size:.3g} {name}"
        return f"{x:.3g} s"
    for size, name in ((1e12, "TB"), (1e9, "GB"), (1e6, "MB"), (1e3, "kB")):
        if x >= size:
            return f"{x / size:.3g} {name}"
    return f"{x:.3g} B"


def check_theory_d(d: int, option: str = "--d") -> int:
    """``d`` if a covariance of that size can be solved with, else a :class:`ParameterError`
    saying what it would need."""
    if d > MAX_THEORY_D:
        from .params import compact_str

        if d < 10 ** 15:
            need = (f"it would need about {amount_text(d * 1.5e3, 'B')} and "
                    f"{amount_text(d * 5e-4, 's')} for d distinct eigenvalues at 30 digits")
        else:
            need = "far beyond any memory"
        raise ParameterError(option, f"d = {compact_str(d)} exceeds {MAX_THEORY_D}, the largest "
                                     "dimension "
                                     f"the theory solves with ({need})")
    return d


MAX_POWERLAW_DECADES = 100_000
"""Largest dynamic range of a power law, in decades: ``powerlaw:P`` at dimension ``d`` spans
``lambda_1 / lambda_d = d**P``, and ``P * log10(d)`` must not exceed this. The theory computes
such a spectrum exactly as given (its eigenvalues are held at the working precision with an
unbounded exponent), but its reported quantities reach ``d**P`` (the ``inverse`` measure is
about ``d**(P-2)``) and writing or proving a number of ``10**(10**5)`` takes about a second
(measured: a certified solve at ``d = 17``, ``P = 10**5``, 1.1 s; ``P = 3*10**5``, 7.4 s;
``P = 10**10`` overflowed the decimal conversion, ``P = 10**999`` never finished), so a larger
range is refused up front rather than hanging or failing after the solve."""


def check_powerlaw_range(p: Fraction, d: int, spec: str, name: str = "--train") -> None:
    """Refuse (:class:`ParameterError` naming ``name`` and ``spec``) a power-law exponent whose
    dynamic range ``P * log10(d)`` exceeds :data:`MAX_POWERLAW_DECADES`; the message states
    the allowed range of ``P`` at this ``d``."""
    import math

    if d <= 1:
        return
    top = Fraction(MAX_POWERLAW_DECADES) / Fraction(math.log10(d))
    if p > top:
        shown = f"{float(p):.3g}" if p < Fraction(10) ** 300 else "P"
        raise ParameterError(name, f"{spec}: the exponent must lie in [0, {float(top):.6g}] at "
                                   f"d = {d} (a power law spans d**P = 10**(P*log10 d); "
                                   f"{shown}*log10({d}) exceeds {MAX_POWERLAW_DECADES} decades)")


def parse_spec(spec: str, d: int, name: str = "--train") -> Covariance:
    """Parse a SPEC string for a ``d x d`` covariance; raise :class:`ParameterError` naming
    ``name`` on any problem (unknown kind, bad number, rank 0, wrong size, not PSD, ``d`` beyond
    :data:`MAX_THEORY_D`). A NumPy array in place of the string is a matrix or its eigenvalues
    (:func:`covariance_from_array`)."""
    if isinstance(spec, np.ndarray):
        return covariance_from_array(spec, d, name)
    if not isinstance(d, int) or isinstance(d, bool) or d <= 0:
        raise ParameterError("--d", f"must be a positive integer, got {d!r}")
    check_theory_d(d)
    spec = str(spec).strip()
    kind, _, arg = spec.partition(":")
    kind = kind.lower()
    if kind not in _REMEMBERED_KINDS:  # a file may change between calls: parsed every time
        return _parse_kind(spec, d, name, kind, arg)
    hit = _PARSED.get((spec, d))
    if hit is None:
        if len(_PARSED) > 256:
            _PARSED.clear()
        hit = _PARSED[(spec, d)] = _parse_kind(spec, d, name, kind, arg)
    return hit


_REMEMBERED_KINDS = frozenset({"identity", "piano", "powerlaw", "lowrank", "spike"})
"""SPEC kinds whose covariance is a function of the text and ``d`` alone."""


def remembered_spec(spec) -> bool:
    """Whether the covariance a SPEC string ``spec`` stands for is a function of that string
    and ``d`` alone (its kind is not ``file:``, whose file may change between calls), so that a
    cache keyed on the string may keep it."""
    return str(spec).strip().partition(":")[0].lower() in _REMEMBERED_KINDS

_PARSED: dict = {}
"""Built-in SPECs already parsed, by ``(spec, d)``: a :class:`Covariance` is immutable, and
returning the same object lets the solvers reuse its spectral pairs (cached by identity), so a
float64 point does not rebuild ``d`` exact fractions on every call."""


def _parse_kind(spec, d, name, kind, arg) -> Covariance:
    if kind == "identity" and not arg:
        return Covariance(spec, d, diagonal=tuple([Fraction(1)] * d))
    if kind == "piano" and not arg:
        total = Fraction(d * (d + 1), 2)
        return Covariance(spec, d, diagonal=tuple(Fraction(d * (d - j)) / total for j in range(d)))
    if kind == "powerlaw":
        p = parse_exact(arg, f"{name} powerlaw exponent")
        if p < 0:
            raise ParameterError(name, f"powerlaw exponent must be >= 0, got {arg}")
        if p == 0 or d == 1:  # every eigenvalue (j+1)**-P equal to 1 (d = 1: the only one)
            return Covariance(spec, d, diagonal=tuple([Fraction(1)] * d))
        check_powerlaw_range(p, d, spec, name)
        return Covariance(spec, d, power=p)
    if kind == "lowrank":
        frac, _, shape = arg.partition(":")
        if shape not in ("", "piano"):
            raise ParameterError(name, f"lowrank:F takes no shape or ':piano', got {spec!r}")
        f = parse_exact(frac, f"{name} rank fraction")
        if not (0 < f <= 1):
            raise ParameterError(name, f"lowrank fraction must lie in (0, 1], got {frac}")
        r = _round_half_up(f * d)
        if r == 0:
            raise ParameterError(name, f"{spec} at d={d} has rank round(F*d) = 0")
        if shape == "piano":  # r, r-1, ..., 1 on the subspace, normalised to trace d
            total = Fraction(r * (r + 1), 2)
            return Covariance(spec, d, diagonal=tuple(
                [Fraction(d * (r - j)) / total for j in range(r)] + [Fraction(0)] * (d - r)))
        return Covariance(spec, d, diagonal=tuple([Fraction(d, r)] * r + [Fraction(0)] * (d - r)))
    if kind == "spike":
        try:
            j = int(arg)
        except ValueError:
            raise ParameterError(name, f"spike index must be an integer, got {arg!r}") from None
        if not (1 <= j <= d):
            raise ParameterError(name, f"spike index {j} outside 1..{d}")
        return Covariance(spec, d, diagonal=tuple(Fraction(d) if i == j - 1 else Fraction(0)
                                                  for i in range(d)))
    if kind == "file" and arg:
        raw = False
        path = arg
        if path.endswith(":raw"):
            raw, path = True, path[: -len(":raw")]
        return _load_file(spec, path, d, name, raw)
    raise ParameterError(name, f"unknown covariance spec {spec!r} (identity, powerlaw:P, "
                               "lowrank:F, lowrank:F:piano, spike:J, piano, file:PATH)")


_RAW_MAX = 1e300


def covariance_from_array(array, d: int | None = None, name: str = "train",
                          raw: bool = False) -> Covariance:
    """A covariance given as a NumPy array: a symmetric positive-semidefinite ``d x d`` matrix
    or a 1-D array of its ``d`` eigenvalues (then diagonal in the coordinate basis), normalised
    to trace ``d`` as a SPEC is (``raw=True`` keeps it as given). ``d`` defaults to the array's
    size; a different ``d`` is refused. A matrix whose off-diagonal entries are all zero (and
    whose diagonal is non-negative) is the diagonal covariance of its diagonal, as if given as
    a 1-D array (its spectral pairs are then its entries: no eigendecomposition in any
    precision).

    Exactness: every entry (eigenvalue or matrix entry) stands for the exact rational of its
    binary value, ``Fraction(float(x))`` (integers exactly; float32 through its exact widening to
    float64), so the theory sees precisely the numbers of the array and the trace normalisation
    is exact. The exact entries (``diagonal``, ``matrix``, ``scale``) are built only when a
    solve at the working precision or in ball arithmetic reads them; the float64 entries are
    the same exact normalised values correctly rounded (:func:`_normalised_f64`), computed from
    the array directly. Prepared covariances are remembered by content (a hash of the array's
    bytes, dtype and shape, with ``d`` and ``raw``) within the process: the same array passed
    again -- or an equal one -- returns the same object, whose spectral pairs the solvers keep.

    Refused with a :class:`ParameterError` naming ``name``: a non-numeric, boolean or complex
    array, more than two dimensions, a non-square matrix, NaN or infinite entries, a
    non-symmetric matrix, a negative eigenvalue, an all-zero covariance."""
    if (type(array) is np.ndarray and array.dtype == np.float64 and array.flags.c_contiguous
            and (d is None or type(d) is int)):
        # the array passed last, as below (its checks passed for this d and raw then), first
        hit = _RECENT.get((id(array), array.shape, array.dtype.str,
                           array.shape[0] if d is None and array.ndim else d, bool(raw)))
        if hit is not None and hit[0].shape == array.shape and np.equal(
                array.view(np.uint64), hit[0]).all():
            return hit[1]
    import hashlib

    arr = np.asarray(array)
    if arr.dtype == bool or not np.issubdtype(arr.dtype, np.number):
        raise ParameterError(name, f"a covariance array must hold real numbers, got dtype "
                                   f"{arr.dtype}")
    if np.issubdtype(arr.dtype, np.complexfloating):
        raise ParameterError(name, "a covariance array must be real, got complex entries")
    if arr.ndim not in (1, 2) or arr.size == 0:
        raise ParameterError(name, f"a covariance array must be a d x d matrix or d "
                                   f"eigenvalues, got shape {arr.shape}")
    if arr.ndim == 2 and arr.shape[0] != arr.shape[1]:
        raise ParameterError(name, f"a covariance matrix must be square, got shape {arr.shape}")
    n = arr.shape[0]
    if d is None:
        d = n
    if not isinstance(d, int) or isinstance(d, bool) or d <= 0:
        raise ParameterError("d", f"must be a positive integer, got {d!r}")
    check_theory_d(d, "d")
    if n != d:
        raise ParameterError(name, f"the array has size {n}, expected d = {d}")
    contiguous = np.ascontiguousarray(arr)
    # the array passed last (the same object, compared bit for bit with a copy of its content
    # then: equal contents, the same covariance) without hashing its bytes again
    recent = (id(array), arr.shape, arr.dtype.str, d, bool(raw))
    hit = _RECENT.get(recent)
    if hit is not None and contiguous.dtype == np.float64 and np.array_equal(
            contiguous.view(np.uint64), hit[0]):
        return hit[1]
    content = hashlib.sha256(memoryview(contiguous).cast("B")).digest()
    key = (content, arr.dtype.str, arr.shape, d, bool(raw))
    hit = _PREPARED.get(key)
    if hit is not None:
        _remember_recent(recent, contiguous, hit)
        return hit
    if not np.all(np.isfinite(arr)):
        raise ParameterError(name, "the array has NaN or infinite entries")
    digest = (content.hex() if contiguous.dtype == np.float64 else hashlib.sha256(
        np.ascontiguousarray(arr, dtype=np.float64).tobytes()).hexdigest())
    spec = f"array:{'x'.join(map(str, arr.shape))}:{digest[:12]}" + (":raw" if raw else "")
    cov = _prepare_array(spec, contiguous, d, name, raw)
    if len(_PREPARED) >= _PREPARED_MAX:
        _PREPARED.pop(next(iter(_PREPARED)))
    _PREPARED[key] = cov
    _remember_recent(recent, contiguous, cov)
    return cov


_RECENT: dict = {}
"""Covariances of the float64 arrays passed last: ``(id, shape, dtype, d, raw) -> (a copy of
the array's bits, covariance)``; a hit needs the same bits (:func:`covariance_from_array`)."""


def _remember_recent(key, contiguous, cov):
    if contiguous.dtype != np.float64:
        return
    if len(_RECENT) >= 8:
        _RECENT.pop(next(iter(_RECENT)))
    _RECENT[key] = (contiguous.view(np.uint64).copy(), cov)


_PREPARED: dict = {}
"""Covariances prepared from arrays, by content (:func:`covariance_from_array`), oldest first."""
_PREPARED_MAX = 64


def _exact_entries(arr) -> list:
    """Rows of the exact rationals of the entries of ``arr`` (integers exactly)."""
    exact = (lambda v: Fraction(int(v))) if np.issubdtype(arr.dtype, np.integer) else \
        (lambda v: Fraction(float(v)))
    return [[exact(v) for v in row] for row in np.atleast_2d(arr)]


def _dyadic(values) -> tuple:
    """``(ints, e)`` with ``values[i] = ints[i] * 2**e`` exactly, for a finite float64 or integer
    array (``ints`` Python integers: sums and products of them are exact)."""
    v = np.asarray(values)
    if np.issubdtype(v.dtype, np.integer):
        return [int(x) for x in v.ravel()], 0
    v = v.astype(np.float64, copy=False).ravel()
    m, e = np.frexp(v)
    mant = (m * 2.0 ** 53).astype(np.int64)  # exact: a binary64 significand has 53 bits
    exp = e.astype(np.int64) - 53
    nonzero = mant != 0
    low = int(exp[nonzero].min()) if np.any(nonzero) else 0
    shifts = np.where(nonzero, exp - low, 0)
    return [int(a) << int(s) for a, s in zip(mant.tolist(), shifts.tolist())], low


def _normalised_f64(values, diag, d: int, raw: bool) -> np.ndarray:
    """``values`` (a float64 or integer array) times ``d / tr``, ``tr`` the exact sum of
    ``diag`` (the eigenvalues, or a matrix's diagonal), every entry the exact product correctly
    rounded to float64 -- the value ``float(Fraction(v) * d / tr)`` of the exact entries, by
    integer arithmetic (Python's ``int / int`` rounds correctly, as ``float(Fraction)`` does);
    ``raw``: the entries as float64."""
    if raw:
        return np.asarray(values, dtype=np.float64).copy()
    ints, e = _dyadic(values)
    dints, e_diag = _dyadic(diag)
    total = sum(dints)
    # v * d / tr = (a 2**e) d / (T 2**e_diag): align the binary exponents
    shift = e - e_diag
    if shift >= 0:
        num_scale, den = d << shift, total
    else:
        num_scale, den = d, total << -shift
    out = np.array([a * num_scale / den for a in ints], dtype=np.float64)
    return out.reshape(np.shape(values))


class ArrayCovariance(Covariance):
    """A :class:`Covariance` prepared from a NumPy array (:func:`covariance_from_array`): the
    float64 entries come from the array (exactly normalised, correctly rounded), the exact
    ``diagonal``, ``matrix`` and ``scale`` -- what the mpmath and ball-arithmetic solves read --
    are built from it on first access. Equal (and hashed) by content."""

    def __init__(self, spec: str, d: int, array, diagonal_only: bool, raw: bool):
        object.__setattr__(self, "spec", spec)
        object.__setattr__(self, "d", d)
        object.__setattr__(self, "power", None)
        array = np.array(array)  # its own copy: the caller may change theirs
        array.setflags(write=False)
        object.__setattr__(self, "array", array)
        object.__setattr__(self, "diagonal_only", diagonal_only)
        object.__setattr__(self, "raw", raw)

    @functools.cached_property
    def _key(self):
        return (self.spec, self.d, self.array.dtype.str, self.array.shape, self.raw,
                self.array.tobytes())

    def __eq__(self, other):
        if isinstance(other, ArrayCovariance):
            return self._key == other._key
        return NotImplemented

    def __hash__(self):
        return hash(self._key)

    def __repr__(self):
        return f"ArrayCovariance({self.spec!r}, d={self.d})"

    def _entries(self):
        """The array's entries that make the covariance: the eigenvalues (1-D), the diagonal of
        a diagonal matrix, or the full matrix."""
        if self.array.ndim == 1:
            return self.array
        return np.diagonal(self.array) if self.diagonal_only else self.array

    @property
    def is_diagonal(self) -> bool:
        return self.diagonal_only

    @functools.cached_property
    def _trace_entries(self):
        return self.array if self.array.ndim == 1 else np.diagonal(self.array)

    # the exact entries, on first use (as the exact path of earlier versions built them)
    @functools.cached_property
    def diagonal(self):
        if not self.diagonal_only:
            return None
        vals = _exact_entries(self._entries())[0]
        if self.raw:
            return tuple(vals)
        tot = sum(vals, Fraction(0))
        return tuple(v * self.d / tot for v in vals)

    @functools.cached_property
    def matrix(self):
        if self.diagonal_only:
            return None
        return tuple(tuple(r) for r in _exact_entries(self.array))

    @functools.cached_property
    def scale(self):
        if self.diagonal_only or self.raw:
            return None
        tr = sum((Fraction(v) for v in _exact_entries(self._trace_entries)[0]), Fraction(0))
        return Fraction(self.d) / tr

    # float64 entries from the array
    @functools.cached_property
    def _diag_f64(self) -> np.ndarray:
        out = _normalised_f64(self._trace_entries, self._trace_entries, self.d, self.raw)
        out.setflags(write=False)
        return out

    @functools.cached_property
    def _matrix_f64(self) -> np.ndarray:
        out = _normalised_f64(self.array, self._trace_entries, self.d, self.raw)
        out.setflags(write=False)
        return out

    def diag_f64(self) -> np.ndarray:
        return self._diag_f64.copy()

    def matrix_f64(self) -> np.ndarray:
        if self.diagonal_only:
            return np.diag(self._diag_f64)
        return self._matrix_f64.copy()

    def _rank_of(self) -> int:
        if self.diagonal_only:  # a normalised entry is 0 exactly where the array's is
            return int(np.count_nonzero(self._entries()))
        return super()._rank_of()


def _prepare_array(spec, arr, d, name, raw) -> Covariance:
    """The covariance of a finite array of size ``d``, checked as :func:`_covariance_of_entries`
    checks entries (the same tests on the same float64 numbers), without converting the entries
    to rationals; an integer array with entries beyond 2**53 (not exact in float64) takes that
    exact path."""
    if np.issubdtype(arr.dtype, np.integer) and arr.size and (
            int(np.abs(arr).max()) > 2 ** 53 or arr.dtype == np.uint64):
        return _covariance_of_entries(spec, _exact_entries(arr), arr.ndim, d, name, raw,
                                      "the array")
    path = "the array"
    if raw and np.any(np.abs(arr.astype(np.float64)) > _RAW_MAX):
        raise ParameterError(name, f"{path} has entries beyond {_RAW_MAX:g} in magnitude, outside "
                                   "the float64 range the :raw form computes in (drop :raw to "
                                   "normalise the trace to d)")
    if arr.ndim == 1:
        if np.any(arr < 0):
            raise ParameterError(name, f"{path}: eigenvalues must be >= 0 (not PSD)")
        if not np.any(arr != 0):
            raise ParameterError(name, f"{path}: covariance is zero")
        return ArrayCovariance(spec, d, arr, True, raw)
    f = arr.astype(np.float64)  # exact (float64, float32, integers below 2**53)
    big = float(np.abs(f).max())
    if big == 0:
        raise ParameterError(name, f"{path}: covariance is zero")
    diag = np.diagonal(f)
    if np.count_nonzero(f) == np.count_nonzero(diag) and np.all(diag >= 0):
        return ArrayCovariance(spec, d, arr, True, raw)  # diagonal: PSD, trace > 0
    m = f / big  # IEEE division: the correctly rounded quotient, as from the exact entries
    if not np.allclose(m, m.T, rtol=0, atol=1e-12 * max(1.0, np.abs(m).max())):
        raise ParameterError(name, f"{path}: matrix is not symmetric")
    ev = np.linalg.eigvalsh(m)
    if ev.min() < -1e-10 * max(1.0, abs(ev).max()):
        raise ParameterError(name, f"{path}: matrix is not positive semi-definite "
                                   f"(smallest eigenvalue {ev.min():.3g})")
    ints, _ = _dyadic(arr if np.issubdtype(arr.dtype, np.integer) else f)
    if sum(ints[i * d + i] for i in range(d)) <= 0:
        raise ParameterError(name, f"{path}: covariance has zero trace")
    return ArrayCovariance(spec, d, arr, False, raw)


_TEXT_BYTES_PER_ENTRY = 200
"""Most bytes a ``file:`` text covariance may spend per entry (a 60-digit fraction with its
separator is under 130), plus :data:`_FILE_SLACK` for comments and a ``.npy`` header."""
_FILE_SLACK = 1 << 20


def _check_file_size(spec, path, d, name) -> None:
    """Refuse, before reading, anything but a regular file (``/dev/zero``, a folder, a pipe)
    and a file larger than a ``d x d`` matrix can be: at most 16 bytes per entry in a ``.npy``
    (complex128, refused later with its own message) or :data:`_TEXT_BYTES_PER_ENTRY` in text,
    plus :data:`_FILE_SLACK`."""
    import stat

    try:
        st = os.stat(path)
    except OSError as exc:
        raise ParameterError(name, f"{spec}: cannot read {path}: {exc.strerror or exc}") \
            from None
    if not stat.S_ISREG(st.st_mode):
        raise ParameterError(name, f"{spec}: {path} is not a regular file")
    per_entry = 16 if path.endswith(".npy") else _TEXT_BYTES_PER_ENTRY
    most = per_entry * d * d + _FILE_SLACK
    if st.st_size > most:
        raise ParameterError(name, f"{spec}: {path} has {amount_text(st.st_size, 'B')}, more "
                                   f"than a {d}x{d} matrix needs (at most "
                                   f"{amount_text(most, 'B')})")


def _load_file(spec, path, d, name, raw) -> Covariance:
    if not os.path.exists(path):
        raise ParameterError(name, f"file not found: {path}")
    _check_file_size(spec, path, d, name)
    try:
        if path.endswith(".npy"):
            arr = np.load(path, allow_pickle=False)
            if np.issubdtype(arr.dtype, np.complexfloating):
                raise ParameterError(name, f"{path} holds complex numbers; a covariance's "
                                           "entries and eigenvalues are real")
            if not np.issubdtype(arr.dtype, np.number):
                raise ValueError("not numeric")
            entries = [[float(v) for v in np.atleast_1d(row)] for row in np.atleast_2d(arr)] \
                if arr.ndim == 2 else [[float(v) for v in np.atleast_1d(arr)]]
            ndim = arr.ndim
        else:
            with open(path) as fh:
                rows = [ln.replace(",", " ").split() for ln in fh
                        if ln.strip() and not ln.lstrip().startswith("#")]
            entries = [[parse_exact(tok, f"{name} entry") for tok in row] for row in rows]
            ndim = 1 if len(entries) == 1 or all(len(r) == 1 for r in entries) else 2
            if ndim == 1:
                entries = [[v for row in entries for v in row]]
    except ParameterError:
        raise
    except Exception as exc:  # unreadable file
        raise ParameterError(name, f"cannot read {path}: {exc}") from None
    return _covariance_of_entries(spec, entries, ndim, d, name, raw, path)


def _covariance_of_entries(spec, entries, ndim, d, name, raw, path) -> Covariance:
    """The covariance of ``entries`` (one row of eigenvalues when ``ndim == 1``, else the rows
    of a matrix; ``Fraction`` or float), checked: size ``d``, finite, symmetric, PSD, nonzero;
    ``path`` names the source in the messages. A matrix whose off-diagonal entries are all zero
    is the diagonal covariance of its diagonal (as in :func:`covariance_from_array`)."""
    if raw and any(abs(v) > _RAW_MAX for r in entries for v in r):
        raise ParameterError(name, f"{path} has entries beyond {_RAW_MAX:g} in magnitude, outside "
                                   "the float64 range the :raw form computes in (drop :raw to "
                                   "normalise the trace to d)")
    if ndim == 2 and len(entries) == d and all(len(r) == d for r in entries) and all(
            entries[i][j] == 0 for i in range(d) for j in range(d) if i != j):
        # a diagonal matrix is the diagonal covariance of its diagonal, as for an array
        # (covariance_from_array): a penalty acting coordinate-wise accepts it
        ndim, entries = 1, [[entries[i][i] for i in range(d)]]
    if ndim == 1:
        vals = entries[0]
        if len(vals) != d:
            raise ParameterError(name, f"{path} holds {len(vals)} eigenvalues, expected d = {d}")
        if any(not isinstance(v, Fraction) and not np.isfinite(v) for v in vals):
            raise ParameterError(name, f"{path} has non-finite entries")
        if any(v < 0 for v in vals):
            raise ParameterError(name, f"{path}: eigenvalues must be >= 0 (not PSD)")
        vals = [v if isinstance(v, Fraction) else Fraction(v) for v in vals]
        tot = sum(vals, Fraction(0))
        if tot == 0:
            raise ParameterError(name, f"{path}: covariance is zero")
        if not raw:
            vals = [v * d / tot for v in vals]
        return Covariance(spec, d, diagonal=tuple(vals))
    if len(entries) != d or any(len(r) != d for r in entries):
        raise ParameterError(name, f"{path} is not a {d}x{d} matrix "
                                   f"(got {len(entries)} rows); its size must equal --d")
    if any(not isinstance(v, Fraction) and not np.isfinite(v) for r in entries for v in r):
        raise ParameterError(name, f"{path} has non-finite entries")
    # the float64 checks run on the matrix divided by its largest entry, so that entries near
    # (or, read exactly from text, beyond) the float64 range neither overflow nor lose the test
    big = max(abs(Fraction(v)) for r in entries for v in r)
    if big == 0:
        raise ParameterError(name, f"{path}: covariance is zero")
    m = np.array([[float(Fraction(v) / big) for v in r] for r in entries])
    if not np.allclose(m, m.T, rtol=0, atol=1e-12 * max(1.0, np.abs(m).max())):
        raise ParameterError(name, f"{path}: matrix is not symmetric")
    ev = np.linalg.eigvalsh(m)
    if ev.min() < -1e-10 * max(1.0, abs(ev).max()):
        raise ParameterError(name, f"{path}: matrix is not positive semi-definite "
                                   f"(smallest eigenvalue {ev.min():.3g})")
    exact = all(isinstance(v, Fraction) for r in entries for v in r)
    tr = sum((entries[i][i] for i in range(d)), Fraction(0)) if exact \
        else Fraction(float(np.trace(m))) * big
    if tr <= 0:
        raise ParameterError(name, f"{path}: covariance has zero trace")
    scale = None if raw else Fraction(d) / tr
    return Covariance(spec, d, matrix=tuple(tuple(r) for r in entries), scale=scale)


# ---------------------------------------------------------------------------------------------
# Pairing a training and a test covariance: the data the alignment theory needs
# ---------------------------------------------------------------------------------------------


@dataclasses.dataclass
class SpectralPairs:
    """Eigenvalues ``lambda_i`` of ``C_train`` and the diagonal ``mu_i = u_i^T C_test u_i`` of
    ``C_test`` in ``C_train``'s eigenbasis, grouped into distinct pairs with weights
    ``w = multiplicity / d`` (so a spectral average is ``<phi> = sum_j w_j phi(lambda_j, mu_j)``).
    """

    lam: list
    mu: list
    weight: list
    commuting: bool

    def as_arrays(self):
        return (np.array([float(v) for v in self.lam]), np.array([float(v) for v in self.mu]),
                np.array([float(v) for v in self.weight]))


def _exact_diagonal(C: Covariance):
    """The diagonal of ``C`` as exact Fractions, or ``None`` if it is not rational."""
    if C.diagonal is not None:
        return list(C.diagonal)
    if C.matrix is not None and all(isinstance(C.matrix[i][i], Fraction) for i in range(C.d)) \
            and (C.scale is None or isinstance(C.scale, Fraction)):
        return [C.matrix[i][i] * (C.scale if C.scale is not None else 1) for i in range(C.d)]
    return None


def spectral_pairs_mp(train: Covariance, test: Covariance) -> SpectralPairs:
    """:class:`SpectralPairs` at the working precision (mpmath).

    Commuting case (``C_train`` diagonal): ``mu_i`` is the diagonal of ``C_test``. If ``C_train`` is
    a full matrix it is diagonalised at the working precision (``mpmath.eigsy``) and
    ``mu_i = u_i^T C_test u_i``. Exactly equal pairs are merged.
    """
    d = train.d
    commuting = train.is_diagonal and test.is_diagonal
    if train.is_diagonal:
        tdiag = _exact_diagonal(test)
        if train.diagonal is not None and tdiag is not None:
            counts: dict = {}
            for pair in zip(train.diagonal, tdiag):
                counts[pair] = counts.get(pair, 0) + 1
            return SpectralPairs([to_mpf(a) for a, _ in counts], [to_mpf(b) for _, b in counts],
                                 [mpmath.mpf(c) / d for c in counts.values()], commuting)
        lam, mu = train.diag_mp(), test.diag_mp()
    else:
        evals, U = mpmath.eigsy(train.matrix_mp())
        Ct = test.matrix_mp()
        lam = [max(evals[i], mpmath.mpf(0)) for i in range(d)]
        mu = []
        for i in range(d):
            u = U[:, i]
            mu.append(mpmath.fsum(u[a] * Ct[a, b] * u[b] for a in range(d) for b in range(d))
                      if not test.is_diagonal else
                      mpmath.fsum(u[a] ** 2 * Ct[a, a] for a in range(d)))
    w = mpmath.mpf(1) / d
    return SpectralPairs(lam, mu, [w] * d, commuting)


def spectral_pairs_f64(train: Covariance, test: Covariance) -> SpectralPairs:
    """Float64 :class:`SpectralPairs` (NumPy ``eigh`` for a full ``C_train``)."""
    d = train.d
    if train.is_diagonal:
        lam = train.diag_f64()
        mu = test.diag_f64()
    else:
        evals, U = np.linalg.eigh(train.matrix_f64())
        lam = np.clip(evals, 0, None)
        mu = np.einsum("ai,ab,bi->i", U, test.matrix_f64(), U)
    return SpectralPairs(list(lam), list(mu), [1.0 / d] * d, train.is_diagonal and test.is_diagonal)


def _fraction_ball(v):
    """An exact rational (or a binary float, exactly) as a ball."""
    import flint

    if isinstance(v, Fraction):
        return flint.arb(v.numerator) / v.denominator
    if isinstance(v, int):
        return flint.arb(v)
    if isinstance(v, float):
        if not np.isfinite(v):
            raise NotEnclosable("a covariance entry is not finite")
        num, den = v.as_integer_ratio()
        return flint.arb(num) / den
    raise NotEnclosable(f"a covariance entry of type {type(v).__name__} has no exact value")


_DIAGONAL_BALLS: dict = {}


def diagonal_balls(C: Covariance) -> list:
    """Balls containing the exact diagonal entries of ``C`` (normalised as in :meth:`diag_mp`) at
    the current ball precision; a power law is evaluated in ball arithmetic. Remembered for the
    last few covariances (immutable, by identity) at each ball precision; the list returned is
    a copy."""
    import flint

    key = (id(C), flint.ctx.prec)
    hit = _DIAGONAL_BALLS.get(key)
    if hit is None or hit[0] is not C:
        if len(_DIAGONAL_BALLS) > 32:
            _DIAGONAL_BALLS.clear()
        hit = _DIAGONAL_BALLS[key] = (C, _diagonal_balls(C))
    return list(hit[1])


def _diagonal_balls(C: Covariance) -> list:
    import flint

    if C.power is not None:
        p = _fraction_ball(C.power)
        raw = [flint.arb(j + 1) ** (-p) for j in range(C.d)]
        total = sum(raw[1:], raw[0])
        return [v * C.d / total for v in raw]
    if C.diagonal is not None:
        return [_fraction_ball(v) for v in C.diagonal]
    scale = _fraction_ball(C.scale) if C.scale is not None else None
    out = [_fraction_ball(C.matrix[i][i]) for i in range(C.d)]
    return [v * scale for v in out] if scale is not None else out


def matrix_entry_ball(C: Covariance, i: int, j: int):
    """A ball containing the exact entry ``(i, j)`` of a full covariance matrix ``C``."""
    v = _fraction_ball(C.matrix[i][j])
    return v * _fraction_ball(C.scale) if C.scale is not None else v


_BALL_PAIRS: dict = {}


def spectral_pairs_ball(train: Covariance, test: Covariance) -> SpectralPairs:
    """:func:`_spectral_pairs_ball`, remembered for the last few (immutable) covariance pairs at
    each ball precision (a solve and its verifying re-solve ask for them several times)."""
    import flint

    key = (id(train), id(test), flint.ctx.prec)
    hit = _BALL_PAIRS.get(key)
    if hit is not None and hit[0] is train and hit[1] is test:
        return hit[2]
    pairs = _spectral_pairs_ball(train, test)
    if len(_BALL_PAIRS) > 16:
        _BALL_PAIRS.clear()
    _BALL_PAIRS[key] = (train, test, pairs)
    return pairs


def _spectral_pairs_ball(train: Covariance, test: Covariance) -> SpectralPairs:
    """:class:`SpectralPairs` as balls (python-flint ``arb``) that contain the exact pairs, for a
    diagonal ``C_train``: its eigenbasis is then the coordinate basis, so ``lambda_i`` and
    ``mu_i`` are diagonal entries, enclosed exactly (rational entries) or by ball evaluation (a
    power law). Exactly equal rational pairs are merged with their multiplicity. A full
    ``C_train`` raises :class:`~replica.symbolic.balls.NotEnclosable`: its numerical
    eigendecomposition is not enclosed."""
    import flint

    d = train.d
    if not train.is_diagonal:
        raise NotEnclosable("C_train is a full matrix: its numerically computed eigenvectors "
                            "are not enclosed")
    tdiag = _exact_diagonal(test)
    if train.diagonal is not None and tdiag is not None:
        counts: dict = {}
        for pair in zip(train.diagonal, tdiag):
            counts[pair] = counts.get(pair, 0) + 1
        return SpectralPairs([_fraction_ball(a) for a, _ in counts],
                             [_fraction_ball(b) for _, b in counts],
                             [flint.arb(c) / d for c in counts.values()],
                             train.is_diagonal and test.is_diagonal)
    lam, mu = diagonal_balls(train), diagonal_balls(test)
    w = flint.arb(1) / d
    return SpectralPairs(lam, mu, [w] * d, test.is_diagonal)
