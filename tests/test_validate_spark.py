"""``validate --engine spark`` on ``local[2]``: one task per log, the local engine's answers.

Kept small (one Spark context, a few dozen logs); the thousand-log comparison is in
benchmarks/validate_scale.py.
"""

from __future__ import annotations

import io
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from ordercheck.checker.api.errors import InputError
from ordercheck.checker.cli import main
from ordercheck.checker.loading.modelfile import load_model
from ordercheck.checker.validate.checks import CHECKS
from ordercheck.checker.validate.generate import walk
from ordercheck.checker.validate.jsonl import write_jsonl
from ordercheck.checker.validate.readers import expand_logs
from ordercheck.checker.validate.report import load_table
from ordercheck.checker.validate.verdicts import Job, validate_path

pytestmark = pytest.mark.spark

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data" / "validate"
MASTER = "local[2]"


@pytest.fixture(scope="module")
def logs(tmp_path_factory) -> Path:
    """Hand-written logs, and walks of correct and faulty models (one in a sub-directory)."""
    root = tmp_path_factory.mktemp("logs")
    for f in DATA.glob("*.jsonl"):
        shutil.copy(f, root / f.name)
    (root / "walks").mkdir()
    for name in ("bus1-3", "sequencer-mutant-no-hold-back", "skeen-mutant-min", "matrix-mutant-no-fifo-condition"):
        model = load_model(ROOT / "models" / f"{name}.toml")
        for seed in range(4):
            w = walk(model, seed, 200)
            buf = io.StringIO()
            write_jsonl(w.log, buf)
            (root / "walks" / f"{name}-{seed}.jsonl").write_text(buf.getvalue())
    return root


def _rows(verdicts) -> list[dict]:
    return [{k: v for k, v in row.items() if k != "seconds"} for v in verdicts for row in v.rows()]


def test_same_verdicts_as_local(spark, logs: Path) -> None:
    from ordercheck.checker.validate.spark_job import validate_spark

    job = Job(tuple(CHECKS))
    remote = validate_spark([str(logs)], job, master=MASTER)
    local = [validate_path(str(f), job) for f in expand_logs([str(logs)])]
    assert len(remote) == len(local) > 30
    assert _rows(remote) == _rows(local)
    assert any(v.violated for v in local) and any(not v.violated for v in local)


def _jobs_run(sc) -> int:
    """How many Spark jobs the context has run so far."""
    return len(sc.statusTracker().getJobIdsForGroup(None))


def test_small_logs_are_validated_on_the_driver_with_no_job(spark, logs: Path, monkeypatch) -> None:
    """Logs of fewer bytes together than the threshold are checked by the driver (a job
    costs more than they do), with the local engine's answers; at or above it, and with
    the threshold 0, they go to Spark's tasks."""
    from ordercheck.checker.validate.spark_job import DRIVER_BYTES, DRIVER_BYTES_ENV, validate_spark

    monkeypatch.delenv(DRIVER_BYTES_ENV, raising=False)
    job = Job(tuple(CHECKS))
    files = expand_logs([str(logs)])
    local = [validate_path(str(f), job) for f in files]
    total = sum(f.stat().st_size for f in files)
    assert 0 < total < DRIVER_BYTES
    before = _jobs_run(spark)
    assert _rows(validate_spark([str(logs)], job, master=MASTER)) == _rows(local)
    assert _jobs_run(spark) == before
    assert _rows(validate_spark([str(logs)], job, master=MASTER, driver_bytes=total)) == _rows(local)
    assert _jobs_run(spark) == before + 1
    monkeypatch.setenv(DRIVER_BYTES_ENV, "0")
    assert _rows(validate_spark([str(logs)], job, master=MASTER)) == _rows(local)
    assert _jobs_run(spark) == before + 2
    monkeypatch.setenv(DRIVER_BYTES_ENV, str(total + 1))
    assert _rows(validate_spark([str(logs)], job, master=MASTER)) == _rows(local)
    assert _jobs_run(spark) == before + 2


