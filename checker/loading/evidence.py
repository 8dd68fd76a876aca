"""The ``[evidence]`` table of a model file: why a "holds" is not vacuous.

A model that expects a property to hold claims something about a protocol, and the
claim is only worth as much as the configuration's ability to break it. The table names,
per property expected to hold, one piece of evidence that it could fail here::

    [evidence]
    causal = { mutant = "bss-mutant-no-causal-condition.toml" }
    total = { witness = "total_race" }

- ``mutant``: a sibling model file (a path relative to this model's directory) on the
  same configuration, differing only in ablation constants or being a weaker protocol
  on the same script, which expects the property ``violated``.
- ``witness``: a ``sometimes`` property of the spec, checked by this model and expected
  to hold: the run it finds reaches the situation the property constrains.

Loading checks the table's shape and what this file alone can show (the property is
expected to hold, the sibling file exists, the witness is a checked ``sometimes``
property expected to hold). That a sibling is on the same configuration and expects
the violation is checked by the test suite (``tests/test_evidence.py``), which also
requires evidence for every ordering property a built-in model expects to hold.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from checker.api.errors import InputError
from checker.api.spec import Property

KINDS = ("mutant", "witness")

ORDERING = ("fifo", "causal", "integrity", "total", "total_global", "total_prefix", "global_lock", "synchronous")
"""The ordering properties whose "holds" needs evidence in a built-in model."""


def evidence_table(
    table: Any,
    where: str,
    expect: dict[str, str],
    available: dict[str, Property],
    checked: list[str],
) -> dict[str, dict[str, str]]:
    """Validate ``[evidence]``; returns ``{property: {"mutant" | "witness": name}}``.

    ``where`` is the model's path (a sibling is looked up beside it when it names an
    existing file), ``expect`` its expectations, ``available`` the spec's properties by
    name and ``checked`` the names the model checks. :class:`InputError` names the
    first entry at fault.
    """
    if not isinstance(table, dict):
        raise InputError(where, "evidence", 'expected a table [evidence] of property = { mutant = "FILE.toml" } '
                                            'or { witness = "PROPERTY" }')
    here = Path(where)
    out: dict[str, dict[str, str]] = {}
    for prop, entry in table.items():
        field = f"evidence.{prop}"
        if prop not in available:
            raise InputError(where, field, f"the spec has no property {prop!r}")
        if expect.get(prop) != "holds":
            raise InputError(where, field, f"{prop} is not expected to hold here; evidence backs a \"holds\" expectation")
        if not isinstance(entry, dict) or len(entry) != 1 or next(iter(entry)) not in KINDS:
            raise InputError(where, field, 'expected one of { mutant = "FILE.toml" } or { witness = "PROPERTY" }')
        kind, name = next(iter(entry.items()))
        if not isinstance(name, str) or not name:
            raise InputError(where, f"{field}.{kind}", f"expected a non-empty string, got {name!r}")
        if kind == "mutant":
            _check_mutant(here, where, f"{field}.mutant", name)
        else:
            _check_witness(where, f"{field}.witness", name, expect, available, checked)
        out[prop] = {kind: name}
    return out


def _check_mutant(here: Path, where: str, field: str, name: str) -> None:
    if not name.endswith(".toml"):
        raise InputError(where, field, f"expected a model file name ending in .toml, got {name!r}")
    if here.is_file():
        sibling = here.parent / name
        if sibling.resolve() == here.resolve():
            raise InputError(where, field, "names this model itself; the evidence must be another model")
        if not sibling.is_file():
            raise InputError(where, field, f"no model file {name!r} beside this one")


def _check_witness(
    where: str, field: str, name: str, expect: dict[str, str], available: dict[str, Property], checked: list[str]
) -> None:
    prop = available.get(name)
    if prop is None:
        raise InputError(where, field, f"the spec has no property {name!r}")
    if prop.kind != "sometimes":
        raise InputError(where, field, f"{name} is an {prop.kind} property; a witness is a sometimes property")
    if name not in checked or expect.get(name) != "holds":
        raise InputError(where, field, f"a witness must be checked and expected to hold here: add {name} = \"holds\" to [expect]")
