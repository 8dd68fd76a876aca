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


def model_checking(name: str, properties: list[str], **constants):
    """Model file ``name`` (under models/, without ``.toml``) checking only ``properties``,
    its constants updated by ``constants``.

    The file's ``[expect]`` and ``[evidence]`` are left out: they speak of the file's own
    property list (evidence backs a "holds" expectation, which the derived model no longer
    has), so the derived model keeps the spec, the constants and the chosen properties.
    """
    import tomllib

    from checker.loading.modelfile import model_from_dict

    data = tomllib.loads((MODELS / f"{name}.toml").read_text())
    derived = {"spec": data["spec"], "constants": {**data["constants"], **constants},
               "check": {"properties": list(properties)}}
    return model_from_dict(derived, f"{name}.toml")
