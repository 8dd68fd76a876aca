"""The pytest plugin: model files collected as tests (``pytest models/``).

Registered as the ``pytest11`` entry point ``ordercheck``, so it is active wherever
ordercheck is installed; it collects nothing until asked to:

- the ini option ``ordercheck_models`` (in ``pyproject.toml``'s
  ``[tool.pytest.ini_options]``, ``pytest.ini``, ...; ``-o ordercheck_models=...`` on the
  command line) lists paths, relative to the ini file's directory, of model files or
  directories; a pattern may hold shell wildcards (``*``, ``?``, ``[...]``), matched one
  path component at a time. A ``*.toml`` file that pytest's collection reaches is a model
  file when one of them names it or a directory above it: ``models`` takes every
  ``*.toml`` under ``models/`` (subdirectories too), ``models/*.toml`` only those directly
  in it (the files ``ordercheck check models/`` checks);
- a ``*.toml`` file named on pytest's command line (``pytest models/fifo-3.toml``) is a
  model file whatever the option says.

Any other TOML file (``pyproject.toml``, a tool's settings, a test's data) is left alone,
so the plugin changes nothing in a project that does not set the option.

Each model file gives one item, ``FILE::verdicts``: it checks the model with the local
engine (or the one the run chooses, below), as ``ordercheck check FILE`` does, and passes when every verdict is the one its
``[expect]`` names. It fails when a verdict differs or a bound left one unknown (exit
code 1 or 3 of ``check``; an unfinished search never passes); the failure shows what
``check`` prints: the statistics line, one line per property with ``ok``, ``UNEXPECTED``
or ``UNKNOWN``, and the counterexample trace of each unexpected violation
(:func:`ordercheck.checker.cli.common.print_result`). A model file at fault (what ``check`` refuses
with exit code 2) is an error of its item, shown as the one line ``check`` prints; so is
a spec that raises (exit code 5).

Each entry of a model's ``[evidence]`` table gives one more item,
``FILE::evidence[PROPERTY]``: it passes when the mutant violates the property, or the
model reaches its witness, as ``ordercheck check --with-evidence`` judges it
(:func:`ordercheck.checker.loading.evidence.judge_evidence`), and fails with the evidence line
``check`` prints and the verdicts of the run that did not show it. Within one process, a
model is checked once however many items need its result (the model's own item, its
witnesses, the models whose mutant it is).

The models are checked with the local engine and one worker unless the run asks for
others: ``--ordercheck-engine local|spark`` and ``--ordercheck-workers N`` on pytest's
command line, or the ini options ``ordercheck_engine`` and ``ordercheck_workers`` (the
command line wins). A bad value, ``spark`` without PySpark installed (with the line
``check --engine spark`` prints, :func:`ordercheck.checker.spark.session.require_spark`), or
more than one worker with Spark (refused as ``check`` refuses it) stops the run before
collection with a one-line usage error naming the option (:func:`engine_choice`).

Every item carries the marker ``ordercheck`` (``-m "not ordercheck"`` leaves them out;
``-k "not evidence"`` leaves out the evidence items). An item is a file path and a name,
so ``pytest -n N`` (pytest-xdist) spreads them over its workers like any test.

This module sits on top of the command line (``ordercheck.checker.cli``), whose rendering it
reuses; it imports the engine and the command line only when an item runs, so loading
the plugin costs a pytest run nothing else.
"""

from __future__ import annotations

import contextlib
import io
import os
import tomllib
from collections.abc import Callable, Iterator
from fnmatch import fnmatchcase
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import pytest

if TYPE_CHECKING:
    from ordercheck.checker.api.model import Model
    from ordercheck.checker.api.result import Result

INI = "ordercheck_models"
MARKER = "ordercheck"
VERDICTS = "verdicts"
"""The name of a model file's own item (``FILE::verdicts``)."""

ENGINES = ("local", "spark")


class Setting(NamedTuple):
    """One run setting, given on pytest's command line (``option``, e.g.
    ``--ordercheck-workers``) or in the ini file (``ini``, e.g. ``ordercheck_workers``)."""

    option: str
    ini: str

    @property
    def dest(self) -> str:
        return self.ini

    def given(self, config: pytest.Config) -> tuple[str, str] | None:
        """The value given and how it was named (the command line's option, else the ini
        option), or ``None`` when neither gives one."""
        value = config.getoption(self.dest)
        if value is not None:
            return str(value), self.option
        value = config.getini(self.ini)
        if value:
            return str(value).strip(), f"{self.ini} (ini)"
        return None


WORKERS = Setting("--ordercheck-workers", "ordercheck_workers")
ENGINE = Setting("--ordercheck-engine", "ordercheck_engine")


