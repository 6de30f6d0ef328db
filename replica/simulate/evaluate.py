r"""Test errors of a trained :math:`\Gamma`, and the low-rank order parameters.

**Closed-form expectation.** For a fresh test context of length :math:`\ell` whose task :math:`w`
is drawn from a law with moments :math:`R = \mathbb Ew w^\top`, :math:`\bar w = \mathbb Ew`,
:math:`n_2 = \mathbb E\|w\|^2/d`, :math:`n_4 = \mathbb E(\|w\|^2/d)^2` and
:math:`m_3 = \mathbb E[(\|w\|^2/d)\,w]`, with label noise of variance :math:`\nu`, averaging
:math:`(y_q - x_q^\top\Gamma h)^2` over the query gives :math:`\nu + \frac1d\mathbb E\|w -
\Gamma h\|^2`. With :math:`\Gamma = [\Gamma_w, \gamma_s]` and the exact conditional moments of
:math:`h` (:func:`replica.simulate.sampling.conditional_moments`) this is, **exactly at finite
d and** :math:`\ell`,

.. math::
   e(\Gamma) = \nu + \frac1d\Big[\operatorname{tr}R - 2\operatorname{tr}(\Gamma_wR)
   - 2\gamma_s\cdot t + (1+\tfrac1\ell)\operatorname{tr}(\Gamma_wR\Gamma_w^\top)
   + \tfrac d\ell c_1\|\Gamma_w\|_F^2 + 2(1+\tfrac2\ell)\gamma_s\cdot\Gamma_wt
   + (1+\tfrac2\ell)c_2\|\gamma_s\|^2\Big],

:math:`c_1 = n_2+\nu`, :math:`t = m_3 + \nu\bar w`, :math:`c_2 = n_4 + 2\nu n_2 + \nu^2`. Without
the :math:`y^2` column (low-rank paper, :math:`\nu = \tilde\sigma^2`) only the first line and the
:math:`\|\Gamma_w\|^2` term remain:
:math:`\varepsilon = \tilde\sigma^2 + \frac1D[\operatorname{tr}((I-\Gamma)R(I-\Gamma)^\top)
+ \frac1{\tilde L}\operatorname{tr}(\Gamma R\Gamma^\top) + \frac D{\tilde L}(n_2+\tilde\sigma^2)
\|\Gamma\|_F^2]`, which is the low-rank paper's error formulas with the finite-D order parameters below,
the exact :math:`\operatorname{tr}R/D` in place of 1, and the :math:`O(1/D)` term
:math:`\frac1{\tilde L}\operatorname{tr}(\Gamma R\Gamma^\top)` kept.

Paper A's ``trace_formula_gamma`` is the same expression with the
:math:`1/\ell` factors dropped and :math:`c_2\to c_1^2` (:func:`paper_a_trace_formula`); it
differs from the exact value by :math:`O(1/d)`.

**Monte Carlo.** :func:`monte_carlo_error` samples test prompts and averages the squared error;
it checks the closed form.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from .sampling import SAMPLERS, query


@dataclasses.dataclass(frozen=True)
class TaskMoments:
    r"""Moments of a task law that the expected error needs (module docstring)."""

    R: np.ndarray  # E w w^T
    mean: np.ndarray  # E w
    n2: float  # E |w|^2 / d
    n4: float  # E (|w|^2/d)^2
    m3: np.ndarray  # E[(|w|^2/d) w]

    @classmethod
    def gaussian(cls, cov: np.ndarray, mu=None) -> "TaskMoments":
        r""":math:`w\sim\mathcal N(\mu, C)`: :math:`R = C+\mu\mu^\top`,
        :math:`\mathbb E\|w\|^4 = (\operatorname{tr}C+\|\mu\|^2)^2 + 2\operatorname{tr}C^2 +
        4\mu^\top C\mu`, :math:`\mathbb E[\|w\|^2w] = (\operatorname{tr}C+\|\mu\|^2)\mu + 2C\mu`."""
        cov = np.asarray(cov, dtype=float)
        d = cov.shape[0]
        mu = np.zeros(d) if mu is None else np.asarray(mu, dtype=float)
        s = np.trace(cov) + mu @ mu
        n4 = (s**2 + 2 * np.sum(cov * cov.T) + 4 * mu @ cov @ mu) / d**2
        return cls(cov + np.outer(mu, mu), mu, s / d, n4, (s * mu + 2 * cov @ mu) / d)

    @classmethod
    def sphere(cls, d: int) -> "TaskMoments":
        r"""Uniform on the sphere :math:`\|w\| = \sqrt d`: :math:`R = I`, :math:`n_2 = n_4 = 1`."""
        return cls(np.eye(d), np.zeros(d), 1.0, 1.0, np.zeros(d))

    @classmethod
    def empirical(cls, W: np.ndarray) -> "TaskMoments":
        """Uniform over the rows of ``W`` (a finite task set: the pretraining tasks)."""
        k, d = W.shape
        norms = np.einsum("ij,ij->i", W, W) / d
        return cls(W.T @ W / k, W.mean(axis=0), float(norms.mean()), float((norms**2).mean()),
                   (norms[:, None] * W).mean(axis=0))

    @classmethod
    def fresh_subspace(cls, D: int, r: int) -> "TaskMoments":
        r"""A task from its own Haar-random rank-``r`` subspace (ODG):
        :math:`R = I`, :math:`\|w\|^2 = (D/r)\chi^2_r`, so :math:`n_4 = 1 + 2/r`."""
        return cls(np.eye(D), np.zeros(D), 1.0, 1.0 + 2.0 / r, np.zeros(D))


def expected_error(gamma: np.ndarray, mom: TaskMoments, ell: int, noise: float) -> float:
    """Exact expected squared test error of ``gamma`` (``d x d`` or ``d x (d+1)``) on contexts of
    length ``ell`` with tasks of moments ``mom`` and label-noise variance ``noise``."""
    d = gamma.shape[0]
    Gw = gamma[:, :d]
    R = mom.R
    GR = Gw @ R
    c1 = mom.n2 + noise
    val = (np.trace(R) - 2 * np.trace(GR) + (1 + 1 / ell) * np.sum(GR * Gw)
           + (d / ell) * c1 * np.sum(Gw * Gw))
    if gamma.shape[1] == d + 1:
        gs = gamma[:, d]
        t = mom.m3 + noise * mom.mean
        c2 = mom.n4 + 2 * noise * mom.n2 + noise**2
        val += -2 * gs @ t + 2 * (1 + 2 / ell) * gs @ (Gw @ t) + (1 + 2 / ell) * c2 * (gs @ gs)
    return float(noise + val / d)


def paper_a_trace_formula(gamma: np.ndarray, cov: np.ndarray, rho: float, alpha: float,
                          mu=None) -> float:
    r"""Paper A's ``trace_formula_gamma``, which drops :math:`O(1/\ell)`
    and :math:`O(1/d)` terms: :math:`\rho + \frac1d\operatorname{tr}\hat C - \frac2d\langle
    \Gamma, A\rangle + \frac1d\operatorname{tr}(\Gamma B\Gamma^\top)`, :math:`\hat C = C +
    \mu\mu^\top`, :math:`\bar x = \operatorname{tr}\hat C/d + \rho`, :math:`A = [\hat C, \bar x\mu]`,
    :math:`B = \begin{pmatrix}\hat C + \bar x I/\alpha & \bar x\mu\\ \bar x\mu^\top & \bar
    x^2\end{pmatrix}`. For comparison with the exact :func:`expected_error`."""
    d = gamma.shape[0]
    mu = np.zeros(d) if mu is None else np.asarray(mu, dtype=float)
    C = np.asarray(cov, dtype=float) + np.outer(mu, mu)
    xb = np.trace(C) / d + rho
    A = np.hstack([C, (xb * mu)[:, None]])
    B = np.zeros((d + 1, d + 1))
    B[:d, :d] = C + xb / alpha * np.eye(d)
    B[:d, d] = B[d, :d] = xb * mu
    B[d, d] = xb**2
    return float(rho + (np.trace(C) - 2 * np.sum(gamma * A) + np.trace(gamma @ B @ gamma.T)) / d)


def monte_carlo_error(gamma: np.ndarray, rng: np.random.Generator, draw_tasks, ell: int,
                      noise: float, prompts: int, sampler: str = "fast", block: int = 4096):
    r"""Monte-Carlo test error: ``prompts`` fresh contexts (tasks from ``draw_tasks(rng, m)``,
    context statistics by ``sampler``), squared error :math:`(y_q - x_q^\top\Gamma h)^2`.
    Returns ``(mean, standard error)``."""
    d = gamma.shape[0]
    draw = SAMPLERS[sampler]
    total = 0.0
    total2 = 0.0
    for a in range(0, prompts, block):
        m = min(block, prompts - a)
        W = draw_tasks(rng, m)
        w_hat, s = draw(rng, W, ell, noise)
        xq, yq = query(rng, W, noise)
        h = w_hat if gamma.shape[1] == d else np.hstack([w_hat, s[:, None]])
        pred = np.einsum("ij,ij->i", xq, h @ gamma.T)
        err = (yq - pred) ** 2
        total += err.sum()
        total2 += (err**2).sum()
    mean = total / prompts
    var = max(total2 / prompts - mean**2, 0.0) * prompts / max(prompts - 1, 1)
    return float(mean), float(np.sqrt(var / prompts))


def lowrank_order_parameters(gamma: np.ndarray, W0: np.ndarray, A: np.ndarray) -> dict:
    r"""Finite-D order parameters of the low-rank model for a ``D x D`` :math:`\Gamma`, the
    training tasks ``W0`` (rows) and the subspace basis ``A``: with
    :math:`S = \frac1{M_0}\sum_\nu w_\nu w_\nu^\top` and :math:`P = AA^\top`,
    :math:`q = \operatorname{Tr}(\Gamma S\Gamma^\top)/D`, :math:`m = \operatorname{Tr}(\Gamma S)/D`,
    :math:`\bar q = \operatorname{Tr}(\Gamma^\top\Gamma)/D`, :math:`\bar m = \operatorname{Tr}
    \Gamma/D`, :math:`q_0 = \operatorname{Tr}(\Gamma P\Gamma^\top)/r`,
    :math:`m_0 = \operatorname{Tr}(A^\top\Gamma A)/r`."""
    D, r = A.shape
    GW = W0 @ gamma.T  # rows Gamma w_nu
    GA = gamma @ A
    return {
        "q": float(np.sum(GW * GW) / (W0.shape[0] * D)),
        "m": float(np.sum(GW * W0) / (W0.shape[0] * D)),
        "qbar": float(np.sum(gamma * gamma) / D),
        "mbar": float(np.trace(gamma) / D),
        "q0": float(np.sum(GA * GA) / r),
        "m0": float(np.sum(A * GA) / r),
    }
