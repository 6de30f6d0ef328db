# ---
# jupyter:
#   jupytext:
#     formats: py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # Low-rank tasks: $(\kappa,\rho)$ phase diagram with finite-$\alpha$ crossover lines
#
# Parameters of the transition scan of `lr3_transition_scan`: $\lambda=0$, $\tau=2.25$, $\sigma=0.3$,
# $\tilde\alpha=\alpha$, now over the whole plane of task diversity $\kappa$ and task-rank ratio
# $\rho$. Two regions: **task-rich** $\rho<\kappa$ (the training tasks span the task
# subspace; IDG stays $O(1)$) and **task-scarce** $\rho>\kappa$ (a fraction $1-\kappa/\rho$ of the
# subspace is never seen; $\varepsilon_{\rm IDG}/\alpha\to\sigma^2(\rho-\kappa)/(\rho(\tau-1)
# (1+\sigma^2))>0$). Background: $\varepsilon_{\rm IDG}/\alpha$ from the replica solution at the
# largest $\alpha$.
#
# **Where the boundary comes from.** At $\lambda=0$ the saddle point sits at $z=-\varepsilon$ with
# $\varepsilon=(1+\sigma^2)/\alpha$, and the order parameters are built from the Stieltjes
# transform $g(z)$ of the empirical task covariance $S$. The non-analyticity comes from the atom of
# $S$'s spectrum at zero, of mass $1-\min(\kappa,\rho)$, measured by the indicator
#
# $$I_\alpha(\kappa,\rho)=\varepsilon\,g(-\varepsilon;\kappa,\rho)\ \xrightarrow{\ \alpha\to\infty\ }
#   \ 1-\min(\kappa,\rho).$$
#
# By the cross-paper dictionary, $g(-\varepsilon)$ is paper A's resolvent $M_\kappa(\varepsilon)$ for
# $C_{\rm train}=P/\rho$ (rank fraction $\rho$) and $\varepsilon$ is paper A's effective noise
# $\sigma_A=(\rho_A+1)/\alpha$ with $\rho_A=\sigma^2$; so $I_\alpha$ is exactly the indicator
# $A_\alpha(\kappa)=\sigma_AM_\kappa(\sigma_A)$ of `replica.analysis.transitions`. We therefore
# use that module's definitions unchanged (this was written before the low-rank phase-diagram command
# existed; its result is overlaid below as a cross-check):
#
# * $\alpha\to\infty$: $\kappa_c(\rho)$ = the non-analytic point in $\kappa$ of
#   $\lim_{\varepsilon\to0}\varepsilon g(-\varepsilon)$ (Richardson extrapolation + branch
#   intersection), located numerically — it should fall on the diagonal $\kappa=\rho$;
# * finite $\alpha$: the crossover $\kappa^*(\rho;\alpha)$ = the point of extremal curvature in
#   $\kappa$ of $I_\alpha$ (root of $\partial_\kappa^3I_\alpha$), which tends to $\kappa_c$ as
#   $\alpha$ grows.
#
# The identity $g(-\varepsilon)=M_\kappa(\varepsilon)$ is checked below at 30 digits with the
# low-rank Stieltjes transform of `replica.spectra`.

# %%
import os
import sys
from fractions import Fraction

import mpmath
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)) if "__file__" in globals() else "")
import _common  # noqa: E402

import replica  # noqa: E402
from replica.analysis import phase_diagram  # noqa: E402
from replica.analysis.transitions import (alignment_transition, resolvent,  # noqa: E402
                                          two_atom_pairs)
from replica.derivations.lowrank import large_alpha_limits  # noqa: E402
from replica.models import lowrank as L  # noqa: E402
from replica.numerics import precision  # noqa: E402
from replica.spectra import lowrank_stieltjes_mp  # noqa: E402
from replica.symbolic import Evaluator  # noqa: E402

args = _common.parse_args("Low-rank (kappa, rho) phase diagram")
out = _common.Outputs(args.out, "lr4_phase_diagram")
TAU, SIGMA = "2.25", "0.3"
SIGMA2 = str(Fraction(SIGMA) ** 2)
ALPHAS = ["16", "256"] if args.quick else ["16", "64", "256", "1024"]
BOUNDARY_RHOS = ["0.3", "0.6", "0.9"] if args.quick else [f"{r / 10:g}" for r in range(2, 11)]
BOUNDARY_KAPPAS = ["0.5"] if args.quick else ["0.3", "0.5", "0.7", "0.9"]
GRID = 12 if args.quick else 40
A_BG = float(ALPHAS[-1])

