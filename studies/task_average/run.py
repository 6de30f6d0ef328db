"""Regenerate replica/derivations/data/task_average_lowrank.csv: the per-task overlaps of the
trained Gamma of the low-rank model over its training tasks, at the point, sizes and seeds of
replica.derivations.task_average (POINT, SIZES, SEEDS, BASE_SEED).

    PYTHONPATH=. python studies/task_average/run.py [OUTPUT]

About a minute on two cores (the largest size, D = 64, dominates).
"""

import sys

from replica.derivations import task_average

if __name__ == "__main__":
    task_average.write_table(sys.argv[1] if len(sys.argv) > 1 else task_average.DATA)
