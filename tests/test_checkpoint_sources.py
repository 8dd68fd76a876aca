"""Checkpoints bound to their sources, and resumes that keep checkpointing (issue 28).

A checkpoint is a search half done. Resumed after the spec changed, the search would
mix two models: a property edited to fail at depth 2 "held", exit 0, because depth 2
had been searched before the edit. The manifest now records digests of ordercheck's
version, the model file and the spec's source files (the spec module and what it
imports from the user's project, :mod:`ordercheck.checker.loading.sources`); a resume with any of
them changed is refused, exit 2, naming what changed, unless ``--resume-anyway``.

And a resumed run must go on writing every later checkpoint: a resume that lost the
last parent link passed every worker, checkpoint and frontier test while each later
checkpoint was silently given up.

The runs that resume are real processes (a resume must see the edited files afresh, as
a user's next command does).
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.faults_helpers import MODELS, checkpoint_of, current_level, invoke, one_error_line, run

SPEC = '''
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the helper beside it

from ordercheck.checker import Constant, Property, Spec
from grid_helpers import AT


class Grid(Spec):
    """Two counters, each 0..n: the states at depth d are those with x + y = d."""

    name = "user_grid"
    constants = (Constant("n", int, 12, "each counter's largest value"),)

    def init_states(self):
        return [(0, 0)]

    def next_states(self, s):
        x, y = s
        out = []
        if x < self.n:
            out.append((("x",), (x + 1, y)))
        if y < self.n:
            out.append((("y",), (x, y + 1)))
        return out

    def properties(self):
        return [Property.always("near", lambda s: "too far" if s[0] + s[1] == BAD else None)]


BAD = 1000  # no state is this far
'''

HELPER = "AT = 0\n"

MODEL = '''spec = "grid.py"
[constants]
n = 12
[expect]
near = "holds"
'''

STATES = 13 * 13


def project(root: Path) -> Path:
    """A user's project: grid.py, the helper module it imports, and a model file."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "grid.py").write_text(SPEC)
    (root / "grid_helpers.py").write_text(HELPER)
    (root / "grid.toml").write_text(MODEL)
    return root / "grid.toml"


def interrupted(tmp_path: Path, workers: int) -> tuple[Path, Path]:
    """The project's model searched to a bound (exit 3), with a checkpoint at every level."""
    model = project(tmp_path / "proj")
    ckpt = tmp_path / "ckpt"
    out = run("check", model, "--quiet", "--workers", str(workers), "--checkpoint", ckpt, "--checkpoint-every", "0",
              "--max-states", "40")
    assert out.returncode == 3, out.stdout + out.stderr
    level = current_level(checkpoint_of(ckpt))
    assert level is not None and level > 2, level  # depth 2 was searched before the edit
    return model, ckpt


def resume(model: Path, ckpt: Path, workers: int, *flags: str, json_path: Path | None = None):
    args = ["check", model, "--quiet", "--workers", str(workers), "--checkpoint", ckpt, *flags]
    if json_path is not None:
        args += ["--json", json_path]
    return run(*args)


