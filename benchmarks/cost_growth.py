"""How the cost grows: with the working precision (dps 30 -> 200) and with the grid size.

* One point, high precision, without and with the verifying re-solve (which runs at
  ``dps + max(10, dps // 2)`` digits): alignment (piano, d = 120, tau = 4 and tau = 1/2),
  isotropic closed forms, low-rank golden point 1 (lambda = 0) and 3 (lambda > 0, tau < 1).
* Float64 grids: points per second of ``alignment.solve_float64`` (piano d = 120) and
  ``lowrank.solve_float64`` for grids of 10^2 ... 10^5 points.
"""

from __future__ import annotations


import numpy as np

import replica
from replica.spectra import parse_spec

from ._util import machine_line, median_time, table, write_section

DPS = (30, 50, 100, 200)
CASES = {
    "alignment piano d=120, tau=4": lambda dps, v: replica.solve(
        "alignment", alpha=2, tau=4, kappa=2, rho="0.01", d=120, train="piano", test="piano",
        dps=dps, verify=v),
    "alignment piano d=120, tau=1/2": lambda dps, v: replica.solve(
        "alignment", alpha=2, tau="1/2", kappa="1/2", rho="0.01", d=120, train="piano",
        test="spike:1", dps=dps, verify=v),
    "isotropic ridge, tau=1": lambda dps, v: replica.solve("isotropic", alpha=2, tau=1, kappa="1/2",
                                                           rho="0.01", lam="0.1", dps=dps,
                                                           verify=v),
    "lowrank golden 1 (lam=0)": lambda dps, v: replica.solve(
        "lowrank", alpha=2, tau="9/4", kappa="3/2", rho="0.9", sigma="0.3", dps=dps, verify=v),
    "lowrank golden 3 (tau<1, lam=0.1)": lambda dps, v: replica.solve(
        "lowrank", alpha=1, tau="1/2", kappa="1/2", rho="0.3", sigma="0.5", lam="0.1", dps=dps,
        verify=v),
}


def run():
    rows = []
    for name, fn in CASES.items():
        fn(30, False)  # warm the compiled evaluators
        row = [name]
        for dps in DPS:
            t, _ = median_time(lambda: fn(dps, False), 3)
            tv, r = median_time(lambda: fn(dps, True), 1)
            row.append(f"{t * 1e3:.0f} / {tv * 1e3:.0f} ms ({r.digits})")
        rows.append(row)
    grid_rows = []
    piano = parse_spec("piano", 120)
    for n in (100, 1000, 10000, 100000):
        a = np.logspace(-0.5, 2, n)
        t_a, _ = median_time(lambda: replica.solve_float64(
            "alignment", train=piano, test=piano, alpha=a, tau=4.0, kappa=2.0, rho=0.01), 3)
        rho = np.linspace(0.05, 1.0, n)
        t_l, _ = median_time(lambda: replica.solve_float64(
            "lowrank", alpha=2.0, tau=2.25, kappa=0.5, rho=rho, sigma=0.3), 3)
        grid_rows.append((f"{n:,}", f"{t_a:.3f} s", f"{n / t_a:,.0f}", f"{t_l:.3f} s",
                          f"{n / t_l:,.0f}"))
    md = ["## Cost growth: working precision and grid size", "",
          f"Machine: {machine_line()}.", "",
          "One point: median time without verification / time with the verifying re-solve "
          "(digits guaranteed in brackets):", "",
          table(["case"] + [f"dps {d}" for d in DPS], rows), "",
          "Float64 grids (vectorised): wall time and points per second.", "",
          table(["points", "alignment piano d=120 (alpha grid)", "points/s",
                 "lowrank (rho grid, tau=2.25)", "points/s"], grid_rows)]
    return "\n".join(md)


def main():
    md = run()
    write_section("cost_growth", md)
    print(md)


if __name__ == "__main__":
    main()
