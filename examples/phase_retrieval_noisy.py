r"""Bayes-optimal noisy real phase retrieval: the absolute-value channel with Gaussian label
noise, :math:`y = |u| + \sigma\varepsilon` (:math:`\Delta = \sigma^2 > 0`), with a Gaussian
teacher, declared from its parts with :func:`replica.glm.BayesOptimal`
(``AbsoluteValue("sigma")``; the noiseless channel is ``examples/phase_retrieval.py``).

**Derived** (``replica equations --model examples/phase_retrieval_noisy.py``): given the field
:math:`\omega = \sqrt m\,\xi` and :math:`V = 1 - m`, the label's density on :math:`y \in
\mathbb R` is two Gaussian-times-erfc terms,

.. math::
    Z_{\rm out}(y) = \sum_\pm N(y; \pm\omega, V + \Delta)\,
    \Phi\Big(\frac{\pm\omega\Delta + yV}{\sqrt{V\Delta(V + \Delta)}}\Big),

exchanged by :math:`\omega \to -\omega`; the channel term :math:`\mathbb E_\xi\int dy\,
Z_{\rm out}\log Z_{\rm out}` is twice the first term's share, a two-dimensional Gaussian
integral written in log space (``log_erfc``, ``softplus``: finite in float64 everywhere).

**The weak-recovery threshold.** :math:`m = 0` is a fixed point for every :math:`\alpha` (the
channel is blind to the sign of the teacher); it loses stability at

.. math::  \alpha_{\rm WR}(\sigma)^{-1} = \mathbb E_y\big[(\mathbb E[z^2\,|\,y] - 1)^2\big],
           \qquad y = |z| + \sigma\varepsilon,\ z \sim N(0, 1)

(Mondelli and Montanari 2018; Barbier et al., PNAS 2019: the linearisation of the state
evolution at :math:`m = 0`, where :math:`\hat m = \alpha\,\mathbb E[g_{\rm out}^2] = \alpha
m\,\mathbb E_y[(\mathbb E[z^2|y] - 1)^2] + O(m^2)` and :math:`m = \hat m + O(\hat m^2)`). Given
:math:`y`, :math:`z` has the law of :math:`\pm` a Gaussian of mean :math:`\mu = y/(1 + \Delta)`
and variance :math:`\tau^2 = \Delta/(1 + \Delta)` truncated to :math:`(0, \infty)`, so
:math:`\mathbb E[z^2|y] = \mu^2 + \tau^2 + \mu\tau\varphi(\mu/\tau)/\Phi(\mu/\tau)`.
Noiseless, :math:`\mathbb E[z^2|y] = y^2` and :math:`\alpha_{\rm WR} = 1/2`; with noise it
grows (``tests/test_glm_bayes_abs_noisy.py`` computes it by mpmath quadrature and finds the
engine's derived :math:`\Psi_{\rm out}` to agree, :math:`\alpha(m) = m/((1 - m)\,2\Psi_{\rm
out}'(m)) \to \alpha_{\rm WR}` as :math:`m \to 0`):

=================  ==========  ==========  ==========  ==========
sigma              1/16        1/4         1/2         1
alpha_WR           0.503914    0.564235    0.774022    1.76206
=================  ==========  ==========  ==========  ==========

Below :math:`\alpha_{\rm WR}(\sigma)` the overlap is :math:`m = 0` (MMSE 1), a boundary point
the positive unknowns exclude: solve above it.

**Float64 overlaps** (``replica.solve_float64``, status ``not-verified``: a two-dimensional
integral's float64 rule carries no error estimate) at :math:`\alpha = 0.8`, approaching the
noiseless model's :math:`m = 0.216227` (``examples/phase_retrieval.py``) as the noise vanishes:

=========  ========  ========  ========  ========  ========
sigma      1/2       1/4       1/8       1/16      1/32
m          0.008473  0.134257  0.192055  0.209885  0.213458
=========  ========  ========  ========  ========  ========

At :math:`(\alpha, \sigma) = (1, 1/2)` the float64 overlap :math:`m = 0.0936405379206` is a fixed
point of the state evolution written out by hand in mpmath (Nishimori form, :math:`\hat m =
\alpha\,\mathbb E_\xi\int dy\,(\partial_\omega Z_{\rm out})^2/Z_{\rm out}`) to about
:math:`10^{-14}` (the slow tier of the test). The mpmath path of the engine costs as the noisy
ReLU's (``examples/glm_bayes_relu_noisy.py``: minutes per 15-digit map). ``sigma`` must be
positive (one-line error, exit status 2; the noiseless channel is a model of its own).

    replica equations --model examples/phase_retrieval_noisy.py
"""

from replica.glm import AbsoluteValue, BayesOptimal, Gaussian

MODEL = BayesOptimal("phase_retrieval_noisy", prior=Gaussian(), channel=AbsoluteValue("sigma"),
                     title="Bayes-optimal noisy real phase retrieval (y = |u| + sigma eps), "
                           "Gaussian teacher prior")
"""Bayes-optimal noisy real phase retrieval, y = |u| + sigma eps, Gaussian prior."""
