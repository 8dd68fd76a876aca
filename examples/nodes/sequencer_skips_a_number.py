"""A buggy variant of sequencer.py: the sequencer's numbering skips 2 (1, 3, 4, ...), so
every node holds back everything after 1 for ever, waiting for a number no one will send
(``ordercheck run --workload ordered`` reports ``eventual_delivery`` broken)."""

import runpy
import sys
from pathlib import Path

sys.argv.append("--skip-a-number")
runpy.run_path(str(Path(__file__).with_name("sequencer.py")), run_name="__main__")
