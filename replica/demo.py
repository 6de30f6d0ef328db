"""``make demo``: the workbench's headline results in one run.

Solves the alignment and isotropic models at high precision on a few reference points and prints a
table with the digits each value guarantees. Later stages (transitions, appendices, figures) add
their own sections; everything written goes under ``--out``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time


def _table(rows, header):
    widths = [max(len(str(r[i])) for r in rows + [header]) for i in range(len(header))]
    line = "  ".join(h.ljust(w) for h, w in zip(header, widths))
    out = [line, "-" * len(line)]
    out += ["  ".join(str(c).ljust(w) for c, w in zip(r, widths)) for r in rows]
    return "\n".join(out)


def alignment_section(dps: int):
    from .models import alignment, isotropic

    rows = []
    cases = [
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
    for label, kw in cases:
        r = alignment.solve(dps=dps, **kw)
        rows.append((label, _fmt(r["e_icl"]), _fmt(r["e_scalar"]), _fmt(r["e_misalign"]),
                     r.digits))
    iso = [("isotropic tau=1/2", dict(alpha=2, tau="1/2", kappa="1/2", rho="0.01")),
           ("isotropic tau=4", dict(alpha=2, tau=4, kappa="1/2", rho="0.01")),
           ("isotropic ridge tau=1", dict(alpha=2, tau=1, kappa="1/2", rho="0.01", lam="0.1"))]
    for label, kw in iso:
        r = isotropic.solve(dps=dps, **kw)
        a = alignment.solve(dps=dps, d=1, train="identity", test="identity", **kw)
        from .numerics import agreement_digits

        agree = agreement_digits(r["e_icl"], a["e_icl"], dps)
        rows.append((label + f" (A agrees {agree} dig.)", _fmt(r["e_icl"]), _fmt(r["e_scalar"]),
                     _fmt(r["e_misalign"]), r.digits))
    return _table(rows, ("case", "E_ICL", "e_scalar", "e_misalign", "digits"))


def _fmt(x, n=20):
    import mpmath

    with mpmath.workdps(n + 5):
        return mpmath.nstr(x, n)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m replica.demo", description=__doc__)
    ap.add_argument("--out", default="out", help="output folder (default out/)")
    ap.add_argument("--dps", type=int, default=40)
    args = ap.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    written = []
    t0 = time.time()
    print(f"[1/1] alignment and isotropic models at {args.dps} digits ...", flush=True)
    text = alignment_section(args.dps)
    print(text)
    path = os.path.join(args.out, "summary.txt")
    with open(path, "w") as fh:
        fh.write("Alignment (paper A) and isotropic (paper B) theory, alpha=2, tau=4, rho=0.01 "
                 "unless stated\n\n" + text + "\n")
    written.append(path)
    print(f"\ndone in {time.time() - t0:.1f} s; wrote:")
    for w in written:
        print("  " + w)
    return 0


if __name__ == "__main__":
    sys.exit(main())
