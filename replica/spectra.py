"""Covariance models for task vectors, and closed-form Stieltjes transforms.

A covariance of size ``d`` is given by a SPEC string (``DESIGN.md``):

==================  ==========================================================================
``identity``        all eigenvalues 1
``powerlaw:P``      eigenvalues proportional to ``(j+1)**-P``, ``j = 0..d-1`` (decreasing)
``lowrank:F``       the first ``r = round(F d)`` eigenvalues equal to ``d/r``, the rest 0
``spike:J``         ``d e_J e_J^T`` (``J`` is 1-based; ``spike:1`` is the top direction)
``piano``           eigenvalues proportional to ``d, d-1, ..., 1``
``file:PATH``       a ``.npy``/``.txt`` file: ``d`` eigenvalues, or a ``d x d`` symmetric PSD matrix
``file:PATH:raw``   the same, kept as given (not normalised)
==================  ==========================================================================

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
import os
from fractions import Fraction

import mpmath
import numpy as np
import sympy

from .errors import ParameterError
from .params import parse_exact, to_mpf

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
    """SymPy expression of ``dM_kappa/dz`` in the closed form of the spec (§3.1):
    ``-M^2/2 [1 + (z + c + c/kappa)/sqrt((z + c - c/kappa)^2 + 4 c z/kappa)]``."""
    m = marchenko_pastur_expr(z, kappa, c)
    b = z + c - c / kappa
    return -m**2 / 2 * (1 + (z + c + c / kappa) / sympy.sqrt(b**2 + 4 * c * z / kappa))


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
        """Diagonal entries as ``mpf`` at the working precision (normalised as the spec says)."""
        if self.power is not None:
            raw = [mpmath.mpf(j + 1) ** (-to_mpf(self.power)) for j in range(self.d)]
            s = self.d / mpmath.fsum(raw)
            return [v * s for v in raw]
        if self.diagonal is not None:
            return [to_mpf(v) for v in self.diagonal]
        return [self._mat_entry_mp(i, i) for i in range(self.d)]

    def diag_f64(self) -> np.ndarray:
        if self.power is not None:
            raw = (np.arange(self.d) + 1.0) ** (-float(self.power))
            return raw * (self.d / raw.sum())
        if self.diagonal is not None:
            return np.array([float(v) for v in self.diagonal])
        return np.diag(self.matrix_f64()).copy()

    def _mat_entry_mp(self, i, j):
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
                m[i, j] = self._mat_entry_mp(i, j)
        return m

    def matrix_f64(self) -> np.ndarray:
        if self.matrix is None:
            return np.diag(self.diag_f64())
        m = np.array([[float(v) for v in row] for row in self.matrix])
        return m * (float(self.scale) if self.scale is not None else 1.0)

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
        if self.diagonal is not None:
            return sum(1 for v in self.diagonal if v != 0)
        if self.power is not None:
            return self.d
        ev = np.linalg.eigvalsh(self.matrix_f64())
        return int(np.sum(ev > 1e-12 * max(ev.max(), 1e-300)))


def _round_half_up(x: Fraction) -> int:
    return int((x + Fraction(1, 2)).__floor__())


def parse_spec(spec: str, d: int, name: str = "--train") -> Covariance:
    """Parse a SPEC string for a ``d x d`` covariance; raise :class:`ParameterError` naming
    ``name`` on any problem (unknown kind, bad number, rank 0, wrong size, not PSD)."""
    if not isinstance(d, int) or d <= 0:
        raise ParameterError("--d", f"must be a positive integer, got {d!r}")
    spec = str(spec).strip()
    kind, _, arg = spec.partition(":")
    kind = kind.lower()
    if kind == "identity" and not arg:
        return Covariance(spec, d, diagonal=tuple([Fraction(1)] * d))
    if kind == "piano" and not arg:
        total = Fraction(d * (d + 1), 2)
        return Covariance(spec, d, diagonal=tuple(Fraction(d * (d - j)) / total for j in range(d)))
    if kind == "powerlaw":
        p = parse_exact(arg, f"{name} powerlaw exponent")
        if p < 0:
            raise ParameterError(name, f"powerlaw exponent must be >= 0, got {arg}")
        if p == 0:
            return Covariance(spec, d, diagonal=tuple([Fraction(1)] * d))
        return Covariance(spec, d, power=p)
    if kind == "lowrank":
        f = parse_exact(arg, f"{name} rank fraction")
        if not (0 < f <= 1):
            raise ParameterError(name, f"lowrank fraction must lie in (0, 1], got {arg}")
        r = _round_half_up(f * d)
        if r == 0:
            raise ParameterError(name, f"lowrank:{arg} at d={d} has rank round(F*d) = 0")
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
                               "lowrank:F, spike:J, piano, file:PATH)")


def _load_file(spec, path, d, name, raw) -> Covariance:
    if not os.path.exists(path):
        raise ParameterError(name, f"file not found: {path}")
    try:
        if path.endswith(".npy"):
            arr = np.load(path, allow_pickle=False)
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
    if ndim == 1:
        vals = entries[0]
        if len(vals) != d:
            raise ParameterError(name, f"{path} holds {len(vals)} eigenvalues, expected d = {d}")
        if any(not np.isfinite(float(v)) for v in vals):
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
    m = np.array([[float(v) for v in r] for r in entries])
    if not np.all(np.isfinite(m)):
        raise ParameterError(name, f"{path} has non-finite entries")
    if not np.allclose(m, m.T, rtol=0, atol=1e-12 * max(1.0, np.abs(m).max())):
        raise ParameterError(name, f"{path}: matrix is not symmetric")
    ev = np.linalg.eigvalsh(m)
    if ev.min() < -1e-10 * max(1.0, abs(ev).max()):
        raise ParameterError(name, f"{path}: matrix is not positive semi-definite "
                                   f"(smallest eigenvalue {ev.min():.3g})")
    exact = all(isinstance(v, Fraction) for r in entries for v in r)
    tr = sum((entries[i][i] for i in range(d)), Fraction(0)) if exact \
        else Fraction(float(np.trace(m)))
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
