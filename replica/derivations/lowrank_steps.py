"""The low-rank model's derivation as steps: free energy -> stationarity -> fixed-point form ->
closed forms, observables, errors, the effective ridge and the lambda = 0 closed form, each with a
check that can fail.

The mathematics is :mod:`replica.models.lowrank`; this module only states and checks it (the
tests run every check, the appendix prints the steps). :data:`PUBLISHED_EQUATIONS` is a
transcription of the published saddle-point equations, kept here solely as the target the derived
equations are compared with.
"""

from __future__ import annotations

import mpmath
import sympy

from ..models.lowrank import (alpha, tau, kappa, rho, alpha_test, lam, sigma, sigma_test, q, m,
                                 chi, qbar, chibar, qhat, mhat, chihat, qbarhat, chibarhat, z,
                                 mbar, m0, q0, ORDER_PARAMETERS, CONJUGATES, G, GT, EPS, E_TR,
                                 Z_DEFINITION, SADDLE, fixed_point_equations, reduced_map, MBAR,
                                 M0, Q0, error_expr, decomposition_exprs, u,
                                 EFFECTIVE_RIDGE_EQUATION, KAPPA_QHAT_OF_U, effective_ridge_start,
                                 LAMBDA0_CLOSED_FORM, LAMBDA0_E_TR, P0, PT0, split_spectral,
                                 ERROR_KEYS)
from ..spectra import (lowrank_atom_masses, lowrank_regular_expr,
                       lowrank_stieltjes_derivative_expr, lowrank_stieltjes_quadratic,
                       lowrank_stieltjes_tilde_derivative_expr, lowrank_stieltjes_tilde_expr,
                       lowrank_stieltjes_tilde_quadratic)
from ..symbolic.saddle import is_zero
from ..symbolic.steps import Step
from ..symbolic.codegen import mp_function

_g, _g1 = G[0](z), G[1](z)
_gu = G[0](-EPS - u)
_gl = G[0](-EPS)

# The published saddle-point equations, typed from the paper and its authors' code ONLY to check
# the derivation against (a transcription, never used to compute).
_D = 1 + chi + (1 + sigma**2) / alpha * chibar
PUBLISHED_EQUATIONS = {
    qhat: (tau / kappa) / _D,
    mhat: (tau / kappa) / _D,
    qbarhat: (1 + sigma**2) / alpha * (tau / kappa) / _D,
    chihat: tau / kappa * (1 + sigma**2 - 2 * m + q + (1 + sigma**2) / alpha * qbar) / _D**2,
    chibarhat: (1 + sigma**2) / alpha * tau / kappa
    * (1 + sigma**2 - 2 * m + q + (1 + sigma**2) / alpha * qbar) / _D**2,
    m: mhat / qhat * (1 + z * (1 + z * _g)),
    chi: (1 + z * _g) / (kappa * qhat),
    chibar: _g / (kappa * qhat),
    q: (mhat**2 * (1 + 2 * z + 3 * z**2 * _g + z**3 * _g1)
        + chihat / kappa * (1 + 2 * z * _g + z**2 * _g1)
        + chibarhat / kappa * (_g + z * _g1)) / qhat**2,
    qbar: (mhat**2 * (1 + 2 * z * _g + z**2 * _g1) + chihat / kappa * (_g + z * _g1)
           + chibarhat / kappa * _g1) / qhat**2,
}
"""(R2), (R3), (R5)--(R8) as published (the comparison target of the derivation)."""
PUBLISHED_Z = -lam / qhat - (1 + sigma**2) / alpha
"""(R4) as published: z = -lambda/qhat - (1 + sigma^2)/alpha."""



def _check_effective_ridge() -> bool:
    """The saddle point satisfies kappa qhat = tau - 1 + u g with u = -z - epsilon (from the
    conjugate and order-parameter equations), and u = lambda/qhat (from the definition of the
    alias z), which together give h(u) = 0."""
    fp = fixed_point_equations()
    # qhat = H_qhat(chi(qhat, z), chibar(qhat, z)) is a fixed point in qhat: solve it.
    eq = qhat - fp[qhat].xreplace({chi: fp[chi], chibar: fp[chibar]})
    sols = sympy.solve(sympy.together(eq), qhat, dict=True)
    sols = [sl[qhat] for sl in sols if sl[qhat] != 0]
    if len(sols) != 1:
        return False
    uz = -z - EPS
    if not is_zero(kappa * sols[0] - (tau - 1 + uz * _g)):
        return False
    # With u = lambda/qhat, i.e. lambda = u (tau - 1 + u g)/kappa, h(u) vanishes identically.
    gz = sympy.Symbol("gz")
    h = EFFECTIVE_RIDGE_EQUATION.subs(_gu, gz)
    return is_zero(h.subs(lam, u * (tau - 1 + u * gz) / kappa))



