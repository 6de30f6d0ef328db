"""The parameter schemas of the built-in models.

They live apart from the models' equations so that the command line can build its parsers (and
print ``--help``) without importing SymPy; each model's declaration (:mod:`replica.models.lowrank`,
:mod:`replica.models.alignment`, :mod:`replica.models.isotropic`) uses its schema from here. A
model file of one's own declares its schema beside its equations.

Notation differs between the papers, and each model keeps its paper's: in ``alignment`` and
``isotropic`` ``rho`` is the label-noise **variance**; in ``lowrank`` ``rho`` is the task-**rank**
ratio ``r/D`` and ``sigma`` the noise **standard deviation**.
"""

from __future__ import annotations

from ..problem import Parameter, Rule, SameAs, Schema

TAU_ONE = ("the ridgeless theory diverges at tau = 1 (interpolation threshold); pass --lam > 0")

_ALPHA = Parameter("alpha", "context length ratio l/d (L/D)", notation=r"\alpha")
_TAU = Parameter("tau", "pretraining contexts n/d^2 (M/D^2)", notation=r"\tau")
_LAM = Parameter("lam", "ridge lambda", "nonnegative", default="0", notation=r"\lambda")

LOWRANK = Schema(
    [
        _ALPHA,
        _TAU,
        Parameter("kappa", "distinct pretraining tasks M0/D ('inf': a fresh task per prompt; "
                           "needs --lam 0)", "positive_or_inf", notation=r"\kappa"),
        Parameter("rho", "task-RANK RATIO r/D in (0, 1] (NOT the noise variance of papers A/B)",
                  "unit_interval", notation=r"\rho",
                  domain_message="the task-rank ratio r/D must lie in (0, 1]"),
        Parameter("sigma", "pretraining label-noise STANDARD DEVIATION (variance sigma^2)",
                  "nonnegative", notation=r"\sigma",
                  domain_message="the noise standard deviation must be >= 0"),
        Parameter("lam", "ridge lambda per distinct task (objective lambda*M0*||Gamma||^2/2)",
                  "nonnegative", default="0", notation=r"\lambda"),
        Parameter("alpha_test", "test context length ratio", default=SameAs("alpha"),
                  notation=r"\tilde\alpha"),
        Parameter("sigma_test", "test label-noise standard deviation", "nonnegative",
                  default="0", notation=r"\tilde\sigma",
                  domain_message="the test noise standard deviation must be >= 0"),
    ],
    [
        Rule("lam", lambda p: (p.lam == 0) & (p.tau < 1),
             "no admissible solution at lambda = 0 with tau < 1 (qhat = (tau-1)/kappa < 0): "
             "pass --lam > 0"),
        Rule("tau", lambda p: (p.lam == 0) & (p.tau == 1), TAU_ONE),
        Rule("lam", lambda p: (p.kappa == float("inf")) & (p.lam > 0),
             "with --kappa inf the per-task ridge lambda*M0 is infinite (Gamma = 0); the "
             "kappa -> inf limit exists only at --lam 0"),
    ],
)
"""Low-rank tasks (Takanami, Takahashi, Kabashima, arXiv 2510.04548)."""

_COMMON_AB = [
    _ALPHA,
    _TAU,
    Parameter("kappa", "task diversity k/d ('inf': a fresh task per context)", "positive_or_inf",
              notation=r"\kappa"),
    Parameter("rho", "label-noise VARIANCE (papers A/B notation; not the low-rank rank ratio)",
              "nonnegative", notation=r"\rho"),
    _LAM,
]
_TAU_RULE = Rule("tau", lambda p: (p.lam == 0) & (p.tau == 1), TAU_ONE)

ALIGNMENT = Schema(
    _COMMON_AB + [
        Parameter("d", "token dimension (size of the covariances)", "positive_integer",
                  notation="d"),
        Parameter("train", "C_train SPEC: identity, powerlaw:P, lowrank:F, spike:J, piano, "
                           "file:PATH[:raw]", "covariance", default="identity",
                  notation=r"C_{\rm train}"),
        Parameter("test", "C_test SPEC (same forms as --train)", "covariance",
                  default="identity", notation=r"C_{\rm test}"),
        Parameter("alpha_test", "test context length ratio", default=SameAs("alpha"),
                  notation=r"\alpha_{\rm test}"),
    ],
    [_TAU_RULE],
)
"""Paper A: arbitrary pretraining and test task covariances (Letey et al., arXiv 2509.26551)."""

ISOTROPIC = Schema(_COMMON_AB, [_TAU_RULE])
"""Paper B: isotropic tasks, closed forms (Lu et al., arXiv 2405.11751)."""

SCHEMAS = {"alignment": ALIGNMENT, "isotropic": ISOTROPIC, "lowrank": LOWRANK}
"""The built-in models' schemas by model name."""
