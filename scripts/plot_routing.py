#!/usr/bin/env python3
"""Plots for docs/validation/routing.md from the CSV files of the `routing_study` example.

    python3 scripts/plot_routing.py [--data target/routing-study] [--out docs/validation/routing]

Reads whichever of fig9.csv, heuristics.csv, ebb.csv exist in --data (and, for opensm.png,
opensm_runs.csv, opensm_ebb.csv and opensm_flitsim.csv) and writes fig9.png, heuristics.png,
ebb.png, ebb_time.png and opensm.png to --out.
"""
import argparse
import csv
import math
import os
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

ENGINE_ORDER = ["minhop", "updn", "sssp", "dfsssp", "lash", "ftree", "dmodk", "dor", "nue"]
COLOURS = {
    "minhop": "#7f7f7f",
    "updn": "#bcbd22",
    "sssp": "#1f77b4",
    "dfsssp": "#d62728",
    "lash": "#2ca02c",
    "ftree": "#9467bd",
    "dmodk": "#8c564b",
    "dor": "#e377c2",
    "nue": "#17becf",
    "dfsssp-paper": "#ff9896",
}
FAMILY_TITLES = {
    "xgft": "XGFT (Table I)",
    "kautz": "Kautz (Table I)",
    "kary-ntree": "k-ary n-tree (Table I)",
    "random": "random, 32-port switches, 16 endpoints each",
}


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def save(fig, out, name):
    path = os.path.join(out, name)
    fig.savefig(path, dpi=130, bbox_inches="tight")
    plt.close(fig)
    print("wrote", path)


def plot_fig9(rows, out):
    """Mean, min and max virtual layers against inter-switch links (paper Fig. 9)."""
    by = defaultdict(list)
    for r in rows:
        by[(r["engine"], int(r["links"]))].append(int(r["layers"]))
    fig, ax = plt.subplots(figsize=(7.5, 4.5))
    offsets = {"dfsssp-paper": -6, "dfsssp": 0, "lash": 6}
    series = [
        ("dfsssp-paper", "DFSSSP, paper's Algorithm 2 alone"),
        ("dfsssp", "DFSSSP, flitsim default (+ first-fit restarts)"),
        ("lash", "LASH (flitsim)"),
    ]
    for engine, label in series:
        links = sorted(l for (e, l) in by if e == engine)
        if not links:
            continue
        mean = [sum(by[(engine, l)]) / len(by[(engine, l)]) for l in links]
        lo = [min(by[(engine, l)]) for l in links]
        hi = [max(by[(engine, l)]) for l in links]
        x = [l + offsets[engine] for l in links]
        ax.plot(x, mean, "o-", color=COLOURS[engine], label=f"{label}: mean")
        ax.vlines(x, lo, hi, color=COLOURS[engine], lw=6, alpha=0.3)
        ax.plot(x, lo, "_", color=COLOURS[engine], ms=10)
        ax.plot(x, hi, "_", color=COLOURS[engine], ms=10)
    n = len(next(iter(by.values())))
    ax.axhline(8, color="black", lw=0.8, ls=":")
    ax.text(ax.get_xlim()[0] + 5, 8.1, "8 VLs (InfiniBand hardware)", ha="left", va="bottom",
            fontsize=8)
    ax.axvline(200, color="black", lw=0.8, ls="--")
    ax.text(
        205,
        0.4,
        "paper: curves cross at ≈200 links\n(DFSSSP fewer below, LASH fewer above)",
        fontsize=8,
        va="bottom",
    )
    ax.set_xlabel("inter-switch links (128 switches × 32 ports, 16 endpoints each)")
    ax.set_ylabel("virtual layers (VLs) needed")
    ax.set_title(f"Fig. 9 setting: {n} random topologies per point; bars = min…max")
    ax.set_ylim(0, None)
    ax.grid(alpha=0.3)
    ax.legend(loc="upper right", fontsize=8)
    save(fig, out, "fig9.png")


