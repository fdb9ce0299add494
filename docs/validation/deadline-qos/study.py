#!/usr/bin/env python3
"""The deadline-QoS study of Martínez et al. 2008 (Figs. 3-8) on flitsim.

Runs the five architectures of ``examples/deadline-qos-<architecture>.toml`` over a load grid
and several seeds, and writes one row per run (``runs.csv``), a table of means with 95 %
confidence intervals (``summary.md``) and the figures (``fig-*.png``).

Two sweeps, one per group of figures:

* ``--figure load`` (Figs. 3-5): the four classes at equal shares of the input load, from 25 %
  to 100 % of the link (``--points``).
* ``--figure qos`` (Figs. 6-8): the QoS share (control + video, half each) from 10 % to 90 % of
  a fully loaded link, best effort and background filling the rest in equal parts.

The input load scales every class: control and the two best-effort classes by their rate, video
by its number of flows per host (83 flows of 3 MB/s make 25 % of an 8 Gb/s link).

Usage (from the repository root, with flitsim installed)::

    python docs/validation/deadline-qos/study.py --figure load --seeds 3 --jobs 2 --out out/dl-load
    python docs/validation/deadline-qos/study.py --figure qos --seeds 3 --jobs 2 --out out/dl-qos
"""
from __future__ import annotations

import argparse
import csv
import math
import multiprocessing
import pathlib
import sys
import time

import tomllib

ARCHS = ["traditional_2vc", "traditional_4vc", "simple_2vc", "advanced_2vc", "ideal"]
LABELS = {
    "traditional_2vc": "Traditional 2 VCs",
    "traditional_4vc": "Traditional 4 VCs",
    "simple_2vc": "Simple 2 VCs",
    "advanced_2vc": "Advanced 2 VCs",
    "ideal": "Ideal",
}
ROOT = pathlib.Path(__file__).resolve().parents[3]
LINK_GBPS = 8.0
FLOWS_AT_25 = 83  # video flows of 3 MB/s per host at a 25 % share


def config(arch: str, shares: dict[str, float], measure_ms: float) -> dict:
    """The experiment of ``arch`` with each class at ``shares[c]`` of the link."""
    path = ROOT / "examples" / f"deadline-qos-{arch}.toml"
    cfg = tomllib.loads(path.read_text())
    for c in cfg["traffic"]["class"]:
        if c["name"] in ("control", "besteffort", "background"):
            c["rate"] = f"{LINK_GBPS * shares[c['name']]:.6f}Gb/s"
    # Video: 83 flows per host at a 25 % share, in flow sets of at most 127 destinations.
    flows = max(1, round(FLOWS_AT_25 * shares["video"] / 0.25))
    template = cfg["traffic"]["flow_set"][0]
    cfg["traffic"]["flow_set"] = []
    while flows > 0:
        cfg["traffic"]["flow_set"].append({**template, "dests": min(flows, 127)})
        flows -= 127
    # Token buckets (traditional_4vc): 110 % of the video rate, 100 % of the best-effort rate.
    qc = cfg["qos"]["class"]
    qc[1]["bucket_rate"] = f"{1.1 * LINK_GBPS * shares['video']:.6f}Gb/s"
    qc[2]["bucket_rate"] = f"{LINK_GBPS * max(shares['besteffort'], 0.01):.6f}Gb/s"
    cfg["run"]["measure"] = f"{measure_ms}ms"
    cfg["run"]["per_flow_stats"] = False  # 10 624 flow rows per run are not needed here
    return cfg


def points(figure: str, values: list[float]) -> list[tuple[float, dict[str, float]]]:
    if figure == "load":
        return [(x, {c: x / 4 for c in ("control", "video", "besteffort", "background")})
                for x in values]
    return [(q, {"control": q / 2, "video": q / 2, "besteffort": (1 - q) / 2,
                 "background": (1 - q) / 2}) for q in values]