@pytest.mark.parametrize("workers", [1, 2])
def test_an_edited_property_refuses_the_resume(tmp_path: Path, workers: int) -> None:
    """The issue's case: the property edited to fail at depth 2 after the checkpoint."""
    model, ckpt = interrupted(tmp_path, workers)
    unchanged = tmp_path / "unchanged"
    shutil.copytree(ckpt, unchanged)
    spec = model.parent / "grid.py"
    spec.write_text(SPEC.replace("BAD = 1000", "BAD = 2"))
    fresh = run("check", model, "--quiet", "--workers", str(workers))
    assert fresh.returncode == 1 and "near  violated" in fresh.stdout, fresh.stdout

    out = resume(model, ckpt, workers, "--resume", json_path=tmp_path / "out.json")
    assert out.returncode == 2, out.stdout + out.stderr
    line = one_error_line(out.stderr)
    assert f"the spec's source file {spec} changed" in line, line
    assert "run again without --resume" in line and "--resume-anyway" in line, line
    assert out.stdout == "" and not (tmp_path / "out.json").exists()

    # --resume-anyway resumes, warning: here the result is the mixed one (depth 2 was
    # searched with the old property), which is why a plain --resume refuses.
    anyway = resume(model, ckpt, workers, "--resume-anyway", json_path=tmp_path / "anyway.json")
    assert anyway.returncode == 0, anyway.stdout + anyway.stderr
    warnings = [w for w in anyway.stderr.splitlines() if w.startswith("ordercheck: warning:")]
    assert len(warnings) == 1 and "--resume-anyway" in warnings[0] and str(spec) in warnings[0], anyway.stderr
    assert json.loads((tmp_path / "anyway.json").read_text())["stats"]["distinct_states"] == STATES

    # Put back as it was, the same checkpoint resumes without a word.
    spec.write_text(SPEC)
    same = resume(model, unchanged, workers, "--resume", json_path=tmp_path / "same.json")
    assert same.returncode == 0 and "warning" not in same.stderr, same.stderr
    assert json.loads((tmp_path / "same.json").read_text())["stats"]["distinct_states"] == STATES


@pytest.mark.parametrize("workers", [1, 2])
def test_an_edited_helper_module_refuses_the_resume(tmp_path: Path, workers: int) -> None:
    """A module the spec imports from the user's directory is part of its source."""
    model, ckpt = interrupted(tmp_path, workers)
    helper = model.parent / "grid_helpers.py"
    helper.write_text("AT = 1  # edited\n")
    out = resume(model, ckpt, workers, "--resume")
    assert out.returncode == 2, out.stdout + out.stderr
    line = one_error_line(out.stderr)
    assert f"the spec's source file {helper} changed" in line and str(model.parent / "grid.py") not in line, line


@pytest.mark.parametrize("workers", [1, 2])
def test_an_edited_model_file_refuses_the_resume(tmp_path: Path, workers: int) -> None:
    model, ckpt = interrupted(tmp_path, workers)
    model.write_text(MODEL + "# a comment\n")
    out = resume(model, ckpt, workers, "--resume")
    assert out.returncode == 2, out.stdout + out.stderr
    line = one_error_line(out.stderr)
    assert f"the model file {model.resolve()} changed" in line, line
    anyway = resume(model, ckpt, workers, "--resume-anyway")  # a comment: safe, and said to be the user's call
    assert anyway.returncode == 0, anyway.stderr
    assert f"the model file {model.resolve()} changed" in anyway.stderr


def test_another_ordercheck_version_refuses_the_resume(tmp_path: Path) -> None:
    model, ckpt = interrupted(tmp_path, 1)
    where = checkpoint_of(ckpt)
    current = where / (where / "CURRENT").read_text().strip()
    manifest = json.loads((current / "manifest.json").read_text())
    manifest["sources"]["ordercheck"] = "0.0.1"
    (current / "manifest.json").write_text(json.dumps(manifest))
    out = resume(model, ckpt, 1, "--resume")
    assert out.returncode == 2
    line = one_error_line(out.stderr)
    assert "the checkpoint was written by 0.0.1" in line and "without --resume" in line, line


def test_a_checkpoint_without_digests_is_another_versions(tmp_path: Path) -> None:
    """Format 2 (before digests): refused as another version's, not as damage."""
    model, ckpt = interrupted(tmp_path, 1)
    where = checkpoint_of(ckpt)
    for d in where.iterdir():
        if d.is_dir():
            manifest = json.loads((d / "manifest.json").read_text())
            manifest["format"] = 2
            del manifest["sources"]
            (d / "manifest.json").write_text(json.dumps(manifest))
    for flag in ("--resume", "--resume-anyway"):
        out = resume(model, ckpt, 1, flag)
        assert out.returncode == 2, out.stderr
        line = one_error_line(out.stderr)
        assert "written by another version of ordercheck" in line and "run again without --resume" in line, line
        assert "damaged" not in line


