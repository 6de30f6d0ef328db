# ---
# jupyter:
#   jupytext:
#     formats: py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # Paper A, half-rank pretraining: the transition at $\kappa=\operatorname{rank}(C_{\rm train})/d=1/2$
#
# Settings of the paper's figure: $d=80$, $\alpha=\tau=80$, $\rho=0.01$,
# $C_{\rm train}=\operatorname{diag}(2,\dots,2,0,\dots,0)$ (rank $d/2$, SPEC `lowrank:0.5`), and
# five test covariances, each trace-normalised to $d$: $C_{\rm train}$ ("test on pretrain"), $I$
# ("isotropic"), the aligned power law $(j+1)^{-1/2}$, the unaligned power law $(d-j)^{-1/2}$
# (weight on the directions pretraining never saw), and a spike on a top direction (index 2,
# "max-aligned spike"; every index $\le d/2$ gives the same value because the top eigenvalue is
# degenerate).
#
# **Theory.** The same equations as the theory above (resolvent self-consistency, $\sigma=(\rho+1)/\alpha$,
# $q$, $e_{\rm scalar}$, $K$), evaluated on the two-atom spectrum. In the joint limit
# $\alpha,\tau\to\infty$ with $c=\alpha/\tau$ fixed (here $c=1$)
#
# $$E_{\rm ICL}(C_{\rm test}=C_{\rm train})\to\rho+\Big(1+\frac{c\rho}{1+\rho}\Big)
#   \Big(1-\frac{\kappa}{r}\Big)_+,\qquad
#   E_{\rm ICL}(I)\to\rho+\Big(1+\frac{c\rho}{1+\rho}\Big)\big(1-\min(\kappa,r)\big),$$
#
# with $r=1/2$: a kink at $\kappa=r$. The notebook locates the kink numerically with
# `replica.analysis.transitions.alignment_transition` (the $\alpha\to\infty$ non-analytic point
# of the zero-atom mass $\lim_{\sigma\to0}\sigma M_\kappa(\sigma)$, and its finite-$\alpha$ crossover at
# $\alpha=80$), never by substituting $r$. Dotted guides at $\kappa=1/2$ and at error $=\rho$.
#
# **Simulations** at small $d$ (the paper's $d=80$ with $\tau=80$ means $n=512\,000$ contexts and
# 6480 unknowns): ridge $\lambda=10^{-6}$, mean ± s.e.m. Below the transition only
# $k=\lfloor\kappa d\rfloor$ tasks are seen and the finite-size gap is large: at $\kappa=0.3$,
# test on pretrain, 3 seeds give 1.40, 0.65, 0.55 at $d=10,20,30$ against the theory 0.4196; above
# it ($\kappa=1$) 0.0194, 0.0175, 0.0174 against 0.01676.

# %%
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)) if "__file__" in globals() else "")
import _common  # noqa: E402

import replica  # noqa: E402
from replica.spectra import parse_spec  # noqa: E402
from replica.analysis.transitions import alignment_transition  # noqa: E402

args = _common.parse_args("Paper A half-rank figure")
out = _common.Outputs(args.out, "a2_half_rank_transition")

D, ALPHA, TAU, RHO = 80, 80.0, 80.0, 0.01
KAPPAS = np.linspace(0.2, 2.2, 21 if args.quick else 101)
SIM_D = 10 if args.quick else 24
SIM_SEEDS = 2 if args.quick else 4
SIM_KAPPAS = [0.75, 1.5] if args.quick else [0.2, 0.4, 0.5, 0.6, 0.8, 1.2, 1.6, 2.0]


def unaligned_spec(d):
    """SPEC for eigenvalues (d - j)^(-1/2), j = 0..d-1 (increasing: weight on the null space of
    C_train), written as a .npy file; ``file:`` SPECs are trace-normalised to d."""
    path = os.path.join(args.out, f"a2_unaligned_powerlaw_d{d}.npy")
    np.save(path, (d - np.arange(d)) ** -0.5)
    if path not in out.files:
        out.add(path)
    return f"file:{path}"


def tests(d):
    return {"pretrain": "lowrank:0.5", "isotropic": "identity", "aligned powerlaw":
            "powerlaw:0.5", "unaligned powerlaw": unaligned_spec(d), "max-aligned spike":
            "spike:2"}


# %% [markdown]
# ## Theory curves

# %%
train = parse_spec("lowrank:0.5", D)
TESTS = tests(D)
theory = {name: replica.solve_float64("alignment", train=train, test=parse_spec(spec, D, "--test"),
                                      alpha=ALPHA, tau=TAU, kappa=KAPPAS, rho=RHO)
          for name, spec in TESTS.items()}
# The joint limit alpha, tau -> oo at fixed alpha/tau, from the model's own equations evaluated at
# alpha = 10^12 (the limit to O(1/alpha) away from the kink, O(alpha^-1/2) at it); the test of
# this notebook compares it with the paper's closed-form limit.
A_INF = 10**12
limit = {name: np.array([float(replica.solve(
    "alignment", alpha=A_INF, tau=A_INF * TAU / ALPHA, kappa=float(k), rho=RHO, d=2,
    train="lowrank:0.5", test=TESTS[name], dps=30, verify=False)["e_icl"]) for k in KAPPAS])
    for name in ("pretrain", "isotropic")}
