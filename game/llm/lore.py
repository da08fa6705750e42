"""What a person knows without a topic for it: the scripted narrator's answer from the story's own content.

A person asked about something none of their topics covers still knows what the lore says they know: their
own domain ("ask Bruno about strength": the Guardian of Strength answers with what he says of it, and once his
trial is passed, with what he says of it now), the people
of their story ("ask Alicia about Garrick": who he is and where he lives, and that he sent you when a quest of
his has you speak with her), its places and its things. Only then do they know nothing about it.
"""

from __future__ import annotations

from game.text import best_match, keywords
from game.world.content import ContentPack


def lore_reply(pack: ContentPack, npc_id: str, topic: str, topics: dict[str, str]) -> str | None:
    """What ``npc_id`` says about ``topic`` from the content, or None when the lore gives them nothing.

    ``topics`` are the person's topics now (their answers in their own words).
    """
    wanted = set(keywords(topic))
    if not wanted:
        return None
    npc = pack.npcs[npc_id]
    own = [answer for answer in topics.values() if wanted <= set(keywords(answer))]
    if own:  # their own words about it, under another topic ("strength" in the troll's challenge)
        return max(own, key=lambda a: -len(a))
    once = [topics[key] for key, answer in npc.topics.items() if key in topics and wanted <= set(keywords(answer))]
    if once:  # the topic that spoke of it before things changed, as it stands now (the trial, once passed)
        return max(once, key=lambda a: -len(a))
    other = best_match(topic, [(i, n.names) for i, n in pack.npcs.items()])
    if other is not None and other != npc_id:
        return _about_person(pack, npc_id, other)
    if wanted <= set(keywords(f"{npc.name} {npc.role}")):
        return f"I am {npc.name}, {_lower_first(npc.role)}."
    place = best_match(topic, [(i, [n.name]) for i, n in pack.nodes.items()])
    if place is not None:
        node = pack.nodes[place]
        return f"{node.name}? {_first_sentence(node.description)}"
    item = best_match(topic, [(i, it.names) for i, it in pack.items.items()])
    if item is not None:
        return f"The {pack.items[item].name}? {_first_sentence(pack.items[item].description)}"
    return None


def _about_person(pack: ContentPack, npc_id: str, other: str) -> str:
    person = pack.npcs[other]
    subject = person.pronouns.partition("/")[0] or "they"
    told = f"{person.name}? {person.role.rstrip('.')}. "
    told += f"You will find {_object(subject)} at {pack.nodes[person.location].name}."
    if _sent_by(pack, other, npc_id):
        told += f" {subject.capitalize()} sent you to me, I take it."
    return told


def _sent_by(pack: ContentPack, sender: str, npc_id: str) -> bool:
    """Whether a quest has the player speak with ``sender`` and then with ``npc_id``."""
    for quest in pack.all_quests():
        talks = [o.target for o in quest.objectives if o.kind == "talk"]
        if sender in talks and npc_id in talks and talks.index(sender) < talks.index(npc_id):
            return True
    return False


def _object(subject: str) -> str:
    return {"he": "him", "she": "her", "it": "it"}.get(subject, "them")


def _lower_first(text: str) -> str:
    return text[:1].lower() + text[1:] if text[1:2].islower() else text


def _first_sentence(text: str) -> str:
    head, dot, _ = text.partition(". ")
    return head + (dot.strip() or "")
