"""A buggy variant of causal_broadcast.py: FIFO only. A message is held back until the
sender's earlier messages are delivered, but not until what the sender had delivered
from others is, so causal order breaks while FIFO order holds (``ordercheck run
--explore`` finds the schedule)."""

import runpy
import sys
from pathlib import Path

sys.argv.append("--fifo-only")
runpy.run_path(str(Path(__file__).with_name("causal_broadcast.py")), run_name="__main__")
