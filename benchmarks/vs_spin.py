"""ordercheck against SPIN on BSS 2x5 causal delivery (issue 33), in the same run.

The model is ``benchmarks/models/bss-2x5.toml`` (Birman-Schiper-Stephenson causal
broadcast, 2 peers x 5 broadcasts, unordered channels), checked for ``causal`` only;
SPIN checks ``benchmarks/promela/bss_2x5.pml``, the same protocol written in Promela
with the same state as ordercheck's unreduced search and the causal-delivery property
as an assertion at each delivery. Three comparisons, each ordercheck then SPIN:

- ``unreduced``: ``ordercheck check --no-symmetry --no-por`` against the verifier
  compiled with ``-DNOREDUCE`` (SPIN's partial-order reduction off). The two state
  counts must be equal (the row says ``DIFFER`` otherwise);
- ``to verdict``: each tool's default, ``ordercheck check`` (symmetry and partial-order
  reduction) against the verifier with SPIN's own partial-order reduction;
- ``mutant``: BSS without condition (a) (``condition_a = false``; ``-DCOND_A=0``), which
  both must find violated: the "holds" above is not vacuous.

Each run is a whole process timed from outside (wall seconds, and CPU seconds of the
process and those it waited for). ordercheck's time to the verdict is one ``ordercheck check``
process, Python's start-up included; SPIN's is three (``spin -a``, ``gcc`` on
``pan.c``, ``./pan``), given both as the whole and as the search (``pan``) alone.
States per second are per second of each tool's own search time (ordercheck's
``stats.seconds``, pan's "elapsed time"). The ratio is ordercheck's time over SPIN's:
above 1, SPIN reached the verdict sooner. The verifier is compiled with ``-O2 -DSAFETY``
(plus ``--cflags``, e.g. ``-DCOLLAPSE``) in a temporary directory removed afterwards.

Without ``spin`` or ``gcc`` on ``PATH`` it says so and exits 0 (a benchmark, not a
test). With ``--tlc`` and ``TLA2TOOLS_JAR`` set, TLC checks the model's TLA+ export
(unreduced, ``benchmarks/reduced_vs_tlc.py``'s run) as a third tool. Exit status 1 when
the two tools' verdicts disagree, a verdict is not the expected one (the model holds,
the mutant is violated) or the unreduced counts differ.

With more than one CPU, ordercheck's default run is timed a second time with ``--workers``
set to the number of CPUs (``--workers N`` to choose, ``1`` to skip): the same search
sharded over worker processes, against the same SPIN run (SPIN's verifier is compiled
for one core).

    python benchmarks/vs_spin.py [--sends N] [--no-unreduced] [--cflags "-DCOLLAPSE"] [--tlc] [--workers N]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import resource
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
MODEL = HERE / "models" / "bss-2x5.toml"
PROMELA = HERE / "promela" / "bss_2x5.pml"
MAX_SENDS = 5
"""The Promela model writes out its choices for message numbers 0..4."""
ENCODED = {"peers": 2, "sends": MAX_SENDS, "destinations": "others", "signals": 0, "channel": "unordered",
           "lossy": False, "duplicates": 0, "update": "max", "condition_a": True, "condition_b": True}
"""The constants of the BSS configuration the Promela model encodes (``sends`` up to
:data:`MAX_SENDS`, ``condition_a`` false for the mutant); the model file may leave any
of them out, at its default."""


@dataclass(frozen=True)
class Timed:
    """One process run to its end: its output, exit status, wall and CPU seconds."""

    output: str
    code: int
    wall: float
    cpu: float


def timed(cmd: list[str], cwd: Path | None = None) -> Timed:
    """Run ``cmd`` to its end; wall seconds from outside, CPU seconds (user + system) of
    it and of the processes it waited for (gcc's compiler passes), from the growth of
    this process's children's usage."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, check=False)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return Timed(proc.stdout, proc.returncode, wall, cpu)


# -- SPIN ------------------------------------------------------------------------------


@dataclass(frozen=True)
class PanRun:
    """What a SPIN verifier (``pan``) reported."""

    states: int
    transitions: int
    depth: int
    errors: int
    seconds: float | None
    """pan's own "elapsed time" (``None`` when it printed none)."""
    complete: bool
    """The search explored every state (no "Search not completed", no depth limit hit)."""
    violation: str | None
    """The first error pan names ("assertion violated ...", "invalid end state ...")."""

    @property
    def verdict(self) -> str:
        """``holds`` (complete, no error), ``violated`` (an assertion failed) or
        ``unknown`` (anything else: an invalid end state, an incomplete search)."""
        if self.violation is not None and self.violation.startswith("assertion violated"):
            return "violated"
        if self.errors == 0 and self.complete:
            return "holds"
        return "unknown"


_VECTOR = re.compile(r"^State-vector \d+ byte, depth reached (\d+), errors: (\d+)$", re.M)
_STORED = re.compile(r"^\s*(\d+) states, stored", re.M)
_TRANSITIONS = re.compile(r"^\s*(\d+) transitions \(= stored\+matched\)", re.M)
_ELAPSED = re.compile(r"^pan: elapsed time ([\d.e+-]+) seconds$", re.M)
_ERROR = re.compile(r"^pan:\d+: (.+?)(?: \(at depth \d+\))?$", re.M)


def parse_pan(text: str) -> PanRun:
    """The figures of a pan run's output; ``ValueError`` when it has no statistics
    (pan did not get to the end of a search)."""
    vector, stored, transitions = _VECTOR.search(text), _STORED.search(text), _TRANSITIONS.search(text)
    if vector is None or stored is None or transitions is None:
        raise ValueError("no search statistics in pan's output: " + " | ".join(text.strip().splitlines()[-3:]))
    elapsed = _ELAPSED.search(text)
    error = _ERROR.search(text)
    complete = "Search not completed" not in text and "max search depth too small" not in text
    return PanRun(
        states=int(stored.group(1)),
        transitions=int(transitions.group(1)),
        depth=int(vector.group(1)),
        errors=int(vector.group(2)),
        seconds=float(elapsed.group(1)) if elapsed else None,
        complete=complete,
        violation=error.group(1) if error else None,
    )


@dataclass(frozen=True)
class SpinRun:
    """A SPIN verification from the Promela source: the three processes and pan's report."""

    generate: Timed
    compile: Timed
    search: Timed
    pan: PanRun

    @property
    def wall(self) -> float:
        """Wall seconds of the three processes together (the time to the verdict)."""
        return self.generate.wall + self.compile.wall + self.search.wall

    @property
    def cpu(self) -> float:
        return self.generate.cpu + self.compile.cpu + self.search.cpu


def spin_missing() -> str | None:
    """Why SPIN cannot run here (``spin`` or ``gcc`` not on ``PATH``), or ``None``."""
    missing = [tool for tool in ("spin", "gcc") if shutil.which(tool) is None]
    return f"{' and '.join(missing)} not on PATH" if missing else None


def spin_version() -> str:
    """``spin -V``'s line, e.g. ``Spin Version 6.5.2 -- 6 December 2019``."""
    return subprocess.run(["spin", "-V"], capture_output=True, text=True, check=False).stdout.strip()


def run_spin(work: Path, defines: dict[str, int], cflags: list[str]) -> SpinRun:
    """Generate the verifier for the Promela model with ``defines`` (``-DNAME=VALUE`` for
    SPIN's preprocessor), compile it with ``gcc -O2 -DSAFETY`` and ``cflags``, run it, in
    ``work`` (the model is copied there, so a trail file lands beside it)."""
    for old in work.iterdir():
        if old.is_file():
            old.unlink()
    source = work / PROMELA.name
    shutil.copyfile(PROMELA, source)
    generate = timed(["spin", *[f"-D{k}={v}" for k, v in defines.items()], "-a", source.name], cwd=work)
    if generate.code != 0:
        raise RuntimeError(f"spin -a failed ({generate.code}): {generate.output.strip()}")
    compiled = timed(["gcc", "-O2", "-DSAFETY", *cflags, "-o", "pan", "pan.c"], cwd=work)
    if compiled.code != 0:
        raise RuntimeError(f"gcc failed ({compiled.code}): {compiled.output.strip()}")
    search = timed(["./pan"], cwd=work)
    return SpinRun(generate, compiled, search, parse_pan(search.output))


# -- ordercheck -------------------------------------------------------------------------


@dataclass(frozen=True)
class OrdercheckRun:
    """One ``ordercheck check`` process and its JSON record."""

    process: Timed
    states: int
    transitions: int
    seconds: float
    verdict: str
    as_expected: bool


def model_text(sends: int, condition_a: bool, expect: str) -> str:
    """``bss-2x5.toml``'s constants with ``sends`` and ``condition_a`` set, checking
    ``causal`` only and expecting ``expect`` of it."""
    with MODEL.open("rb") as f:
        constants = dict(tomllib.load(f)["constants"])
    differs = {k: v for k, v in constants.items() if k not in ENCODED or (k != "sends" and v != ENCODED[k])}
    if differs:
        raise SystemExit(f"{MODEL.name}: {differs} is not what {PROMELA.name} encodes ({ENCODED})")
    constants.update(sends=sends, condition_a=condition_a)
    lines = ['spec = "bss"', 'description = "BSS causal only, for benchmarks/vs_spin.py"', "", "[constants]"]
    lines += [f"{k} = {json.dumps(v)}" for k, v in constants.items()]  # ints, bools and strings: TOML as JSON writes them
    lines += ["", "[check]", 'properties = ["causal"]', "", "[expect]", f'causal = "{expect}"', ""]
    return "\n".join(lines)


def run_ordercheck(model: Path, flags: list[str], work: Path) -> OrdercheckRun:
    """``python -m ordercheck check --quiet FLAGS MODEL`` as a process of its own, run in
    ``work``: ``-m`` puts the working directory first on the module path, and a
    checkout's root holds an ``ordercheck`` folder, so run from another checkout it would
    time that checkout's code instead of this interpreter's installed one."""
    record = work / "ordercheck.json"
    proc = timed([sys.executable, "-m", "ordercheck", "check", "--quiet", "--json", str(record), *flags, str(model)],
                 cwd=work)
    if not record.is_file():
        raise RuntimeError(f"ordercheck check exited {proc.code} without a record: {proc.output.strip()}")
    rec = json.loads(record.read_text(encoding="utf-8"))
    record.unlink()
    return OrdercheckRun(
        process=proc,
        states=rec["stats"]["distinct_states"],
        transitions=rec["stats"]["transitions"],
        seconds=rec["stats"]["seconds"],
        verdict=rec["properties"]["causal"]["status"],
        as_expected=proc.code == 0,
    )


# -- the table --------------------------------------------------------------------------


def rate(states: int, seconds: float | None) -> str:
    return f"{states / seconds:,.0f}" if seconds else "-"


HEADER = (
    f"{'run':<11} {'tool':<36} {'states':>10} {'verdict':>9} {'wall s':>7} {'CPU s':>7} "
    f"{'search s':>8} {'states/s':>10}"
)


def row(run: str, tool: str, states: int, verdict: str, wall: float, cpu: float, search: float | None) -> str:
    searched = f"{search:.2f}" if search is not None else "-"
    return (
        f"{run:<11} {tool:<36} {states:>10,} {verdict:>9} {wall:>7.2f} {cpu:>7.2f} {searched:>8} "
        f"{rate(states, search):>10}"
    )


def compare(run: str, ours: OrdercheckRun, oc_tool: str, spin: SpinRun, spin_tool: str, same_states: bool,
            spin_rows: bool = True) -> bool:
    """Print the pair of rows (SPIN's only if ``spin_rows``: a second ordercheck run
    against the same SPIN run) and the ratios; whether the two agree (verdicts, and the
    counts where ``same_states``)."""
    print(row(run, oc_tool, ours.states, ours.verdict, ours.process.wall, ours.process.cpu, ours.seconds))
    if spin_rows:
        print(row("", spin_tool + ": spin -a, gcc, pan", spin.pan.states, spin.pan.verdict, spin.wall, spin.cpu,
                  spin.pan.seconds))
        print(row("", "  of which pan alone", spin.pan.states, spin.pan.verdict, spin.search.wall, spin.search.cpu,
                  spin.pan.seconds))
    agree = ours.verdict == spin.pan.verdict
    notes = [] if agree else ["verdicts DISAGREE"]
    if same_states:
        equal = ours.states == spin.pan.states
        agree = agree and equal
        notes.append("states equal" if equal else f"states DIFFER by {ours.states - spin.pan.states:+,}")
        # pan's "transitions (= stored+matched)" also counts the initial state's arrival.
        notes.append(f"transitions {ours.transitions:,} and {spin.pan.transitions:,} (pan counts the initial state too)")
    print(
        f"{'':<11} ratio ordercheck/SPIN, wall: {ours.process.wall / spin.wall:.2f} (whole), "
        f"{ours.process.wall / spin.search.wall:.2f} (pan alone); CPU: {ours.process.cpu / spin.cpu:.2f}"
        + "".join("; " + note for note in notes)
    )
    return agree


def tlc_row(model: Path, ours: OrdercheckRun | None) -> None:
    """TLC on the model's export (unreduced), through ``reduced_vs_tlc.run_tlc_timed``."""
    sys.path.insert(0, str(HERE))
    import reduced_vs_tlc  # the sibling benchmark: TLC found, configured and timed there

    t = reduced_vs_tlc.run_tlc_timed(str(model), 1, None)
    if "skip" in t:
        print(f"{'TLC':<11} skipped: {t['skip']}")
        return
    verdict = "violated" if t["violated"] else "holds"
    print(row("TLC", "TLC -workers 1, unreduced", t["states"], verdict, t["wall"], t["cpu"], None))
    if ours is not None:
        print(f"{'':<11} ratio ordercheck/TLC, wall: {ours.process.wall / t['wall']:.2f}; "
              f"states {'equal' if t['states'] == ours.states else 'DIFFER'}")


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sends", type=int, default=None, help=f"broadcasts per peer (1..{MAX_SENDS}; default the model's)")
    ap.add_argument("--no-unreduced", action="store_true", help="skip the unreduced comparison (ordercheck's slow run)")
    ap.add_argument("--cflags", default="", help='more flags for gcc on pan.c, e.g. "-DCOLLAPSE"')
    ap.add_argument("--tlc", action="store_true", help="also TLC on the export, unreduced (needs TLA2TOOLS_JAR)")
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1,
                    help="also time ordercheck's default run with this many worker processes (default: the "
                         "machine's CPUs; 1: not)")
    a = ap.parse_args(argv)
    with MODEL.open("rb") as f:
        sends = a.sends if a.sends is not None else tomllib.load(f)["constants"]["sends"]
    if not 1 <= sends <= MAX_SENDS:
        ap.error(f"--sends must be 1..{MAX_SENDS}")
    missing = spin_missing()
    if missing is not None:
        print(f"SPIN comparison skipped: {missing} (install SPIN, e.g. apt-get install spin)")
        return 0
    cflags = shlex.split(a.cflags)
    correct, without_a = model_text(sends, True, "holds"), model_text(sends, False, "violated")
    print(f"{spin_version()}; gcc -O2 -DSAFETY {' '.join(cflags)}".rstrip())
    print(f"python {platform.python_version()}, {platform.machine()}, {os.cpu_count()} CPUs, "
          f"load {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    print(f"BSS 2 peers x {sends} broadcasts, unordered channels, causal only")
    print(HEADER)
    ok = True
    with tempfile.TemporaryDirectory(prefix="ordercheck-vs-spin-") as tmp:
        work = Path(tmp)
        build = work / "spin"
        build.mkdir()
        holds = work / "bss-causal.toml"
        holds.write_text(correct, encoding="utf-8")
        mutant = work / "bss-causal-no-condition-a.toml"
        mutant.write_text(without_a, encoding="utf-8")
        defines = {"SENDS": sends}
        unreduced = None
        if not a.no_unreduced:
            unreduced = run_ordercheck(holds, ["--no-symmetry", "--no-por"], work)
            spin = run_spin(build, defines, [*cflags, "-DNOREDUCE"])
            ok &= compare("unreduced", unreduced, "ordercheck --no-symmetry --no-por", spin, "SPIN, -DNOREDUCE", True)
        ours = run_ordercheck(holds, [], work)
        spin = run_spin(build, defines, cflags)
        ok &= compare("to verdict", ours, "ordercheck (default reductions)", spin, "SPIN, its POR", False)
        if a.workers > 1:
            ours_w = run_ordercheck(holds, ["--workers", str(a.workers)], work)
            ok &= compare("", ours_w, f"ordercheck --workers {a.workers}", spin, "SPIN, its POR", False, spin_rows=False)
            ok &= ours_w.as_expected and ours_w.states == ours.states
        ours_m = run_ordercheck(mutant, [], work)
        spin_m = run_spin(build, {**defines, "COND_A": 0}, cflags)
        ok &= compare("mutant", ours_m, "ordercheck, condition_a = false", spin_m, "SPIN, -DCOND_A=0", False)
        ok &= ours.as_expected and ours_m.as_expected and spin.pan.verdict == "holds" and spin_m.pan.verdict == "violated"
        if a.tlc:
            tlc_row(holds, unreduced)
    if not ok:
        print("NOT as expected: see the rows above")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