def test_the_driver_raises_the_first_bad_log_as_the_tasks_do(spark, logs: Path, tmp_path: Path) -> None:
    from ordercheck.checker.validate.spark_job import validate_spark

    for f in sorted((logs / "walks").glob("bus1-3-*.jsonl")):
        shutil.copy(f, tmp_path / f.name)
    (tmp_path / "bus1-3-1.jsonl").write_text('{"peer": "a", "kind": "send"}\n')
    (tmp_path / "bus1-3-2.jsonl").write_text("not json\n")
    job = Job(("fifo",))
    errors = []
    for driver_bytes in (0, 1 << 30):
        with pytest.raises(InputError) as caught:
            validate_spark([str(tmp_path)], job, master=MASTER, driver_bytes=driver_bytes)
        errors.append(str(caught.value))
    assert errors[0] == errors[1] and "bus1-3-1.jsonl" in errors[0]


def test_a_bad_driver_bytes_setting_is_one_line_naming_the_variable(monkeypatch, logs: Path) -> None:
    from ordercheck.checker.validate.spark_job import DRIVER_BYTES_ENV, validate_spark

    monkeypatch.setenv(DRIVER_BYTES_ENV, "4 MiB")
    with pytest.raises(InputError, match=f"environment variable {DRIVER_BYTES_ENV}: '4 MiB' is not a whole number of bytes"):
        validate_spark([str(logs)], Job(("fifo",)), master=MASTER)


def test_conformance_on_spark(spark, logs: Path) -> None:
    from ordercheck.checker.validate.spark_job import _large, validate_spark

    model = load_model(ROOT / "models" / "bus1-3.toml")
    job = Job((), model_path=model.path, model_raw=model.raw)
    paths = [str(logs / "walks" / "bus1-3-*.jsonl")]
    remote = validate_spark(paths, job, master=MASTER)
    local = [validate_path(str(f), job, model=model) for f in expand_logs(paths)]
    assert _rows(remote) == _rows(local)
    assert {v.conformance["status"] for v in remote} == {"conforms"}
    both = Job(("causal", "fifo"), model_path=model.path, model_raw=model.raw)  # in parts; conformance a group
    files = [str(f) for f in expand_logs(paths)]
    assert _large(files, both, 3) == set(files)
    remote = validate_spark(paths, both, master=MASTER, split_above=3)
    local = [validate_path(str(f), both, model=model) for f in expand_logs(paths)]
    assert _rows(remote) == _rows(local) and all(v.conformance is not None for v in remote)


def test_bad_log_is_the_same_error(spark, tmp_path: Path) -> None:
    from ordercheck.checker.validate.spark_job import validate_spark

    shutil.copy(DATA / "fifo-swapped.jsonl", tmp_path / "a.jsonl")
    (tmp_path / "b.jsonl").write_text('{"peer": "a", "kind": "send", "msg": "a1", "to": "b"}\n')
    (tmp_path / "c.jsonl").write_text('{"peer": "a"}\n')
    job = Job(("fifo",))
    with pytest.raises(InputError) as remote:
        validate_spark([str(tmp_path)], job, master=MASTER)
    with pytest.raises(InputError) as local:
        [validate_path(str(f), job) for f in expand_logs([str(tmp_path)])]
    assert remote.value.line() == local.value.line()
    assert remote.value.line().startswith(f"{tmp_path / 'b.jsonl'}:1: to: expected a non-empty list")


