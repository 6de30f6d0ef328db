r"""Phase diagrams: regions and boundary curves in two-parameter planes, as figures and CSV.

Each diagram is computed by one function, which writes its CSV files and its figure (PNG, PDF and
SVG, :func:`replica.figures.save_figure`), and drawn by a ``*_figure`` function that returns the
:class:`matplotlib.figure.Figure` from the computed arrays.

* :func:`alignment_specialisation` -- paper A's power-law specialisation: the relative gain
  :math:`G = -100\,[E(p_{\rm train}) - E(p_{\rm test})]/E(p_{\rm test})` of pretraining on a power
  law :math:`p_{\rm train}` when testing on :math:`p_{\rm test}`, over
  ``(kappa, p_train - p_test)`` (float64 heatmap), and the boundary
  :math:`G = 0,\ p_{\rm train} > p_{\rm test}` beyond which a steeper
  pretraining spectrum stops helping, traced with
  :func:`replica.numerics.continuation.trace_boundary` in mpmath (each point polished).
* :func:`isotropic_nonmonotone` -- paper B's region of non-monotone error in ``alpha`` over
  ``(kappa, rho)``: a point is inside when ``e(alpha)`` has an interior local minimum on the
  ``alpha`` grid (float64 scan); the boundary in ``kappa`` at each ``rho`` is refined by bisection
  on this indicator (the fallback method: the indicator is a yes/no function).
"""

from __future__ import annotations

import csv
import os
from fractions import Fraction

import mpmath
import numpy as np

from .. import figures
from ..errors import ConvergenceError
from ..models import alignment as A
from ..models import get as get_model
from ..numerics import precision
from ..numerics.continuation import trace_boundary
from ..numerics.driver import solve, solve_float64, solve_params
from ..params import parse_exact
from ..spectra import Covariance, parse_spec


def _powerlaw(p, d) -> Covariance:
    if not isinstance(p, Fraction):
        with mpmath.workdps(30):
            p = Fraction(mpmath.nstr(mpmath.mpf(p), 25))
    return parse_spec(f"powerlaw:{p.numerator}/{p.denominator}", d)


def _write_csv(path, header, rows):
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(header)
        w.writerows(rows)


def alignment_specialisation(out_dir, *, d=32, alpha="1", tau="4", rho="0.01", p_test="0.9",
                             kappas=None, dps_range=None, progress=None, dps=20):
    """Heatmap of the gain and the boundary ``E(p_test + dp) = E(p_test)``, ``dp > 0``.

    Writes ``alignment_specialisation.png`` (also ``.pdf``, ``.svg``; drawn by
    :func:`specialisation_figure`, converged gains only), ``alignment_specialisation_grid.csv``
    (with each gain's float64 ``status``: ``converged`` when both errors are) and
    ``alignment_specialisation_boundary.csv`` into ``out_dir``; returns the boundary points
    ``[(kappa, dp), ...]`` (mpf).
    """
    os.makedirs(out_dir, exist_ok=True)
    kappas = np.linspace(0.2, 2.2, 41) if kappas is None else np.asarray(kappas, float)
    dps_range = np.linspace(-0.4, 2.0, 49) if dps_range is None else np.asarray(dps_range, float)
    pt = Fraction(p_test)
    test = _powerlaw(pt, d)
    common = dict(alpha=float(Fraction(alpha)), tau=float(Fraction(tau)),
                  rho=float(Fraction(rho)), kappa=kappas)
    ref = solve_float64(get_model("alignment"), train=test, test=test, **common)
    base = ref["e_icl"]
    gain = np.empty((len(dps_range), len(kappas)))
    status = np.empty(gain.shape, dtype=object)
    for i, dp in enumerate(dps_range):
        tr = _powerlaw(float(pt) + dp, d)
        out = solve_float64(get_model("alignment"), train=tr, test=test, **common)
        # a gain is converged when both errors are (float64 statuses, solve_float64)
        status[i] = np.where(ref["status"] == "converged", out["status"], ref["status"])
        gain[i] = -100 * (out["e_icl"] - base) / base
        if progress:
            progress(i + 1, len(dps_range))
    rows = [(f"{k:.6g}", f"{dp:.6g}", f"{g:.10g}", st) for i, dp in enumerate(dps_range)
            for k, g, st in zip(kappas, gain[i], status[i])]
    _write_csv(os.path.join(out_dir, "alignment_specialisation_grid.csv"),
               ["kappa", "p_train_minus_p_test", "gain_percent", "status"], rows)
    gain = np.where(status == "converged", gain, np.nan)  # the figure draws verified gains only

    # boundary: at each kappa, the dp > 0 where the gain changes sign (bracketed on the grid)
    boundary = []
    pos = dps_range > 0
    cand = [j for j in range(len(kappas))
            if np.any(np.diff(np.sign(gain[pos, j])) < 0)]
    if cand:
        with precision(dps):
            def f(k, dp):
                tr = _powerlaw(pt + Fraction(mpmath.nstr(dp, dps)), d)
                kw = dict(alpha=alpha, tau=tau, kappa=Fraction(mpmath.nstr(k, dps)), rho=rho,
                          d=d, test=test, dps=dps, verify=False)
                problem = get_model("alignment")
                return (solve(problem, train=tr, **kw)["e_icl"]
                        - solve(problem, train=test, **kw)["e_icl"])

            j0 = cand[0]
            col = gain[pos, j0]
            i0 = int(np.where(np.diff(np.sign(col)) < 0)[0][0])
            guess = dps_range[pos][i0]
            ks = [mpmath.mpf(float(k)) for k in kappas[j0:]][::4]
            if ks[-1] != kappas[-1]:
                ks.append(mpmath.mpf(float(kappas[-1])))
            boundary = trace_boundary(f, ks, guess, p2_bounds=(mpmath.mpf("0.01"), None),
                                      max_turn=0.15, tol=mpmath.mpf(10) ** (-dps + 6))
    _write_csv(os.path.join(out_dir, "alignment_specialisation_boundary.csv"),
               ["kappa", "p_train_minus_p_test"],
               [(mpmath.nstr(k, 15), mpmath.nstr(v, 15)) for k, v in boundary])
    fig = specialisation_figure(kappas, dps_range, gain, boundary, d=d, alpha=alpha, tau=tau,
                                rho=rho, p_test=p_test)
    figures.save_figure(fig, os.path.join(out_dir, "alignment_specialisation"))
    return boundary


