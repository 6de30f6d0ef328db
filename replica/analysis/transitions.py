r"""Phase transitions of the models, located numerically (``replica transition ...``).

**Alignment and isotropic models** (papers A and B). For ridgeless pretraining with ``tau > 1`` the
effective noise is :math:`\sigma = (\rho + c_{\rm train})/\alpha`, which tends to 0 as
``alpha -> oo``. The theory then probes the resolvent of the sample task covariance ``R_k`` at
vanishing argument, and its limit is governed by the **mass of the atom at zero** of the limiting
spectral law of ``R_k``,

.. math::  A(\kappa) = \lim_{\sigma\to0^+} \sigma\, M_\kappa(\sigma).

``A`` is piecewise analytic in the task diversity ``kappa``; its non-analytic point is the
transition (memorisation below, in-context learning above). The code computes ``A`` by Richardson
extrapolation in ``sigma`` of the solved self-consistent equation (17) and locates the kink by
branch intersection (:func:`replica.numerics.continuation.locate_kink`); it never substitutes the
expected answer (``kappa_c = rank(C_train)/d``, and ``1`` for the isotropic model).

At finite ``alpha`` (``--alpha A``) the crossover is defined as the point of extremal curvature of
the finite-``sigma`` indicator :math:`A_\alpha(\kappa) = \sigma M_\kappa(\sigma)` with
:math:`\sigma = (\rho + c_{\rm train})/\alpha`, i.e. the root of
:math:`\partial_\kappa^3 A_\alpha = 0`; it converges to the transition as ``alpha -> oo``.
"""

from __future__ import annotations

import dataclasses
from fractions import Fraction
from typing import Any

import mpmath
import sympy

from ..errors import ParameterError
from ..models.alignment_problem import PROBLEM as ALIGNMENT
from ..models.isotropic_problem import PROBLEM as ISOTROPIC
from ..models.lowrank_problem import PROBLEM as LOWRANK
from ..numerics import precision
from ..numerics.continuation import (CROSSOVER_METHOD, Location, limit_to_zero,
                                     locate_crossover, locate_kink)
from ..numerics.machine import evaluator
from ..numerics.result import Status
from . import parameters as SCHEMAS
from ..params import INF, compact_str, to_mpf
from ..spectra import SpectralPairs


@dataclasses.dataclass
class TransitionResult:
    model: str
    params: dict
    dps: int
    key: str  # "kappa_c" or "rho_c"
    location: Location
    definition: str
    method: str
    notes: list
    certificate: Any = None
    """A :class:`~replica.analysis.certified.TransitionCertificate` when a proof was asked for."""
    status: Status | None = None
    """What the locator observed (:func:`located_status`; ``None`` computes it from the location
    and the certificate): ``CONVERGED`` when the located point passed its checks (an error bound
    worth at least one digit, and the proof where one was asked for), ``NOT_CERTIFIED`` when a
    requested proof failed, ``NO_DIGITS`` when the error bound leaves no digit. The command
    line exits 3 on anything but ``CONVERGED``."""

    def __post_init__(self):
        if self.status is None:
            self.status = located_status(self.location, self.dps, self.certificate)

    @property
    def converged(self) -> bool:
        return self.status == Status.CONVERGED

    def to_json_dict(self):
        from ..numerics.result import decimal_string

        digits = min(self.location.digits(), self.dps)
        value, bound = self.location.value, self.location.error_bound
        cert = self.certificate
        if cert is not None and cert.certified:
            # the enclosure contains the exact point: its midpoint is reported, with the
            # rigorous bound and the digits the enclosure proves
            value = cert.midpoint()
            bound = cert.bound_for(value)
            digits = min(self.dps, cert.digits(self.dps))
        elif cert is not None:
            digits = 0
        printed = decimal_string(value, max(digits, 5))
        out = {"model": self.model, "params": self.params, "dps": self.dps,
               self.key: printed, "error_bound": printed_error_bound(printed, value, bound),
               "digits": digits, "definition": self.definition, "method": self.method,
               "iterations": self.location.iterations, "status": Status(self.status).value,
               "converged": self.converged, "notes": self.notes}
        if cert is not None:
            out["certified"] = bool(cert.certified)
            out["certificate"] = cert.to_json_dict(max(digits, 5))
            out["certificate"]["located"] = decimal_string(self.location.value, self.dps)
            out["certificate"]["located_error_bound"] = decimal_string(
                self.location.error_bound, 5)
        return out


