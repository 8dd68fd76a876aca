"""Results as JUnit XML, the test-report format CI systems read.

One ``<testsuite>`` per model and one ``<testcase>`` per model × property
(``classname`` is the model's name, ``name`` the property). A verdict that differs
from the model's ``[expect]`` is a ``<failure>`` whose message says expected and got
and whose body holds the explanation, the trace and the run's configuration (states,
transitions and depth searched, constants, bounds, reductions; the message itself
says the states searched, the constants and the reductions applied); an ``unknown`` verdict
(a bound cut the search) is an ``<error>`` whose message says which bound stopped the
search, after how many states and at what depth. Each suite's ``<properties>`` carry
the same configuration and what the model is (:mod:`ordercheck.reports.about`: description,
constants, bounds, reductions asked for and applied, ``[evidence]``, the properties not
checked and why, ordercheck's version, the commit, the date); each test case's
``<properties>`` the same, its expectation and its own evidence, without the list of
properties not checked. :func:`error_junit_xml` is the document for a run that stopped
on a model error (bad input, exit code 2) before any verdict. The whole search decides every property of a model
at once, so the time is given per suite; test cases carry ``time="0"``.

``prove`` records (:class:`ordercheck.reports.proofs.ProofRecord`, from ``prove --junit``
or ``report --junit`` on ``prove --json`` files) are one ``<testsuite>`` per model too
(``engine`` ``z3``), with one ``<testcase>`` per Z3 query (``classname`` the model's
name, ``name`` the query: ``initiation``, ``inductive: LEMMA``, ``implies: TARGET``,
``bmc: PROPERTY``, ``proof: PROPERTY``), its time the seconds Z3 spent on it. A query
whose outcome is a mismatch is a ``<failure>`` (message: expected and got; body: the
explanation and the two states and action of a counterexample to induction, or the
bounded trace); an ``unknown`` outcome is an ``<error>`` (message: why, as the console
says it). Each expectation no query decided is an ``<error>`` case named ``undecided:
PROPERTY``; each one ``[prove] properties`` leaves out is a ``<skipped>`` case named
``not judged: PROPERTY``.

With ``check --with-evidence``, one more ``<testsuite name="evidence">`` holds one
``<testcase>`` per ``[evidence]`` entry (``classname`` the model's name, ``name``
``evidence of PROPERTY``): a mutant that does not violate the property, or a witness
not reached, is a ``<failure>``; an ``unknown`` status is an ``<error>``.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from ordercheck.checker.api.evidence import EvidenceCheck
from ordercheck.checker.api.result import PropertyResult, Result
from ordercheck.reports.about import NOT_RECORDED, about, constants_text
from ordercheck.reports.diff import step_lines
from ordercheck.reports.proofs import ProofRecord

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
        lines += ["  " + line for line in step_lines(p.trace)]
    return "\n".join(lines)


def _configuration(r: Result) -> str:
    """What a failing or erroring case says of the run behind it: the search's size,
    constants, bounds and reductions, so a red CI job reads without the HTML."""
    st = r.stats
    search = (f"search: {st.distinct_states:,} distinct states, {st.transitions:,} transitions, depth {st.depth}, "
              f"{st.seconds:.2f} s, " + (r.bound_text() if st.bound else "complete"))
    constants = ", ".join(f"{k} = {v!r}" for k, v in r.constants.items()) or "(none)"
    bounds = ", ".join(f"{k} = {v}" for k, v in r.bounds.items() if v is not None) or "none"
    reductions = ", ".join(f"{k} {'on' if v else 'off'}" for k, v in r.reductions.items()) or "none recorded"
    return "\n".join([f"model: {r.model} (spec {r.spec}, engine {r.engine})", search, f"constants: {constants}",
                      f"bounds: {bounds}", f"reductions: {reductions}"])


def _config_properties(props: ET.Element, r: Result, search: bool = True) -> None:
    """The run's configuration as ``<property>`` elements of its suite (a test case's
    leave out the search's size, ``search``: its suite has it)."""
    st = r.stats
    sizes = (("transitions", st.transitions), ("depth", st.depth), ("stopped_by", st.bound or "")) if search else ()
    for key, value in (*sizes,
                       ("constants", ", ".join(f"{k} = {v!r}" for k, v in r.constants.items())),
                       ("bounds", ", ".join(f"{k} = {v}" for k, v in r.bounds.items() if v is not None)),
                       ("reductions", ", ".join(f"{k} {'on' if v else 'off'}" for k, v in r.reductions.items()))):
        ET.SubElement(props, "property", name=key, value=_text(value))