def plot_heuristics(rows, out):
    """flitsim's range of VLs per heuristic next to the paper's ranges (§IV-C)."""
    paper = {"dfsssp-weakest": (3, 5), "dfsssp-first": (4, 8), "dfsssp-strongest": (4, 16)}
    labels = {
        "dfsssp-weakest": "weakest edge",
        "dfsssp-first": "first edge\n(pseudo-random)",
        "dfsssp-strongest": "strongest edge",
        "dfsssp-default": "flitsim default\n(weakest +\nrestarts)",
        "lash": "LASH",
    }
    by = defaultdict(list)
    for r in rows:
        by[r["variant"]].append(int(r["layers"]))
    variants = [v for v in labels if v in by]
    fig, ax = plt.subplots(figsize=(7, 4))
    for i, v in enumerate(variants):
        xs = by[v]
        ax.vlines(i - 0.12, min(xs), max(xs), color="#d62728", lw=8, alpha=0.5,
                  label="flitsim min…max" if i == 0 else None)
        ax.plot(i - 0.12, sum(xs) / len(xs), "o", color="#d62728",
                label="flitsim mean" if i == 0 else None)
        if v in paper:
            lo, hi = paper[v]
            ax.vlines(i + 0.12, lo, hi, color="black", lw=8, alpha=0.35,
                      label="paper range" if i == 0 else None)
    ax.set_xticks(range(len(variants)), [labels[v] for v in variants])
    ax.axhline(8, color="black", lw=0.8, ls=":")
    ax.text(len(variants) - 0.5, 8.1, "8 VLs (InfiniBand hardware)", ha="right", va="bottom",
            fontsize=8)
    ax.set_ylabel("virtual layers (VLs) needed")
    n = len(next(iter(by.values())))
    ax.set_title(f"64 switches, 1024 endpoints, 128 links: {n} random topologies")
    ax.set_ylim(0, max(17, max(max(x) for x in by.values()) + 1))
    ax.grid(alpha=0.3, axis="y")
    ax.legend(fontsize=8, loc="upper left")
    save(fig, out, "heuristics.png")


def grouped_bars(ax, groups, engines, value, title, ylabel):
    """One group per topology, one bar per engine; missing values are marked n/a."""
    width = 0.8 / len(engines)
    for j, e in enumerate(engines):
        for i, g in enumerate(groups):
            x = i - 0.4 + width * (j + 0.5)
            v = value(g, e)
            if isinstance(v, str):
                ax.text(x, 0.01, v, rotation=90, ha="center", va="bottom", fontsize=5,
                        color=COLOURS[e])
            else:
                ax.bar(x, v, width, color=COLOURS[e], label=e if i == 0 else None)
    ax.set_title(title, fontsize=10)
    ax.set_ylabel(ylabel)
    ax.grid(alpha=0.3, axis="y")


def legend_entries(axes):
    """The legend handles and labels of all ``axes``, each label once, in order of appearance."""
    handles, labels = [], []
    for ax in axes:
        for h, label in zip(*ax.get_legend_handles_labels()):
            if label not in labels:
                handles.append(h)
                labels.append(label)
    return handles, labels


def plot_ebb(rows, out):
    data = {(r["topology"], r["engine"]): r for r in rows}
    families = [f for f in FAMILY_TITLES if any(r["family"] == f for r in rows)]
    engines = [e for e in ENGINE_ORDER
               if any(r["engine"] == e and r["status"] == "ok" for r in rows)]
    fig, axes = plt.subplots(len(families), 1, figsize=(11, 3.2 * len(families)))
    axes = [axes] if len(families) == 1 else axes
    for ax, fam in zip(axes, families):
        topos = []
        for r in rows:
            if r["family"] == fam and r["topology"] not in [t for t, _ in topos]:
                topos.append((r["topology"], int(r["endpoints"])))

        def val(t, e):
            r = data.get((t, e))
            if r is None:
                return "n/a"
            if r["status"] == "ok":
                return float(r["ebb_mean"])
            return "skipped" if r["status"] == "skipped" else "n/a"

        grouped_bars(ax, [t for t, _ in topos], engines, val, FAMILY_TITLES[fam],
                     "eff. bisection BW")
        # Table I row (nominal endpoints) and, where it differs, the real endpoint count.
        ticks = []
        for t, n in topos:
            row = int(t.rsplit("-", 1)[1])
            ticks.append(f"{n}" if row == n else f"{n}\n(row {row})")
        ax.set_xticks(range(len(topos)), ticks)
        ax.set_ylim(0, 1.0)
    axes[-1].set_xlabel("endpoints")
    handles, labels = legend_entries(axes)
    fig.legend(handles, labels, loc="upper center", ncol=len(labels), fontsize=9,
               bbox_to_anchor=(0.5, 1.01))
    fig.tight_layout(rect=(0, 0, 1, 0.98))
    save(fig, out, "ebb.png")

    # Routing time against endpoints, one panel per family.
    fig, axes = plt.subplots(1, len(families), figsize=(4 * len(families), 3.6), sharey=True)
    axes = [axes] if len(families) == 1 else axes
    for ax, fam in zip(axes, families):
        for e in engines:
            pts = sorted((int(r["endpoints"]), float(r["route_s"])) for r in rows
                         if r["family"] == fam and r["engine"] == e and r["status"] == "ok")
            if pts:
                ax.plot([p[0] for p in pts], [max(p[1], 1e-6) for p in pts], "o-", ms=3,
                        color=COLOURS[e], label=e)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_title(FAMILY_TITLES[fam], fontsize=9)
        ax.set_xlabel("endpoints")
        ax.grid(alpha=0.3, which="both")
    axes[0].set_ylabel("routing time [s] (one core)")
    handles, labels = legend_entries(axes)
    fig.legend(handles, labels, loc="upper center", ncol=len(labels), fontsize=8,
               bbox_to_anchor=(0.5, 1.06))
    fig.tight_layout()
    save(fig, out, "ebb_time.png")


