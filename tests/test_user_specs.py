"""Specs in the user's project: a model names its spec by file path, import path or
entry-point name; bad references are one line and exit 2; a user's TLA+ template and
adapter are found beside the spec."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "token_ring"

COUNTER = '''
from ordercheck.checker import Constant, Property, Spec


class Counter(Spec):
    name = "counter"
    constants = (Constant("limit", int, 3, "largest value"),)

    def init_states(self):
        return [0]

    def next_states(self, s):
        return [(("inc",), s + 1)] if s < self.limit else []

    def properties(self):
        return [Property.always("small", lambda s: None if s <= 3 else f"{s} > 3")]
'''

MODEL = '''spec = "{ref}"
[constants]
limit = {limit}
[expect]
small = "{verdict}"
'''


def cli(*args: str, cwd: Path | None = None, env: dict | None = None) -> subprocess.CompletedProcess:
    """``ordercheck ARGS`` in a fresh interpreter (so imports start clean)."""
    return subprocess.run(
        [sys.executable, "-m", "ordercheck.checker.cli", *map(str, args)], capture_output=True, text=True, cwd=cwd, env=env,
        timeout=600,
    )


def project(tmp_path: Path) -> Path:
    """A user's project outside the repository: specs/counter.py and a package."""
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / "counter.py").write_text(COUNTER)
    (tmp_path / "mypkg").mkdir()
    (tmp_path / "mypkg" / "__init__.py").write_text("")
    (tmp_path / "mypkg" / "ordering.py").write_text(COUNTER.replace("class Counter", "class Ordering"))
    (tmp_path / "models").mkdir()
    return tmp_path


@pytest.mark.parametrize(
    "ref",
    ["../specs/counter.py", "../specs/counter.py:Counter", "mypkg.ordering:Ordering", "mypkg.ordering"],
    ids=["file", "file-class", "import-class", "import-module"],
)
def test_a_model_names_a_spec_of_the_users_project(tmp_path, ref):
    root = project(tmp_path)
    # A violated expectation and a held one: the spec really runs, with the constants.
    (root / "models" / "small.toml").write_text(MODEL.format(ref=ref, limit=3, verdict="holds"))
    (root / "models" / "big.toml").write_text(MODEL.format(ref=ref, limit=5, verdict="violated"))
    out = tmp_path / "out.json"
    run = cli("check", "models/small.toml", "models/big.toml", "--quiet", "--json", out, cwd=root)
    assert run.returncode == 0, run.stdout + run.stderr
    small, big = json.loads(out.read_text())
    assert small["stats"]["distinct_states"] == 4 and big["stats"]["distinct_states"] == 5  # 0..4: stops at 4
    assert big["properties"]["small"]["explanation"] == "4 > 3"
    # The record names the spec so that it resolves again from anywhere; a result file
    # is data, so `report` imports it only when the user names it with --spec.
    refused = cli("report", out, "-o", tmp_path / "report")
    assert refused.returncode == 2 and "spec: names " in refused.stderr and "--spec" in refused.stderr, refused.stderr
    typed = ref.replace("../", "") if ref.startswith("../") else ref  # from the project's root
    again = cli("report", out, "-o", tmp_path / "report", "--spec", typed, cwd=root)
    assert again.returncode == 0, again.stderr
    page = (tmp_path / "report" / "index.html").read_text()
    assert "counter" in page and "cannot be replayed" not in page and "4 &gt; 3" in page


def test_a_file_reference_is_relative_to_the_model_not_the_working_directory(tmp_path):
    root = project(tmp_path)
    (root / "models" / "m.toml").write_text(MODEL.format(ref="../specs/counter.py", limit=3, verdict="holds"))
    run = cli("check", root / "models" / "m.toml", "--quiet", cwd=ROOT)
    assert run.returncode == 0, run.stdout + run.stderr


def test_an_installed_package_registers_a_spec_by_name(tmp_path):
    root = project(tmp_path)
    site = tmp_path / "site"
    dist = site / "myspecs-1.0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: myspecs\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[ordercheck.specs]\nmy_counter = mypkg.ordering:Ordering\n")
    (root / "models" / "m.toml").write_text(MODEL.format(ref="my_counter", limit=5, verdict="violated"))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(root)])}
    run = cli("check", root / "models" / "m.toml", "--quiet", env=env)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "models/m.toml: counter" in run.stdout
    # `ordercheck list` names it with its summary, and a broken registration in one line.
    (dist / "entry_points.txt").write_text("[ordercheck.specs]\nmy_counter = mypkg.ordering:Ordering\n"
                                           "broken = nopkg.ordering:Spec\n")
    listed = cli("list", env=env)
    assert listed.returncode == 0, listed.stderr
    assert "registered by installed packages" in listed.stdout
    assert re.search(r"^  my_counter\b", listed.stdout, re.M), listed.stdout
    assert re.search(r"^  broken +\(cannot be loaded: .*nopkg", listed.stdout, re.M), listed.stdout
    # Without the registration the name is unknown: the entry point did the work.
    (dist / "entry_points.txt").write_text("[ordercheck.specs]\n")
    assert cli("check", root / "models" / "m.toml", "--quiet", env=env).returncode == 2


