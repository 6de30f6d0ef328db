"""``replica transition MODEL ...``: locate a phase transition (or finite-alpha crossover).

The parsers come from the registry (:mod:`replica.registry`): a model that declares its own
``transition`` variant (a :class:`~replica.registry.CommandHook`: the papers' transitions of the
built-in models) gets it, and every model -- a model file, or a built-in one with
``--model NAME`` -- gets the generic form (:func:`generic`): where a reported quantity has an
interior maximum or minimum in one parameter, crosses a level, has a kink (a jump of its slope)
or a crossover (an extremum of its curvature), the other parameters fixed
(:func:`replica.analysis.scan.locate`); the transitions a model file declares
(``TRANSITIONS = [Transition(...)]``, :class:`replica.capabilities.Transition`) are offered by
name (``--name NAME``) with their declared settings as defaults. From solution branches
(``--branch``, or a declared transition's :class:`~replica.capabilities.Branch` records;
:mod:`replica.analysis.first_order`): ``--kind first-order`` (where the free energies of two
branches cross, the model's free energy by default; the output says which branch is the
equilibrium one on each side, by the model's declared extremum), ``--kind spinodal`` (where a
branch ends, Newton's method on the fold system from ``--guess``) and ``--kind level`` with
``--guess`` and a ``--branch`` (the level on that branch by Newton's method, e.g. the AT line).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
import sys

from .common import add_dps, check_path_in_domain, parse_dps

#: The command's one-line help (the top-level parser lists it without building the command).
HELP = "locate a phase transition numerically"


def add_certify(p):
    """The ``--certify`` option of the built-in models' transitions."""
    p.add_argument("--certify", action="store_true",
                   help="prove the location in ball arithmetic where the indicator has a closed "
                        "form (interval Newton on the defining condition; for alpha -> oo the "
                        "kink of the closed-form limit); exit 3 with the reason otherwise")


def register(subparsers):
    from ..registry import add_model_parsers

    p = subparsers.add_parser("transition", help=HELP,
        description="Locate a model's phase transition. The built-in models' own transitions: "
                    "without --alpha the non-analytic point of the alpha -> oo limit (found "
                    "numerically, never substituted), with --alpha A the finite-alpha crossover, "
                    "by the definition printed in the output. Any model (--model PATH, or "
                    "--model NAME for a built-in one): the kink, crossover, maximum, minimum or "
                    "level crossing of a reported quantity in one parameter (--vary, --between, "
                    "--quantity, --kind), a first-order transition or spinodal of its solution "
                    "branches (--kind first-order / spinodal, --branch), or a transition the "
                    "model file declares (--name).")
    models = p.add_subparsers(dest="model", metavar="MODEL", required=True)
    add_model_parsers(models, "transition", generic)
    return models


# ---------------------------------------------------------------------------------------------
# The generic form: any model, any reported quantity
# ---------------------------------------------------------------------------------------------
#: The kinds of ``--kind`` (:data:`replica.capabilities.TRANSITION_KINDS`).
KIND_HELP = ("interior maximum (the default), minimum, crossing of --level, kink (a jump of the "
             "slope: a non-analytic point), crossover (the extremum of the curvature, where "
             "the third derivative vanishes), first-order (where the free energies of two "
             "--branch es cross in --between) or spinodal (where the --branch ends, Newton's "
             "method from --guess)")
BRANCH_HELP = ("a solution branch, LABEL:ITEM,ITEM,... with items NAME=VALUE (the start of "
               "Newton's method for the unknown NAME), NAME<VALUE or NAME>VALUE (a condition "
               "the solution must satisfy) or FREE_ENERGY=FORMULA (the branch's free energy in "
               "closed form, FREE_ENERGY the model's free-energy name, e.g. "
               "free_entropy=-log(2)); twice for --kind first-order, once for --kind spinodal "
               "and for --kind level with --guess (the level located on that branch by "
               "Newton's method, no scan); repeat the option for each branch")


