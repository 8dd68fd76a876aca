"""The documentation: ``make docs`` builds it, and a broken link or reference fails it.

The build is Sphinx with ``docs/conf.py`` (README.md included as the front page), run
as ``make docs`` runs it: every warning an error, Python cross-references checked. The
pages that describe the code's own tables (exit codes, the JSON record) are checked
against the code, so they cannot drift from it unnoticed.
"""

from __future__ import annotations

import glob
import os
import re
import shlex
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import click
import pytest

from ordercheck.checker.api.result import (
    EXIT_BOUND,
    EXIT_ENGINE,
    EXIT_INPUT,
    EXIT_MISMATCH,
    EXIT_OK,
    EXIT_OS,
    EXIT_SIGINT,
    EXIT_SIGTERM,
    EXIT_SPEC,
)
from ordercheck.checker.engine.run import Options, check_model
from ordercheck.checker.loading.modelfile import load_model

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
sys.path.insert(0, str(DOCS / "_ext"))

from ordercheck_docs import cli, find_object  # noqa: E402  (docs/_ext: the build's own helpers)

pytestmark = pytest.mark.docs


def sphinx(source: Path, out: Path) -> subprocess.CompletedProcess[str]:
    """``make docs``'s build of ``source`` into ``out``."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run(
        [sys.executable, "-m", "sphinx", "-E", "-W", "--keep-going", "-n", "-q", "-b", "html", str(source), str(out)],
        capture_output=True, text=True, timeout=300, env=env,
    )


def make_docs_command() -> str:
    """The sphinx-build line of the Makefile's ``docs`` target."""
    lines = (ROOT / "Makefile").read_text(encoding="utf-8").splitlines()
    start = lines.index(next(line for line in lines if line.startswith("docs:")))
    return next(line.strip() for line in lines[start + 1 :] if "sphinx-build" in line)


def test_make_docs_runs_the_strict_build() -> None:
    """The test builds what ``make docs`` builds, with the same strictness."""
    command = make_docs_command()
    for flag in ("-W", "--keep-going", "-n", "-E", "-b html", "docs build/docs"):
        assert flag in command, flag