def test_cli_writes_the_same_table(spark, logs: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    args = ["validate", str(logs / "walks"), "-p", "fifo,causal,total,total_global", "--quiet"]
    r1 = runner.invoke(main, [*args, "--engine", "spark", "--master", MASTER, "-o", str(tmp_path / "s")])
    r2 = runner.invoke(main, [*args, "-o", str(tmp_path / "l")])
    assert r1.exit_code == r2.exit_code == 1, r1.output
    strip = lambda rows: [{k: v for k, v in r.items() if k != "seconds"} for r in rows]  # noqa: E731
    assert strip(load_table(tmp_path / "s")) == strip(load_table(tmp_path / "l"))
    assert "engine spark" in (tmp_path / "s" / "report.md").read_text()


def test_uris_are_read_by_spark(spark, logs: Path, tmp_path: Path) -> None:
    """A URI (here file://, with Hadoop's glob) is read by Spark itself; the verdicts
    are the local engine's, the logs named by their URIs. Local paths with spaces,
    commas and brackets in their names are read as they are."""
    from ordercheck.checker.validate.spark_job import validate_spark

    job = Job(("fifo", "causal", "total"))
    remote = validate_spark([(logs / "walks").as_uri() + "/skeen-mutant-min-*.jsonl"], job, master=MASTER)
    local = [validate_path(str(f), job) for f in expand_logs([str(logs / "walks" / "skeen-mutant-min-*.jsonl")])]
    assert len(remote) == len(local) == 4
    assert all(v.log.startswith("file:") for v in remote)
    drop = lambda rows: [{k: v for k, v in r.items() if k != "log"} for r in rows]  # noqa: E731
    assert drop(_rows(remote)) == drop(_rows(local))
    odd = tmp_path / "a b,c"
    odd.mkdir()
    shutil.copy(DATA / "fifo-swapped.jsonl", odd / "x[1].jsonl")
    found = validate_spark([str(odd)], Job(("fifo",)), master=MASTER)
    assert [(Path(v.log).name, v.violated) for v in found] == [("x[1].jsonl", ["fifo"])]
    with pytest.raises(InputError, match="no file matches this URI"):
        validate_spark([(tmp_path / "none").as_uri() + "/*.jsonl"], job, master=MASTER)


def _records(verdicts) -> list[dict]:
    return [{k: v for k, v in verdict.to_json().items() if k != "seconds"} for verdict in verdicts]


def test_large_logs_read_and_checked_in_parts(spark, tmp_path: Path) -> None:
    """With a threshold of 5 lines every larger JSON Lines log is read in two parts by
    two tasks, joined, and its properties checked by two more (causal in one, the rest
    in the other). Each log's record (first violation's event, line, sentence and
    window) and diagrams are those of the local engine, on hand-written edge cases and
    on synthetic logs with and without a fault; a ShiViz log is never cut."""
    from ordercheck.checker.validate.generate import synthetic_log
    from ordercheck.checker.validate.spark_job import _large, validate_spark

    for f in DATA.glob("*.jsonl"):
        shutil.copy(f, tmp_path / f.name)
    for fault in (None, "fifo", "total"):
        with (tmp_path / f"synthetic-{fault}.jsonl").open("w") as fh:
            write_jsonl(synthetic_log(600, 5, seed=7, fault=fault), fh)
    from ordercheck.checker.validate.diagram import timeline_of
    from ordercheck.checker.validate.readers import read_log
    from ordercheck.reports.shiviz import shiviz_log

    (tmp_path / "c.shiviz.log").write_text(shiviz_log(timeline_of(read_log(DATA / "fifo-swapped.jsonl"))))
    job = Job(("fifo", "integrity", "causal", "total"))
    files = [str(f) for f in expand_logs([str(tmp_path)])]
    big = str(tmp_path / "synthetic-fifo.jsonl")
    assert big in _large(files, job, 5) and big not in _large(files, job, 10_000)
    assert not any(f.endswith(".shiviz.log") for f in _large(files, job, 5))
    remote = validate_spark([str(tmp_path)], job, master=MASTER, split_above=5, diagrams=True)
    local = [validate_path(str(f), job, diagrams=True) for f in expand_logs([str(tmp_path)])]
    assert _records(remote) == _records(local)
    assert [v.diagrams for v in remote] == [v.diagrams for v in local]
    broken = {name for v in local for name in v.violated}
    assert {"fifo", "integrity", "causal", "total"} <= broken


class _Broadcast:
    """A stand-in for a Spark broadcast that records whether its value was read."""

    def __init__(self, value) -> None:
        self._value, self.read = value, False

    @property
    def value(self):
        self.read = True
        return self._value


def test_a_checking_task_reads_only_its_own_logs_parts(tmp_path: Path) -> None:
    """Each large log's parts are a broadcast of their own, and a checking task reads
    only its log's (a task's memory holds one large log, however many are validated
    together); its verdict is the local engine's."""
    import pickle

    from ordercheck.checker.validate.chunks import plan, read_part
    from ordercheck.checker.validate.spark_job import _check_task

    job = Job(("fifo", "causal"))
    shared = {}
    for name in ("a", "b"):
        path = tmp_path / f"{name}.jsonl"
        shutil.copy(DATA / "fifo-swapped.jsonl", path)
        shared[str(path)] = _Broadcast([pickle.dumps(read_part(str(path), part)) for part in plan(str(path), 2)])
    source, g, verdict = _check_task(job, False, shared, (str(tmp_path / "a.jsonl"), 0, job))
    assert (source, g) == (str(tmp_path / "a.jsonl"), 0)
    assert [b.read for b in shared.values()] == [True, False]
    local = validate_path(str(tmp_path / "a.jsonl"), job)
    assert verdict is not None and verdict.violated == local.violated == ["fifo", "causal"]


def test_batches_raise_the_first_bad_log_in_order(spark, logs: Path, tmp_path: Path) -> None:
    """Logs are validated in batches; two bad logs (one cut in parts, one in a batch)
    among good and violating ones: the error raised is the first bad log's in the local
    engine's order, with its line and words."""
    from ordercheck.checker.validate.spark_job import validate_spark

    for i, f in enumerate(sorted((logs / "walks").glob("*.jsonl"))):
        shutil.copy(f, tmp_path / f"{i:02d}.jsonl")
    good = (tmp_path / "00.jsonl").read_text()
    send = next(line for line in good.splitlines() if '"send"' in line)
    (tmp_path / "05a.jsonl").write_text(good + send + "\n")  # a send repeated: cut in parts
    (tmp_path / "09a.jsonl").write_text('{"peer": "a"}\n')
    job = Job(("fifo", "causal", "total"))
    with pytest.raises(InputError) as remote:
        validate_spark([str(tmp_path)], job, master=MASTER, split_above=5)
    with pytest.raises(InputError) as local:
        [validate_path(str(f), job) for f in expand_logs([str(tmp_path)])]
    assert remote.value.line() == local.value.line()
    assert remote.value.line().startswith(f"{tmp_path / '05a.jsonl'}:")
    (tmp_path / "05a.jsonl").unlink()
    with pytest.raises(InputError) as remote:
        validate_spark([str(tmp_path)], job, master=MASTER)
    assert remote.value.line().startswith(f"{tmp_path / '09a.jsonl'}:1: kind: missing")


def test_run_explores_schedule_prefixes_as_spark_tasks_and_counts_what_local_exploration_counts(spark, tmp_path):
    # ordercheck run --explore --engine spark (issue 36): one task per schedule prefix of 2 steps, each exploring
    # below its prefix (the nodes started on the executor); without DPOR the tasks' schedules add up to the
    # local exploration's
    import sys

    node = f"{sys.executable} -S {ROOT / 'examples' / 'nodes' / 'causal_broadcast.py'}"
    args = ["run", "--node-cmd", node, "--nodes", "2", "--explore", "--no-dpor", "--replay-out", str(tmp_path / "r.json")]
    local = CliRunner().invoke(main, args, catch_exceptions=False)
    assert local.exit_code == 0, local.output
    assert "6 schedules run (explored, no DPOR, 2 nodes, 2 broadcasts)" in local.output
    remote = CliRunner().invoke(main, [*args, "--engine", "spark", "--master", MASTER, "--prefix-depth", "2"],
                                catch_exceptions=False)
    assert remote.exit_code == 0, remote.output
    rows = [line.split() for line in remote.output.splitlines()[2:6]]
    assert [(r[0], r[1], r[-4:]) for r in rows] == [
        ("1", "1", ["1;", "n1->n2", "cb", "1"]), ("2", "2", ["1;", "c1->n2", "broadcast", "2"]),
        ("3", "1", ["2;", "n2->n1", "cb", "2"]), ("4", "2", ["2;", "c1->n1", "broadcast", "1"])]
    assert ("6 schedules run (explored, no DPOR, below each of 4 prefixes of 2 steps, engine spark, 2 nodes, "
            "2 broadcasts)") in remote.output
