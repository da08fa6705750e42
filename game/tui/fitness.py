"""The "Test narrator" window of the settings: the fitness check (``game/engine/fitness.py``) of the endpoint the
form describes, run on a thread with its progress shown, then its report and verdict. Nothing is saved: the
check plays with keyword memory and no save, and the key stays where it is read from. Without an endpoint in the
form there is nothing to test: the window says so (``no_test_needed``) instead of failing.

The check runs on a daemon thread of its own, not a Textual thread worker: those run on asyncio's default
executor, which is joined when the app's loop closes, so quitting after a test against a stalled endpoint waited
for every one of its calls to time out. Closing the window sets ``stop`` (no further turn is played); quitting
abandons the thread where it is."""

from __future__ import annotations

import threading

from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from game.llm.settings import OpenAISettings
from game.tui.text import plain


class NarratorTestScreen(ModalScreen[None]):
    """Play the fitness check against ``settings``' endpoint and show the report (Escape closes)."""

    DEFAULT_CSS = """
    NarratorTestScreen {
        align: center middle;
    }
    NarratorTestScreen > #test-dialog {
        width: 100%;
        max-width: 110;
        height: auto;
        max-height: 24;
        border: thick $primary;
        background: $surface;
        padding: 0 1;
    }
    NarratorTestScreen #test-title {
        text-style: bold;
    }
    NarratorTestScreen #test-report {
        height: auto;
    }
    NarratorTestScreen #test-keys {
        color: $text-muted;
    }
    """

    BINDINGS = [Binding("escape", "close", "Close")]

    def __init__(self, settings: OpenAISettings, prompt_budget_tokens: int | None, llm: str | None = None) -> None:
        super().__init__()
        self.settings = settings
        self.prompt_budget_tokens = prompt_budget_tokens
        self.llm = llm
        """The narrator the form names: without an endpoint, what plays instead (nothing to test)."""
        self.report = ""
        self.closed = False
        self.stop = threading.Event()
        self.thread: threading.Thread | None = None

    def compose(self) -> ComposeResult:
        from game.engine.fitness import SCRIPT

        turns = sum(len(actions) for _, actions in SCRIPT)
        with Vertical(id="test-dialog"):
            yield Static(f"Test narrator: {turns} turns over both stories, judged", id="test-title", markup=False)
            with VerticalScroll():
                yield Static("Starting…", id="test-report", markup=False)
            yield Static("Esc: close (a test under way stops after its turn)", id="test-keys", markup=False)

    def on_mount(self) -> None:
        from game.engine.fitness import no_test_needed

        note = no_test_needed(self.llm, self.settings)
        if note is not None:
            self.report = note
            self._update(note)
            return
        self.thread = threading.Thread(target=self.run_check, args=(self.app,), name="narrator-test", daemon=True)
        self.thread.start()

    def run_check(self, app: App[object]) -> None:
        """Play the check (on :attr:`thread`) and show its report on ``app``."""
        from game.engine.fitness import SCRIPT, check_endpoint, report

        total = sum(len(actions) for _, actions in SCRIPT)
        done = 0

        def progress(step: str) -> None:
            nonlocal done
            done += 1
            self._show(app, f"Playing turn {done} of {total}: {step}")

        fitness = check_endpoint(
            self.settings, prompt_budget_tokens=self.prompt_budget_tokens, progress=progress, stop=self.stop
        )
        self.report = report(fitness)
        self._show(app, self.report)

    def _show(self, app: App[object], text: str) -> None:
        if self.closed:
            return
        try:
            app.call_from_thread(self._update, text)
        except RuntimeError:  # the app closed meanwhile: nobody to show it to
            self.closed = True

    def _update(self, text: str) -> None:
        if not self.closed:
            self.query_one("#test-report", Static).update(plain(text) if text != self.report else Text(text))

    def action_close(self) -> None:
        self.closed = True
        self.stop.set()
        self.dismiss(None)

    def on_unmount(self) -> None:
        self.closed = True
        self.stop.set()