@pytest.fixture(scope="module")
def built_docs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The pages ``make docs`` builds, built once for the tests that read them."""
    out = tmp_path_factory.mktemp("docs") / "html"
    run = sphinx(DOCS, out)
    assert run.returncode == 0, run.stdout + run.stderr
    return out


def test_docs_build(built_docs: Path) -> None:
    out = built_docs
    # README.md is the front page, and its tour made it in.
    index = (out / "index.html").read_text(encoding="utf-8")
    assert "A five-minute tour" in index and "report-causal.png" in index
    # The command-line reference is generated: every command of the group is there.
    cli_page = (out / "reference" / "cli.html").read_text(encoding="utf-8")
    for name in cli.list_commands(click.Context(cli)):
        assert f'id="ordercheck-{name}"' in cli_page, name
    # The spec API is generated from the docstrings of the public classes.
    api = (out / "reference" / "spec-api.html").read_text(encoding="utf-8")
    for target in ("ordercheck.checker.Spec.next_states", "ordercheck.specs.base.PeerSpec", "ordercheck.specs.async_peers.AsyncPeerSpec.protocol_steps",
                   "ordercheck.specs.holdback.HoldBackSpec.deliverable"):
        assert f'id="{target}"' in api, target
    # Each optional protocol of a spec has its own page, generated from its docstrings.
    for page, target in (("reductions", "ordercheck.checker.Symmetry.permute"), ("reductions", "ordercheck.checker.PartialOrder.footprints"),
                         ("rendering", "ordercheck.checker.Rendering.format_action"),
                         ("tla-adaptation", "ordercheck.tla.adapters.base.Adapter.encode"),
                         ("tla-adaptation", "ordercheck.tla.adapters.base.Adapter.decode"),
                         ("tla-adaptation", "ordercheck.tla.adapters.base.PeerAdapter.stride"),
                         ("tla-adaptation", "ordercheck.tla.adapters.base.PeerAdapter.names"),
                         ("tla-adaptation", "ordercheck.tla.adapters.base.PeerAdapter.mid"),
                         ("tla-adaptation", "ordercheck.tla.adapters.async_peers.AsyncAdapter.encode_chans"),
                         ("tla-adaptation", "ordercheck.tla.adapters.async_peers.AsyncAdapter.procs"),
                         ("tla-adaptation", "ordercheck.tla.values.parse_value")):
        assert f'id="{target}"' in (out / "reference" / f"{page}.html").read_text(encoding="utf-8"), target
    # Built-in specs are listed from the registry, constants and all.
    specs_page = (out / "reference" / "builtin-specs.html").read_text(encoding="utf-8")
    assert "tiebreak_by_sender" in specs_page and "receive_fairness" in specs_page
    # With what each spec says of the channel faults (Lamport's assumes FIFO links).
    assert "Channel faults a model may ask for: tolerates duplication, loss; breaks under reordering." in specs_page


class _VisibleText(HTMLParser):
    """The text a reader sees on a page: not scripts or styles, and not code listings
    (``<pre>``), where a docstring quoted as an example may hold markup on purpose."""

    HIDDEN = ("script", "style", "pre")

    def __init__(self) -> None:
        super().__init__()
        self.hidden = 0
        self.parts: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.hidden += tag in self.HIDDEN

    def handle_endtag(self, tag: str) -> None:
        self.hidden -= tag in self.HIDDEN

    def handle_data(self, data: str) -> None:
        if not self.hidden:
            self.parts.append(data)


def visible_text(page: Path) -> str:
    parser = _VisibleText()
    parser.feed(page.read_text(encoding="utf-8"))
    return "".join(parser.parts)


#: Markup that shows when a docstring's reStructuredText (or a MyST role) reaches a page
#: unparsed: ``literal``, :role:`target`, `link`_, ``.. directive::``, {role}`target`.
RAW_MARKUP = re.compile(r"``|(?<![\w`]):(?:[a-z]+:)?[a-z]+:`|`__?\b|^\s*\.\. [a-z][\w:-]*::|\{[a-z][\w:-]*\}`", re.M)


def test_no_page_shows_raw_markup(built_docs: Path) -> None:
    """Every built page's text is rendered markup: the docstrings shown on generated
    pages (the built-in specs' tables, the API reference) are parsed, not pasted."""
    pages = sorted(built_docs.rglob("*.html"))
    assert any(p.name == "builtin-specs.html" for p in pages)
    found = [f"{page.relative_to(built_docs)}: ...{text[max(0, m.start() - 40):m.end() + 20]!r}..."
             for page in pages for text in [visible_text(page)] for m in RAW_MARKUP.finditer(text)]
    assert not found, f"{len(found)} raw markup shown, first: " + "\n".join(found[:10])


def test_raw_markup_is_found(tmp_path: Path) -> None:
    """The search above finds each kind of raw markup in a page's visible text, and not
    in a code listing, a script or rendered text."""
    for raw in ("a ``q`` b", "see :func:`total_prefix`", "see :py:class:`Spec`", "the `guide <x.html>`_",
                ".. note::", "{func}`total`"):
        assert RAW_MARKUP.search(raw), raw
    for fine in ("time: 12:30", "x: `y`", "`q`", "a_b `c`"):
        assert not RAW_MARKUP.search(fine), fine
    page = tmp_path / "page.html"
    page.write_text("<p>a <code>q</code> and <em>:func:`f`</em></p><pre>``q``</pre><script>x = '``'</script>",
                    encoding="utf-8")
    assert [m.group(0) for m in RAW_MARKUP.finditer(visible_text(page))] == [":func:`"]


BREAKS = {
    "a README link to a page that does not exist": ("README.md", "(docs/howto/ci.md)", "(docs/howto/no-such-guide.md)",
                                                   "no-such-guide.md"),
    "a link between pages to a page that does not exist": ("docs/howto/index.md", "Recipes for a task at hand.",
                                                          "Recipes for [a task](no-such-page.md).", "no-such-page.md"),
    "a link to a heading that does not exist": ("docs/reference/cli.md", "(exit-codes.md)",
                                                "(exit-codes.md#no-such-heading)", "no-such-heading"),
    "a Python reference to nothing": ("docs/reference/spec-api.md", "{class}`ordercheck.checker.Spec` | anything",
                                      "{class}`ordercheck.checker.NoSuchSpec` | anything", "ordercheck.checker.NoSuchSpec"),
}


# The pages the broken copy holds: the build's set-up, the pages broken above and the page
# a broken heading link points into (the other pages' absence adds warnings of its own,
# which the test does not count; building every page again took a third of this file).
BROKEN_COPY = ("conf.py", "_ext", "index.md", "howto/index.md", "reference/cli.md", "reference/exit-codes.md",
               "reference/spec-api.md")


def test_each_broken_link_fails_the_build(tmp_path: Path) -> None:
    """A copy of the docs with the broken links and references above does not build,
    and the build names each one (``--keep-going`` reports them all)."""
    copy = tmp_path / "repo"
    for name in BROKEN_COPY:
        source, target = DOCS / name, copy / "docs" / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.is_dir():
            shutil.copytree(source, target, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy(source, target)
    for name in ("README.md", "pyproject.toml"):
        shutil.copy(ROOT / name, copy / name)
    for case, (path, old, new, _named) in BREAKS.items():
        text = (copy / path).read_text(encoding="utf-8")
        assert old in text, f"{case}: {path} no longer holds {old!r}; update this test"
        (copy / path).write_text(text.replace(old, new, 1), encoding="utf-8")
    run = sphinx(copy / "docs", tmp_path / "html")
    assert run.returncode != 0
    for case, (path, _old, _new, named) in BREAKS.items():
        reported = [line for line in run.stderr.splitlines() if named in line and "WARNING" in line]
        assert any(f"{path}:" in line for line in reported), (case, run.stderr)


def headings(page: Path, level: str) -> list[str]:
    return re.findall(rf"^{level} (.+)$", page.read_text(encoding="utf-8"), flags=re.M)


def table_after(page: Path, heading: str) -> list[list[str]]:
    """The rows (cells stripped of backticks) of the first table under ``heading``."""
    lines = page.read_text(encoding="utf-8").splitlines()
    at = lines.index(heading)
    rows = []
    for line in lines[at + 1 :]:
        if line.startswith("#"):
            break
        if line.startswith("|") and not line.startswith("|---"):
            rows.append([c.strip().strip("`") for c in line.strip("|").split("|")])
        elif rows and not line.startswith("|"):
            break
    return rows[1:]


def test_exit_codes_page_covers_every_command_and_code() -> None:
    page = DOCS / "reference" / "exit-codes.md"
    assert sorted(headings(page, "###")) == sorted(cli.list_commands(click.Context(cli)))
    table = {int(row[0]): row[1] for row in table_after(page, "# Exit codes")}
    assert table == {EXIT_OK: "EXIT_OK", EXIT_MISMATCH: "EXIT_MISMATCH", EXIT_INPUT: "EXIT_INPUT",
                     EXIT_BOUND: "EXIT_BOUND", EXIT_ENGINE: "EXIT_ENGINE", EXIT_SPEC: "EXIT_SPEC",
                     EXIT_OS: "EXIT_OS", EXIT_SIGINT: "EXIT_SIGINT", EXIT_SIGTERM: "EXIT_SIGTERM"}


def test_json_page_lists_every_field_of_the_record() -> None:
    """The field tables of docs/reference/json.md against a real record of a check
    with a counterexample."""
    model = load_model(ROOT / "models" / "fifo-4.toml")
    record = check_model(model, Options(progress=False)).to_json()
    violated = next(p for p in record["properties"].values() if p["status"] == "violated")
    page = DOCS / "reference" / "json.md"

    def fields(heading: str) -> set[str]:
        return {row[0] for row in table_after(page, heading)}

    assert fields("## The record of a check") == set(record)
    assert fields("## The statistics") == set(record["stats"])
    assert fields("## A trace step") == set(violated["trace"][0])
    # `loop_start` appears only on lassos.
    assert fields("## A property's verdict") == set(violated) | {"loop_start"}


# Paths of the repository and dotted names of its packages, as the pages write them.
REPO_PATH = re.compile(r"(?<![\w/.-])((?:checker|specs|tla|reports|tests|benchmarks|models|docs)/[\w./*,-]*[\w*])")
DOTTED = re.compile(r"(?<![\w./-])((?:checker|specs|tla|reports)(?:\.\w+)+)")


def code_in(page: Path) -> list[str]:
    """The code blocks and inline code of a Markdown page."""
    text = page.read_text(encoding="utf-8")
    blocks = re.findall(r"```[^\n]*\n(.*?)```", text, flags=re.S)
    prose = re.sub(r"```.*?```", "", text, flags=re.S)
    return blocks + [span for _ticks, span in re.findall(r"(`+)(.+?)\1", prose, flags=re.S)]


def test_no_page_holds_a_merge_conflict_marker() -> None:
    """A page with a merge left unresolved (both sides and the markers) still builds, so
    the build cannot catch it; this does."""
    marker = re.compile(r"^(<{7}|={7}|>{7})( |$)", re.MULTILINE)
    pages = [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]
    assert len(pages) > 20
    found = [f"{page.relative_to(ROOT)}: {m.group(0)!r}" for page in pages for m in marker.finditer(page.read_text(encoding="utf-8"))]
    assert not found, found


def test_pages_name_only_files_and_objects_that_exist() -> None:
    """Every file path (``checker/engine/table.py``, ``models/bss-*.toml``) and dotted name
    (``ordercheck.checker.spark.bfs.SparkOptions``) the README and the docs show in code exists, so
    moving a module or renaming a model cannot leave a page pointing at nothing."""
    missing = []
    named = 0
    for page in [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]:
        for code in code_in(page):
            for path in REPO_PATH.findall(code):
                named += 1
                # A page may show paths relative to an example's directory (the tutorial's).
                if "NAME" not in path and "MODEL" not in path and not glob.glob(str(ROOT / path)) \
                        and not glob.glob(str(ROOT / "examples" / "*" / path)):
                    missing.append(f"{page.relative_to(ROOT)}: {path}")
            for dotted in DOTTED.findall(code):
                named += 1
                if find_object(dotted) is None:
                    missing.append(f"{page.relative_to(ROOT)}: {dotted}")
    assert named > 100  # the scan sees the pages' code
    assert not missing, missing


def test_the_reduction_guides_soundness_test_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/howto/reductions.md shows a test to copy; it runs, and passes, as shown."""
    text = (DOCS / "howto" / "reductions.md").read_text(encoding="utf-8")
    sample = next(b for b in re.findall(r"```python\n(.*?)```", text, flags=re.S) if "def test_" in b)
    sample = "\n".join(line[2:] if line.startswith("  ") else line for line in sample.splitlines())
    namespace: dict = {}
    monkeypatch.chdir(ROOT)  # the sample names its model relative to the repository
    exec(compile(sample, "docs/howto/reductions.md", "exec"), namespace)
    tests = [f for name, f in namespace.items() if name.startswith("test_")]
    assert tests
    for test in tests:
        test()


STATISTICS = re.compile(r"^\S+\.toml: \w+, [\d,]+ distinct states")
RUN_SUMMARY = re.compile(r"^(\d+ schedules? run \(.*\)) in [\d.]+ s$")
"""``ordercheck run``'s summary line: compared without its seconds."""


def same_line(shown: str, printed: str) -> bool:
    """Whether ``printed`` is the line ``shown`` (a run's summary line up to its seconds)."""
    m = RUN_SUMMARY.match(shown)
    if m is None:
        return shown == printed
    p = RUN_SUMMARY.match(printed)
    return p is not None and p.group(1) == m.group(1)
SESSION_PAGES = [ROOT / "README.md", *sorted((DOCS / "howto").glob("*.md"))]


def shown_sessions() -> list[tuple[str, str, list[str]]]:
    """The shell sessions the README's tour and the how-to guides show: page, command,
    and the lines it is shown to print (the statistics line, whose timings vary, and
    ``[...]`` elisions left out)."""
    sessions = []
    for page in SESSION_PAGES:
        text = page.read_text(encoding="utf-8")
        for block in re.findall(r"```\n(\$ \.venv/bin/ordercheck .*?)```", text, flags=re.S):
            command, *shown = block.splitlines()
            lines = [line for line in shown if line.strip() != "[...]" and not STATISTICS.match(line)]
            sessions.append((page.name, command[2:], lines))
    return sessions


@pytest.mark.parametrize("page, command, shown", shown_sessions(), ids=[f"{p}: {c}" for p, c, _s in shown_sessions()])
def test_shown_sessions_print_what_the_pages_show(tmp_path: Path, page: str, command: str, shown: list[str]) -> None:
    """Each command the pages show, run now, prints the lines shown, in order (a verdict,
    an explanation, a trace step or a table row that changed fails this)."""
    assert shown, f"{page}: {command} shows no output"
    (tmp_path / "models").symlink_to(ROOT / "models")  # the pages' paths; outputs stay out of the tree
    (tmp_path / "examples").symlink_to(ROOT / "examples")  # ordercheck run's example nodes
    argv = [str(Path(sys.executable).with_name("ordercheck")), *shlex.split(command)[1:]]
    env = {k: v for k, v in os.environ.items() if k != "TLA2TOOLS_JAR"}  # tlc.md shows the run without TLC
    run = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, timeout=300, env=env)
    printed = iter(run.stdout.splitlines() + run.stderr.splitlines())
    for line in shown:
        assert any(same_line(line, out) for out in printed), \
            f"{page}: {command}: not printed (in this order): {line!r}"


def test_readme_is_a_front_page() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 250
    assert "make check    # set everything up, then run the default model suite: ordercheck check models/" in readme
    assert "make test     # set everything up, then run the whole test suite (ruff + pytest)" in readme