def generic(entry):
    """The generic ``transition`` of a model (:class:`~replica.registry.CommandHook`)."""
    from ..registry import CommandHook

    return CommandHook(
        _generic_arguments, _run_generic,
        description="Locate where a reported quantity has an interior maximum or minimum in one "
                    "parameter, crosses a level, has a kink (a jump of its slope) or a crossover "
                    "(an extremum of its curvature), the other parameters fixed; or, from "
                    "solution branches (--branch), a first-order transition (the free energies "
                    "of two branches cross), a spinodal (a branch ends) or a level on one branch "
                    "(e.g. the AT line, --quantity replicon --level 0) by Newton's method from "
                    "--guess.")


def _declared_text(t) -> str:
    """One line describing a declared transition: its definition and settings."""
    where = f" on [{t.between[0]}, {t.between[1]}]" if len(t.between) == 2 else ""
    fixed = ", ".join(f"{k}={v}" for k, v in dict(t.params).items())
    when = (", ".join(f"{k}={v}" for k, v in t.when.items()) if isinstance(t.when, Mapping)
            else " and ".join(t.when))
    return ((t.definition + " -- " if t.definition else "")
            + f"the {t.kind}" + (f" {t.level}" if t.level is not None else "")
            + f" of {t.quantity} in {t.vary}{where}" + (f" at {fixed}" if fixed else "")
            + (f" (declared only for {when})" if when else ""))


def _generic_arguments(sp):
    from ..capabilities import TRANSITION_KINDS
    from .common import add_schema_options

    entry = sp.get_default("entry")
    declared = entry.transitions
    if declared:
        sp.add_argument("--name", default=None, choices=[t.name for t in declared],
                        help="a transition the model declares, its settings as defaults: "
                             + "; ".join(f"{t.name}: {_declared_text(t)}" for t in declared))
    else:  # accepted, so that asking for one says in one line that there is none (_settings)
        sp.add_argument("--name", default=None,
                        help="a transition the model declares (this model declares none)")
    # required, unless a declared transition (--name) gives them (checked in _settings, so that
    # --name on a model that declares none is answered first)
    need = " (required unless --name)" if declared else " (required)"
    sp.add_argument("--vary", default=None, metavar="NAME", help="the parameter to vary" + need)
    sp.add_argument("--between", default=None, metavar="LO,HI",
                    help="the interval of the varied parameter" + need)
    sp.add_argument("--quantity", default=None, required=False,
                    help=(f"a reported value: {', '.join(entry.problem.report_names())}"
                          if entry.is_file else
                          "a reported value (see replica solve)") + need)
    sp.add_argument("--kind", default=None, choices=list(TRANSITION_KINDS), help=KIND_HELP)
    sp.add_argument("--level", default=None, help="the level, with --kind level")
    sp.add_argument("--branch", action="append", default=None, metavar="LABEL:NAME=VALUE,...",
                    help=BRANCH_HELP)
    sp.add_argument("--guess", default=None,
                    help="--kind spinodal, or level on a --branch: the value of the varied "
                         "parameter where Newton's method starts (default: the middle of "
                         "--between)")
    sp.add_argument("--points", default="64", help="float64 scan points that bracket it "
                                                   "(default 64)")
    sp.add_argument("--log", action="store_true", help="scan on a logarithmic grid")
    add_schema_options(sp, entry.schema, " (fixed)")
    add_dps(sp)


