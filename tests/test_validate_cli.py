"""``ordercheck validate`` and ``ordercheck generate-logs`` end to end."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from ordercheck.checker.cli import main
from ordercheck.checker.validate.report import load_table
from ordercheck.checker.validate.verdicts import COLUMNS

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data" / "validate"


def test_exit_codes_and_lines() -> None:
    runner = CliRunner()
    ok = runner.invoke(main, ["validate", str(DATA / "fifo-in-order.jsonl")])
    assert ok.exit_code == 0, ok.output
    assert "fifo holds, causal holds, integrity holds, total holds" in ok.output
    assert ok.output.strip().endswith("1 logs, 4 events: 1 clean, 0 with violations")
    bad = runner.invoke(main, ["validate", str(DATA / "causal-relayed.jsonl"), "-p", "fifo,causal"])
    assert bad.exit_code == 1
    assert "fifo holds, causal VIOLATED (line 5)" in bad.output
    assert "  causal: c delivered b1 (line 5) while a1, which happened before it, had not been delivered there" in bad.output
    only_fifo = runner.invoke(main, ["validate", str(DATA / "causal-relayed.jsonl"), "-p", "fifo"])
    assert only_fifo.exit_code == 0


def test_outputs(tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = CliRunner().invoke(main, [
        "validate", str(DATA), "-p", "fifo,causal,integrity,total,total_global,total_prefix",
        "-o", str(out), "--json", str(tmp_path / "v.json"), "--quiet",
    ])
    assert result.exit_code == 1, result.output
    assert "fifo-in-order.jsonl" not in result.output  # clean logs are quiet
    records = json.loads((tmp_path / "v.json").read_text())
    assert len(records) == len(list(DATA.glob("*.jsonl")))
    rows = load_table(out)
    assert len(rows) == 6 * len(records) and set(rows[0]) == set(COLUMNS)
    by = {(Path(r["log"]).stem, r["property"]): r for r in rows}
    tri = by[("total-triangle", "total_global")]
    assert tri["status"] == "violated" and tri["line"] == 10 and json.loads(tri["window"])[-1] == 10
    assert by[("total-triangle", "total")]["status"] == "holds" and by[("total-triangle", "total")]["line"] is None
    page = (out / "index.html").read_text()
    assert page.count("<svg") == sum(1 for r in rows if r["status"] == "violated")
    assert "Content-Security-Policy" in page and "<script" not in page
    md = (out / "report.md").read_text()
    assert "total\\-triangle.jsonl · total\\_global" in md and "- line 10: d received c1" in md
    assert not list(out.glob(".*.tmp"))


def test_html_escapes_names(tmp_path: Path) -> None:
    log = tmp_path / "x.jsonl"
    log.write_text('{"peer": "<b>", "kind": "send", "msg": "<i>1", "to": ["q"]}\n'
                   '{"peer": "<b>", "kind": "send", "msg": "<i>2", "to": ["q"]}\n'
                   '{"peer": "q", "kind": "deliver", "msg": "<i>2"}\n')
    out = tmp_path / "out"
    r = CliRunner().invoke(main, ["validate", str(log), "-p", "fifo", "-o", str(out)])
    assert r.exit_code == 1
    page = (out / "index.html").read_text()
    assert "<b>" not in page and "&lt;b&gt;" in page and "<i>" not in page


def test_generate_logs(tmp_path: Path) -> None:
    runner = CliRunner()
    out = tmp_path / "logs"
    model = ROOT / "models" / "sequencer-mutant-no-hold-back.toml"
    r = runner.invoke(main, ["generate-logs", str(model), "-o", str(out), "--runs", "5", "--faulty-only"])
    assert r.exit_code == 0, r.output
    files = sorted(out.glob("*.jsonl"))
    assert len(files) == 5
    for f in files:
        header = json.loads(f.read_text().splitlines()[0])
        assert header["model"].endswith("sequencer-mutant-no-hold-back.toml") and "violated" in header["expect"].values()
    v = runner.invoke(main, ["validate", str(out), "-p", "total,causal", "--json", str(tmp_path / "v.json")])
    assert v.exit_code == 1
    for rec, f in zip(json.loads((tmp_path / "v.json").read_text()), files):
        header = json.loads(f.read_text().splitlines()[0])
        for name, verdict in rec["properties"].items():
            if header["expect"].get(name) == "violated":
                assert verdict["status"] == "violated", (f.name, name)
    sv = tmp_path / "sv"
    r = runner.invoke(main, ["generate-logs", str(model), "-o", str(sv), "--runs", "3", "--format", "shiviz"])
    assert r.exit_code == 0 and len(list(sv.glob("*.shiviz.log"))) == 3
    assert runner.invoke(main, ["validate", str(sv), "-p", "integrity"]).exit_code == 0
    nohist = runner.invoke(main, ["generate-logs", str(ROOT / "models" / "restart-count.toml"), "-o", str(tmp_path / "n")])
    assert nohist.exit_code == 2 and "keeps no history" in nohist.output


def test_the_how_to_shows_what_validate_prints() -> None:
    """Each ``console`` session of docs/howto/trace-validation.md, run from the
    repository's root, prints the lines shown, in order."""
    import re
    import subprocess
    import sys

    page = (ROOT / "docs" / "howto" / "trace-validation.md").read_text(encoding="utf-8")
    sessions = re.findall(r"```console\n\$ \.venv/bin/ordercheck (.*?)\n(.*?)```", page, flags=re.S)
    assert len(sessions) == 4
    exe = str(Path(sys.executable).with_name("ordercheck"))
    for args, shown in sessions:
        run = subprocess.run([exe, *args.split()], cwd=ROOT, capture_output=True, text=True, timeout=300)
        assert run.returncode == 1, run.stderr
        assert run.stdout.splitlines() == shown.splitlines(), args


