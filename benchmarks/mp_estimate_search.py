"""The mp quadrature's error estimate against independent references (the mpest2 / mpest3
searches of benchmarks/README.md): each Gaussian integral :math:`E_z[F(z)]` evaluated by
:class:`replica.symbolic.codegen.Evaluator` at ``dps`` digits (its claim: relative error at most
:math:`10^{-\\text{dps}}`) against ``mpmath.quad`` at ``2 dps + 20`` digits with the integrand's
kink or feature centre and :math:`c \\pm kw` as points, or a closed form.

* ``kinks`` (288 values): :math:`|z - c|`, :math:`\\max(0, z - c)^2`, :math:`\\max(0, z - c)^3`,
  :math:`\\sqrt{|z - c|}`, :math:`w\\log(1 + e^{(z-c)/w})`, :math:`1 + w\\,\\mathrm{erf}((z - c)/w)`,
  :math:`1 + w e^{-(z-c)^2/2w^2}`, :math:`1 + w^3/(w^2 + (z - c)^2)`, :math:`|z - c| + w e^z`, each
  times :math:`1/(1 + e^z)`; :math:`c \\in \\{0.3, 1.7, -2.9, 0\\}`, :math:`w \\in \\{0.01, 0.1\\}`,
  15/30/45/60 digits.
* ``lorentz`` (48 values): :math:`e^{z^2/8}(1 + e/(1 + ((z - c)/w)^2))`, :math:`e \\in \\{10^{-8},
  10^{-10}\\}`, :math:`w \\in \\{0.1, 0.03\\}`, :math:`c \\in \\{0.3, 1.1, -2.5\\}`, 15/20/30/40
  digits, against its Fourier form :math:`2/\\sqrt3 + e w\\sqrt{\\pi/\\beta}\\int_0^\\infty
  e^{-wt}\\cos(ct)e^{-t^2/4\\beta}dt/\\sqrt{2\\pi}`, :math:`\\beta = 3/8`; and the same bump on
  :math:`1/(1 + e^z)` (``lorentz_logistic``) against ``mpmath.quad``.

Each value in a fresh evaluation: the process's level hints and the evaluator's remembered
levels cleared first (``--carry``: kept, in the order listed, as the mpest2 search ran).

    python -m benchmarks.mp_estimate_search [kinks|lorentz|lorentz_logistic ...] [--carry]

Prints one line per value outside its claim (or refused) and a count per family and precision;
run it in two trees to compare. Prints only (no README section is written)."""

from __future__ import annotations

import sys
import time

import mpmath
import sympy

z = sympy.Symbol("z", real=True)
c, w, e = sympy.symbols("c w e", real=True)


def _kink_family():
    logi = 1 / (1 + sympy.exp(z))
    u = z - c
    forms = {
        "abs": sympy.Abs(u), "relu2": u**2 * sympy.Heaviside(u), "relu3": u**3 * sympy.Heaviside(u),
        "sqrtabs": sympy.sqrt(sympy.Abs(u)), "softplus": w * sympy.log(1 + sympy.exp(u / w)),
        "erfstep": 1 + w * sympy.erf(u / w), "peak": 1 + w * sympy.exp(-u**2 / (2 * w**2)),
        "lorentz": 1 + w**3 / (w**2 + u**2), "absexp": sympy.Abs(u) + w * sympy.exp(z)}
    mp_forms = {
        "abs": lambda x, C, W: abs(x - C), "relu2": lambda x, C, W: max(0, x - C) ** 2,
        "relu3": lambda x, C, W: max(0, x - C) ** 3, "sqrtabs": lambda x, C, W: mpmath.sqrt(abs(x - C)),
        "softplus": lambda x, C, W: W * mpmath.log1p(mpmath.exp((x - C) / W)),
        "erfstep": lambda x, C, W: 1 + W * mpmath.erf((x - C) / W),
        "peak": lambda x, C, W: 1 + W * mpmath.exp(-(x - C) ** 2 / (2 * W**2)),
        "lorentz": lambda x, C, W: 1 + W**3 / (W**2 + (x - C) ** 2),
        "absexp": lambda x, C, W: abs(x - C) + W * mpmath.exp(x)}
    cases = []
    for name, form in forms.items():
        for C in ("0.3", "1.7", "-2.9", "0"):
            for W in ("0.01", "0.1"):
                cases.append((name, form * logi, mp_forms[name], C, W))
    return cases


def _reference_quad(g, C, W, dps):
    with mpmath.workdps(2 * dps + 20):
        Cv, Wv = mpmath.mpf(C), mpmath.mpf(W)
        pts = sorted({Cv + k * Wv for k in (-8, -4, -2, -1, 0, 1, 2, 4, 8)})
        return mpmath.quad(lambda x: g(x, Cv, Wv) * mpmath.npdf(x) / (1 + mpmath.exp(x)),
                           [-mpmath.inf] + pts + [mpmath.inf])


