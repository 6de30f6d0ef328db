r"""Random data of the finite-size linear-attention experiments.

Conventions (those of the papers, as the theory uses them): inputs
:math:`x\sim\mathcal N(0, I_d/d)`; labels :math:`y = \langle x, w\rangle + \epsilon` with
:math:`\epsilon\sim\mathcal N(0, \nu)` (``nu`` is the noise **variance**: paper A/B's
:math:`\rho`, the low-rank paper's :math:`\sigma^2`). A context of length :math:`\ell` enters the
model only through the query :math:`x_q`, the query label :math:`y_q` and the sufficient statistics

.. math::  \hat w = \frac d\ell\sum_{i=1}^{\ell} y_i x_i\in\mathbb R^d,\qquad
           s = \frac1\ell\sum_{i=1}^{\ell} y_i^2 ,

so that :math:`H_Z = x_q\,(\hat w;\,s)^\top` (papers A/B) or :math:`H = x_q\hat w^\top`
(low-rank paper). Two samplers of :math:`(\hat w, s)` given :math:`w` are provided:

* :func:`context_statistics_direct` builds the :math:`\ell\times d` data of each context
  (cost :math:`O(\ell d)` per context);
* :func:`context_statistics_fast` draws :math:`(\hat w, s)` **exactly in law** at cost
  :math:`O(d)` per context. Derivation: with :math:`u = w/\|w\|`, write :math:`a = Xu`
  (:math:`a_i\sim\mathcal N(0,1/d)`) and :math:`X_\perp = X(I-uu^\top)`, independent of
  :math:`a`. Then :math:`y = \|w\| a + \epsilon` depends on :math:`(a,\epsilon)` only, and
  :math:`X^\top y = u\,(a^\top y) + X_\perp^\top y` with
  :math:`X_\perp^\top y\,|\,(a,\epsilon)\sim\mathcal N(0, \tfrac{\|y\|^2}{d}(I-uu^\top))`.
  The pair :math:`(a^\top y, \|y\|^2)` is the off-diagonal and the second diagonal entry of the
  :math:`2\times2` Wishart matrix :math:`\sum_i v_iv_i^\top` with :math:`\ell` degrees of freedom,
  :math:`v_i = (a_i, y_i)\sim\mathcal N(0,\Sigma)`,
  :math:`\Sigma = \begin{pmatrix}1/d & \|w\|/d\\ \|w\|/d & \|w\|^2/d+\nu\end{pmatrix} = LL^\top`,
  :math:`L = \begin{pmatrix}1/\sqrt d & 0\\ \|w\|/\sqrt d & \sqrt\nu\end{pmatrix}`. By Bartlett's
  decomposition :math:`\sum_i v_iv_i^\top \overset{d}{=} LTT^\top L^\top` with
  :math:`T = \begin{pmatrix}t_{11} & 0\\ t_{21} & t_{22}\end{pmatrix}`,
  :math:`t_{11}^2\sim\chi^2_\ell`, :math:`t_{22}^2\sim\chi^2_{\ell-1}`,
  :math:`t_{21}\sim\mathcal N(0,1)`, all independent. Hence, with :math:`g\sim\mathcal N(0,I_d)`,

  .. math:: \hat w = \frac d\ell\Big[u\,W_{12} + \sqrt{W_{22}/d}\,(I-uu^\top)g\Big],\qquad
            s = W_{22}/\ell,

  :math:`W_{12} = \tfrac{t_{11}}{\sqrt d}\big(\tfrac{\|w\|t_{11}}{\sqrt d} + \sqrt\nu\,t_{21}\big)`,
  :math:`W_{22} = \big(\tfrac{\|w\|t_{11}}{\sqrt d} + \sqrt\nu\,t_{21}\big)^2 + \nu t_{22}^2`.
  Its conditional moments are those of the direct construction:
  :math:`\mathbb E[\hat w|w] = w`, :math:`\mathbb E[s|w] = c_w := \|w\|^2/d+\nu`,
  :math:`\mathbb E[\hat w\hat w^\top|w] = (1+\tfrac1\ell)ww^\top + \tfrac d\ell c_w I`,
  :math:`\mathbb E[s\hat w|w] = (1+\tfrac2\ell)c_w w`, :math:`\mathbb E[s^2|w] = (1+\tfrac2\ell)c_w^2`
  (:func:`conditional_moments`; tested against both samplers).

Random streams: every function takes a :class:`numpy.random.Generator`; a simulation seed is a
:class:`numpy.random.SeedSequence` split into independent sub-streams by :func:`substreams`.
"""

from __future__ import annotations