class EngineChoice(NamedTuple):
    """The engine and the worker processes the models are checked with."""

    engine: str = "local"
    workers: int = 1


_CHOSEN: EngineChoice = EngineChoice()
"""This pytest run's :class:`EngineChoice` (:func:`pytest_configure`)."""


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addini(
        INI,
        type="paths",
        default=[],
        help="ordercheck: model files (*.toml) or directories of them to collect as tests, relative to the "
        "ini file's directory; shell wildcards match one path component (e.g. models/*.toml)",
    )
    parser.addini(ENGINE.ini, type="string", default="",
                  help="ordercheck: the engine that checks the models, local or spark (default: local)")
    parser.addini(WORKERS.ini, type="string", default="",
                  help="ordercheck: worker processes per model check (default: 1; the local engine only)")
    group = parser.getgroup("ordercheck", "ordercheck model files")
    group.addoption(ENGINE.option, dest=ENGINE.dest, metavar="local|spark", default=None,
                    help=f"the engine that checks the models (overrides the ini option {ENGINE.ini}; default: local)")
    group.addoption(WORKERS.option, dest=WORKERS.dest, metavar="N", default=None,
                    help=f"worker processes per model check, results identical for any number (overrides the ini "
                         f"option {WORKERS.ini}; default: 1)")


def pytest_configure(config: pytest.Config) -> None:
    global _CHOSEN
    config.addinivalue_line("markers", f"{MARKER}: an ordercheck model file's verdicts or one of its [evidence] entries")
    _CHOSEN = engine_choice(config)


def pytest_unconfigure(config: pytest.Config) -> None:
    global _CHOSEN
    _CHOSEN = EngineChoice()


def engine_choice(config: pytest.Config) -> EngineChoice:
    """The engine and workers this run asks for (:data:`ENGINE`, :data:`WORKERS`), or
    :class:`pytest.UsageError`, one line naming the option: a value that is not
    ``local`` or ``spark``, or not a whole number of at least 1; ``spark`` where PySpark
    is not installed (the line ``check --engine spark`` prints); more than one worker
    with ``spark`` (as ``check`` refuses ``--workers`` with it)."""
    engine, workers = EngineChoice()
    engine_given, workers_given = ENGINE.given(config), WORKERS.given(config)
    if engine_given is not None:
        engine, named = engine_given
        if engine not in ENGINES:
            raise pytest.UsageError(f"{named}: expected local or spark, found {engine!r}")
        if engine == "spark":
            from ordercheck.checker.api.errors import InputError
            from ordercheck.checker.spark.session import require_spark

            try:
                require_spark()
            except InputError as exc:
                raise pytest.UsageError(f"{named} spark: {exc.message}") from None
    if workers_given is not None:
        value, named = workers_given
        try:
            workers = int(value)
        except ValueError:
            workers = 0
        if workers < 1:
            raise pytest.UsageError(f"{named}: expected a whole number of at least 1, found {value!r}")
        if workers > 1 and engine == "spark":
            from ordercheck.checker.spark.session import DEFAULT_MASTER

            by = engine_given[1] if engine_given is not None else ENGINE.option
            raise pytest.UsageError(f"{named}: not supported by {by} spark, which runs as many tasks at once as "
                                    f"its master ({DEFAULT_MASTER}) gives cores; drop it")
    return EngineChoice(engine, workers)


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> ModelFile | None:
    """A :class:`ModelFile` for a ``*.toml`` file the ini option names, or one named on
    the command line; ``None`` (not ours) for every other file."""
    if file_path.suffix != ".toml":
        return None
    if parent.session.isinitpath(file_path) or is_named(file_path, parent.config.getini(INI)):
        return ModelFile.from_parent(parent, path=file_path)
    return None


def is_named(path: Path, patterns: list[Path]) -> bool:
    """Whether one of ``patterns`` (absolute paths, shell wildcards in any component)
    names ``path`` or a directory above it."""
    parts = Path(os.path.abspath(path)).parts
    for pattern in patterns:
        want = Path(os.path.abspath(pattern)).parts
        if len(want) <= len(parts) and all(fnmatchcase(have, w) for have, w in zip(parts, want)):
            return True
    return False


