"""Shipping users' spec modules to Spark executors.

A built-in spec, or one an installed package registers, is importable on every executor
that has ordercheck and that package installed. A spec in the user's project is not: the
driver ships it with the job.

- A spec *file* (``spec = "specs/token.py"``) is copied under its module name
  (:func:`ordercheck.checker.loading.specref.module_name_for`, unique per absolute path) and added with
  ``SparkContext.addFile``; an executor imports that copy, under the same module name
  as the driver, so classes pickled on one side unpickle on the other.
- A spec named by *import path* whose top-level package is not installed (a package in
  the user's project, found beside the model file) is zipped and added with
  ``SparkContext.addPyFile``, which puts it on the executors' ``sys.path``.

On a ``local[...]`` master the executors could read the original file too; they use the
shipped copy all the same, so local runs exercise what a cluster does. A spec file must
be self-contained (it may import ordercheck and installed packages, not modules beside
it); put helpers in a package and name the spec by import path to ship them too.
"""

from __future__ import annotations

import atexit
import importlib.util
import shutil
import site
import sys
import sysconfig
import zipfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ordercheck.checker.api.spec import Spec
from ordercheck.checker.loading.specref import (
    is_file_reference,
    load_file,
    module_name_for,
    reference_of,
    spec_class_of,
)

_SHIPPED: dict[int, set[str]] = {}  # id(SparkContext) -> what was added to it


def ship_specs(sc: Any, classes: Iterable[type[Spec]]) -> list[str]:
    """Add to ``sc`` what its executors need to import each spec class; returns what
    was added this call (file names or zip names), each at most once per context."""
    done = _SHIPPED.setdefault(id(sc), set())
    added: list[str] = []
    for cls in classes:
        ref = reference_of(cls)
        if is_file_reference(ref):
            path = Path(split_file_reference(ref)[0])
            name = module_name_for(path) + ".py"
            if name in done:
                continue
            staged = _staging() / name
            shutil.copyfile(path, staged)
            sc.addFile(str(staged))
        elif ":" in ref:
            top = ref.split(":", 1)[0].split(".")[0]
            root = _local_package(top)
            if root is None:
                continue
            name = f"{top}.zip"
            if name in done:
                continue
            sc.addPyFile(str(_zip_package(root, top)))
        else:
            continue
        done.add(name)
        added.append(name)
    return added


def task_spec_class(ref: str) -> type[Spec]:
    """The spec class of a canonical reference, on an executor: a spec file from the
    copy the driver shipped (see :func:`ship_specs`), anything else as the driver does."""
    if is_file_reference(ref):
        path_text, attr = split_file_reference(ref)
        path = Path(path_text)
        name = module_name_for(path)
        copy = shipped_copy(name + ".py")
        if copy is not None:
            module = load_file(copy, name)
            cls = getattr(module, attr)
            if isinstance(cls, type) and issubclass(cls, Spec):
                return cls
    return spec_class_of(ref)


def shipped_copy(filename: str) -> Path | None:
    """Where ``SparkContext.addFile`` put ``filename`` on this executor, if it did."""
    try:
        from pyspark import SparkFiles

        root = SparkFiles.getRootDirectory()
    except Exception:  # not inside Spark
        return None
    copy = Path(root) / filename
    return copy if copy.is_file() else None


def split_file_reference(ref: str) -> tuple[str, str]:
    """``("/abs/specs/token.py", "TokenRing")`` from a canonical file reference."""
    path, _sep, attr = ref.rpartition(":")
    return path, attr


SHIP_PREFIX = "ordercheck-ship-"


def _staging() -> Path:
    """A temporary directory for shipped copies, named after this process and removed
    when it exits; one a process killed outright left behind (``atexit`` does not run
    then) is removed by the next that makes one
    (:func:`~ordercheck.checker.engine.frontier.own_spill_dir`)."""
    from ordercheck.checker.engine.frontier import own_spill_dir

    where = Path(own_spill_dir(SHIP_PREFIX))
    atexit.register(shutil.rmtree, where, True)
    return where


def _local_package(top: str) -> Path | None:
    """The directory of package ``top`` when it is the user's own (not installed in
    site-packages or the standard library), else ``None``: never ordercheck itself."""
    if top == "ordercheck":
        return None
    found = importlib.util.find_spec(top)
    if found is None:
        return None
    if found.submodule_search_locations:
        where = Path(list(found.submodule_search_locations)[0]).resolve()
    elif found.origin:
        where = Path(found.origin).resolve()
    else:
        return None
    installed = {Path(p).resolve() for p in (*site.getsitepackages(), site.getusersitepackages(),
                                             sysconfig.get_paths()["stdlib"], sys.prefix)}
    if any(where.is_relative_to(p) for p in installed):
        return None
    return where


def _zip_package(where: Path, top: str) -> Path:
    target = _staging() / f"{top}.zip"
    with zipfile.ZipFile(target, "w") as zf:
        if where.is_dir():
            for f in sorted(where.rglob("*.py")):
                zf.write(f, Path(top) / f.relative_to(where))
        else:
            zf.write(where, where.name)
    return target
