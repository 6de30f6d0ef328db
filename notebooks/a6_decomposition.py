# ---
# jupyter:
#   jupytext:
#     formats: py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # Paper A extended: the ICL error split into signal, memorisation and structural parts
#
# Paper A (Letey et al., arXiv:2509.26551) gives $E_{\rm ICL}=e_{\rm scalar}+e_{\rm misalign}$ as a
# whole. Derived from the ridge estimator (`replica appendix alignment`), the trained $\Gamma$ is,
# per eigenvalue $r$ of the empirical task covariance $R_k$, its mean $R_k(R_k+\sigma)^{-1}$ plus a
# fluctuation $q(r+s)f^2$, $f=1/(r+\sigma)$, $s=(\rho+c_{\rm train})/\alpha$. The mean's error is
# the **signal** part, the fluctuation along the task directions $q\,rf^2$ the **memorisation**
# part, the fluctuation driven by the context noise $q\,sf^2$ the **structural** part, and the
# test label noise $\rho$ the fourth (`replica solve alignment ... --json`,
# `decomposition.e_icl`). On $C_{\rm train}=P/\varrho$ these are, to all digits, the low-rank
# paper's parts; here they are drawn for the piano spectrum of paper A's figure, with the
# task-memorisation error $e_{\rm TM}=\tau q$ (a prompt on one of the pretraining tasks), which
# paper A does not state for anisotropic $C_{\rm train}$.
#
# Settings: $d=120$, $\alpha=2$, $\tau=4$, $\rho=0.01$, piano $C_{\rm train}$; tests
# $C_{\rm test}=C_{\rm train}$ and the spike on the bottom direction. Simulations: exact ridge
# regression at a smaller $d$, $E_{\rm ICL}$ and $e_{\rm TM}$ (error on fresh prompts of the
# pretraining tasks); expect them a few per cent above the theory (finite size).

# %%
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)) if "__file__" in globals() else "")
import _common  # noqa: E402

import replica  # noqa: E402
from replica.spectra import parse_spec  # noqa: E402

args = _common.parse_args("Paper A extended: error decomposition")
out = _common.Outputs(args.out, "a6_decomposition")
D, ALPHA, TAU, RHO = 120, 2.0, 4.0, 0.01
TESTS = {"piano": r"$C_{\rm test}=C_{\rm train}$", "spike:120": "spike on the bottom direction"}
PARTS = ["signal", "memorization", "structural", "noise"]
KAPPAS = np.linspace(0.05, 2.15, 12 if args.quick else 43)
SIM_D = 12 if args.quick else 32
SIM_SEEDS = 2 if args.quick else 6
SIM_KAPPAS = ["1/2", "2"] if args.quick else ["1/4", "1/2", "1", "3/2", "2"]

# %% [markdown]
# ## Theory (float64 over $\kappa$) and its parts

# %%
train = parse_spec("piano", D)
theory = {t: replica.solve_float64("alignment", train=train, test=parse_spec(t, D, "--test"),
                                   alpha=ALPHA, tau=TAU, kappa=KAPPAS, rho=RHO) for t in TESTS}
rows = [(t, k, theory[t]["e_icl"][i], theory[t]["e_tm"][i],
         *(theory[t][f"e_icl_{p}"][i] for p in PARTS))
        for t in TESTS for i, k in enumerate(KAPPAS)]
out.csv("_theory.csv", ["test", "kappa", "e_icl", "e_tm"] + PARTS, rows)
for t in TESTS:
    total = sum(theory[t][f"e_icl_{p}"] for p in PARTS)
    assert np.allclose(total, theory[t]["e_icl"], rtol=1e-12), t

# %% [markdown]
# ## Simulations (one trained $\Gamma$ per seed, scored on both tests)

# %%
simulate = None if args.no_sim else _common.simulate_or_none()
sim_rows = []
if simulate is None:
    print("simulations skipped (--no-sim or replica.simulate not installed)")
else:
    for k in SIM_KAPPAS:
        res = simulate("alignment", d=SIM_D, seeds=SIM_SEEDS, seed=0, alpha=ALPHA, tau=TAU,
                       kappa=k, rho=RHO, lam="1e-6", train="piano", test="piano")
        for key in ("e_icl", "e_idg"):  # e_idg: fresh prompts of the pretraining tasks
            e = res.errors[key]
            sim_rows.append((float(eval(k)), key.replace("e_idg", "e_tm"), SIM_D, SIM_SEEDS,
                             e.mean, e.sem, e.theory))
    out.csv("_sim.csv", ["kappa", "error", "d", "seeds", "mean", "sem", "theory"], sim_rows)

# %% [markdown]
# ## Figure: the parts against $\kappa$ for the two tests

# %%
from replica import figures  # noqa: E402

plt = _common.pyplot()
fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), sharey=True)
for ax, (t, title) in zip(axes, TESTS.items()):
    ax.plot(KAPPAS, theory[t]["e_icl"], color="k", lw=1.6, label=r"$E_{\rm ICL}$ (theory)")
    for j, p in enumerate(PARTS[:3]):
        style = figures.series_style(j)
        ax.plot(KAPPAS, theory[t][f"e_icl_{p}"], color=style["color"], ls=style["linestyle"],
                label=p)
    if t == "piano":
        ax.plot(KAPPAS, theory[t]["e_tm"], color="0.45", ls=":", lw=1.4,
                label=r"$e_{\rm TM}=\tau q$ (theory)")
        for key, marker, color in (("e_icl", "o", "k"), ("e_tm", "s", "0.45")):
            pts = [r for r in sim_rows if r[1] == key]
            if pts:
                ax.errorbar([r[0] for r in pts], [r[4] for r in pts], yerr=[r[5] for r in pts],
                            fmt=marker, color=color, mfc="white", ms=5, capsize=2,
                            label=f"{figures.label(key)}, simulation $d={SIM_D}$")
    ax.set_xlabel(r"task diversity $\kappa$")
    ax.set_title(title, fontsize=10)
    ax.set_yscale("log")
axes[0].set_ylabel("error and its parts")
axes[0].legend(fontsize=7)
fig.suptitle("Paper A, piano training, decomposed: " + ", ".join(
    figures.value_text(n, v) for n, v in (("d", D), ("alpha", ALPHA), ("tau", TAU), ("rho", RHO)))
    + f" ({SIM_SEEDS} seeds)", fontsize=9)
fig.tight_layout()
out.figure(fig)
out.report()
