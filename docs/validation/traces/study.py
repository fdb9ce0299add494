"""§4.3 of the Omni-Path QoS paper (Figs. 5–6) with the traces we have, in one command.

For every trace and topology: the trace alone under RR without background (the baseline), then
the trace on CL with CBR background on BK and the trace on BK with background on CL, at each
background rate, under DTable and under RR. Each bar is the execution time normalized to the
baseline (%). Writes ``study.csv`` (one row per run and seed), ``study.md`` (the tables, mean
over the seeds) and ``study.png`` (bars like the paper's) into ``--out``.

    python docs/validation/traces/study.py --out study-out            # the documented study
    python docs/validation/traces/study.py --traces lulesh-64 --topologies tree8ary2 \\
        --rates 0.01,0.2 --seeds 1,2 --out quick

Traces are given as DUMPI directories (``format = "dumpi"``: flitsim converts them once and
caches the VEF, see docs/traces.md) or VEF files. Needs ``pip install 'flitsim[trace,plot]'``.
Runs go ``--jobs`` at a time (the engine releases the GIL). Run from anywhere.
"""

from __future__ import annotations

import argparse
import csv
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from statistics import mean, stdev
from typing import Dict, List, Tuple

import flitsim

HERE = Path(__file__).resolve().parent
SHARED = HERE.parents[3] / "shared" / "testdata" / "traces"
# The paper's five SLs with the message sizes of the §4 examples (flits of 64 B).
SLS = [("VO", 2), ("VI", 4), ("CL", 8), ("BE", 16), ("BK", 16)]
# Compute phases, scaled so that they are about 40 % of each run (docs/validation/traces.md):
# the full phases are 10^10 cycles (LULESH) and 2·10^9 (AMR) of background to simulate.
SCALE = {"lulesh-64": 1e-4, "amr-64": 5e-4}


def classes(trace_sl: str, rate: float) -> str:
    """``traffic.class`` with CBR background at ``rate`` on the SL other than ``trace_sl``."""
    bg = "BK" if trace_sl == "CL" else "CL"
    items = []
    for name, flits in SLS:
        extra = f",rate={rate}" if name == bg and rate > 0 else ""
        items.append(f'{{name="{name}",message_flits={flits}{extra}}}')
    return "[" + ",".join(items) + "]"


