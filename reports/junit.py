"""Results as JUnit XML, the test-report format CI systems read.

One ``<testsuite>`` per model and one ``<testcase>`` per model × property
(``classname`` is the model's name, ``name`` the property). A verdict that differs
from the model's ``[expect]`` is a ``<failure>`` whose message says expected and got
and whose body holds the explanation and the trace; an ``unknown`` verdict (a bound
cut the search) is an ``<error>``. The whole search decides every property of a model
at once, so the time is given per suite; test cases carry ``time="0"``.

With ``check --with-evidence``, one more ``<testsuite name="evidence">`` holds one
``<testcase>`` per ``[evidence]`` entry (``classname`` the model's name, ``name``
``evidence of PROPERTY``): a mutant that does not violate the property, or a witness
not reached, is a ``<failure>``; an ``unknown`` status is an ``<error>``.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from checker.api.evidence import EvidenceCheck
from checker.api.result import PropertyResult, Result

_BAD_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def _text(value: object) -> str:
    """Text XML 1.0 can hold (ElementTree escapes markup, not control characters)."""
    return _BAD_XML.sub("?", str(value))


def _body(p: PropertyResult) -> str:
    lines = []
    if p.explanation:
        lines.append(p.explanation)
    if p.trace:
        lines.append(f"trace ({len(p.trace) - 1} steps):")
        for i, step in enumerate(p.trace):
            lines.append(f"  {i:>3}. {step.action or 'initial state'}")
    return "\n".join(lines)


def junit_xml(results: list[Result], name: str = "ordercheck", evidence: list[EvidenceCheck] | None = None) -> str:
    """The JUnit XML document for ``results``, and for ``evidence`` when given."""
    root = ET.Element("testsuites", name=name)
    totals = {"tests": 0, "failures": 0, "errors": 0}
    seconds = 0.0
    for r in results:
        model = r.model.rsplit("/", 1)[-1].removesuffix(".toml")
        suite = ET.SubElement(root, "testsuite", name=_text(r.model))
        props = ET.SubElement(suite, "properties")
        for key, value in (("spec", r.spec), ("engine", r.engine), ("distinct_states", r.stats.distinct_states)):
            ET.SubElement(props, "property", name=key, value=_text(value))
        failures = errors = 0
        for pname, p in r.properties.items():
            case = ET.SubElement(suite, "testcase", classname=_text(model), name=_text(pname), time="0")
            if p.status == "unknown":
                errors += 1
                err = ET.SubElement(case, "error", type="unknown", message=_text(p.explanation or "no verdict"))
                err.text = _text(_body(p))
            elif not p.as_expected:
                failures += 1
                expected = p.expected_word or "not violated"
                fail = ET.SubElement(
                    case, "failure", type=p.status, message=_text(f"{pname}: expected {expected}, got {p.word}")
                )
                body = _body(p)
                if not body and p.status == "holds":
                    body = f"{pname} holds: the search found no counterexample"
                fail.text = _text(body)
        n = len(r.properties)
        suite.set("tests", str(n))
        suite.set("failures", str(failures))
        suite.set("errors", str(errors))
        suite.set("skipped", "0")
        suite.set("time", f"{r.stats.seconds:.3f}")
        totals["tests"] += n
        totals["failures"] += failures
        totals["errors"] += errors
        seconds += r.stats.seconds
    if evidence is not None:
        failures, errors = _evidence_suite(root, evidence)
        totals["tests"] += len(evidence)
        totals["failures"] += failures
        totals["errors"] += errors
    for key, value in totals.items():
        root.set(key, str(value))
    root.set("time", f"{seconds:.3f}")
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _evidence_suite(root: ET.Element, checks: list[EvidenceCheck]) -> tuple[int, int]:
    """Add the ``evidence`` suite to ``root``; returns its failures and errors."""
    suite = ET.SubElement(root, "testsuite", name="evidence")
    failures = errors = 0
    for c in checks:
        model = c.model.rsplit("/", 1)[-1].removesuffix(".toml")
        case = ET.SubElement(suite, "testcase", classname=_text(model), name=_text(f"evidence of {c.prop}"), time="0")
        what = f"{c.prop} <- {c.kind} {c.name}: {c.status} (wanted {c.wanted})"
        if c.ok:
            continue
        if c.status == "unknown":
            errors += 1
            node = ET.SubElement(case, "error", type="unknown", message=_text(what))
        else:
            failures += 1
            node = ET.SubElement(case, "failure", type="evidence", message=_text(what))
        node.text = _text(c.message())
    for key, value in (("tests", len(checks)), ("failures", failures), ("errors", errors), ("skipped", 0), ("time", "0.000")):
        suite.set(key, str(value))
    return failures, errors
