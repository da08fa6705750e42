"""The "Test narrator" window of the settings: the fitness check (``game/engine/fitness.py``) of the endpoint the
form describes, run in a worker with its progress shown, then its report and verdict. Nothing is saved: the
check plays with keyword memory and no save, and the key stays where it is read from."""

from __future__ import annotations

from rich.text import Text
from textual import work
from textual.app import ComposeResult
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

    def __init__(self, settings: OpenAISettings, prompt_budget_tokens: int | None) -> None:
        super().__init__()
        self.settings = settings
        self.prompt_budget_tokens = prompt_budget_tokens
        self.report = ""
        self.closed = False

    def compose(self) -> ComposeResult:
        from game.engine.fitness import SCRIPT

        turns = sum(len(actions) for _, actions in SCRIPT)
        with Vertical(id="test-dialog"):
            yield Static(f"Test narrator: {turns} turns over both stories, judged", id="test-title", markup=False)
            with VerticalScroll():
                yield Static("Starting…", id="test-report", markup=False)
            yield Static("Esc: close (a test under way finishes on its own)", id="test-keys", markup=False)

    def on_mount(self) -> None:
        self.run_check()

    @work(thread=True, exclusive=True, group="narrator-test")
    def run_check(self) -> None:
        from game.engine.fitness import SCRIPT, check_endpoint, report

        total = sum(len(actions) for _, actions in SCRIPT)
        done = 0

        def progress(step: str) -> None:
            nonlocal done
            done += 1
            self._show(f"Playing turn {done} of {total}: {step}")

        fitness = check_endpoint(self.settings, prompt_budget_tokens=self.prompt_budget_tokens, progress=progress)
        self.report = report(fitness)
        self._show(self.report)

    def _show(self, text: str) -> None:
        if not self.closed:
            self.app.call_from_thread(self._update, text)

    def _update(self, text: str) -> None:
        if not self.closed:
            self.query_one("#test-report", Static).update(plain(text) if text != self.report else Text(text))

    def action_close(self) -> None:
        self.closed = True
        self.dismiss(None)
