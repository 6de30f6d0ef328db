r"""Exact ridge regression for linear attention on Kronecker-structured features.

The model is :math:`\hat y = x_q^\top\Gamma h = \langle\Gamma, x_qh^\top\rangle` with
:math:`\Gamma\in\mathbb R^{d\times p}` (:math:`p = d+1` with the :math:`y^2` column of papers A/B,
:math:`p = d` in the low-rank paper). Its feature vector is the Kronecker product
:math:`\phi = x_q\otimes h\in\mathbb R^{P}`, :math:`P = dp`, and
:math:`\hat y = \phi^\top\operatorname{vec}\Gamma` with the row-major ``vec`` of NumPy
(:math:`\operatorname{vec}\Gamma_{ip+j} = \Gamma_{ij}`). For contexts :math:`\mu = 1..n` and a
regulariser :math:`c\ge0`, the ridge estimator solves

.. math:: \Big(\sum_\mu\phi_\mu\phi_\mu^\top + cI_P\Big)\operatorname{vec}\Gamma^*
          = \sum_\mu\phi_\mu y_\mu
          \quad\Longleftrightarrow\quad
          \Gamma^* = \sum_\mu a_\mu\,x_\mu h_\mu^\top,\quad (K + cI_n)a = y,\quad
          K_{\mu\nu} = (x_\mu\cdot x_\nu)(h_\mu\cdot h_\nu).

Paper A/B's objective :math:`\sum_\mu(\cdot)^2 + \frac nd\lambda\|\Gamma\|_F^2` has
:math:`c = n\lambda/d`; the low-rank paper's :math:`\frac12\sum_\mu(\cdot)^2 + \frac{\lambda M_0}2
\|\Gamma\|_F^2` has :math:`c = \lambda M_0`. :math:`c = 0` means the ridgeless limit
:math:`c\to0^+`: the least-squares solution (``n >= P``) or the minimum-norm interpolator
(``n < P``), i.e. the pseudo-inverse solution.

* :func:`ridge_primal` accumulates the :math:`P\times P` Gram matrix in chunks: for a chunk of
  contexts it forms the Khatri--Rao (row-wise Kronecker) product of :math:`X_q` (``nc x d``) and
  :math:`H` (``nc x p``), ``nc x P``, and adds its Gram with one BLAS ``syrk``; the ``n x P``
  design is never stored. Cost :math:`nP^2 + P^3/3` flops, memory :math:`8P^2` bytes (the
  Cholesky factorisation is in place) plus one chunk.
* :func:`ridge_dual` solves the ``n x n`` kernel system, the kernel being a Hadamard product of
  two Gram matrices. Cost :math:`n^2(d+p) + n^3/3`, memory :math:`8n^2` bytes.
* :func:`ridge_cg` solves the primal system iteratively, never forming it (module section
  below). Cost :math:`4ndp` flops per iteration, memory a few ``n x p`` arrays.
* :func:`ridge_structured` picks the dual when ``n < P`` (cheaper, and for ``c = 0`` the only
  well-posed form), and for ``n >= P`` conjugate gradients when the system is large and well
  conditioned (:func:`choose_method`), else the direct primal.

**Conjugate gradients on the primal system.** The Gram matrix is never formed: acting on
:math:`\operatorname{vec}G` it is

.. math:: \Big(\sum_\mu (x_\mu x_\mu^\top)\otimes(h_\mu h_\mu^\top) + cI\Big)\operatorname{vec}G
          = \operatorname{vec}\Big(\sum_\mu (x_\mu^\top G h_\mu)\,x_\mu h_\mu^\top + cG\Big)
          = \operatorname{vec}\big(X^\top\operatorname{diag}(r)H + cG\big),\qquad
          r_\mu = (XG)_{\mu\cdot}\cdot H_{\mu\cdot},

two matrix products of :math:`2ndp` flops each instead of :math:`nP^2` for the Gram. The
preconditioner is the Kronecker product of the two sample second-moment matrices,
:math:`M = n\,S_x\otimes S_h + cI`, :math:`S_x = X^\top X/n`, :math:`S_h = H^\top H/n`. It is the
expectation of the Gram whenever the query :math:`x_\mu` is independent of the context statistics
:math:`h_\mu` (true of every model here: the query is drawn afresh), so the preconditioned
operator is a sample average of a matrix whose mean is the identity (its spread is set by
:math:`P/n = 1/\tau`, like a Wishart matrix). With :math:`S_x = U\operatorname{diag}(a)U^\top`,
:math:`S_h = V\operatorname{diag}(b)V^\top`,

.. math:: M^{-1}\operatorname{vec}R = \operatorname{vec}\Big(U\big[(U^\top RV)_{ij}/(na_ib_j + c)\big]
          V^\top\Big),

:math:`O(d^2p + dp^2)` per application. Iteration stops when the true residual satisfies
:math:`\|b - A\operatorname{vec}G\|_2\le\mathrm{rtol}\,\|b\|_2` (``rtol`` = :data:`CG_RTOL` =
1e-10 by default; the recursively updated residual is confirmed by one explicit matvec), after at
most ``maxiter`` iterations; otherwise :class:`~replica.errors.ConvergenceError`. The relative
error of :math:`\Gamma` is then at most :math:`\kappa(A)\,\mathrm{rtol}`; the tests and the benchmark
measure it against the direct solve. The arrays may live in NumPy or PyTorch
(:mod:`replica.simulate.backend`).

* :func:`ridge_naive` is the dense reference: it builds the full ``n x P`` design and calls
  LAPACK least squares on the augmented system :math:`[\Phi; \sqrt c I]`. For tests and
  benchmarks only.
"""

