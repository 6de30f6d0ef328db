r"""Paper A's equations as the paper states them, typed: the independent check of the alignment
solver, whose equations are computed from the unified free energy
(:mod:`replica.models.alignment`, :mod:`replica.models.unified`).

Letey, Zavatone-Veth, Lu, Pehlevan, *Pretrain--Test Task Alignment Governs Generalization in
In-Context Learning*, arXiv:2509.26551 (``rho`` the label-noise variance, ``sigma`` the effective
noise, spectral averages ``<.>`` over the eigenvalues ``lambda_i`` of ``C_train`` and the diagonal
``mu_i`` of ``C_test`` in that eigenbasis). The resolvent self-consistency (eq. (17)) and its
derivative, the effective noise and the ridge equation, q (C.14), e_scalar (C.16), K and
e_misalign, and the same quantities written with the coefficient ``a`` of the deterministic
equivalent as an independent variable (the forms the numerics of the original implementation
used). The symbols are the alignment model's. Nothing in the solver reads this module:
``tests/test_alignment_generated.py`` checks that the solver's computed equations equal these
identically (SymPy) and to 30 digits at solved points, and the derivations of
``replica.derivations.alignment`` and :mod:`replica.derivations.alignment_from_model` derive
them from the model.
"""

from __future__ import annotations

import sympy

from ..models.alignment import (M, M_prime, a_coeff, a_prime, alpha, alpha_test, c_test,
                                c_train, kappa, lam, lambda_tilde, q, rho, sigma, tau, z)
from ..symbolic import LAMBDA_I, MU_I, avg

A_COEFF = 1 - 1 / kappa + z * M / kappa
"""a(z) = 1 - 1/kappa + z M/kappa."""

F_I = 1 / (A_COEFF * LAMBDA_I + z)
"""Eigenvalue i of the deterministic equivalent F_kappa(z) of (R_k + z I)^{-1}."""

SELF_CONSISTENCY = M - avg(F_I)
"""Paper eq. (17): zero at M = M_kappa(z)."""

M_OF_A = (1 - kappa * (1 - a_coeff)) / z
"""M in terms of the coefficient a (inverting a = 1 - 1/kappa + z M/kappa)."""

SELF_CONSISTENCY_A = sympy.expand(z * SELF_CONSISTENCY.subs(M, M_OF_A)).replace(
    lambda e: isinstance(e, type(avg(F_I))), lambda e: avg(sympy.cancel(e.args[0])))
"""z times eq. (17) with the unknown a instead of M: kappa(a - 1) + 1 - <z/(a lambda + z)> = 0.
Increasing in a on (max(0, 1 - 1/kappa), 1]; solving for a keeps full relative precision when
a is tiny (the collapsed phase at small z, where M = (1-kappa)/z + O(1) cancels)."""

M_PRIME_CLOSED = -(avg(F_I**2) + M / kappa * avg(LAMBDA_I * F_I**2)) / \
    (1 + z / kappa * avg(LAMBDA_I * F_I**2))
"""dM/dz from implicit differentiation of eq. (17)."""

A_PRIME = (M + z * M_prime) / kappa
F_PRIME_I = -(A_PRIME * LAMBDA_I + 1) * F_I**2
"""Eigenvalue i of F'_kappa(z) = -F [ (M + z M')/kappa C_train + I ] F."""

SIGMA = (rho + c_train) / alpha + lambda_tilde
"""Effective noise sigma = (rho + c_train)/alpha + lambda_tilde."""

RIDGE_EQUATION = lambda_tilde**2 * M - (1 - tau) * lambda_tilde - tau * lam
"""lambda_tilde M(sigma) = 1 - tau + tau lambda/lambda_tilde, multiplied by lambda_tilde."""

RIDGELESS_EQUATION = lambda_tilde * M - (1 - tau)
"""tau < 1, lambda -> 0+: lambda_tilde M(sigma) = 1 - tau."""

