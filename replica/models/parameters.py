"""The parameter schemas of the built-in models (and the low-rank model's reported names).

They live apart from the models' equations so that the command line can build its parsers (and
print ``--help``) without importing SymPy; each model's declaration
(:mod:`replica.models.lowrank_problem`, :mod:`replica.models.alignment_problem`,
:mod:`replica.models.isotropic_problem`) uses its schema from here. The low-rank model's reported
names are here too, shared by its declaration and its equations (:mod:`replica.models.lowrank`). A
model file of one's own declares its schema beside its equations.

Notation differs between the papers, and each model keeps its paper's: in ``alignment`` and
``isotropic`` ``rho`` is the label-noise **variance**; in ``lowrank`` ``rho`` is the task-**rank**
ratio ``r/D`` and ``sigma`` the noise **standard deviation**.
"""

from __future__ import annotations

from fractions import Fraction

from ..errors import ParameterError
from ..params import compact_str, exact_str, parse_exact
from ..problem import Parameter, Rule, SameAs, SpecDomain, Schema

TAU_ONE = ("the ridgeless theory diverges at tau = 1 (interpolation threshold); pass --lam > 0")

_ALPHA = Parameter("alpha", "context length ratio l/d (L/D)", notation=r"\alpha")
_TAU = Parameter("tau", "pretraining contexts n/d^2 (M/D^2)", notation=r"\tau")
_LAM = Parameter("lam", "ridge lambda", "nonnegative", default="0", notation=r"\lambda")


class SubspaceTest(Fraction):
    r"""A low-rank test-task law, relative to the pretraining task subspace: the number is the
    fraction :math:`\phi` of the test task's power outside the subspace; ``spec`` holds the text
    it was read from, ``kind`` its kind and ``complement_rank`` the rank, in units of :math:`r`, the
    law needs in the complement (checked against :math:`D - r`)."""

    def __new__(cls, phi, spec: str, kind: str, complement_rank=0):
        self = super().__new__(cls, phi)
        self.spec, self.kind, self.complement_rank = spec, kind, Fraction(complement_rank)
        return self

    def __reduce__(self):  # pickles (process pools) as what it is
        return (SubspaceTest, (Fraction(self), self.spec, self.kind, self.complement_rank))


_SIN2_DEGREES = {0: Fraction(0), 30: Fraction(1, 4), 45: Fraction(1, 2), 60: Fraction(3, 4),
                 90: Fraction(1)}
"""sin^2 of the angles (degrees) in [0, 90] where it is rational (Niven's theorem)."""

SUBSPACE_TEST_KINDS = "idg, outside:PHI, shared:F, rotation:DEGREES"


def parse_subspace_test(raw, option: str) -> SubspaceTest:
    r"""A test-task law relative to the task subspace :math:`P` (rank :math:`r`):

    * ``idg``: new tasks in the subspace, :math:`\mathbb E ww^\top = \frac Dr P`
      (:math:`\phi = 0`);
    * ``outside:PHI``: a fraction :math:`\phi` of the power outside, spread isotropically over
      the complement, :math:`(1-\phi)\frac Dr P + \phi\frac{D}{D-r}(I-P)`
      (:math:`\phi = 1-\rho` is the isotropic ODG law);
    * ``shared:F``: tasks in another rank-:math:`r` subspace that shares a fraction :math:`F`
      of its directions with :math:`P`, the others in the complement (:math:`\phi = 1-F`);
    * ``rotation:DEGREES``: the subspace with every direction rotated by the angle
      :math:`\theta` towards its own direction of the complement (:math:`\phi =
      \sin^2\theta`; only angles whose :math:`\sin^2` is rational: 0, 30, 45, 60, 90).

    The value is :math:`\phi`, exact."""
    if isinstance(raw, SubspaceTest):
        return raw
    if not isinstance(raw, str):
        raise ParameterError(option, f"must be a SPEC ({SUBSPACE_TEST_KINDS}), got {raw!r}")
    text = raw.strip().lower()
    if text == "idg":
        return SubspaceTest(0, "idg", "idg")
    kind, sep, arg = text.partition(":")
    if not sep or kind not in ("outside", "shared", "rotation"):
        raise ParameterError(option, f"unknown test law {raw!r} (choose {SUBSPACE_TEST_KINDS}; "
                                     "the TM, IDG and ODG errors are always reported)")
    value = parse_exact(arg, option)
    if kind == "outside":
        if not 0 <= value <= 1:
            raise ParameterError(option, "outside:PHI needs PHI in [0, 1], got "
                                         f"{compact_str(value)}")
        return SubspaceTest(value, f"outside:{exact_str(value)}", kind)
    if kind == "shared":
        if not 0 <= value <= 1:
            raise ParameterError(option, f"shared:F needs F in [0, 1], got {compact_str(value)}")
        return SubspaceTest(1 - value, f"shared:{exact_str(value)}", kind, 1 - value)
    if value not in _SIN2_DEGREES:
        raise ParameterError(option, f"rotation:{compact_str(value)}: sin^2 of the angle must be "
                                     "rational for an exact parameter (0, 30, 45, 60 or 90 "
                                     "degrees); for another angle theta pass outside:PHI with "
                                     "PHI = sin^2(theta), the same d = infinity theory")
    return SubspaceTest(_SIN2_DEGREES[value], f"rotation:{exact_str(value)}", kind,
                        1 if value else 0)