rows = [(name, k, theory[name]["e_icl"][i], theory[name]["e_scalar"][i],
         theory[name]["e_misalign"][i], limit[name][i] if name in limit else None)
        for name in TESTS for i, k in enumerate(KAPPAS)]
out.csv("_theory.csv", ["test", "kappa", "e_icl", "e_scalar", "e_misalign",
                        "e_icl_limit_alpha_tau_inf"], rows)

# %% [markdown]
# ## The transition, located numerically

# %%
kink = alignment_transition("1/2", "80", "0.01", dps=20)
cross = alignment_transition("1/2", "80", "0.01", alpha="80", dps=20)
kc, kx = float(kink.location.value), float(cross.location.value)
print(f"kappa_c (alpha -> oo) = {kc:.12f} +- {float(kink.location.error_bound):.1e}")
print(f"  definition: {kink.definition}")
print(f"finite-alpha crossover at alpha = 80: kappa* = {kx:.10f}")
out.csv("_transition.csv", ["quantity", "value", "error_bound", "definition"],
        [("kappa_c_alpha_inf", kc, float(kink.location.error_bound), kink.definition),
         ("kappa_star_alpha_80", kx, float(cross.location.error_bound), cross.definition)])

# %% [markdown]
# ## Simulations

# %%
simulate = None if args.no_sim else _common.simulate_or_none()
sim_rows = []
if simulate is None:
    print("simulations skipped (--no-sim or replica.simulate not installed)")
else:
    sim_tests = tests(SIM_D)
    names = ["pretrain", "isotropic"] if args.quick else list(sim_tests)
    for name in names:
        for k in SIM_KAPPAS:
            res = simulate("alignment", d=SIM_D, seeds=SIM_SEEDS, seed=0, alpha="80", tau="80",
                           kappa=str(k), rho="0.01", lam="1e-6", train="lowrank:0.5",
                           test=sim_tests[name])
            e = res.errors["e_icl"]
            sim_rows.append((name, SIM_D, SIM_SEEDS, k, e.mean, e.sem, e.theory, e.z))
    out.csv("_sim.csv", ["test", "d", "seeds", "kappa", "e_icl_mean", "e_icl_sem",
                         "e_icl_theory_at_d", "z"], sim_rows)

# %% [markdown]
# ## Figure

# %%
from replica import figures  # noqa: E402

plt = _common.pyplot()
fig, ax = plt.subplots(figsize=(6.6, 4.6))
styles = {name: ({"color": "k", "marker": "o", "linestyle": "-"} if name == "pretrain"
                 else figures.series_style(i)) for i, name in enumerate(TESTS)}
for name in TESTS:
    ax.plot(KAPPAS, theory[name]["e_icl"], color=styles[name]["color"],
            ls=styles[name]["linestyle"], label=f"test on {name}")
for j, name in enumerate(limit):
    ax.plot(KAPPAS, limit[name], color=styles[name]["color"], ls=":", lw=1,
            label=r"$\alpha,\tau\to\infty$ limit (at $\alpha=10^{12}$)" if j == 0 else None)
for name, _, _, k, m, s, _, _ in sim_rows:
    ax.errorbar(k, m, yerr=s or 0, fmt=styles[name]["marker"], ms=4, capsize=2,
                color=styles[name]["color"])
if sim_rows:
    ax.plot([], [], "o", ms=4, color="0.4", label=f"simulation, $d={SIM_D}$ (mean ± s.e.)")
ax.axvline(0.5, color="0.5", ls=(0, (1, 3)), lw=0.8, label=r"$\kappa=1/2$ (rank fraction)")
ax.axhline(RHO, color="0.5", ls=(0, (3, 3)), lw=0.8, label=r"noise floor $\rho$")
ax.axvline(kc, color=figures.colour(1), lw=0.6, alpha=0.8,
           label=fr"located $\kappa_c = {kc:.6f}$")
figures.log_axis(ax, "y")
ax.set_xlabel(r"task diversity $\kappa$")
ax.set_ylabel(r"$E_{\rm ICL}$")
ax.set_title(r"half-rank $C_{\rm train}$, " + ", ".join(
    figures.value_text(n, v) for n, v in (("d", D), ("alpha", 80), ("tau", 80), ("rho", RHO))),
    fontsize=9)
ax.legend(fontsize=6.5)
fig.tight_layout()
out.figure(fig)

# %%
for k0 in (0.3, 0.5, 1.0, 2.0):
    i = int(np.argmin(abs(KAPPAS - k0)))
    print(f"  kappa={KAPPAS[i]:.2f}: " + ", ".join(f"{n}={theory[n]['e_icl'][i]:.5f}"
                                                   for n in TESTS))
out.report()