# %% [markdown]
# ## The indicator identity $\varepsilon g(-\varepsilon)=\sigma_AM_\kappa(\sigma_A)$

# %%
with precision(30):
    for kap, rho in (("0.5", "0.8"), ("1.5", "0.9"), ("0.3", "0.2")):
        eps = (1 + mpmath.mpf(SIGMA) ** 2) / 64
        g = lowrank_stieltjes_mp(-eps, mpmath.mpf(kap), mpmath.mpf(rho))
        m = resolvent(two_atom_pairs(Fraction(rho)))(eps, mpmath.mpf(kap))
        print(f"kappa={kap}, rho={rho}, alpha=64: g(-eps) = {mpmath.nstr(g, 20)}, "
              f"M_kappa(eps) = {mpmath.nstr(m, 20)}")
        assert abs(g - m) < mpmath.mpf(10) ** -25 * abs(g)

# %% [markdown]
# ## Background: $\varepsilon_{\rm IDG}/\alpha$ over $(\kappa,\rho)$ at the largest $\alpha$

# %%
KG = np.linspace(0.05, 1.5, GRID)
RG = np.linspace(0.05, 1.0, GRID)
K_, R_ = np.meshgrid(KG, RG, indexing="ij")
th = replica.solve_float64("lowrank", alpha=A_BG, tau=float(TAU), kappa=K_, rho=R_,
                           sigma=float(SIGMA), lam=0.0)
bg = th["idg"] / A_BG
LIM = large_alpha_limits()["idg_rate_explicit"]  # alpha -> oo, derived from the closed form
lim = Evaluator([LIM], [L.rho, L.kappa, L.tau, L.sigma]).f64([R_, K_, float(TAU),
                                                             float(SIGMA)])[0]
out.csv("_grid.csv", ["kappa", "rho", "alpha", "idg", "idg_over_alpha", "idg_over_alpha_limit",
                      "m0"],
        [(K_[i, j], R_[i, j], A_BG, th["idg"][i, j], bg[i, j], lim[i, j], th["m0"][i, j])
         for i in range(GRID) for j in range(GRID)])

# %% [markdown]
# ## Transition ($\alpha\to\infty$) and crossover lines (finite $\alpha$)

# %%
brows = []
for rho in BOUNDARY_RHOS:
    res = alignment_transition(rho, TAU, SIGMA2, dps=20)
    brows.append((float(rho), "inf", float(res.location.value),
                  float(res.location.error_bound)))
    for a in ALPHAS:
        res = alignment_transition(rho, TAU, SIGMA2, alpha=a, dps=20)
        brows.append((float(rho), a, float(res.location.value),
                      float(res.location.error_bound)))
out.csv("_boundary.csv", ["rho", "alpha", "kappa_c", "error_bound"], brows)
for rho in BOUNDARY_RHOS:
    sel = [b for b in brows if b[0] == float(rho)]
    print(f"rho={rho}: " + ", ".join(f"alpha={b[1]}: kappa*={b[2]:.6f}" for b in sel))

# %% [markdown]
# ## The library's low-rank phase diagram, and the boundary crossed in the other direction
#
# `replica.analysis.phase_diagram.lowrank_phase_diagram` (the `replica phase-diagram lowrank`
# command) draws the same plane from the low-rank model itself: at fixed $\kappa<1$ it locates
# $\rho_c(\kappa)$ as the kink of $\lim_{\alpha\to\infty}m_0(\rho)$ ($m_0\to\min(\kappa,\rho)/\rho$,
# the overlap on the task subspace) with `replica.analysis.transitions.lowrank_transition`, and the
# finite-$\alpha$ crossovers $\rho^*(\alpha)$ as the extremal curvature of $m_0(\rho)$. Its files go
# to `lr4_phase_diagram/`; its points are overlaid below (diamonds and squares) on the
# $\kappa^*(\rho)$ lines computed above, an independent route to the same boundary.

# %%
lowrank_phase_diagram = getattr(phase_diagram, "lowrank_phase_diagram", None)
rrows = []
if lowrank_phase_diagram is None:
    print("replica.analysis.phase_diagram.lowrank_phase_diagram not available: "
          "rho_c(kappa) skipped")
