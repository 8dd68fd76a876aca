"""Model files: a spec, its constants, the properties to check and the verdicts expected.

A model file is the analogue of a TLC ``.cfg``::

    # bus1 with three peers, each multicasting once to both others
    spec = "bus1"
    description = "three peers, one multicast each"

    [constants]
    peers = 3
    sends = 1

    [check]                 # optional
    properties = ["fifo", "causal", "total", "global_lock", "eventual_delivery"]
    symmetry = true
    max_states = 5_000_000

    [expect]
    causal = "holds"
    total = "holds"
    total_race = "holds"    # a sometimes property: the witness below

    [evidence]              # why each "holds" is not vacuous (ordercheck.checker.loading.evidence)
    causal = { mutant = "bus1-mutant-no-block.toml" }
    total = { witness = "total_race" }

    [not_checked]           # optional: why a property of the spec is left out
    fifo = "each peer sends once: no sender has two messages to reorder"

``properties`` defaults to the keys of ``[expect]``, and to every property of the spec
when there is no ``[expect]`` either.
"""

from __future__ import annotations

import math
import tomllib
from pathlib import Path
from typing import Any

from ordercheck.checker.api.errors import ConstantError, InputError
from ordercheck.checker.api.faults import declaration_errors, undeclared
from ordercheck.checker.api.inputs import MODEL_LIMIT, read_input
from ordercheck.checker.api.model import Model
from ordercheck.checker.api.spec import Property
from ordercheck.checker.api.spec_errors import left_spec_code, spec_left_loading
from ordercheck.checker.loading.evidence import WITNESS_HINT, check_mutants, evidence_table
from ordercheck.checker.loading.provenance import git_commit
from ordercheck.checker.loading.sources import model_sources
from ordercheck.checker.loading.specref import BadSpecRef, resolve

STATUSES = ("holds", "violated")
TOP_KEYS = {"spec", "description", "constants", "check", "expect", "evidence", "not_checked", "prove"}
CHECK_KEYS = {"properties", "symmetry", "por", "max_states", "max_depth", "time_limit"}
PROVE_KEYS = {"queue_bound", "depth", "timeout", "targets", "drop", "expect", "encoding", "properties"}


def load_model(path: str | Path, *, mutants: bool = True) -> Model:
    """Read and validate a model file; :class:`InputError` names what is wrong.

    With ``mutants`` (the default), each mutant its ``[evidence]`` names is read too and
    checked against it (:func:`ordercheck.checker.loading.evidence.check_mutants`); a mutant is
    read with ``mutants=False``, so its own evidence is checked for shape only."""
    where = str(path)
    p = Path(path)
    raw = read_input(p, "a model file", MODEL_LIMIT, where, pipe=True,
                     directory="is a directory; pass the .toml files or the directory to `check`")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(where, "", f"cannot be read ({exc.__class__.__name__}: {exc})") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InputError(where, "", f"is not valid TOML ({exc})") from None
    except RecursionError:
        raise InputError(where, "", f"is nested too deeply (at most {MAX_NESTING} levels of arrays and tables)") from None
    model = model_from_dict(data, where)
    if not p.is_file():  # a pipe (/dev/stdin, <(...)): no directory to find a mutant beside it
        named = [prop for prop, entry in model.evidence.items() if "mutant" in entry]
        if named:
            raise InputError(where, f"evidence.{named[0]}.mutant",
                             "this model is not read from a file (a pipe?), so its mutant cannot be found beside "
                             "it and checked; name the model file itself")
    if mutants:
        check_mutants(model, lambda mutant: load_model(mutant, mutants=False))
    model.commit = git_commit(p)
    return model


MAX_NESTING = 32
"""How deeply arrays and tables may nest in a model file (a real one needs four)."""


def check_values(data: Any, where: str) -> None:
    """Refuse values no model means: nesting deeper than :data:`MAX_NESTING` and
    numbers that are not finite (``nan``, ``inf``); :class:`InputError` names the field."""
    todo: list[tuple[Any, str, int]] = [(data, "", 0)]
    while todo:
        value, field_name, depth = todo.pop()
        if isinstance(value, float) and not math.isfinite(value):
            raise InputError(where, field_name, f"expected a finite number, got {value!r}")
        if isinstance(value, (dict, list)):
            if depth >= MAX_NESTING:
                raise InputError(where, field_name, f"nested too deeply (at most {MAX_NESTING} levels)")
            items = value.items() if isinstance(value, dict) else enumerate(value)
            for key, item in items:
                sub = f"{field_name}.{key}" if isinstance(key, str) else f"{field_name}[{key}]"
                todo.append((item, sub.lstrip("."), depth + 1))