SUBSPACE_TEST = SpecDomain(parse_subspace_test, describe="a test-task law SPEC")


def _test_outside_needs_complement(p) -> bool:
    """A test law with power outside the subspace at rho = 1 (no complement), or one that needs
    more complement directions than D - r."""
    test = getattr(p, "test", None)
    if test is None:
        return False
    rank = test.complement_rank
    if hasattr(p.rho, "dtype"):  # a float64 grid: the float of the rank, not one Fraction per point
        rank = float(rank)  # (Fraction * float is float(Fraction) * float: the same values)
    return (test > 0) & (p.rho >= 1) | (rank * p.rho > 1 - p.rho)


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
        Parameter("test", "test-task law relative to the task subspace, reported as the error "
                          "'test': idg, outside:PHI (a fraction PHI of the power outside the "
                          "subspace), shared:F (a rank-r subspace sharing a fraction F of its "
                          "directions), rotation:DEGREES (0, 30, 45, 60, 90)", SUBSPACE_TEST,
                  default="idg", notation=r"\phi"),
    ],
    [
        Rule("test", _test_outside_needs_complement,
             "this test law needs room outside the task subspace: power outside it needs "
             "rho < 1, shared:F needs (1 - F) rho <= 1 - rho, a rotation needs rho <= 1/2"),
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
        Parameter("train", "C_train SPEC: identity, powerlaw:P, lowrank:F[:piano], spike:J, piano, "
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



def train_and_test(params):
    """``(train, test)``: the covariances of the alignment schema, whose spectral pairs the
    model's averages run over (one callable, shared by its declaration and its systems)."""
    return params.train, params.test


# -- reported names of the low-rank model (shared by its equations and its declaration) -------
LOWRANK_REPORTED_ORDER = ("q", "m", "chi", "qbar", "chibar", "qhat", "mhat", "chihat",
                          "qbarhat", "chibarhat", "z", "mbar", "m0", "q0")
"""The order parameters (and derived overlaps) the low-rank model reports, in order."""
LOWRANK_ERROR_KEYS = ("tm", "idg", "odg")
"""The three test protocols: task memorisation, in- and out-of-distribution generalisation."""
LOWRANK_TEST_KEY = "test"
"""The error under the ``--test`` law."""
LOWRANK_PART_KEYS = ("signal", "memorization", "structural", "noise")
"""The parts of each error's decomposition."""
LOWRANK_ALL_ERROR_KEYS = LOWRANK_ERROR_KEYS + (LOWRANK_TEST_KEY,)
"""The three protocols and the ``--test`` law."""
LOWRANK_REPORT_KEYS = (LOWRANK_REPORTED_ORDER + ("q_perp",) + LOWRANK_ALL_ERROR_KEYS
                       + tuple(f"{p}_{k}" for p in LOWRANK_ALL_ERROR_KEYS
                               for k in LOWRANK_PART_KEYS))
"""Keys of every reported value (``<protocol>_<part>`` for the decomposition)."""

SCHEMAS = {"alignment": ALIGNMENT, "isotropic": ISOTROPIC, "lowrank": LOWRANK}
"""The built-in models' schemas by model name."""


# --- what the built-in models state about replica symmetry and the free energy ----------------
from ..problem import Note, Stability  # noqa: E402  (grouped with what uses it)

RIDGE_STABILITY = Stability(
    exact="the estimator (linear attention trained by ridge regression) minimises a quadratic "
          "objective, the squared loss plus a ridge term lambda > 0: strictly convex, so its "
          "minimiser is unique, the zero-temperature Gibbs measure concentrates on it, two "
          "replicas coincide and the replica-symmetric saddle point is exact. At lambda = 0 "
          "(ridgeless) the objective is convex but not strictly; the estimator is the "
          "minimum-norm minimiser, the lambda -> 0+ limit of the unique ridge minimisers, "
          "itself unique, so the replica-symmetric description still holds for it",
    source="stated (convexity), not computed")
"""The stability the built-in models declare (:class:`~replica.problem.Stability`)."""

UNIFIED_FREE_ENERGY = (
    Note("free_energy: the replica-symmetric free energy (R1) of replica.derivations.unified "
         "(the low-rank model's, for any task covariance) at this solution, through the derived "
         "map z = -sigma, g = M, g' = -M' (noise variance rho, ridge lambda_R1 = tau lambda/"
         "kappa): the minimal training objective (1/2) sum (y - yhat)^2 + (n lambda/2d) "
         "|Gamma|_F^2 over the n = tau d^2 prompts (half of papers A/B's objective) divided by "
         "kappa d^2, as d -> oo; (R1) is stationary there, not minimal, in its ten variables "
         "(a saddle of index 5 at the low-rank golden points); 'min' ranks solutions"),
    Note("free_energy at kappa = inf: per kappa d^2 the minimal objective vanishes; reported as "
         "its limit 0", lambda p: p.kappa == float("inf")),
)
"""The notes of papers A and B on the free energy they report
(:func:`replica.models.alignment.free_energy_at_solution`)."""
