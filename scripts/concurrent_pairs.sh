#!/bin/bash
# Compares two builds on a noisy machine: runs OLD and NEW at the same time, one per core
# (cores swapped every pair), so that both see the same phase of the machine, and prints each
# run's CPU ns per flit-hop and NEW/OLD. Both runs share the last-level cache, so either is a
# little slower than alone: use it for ratios, not absolute figures. Needs two cores.
#
#   bash scripts/concurrent_pairs.sh PAIRS OLD/run NEW/run -- CONFIG [--set key=value ...]
#
# where OLD/run and NEW/run are `cargo build --release -p flitsim-app --example run` binaries.
# OLD_EXTRA and NEW_EXTRA (environment, split at spaces) add arguments to one side only: the
# same binary twice with OLD_EXTRA="--set switch.organisation=\"crossbar\"" and
# NEW_EXTRA="--set switch.organisation=\"opa\"" gives the Omni-Path model's cost over the
# crossbar's on one fabric.
set -euo pipefail
if [ $# -lt 5 ] || [ "$4" != "--" ]; then
    echo "usage: $0 PAIRS OLD NEW -- CONFIG [ARGS...]" >&2
    exit 2
fi
n=$1 old=$2 new=$3
shift 4
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ns() {
    python3 -c "import json,sys; p=json.load(open(sys.argv[1]))['performance']; print(round(p['cpu_seconds']/p['flit_hops']*1e9, 1))" "$1"
}
echo "old_ns new_ns new/old"
for i in $(seq "$n"); do
    if [ $((i % 2)) = 1 ]; then a=0 b=1; else a=1 b=0; fi
    # shellcheck disable=SC2086
    taskset -c $a "$old" "$@" ${OLD_EXTRA:-} >"$tmp/old.json" 2>"$tmp/old.err" &
    p=$!
    # shellcheck disable=SC2086
    taskset -c $b "$new" "$@" ${NEW_EXTRA:-} >"$tmp/new.json" 2>"$tmp/new.err" &
    q=$!
    wait $p || { cat "$tmp/old.err" >&2; kill $q 2>/dev/null; exit 1; }
    wait $q || { cat "$tmp/new.err" >&2; exit 1; }
    x=$(ns "$tmp/old.json") y=$(ns "$tmp/new.json")
    echo "$x $y $(python3 -c "print(round($y / $x, 3))")"
done
