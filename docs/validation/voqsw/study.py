#!/usr/bin/env python3
"""The VOQsw study of Gómez et al. (Figures 6-11, Table 1's throughput factors) on flitsim.

Every run is ``examples/voqsw-iba-8sw.toml`` (the paper's IBA switch: non-multiplexed
crossbar, FIFO arbiter, 1 KB buffers per VL, 100 ns routing and fly time, 2.5 Gb/s links,
32-byte packets) on a random irregular network of the paper's kind (8-port switches, 4 hosts
and 4 inter-switch links each, up*/down*), varied over:

* the network: ``--sizes`` switches, ``--networks`` random networks per size (topology seeds
  1..N; each network is one sample of the confidence intervals);
* the VL assignment: ``vn8`` (8 virtual networks on 8 VLs, the baseline; ``vn8src`` chooses
  the network by source instead of destination), ``voq8`` / ``voq4``
  (VOQsw with 8 or 4 SLs on 8 VLs), ``voqfull`` (the SLs full VOQ needs, 8 VLs), ``voq4vl4``
  (4 SLs on 4 VLs); ``voq8spread`` / ``voq4spread`` with ``routing.voqsw_spread``;
* the offered load, in multiples of the network's uniform capacity bound: the largest rate
  per host at which no link of the up*/down* tables carries more than its rate under uniform
  traffic, ``(hosts - 1) / max flows per link`` (``flitsim._core.link_loads_json``), so the
  grid brackets saturation whatever the network;
* the destinations: uniform, or hot spots (``hotspot:H:F``: H hosts receive the fraction F).

Accepted traffic is reported as the paper does, in bytes/ns/switch (4 hosts per switch).
Throughput = the largest accepted traffic over the load grid. Writes ``runs.csv``,
``summary.md`` (means with 95 % confidence intervals over the networks, throughput factors
over ``vn8`` per network) and ``fig-*.png`` (latency against accepted traffic).

Presets (``--figure``): ``6`` uniform, 8-64 switches, vn8 and voq8; ``7`` one hot spot with
10/20/40/70 % on 8 switches; ``8`` four hot spots with 20 %; ``9`` voq8 against voqfull on 8 and
32 switches; ``10`` voq4 against voq8, uniform and four hot spots with 40 %; ``11`` voq4vl4;
``table1`` vn8, voq8, voq4 and voqfull on 8-64 switches (the factors of Table 1).

Usage (from the repository root, with flitsim installed)::

    python docs/validation/voqsw/study.py --figure table1 --networks 10 --jobs 2 --out out/voqsw-t1
"""
from __future__ import annotations

import argparse
import csv
import functools
import json
import math
import multiprocessing
import pathlib
import sys
import time

import tomllib

ROOT = pathlib.Path(__file__).resolve().parents[3]
EXAMPLE = ROOT / "examples" / "voqsw-iba-8sw.toml"
HOSTS_PER_SWITCH = 4
LINK_BYTES_PER_NS = 2.5 / 8  # 2.5 Gb/s

