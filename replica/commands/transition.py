"""``replica transition MODEL ...``: locate a phase transition (or finite-alpha crossover).

The parsers come from the registry (:mod:`replica.registry`): a model that declares its own
``transition`` variant (a :class:`~replica.registry.CommandHook`: the papers' transitions of the
built-in models) gets it, and every model -- a model file, or a built-in one with
``--model NAME`` -- gets the generic form (:func:`generic`): where a reported quantity has an
interior maximum or minimum in one parameter, crosses a level, has a kink (a jump of its slope)
or a crossover (an extremum of its curvature), the other parameters fixed
(:func:`replica.analysis.scan.locate`); the transitions a model file declares
(``TRANSITIONS = [Transition(...)]``, :class:`replica.capabilities.Transition`) are offered by
name (``--name NAME``) with their declared settings as defaults.
"""

from __future__ import annotations

import json
import sys

from .common import add_dps, parse_dps

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
                    "--quantity, --kind), or a transition the model file declares (--name).")
    models = p.add_subparsers(dest="model", metavar="MODEL", required=True)
    add_model_parsers(models, "transition", generic)
    return models


# ---------------------------------------------------------------------------------------------
# The generic form: any model, any reported quantity
# ---------------------------------------------------------------------------------------------
#: The kinds of ``--kind`` (:data:`replica.capabilities.TRANSITION_KINDS`).
KIND_HELP = ("interior maximum (the default), minimum, crossing of --level, kink (a jump of the "
             "slope: a non-analytic point) or crossover (the extremum of the curvature, where "
             "the third derivative vanishes)")


def generic(entry):
    """The generic ``transition`` of a model (:class:`~replica.registry.CommandHook`)."""
    from ..registry import CommandHook

    return CommandHook(
        _generic_arguments, _run_generic,
        description="Locate where a reported quantity has an interior maximum or minimum in one "
                    "parameter, crosses a level, has a kink (a jump of its slope) or a crossover "
                    "(an extremum of its curvature), the other parameters fixed.")


def _declared_text(t) -> str:
    """One line describing a declared transition: its definition and settings."""
    where = f" on [{t.between[0]}, {t.between[1]}]" if len(t.between) == 2 else ""
    fixed = ", ".join(f"{k}={v}" for k, v in dict(t.params).items())
    return ((t.definition + " -- " if t.definition else "")
            + f"the {t.kind}" + (f" {t.level}" if t.level is not None else "")
            + f" of {t.quantity} in {t.vary}{where}" + (f" at {fixed}" if fixed else ""))


def _generic_arguments(sp):
    from ..capabilities import TRANSITION_KINDS
    from .common import add_schema_options

    entry = sp.get_default("entry")
    declared = entry.transitions
    if declared:
        sp.add_argument("--name", default=None, choices=[t.name for t in declared],
                        help="a transition the model declares, its settings as defaults: "
                             + "; ".join(f"{t.name}: {_declared_text(t)}" for t in declared))
    # required, unless a declared transition (--name) gives them
    need, required = (" (required unless --name)", False) if declared else ("", True)
    sp.add_argument("--vary", default=None, metavar="NAME", required=required,
                    help="the parameter to vary" + need)
    sp.add_argument("--between", default=None, metavar="LO,HI", required=required,
                    help="the interval of the varied parameter" + need)
    sp.add_argument("--quantity", default=None, required=required,
                    help=(f"a reported value: {', '.join(entry.problem.report_names())}"
                          if entry.is_file else
                          "a reported value (see replica solve)") + need)
    sp.add_argument("--kind", default=None, choices=list(TRANSITION_KINDS), help=KIND_HELP)
    sp.add_argument("--level", default=None, help="the level, with --kind level")
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
    return out


def _run_generic(args):
    from ..analysis.scan import locate
    from .common import progress_bar
    from .simulate import parse_int

    entry = args.entry
    problem = entry.problem
    s = _settings(args, entry)
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
        sys.stdout.write(f"{title} ({params})\n  {data['vary']} = {data['location']}  "
                         f"({data['digits']} digits; {data['quantity']} = {data['value']})\n"
                         f"  definition: {data['definition']}\n  method: {data['method']}\n")
        for n in data["notes"]:
            sys.stdout.write(f"  note: {n}\n")
    _exit_unless_converged(res, data)
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
