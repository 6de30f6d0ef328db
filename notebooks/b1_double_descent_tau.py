# ---
# jupyter:
#   jupytext:
#     formats: py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # Paper B: double descent in the pretraining ratio $\tau$
#
# Lu et al. (arXiv:2405.11751), isotropic tasks and inputs, $C_{\rm train}=C_{\rm test}=I$
# (settings of B's Fig. 1 ).
#
# **Panels A, B (ridgeless).** $\rho=0.01$, $\kappa=0.5$, $\alpha\in\{1,10,100\}$, $\tau$ swept
# through 1 from both sides. With $x^*=(1+\rho)/\alpha$ paper B's closed forms have poles
# $1/(1-\tau)$ for $\tau<1$ and $1/(\tau-1)$ for $\tau>1$: the number of pretraining contexts
# $n=\tau d^2$ crosses the number of parameters $\approx d^2$ at $\tau=1$ (interpolation
# threshold), and $e^{\rm ICL}$ and $e^{\rm IDG}$ diverge like $1/|1-\tau|$ there.
#
# **Panel C (ridge).** $\alpha=10$, $\kappa=\infty$ (a fresh task per context), ridge
# $\lambda\in\{10^{-5},0.1,1\}$ (papers A/B normalisation $(n/d)\lambda\|\Gamma\|^2$). The ridge
# formula replaces the effective-ridge equation by
# $\xi\,\mathcal M_\kappa(\xi+x^*)=1-\tau+\tau\lambda/\xi$, which has a positive root for every
# $\tau$ including $\tau=1$: $\lambda=10^{-5}$ leaves a sharp peak, $\lambda=0.1$ and $1$ remove it.
#
# Curves: paper B's closed forms (`replica.models.isotropic`, mpmath). **Simulations** follow
# paper B's protocol (tasks on the sphere, balanced assignment; ridge $\lambda=10^{-5}$ for the
# "ridgeless" points) at small $d$; there the interpolation threshold sits at $n=d(d+1)$, i.e.
# $\tau=1+1/d$, and the peak is rounded by finite-size fluctuations.

# %%
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)) if "__file__" in globals() else "")
import _common  # noqa: E402

import replica  # noqa: E402

args = _common.parse_args("Paper B double descent in tau")
out = _common.Outputs(args.out, "b1_double_descent_tau")
RHO, KAPPA = "0.01", "0.5"
ALPHAS = ["1", "10", "100"]
LAMS = ["1e-5", "0.1", "1"]
n_side = 8 if args.quick else 40
TAU_LO = np.round(np.linspace(0.1, 0.97, n_side), 6)
TAU_HI = np.round(np.linspace(1.03, 3.0, n_side), 6)
TAU_RIDGE = np.round(np.linspace(0.2, 3.0, 15) if args.quick else np.linspace(0.1, 3.0, 59), 6)
SIM_D = 8 if args.quick else 30
SIM_SEEDS = 2 if args.quick else 5
SIM_TAUS = ["0.5", "2"] if args.quick else ["0.2", "0.5", "0.85", "1.15", "1.5", "2"]
SIM_ALPHAS = ["10"] if args.quick else ["1", "10", "100"]


def iso(**kw):
    return replica.solve("isotropic", dps=20, verify=False, **kw)


# %% [markdown]
# ## Theory: ridgeless (A, B) and ridge (C)

# %%
rows = []
for a in ALPHAS:
    for t in np.concatenate([TAU_LO, TAU_HI]):
        r = iso(alpha=a, tau=repr(float(t)), kappa=KAPPA, rho=RHO)
        rows.append(("ridgeless", a, KAPPA, "0", float(t), float(r["e_icl"]), float(r["e_idg"])))
for lam in LAMS:
    for t in TAU_RIDGE:
        r = iso(alpha="10", tau=repr(float(t)), kappa="inf", rho=RHO, lam=lam)
        rows.append(("ridge", "10", "inf", lam, float(t), float(r["e_icl"]), float(r["e_idg"])))
out.csv("_theory.csv", ["panel", "alpha", "kappa", "lam", "tau", "e_icl", "e_idg"], rows)
near = [rw for rw in rows if rw[0] == "ridgeless" and rw[1] == "10"]
print("ridgeless, alpha=10: e_ICL at tau = "
      + ", ".join(f"{rw[4]:.2f}: {rw[5]:.3g}" for rw in near if abs(rw[4] - 1) < 0.05))
for lam in LAMS:
    peak = max((rw for rw in rows if rw[0] == "ridge" and rw[3] == lam), key=lambda rw: rw[5])
    print(f"ridge lambda={lam}: max e_ICL over the tau grid = {peak[5]:.4f} at tau={peak[4]:.3f}")