RIDGE_ROOT_EQUATION = sympy.expand(RIDGE_EQUATION / lambda_tilde)
"""The form of :data:`RIDGE_EQUATION` that is solved: lambda_tilde M - (1 - tau) -
tau lambda/lambda_tilde, increasing in lambda_tilde > 0 (lambda_tilde M(sigma(lambda_tilde))
increases and -tau lambda/lambda_tilde increases), so its root is unique; at lambda = 0 it is
:data:`RIDGELESS_EQUATION`."""

Q = (rho + sigma - sigma**2 * M - lambda_tilde * (1 - 2 * sigma * M - sigma**2 * M_prime)) / \
    (tau - 1 + 2 * lambda_tilde * M + lambda_tilde**2 * M_prime)
"""Pretraining-error term q (paper (C.14)), with M, M' at z = sigma."""

E_SCALAR = rho + (c_test + rho) / alpha_test * (1 + (q - 2 * sigma) * M
                                                + (q * lambda_tilde - sigma**2) * M_prime)
"""Scalar part (paper (C.16)); alpha_test = alpha unless a test context length is given."""

K_I = (q * F_I + (q * lambda_tilde - sigma**2) * F_PRIME_I).subs(z, sigma)
"""Eigenvalue k_i of K = q F + (q lambda_tilde - sigma^2) F' (in C_train's eigenbasis)."""

E_MISALIGN = avg(MU_I * K_I)
"""e_misalign = <C_test K> = (1/d) sum_i mu_i k_i."""

RESOLVENT_MEASURE = avg(MU_I * F_I.subs(z, sigma))
"""Alignment measure <C_test F_kappa(sigma)>."""

E_IDG = tau * q
"""In-distribution error: tau q, the error on prompts whose task was seen in pretraining."""

E_TM = tau * q + (c_train + rho) * (1 / alpha_test - 1 / alpha) * (
    1 + (q - 2 * sigma) * M + (q * lambda_tilde - sigma**2) * M_prime)
"""Task-memorisation error: a test prompt whose task is one of the k pretraining tasks, with a
fresh context of length alpha_test d; tau q at alpha_test = alpha."""

# ---------------------------------------------------------------------------------------------
# The same quantities with the coefficient a as an independent variable
# ---------------------------------------------------------------------------------------------
# In the collapsed phase at small z (kappa below the rank fraction, alpha large) a = O(z), and
# a = 1 - 1/kappa + z M/kappa computed from M cancels to O(z) from O(1) terms; likewise
# a' = (M + z M')/kappa cancels from O(1/z). Numerics solve for a directly (SELF_CONSISTENCY_A)
# and use the algebraically identical forms below, whose averages have positive terms.
F_I_A = 1 / (a_coeff * LAMBDA_I + z)
"""f_i = 1/(a lambda_i + z) with a independent (equal to F_I at a = A_COEFF)."""

M_OF_A_STABLE = avg(F_I_A)
"""M = <1/(a lambda + z)>: a sum of positive terms."""

M_PRIME_STABLE = -(avg(F_I_A**2) + M / kappa * avg(LAMBDA_I * F_I_A**2)) / \
    (1 + z / kappa * avg(LAMBDA_I * F_I_A**2))
"""M_PRIME_CLOSED with f written through a."""

A_PRIME_STABLE = a_coeff * avg(LAMBDA_I * F_I_A**2) / (kappa + z * avg(LAMBDA_I * F_I_A**2))
"""a' = (M + z M')/kappa = a <lambda f^2>/(kappa + z <lambda f^2>), from M - z<f^2> =
a<lambda f^2> (summand algebra: f - z f^2 = a lambda f^2)."""

K_I_STABLE = (q * F_I_A + (q * lambda_tilde - sigma**2)
              * (-(a_prime * LAMBDA_I + 1) * F_I_A**2)).subs(z, sigma)
"""K_I with f and a' as above."""

E_MISALIGN_STABLE = avg(MU_I * K_I_STABLE)
"""e_misalign with K_I_STABLE."""
