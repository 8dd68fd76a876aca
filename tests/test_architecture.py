"""The layout's rules (docs/explanation/architecture.md), checked from the import graph.

grimp (import-linter's graph library) reads every import statement of the project, at
module level and inside functions alike. The import contract itself lives in
``pyproject.toml`` (``[tool.importlinter]``) and runs as ``lint-imports`` in
``make test``; the tests here show that it holds, and that it fails when a layer is
broken in a copy of the project.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SUBPACKAGES = ("checker", "specs", "reports", "tla")
PACKAGES = ("ordercheck", "tests", "benchmarks")
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


CYCLES = """
import json, sys

import grimp
import networkx as nx

graph = grimp.build_graph(*sys.argv[1:], cache_dir=None)
g = nx.DiGraph()
for module in graph.modules:
    g.add_node(module)
    for imported in graph.find_modules_directly_imported_by(module):
        g.add_edge(module, imported)
print(json.dumps(sorted(sorted(c) for c in nx.strongly_connected_components(g) if len(c) > 1)))
"""


def import_cycles(root: Path, packages: tuple[str, ...] = PACKAGES) -> list[list[str]]:
    """Each set of modules that import one another in a circle (a strongly connected
    component of more than one module of the import graph), as sorted module names.

    ``root`` holds the packages as installed (``ordercheck/checker``, ...: see
    :func:`staged`). The graph is built in a fresh interpreter with ``root`` first on the
    path, so that it reads the packages in ``root`` even where this process imported
    others of the same names."""
    env = dict(os.environ, PYTHONPATH=str(root))
    run = subprocess.run(
        [sys.executable, "-c", CYCLES, *packages], cwd=root, env=env, capture_output=True, text=True, timeout=300
    )
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)


def staged(tmp_path: Path) -> Path:
    """The repository as installed, for grimp (which reads a package from one folder):
    ``ordercheck/`` holding a link to each sub-package folder, and links to ``tests`` and
    ``benchmarks``."""
    where = tmp_path / "staged"
    (where / "ordercheck").mkdir(parents=True)
    (where / "ordercheck" / "__init__.py").symlink_to(ROOT / "ordercheck" / "__init__.py")
    for name in SUBPACKAGES:
        (where / "ordercheck" / name).symlink_to(ROOT / name, target_is_directory=True)
    for name in ("tests", "benchmarks"):
        (where / name).symlink_to(ROOT / name, target_is_directory=True)
    return where


def test_no_module_imports_one_that_imports_it_back(tmp_path: Path) -> None:
    cycles = import_cycles(staged(tmp_path))
    assert cycles == [], "import circles: " + "; ".join(" <-> ".join(c) for c in cycles)


def test_a_circle_is_reported_by_module_names(tmp_path: Path) -> None:
    # The check above is only worth something if it sees a circle made through a
    # function-level import, as the old run <-> spark_bfs one was.
    copy = copy_project(tmp_path)
    add_line(copy / "ordercheck" / "checker" / "engine" / "bfs.py",
             "def _back() -> None:\n    from ordercheck.checker.engine import run  # noqa: F401\n")
    cycles = import_cycles(copy, ("ordercheck",))
    assert len(cycles) == 1 and {"ordercheck.checker.engine.bfs", "ordercheck.checker.engine.run"} <= set(cycles[0]), cycles


def copy_project(tmp_path: Path) -> Path:
    """The package as installed (``ordercheck/`` holding ``checker``, ``specs``, ...) and
    pyproject.toml (which holds the contract), copied."""
    copy = tmp_path / "project"
    (copy / "ordercheck").mkdir(parents=True)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    shutil.copy(ROOT / "ordercheck" / "__init__.py", copy / "ordercheck" / "__init__.py")
    for package in SUBPACKAGES:
        shutil.copytree(ROOT / package, copy / "ordercheck" / package, ignore=ignore)
    shutil.copy(ROOT / "pyproject.toml", copy / "pyproject.toml")
    return copy


def add_line(path: Path, text: str) -> None:
    """``text`` appended to the module at ``path`` (made, with its package, if missing)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    (path.parent / "__init__.py").touch()
    old = path.read_text(encoding="utf-8") if path.exists() else ""
    path.write_text(old + "\n" + text + "\n", encoding="utf-8")


def lint_imports(where: Path) -> subprocess.CompletedProcess:
    """``lint-imports`` run in ``where``, on the packages there (not the installed ones)."""
    env = dict(os.environ, PYTHONPATH=str(where))
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-cache", "--no-logo"], cwd=where, env=env, capture_output=True, text=True, timeout=300
    )


def test_the_import_contract_holds_in_an_unchanged_copy(tmp_path: Path) -> None:
    run = lint_imports(copy_project(tmp_path))
    assert run.returncode == 0, run.stdout + run.stderr
    assert "0 broken" in run.stdout


CONTRACTS = {c["id"]: c["name"] for c in tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]}