import numpy as np

#: Contexts per block of the direct sampler (fixed, so the random stream does not depend on memory).
_DIRECT_BLOCK_ELEMENTS = 1 << 21


def substreams(seed_seq: np.random.SeedSequence, count: int) -> list[np.random.Generator]:
    """``count`` independent generators derived from ``seed_seq`` without mutating it (the
    children ``SeedSequence(entropy, spawn_key=key + (j,))``, ``j = 0..count-1``)."""
    return [np.random.default_rng(np.random.SeedSequence(
        seed_seq.entropy, spawn_key=tuple(seed_seq.spawn_key) + (j,),
        pool_size=seed_seq.pool_size)) for j in range(count)]


# ---------------------------------------------------------------------------------------------
# Tasks
# ---------------------------------------------------------------------------------------------
def covariance_sqrt(cov: np.ndarray) -> np.ndarray:
    """Symmetric square root :math:`C^{1/2}` of a PSD matrix (negative round-off clipped)."""
    ev, vec = np.linalg.eigh((cov + cov.T) / 2)
    return (vec * np.sqrt(np.clip(ev, 0.0, None))) @ vec.T


def gaussian_tasks(rng: np.random.Generator, k: int, d: int, cov_sqrt=None,
                   diag=None) -> np.ndarray:
    r"""``k`` tasks :math:`w\sim\mathcal N(0, C)` as rows of a ``(k, d)`` array; ``C`` is given
    by its diagonal ``diag`` (diagonal covariance) or its symmetric square root ``cov_sqrt``
    (identity if neither)."""
    g = rng.standard_normal((k, d))
    if diag is not None:
        return g * np.sqrt(np.asarray(diag, dtype=float))
    if cov_sqrt is not None:
        return g @ cov_sqrt
    return g


def sphere_tasks(rng: np.random.Generator, k: int, d: int) -> np.ndarray:
    r"""``k`` tasks uniform on the sphere :math:`\|w\| = \sqrt d` (paper B's pretraining law)."""
    g = rng.standard_normal((k, d))
    return g * (np.sqrt(d) / np.linalg.norm(g, axis=1, keepdims=True))


def haar_subspace(rng: np.random.Generator, D: int, r: int) -> np.ndarray:
    r"""``A`` (``D x r``, :math:`A^\top A = I_r`) spanning a Haar-random ``r``-dimensional subspace:
    the Q factor of a Gaussian matrix, with the signs fixed by :math:`\operatorname{diag}R > 0`
    so that the law of ``A`` is exactly Haar (not only its span)."""
    q, rr = np.linalg.qr(rng.standard_normal((D, r)))
    return q * np.where(np.diag(rr) < 0, -1.0, 1.0)


def complement_frame(rng: np.random.Generator, A: np.ndarray, k: int) -> np.ndarray:
    r"""``B`` (``D x k``, :math:`B^\top B = I_k`, :math:`A^\top B = 0`): a Haar-random
    ``k``-frame of the orthogonal complement of the span of ``A`` (a Gaussian matrix projected
    onto the complement, then its Q factor with signs fixed)."""
    D = A.shape[0]
    g = rng.standard_normal((D, k))
    g -= A @ (A.T @ g)
    q, rr = np.linalg.qr(g)
    return q * np.where(np.diag(rr) < 0, -1.0, 1.0)


def lowrank_tasks(rng: np.random.Generator, A: np.ndarray, k: int) -> np.ndarray:
    r"""``k`` tasks :math:`w = \sqrt{D/r}\,Av`, :math:`v\sim\mathcal N(0, I_r)` ; covariance :math:`P/\rho` with :math:`P = AA^\top`, :math:`\rho = r/D`."""
    D, r = A.shape
    return np.sqrt(D / r) * rng.standard_normal((k, r)) @ A.T


def fresh_subspace_tasks(rng: np.random.Generator, k: int, D: int, r: int) -> np.ndarray:
    r"""``k`` tasks, each from its **own** Haar-random rank-``r`` subspace (ODG protocol),
    sampled exactly in law without forming subspaces: such a task is
    rotation invariant with :math:`\|w\|^2 = (D/r)\chi^2_r`, so
    :math:`w = \sqrt{(D/r)\chi^2_r}\;g/\|g\|` with :math:`g\sim\mathcal N(0, I_D)`."""
    g = rng.standard_normal((k, D))
    radius = np.sqrt(D / r * rng.chisquare(r, size=k))
    return g * (radius / np.linalg.norm(g, axis=1))[:, None]


