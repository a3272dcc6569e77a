#!/usr/bin/env bash
#SBATCH --job-name=provael-merge
#SBATCH --cpus-per-task=1
#SBATCH --time=00:30:00
set -euo pipefail
RESULTS=${RESULTS:-results}
PROVAEL=${PROVAEL:-npx provael}
$PROVAEL merge --in "$RESULTS"/shard-* --out "$RESULTS/merged"
