"""``make demo``: the workbench end to end, in one run, with progress and a list of what it wrote.

Steps (each can be skipped with ``--skip STEP``):

1. ``derive`` -- run every check of every derivation (``replica.derivations``: each step's
   symbolic identity, limit or numeric comparison) for the models that have one;
2. ``solve`` -- solve the alignment (paper A), isotropic (paper B) and low-rank models at high
   precision on reference points, with the digits each value guarantees (verified by a re-solve
   at more digits), and compare the published golden values;
3. ``transitions`` -- locate the phase transitions numerically (``replica.analysis.transitions``):
   paper A's kappa_c = rank/d for a half-rank C_train, paper B's kappa_c = 1, the low-rank
   rho = kappa transition, each with a finite-alpha crossover, and paper B's interpolation peak
   with ridge;
4. ``appendix`` -- write both LaTeX appendices (``replica.latex``), compiled to PDF when
   ``latexmk`` is installed (the checks of step 1 are reused, not re-run);
5. ``phase`` -- the phase diagrams of ``replica.analysis.phase_diagram`` (PNG + CSV): paper A's
   power-law specialisation, paper B's non-monotonicity regions, the low-rank (kappa, rho) diagram;
6. ``models`` -- the model files of ``examples/`` (your own model, end to end): each solved at a
   reference point with its verified digits; for ridge regression also its equations, the
   double-descent peak located in alpha, a (alpha, lam) map and its appendix;
7. ``figures`` -- every notebook in ``notebooks/`` in quick mode (two at a time);
8. a summary table (``summary.txt``) and the list of files written.

A missing optional part (the notebooks folder outside a source checkout, ``latexmk``, a model
without a derivation) is skipped with a printed note. A step that fails is reported, the others
still run, and the exit status is 1.
"""

from __future__ import annotations

import replica

import argparse
import concurrent.futures
import csv
import os
import shutil
import subprocess
import sys
import time
import traceback

STEPS = ("derive", "solve", "transitions", "appendix", "phase", "models", "figures")
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NOTEBOOKS = os.path.join(REPO, "notebooks")
EXAMPLES = os.path.join(REPO, "examples")

#: Reference points of the example model files: (file, parameters, reported quantities).
EXAMPLE_POINTS = (
    ("ridge_regression.py", dict(alpha=2, lam="1/10", sigma="1/2"), ("test", "train")),
    ("ridge_regression.py", dict(alpha=2, lam="1/10", sigma="1/2", covariance="powerlaw:1",
                                 d=100), ("test", "train")),
    ("lowrank_partial_overlap.py", dict(alpha=2, tau="9/4", kappa="3/2", rho="1/2",
                                        sigma="3/10", phi="1/4"), ("e_phi", "idg", "odg")),
    ("structured_teacher.py", dict(alpha=2, lam="1/100", sigma="1/10", d=50,
                                   covariance="powerlaw:1", teacher="powerlaw:2"), ("test",)),
)


def _table(rows, header):
    widths = [max(len(str(r[i])) for r in rows + [header]) for i in range(len(header))]
    line = "  ".join(h.ljust(w) for h, w in zip(header, widths))
    out = [line, "-" * len(line)]
    out += ["  ".join(str(c).ljust(w) for c, w in zip(r, widths)) for r in rows]
    return "\n".join(out)


def _fmt(x, n=20):
    import mpmath

    if x is None:
        return "-"
    with mpmath.workdps(n + 5):
        return mpmath.nstr(x, n)


def _write_csv(path, header, rows):
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(header)
        w.writerows(rows)