def _settings(args, entry) -> dict:
    """The settings of the search: the options given, else those of the ``--name``d declared
    transition (``vary``, ``between``, ``quantity``, ``kind``, ``level``, the fixed ``params``);
    a missing one is a :class:`~replica.errors.ParameterError` naming its option."""
    from ..errors import ParameterError
    from .common import given_values

    name = getattr(args, "name", None)
    if name and not entry.transitions:
        raise ParameterError("--name", f"{entry.problem.name} declares no transitions "
                                       "(TRANSITIONS): give --vary, --between and --quantity")
    t = next(t for t in entry.transitions if t.name == name) if name else None
    between = args.between
    if between is None and t is not None and len(t.between) == 2:
        between = f"{t.between[0]},{t.between[1]}"
    out = {"name": name, "definition": t.definition if t is not None else "",
           "vary": args.vary or (t.vary if t is not None else None), "between": between,
           "quantity": args.quantity or (t.quantity if t is not None else None),
           "kind": args.kind or (t.kind if t is not None else "max"),
           "level": args.level if args.level is not None else (
               str(t.level) if t is not None and t.level is not None else None)}
    out["branches"] = list(t.branches) if t is not None else []
    out["guess"] = args.guess or (t.guess if t is not None else None)
    if args.branch:
        from ..analysis.first_order import parse_branch

        out["branches"] = [parse_branch(b, entry.problem.free_energy) for b in args.branch]
    on_branch = out["kind"] in ("first-order", "spinodal") or (
        out["kind"] == "level" and out["guess"] is not None and out["branches"])
    out["on_branch"] = on_branch
    if out["kind"] == "first-order" and out["quantity"] is None:
        out["quantity"] = entry.problem.free_energy
        if out["quantity"] is None:
            raise ParameterError("--quantity", "the model reports no free energy: name the "
                                               "reported value whose branches cross")
    if out["kind"] == "spinodal" and out["quantity"] is None:
        out["quantity"] = "(fold)"
    if on_branch and out["kind"] != "first-order" and out["between"] is None \
            and out["guess"] is not None:
        out["between"] = f"{out['guess']},{out['guess']}"
    for key in ("vary", "between", "quantity"):
        if out[key] is None:
            names = [d.name for d in entry.transitions]
            raise ParameterError(f"--{key}", "is required" + (
                f" (or --name NAME of a declared transition: {', '.join(names)})"
                if names else ""))
    parts = [p.strip() for p in str(out["between"]).split(",")]
    if len(parts) != 2 or not all(parts):
        raise ParameterError("--between", f"expected LO,HI, got {out['between']!r}")
    out["between"] = parts
    vary = out["vary"].replace("-", "_")
    out["vary"] = vary
    fixed = {k: str(v) for k, v in dict(t.params if t is not None else {}).items() if k != vary}
    fixed.update(given_values(args, entry.schema))
    out["fixed"] = fixed
    out["when"] = t.when if t is not None else {}
    return out


def _refuse_where_not_declared(problem, s) -> None:
    """Exit 2 (a :class:`~replica.errors.ParameterError` naming the parameters) where the
    ``--name``d transition's declared ``when`` (:attr:`~replica.capabilities.Transition.when`)
    does not hold at the fixed parameters: e.g. a first-order transition declared for one
    prior, asked for with another, where it does not exist. Conditions on the varied parameter
    itself are its bracket's business, not checked here."""
    from ..errors import ParameterError
    from .common import _branch_exists

    when = s["when"]
    if not when:
        return
    vary = s["vary"]
    if isinstance(when, Mapping):
        checked = {k: v for k, v in dict(when).items() if k != vary}
        names = list(checked)
        declared = ", ".join(f"{k}={v}" for k, v in checked.items())
    else:
        from ..analysis.first_order import _condition

        checked = tuple(c for c in when if _condition(c, "TRANSITIONS")[0] != vary)
        names = [_condition(c, "TRANSITIONS")[0] for c in checked]
        declared = " and ".join(checked)
    if not checked:
        return
    raw = {**s["fixed"], vary: s["between"][0]}
    params = problem.schema.parse(raw)
    if _branch_exists(problem, checked, raw, params):
        return
    options = "/".join(problem.schema[n].option for n in dict.fromkeys(names))
    given = ", ".join(f"{n}={params.echo()[n]}" for n in dict.fromkeys(names))
    raise ParameterError(options, f"the transition {s['name']} is declared only for "
                                  f"{declared}, not at {given}: it is not there to locate")


