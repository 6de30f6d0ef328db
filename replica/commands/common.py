"""Helpers shared by the sub-commands: argument parsing that fails in one line, output."""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Mapping

from ..errors import ParameterError


#: A token that is a value, not an option, although it starts with ``-``: a minus sign followed
#: by a digit or ``.digit`` (``-1/2``, ``-1e-3``, ``-3.5e2``, ``-.5``, ``-1,2`` -- argparse itself
#: takes only ``-1`` and ``-.5`` for values), or a signed infinity or NaN, which the option's
#: parser then refuses by name (``--alpha: must be finite``).
NEGATIVE_VALUE = re.compile(r"^-(?:\.?\d|(?:inf|infinity|nan)$)", re.IGNORECASE)


class OneLineParser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line (``replica: error: ...``) and exit 2, and
    which accepts no abbreviated option: ``--d`` is not ``--dps`` (argparse's ``allow_abbrev``
    is off; subparsers are made of this class, so every parser of the command line has it).
    A token matching :data:`NEGATIVE_VALUE` is the value of the option before it
    (``--kappa -1/2`` as ``--kappa=-1/2``), unless it is itself an option of the parser."""

    def __init__(self, *args, **kwargs):
        kwargs["allow_abbrev"] = False
        super().__init__(*args, **kwargs)
        self._negative_number_matcher = NEGATIVE_VALUE  # argparse's hook for this question

    def error(self, message):  # noqa: D401 - argparse API
        raise ParameterError(self.prog, message)


def add_dps(p):
    p.add_argument("--dps", default="30", help="working precision in decimal digits (default 30)")
    p.add_argument("--json", action="store_true", help="print one JSON object")


def parse_dps(text) -> int:
    try:
        v = int(str(text))
    except ValueError:
        raise ParameterError("--dps", f"must be an integer, got {text!r}") from None
    from ..numerics.precision import check_dps

    return check_dps(v, "--dps")


def better_closed_branches(problem, branches, raw: dict, params, value, digits) -> list:
    """``[(label, free energy)]`` of the declared closed-form branches (``branches``,
    :class:`~replica.capabilities.Branch` records with a ``free_energy``; the model file's
    ``BRANCHES``) that exist at ``params`` (:func:`declared_branches_here`) and
    whose free energy is better than ``value``, the solution's (larger for a free entropy,
    ``extremum="max"``, else smaller) by more than the solution's ``digits``. Such a solution is
    metastable: the equilibrium is the closed-form branch."""
    import mpmath

    if value is None:
        return []
    out = []
    dps = max(20, int(digits or 15) + 10)
    for label, f in declared_branches_here(problem, branches, raw, params, dps=dps):
        with mpmath.workdps(dps):
            v = mpmath.mpf(value)
            gap = f - v if problem.extremum == "max" else v - f
            if gap > mpmath.mpf(10) ** -int(digits or 15) * max(1, abs(v)):
                out.append((label, f))
    return out


def declared_branches_here(problem, branches, raw: dict, params, dps: int = 20) -> list:
    """``[(label, free energy)]`` of the declared closed-form branches that exist at
    ``params`` (their ``when``, :func:`_branch_exists`), whatever their free energy, each
    evaluated at ``dps`` digits: what a failed solve names, since
    where the solver finds no other solution (the Rademacher teacher above the end of its
    m < 1 branch) the declared branch is what is left."""
    import mpmath

    from ..analysis.first_order import declared_branch

    if problem.free_energy is None:
        return []
    out = []
    for b in branches:
        if b.free_energy is not None and _branch_exists(problem, b.when, raw, params):
            with mpmath.workdps(dps):
                out.append((b.label, declared_branch(problem, b, option="BRANCHES")
                            .closed_form(params)))
    return out


def _branch_exists(problem, when, raw: dict, params) -> bool:
    """Whether a closed-form branch with the ``when`` of its declaration exists at
    ``params``: ``{parameter: raw value}`` (those parameters equal to the given values) or a
    tuple of conditions ``"NAME >= VALUE"`` (``<``, ``>``, ``<=``) on the parameters."""
    import operator
    from fractions import Fraction

    from ..analysis.first_order import _condition

    if not when:
        return True
    if isinstance(when, Mapping):
        try:
            here = problem.schema.parse({**raw, **dict(when)})
        except ParameterError:
            return False
        return here.echo() == params.echo()
    ops = {"<": operator.lt, ">": operator.gt, "<=": operator.le, ">=": operator.ge}
    for text in when:
        name, op, value = _condition(text, "BRANCHES")
        if not ops[op](Fraction(getattr(params, name)), Fraction(value)):
            return False
    return True


def _metastable_note(problem, better) -> str:
    word = "larger" if problem.extremum == "max" else "smaller"
    return "; ".join(f"metastable: the closed-form branch {label} has the {word} "
                     f"{problem.free_energy} {_nstr(f)}, so the equilibrium here is that "
                     f"branch, not this solution" for label, f in better)


def _nstr(x, digits: int = 15) -> str:
    """``x`` (an ``mpf``) to ``digits`` significant digits, for messages and JSON."""
    import mpmath

    return mpmath.nstr(x, digits)


def run_solve(problem, raw: dict, dps: int, as_json: bool, certify: bool = False,
              branches=()) -> int:
    """Solve ``problem`` at ``raw`` and print the result; a solve that fails prints its status
    (as JSON with ``--json``) and returns exit status 3. With ``certify`` the result is proved
    by ball arithmetic; a failed proof prints the result with its certificate and exits 3.
    The solution is compared with the closed-form ``branches`` the model declares
    (:func:`better_closed_branches`): a metastable solution says so in a note and in the JSON
    ``equilibrium`` entry."""
    from ..errors import ConvergenceError
    from ..numerics.driver import solve_params
    from ..numerics.result import Status
    from ..progress import Progress

    params = problem.schema.parse(raw)
    _estimate_dense(problem, params, dps)
    try:
        # (a proof can take minutes -- ridge logistic regression's: about 45 s CPU --: a
        # heartbeat line on stderr after 2 s, nothing for a shorter run or with --quiet)
        with Progress(f"{problem.name}: solve --certify", enabled=certify):
            res = solve_params(problem, params, dps=dps, certify=certify)
    except ConvergenceError as exc:
        here = declared_branches_here(problem, branches, raw, params)
        if here:
            exc = ConvergenceError(
                f"{exc}; the model declares a closed-form branch at these parameters: "
                + ", ".join(f"{label} ({problem.free_energy} {_nstr(f)})" for label, f in here),
                status=exc.status)
        if as_json:
            out = {"model": problem.name, "params": params.echo(), "dps": dps,
                   "status": exc.status, "converged": False, "message": str(exc)}
            if here:
                out["declared_branches"] = [{"branch": label, "free_energy": _nstr(f)}
                                            for label, f in here]
            sys.stdout.write(json.dumps(out, indent=2) + "\n")
        raise exc from None
    fname = problem.free_energy
    better = better_closed_branches(problem, branches, raw, params,
                                    res.all_values.get(fname) if fname else None, res.digits)
    if better:
        res.notes.append(_metastable_note(problem, better))
    print_result(res, as_json, extra={"equilibrium": {
        "solution": not better, "branch": better[0][0] if better else None,
        "free_energy": _nstr(better[0][1]) if better else None}} if branches else None)
    if res.status == Status.NOT_CERTIFIED:
        raise ConvergenceError(f"{problem.name}: not certified: {res.certificate.reason}",
                               tried=f"ball arithmetic at {res.certificate.precision} digits",
                               status=res.status.value)
    return 0


def parse_start(text: str, option: str = "--start") -> dict:
    """``{unknown: value}`` from ``NAME=VALUE[,NAME=VALUE...]`` (each value exact: a decimal or
    ``p/q``, passed on as a decimal string of 60 digits)."""
    import mpmath

    from ..params import parse_exact

    out = {}
    for item in (i.strip() for i in str(text).split(",")):
        name, eq, value = item.partition("=")
        if not eq or not name.strip().isidentifier() or not value.strip():
            raise ParameterError(option, f"expected NAME=VALUE[,NAME=VALUE...], got {text!r}")
        v = parse_exact(value.strip(), option)
        with mpmath.workdps(80):
            out[name.strip()] = mpmath.nstr(mpmath.mpf(v.numerator) / v.denominator, 60)
    return out


def run_from_starts(problem, raw: dict, dps: int, as_json: bool, starts: list,
                    branches=()) -> int:
    """Solve ``problem`` at ``raw`` from each start (``NAME=VALUE,...``), report the distinct
    solutions (two are the same when every unknown agrees to half the verified digits) with
    their free energies and name the equilibrium one: the smallest free energy, or the largest
    when the model declares ``extremum="max"`` (a free entropy). Exit 3 when no start
    converges."""
    import mpmath

    from ..analysis.first_order import equilibrium
    from ..errors import ConvergenceError
    from ..numerics.driver import solve_params

    params = problem.schema.parse(raw)
    parsed = [parse_start(s) for s in starts]
    runs = []
    for text, start in zip(starts, parsed):
        try:
            runs.append((text, solve_params(problem, params, dps=dps, start=start), None))
        except ConvergenceError as exc:
            runs.append((text, None, exc))
    unknowns = problem.groups.get("order_parameters", [])
    distinct = []  # [result, [starts]]
    for text, res, _ in runs:
        if res is None:
            continue
        for entry in distinct:
            other = entry[0]
            tol = mpmath.mpf(10) ** -max(1, min(res.digits or 1, other.digits or 1) // 2)
            if all(abs(res.all_values[u] - other.all_values[u])
                   <= tol * max(1, abs(other.all_values[u])) for u in unknowns):
                entry[1].append(text)
                break
        else:
            distinct.append([res, [text]])
    fname = problem.free_energy
    chosen = None
    if fname is not None and distinct:
        chosen = equilibrium({i: e[0].all_values[fname] for i, e in enumerate(distinct)},
                             problem.extremum)
    closed = None  # a declared closed-form branch better than every solution found
    if chosen is not None:
        best = distinct[chosen][0]
        better = better_closed_branches(problem, branches, raw, params,
                                        best.all_values[fname], best.digits)
        if better:
            closed = {"branch": better[0][0], "free_energy": _nstr(better[0][1])}
            for res, _ in distinct:
                res.notes.append(_metastable_note(problem, better))
            chosen = None
    failed = [{"start": text, "status": exc.status, "message": str(exc)}
              for text, res, exc in runs if res is None]
    data = {"model": problem.name, "params": params.echo(), "dps": dps,
            "free_energy": fname, "extremum": problem.extremum if fname else None,
            "equilibrium": chosen, "equilibrium_branch": closed,
            "solutions": [dict(e[0].to_json_dict(), starts=e[1]) for e in distinct],
            "failed": failed}
    if as_json:
        sys.stdout.write(json.dumps(data, indent=2) + "\n")
    else:
        for i, (res, texts) in enumerate(distinct):
            mark = "  (equilibrium)" if i == chosen else ""
            sys.stdout.write(f"solution {i}{mark}, from --start {'; '.join(texts)}:\n")
            sys.stdout.write(res.to_text())
        for f in failed:
            sys.stdout.write(f"from --start {f['start']}: {f['status']} ({f['message']})\n")
        if fname is None:
            sys.stdout.write("no free energy is reported: the equilibrium solution is not "
                             "named\n")
        elif closed is not None:
            word = "larger" if problem.extremum == "max" else "smaller"
            sys.stdout.write(f"{len(distinct)} distinct solution(s), all metastable; "
                             f"equilibrium: the closed-form branch {closed['branch']} (the "
                             f"{word} {fname}, {closed['free_energy']})\n")
        elif distinct:
            word = "largest" if problem.extremum == "max" else "smallest"
            sys.stdout.write(f"{len(distinct)} distinct solution(s); equilibrium: solution "
                             f"{chosen} (the {word} {fname})\n")
    if not distinct:
        raise ConvergenceError(f"{problem.name}: no start converged",
                               tried="Newton from " + "; ".join(starts),
                               status=failed[0]["status"])
    return 0


MAX_FOLLOW_STEPS = 1000
"""The most steps ``--follow`` takes: each is a verified solve (seconds to minutes), so more is a
mistake in N; refused at once (building the path's exact values alone took minutes at N = 4e7)."""


def run_follow(problem, raw: dict, dps: int, as_json: bool, starts, follow: str) -> int:
    """``replica solve --PARAM V ... --start S --follow NAME:TO[:N[:log]]``: the branch through
    ``S`` at the given point, followed along ``NAME`` from its given value to ``TO`` in ``N``
    equal steps, or with ``log`` steps equal in the logarithm (geometric: both ends nonzero, of
    one sign; :func:`replica.analysis.first_order.log_point`)
    (:func:`replica.analysis.first_order.follow`), one line (or one JSON result) per value;
    exit 3 when the continuation stops before ``TO``."""
    from fractions import Fraction

    from ..analysis.first_order import follow as follow_branch
    from ..analysis.first_order import log_point
    from ..errors import ConvergenceError
    from ..params import exact_str, parse_exact

    if not starts or len(starts) != 1:
        raise ParameterError("--follow", "needs exactly one --start (the branch to follow)")
    parts = [t.strip() for t in str(follow).split(":")]
    log = len(parts) == 4 and parts[3] == "log"
    if len(parts) == 4 and not log:
        raise ParameterError("--follow", f"the spacing after N must be 'log', got {parts[3]!r}")
    if len(parts) not in (2, 3, 4) or not all(parts):
        raise ParameterError("--follow", f"expected NAME:TO[:N[:log]], got {follow!r}")
    name = parts[0].replace("-", "_")
    if name not in problem.schema:
        raise ParameterError("--follow", f"{name!r} is not a parameter of {problem.name}")
    params = problem.schema.parse(raw)  # the point where the branch starts, checked first
    lo = getattr(params, name)
    hi = parse_exact(parts[1], "--follow")
    try:
        n = int(parts[2]) if len(parts) >= 3 else 10
    except ValueError:
        raise ParameterError("--follow", f"N must be an integer, got {parts[2]!r}") from None
    if n < 1 or lo == hi:
        raise ParameterError("--follow", f"needs N >= 1 steps and TO != the given --{name}")
    if n > MAX_FOLLOW_STEPS:
        raise ParameterError("--follow", f"at most {MAX_FOLLOW_STEPS} steps (each a verified "
                                         f"solve), got N = {n}")
    if log and not (isinstance(lo, Fraction) and isinstance(hi, Fraction) and lo * hi > 0):
        raise ParameterError("--follow", f"log steps need the given --{name} and TO nonzero "
                                         f"and of one sign (finite), got {exact_str(lo)} and "
                                         f"{exact_str(hi)}")
    if log:
        values = [exact_str(log_point(lo, hi, Fraction(i, n))) for i in range(n + 1)]
        if len(set(values)) < len(values):
            raise ParameterError("--follow", f"{n} log steps from {exact_str(lo)} to "
                                             f"{exact_str(hi)} repeat a value at six significant "
                                             "digits: fewer steps")
    else:
        values = [exact_str(Fraction(lo) + (Fraction(hi) - Fraction(lo)) * i / n)
                  for i in range(n + 1)]
    raw = {k: v for k, v in raw.items() if k != name}
    check_path_in_domain(problem, raw, name, values, "--follow")
    start = parse_start(starts[0])
    points = follow_branch(problem, name, values, start, fixed=raw, dps=dps, log=log)
    fname = problem.free_energy
    rows = []
    for value, res in points:
        if isinstance(res, ConvergenceError):
            rows.append({name: value, "status": res.status, "message": str(res)})
        else:
            rows.append({name: value, **res.to_json_dict()})
    if as_json:
        sys.stdout.write(json.dumps({"model": problem.name, "follow": name, "start": starts[0],
                                     "points": rows}, indent=2) + "\n")
    else:
        unknowns = problem.groups.get("order_parameters", [])
        for (value, res), row in zip(points, rows):
            if isinstance(res, ConvergenceError):
                sys.stdout.write(f"{name}={value}: {res.status} ({res}); the branch is lost\n")
                continue
            vals = res.to_dict()
            cells = [f"{u}={vals[u]}" for u in unknowns]
            if fname is not None:
                cells.append(f"{fname}={vals[fname]}")
            st = res.stability_dict()
            if st is not None and st["replicon"] is not None:
                cells.append(f"replicon={st['replicon']} "
                             f"({'stable' if st['stable'] else 'UNSTABLE'})")
            sys.stdout.write(f"{name}={value}: {res.status.value}, {res.digits} digits; "
                             + ", ".join(cells) + "\n")
    if len(points) < len(values) or isinstance(points[-1][1], ConvergenceError):
        last = points[-1]
        raise ConvergenceError(f"{problem.name}: the branch from --start {starts[0]} was lost at "
                               f"{name} = {last[0]}", tried="continuation from the previous "
                               "solutions", status=getattr(last[1], "status", "stalled"))
    return 0


def check_path_in_domain(problem, fixed: dict, name: str, values, option: str,
                         what: str = "the path") -> None:
    """Refuse, before any solve, a path of the parameter ``name`` (``values``, raw, in order)
    that leaves the model's declared domain: every point, with the other parameters ``fixed``,
    is parsed by the model's schema (the parameter's domain and the schema's rules), and the
    first one refused is a :class:`ParameterError` naming ``option``, the value and the
    domain's own message (``what``: the path's name in it, e.g. ``"the bracket"``)."""
    values = list(values)
    for value in values[-1:] + values[:-1]:  # the end the user gave first
        try:
            problem.schema.parse({**fixed, name: value})
        except ParameterError as exc:
            raise ParameterError(option, f"{what} reaches {name} = {value}, outside the "
                                         f"model's domain ({exc})") from None


def _estimate_dense(problem, params, dps: int) -> None:
    """Announce (or refuse, :func:`replica.estimates.check`) a solve whose covariance parameters
    include a dense matrix: its mp eigendecomposition costs about d^3."""
    from ..estimates import check, dense_solve_estimate

    for p in problem.schema.parameters:
        if not p.is_covariance:
            continue
        cov = getattr(params, p.name, None)
        if cov is not None and getattr(cov, "matrix", None) is not None:
            check(dense_solve_estimate(cov.d, dps, "--" + p.name.replace("_", "-")))


def print_result(result, as_json: bool, stream=None, extra: dict | None = None):
    """Print a :class:`~replica.numerics.Result` as JSON (with the entries ``extra``) or as a
    readable table."""
    stream = stream or sys.stdout
    data = dict(result.to_json_dict(), **(extra or {}))
    if as_json:
        stream.write(json.dumps(data, indent=2) + "\n")
        return
    stream.write(result.to_text())


def add_schema_options(parser, schema, note: str = ""):
    """Every parameter of ``schema`` as an optional ``--NAME`` (requiredness is checked when the
    values are parsed, so that a command can vary a required parameter)."""
    for p in schema.parameters:
        parser.add_argument(p.option, dest=p.name, default=None, metavar=p.name.upper(),
                            help=p.help + note)


def given_values(args, schema) -> dict:
    """``{name: raw}`` of the schema options given on the command line."""
    return {p.name: getattr(args, p.name) for p in schema.parameters
            if getattr(args, p.name, None) is not None}


def progress_bar(label: str, stream=None, unit: str = "step"):
    """A ``report(i, n)`` callback for the library's ``progress=`` parameters: a bar with ETA
    on a terminal, a plain line every few seconds otherwise (:mod:`replica.progress`)."""
    from ..progress import callback

    return callback(label, unit, stream)