def _about_properties(props: ET.Element, r: Result, prop: str | None = None) -> None:
    """What the model is (:func:`ordercheck.reports.about.about`) as ``<property>`` elements:
    description, the reductions asked for, evidence (for ``prop`` alone, when given),
    the properties not checked and why (not for a ``prop``), ordercheck's version, the
    commit, the date. Constants, bounds and the reductions applied are
    :func:`_config_properties`'."""
    asked = ", ".join(f"{k} {'on' if v else 'off'}" for k, v in r.reductions_requested.items()) or NOT_RECORDED
    for key, value in about(r).lines():
        if key in ("constants", "bounds"):
            continue
        if key == "reductions":
            key, value = "reductions_requested", asked
        if prop is not None and key == "evidence":
            entry = r.evidence.get(prop)
            value = " ".join(f"{kind} {name}" for kind, name in entry.items()) if entry else "none"
        if prop is not None and key == "not_checked":
            continue  # a property of the model's, in its suite's properties
        ET.SubElement(props, "property", name=key, value=_text(value))


def _failure_message(pname: str, p: PropertyResult, r: Result) -> str:
    """A failed case's one line: expected and got, the trace's length, how many states
    the search went through and the configuration (constants, reductions applied), so
    the CI's summary says what ran without opening the body."""
    expected = p.expected_word or "not violated"
    st = r.stats
    trace = f", {len(p.trace) - 1}-step trace" if p.trace else ""
    applied = ", ".join(k for k, v in r.reductions.items() if v) or "none"
    return (f"{pname}: expected {expected}, got {p.word}{trace}; {st.distinct_states:,} distinct states searched "
            f"(depth {st.depth}{', ' + r.bound_text() if st.bound else ''}); constants {constants_text(r.constants)}; "
            f"reductions applied: {applied}")


