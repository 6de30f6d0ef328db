r"""Foundations shared by the built-in appendices: why the replica-symmetric theory is exact,
the order of the limits and what :math:`\lambda = 0` means (the referee's questions of issue 28).

* Convexity: the pretraining objective is a quadratic form in the parameters whose Hessian is
  the design Gram matrix plus a multiple of :math:`\lambda I`, positive definite for
  :math:`\lambda > 0`. The minimiser is unique for every sample of the data, the zero-temperature
  Gibbs measure is a point mass, two replicas have the same overlap as one replica with itself,
  and no replica-symmetry breaking can occur. Checked: the Hessian symbolically on explicit
  design matrices; two minimisations from different random starts on a sampled rank-deficient
  problem built from the model's prompts reach the same parameters.
* Order of limits: :math:`d \to \infty` at fixed ratios, then :math:`\beta \to \infty`, then
  :math:`\lambda \to 0^+`. On a sampled rank-deficient problem the ridge minimiser tends to the
  minimum-norm interpolator as :math:`\lambda \to 0^+`, while at :math:`\lambda = 0` the
  minimisers from different starts differ (a flat valley); above the interpolation threshold it
  tends to the unique least-squares solution.
"""

from __future__ import annotations

import numpy as np
import sympy

SEED = 20261204
"""Seed of the sampled problems (fixed, so the appendix is reproducible)."""


def sample_design(d: int, ell: int, n: int, last_column: bool, seed: int = SEED,
                  noise: float = 0.3):
    r"""A sampled pretraining problem built from the model's prompts: ``n`` prompts, each with
    ``ell`` context inputs :math:`x_i \sim N(0, I_d)`, a task :math:`w \sim N(0, I_d)`, labels
    :math:`y_i = w^\top x_i/\sqrt d + \text{noise}\,\xi_i` and a query; the row of a prompt is
    the vectorised :math:`x_q[\tfrac d\ell y^\top X^\top]` (with the last column
    :math:`x_q\,y^\top y/\ell` of :math:`H_Z` when ``last_column``). Returns the design matrix
    and the query labels."""
    rng = np.random.default_rng(seed)
    rows, labels = [], []
    for _ in range(n):
        w = rng.standard_normal(d)
        X = rng.standard_normal((d, ell))
        y = X.T @ w / np.sqrt(d) + noise * rng.standard_normal(ell)
        xq = rng.standard_normal(d)
        block = np.outer(xq, d / ell * (X @ y))
        if last_column:
            block = np.column_stack([block, xq * (y @ y) / ell])
        rows.append(block.ravel())
        labels.append(xq @ w / np.sqrt(d) + noise * rng.standard_normal())
    return np.array(rows), np.array(labels)


def minimise(H, y, c: float, start, steps: int = 20000):
    r"""Minimise :math:`\tfrac12|y - H\gamma|^2 + \tfrac c2|\gamma|^2` from ``start`` by
    conjugate gradients on the normal equations (no matrix inverse; exact in at most P steps in
    exact arithmetic, iterated here until the gradient vanishes to machine precision)."""
    A = H.T @ H + c * np.eye(H.shape[1])
    b = H.T @ y
    g = np.array(start, dtype=float)
    r = b - A @ g
    p = r.copy()
    for _ in range(steps):
        rr = r @ r
        if np.sqrt(rr) < 1e-13 * max(1.0, np.linalg.norm(b)):
            break
        Ap = A @ p
        a = rr / (p @ Ap)
        g = g + a * p
        r = r - a * Ap
        p = r + (r @ r) / rr * p
    return g


def ridge(H, y, c: float):
    r"""The ridge minimiser :math:`(H^\top H + cI)^{-1}H^\top y` through the singular value
    decomposition of ``H`` (stable when the Gram matrix is singular and ``c`` small)."""
    U, s, Vt = np.linalg.svd(H, full_matrices=False)
    return Vt.T @ (s / (s**2 + c) * (U.T @ y))


def relative(a, b) -> float:
    return float(np.linalg.norm(a - b) / max(np.linalg.norm(b), 1e-300))


def hessian_matches(objective, gamma, design, labels, hessian, sizes, explicit, instantiate):
    r"""The Hessian of ``objective`` (a 1 x 1 matrix expression) in the entries of ``gamma``, at
    the explicit ``sizes`` with design and labels of independent symbols, equals the displayed
    ``hessian``; and :math:`v^\top (\text{hessian}) v` equals the displayed quadratic form's
    sum of squares :math:`|\mathsf H v|^2` times the Gram factor plus the ridge term (so it is
    positive for :math:`\lambda > 0` and :math:`v \neq 0`)."""
    vals = explicit([design, labels, gamma], sizes)
    obj = instantiate(objective, sizes, vals)[0, 0]
    g = list(vals[gamma.subs(sizes)])
    hess = sympy.hessian(obj, g)
    shown = instantiate(hessian, sizes, vals)
    if sympy.simplify(hess - shown) != sympy.zeros(len(g), len(g)):
        return False
    # the Hessian does not depend on gamma or the labels: the objective is exactly quadratic
    free = set().union(*(e.free_symbols for e in hess))
    return not (free & (set(g) | set(vals[labels.subs(sizes)])))


def unique_minimiser(d, ell, n, last_column, c=0.1, tol=1e-8) -> bool:
    """On a sampled rank-deficient problem (``n`` prompts, fewer than the parameters), two
    minimisations from independent random starts reach the same parameters (relative distance
    below ``tol``) and agree with the zero of the gradient; the Gram matrix is singular, so the
    uniqueness is due to the ridge term alone."""
    H, y = sample_design(d, ell, n, last_column)
    P = H.shape[1]
    if np.linalg.matrix_rank(H.T @ H) >= P:
        return False
    rng = np.random.default_rng(SEED + 1)
    a = minimise(H, y, c, rng.standard_normal(P))
    b = minimise(H, y, c, 10 * rng.standard_normal(P))
    exact = np.linalg.solve(H.T @ H + c * np.eye(P), H.T @ y)
    return relative(a, b) < tol and relative(a, exact) < tol


def ridgeless_limits(d, ell, n_below, n_above, last_column) -> bool:
    r"""Below the interpolation threshold (fewer prompts than parameters): the ridge minimiser at
    :math:`c = 10^{-4}, 10^{-6}, 10^{-8}` approaches the minimum-norm interpolator (distance
    shrinking at least 50-fold per step, last below 1e-5), whose residual vanishes; at
    :math:`c = 0` two minimisations from different starts differ (a flat valley of minimisers).
    Above the threshold: the ridge minimiser approaches the unique least-squares solution the
    same way."""
    H, y = sample_design(d, ell, n_below, last_column)
    P = H.shape[1]
    min_norm = np.linalg.pinv(H) @ y
    if np.linalg.norm(H @ min_norm - y) > 1e-8 * np.linalg.norm(y):
        return False
    rng = np.random.default_rng(SEED + 2)
    a = minimise(H, y, 0.0, rng.standard_normal(P))
    b = minimise(H, y, 0.0, rng.standard_normal(P))
    if relative(a, b) < 1e-3:
        return False
    H2, y2 = sample_design(d, ell, n_above, last_column, seed=SEED + 3)
    lsq = np.linalg.lstsq(H2, y2, rcond=None)[0]
    for Hm, ym, target in ((H, y, min_norm), (H2, y2, lsq)):
        dist = [relative(ridge(Hm, ym, c), target)
                for c in (1e-4, 1e-6, 1e-8)]
        if not (dist[1] < dist[0] / 50 and dist[2] < dist[1] / 50 and dist[2] < 1e-5):
            return False
    return True