def specialisation_figure(kappas, dps_range, gain, boundary, *, d, alpha, tau, rho, p_test):
    """The figure of :func:`alignment_specialisation`: the gain ``gain[i, j]`` (percent) at
    ``(kappas[j], dps_range[i])`` on a diverging colour map centred on 0, the traced boundary
    ``[(kappa, dp), ...]`` and the line of matched pretraining ``dp = 0``."""
    with figures.style():
        fig, ax = figures.new_figure(figsize=(6.4, 4.6))
        lim = np.nanmax(np.abs(gain))
        im = ax.pcolormesh(kappas, dps_range, gain, cmap=figures.DIVERGING, vmin=-lim, vmax=lim,
                           shading="auto")
        fig.colorbar(im, ax=ax, label=r"gain $G=-100\,[E(p_{\rm train})-E(p_{\rm test})]"
                                      r"/E(p_{\rm test})$ (%)")
        ax.axhline(0, color="0.35", lw=0.9, ls="--",
                   label=r"matched pretraining $p_{\rm train}=p_{\rm test}$")
        if boundary:
            ax.plot([float(k) for k, _ in boundary], [float(v) for _, v in boundary], color="k",
                    ls="-", marker="o", ms=3, lw=1.4,
                    label=r"$G=0$, $p_{\rm train}>p_{\rm test}$ (traced at high precision)")
        ax.legend(loc="lower right", fontsize=7)
        ax.set_xlabel(r"task diversity $\kappa$")
        ax.set_ylabel(r"$p_{\rm train}-p_{\rm test}$")
        ax.set_title("power-law specialisation: " + ", ".join(
            figures.value_text(n, v) for n, v in (("d", d), ("alpha", alpha), ("tau", tau),
                                                  ("rho", rho), ("p_test", p_test))),
            fontsize=9)
        fig.tight_layout()
    return fig


def nonmonotone_indicator(kappa, rho, tau, alphas, which="e_icl"):
    """True where ``e(alpha)`` (isotropic theory) has an interior local minimum on ``alphas``."""
    return _nonmonotone(kappa, rho, tau, alphas, which)[0]


def _nonmonotone(kappa, rho, tau, alphas, which="e_icl"):
    """:func:`nonmonotone_indicator` and whether every point of each ``alpha`` scan is
    ``converged`` on the float64 path (each error value to a relative 1e-8)."""
    ident = parse_spec("identity", 1)
    with np.errstate(all="ignore"):
        out = solve_float64(get_model("alignment"), train=ident, test=ident, alpha=alphas, tau=tau,
                            kappa=kappa, rho=rho)
    e = out["e_icl"] if which == "e_icl" else out["e_idg"]
    diff = np.diff(e, axis=-1)
    return (np.any((diff[..., :-1] < 0) & (diff[..., 1:] > 0), axis=-1),
            np.all(out["status"] == "converged", axis=-1))


