"""Issue 31, part 5: log lines never paint over the Textual screen.

``storyecho`` logs to stderr through a ``StreamHandler`` made before the game starts
(``game.args.configure_logging``), and Textual draws on the same terminal: a warning written there while the
game is on screen lands across it. The game holds such handlers while it runs (``game.tui.logs``) and hands
them the records once it is closed. Checked on the file descriptor itself (``capfd``): what reaches fd 2 would
reach the terminal.
"""

from __future__ import annotations

import logging
import sys

from game.config import load_settings
from game.tui.app import StoryEchoApp


async def test_a_warning_logged_while_the_game_runs_is_not_written_to_the_terminal(tmp_path, capfd):
    root = logging.getLogger()
    handler = logging.StreamHandler(sys.stderr)  # what logging.basicConfig(stream=sys.stderr) makes
    root.addHandler(handler)
    try:
        capfd.readouterr()
        settings = load_settings(None, llm="scripted", data_dir=tmp_path / "saves", memory={"embeddings": False})
        app = StoryEchoApp(settings)
        async with app.run_test(size=(100, 30)) as pilot:
            await pilot.pause(0.1)
            logging.getLogger("storyecho.llm").warning("turn call failed: at http://bob:hunter2pass@h/v1 PAINTED")
            await pilot.pause(0.1)
            during = capfd.readouterr().err
        assert "PAINTED" not in during  # nothing reached the terminal while the game was on screen
        assert handler in root.handlers  # ... and the handler is back once it is closed

        from game.tui.logs import TERMINAL

        TERMINAL.replay()  # what game.main does once the game has given the terminal back
        after = capfd.readouterr().err
        assert "turn call failed: at http://h/v1 PAINTED" in after and "hunter2pass" not in after
    finally:
        root.removeHandler(handler)
