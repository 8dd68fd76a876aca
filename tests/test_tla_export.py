"""The TLA+ export of every built-in model: it parses, it names every property and
action, and its state encoding is a faithful two-way translation of ours."""

from __future__ import annotations

import warnings
from collections import deque
from pathlib import Path

import pytest
import tree_sitter
import tree_sitter_tlaplus

from ordercheck.checker.api.result import Result, Stats
from ordercheck.checker.loading.modelfile import load_model
from ordercheck.tla.adapters import adapter_for, refusal
from ordercheck.tla.crosscheck import CrossCheck, TlcVerdict, _compare
from ordercheck.tla.export import HAPPENED_BEFORE_MODULE, LIBRARY_MODULE, NoTemplate, export_model
from ordercheck.tla.tlc import parse_output
from ordercheck.tla.traces import TraceMismatch, from_tlc
from tests.conftest import MODELS
from tests.tla_helpers import Reader

MODEL_FILES = sorted(MODELS.glob("*.toml"))
with warnings.catch_warnings():
    # tree-sitter-tlaplus 1.5 hands the grammar over as an address, which tree-sitter
    # 0.23 and later still take but call deprecated; later grammars hand over a capsule.
    warnings.filterwarnings("ignore", "int argument support is deprecated", DeprecationWarning)
    PARSER = tree_sitter.Parser(tree_sitter.Language(tree_sitter_tlaplus.language()))


def exported(path: Path):
    model = load_model(path)
    why = refusal(model.spec_name)
    if why is not None:
        pytest.skip(why)
    if adapter_for(model.spec_name) is None:
        pytest.skip(f"spec {model.spec_name!r} has no TLA+ template yet (add tla/templates/{model.spec_name}.tla.j2)")
    try:
        return model, export_model(model)
    except NoTemplate as refused:
        pytest.skip(str(refused))


def problems(text: str) -> list[str]:
    """ERROR and MISSING nodes of tree-sitter-tlaplus's parse, with their lines."""
    tree = PARSER.parse(text.encode())
    found = []
    todo = [tree.root_node]
    while todo:
        node = todo.pop()
        if node.type == "ERROR" or node.is_missing:
            found.append(f"line {node.start_point[0] + 1}: {node.type} {text.splitlines()[node.start_point[0]]!r}")
        todo.extend(node.children)
    return found


def definitions(text: str) -> set[str]:
    tree = PARSER.parse(text.encode())
    out = set()
    todo = [tree.root_node]
    while todo:
        node = todo.pop()
        if node.type in ("operator_definition", "function_definition", "recursive_declaration"):
            name = node.child_by_field_name("name")
            if name is not None:
                out.add(name.text.decode())
        todo.extend(node.children)
    return out


def reachable(spec, limit: int = 200):
    """Up to ``limit`` states of ``spec`` in breadth-first order, with their labels."""
    seen = {s: None for s in spec.init_states()}
    queue = deque(seen)
    labels = set()
    while queue and len(seen) < limit:
        for label, t in spec.next_states(queue.popleft()):
            labels.add(label[0])
            if t not in seen:
                seen[t] = None
                queue.append(t)
    return list(seen), labels


def test_library_module_parses():
    from ordercheck.tla.export import TEMPLATES

    assert problems((TEMPLATES / LIBRARY_MODULE).read_text()) == []
    assert problems((TEMPLATES / HAPPENED_BEFORE_MODULE).read_text()) == []