# ---------------------------------------------------------------------------------------------
# 1. derivations
# ---------------------------------------------------------------------------------------------
def derive_section(out_dir):
    """Run every derivation's checks; return (table text, {name: outcomes}, failures, notes)."""
    from . import derivations

    rows, outcomes, failures, notes = [], {}, [], []
    for name in derivations.names():
        try:
            doc = derivations.get(name)
        except ImportError as exc:
            notes.append(f"derivation {name!r} not available ({exc}); skipped")
            continue
        t0 = time.time()
        res = doc.run_checks()
        outcomes[name] = res
        bad = [o for o in res if not o.passed]
        failures += [f"{name}: step {o.step} failed: {o.reason}" for o in bad]
        rows.append((name, len(res), len(res) - len(bad), f"{time.time() - t0:.1f}"))
        print(f"    {name}: {len(res) - len(bad)}/{len(res)} step checks passed", flush=True)
    text = _table(rows, ("derivation", "steps", "checks passed", "seconds"))
    path = os.path.join(out_dir, "derivation_checks.csv")
    _write_csv(path, ["derivation", "step", "passed", "reason", "seconds"],
               [(n, o.step, o.passed, o.reason, f"{o.seconds:.3f}")
                for n, res in outcomes.items() for o in res])
    return text, outcomes, failures, notes, [path]


# ---------------------------------------------------------------------------------------------
# 2. high-precision solves
# ---------------------------------------------------------------------------------------------
ALIGNMENT_CASES = [
    ("piano, test=train, kappa=2", dict(alpha=2, tau=4, kappa=2, rho="0.01", d=120,
                                       train="piano", test="piano")),
    ("piano, spike:1 (top)", dict(alpha=2, tau=4, kappa=2, rho="0.01", d=120, train="piano",
                                  test="spike:1")),
    ("piano, spike:120 (bottom)", dict(alpha=2, tau=4, kappa=2, rho="0.01", d=120,
                                       train="piano", test="spike:120")),
    ("powerlaw:0.9, tau<1", dict(alpha=2, tau="1/2", kappa="1/2", rho="0.01", d=120,
                                 train="powerlaw:0.9", test="powerlaw:0.9")),
    ("half-rank train, kappa=0.3", dict(alpha=80, tau=80, kappa="0.3", rho="0.01", d=80,
                                        train="lowrank:0.5", test="identity")),
]
ISOTROPIC_CASES = [("isotropic tau=1/2", dict(alpha=2, tau="1/2", kappa="1/2", rho="0.01")),
                   ("isotropic tau=4", dict(alpha=2, tau=4, kappa="1/2", rho="0.01")),
                   ("isotropic ridge tau=1", dict(alpha=2, tau=1, kappa="1/2", rho="0.01",
                                                  lam="0.1"))]
#: Golden fixed points tabulated with the authors' public code (alpha, tau, kappa, lambda, sigma, rho) -> TM IDG ODG
LOWRANK_CASES = [
    ("golden 1 (lambda=0)", dict(alpha=2, tau="2.25", kappa="1.5", lam=0, sigma="0.3",
                                 rho="0.9"), (0.55040616, 0.75981063, 0.86820251)),
    ("golden 2 (lambda=3)", dict(alpha="2.3", tau="1.7", kappa=1, lam=3, sigma="0.003",
                                 rho="0.2"), (0.15939661, 0.19488052, 0.87503298)),
    ("golden 3 (tau<1)", dict(alpha=1, tau="0.5", kappa="0.5", lam="0.1", sigma="0.5",
                              rho="0.3"), (0.70840304, 0.90353856, 1.37512039)),
]


def alignment_section(dps: int):
    """Table of paper A / paper B solves at ``dps`` digits (B's closed forms against A's
    equations at C = I: the digits on which they agree)."""
    from .numerics import agreement_digits

    rows = []
    for label, kw in ALIGNMENT_CASES:
        r = replica.solve("alignment", dps=dps, **kw)
        rows.append((label, _fmt(r["e_icl"]), _fmt(r["e_scalar"]), _fmt(r["e_misalign"]),
                     r.digits))
    for label, kw in ISOTROPIC_CASES:
        r = replica.solve("isotropic", dps=dps, **kw)
        a = replica.solve("alignment", dps=dps, d=1, train="identity", test="identity", **kw)
        agree = agreement_digits(r["e_icl"], a["e_icl"], dps)
        rows.append((label + f" (A agrees {agree} dig.)", _fmt(r["e_icl"]), _fmt(r["e_scalar"]),
                     _fmt(r["e_misalign"]), r.digits))
    return _table(rows, ("case", "E_ICL", "e_scalar", "e_misalign", "digits"))


