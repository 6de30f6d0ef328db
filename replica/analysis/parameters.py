"""The parameters of the analyses -- the papers' transition searches and fixed-axis phase diagrams
-- declared like a model's (:mod:`replica.problem`): domains, defaults and rules in the one place
every parameter of the package is checked (:meth:`replica.problem.Schema.parse`), for the
functions of :mod:`replica.analysis.transitions` and :mod:`replica.analysis.phase_diagram` and
their exit-2 messages. No SymPy is imported here.

``alpha`` defaults to ``inf``: the transition of the ``alpha -> oo`` limit; a finite ``alpha``
asks for the finite-``alpha`` crossover.
"""

from __future__ import annotations

from ..problem import Parameter, Rule, Schema

SHARP_TAU = ("a sharp transition needs tau > 1 (for tau <= 1 the effective ridge lambda_tilde "
             "stays finite as alpha -> oo)")
_TAU = Parameter("tau", "pretraining contexts n/d^2 (> 1)")
_ALPHA = Parameter("alpha", "finite context length: locate the crossover (default inf: the "
                            "alpha -> oo transition)", "positive_or_inf", default="inf")
_NOISE = Parameter("rho", "label-noise variance", "nonnegative")
_TAU_RULE = Rule("tau", lambda p: p.tau <= 1, SHARP_TAU)

ALIGNMENT = Schema([Parameter("rank_fraction", "F = rank(C_train)/d, in (0, 1]",
                              "unit_interval"), _TAU, _NOISE, _ALPHA], [_TAU_RULE])
"""kappa_c of paper A with C_train = lowrank:F."""

ISOTROPIC = Schema([_TAU, _NOISE, _ALPHA], [_TAU_RULE])
"""kappa_c of paper B."""

INTERPOLATION_PEAK = Schema(
    [Parameter("alpha", "context length ratio"),
     Parameter("kappa", "task diversity ('inf' allowed)", "positive_or_inf"), _NOISE,
     Parameter("lam", "ridge lambda (> 0)", "nonnegative")],
    [Rule("lam", lambda p: p.lam == 0, "the ridgeless ICL error diverges at tau = 1 (pole of "
                                       "q); pass --lam > 0 to locate the finite interpolation "
                                       "peak")])
"""tau_peak of paper B's ridge ICL error."""

LOWRANK = Schema(
    [Parameter("kappa", "task diversity M0/D, in (0, 1)"), _TAU,
     Parameter("sigma", "label-noise standard deviation", "nonnegative"), _ALPHA],
    [_TAU_RULE,
     Rule("kappa", lambda p: p.kappa >= 1, "the transition rho_c = kappa lies outside the rank "
                                          "range (0, 1] when kappa >= 1: every rho is "
                                          "task-rich")])
"""rho_c of the low-rank model (rho is the task-rank ratio there)."""


# --- the papers' fixed-axis phase diagrams (replica phase-diagram MODEL -o DIR) ----------------
TAU_ONE = ("the ridgeless (lambda = 0) diagram diverges at tau = 1, the interpolation threshold: "
           "choose tau != 1")
_TAU_NOT_ONE = Rule("tau", lambda p: p.tau == 1, TAU_ONE)

ISOTROPIC_DIAGRAM = Schema([Parameter("tau", "pretraining contexts n/d^2", default="0.5")],
                           [_TAU_NOT_ONE])
"""Paper B's region of non-monotone error over (kappa, rho) (``--error`` chooses the error)."""

ALIGNMENT_DIAGRAM = Schema(
    [Parameter("d", "dimension of the power-law spectra", "positive_integer", default="32"),
     Parameter("alpha", "context length ratio", default="1"),
     Parameter("tau", "pretraining contexts n/d^2", default="4"),
     Parameter("rho", "label-noise variance", "nonnegative", default="0.01"),
     Parameter("p_test", "test power-law exponent", default="0.9")],
    [_TAU_NOT_ONE])
"""Paper A's power-law specialisation diagram."""

LOWRANK_DIAGRAM = Schema(
    [Parameter("tau", "pretraining prompts M/D^2 (> 1)", default="9/4"),
     Parameter("sigma", "label-noise standard deviation", "nonnegative", default="3/10")],
    [Rule("tau", lambda p: p.tau <= 1, "the lambda = 0 diagram needs tau > 1")])
"""The low-rank (kappa, rho) diagram at lambda = 0 (``--alphas`` lists the crossover lines)."""
