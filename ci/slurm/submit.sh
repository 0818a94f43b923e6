#!/usr/bin/env bash
# Submits a sharded genrepro grid to Slurm: an array of N shard tasks, then the merge job, which
# runs only if every shard succeeded (afterok). Run from the repository root.
#   bash ci/slurm/submit.sh [N]        (N shards, default 4; the variables of both scripts pass through)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
shards="${1:-4}"
array_job=$(sbatch --parsable --array="1-${shards}" "$here/genrepro-shards.sbatch")
merge_job=$(sbatch --parsable --dependency="afterok:${array_job}" "$here/genrepro-merge.sbatch")
echo "submitted shards as job ${array_job} (${shards} tasks), merge as job ${merge_job}"
