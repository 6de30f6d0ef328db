"""Helpers shared by the sub-commands: argument parsing that fails in one line, output."""

from __future__ import annotations

import argparse
import json
import sys

from ..errors import ParameterError


class OneLineParser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line (``replica: error: ...``) and exit 2."""

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
    if v < 5 or v > 10000:
        raise ParameterError("--dps", f"must lie in 5..10000, got {v}")
    return v


def run_solve(problem, raw: dict, dps: int, as_json: bool) -> int:
    """Solve ``problem`` at ``raw`` and print the result; a solve that fails prints its status
    (as JSON with ``--json``) and returns exit status 3."""
    from ..errors import ConvergenceError
    from ..numerics.driver import solve_params

    params = problem.schema.parse(raw)
    try:
        res = solve_params(problem, params, dps=dps)
    except ConvergenceError as exc:
        if as_json:
            sys.stdout.write(json.dumps({"model": problem.name, "params": params.echo(),
                                         "dps": dps, "status": exc.status,
                                         "converged": False, "message": str(exc)}, indent=2)
                             + "\n")
        raise
    print_result(res, as_json)
    return 0


def print_result(result, as_json: bool, stream=None):
    """Print a :class:`~replica.numerics.Result` as JSON or as a readable table."""
    stream = stream or sys.stdout
    data = result.to_json_dict()
    if as_json:
        stream.write(json.dumps(data, indent=2) + "\n")
        return
    params = ", ".join(f"{k}={v}" for k, v in data["params"].items())
    stream.write(f"{data['model']}  ({params})\n")
    stream.write(f"  status {data['status']}; dps {data['dps']}, digits guaranteed: "
                 f"{data['digits']} "
                 f"({data['digits_how']}); residual {data['residual']}, "
                 f"condition {data['condition']}, iterations {data['iterations']}\n")
    skip = {"model", "params", "dps", "digits", "digits_how", "converged", "iterations",
            "residual", "condition", "notes", "status"}
    for group, vals in data.items():
        if group in skip or not isinstance(vals, dict):
            continue
        stream.write(f"  {group}:\n")
        for k, v in vals.items():
            if isinstance(v, dict):
                stream.write(f"    {k}: " + ", ".join(f"{a}={b}" for a, b in v.items()) + "\n")
            else:
                stream.write(f"    {k:<14} {v if v is not None else '(undefined)'}\n")
    for n in data["notes"]:
        stream.write(f"  note: {n}\n")
