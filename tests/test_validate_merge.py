"""Per-process logs merged into one execution (``validate --merge``).

Generated logs of several models and mutants, and the hand-written ones, are split
into one file per peer (:func:`per_peer_logs`), written, read back and merged: every
property's verdict equals the single-file log's. The merge keeps each peer's order and
puts each send before its deliveries; a delivery whose send is in no file, logs that
wait for each other and a peer spread over two files are errors naming file and line.
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from click.testing import CliRunner

from ordercheck.checker.api.errors import InputError
from ordercheck.checker.cli import main
from ordercheck.checker.loading.modelfile import load_model
from ordercheck.checker.monitors import check
from ordercheck.checker.validate.checks import CHECKS, check_log
from ordercheck.checker.validate.generate import counterexample_logs, walk
from ordercheck.checker.validate.jsonl import write_jsonl
from ordercheck.checker.validate.log import DELIVER, DROP, FAIL, SEND, SIGNAL_IN, SIGNAL_OUT, Log
from ordercheck.checker.validate.merge import merge_logs, per_peer_logs
from ordercheck.checker.validate.readers import read_log
from ordercheck.checker.validate.verdicts import Job, validate_merged

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data" / "validate"
MODELS = ("bus1-3", "bus1-4-signal", "sequencer-mutant-no-hold-back", "skeen-mutant-min", "bss-mutant-no-fifo-condition",
          "matrix-mutant-no-fifo-condition", "lamport-mutant-no-wait", "synchronous-mutant-no-permission",
          "bus1-mutant-no-sync-sender")


def _write(log: Log, path: Path) -> str:
    buf = io.StringIO()
    write_jsonl(log, buf)
    path.write_text(buf.getvalue())
    return str(path)


def _split(log: Log, where: Path) -> list[str]:
    where.mkdir(parents=True, exist_ok=True)
    # reversed, so the merge cannot lean on the files' order matching the log's
    return [_write(part, where / f"{who}.jsonl") for who, part in reversed(per_peer_logs(log).items())]


def _key(log: Log, i: int) -> tuple:
    """Event ``i`` by names alone (peer order differs between the two logs)."""
    k, a = log.kind[i], log.arg[i]
    if k in (DELIVER, DROP, SEND):
        dests = sorted(log.peers[d] for d in log.msg_dests[a]) if k == SEND else []
        return k, log.msg_name[a], dests
    return k, log.peers[a] if k in (SIGNAL_IN, SIGNAL_OUT) else a


def _statuses(log: Log) -> dict[str, bool]:
    return {name: v is not None for name, v in check_log(log, list(CHECKS)).items()}


def _order_free(log: Log) -> list[str]:
    """The properties whose verdict the merge's order cannot change: all but
    global_lock when a peer fails (a fail drops the peer's waiting edges, so whether a
    cycle ever shows depends on when it failed, which per-process logs do not fix)."""
    if FAIL in log.kind:
        return [n for n in CHECKS if n != "global_lock"]
    return list(CHECKS)


@pytest.mark.parametrize("name", MODELS)
def test_merged_generated_logs_have_the_same_verdicts(name: str, tmp_path: Path) -> None:
    model = load_model(ROOT / "models" / f"{name}.toml")
    violated = set()
    walks = [walk(model, seed, 200) for seed in range(8)]
    if "mutant" in name:  # and simulate's shrunk counterexamples, which break what the mutant breaks
        walks += counterexample_logs(model, 300, 80, 0)
    for seed, w in enumerate(walks):
        paths = _split(w.log, tmp_path / str(seed))
        merged = merge_logs([read_log(p) for p in paths])
        assert len(merged) == len(w.log)
        want, got = _statuses(w.log), _statuses(merged)
        keep = _order_free(w.log)
        assert {n: got[n] for n in keep} == {n: want[n] for n in keep}, (seed, w.log.source)
        violated |= {n for n in keep if want[n]}
        # each peer's events in its own order
        for p in w.log.peers:
            mine = [_key(w.log, i) for i in range(len(w.log)) if w.log.peers[w.log.peer[i]] == p]
            theirs = [_key(merged, i) for i in range(len(merged)) if merged.peers[merged.peer[i]] == p]
            assert mine == theirs
    if "mutant" in name:
        assert violated, f"no walk of {name} breaks a property: the comparison shows nothing"


@pytest.mark.parametrize("path", sorted(DATA.glob("*.jsonl")), ids=lambda p: p.stem)
def test_merged_hand_written_logs(path: Path, tmp_path: Path) -> None:
    log = read_log(path)
    consumed = [i for i in range(len(log)) if log.kind[i] in (DELIVER, DROP)]
    if any(log.msg_send[log.arg[i]] < 0 for i in consumed):
        with pytest.raises(InputError, match="which none of the merged logs sends"):
            merge_logs([read_log(p) for p in _split(log, tmp_path)])
        return
    if any(log.msg_send[log.arg[i]] > i for i in consumed) or check(log, "integrity") is not None and any(
            log.kind[i] == SIGNAL_IN for i in range(len(log))):
        pytest.skip("the log breaks integrity by its cross-peer order alone, which per-process logs do not record")
    merged = merge_logs([read_log(p) for p in _split(log, tmp_path)])
    keep = _order_free(log)
    assert {n: v for n, v in _statuses(merged).items() if n in keep} == \
        {n: v for n, v in _statuses(log).items() if n in keep}


def test_violations_name_the_files(tmp_path: Path) -> None:
    a = tmp_path / "a.jsonl"
    b = tmp_path / "b.jsonl"
    a.write_text('{"peer":"a","kind":"send","msg":"a1","to":["b"]}\n{"peer":"a","kind":"send","msg":"a2","to":["b"]}\n')
    b.write_text('{"peer":"b","kind":"deliver","msg":"a2"}\n{"peer":"b","kind":"deliver","msg":"a1"}\n')
    verdict = validate_merged([str(b), str(a)], Job(("fifo", "causal")))
    fifo = verdict.properties["fifo"]
    assert fifo["status"] == "violated" and fifo["file"] == str(b) and fifo["line"] == 1
    assert f"{b} line 1" in fifo["explanation"] and f"{a} line 1" in fifo["explanation"]
    assert verdict.log == f"merge({b}, {a})"


def test_merge_errors(tmp_path: Path) -> None:
    a = tmp_path / "a.jsonl"
    b = tmp_path / "b.jsonl"
    a.write_text('{"peer":"a","kind":"send","msg":"a1","to":["b"]}\n')
    b.write_text('{"peer":"b","kind":"deliver","msg":"a1"}\n{"peer":"b","kind":"deliver","msg":"x9"}\n')
    with pytest.raises(InputError) as err:
        merge_logs([read_log(a), read_log(b)])
    assert err.value.line() == f"{b}:2: msg: b delivers x9, which none of the merged logs sends"
    # each waits for the other: a delivers b1 before sending a1, b delivers a1 before sending b1
    a.write_text('{"peer":"a","kind":"deliver","msg":"b1"}\n{"peer":"a","kind":"send","msg":"a1","to":["b"]}\n')
    b.write_text('{"peer":"b","kind":"deliver","msg":"a1"}\n{"peer":"b","kind":"send","msg":"b1","to":["a"]}\n')
    with pytest.raises(InputError) as err:
        merge_logs([read_log(a), read_log(b)])
    assert err.value.line().startswith(f"{a}:1: msg: waits for the send of b1 ({b}:2)")
    b.write_text('{"peer":"a","kind":"send","msg":"a2","to":["b"]}\n')
    a.write_text('{"peer":"a","kind":"send","msg":"a1","to":["b"]}\n')
    with pytest.raises(InputError, match=r"b.jsonl:1: peer: a's events are also in .*a.jsonl"):
        merge_logs([read_log(a), read_log(b)])
    b.write_text('{"peer":"b","kind":"signal_in","from":"a"}\n')
    with pytest.raises(InputError, match=r"b.jsonl:1: from: b receives signal number 1 from a, which sends it only 0"):
        merge_logs([read_log(a), read_log(b)])


def test_cli_merge(tmp_path: Path) -> None:
    w = walk(load_model(ROOT / "models" / "sequencer-mutant-no-hold-back.toml"), 3, 200)
    assert w.verdicts.get("total") == "violated"
    paths = _split(w.log, tmp_path / "run")
    runner = CliRunner()
    r = runner.invoke(main, ["validate", "--merge", str(tmp_path / "run"), "-p", "total,fifo"])
    assert r.exit_code == 1, r.output
    assert "1 logs" in r.output and "total VIOLATED" in r.output
    r = runner.invoke(main, ["validate", "--merge", *paths, "--engine", "spark"])
    assert r.exit_code == 2 and "--merge" in r.output