@pytest.mark.parametrize("path", MODEL_FILES, ids=lambda p: p.stem)
def test_export_parses_and_names_everything(path):
    model, export = exported(path)
    assert export.module.startswith(f"{'-' * 20} MODULE {export.name} ")
    assert problems(export.module) == []
    if export.protocol is not None:  # a model module over the spec's one parameterised module
        assert problems(export.protocol) == [] and len(export.module.splitlines()) < 40
        assert f"EXTENDS {export.adapter.protocol_module}\n" in export.module
    text = export.protocol or export.module
    defined = definitions(text) | definitions(export.module)
    for op in ["Init", "Next", "Spec", "TypeOK", *export.invariants, *export.temporal]:
        assert op in defined, f"{op} is not defined in {export.name}.tla"
    # Every property of the spec is exported, not only the model's.
    for prop in export.adapter.exported_properties():
        if prop.step:  # a per-step check: an action property over an action expression
            assert prop.checked in defined and f"{prop.checked} == [][" in text + export.module, prop.name
            assert prop.predicate.lstrip("~").split("(")[0] in defined, prop.name
        else:
            assert prop.checked in defined and prop.predicate in defined, prop.name
    # The configurations together check exactly the model's properties, each once, the
    # main one TypeOK too; each other configuration checks one property.
    # The happened-before configuration checks the adapter's agreement invariants, defined.
    checked = []
    for config in export.configs:
        cfg = export.files[config.file].splitlines()
        listed = [line.split()[1] for line in cfg if line.startswith(("INVARIANT", "PROPERTY"))]
        assert listed == config.checks
        if config.role == "happened_before":
            assert listed == list(export.adapter.happened_before) and set(listed) <= defined
            assert "HappenedBefore.tla" in export.files
            continue
        assert (listed[:1] == ["TypeOK"]) == (config.role == "main") and (config.role == "main" or len(listed) == 1)
        checked += listed
    assert sorted(checked) == sorted(["TypeOK", *[p.checked for p in export.properties]])
    assert any(c.role == "happened_before" for c in export.configs) == bool(export.adapter.happened_before)
    assert [p.name for p in export.properties] == [p.name for p in model.properties]
    # One TLA+ action per Python action label, each pointing back at it.
    _states, labels = reachable(model.spec)
    for label in labels:
        assert f'("{label}",' in text, f"no TLA+ action mirrors {label!r}"
        formula = export.adapter.actions[label]
        assert formula in text and formula.split("(")[0].split()[-1] in defined
    # The spec's fairness, action by action.
    for label in model.spec.fairness:
        assert f"_vars({export.adapter.actions[label]})" in text, f"no fairness for {label!r}"
    # ... and nothing else where it declares some: no WF_vars(Next), no optional step.
    start = text.index("\nFairness ==")
    fair = text[start:text.index("\nSpec ==", start)]
    if model.spec.fairness:
        assert "_vars(Next)" not in fair
        for label in export.adapter.optional():
            assert f"_vars({export.adapter.actions[label]})" not in fair, f"{label!r} is optional"
    assert "SYMMETRY" not in export.config or "Symmetry" in defined


@pytest.mark.parametrize("path", MODEL_FILES, ids=lambda p: p.stem)
def test_state_encoding_round_trips(path):
    model, export = exported(path)
    adapter = export.adapter
    states, _labels = reachable(model.spec)
    texts = set()
    read = Reader()
    for state in states:
        text = adapter.encode_text(state)
        assert set(text) == set(adapter.variables)
        assert adapter.view(adapter.decode(read.state(text))) == adapter.view(state)
        texts.add(tuple(sorted(text.items())))
    # distinct states stay distinct in TLA+ (those with one view are one state there)
    assert len(texts) == len({adapter.view(s) for s in states})


def tlc_style(adapter, states) -> str:
    """Our states printed the way TLC prints a trace."""
    lines = []
    for n, state in enumerate(states, start=1):
        lines.append(f"State {n}: <Action line 1, col 1 to line 1, col 2 of module M>")
        lines += [f"/\\ {k} = {v}" for k, v in adapter.encode_text(state).items()]
        lines.append("")
    return "Error: Invariant Causal is violated.\nError: The behavior up to this point is:\n" + "\n".join(lines)


def test_tlc_trace_reads_back_into_our_steps():
    from ordercheck.checker.engine.run import Options, check_model

    model = load_model(MODELS / "fifo-4.toml")
    result = check_model(model, Options(progress=False))
    ours = result.properties["causal"].trace
    export = export_model(model)
    from ordercheck.tla.traces import raw_states

    states = raw_states(export.adapter, ours)
    run = parse_output(tlc_style(export.adapter, states), 12)
    assert run.violated == "Causal" and run.kind == "invariant" and len(run.trace) == len(ours)
    back = from_tlc(export.adapter, run.trace)
    assert [s.label for s in back] == [s.label for s in ours]
    assert [s.state for s in back] == [s.state for s in ours]
    # A trace that skips a step is no behaviour of the spec.
    broken = parse_output(tlc_style(export.adapter, states[:2] + states[3:]), 12)
    with pytest.raises(TraceMismatch):
        from_tlc(export.adapter, broken.trace)


