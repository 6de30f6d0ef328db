r"""Ridge regression on a ReLU teacher :math:`y = \max(0, u) + \sigma\varepsilon`, declared from
its parts with :func:`replica.glm.ERM`; the label average of the square loss is derived from the
channel's piecewise-linear link (half-line Gaussian moments). The simulation is generated from the
same parts.

    replica solve --model examples/glm_relu.py --alpha 2 --lam 1/10 --sigma 1/2
    replica simulate --model examples/glm_relu.py --alpha 2 --lam 1/10 --sigma 1/2 --d 200 \
        --seeds 10 --json
"""

from replica.glm import ERM, ReLU, Ridge, Square, Teacher, simulation_of

MODEL = ERM("glm_relu", loss=Square(), penalty=Ridge("lam"), teacher=Teacher(ReLU("sigma")))
SIMULATION = simulation_of(MODEL)
