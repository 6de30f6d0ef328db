# ---
# jupyter:
#   jupytext:
#     formats: py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # Low-rank tasks (Takanami et al.): error decomposition for the three test protocols
#
# Fig. 1 settings of the low-rank paper: $\gamma=1.5$, $\kappa=1.5$ so $\tau=\gamma\kappa=2.25$;
# task-rank ratio $\rho=r/D=0.9$; label-noise standard deviation $\sigma=0.3$; test context length
# $\tilde\alpha=\alpha$, noiseless test ($\tilde\sigma=0$); ridge $\lambda=0$ (the caption gives
# none; the problem is well posed at finite $\alpha$). x-axis: $\alpha$. Since
# $\rho<\kappa$ this is the task-rich regime.
#
# **Theory** (`replica.models.lowrank`, the replica-symmetric saddle point). The errors
# (E1)–(E3) are $\varepsilon_X=\tilde\sigma^2+1-2m_X+q_X+\frac{1+\tilde\sigma^2}{\tilde\alpha}\bar q$
# with $(m_X,q_X)=(m,q)$ for task memorisation (TM, a pretraining task), $(m_0,q_0)$ for
# in-distribution generalisation (IDG, a new task in the same subspace) and $(\bar m,\bar q)$ for
# out-of-distribution generalisation (ODG, a new subspace). Each $q$ splits into the parts
# proportional to $\hat m^2$ (S), $\hat\chi$ (T) and $\hat{\bar\chi}$ (R), which gives (E5)
#
# $$\varepsilon_X=\underbrace{1-2m_X+q_X^S+\tfrac{1}{\tilde\alpha}\bar q^S}_{\text{algorithmic signal}}
#  +\underbrace{q_X^T+\tfrac{1}{\tilde\alpha}\bar q^T}_{\text{memorisation noise}}
#  +\underbrace{q_X^R+\tfrac{1}{\tilde\alpha}\bar q^R}_{\text{structural noise}} .$$
#
# The labels memorisation = T and structural = R are an **inferred** mapping, not
# checked against the paper's text. Dashed: total; solid: the three parts.
#
# **Simulations**: exact ridge solution of the pretraining objective (M6) at dimension $D$
# (the paper: $D=60$, 5 experiments, standard errors); errors from the closed-form expectation over
# test prompts. Expect the simulations above the theory by a few per cent at $D\approx60$.

# %%
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)) if "__file__" in globals() else "")
import _common  # noqa: E402

import replica  # noqa: E402

args = _common.parse_args("Low-rank paper Fig. 1: error decomposition")
out = _common.Outputs(args.out, "lr1_error_decomposition")
GAMMA, KAPPA, RHO, SIGMA = 1.5, 1.5, 0.9, 0.3
TAU = GAMMA * KAPPA
ALPHAS = np.logspace(np.log10(0.25), np.log10(50), 12 if args.quick else 60)
PROTOCOLS = ["tm", "idg", "odg"]
PARTS = ["signal", "memorization", "structural", "noise"]
SIM_D = 16 if args.quick else 60
SIM_SEEDS = 2 if args.quick else 5
SIM_ALPHAS = ["1", "4"] if args.quick else ["0.5", "1", "2", "4", "8", "16"]

# %% [markdown]
# ## Theory (float64 solution of the saddle-point equations over the $\alpha$ grid)

# %%
th = replica.solve_float64("lowrank", alpha=ALPHAS, tau=TAU, kappa=KAPPA, rho=RHO, sigma=SIGMA,
                           lam=0.0)
rows = [(a, *(th[p][i] for p in PROTOCOLS),
         *(th[f"{p}_{part}"][i] for p in PROTOCOLS for part in PARTS))
        for i, a in enumerate(ALPHAS)]
out.csv("_theory.csv", ["alpha"] + PROTOCOLS + [f"{p}_{part}" for p in PROTOCOLS for part in PARTS],
        rows)
for p in PROTOCOLS:
    total = sum(th[f"{p}_{part}"] for part in PARTS)
    assert np.allclose(total, th[p], rtol=1e-10), p

# %% [markdown]
# ## Check at the golden point $\alpha=2$ (fixed point 1 of the authors' code), high precision

# %%
r = replica.solve("lowrank", alpha=2, tau="2.25", kappa="1.5", rho="0.9", sigma="0.3", dps=30)
gold = {"tm": 0.55040616, "idg": 0.75981063, "odg": 0.86820251}
for p, g in gold.items():
    print(f"alpha=2: {p.upper()} = {float(r[p]):.10f} (golden {g})")
    assert abs(float(r[p]) - g) < 1e-8

# %% [markdown]
# ## Simulations

# %%
simulate = None if args.no_sim else _common.simulate_or_none()
sim_rows = []
if simulate is None:
    print("simulations skipped (--no-sim or replica.simulate not installed)")
else:
    for a in SIM_ALPHAS:
        res = simulate("lowrank", d=SIM_D, seeds=SIM_SEEDS, seed=0, alpha=a, tau="2.25",
                       kappa="1.5", rho="0.9", sigma="0.3")
        sim_rows.append((float(a), SIM_D, SIM_SEEDS,
                         *(getattr(res.errors[p], f) for p in PROTOCOLS
                           for f in ("mean", "sem", "theory"))))
    out.csv("_sim.csv", ["alpha", "d", "seeds"] + [f"{p}_{f}" for p in PROTOCOLS
                                                   for f in ("mean", "sem", "theory")], sim_rows)

# %% [markdown]
# ## Figure: one panel per protocol

# %%
from replica import figures  # noqa: E402

plt = _common.pyplot()
fig, axes = plt.subplots(1, 3, figsize=(13, 4.2), sharey=True)
pc = {part: figures.series_style(i) for i, part in enumerate(("signal", "memorization",
                                                               "structural"))}
for j, (ax, p) in enumerate(zip(axes, PROTOCOLS)):
    ax.plot(ALPHAS, th[p], color="k", ls="-", lw=1.6, label="total (theory)")
    for part in ("signal", "memorization", "structural"):
        ax.plot(ALPHAS, th[f"{p}_{part}"], color=pc[part]["color"], ls=pc[part]["linestyle"],
                label=part)
    for i, row in enumerate(sim_rows):
        ax.errorbar(row[0], row[3 + 3 * j], yerr=row[4 + 3 * j] or 0, fmt="o", color="k",
                    ms=4, capsize=2,
                    label=f"total, simulation $D={SIM_D}$ (mean ± s.e.)" if i == 0 else None)
    figures.log_axis(ax, "xy")
    ax.set_xlabel(r"context length $\alpha$ ($\tilde\alpha=\alpha$)")
    ax.set_title(figures.label(p), fontsize=10)
axes[0].set_ylabel("generalisation error")
axes[0].legend(fontsize=7)
fig.suptitle("low-rank tasks: " + ", ".join(figures.value_text(n, v) for n, v in (
    ("gamma", 1.5), ("tau", 2.25), ("kappa", 1.5), ("rho", 0.9), ("sigma", 0.3), ("lam", 0)))
    + f" ({SIM_SEEDS} seeds)", fontsize=9)
fig.tight_layout()
out.figure(fig)
out.report()