def lowrank_section(dps: int):
    """Table of low-rank solves at the authors' golden points; returns (text, failures)."""

    rows, failures = [], []
    for label, kw, gold in LOWRANK_CASES:
        r = replica.solve("lowrank", dps=dps, **kw)
        dev = max(abs(float(r[k]) - g) for k, g in zip(("tm", "idg", "odg"), gold))
        if dev > 1e-8:
            failures.append(f"lowrank {label}: deviates from the authors' golden values by {dev:.1e}")
        rows.append((label, _fmt(r["tm"]), _fmt(r["idg"]), _fmt(r["odg"]), r.digits,
                     f"{dev:.1e}"))
    return _table(rows, ("case", "TM", "IDG", "ODG", "digits", "|golden - value|")), failures


# ---------------------------------------------------------------------------------------------
# 3. transitions
# ---------------------------------------------------------------------------------------------
def transitions_section(dps: int):
    """Locate the transitions; return (table text, csv rows, notes)."""
    from .analysis import transitions as T

    jobs = [
        ("alignment, C_train = lowrank:1/2, tau=4", "kappa_c", "1/2",
         lambda a: T.alignment_transition("1/2", "4", "0.01", alpha=a, dps=dps)),
        ("isotropic (paper B), tau=4", "kappa_c", "1",
         lambda a: T.isotropic_transition("4", "0.01", alpha=a, dps=dps)),
    ]
    notes = []
    low = getattr(T, "lowrank_transition", None)
    if low is not None:
        jobs.append(("lowrank, kappa=1/2, tau=9/4, sigma=3/10", "rho_c", "1/2",
                     lambda a: low("1/2", "9/4", "3/10", alpha=a, dps=dps)))
    else:
        # Cross-paper identity: the low-rank indicator eps g(-eps) is paper A's sigma M_kappa(sigma)
        # at C_train = P/rho and noise variance sigma^2; the transition is located in kappa at
        # rank ratio rho = 1/2 (the rho = kappa line crossed at one point).
        jobs.append(("lowrank via paper A's C_train = P/rho, rho=1/2, tau=9/4, sigma^2=9/100",
                     "kappa_c", "1/2",
                     lambda a: T.alignment_transition("1/2", "9/4", "9/100", alpha=a, dps=dps)))
        notes.append("replica.analysis.transitions has no lowrank_transition: the low-rank "
                     "rho = kappa transition is located with alignment_transition at C_train = P/rho "
                     "(identical indicator by the cross-paper identity)")
    rows, csv_rows = [], []
    for label, key, expected, fn in jobs:
        for alpha in (None, "100"):
            t0 = time.time()
            res = fn(alpha)
            val = res.location.value
            rows.append((label, "inf" if alpha is None else alpha, key, _fmt(val, 15),
                         _fmt(res.location.error_bound, 3), expected if alpha is None else "",
                         f"{time.time() - t0:.1f}"))
            csv_rows.append((label, "inf" if alpha is None else alpha, key, _fmt(val, 25),
                             _fmt(res.location.error_bound, 5), res.definition))
    t0 = time.time()
    peak = T.isotropic_interpolation_peak("10", "1/2", "0.01", "1/1000", dps=dps)
    rows.append(("isotropic interpolation peak, kappa=1/2, lam=1e-3", "10", "tau_peak",
                 _fmt(peak.location.value, 15), _fmt(peak.location.error_bound, 3), "",
                 f"{time.time() - t0:.1f}"))
    csv_rows.append(("isotropic interpolation peak, kappa=1/2, lam=1e-3", "10", "tau_peak",
                     _fmt(peak.location.value, 25), _fmt(peak.location.error_bound, 5),
                     peak.definition))
    text = _table(rows, ("transition", "alpha", "quantity", "located", "error bound",
                         "expected (alpha->oo)", "s"))
    return text, csv_rows, notes


