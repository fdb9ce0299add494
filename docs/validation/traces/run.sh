#!/usr/bin/env bash
# §4.3 of the Omni-Path QoS paper with LULESH-64 and its compute phases left out (the first
# tables of docs/validation/traces.md): the trace on CL or BK with CBR background traffic on
# the other SL at 1, 5, 10 and 20 % of a link, under DTable and RR, against the trace alone
# under RR. A shorthand for study.py (which runs the whole study, compute phases and AMR-64
# included):
#   bash docs/validation/traces/run.sh [tree8ary2|torus4x4] [SEED]     (from anywhere)
# Needs `pip install '.[trace,plot]'`; writes study-out-TOPO-SEED/ (table, CSV, plot).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
topo=${1:-tree8ary2}
seed=${2:-1}
exec "${PYTHON:-python3}" "$here/study.py" --traces lulesh-64 --topologies "$topo" \
  --compute-scale 0 --seeds "$seed" --out "study-out-$topo-$seed"
