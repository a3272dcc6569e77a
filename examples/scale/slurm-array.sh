#!/usr/bin/env bash
# Provael on Slurm: a job array plays one shard per task; a dependent job merges them.
#   jid=$(sbatch --parsable slurm-array.sh)
#   sbatch --dependency=afterok:$jid slurm-merge.sh
#SBATCH --job-name=provael-shard
#SBATCH --array=0-2
#SBATCH --cpus-per-task=4
#SBATCH --mem=4G
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
# shellcheck disable=SC2086
$PROVAEL attack $PROVAEL_ATTACK_ARGS --workers "${SLURM_CPUS_PER_TASK:-1}" --shard "$k/$SHARDS" --out "$out" "${resume[@]}"
