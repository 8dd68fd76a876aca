"""One import name: what ``pip install`` puts into site-packages (issue 34).

The repository keeps its top-level folders (``checker/``, ``specs/``, ``reports/``,
``tla/``); pyproject.toml maps them under ``ordercheck``. The wheel built from this
checkout is installed into a fresh virtual environment, and that environment must hold
``ordercheck`` alone, import it, run a model and name the new path when old code imports
an old one.
"""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import tomllib
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SUBPACKAGES = ("checker", "specs", "reports", "tla")


def _pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def test_the_package_list_names_every_package_folder() -> None:
    """A package folder missing from pyproject's list would be missing from the wheel; so would
    a data-only folder (templates), which setuptools warns about unless it is listed too."""
    setuptools = _pyproject()["tool"]["setuptools"]
    listed = set(setuptools["packages"])
    on_disk = {"ordercheck"}
    for name in SUBPACKAGES:
        for folder in [ROOT / name, *(ROOT / name).rglob("*")]:
            if folder.is_dir() and folder.name != "__pycache__" and any(f.is_file() for f in folder.iterdir()):
                on_disk.add("ordercheck." + ".".join(folder.relative_to(ROOT).parts))
    assert listed == on_disk
    data_only = {p for p in listed if not (ROOT / Path(*p.split(".")[1:]) / "__init__.py").is_file()} - {"ordercheck"}
    assert data_only and data_only <= set(setuptools["package-data"]), sorted(data_only)
    assert setuptools["package-dir"] == {f"ordercheck.{n}": n for n in SUBPACKAGES}


def test_the_console_script_and_module_run_the_same_command() -> None:
    assert _pyproject()["project"]["scripts"] == {"ordercheck": "ordercheck.checker.cli:main"}
    run = subprocess.run([sys.executable, "-m", "ordercheck", "--help"], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0 and "Usage: ordercheck" in run.stdout, run.stderr


def _requirement_name(requirement: str) -> str:
    """The distribution a requirement names, normalised (``tree-sitter>=0.23`` -> ``tree_sitter``)."""
    import re

    return re.split(r"[\s<>=!~\[;]", requirement, maxsplit=1)[0].lower().replace("-", "_")


def _imported_distributions() -> dict[str, set[str]]:
    """The distributions the package's own code imports (anywhere in a module, a function's
    local imports included), each with the files importing it; the standard library and
    ordercheck itself left out."""
    import ast
    from importlib.metadata import packages_distributions

    owners = packages_distributions()
    found: dict[str, set[str]] = {}
    for folder in ("ordercheck", *SUBPACKAGES):
        for path in (ROOT / folder).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                if isinstance(node, ast.Import):
                    names = [a.name for a in node.names]
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    names = [node.module]
                else:
                    continue
                for name in names:
                    top = name.partition(".")[0]
                    if top in sys.stdlib_module_names or top == "ordercheck":
                        continue
                    assert top in owners, f"{path.relative_to(ROOT)} imports {top}, which no installed distribution provides"
                    for dist in owners[top]:
                        found.setdefault(dist.lower().replace("-", "_"), set()).add(str(path.relative_to(ROOT)))
    return found


def test_the_dependencies_are_what_the_package_imports() -> None:
    """Every distribution the package's code imports is a dependency (the Spark engine's in
    the ``spark`` extra), and every dependency is imported by the package: a library only
    the tests use (a TLA+ parser, a DOT reader) belongs to the ``dev`` extra, not to every
    user's install."""
    project = _pyproject()["project"]
    runtime = {_requirement_name(r) for r in project["dependencies"]}
    spark = {_requirement_name(r) for r in project["optional-dependencies"]["spark"]} | {"py4j"}  # PySpark's own
    imported = _imported_distributions()
    undeclared = {d: sorted(files)[:3] for d, files in imported.items() if d not in runtime | spark}
    assert not undeclared, f"imported but not a dependency: {undeclared}"
    unused = sorted(runtime - set(imported))
    assert not unused, f"dependencies the package never imports (test-only? move them to the dev extra): {unused}"


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(python, site-packages) of a fresh environment with the wheel of this checkout
    installed without its dependencies, which it reads from this environment's
    site-packages (a path file appended after its own)."""
    tmp = tmp_path_factory.mktemp("wheel")
    build = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(tmp / "dist"),
         str(ROOT)], capture_output=True, text=True, timeout=300,
    )
    assert build.returncode == 0, build.stdout + build.stderr
    (wheel,) = (tmp / "dist").glob("ordercheck-*.whl")
    env_dir = tmp / "env"
    venv.create(env_dir, with_pip=False)
    python = env_dir / "bin" / "python"
    install = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps", "--no-index", str(wheel)],
        env=_clean_env(), capture_output=True, text=True, timeout=300,
    )
    assert install.returncode == 0, install.stdout + install.stderr
    site = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               env=_clean_env(), capture_output=True, text=True, check=True).stdout.strip())
    ours = [p for p in sys.path if Path(p).name in ("site-packages", "dist-packages")] or [sysconfig.get_paths()["purelib"]]
    (site / "zz_deps.pth").write_text("".join(p + "\n" for p in ours))
    return python, site


def _clean_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}


def test_the_wheel_installs_one_top_level_package(installed: tuple[Path, Path]) -> None:
    _python, site = installed
    ours = sorted(p.name for p in site.iterdir() if p.name not in ("zz_deps.pth", "__pycache__"))
    assert [n for n in ours if not n.endswith(".dist-info")] == ["ordercheck"], ours
    assert sorted(p.name for p in (site / "ordercheck").iterdir() if p.is_dir() and p.name != "__pycache__") == sorted(
        SUBPACKAGES)
    for data in ("ordercheck/reports/templates/index.html.j2", "ordercheck/tla/templates/fifo.tla.j2",
                 "ordercheck/checker/spark/log4j2.properties"):
        assert (site / data).is_file(), data


def test_spark_is_an_extra(installed: tuple[Path, Path]) -> None:
    """PySpark and pandas (only the Spark engine needs them) come with ``ordercheck[spark]``."""
    _python, site = installed
    (meta,) = site.glob("ordercheck-*.dist-info/METADATA")
    requires = [line.split(":", 1)[1].strip() for line in meta.read_text().splitlines() if line.startswith("Requires-Dist:")]
    spark = [r for r in requires if r.lower().startswith(("pyspark", "pandas"))]
    assert spark and all('extra == "spark"' in r for r in spark), requires
    assert any(r.startswith("numpy") and "extra" not in r for r in requires), requires


def test_the_installed_package_imports_and_checks_a_model(installed: tuple[Path, Path], tmp_path: Path) -> None:
    python, site = installed
    code = (
        "import ordercheck, sys\n"
        "from ordercheck import HoldBackSpec, Property, Spec\n"
        "print(ordercheck.__file__)\n"
        "try:\n    import checker\nexcept ModuleNotFoundError as e:\n    print(e)\n"
    )
    run = subprocess.run([str(python), "-c", code], cwd=tmp_path, env=_clean_env(), capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == 0, run.stderr
    first, second = run.stdout.splitlines()
    assert Path(first).parent == site / "ordercheck"
    assert "import 'ordercheck.checker' instead" in second
    model = Path(python).parent.parent / "share" / "ordercheck" / "models" / "fifo-3.toml"
    check = subprocess.run([str(python), "-m", "ordercheck", "check", str(model), "--quiet"], cwd=tmp_path,
                           env=_clean_env(), capture_output=True, text=True, timeout=300)
    assert check.returncode == 0, check.stdout + check.stderr
    assert "fifo-3.toml" in check.stdout
