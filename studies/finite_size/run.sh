#!/usr/bin/env bash
# The finite-size study of the two built-in ICL models shown in their appendices: theory
# (d -> infinity, solved at each d's discretised spectrum) against simulations of linear
# attention trained by ridge regression at d = 16 ... 96, 16 seeds each (cached in OUTDIR/cache: a killed run resumes).
#
#   studies/finite_size/run.sh OUTDIR [WORKERS]
#
# writes OUTDIR/alignment/check.csv and OUTDIR/lowrank/check.csv (and their tables and
# figures); copy the two check.csv files to replica/derivations/data/finite_size_{alignment,
# lowrank}.csv to update what the appendices draw. On 16 cores the run takes a few minutes;
# on 2 cores about an hour.
set -euo pipefail
out=${1:?usage: run.sh OUTDIR [WORKERS]}
workers=${2:-$(nproc)}
ds=16,24,32,48,64,96
seeds=16
replica=${REPLICA:-python -m replica}
$replica check alignment --alpha 2 --tau 2 --kappa 1/2 --rho 1/10 --train piano \
    --test spike:1 --ds $ds --seeds $seeds --workers "$workers" --cache "$out/cache" --no-progress \
    -o "$out/alignment" --force
$replica check lowrank --alpha 2 --tau 2 --kappa 1/2 --rho 1/2 --sigma 1/10 \
    --ds $ds --seeds $seeds --workers "$workers" --cache "$out/cache" --no-progress \
    -o "$out/lowrank" --force
