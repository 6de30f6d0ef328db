r"""The low-rank model tested on tasks that lie only partly in the pretraining subspace.

The low-rank model (linear attention pretrained on tasks in a random r-dimensional subspace of
:math:`\mathbb R^D`, :math:`\rho = r/D`) is evaluated in its paper on three task laws: the
pretraining tasks (TM), new tasks in the subspace (IDG) and isotropic tasks (ODG). Here a test
task puts a fraction :math:`\phi` of its power outside the subspace:

.. math:: w = w_\parallel + w_\perp,\qquad
          \mathbb E w_\parallel w_\parallel^\top = (1-\phi)\tfrac{D}{r}P,\qquad
          \mathbb E w_\perp w_\perp^\top = \phi\tfrac{D}{D-r}(I-P),

(:math:`P` the projector on the subspace; :math:`\mathbb E\|w\|^2 = D`), so :math:`\phi = 0` is
IDG and :math:`\phi = 1-\rho` is ODG. The test error is linear in the task covariance, so it
needs the overlaps of :math:`\Gamma` on the two parts: on the subspace :math:`(m_0, q_0)`, and on
its complement, from :math:`\bar m = \rho m_0 + (1-\rho)m_\perp` and
:math:`\bar q = \rho q_0 + (1-\rho)q_\perp`,

.. math:: m_\perp = \frac{\bar m - \rho m_0}{1-\rho} = 0,\qquad
          q_\perp = \frac{\bar q - \rho q_0}{1-\rho},

(:math:`m_0 = \bar m/\rho` at the saddle point: :math:`\Gamma` learns nothing outside the
subspace), and

.. math:: \varepsilon_\phi = \tilde\sigma^2 + 1 - 2(1-\phi)m_0 + (1-\phi)q_0 + \phi q_\perp
          + \frac{1+\tilde\sigma^2}{\tilde\alpha}\bar q .

The saddle point is the low-rank model's own: this file reuses its free energy, pairings and
alias from :mod:`replica.models.lowrank`, and gives its two spectral functions their closed forms.

    replica solve --model examples/lowrank_partial_overlap.py --alpha 2 --tau 9/4 \
        --kappa 3/2 --rho 1/2 --sigma 3/10 --phi 1/4
"""

import sympy

from replica.modeling import Alias, Parameter, Rule, SameAs, SaddlePointModel
from replica.models import lowrank as lr
from replica.spectra import lowrank_stieltjes_expr, lowrank_stieltjes_tilde_expr

phi = sympy.Symbol("phi", nonnegative=True)
kappa, rho = lr.kappa, lr.rho

M_PERP = (lr.MBAR - rho * lr.M0) / (1 - rho)
Q_PERP = (lr.qbar - rho * lr.Q0) / (1 - rho)
M_PHI = (1 - phi) * lr.M0 + phi * M_PERP
Q_PHI = (1 - phi) * lr.Q0 + phi * Q_PERP
ETEST = (1 + lr.sigma_test**2) / lr.alpha_test

MODEL = SaddlePointModel(
    "lowrank_partial_overlap",
    title="Low-rank tasks, tested on tasks partly outside the pretraining subspace",
    free_energy=lr.FREE_ENERGY, pairs=lr.PAIRS,
    aliases=[Alias(lr.z, lr.Z_DEFINITION, lr.lam)],
    parameters=[
        Parameter("alpha", "context length ratio L/D"),
        Parameter("tau", "pretraining prompts M/D^2"),
        Parameter("kappa", "distinct pretraining tasks M0/D"),
        Parameter("rho", "task-rank ratio r/D, in (0, 1)", domain="unit_interval"),
        Parameter("sigma", "pretraining label-noise standard deviation", domain="nonnegative"),
        Parameter("lam", "ridge per distinct task", domain="nonnegative", default=0),
        Parameter("phi", "fraction of the test task's power outside the subspace, in [0, 1]",
                  domain="nonnegative"),
        Parameter("alpha_test", "test context length ratio", default=SameAs("alpha")),
        Parameter("sigma_test", "test label-noise standard deviation", domain="nonnegative",
                  default=0),
    ],
    rules=[Rule("rho", lambda p: p.rho >= 1, "must be < 1 (the subspace has a complement)"),
           Rule("phi", lambda p: p.phi > 1, "must lie in [0, 1]"),
           Rule("lam", lambda p: (p.lam == 0) & (p.tau <= 1), "lam = 0 needs tau > 1")],
    spectral={lr.G: lambda w: lowrank_stieltjes_expr(w, kappa, rho),
              lr.GT: lambda w: lowrank_stieltjes_tilde_expr(w, kappa, rho)},
    observables={
        "overlaps": {"mbar": lr.MBAR, "m0": lr.M0, "q0": lr.Q0, "m_perp": M_PERP,
                     "q_perp": Q_PERP},
        "errors": {"e_phi": lr.sigma_test**2 + 1 - 2 * M_PHI + Q_PHI + ETEST * lr.qbar,
                   "idg": lr.error_expr("idg"), "odg": lr.error_expr("odg")},
    },
    admissible=[(-lr.z, "z < 0")],
    positive_unknowns=True,
    symbols={"lam": lr.lam},
    symbol_names={**lr.SYMBOL_NAMES, phi: r"\phi"},
)
