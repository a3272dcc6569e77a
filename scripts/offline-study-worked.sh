#!/bin/sh
# The worked study of docs/offline-study.md: record a dataset from the tabletop expert with
# video camera streams, then study tiny-vla and the stub (an incompetent policy on this data)
# under roleplay with its matched controls. Usage: scripts/offline-study-worked.sh WORKDIR
# (set DATASET=DIR to reuse a recording). Prints every command and its output.
set -u
W=${1:?usage: scripts/offline-study-worked.sh WORKDIR}
P="node $(dirname "$0")/../dist/cli/bin.js"
mkdir -p "$W"
D=${DATASET:-$W/tabletop-expert}
run() { echo "\$ $*" | sed "s#node [^ ]*/dist/cli/bin.js#provael#"; "$@"; echo "(exit $?)"; }
[ -d "$D" ] || run $P record --suite tabletop --policy scripted --scenes 0:2 --episodes 24 --seed 0 --video h264 --out "$D"
run $P offline-study plan --dataset "$D" --policy tiny-vla --attack roleplay --dims 0,1,2,5,6 --stride 5 --out "$W/plan-tiny-vla.yaml"
run $P offline-study run --plan "$W/plan-tiny-vla.yaml" --out "$W/study-tiny-vla"
run $P offline-study plan --dataset "$D" --policy stub --attack roleplay --dims 0 --stride 5 --out "$W/plan-stub.yaml"
run $P offline-study run --plan "$W/plan-stub.yaml" --out "$W/study-stub"
run $P offline-study run --plan "$W/plan-stub.yaml" --out "$W/study-stub-dry" --dry-run
run $P offline-study plan --dataset "$D" --policy stub --attack roleplay --stride 5 --out "$W/plan-stub-all-dims.yaml"
run $P offline-study run --plan "$W/plan-stub-all-dims.yaml" --out "$W/study-stub-all-dims"
cp "$W/plan-stub.yaml" "$W/plan-stub-edited.yaml"
cp "$W/plan-stub.yaml.registration.json" "$W/plan-stub-edited.yaml.registration.json"
sed -i 's/target_fpr: 0.05/target_fpr: 0.2/' "$W/plan-stub-edited.yaml"
run $P offline-study run --plan "$W/plan-stub-edited.yaml" --out "$W/study-stub-edited"
