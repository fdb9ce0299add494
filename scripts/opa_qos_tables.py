"""Print the tables of docs/validation/omnipath-qos.md from the sweeps of the four scenarios.

    python scripts/opa_qos_tables.py DIR...   (sweep directories written by `flitsim sweep`)

For each sweep: per scheduler and load, total accepted load and each SL's share of the
accepted traffic (normalized throughput) and mean latency; then the largest accepted load per
scheduler and, at the highest load, the largest deviation of DTable's shares from the
configured 10/30/50/5/5 and whether its latencies are ordered VO < VI < CL < BE, BK.
"""
import sys

import flitsim

SLS = ["VO", "VI", "CL", "BE", "BK"]
TARGET = {"VO": 0.10, "VI": 0.30, "CL": 0.50, "BE": 0.05, "BK": 0.05}
SCHEDULERS = ["rr", "sbt", "dtable"]


def main(dirs):
    for d in dirs:
        rows = flitsim.load_sweep(d).summary.to_pylist()
        rows.sort(key=lambda r: (SCHEDULERS.index(r["qos.scheduler"]), r["traffic.load"]))
        print(f"\n### {d}\n")
        print("| scheduler | load | accepted | " + " | ".join(f"{s} share" for s in SLS)
              + " | " + " | ".join(f"{s} lat." for s in SLS) + " |")
        print("|---|---|---|" + "---|" * (2 * len(SLS)))
        for r in rows:
            shares = " | ".join(f"{r[f'sl.{s}.share']:.3f}" for s in SLS)
            lats = " | ".join(f"{r[f'sl.{s}.latency_mean']:.0f}" for s in SLS)
            sat = "*" if r["saturated"] else ""
            print(f"| {r['qos.scheduler']} | {r['traffic.load']:.1f} | "
                  f"{r['accepted_load']:.3f}{sat} | {shares} | {lats} |")
        print()
        for sch in SCHEDULERS:
            mine = [r for r in rows if r["qos.scheduler"] == sch]
            if not mine:
                continue
            best = max(r["accepted_load"] for r in mine)
            top = max(mine, key=lambda r: r["traffic.load"])
            dev = max(abs(top[f"sl.{s}.share"] - TARGET[s]) for s in SLS)
            lat = [top[f"sl.{s}.latency_mean"] for s in SLS]
            ordered = lat[0] < lat[1] < lat[2] < min(lat[3], lat[4])
            print(f"- {sch}: max accepted {best:.3f}; at load {top['traffic.load']:.1f} "
                  f"largest |share − target| {dev:.3f}; latency VO<VI<CL<BE,BK: {ordered}; "
                  f"deadlocks: {sum(1 for r in mine if r['deadlock'])}")


if __name__ == "__main__":
    main(sys.argv[1:])
