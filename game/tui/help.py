"""The help screen: how to play, the verbs the parser knows, the keys, and examples from the story.

The examples come from the content pack being played (its first exit, its
characters, items and enemies), so a player of Cyber never reads about wolves
and harps. Everything from the pack is shown as plain text.
"""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from game.language.verbs import VERBS as PARSER_VERBS
from game.world.content import ContentPack, Npc

HOW_TO_PLAY = (
    "Type what you want to do in plain words and press Enter: the rules decide what happens, the narrator "
    "tells it. Move between places, talk to the people you meet, pick things up and use them, fight or run. "
    "When the story offers numbered choices, press their number. The game autosaves every few turns and "
    "when you quit; save to a named slot whenever you like."
)

VERBS: list[tuple[str, str, str, str]] = [
    (verb.name, line.form, line.also, line.sample) for verb in PARSER_VERBS for line in verb.help
]
"""(the parser's verb, the form, other words for it, a sample line the parser reads as that verb)"""

KEYS: list[tuple[str, str]] = [
    ("F1", "this help"),
    ("F2", "save to a slot"),
    ("F3", "load a slot"),
    ("F5", "quick save"),
    ("F9", "quick load"),
    ("F4", "timeline: branch from any turn"),
    ("F12", "memory debug panel"),
    ("ctrl+z / ctrl+y", "undo / redo a turn"),
    ("ctrl+r", "retry: another telling of the last turn"),
    ("ctrl+p", "command palette"),
    ("1-4", "pick a numbered choice"),
    ("up / down", "earlier / later lines you typed"),
    ("tab", "complete a word (places, people, things)"),
    ("ctrl+q", "quit"),
    ("esc", "close a window like this one"),
]


def _first_npc(pack: ContentPack) -> Npc | None:
    start = pack.nodes.get(pack.story.start_node)
    for npc_id in start.npcs if start else []:
        if npc_id in pack.npcs:
            return pack.npcs[npc_id]
    return next(iter(pack.npcs.values()), None)


def story_examples(pack: ContentPack, limit: int = 10) -> list[str]:
    """Lines worth trying in ``pack``, made from its own places, people, items and enemies."""
    start = pack.nodes.get(pack.story.start_node)
    examples: list[str] = []
    if start and start.exits:
        examples.append(f"go {next(iter(start.exits))}")
    examples.append("look")
    npc = _first_npc(pack)
    if npc:
        examples.append(f"talk to {npc.name}")
        if npc.topics:
            examples.append(f"ask {npc.name} about {next(iter(npc.topics))}")
    here = [pack.items[i] for i in (start.items if start else []) if i in pack.items]
    if here:
        examples += [f"take {here[0].name}", f"examine {here[0].name}"]
    carried = [pack.items[i] for i in pack.story.player.inventory if i in pack.items]
    usable = next((item for item in carried if item.use is not None or item.consumable), None)
    if usable:
        examples.append(f"use {usable.name}")
    elif carried:
        examples.append(f"examine {carried[0].name}")
    gift = next(
        ((pack.items[like], person) for person in pack.npcs.values() for like in person.likes if like in pack.items),
        None,
    )
    if gift:
        examples.append(f"give {gift[0].name} to {gift[1].name}")
    enemy = next(iter(pack.enemies.values()), None)
    if enemy:
        examples.append(f"attack {enemy.name}")
    return list(dict.fromkeys(examples))[:limit]


def _table(rows: list[tuple[str, str]]) -> Table:
    """Two columns, the right one wrapping under itself (never under the left one)."""
    table = Table(show_header=False, box=None, padding=(0, 1), expand=True)
    table.add_column(style="bold", no_wrap=True)
    table.add_column(ratio=1)
    for left, right in rows:
        table.add_row(Text(left), Text(right))
    return table


class HelpScreen(ModalScreen[None]):
    """How to play, verbs, keys and story examples; dismisses with None (Escape, F1, q).

    Args:
        pack: the story being played (its examples are shown), or None before one is chosen.
    """

    DEFAULT_CSS = """
    HelpScreen {
        align: center middle;
    }
    HelpScreen > #help-dialog {
        width: 100%;
        max-width: 100;
        height: 100%;
        max-height: 40;
        border: thick $primary;
        background: $surface;
    }
    HelpScreen #help-body {
        height: 1fr;
        padding: 0 1;
    }
    HelpScreen .help-heading {
        text-style: bold;
        color: $accent;
        margin-top: 1;
    }
    HelpScreen #help-keys-hint {
        height: 1;
        color: $text-muted;
        padding: 0 1;
    }
    """

    BINDINGS = [
        Binding("escape,f1,q", "close", "Close"),
    ]

    def __init__(self, pack: ContentPack | None) -> None:
        super().__init__()
        self.pack = pack

    def compose(self) -> ComposeResult:
        with Vertical(id="help-dialog"):
            with VerticalScroll(id="help-body"):
                title = f"How to play {self.pack.story.title}" if self.pack else "How to play"
                yield Static(Text(title), classes="help-heading", id="help-title")
                yield Static(Text(HOW_TO_PLAY), id="help-intro")
                if self.pack is not None:
                    yield Static(Text(f"Try, in {self.pack.story.title}"), classes="help-heading")
                    lines = "\n".join(f"  > {example}" for example in story_examples(self.pack))
                    yield Static(Text(lines), id="help-examples")
                yield Static("Verbs", classes="help-heading", markup=False)
                yield Static(_table([(form, words) for _, form, words, _ in VERBS]), id="help-verbs")
                yield Static("Keys", classes="help-heading", markup=False)
                yield Static(_table(KEYS), id="help-keys")
            yield Static("up/down/pgup/pgdn: scroll · esc: close", id="help-keys-hint", markup=False)

    def on_mount(self) -> None:
        self.query_one("#help-body", VerticalScroll).focus()

    def action_close(self) -> None:
        self.dismiss(None)
