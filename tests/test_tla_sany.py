"""Every built-in model's export passes SANY, the TLA+ tools' own parser and semantic
checker (needs TLA2TOOLS_JAR and java; skipped without them, saying why).

tree-sitter-tlaplus (``tests/test_tla_export.py``) checks syntax only. SANY also finds
what only the semantics shows: an undefined name, or a bound variable that clashes with
a constant, such as a template's ``c`` or ``d`` in a model whose peers or nodes are
named ``c`` and ``d``. One SANY run checks every export, plus a canary module that
must be reported, so the check cannot pass by reading nothing.
"""

from __future__ import annotations

import re
import subprocess

import pytest

from ordercheck.checker.loading.modelfile import load_model
from ordercheck.tla.adapters import adapter_for
from ordercheck.tla.export import NoTemplate, export_model
from ordercheck.tla.tlc import TlcUnavailable, find_tlc
from tests.conftest import MODELS

try:
    JAVA, JAR = find_tlc()
    NO_TLC = ""
except TlcUnavailable as exc:
    NO_TLC = f"TLC not available: {exc}"

pytestmark = [pytest.mark.tlc, pytest.mark.skipif(bool(NO_TLC), reason=NO_TLC or "TLC available")]

CANARY = "sany_canary"
CANARY_TEXT = f"---- MODULE {CANARY} ----\nCONSTANTS c\nF(c) == c\n====\n"
_MODULE = re.compile(r"^Semantic processing of module (\w+)", re.M)
_PROBLEM = re.compile(r"Semantic errors:|\*\*\* Errors|\*\*\*Parse Error\*\*\*|Lexical error|Fatal errors")


def run_sany(files: list[str], cwd, java: str | None = None, jar: str | None = None,
             timeout: float | None = 300) -> subprocess.CompletedProcess[str]:
    """SANY on ``files`` (names in ``cwd``), run in ``cwd``. SANY leaves a ``tlc-*``
    folder in the JVM's temporary directory each run, so that is ``cwd`` too (a test's
    own folder), not the machine's."""
    java, jar = java or JAVA, jar or JAR
    return subprocess.run([java, f"-Djava.io.tmpdir={cwd}", "-cp", jar, "tla2sany.SANY", *files], cwd=cwd,
                          capture_output=True, text=True, timeout=timeout)


def sany_problems(output: str) -> dict[str, str]:
    """SANY's output split by module, keeping the modules it reports a problem in."""
    found = {}
    marks = list(_MODULE.finditer(output))
    for i, mark in enumerate(marks):
        end = marks[i + 1].start() if i + 1 < len(marks) else len(output)
        chunk = output[mark.end():end]
        if _PROBLEM.search(chunk):
            found[mark.group(1)] = chunk.strip()
    return found


def test_every_export_passes_sany(tmp_path):
    names = []
    for path in sorted(MODELS.glob("*.toml")):
        model = load_model(path)
        if adapter_for(model.spec_name) is None:
            continue
        try:
            export = export_model(model)
        except NoTemplate:
            continue  # a configuration the template does not mirror; test_tla_export checks the refusal
        export.write(tmp_path)
        names.append(export.name)
    (tmp_path / f"{CANARY}.tla").write_text(CANARY_TEXT, encoding="utf-8")
    files = [f"{n}.tla" for n in [*names, CANARY]]
    proc = run_sany(files, tmp_path, timeout=None)
    output = proc.stdout + proc.stderr
    checked = set(_MODULE.findall(output))
    assert set(names) <= checked, f"SANY did not check {sorted(set(names) - checked)}:\n{output[-2000:]}"
    problems = sany_problems(output)
    assert CANARY in problems and "Multiply-defined symbol 'c'" in problems[CANARY]
    del problems[CANARY]
    assert problems == {}, "\n\n".join(f"{name}:\n{text}" for name, text in problems.items())
