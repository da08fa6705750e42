"""Notes for a story's author that need no search: choices the parser reads as another command, and lore's size.

A story choice is made by typing its words; when the parser reads a choice's name as another command
(``Leave the lamp dark`` -> drop "lamp dark"), typing or clicking it is refused ("You are not carrying lamp
dark.") and the choice cannot be made by its own name. Lore reaches the narrator inside a prompt budget shared
with everything else a turn needs, and a prompt shows at most ``SNIPPET_CHARS`` characters of one entry.
"""

from __future__ import annotations

from game.language.parser import parse
from game.llm.scripted import CHOICE_VERBS
from game.memory.search.knowledge import SNIPPET_CHARS
from game.text import DEFAULT_PROMPT_BUDGET, estimate_tokens
from game.world.content import ContentPack


def choice_misreads(pack: ContentPack) -> list[str]:
    """Each story choice whose name the parser reads as a command the rules take first (take, drop, go, ...).

    A choice is read from an action the parser leaves to the story (free words, a ``use``, words said:
    :data:`~game.llm.scripted.CHOICE_VERBS`); any other command is the rules' before it is a choice.
    """
    out = []
    for choice in pack.story.choices:
        command = parse(choice.name)
        if command.verb in CHOICE_VERBS:
            continue
        read = " ".join(part for part in (command.verb, command.target) if part)
        out.append(
            f"story.json: choices[{choice.id}].name: {choice.name!r} reads as the command {read!r}, which the rules "
            "take before any choice: typing or clicking it never makes the choice; start it with a word that is "
            "no command (e.g. 'Keep ...', 'Choose ...')"
        )
    return out


def lore_size(pack: ContentPack) -> list[str]:
    """The lore's token count against the prompt budget, and each entry longer than a prompt shows of one."""
    sizes = {entry.id: estimate_tokens(f"{entry.title}: {entry.content}") for entry in pack.knowledge}
    total = sum(sizes.values()) + estimate_tokens(pack.worldview)
    out = [
        f"lore: {len(sizes)} knowledge entries and the worldview, about {total:,} tokens in all; a turn's prompt "
        f"holds {DEFAULT_PROMPT_BUDGET:,} tokens by default, so the narrator is given the entries a turn touches"
    ]
    for entry in pack.knowledge:
        if len(entry.content) > SNIPPET_CHARS:
            out.append(
                f"knowledge.json: [{entry.id}].content: {len(entry.content):,} characters; a prompt shows at most "
                f"{SNIPPET_CHARS} of one entry (the rest is left out, and the debug panel's cut list says so): "
                "split it into entries by subject, the most telling words first"
            )
    return out
