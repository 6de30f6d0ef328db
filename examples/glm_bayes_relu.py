r"""Bayes-optimal inference on the noiseless ReLU channel :math:`y = \max(0, u)` with a Gaussian
teacher, declared from its parts with :func:`replica.glm.BayesOptimal`: :math:`Z_{\rm out}` has
an atom at :math:`y = 0` (a Gaussian tail) and a Gaussian density on :math:`y > 0`, whose
:math:`Z_{\rm out}\log Z_{\rm out}` is averaged in closed form (tail moments), leaving one
Gaussian integral over the field. ``tests/test_glm_bayes_relu.py`` checks it against the state
evolution written out by hand; the overlap tends to 1 as :math:`\alpha \to 2` (perfect recovery:
half of the labels are exact linear measurements).

    replica solve --model examples/glm_bayes_relu.py --alpha 1
"""

from replica.glm import BayesOptimal, Gaussian, ReLU

MODEL = BayesOptimal("glm_bayes_relu", prior=Gaussian(), channel=ReLU(0))
