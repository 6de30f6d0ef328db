r"""Paper A's model as the engine sees it: schema, variants, reported groups, values computed
from the covariances directly, and notes -- everything but the equations, which are in
:mod:`replica.models.alignment` and are built (from there) only when code has to be generated.

This module imports no SymPy: with the generated code and the systems' outlines in the disk cache
(:mod:`replica.numerics.outline`), a process solves paper A without importing it.
"""

from __future__ import annotations

import functools
import os

import mpmath

from ..problem import Direct, Note, Problem
from .parameters import ALIGNMENT as SCHEMA
from .parameters import RIDGE_STABILITY, UNIFIED_FREE_ENERGY
from .parameters import train_and_test

SOURCE_FILES = [os.path.join(os.path.dirname(os.path.abspath(__file__)), name)
                for name in ("alignment.py", "alignment_problem.py", "lowrank.py", "unified.py",
                              os.path.join("..", "symbolic", "deterministic_equivalent.py"))]
"""The files the expressions and this declaration come from (the code cache's key)."""

PART_KEYS = ("signal", "memorization", "structural", "noise")
"""The parts of E_ICL, in the order of the JSON ``decomposition`` (see the equations module)."""


def _system(variant: str):
    """The :class:`~replica.problem.System` of ``variant``, from the equations module (imported
    here, on first use: it builds the SymPy expressions)."""
    from . import alignment

    return alignment.system_of(variant)


# -- values computed from the covariances directly ----------------------------------------------
def _inverse_measure(params):
    """<C_test C_train^-1> (None for singular C_train), generated from INVERSE_MEASURE."""
    from ..spectra import spectral_pairs_mp

    if params.train.rank() != params.d:
        return None
    return _inverse_measure_evaluator().mp([], spectral_pairs_mp(params.train, params.test))[0]


@functools.lru_cache(maxsize=None)
def _inverse_measure_evaluator():
    """The evaluator of the equations module's ``INVERSE_MEASURE`` (its code cached on disk beside
    the systems', so that a solve does not build the expression)."""
    from ..symbolic.codegen import CodeCache, Evaluator, cache_key

    def build():
        from . import alignment

        return [alignment.INVERSE_MEASURE]

    return Evaluator(build=build, args=[], cache=CodeCache(cache_key("alignment-direct",
                                                                      SOURCE_FILES)),
                     name="inverse-measure")


def _inverse_measure_ball(params):
    """A ball containing <C_test C_train^-1>, from the same expression over the enclosed spectral
    pairs (``None`` for singular C_train)."""
    from ..spectra import spectral_pairs_ball

    if params.train.rank() != params.d:
        return None
    pairs = spectral_pairs_ball(params.train, params.test)
    return _inverse_measure_evaluator().arb([], pairs)[0]


def _cka_inverse(A, B, diag, entry, total, sqrt):
    """``[cka(A,B)/sqrt(cka(A,A) cka(B,B))]^{-1}`` with ``cka(A,B) = tr(HAHB)/(d-1)^2`` and the
    centring ``H = I - 11^T/d``; uses ``tr(HAHB) = tr(AB) - (2/d)(A1).(B1) + (1^T A 1)(1^T B 1)/d^2``.
    The arithmetic is passed in: ``diag(C)`` (a diagonal covariance's entries), ``entry(C, i, j)``
    (a full one's), ``total`` (a sum) and ``sqrt``, so that the same formula runs in mpmath and in
    ball arithmetic. ``None`` unless the centred alignment is (certainly) nonzero."""
    d = A.d

    def parts(C):
        if C.is_diagonal:
            v = diag(C)
            return ("diag", v, v, total(v))
        mat = [[entry(C, i, j) for j in range(d)] for i in range(d)]
        row = [total(r) for r in mat]
        return ("mat", mat, row, total(row))

    def at(X, i, j):
        if X[0] == "mat":
            return X[1][i][j]
        return X[1][i] if i == j else 0

    def trace_prod(X, Y):
        if X[0] == "diag" and Y[0] == "diag":
            return total([x * y for x, y in zip(X[1], Y[1])])
        return total([at(X, i, j) * at(Y, j, i) for i in range(d) for j in range(d)])

    def hsic(X, Y):
        return trace_prod(X, Y) - 2 * total([x * y for x, y in zip(X[2], Y[2])]) / d \
            + X[3] * Y[3] / d**2

    PA, PB = parts(A), parts(B)
    ab, aa, bb = hsic(PA, PB), hsic(PA, PA), hsic(PB, PB)
    if not (ab != 0 and aa > 0 and bb > 0):
        return None
    return sqrt(aa * bb) / ab


