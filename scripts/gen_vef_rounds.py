"""Write a synthetic VEF trace for memory and speed measurements of the streaming replay.

    python scripts/gen_vef_rounds.py TASKS ROUNDS OUT.vef

TASKS tasks exchange ROUNDS rounds of 64-byte messages: in round r task t sends to task
(t + 1 + r) mod TASKS, 10 ns after it received its message of round r - 1 (round 0 starts at
time 0). TASKS x ROUNDS messages; every dependency reaches back less than 2 x TASKS message ids.
"""

import sys


def main() -> None:
    tasks, rounds, path = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    with open(path, "w") as out:
        out.write(f"VEF {tasks} {tasks * rounds} 1 0 0 FALSE\n")
        out.write("C0 " + " ".join(map(str, range(tasks))) + "\n")
        for r in range(rounds):
            base = r * tasks
            for t in range(tasks):
                dst = (t + 1 + r) % tasks
                if r == 0:
                    out.write(f"{t} {t} {dst} 64 0 0 -1\n")
                else:
                    src_prev = (t - r) % tasks  # who sent to t in round r - 1
                    out.write(f"{base + t} {t} {dst} 64 2 10 {base - tasks + src_prev}\n")


if __name__ == "__main__":
    main()
