r"""The LASSO on a sparse Gauss--Bernoulli teacher, declared from its parts with
:func:`replica.glm.ERM` (square loss, :math:`\ell_1` penalty, linear channel with noise
:math:`\sigma`, Gauss--Bernoulli prior of sparsity :math:`\varepsilon`). The hand-written
``examples/lasso.py`` is the independent check (``tests/test_glm.py``).

    replica solve --model examples/glm_lasso.py --alpha 1/2 --eps 1/10 --lam 1/2 --sigma 1/10
"""

from replica.glm import ERM, GaussBernoulli, L1, Linear, Square, Teacher, simulation_of

MODEL = ERM("glm_lasso", loss=Square(), penalty=L1("lam"),
            teacher=Teacher(Linear("sigma"), prior=GaussBernoulli("eps")))
SIMULATION = simulation_of(MODEL)  # generated from the same parts (replica.glm.simulation)
