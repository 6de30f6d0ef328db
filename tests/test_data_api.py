"""Results as data: attribute access, ``to_dict``, the mapping protocol, printing with the digits
a result carries, and the LaTeX renderings Jupyter shows."""

import json
import pickle

import mpmath
import pytest

import replica
from replica.errors import ParameterError
from replica.numerics.result import CarriedValue

LOWRANK = dict(alpha=2, tau="9/4", kappa="3/2", rho="0.9", sigma="0.3")


@pytest.fixture(scope="module")
def lowrank50():
    return replica.solve("lowrank", dps=50, **LOWRANK)


def test_attribute_access_and_names_of_the_json(lowrank50, cli):
    r = lowrank50
    rc, out, err = cli("solve", "lowrank", "--alpha", "2", "--tau", "9/4", "--kappa", "3/2",
                       "--rho", "0.9", "--sigma", "0.3", "--dps", "50", "--json")
    assert rc == 0, err
    data = json.loads(out)
    # every scalar of the JSON is an attribute and a key with the same name and digits
    names = [k for g in ("order_parameters", "errors") for k in data[g]]
    names += [f"{k}_{part}" for k, parts in data["decomposition"].items() for part in parts]
    names += list(data["free_energy"])
    assert list(r.keys()) == names
    as_str = r.to_dict()
    for g in ("order_parameters", "errors"):
        for k, v in data[g].items():
            assert as_str[k] == v and str(getattr(r, k)) == v and str(r[k]) == v
    for k, v in data["free_energy"].items():  # (the attribute free_energy is the group)
        assert as_str[k] == v and str(r[k]) == v
    assert as_str["tm_signal"] == data["decomposition"]["tm"]["signal"]
    assert r.errors["tm"] == r.tm and set(r.decomposition) == {"tm", "idg", "odg",
                                                                          "test"}
    assert dict(r) == {k: r[k] for k in names} and len(r) == len(names) and "q" in r


def test_unknown_attribute_names_the_known_ones(lowrank50):
    with pytest.raises(AttributeError) as info:
        lowrank50.qq
    assert "'qq'" in str(info.value) and "q, m, chi" in str(info.value)
    with pytest.raises(KeyError, match="the values are q, m"):
        lowrank50["nope"]
    assert not hasattr(lowrank50, "__array_interface__")


def test_to_dict_kinds(lowrank50):
    r = lowrank50
    floats = r.to_dict(kind="float")
    assert all(type(v) is float for v in floats.values())
    strings = r.to_dict(kind="str")
    assert r.digits == 50
    for k, v in strings.items():
        assert floats[k] == float(v)
        # 50 significant digits, as the solve guarantees (an exact zero prints as 0.0)
        assert v == "0.0" or len(v.lstrip("-0.").replace(".", "")) >= 48, (k, v)
    with mpmath.workdps(60):
        assert abs(mpmath.mpf(strings["q"]) - r.to_dict(kind="mpf")["q"]) < mpmath.mpf(10) ** -50
    with pytest.raises(ParameterError, match="kind"):
        r.to_dict(kind="decimal")


def test_values_print_with_their_digits(lowrank50):
    r = lowrank50
    assert mpmath.mp.dps == 15
    q = r.q
    assert isinstance(q, CarriedValue) and isinstance(q, mpmath.mpf)
    assert str(q) == r.to_dict()["q"] and len(str(q)) == 52       # "0." + 50 digits
    assert repr(q) == str(q)
    assert r.to_dict()["q"] in repr(r) and r.to_dict()["tm_signal"] in repr(r)
    assert r.to_dict()["q"] in str(r) and "digits guaranteed: 50" in str(r)
    # the binary value is the solve's, unrounded; arithmetic is that of a plain mpf
    assert q._mpf_ == r.groups["order_parameters"]["q"]._mpf_
    assert type(q + 1) is mpmath.mpf
    back = pickle.loads(pickle.dumps(r))
    assert back.q._mpf_ == q._mpf_ and str(back.q) == str(q)


def test_cli_text_output_carries_the_digits(capsys):
    from replica.cli import main

    assert main(["solve", "isotropic", "--alpha", "2", "--tau", "1/2", "--kappa", "1/2",
                 "--rho", "0.01", "--dps", "50"]) == 0
    out = capsys.readouterr().out
    r = replica.solve("isotropic", alpha=2, tau="1/2", kappa="1/2", rho="0.01", dps=50)
    assert r.digits >= 45
    for k, v in r.to_dict().items():
        if v is not None:
            assert v in out, k


def test_result_latex_table(lowrank50):
    tex = lowrank50._repr_latex_()
    assert tex.startswith("$\\begin{array}") and tex.endswith("\\end{array}$")
    assert f"\\mathtt{{q}} & {lowrank50.to_dict()['q']} \\\\" in tex
    assert "\\mathtt{tm\\_signal}" in tex and "50 digits guaranteed" in tex
    assert tex.count("\\\\") == len(lowrank50) + 2


def test_equations_render_as_latex():
    from replica import models
    from replica.derivations.equations import as_latex, equation_blocks

    problem = models.get("lowrank")
    blocks = equation_blocks(problem)
    tex = blocks._repr_latex_()
    assert tex.startswith("$$\\begin{aligned}") and tex.endswith("\\end{aligned}$$")
    # the same rows as `replica equations --latex`, one block per title
    body = as_latex(problem, blocks)
    for b in blocks:
        for row in b.latex_rows():
            assert row in tex and row in body
        assert b._repr_latex_().count("&\\text{") == 1
    assert "\\hat{q}" in tex


@pytest.mark.slow
def test_transition_note_carries_the_digits():
    from replica.analysis.transitions import isotropic_interpolation_peak

    r = isotropic_interpolation_peak(10, "inf", "0.01", "0.001", dps=50)
    assert r.location.digits() >= 40
    value = r.notes[0].split("= ")[1]
    assert len(value.replace(".", "").lstrip("0")) >= 40, value
