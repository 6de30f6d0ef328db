r"""Ridge regression on a noisy linear teacher, declared from its parts with
:func:`replica.glm.ERM` (square loss, ridge penalty, linear channel, Gaussian prior), with the
simulation generated from the same parts. ``examples/ridge_regression.py`` (identity covariance)
is the hand-written check: same sampling convention, the same estimator
(``tests/test_glm_simulation.py``).

    replica solve --model examples/glm_ridge.py --alpha 2 --lam 1/10 --sigma 1/2
    replica simulate --model examples/glm_ridge.py --alpha 2 --lam 1/10 --sigma 1/2 \
        --d 200 --seeds 10 --json
"""

from replica.glm import ERM, Linear, Ridge, Square, Teacher, simulation_of

MODEL = ERM("glm_ridge", loss=Square(), penalty=Ridge("lam"), teacher=Teacher(Linear("sigma")))
SIMULATION = simulation_of(MODEL)
