# ---
# jupyter:
#   jupytext:
#     formats: py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # Low-rank tasks: order parameters, theory against simulation
#
# Settings of the order-parameter check of the low-rank paper's authors (arXiv:2510.04548): $\alpha=2.3$,
# $\tau=1.7$, $\sigma=0.003$, $\lambda=3$, $\rho=0.2$; theory over $\kappa\in[0.1,2]$, simulations
# at $\kappa\in\{0.25,0.5,1,1.5,2\}$ with $D=70$ ($r=14$, $L=161$, $M=8330$, $M_0=70\kappa$) and 10
# trials.
#
# The six order parameters and their finite-$D$ estimators, with $S$ the empirical
# covariance of the $M_0$ training tasks and $P=AA^\top$ the projector on the task subspace:
#
# | | estimator | |
# |---|---|---|
# | $q$ | $\operatorname{Tr}(\Gamma S\Gamma^\top)/D$ | self-overlap on the training tasks |
# | $m$ | $\operatorname{Tr}(\Gamma S)/D$ | teacher–student overlap on the training tasks |
# | $\bar q$ | $\operatorname{Tr}(\Gamma^\top\Gamma)/D$ | isotropic self-overlap |
# | $\bar m$ | $\operatorname{Tr}(\Gamma)/D$ | isotropic overlap |
# | $q_0$ | $\operatorname{Tr}(\Gamma P\Gamma^\top)/r$ | self-overlap on the subspace |
# | $m_0$ | $\operatorname{Tr}(A^\top\Gamma A)/r$ | overlap on the subspace |
#
# Theory: the replica-symmetric fixed point with $z=-(\lambda+\hat{\bar q})/\hat q$, the
# post-processed $\bar m=\frac{\hat m}{\hat q}(1+zg)$, $m_0=\bar m/\rho$ and $q_0$ from (R9).
# Expected shapes: $m_0$ and $q_0$ non-monotone in $\kappa$ with an interior maximum near
# $\kappa\approx0.3$–$0.4$; $q$ and $m$ decreasing. The $\kappa=1$ point is golden fixed point 2
#, checked below at 30 digits.

# %%
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)) if "__file__" in globals() else "")
import _common  # noqa: E402

import replica  # noqa: E402

args = _common.parse_args("Low-rank order parameters vs simulation")
out = _common.Outputs(args.out, "lr2_order_parameters")
P = dict(alpha=2.3, tau=1.7, sigma=0.003, lam=3.0, rho=0.2)
KAPPAS = np.linspace(0.1, 2.0, 30 if args.quick else 200)
KEYS = ["q", "m", "qbar", "mbar", "q0", "m0"]
SIM_D = 20 if args.quick else 70
SIM_SEEDS = 2 if args.quick else 10
SIM_KAPPAS = ["0.5", "1.5"] if args.quick else ["0.25", "0.5", "1", "1.5", "2"]

# %% [markdown]
# ## Theory

# %%
th = replica.solve_float64("lowrank", kappa=KAPPAS, **P)
out.csv("_theory.csv", ["kappa"] + KEYS + ["tm", "idg", "odg"],
        [(k, *(th[key][i] for key in KEYS + ["tm", "idg", "odg"])) for i, k in enumerate(KAPPAS)])
imax = int(np.argmax(th["m0"]))
print(f"m0 is largest at kappa = {KAPPAS[imax]:.3f} (m0 = {th['m0'][imax]:.5f}); q0 at kappa = "
      f"{KAPPAS[int(np.argmax(th['q0']))]:.3f}")

# %%
r = replica.solve("lowrank", alpha="2.3", tau="1.7", kappa=1, rho="0.2", sigma="0.003", lam=3,
                  dps=30)
gold = {"q": 0.47800230, "m": 0.67868216, "qbar": 0.08914485, "q0": 0.42047444,
        "m0": 0.63217627}
for k, g in gold.items():
    print(f"kappa=1: {k} = {float(r[k]):.10f} (golden {g})")
    assert abs(float(r[k]) - g) < 1e-8

# %% [markdown]
# ## Simulations

# %%
simulate = None if args.no_sim else _common.simulate_or_none()
sim_rows = []
if simulate is None:
    print("simulations skipped (--no-sim or replica.simulate not installed)")
else:
    for k in SIM_KAPPAS:
        res = simulate("lowrank", d=SIM_D, seeds=SIM_SEEDS, seed=0, alpha="2.3", tau="1.7",
                       kappa=k, rho="0.2", sigma="0.003", lam="3")
        sim_rows.append((float(k), SIM_D, SIM_SEEDS,
                         *(getattr(res.order_parameters[key], f) for key in KEYS
                           for f in ("mean", "sem", "theory"))))
    out.csv("_sim.csv", ["kappa", "d", "seeds"] + [f"{key}_{f}" for key in KEYS
                                                   for f in ("mean", "sem", "theory")],
            sim_rows)

# %% [markdown]
# ## Figure

# %%
from replica import figures  # noqa: E402

plt = _common.pyplot()
fig, axes = plt.subplots(2, 3, figsize=(11, 6.5))
for j, (ax, key) in enumerate(zip(axes.T.flat, KEYS)):
    ax.plot(KAPPAS, th[key], color=figures.colour(0), ls="-", label="theory")
    for i, row in enumerate(sim_rows):
        ax.errorbar(row[0], row[3 + 3 * j], yerr=row[4 + 3 * j] or 0, fmt="o", color="k",
                    ms=4, capsize=2,
                    label=f"simulation, $D={SIM_D}$ (mean ± s.e.)" if i == 0 else None)
    ax.set_title(figures.label(key))
    ax.set_xlabel(r"task diversity $\kappa$")
axes[0, 0].legend(fontsize=7)
fig.suptitle("low-rank order parameters: " + ", ".join(figures.value_text(n, v) for n, v in (
    ("alpha", 2.3), ("tau", 1.7), ("sigma", 0.003), ("lam", 3), ("rho", 0.2)))
    + f" ({SIM_SEEDS} trials)", fontsize=9)
fig.tight_layout()
out.figure(fig)
out.report()