def error_junit_xml(where: str, field: str, message: str, kind: str = "input", results: list[Result] | None = None,
                    name: str = "ordercheck") -> str:
    """A JUnit XML document for a run that stopped on a model error (exit code 2 for bad
    input, 5 for a spec's exception): the suites of ``results`` decided before it, if
    any, then one suite named after the file, with one ``<testcase>`` named after the
    field at fault (``model file`` when none) holding an ``<error>`` whose message is
    the command line's one line."""
    root = ET.fromstring(junit_xml(results or [], name=name).split("\n", 1)[1])
    suite = ET.SubElement(root, "testsuite", name=_text(where), tests="1", failures="0", errors="1", skipped="0",
                          time="0.000")
    model = where.rsplit("/", 1)[-1].removesuffix(".toml")
    case = ET.SubElement(suite, "testcase", classname=_text(model), name=_text(field or "model file"), time="0")
    line = ": ".join(p for p in (where, field, message) if p)
    err = ET.SubElement(case, "error", type=kind, message=_text(line))
    err.text = _text(f"file: {where}\nfield: {field or '(the file as a whole)'}\n{message}")
    for key in ("tests", "errors"):
        root.set(key, str(int(root.get(key, "0")) + 1))
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def junit_xml(results: list[Result], name: str = "ordercheck", evidence: list[EvidenceCheck] | None = None,
              proofs: list[ProofRecord] | None = None) -> str:
    """The JUnit XML document for ``results``, ``prove``'s ``proofs`` and ``evidence``
    (those given)."""
    root = ET.Element("testsuites", name=name)
    totals = {"tests": 0, "failures": 0, "errors": 0}
    seconds = 0.0
    for r in results:
        model = r.model.rsplit("/", 1)[-1].removesuffix(".toml")
        suite = ET.SubElement(root, "testsuite", name=_text(r.model))
        props = ET.SubElement(suite, "properties")
        for key, value in (("spec", r.spec), ("engine", r.engine), ("distinct_states", r.stats.distinct_states)):
            ET.SubElement(props, "property", name=key, value=_text(value))
        _config_properties(props, r)
        _about_properties(props, r)
        failures = errors = 0
        for pname, p in r.properties.items():
            case = ET.SubElement(suite, "testcase", classname=_text(model), name=_text(pname), time="0")
            case_props = ET.SubElement(case, "properties")
            ET.SubElement(case_props, "property", name="expected", value=_text(p.expected_word or "not violated"))
            _config_properties(case_props, r, search=False)
            _about_properties(case_props, r, pname)
            if p.status == "unknown":
                errors += 1
                err = ET.SubElement(case, "error", type="unknown", message=_text(p.explanation or "no verdict"))
                err.text = _text("\n".join(x for x in (_body(p), _configuration(r)) if x))
            elif not p.as_expected:
                failures += 1
                fail = ET.SubElement(case, "failure", type=p.status, message=_text(_failure_message(pname, p, r)))
                body = _body(p)
                if not body and p.status == "holds":
                    body = f"{pname} holds: the search found no counterexample"
                fail.text = _text("\n".join(x for x in (body, _configuration(r)) if x))
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
    for record in proofs or []:
        counts, secs = _proof_suite(root, record)
        for key, value in counts.items():
            totals[key] = totals.get(key, 0) + value
        seconds += secs
    if evidence is not None:
        failures, errors = _evidence_suite(root, evidence)
        totals["tests"] += len(evidence)
        totals["failures"] += failures
        totals["errors"] += errors
    for key, value in totals.items():
        if key != "skipped" or value:
            root.set(key, str(value))
    root.set("time", f"{seconds:.3f}")
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _proof_suite(root: ET.Element, record: ProofRecord) -> tuple[dict[str, int], float]:
    """Add one ``prove`` record's suite to ``root``; returns its counts (tests,
    failures, errors, skipped) and its Z3 seconds."""
    data = record.to_json()
    model = record.model.rsplit("/", 1)[-1].removesuffix(".toml")
    suite = ET.SubElement(root, "testsuite", name=_text(record.model))
    props = ET.SubElement(suite, "properties")
    constants = data.get("constants") or {}
    config = (("spec", record.spec), ("engine", "z3"), ("configuration", record.summary),
              ("constants", ", ".join(f"{k} = {v!r}" for k, v in constants.items()) if isinstance(constants, dict) else
               constants),
              ("lemmas", ", ".join(map(str, data.get("lemmas") or []))), ("depth", data.get("depth") or 0))
    for key, value in config:
        ET.SubElement(props, "property", name=key, value=_text(value))
    where = f"model: {record.model} (spec {record.spec}, engine z3); {record.summary}"
    counts = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    for row in record.rows:
        counts["tests"] += 1
        case = ET.SubElement(suite, "testcase", classname=_text(model), name=_text(row.name), time=f"{row.seconds:.3f}")
        case_props = ET.SubElement(case, "properties")
        ET.SubElement(case_props, "property", name="expected", value=_text(row.expected or "-"))
        ET.SubElement(case_props, "property", name="got", value=_text(row.shown))
        if row.outcome == "ok":
            continue
        body = "\n".join(x for x in (row.note, row.explanation, *record.trace_lines(row.name), where) if x)
        if row.outcome == "unknown":
            counts["errors"] += 1
            node = ET.SubElement(case, "error", type="unknown", message=_text(f"{row.name}: {row.shown}: {row.note}"))
        else:
            counts["failures"] += 1
            node = ET.SubElement(case, "failure", type=str(row.outcome),
                                 message=_text(f"{row.name}: expected {row.expected or '-'}, got {row.shown}"
                                               + (f" ({row.note})" if row.note and row.note != f"expected {row.expected}"
                                                  else "")))
        node.text = _text(body)
    for prop, word in (data.get("undecided") or {}).items():
        counts["tests"] += 1
        counts["errors"] += 1
        case = ET.SubElement(suite, "testcase", classname=_text(model), name=_text(f"undecided: {prop}"), time="0")
        node = ET.SubElement(case, "error", type="unknown",
                             message=_text(f"{prop}: expected {word}, no query decides it (run check on this model)"))
        node.text = _text(where)
    for prop, word in (data.get("not_judged") or {}).items():
        counts["tests"] += 1
        counts["skipped"] += 1
        case = ET.SubElement(suite, "testcase", classname=_text(model), name=_text(f"not judged: {prop}"), time="0")
        ET.SubElement(case, "skipped", message=_text(f"{prop} (expected {word}) is not in [prove] properties: "
                                                     "check decides it"))
    seconds = float(data.get("z3_seconds") or 0.0)
    for key, value in counts.items():
        suite.set(key, str(value))
    suite.set("time", f"{seconds:.3f}")
    return counts, seconds


def _evidence_suite(root: ET.Element, checks: list[EvidenceCheck]) -> tuple[int, int]:
    """Add the ``evidence`` suite to ``root``; returns its failures and errors."""
    suite = ET.SubElement(root, "testsuite", name="evidence")
    failures = errors = 0
    for c in checks:
        model = c.model.rsplit("/", 1)[-1].removesuffix(".toml")
        case = ET.SubElement(suite, "testcase", classname=_text(model), name=_text(f"evidence of {c.prop}"), time="0")
        what = f"{c.prop} <- {c.kind} {c.name}: {c.word} (wanted {c.wanted_word})"
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