def model_from_dict(data: dict[str, Any], where: str = "<model>", spec: tuple[type, str] | None = None) -> Model:
    """:func:`_model_from_dict`, where the spec's code run to load the model (its module's
    import, its constructor, its ``properties``) leaving by ``sys.exit``, ``os._exit``
    (guarded) or another way that is not an :class:`Exception` is a
    :class:`~ordercheck.checker.api.spec_errors.SpecRaised` (exit code 5) naming the model, the
    spec and ``at import`` (an exception at import stays bad input, exit code 2)."""
    try:
        return _model_from_dict(data, where, spec)
    except BaseException as exc:
        if not left_spec_code(exc):
            raise
        raise spec_left_loading(where, str(data.get("spec")), exc) from None


def _model_from_dict(data: dict[str, Any], where: str = "<model>", spec: tuple[type, str] | None = None) -> Model:
    """Validate a parsed model; :class:`InputError` names the file and field at fault.

    ``spec``, ``(class, canonical reference)``, stands for the class the model's ``spec``
    field names, already resolved (a Spark executor's copy of a user's spec file, which
    is not where the model file says; :mod:`ordercheck.checker.spark.ship`). The mutants named as
    ``[evidence]`` are checked by :func:`load_model`, not here (the copies this builds,
    an ablation's or an executor's, come from a file ``load_model`` read)."""
    check_values(data, where)
    for key in data:
        if key not in TOP_KEYS:
            raise InputError(where, key, f"unknown key (expected: {', '.join(sorted(TOP_KEYS))})")
    name = data.get("spec")
    if name is None:
        raise InputError(where, "spec", "missing: say which spec this model checks, e.g. spec = \"bus1\"")
    if not isinstance(name, str):
        raise InputError(where, "spec", f"expected a string, got {name!r}")
    sources: dict[str, Any] = {}
    if spec is not None:
        cls, name = spec
    else:
        try:
            ref = resolve(name, Path(where).parent)
        except BadSpecRef as exc:
            raise InputError(where, "spec", str(exc)) from None
        cls, name = ref.cls, ref.canonical
        sources = model_sources(cls, where, (ref.module,) if ref.module else ())

    constants = data.get("constants", {})
    if not isinstance(constants, dict):
        raise InputError(where, "constants", "expected a table [constants]")
    try:
        spec = cls(**constants)
    except ConstantError as exc:
        raise InputError(where, f"constants.{exc.name}", exc.message) from None
    except Exception as exc:  # the spec's setup() or constructor raised: the spec's error, exit code 5
        raise spec_left_loading(where, str(data.get("spec")), exc) from None
    bad_faults = declaration_errors(cls)
    if bad_faults:
        raise InputError(where, "spec", bad_faults)
    refused = undeclared(spec)
    if refused is not None:
        raise InputError(where, f"constants.{refused[0].name}", refused[1])

    check = data.get("check", {})
    if not isinstance(check, dict):
        raise InputError(where, "check", "expected a table [check]")
    for key in check:
        if key not in CHECK_KEYS:
            raise InputError(where, f"check.{key}", f"unknown key (expected: {', '.join(sorted(CHECK_KEYS))})")

    expect = data.get("expect", {})
    if not isinstance(expect, dict):
        raise InputError(where, "expect", "expected a table [expect] of property = \"holds\" | \"violated\"")
    try:
        available = spec.property_map()
    except Exception as exc:  # the spec's properties() raised: the spec's error, exit code 5
        raise spec_left_loading(where, str(data.get("spec")), exc) from None
    for prop, verdict in expect.items():
        if prop not in available:
            raise InputError(where, f"expect.{prop}", _unknown_property(cls.name, prop, available))
        if verdict not in STATUSES:
            raise InputError(where, f"expect.{prop}", f"expected \"holds\" or \"violated\", got {verdict!r}")

    names = check.get("properties")
    if names is None:
        names = list(expect) or list(available)
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise InputError(where, "check.properties", "expected a list of property names")
    if not names and "properties" in check:
        raise InputError(where, "check.properties",
                         "is empty, so nothing would be checked: name at least one property "
                         "(or leave the key out to check every property)")
    for prop in names:
        if prop not in available:
            raise InputError(where, "check.properties", _unknown_property(cls.name, prop, available))
    for prop in expect:
        if prop not in names:
            raise InputError(where, f"expect.{prop}", "has an expectation but is not in check.properties")

    def opt_int(key: str, low: int = 0) -> int | None:
        value = check.get(key)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            wanted = "a non-negative integer" if low == 0 else f"an integer of at least {low}"
            raise InputError(where, f"check.{key}", f"expected {wanted}, got {value!r}")
        return value

    def opt_bool(key: str) -> bool:
        value = check.get(key, True)
        if not isinstance(value, bool):
            raise InputError(where, f"check.{key}", f"expected true or false, got {value!r}")
        return value

    time_limit = check.get("time_limit")
    if time_limit is not None and (isinstance(time_limit, bool) or not isinstance(time_limit, (int, float)) or time_limit <= 0):
        raise InputError(where, "check.time_limit", f"expected a positive number of seconds, got {time_limit!r}")
    description = data.get("description", "")
    if not isinstance(description, str):
        raise InputError(where, "description", "expected a string")

    return Model(
        path=where,
        spec_name=name,
        spec=spec,
        description=description,
        constants=dict(spec.values),
        properties=[available[n] for n in dict.fromkeys(names)],
        expect=dict(expect),
        symmetry=opt_bool("symmetry"),
        por=opt_bool("por"),
        max_states=opt_int("max_states", 1),
        max_depth=opt_int("max_depth"),
        time_limit=None if time_limit is None else float(time_limit),
        raw=data,
        prove=_prove_table(data.get("prove", {}), where),
        evidence=evidence_table(data.get("evidence", {}), where, dict(expect), available, list(names)),
        sources=sources,
        not_checked=_not_checked_table(data.get("not_checked", {}), where, cls.name, available, list(names)),
    )