def _check_lambda0_closed_form() -> bool:
    """The closed form satisfies the ten derived fixed-point equations at lambda = 0 (g abstract),
    and the observables give its mbar, m0, q0."""
    cf = LAMBDA0_CLOSED_FORM
    sub = {s: cf[s] for s in ORDER_PARAMETERS + CONJUGATES}
    sub[z] = -EPS
    for target, rhs in fixed_point_equations().items():
        if not is_zero((cf[target] - rhs.subs(lam, 0).xreplace(sub))):
            return False
    for sym, expr in ((mbar, MBAR), (m0, M0), (q0, Q0)):
        if not is_zero(cf[sym] - expr.xreplace(sub)):
            return False
    if not is_zero(Z_DEFINITION.subs(lam, 0).xreplace(sub) + EPS):
        return False
    return is_zero(E_TR.xreplace(sub) - LAMBDA0_E_TR)



def _check_spectral() -> bool:
    """The closed forms solve their quadratics and g = -(1-rho)/z + rho gtilde (symbolically in
    z, for rational (kappa, rho) on both sides of rho = kappa and at rho = 1), gtilde' equals the
    implicit-differentiation form rho gtilde (gtilde + kappa)/s, and the derivative forms equal
    numerical derivatives (mpmath, 30 digits)."""
    zs = sympy.Symbol("z", negative=True)
    R = sympy.Rational
    for kv, rv in ((R(3, 2), R(9, 10)), (R(2, 5), R(7, 10)), (R(1, 2), R(1, 2)), (R(1, 3), 1)):
        gt = lowrank_stieltjes_tilde_expr(zs, kv, rv)
        g0 = lowrank_stieltjes_derivative_expr(zs, kv, rv, 0)
        if not is_zero(lowrank_stieltjes_tilde_quadratic(gt, zs, kv, rv)):
            return False
        if not is_zero(lowrank_stieltjes_quadratic(g0, zs, kv, rv)):
            return False
        if not is_zero(g0 - (-(1 - rv) / zs + rv * gt)):
            return False
        b = kv * rv * zs + rv - kv
        s_ = sympy.sqrt(b**2 - 4 * rv**2 * kv * zs)
        d1 = lowrank_stieltjes_tilde_derivative_expr(zs, kv, rv, 1)
        for zv in (R(-1, 10), R(-3)):
            lhs = sympy.N(d1.subs(zs, zv), 40)
            rhs = sympy.N((rv * gt * (gt + kv) / s_).subs(zs, zv), 40)
            if abs(lhs - rhs) > 1e-30 * abs(lhs):
                return False
    f = {n: mp_function([zs, kappa, rho],
                        lowrank_stieltjes_derivative_expr(zs, kappa, rho, n)) for n in range(3)}
    ft = {n: mp_function([zs, kappa, rho], lowrank_stieltjes_tilde_derivative_expr(
        zs, kappa, rho, n)) for n in range(3)}
    with mpmath.workdps(30):
        for zv, kv, rv in (("-0.1", "0.4", "0.7"), ("-2", "3", "0.5"), ("-0.3", "0.5", "1"),
                           ("-1", "2", "0.2")):
            zv, kv, rv = mpmath.mpf(zv), mpmath.mpf(kv), mpmath.mpf(rv)
            for fam in (f, ft):
                for n in (1, 2):
                    num = mpmath.diff(lambda x: fam[n - 1](x, kv, rv), zv)
                    if abs(num - fam[n](zv, kv, rv)) > mpmath.mpf(10) ** -20 * abs(num):
                        return False
    return True