def isotropic_tag(tau, which="e_icl") -> str:
    """The file-name stem of :func:`isotropic_nonmonotone`: ``tau`` as typed, with any character
    a file name should not hold (``/``, blanks) replaced (``1/2`` -> ``tau1_2``)."""
    token = "".join(c if c.isalnum() or c in ".+-" else "_"
                    for c in str(tau).replace(" ", ""))
    return f"isotropic_nonmonotone_{which}_tau{token}"


def isotropic_nonmonotone(out_dir, *, tau="0.5", which="e_icl", kappas=None, rhos=None,
                          alphas=None, bisection_steps=12, progress=None):
    """Region of non-monotone ``e(alpha)`` in ``(kappa, rho)``: CSV (grid and boundary) and the
    figure of :func:`nonmonotone_figure` (PNG, PDF, SVG); returns ``(inside, boundary)``."""
    os.makedirs(out_dir, exist_ok=True)
    t = float(parse_exact(tau, "--tau"))
    kappas = np.linspace(0.1, 2.1, 41) if kappas is None else np.asarray(kappas, float)
    rhos = np.linspace(0.01, 1.0, 25) if rhos is None else np.asarray(rhos, float)
    alphas = np.logspace(-2, 3, 200) if alphas is None else np.asarray(alphas, float)
    inside, verified = _nonmonotone(kappas[:, None, None], rhos[None, :, None], t,
                                    alphas[None, None, :], which)
    tag = isotropic_tag(tau, which)
    # status: converged when every float64 point of the alpha scan is
    _write_csv(os.path.join(out_dir, tag + "_grid.csv"),
               ["kappa", "rho", "nonmonotone", "status"],
               [(f"{k:.6g}", f"{r:.6g}", int(inside[i, j]),
                 "converged" if verified[i, j] else "not-verified")
                for i, k in enumerate(kappas) for j, r in enumerate(rhos)])
    boundary = []
    for j, r in enumerate(rhos):
        col = inside[:, j]
        for i in np.where(col[:-1] != col[1:])[0]:
            a, b = kappas[i], kappas[i + 1]
            va = col[i]
            for _ in range(bisection_steps):
                m = 0.5 * (a + b)
                vm = bool(nonmonotone_indicator(np.array([m])[:, None], r, t,
                                                alphas[None, :], which)[0])
                if vm == va:
                    a = m
                else:
                    b = m
            boundary.append((0.5 * (a + b), r, 0.5 * (b - a)))
        if progress:
            progress(j + 1, len(rhos))
    _write_csv(os.path.join(out_dir, tag + "_boundary.csv"), ["kappa", "rho", "half_width"],
               [(f"{k:.10g}", f"{r:.6g}", f"{w:.2g}") for k, r, w in boundary])
    fig = nonmonotone_figure(kappas, rhos, inside, boundary, tau=tau, which=which)
    figures.save_figure(fig, os.path.join(out_dir, tag))
    return inside, boundary


def nonmonotone_figure(kappas, rhos, inside, boundary, *, tau, which="e_icl"):
    """The figure of :func:`isotropic_nonmonotone`: the region ``inside[i, j]`` (at
    ``(kappas[i], rhos[j])``) shaded, the bisected boundary points ``[(kappa, rho, half_width)]``
    and the reference line ``kappa = min(tau, 1)``."""
    from matplotlib.patches import Patch

    t = float(parse_exact(tau, "--tau"))
    with figures.style():
        fig, ax = figures.new_figure(figsize=(5.6, 4.2))
        mesh = ax.pcolormesh(kappas, rhos, inside.T.astype(float), cmap="Greys", vmin=0,
                             vmax=2.5, shading="auto")
        handles = [Patch(facecolor=mesh.to_rgba(1.0), edgecolor="0.5",
                         label=f"{figures.label(which)} non-monotone in " + r"$\alpha$")]
        if boundary:
            handles += ax.plot([b[0] for b in boundary], [b[1] for b in boundary], ls="none",
                               marker="o", ms=3, color=figures.colour(1),
                               label="boundary (bisection)")
        handles += [ax.axvline(min(t, 1.0), color=figures.colour(0), lw=0.9, ls="--",
                               label=r"$\kappa=\min(\tau,1)$")]
        ax.legend(handles=handles, fontsize=7, loc="best")
        ax.set_xlabel(r"task diversity $\kappa$")
        ax.set_ylabel(r"label-noise variance $\rho$")
        ax.set_title(f"isotropic model: region where {figures.label(which)} is non-monotone in "
                     + r"$\alpha$, " + figures.value_text("tau", tau), fontsize=9)
        fig.tight_layout()
    return fig