def _run_generic(args):
    from ..analysis.scan import locate
    from .common import progress_bar
    from .simulate import parse_int

    entry = args.entry
    problem = entry.problem
    s = _settings(args, entry)
    _refuse_where_not_declared(problem, s)
    if s["on_branch"]:
        return _run_on_branches(args, problem, s)
    res = locate(problem, s["fixed"], s["vary"], s["between"][0], s["between"][1],
                 s["quantity"], kind=s["kind"], level=s["level"], dps=parse_dps(args.dps),
                 points=parse_int(args.points, "--points", minimum=5),
                 log=True if args.log else None, name=s["name"], definition=s["definition"],
                 progress=progress_bar(f"transition {problem.name}: refinements",
                                       unit="refinement"))
    data = res.to_json_dict()
    if args.json:
        sys.stdout.write(json.dumps(data, indent=2) + "\n")
    else:
        params = ", ".join(f"{k}={v}" for k, v in data["params"].items())
        title = data["model"] + (f": {data['name']}" if data.get("name") else "")
        how_sure = (f"|{data['vary']}| <= {data['location_bound']}" if "location_bound" in data
                    else f"{data['digits']} digits")
        sys.stdout.write(f"{title} ({params})\n  {data['vary']} = {data['location']}  "
                         f"({how_sure}; {data['quantity']} = {data['value']})\n"
                         f"  definition: {data['definition']}\n  method: {data['method']}\n")
        for n in data["notes"]:
            sys.stdout.write(f"  note: {n}\n")
    _exit_unless_converged(res, data)
    return 0


def _run_on_branches(args, problem, s) -> int:
    """``--kind first-order``, ``spinodal``, or ``level`` on a ``--branch`` from ``--guess``
    (:mod:`replica.analysis.first_order`): locate, print (text or JSON), exit 3 unless some
    digit is verified."""
    from fractions import Fraction

    from ..analysis.first_order import (branch_value, declared_branch, equilibrium,
                                        free_energy_crossing, fold)
    from ..errors import ConvergenceError, ParameterError
    from ..numerics.precision import precision
    from ..numerics.result import Status, decimal_string
    from ..params import parse_exact

    kind, vary, fixed = s["kind"], s["vary"], s["fixed"]
    dps = parse_dps(args.dps)
    p = problem.schema[vary] if vary in problem.schema else None
    if p is None:
        raise ParameterError("--vary", f"{vary!r} is not a parameter of {problem.name}")
    lo, hi = s["between"]
    need = 2 if kind == "first-order" else 1
    if len(s["branches"]) != need:
        raise ParameterError("--branch", f"--kind {kind} needs {need} branch(es) (--branch "
                                         f"LABEL:NAME=VALUE,...), got {len(s['branches'])}")
    branches = [declared_branch(problem, b) for b in s["branches"]]
    base = problem.schema.parse({**fixed, vary: lo})  # validates the fixed parameters
    check_path_in_domain(problem, fixed, vary, (lo, hi), "--between", what="the bracket")
    shown = {k: v for k, v in base.echo().items() if k != vary}
    extra = {}
    if kind == "first-order":
        for v in (lo, hi):
            parse_exact(v, "--between")
        res = free_energy_crossing(problem, vary, (lo, hi), branches, fixed=fixed,
                                   value=s["quantity"], dps=dps)
        value, digits, how = res.value, res.digits, res.how
        # which branch is the equilibrium one on each side (the model's extremum)
        side = {}
        with precision(15):
            for where, x in (("below", lo), ("above", hi)):
                params = problem.schema.parse({**fixed, vary: x})
                f = {}
                for b in branches:
                    try:
                        f[b.label] = branch_value(problem, b, params, s["quantity"])[0]
                    except ConvergenceError:
                        pass
                if f:
                    side[where] = equilibrium(f, problem.extremum)
        extra = {"quantity": s["quantity"], "extremum": problem.extremum,
                 "free_energy": decimal_string(res.free_energy, max(digits, 1)),
                 "branches": [b.label for b in branches], "equilibrium": side}
        what = (f"the {s['quantity']} of the branches {branches[0].label!r} and "
                f"{branches[1].label!r} are equal (first-order transition) on [{lo}, {hi}]")
    else:
        b = s["branches"][0]
        if not b.start:
            raise ParameterError("--branch", f"branch {b.label!r} needs a start (NAME=VALUE)")
        guess = s["guess"]
        if guess is None:
            guess = str((parse_exact(lo, "--between") + parse_exact(hi, "--between")) / 2)
        guess_v = parse_exact(guess, "--guess")
        start = {k: parse_exact(v, "--branch") for k, v in b.start.items()}
        level = None
        if kind == "level":
            if s["level"] is None:
                raise ParameterError("--level", "is required with --kind level")
            level = (s["quantity"], Fraction(parse_exact(s["level"], "--level")))
        res = fold(problem, vary, Fraction(guess_v), start, fixed=fixed, dps=dps, level=level)
        value, digits, how = res.value, res.digits, res.how
        with precision(dps + 10):
            point = {k: decimal_string(v, max(digits, 1)) for k, v in res.point.items()}
        extra = {"branch": b.label, "guess": guess, "point": point}
        if kind == "level":
            extra.update(quantity=s["quantity"], level=s["level"])
            what = (f"where {s['quantity']} = {s['level']} on the branch {b.label!r} "
                    "(Newton's method on [equations, quantity - level] in the unknowns and "
                    f"{vary})")
        else:
            what = (f"where the branch {b.label!r} ends (spinodal: the fold of its equations, "
                    f"det dG/dx = 0, Newton's method in the unknowns and {vary})")
    status = Status.CONVERGED if digits >= 1 else Status.NO_DIGITS
    definition = (f"{s['definition']} ({what})" if s["definition"] else what)
    data = {"model": problem.name, "name": s["name"], "kind": kind, "params": shown,
            "vary": vary, "location": decimal_string(value, max(digits, 1)), "digits": digits,
            "dps": dps, "status": status.value, "converged": status.is_result, **extra,
            "definition": definition, "method": how, "notes": []}
    if args.json:
        sys.stdout.write(json.dumps(data, indent=2) + "\n")
    else:
        params = ", ".join(f"{k}={v}" for k, v in shown.items())
        title = problem.name + (f": {s['name']}" if s["name"] else "")
        sys.stdout.write(f"{title} ({params})\n  {vary} = {data['location']}  ({digits} digits; "
                         f"{status.value})\n  definition: {definition}\n  method: {how}\n")
        if kind == "first-order" and extra["equilibrium"]:
            eq = extra["equilibrium"]
            sys.stdout.write("  equilibrium (" + ("largest" if problem.extremum == "max"
                                                  else "smallest")
                             + f" {s['quantity']}): " + ", ".join(
                                 f"{k} {lo if k == 'below' else hi}: {v}"
                                 for k, v in eq.items()) + "\n")
    if not status.is_result:
        raise ConvergenceError(f"{problem.name}: the located point agrees on no digit with its "
                               "re-location at higher precision", tried=how, status=status.value)
    return 0


