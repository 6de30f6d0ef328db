"""Helpers shared by the sub-commands: argument parsing that fails in one line, output."""

from __future__ import annotations

import argparse
import json
import sys

from ..errors import ParameterError


class OneLineParser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line (``replica: error: ...``) and exit 2, and
    which accepts no abbreviated option: ``--d`` is not ``--dps`` (argparse's ``allow_abbrev``
    is off; subparsers are made of this class, so every parser of the command line has it)."""

    def __init__(self, *args, **kwargs):
        kwargs["allow_abbrev"] = False
        super().__init__(*args, **kwargs)

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


def run_solve(problem, raw: dict, dps: int, as_json: bool, certify: bool = False) -> int:
    """Solve ``problem`` at ``raw`` and print the result; a solve that fails prints its status
    (as JSON with ``--json``) and returns exit status 3. With ``certify`` the result is proved
    by ball arithmetic; a failed proof prints the result with its certificate and exits 3."""
    from ..errors import ConvergenceError
    from ..numerics.driver import solve_params
    from ..numerics.result import Status

    params = problem.schema.parse(raw)
    _estimate_dense(problem, params, dps)
    try:
        res = solve_params(problem, params, dps=dps, certify=certify)
    except ConvergenceError as exc:
        if as_json:
            sys.stdout.write(json.dumps({"model": problem.name, "params": params.echo(),
                                         "dps": dps, "status": exc.status,
                                         "converged": False, "message": str(exc)}, indent=2)
                             + "\n")
        raise
    print_result(res, as_json)
    if res.status == Status.NOT_CERTIFIED:
        raise ConvergenceError(f"{problem.name}: not certified: {res.certificate.reason}",
                               tried=f"ball arithmetic at {res.certificate.precision} digits",
                               status=res.status.value)
    return 0


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


def print_result(result, as_json: bool, stream=None):
    """Print a :class:`~replica.numerics.Result` as JSON or as a readable table."""
    stream = stream or sys.stdout
    data = result.to_json_dict()
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
