"""Checks the schedule that trains over wide links would need (docs/performance.md, "Session 38").

A packet of `len` flits leaves its NIC one flit per cycle. At each stage, a connection of width
`w` starts in cycle `t0` (at or after its head's arrival, as a grant does) and sends
min(w, present) flits per cycle; a link of latency `L` delivers in cycle t + L what was sent in
cycle t. The claim: the flits in each stage's receiving buffer by cycle t are
max(0, min(len, lines)), where the lines are a + b·t with at most one line per distinct width,
and each stage's lines follow from the previous stage's in closed form: the lines with b <= w
are kept, a line w·(t − t0 + 1) is added, and all shift by L. (A steeper line would become the
line of slope w through its value at t0; from the head's arrival on it is at least its slope,
more than w, so that line lies above the added one and is dropped.)

This script compares that closed form with a cycle-by-cycle model of random chains and prints
how many schedules differ (the claim holds when none does):

    python3 scripts/train_schedule_check.py
"""

import random

HORIZON = 400


def cycle_by_cycle(length, stages):
    """Per stage, flits in its receiving buffer by each cycle (cycle-by-cycle model)."""
    arrived = [min(length, t) for t in range(HORIZON)]  # the NIC's flit k arrives in cycle k + 1
    out = []
    for w, t0, latency in stages:
        sent = [0] * HORIZON
        for t in range(HORIZON):
            before = sent[t - 1] if t > 0 else 0
            sent[t] = before if t < t0 else min(before + w, arrived[t])
        arrived = [sent[t - latency] if t >= latency else 0 for t in range(HORIZON)]
        out.append(arrived)
    return out


def closed_form(stages):
    """Per stage, its receiving buffer's lines {slope: intercept} (closed form)."""
    lines = {1: 0}  # the NIC: t flits by cycle t
    out = []
    for w, t0, latency in stages:
        sent = {b: a for b, a in lines.items() if b <= w}
        added = w * (1 - t0)  # w·(t − t0 + 1)
        sent[w] = min(sent.get(w, added), added)
        lines = {b: a - b * latency for b, a in sent.items()}
        out.append(dict(lines))
    return out


def random_chain(rng, length):
    """1–8 stages of widths 1–16 and latencies 1–3, each starting at or after its head's
    arrival."""
    stages = []
    arrived = [min(length, t) for t in range(HORIZON)]
    for _ in range(rng.randint(1, 8)):
        head = next(t for t in range(HORIZON) if arrived[t] >= 1)
        width = rng.choice([1, 1, 2, 3, 4, 16])
        stages.append((width, head + rng.randint(0, 12), rng.randint(1, 3)))
        arrived = cycle_by_cycle(length, stages)[-1]
    return stages


def main():
    rng = random.Random(2)
    schedules = differ = widest = 0
    for _ in range(5000):
        length = rng.randint(1, 40)
        stages = random_chain(rng, length)
        for model, lines in zip(cycle_by_cycle(length, stages), closed_form(stages)):
            schedules += 1
            widest = max(widest, len(lines))
            formula = [
                max(0, min([length] + [a + b * t for b, a in lines.items()]))
                for t in range(HORIZON)
            ]
            differ += formula != model
    print(f"{schedules} schedules, {differ} differ; "
          f"at most {widest} lines (one per distinct width)")
    return 1 if differ else 0


if __name__ == "__main__":
    raise SystemExit(main())