def test_comparison_reports_every_kind_of_difference():
    model = load_model(MODELS / "fifo-4.toml")
    export = export_model(model, symmetry=False)
    from ordercheck.checker.api.result import PropertyResult

    ours = Result(
        model.path, "fifo", {}, "local", {},
        {
            "fifo": PropertyResult("fifo", "always", "holds"),
            "causal": PropertyResult("causal", "always", "violated", trace=[None] * 9),  # type: ignore[list-item]
            "total": PropertyResult("total", "always", "violated", trace=[None] * 12),  # type: ignore[list-item]
        },
        Stats(distinct_states=240, transitions=493, depth=13),
    )
    final = parse_output("494 states generated, 241 distinct states found, 0 states left on queue.\n"
                         "The depth of the complete state graph search is 13.\n", 0)
    cc = CrossCheck(model, ours, export, {
        "fifo": TlcVerdict("violated"),
        "causal": TlcVerdict("violated", raw_length=8),
        "total": TlcVerdict("violated", raw_length=12),
    }, final)
    _compare(cc)
    assert cc.mismatches == [
        "distinct states: ours 240, TLC 241",
        "fifo: ours holds, TLC violated",
        "causal: trace lengths differ: ours 8 steps, TLC 7",
    ]


def test_export_command_writes_module_and_config(run_cli, tmp_path):
    out = run_cli("export-tla", MODELS / "bus1-2.toml", MODELS / "fifo-3.toml", "-o", tmp_path)
    assert out.exit_code == 0, out.output
    for name in ("bus1_2.tla", "bus1_2.cfg", "fifo_3.tla", "fifo_3.cfg", LIBRARY_MODULE):
        assert (tmp_path / name).is_file(), name
    assert "INVARIANT GlobalLock" in (tmp_path / "bus1_2.cfg").read_text()


def test_spec_without_template_is_refused_in_one_line(run_cli, tmp_path, monkeypatch):

    import ordercheck.tla.export

    monkeypatch.setattr(ordercheck.tla.export, "adapter_for", lambda name: None)
    out = run_cli("export-tla", MODELS / "fifo-3.toml", "-o", tmp_path)
    assert out.exit_code == 2
    assert "has no TLA+ template yet" in out.output and "Traceback" not in out.output


def test_refinement_spec_is_refused_saying_why_and_what_instead(run_cli, tmp_path):
    out = run_cli("export-tla", MODELS / "bus1-impl-refines-destroy.toml", "-o", tmp_path)
    assert out.exit_code == 2
    lines = out.output.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in out.output
    assert "bus1-impl-refines-destroy.toml: spec: bus1_refinement has no TLA+ export" in lines[0]
    assert "refinement mapping" in lines[0] and "ordercheck check" in lines[0]
    assert not list(tmp_path.iterdir())


def test_tlc_command_without_tlc_says_why(run_cli, monkeypatch):
    monkeypatch.delenv("TLA2TOOLS_JAR", raising=False)
    out = run_cli("tlc", MODELS / "fifo-4.toml")
    assert out.exit_code == 2
    assert "TLA2TOOLS_JAR is not set" in out.output


def test_tlc_lasso_reads_back_with_its_loop_closed():
    """TLC ends a liveness counterexample with "Back to state N"; read back, it is our
    lasso: the same actions, the loop's last step returning to the loop's first state."""
    from ordercheck.checker.engine.run import Options, check_model
    from ordercheck.tla.traces import raw_states

    model = load_model(MODELS / "retransmit-weak.toml")
    ours = check_model(model, Options(progress=False)).properties["eventual_delivery"]
    assert ours.status == "violated" and ours.loop_start is not None
    export = export_model(model)
    states = raw_states(export.adapter, ours.trace)
    text = tlc_style(export.adapter, states[:-1]).replace("Invariant Causal is violated", "Temporal property EventualDelivery was violated")
    text += f"Back to state {ours.loop_start + 1}: <Lose line 96, col 8 to line 96, col 117 of module M>\n"
    run = parse_output(text, 13)
    assert run.kind == "temporal" and run.violated == "EventualDelivery"
    back = from_tlc(export.adapter, run.trace)
    assert [s.label for s in back] == [s.label for s in ours.trace]


