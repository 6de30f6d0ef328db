r"""The Bayes-optimal teacher--student perceptron with a Rademacher teacher, declared from its
parts with :func:`replica.glm.BayesOptimal`: :math:`\psi_{P_0}` and :math:`\Psi_{\rm out}` are
computed from the prior and the sign channel (Barbier et al., PNAS 2019, states the general
formula). ``examples/perceptron_teacher.py`` (``--prior rademacher``) is the independent check.
Replica symmetry is exact here (Bayes-optimal: Nishimori), which its stability record says.

    replica solve --model examples/glm_bayes_sign.py --alpha 1
"""

from replica.glm import BayesOptimal, Rademacher, Sign

MODEL = BayesOptimal("glm_bayes_sign", prior=Rademacher(), channel=Sign())
