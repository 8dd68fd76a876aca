"""A loaded model: the spec instance, the properties to check, bounds and expectations.

:mod:`checker.loading.modelfile` builds one from a model file; the engine and the tools
take it as it is, so they need neither the file format nor the spec registry.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from checker.api.spec import Property, Spec


@dataclass
class Model:
    """A loaded and validated model file."""

    path: str
    spec_name: str
    spec: Spec
    description: str
    constants: dict[str, Any]
    properties: list[Property]
    expect: dict[str, str]
    symmetry: bool = True
    por: bool = True
    max_states: int | None = None
    max_depth: int | None = None
    time_limit: float | None = None
    raw: dict[str, Any] = field(default_factory=dict)
    prove: dict[str, Any] = field(default_factory=dict)  # the validated [prove] table
    evidence: dict[str, dict[str, str]] = field(default_factory=dict)  # the validated [evidence] table
    # Digests of what the verdicts are computed from (ordercheck's version, the model
    # file, the spec's source files), filled by checker.loading from a model file: a
    # checkpoint records them and a resume with other ones is refused
    # (checker.loading.sources; empty for a model built in memory).
    sources: dict[str, Any] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return Path(self.path).stem