def test_one_lasso_violating_several_temporal_properties_is_read():
    text = ("Error: Temporal properties EventualDelivery and ValidHandleNotified were violated.\n"
            "46 states generated, 44 distinct states found, 0 states left on queue.\n")
    run = parse_output(text, 13)
    assert (run.kind, run.violated) == ("temporal", "EventualDelivery")
    single = parse_output("Error: Temporal property AllDelivered was violated.\n", 13)
    assert (single.kind, single.violated) == ("temporal", "AllDelivered")


def test_one_module_per_protocol():
    """A spec with a parameterised module renders it the same for every model of it, and
    each model's own module stays small (under 40 lines)."""
    texts: dict[str, set[str]] = {}
    for path in MODEL_FILES:
        model = load_model(path)
        if refusal(model.spec_name) is not None or adapter_for(model.spec_name) is None:
            continue
        try:
            export = export_model(model)
        except NoTemplate:
            continue
        name = export.adapter.protocol_module
        if name is not None:
            texts.setdefault(name, set()).add(export.files[f"{name}.tla"])
            assert len(export.module.splitlines()) < 40, export.name
    assert {"NaiveFifo", "BSS", "SES", "MatrixClocks", "Bus1", "LamportTotalOrder", "Skeen", "SequencerTotalOrder",
            "Retransmit", "SynchronousOrdering", "RestartClocks", "Bus1Impl"} <= set(texts)
    assert {name: len(found) for name, found in texts.items()} == dict.fromkeys(texts, 1)


# -- the docs' cross-check table ---------------------------------------------------------

TLA_PAGE = MODELS.parent / "docs" / "explanation" / "tla.md"
TABLE_HEADER = (
    "| model | distinct states (ours / TLC) | generated (ours / TLC) | depth (ours / TLC) | verdicts equal | TLC runs |\n"
    "|---|---:|---:|---:|---|---:|"
)
"""The header of the cross-check table in docs/explanation/tla.md; its rows are made by
``tests/test_tlc_crosscheck.py``'s ``table_row``."""


def page_table(text: str | None = None) -> dict[str, str]:
    """The cross-check table's rows on the page (or in ``text``), by model, in page order."""
    text = TLA_PAGE.read_text(encoding="utf-8") if text is None else text
    assert text.count(TABLE_HEADER) == 1, "docs/explanation/tla.md must hold the cross-check table's header once"
    rows: dict[str, str] = {}
    for line in text.split(TABLE_HEADER, 1)[1].lstrip("\n").splitlines():
        if not line.startswith("| "):
            break
        rows[line.split("|")[1].strip()] = line
    return rows


def exportable_models() -> list[str]:
    """The built-in models ``export-tla`` exports, in name order: ``adapter_of`` (the
    export's own test) on each model's spec with its constants set, built from the model
    file without the rest of ``load_model``'s checks (which the export tests run)."""
    import tomllib
    from types import SimpleNamespace

    from ordercheck.checker.loading.specref import resolve
    from ordercheck.tla.export import adapter_of

    names = []
    for path in MODEL_FILES:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
        ref = resolve(data["spec"], path.parent)
        model = SimpleNamespace(spec=ref.cls(**data.get("constants", {})), spec_name=ref.canonical, path=str(path))
        try:
            adapter_of(model)
        except NoTemplate:
            continue
        names.append(path.stem)
    return names


def table_text(rows: dict[str, str]) -> str:
    """The table with ``rows``, as the page holds it."""
    return TABLE_HEADER + "\n" + "\n".join(rows.values()) + "\n"


def test_docs_table_has_a_row_per_exportable_model():
    """The cross-check table lists exactly the models that export today, in name order
    (a model added or refused since the table was made shows here, without TLC; its row's
    figures are compared with a cross-check by tests/test_tlc_crosscheck.py)."""
    assert list(page_table()) == exportable_models()
    text = TABLE_HEADER + "\n| fifo-2 | 1 / 1 | 1 / 1 | 1 / 1 | 1/1 yes | 1 |\n\nprose\n"
    assert page_table(text) == {"fifo-2": "| fifo-2 | 1 / 1 | 1 / 1 | 1 / 1 | 1/1 yes | 1 |"}