def lowrank_phase_diagram(out_dir, *, tau="9/4", sigma="3/10", alphas=("1e2", "1e3", "1e4"),
                          kappas=None, grid=31, dps=30, progress=None):
    r"""The ``(kappa, rho)`` phase diagram of the low-rank model (``lambda = 0``).

    Background: :math:`\log_{10}(\varepsilon_{\rm IDG}/\alpha)` at the largest ``alpha`` (float64
    grid, ``lowrank.solve_float64``). Lines: the transition :math:`\rho_c(\kappa)` located at each
    ``kappa`` as the kink of :math:`\lim_{\alpha\to\infty} m_0(\rho)`
    (:func:`replica.analysis.transitions.lowrank_transition`, never substituted), separating
    task-rich (``rho < rho_c``) from task-scarce (``rho > rho_c``), and the finite-``alpha``
    crossovers :math:`\rho^*(\alpha)` (extremal curvature of :math:`m_0(\rho)`). Writes
    ``lowrank_phase_diagram.png`` (also ``.pdf``, ``.svg``; drawn by
    :func:`lowrank_phase_figure`), ``lowrank_phase_diagram_boundary.csv`` (the located points) and
    ``lowrank_phase_diagram_grid.csv`` (the background: ``kappa``, ``rho``, ``alpha``, ``idg``,
    ``idg_over_alpha``, ``converged``, ``status``: the float64 status of
    :func:`~replica.numerics.driver.solve_float64`; only converged points are drawn); returns
    the boundary rows ``(kappa, alpha, rho_boundary, error_bound)``.
    """
    from .transitions import lowrank_transition

    os.makedirs(out_dir, exist_ok=True)
    kappas = [Fraction(k) for k in (kappas or ["0.1", "0.2", "0.3", "0.4", "0.5", "0.6", "0.7",
                                               "0.8", "0.9"])]
    rows = []
    total = len(kappas) * (1 + len(alphas))
    done = 0
    for k in kappas:
        for a in (None,) + tuple(alphas):
            try:
                r = lowrank_transition(k, tau, sigma, alpha=a, dps=dps)
            except ConvergenceError:
                # at small alpha and small kappa the crossover is wider than the rho range:
                # no curvature peak to locate (recorded as missing, not invented)
                rows.append((float(k), a, "", "not resolved"))
                done += 1
                continue
            with precision(dps):
                rows.append((float(k), "inf" if a is None else a,
                             mpmath.nstr(r.location.value, min(r.location.digits(), dps)),
                             mpmath.nstr(r.location.error_bound, 3)))
            done += 1
            if progress:
                progress(done, total)
    # numeric columns only: an unresolved crossover has empty cells and resolved = False
    _write_csv(os.path.join(out_dir, "lowrank_phase_diagram_boundary.csv"),
               ["kappa", "alpha", "rho_boundary", "error_bound", "resolved"],
               [(k, "inf" if a is None else a, v, "" if v == "" else e, v != "")
                for k, a, v, e in rows])
    kg = np.linspace(0.05, 1.0, grid)
    rg = np.linspace(0.05, 1.0, grid)
    a_max = float(Fraction(alphas[-1])) if "e" not in alphas[-1] else float(alphas[-1])
    with np.errstate(all="ignore"):
        out = solve_float64(get_model("lowrank"), alpha=a_max, tau=float(Fraction(tau)),
                            kappa=kg[:, None], rho=rg[None, :], sigma=float(Fraction(sigma)),
                            strict=False)
    field = out["idg"] / a_max
    _write_csv(os.path.join(out_dir, "lowrank_phase_diagram_grid.csv"),
               ["kappa", "rho", "alpha", "idg", "idg_over_alpha", "converged", "status"],
               [(repr(float(k)), repr(float(r)), repr(a_max), repr(float(out["idg"][i, j])),
                 repr(float(field[i, j])), bool(out["converged"][i, j]), out["status"][i, j])
                for i, k in enumerate(kg) for j, r in enumerate(rg)])
    fig = lowrank_phase_figure(kg, rg, np.where(out["converged"], field, np.nan), rows,
                               tau=tau, sigma=sigma, alphas=alphas)
    figures.save_figure(fig, os.path.join(out_dir, "lowrank_phase_diagram"))
    return rows


