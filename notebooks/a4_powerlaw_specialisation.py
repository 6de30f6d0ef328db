# ---
# jupyter:
#   jupytext:
#     formats: py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # Paper A: power-law specialisation heatmap (linear-attention theory)
#
# Paper A's Figure 4 trains softmax Transformers ($d=32$, $\alpha=1$,
# $\tau=4$, $\rho=0.01$) on power-law task covariances $p_{\rm train}\in\{0.5,0.7,\dots,2.9\}$ and
# tests on $p_{\rm test}=0.9$, for $\kappa\in\{0.2,\dots,2.2\}$, plotting the relative gain
#
# $$G(\kappa,p_{\rm train})=-100\,\frac{E(p_{\rm train})-E(p_{\rm test})}{E(p_{\rm test})}\quad(\%)$$
#
# against $(\kappa,\,p_{\rm train}-p_{\rm test})$. The authors' repository holds no Transformer
# outputs; this notebook draws the **linear-attention theory** on the same axes with
# `replica.analysis.phase_diagram.alignment_specialisation`: $E$ is the theory error of `replica.models.alignment`
# $E_{\rm ICL}(C_{\rm train}=\text{powerlaw}(p_{\rm train}),\,C_{\rm test}=\text{powerlaw}(0.9))$
# (float64 heatmap), and the boundary $G=0$ with $p_{\rm train}>p_{\rm test}$, beyond which a steeper
# pretraining spectrum stops helping, is traced by continuation in mpmath.
#
# Expected (the specialisation–generalisation trade-off): at low task diversity a steeper
# (more specialised) pretraining spectrum helps ($G>0$), at high diversity it hurts, and an overly
# steep spectrum always hurts.

# %%
import csv
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)) if "__file__" in globals() else "")
import _common  # noqa: E402

from replica.analysis.phase_diagram import alignment_specialisation  # noqa: E402

args = _common.parse_args("Paper A power-law specialisation heatmap")
out = _common.Outputs(args.out, "a4_powerlaw_specialisation")
D = 16 if args.quick else 32
KAPPAS = np.linspace(0.2, 2.2, 9 if args.quick else 41)
DP = np.linspace(-0.4, 2.0, 13 if args.quick else 49)

# %% [markdown]
# ## Heatmap and boundary (written by `replica.analysis.phase_diagram`)

# %%
sub = os.path.join(args.out, "a4_powerlaw_specialisation")
boundary = alignment_specialisation(sub, d=D, alpha="1", tau="4", rho="0.01", p_test="0.9",
                                    kappas=KAPPAS, dps_range=DP, dps=15 if args.quick else 20)
for name in ("alignment_specialisation.png", "alignment_specialisation.pdf",
             "alignment_specialisation.svg", "alignment_specialisation_grid.csv",
             "alignment_specialisation_boundary.csv"):
    out.add(os.path.join(sub, name))
_common.show_file(os.path.join(sub, "alignment_specialisation.png"))

# %% [markdown]
# ## Summary: where specialisation pays
#
# For each $\kappa$: the best $p_{\rm train}-p_{\rm test}$ on the grid and its gain.

# %%
with open(os.path.join(sub, "alignment_specialisation_grid.csv")) as fh:
    grid = [(float(r["kappa"]), float(r["p_train_minus_p_test"]), float(r["gain_percent"]))
            for r in csv.DictReader(fh)]
rows = []
for k in KAPPAS:
    pts = [g for g in grid if abs(g[0] - k) < 1e-9]
    best = max(pts, key=lambda g: g[2])
    rows.append((float(k), best[1], best[2]))
    print(f"  kappa={k:.2f}: best p_train - p_test = {best[1]:+.2f}, gain {best[2]:+.2f} %")
out.csv("_best.csv", ["kappa", "best_p_train_minus_p_test", "gain_percent"], rows)
print(f"boundary G = 0 (p_train > p_test): {len(boundary)} traced points"
      + (f", from kappa={float(boundary[0][0]):.3f} (dp={float(boundary[0][1]):.3f}) to "
         f"kappa={float(boundary[-1][0]):.3f} (dp={float(boundary[-1][1]):.3f})" if boundary
         else ""))
out.report()