# ---------------------------------------------------------------------------------------------
# 4. appendices
# ---------------------------------------------------------------------------------------------
def appendix_section(out_dir, outcomes, pdf: bool):
    """Write each appendix (PDF if ``pdf`` and latexmk exists); return (written, notes)."""
    try:
        from .derivations.appendix import write_appendix
    except ImportError as exc:
        return [], [f"replica.derivations.appendix not available ({exc}): appendices skipped"]
    written, notes = [], []
    if pdf and shutil.which("latexmk") is None:
        notes.append("latexmk not found: appendices written as .tex only (no PDF)")
        pdf = False
    for name, res in outcomes.items():
        r = write_appendix(name, out_dir, pdf=pdf, outcomes=res)
        written.append(r.tex)
        if r.pdf is not None:
            written.append(r.pdf.pdf)
        print(f"    {name}: {os.path.basename(r.tex)}" + (" + PDF" if r.pdf else ""), flush=True)
    return written, notes


# ---------------------------------------------------------------------------------------------
# 5. phase diagrams
# ---------------------------------------------------------------------------------------------
#: every figure is written as PNG, PDF and SVG (replica.figures.save_figure)
FIGURE_SUFFIXES = (".png", ".pdf", ".svg")


def phase_section(out_dir, quick: bool):
    import numpy as np

    from .analysis.phase_diagram import alignment_specialisation, isotropic_nonmonotone

    written = []
    if quick:
        b = alignment_specialisation(out_dir, d=16, kappas=np.linspace(0.2, 2.2, 11),
                                     dps_range=np.linspace(-0.4, 2.0, 13), dps=15)
    else:
        b = alignment_specialisation(out_dir)
    print(f"    alignment specialisation: {len(b)} boundary points", flush=True)
    written += [os.path.join(out_dir, "alignment_specialisation" + s)
                for s in FIGURE_SUFFIXES + ("_grid.csv", "_boundary.csv")]
    for tau, which in (("0.5", "e_icl"), ("0.5", "e_idg"), ("20", "e_icl")):
        if quick:
            _, bd = isotropic_nonmonotone(out_dir, tau=tau, which=which,
                                          kappas=np.linspace(0.1, 2.1, 11),
                                          rhos=np.linspace(0.01, 1.0, 6),
                                          alphas=np.logspace(-2, 3, 80), bisection_steps=4)
        else:
            _, bd = isotropic_nonmonotone(out_dir, tau=tau, which=which)
        print(f"    isotropic non-monotone {which}, tau={tau}: {len(bd)} boundary points",
              flush=True)
        tag = f"isotropic_nonmonotone_{which}_tau{tau}"
        written += [os.path.join(out_dir, tag + s)
                    for s in FIGURE_SUFFIXES + ("_grid.csv", "_boundary.csv")]
    notes = []
    from .analysis import phase_diagram

    low = getattr(phase_diagram, "lowrank_phase_diagram", None)
    if low is None:
        notes.append("replica.analysis.phase_diagram has no lowrank_phase_diagram: the "
                     "low-rank (kappa, rho) diagram comes from notebooks/lr4_phase_diagram.py (figures step)")
    else:
        if quick:
            rows = low(out_dir, alphas=("16", "256"), kappas=["0.3", "0.5", "0.7"], grid=12,
                       dps=20)
        else:
            rows = low(out_dir)
        print(f"    lowrank (kappa, rho): {sum(1 for r in rows if r[2] != '')} located points",
              flush=True)
        written += [os.path.join(out_dir, "lowrank_phase_diagram" + s)
                    for s in FIGURE_SUFFIXES + ("_grid.csv", "_boundary.csv")]
    return written, notes


