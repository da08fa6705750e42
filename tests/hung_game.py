"""A game that hangs: a fault injected for ``tests/test_serve_deadline.py`` (a fake, since no real game can be made
to hang on cue). It tells textual-serve it has started (the line a Textual app under the web driver prints first),
writes its process id to the file it is given, then ignores "quit" (it never reads its pipe), SIGTERM, SIGHUP and
SIGINT, as a game stuck in a call that never returns would: only SIGKILL ends it."""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

if __name__ == "__main__":
    for signum in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(signum, signal.SIG_IGN)
    Path(sys.argv[1]).write_text(str(os.getpid()))
    sys.stdout.write("__GANGLION__\n")
    sys.stdout.flush()
    while True:
        time.sleep(60)