def located_status(location: Location, dps: int, certificate=None) -> Status:
    """The status of a located transition: ``NOT_CERTIFIED`` if a proof was asked for
    (``certificate``) and failed; ``NO_DIGITS`` if the location's error bound leaves no
    significant digit at ``dps``; ``CONVERGED`` otherwise (the locators raise
    :class:`~replica.errors.ConvergenceError` when they do not settle)."""
    if certificate is not None and not certificate.certified:
        return Status.NOT_CERTIFIED
    with precision(dps):
        if not mpmath.isfinite(location.value) or min(location.digits(), dps) <= 0:
            return Status.NO_DIGITS
    return Status.CONVERGED


def printed_error_bound(printed: str, value, bound) -> str:
    """A bound on the error of the *printed* location: the bound on ``value``'s error plus the
    rounding of ``value`` to ``printed``, rounded up to 5 significant digits (a bound printed
    to nearest could fall below the error it bounds)."""
    from ..numerics.certify import directed_decimal

    def exact(x) -> Fraction:
        if isinstance(x, Fraction):
            return x
        # x._mpf_ as it is: mpmath.mpf(x) would round x to the current precision
        sign, man, exp, _ = (x if isinstance(x, mpmath.mpf) else mpmath.mpf(x))._mpf_
        f = Fraction(man) * Fraction(2) ** exp
        return -f if sign else f

    total = exact(bound) + abs(Fraction(printed) - exact(value))
    return directed_decimal(total, 5, up=True)


def two_atom_pairs(rank_fraction) -> SpectralPairs:
    """Spectrum of ``C_train = P/F`` (trace-normalised projector of rank ``F d``): eigenvalue
    ``1/F`` with weight ``F`` and ``0`` with weight ``1 - F`` (exact ``F``, any ``d``)."""
    f = to_mpf(rank_fraction)
    lam, w = [1 / f], [f]
    if rank_fraction < 1:
        lam.append(mpmath.mpf(0))
        w.append(1 - f)
    return SpectralPairs(lam, list(lam), w, True)


def resolvent(pairs):
    """``(z, kappa) -> M_kappa(z)`` for the spectrum ``pairs``: paper A's eq. (17) solved by the
    engine (the alignment model's ``resolvent`` system), at the caller's working precision."""
    _, f = evaluator(ALIGNMENT, "resolvent", names=("M",))
    _, f_inf = evaluator(ALIGNMENT, "resolvent_kappa_infinite", names=("M",))

    def M(z, kappa):
        return (f_inf if kappa == mpmath.inf else f)(z, kappa, spectrum=pairs)[0]

    return M


def atom_mass_indicator(pairs, sigma0):
    """``kappa -> lim_{sigma->0} sigma M_kappa(sigma)`` (Richardson from ``sigma0``)."""
    M = resolvent(pairs)

    def indicator(kappa):
        val, _ = limit_to_zero(lambda s: s * M(s, kappa), sigma0, levels=4)
        return val

    return indicator


def finite_alpha_indicator(pairs, sigma):
    M = resolvent(pairs)

    def indicator(kappa):
        return sigma * M(sigma, kappa)

    return indicator


KAPPA = sympy.Symbol("kappa", positive=True)


def spectral_indicator_expr(rank_fraction, sigma=None):
    r"""The indicator of the alignment/isotropic transition as a closed form in ``KAPPA``:
    :math:`\sigma M_\kappa(\sigma)` at the exact ``sigma`` or, with ``sigma=None``, its limit
    :math:`A(\kappa) = \lim_{\sigma\to0^+}\sigma M_\kappa(\sigma)` (``sympy.limit``). For
    ``C_train = P/F`` the resolvent of eq. (17) is the Stieltjes transform of the sample
    covariance of tasks drawn from a rank-``F d`` law, :math:`M_\kappa(z) = g(-z)` with ``g``
    from :func:`replica.spectra.lowrank_stieltjes_expr` at rank ratio ``F`` (the same spectral
    law; stated, and checked against the solved eq. (17) in the tests)."""
    from ..spectra import lowrank_stieltjes_expr

    F = sympy.Rational(Fraction(rank_fraction).numerator, Fraction(rank_fraction).denominator)
    if sigma is not None:
        s = sympy.Rational(Fraction(sigma).numerator, Fraction(sigma).denominator)
        return s * lowrank_stieltjes_expr(-s, KAPPA, F)
    s = sympy.Symbol("s", positive=True)
    return sympy.limit(s * lowrank_stieltjes_expr(-s, KAPPA, F), s, 0, "+")