def test_resume_anyway_is_refused_with_spark(tmp_path: Path) -> None:
    out = invoke("check", MODELS / "fifo-3.toml", "--engine", "spark", "--resume-anyway")
    assert out.returncode == 2
    assert "--resume-anyway" in one_error_line(out.stderr)


# -- what is digested -----------------------------------------------------------------


def test_the_digested_files_of_a_user_spec(tmp_path: Path) -> None:
    """The spec file and its project's modules (a helper imported at the top, a package
    imported relatively, a module imported only inside a step not yet taken); not the
    standard library, installed packages or ordercheck's engine."""
    from ordercheck.checker.loading.sources import spec_files
    from ordercheck.checker.loading.specref import resolve

    root = tmp_path / "proj"
    (root / "lazypkg").mkdir(parents=True)
    (root / "lazypkg" / "__init__.py").write_text("from .inner import LIMIT\n")
    (root / "lazypkg" / "inner.py").write_text("LIMIT = 3\n")
    (root / "lazy_helper.py").write_text("def bump(x):\n    return x + 1\n")
    (root / "spec.py").write_text(
        f"import sys\nsys.path.insert(0, {str(root)!r})\n"
        "import json\nimport numpy\nfrom ordercheck import Property, Spec\nfrom lazypkg import LIMIT\n\n\n"
        "class Lazy(Spec):\n    name = 'lazy'\n\n    def init_states(self):\n        return [0]\n\n"
        "    def next_states(self, s):\n        from lazy_helper import bump\n\n"
        "        return [(('inc',), bump(s))] if s < LIMIT else []\n\n"
        "    def properties(self):\n        return [Property.always('ok', lambda s: None)]\n"
    )
    try:
        ref = resolve(str(root / "spec.py"))
        files = spec_files(ref.cls, (ref.module,))
    finally:
        sys.path[:] = [p for p in sys.path if p != str(root)]
        for name in ("lazypkg", "lazypkg.inner", "lazy_helper"):
            sys.modules.pop(name, None)
    assert sorted(files) == sorted(str(p) for p in (root / "spec.py", root / "lazypkg" / "__init__.py",
                                                      root / "lazypkg" / "inner.py", root / "lazy_helper.py"))


def test_the_digested_files_of_a_builtin_spec() -> None:
    """A built-in spec's module and the ``specs`` modules it builds on; the version."""
    import ordercheck.specs
    from ordercheck.checker.loading.modelfile import load_model

    model = load_model(MODELS / "bus1-3.toml")
    files = model.sources["spec_files"]
    specs_dir = Path(ordercheck.specs.__file__).resolve().parent
    assert str(specs_dir / "bus1.py") in files and str(specs_dir / "base.py") in files
    assert all(Path(f).is_relative_to(specs_dir) for f in files), files
    assert model.sources["ordercheck"] == ordercheck.__version__
    assert model.sources["model"]["path"] == str((MODELS / "bus1-3.toml").resolve())


# -- every later checkpoint after a resume ----------------------------------------------

LATE = MODELS / "bus1-mutant-no-block.toml"  # 12,853 states over 31 levels; causal violated 16 steps deep
LATE_ARGS = ("check", LATE, "--no-por", "--quiet", "--checkpoint-every", "0")


def _final_checkpoints(ckpt: Path) -> list[tuple[int, int, np.ndarray, np.ndarray, np.ndarray]]:
    """The two checkpoints kept (the one in force and the one before it): level, states,
    parent links and actions by number, and the fingerprints sorted."""
    where = checkpoint_of(ckpt)
    found = []
    for d in sorted(p for p in where.iterdir() if p.is_dir()):
        manifest = json.loads((d / "manifest.json").read_text())
        found.append((manifest["level"], manifest["states"], np.load(d / "parents.npy"),
                      np.load(d / "actions.npy"), np.sort(np.load(d / "fingerprints.npy"))))
    return found


