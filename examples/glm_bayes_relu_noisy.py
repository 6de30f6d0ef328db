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
not checked: the label density's features of width :math:`\sigma` need many bisections of the
rule. With noise there is no perfect recovery at :math:`\alpha = 2`: every :math:`\alpha > 0` is
allowed. ``--certify`` is refused (a two-dimensional integral has no ball-arithmetic
enclosure). Slow: at 30 digits one evaluation of the map takes 69 s of CPU time and of its
Jacobian 213 s (measured at m = 1/2, alpha = 1, sigma = 1/2, warm code cache; each outer node
of the two-dimensional rule computes an inner integral), and the float64 start is NaN (0 log 0
where both parts of Z_out underflow), so a solve iterates in mpmath from the declared start:
a 15-digit solve did not finish in 23 minutes on a loaded machine. Solving it is therefore
not practical yet (a finite float64 form of the channel term and a cheaper inner rule are the
missing steps); its derived equations are shown by

    replica equations --model examples/glm_bayes_relu_noisy.py
"""

from replica.glm import BayesOptimal, Gaussian, ReLU

MODEL = BayesOptimal("glm_bayes_relu_noisy", prior=Gaussian(), channel=ReLU("sigma"))
"""Bayes-optimal inference on the noisy ReLU channel y = max(0, u) + sigma eps with a Gaussian
prior (:func:`replica.glm.BayesOptimal`, ``ReLU("sigma")``, sigma > 0)."""