CONFIGS = {
    "vn8": ("8 VNs", {"vl_assignment": "vn", "vls": 8}),
    "vn8src": ("8 VNs by source", {"vl_assignment": "vn", "vls": 8, "vn_by": "source"}),
    "voq8": ("VOQsw 8 SLs 8 VLs", {"vl_assignment": "voqsw", "voqsw_sls": 8, "vls": 8}),
    "voq4": ("VOQsw 4 SLs 8 VLs", {"vl_assignment": "voqsw", "voqsw_sls": 4, "vls": 8}),
    "voqfull": ("VOQsw full VOQ, 8 VLs", {"vl_assignment": "voqsw", "voqsw_sls": "full",
                                          "vls": 8}),
    "voq4vl4": ("VOQsw 4 SLs 4 VLs", {"vl_assignment": "voqsw", "voqsw_sls": 4, "vls": 4}),
    "voq8spread": ("VOQsw 8 SLs 8 VLs, spread", {"vl_assignment": "voqsw", "voqsw_sls": 8,
                                                 "vls": 8, "voqsw_spread": True}),
    "voq4spread": ("VOQsw 4 SLs 8 VLs, spread", {"vl_assignment": "voqsw", "voqsw_sls": 4,
                                                 "vls": 8, "voqsw_spread": True}),
}
PRESETS = {
    "6": dict(sizes=[8, 16, 32, 64], configs=["vn8", "voq8"], patterns=["uniform"]),
    "7": dict(sizes=[8], configs=["vn8", "voq8"],
              patterns=["hotspot:1:0.1", "hotspot:1:0.2", "hotspot:1:0.4", "hotspot:1:0.7"]),
    "8": dict(sizes=[8], configs=["vn8", "voq8"], patterns=["hotspot:4:0.2"]),
    "9": dict(sizes=[8, 32], configs=["vn8", "voq8", "voqfull"], patterns=["uniform"]),
    "10": dict(sizes=[8], configs=["vn8", "voq8", "voq4"],
               patterns=["uniform", "hotspot:4:0.4"]),
    "11": dict(sizes=[8], configs=["vn8", "voq8", "voq4vl4"],
               patterns=["uniform", "hotspot:4:0.4"]),
    "table1": dict(sizes=[8, 16, 32, 64], configs=["vn8", "voq8", "voq4", "voqfull"],
                   patterns=["uniform"]),
}
DEFAULT_POINTS = [0.25, 0.5, 0.75, 0.9, 1.0, 1.1, 1.25, 1.5, 2.0]


def topology_spec(size: int, net: int) -> str:
    return f"random:switches={size},ports=8,endpoints=4,links={2 * size},seed={net}"


@functools.cache
def capacity(size: int, net: int) -> float:
    """Uniform capacity bound of the network's up*/down* tables, fraction of a host link."""
    import flitsim._core as core

    d = json.loads(core.link_loads_json(topology_spec(size, net), "updn"))
    return (size * HOSTS_PER_SWITCH - 1) / d["switch_links_max_flows"]


def config(size: int, net: int, cfg: str, pattern: str, load: float, measure_us: float,
           send_queues: str = "class") -> dict:
    c = tomllib.loads(EXAMPLE.read_text())
    if send_queues != "class":
        c.setdefault("nic", {})["send_queues"] = send_queues
    c["topology"].update(switches=size, links=2 * size, seed=net)
    routing = {k: v for k, v in c["routing"].items() if k not in ("vl_assignment", "voqsw_sls")}
    routing.update(CONFIGS[cfg][1])
    c["routing"] = routing
    c["traffic"]["load"] = load  # flits/cycle/host = fraction of the link
    if pattern.startswith("hotspot:"):
        _, h, f = pattern.split(":")
        c["traffic"]["pattern"] = "hotspot"
        c["traffic"]["hotspot"] = {"endpoints": int(h), "fraction": float(f)}
    c["run"]["warmup"] = f"{measure_us / 2}us"
    c["run"]["measure"] = f"{measure_us}us"
    return c


def one(job: tuple) -> dict:
    import flitsim

    size, net, cfg, pattern, x, load, measure_us, send_queues = job
    started = time.time()
    r = flitsim.run(config(size, net, cfg, pattern, load, measure_us, send_queues), seed=net)
    bpns = (r.get("accepted_load") or 0.0) * LINK_BYTES_PER_NS * HOSTS_PER_SWITCH
    lat = (r.get("latency_ns") or {}).get("mean")
    return {
        "size": size, "network": net, "config": cfg, "pattern": pattern, "x": x,
        "offered": load, "accepted_bpns_sw": bpns,
        "offered_bpns_sw": load * LINK_BYTES_PER_NS * HOSTS_PER_SWITCH,
        "latency_ns": lat, "saturated": r.get("saturated"),
        "wall_s": round(time.time() - started, 2),
        "flit_hops_per_s": r["performance"]["flit_hops_per_second"],
    }


def ci95(xs: list[float]) -> tuple[float, float]:
    """Mean and half-width of the 95 % Student-t interval (``flitsim.stats.mean_ci``)."""
    from flitsim.stats import mean_ci

    e = mean_ci(xs)
    return (e.mean, e.half)


def fmt(m: float, h: float, digits: int = 3) -> str:
    if math.isnan(m):
        return "—"
    return f"{m:.{digits}f}" if math.isnan(h) else f"{m:.{digits}f} ± {h:.{digits}f}"


