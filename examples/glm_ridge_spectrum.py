r"""Ridge regression on Gaussian covariates with a power-law spectrum, declared from its parts:
:func:`replica.glm.ERM` with :class:`replica.glm.Covariates` (``--covariance SPEC`` a diagonal
input covariance, ``--teacher SPEC`` the teacher's power per coordinate, ``--d`` their
dimension). The free energy is derived from the parts (the penalty's scalar problem at the
curvature :math:`\hat Vc` of each coordinate, averaged over the spectrum); it equals the
hand-written Gaussian covariate model ``examples/structured_teacher.py`` and the
deterministic-equivalent ridge risk (``tests/test_glm_covariates.py``). The same declaration
with ``Logistic()`` and ``Probit("eta")`` gives logistic regression on these covariates.

    replica solve --model examples/glm_ridge_spectrum.py --alpha 2 --lam 1/10 --sigma 1/2 \
        --d 100 --covariance powerlaw:1 --teacher powerlaw:2
    replica simulate --model examples/glm_ridge_spectrum.py --alpha 2 --lam 1/10 --sigma 1/2 \
        --d 100 --covariance powerlaw:1 --teacher powerlaw:2 --seeds 10
"""

from replica.glm import ERM, Covariates, Linear, Ridge, Square, Teacher, simulation_of

MODEL = ERM("glm_ridge_spectrum", loss=Square(), penalty=Ridge("lam"),
            teacher=Teacher(Linear("sigma")), covariates=Covariates())
SIMULATION = simulation_of(MODEL)
