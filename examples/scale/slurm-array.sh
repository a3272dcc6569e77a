#!/usr/bin/env bash
# Provael on Slurm: a job array plays one shard per task; a dependent job merges them.
# Size each task on the command line, for the nodes you have (a task asking more CPUs or memory
# than any node has waits forever with reason PartitionConfig), and give the array one task per
# shard (docs/scale.md, "Slurm"):
#   jid=$(sbatch --parsable --array=0-$((SHARDS - 1)) --cpus-per-task=$CPUS --mem=$MEM slurm-array.sh)
#   mid=$(sbatch --parsable --dependency=afterok:$jid slurm-merge.sh)
# Without those options a task gets one CPU and the array is 0-2 (SHARDS=3).
#SBATCH --job-name=provael-shard
#SBATCH --array=0-2
#SBATCH --time=04:00:00
#SBATCH --requeue
set -euo pipefail
SHARDS=${SHARDS:-3}
RESULTS=${RESULTS:-results}
PROVAEL=${PROVAEL:-npx provael}
PROVAEL_ATTACK_ARGS=${PROVAEL_ATTACK_ARGS:---recipe core-sweep --policy tiny-vla --suite tabletop --seeds 10}
k=${SLURM_ARRAY_TASK_ID:?run under sbatch --array, or set SLURM_ARRAY_TASK_ID}
out="$RESULTS/shard-$k"
resume=()
# A requeued task finishes its shard instead of starting over.
[ -f "$out/journal.jsonl" ] && resume=(--resume)
# One worker per CPU Slurm gave the task (--cpus-per-task); one when it was not asked.
# shellcheck disable=SC2086
$PROVAEL attack $PROVAEL_ATTACK_ARGS --workers "${SLURM_CPUS_PER_TASK:-1}" --shard "$k/$SHARDS" --out "$out" "${resume[@]}"