from __future__ import annotations

import contextlib
import dataclasses
import time

import numpy as np
import scipy.linalg
from scipy.linalg.blas import dsyrk

#: Default memory for one chunk of Khatri--Rao rows in the primal solver.
CHUNK_BYTES = 64 * 2**20

#: Systems smaller than this (P for the primal, n for the dual) run with one BLAS thread.
SINGLE_THREAD_BELOW = 1500

_CONTROLLER: list = []


def _controller():
    """A ``threadpoolctl.ThreadpoolController`` (created once, after NumPy/SciPy are loaded),
    or ``None`` when threadpoolctl is not installed."""
    if not _CONTROLLER:
        try:
            from threadpoolctl import ThreadpoolController

            _CONTROLLER.append(ThreadpoolController())
        except ImportError:
            _CONTROLLER.append(None)
    return _CONTROLLER[0]


@contextlib.contextmanager
def blas_threads_for(size: int):
    """Run small problems (``size < SINGLE_THREAD_BELOW``) with one BLAS thread: for matrices of
    a few hundred rows the threads' synchronisation costs more than it gains, and on a busy
    machine multi-threaded OpenBLAS on small matrices is up to 20 times slower (measured).
    Needs the optional ``threadpoolctl``; without it the BLAS threading is left alone."""
    ctl = _controller() if size < SINGLE_THREAD_BELOW else None
    if ctl is None:
        yield
        return
    with ctl.limit(limits=1, user_api="blas"):
        yield


@dataclasses.dataclass
class RidgeInfo:
    """How a ridge solve was done: ``method`` (``primal``, ``dual``, ``naive``), ``factor``
    (``cholesky`` or ``eigh-pinv`` when the system was numerically singular; ``pcg`` for
    conjugate gradients, with ``iterations`` and the final relative ``residual``), sizes and
    time."""

    method: str
    n: int
    P: int
    reg: float
    factor: str = "cholesky"
    seconds: float = 0.0
    iterations: int = 0
    residual: float = 0.0
    objective: float | None = None
    """The objective at the solution, :func:`ridge_objective` (set by the experiments)."""


def ridge_objective(X: np.ndarray, H: np.ndarray, y: np.ndarray, gamma: np.ndarray,
                    reg: float) -> float:
    r"""The ridge objective :math:`\frac12\sum_\mu(y_\mu - x_\mu^\top\Gamma h_\mu)^2 +
    \frac c2\|\Gamma\|_F^2` at ``gamma`` (``reg`` is :math:`c`), whose minimiser every solver of
    this module returns. Paper A/B's objective :math:`\sum_\mu(\cdot)^2 + c\|\Gamma\|_F^2` is
    twice it; the low-rank paper's (M6) (:math:`c = \lambda M_0`) is it."""
    r = y - np.einsum("ij,ij->i", X @ gamma, H)
    return 0.5 * float(r @ r) + 0.5 * float(reg) * float(np.sum(gamma * gamma))


