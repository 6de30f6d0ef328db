r"""Bayes-optimal inference on the noiseless ReLU channel :math:`y = \max(0, u)` with a Gaussian
teacher, declared from its parts with :func:`replica.glm.BayesOptimal`: :math:`Z_{\rm out}` has
an atom at :math:`y = 0` (a Gaussian tail) and a Gaussian density on :math:`y > 0`, whose
:math:`Z_{\rm out}\log Z_{\rm out}` is averaged in closed form (tail moments), leaving one
Gaussian integral over the field. ``tests/test_glm_bayes_relu.py`` checks it against the state
evolution written out by hand; the overlap tends to 1 as :math:`\alpha \to 2` (perfect recovery:
half of the labels are exact linear measurements). At :math:`\alpha \ge 2` the posterior
concentrates on the teacher (:math:`m = 1`), a boundary point, not an interior saddle point, so
``alpha`` is declared in :math:`(0, 2)` (exit 2 outside). Close to 2 the solve is slow: 1.1 s at
:math:`\alpha = 9/5`, about 3.5 minutes at :math:`\alpha = 19/10` (731 iterations from the
declared start, working precision raised to 70 digits; :math:`1 - m = 4.4\cdot 10^{-3}`).

    replica solve --model examples/glm_bayes_relu.py --alpha 1
"""

from fractions import Fraction

from replica.glm import BayesOptimal, Gaussian, ReLU
from replica.modeling import Domain, Parameter

ALPHA = Parameter("alpha", "samples per dimension",
                  domain=Domain(lower=Fraction(0), upper=Fraction(2), upper_open=True,
                                describe="must lie in (0, 2): at alpha >= 2 the posterior of the "
                                         "noiseless ReLU channel concentrates on the teacher "
                                         "(m = 1, perfect recovery), a boundary point with no "
                                         "saddle point to solve"))

MODEL = BayesOptimal("glm_bayes_relu", prior=Gaussian(), channel=ReLU(0), parameters=[ALPHA])