def lowrank_phase_figure(kappas, rhos, idg_over_alpha, rows, *, tau, sigma, alphas):
    r"""The figure of :func:`lowrank_phase_diagram`: :math:`\varepsilon_{\rm IDG}/\alpha`
    (``idg_over_alpha[i, j]`` at ``(kappas[i], rhos[j])``, largest ``alpha``) on a logarithmic
    colour scale, the located transition (``alpha = "inf"`` rows) and one crossover line per
    finite ``alpha``; the region names are written in black or white, whichever contrasts with
    the colour beneath them."""
    from matplotlib.colors import LogNorm
    from matplotlib.ticker import LogFormatterMathtext

    field = np.ma.masked_invalid(np.where(idg_over_alpha > 0, idg_over_alpha, np.nan))
    with figures.style():
        fig, ax = figures.new_figure(figsize=(6.2, 4.8))
        norm = LogNorm(vmin=field.min(), vmax=field.max()) if field.count() else None
        im = ax.pcolormesh(kappas, rhos, field.T, shading="auto", cmap=figures.SEQUENTIAL,
                           norm=norm)
        fig.colorbar(im, ax=ax, format=LogFormatterMathtext(),
                     label=r"$\varepsilon_{\rm IDG}/\alpha$ at "
                           + figures.value_text("alpha", alphas[-1]))
        for j, a in enumerate(("inf",) + tuple(alphas)):
            pts = [(r[0], float(r[2])) for r in rows if r[1] == a and r[2] != ""]
            lab = (r"$\rho_c$ ($\alpha\to\infty$, located)" if a == "inf"
                   else r"crossover $\rho^*$, " + figures.value_text("alpha", a))
            st = ({"color": "k", "marker": "o", "linestyle": "-"} if a == "inf"
                  else figures.series_style(j))
            ax.plot([p[0] for p in pts], [p[1] for p in pts], ms=3, lw=1.3, label=lab, **st)
        for x, y, text in ((0.75, 0.3, r"task-rich ($\rho<\kappa$)"),
                           (0.3, 0.8, r"task-scarce ($\rho>\kappa$)")):
            i = int(np.argmin(np.abs(np.asarray(kappas) - x)))
            j = int(np.argmin(np.abs(np.asarray(rhos) - y)))
            under = field[i, j]
            col = "black" if np.ma.is_masked(under) else figures.text_colour_at(im, under)
            ax.text(x, y, text, color=col, ha="center", fontsize=9)
        ax.set_xlabel(r"task diversity $\kappa$")
        ax.set_ylabel(r"task-rank ratio $\rho$")
        ax.set_title("low-rank model: " + ", ".join(
            figures.value_text(n, v) for n, v in (("tau", tau), ("sigma", sigma), ("lam", 0))),
            fontsize=9)
        ax.legend(fontsize=7, loc="lower right")
        fig.tight_layout()
    return fig


def misalignment_spectrum(dps: int = 30, **params):
    """Eigenvalues ``k_i`` of ``K = q F + (q lambda_tilde - sigma^2) F'`` paired with the
    training eigenvalues ``lambda_i`` (sorted by ``lambda_i`` decreasing), at ``dps`` digits, for
    the alignment model's parameters ``params`` (``test`` defaults to ``train``; it does not enter
    K). ``e_misalign = (1/d) sum_i mu_i k_i``: at fixed trace of ``C_test`` the rank-one test
    along the direction with the smallest ``k_i`` minimises the error. ``k_i`` is the model's
    :data:`~replica.models.alignment.K_I_STABLE` at the solution."""
    from ..spectra import spectral_pairs_mp
    from ..symbolic import LAMBDA_I, Evaluator

    problem = get_model("alignment")
    params.setdefault("test", params.get("train"))
    p = problem.schema.parse(params)
    r = solve_params(problem, p, dps=dps, verify=False)
    v = r.all_values
    K = Evaluator([A.K_I_STABLE], [LAMBDA_I, A.q, A.lambda_tilde, A.sigma, A.a_coeff, A.a_prime])
    with precision(dps):
        pairs = spectral_pairs_mp(p.train, p.train)
        out = sorted(((lam, K.mp([lam, v["q"], v["lambda_tilde"], v["sigma"], v["a"],
                                  v["a_prime"]])[0]) for lam in set(pairs.lam)),
                     key=lambda t: -t[0])
    return [lam for lam, _ in out], [k for _, k in out]