# ---------------------------------------------------------------------------------------------
# 6. model files
# ---------------------------------------------------------------------------------------------
def models_section(out_dir, dps: int, pdf: bool, quick: bool):
    """Solve every example model file at its reference point; for ridge regression also write
    its equations, locate its double-descent peak, map it and write its appendix. Returns
    ``(table text, written, notes)``."""
    from .analysis.scan import locate, plane
    from .derivations.appendix import write_appendix
    from .derivations.equations import as_latex, equation_blocks

    if not os.path.isdir(EXAMPLES):
        return "", [], [f"no examples folder at {EXAMPLES}: model files skipped"]
    os.makedirs(out_dir, exist_ok=True)
    rows, written, notes = [], [], []
    for fname, point, keys in EXAMPLE_POINTS:
        problem = replica.load_model(os.path.join(EXAMPLES, fname))
        r = replica.solve(problem, dps=dps, **point)
        where = ", ".join(f"{k}={v}" for k, v in point.items())
        for k in keys:
            rows.append((fname, where, k, _fmt(r[k], min(r.digits, 20)), r.digits))
    ridge = replica.load_model(os.path.join(EXAMPLES, "ridge_regression.py"))
    path = os.path.join(out_dir, "ridge_regression_equations.tex")
    with open(path, "w") as fh:
        fh.write(as_latex(ridge, equation_blocks(ridge)))
    written.append(path)
    peak = locate(ridge, {"lam": "1/100", "sigma": "1/2"}, "alpha", "1/2", "3", "test",
                  dps=min(dps, 30))
    rows.append(("ridge_regression.py", "lam=1/100, sigma=1/2", "alpha at the peak of test",
                 _fmt(peak.location, min(peak.digits, 20)), peak.digits))
    paths = plane(ridge, {"sigma": "1/2"}, ("alpha", "0.2", "5", 30 if quick else 120, False),
                  ("lam", "1e-3", "1", 10 if quick else 60, True), "test", out_dir,
                  trace_max=True)
    written += [paths[k] for k in sorted(paths)]
    res = write_appendix(ridge, os.path.join(out_dir, "appendix"), pdf=pdf,
                         point=dict(alpha=2, lam="1/10", sigma="1/2"), dps=dps)
    written.append(res.tex)
    if res.pdf is not None:
        written.append(res.pdf.pdf)
    text = _table(rows, ("model file", "point", "quantity", "value", "digits"))
    return text, written, notes


# ---------------------------------------------------------------------------------------------
# 7. notebook figures
# ---------------------------------------------------------------------------------------------
def notebook_names():
    if not os.path.isdir(NOTEBOOKS):
        return []
    return sorted(f[:-3] for f in os.listdir(NOTEBOOKS)
                  if f.endswith(".py") and not f.startswith("_"))


def figures_section(out_dir, names, workers: int = 2):
    """Run the notebooks ``names`` in quick mode into ``out_dir``; return (written, failures)."""
    env = dict(os.environ, MPLBACKEND="Agg")

    def run(name):
        t0 = time.time()
        proc = subprocess.run([sys.executable, os.path.join(NOTEBOOKS, name + ".py"), "--quick",
                               "--out", out_dir], capture_output=True, text=True, cwd=REPO,
                              env=env, timeout=900)
        return name, proc, time.time() - t0

    written, failures = [], []
    with concurrent.futures.ThreadPoolExecutor(max_workers=workers) as ex:
        for i, (name, proc, sec) in enumerate(ex.map(run, names), 1):
            if proc.returncode != 0:
                failures.append(f"notebook {name} failed: {proc.stderr.strip()[-800:]}")
                print(f"    [{i}/{len(names)}] {name}: FAILED ({sec:.1f} s)", flush=True)
                continue
            files = [ln.strip() for ln in proc.stdout.splitlines()
                     if ln.startswith("  ") and os.path.isfile(ln.strip())]
            written += files
            print(f"    [{i}/{len(names)}] {name}: {len(files)} files ({sec:.1f} s)", flush=True)
    return written, failures


