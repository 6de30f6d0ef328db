"""The spectral averages' sums of the fused float64 kernels (:mod:`replica.numerics.kernels`):
``_row_sum`` is the pairwise sum of the row -- blocks of at most 128 terms with eight partial
sums, a longer range the sum of its two halves, the first half's length ``n // 2`` rounded down
to a multiple of 8 -- and the kernel computes it without recursion (:func:`_pairwise` walks the
tree). Checked bit for bit against that recursion written here in plain Python, independently of
the kernel's source, and against ``np.add.reduce`` of the row, the NumPy path's sum of a
spectral average (so the kernel's averages are the NumPy path's, bit for bit)."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from replica.numerics import kernels

numba_missing = pytest.mark.skipif(importlib.util.find_spec("numba") is None,
                                   reason="numba is not installed")


def _block(a: list, lo: int, n: int) -> float:
    """The sum of ``a[lo:lo + n]`` (``n <= 128``): a plain loop below 8 terms, else eight
    interleaved partial sums added as ((0+1)+(2+3))+((4+5)+(6+7)), then the rest one by one."""
    if n < 8:
        r = 0.0
        for i in range(lo, lo + n):
            r += a[i]
        return r
    r = [a[lo + k] for k in range(8)]
    i = 8
    while i < n - n % 8:
        for k in range(8):
            r[k] += a[lo + i + k]
        i += 8
    res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
    while i < n:
        res += a[lo + i]
        i += 1
    return res


def _recursive(a: list, lo: int, n: int) -> float:
    """The pairwise sum of ``a[lo:lo + n]`` by recursion."""
    if n <= 128:
        return _block(a, lo, n)
    h = n // 2
    h -= h % 8
    return _recursive(a, lo, h) + _recursive(a, lo + h, n - h)


@numba_missing
def test_the_kernels_row_sum_is_the_recursive_pairwise_sum_bit_for_bit():
    """Every length from 0 to 1100 (one to nine blocks, every remainder mod 8 and 128) and long
    rows up to 2^20 + 7 terms (13 halvings deep), terms of random sign spanning 17 decades (so a
    different grouping of the additions changes the last bits): the compiled sum equals the
    recursion's. The prelude is compiled here without Numba's cache."""
    ns: dict = {}
    exec(compile(kernels._PRELUDE.replace("cache=CACHE", "cache=False"), "<kernel prelude>",
                 "exec"), ns)
    row_sum = ns["_row_sum"]
    rng = np.random.default_rng(20261207)
    sizes = list(range(0, 1101)) + [4095, 4096, 4097, 16383, 16385, 100003, 2 ** 20 + 7]
    differ = []
    for n in sizes:
        t = rng.standard_normal(n) * np.exp(rng.uniform(-20.0, 20.0, n))
        want = _recursive(t.tolist(), 0, n)
        numpy_sum = float(np.add.reduce(t))
        got = row_sum(t.copy())  # (the row is scratch: the kernel overwrites it)
        if not (got == want == numpy_sum):
            differ.append((n, got, want, numpy_sum))
    assert not differ, differ[:5]
