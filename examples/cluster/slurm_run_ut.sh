#!/usr/bin/env bash
# Slurm batch script: probe run_ut on a step directory of a multi-rank dump across 8 nodes, one MPI rank per
# node and a thread per core inside it (rank 0 writes every output file). The dump and the output directory are
# on a file system every node mounts (Lustre, GPFS, NFS, ...). Submit with
#   sbatch --export=ALL,DUMP=/shared/dumps/run42/step0,OUT=/shared/probe/run42 examples/cluster/slurm_run_ut.sh
# and resume an interrupted job (a node lost, the time limit reached) under any node count with
#   sbatch --export=ALL,DUMP=...,RESUME=/shared/probe/run42/rank0/accuracy_checking_result_<ts>.csv ...
#SBATCH --job-name=probe-run_ut
#SBATCH --nodes=8
#SBATCH --ntasks-per-node=1
#SBATCH --cpus-per-task=32
#SBATCH --time=01:00:00
#SBATCH --output=probe-run_ut-%j.log
set -euo pipefail
: "${DUMP:?set DUMP to a step directory (rank*/dump.json) or one dump.json}"
OUT=${OUT:-$PWD/probe-out-$SLURM_JOB_ID}
PROBE=${PROBE:-probe}
threads=${SLURM_CPUS_PER_TASK:-1}
if [ -n "${RESUME:-}" ]; then
  where=(-csv_path "$RESUME")
else
  where=(-o "$OUT")
fi
# srun starts the ranks through PMIx (Debian's Open MPI is built with it); probe joins the job when it sees the
# launcher's environment. One rank per node reads its share of the dump from the shared file system.
srun --mpi=pmix --cpu-bind=none "$PROBE" run_ut -api_info "$DUMP" "${where[@]}" -n "$threads" -q
# The step's compare (NPU against bench step directories in compare.json) splits the same way:
#   srun --mpi=pmix "$PROBE" compare -i compare.json -o "$OUT/compare"
