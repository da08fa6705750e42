"""A yes/no question over the current screen: overwrite a slot, delete one, quit with unsaved progress."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static


class ConfirmScreen(ModalScreen[bool]):
    """Ask ``message``; dismisses with True for yes, False for no (``n``, Escape, the No button).

    The message is shown as plain text (a slot name holding ``[bold]`` shows literally). No has the
    focus when the screen opens, so an absent-minded Enter never destroys anything.
    """

    DEFAULT_CSS = """
    ConfirmScreen {
        align: center middle;
    }
    ConfirmScreen > #confirm-dialog {
        width: 60;
        max-width: 100%;
        height: auto;
        max-height: 100%;
        border: thick $warning;
        background: $surface;
        padding: 1 2;
    }
    ConfirmScreen #confirm-message {
        width: 100%;
        margin-bottom: 1;
    }
    ConfirmScreen #confirm-buttons {
        width: 100%;
        height: auto;
        align-horizontal: center;
    }
    ConfirmScreen Button {
        margin: 0 1;
    }
    """

    BINDINGS = [
        Binding("y", "answer(True)", "Yes"),
        Binding("n", "answer(False)", "No"),
        Binding("escape", "answer(False)", "No", show=False),
        Binding("left,right", "toggle_focus", "Switch", show=False),
    ]

    def __init__(self, message: str, *, yes: str = "Yes", no: str = "No") -> None:
        super().__init__()
        self.message = message
        self.yes_label = yes
        self.no_label = no

    def compose(self) -> ComposeResult:
        with Vertical(id="confirm-dialog"):
            yield Static(Text(self.message), id="confirm-message")
            with Horizontal(id="confirm-buttons"):
                yield Button(Text(f"{self.yes_label} (y)"), variant="warning", id="yes")
                yield Button(Text(f"{self.no_label} (n)"), variant="primary", id="no")

    def on_mount(self) -> None:
        self.query_one("#no", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(event.button.id == "yes")

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)

    def action_toggle_focus(self) -> None:
        yes, no = self.query_one("#yes", Button), self.query_one("#no", Button)
        (no if yes.has_focus else yes).focus()