def _check_atom_split() -> bool:
    """The atom-split closed form of g equals the published formula (R-S2) (50 digits, both sides of
    rho = kappa, small and large |z|); the atom masses are the limits -z g(z) as z -> 0-; and in
    the split equations the poles cancel: 1 + z g and g + z g' have no 1/z term."""
    zs, kk, rr = sympy.symbols("z kappa rho")
    spec_g = (kk + rr - kk * rr * zs - 2 - sympy.sqrt((rr * kk * zs + rr - kk) ** 2
                                                      - 4 * rr**2 * kk * zs)) / (2 * zs)
    f_spec = mp_function([zs, kk, rr], spec_g)
    f_mine = mp_function([zs, kk, rr], lowrank_stieltjes_derivative_expr(zs, kk, rr, 0))
    p0f = mp_function([kk, rr], lowrank_atom_masses(kk, rr)[0])
    with mpmath.workdps(50):
        for kv, rv in (("0.4", "0.7"), ("1.5", "0.9"), ("0.5", "0.5"), ("0.3", "1")):
            kv, rv = mpmath.mpf(kv), mpmath.mpf(rv)
            for zv in ("-1e-3", "-0.5", "-40"):
                zv = mpmath.mpf(zv)
                if abs(f_spec(zv, kv, rv) - f_mine(zv, kv, rv)) > mpmath.mpf(10) ** -40:
                    return False
            tiny = -mpmath.mpf(10) ** -40  # -z g = p0 + O(|z|^(1/2)) (the edge at rho = kappa)
            if abs(-tiny * f_mine(tiny, kv, rv) - p0f(kv, rv)) > mpmath.mpf(10) ** -18:
                return False
    for e in (1 + z * G[0](z), G[0](z) + z * G[1](z), G[0](z) - z * G[1](z)):
        if sympy.fraction(sympy.cancel(split_spectral(e)))[1].has(z) and \
                e != G[0](z) - z * G[1](z):
            return False
    # g + z g' = rho (h + z h') carries no atom; g - z g' keeps the pole 2 p0/(-z) (a check
    # that the test can fail)
    return (not sympy.cancel(split_spectral(G[0](z) + z * G[1](z))).has(P0)
            and sympy.cancel(split_spectral(G[0](z) - z * G[1](z))).has(P0))


def _check_reduced_kappa_free() -> bool:
    """After substituting the conjugates, kappa enters the closed map only through z (and g)."""
    phi, z_theta = reduced_map()
    return all(not e.has(kappa) for e in phi.values()) and z_theta.has(kappa)


def _check_rho_one() -> bool:
    """At rho = 1 (gtilde' = g'), m0 = mbar and q0 = qbar: IDG and ODG coincide."""
    sub = {rho: 1}
    q0_1 = Q0.subs(sub).replace(lambda e: isinstance(e, GT[1]), lambda e: G[1](e.args[0]))
    return is_zero(q0_1 - SADDLE.fixed_point[qbar]) and is_zero(M0.subs(sub) - MBAR)


def _check_decomposition() -> bool:
    """The four parts sum to each error, symbolically (conjugates and g abstract)."""
    fp = fixed_point_equations()
    ov = {q: fp[q], qbar: fp[qbar], q0: Q0, m0: M0, mbar: MBAR}
    for prot, parts in decomposition_exprs().items():
        total = error_expr(prot).xreplace(ov)
        if not is_zero(sum(parts.values()).xreplace(ov) - total):
            return False
    return True


def _check_tm_is_training_error() -> bool:
    """epsilon_TM at sigma_test = sigma, alpha_test = alpha equals E_tr."""
    return is_zero(error_expr("tm").subs({sigma_test: sigma, alpha_test: alpha}) - E_TR)


def _check_z() -> bool:
    """The conjugate equations give qbarhat = epsilon qhat, and then the alias z is the
    published z = -lambda/qhat - (1 + sigma^2)/alpha."""
    fp = fixed_point_equations()
    return is_zero(fp[qbarhat] - EPS * fp[qhat]) and is_zero(
        Z_DEFINITION.subs(qbarhat, EPS * qhat) - PUBLISHED_Z)


