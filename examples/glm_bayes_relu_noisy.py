r"""Bayes-optimal inference on the ReLU channel with Gaussian label noise,
:math:`y = \max(0, u) + \sigma\varepsilon` (:math:`\Delta = \sigma^2 > 0`), with a Gaussian
teacher, declared from its parts with :func:`replica.glm.BayesOptimal`: :math:`Z_{\rm out}` is
the atom's mass :math:`P(u < 0)` times the noise density plus the noise convolution of the
Gaussian on :math:`u > 0` (closed form in ``erfc`` and ``exp``), and the channel term
:math:`\mathbb E_\xi\int dy\,Z_{\rm out}\log Z_{\rm out}` is a two-dimensional Gaussian integral
(over the field and the label). ``tests/test_glm_bayes_relu_noisy.py`` checks the free entropy
against :math:`\mathbb E_\xi\int dy\,Z_{\rm out}\log Z_{\rm out}` and the state-evolution map
against its Nishimori form :math:`\hat m = \alpha\,\mathbb E_\xi\int dy\,(\partial_\omega
Z_{\rm out})^2/Z_{\rm out}`, both written out by hand (two-dimensional ``mpmath.quad``). The
approach to the noiseless model (``examples/glm_bayes_relu.py``) as :math:`\sigma \to 0` is
checked in float64 only (the table below; in mpmath the label density's features of width
:math:`\sigma` need many bisections of the rule). With noise there is no perfect recovery at :math:`\alpha = 2`: every :math:`\alpha > 0` is
allowed. ``--certify`` is refused (a two-dimensional integral has no ball-arithmetic enclosure).

The channel term is written in log space (:math:`\log Z_{\rm out}` as a log-sum of its two
parts, each with a ``log_erfc``; the weights as :math:`e^{\log\operatorname{erfc}}/2`), so
the float64 evaluation (a tensor product of fixed Gauss--Legendre rules) is finite
everywhere and gives a start and curves, reported ``not-verified`` (no error estimate for a
two-dimensional integral in float64). Float64 overlaps (``solve_float64``), sigma = 1/2:

=========  =======  =======  =======  =======  =======  =======
alpha      0.1      0.5      1        2        5        20
m          0.04459  0.20363  0.36468  0.58942  0.84843  0.97090
=========  =======  =======  =======  =======  =======  =======

(m ~ alpha for small alpha, m -> 1 for large alpha), and at alpha = 1 as the noise vanishes,
towards the noiseless model's m = 0.692794 (``examples/glm_bayes_relu.py``):

=========  =======  =======  =======  =======  =======
sigma      1        1/2      1/5      1/10     1/20
m          0.18155  0.36468  0.55058  0.62213  0.65692
=========  =======  =======  =======  =======  =======

Solved in mpmath to 20 digits (``replica solve --model examples/glm_bayes_relu_noisy.py
--alpha 1 --sigma 1/2 --dps 20``: from the float64 start, 2 Newton steps, verified by a
re-solve at 37 digits; 730 s of CPU time on a loaded machine), alpha = 1, sigma = 1/2:

===============  ===========================
m                0.36468165430489193084
mmse             0.63531834569510806916
free entropy     -1.0648587709802551986
===============  ===========================

(``tests/test_glm_bayes_relu_noisy.py`` checks that this m is a fixed point of the state
evolution written out by hand.) The mpmath evaluation is still slow: at 15 digits one evaluation of the map took about 15 s
of CPU time and of its Jacobian 40 s (each node of the outer rule computes an inner
integral: 264 outer nodes, 262,696 evaluations of the integrand in ball arithmetic;
``benchmarks/relu2d_map.py``); since each inner integral starts one level lower where the
last one needed less (benchmarks/README.md, section noisy2d) 123,664 evaluations and 8.8 s
against 16.0 s side by side (20 digits: 13.2 s against 28.4 s); the 20-digit point above was
not re-timed. At 30 digits the map took 69 s before the log-space form (not re-measured since). Its derived equations are shown by

    replica equations --model examples/glm_bayes_relu_noisy.py
"""

from replica.glm import BayesOptimal, Gaussian, ReLU

MODEL = BayesOptimal("glm_bayes_relu_noisy", prior=Gaussian(), channel=ReLU("sigma"))
"""Bayes-optimal inference on the noisy ReLU channel y = max(0, u) + sigma eps with a Gaussian
prior (:func:`replica.glm.BayesOptimal`, ``ReLU("sigma")``, sigma > 0)."""