def _clear(ev):
    from replica.symbolic import codegen

    codegen._LEVEL_HINTS.clear()
    for value in vars(ev).values():
        items = value.values() if isinstance(value, dict) else (
            value if isinstance(value, (list, tuple)) else [value])
        for g in items:
            for h in (g if isinstance(g, (list, tuple)) else [g]):
                levels = getattr(h, "levels", None)
                if isinstance(levels, dict):
                    levels.clear()


def _engine(ev, args, dps, carry):
    from replica.symbolic.codegen import QuadratureError

    if not carry:
        _clear(ev)
    try:
        with mpmath.workdps(dps):
            return ev.mp([mpmath.mpf(a) for a in args])[0]
    except QuadratureError as exc:
        return exc


def run_kinks(carry, precisions=(15, 30, 45, 60)):
    from replica.symbolic.codegen import Evaluator
    from replica.symbolic.gaussian import gauss

    cases = _kink_family()
    evs = {}
    for dps in precisions:
        out, worst, refused = 0, 0, 0
        for name, form, g, C, W in cases:
            ev = evs.get(name) or evs.setdefault(name, Evaluator([gauss(form, z)], [c, w]))
            got = _engine(ev, (C, W), dps, carry)
            if isinstance(got, Exception):
                refused += 1
                print(f"kinks {dps} {name} c={C} w={W}: refused ({str(got)[:90]})", flush=True)
                continue
            ref = _reference_quad(g, C, W, dps)
            rel = abs(got - ref) / abs(ref)
            worst = max(worst, rel)
            if rel > mpmath.mpf(10) ** -dps:
                out += 1
                print(f"kinks {dps} {name} c={C} w={W}: {mpmath.nstr(rel, 3)} OUTSIDE", flush=True)
        print(f"kinks {dps} digits: {out}/{len(cases)} outside, {refused} refused, worst "
              f"{mpmath.nstr(worst, 3)}", flush=True)


def _lorentz_ref(kind, E, C, W, dps):
    with mpmath.workdps(2 * dps + 20):
        E, C, W = (mpmath.mpf(x) for x in (E, C, W))
        if kind == "lorentz":
            beta = mpmath.mpf(3) / 8
            bump = mpmath.quad(lambda t: mpmath.exp(-W * t - t**2 / (4 * beta)) * mpmath.cos(C * t),
                               [0, mpmath.inf])
            return 2 / mpmath.sqrt(3) + E * W * mpmath.sqrt(mpmath.pi / beta) * bump / mpmath.sqrt(
                2 * mpmath.pi)
        pts = sorted({C + k * W for k in (-8, -4, -2, -1, 0, 1, 2, 4, 8)})
        return mpmath.quad(lambda x: mpmath.npdf(x) / (1 + mpmath.exp(x))
                           * (1 + E / (1 + ((x - C) / W) ** 2)), [-mpmath.inf] + pts + [mpmath.inf])


def run_lorentz(kind, carry, precisions=(15, 20, 30, 40)):
    from replica.symbolic.codegen import Evaluator
    from replica.symbolic.gaussian import gauss

    F = sympy.exp(z**2 / 8) if kind == "lorentz" else 1 / (1 + sympy.exp(z))
    ev = Evaluator([gauss(F * (1 + e / (1 + ((z - c) / w) ** 2)), z)], [e, c, w])
    for dps in precisions:
        out, worst, refused = 0, 0, 0
        for E in ("1e-8", "1e-10"):
            for W in ("0.1", "0.03"):
                for C in ("0.3", "1.1", "-2.5"):
                    got = _engine(ev, (E, C, W), dps, carry)
                    if isinstance(got, Exception):
                        refused += 1
                        print(f"{kind} {dps} e={E} w={W} c={C}: refused ({str(got)[:90]})",
                              flush=True)
                        continue
                    ref = _lorentz_ref(kind, E, C, W, dps)
                    rel = abs(got - ref) / abs(ref)
                    worst = max(worst, rel)
                    if rel > mpmath.mpf(10) ** -dps:
                        out += 1
                        print(f"{kind} {dps} e={E} w={W} c={C}: {mpmath.nstr(rel, 3)} OUTSIDE",
                              flush=True)
        print(f"{kind} {dps} digits: {out}/12 outside, {refused} refused, worst "
              f"{mpmath.nstr(worst, 3)}", flush=True)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    carry = "--carry" in argv
    families = [a for a in argv if not a.startswith("--")] or ["lorentz", "kinks"]
    import replica

    print(f"tree: {replica.__file__}", flush=True)
    for fam in families:
        t = time.process_time()
        if fam == "kinks":
            run_kinks(carry)
        else:
            run_lorentz(fam, carry)
        print(f"{fam}: {time.process_time() - t:.1f} s CPU", flush=True)


if __name__ == "__main__":
    main()
