"""How the built-in models are simulated: each one's :class:`~replica.capabilities.LinearAttentionICL`
declaration (linear attention trained by ridge regression on in-context regression tasks; what
differs between the models -- the task law, the noise convention, the errors, the options -- is
data here, so that :mod:`replica.simulate` knows no model by name). The registry offers them as
each built-in model's ``SIMULATION`` (:mod:`replica.registry`); a worker process looks them up
here by name."""

from __future__ import annotations

from ..capabilities import LinearAttentionICL, Option

#: ``--rho`` of the papers A/B: the noise variance.
_NOISE_VARIANCE = Option("rho", "label-noise VARIANCE (papers A/B notation; not the low-rank "
                                "rank ratio)")


def _lam(normalisation: str) -> Option:
    """``--lam``, with the normalisation of the model's objective."""
    return Option("lam", f"ridge lambda (default 0: ridgeless limit; {normalisation})",
                  required=False, default="0")


def _common(*noise: Option, normalisation: str) -> tuple:
    """``--alpha``, ``--tau``, ``--kappa``, the noise options and ``--lam``, in this order."""
    return (Option("alpha", "context length ratio l/d"),
            Option("tau", "pretraining contexts n/d^2"),
            Option("kappa", "task diversity k/d ('inf': a fresh task per context)"),
            *noise, _lam(normalisation))


_ALPHA_TEST = Option("alpha_test", "test context length ratio (default alpha)", required=False,
                     scored=True)


_ISOTROPIC = LinearAttentionICL(
    help="paper B: isotropic tasks (arXiv 2405.11751)",
    options=_common(_NOISE_VARIANCE, normalisation="normalisation (n/d) lambda"),
    tasks="gaussian", noise="rho", noise_scale="variance", summary=True, ridge="contexts",
    errors=(("e_icl", "test", "test"), ("e_idg", "pretraining", "train")),
    score_errors=("e_icl",),
    task_laws=("gaussian", "sphere"),
    task_law_help="pretraining task law: N(0, I) (default) or uniform on the sphere |w| = "
                  "sqrt(d) (paper B's code)",
)


_ALIGNMENT = LinearAttentionICL(
    help="paper A: tasks N(0, C_train), tests N(0, C_test) (arXiv 2509.26551)",
    options=_common(_NOISE_VARIANCE, normalisation="normalisation (n/d) lambda") + (
        Option("train", "C_train SPEC: identity, powerlaw:P, lowrank:F[:piano], spike:J, piano, "
                        "file:PATH[:raw]"),
        Option("test", "C_test SPEC (same forms)", scored=True),
        _ALPHA_TEST),
    tasks="gaussian", train_covariance="train", test_covariance="test",
    noise="rho", noise_scale="variance", summary=True, ridge="contexts",
    errors=(("e_icl", "test", "test"), ("e_idg", "pretraining", "train")),
    score_parameters=("test", "alpha_test"), score_errors=("e_icl",),
    theory_at_d=True,
    notes=("e_idg theory = tau*q rests on the ridge estimator's stated moments, as e_icl does",),
)


_LOWRANK = LinearAttentionICL(
    help="low-rank tasks (arXiv 2510.04548): TM/IDG/ODG errors and order parameters",
    options=_common(Option("rho", "task-rank ratio r/D in (0, 1]"),
                        Option("sigma", "label-noise standard deviation"),
                        normalisation="lowrank normalisation lambda*M0/2") + (
        _ALPHA_TEST,
        Option("sigma_test", "test label-noise standard deviation (default 0)", required=False,
               default="0"),
        Option("test", "test-task law relative to the task subspace, reported as the error "
                       "'test': idg (default), outside:PHI, shared:F, rotation:DEGREES",
               required=False, default="idg", scored=True)),
    tasks="subspace", rank="rho", test_law="test",
    noise="sigma", noise_scale="std", test_noise="sigma_test", summary=False, ridge="tasks",
    errors=(("tm", "pretraining", "test"), ("idg", "subspace", "test"),
            ("odg", "fresh-subspace", "test"), ("test", "test", "test")),
    score_parameters=("test", "alpha_test"), score_errors=("tm", "idg", "odg", "test"),
    order_parameters=("q", "m", "qbar", "mbar", "q0", "m0"),
    finite_kappa="the lowrank simulation needs a finite number of training tasks (TM error, "
                 "lambda*M0 ridge)",
)


SIMULATIONS = {"alignment": _ALIGNMENT, "isotropic": _ISOTROPIC, "lowrank": _LOWRANK}
"""Each built-in model's simulation, by name."""
