"""The buggy variant of causal_broadcast.py: no hold-back, so a message can be
delivered before a message that causally precedes it (``ordercheck run --explore``
finds the schedule)."""

import runpy
import sys
from pathlib import Path

sys.argv.append("--no-hold-back")
runpy.run_path(str(Path(__file__).with_name("causal_broadcast.py")), run_name="__main__")
