"""Fixtures: a tiny experiment (4x4 torus, short run) so the suite takes seconds."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from helpers import TINY_CONFIG, cli_runner


@pytest.fixture
def tiny_config(tmp_path: Path) -> Path:
    path = tmp_path / "tiny.toml"
    path.write_text(TINY_CONFIG, encoding="utf-8")
    return path


@pytest.fixture
def tiny_text() -> str:
    return TINY_CONFIG


@pytest.fixture
def runner() -> CliRunner:
    return cli_runner()
