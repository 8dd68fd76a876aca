"""Shared fixtures: paths, and a helper to run the command line in-process."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

ROOT = Path(__file__).resolve().parent.parent
MODELS = ROOT / "models"


@pytest.fixture
def run_cli():
    """Run ``ordercheck ARGS`` in-process; returns the click Result (exit_code, output)."""
    from checker.cli import main

    def run(*args: str):
        return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)

    return run
