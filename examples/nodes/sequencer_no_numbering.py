"""A buggy variant of sequencer.py: a node delivers a ``seq`` message as soon as it
arrives, skipping the check of its sequence number, so two nodes can deliver two values
in opposite orders (``ordercheck run --workload ordered`` finds the schedule: ``total``
breaks)."""

import runpy
import sys
from pathlib import Path

sys.argv.append("--no-numbering")
runpy.run_path(str(Path(__file__).with_name("sequencer.py")), run_name="__main__")
