#!/usr/bin/env bash
# Checks that two builds of the engine give the same results: runs each reference scenario
# (every example with two seeds, and variants that reach the engine's other paths: wormhole,
# output buffers, speedup, shared buffers, CBR, transpose, hot spot, a longer routing delay,
# a MinHop deadlock, strict priority, the Omni-Path switch under RR, SBT and DTable, two and
# three threads) with both, and compares the JSON apart from `performance`.
#
#   cargo build --release -p flitsim-app --example run      # in each of the two checkouts
#   bash scripts/same_results.sh OLD/target/release/examples/run NEW/target/release/examples/run
#
# Exit status 0 when every scenario gives the same result; the differing ones are listed.
# A developer's tool for changes that must not move a result (docs/performance.md); short
# runs (500 + 1 500 cycles), about a minute per binary.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -ne 2 ]; then
    echo "usage: bash scripts/same_results.sh OLD_RUN_BINARY NEW_RUN_BINARY" >&2
    exit 2
fi
old=$1
new=$2
for b in "$old" "$new"; do
    if [ ! -x "$b" ]; then
        echo "error: $b: not an executable (build it with cargo build --release -p flitsim-app --example run)" >&2
        exit 2
    fi
done
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

short=(--set run.warmup=500 --set run.measure=1500 --set run.drain_max=3000)
T8=examples/torus-8x8-uniform.toml
F=examples/fattree-4ary3-uniform.toml
O=examples/opa-qos-torus2d.toml
scenarios=()
add() { scenarios+=("$*"); }
for f in examples/*.toml; do
    for seed in 1 2; do add "$f --seed $seed"; done
done
add "$T8 --set switch.switching=\"wormhole\""
add "$T8 --set switch.switching=\"wormhole\" --set traffic.load=0.6"
add "$T8 --set switch.output_buffer_flits=32"
add "$T8 --set switch.output_buffer_flits=32 --set switch.speedup=2 --set traffic.load=0.7"
add "$T8 --set switch.switching=\"wormhole\" --set switch.output_buffer_flits=32"
add "$T8 --set 'switch.shared_buffer={total_flits=96,min_per_vl=8,max_per_vl=64}' --set traffic.load=0.6"
add "$T8 --set traffic.injection=\"cbr\""
add "$T8 --set traffic.pattern=\"transpose\" --set traffic.load=0.5"
add "$T8 --set switch.routing_delay=3"
add "$T8 --set traffic.load=0.9"
add "$T8 --set routing.engine=\"minhop\" --set routing.vls=1 --set traffic.load=0.9"
add "$T8 --set 'switch.scheduler={kind=\"strict_priority\"}'"
add "$F --set switch.switching=\"wormhole\" --set traffic.load=0.8"
add "$F --set traffic.load=0.9 --set run.threads=2"
add "$T8 --set traffic.load=0.5 --set run.threads=3"
for sched in rr sbt dtable; do
    for load in 0.5 1.0; do
        add "$O --set qos.scheduler=\"$sched\" --set traffic.load=$load"
    done
done
add "$O --set qos.scheduler=\"dtable\" --set switch.organisation=\"crossbar\" --set traffic.load=0.9"

strip() { python3 -c 'import json,sys; d=json.load(sys.stdin); d.pop("performance",None); print(json.dumps(d,sort_keys=True))'; }
differ=0
k=0
for s in "${scenarios[@]}"; do
    k=$((k + 1))
    for side in old new; do
        bin=$old
        [ "$side" = new ] && bin=$new
        if ! eval "\"$bin\" $s ${short[*]}" > "$out/$k.$side.json" 2> "$out/$k.$side.err"; then
            echo "error: scenario $k failed with $bin: $s" >&2
            cat "$out/$k.$side.err" >&2
            exit 1
        fi
        strip < "$out/$k.$side.json" > "$out/$k.$side.txt"
    done
    if ! cmp -s "$out/$k.old.txt" "$out/$k.new.txt"; then
        echo "DIFFERS: $s"
        differ=$((differ + 1))
    fi
done
echo "$k scenarios, $differ differ"
[ "$differ" -eq 0 ]
