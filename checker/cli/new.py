"""``ordercheck new``: a working skeleton of a spec in the user's own project.

``ordercheck new NAME --base peer|async|holdback [--tla]`` writes, in the working
directory:

- ``specs/NAME.py``: a complete small protocol on the chosen base, every hook there
  with a comment saying what it is for, to be replaced by the user's protocol;
- ``models/NAME.toml``: a model whose ``[expect]`` it meets, with ``[evidence]`` for
  each "holds" (a witness of :mod:`ordercheck.specs.witnesses`; with ``--base peer`` also the
  ablation model), and ``models/NAME-ABLATION.toml``: the same configuration with one
  step of the algorithm switched off, expected to fail (so the first model's "holds"
  is not vacuous);
- ``tests/test_NAME.py``: a pytest module handing both models to the pytest plugin
  (:class:`ordercheck.checker.pytest_plugin.ModelFiles`: their verdicts and [evidence] as items;
  (and ``export-tla`` with ``--tla``);
- with ``--tla``: ``specs/NAME.tla.j2`` and ``specs/NAME_tla.py``, the TLA+ template and
  its adapter, found beside the spec by ``export-tla`` and ``tlc``.

Nothing is overwritten: if any of the files exists, nothing is written and the command
exits with code 2 naming it. The files are written into a staging directory first and
moved into place together (:func:`write`): an error on the way (a full disk: exit code 6)
leaves nothing behind, not even an empty directory.
"""

from __future__ import annotations

import errno
import keyword
import os
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import click

from ordercheck.checker.api.errors import InputError
from ordercheck.checker.api.output_paths import check_outputs, outputs_of
from ordercheck.checker.api.outputs import STAGING, OutputError, naming
from ordercheck.checker.api.result import EXIT_OK

FILES = Path(__file__).resolve().parent / "scaffold_files"
BASES = ("peer", "async", "holdback")


@dataclass(frozen=True)
class Skeleton:
    """One base's files: template name -> path written (``NAME`` is replaced)."""

    base: str
    ablation: str  # the ablation model's suffix
    files: tuple[tuple[str, str], ...]
    tla_files: tuple[tuple[str, str], ...] = (
        ("tla.j2.tmpl", "specs/NAME.tla.j2"),
        ("tla_adapter.py.tmpl", "specs/NAME_tla.py"),
    )


SKELETONS = {
    base: Skeleton(
        base,
        ablation,
        (
            ("spec.py.tmpl", "specs/NAME.py"),
            ("model.toml.tmpl", "models/NAME.toml"),
            ("ablation.toml.tmpl", f"models/NAME-{ablation}.toml"),
            ("test.py.tmpl", "tests/test_NAME.py"),
        ),
    )
    for base, ablation in (("peer", "no-atomic-send"), ("async", "no-hold-back"), ("holdback", "no-hold-back"))
}


def class_name(name: str) -> str:
    """``token_ring`` -> ``TokenRing``."""
    return "".join(part[:1].upper() + part[1:] for part in name.split("_") if part) or "Spec"


def check_name(name: str) -> None:
    """Refuse a name that cannot be a module and spec name; :class:`InputError`."""
    if not (name.isidentifier() and name.isascii() and name == name.lower()) or keyword.iskeyword(name):
        raise InputError(name, "NAME", "must be a lower-case Python identifier, e.g. token_ring")
    if name.startswith("_"):
        raise InputError(name, "NAME", "must not start with an underscore")


SYMBOLIC_BASES = ("holdback",)
PROVE_TABLE = """
# `ordercheck prove models/__NAME__.toml`: Z3 shows that the invariant of
# specs/__NAME___symbolic.py is inductive for any number of messages and implies
# fifo_per_pair, so fifo holds on every run of this model (docs/howto/prove-any-length.md);
# bounded model checking to 2 steps finds the witness fifo_race.
[prove]
encoding = "../specs/__NAME___symbolic.py"
queue_bound = 2
depth = 2
"""


def plan(name: str, base: str, tla: bool, root: Path, symbolic: bool = False) -> list[tuple[Path, str]]:
    """The files to write under ``root`` and their text; :class:`InputError` if a file
    exists already (nothing is written then). With ``symbolic``, also the Z3 encoding
    ``specs/NAME_symbolic.py`` and a ``[prove]`` table in the model naming it."""
    check_name(name)
    if symbolic and base not in SYMBOLIC_BASES:
        raise InputError("--symbolic", "", f"is written for --base {' or '.join(SYMBOLIC_BASES)} only, not --base {base}")
    skeleton = SKELETONS[base]
    pairs = list(skeleton.files) + (list(skeleton.tla_files) if tla else [])
    if symbolic:
        pairs.append(("symbolic.py.tmpl", "specs/NAME_symbolic.py"))
    out = []
    for template, target in pairs:
        path = root / target.replace("NAME", name)
        if path.exists():
            raise InputError(str(path), "", "exists already; `ordercheck new` overwrites nothing (move it or pick another NAME)")
        text = (FILES / base / template).read_text(encoding="utf-8") if (FILES / base / template).exists() else (
            FILES / template
        ).read_text(encoding="utf-8")
        text = text.replace("__NAME__", name).replace("__CLASS__", class_name(name))
        text = text.replace("__ABLATION__", skeleton.ablation).replace("__BASE__", base)
        text = text.replace("__TLA__", "True" if tla else "False")
        if symbolic and template == "model.toml.tmpl":
            text += PROVE_TABLE.replace("__NAME__", name)
        out.append((path, text))
    return out