def cka_inverse_mp(A, B):
    """The inverse centred kernel alignment of ``A`` and ``B`` at the working precision (see
    :func:`_cka_inverse`); ``None`` when the centred alignment vanishes."""
    return _cka_inverse(A, B, lambda C: C.diag_mp(), lambda C, i, j: C.mat_entry_mp(i, j),
                        mpmath.fsum, mpmath.sqrt)


def cka_inverse_ball(params):
    """A ball containing the inverse centred kernel alignment (python-flint ``arb``): the exact
    covariance entries, summed in ball arithmetic."""
    from ..spectra import diagonal_balls, matrix_entry_ball
    from ..symbolic.codegen import NotEnclosable

    def total(xs):
        return sum(xs[1:], xs[0]) if xs else 0

    out = _cka_inverse(params.train, params.test, diagonal_balls, matrix_entry_ball, total,
                       lambda v: v.sqrt())
    if out is None and cka_inverse_mp(params.train, params.test) is not None:
        raise NotEnclosable("the centred alignment cannot be bounded away from zero")
    return out


NOTES = (
    Note("e_idg = tau*q (the error on prompts whose task was seen in pretraining) is derived for "
         "every C_train from the ridge estimator's stated mean and fluctuation, as e_icl is "
         "(replica appendix alignment)"),
    Note("ridge lambda > 0 uses lambda_tilde M = 1 - tau + tau*lambda/lambda_tilde, derived from "
         "the model in `replica appendix alignment` (it rests on the Gaussian equivalence of the "
         "design, stated there and checked on sampled contexts)", lambda p: p.lam > 0),
    Note("inverse measure <C_test C_train^-1> is undefined: C_train is singular",
         lambda p: p.train.rank() != p.d),
    Note("cka_inv is undefined: the centred alignment of C_train and C_test is 0",
         when_values=lambda v: v.get("cka_inv") is None),
    Note("non-commuting covariances: mu_i = u_i^T C_test u_i in C_train's eigenbasis",
         lambda p: not (p.train.is_diagonal and p.test.is_diagonal)),
)

_KINF = float("inf")
PROBLEM = Problem(
    "alignment", SCHEMA, title="ICL error for arbitrary C_train, C_test (arXiv 2509.26551)",
    variants=[
        ("interpolating_kappa_infinite",
         lambda p: (p.kappa == _KINF) & (p.lam == 0) & (p.tau > 1)),
        ("ridge_kappa_infinite", lambda p: p.kappa == _KINF),
        ("interpolating", lambda p: (p.lam == 0) & (p.tau > 1)),
        ("ridge", None),
    ],
    systems=_system, spectrum=train_and_test,
    groups={"errors": ["e_icl", "e_scalar", "e_misalign", "e_idg", "e_tm"],
            "intermediates": ["q", "sigma", "lambda_tilde", "M", "M_prime"],
            "measures": ["e_misalign", "resolvent", "inverse", "cka_inv"],
            "decomposition": {"e_icl": {k: f"e_icl_{k}" for k in PART_KEYS}},
            "free_energy": ["free_energy"]},
    direct={"inverse": Direct(_inverse_measure, enclose=_inverse_measure_ball),
            "cka_inv": Direct(lambda p: cka_inverse_mp(p.train, p.test),
                              enclose=cka_inverse_ball)},
    nonnegative=("e_icl", "e_scalar", "e_misalign", "e_idg", "e_tm"),
    notes=NOTES + UNIFIED_FREE_ENERGY, source_files=SOURCE_FILES, guard_digits=5,
    free_energy="free_energy", extremum="min",
    description="Paper A's asymptotic ICL error for arbitrary pretraining and test task "
                "covariances.",
    stability=RIDGE_STABILITY)
"""Paper A's theory, declared."""
