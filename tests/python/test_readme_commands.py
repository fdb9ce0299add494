"""scripts/readme_commands.py: which README commands CI runs, and how (it runs them itself)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _script():
    spec = importlib.util.spec_from_file_location("readme_commands",
                                                  REPO / "scripts/readme_commands.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_readme_command_is_run_or_skipped_for_a_reason():
    rc = _script()
    commands = rc.bash_blocks((REPO / "README.md").read_text(encoding="utf-8"))
    assert "flitsim demo" in commands and "bash scripts/ci.sh" in commands
    for command in commands:
        assert command.startswith("flitsim ") or rc.skipped(command), command
    for prefix in rc.SKIP:
        assert any(c.startswith(prefix) for c in commands), f"stale SKIP entry {prefix!r}"


def test_extraction_and_reduced_run_lengths():
    rc = _script()
    text = (
        "intro\n```bash\nflitsim sweep a.toml --vary x=1,2 \\\n    --out o && flitsim plot o\n"
        "flitsim run b.toml --json   # a comment\n```\n```python\nprint(1)\n```\n"
    )
    assert rc.bash_blocks(text) == [
        "flitsim sweep a.toml --vary x=1,2 --out o", "flitsim plot o", "flitsim run b.toml --json"
    ]
    assert rc.reduce("flitsim run b.toml --json") == f"flitsim run b.toml --json {rc.REDUCED}"
    assert rc.reduce("flitsim plot o") == "flitsim plot o"
