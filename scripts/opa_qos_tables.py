"""Print the tables of docs/validation/omnipath-qos.md from the sweeps of the four scenarios.

    python scripts/opa_qos_tables.py DIR...   (sweep directories written by `flitsim sweep`)

For each sweep: per scheduler and load, the mean over seeds of the total accepted load and of
each SL's share of the accepted traffic (normalized throughput) and mean message latency (the
paper's end-to-end latency: generation to the last packet's tail); then per
scheduler the maximum accepted load (the largest accepted load over the loads of each seed,
averaged over seeds, with its 95 % Student-t interval) and, at the highest load, the largest
deviation of the shares from the configured 10/30/50/5/5 and the latency order of the SLs.
"""
import sys
from collections import defaultdict

import flitsim
from flitsim.stats import mean_ci

SLS = ["VO", "VI", "CL", "BE", "BK"]
TARGET = {"VO": 0.10, "VI": 0.30, "CL": 0.50, "BE": 0.05, "BK": 0.05}
SCHEDULERS = ["rr", "sbt", "dtable"]


def fmt(e, digits=3):
    if e.n < 2:
        return f"{e.mean:.{digits}f}"
    return f"{e.mean:.{digits}f} ± {e.half:.{digits}f}"


def main(dirs):
    for d in dirs:
        sweep = flitsim.load_sweep(d)
        rows = sweep.summary.to_pylist()
        # Message latency per (scheduler, load, seed, SL name), from the per-SL table.
        msg = {(r["qos.scheduler"], round(r["traffic.load"], 6), r["seed"], r["name"]):
               r["message_latency_mean"] for r in sweep.per_sl.to_pylist()}
        for r in rows:
            for s in SLS:
                r[f"sl.{s}.message_latency_mean"] = msg.get(
                    (r["qos.scheduler"], round(r["traffic.load"], 6), r["seed"], s))
        points = defaultdict(list)
        for r in rows:
            points[(r["qos.scheduler"], round(r["traffic.load"], 6))].append(r)
        seeds = sorted({r["seed"] for r in rows})
        print(f"\n### {d} ({len(seeds)} seeds)\n")
        print("| scheduler | load | accepted | " + " | ".join(f"{s} share" for s in SLS)
              + " | " + " | ".join(f"{s} msg. lat." for s in SLS) + " |")
        print("|---|---|---|" + "---|" * (2 * len(SLS)))
        for (sch, load), rs in sorted(points.items(),
                                      key=lambda kv: (SCHEDULERS.index(kv[0][0]), kv[0][1])):
            acc = mean_ci(r["accepted_load"] for r in rs)
            shares = " | ".join(f"{mean_ci(r[f'sl.{s}.share'] for r in rs).mean:.3f}"
                                for s in SLS)
            lats = " | ".join(f"{mean_ci(r[f'sl.{s}.message_latency_mean'] for r in rs).mean:.0f}"
                              for s in SLS)
            sat = "*" if any(r["saturated"] for r in rs) else ""
            print(f"| {sch} | {load:.1f} | {fmt(acc)}{sat} | {shares} | {lats} |")
        print()
        for sch in SCHEDULERS:
            mine = [r for r in rows if r["qos.scheduler"] == sch]
            if not mine:
                continue
            best = mean_ci(max(r["accepted_load"] for r in mine if r["seed"] == s)
                           for s in seeds)
            top_load = max(r["traffic.load"] for r in mine)
            top = [r for r in mine if r["traffic.load"] == top_load]
            share = {s: mean_ci(r[f"sl.{s}.share"] for r in top).mean for s in SLS}
            dev = max(abs(share[s] - TARGET[s]) for s in SLS)
            rel = max(abs(share[s] - TARGET[s]) / TARGET[s] for s in SLS)
            lat = {s: mean_ci(r[f"sl.{s}.message_latency_mean"] for r in top) for s in SLS}
            order = " < ".join(sorted(SLS, key=lambda s: lat[s].mean))
            ordered = (lat["VO"].mean < lat["VI"].mean < lat["CL"].mean
                       < min(lat["BE"].mean, lat["BK"].mean))
            cl_worst = lat["CL"].mean == max(v.mean for v in lat.values())
            be_above_vo = min(lat["BE"].mean, lat["BK"].mean) > lat["VO"].mean
            print(f"- {sch}: max accepted {fmt(best)} (95 % CI over {best.n} seeds); "
                  f"at load {top_load:.1f}: largest |share − target| {dev:.3f} "
                  f"({100 * rel:.1f} % of its target); latency order {order} "
                  f"({', '.join(f'{s} {lat[s].mean:.0f} ± {lat[s].half:.0f}' for s in SLS)}); "
                  f"VO<VI<CL<BE,BK: {ordered}; CL worst: {cl_worst}; BE,BK > VO: {be_above_vo}; "
                  f"deadlocks: {sum(1 for r in mine if r['deadlock'])}")


if __name__ == "__main__":
    main(sys.argv[1:])