def trace_source(name: str) -> Tuple[str, str]:
    """(path, format) of a trace named on the command line."""
    p = Path(name)
    if not p.exists():
        p = SHARED / name
    if not p.exists():
        sys.exit(f"error: trace {name}: no such file or directory (nor in {SHARED})")
    return str(p.resolve()), ("vef" if p.is_file() and p.suffix == ".vef" else "dumpi")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--traces", default="lulesh-64,amr-64")
    ap.add_argument("--topologies", default="tree8ary2,torus4x4")
    ap.add_argument("--rates", default="0.01,0.05,0.1,0.2")
    ap.add_argument("--seeds", default="1", help="comma-separated seeds (the background's)")
    ap.add_argument("--compute-scale", type=float, default=None,
                    help="one compute_scale for every trace (default: per trace, see SCALE)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--out", type=Path, default=Path("study-out"))
    a = ap.parse_args()
    rates = [float(r) for r in a.rates.split(",")]
    seeds = [int(s) for s in a.seeds.split(",")]
    a.out.mkdir(parents=True, exist_ok=True)

    runs: List[Dict] = []
    for tr in a.traces.split(","):
        path, fmt = trace_source(tr)
        key = Path(tr).name.removesuffix(".vef")
        scale = a.compute_scale if a.compute_scale is not None else SCALE.get(key, 1e-4)
        for topo in a.topologies.split(","):
            common = dict(trace=key, topology=topo, compute_scale=scale, path=path, fmt=fmt)
            runs.append(dict(common, scheduler="rr", trace_sl="CL", rate=0.0, seed=seeds[0]))
            for seed in seeds:
                for sched in ("dtable", "rr"):
                    for sl in ("CL", "BK"):
                        for rate in rates:
                            runs.append(dict(common, scheduler=sched, trace_sl=sl, rate=rate,
                                             seed=seed))

    def go(r: Dict) -> Dict:
        t0 = time.time()
        res = flitsim.run(
            HERE / f"{r['topology']}.toml",
            seed=r["seed"],
            sets=[
                f'traffic.trace.path="{r["path"]}"',
                f'traffic.trace.format="{r["fmt"]}"',
                f"traffic.trace.compute_scale={r['compute_scale']}",
                f'traffic.trace.class="{r["trace_sl"]}"',
                f'qos.scheduler="{r["scheduler"]}"',
                f"traffic.class={classes(r['trace_sl'], r['rate'])}",
            ],
        )
        t = res["trace"]
        if not t["complete"]:
            sys.exit(f"error: {r}: the trace did not finish within run.drain_max")
        out = {k: v for k, v in r.items() if k not in ("path", "fmt")}
        out.update(execution_time=t["execution_time"], wall_s=round(time.time() - t0, 1),
                   config_hash=res["config_hash"])
        print(f"{out['trace']} {out['topology']} {out['scheduler']} {out['trace_sl']} "
              f"{out['rate']} seed {out['seed']}: {out['execution_time']} cycles, "
              f"{out['wall_s']} s", flush=True)
        return out

    t0 = time.time()
    with ThreadPoolExecutor(max(1, a.jobs)) as pool:
        done = list(pool.map(go, runs))
    wall = time.time() - t0

    with open(a.out / "study.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(done[0]))
        w.writeheader()
        w.writerows(done)

    base = {(d["trace"], d["topology"]): d["execution_time"] for d in done if d["rate"] == 0}
    cells: Dict[Tuple, List[float]] = {}
    for d in done:
        if d["rate"] == 0:
            continue
        k = (d["trace"], d["topology"], d["scheduler"], d["trace_sl"], d["rate"])
        cells.setdefault(k, []).append(100 * d["execution_time"] / base[k[:2]])

    def cell(v: List[float]) -> str:
        return f"{mean(v):.1f}" + (f" ± {stdev(v):.1f}" if len(v) > 1 else "")

    lines = [f"Normalized execution time (%; 100 = the trace alone under RR, no background); "
             f"seeds {a.seeds}" + (" (mean ± standard deviation)" if len(seeds) > 1 else "")
             + f"; {len(done)} runs in {wall / 60:.1f} min with {a.jobs} jobs.", ""]
    for (trace, topo), b in base.items():
        scale = next(d["compute_scale"] for d in done if d["trace"] == trace)
        lines += [f"### {trace} on {topo} (compute_scale {scale:g}; baseline {b} cycles)", "",
                  "| scheduler | trace on | " + " | ".join(f"{100 * r:g} %" for r in rates)
                  + " |", "|---|---|" + "---|" * len(rates)]
        for sched in ("dtable", "rr"):
            for sl in ("CL", "BK"):
                row = [cell(cells[(trace, topo, sched, sl, r)]) for r in rates]
                lines.append(f"| {'DTable' if sched == 'dtable' else 'RR'} | {sl} | "
                             + " | ".join(row) + " |")
        lines.append("")
    (a.out / "study.md").write_text("\n".join(lines))
    print("\n".join(lines))
    plot(base, cells, rates, a.out / "study.png")


def plot(base: Dict, cells: Dict, rates: List[float], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = list(base)
    fig, axes = plt.subplots(1, len(panels), figsize=(4.2 * len(panels), 3.4), squeeze=False)
    bars = [("dtable", "CL"), ("dtable", "BK"), ("rr", "CL"), ("rr", "BK")]
    width = 0.8 / len(bars)
    for ax, (trace, topo) in zip(axes[0], panels):
        for i, (sched, sl) in enumerate(bars):
            ys = [mean(cells[(trace, topo, sched, sl, r)]) for r in rates]
            xs = [j + (i - 1.5) * width for j in range(len(rates))]
            ax.bar(xs, ys, width, label=f"{'DTable' if sched == 'dtable' else 'RR'}, trace on {sl}",
                   hatch="" if sched == "dtable" else "//", color="C0" if sl == "CL" else "C1")
        ax.set_xticks(range(len(rates)), [f"{100 * r:g} %" for r in rates])
        ax.set_ylim(95, None)
        ax.axhline(100, color="k", lw=0.5)
        ax.set_title(f"{trace}, {topo}")
        ax.set_xlabel("background load")
    axes[0][0].set_ylabel("normalized execution time (%)")
    axes[0][-1].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


if __name__ == "__main__":
    main()