def _exit_unless_converged(res, data) -> None:
    """After printing: exit 3 (:class:`~replica.errors.ConvergenceError`) unless the located
    point's status is ``converged``."""
    from ..errors import ConvergenceError

    if data["converged"]:
        return
    if "certificate" in data and not data.get("certified", True):
        raise ConvergenceError(f"{res.model}: not certified: {data['certificate']['reason']}",
                               status="not-certified")
    raise ConvergenceError(f"{res.model}: the located point is {data['status']} ({data['digits']} "
                           "digits)", tried=data["method"], status=data["status"])


def print_transition(res, as_json):
    """Print a transition of a built-in model (JSON or text); a located point that is not
    ``converged`` (a requested proof that failed, or no digit) exits 3 afterwards."""
    data = res.to_json_dict()
    if as_json:
        sys.stdout.write(json.dumps(data, indent=2) + "\n")
    else:
        key = next(k for k in ("kappa_c", "rho_c", "tau_peak") if k in data)
        params = ", ".join(f"{k}={v}" for k, v in data["params"].items())
        sys.stdout.write(f"{data['model']} transition ({params})\n"
                         f"  {key} = {data[key]}  (error bound {data['error_bound']}, "
                         f"{data['digits']} digits)\n  definition: {data['definition']}\n"
                         f"  method: {data['method']}\n")
        if "certificate" in data:
            c = data["certificate"]
            if c["certified"]:
                lo, hi = c["enclosure"]
                sys.stdout.write(f"  certified: {key} in [{lo}, {hi}] ({c['method']})\n")
                for line in c["checks"]:
                    sys.stdout.write(f"    - {line}\n")
            else:
                sys.stdout.write(f"  certified: no ({c['reason']})\n")
        for n in data["notes"]:
            sys.stdout.write(f"  note: {n}\n")
    _exit_unless_converged(res, data)