def _certificate_of(loc, indicator_expr, var, alpha, kappa_range, dps):
    """The certificate of a located crossover (``alpha`` given) or kink."""
    from .certified import crossover_certificate, kink_certificate

    if alpha is not None:
        cert = crossover_certificate(indicator_expr, var, loc.value, dps)
        if cert.certified:
            with precision(dps):
                cert.consistent = bool(cert.bound_for(loc.value) <= loc.error_bound)
        return cert
    with precision(dps):
        lo, hi = to_mpf(kappa_range[0]), to_mpf(kappa_range[1])
    return kink_certificate(indicator_expr, var, lo, hi, loc.value, loc.error_bound, dps)


def spectral_transition(pairs, c_train, rho, alpha, dps, kappa_range):
    """Locate the kink of ``A(kappa)`` (``alpha is None``) or the finite-alpha crossover."""
    with precision(dps):
        lo, hi = (to_mpf(kappa_range[0]), to_mpf(kappa_range[1]))
        if alpha is None:
            sigma0 = mpmath.mpf(10) ** (-(2 * dps // 3))
            loc = locate_kink(atom_mass_indicator(pairs, sigma0), lo, hi, what="kappa_c")
            definition = ("kappa_c: non-analytic point of A(kappa) = lim_{sigma->0} sigma "
                          "M_kappa(sigma), the mass of the zero atom of the limiting spectrum of "
                          "the sample task covariance R_k (alpha -> oo, ridgeless, tau > 1)")
            method = ("A by Richardson extrapolation in sigma of the solved eq. (17); kink by "
                      "second-difference scan and intersection of quadratic fits of the two "
                      "analytic branches; error bound = last change of the location")
        else:
            sigma = (to_mpf(rho) + c_train) / to_mpf(alpha)
            ind = finite_alpha_indicator(pairs, sigma)
            loc = locate_crossover(ind, lo, hi, what="crossover")
            definition = (f"kappa*(alpha): extremal curvature in kappa of A_alpha(kappa) = sigma "
                          f"M_kappa(sigma) at sigma = (rho + c_train)/alpha, i.e. the root of its "
                          f"third kappa-derivative (alpha = {compact_str(alpha)})")
            method = CROSSOVER_METHOD
        return loc, definition, method


def alignment_transition(rank_fraction, tau, rho, alpha=None, dps: int = 30,
                         certify: bool = False) -> TransitionResult:
    """kappa_c for ``C_train = lowrank:F`` (paper A); ``certify`` adds the interval proof of
    :mod:`replica.analysis.certified` for the closed-form indicator."""
    p = SCHEMAS.ALIGNMENT.parse(dict(rank_fraction=rank_fraction, tau=tau, rho=rho, alpha=alpha))
    f, r = p.rank_fraction, p.rho
    a = None if p.alpha == INF else p.alpha
    with precision(dps):
        pairs = two_atom_pairs(f)
    loc, definition, method = spectral_transition(pairs, mpmath.mpf(1), r, a, dps,
                                                  (Fraction(1, 50), Fraction(3, 2)))
    params = p.echo()
    notes = ["in the alpha -> oo limit the location depends only on the training spectrum "
             "(tau > 1 and rho enter only at finite alpha through sigma)"]
    cert = None
    if certify:
        expr = spectral_indicator_expr(f, None if a is None else (r + 1) / a)
        cert = _certificate_of(loc, expr, KAPPA, a, (Fraction(1, 50), Fraction(3, 2)), dps)
    return TransitionResult("alignment", params, dps, "kappa_c", loc, definition, method, notes,
                            cert, located_status(loc, dps, cert))


def isotropic_transition(tau, rho, alpha=None, dps: int = 30,
                         certify: bool = False) -> TransitionResult:
    """kappa_c of paper B (memorisation -> in-context learning); ``certify`` as in
    :func:`alignment_transition`."""
    p = SCHEMAS.ISOTROPIC.parse(dict(tau=tau, rho=rho, alpha=alpha))
    r = p.rho
    a = None if p.alpha == INF else p.alpha
    with precision(dps):
        pairs = two_atom_pairs(Fraction(1))
    loc, definition, method = spectral_transition(pairs, mpmath.mpf(1), r, a, dps,
                                                  (Fraction(1, 10), Fraction(3)))
    params = p.echo()
    cert = None
    if certify:
        expr = spectral_indicator_expr(1, None if a is None else (r + 1) / a)
        cert = _certificate_of(loc, expr, KAPPA, a, (Fraction(1, 10), Fraction(3)), dps)
    return TransitionResult("isotropic", params, dps, "kappa_c", loc, definition, method, [],
                            cert, located_status(loc, dps, cert))


def isotropic_interpolation_peak(alpha, kappa, rho, lam, dps: int = 30) -> TransitionResult:
    r"""Location ``tau_peak`` of the interpolation (double-descent) peak of paper B's ridge ICL
    error :math:`e^{\rm ICL}(\tau)` at fixed ``alpha, kappa, rho`` and ridge ``lam > 0``.

    Definition: the interior local maximum (nearest to ``tau = 1``) of :math:`\tau \mapsto e^{\rm ICL}(\tau)` near the
    interpolation threshold, found as the root of :math:`\partial_\tau e^{\rm ICL}` (derivative by
    ``mpmath.diff``) bracketed from a scan over ``tau in [0.2, 5]``. With ``lam = 0`` the ridgeless
    error diverges at ``tau = 1`` (a pole of ``q``): there is no finite peak to locate.
    """
    p = SCHEMAS.INTERPOLATION_PEAK.parse(dict(alpha=alpha, kappa=kappa, rho=rho, lam=lam))
    a, k, r, lm = p.alpha, p.kappa, p.rho, p.lam

    names, f = evaluator(ISOTROPIC, "ridge_kappa_infinite" if k == "inf" else "ridge")
    i_icl = names.index("e_icl")

    def e_icl(t):
        kv = mpmath.inf if k == "inf" else to_mpf(k)
        return f(to_mpf(a), t, kv, to_mpf(r), to_mpf(lm))[i_icl]

    with precision(dps):
        grid = [mpmath.mpf("0.2") + mpmath.mpf("4.8") * j / 96 for j in range(97)]
        vals = [e_icl(t) for t in grid]
        maxima = [j for j in range(1, 96) if vals[j] > vals[j - 1] and vals[j] > vals[j + 1]]
        if maxima:
            i = min(maxima, key=lambda j: abs(grid[j] - 1))
        else:
            raise ParameterError("--lam", "no interior maximum of e_ICL(tau) on [0.2, 5]: the "
                                          "ridge removes the peak entirely")

        def slope(t):
            return mpmath.diff(e_icl, t)

        root = mpmath.findroot(slope, (grid[i - 1], grid[i + 1]), solver="anderson",
                               verify=False)
        curv = mpmath.diff(e_icl, root, 2)
        err = abs(slope(root) / curv) if curv != 0 else mpmath.inf
        loc = Location(root, 2 * err + 64 * mpmath.eps, 0, "root of the tau-derivative")
        peak = e_icl(root)
    params = p.echo()
    with precision(dps):
        # printed with the digits of the location (conservative: at a maximum the value's error
        # is second order in the location's)
        note = f"e_ICL at the peak = {mpmath.nstr(peak, max(1, min(dps, loc.digits())))}"
    return TransitionResult("isotropic", params, dps, "tau_peak", loc,
                            "tau_peak: interior maximum of the ridge ICL error e_ICL(tau) (paper "
                            "B), the regularised interpolation peak near tau = 1",
                            "scan of tau in [0.2, 5], then Anderson-Bjorck on d e_ICL/d tau "
                            "(mpmath.diff); error bound from a Newton correction", [note],
                            status=located_status(loc, dps))


# ---------------------------------------------------------------------------------------------
# Low-rank model: the rho = kappa transition
# ---------------------------------------------------------------------------------------------
LOWRANK_INDICATORS = {
    "m0": "m0 (overlap on the task subspace)",
    "idg_over_alpha": "eps_IDG/alpha (sigma_test = 0, alpha_test = alpha)",
}


def lowrank_indicator_value(name, alpha_v, tau_v, kappa_v, sigma_v, rho_v):
    """The indicator at finite ``alpha`` from the lambda = 0 closed form (T1)-(T5) (the low-rank
    model's ``lambda0`` system, which also reports eps_IDG at sigma_test = 0, alpha_test =
    alpha)."""
    if name == "m0":
        return evaluator(LOWRANK, "lambda0", names=("m0",))[1](alpha_v, tau_v, kappa_v,
                                                                  sigma_v, rho_v)[0]
    _, f = evaluator(LOWRANK, "lambda0", names=("idg",))
    return f(alpha_v, tau_v, kappa_v, sigma_v, rho_v)[0] / alpha_v


RHO = sympy.Symbol("rho", positive=True)


def lowrank_indicator_expr(indicator, alpha, tau, kappa, sigma):
    """The low-rank indicator as a closed form in ``RHO`` (the lambda = 0 closed form (T1)-(T5)
    with the other parameters exact) at ``alpha``, or its ``alpha -> oo`` limit
    (``sympy.limit``) for ``alpha=None``."""
    from ..numerics.machine import machine

    m = machine(LOWRANK, "lambda0")
    e = m.closed_form("m0" if indicator == "m0" else "idg")
    sym = {str(s): s for s in m.p}
    A = sympy.Symbol("alpha", positive=True)
    if indicator != "m0":
        e = e / sym["alpha"]

    def q(v):
        v = Fraction(v)
        return sympy.Rational(v.numerator, v.denominator)

    e = e.xreplace({sym["tau"]: q(tau), sym["kappa"]: q(kappa), sym["sigma"]: q(sigma),
                    sym["rho"]: RHO, sym["alpha"]: A})
    return sympy.limit(e, A, sympy.oo) if alpha is None else e.xreplace({A: q(alpha)})


def lowrank_transition(kappa, tau, sigma, alpha=None, dps: int = 30,
                       indicator: str = "m0", certify: bool = False) -> TransitionResult:
    r"""rho_c of the low-rank model (the task-rich / task-scarce transition), found numerically.

    Without ``alpha``: the non-analytic point in ``rho`` of :math:`\lim_{\alpha\to\infty} I(\rho)`
    for the indicator ``I`` (``m0`` or ``idg_over_alpha``) at ``lambda = 0``, ``tau > 1``; the
    limit by Richardson extrapolation in ``1/alpha`` of the closed form (T1)-(T5), the kink by
    branch intersection. With ``alpha``: the extremal-curvature point of ``I(rho)`` at that
    ``alpha``.
    """
    p = SCHEMAS.LOWRANK.parse(dict(kappa=kappa, tau=tau, sigma=sigma, alpha=alpha))
    k, t, s = p.kappa, p.tau, p.sigma
    a = None if p.alpha == INF else p.alpha
    if indicator not in LOWRANK_INDICATORS:
        raise ParameterError("--indicator", f"choose one of {', '.join(LOWRANK_INDICATORS)}")
    if indicator == "idg_over_alpha" and s == 0:
        raise ParameterError("--sigma", "eps_IDG/alpha has no kink at sigma = 0 (the O(alpha) "
                                        "structural term is proportional to sigma^2); use "
                                        "--indicator m0")
    with precision(dps):
        kv, tv, sv = to_mpf(k), to_mpf(t), to_mpf(s)
        lo = max(mpmath.mpf(1) / 100, kv / 10)
        hi = mpmath.mpf(1)
        if a is None:
            eps0 = mpmath.mpf(10) ** (-(2 * dps // 3))

            def ind(r):
                val, _ = limit_to_zero(
                    lambda e: lowrank_indicator_value(indicator, (1 + sv**2) / e, tv, kv, sv, r),
                    eps0, levels=4)
                return val

            loc = locate_kink(ind, lo, hi - (hi - lo) / 1000, what="rho_c")
            definition = (f"rho_c: non-analytic point in rho of lim_{{alpha->oo}} "
                          f"{LOWRANK_INDICATORS[indicator]} at lambda = 0")
            method = ("limit by Richardson extrapolation in 1/alpha of the lambda = 0 closed form "
                      "(T1)-(T5); kink by second-difference scan and intersection of quadratic "
                      "fits of the two analytic branches; error bound = last change of the "
                      "location")
        else:
            av = to_mpf(a)

            def ind(r):
                return lowrank_indicator_value(indicator, av, tv, kv, sv, r)

            loc = locate_crossover(ind, lo, hi - (hi - lo) / 1000, what="crossover")
            definition = (f"rho*(alpha): extremal curvature in rho of "
                          f"{LOWRANK_INDICATORS[indicator]} at alpha = {compact_str(a)}, "
                          f"lambda = 0 (root of its third rho-derivative)")
            method = CROSSOVER_METHOD
    params = dict(p.echo(), indicator=indicator)
    notes = ["rho is the task-rank ratio here (low-rank paper notation), sigma the noise std"]
    cert = None
    if certify:
        expr = lowrank_indicator_expr(indicator, a, t, k, s)
        with precision(dps):
            rng = (max(Fraction(1, 100), Fraction(k) / 10), Fraction(1) - (Fraction(1) - max(
                Fraction(1, 100), Fraction(k) / 10)) / 1000)
        cert = _certificate_of(loc, expr, RHO, a, rng, dps)
    return TransitionResult("lowrank", params, dps, "rho_c", loc, definition, method, notes,
                            cert, located_status(loc, dps, cert))
