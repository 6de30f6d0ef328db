"""Regression: ``replica solve`` prints the values it printed before the engine redesign.

``tests/regression/solve_outputs.json`` holds the JSON output of each case of
``tests/regression/freeze.py`` as produced by the version before the redesign (commit c7787f4).
Each value printed now must agree with the frozen one to the digits both guarantee (less one: two
correctly rounded N-digit decimals of the same number may differ in the last place), and the new
run must guarantee at least as many digits.
"""

from __future__ import annotations

import json
import os

import mpmath
import pytest

from replica.numerics import agreement_digits

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "regression")
with open(os.path.join(HERE, "solve_outputs.json")) as fh:
    FROZEN = json.load(fh)

ADDED_DEFAULTS = {"test": "idg"}
"""Parameters added after the freeze, with the default that keeps the frozen meaning (the
low-rank ``--test`` law adds the error ``test``, IDG by default)."""

VALUE_GROUPS = ("errors", "intermediates", "measures", "order_parameters", "decomposition")


def flat_values(out: dict) -> dict:
    vals = {}
    for group in VALUE_GROUPS:
        for key, val in out.get(group, {}).items():
            if isinstance(val, dict):
                for k2, v2 in val.items():
                    vals[f"{group}.{key}.{k2}"] = v2
            else:
                vals[f"{group}.{key}"] = val
    return vals


def compare(old: dict, new: dict) -> list[str]:
    """Differences between two JSON outputs of one case (empty when they agree)."""
    problems = []
    if new["digits"] < old["digits"]:
        problems.append(f"digits fell from {old['digits']} to {new['digits']}")
    added = {k: v for k, v in new["params"].items() if k not in old["params"]}
    if {k: new["params"].get(k) for k in old["params"]} != old["params"]:
        problems.append(f"params echo changed: {old['params']} -> {new['params']}")
    if any(ADDED_DEFAULTS.get(k) != v for k, v in added.items()):
        problems.append(f"a parameter added since the freeze is not at its default: {added}")
    ov, nv = flat_values(old), flat_values(new)
    if set(ov) != set(nv) - {k for k in nv if k not in ov and nv[k] is None}:
        missing = sorted(set(ov) - set(nv))
        if missing:
            problems.append(f"values missing: {missing}")
    need = min(old["digits"], new["digits"]) - 1
    with mpmath.workdps(120):
        for key, o in ov.items():
            n = nv.get(key)
            if o is None or n is None:
                if o != n:
                    problems.append(f"{key}: {o} -> {n}")
                continue
            got = agreement_digits(mpmath.mpf(o), mpmath.mpf(n), max(need, 1))
            if got < need:
                problems.append(f"{key}: {o} -> {n} (agree to {got} < {need} digits)")
    return problems


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(FROZEN))
def test_solve_output_unchanged(cli, name):
    record = FROZEN[name]
    code, out, err = cli(*record["argv"], "--json")
    assert code == 0, err
    new = json.loads(out)
    assert compare(record["output"], new) == []


def test_comparison_detects_a_changed_digit():
    """The comparison fails when one frozen value is moved in its guaranteed digits."""
    record = FROZEN["lowrank_golden_1"]["output"]
    changed = json.loads(json.dumps(record))
    tm = changed["errors"]["tm"]
    changed["errors"]["tm"] = tm[:12] + ("1" if tm[12] != "1" else "2") + tm[13:]
    assert compare(record, record) == []
    moved = json.loads(json.dumps(record))
    moved["params"]["test"] = "outside:1/4"
    assert compare(record, moved) != []
    assert any("errors.tm" in p for p in compare(record, changed))
