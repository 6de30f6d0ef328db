"""The decomposition of paper A's E_ICL into signal, memorisation, structural and noise parts
(``replica.models.alignment.DECOMPOSITION``), which paper A does not have.

It splits the ridge estimator into its mean and its fluctuation q (r + s) f^2 per eigenvalue of
the empirical task covariance: the part along the task directions (q r f^2, memorisation) and
the part driven by the context noise (q s f^2, structural). The checks: the parts sum to
E_ICL; each is non-negative; and on the low-rank instance C_train = P/rho each part equals the
low-rank replica theory's own part (signal = the mhat^2 terms, memorisation = the chihat terms,
structural = the chibarhat terms) for the IDG (C_test = C_train) and ODG (C_test = I) errors --
a comparison part by part, so a part assigned to the wrong bracket fails it."""

import json

import mpmath
import pytest
from test_lowrank_cross_paper import POINTS as CROSS_PAPER_POINTS

import replica
from replica.models import alignment as A
from replica.models.alignment_problem import PART_KEYS
from replica.numerics import agreement_digits

POINTS = CROSS_PAPER_POINTS[:4]
"""tau < 1 with lambda > 0; tau > 1 at lambda = 0; tau > 1 with lambda > 0 (the low-rank golden
points 3, 1, 2 at sigma_test = sigma); task-scarce at large alpha."""


@pytest.mark.slow
@pytest.mark.parametrize("p", POINTS, ids=lambda p: f"tau={p['tau']},lam={p['lam']}")
def test_parts_are_the_low_rank_parts_on_the_two_atom_spectrum(p):
    dps = 30
    lr = replica.solve("lowrank", **p, sigma_test=p["sigma"], dps=dps)
    spec = f"lowrank:{p['rho']}"
    common = dict(alpha=p["alpha"], tau=p["tau"], kappa=p["kappa"], rho=p["sigma"] ** 2,
                  lam=p["kappa"] * p["lam"] / p["tau"])
    for test, protocol in ((spec, "idg"), ("identity", "odg")):
        a = replica.solve("alignment", **common, d=10, train=spec, test=test, dps=dps)
        mine, theirs = a.groups["decomposition"]["e_icl"], lr.groups["decomposition"][protocol]
        with mpmath.workdps(dps):
            for part in PART_KEYS:
                assert agreement_digits(mine[part], theirs[part], dps) >= 25, (protocol, part)


@pytest.mark.parametrize("train,test,kappa,tau,lam", [
    ("piano", "spike:1", "2", "4", "0"),
    ("powerlaw:1", "piano", "1/2", "1/2", "0"),
    ("piano", "identity", "inf", "3", "0"),
    ("spike:3", "powerlaw:2", "3/4", "2", "1/10"),
])
def test_parts_sum_to_the_error_and_are_non_negative(train, test, kappa, tau, lam):
    r = replica.solve("alignment", alpha=2, tau=tau, kappa=kappa, rho="0.01", lam=lam, d=12,
                      train=train, test=test, dps=30)
    parts = r.groups["decomposition"]["e_icl"]
    assert set(parts) == set(PART_KEYS)
    with mpmath.workdps(35):
        assert agreement_digits(mpmath.fsum(parts.values()), r["e_icl"], 30) >= 28
        assert all(v >= 0 for v in parts.values())
        assert agreement_digits(parts["noise"], mpmath.mpf("0.01"), 30) >= 28


def test_json_has_the_decomposition(cli):
    rc, out, err = cli("solve", "alignment", "--alpha", "2", "--tau", "4", "--kappa", "2",
                       "--rho", "0.01", "--d", "20", "--train", "piano", "--test", "spike:1",
                       "--dps", "20", "--json")
    assert rc == 0, err
    data = json.loads(out)
    parts = data["decomposition"]["e_icl"]
    assert list(parts) == list(PART_KEYS)
    assert abs(sum(float(v) for v in parts.values()) - float(data["errors"]["e_icl"])) < 1e-15
