r"""Huber regression with a ridge penalty on a ReLU teacher
:math:`y = \max(0, u) + \sigma\varepsilon`, declared from its parts with
:func:`replica.glm.ERM`. The envelope's average over the two sides of the teacher field is one
Gaussian integral per side (the loss is even: the label average is derived by conditioning on
the residual); ``tests/test_glm_relu.py`` checks it against the fixed-point equations written
out by hand over the half-lines, the square-loss limit of a large threshold, and the simulation.

    replica solve --model examples/glm_relu_huber.py --alpha 2 --lam 1/10 --sigma 1/2 --delta 1
    replica simulate --model examples/glm_relu_huber.py --alpha 2 --lam 1/10 --sigma 1/2 \
        --delta 1 --d 300 --seeds 8 --json
"""

from replica.glm import ERM, Huber, ReLU, Ridge, Teacher, simulation_of

MODEL = ERM("glm_relu_huber", loss=Huber("delta"), penalty=Ridge("lam"),
            teacher=Teacher(ReLU("sigma")))
SIMULATION = simulation_of(MODEL)