BREAKS = {
    # what breaks: (the file an import is added to, the import, the contract it breaks);
    # the report must name that file's module
    "engine imports reports": ("checker/engine/run.py", "import ordercheck.reports.junit  # noqa: F401", "engine"),
    "engine imports a spec (inside a function)": (
        "checker/engine/levels.py",
        "def _peek() -> None:\n    import ordercheck.specs.bus1  # noqa: F401",
        "engine",
    ),
    "reports import the engine": ("reports/junit.py", "import ordercheck.checker.engine.bfs  # noqa: F401", "readers"),
    "tla imports the engine": ("tla/export.py", "import ordercheck.checker.engine.run  # noqa: F401", "readers"),
    "a spec imports the engine": ("specs/fifo.py", "import ordercheck.checker.engine.bfs  # noqa: F401", "specs"),
    "import checker loads the engine": ("checker/__init__.py", "import ordercheck.checker.engine.run  # noqa: F401", "public-api"),
    "the API imports upwards": ("checker/api/result.py", "import ordercheck.checker.loading.registry  # noqa: F401", "layers"),
    "a tool imports the command line": ("checker/simulate/run.py", "import ordercheck.checker.cli.common  # noqa: F401", "layers"),
    "two tools import each other": ("checker/review/matrix.py", "import ordercheck.checker.spark.sweep_table  # noqa: F401", "layers"),
    # ordercheck.checker.validate sits above the other tools (an optional layer until it lands)
    "a tool imports trace validation": ("checker/simulate/run.py", "import ordercheck.checker.validate.log  # noqa: F401", "layers"),
    "two engine modules import each other": (
        "checker/engine/levels.py",
        "def _back() -> None:\n    import ordercheck.checker.engine.sharded  # noqa: F401",
        "acyclic",
    ),  # reported as "No cycles are allowed in ordercheck.checker.engine", "- .sharded -> .levels"
}


@pytest.mark.parametrize("name", sorted(BREAKS))
def test_breaking_a_layer_breaks_the_contract(tmp_path: Path, name: str) -> None:
    path, line, contract = BREAKS[name]
    copy = copy_project(tmp_path)
    if "ordercheck.checker.validate" in line:
        add_line(copy / "ordercheck" / "checker" / "validate" / "log.py", '"""A stand-in for trace validation."""')
    add_line(copy / "ordercheck" / path, line)
    run = lint_imports(copy)
    assert run.returncode != 0, f"{name}: lint-imports passed\n{run.stdout}{run.stderr}"
    report = " ".join(run.stdout.split())  # contract names wrap in the report
    assert f"{CONTRACTS[contract]} BROKEN" in report, run.stdout
    module = "ordercheck." + path.removesuffix(".py").removesuffix("/__init__").replace("/", ".")
    if contract == "acyclic":  # names the package, then its modules relative to it
        package, _, tail = module.rpartition(".")
        assert f"No cycles are allowed in {package}." in report and f".{tail}" in report, run.stdout
    else:
        assert module in run.stdout, f"{name}: the report does not name {module}\n{run.stdout}"


def test_trace_validation_has_its_room(tmp_path: Path) -> None:
    # ordercheck.checker.validate may use the engine, the property library, simulation, Spark and
    # the report renderers, and the command line may use it.
    copy = copy_project(tmp_path)
    uses = ["ordercheck.checker.engine.evaluate", "ordercheck.checker.loading.registry", "ordercheck.specs.history", "ordercheck.specs.properties",
            "ordercheck.checker.simulate.walk", "ordercheck.checker.spark.session", "ordercheck.reports.diagram"]
    add_line(copy / "ordercheck" / "checker" / "validate" / "log.py", "\n".join(f"import {m}  # noqa: F401" for m in uses))
    add_line(copy / "ordercheck" / "checker" / "cli" / "app.py", "import ordercheck.checker.validate.log  # noqa: F401")
    run = lint_imports(copy)
    assert run.returncode == 0, run.stdout + run.stderr


def test_make_tests_lint_step_reads_the_repository_layout_and_bites(tmp_path: Path) -> None:
    """`make test` runs the contract through .ci/lint_imports.py, which lays the
    repository's folders out as the installed package: on an unchanged copy of the
    repository it passes, with a forbidden import added it fails naming the module."""
    repo = tmp_path / "repo"
    (repo / "ordercheck").mkdir(parents=True)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    shutil.copy(ROOT / "ordercheck" / "__init__.py", repo / "ordercheck" / "__init__.py")
    for package in SUBPACKAGES:
        shutil.copytree(ROOT / package, repo / package, ignore=ignore)
    shutil.copy(ROOT / "pyproject.toml", repo / "pyproject.toml")
    script = [sys.executable, str(ROOT / ".ci" / "lint_imports.py"), str(repo), "--no-logo", "--no-cache"]
    run = subprocess.run(script, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0 and "0 broken" in run.stdout, run.stdout + run.stderr
    add_line(repo / "reports" / "junit.py", "import ordercheck.checker.engine.bfs  # noqa: F401")
    run = subprocess.run(script, capture_output=True, text=True, timeout=300)
    assert run.returncode != 0 and "ordercheck.reports.junit" in run.stdout, run.stdout + run.stderr