def _not_checked_table(table: Any, where: str, spec: str, available: dict[str, Property],
                       names: list[str]) -> dict[str, str]:
    """Every property of the spec the model does not check, in the spec's order, with
    the reason ``[not_checked]`` gives for it ("" when it gives none). Each key of the
    table must be a property of the spec that is not checked, each value a sentence."""
    if not isinstance(table, dict):
        raise InputError(where, "not_checked", 'expected a table [not_checked] of property = "why it is not checked"')
    for prop, why in table.items():
        if prop not in available:
            raise InputError(where, f"not_checked.{prop}", _unknown_property(spec, prop, available))
        if prop in names:
            raise InputError(where, f"not_checked.{prop}", "is checked (it is in check.properties): a reason why it "
                             "is not checked applies only to a property left out")
        if not isinstance(why, str) or not why.strip():
            raise InputError(where, f"not_checked.{prop}", f"expected a sentence saying why it is not checked, got {why!r}")
    return {prop: table.get(prop, "").strip() for prop in available if prop not in names}


def _prove_table(table: Any, where: str) -> dict[str, Any]:
    """Check the types in ``[prove]`` (``ordercheck prove``'s settings); the names of
    lemmas and targets are checked against the spec's encoding when it runs."""
    if not isinstance(table, dict):
        raise InputError(where, "prove", "expected a table [prove]")
    for key in table:
        if key not in PROVE_KEYS:
            raise InputError(where, f"prove.{key}", f"unknown key (expected: {', '.join(sorted(PROVE_KEYS))})")
    for key, low in (("queue_bound", 1), ("depth", 0)):
        value = table.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < low):
            raise InputError(where, f"prove.{key}", f"expected an integer of at least {low}, got {value!r}")
    timeout = table.get("timeout")
    if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0):
        raise InputError(where, "prove.timeout", f"expected a positive number of seconds, got {timeout!r}")
    encoding = table.get("encoding")
    if encoding is not None and (not isinstance(encoding, str) or not encoding.endswith(".py")):
        raise InputError(where, "prove.encoding", f"expected the path of a .py file (relative to the model file), got {encoding!r}")
    for key in ("targets", "drop", "properties"):
        value = table.get(key)
        if value is not None and (not isinstance(value, list) or not all(isinstance(v, str) for v in value)):
            raise InputError(where, f"prove.{key}", "expected a list of names")
    expect = table.get("expect", {})
    if not isinstance(expect, dict):
        raise InputError(where, "prove.expect", 'expected a table of name = "proved" | "refuted"')
    for name, verdict in expect.items():
        if verdict not in ("proved", "refuted"):
            raise InputError(where, f"prove.expect.{name}", f'expected "proved" or "refuted", got {verdict!r}')
    return dict(table)


def _unknown_property(spec: str, prop: str, available: dict[str, Property]) -> str:
    hint = WITNESS_HINT.get(prop, "")
    return f"{spec} has no property {prop!r} (it has: {', '.join(available)}){hint}"


def expand_paths(paths: list[str]) -> list[Path]:
    """Model files named directly, and the ``*.toml`` files of named directories, sorted."""
    out: list[Path] = []
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            found = sorted(p.glob("*.toml"))
            if not found:
                raise InputError(raw, "", "directory holds no .toml model files")
            out.extend(found)
        else:
            out.append(p)
    return out