def test_split_above_needs_spark() -> None:
    r = CliRunner().invoke(main, ["validate", str(DATA / "fifo-in-order.jsonl"), "--split-above", "5"])
    assert r.exit_code == 2
    assert "--split-above" in r.output and "--engine spark" in r.output


ISSUE_28_LOG = (
    '{"format":"ordercheck-log","version":1,"peers":["a","b","c"]}\n'
    '{"peer":"a","kind":"signal_out","to":"b"}\n'
    '{"peer":"a","kind":"send","msg":"m1","to":["c"]}\n'
    '{"peer":"a","kind":"signal","to":"b"}\n'
    '{"peer":"b","kind":"send","msg":"m2","to":["c"]}\n'
    '{"peer":"c","kind":"deliver","msg":"m2"}\n'
    '{"peer":"c","kind":"deliver","msg":"m1"}\n'
    '{"peer":"b","kind":"signal_in","from":"a"}\n'
)


def test_a_one_line_signal_is_its_own_receipt(tmp_path: Path) -> None:
    """Issue 28: the one-line signal on line 4 carries m1's send to b, so m2 follows m1;
    paired with the older signal_out on line 2 it carried nothing and causal "held"."""
    log = tmp_path / "issue28.jsonl"
    log.write_text(ISSUE_28_LOG)
    result = CliRunner().invoke(main, ["validate", str(log), "-p", "causal,integrity"])
    assert result.exit_code == 1, result.output
    assert "causal VIOLATED (line 6), integrity holds" in result.output
    assert "a signalled b (line 4), b got a signal from a (line 4), b sent m2 to c (line 5)" in result.output


def test_a_log_without_events_is_bad_input(tmp_path: Path) -> None:
    """An empty file, blank lines or a header alone: exit 2, one line, nothing written."""
    header = '{"format": "ordercheck-log", "version": 1, "peers": ["a", "b"]}\n'
    good = tmp_path / "good.jsonl"
    good.write_text(ISSUE_28_LOG)
    for name, text in (("empty.jsonl", ""), ("blank.jsonl", "\n  \n\n"), ("header.jsonl", header),
                       ("header-blank.jsonl", header + "\n\n")):
        log = tmp_path / name
        log.write_text(text)
        out = tmp_path / f"{name}.json"
        result = CliRunner().invoke(main, ["validate", str(good), str(log), "--json", str(out)])
        assert result.exit_code == 2, (name, result.output)
        assert result.output.strip().splitlines()[-1] == f"ordercheck: error: {log}: no events (an empty file, blank lines or a header alone; a recording of nothing is no pass)"
        assert not out.exists()
    alone = tmp_path / "alone"
    alone.mkdir()
    (alone / "p.jsonl").write_text(header)
    (alone / "q.jsonl").write_text("")
    merged = CliRunner().invoke(main, ["validate", "--merge", str(alone)])
    assert merged.exit_code == 2 and "no events" in merged.output


def test_a_truncated_recording_is_bad_input(tmp_path: Path) -> None:
    """A recording cut in the middle of its last line: that line is not JSON, exit 2."""
    for cut in (10, 25, len(ISSUE_28_LOG) - 5, len(ISSUE_28_LOG) - 2):
        log = tmp_path / f"cut-{cut}.jsonl"
        log.write_text(ISSUE_28_LOG[:cut])
        result = CliRunner().invoke(main, ["validate", str(log)])
        assert result.exit_code == 2, (cut, result.output)
        last = ISSUE_28_LOG[:cut].count("\n") + 1
        assert f"{log}:{last}: is not valid JSON" in result.output


def test_generate_logs_leaves_out_walks_without_events(tmp_path: Path, monkeypatch) -> None:
    """A walk that recorded no event would be a log validate refuses (exit 2): it is
    left out, and said so."""
    from types import SimpleNamespace

    import ordercheck.checker.validate.generate as generate
    from ordercheck.checker.validate.log import Log

    real = generate.walk

    def walk(model, seed, depth, source=""):
        if seed % 2:
            return SimpleNamespace(faithful=True, log=Log(f"empty-{seed}", ["a", "b"]), verdicts={})
        return real(model, seed, depth, source)

    monkeypatch.setattr(generate, "walk", walk)
    out = tmp_path / "logs"
    result = CliRunner().invoke(main, ["generate-logs", str(ROOT / "models" / "bus1-2.toml"), "-o", str(out),
                                       "--runs", "2", "--depth", "3"])
    assert result.exit_code == 0, result.output
    assert "left out 1 walks that recorded no event" in result.output
    assert [p.name for p in out.glob("*.jsonl")] == ["bus1-2-0.jsonl"]  # 2 walks tried, the second empty
    assert CliRunner().invoke(main, ["validate", str(out), "-p", "fifo"]).exit_code == 0