# %% [markdown]
# ## Simulations

# %%
simulate = None if args.no_sim else _common.simulate_or_none()
sim_rows = []
if simulate is None:
    print("simulations skipped (--no-sim or replica.simulate not installed)")
else:
    for a in SIM_ALPHAS:
        for t in SIM_TAUS:
            res = simulate("isotropic", d=SIM_D, seeds=SIM_SEEDS, seed=0, alpha=a, tau=t,
                           kappa=KAPPA, rho=RHO, lam="1e-5", task_law="sphere", balanced=True)
            sim_rows.append(("ridgeless", a, KAPPA, "1e-5", float(t), SIM_D, SIM_SEEDS,
                             *(getattr(res.errors[k], f) for k in ("e_icl", "e_idg")
                               for f in ("mean", "sem", "theory"))))
    for lam in LAMS[1:] if args.quick else LAMS:
        for t in (["1"] if args.quick else ["0.5", "1", "2"]):
            res = simulate("isotropic", d=SIM_D, seeds=SIM_SEEDS, seed=0, alpha="10", tau=t,
                           kappa="inf", rho=RHO, lam=lam, task_law="sphere")
            sim_rows.append(("ridge", "10", "inf", lam, float(t), SIM_D, SIM_SEEDS,
                             *(getattr(res.errors[k], f) for k in ("e_icl", "e_idg")
                               for f in ("mean", "sem", "theory"))))
    out.csv("_sim.csv", ["panel", "alpha", "kappa", "lam", "tau", "d", "seeds", "e_icl_mean",
                         "e_icl_sem", "e_icl_theory", "e_idg_mean", "e_idg_sem",
                         "e_idg_theory"], sim_rows)

# %% [markdown]
# ## Figure

# %%
from replica import figures  # noqa: E402

plt = _common.pyplot()
fig, axes = plt.subplots(1, 3, figsize=(13, 4.2))
sty = {a: figures.series_style(i) for i, a in enumerate(ALPHAS)}
lsty = {lam: figures.series_style(i + 3) for i, lam in enumerate(LAMS)}
for a in ALPHAS:
    for side in (TAU_LO, TAU_HI):
        sel = [rw for rw in rows if rw[0] == "ridgeless" and rw[1] == a and rw[4] in set(side)]
        kw = dict(color=sty[a]["color"], ls=sty[a]["linestyle"],
                  label=figures.value_text("alpha", a) if side is TAU_LO else None)
        axes[0].plot([rw[4] for rw in sel], [rw[5] for rw in sel], **kw)
        axes[1].plot([rw[4] for rw in sel], [rw[6] for rw in sel], **kw)
for lam in LAMS:
    sel = [rw for rw in rows if rw[0] == "ridge" and rw[3] == lam]
    axes[2].plot([rw[4] for rw in sel], [rw[5] for rw in sel], color=lsty[lam]["color"],
                 ls=lsty[lam]["linestyle"], label=figures.value_text("lam", lam))
for rw in sim_rows:
    if rw[0] == "ridgeless":
        st = sty[rw[1]]
        axes[0].errorbar(rw[4], rw[7], yerr=rw[8] or 0, fmt=st["marker"], ms=4, capsize=2,
                         color=st["color"])
        axes[1].errorbar(rw[4], rw[10], yerr=rw[11] or 0, fmt=st["marker"], ms=4, capsize=2,
                         color=st["color"])
    else:
        st = lsty[rw[3]]
        axes[2].errorbar(rw[4], rw[7], yerr=rw[8] or 0, fmt=st["marker"], ms=4, capsize=2,
                         color=st["color"])
for ax, title in zip(axes, [r"A: ridgeless $e_{\rm ICL}$, $\kappa=0.5$",
                            r"B: ridgeless $e_{\rm IDG}$, $\kappa=0.5$",
                            r"C: ridge $e_{\rm ICL}$, $\alpha=10$, $\kappa=\infty$"]):
    ax.axvline(1, color="0.5", ls=":", lw=0.8, label=r"interpolation threshold $\tau=1$")
    if sim_rows:
        ax.plot([], [], "o", ms=4, color="0.4",
                label=f"simulation, $d={SIM_D}$ (mean ± s.e.)")
    figures.log_axis(ax, "y")
    ax.set_xlabel(r"$\tau = n/d^2$")
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=7)
axes[0].set_ylabel("error")
fig.suptitle(r"paper B double descent, $\rho=0.01$ (lines: closed forms; points: simulation, "
             f"{SIM_SEEDS} seeds)", fontsize=9)
fig.tight_layout()
out.figure(fig)
out.report()