else:
    sub = os.path.join(args.out, "lr4_phase_diagram")
    lib_rows = lowrank_phase_diagram(sub, tau=TAU, sigma=SIGMA, alphas=tuple(ALPHAS),
                                     kappas=BOUNDARY_KAPPAS, grid=GRID, dps=20)
    for name in ("lowrank_phase_diagram.png", "lowrank_phase_diagram.pdf",
                 "lowrank_phase_diagram.svg", "lowrank_phase_diagram_grid.csv",
                 "lowrank_phase_diagram_boundary.csv"):
        out.add(os.path.join(sub, name))
    _common.show_file(os.path.join(sub, "lowrank_phase_diagram.png"))
    rrows = [(float(k), str(a), float(v), float(e)) for k, a, v, e in lib_rows if v != ""]
    out.csv("_boundary_rho.csv", ["kappa", "alpha", "rho_c", "error_bound"], rrows)
    for kap in BOUNDARY_KAPPAS:
        print(f"kappa={kap}: " + ", ".join(f"alpha={b[1]}: rho*={b[2]:.6f}" for b in rrows
                                            if b[0] == float(kap)))

# %% [markdown]
# ## Figure

# %%
from matplotlib import patheffects  # noqa: E402
from matplotlib.colors import LogNorm  # noqa: E402
from matplotlib.ticker import LogFormatterMathtext  # noqa: E402

from replica import figures  # noqa: E402

plt = _common.pyplot()
fig, ax = plt.subplots(figsize=(6.8, 5.2))
field = np.ma.masked_invalid(np.where(bg > 0, bg, np.nan))
im = ax.pcolormesh(KG, RG, field.T, shading="auto", cmap=figures.SEQUENTIAL,
                   norm=LogNorm(vmin=field.min(), vmax=field.max()))
fig.colorbar(im, ax=ax, format=LogFormatterMathtext(),
             label=r"$\varepsilon_{\rm IDG}/\alpha$ at " + figures.value_text("alpha", ALPHAS[-1]))
ax.plot([0.05, 1.0], [0.05, 1.0], color="k", ls="--", lw=1.2, label=r"diagonal $\rho=\kappa$",
        path_effects=[patheffects.withStroke(linewidth=2.6, foreground="w")])  # any background
sty = {a: figures.series_style(i + 1) for i, a in enumerate(ALPHAS)}
for a in ALPHAS:
    sel = [b for b in brows if b[1] == a]
    ax.plot([b[2] for b in sel], [b[0] for b in sel], color=sty[a]["color"],
            ls=sty[a]["linestyle"], marker="o", ms=3,
            label=r"crossover $\kappa^*(\rho)$, " + figures.value_text("alpha", a))
sel = [b for b in brows if b[1] == "inf"]
ax.plot([b[2] for b in sel], [b[0] for b in sel], "k*", ms=9, mec="w", mew=0.5,
        label=r"located $\kappa_c(\rho)$ ($\alpha\to\infty$)")
for a in ALPHAS:
    sel = [b for b in rrows if b[1] == a]
    ax.plot([b[0] for b in sel], [b[2] for b in sel], "s", color=sty[a]["color"], ms=5,
            mfc="none", label=r"crossover $\rho^*(\kappa)$ from $m_0$, "
            + figures.value_text("alpha", a) if sel else None)
sel = [b for b in rrows if b[1] == "inf"]
if sel:
    ax.plot([b[0] for b in sel], [b[2] for b in sel], "kD", ms=4, mec="w", mew=0.5,
            label=r"located $\rho_c(\kappa)$ from $m_0$ ($\alpha\to\infty$)")
for x, y, text in ((1.05, 0.3, "task-rich\n" r"$\rho<\kappa$"),
                   (0.14, 0.82, "task-scarce\n" r"$\rho>\kappa$")):
    i = int(np.argmin(np.abs(KG - x)))
    j = int(np.argmin(np.abs(RG - y)))
    ax.text(x, y, text, fontsize=9, color=figures.text_colour_at(im, field[i, j]))
ax.set_xlabel(r"task diversity $\kappa$")
ax.set_ylabel(r"task-rank ratio $\rho$")
ax.set_title("low-rank tasks: " + ", ".join(figures.value_text(n, v) for n, v in (
    ("lam", 0), ("tau", TAU), ("sigma", SIGMA))), fontsize=9)
ax.legend(fontsize=6, loc="lower right")
fig.tight_layout()
out.figure(fig)
out.report()
