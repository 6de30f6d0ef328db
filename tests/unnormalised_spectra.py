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
