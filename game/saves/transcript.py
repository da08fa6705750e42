"""A readable transcript of a saved run: the L2 log, with each summary after the turns it covers."""

from __future__ import annotations

from game.saves.format import SaveFile
from game.world.content import ContentPack


def transcript(save: SaveFile, *, markdown: bool = False, pack: ContentPack | None = None) -> str:
    """The run in ``save`` as plain text, or as Markdown with ``markdown``; with the story's ``pack``, it opens
    with the story's introduction and names the ending by its title."""
    memory, game = save.memory, save.game
    title = save.story_title or save.story_id
    head = f"{title} - turn {save.turn} at {save.place}, saved {save.saved_at}"
    lines = [f"# {head}" if markdown else head, ""]
    if pack is not None and pack.id == save.story_id:
        lines += [_escape(pack.story.intro) if markdown else pack.story.intro, ""]
    summaries = sorted(memory.summaries, key=lambda s: s.turn)
    pending = list(summaries)
    for episode in memory.log:
        if not episode.action:
            continue
        while pending and pending[0].turn < episode.turn:
            lines += _summary(pending.pop(0).labelled(), markdown)
        where = f" - {episode.node}" if episode.node else ""
        when = f" ({episode.when})" if episode.when else ""
        if markdown:
            lines += [f"### Turn {episode.turn}{where}{when}", "", f"> {_escape(episode.action)}", ""]
            lines += [_escape(episode.narration), ""]
        else:
            lines += [f"Turn {episode.turn}{where}{when}", f"> {episode.action}", episode.narration, ""]
    for summary in pending:
        lines += _summary(summary.labelled(), markdown)
    ended = next((e.title for e in pack.endings if e.id == game.ending), game.ending) if pack else game.ending
    ending = f"Ending: {ended}" if ended else "The story goes on."
    lines.append(f"**{ending}**" if markdown else ending)
    return "\n".join(lines).rstrip() + "\n"


def _summary(text: str, markdown: bool) -> list[str]:
    return [f"*Summary: {_escape(text)}*", ""] if markdown else [f"-- Summary: {text}", ""]


def _escape(text: str) -> str:
    """Text as Markdown shows it literally (a player's '#' or '*' is not formatting)."""
    return "".join("\\" + c if c in "\\`*_[]#<>|" else c for c in text).replace("\n", "  \n")