def assign_tasks(rng: np.random.Generator, n: int, k: int, balanced: bool = False) -> np.ndarray:
    """Task index of each of ``n`` contexts: i.i.d. uniform on ``0..k-1`` (papers A and low-rank),
    or, ``balanced``, every task exactly ``n // k`` times in random order (paper B; the caller
    makes ``n`` a multiple of ``k``)."""
    if balanced:
        if n % k:
            raise ValueError("balanced assignment needs n to be a multiple of k")
        return rng.permutation(np.repeat(np.arange(k), n // k))
    return rng.integers(0, k, size=n)


# ---------------------------------------------------------------------------------------------
# Contexts
# ---------------------------------------------------------------------------------------------
def query(rng: np.random.Generator, W: np.ndarray, noise: float):
    r"""Query inputs :math:`x_q\sim\mathcal N(0, I/d)` and labels :math:`y_q = x_q\cdot w +
    \sqrt\nu\,\epsilon` for the tasks in the rows of ``W``."""
    n, d = W.shape
    xq = rng.standard_normal((n, d)) / np.sqrt(d)
    yq = np.einsum("ij,ij->i", xq, W) + np.sqrt(noise) * rng.standard_normal(n)
    return xq, yq


def context_statistics_fast(rng: np.random.Generator, W: np.ndarray, ell: int, noise: float):
    r"""``(w_hat, s)`` for one context per row of ``W``, exactly in law (module docstring):
    :math:`O(d)` work per context instead of :math:`O(\ell d)`."""
    n, d = W.shape
    norm = np.linalg.norm(W, axis=1)
    u = np.empty_like(W)
    pos = norm > 0
    u[pos] = W[pos] / norm[pos, None]
    u[~pos] = 0.0
    u[~pos, 0] = 1.0  # any unit vector: y does not depend on X when w = 0
    t11 = np.sqrt(rng.chisquare(ell, size=n))
    t21 = rng.standard_normal(n)
    t22 = np.sqrt(rng.chisquare(ell - 1, size=n)) if ell > 1 else np.zeros(n)
    sq_nu = np.sqrt(noise)
    second = norm * t11 / np.sqrt(d) + sq_nu * t21
    w12 = t11 / np.sqrt(d) * second
    w22 = second**2 + noise * t22**2
    g = rng.standard_normal((n, d))
    g -= u * np.einsum("ij,ij->i", u, g)[:, None]
    w_hat = (d / ell) * (u * w12[:, None] + np.sqrt(w22 / d)[:, None] * g)
    return w_hat, w22 / ell


def context_statistics_direct(rng: np.random.Generator, W: np.ndarray, ell: int, noise: float):
    r"""``(w_hat, s)`` by building each context: ``X`` (:math:`\ell\times d`, rows
    :math:`\mathcal N(0,I/d)`), :math:`y = Xw+\epsilon`, :math:`\hat w = \tfrac d\ell X^\top y`,
    :math:`s = \|y\|^2/\ell`. Contexts are drawn in blocks of fixed size, so the memory stays
    bounded and the random stream does not depend on the machine."""
    n, d = W.shape
    block = max(1, _DIRECT_BLOCK_ELEMENTS // (ell * d))
    w_hat = np.empty((n, d))
    s = np.empty(n)
    sq_nu = np.sqrt(noise)
    for a in range(0, n, block):
        b = min(n, a + block)
        X = rng.standard_normal((b - a, ell, d)) / np.sqrt(d)
        y = np.einsum("bld,bd->bl", X, W[a:b]) + sq_nu * rng.standard_normal((b - a, ell))
        w_hat[a:b] = (d / ell) * np.einsum("bld,bl->bd", X, y)
        s[a:b] = np.einsum("bl,bl->b", y, y) / ell
    return w_hat, s


SAMPLERS = {"fast": context_statistics_fast, "direct": context_statistics_direct}


def conditional_moments(w: np.ndarray, ell: int, noise: float):
    r"""Exact first and second moments of :math:`h = (\hat w; s)` given one task ``w``:
    returns ``(mean, second)`` with ``mean`` :math:`=(w; c_w)` and ``second``
    :math:`=\mathbb E[hh^\top|w]` (module docstring), :math:`c_w = \|w\|^2/d + \nu`."""
    d = w.shape[0]
    c = w @ w / d + noise
    mean = np.concatenate([w, [c]])
    second = np.empty((d + 1, d + 1))
    second[:d, :d] = (1 + 1 / ell) * np.outer(w, w) + (d / ell) * c * np.eye(d)
    second[:d, d] = second[d, :d] = (1 + 2 / ell) * c * w
    second[d, d] = (1 + 2 / ell) * c * c
    return mean, second
