"""The raw (unnormalised) train and test covariances two tests of the unified free energy share:
d = 12, train entries 3(j + 1)/d (task power 13/8), test entries 1/2 + (j mod 3)."""

from __future__ import annotations

from fractions import Fraction as Fr

D = 12


def unnormalised_covariances(folder) -> tuple:
    """``(train_entries, test_entries, train_spec, test_spec)``: the entries as fractions and
    the SPECs of the two files written into ``folder``."""
    tr = [Fr(3 * (j + 1), D) for j in range(D)]
    te = [Fr(1, 2) + Fr(j % 3) for j in range(D)]
    (folder / "tr.txt").write_text("\n".join(map(str, tr)))
    (folder / "te.txt").write_text("\n".join(map(str, te)))
    return tr, te, f"file:{folder / 'tr.txt'}:raw", f"file:{folder / 'te.txt'}:raw"


POINT = {"alpha": Fr(2), "tau": Fr(3, 2), "kappa": Fr(3, 4), "rho": Fr(1, 3), "lam": Fr(1, 10)}
"""Paper A's parameters at which both tests solve (rho the noise variance, lam paper A's
ridge)."""


def alignment_and_unified(folder, dps: int) -> tuple:
    """``(result, unified, train_mp, test_mp)``: the alignment model solved at :data:`POINT` on
    the unnormalised covariances, and the unified saddle point solved on its own on the same
    spectrum (the low-rank ridge tau lam/kappa, the noise std sqrt(rho)), at ``dps + 10`` digits
    inside a working precision of ``dps + 20`` (the entries as ``mpf`` at that precision)."""
    import mpmath

    import replica
    from replica.derivations import unified as U
    from replica.params import to_mpf

    tr, te, train, test = unnormalised_covariances(folder)
    p = POINT
    result = replica.solve("alignment", d=D, train=train, test=test, dps=dps, **p)
    with mpmath.workdps(dps + 20):
        trm, tem = [to_mpf(v) for v in tr], [to_mpf(v) for v in te]
        u = U.solve_on_spectrum(to_mpf(p["alpha"]), to_mpf(p["tau"]), to_mpf(p["kappa"]),
                                to_mpf(p["tau"] * p["lam"] / p["kappa"]),
                                mpmath.sqrt(to_mpf(p["rho"])), trm, tem, dps=dps + 10)
    return result, u, trm, tem