def khatri_rao_rows(X: np.ndarray, H: np.ndarray) -> np.ndarray:
    """Row-wise Kronecker product: row ``mu`` is ``kron(X[mu], H[mu])`` (shape ``n x d p``)."""
    n, d = X.shape
    return (X[:, :, None] * H[:, None, :]).reshape(n, d * H.shape[1])


def _spd_solve(build, b: np.ndarray, upper_only: bool):
    """Solve ``A x = b`` for the symmetric PSD matrix ``A = build()`` (only its upper triangle
    is valid if ``upper_only``), factorised in place by Cholesky. If that fails (``A`` singular to
    working precision: a ridgeless system without full rank), ``A`` is built again and the
    pseudo-inverse solution is returned, by a symmetric eigendecomposition with the cut-off
    ``eps * P * max|ev|``. ``build`` should return a Fortran-ordered array, so that nothing is
    copied: the peak memory is one matrix."""
    A = build()
    try:
        cf = scipy.linalg.cho_factor(A, lower=False, overwrite_a=True, check_finite=False)
        x = scipy.linalg.cho_solve(cf, b, check_finite=False)
        if np.all(np.isfinite(x)):
            return x, "cholesky"
    except np.linalg.LinAlgError:
        pass
    del A
    A = build()
    S = np.triu(A) + np.triu(A, 1).T if upper_only else (A + A.T) / 2
    del A
    ev, vec = np.linalg.eigh(S)
    cut = np.finfo(float).eps * S.shape[0] * max(np.abs(ev).max(), 1e-300)
    inv = np.where(ev > cut, 1.0 / np.where(ev > cut, ev, 1.0), 0.0)
    return vec @ (inv * (vec.T @ b)), "eigh-pinv"