def derivation_steps() -> list[Step]:
    """The derivation of the low-rank model as :class:`Step` records, in order.

    ``free_energy``, ``stationarity_<u>`` (10), ``fixed_point_<u>`` (10) from the general
    mechanism, then ``agrees_with_published``, ``spectral_argument``, ``reduced_map``,
    ``spectral_closed_forms``, ``spectral_atom_split``, ``observables`` (its check: ``rho = 1``
    gives IDG = ODG),
    ``errors``, ``decomposition``, ``effective_ridge``, ``lambda0_closed_form``. Each ``objects`` dict holds SymPy objects; ``check()`` verifies.
    """
    steps = SADDLE.steps()
    fp = fixed_point_equations()
    steps.append(Step(
        "agrees_with_published",
        {"derived": {t: sympy.Eq(t, fp[t]) for t in PUBLISHED_EQUATIONS},
         "spec": {t: sympy.Eq(t, e) for t, e in PUBLISHED_EQUATIONS.items()}},
        "The ten derived equations coincide with the published fixed-point equations of the authors' code "
        "(every difference cancels with g, g' abstract).",
        lambda: SADDLE.agrees_with(PUBLISHED_EQUATIONS)))
    steps.append(Step(
        "spectral_argument",
        {"z": sympy.Eq(z, Z_DEFINITION), "z_at_saddle": sympy.Eq(z, PUBLISHED_Z)},
        "Since qbarhat = (1 + sigma^2) qhat/alpha at the saddle, z = -lambda/qhat - "
        "(1 + sigma^2)/alpha: the finite context acts as an extra ridge.",
        _check_z))
    phi, z_theta = reduced_map()
    steps.append(Step(
        "reduced_map",
        {"phi": {t: sympy.Eq(t, e) for t, e in phi.items()}, "z": sympy.Eq(z, z_theta)},
        "Substituting the conjugates gives a closed map on (q, m, chi, qbar, chibar) in which "
        "kappa appears only through z and g (so the limit kappa -> ∞ can be taken at lambda = 0).",
        _check_reduced_kappa_free))
    zs = sympy.Symbol("z", negative=True)
    steps.append(Step(
        "spectral_closed_forms",
        {"gtilde": sympy.Eq(GT[0](zs), lowrank_stieltjes_tilde_expr(zs, kappa, rho)),
         "gtilde_prime": sympy.Eq(GT[1](zs), lowrank_stieltjes_tilde_derivative_expr(
             zs, kappa, rho, 1)),
         "g": sympy.Eq(G[0](zs), -(1 - rho) / zs + rho * GT[0](zs)),
         "quadratic_g": sympy.Eq(lowrank_stieltjes_quadratic(G[0](zs), zs, kappa, rho), 0),
         "quadratic_gtilde": sympy.Eq(lowrank_stieltjes_tilde_quadratic(GT[0](zs), zs, kappa,
                                                                        rho), 0)},
        "S = A W A^T/rho with W Wishart of ratio rho/kappa: gtilde is the Marchenko-Pastur root "
        "on the branch gtilde ~ -1/z, and the complement of the task subspace adds the pole "
        "-(1-rho)/z to g.",
        _check_spectral))
    p0s, pt0s = lowrank_atom_masses(kappa, rho)
    hfun = sympy.Function("h")
    steps.append(Step(
        "spectral_atom_split",
        {"g": sympy.Eq(G[0](zs), -P0 / zs + rho * hfun(zs)),
         "gtilde": sympy.Eq(GT[0](zs), -PT0 / zs + hfun(zs)),
         "p0": sympy.Eq(P0, p0s), "ptilde0": sympy.Eq(PT0, pt0s),
         "h": sympy.Eq(hfun(zs), lowrank_regular_expr(zs, kappa, rho, 0))},
        "Splitting off the atom at 0 (mass 1 - min(kappa, rho) for S, (1 - kappa/rho)_+ on the "
        "task subspace) leaves a regular part h whose closed form has only positive terms for "
        "z < 0; substituted into the equations, the 1/z poles cancel symbolically.",
        _check_atom_split))
    steps.append(Step(
        "observables",
        {"mbar": sympy.Eq(mbar, MBAR), "m0": sympy.Eq(m0, M0), "q0": sympy.Eq(q0, Q0)},
        "Traces of the effective solution restricted to the whole space (mbar) and to "
        "the task subspace (m0, q0; gtilde' from Tr A^T (S - z)^-2 A / r).",
        _check_rho_one))
    steps.append(Step(
        "errors",
        {p_: sympy.Eq(sympy.Symbol(f"varepsilon_{p_.upper()}"), error_expr(p_))
         for p_ in ERROR_KEYS},
        "Averaging (y - yhat)^2 over the query and the fluctuation of the one-step estimate "
        "(variance (1 + sigma_test^2)/alpha_test) gives (E1)-(E3).",
        _check_tm_is_training_error))
    steps.append(Step(
        "decomposition",
        {p_: {k: v for k, v in parts.items()} for p_, parts in decomposition_exprs().items()},
        "Splitting each q into its mhat^2 (signal), chihat (memorization, inferred label) and "
        "chibarhat (structural, inferred label) brackets splits each error; sigma_test^2 is "
        "the irreducible noise.",
        _check_decomposition))
    steps.append(Step(
        "effective_ridge",
        {"equation": sympy.Eq(EFFECTIVE_RIDGE_EQUATION, 0), "u": sympy.Eq(u, lam / qhat),
         "kappa_qhat": sympy.Eq(kappa * qhat, KAPPA_QHAT_OF_U),
         "start": {s_: sympy.Eq(s_, e) for s_, e in effective_ridge_start().items()}},
        "Eliminating chi and chibar gives kappa qhat = tau - 1 + u g(z) with u = -z - epsilon = "
        "lambda/qhat, i.e. one monotone equation for the effective ridge u (the alignment paper's ridge "
        "equation with lambda_A = kappa lambda/tau); it starts the solvers.",
        _check_effective_ridge))
    steps.append(Step(
        "lambda0_closed_form",
        {"solution": {s: sympy.Eq(s, e) for s, e in LAMBDA0_CLOSED_FORM.items()},
         "E_tr": LAMBDA0_E_TR},
        "At lambda = 0, z = -epsilon and chi + epsilon chibar = 1/(kappa qhat), so qhat = "
        "(tau - 1)/kappa without self-consistency; the rest follows from it.",
        _check_lambda0_closed_form))
    return steps
