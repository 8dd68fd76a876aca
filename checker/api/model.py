"""A loaded model: the spec instance, the properties to check, bounds and expectations.

:mod:`ordercheck.checker.loading.modelfile` builds one from a model file; the engine and the tools
take it as it is, so they need neither the file format nor the spec registry.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ordercheck.checker.api.result import Provenance, Result
from ordercheck.checker.api.spec import Property, Spec


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
    # file, the spec's source files), filled by ordercheck.checker.loading from a model file: a
    # checkpoint records them and a resume with other ones is refused
    # (ordercheck.checker.loading.sources; empty for a model built in memory).
    sources: dict[str, Any] = field(default_factory=dict)
    # Each property of the spec this model does not check -> the reason its
    # [not_checked] table gives ("" when it gives none); filled by ordercheck.checker.loading.
    not_checked: dict[str, str] = field(default_factory=dict)
    # The HEAD commit of the git checkout holding the model file, when there is one
    # (ordercheck.checker.loading.provenance); None for a model built in memory.
    commit: str | None = None

    @property
    def name(self) -> str:
        return Path(self.path).stem

    def describe(self, result: Result, requested: dict[str, bool] | None = None) -> Result:
        """``result`` with this model's description filled in (see
        :class:`~ordercheck.checker.api.result.Result`): its description, ``[evidence]``, the
        properties it does not check and why, the reductions ``requested`` (by default
        the model file's ``symmetry`` and ``por``) and the provenance (ordercheck's
        version, the model's commit, the date now). Returns ``result`` itself."""
        from ordercheck.checker import __version__

        result.description = self.description
        result.reductions_requested = dict(requested if requested is not None
                                           else {"symmetry": self.symmetry, "por": self.por})
        result.evidence = {prop: dict(entry) for prop, entry in self.evidence.items()}
        result.not_checked = dict(self.not_checked)
        result.provenance = Provenance(__version__, self.commit,
                                       datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"))
        return result
