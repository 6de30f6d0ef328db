# ---
# jupyter:
#   jupytext:
#     formats: py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # Paper A: test-time context length $\alpha_{\rm test}$
#
# Settings of the paper's figure: $d=150$, $\alpha=2$, $\tau=4$, $\kappa=1$, $\rho=0.01$,
# ridge $\lambda=10^{-4}$, $\alpha_{\rm test}$ on 21 log-spaced values from $10^{-1}$ to $10^3$,
# and $C_{\rm train}=C_{\rm test}\in\{I,\ \text{powerlaw } p=1,\ \text{powerlaw } p=1.5\}$.
#
# **Theory**: the model is pretrained at context length $\alpha$; at test time only the
# prefactor of the scalar part changes,
#
# $$e_{\rm scalar}=\rho+\frac{c_{\rm test}+\rho}{\alpha_{\rm test}}\Big[1+(q-2\sigma)M_\kappa(\sigma)
#   +(q\tilde\lambda-\sigma^2)M'_\kappa(\sigma)\Big],$$
#
# while $\sigma$, $q$, $M$ and $e_{\rm misalign}$ keep the training $\alpha$ (with ridge the
# effective ridge solves $\tilde\lambda M_\kappa(\sigma)=1-\tau+\tau\lambda/\tilde\lambda$).
# So $E_{\rm ICL}$ is affine in $1/\alpha_{\rm test}$ and saturates at
# $\rho+e_{\rm misalign}$ as $\alpha_{\rm test}\to\infty$; it decreases with $\alpha_{\rm test}$
# exactly when the bracket is positive, as in these settings.
#
# **Simulations**: ridge-trained linear attention at small $d$, each seed pretrained at $\alpha$ and
# evaluated (closed-form expected error) at $\ell_{\rm test}=\lfloor\alpha_{\rm test}d\rfloor$.

# %%
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)) if "__file__" in globals() else "")
import _common  # noqa: E402

import replica  # noqa: E402
from replica.spectra import parse_spec  # noqa: E402

args = _common.parse_args("Paper A test-time context length")
out = _common.Outputs(args.out, "a5_test_context_length")
D = 50 if args.quick else 150
ALPHA, TAU, KAPPA, RHO, LAM = 2.0, 4.0, 1.0, 0.01, 1e-4
ALPHA_TEST = np.logspace(-1, 3, 9 if args.quick else 21)
COVS = {"identity": "identity", "powerlaw 1": "powerlaw:1", "powerlaw 1.5": "powerlaw:3/2"}
SIM_D = 12 if args.quick else 40
SIM_SEEDS = 2 if args.quick else 5
SIM_AT = [0.5, 8.0] if args.quick else [0.1, 0.3, 1.0, 3.0, 10.0, 100.0]

# %% [markdown]
# ## Theory curves

# %%
theory = {}
for name, spec in COVS.items():
    cov = parse_spec(spec, D)
    theory[name] = replica.solve_float64("alignment", train=cov, test=cov, alpha=ALPHA, tau=TAU,
                                         kappa=KAPPA, rho=RHO, lam=LAM, alpha_test=ALPHA_TEST)
rows = [(name, a, theory[name]["e_icl"][i], theory[name]["e_scalar"][i],
         theory[name]["e_misalign"][i]) for name in COVS for i, a in enumerate(ALPHA_TEST)]
out.csv("_theory.csv", ["covariance", "alpha_test", "e_icl", "e_scalar", "e_misalign"], rows)
for name in COVS:
    e = theory[name]["e_icl"]
    sat = RHO + theory[name]["e_misalign"][-1]
    print(f"  {name:12s}: E_ICL from {e[0]:.4f} (alpha_test=0.1) to {e[-1]:.5f} (1000); "
          f"limit rho + e_misalign = {sat:.5f}; monotone decreasing: "
          f"{bool(np.all(np.diff(e) < 0))}")

# %% [markdown]
# ## Simulations

# %%
simulate = None if args.no_sim else _common.simulate_or_none()
sim_rows = []
if simulate is None:
    print("simulations skipped (--no-sim or replica.simulate not installed)")
else:
    for name, spec in COVS.items():
        for at in SIM_AT:
            res = simulate("alignment", d=SIM_D, seeds=SIM_SEEDS, seed=0, alpha="2", tau="4",
                           kappa="1", rho="0.01", lam="1e-4", train=spec, test=spec,
                           alpha_test=str(at))
            e = res.errors["e_icl"]
            sim_rows.append((name, SIM_D, SIM_SEEDS, at, e.mean, e.sem, e.theory, e.z))
    out.csv("_sim.csv", ["covariance", "d", "seeds", "alpha_test", "e_icl_mean", "e_icl_sem",
                         "e_icl_theory_at_d", "z"], sim_rows)

# %% [markdown]
# ## Figure

# %%
from replica import figures  # noqa: E402

plt = _common.pyplot()
fig, ax = plt.subplots(figsize=(6.4, 4.5))
styles = {name: figures.series_style(i) for i, name in enumerate(COVS)}
for j, name in enumerate(COVS):
    st = styles[name]
    ax.plot(ALPHA_TEST, theory[name]["e_icl"], color=st["color"], ls=st["linestyle"],
            label=r"$C_{\rm train}=C_{\rm test}=$" + f" {name}")
    ax.axhline(RHO + theory[name]["e_misalign"][-1], color=st["color"], ls=":", lw=0.8,
               label=(r"$\alpha_{\rm test}\to\infty$: $\rho+e_{\rm misalign}$" if j == 0
                      else None))
for name, _, _, at, m, s, _, _ in sim_rows:
    ax.errorbar(at, m, yerr=s or 0, fmt=styles[name]["marker"], ms=4, capsize=2,
                color=styles[name]["color"])
if sim_rows:
    ax.plot([], [], "o", ms=4, color="0.4", label=f"simulation, $d={SIM_D}$ (mean ± s.e.)")
ax.axvline(ALPHA, color="0.5", ls="--", lw=0.7, label=r"$\alpha_{\rm test}=\alpha$")
figures.log_axis(ax, "xy")
ax.set_xlabel(r"test context length $\alpha_{\rm test}$")
ax.set_ylabel(r"$E_{\rm ICL}$")
ax.set_title(", ".join(figures.value_text(n, v) for n, v in (
    ("d", D), ("alpha", 2), ("tau", 4), ("kappa", 1), ("rho", 0.01), ("lam", "1e-4"))),
    fontsize=9)
ax.legend(fontsize=7)
fig.tight_layout()
out.figure(fig)
out.report()
