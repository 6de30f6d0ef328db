r"""Ridge logistic regression on a probit teacher, declared from its parts with
:func:`replica.glm.ERM`: the replica-symmetric free energy, its derivation and the replicon are
computed from the loss, the penalty and the teacher (:mod:`replica.glm.builders` states the
general formula once, with its references). The hand-written ``examples/logistic_regression.py``
declares the same model by typing its free energy; ``tests/test_glm.py`` checks that the two
agree to 30 digits.

    replica equations --model examples/glm_logistic.py
    replica solve --model examples/glm_logistic.py --alpha 2 --lam 1/10 --eta 9/10 --json
"""

from replica.glm import ERM, Logistic, Probit, Ridge, Teacher, simulation_of

MODEL = ERM("glm_logistic", loss=Logistic(), penalty=Ridge("lam"),
            teacher=Teacher(Probit("eta")),
            title="Ridge logistic regression on a probit teacher (from its parts)")
SIMULATION = simulation_of(MODEL)  # generated from the same parts (replica.glm.simulation)