def evidence_names(path: Path) -> list[str]:
    """The properties of ``path``'s ``[evidence]`` table, in the file's order, read
    without validating anything: a file that cannot be read or parsed, is larger than a
    model file may be (:data:`ordercheck.checker.api.inputs.MODEL_LIMIT`), or whose table is not
    one, has none here, and its ``verdicts`` item reports what is wrong."""
    from ordercheck.checker.api.inputs import MODEL_LIMIT

    try:
        with open(path, "rb") as fh:
            raw = fh.read(MODEL_LIMIT + 1)
        if len(raw) > MODEL_LIMIT:
            return []
        data = tomllib.loads(raw.decode("utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError, RecursionError):
        return []
    table = data.get("evidence")
    return [str(prop) for prop in table] if isinstance(table, dict) else []


def model_items(parent: pytest.Collector) -> Iterator[pytest.Item]:
    """The items of the model file ``parent.path``: ``verdicts``, then ``evidence[PROP]``
    per ``[evidence]`` entry."""
    yield VerdictsItem.from_parent(parent, name=VERDICTS, path=parent.path)
    for prop in evidence_names(parent.path):
        yield EvidenceItem.from_parent(parent, name=f"evidence[{prop}]", path=parent.path, prop=prop)


class ModelFile(pytest.File):
    """One model file pytest's collection reached: its items (:func:`model_items`)."""

    def collect(self) -> Iterator[pytest.Item]:
        return model_items(self)


class ModelFiles:
    """Model files a test module has collected as tests, whatever ``ordercheck_models``
    says: a module-level name bound to one, e.g. ::

        from ordercheck.checker.pytest_plugin import ModelFiles

        test_models = ModelFiles("../models/token.toml", "../models/token-no-wait.toml")

    gives, for each file, the items ``pytest models/token.toml`` would, under the test
    module (``tests/test_token.py::token.toml::verdicts``, ...). A relative path is taken from
    the test module's directory. Only a name pytest collects (``test_*`` by default)
    counts, and only where this plugin is loaded (as it is wherever ordercheck is
    installed)."""

    def __init__(self, *paths: str | os.PathLike[str]) -> None:
        if not paths:
            raise ValueError("ModelFiles: name at least one model file")
        self.paths = tuple(Path(p) for p in paths)


class ModelGroup(pytest.Collector):
    """One model file of a :class:`ModelFiles`, under the test module that names it."""

    def collect(self) -> Iterator[pytest.Item]:
        return model_items(self)


@pytest.hookimpl(tryfirst=True)
def pytest_pycollect_makeitem(collector: pytest.Collector, name: str, obj: object) -> list[ModelGroup] | None:
    """A :class:`ModelFiles` bound to a collected name in a test module: one
    :class:`ModelGroup` per file it names."""
    if not isinstance(obj, ModelFiles) or not collector.funcnamefilter(name):  # type: ignore[attr-defined]
        return None
    here = collector.path.parent
    return [ModelGroup.from_parent(collector, name=path.name, path=Path(os.path.abspath(here / path)))
            for path in obj.paths]


class ModelFailed(Exception):
    """A model item's failure: ``text`` is what the command line prints for it."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.text = text


class ModelError(Exception):
    """A model item that could not be checked (bad input, a spec that raised, an engine
    that failed): ``line`` is the one line the command line prints for it."""

    def __init__(self, line: str) -> None:
        super().__init__(line)
        self.line = line


class ModelItem(pytest.Item):
    """What the items of a model file share: loading and checking models once per
    process, and a failure shown as the command line shows it."""

    model: Model | None = None

    def setup(self) -> None:
        """Load the model file; bad input is an error of the item (before its run),
        shown as the one line the command line prints."""
        try:
            self.model = load(self.path)
            return
        except ModelError as exc:
            line = exc.line
        pytest.fail(line, pytrace=False)  # outside the handler: no "During handling of..."

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:  # type: ignore[override]
        if isinstance(excinfo.value, ModelFailed):
            return excinfo.value.text
        if isinstance(excinfo.value, ModelError):
            return excinfo.value.line
        return str(super().repr_failure(excinfo, style=style))

    def reportinfo(self) -> tuple[Path, int | None, str]:
        # not a suffix of the node id, so `-v` prints the node id as it is ("." kept)
        return self.path, None, f"ordercheck {self.nodeid}"


class VerdictsItem(ModelItem):
    """A model's verdicts, each as its ``[expect]`` says (``ordercheck check FILE``)."""

    def __init__(self, **kw: Any) -> None:
        super().__init__(**kw)
        self.add_marker(MARKER)

    def runtest(self) -> None:
        assert self.model is not None
        result = result_of(self.model)
        if result.exit_code() != 0:
            raise ModelFailed(headline(self.model, result) + "\n" + rendered(_print_result, self.model, result))


class EvidenceItem(ModelItem):
    """One ``[evidence]`` entry of a model (``ordercheck check FILE --with-evidence``):
    its mutant violates the property, or the model reaches its witness."""

    def __init__(self, *, prop: str, **kw: Any) -> None:
        super().__init__(**kw)
        self.prop = prop
        self.add_marker(MARKER)

    def runtest(self) -> None:
        from ordercheck.checker.loading.evidence import judge_evidence, mutant_path

        model = self.model
        assert model is not None
        entry = model.evidence.get(self.prop)
        if entry is None:  # the file changed since it was collected
            raise ModelError(f"{model.path}: evidence.{self.prop}: no such entry any more (collect again)")
        (kind, name), = entry.items()
        if kind == "mutant":
            mutant = load(mutant_path(model, name))
            shown_by, result = mutant, result_of(mutant)
        else:
            shown_by, result = model, result_of(model)
        # judge_evidence judges this one entry against the run that shows it (the model's
        # own result is read only for a witness, which is then that same run)
        one = _with_evidence(model, {self.prop: entry})
        (check,) = judge_evidence([one], {resolved(model.path): result, resolved(shown_by.path): result})
        if not check.ok:
            from ordercheck.checker.cli.check import print_evidence

            raise ModelFailed(f"{model.path}: evidence.{self.prop}: {check.message()}\n"
                              + rendered(print_evidence, [check]).lstrip("\n") + "\n"
                              + rendered(_print_result, shown_by, result))


def headline(model: Model, result: Result) -> str:
    """One line naming the verdicts not as expected, or left unknown by a bound (pytest's
    short summary shows it)."""
    bad = {name: p for name, p in result.properties.items() if not p.as_expected or p.status == "unknown"}
    what = "; ".join(f"{name} {p.word}, expected {p.expected_word or '-'}" for name, p in bad.items())
    return f"{model.path}: {len(bad)} of {len(result.properties)} verdicts not as expected: {what}"


def _with_evidence(model: Model, evidence: dict[str, dict[str, str]]) -> Model:
    from dataclasses import replace

    return replace(model, evidence=evidence)


def _print_result(model: Model, result: Result) -> None:
    from ordercheck.checker.cli.common import print_result

    print_result(model, result)


def rendered(fn: Callable[..., None], *args: Any) -> str:
    """What ``fn(*args)``, one of the command line's printers, prints to standard output."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        fn(*args)
    return out.getvalue().rstrip("\n")


def resolved(path: str | Path) -> Path:
    return Path(path).resolve()


_RESULTS: dict[tuple[Path, EngineChoice], Result] = {}
"""The models checked in this process, by resolved path and engine choice: each is
checked once."""


def load(path: Path) -> Model:
    """The model file ``path``, read as ``check`` reads it (relative to the working
    directory where it lies below it, so messages name it as the command line would);
    :class:`ModelError` with ``check``'s one line for bad input."""
    from ordercheck.checker.api.errors import InputError, SpecError
    from ordercheck.checker.api.spec_errors import SpecRaised
    from ordercheck.checker.loading.modelfile import load_model

    here = Path.cwd()
    shown = os.path.relpath(path, here) if Path(os.path.abspath(path)).is_relative_to(here) else str(path)
    try:
        return load_model(shown)
    except InputError as exc:
        raise ModelError(f"ordercheck: error: {exc.line()}") from None
    except SpecRaised as exc:  # the spec's module or constructor raised
        raise ModelError(f"ordercheck: spec error: {exc.line()}") from None
    except SpecError as exc:
        raise ModelError(f"ordercheck: error: spec {exc} (fix the spec module)") from None


def result_of(model: Model, choice: EngineChoice | None = None) -> Result:
    """``model`` checked with the model's own settings (no progress lines), once per
    process, by the engine and workers ``choice`` names (by default this run's: the
    local engine and one worker unless ``--ordercheck-engine``/``--ordercheck-workers``
    or their ini options say otherwise); :class:`ModelError` with ``check``'s one line
    when the spec raises or breaks the spec API, or the engine fails."""
    chosen = _CHOSEN if choice is None else choice
    key = (resolved(model.path), chosen)
    if key not in _RESULTS:
        from ordercheck.checker.api.errors import EngineError, InputError, SpecError
        from ordercheck.checker.api.spec_errors import SpecRaised
        from ordercheck.checker.cli.common import check_one
        from ordercheck.checker.engine.run import Options

        try:
            _RESULTS[key] = check_one(model, Options(engine=chosen.engine, workers=chosen.workers, progress=False))
        except (InputError, EngineError) as exc:
            raise ModelError(f"ordercheck: error: {exc.line()}") from None
        except SpecRaised as exc:
            raise ModelError(f"ordercheck: spec error: {exc.line()}") from None
        except SpecError as exc:
            raise ModelError(f"ordercheck: error: spec {exc} (fix the spec module)") from None
    return _RESULTS[key]