def one(job: tuple) -> dict:
    import flitsim

    arch, x, shares, seed, measure_ms = job
    started = time.time()
    r = flitsim.run(config(arch, shares, measure_ms), seed=seed)
    cls = {c["name"]: c for c in r["per_sl"]}
    cyc = r["units"]["cycle_ns"] if r.get("units") else 1.0
    row = {"architecture": arch, "x": x, "seed": seed, "wall_s": round(time.time() - started, 1)}
    for name in ("control", "video", "besteffort", "background"):
        c = cls[name]
        ml = c["message_latency"]
        for k in ("mean", "p99", "max"):
            v = ml.get(k)
            row[f"{name}_lat_{k}_us"] = None if v is None else v * cyc / 1e3
        row[f"{name}_accepted_gbps"] = (c.get("accepted_load") or 0.0) * LINK_GBPS
        row[f"{name}_jitter_us"] = (
            None if (c.get("jitter") or {}).get("std") is None else c["jitter"]["std"] * cyc / 1e3
        )
    d = r.get("deadline") or {}
    for dc in d.get("discarded") or ():
        row[f"{dc['class']}_discarded"] = dc["packets"]
    row["order_errors"] = d.get("order_errors")
    by_vl = d.get("order_errors_by_vl") or []
    lanes = max(1, len(by_vl) // (4 if arch == "traditional_4vc" else 2))
    row["order_errors_regulated"] = sum(by_vl[:lanes]) if by_vl else None
    row["max_ttd_us"] = None if d.get("max_ttd_ns") is None else d["max_ttd_ns"] / 1e3
    a = r.get("admission") or {}
    row["video_flows_rejected"] = len(a.get("rejected") or ())
    row["flit_hops_per_s"] = r["performance"]["flit_hops_per_second"]
    return row


def ci95(xs: list[float]) -> tuple[float, float]:
    """Mean and half-width of the 95 % Student-t interval (``flitsim.stats.mean_ci``)."""
    from flitsim.stats import mean_ci

    e = mean_ci(xs)
    return (e.mean, e.half)


METRICS = [
    ("control_lat_mean_us", "control mean latency (µs)"),
    ("control_lat_max_us", "control max latency (µs)"),
    ("video_lat_mean_us", "video frame latency, mean (µs)"),
    ("video_lat_p99_us", "video frame latency, p99 (µs)"),
    ("video_jitter_us", "video frame jitter, std (µs)"),
    ("besteffort_accepted_gbps", "best effort accepted (Gb/s)"),
    ("background_accepted_gbps", "background accepted (Gb/s)"),
    ("video_discarded", "video packets discarded"),
    ("order_errors", "order errors"),
    ("order_errors_regulated", "order errors in the regulated VC"),
]


def summarise(rows: list[dict], out: pathlib.Path, figure: str) -> None:
    xs = sorted({r["x"] for r in rows})
    lines = [f"# Deadline QoS study, figure group `{figure}`", ""]
    for key, title in METRICS:
        lines += [f"## {title}", "", "| x | " + " | ".join(LABELS[a] for a in ARCHS) + " |",
                  "|---|" + "---|" * len(ARCHS)]
        for x in xs:
            cells = []
            for a in ARCHS:
                m, h = ci95([r.get(key) for r in rows if r["architecture"] == a and r["x"] == x])
                cells.append("—" if math.isnan(m) else
                             (f"{m:.4g}" if math.isnan(h) else f"{m:.4g} ± {h:.2g}"))
            lines.append(f"| {x:g} | " + " | ".join(cells) + " |")
        lines.append("")
    (out / "summary.md").write_text("\n".join(lines))
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib missing: no figures (pip install 'flitsim[plot]')", file=sys.stderr)
        return
    xlabel = "input load (fraction of link)" if figure == "load" else "QoS load (fraction)"
    for key, title in METRICS:
        fig, ax = plt.subplots(figsize=(5.5, 3.6))
        for a in ARCHS:
            ms, hs = zip(*(ci95([r.get(key) for r in rows
                                 if r["architecture"] == a and r["x"] == x]) for x in xs))
            ax.errorbar(xs, ms, yerr=[0 if math.isnan(h) else h for h in hs], label=LABELS[a],
                        marker="o", capsize=3)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(title)
        if key.endswith("_us") and key.startswith("control"):
            ax.set_yscale("log")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(out / f"fig-{figure}-{key}.png", dpi=110)
        plt.close(fig)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--figure", choices=["load", "qos"], required=True)
    p.add_argument("--points", type=float, nargs="*",
                   help="x values (default: 0.25 0.5 0.75 1.0 for load, 0.1 0.3 0.5 0.7 0.9 "
                        "for qos)")
    p.add_argument("--archs", nargs="*", default=ARCHS, choices=ARCHS)
    p.add_argument("--seeds", type=int, default=3)
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--measure-ms", type=float, default=20.0,
                   help="measured simulated time per run (default 20 ms)")
    p.add_argument("--out", type=pathlib.Path, required=True)
    a = p.parse_args()
    values = a.points or ([0.25, 0.5, 0.75, 1.0] if a.figure == "load"
                          else [0.1, 0.3, 0.5, 0.7, 0.9])
    a.out.mkdir(parents=True, exist_ok=True)
    jobs = [(arch, x, shares, seed, a.measure_ms)
            for x, shares in points(a.figure, values)
            for arch in a.archs
            for seed in range(1, a.seeds + 1)]
    started = time.time()
    with multiprocessing.Pool(a.jobs) as pool:
        rows = []
        for i, row in enumerate(pool.imap_unordered(one, jobs), 1):
            rows.append(row)
            print(f"[{i}/{len(jobs)}] {row['architecture']} x={row['x']} seed={row['seed']} "
                  f"({row['wall_s']} s)", file=sys.stderr)
    rows.sort(key=lambda r: (ARCHS.index(r["architecture"]), r["x"], r["seed"]))
    keys = sorted({k for r in rows for k in r}, key=lambda k: (k not in rows[0], k))
    with open(a.out / "runs.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=keys)
        w.writeheader()
        w.writerows(rows)
    summarise(rows, a.out, a.figure)
    print(f"{len(rows)} runs in {time.time() - started:.0f} s; wrote {a.out}/summary.md",
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