def ridge_primal(X: np.ndarray, H: np.ndarray, y: np.ndarray, reg: float,
                 chunk_bytes: int = CHUNK_BYTES):
    """Primal ridge by chunked Khatri--Rao Gram accumulation; returns ``(Gamma, info)``.
    Memory: the ``P x P`` Gram (factorised in place) and one chunk of ``chunk_bytes``."""
    t0 = time.perf_counter()
    n, d = X.shape
    p = H.shape[1]
    P = d * p
    nc = max(1, int(chunk_bytes // (8 * P)))
    rhs = np.zeros(P)  # filled during the first build (inside _spd_solve, before it is used)
    first = [True]

    def build():
        G = np.zeros((P, P), order="F")
        for a in range(0, n, nc):
            b = min(n, a + nc)
            KR = khatri_rao_rows(X[a:b], H[a:b])  # C order: KR.T is Fortran-contiguous
            G = dsyrk(1.0, KR.T, beta=1.0, c=G, trans=0, lower=0, overwrite_c=1)
            if first[0]:
                rhs[:] += KR.T @ y[a:b]
        first[0] = False
        G[np.diag_indices(P)] += reg
        return G

    g, factor = _spd_solve(build, rhs, upper_only=True)
    return g.reshape(d, p), RidgeInfo("primal", n, P, float(reg), factor,
                                      time.perf_counter() - t0)


def ridge_dual(X: np.ndarray, H: np.ndarray, y: np.ndarray, reg: float,
               block_rows: int = 2048):
    """Dual (kernel) ridge: ``K = (X X^T) * (H H^T)``, the Hadamard product formed in row blocks
    so that the peak memory is one ``n x n`` matrix; returns ``(Gamma, info)``."""
    t0 = time.perf_counter()
    n, d = X.shape

    def build():
        K = X @ X.T
        for a in range(0, n, block_rows):
            K[a:a + block_rows] *= H[a:a + block_rows] @ H.T
        K[np.diag_indices(n)] += reg
        return K.T  # symmetric: the transpose is the same matrix, Fortran-ordered

    a, factor = _spd_solve(build, y, upper_only=False)
    gamma = X.T @ (a[:, None] * H)
    return gamma, RidgeInfo("dual", n, d * H.shape[1], float(reg), factor,
                            time.perf_counter() - t0)


def ridge_naive(X: np.ndarray, H: np.ndarray, y: np.ndarray, reg: float):
    """Dense reference: full ``n x P`` design, LAPACK least squares (``gelsd``) on
    ``[Phi; sqrt(reg) I] x = [y; 0]`` (minimum-norm solution when ``reg = 0``)."""
    t0 = time.perf_counter()
    n, d = X.shape
    p = H.shape[1]
    Phi = khatri_rao_rows(X, H)
    if reg > 0:
        Phi = np.vstack([Phi, np.sqrt(reg) * np.eye(d * p)])
        y = np.concatenate([y, np.zeros(d * p)])
    g = scipy.linalg.lstsq(Phi, y, lapack_driver="gelsd", check_finite=False)[0]
    return g.reshape(d, p), RidgeInfo("naive", n, d * p, float(reg), "gelsd",
                                      time.perf_counter() - t0)


def gram_matvec(xp, X, H, G, reg: float):
    r"""The primal Gram operator on a ``d x p`` matrix ``G``: :math:`X^\top\operatorname{diag}(r)H
    + cG` with :math:`r_\mu = (XG)_{\mu\cdot}\cdot H_{\mu\cdot}` (module docstring)."""
    r = xp.row_dots(X @ G, H)
    return X.T @ (r[:, None] * H) + reg * G


class KroneckerPreconditioner:
    r"""The inverse of :math:`M = n\,S_x\otimes S_h + cI` through the eigendecompositions of the
    two second-moment matrices (module docstring)."""

    def __init__(self, xp, X, H, reg: float):
        n = X.shape[0]
        a, self.U = xp.eigh(X.T @ X)
        b, self.V = xp.eigh(H.T @ H)
        # n S_x (x) S_h = (X^T X) (x) (H^T H) / n; negative round-off eigenvalues clipped
        denom = (a[:, None] * b[None, :]) / n + reg
        cut = np.finfo(float).eps * max(float(denom.max()), 1e-300)
        self.scale = 1.0 / (denom * (denom > cut) + cut * (denom <= cut))

    def __call__(self, R):
        return self.U @ (((self.U.T @ R) @ self.V) * self.scale) @ self.V.T


#: Default stopping tolerance of :func:`ridge_cg` on the relative residual ``|b - A g| / |b|``.
CG_RTOL = 1e-10

#: Default iteration cap of :func:`ridge_cg`.
CG_MAXITER = 500


def ridge_cg(X: np.ndarray, H: np.ndarray, y: np.ndarray, reg: float, rtol: float = CG_RTOL,
             maxiter: int = CG_MAXITER, backend: str = "numpy", matvec=None,
             one_blas_thread: bool = True):
    """Primal ridge by preconditioned conjugate gradients (module docstring); returns
    ``(Gamma, info)`` with ``info.iterations`` and ``info.residual`` (the final relative
    residual, recomputed explicitly). ``backend`` is an array module of
    :mod:`replica.simulate.backend`; ``matvec(xp, X, H, G, reg)`` replaces the Gram operator
    (for tests). Raises :class:`~replica.errors.ConvergenceError` after ``maxiter``
    iterations.

    ``one_blas_thread`` (default) runs NumPy's BLAS with one thread (needs threadpoolctl): the
    products have the inner dimension ``d`` only, and on a busy 2-core machine two OpenBLAS
    threads made the solve 4 to 10 times slower (measured at d = 64 and 80); parallelism pays
    across seeds instead (``replica sweep --workers``)."""
    ctl = _controller() if one_blas_thread and backend == "numpy" else None
    if ctl is None:
        return _ridge_cg(X, H, y, reg, rtol, maxiter, backend, matvec)
    with ctl.limit(limits=1, user_api="blas"):
        return _ridge_cg(X, H, y, reg, rtol, maxiter, backend, matvec)


def _ridge_cg(X, H, y, reg, rtol, maxiter, backend, matvec):
    from ..errors import ConvergenceError
    from .backend import array_module

    t0 = time.perf_counter()
    xp = array_module(backend)
    apply = matvec or gram_matvec
    n, d = X.shape
    p = H.shape[1]
    Xa, Ha = xp.asarray(X), xp.asarray(H)
    B = Xa.T @ (xp.asarray(y)[:, None] * Ha)
    b_norm = xp.inner(B, B) ** 0.5
    if b_norm == 0.0:
        return np.zeros((d, p)), RidgeInfo("cg", n, d * p, float(reg), "pcg",
                                           time.perf_counter() - t0)
    precondition = KroneckerPreconditioner(xp, Xa, Ha, float(reg))
    G = xp.zeros_like(B)
    R = B.clone() if hasattr(B, "clone") else B.copy()
    Z = precondition(R)
    D = Z
    rz = xp.inner(R, Z)
    iterations, residual = 0, 1.0
    while iterations < maxiter:
        AD = apply(xp, Xa, Ha, D, float(reg))
        step = rz / xp.inner(D, AD)
        G = G + step * D
        R = R - step * AD
        iterations += 1
        if xp.inner(R, R) ** 0.5 <= rtol * b_norm:
            # confirm with the true residual (the recursion drifts by rounding)
            R = B - apply(xp, Xa, Ha, G, float(reg))
            residual = xp.inner(R, R) ** 0.5 / b_norm
            if residual <= rtol:
                break
        Z = precondition(R)
        rz_new = xp.inner(R, Z)
        D = Z + (rz_new / rz) * D
        rz = rz_new
    else:
        R = B - apply(xp, Xa, Ha, G, float(reg))
        residual = xp.inner(R, R) ** 0.5 / b_norm
        if residual > rtol:
            raise ConvergenceError(
                f"conjugate gradients for the ridge solve (P = {d * p}) stopped at relative "
                f"residual {residual:.1e} > {rtol:.0e} after {maxiter} iterations",
                tried="--solver direct solves it by Cholesky", status="max-iterations")
    return xp.to_numpy(G), RidgeInfo("cg", n, d * p, float(reg), "pcg",
                                     time.perf_counter() - t0, iterations, residual)


#: ``auto`` uses conjugate gradients only from this many primal parameters on (below, the direct
#: Cholesky solve is as fast: d = 32, P = 1056, is about the break-even point).
CG_MIN_P = 1000

#: ``auto`` uses conjugate gradients only when ``n >= CG_MIN_RATIO * P``: closer to the
#: interpolation threshold ``n = P`` the Gram matrix is ill conditioned and CG needs many more
#: iterations (its convergence rate is set by ``P / n``).
CG_MIN_RATIO = 2


def choose_method(n: int, P: int) -> str:
    """The form ``auto`` takes for ``n`` contexts and ``P`` parameters: ``dual`` when ``n < P``,
    ``cg`` when ``P >= CG_MIN_P`` and ``n >= CG_MIN_RATIO * P``, else ``primal`` (direct)."""
    if n < P:
        return "dual"
    if P >= CG_MIN_P and n >= CG_MIN_RATIO * P:
        return "cg"
    return "primal"


def ridge_structured(X, H, y, reg, method: str = "auto", chunk_bytes: int = CHUNK_BYTES,
                     backend: str = "numpy"):
    """Ridge estimator by the form ``method`` names: ``auto`` (:func:`choose_method`),
    ``direct`` (the direct structured form: dual iff ``n < P``, else primal Cholesky),
    ``cg``, ``primal``, ``dual`` or ``naive``; returns ``(Gamma, info)``. ``backend`` (NumPy or
    PyTorch arrays) applies to ``cg`` only. When ``auto`` chose ``cg`` and it does not converge
    within :data:`CG_MAXITER` iterations, the direct primal solve is done instead (its
    ``info.factor`` says so); an explicit ``cg`` raises
    :class:`~replica.errors.ConvergenceError`."""
    from ..errors import ConvergenceError

    n = X.shape[0]
    P = X.shape[1] * H.shape[1]
    chosen = method == "auto"
    if method == "auto":
        method = choose_method(n, P)
    elif method == "direct":
        method = "dual" if n < P else "primal"
    if method == "cg":
        try:
            return ridge_cg(X, H, y, reg, maxiter=CG_MAXITER, backend=backend)
        except ConvergenceError:
            if not chosen:
                raise
            gamma, info = ridge_primal(X, H, y, reg, chunk_bytes)
            info.factor += " (cg did not converge)"
            return gamma, info
    if method == "primal":
        return ridge_primal(X, H, y, reg, chunk_bytes)
    if method == "dual":
        return ridge_dual(X, H, y, reg)
    if method == "naive":
        return ridge_naive(X, H, y, reg)
    raise ValueError(f"unknown ridge method {method!r}")
