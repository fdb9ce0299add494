#!/usr/bin/env bash
# §4.3 of the Omni-Path QoS paper with the LULESH-64 trace: normalized execution time of the
# trace on CL or BK with CBR background traffic on the other SL at 1, 5, 10 and 20 % of a link,
# under DTable and RR, against the trace alone under RR (no QoS, no background).
#   bash docs/validation/traces/run.sh [tree8ary2|torus4x4] [SEED]     (from the repository root)
# Needs `pip install '.[trace]'` (pydumpi) for the conversion; prints one table.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
topo=${1:-tree8ary2}
seed=${2:-1}
flitsim=${FLITSIM:-flitsim}
traces=${TRACES:-$here/../../../../shared/testdata/traces}
[ -f "$here/lulesh-64.vef" ] || "$flitsim" trace convert "$traces/lulesh-64" "$here/lulesh-64.vef" > /dev/null
out=$(mktemp -d)
classes() { # trace SL, background SL, background rate
  local list="[" n name mf
  for n in VO:2 VI:4 CL:8 BE:16 BK:16; do
    name=${n%%:*}; mf=${n##*:}
    if [ "$name" = "$2" ] && [ "$3" != 0 ]; then
      list+="{name=\"$name\",message_flits=$mf,rate=$3},"
    else
      list+="{name=\"$name\",message_flits=$mf},"
    fi
  done
  echo "${list%,}]"
}
run() { # name scheduler trace-SL background-SL rate
  "$flitsim" run "$here/$topo.toml" --seed "$seed" --json --set "qos.scheduler=\"$2\"" \
    --set "traffic.trace.class=\"$3\"" --set "traffic.class=$(classes "$3" "$4" "$5")" \
    > "$out/$1.json"
}
run base rr CL BK 0
for sched in dtable rr; do
  for sl in CL BK; do
    other=$([ "$sl" = CL ] && echo BK || echo CL)
    for rate in 0.01 0.05 0.1 0.2; do run "$sched-$sl-$rate" "$sched" "$sl" "$other" "$rate"; done
  done
done
python3 - "$out" "$topo" "$seed" <<'PY'
import json, sys
out, topo, seed = sys.argv[1:]
t = lambda n: json.load(open(f"{out}/{n}.json"))["trace"]["execution_time"]
base = t("base")
print(f"{topo}, seed {seed}: execution time of the trace alone under RR = {base} cycles")
print("scheduler trace-SL   1 %     5 %    10 %    20 %   (normalized execution time, %)")
for s in ("dtable", "rr"):
    for sl in ("CL", "BK"):
        row = "  ".join(f"{100 * t(f'{s}-{sl}-{r}') / base:6.1f}" for r in ("0.01", "0.05", "0.1", "0.2"))
        print(f"{s:9} {sl:8} {row}")
PY
rm -rf "$out"
