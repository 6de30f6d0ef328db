r"""Ridge regression with a structured teacher: the Gaussian covariate model behind the spectral
learning curves of kernel regression.

Data as in ``ridge_regression.py`` -- :math:`x \sim N(0, C)`, labels
:math:`y = \langle w, x\rangle/\sqrt d + \sigma\varepsilon`, :math:`n = \alpha d` samples, ridge
estimator :math:`\hat w` -- but the teacher has its own covariance, :math:`w \sim N(0, T)` with
:math:`T` diagonal in the eigenbasis of :math:`C` (``--teacher SPEC``; a power law models a target
function whose power decays along the kernel's eigenfunctions). This is the setting of the
spectral theory of kernel ridge regression (Bordelon, Canatar & Pehlevan, ICML 2020; Canatar,
Bordelon & Pehlevan, Nat. Commun. 12, 2914, 2021), here as a replica free energy:

.. math::
    \Phi = -m\hat m + \tfrac12 q\hat V - \tfrac12 V\hat q
           + \tfrac12\Big\langle\frac{\hat m^2 c^2 t + \hat q c}{\lambda + \hat V c}\Big\rangle
           - \frac{\alpha}{2}\,\frac{\langle c t\rangle - 2m + q + \sigma^2}{1 + V},

the average over the pairs :math:`(c, t)` of eigenvalues of :math:`C` and diagonal entries of
:math:`T` (the teacher's covariance enters the entropic part through
:math:`\mathbb E\,b b^\top = \hat m^2 CTC + \hat q C` for the field
:math:`b = \hat m Cw + \sqrt{\hat q}\,C^{1/2}\xi`). Test error
:math:`\sigma^2 + \langle c t\rangle - 2m + q`. The published closed form is not used here: the
tests compare with it.

    replica solve --model examples/structured_teacher.py --alpha 2 --lam 1/100 --sigma 1/10 \
        --d 50 --covariance powerlaw:1 --teacher powerlaw:2
"""

import sympy

from replica.modeling import LAMBDA_I, MU_I, Parameter, SaddlePointModel, avg

alpha, lam = sympy.symbols("alpha lam", positive=True)
sigma = sympy.Symbol("sigma", nonnegative=True)
m, q, V = sympy.symbols("m q V", real=True)
mhat, qhat, Vhat = sympy.symbols("mhat qhat Vhat", real=True)
c, t = LAMBDA_I, MU_I  # eigenvalue of C, teacher power along that eigenvector

ERROR = avg(c * t) - 2 * m + q + sigma**2

MODEL = SaddlePointModel(
    "structured_teacher",
    title="Ridge regression with a structured teacher (Gaussian covariate model)",
    free_energy=(-m * mhat + q * Vhat / 2 - V * qhat / 2
                 + avg((mhat**2 * c**2 * t + qhat * c) / (lam + Vhat * c)) / 2
                 - alpha * ERROR / (2 * (1 + V))),
    pairs=[(m, mhat), (q, Vhat), (V, qhat)],
    parameters=[
        Parameter("alpha", "samples per dimension n/d"),
        Parameter("lam", "ridge penalty (objective sum of squares + lam |w|^2)"),
        Parameter("sigma", "label-noise standard deviation", domain="nonnegative"),
        Parameter("d", "dimension of the covariance SPECs", domain="positive_integer",
                  default=1),
        Parameter("covariance", "input covariance SPEC C", domain="covariance",
                  default="identity"),
        Parameter("teacher", "teacher covariance SPEC T (diagonal in C's eigenbasis)",
                  domain="covariance", default="identity"),
    ],
    spectrum=("covariance", "teacher"),
    observables={"errors": {"test": sigma**2 + avg(c * t) - 2 * m + q,
                            "train": ERROR / (1 + V) ** 2}},
    start={m: sympy.Rational(1, 2), q: sympy.Rational(1, 2), V: 1},
    positive_unknowns=True,
    admissible=[(V, "V > 0")],
    symbol_names={lam: r"\lambda", c: "c_i", t: "t_i"},
)
