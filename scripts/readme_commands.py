#!/usr/bin/env python3
"""Run the commands of README.md's ```bash blocks, so that the README stays true.

Every command runs with bash in a scratch directory that looks like the repository's
root (``examples/`` and ``scripts/`` linked, ``../shared`` linked to the repository's
``../shared``), with the ``flitsim`` console script of the current environment. ``flitsim
run`` and ``flitsim sweep`` get reduced run lengths appended (``--set run.warmup=…
--set run.measure=… --set run.drain_max=…``, which override the file and earlier ``--set``\\ s). The commands in
:data:`SKIP` are not run, each for the reason given; a SKIP entry that no longer matches a
README command is an error, so the list cannot go stale.

Usage: ``python scripts/readme_commands.py [README.md]``. Exits 1 if any command fails.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import List, Tuple

REPO = Path(__file__).resolve().parents[1]
REDUCED = "--set run.warmup=200 --set run.measure=1000 --set run.drain_max=2000"
TIMEOUT = 600

# Command prefix -> why it is not run here.
SKIP = {
    "pip install": "installs the package; CI has just installed it (scripts/ci.sh)",
    "bash scripts/ci.sh": "is the full check that runs this script",
    "flitsim bench": "full-length benchmark (minutes, no --set); `bench --quick` is tested in "
    "tests/python/test_cli.py",
    "cargo run --release -p flitsim-app --example run": "Rust example: a release build of its "
    "own; the engine is covered by cargo test and the flitsim run commands",
    "cargo run --release -p flitsim-app --example bench": "Rust benchmark: minutes of "
    "full-length runs",
}


def bash_blocks(text: str) -> List[str]:
    """The commands of the ```bash blocks, continuation lines joined, comments removed."""
    commands = []
    for block in re.findall(r"^```bash\n(.*?)^```", text, flags=re.S | re.M):
        block = re.sub(r"\s*\\\n\s*", " ", block)
        for line in block.splitlines():
            line = re.sub(r"\s+#.*$", "", line).strip()
            if line and not line.startswith("#"):
                # `a && b`: run as two commands, so that one can be skipped alone.
                commands.extend(part.strip() for part in line.split(" && "))
    return commands


def reduce(command: str) -> str:
    """Append the reduced run lengths to a `flitsim run` or `flitsim sweep`."""
    if re.match(r"flitsim (run|sweep)\b", command):
        return f"{command} {REDUCED}"
    return command


def skipped(command: str) -> str:
    for prefix, reason in SKIP.items():
        if command.startswith(prefix):
            return reason
    return ""


def scratch_root(tmp: Path) -> Path:
    """A directory laid out like the repository root, with ../shared beside it."""
    work = tmp / "repo"
    work.mkdir()
    for name in ("examples", "scripts"):
        (work / name).symlink_to(REPO / name)
    shared = REPO.parent / "shared"
    if shared.exists():
        (tmp / "shared").symlink_to(shared)
    return work


def main(argv: List[str]) -> int:
    readme = Path(argv[1]) if len(argv) > 1 else REPO / "README.md"
    commands = bash_blocks(readme.read_text(encoding="utf-8"))
    if not commands:
        print(f"error: no ```bash commands in {readme}", file=sys.stderr)
        return 1
    stale = [p for p in SKIP if not any(c.startswith(p) for c in commands)]
    if stale:
        print(f"error: SKIP entries match no README command: {stale}", file=sys.stderr)
        return 1
    if shutil.which("flitsim") is None:
        print("error: the flitsim console script is not on PATH", file=sys.stderr)
        return 1
    results: List[Tuple[str, str]] = []
    with tempfile.TemporaryDirectory(prefix="flitsim-readme-") as tmp:
        work = scratch_root(Path(tmp))
        env = dict(os.environ, PWD=str(work))
        for command in commands:
            reason = skipped(command)
            if reason:
                print(f"-- skip  {command}\n         ({reason})")
                results.append((command, "skipped"))
                continue
            run = reduce(command)
            start = time.perf_counter()
            proc = subprocess.run(
                ["bash", "-euo", "pipefail", "-c", run], cwd=work, env=env,
                capture_output=True, text=True, timeout=TIMEOUT,
            )
            took = time.perf_counter() - start
            status = "passed" if proc.returncode == 0 else "failed"
            print(f"-- {status:<6} {run}  ({took:.1f} s)")
            if proc.returncode != 0:
                print(proc.stdout[-2000:], proc.stderr[-4000:], sep="\n", file=sys.stderr)
            results.append((command, status))
    counts = {k: sum(1 for _, s in results if s == k) for k in ("passed", "failed", "skipped")}
    print(f"README commands: {counts['passed']} passed, {counts['failed']} failed, "
          f"{counts['skipped']} skipped")
    return 1 if counts["failed"] else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