def opensm_rows(data):
    """Joins OpenSM's runs (opensm_runs.csv), the eBB of its tables (opensm_ebb.csv, label
    `<topology>/<engine>`) and flitsim's engines on the same files (opensm_flitsim.csv) into
    rows of topology, engine, source, vls, route_s, ebb_mean."""
    rows = []
    ebb = {r["label"]: r for r in read_csv(os.path.join(data, "opensm_ebb.csv"))}
    for r in read_csv(os.path.join(data, "opensm_runs.csv")):
        e = ebb.get(f"{r['topology']}/{r['engine']}")
        rows.append({"topology": r["topology"], "engine": r["engine"], "source": "opensm",
                     "vls": r["vls"], "route_s": r["route_s"],
                     "ebb_mean": e["ebb_mean"] if e and r["status"] == "ok" else ""})
    for r in read_csv(os.path.join(data, "opensm_flitsim.csv")):
        ok = r["status"] == "ok"
        rows.append({"topology": r["topology"], "engine": r["engine"], "source": "flitsim",
                     "vls": r["layers"] if ok else "", "route_s": r["route_s"] if ok else "",
                     "ebb_mean": r["ebb_mean"] if ok else ""})
    return rows


def plot_opensm(data, out):
    """eBB of OpenSM's tables next to flitsim's, per topology and engine."""
    rows = opensm_rows(data)
    topos = sorted({r["topology"] for r in rows},
                   key=lambda t: (not t.startswith("fattree"), t.startswith("login"), t))
    engines = [e for e in ENGINE_ORDER
               if any(r["engine"] == e and r["ebb_mean"] for r in rows)]
    cols = 2 if len(topos) > 1 else 1
    nrows = (len(topos) + cols - 1) // cols
    fig, axes = plt.subplots(nrows, cols, figsize=(6 * cols, 3.6 * nrows), sharey=True,
                             squeeze=False)
    axes = [ax for row in axes for ax in row]
    for ax in axes[len(topos):]:
        ax.set_visible(False)
    for ax, t in zip(axes, topos):
        for i, e in enumerate(engines):
            for k, (src, hatch) in enumerate([("flitsim", None), ("opensm", "////")]):
                r = next((r for r in rows if r["topology"] == t and r["engine"] == e
                          and r["source"] == src), None)
                x = i + (k - 0.5) * 0.38
                if r is None or not r["ebb_mean"]:
                    ax.text(x, 0.01, "n/a", rotation=90, ha="center", va="bottom", fontsize=6)
                    continue
                v = float(r["ebb_mean"])
                ax.bar(x, v, 0.36, color=COLOURS[e], hatch=hatch,
                       edgecolor="black" if hatch else COLOURS[e], lw=0.5)
                ax.text(x, v + 0.01, f"{v:.2f}", rotation=90, ha="center", va="bottom",
                        fontsize=6)
        ax.set_xticks(range(len(engines)), engines, rotation=30, fontsize=8)
        ax.set_title(t, fontsize=9)
        ax.set_ylim(0, 1.05)
        ax.grid(alpha=0.3, axis="y")
    for ax in axes[::cols]:
        ax.set_ylabel("eff. bisection BW (200 patterns)")
    from matplotlib.patches import Patch
    fig.legend([Patch(facecolor="lightgrey", edgecolor="lightgrey"),
                Patch(facecolor="lightgrey", edgecolor="black", hatch="////")],
               ["flitsim's tables (left, solid)", "OpenSM 3.3.23's tables (right, hatched)"],
               loc="upper center", ncol=2, fontsize=8, bbox_to_anchor=(0.5, 1.03))
    fig.tight_layout()
    save(fig, out, "opensm.png")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default="target/routing-study")
    ap.add_argument("--out", default="docs/validation/routing")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    plots = [("fig9.csv", plot_fig9), ("heuristics.csv", plot_heuristics),
             ("ebb.csv", plot_ebb)]
    for name, fn in plots:
        path = os.path.join(a.data, name)
        if os.path.exists(path):
            fn(read_csv(path), a.out)
        else:
            print("skipping", name, "(not found)")
    needed = ["opensm_runs.csv", "opensm_ebb.csv", "opensm_flitsim.csv"]
    if all(os.path.exists(os.path.join(a.data, n)) for n in needed):
        plot_opensm(a.data, a.out)
    else:
        print("skipping opensm.png (needs", ", ".join(needed) + ")")


if __name__ == "__main__":
    main()
