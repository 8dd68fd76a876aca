"""`report --summary`: a pull-request summary under 60,000 characters, whatever the suite,
with the unexpected verdicts' traces, and `--diff BASELINE.json`: what changed since it."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path

import pytest
from faults_helpers import invoke, one_error_line
from reports_helpers import MODELS, checked
from suite_helpers import suite_results

from ordercheck.checker.api.result import PropertyResult, Result, Step
from ordercheck.reports.summary import SUMMARY_LIMIT, TRACE_STEPS, compare, render_summary, trace_lines
from ordercheck.reports.view import build_report

CUT = "… cut here"  # render_summary's last resort: a summary that needs it has a room miscounted


def write(path: Path, results: list[Result]) -> Path:
    path.write_text(json.dumps([r.to_json() for r in results]), encoding="utf-8")
    return path


def copy(result: Result) -> Result:
    return Result.from_json(result.to_json())


def outside_code(text: str) -> str:
    """``text`` without its fenced code blocks (whose content Markdown shows as it is),
    checking that each block is closed by a fence as long as the one that opened it."""
    out, fence = [], ""
    for line in text.splitlines():
        if fence:
            if line == fence:
                fence = ""
        elif line.startswith("```"):
            fence = line[: len(line) - len(line.lstrip("`"))]
        else:
            out.append(line)
    assert not fence, "a code block left open"
    return "\n".join(out)


def test_an_unexpected_verdict_shows_its_trace_and_links_to_its_page(tmp_path: Path) -> None:
    broken = copy(checked("fifo-4"))
    broken.properties["causal"].expected = "holds"  # the guarantee, now broken
    results = write(tmp_path / "results.json", [broken, checked("fifo-2")])
    out = invoke("report", results, "-o", tmp_path / "rep", "--summary")
    assert out.returncode == 0, out.stderr
    assert f"summary: {tmp_path / 'rep' / 'summary.md'}" in out.stdout
    text = (tmp_path / "rep" / "summary.md").read_text(encoding="utf-8")
    assert "**2 models: 1 as expected, 1 with an unexpected verdict (1 of 10 verdicts), 0 stopped by a bound**" in text
    assert "### ⚠️ fifo\\-4 · causal: violated, expected holds" in text
    assert "fifo\\-4 · total" not in text, "a violation the model expects is not listed as unexpected"
    assert "[trace page](traces/fifo-4--causal.html) (6 steps)" in text
    assert (tmp_path / "rep" / "traces" / "fifo-4--causal.html").is_file()
    assert "[fifo\\-4 in the report](index.html#model-fifo-4)" in text
    assert 'id="model-fifo-4"' in (tmp_path / "rep" / "index.html").read_text(encoding="utf-8")
    block = text.split("```text\n", 1)[1].split("```", 1)[0]
    for i, step in enumerate(broken.properties["causal"].trace or []):  # every step of the shortest trace
        assert f"{i:>3}. {step.action or 'initial state'}" in block
    assert "⬅" in block, "the offending delivery is marked"
    # by spec: holds 4 + 2, violated as expected 2, reached 1, unreached ·, unexpected 1, unknown ·
    assert "| fifo | 2 | 6 | 2 | 1 | · | 1 | · |" in text
    # a report written again without --summary leaves no stale summary behind
    assert invoke("report", results, "-o", tmp_path / "rep").returncode == 0
    assert not (tmp_path / "rep" / "summary.md").exists()


def test_diff_shows_changed_verdicts_models_added_and_removed_and_state_counts(tmp_path: Path) -> None:
    before = copy(checked("fifo-4"))
    before.properties["causal"].status = "holds"
    before.properties["causal"].trace = None
    before.stats.distinct_states = 70
    before.properties["old_prop"] = PropertyResult("old_prop", "always", "holds", "holds")  # not checked now
    gone = copy(checked("fifo-2"))
    gone.model = "models/gone.toml"
    baseline = write(tmp_path / "base.json", [before, gone])
    results = write(tmp_path / "results.json", [checked("fifo-4"), checked("fifo-2")])
    out = invoke("report", results, "-o", tmp_path / "rep", "--diff", baseline)
    assert out.returncode == 0, out.stderr
    text = (tmp_path / "rep" / "summary.md").read_text(encoding="utf-8")
    assert ("Compared with `base.json` (2 models): 2 verdicts changed, 1 model added, 1 removed, "
            "1 state count changed.") in text
    assert "| [fifo\\-4](index.html#model-fifo-4) | causal | holds | violated | ✓ as expected |" in text
    assert "| [fifo\\-4](index.html#model-fifo-4) | old\\_prop | holds | not checked | — |" in text
    assert "### Models added\n\n- [fifo\\-2](index.html#model-fifo-2)\n" in text
    assert "### Models removed\n\n- gone\n" in text
    assert "| [fifo\\-4](index.html#model-fifo-4) | 70 | 80 | +14.3% |  |" in text
    # against itself: nothing changed, and no table says otherwise
    out = invoke("report", results, "-o", tmp_path / "same", "--diff", results, "--summary-url", "https://ci.example/r 1")
    assert out.returncode == 0, out.stderr
    same = (tmp_path / "same" / "summary.md").read_text(encoding="utf-8")
    assert "0 verdicts changed, 0 models added, 0 removed, 0 state counts changed." in same
    assert "###" not in same.split("## Since the baseline", 1)[1].split("\n## ", 1)[0]
    assert "[index.html](https://ci.example/r%201/index.html)" in same


def test_a_state_count_change_names_reductions_switched_differently_only() -> None:
    """"reductions differ" beside a changed state count when a reduction is on in one
    record and off in the other; an older record lacking a key its version did not
    report (off in the newer one) is no difference."""
    now = copy(checked("fifo-4"))
    older = copy(now)
    older.stats.distinct_states += 1
    older.reductions = {k: v for k, v in now.reductions.items() if v}  # the keys that are off: unknown then
    assert older.reductions != now.reductions
    (change,) = compare([now], [older], "base.json").states
    assert change.note == ""
    off = next(k for k, v in now.reductions.items() if not v)
    older.reductions = {**now.reductions, off: True}
    (change,) = compare([now], [older], "base.json").states
    assert change.note == "reductions differ"


def test_a_bound_is_said_with_how_far_the_search_got() -> None:
    from ordercheck.checker.engine.run import Options, check_model
    from ordercheck.checker.loading.modelfile import load_model

    stopped = check_model(load_model(MODELS / "fifo-4.toml"), Options(progress=False, max_states=20))
    text = render_summary(build_report([stopped, checked("fifo-2")]))
    assert "**2 models: 1 as expected, 0 with an unexpected verdict (0 of 10 verdicts), 1 stopped by a bound**" in text
    assert ("- [fifo\\-4](index.html#model-fifo-4): stopped by max\\_states \\(max\\_states = 20\\), after 20 states "
            f"to depth {stopped.stats.depth}; unknown: causal, total, global\\_lock, eventual\\_delivery, "
            "deadlock\\_free\n") in text
    assert "fifo\\-2](" not in text.split("## Stopped by a bound", 1)[1]


def _ablation_record() -> dict:
    r = checked("fifo-2").to_json()
    return {"kind": "ablation", "model": "models/fifo-2.toml", "spec": "fifo", "baseline": r, "ablations": []}


@pytest.mark.parametrize("content, line", [
    (lambda: [dict(checked("fifo-2").to_json(), properties={"fifo": {"kind": "always", "status": "fine"}})],
     "[0].properties.fifo.status: expected one of 'holds', 'violated', 'unknown', found 'fine'"),
    (lambda: {"model": "m.toml", "spec": "fifo", "properties": {}, "stats": {"distinct_states": "many"}},
     "stats.distinct_states: expected an integer, found a string"),
    (_ablation_record, "holds no `check --json` result to compare with (an `ablate` or `prove` record is not a "
                       "baseline)"),
])
def test_a_bad_baseline_exits_2_with_one_line_naming_the_file_and_field(tmp_path: Path, content, line: str) -> None:
    bad = tmp_path / "base.json"
    bad.write_text(json.dumps(content()), encoding="utf-8")
    results = write(tmp_path / "results.json", [checked("fifo-2")])
    out = invoke("report", results, "-o", tmp_path / "rep", "--diff", bad)
    assert out.returncode == 2, out.stdout + out.stderr
    assert one_error_line(out.stderr) == f"ordercheck: error: {bad}: {line}"
    assert not (tmp_path / "rep").exists(), "nothing written"


def test_a_long_trace_keeps_its_first_steps_and_its_end() -> None:
    trace = [Step(None if j == 0 else f"step {j}", None, {"n": j}, 0) for j in range(40)]
    prop = PropertyResult("p", "eventually", "violated", "holds", "never", trace, loop_start=30)
    view = build_report([Result("models/long.toml", "not-installed", {}, "local", {}, {"p": prop})])
    lines = trace_lines(view.traces[0])
    shown = [int(m) for line in lines for m in re.findall(r"^ *(\d+)\. ", line)]
    assert shown == [0, 1, *range(40 - (TRACE_STEPS - 2), 40)]
    assert f"     … steps 2–{39 - (TRACE_STEPS - 2)} left out (see the trace page)" in lines
    assert lines[-3:] == [" 39. step 39 ⬅", "       n: 38 → 39", "     (a run that never ends: steps 31–39 repeat for ever)"]


HOSTILE = '<script>&"|`*_[x](y)' * 40


def _hostile_suite() -> tuple[list[Result], list[Result]]:
    """120 models of a spec not installed here (nothing to replay), every name, value
    and explanation long and full of markup, every verdict unexpected with a 40-step
    trace; and a baseline in which every verdict and state count differs and a third
    of the models are missing."""
    state = {HOSTILE: [HOSTILE] * 20, "n": 0}
    results, baseline = [], []
    for i in range(120):
        props = {}
        for k in range(3):
            name = f"{HOSTILE}{k}"
            trace = [Step(None if j == 0 else f"{HOSTILE} step {j}", None, dict(state, n=j), 0) for j in range(40)]
            props[name] = PropertyResult(name, "always", "violated", "holds", HOSTILE * 5, trace)
        r = Result(f"models/{HOSTILE}-{i}.toml", f"{HOSTILE}spec{i % 60}", {"c": HOSTILE}, "local", {}, props)
        r.stats.distinct_states = 1000 + i
        results.append(r)
        if i % 3:
            b = copy(r)
            for p in b.properties.values():
                p.status, p.trace = "holds", None
            b.stats.distinct_states = 10 + i
            baseline.append(b)
    return results, baseline


def test_no_suite_can_push_the_summary_past_the_limit() -> None:
    results, baseline = _hostile_suite()
    view = build_report(results)
    text = render_summary(view, compare(results, baseline, "base.json"), "https://" + "x" * 990)
    assert len(text) < SUMMARY_LIMIT and CUT not in text
    for more in ("more changed verdicts", "more added models", "more unexpected verdicts", "more specs"):
        assert more in text, more
    assert "<script" not in outside_code(text) and "<script" in text, "markup escaped, but shown as is in a trace"
    # each 40-step trace, too long for its 4,000 characters, keeps its start and as much of its end as fits
    block = text.split("```text\n", 1)[1].split("\n```", 1)[0]
    assert len(block) <= 4_000
    shown = [int(m) for m in re.findall(r"^ *(\d+)\. ", block, flags=re.M)]
    first = shown[2]
    assert shown == [0, 1, *range(first, 40)] and first > 20, shown
    assert f"\n     … steps 2–{first - 1} left out (see the trace page)\n" in block
    assert max(len(line) for line in text.splitlines() if line.startswith(" 39. ")) <= 200


@pytest.fixture(scope="module")
def suite() -> list[Result]:
    """The built-in suite's results with every verdict the one its model file expects,
    built from the model files without checking them (:func:`suite_helpers.suite_results`):
    the suite passes (`check models/` exits 0), so these are its verdicts, and checking
    136 models here would cost about 25 s of CPU. The traces a real run adds are covered
    by the hostile suite above, whose every trace is long."""
    results = suite_results()
    assert len(results) == len(list(MODELS.glob("*.toml"))) and all(r.exit_code() == 0 for r in results)
    return results


@pytest.mark.slow
def test_the_whole_suites_summary_is_under_the_limit(suite: list[Result]) -> None:
    n = len(suite)
    text = render_summary(build_report(suite))
    assert len(text) < SUMMARY_LIMIT and CUT not in text
    assert f"**{n} models: {n} as expected, 0 with an unexpected verdict" in text
    # the worst the suite can give: every verdict unexpected, every one and every state
    # count changed since a baseline that lacks a third of the models
    before = [replace(r, properties={n: replace(p, status="unknown", trace=None) for n, p in r.properties.items()},
                      stats=replace(r.stats, distinct_states=r.stats.distinct_states + 1))
              for k, r in enumerate(suite) if k % 3]
    flipped = [replace(r, properties={n: replace(p, expected="holds" if p.status != "holds" else "violated")
                                      for n, p in r.properties.items()}) for r in suite]
    text = render_summary(build_report(flipped), compare(flipped, before, "base.json"))
    assert len(text) < SUMMARY_LIMIT and CUT not in text
    assert "more unexpected verdicts" in text and outside_code(text)
    assert "### Verdicts changed" in text and "### State counts changed" in text and "### Models added" in text


def test_check_report_summary_is_what_report_summary_writes(tmp_path: Path) -> None:
    before = copy(checked("fifo-4"))
    before.properties["causal"].status = "holds"
    before.properties["causal"].trace = None
    baseline = write(tmp_path / "base.json", [before])
    models = [MODELS / "fifo-4.toml", MODELS / "fifo-2.toml"]
    out = invoke("check", *models, "--quiet", "--json", tmp_path / "r.json", "--report", tmp_path / "rep",
                 "--diff", baseline, "--summary-url", "https://ci.example/rep/")
    assert out.returncode == 0, out.stdout + out.stderr
    assert f"summary: {tmp_path / 'rep' / 'summary.md'}" in out.stdout
    by_check = (tmp_path / "rep" / "summary.md").read_text(encoding="utf-8")
    assert "Compared with `base.json` (1 model): 1 verdict changed, 1 model added" in by_check
    assert "[index.html](https://ci.example/rep/index.html)" in by_check
    again = invoke("report", tmp_path / "r.json", "-o", tmp_path / "rep2", "--diff", baseline,
                   "--summary-url", "https://ci.example/rep/")
    assert again.returncode == 0, again.stderr
    assert (tmp_path / "rep2" / "summary.md").read_text(encoding="utf-8") == by_check
    # --summary alone, and a report written again without it removes the old summary
    assert invoke("check", *models, "--quiet", "--report", tmp_path / "rep", "--summary").returncode == 0
    assert "## Since the baseline" not in (tmp_path / "rep" / "summary.md").read_text(encoding="utf-8")
    assert invoke("check", *models, "--quiet", "--report", tmp_path / "rep").returncode == 0
    assert not (tmp_path / "rep" / "summary.md").exists()


@pytest.mark.parametrize("args, line", [
    (["--report", "rep", "--diff", "bad.json"],
     "ordercheck: error: bad.json: stats.distinct_states: expected an integer, found a string"),
    (["--report", "rep", "--summary", "--summary-url", "x" * 1001],
     "ordercheck: error: --summary-url: longer than 1,000 characters"),
    (["--summary"], "Error: --summary writes summary.md into the report directory: give --report DIR too"),
    (["--report", "rep", "--summary-url", "https://ci.example/"],
     "Error: --summary-url sets the summary's links: give --summary (or --diff) too"),
])
def test_check_refuses_a_summary_it_cannot_write_before_searching(tmp_path: Path, monkeypatch, args, line) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bad.json").write_text(json.dumps({"model": "m.toml", "spec": "fifo", "properties": {},
                                                   "stats": {"distinct_states": "many"}}), encoding="utf-8")
    out = invoke("check", MODELS / "fifo-2.toml", "--json", "r.json", *args)
    assert out.returncode == 2, out.stdout + out.stderr
    assert out.stderr.rstrip().splitlines()[-1] == line
    assert "distinct states" not in out.stdout + out.stderr, "refused before the search"
    assert not (tmp_path / "rep").exists() and not (tmp_path / "r.json").exists(), "nothing written"


def test_check_writes_nothing_when_the_summary_fails(tmp_path: Path, monkeypatch) -> None:
    from ordercheck.reports import summary

    def broken(*_args, **_kw):
        raise RuntimeError("the summary failed")

    monkeypatch.setattr(summary, "render_summary", broken)
    with pytest.raises(RuntimeError, match="the summary failed"):
        invoke("check", MODELS / "fifo-2.toml", "--quiet", "--json", tmp_path / "r.json", "--junit",
               tmp_path / "j.xml", "--report", tmp_path / "rep", "--summary")
    assert sorted(p.name for p in tmp_path.iterdir()) == [], "the report, the JSON and the JUnit XML all or nothing"