def _verdicts(path: Path) -> tuple:
    data = json.loads(path.read_text())
    st = data["stats"]
    props = {n: (p["status"], p.get("explanation"), p.get("trace")) for n, p in data["properties"].items()}
    return st["distinct_states"], st["transitions"], st["depth"], props


@pytest.mark.parametrize("workers", [1, 2])
def test_a_resumed_run_writes_every_later_checkpoint(tmp_path: Path, workers: int) -> None:
    """Resumed at level 10 of 31, a run with a checkpoint at every level ends with the
    same last two checkpoints as an uninterrupted run (the same levels, parent links,
    actions and fingerprints) and never warns that one was not written (each failed
    write warns); its verdicts and traces, found after the resume, are the uninterrupted
    run's."""
    w = str(workers)
    whole = run(*LATE_ARGS, "--workers", w, "--checkpoint", tmp_path / "whole", "--json", tmp_path / "whole.json")
    assert whole.returncode == 0, whole.stderr
    cut = run(*LATE_ARGS, "--workers", w, "--checkpoint", tmp_path / "cut", "--max-states", "300")
    assert cut.returncode == 3, cut.stderr
    resumed_at = current_level(checkpoint_of(tmp_path / "cut"))
    assert resumed_at is not None and 2 < resumed_at < 16, resumed_at  # before any decision

    resumed = run(*LATE_ARGS, "--workers", w, "--checkpoint", tmp_path / "cut", "--resume",
                  "--json", tmp_path / "resumed.json")
    assert resumed.returncode == 0, resumed.stderr
    assert "not written" not in resumed.stderr and "warning" not in resumed.stderr, resumed.stderr
    assert _verdicts(tmp_path / "resumed.json") == _verdicts(tmp_path / "whole.json")
    traced = [p for p in _verdicts(tmp_path / "whole.json")[3].values() if p[2]]
    assert traced and all(len(p[2]) - 1 > resumed_at for p in traced)  # found after the resume

    ours, theirs = _final_checkpoints(tmp_path / "cut"), _final_checkpoints(tmp_path / "whole")
    assert [c[:2] for c in ours] == [c[:2] for c in theirs]
    assert ours[-1][0] == current_level(checkpoint_of(tmp_path / "whole")) > resumed_at + 1
    for a, b in zip(ours, theirs):
        for x, y in zip(a[2:], b[2:]):
            assert np.array_equal(x, y)


def test_an_import_path_spec_whose_submodule_changed_refuses_the_resume(tmp_path: Path) -> None:
    """``spec = "mypkg.grid:Grid"`` (found beside the model file), importing a limit from
    a subpackage relatively: an edit of that submodule is refused."""
    root = tmp_path / "proj"
    (root / "mypkg" / "sub").mkdir(parents=True)
    (root / "mypkg" / "__init__.py").write_text("")
    (root / "mypkg" / "sub" / "__init__.py").write_text("")
    (root / "mypkg" / "sub" / "limits.py").write_text("BAD = 1000\n")
    (root / "mypkg" / "grid.py").write_text(
        SPEC.replace("from grid_helpers import AT\n", "from .sub import limits\n").replace("== BAD", "== limits.BAD")
    )
    model = root / "grid.toml"
    model.write_text(MODEL.replace('"grid.py"', '"mypkg.grid:Grid"'))
    ckpt = tmp_path / "ckpt"
    cut = run("check", model, "--quiet", "--checkpoint", ckpt, "--checkpoint-every", "0", "--max-states", "40")
    assert cut.returncode == 3, cut.stdout + cut.stderr
    limits = root / "mypkg" / "sub" / "limits.py"
    limits.write_text("BAD = 2\n")
    out = resume(model, ckpt, 1, "--resume")
    assert out.returncode == 2, out.stdout + out.stderr
    assert f"the spec's source file {limits} changed" in one_error_line(out.stderr)