def throughput(rows: list[dict]) -> dict[tuple, float]:
    """Largest accepted traffic per (size, pattern, config, network)."""
    best: dict[tuple, float] = {}
    for r in rows:
        k = (r["size"], r["pattern"], r["config"], r["network"])
        best[k] = max(best.get(k, 0.0), r["accepted_bpns_sw"])
    return best


def summarise(rows: list[dict], out: pathlib.Path, title: str) -> None:
    best = throughput(rows)
    sizes = sorted({r["size"] for r in rows})
    patterns = sorted({r["pattern"] for r in rows})
    configs = [c for c in CONFIGS if any(r["config"] == c for r in rows)]
    nets = sorted({r["network"] for r in rows})
    lines = [f"# VOQsw study: {title}", "",
             f"{len(nets)} random networks per size (topology seeds {nets[0]}–{nets[-1]}); "
             "means with 95 % confidence intervals over the networks.", "",
             "## Throughput (largest accepted traffic, bytes/ns/switch)", "",
             "| switches | destinations | uniform capacity bound | "
             + " | ".join(CONFIGS[c][0] for c in configs) + " |",
             "|---|---|---|" + "---|" * len(configs)]
    for s in sizes:
        for p in patterns:
            cap = ci95([capacity(s, n) * LINK_BYTES_PER_NS * HOSTS_PER_SWITCH for n in nets])
            cells = [fmt(*ci95([best.get((s, p, c, n)) for n in nets])) for c in configs]
            lines.append(f"| {s} | {p} | {fmt(*cap)} | " + " | ".join(cells) + " |")
    for base in ("vn8", "vn8src"):
        if base not in configs or len(configs) < 2:
            continue
        others = [c for c in configs if c != base]
        lines += ["", f"## Throughput factor over {CONFIGS[base][0]} (per network, then "
                  "averaged)", "",
                  "| switches | destinations | " + " | ".join(CONFIGS[c][0] for c in others)
                  + " |", "|---|---|" + "---|" * len(others)]
        for s in sizes:
            for p in patterns:
                cells = []
                for c in others:
                    f = [best[(s, p, c, n)] / best[(s, p, base, n)] for n in nets
                         if (s, p, c, n) in best and best.get((s, p, base, n))]
                    cells.append(fmt(*ci95(f), digits=2))
                lines.append(f"| {s} | {p} | " + " | ".join(cells) + " |")
    lines += ["", "## Latency (ns) against offered load (multiples of the bound)", ""]
    for s in sizes:
        for p in patterns:
            xs = sorted({r["x"] for r in rows if r["size"] == s and r["pattern"] == p})
            lines += [f"### {s} switches, {p}", "",
                      "| offered × bound | " + " | ".join(
                          f"{CONFIGS[c][0]}: accepted / latency" for c in configs) + " |",
                      "|---|" + "---|" * len(configs)]
            for x in xs:
                cells = []
                for c in configs:
                    sel = [r for r in rows if (r["size"], r["pattern"], r["config"], r["x"])
                           == (s, p, c, x)]
                    a = ci95([r["accepted_bpns_sw"] for r in sel])
                    lat = ci95([r["latency_ns"] for r in sel])
                    cells.append(f"{fmt(*a)} / {fmt(lat[0], lat[1], 0)}")
                lines.append(f"| {x:g} | " + " | ".join(cells) + " |")
            lines.append("")
    (out / "summary.md").write_text("\n".join(lines) + "\n")
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib missing: no figures (pip install 'flitsim[plot]')", file=sys.stderr)
        return
    for s in sizes:
        for p in patterns:
            fig, ax = plt.subplots(figsize=(5.5, 3.6))
            for c in configs:
                xs = sorted({r["x"] for r in rows if (r["size"], r["pattern"], r["config"])
                             == (s, p, c)})
                pts = []
                for x in xs:
                    sel = [r for r in rows if (r["size"], r["pattern"], r["config"], r["x"])
                           == (s, p, c, x)]
                    a, ah = ci95([r["accepted_bpns_sw"] for r in sel])
                    lat, lh = ci95([r["latency_ns"] for r in sel])
                    pts.append((a, lat, 0 if math.isnan(ah) else ah, 0 if math.isnan(lh) else lh))
                a, lat, ah, lh = zip(*pts)
                ax.errorbar(a, lat, xerr=ah, yerr=lh, marker="o", capsize=2, label=CONFIGS[c][0])
            ax.set_xlabel("accepted traffic (bytes/ns/switch)")
            ax.set_ylabel("mean packet latency (ns)")
            ax.set_yscale("log")
            ax.set_title(f"{s} switches, {p}", fontsize=9)
            ax.grid(alpha=0.3)
            ax.legend(fontsize=7)
            fig.tight_layout()
            fig.savefig(out / f"fig-{s}sw-{p.replace(':', '-')}.png", dpi=110)
            plt.close(fig)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--figure", choices=sorted(PRESETS), help="a preset of the options below")
    p.add_argument("--sizes", type=int, nargs="*")
    p.add_argument("--configs", nargs="*", choices=sorted(CONFIGS))
    p.add_argument("--patterns", nargs="*", help="uniform or hotspot:HOSTS:FRACTION")
    p.add_argument("--points", type=float, nargs="*", default=DEFAULT_POINTS,
                   help="offered loads in multiples of the uniform capacity bound")
    p.add_argument("--networks", type=int, default=10)
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--measure-us", type=float, default=1000.0,
                   help="measured simulated time per run (default 1000 µs; warm-up half)")
    p.add_argument("--send-queues", choices=["class", "vl"], default="class",
                   help="the hosts' send queues (nic.send_queues; default class, the example's)")
    p.add_argument("--out", type=pathlib.Path, required=True)
    p.add_argument("--summarise", action="store_true",
                   help="only rewrite summary.md and the figures from OUT/runs.csv")
    a = p.parse_args()
    if a.summarise:
        with open(a.out / "runs.csv", newline="") as f:
            rows = [{k: (v if k in ("config", "pattern") else
                         (None if v == "" else (v == "True" if v in ("True", "False")
                                                else float(v))))
                     for k, v in r.items()} for r in csv.DictReader(f)]
        for r in rows:
            r["size"], r["network"] = int(r["size"]), int(r["network"])
        summarise(rows, a.out, f"figure {a.figure}" if a.figure else "custom")
        return 0
    preset = PRESETS.get(a.figure or "", {})
    sizes = a.sizes or preset.get("sizes") or [8]
    configs = a.configs or preset.get("configs") or ["vn8", "voq8"]
    patterns = a.patterns or preset.get("patterns") or ["uniform"]
    for pat in patterns:
        if pat != "uniform" and not (pat.startswith("hotspot:") and len(pat.split(":")) == 3):
            p.error(f"--patterns: {pat!r} is neither uniform nor hotspot:HOSTS:FRACTION")
    a.out.mkdir(parents=True, exist_ok=True)
    jobs = []
    for s in sizes:
        for n in range(1, a.networks + 1):
            cap = capacity(s, n)
            for pat in patterns:
                for c in configs:
                    for x in a.points:
                        jobs.append((s, n, c, pat, x, round(min(1.0, x * cap), 6),
                                     a.measure_us, a.send_queues))
    # Large networks first: the pool's tail is then short runs.
    jobs.sort(key=lambda j: -j[0])
    started = time.time()
    rows = []
    with multiprocessing.Pool(a.jobs) as pool:
        for i, row in enumerate(pool.imap_unordered(one, jobs), 1):
            rows.append(row)
            print(f"[{i}/{len(jobs)}] {row['size']} sw net {row['network']} {row['config']} "
                  f"{row['pattern']} x={row['x']} ({row['wall_s']} s)", file=sys.stderr)
    rows.sort(key=lambda r: (r["size"], r["pattern"], list(CONFIGS).index(r["config"]),
                             r["network"], r["x"]))
    with open(a.out / "runs.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    title = f"figure {a.figure}" if a.figure else "custom"
    summarise(rows, a.out, title + ("" if a.send_queues == "class" else
                                    f", nic.send_queues = {a.send_queues}"))
    print(f"{len(rows)} runs in {time.time() - started:.0f} s; wrote {a.out}/summary.md",
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
