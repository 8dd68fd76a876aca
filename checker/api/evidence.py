"""The outcome of running a model's ``[evidence]``: ``check --with-evidence``.

A model that expects a property to hold names, in its ``[evidence]`` table, why the
property could fail in its configuration: a mutant model that must violate it, or a
``sometimes`` witness the model itself must reach (:mod:`ordercheck.checker.loading.evidence`).
``check --with-evidence`` runs the mutants too and records one :class:`EvidenceCheck`
per entry; :mod:`ordercheck.reports.junit` writes them as test cases.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from ordercheck.checker.api.result import EXIT_BOUND, EXIT_MISMATCH, EXIT_OK, Status, verdict_word


@dataclass(frozen=True)
class EvidenceCheck:
    """One ``[evidence]`` entry, run.

    ``model`` is the model's path, ``prop`` the property whose "holds" the entry backs,
    ``kind`` ``"mutant"`` or ``"witness"`` and ``name`` the mutant's file name or the
    witness property. ``status`` is what the run gave: the mutant's verdict on ``prop``,
    or the model's own verdict on the witness. ``wanted`` is the status that makes the
    evidence good: ``"violated"`` for a mutant, ``"holds"`` (reached) for a witness.
    """

    model: str
    prop: str
    kind: Literal["mutant", "witness"]
    name: str
    status: Status
    wanted: Status

    @property
    def word(self) -> str:
        """``status`` as every artifact prints it: ``reached``/``unreached`` for a
        witness (:func:`ordercheck.checker.api.result.verdict_word`)."""
        return verdict_word("sometimes" if self.kind == "witness" else None, self.status) or self.status

    @property
    def wanted_word(self) -> str:
        """``wanted`` as printed: ``reached`` for a witness."""
        return verdict_word("sometimes" if self.kind == "witness" else None, self.wanted) or self.wanted

    @property
    def ok(self) -> bool:
        """Whether the evidence is shown: the mutant violates, the witness is reached."""
        return self.status == self.wanted

    def exit_code(self) -> int:
        """0 when shown; 3 when a bound left the status unknown; 1 otherwise."""
        if self.ok:
            return EXIT_OK
        return EXIT_BOUND if self.status == "unknown" else EXIT_MISMATCH

    def message(self) -> str:
        """One sentence saying what the run showed."""
        if self.kind == "mutant":
            if self.ok:
                return f"{self.name} violates {self.prop}"
            if self.status == "unknown":
                return (f"{self.name}: {self.prop} unknown (a bound stopped its search), so the evidence "
                        f"that {self.prop} could fail here is not shown")
            return (f"{self.name} does not violate {self.prop} ({self.status}): the evidence that {self.prop} "
                    "could fail here is not shown")
        if self.ok:
            return f"witness {self.name} is reached"
        if self.status == "unknown":
            return f"witness {self.name} unknown (a bound stopped the search)"
        return f"witness {self.name} is never reached: the evidence that {self.prop} could fail here is not shown"


def evidence_exit_code(checks: Iterable[EvidenceCheck]) -> int:
    """1 if some evidence is not shown, else 3 if a bound left some unknown, else 0."""
    codes = {c.exit_code() for c in checks}
    if EXIT_MISMATCH in codes:
        return EXIT_MISMATCH
    if EXIT_BOUND in codes:
        return EXIT_BOUND
    return EXIT_OK