# ---------------------------------------------------------------------------------------------
# driver
# ---------------------------------------------------------------------------------------------
def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m replica.demo", description=__doc__,
                                 allow_abbrev=False,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default="out", help="output folder (default out/)")
    ap.add_argument("--dps", type=int, default=None,
                    help="working precision of the solves (default 40; 20 with --quick)")
    ap.add_argument("--quick", action="store_true",
                    help="coarse phase diagrams, 20 digits, appendices without PDF")
    ap.add_argument("--skip", action="append", default=[], choices=STEPS,
                    help="skip a step (repeatable)")
    ap.add_argument("--notebooks", default=None,
                    help="comma-separated notebook names for the figures step (default: all)")
    ap.add_argument("--no-pdf", action="store_true", help="write the appendices as .tex only")
    args = ap.parse_args(argv)
    dps = args.dps or (20 if args.quick else 40)
    out = args.out
    os.makedirs(out, exist_ok=True)
    steps = [s for s in STEPS if s not in args.skip]
    n_steps = len(steps) + 1
    written, failures, notes, sections, timings = [], [], [], [], []
    outcomes = {}
    t_all = time.time()

    def section(title, body):
        sections.append(f"{title}\n\n{body}\n")
        print(body, flush=True)

    for i, step in enumerate(steps, 1):
        t0 = time.time()
        print(f"[{i}/{n_steps}] {step} ...", flush=True)
        try:
            if step == "derive":
                text, outcomes, fails, nts, files = derive_section(out)
                failures += fails
                notes += nts
                written += files
                section("Derivations: step checks", text)
            elif step == "solve":
                section(f"Paper A / paper B at {dps} digits (alpha=2, tau=4, rho=0.01 unless "
                        f"stated)", alignment_section(dps))
                text, fails = lowrank_section(dps)
                failures += fails
                section(f"Low-rank model at {dps} digits (the golden fixed points tabulated with the authors' public code)",
                        text)
            elif step == "transitions":
                text, csv_rows, nts = transitions_section(min(dps, 30))
                notes += nts
                path = os.path.join(out, "transitions.csv")
                _write_csv(path, ["transition", "alpha", "quantity", "value", "error_bound",
                                  "definition"], csv_rows)
                written.append(path)
                section("Transitions (located numerically; alpha = inf is the sharp "
                        "transition, finite alpha the crossover)", text)
            elif step == "appendix":
                if not outcomes:
                    from . import derivations

                    outcomes = {}
                    for name in derivations.names():
                        try:
                            outcomes[name] = derivations.get(name).run_checks()
                        except ImportError as exc:
                            notes.append(f"derivation {name!r} not available ({exc})")
                files, nts = appendix_section(os.path.join(out, "appendices"), outcomes,
                                              pdf=not (args.quick or args.no_pdf))
                written += files
                notes += nts
            elif step == "phase":
                files, nts = phase_section(os.path.join(out, "phase_diagrams"), args.quick)
                written += files
                notes += nts
            elif step == "models":
                pdf = not (args.quick or args.no_pdf)
                if pdf:
                    try:
                        from .latex import latexmk_path

                        latexmk_path()
                    except Exception:
                        pdf = False
                text, files, nts = models_section(os.path.join(out, "models"), dps, pdf,
                                                  args.quick)
                written += files
                notes += nts
                if text:
                    section(f"Model files (examples/) at {dps} digits", text)
            elif step == "figures":
                names = notebook_names()
                if args.notebooks:
                    wanted = [n.strip() for n in args.notebooks.split(",") if n.strip()]
                    unknown = sorted(set(wanted) - set(names))
                    if unknown:
                        raise ValueError(f"unknown notebooks: {', '.join(unknown)}")
                    names = wanted
                if not names:
                    notes.append(f"no notebooks found in {NOTEBOOKS}: figures skipped")
                else:
                    files, fails = figures_section(os.path.join(out, "figures"), names)
                    written += files
                    failures += fails
        except Exception as exc:  # a failed step is reported; the others still run
            failures.append(f"step {step}: {type(exc).__name__}: {exc}")
            traceback.print_exc()
        timings.append((step, f"{time.time() - t0:.1f}"))
        print(f"    ({step}: {time.time() - t0:.1f} s)", flush=True)

    print(f"[{n_steps}/{n_steps}] summary ...", flush=True)
    summary = os.path.join(out, "summary.txt")
    with open(summary, "w") as fh:
        fh.write("replica demo: derivation checks, high-precision solves, transitions, "
                 "appendices, phase diagrams and figures\n\n")
        fh.write("\n".join(sections))
        fh.write("\nStep timings (s)\n\n" + _table(timings, ("step", "seconds")) + "\n")
        if notes:
            fh.write("\nNotes\n\n" + "\n".join("- " + n for n in notes) + "\n")
        if failures:
            fh.write("\nFAILURES\n\n" + "\n".join("- " + f for f in failures) + "\n")
        fh.write("\nFiles written\n\n" + "\n".join(written + [summary]) + "\n")
    written.append(summary)
    for n in notes:
        print(f"note: {n}")
    print(f"\ndone in {time.time() - t_all:.1f} s; wrote {len(written)} files:")
    for w in written:
        print("  " + w)
    if failures:
        print("\nFAILURES:")
        for f in failures:
            print("  " + f)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
