# ---
# jupyter:
#   jupytext:
#     formats: py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # Low-rank tasks: the transition at $\rho=\kappa$ sharpens as $\alpha$ grows
#
# The paper's transition scan: $\lambda=0$, $\tau=2.25$, $\kappa=0.5$, $\sigma=0.3$,
# $\tilde\alpha=\alpha$, $\tilde\sigma=0$, $\alpha\in\{4,16,64,256,1024\}$, task-rank ratio
# $\rho\in[0.1,1]$ (the reference points $\{0.1,0.3,0.4,0.45,0.5,0.55,0.6,0.8,1\}$ lie on the grid).
#
# **Mechanism**. The $M_0=\kappa D$ training tasks span $\min(\kappa,\rho)D$ of the
# $r=\rho D$ subspace directions. Task-rich ($\rho<\kappa$): the whole subspace is seen, $m_0\to1$
# and $\varepsilon_{\rm IDG}$ stays $O(1)$. Task-scarce ($\rho>\kappa$): a fraction $1-\kappa/\rho$
# is never seen, $m_0\to\kappa/\rho$ and the structural noise makes $\varepsilon_{\rm IDG}$ grow
# linearly in $\alpha$:
#
# $$\lim_{\alpha\to\infty}\frac{\varepsilon_{\rm IDG}}{\alpha}=
#   \frac{\sigma^2(\rho-\kappa)_+}{\rho(\tau-1)(1+\sigma^2)},\qquad
#   \lim_{\alpha\to\infty}m_0=\frac{\min(\kappa,\rho)}{\rho},$$
#
# both non-analytic at $\rho=\kappa$ (dotted in the figure). At finite $\alpha$ the implicit ridge
# $(1+\sigma^2)/\alpha$ of the finite context smooths the kink; the curves approach it as
# $\alpha$ grows. TM stays $O(1)$ throughout; ODG grows $\propto\alpha$ on both sides.
#
# Theory only (a theory scan): `replica.models.lowrank.solve_float64`, with a
# 30-digit `lowrank.solve` check at one point.

# %%
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)) if "__file__" in globals() else "")
import _common  # noqa: E402

import replica  # noqa: E402
from replica.derivations.lowrank import large_alpha_limits  # noqa: E402
from replica.models import lowrank as L  # noqa: E402
from replica.symbolic import Evaluator  # noqa: E402

args = _common.parse_args("Low-rank transition scan")
out = _common.Outputs(args.out, "lr3_transition_scan")
TAU, KAPPA, SIGMA = 2.25, 0.5, 0.3
ALPHAS = [4, 16, 64, 256, 1024]
SPEC_RHOS = [0.1, 0.3, 0.4, 0.45, 0.5, 0.55, 0.6, 0.8, 1.0]
RHOS = np.union1d(np.round(np.linspace(0.1, 1.0, 10 if args.quick else 91), 10), SPEC_RHOS)

# %% [markdown]
# ## Theory over the $(\alpha,\rho)$ grid

# %%
A_, R_ = np.meshgrid(ALPHAS, RHOS, indexing="ij")
th = replica.solve_float64("lowrank", alpha=A_, tau=TAU, kappa=KAPPA, rho=R_, sigma=SIGMA, lam=0.0)
# the alpha -> oo limits, derived by SymPy from the lambda = 0 closed form (the appendix's step)
LIM = large_alpha_limits()
lim_idg, lim_m0 = Evaluator([LIM["idg_rate_explicit"], LIM["m0_explicit"]],
                            [L.rho, L.kappa, L.tau, L.sigma]).f64([RHOS, KAPPA, TAU, SIGMA])
rows = [(a, r, th["tm"][i, j], th["idg"][i, j], th["odg"][i, j], th["m0"][i, j],
         th["q0"][i, j], th["idg"][i, j] / a, lim_idg[j], lim_m0[j])
        for i, a in enumerate(ALPHAS) for j, r in enumerate(RHOS)]
out.csv("_theory.csv", ["alpha", "rho", "tm", "idg", "odg", "m0", "q0", "idg_over_alpha",
                        "idg_over_alpha_limit", "m0_limit"], rows)

# %% [markdown]
# ## How fast the finite-$\alpha$ curves approach the kink
#
# The largest deviation of $\varepsilon_{\rm IDG}/\alpha$ and of $m_0$ from their $\alpha\to\infty$
# limits over the $\rho$ grid; both shrink as $\alpha$ grows.

# %%
dev_rows = []
for i, a in enumerate(ALPHAS):
    d1 = float(np.max(np.abs(th["idg"][i] / a - lim_idg)))
    d2 = float(np.max(np.abs(th["m0"][i] - lim_m0)))
    dev_rows.append((a, d1, d2))
    print(f"alpha={a:5d}: max |IDG/alpha - limit| = {d1:.3e}, max |m0 - limit| = {d2:.3e}, "
          f"TM in [{th['tm'][i].min():.3f}, {th['tm'][i].max():.3f}]")
out.csv("_approach.csv", ["alpha", "max_dev_idg_over_alpha", "max_dev_m0"], dev_rows)

# %%
r = replica.solve("lowrank", alpha=1024, tau="2.25", kappa="0.5", rho="0.8", sigma="0.3", dps=30)
j = int(np.argmin(abs(RHOS - 0.8)))
print(f"alpha=1024, rho=0.8: IDG = {float(r['idg']):.12f} (mpmath), {th['idg'][-1, j]:.12f} "
      f"(float64); digits {r.digits}")
assert abs(float(r["idg"]) - th["idg"][-1, j]) < 1e-8 * abs(float(r["idg"]))

# %% [markdown]
# ## Figure

# %%
from replica import figures  # noqa: E402

plt = _common.pyplot()
fig, axes = plt.subplots(1, 3, figsize=(13, 4.2))
for i, a in enumerate(ALPHAS):
    st = figures.series_style(i)
    kw = dict(color=st["color"], ls=st["linestyle"])
    axes[0].plot(RHOS, th["idg"][i] / a, label=figures.value_text("alpha", a), **kw)
    axes[1].plot(RHOS, th["m0"][i], **kw)
    axes[2].plot(RHOS, th["tm"][i], **kw)
axes[0].plot(RHOS, lim_idg, color="k", ls=(0, (1, 1)), lw=1.6, label=r"$\alpha\to\infty$")
axes[1].plot(RHOS, lim_m0, color="k", ls=(0, (1, 1)), lw=1.6)
for ax, yl in zip(axes, [r"$\varepsilon_{\rm IDG}/\alpha$", r"$m_0$", r"$\varepsilon_{\rm TM}$"]):
    ax.axvline(KAPPA, color="0.5", lw=0.7, ls="--", label=r"$\rho=\kappa$ (transition)")
    ax.set_xlabel(r"task-rank ratio $\rho = r/D$")
    ax.set_ylabel(yl)
axes[0].legend(fontsize=7)
axes[1].text(0.05, 0.1, "task-rich\n" r"$\rho<\kappa$", fontsize=8,
             transform=axes[1].transAxes)
axes[1].text(0.7, 0.8, "task-scarce\n" r"$\rho>\kappa$", fontsize=8,
             transform=axes[1].transAxes)
fig.suptitle("low-rank tasks (theory): " + ", ".join(figures.value_text(n, v) for n, v in (
    ("lam", 0), ("tau", 2.25), ("kappa", 0.5), ("sigma", 0.3))) + r", $\alpha_{\rm test}=\alpha$",
    fontsize=9)
fig.tight_layout()
out.figure(fig)
out.report()