def write(files: list[tuple[Path, str]], root: Path) -> None:
    """Write every file under ``root``, or none, and overwrite nothing.

    The files are written first into a staging directory inside ``root``; only when
    all of them are written (a full disk stops the command there) are they moved into
    place, each by a hard link that fails if its target exists. On any error every file
    put in place, every directory made for them and the staging directory are removed,
    so a rerun starts from what was there before."""
    made: list[Path] = []
    placed: list[Path] = []
    staging: Path | None = None
    try:
        _makedirs(root, made)
        staging = Path(tempfile.mkdtemp(prefix=f"{STAGING}new.", dir=root))
        staged = []
        for path, text in files:
            tmp = staging / path.relative_to(root)
            tmp.parent.mkdir(parents=True, exist_ok=True)
            with naming(path):
                with open(tmp, "w", encoding="utf-8") as fh:
                    fh.write(text)
            staged.append((tmp, path))
        for tmp, path in staged:
            _makedirs(path.parent, made)
            _place(tmp, path, placed)
    except BaseException as exc:
        for path in reversed(placed):
            path.unlink(missing_ok=True)
        if staging is not None:
            shutil.rmtree(staging, ignore_errors=True)
        for d in reversed(made):
            try:
                d.rmdir()
            except OSError:
                pass
        if isinstance(exc, FileExistsError):
            raise InputError(str(exc.filename), "", "exists already; `ordercheck new` overwrites nothing") from None
        raise
    shutil.rmtree(staging, ignore_errors=True)


def _makedirs(path: Path, made: list[Path]) -> None:
    """Create ``path`` and its missing parents, recording each one made (outermost first)."""
    missing = []
    p = path
    while not p.exists() and p.parent != p:
        missing.append(p)
        p = p.parent
    for d in reversed(missing):
        try:
            d.mkdir()
        except FileExistsError:
            continue
        except OSError as exc:
            raise OutputError(d, exc) from None
        made.append(d)


def _place(tmp: Path, path: Path, placed: list[Path]) -> None:
    """Put the staged ``tmp`` at ``path`` unless ``path`` exists (``FileExistsError``)."""
    try:
        os.link(tmp, path)
    except FileExistsError:
        raise
    except OSError as exc:
        if exc.errno not in (errno.EXDEV, errno.EPERM, errno.ENOTSUP, errno.EMLINK):
            raise OutputError(path, exc) from None
        with open(path, "x", encoding="utf-8") as fh:  # no hard links here: a copy, never over a file
            placed.append(path)
            with naming(path):
                fh.write(tmp.read_text(encoding="utf-8"))
        return
    placed.append(path)


@click.command(name="new")
@click.argument("name")
@click.option("--base", type=click.Choice(BASES), default="async", show_default=True,
              help="peer: PeerSpec (you write next_states); async: AsyncPeerSpec (channels, sends given); "
                   "holdback: HoldBackSpec (stamp, deliverable, on_deliver).")
@click.option("--tla", is_flag=True, help="Also write the TLA+ template and its adapter beside the spec.")
@click.option("--symbolic", is_flag=True,
              help="Also write the Z3 encoding specs/NAME_symbolic.py and a [prove] table in the model (--base holdback).")
@click.option("--dir", "directory", type=click.Path(file_okay=False), default=".", show_default=True,
              help="Where to write (the project's root).")
def new(name: str, base: str, tla: bool, directory: str, symbolic: bool = False) -> None:
    """Write a working skeleton of spec NAME: spec, models, a test (and TLA+ files)."""
    root = Path(directory)
    check_outputs(outputs_of(("--dir", directory, True, ())))
    files = plan(name, base, tla, root, symbolic)
    write(files, root)
    for path, _text in files:
        click.echo(f"wrote {path}")
    model = root / "models" / f"{name}.toml"
    click.echo(
        f"next: ordercheck check {model} {root / 'models' / f'{name}-{SKELETONS[base].ablation}.toml'}"
        + (f"; ordercheck export-tla {model} -o tla-out" if tla else "")
        + (f"; ordercheck prove {model}" if symbolic else "")
        + f"; pytest {root / 'tests' / f'test_{name}.py'}"
    )
    sys.exit(EXIT_OK)


def add_commands(group: click.Group) -> None:
    """Add ``new`` to the ``ordercheck`` group."""
    group.add_command(new)