def test_builtin_names_keep_working(run_cli):
    assert run_cli("check", ROOT / "models" / "fifo-3.toml", "--quiet").exit_code == 0


BAD_REFS = [
    ("no file", "../specs/nothere.py", "'../specs/nothere.py' is not a file"),
    ("not python", "../specs/notes.txt", "is not a Python file"),
    ("syntax error", "../specs/broken.py", "broken.py cannot be imported (SyntaxError"),
    ("no spec inside", "../specs/empty.py", "defines no spec"),
    ("no such class", "../specs/counter.py:Nope", "has no 'Nope'"),
    ("not a spec class", "../specs/counter.py:Constant", "is not a spec class"),
    ("no module", "nopkg.ordering:Spec", "no module 'nopkg.ordering'"),
    ("unknown name", "nosuch", "unknown spec 'nosuch'"),
]


@pytest.mark.parametrize("case,ref,message", BAD_REFS, ids=[c[0] for c in BAD_REFS])
def test_a_bad_reference_is_one_line_exit_2_naming_the_file_and_field(tmp_path, case, ref, message):
    root = project(tmp_path)
    (root / "specs" / "notes.txt").write_text("")
    (root / "specs" / "broken.py").write_text("def oops(:\n")
    (root / "specs" / "empty.py").write_text("X = 1\n")
    model = root / "models" / "m.toml"
    model.write_text(MODEL.format(ref=ref, limit=3, verdict="holds"))
    run = cli("check", model, "--quiet")
    assert run.returncode == 2
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in run.stderr, run.stderr
    assert lines[0].startswith(f"ordercheck: error: {model}: spec: ")
    assert message in lines[0]


# -- TLA+ files beside a user's spec --------------------------------------------------------


def test_export_tla_finds_the_template_and_adapter_beside_the_spec(tmp_path, run_cli):
    out = run_cli("export-tla", EXAMPLE / "models" / "token-ring-3.toml", "-o", tmp_path)
    assert out.exit_code == 0, out.output
    module = (tmp_path / "token_ring_3.tla").read_text()
    assert "MODULE token_ring_3" in module and "TakeToken(q) ==" in module  # the example's own template
    assert "EmptyChan ==" in module  # and a shared piece it includes from ordercheck's templates
    assert "HoldBack = TRUE" in (tmp_path / "token_ring_3.cfg").read_text()  # the adapter's constants


def test_a_user_spec_without_template_names_the_two_files_and_the_guide(tmp_path):
    root = project(tmp_path)
    model = root / "models" / "m.toml"
    model.write_text(MODEL.format(ref="../specs/counter.py", limit=3, verdict="holds"))
    run = cli("export-tla", model, "-o", tmp_path / "out", cwd=root)
    assert run.returncode == 2
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in run.stderr
    assert "specs/counter.tla.j2" in lines[0] and "specs/counter_tla.py" in lines[0]
    assert "docs/howto/export-tla.md" in lines[0] and "ordercheck new" in lines[0]
    assert not (tmp_path / "out").exists()


def test_a_spec_class_may_name_its_template_and_adapter_elsewhere(tmp_path, run_cli):
    (tmp_path / "tla").mkdir()
    for name in ("token_ring.py",):
        text = (EXAMPLE / name).read_text().replace(
            '    name = "token_ring"',
            '    name = "token_ring"\n    tla_template = "tla/ring.tla.j2"\n    tla_adapter = "tla/ring_adapter.py:TokenRingAdapter"',
        )
        (tmp_path / name).write_text(text)
    (tmp_path / "tla" / "ring.tla.j2").write_text((EXAMPLE / "token_ring.tla.j2").read_text())
    (tmp_path / "tla" / "ring_adapter.py").write_text(
        (EXAMPLE / "token_ring_tla.py").read_text().replace('template = "token_ring.tla.j2"', 'template = ""')
    )
    model = tmp_path / "m.toml"
    model.write_text('spec = "token_ring.py"\n[constants]\nsenders = "a"\n')
    out = run_cli("export-tla", model, "-o", tmp_path / "out")
    assert out.exit_code == 0, out.output
    assert "TakeToken(q) ==" in (tmp_path / "out" / "m.tla").read_text()


# Spark ships a user's spec file to its executors: tests/test_spark.py (in the
# test session's Spark context).
