"""Fixtures: a tiny experiment (4x4 torus, short run) so the suite takes seconds, and a
counter of the runs a sweep starts."""

from __future__ import annotations

import importlib
import threading
from pathlib import Path
from typing import Any, List

import pytest
from click.testing import CliRunner

from helpers import TINY_CONFIG, cli_runner

sweep_module = importlib.import_module("flitsim.sweep")


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


class CountingRuns:
    """Replaces flitsim.sweep._run_one; counts calls and can raise on the n-th call."""

    def __init__(self, interrupt_on: int = 0) -> None:
        self.calls: List[Any] = []
        self.interrupt_on = interrupt_on
        self.lock = threading.Lock()
        self.real = sweep_module._run_one

    def __call__(self, text, origin, sets, seed):
        with self.lock:
            self.calls.append((tuple(sets), seed))
            n = len(self.calls)
        if n == self.interrupt_on:
            raise KeyboardInterrupt
        return self.real(text, origin, sets, seed)


@pytest.fixture
def count_runs(monkeypatch):
    """``count_runs(interrupt_on=0)`` installs a :class:`CountingRuns` and returns it."""

    def install(interrupt_on: int = 0) -> CountingRuns:
        counter = CountingRuns(interrupt_on)
        monkeypatch.setattr(sweep_module, "_run_one", counter)
        return counter

    return install
