"""The understanding corpus's rows (issue 41): a player's words in a place, and what they ask of the world.

A row says where the player stands (story, place, what they carry, flags already set, a fight under way) and
what the sentence asks: ``want``, the acts asked in order, or nothing (an empty ``want``: a question, a glance,
a wish, a negation, a report, speech, sarcasm, or a request of what is not there). For a row that asks nothing,
``tempt`` names the acts a careless reader would apply (the words of an act are in the sentence): the fake
model of the measurement proposes them, and applying any of them is a miss.

Acts are written as strings, ids from the story's content files:

- ``go <node>``, ``take <item>``, ``drop <item>``, ``use <item>``, ``give <item> <npc>``, ``buy <item> <npc>``,
  ``sell <item> <npc>``, ``talk <npc>``, ``attack <enemy>``, ``flee``, ``defend``, ``rest``,
  ``choice <choice id>``.
"""

from __future__ import annotations

from dataclasses import dataclass

KINDS = (
    # rows that ask for acts
    "plain",  # a plain request: "take the herb", "I head north", "grab the tonic"
    "idiom",  # a phrasal verb, idiom or rarer synonym: "nab the tonic", "hit the road", "get some shut-eye"
    "typo",  # misspelt or run together: "tkae the herb", "go nroth", "pickup the knife"
    "polite",  # wrapped in courtesy: "I would like to go north, please", "could you hand me the bow"
    "sequence",  # more than one act: "take the herb, then go north"
    "person",  # spoken to someone present, by any name they go by: "talk to the elf", "old man, a word"
    # rows that ask for nothing
    "negation",  # "I will never kneel", "over my dead body will I kneel", "leave my knife alone"
    "question",  # "should I kneel?", "how much gold do I have?"
    "wish",  # "I wonder if I should rest", "maybe I should take it"
    "hypothetical",  # "if I joined him, what then?"
    "report",  # someone else's act or a past one: "Garrick sent me", "he told me to go west"
    "glance",  # "look north", "take a look at the herb", "shoot a glance at the wolf"
    "speech",  # words said: "say 'I kneel'", "I tell him I will never drop it"
    "sarcasm",  # "yeah, right, sell my pearl for pocket change. No deal."
    "absent",  # asks an act of what is not there: "attack the troll" with no troll, "drink from my flask"
)


@dataclass(frozen=True)
class Row:
    story: str
    """fantasy_001 (Misty Forest), scifi_001 (Cyber) or victorian_001 (The Drowned Light)."""
    at: str
    """The node the player stands at."""
    action: str
    """The player's words, as typed."""
    want: tuple[str, ...] = ()
    """The acts asked, in order (see the module's docstring); empty: nothing is asked of the world."""
    kind: str = "plain"
    """One of :data:`KINDS`."""
    tempt: tuple[str, ...] = ()
    """For a row that asks nothing: the acts a careless reader would apply (the fake model proposes them)."""
    carried: tuple[str, ...] = ()
    """Items added to the new game's inventory."""
    flags: tuple[str, ...] = ()
    """Flags set before the sentence ("talked:alicia", "visited:sanctuary_gate", "defeated:mist_wolf")."""
    fight: str = ""
    """An enemy id: a fight with it is under way."""
    gold: int | None = None
    """The purse, when the row needs another amount than the story's start."""
    hp: int | None = None
    """Health, when the row needs the player hurt (a healing item is refused at full health)."""
    done: tuple[str, ...] = ()
    """Quest ids completed before the sentence (a story choice may need them)."""
    started: tuple[str, ...] = ()
    """Quest ids under way (a person takes a gift a quest asks for only once they have asked for it)."""
    stats: tuple[tuple[str, int], ...] = ()
    """Stats grown by play, as (strength | agility | intelligence, value): a quest's gift may need them."""
    note: str = ""
    """Why the row expects what it expects, when that is not obvious."""

    @property
    def asks(self) -> bool:
        return bool(self.want)


EXPECTS = ("act", "answer", "refuse", "nothing")


@dataclass(frozen=True)
class Natural:
    """One of the sixty natural sentences (issue 41), played with the built-in narrator: is it read right?

    ``expect`` says what reading it right is:

    - ``act``: the acts in ``want`` are carried out, in order (asked back first is fine when the question offers
      exactly them);
    - ``answer``: the person ``by`` (an npc id, or ``rules`` for the player's own status: gold, health, what they
      carry) answers: no act but talking to them is applied, the reply names them (or, for ``rules``, gives the
      figure asked), and it is not a recollection ("You recall");
    - ``refuse``: nothing is applied, the turn costs nothing, and one plain sentence says why (no ids, flags or an
      ending's name);
    - ``nothing``: nothing is applied (a question to no one, a wish, a negation, a report, a glance) and the reply
      does not echo the sentence back with its pronouns turned.
    """

    story: str
    at: str
    action: str
    expect: str
    want: tuple[str, ...] = ()
    by: str = ""
    carried: tuple[str, ...] = ()
    flags: tuple[str, ...] = ()
    fight: str = ""
    gold: int | None = None
    hp: int | None = None
    done: tuple[str, ...] = ()
    forbid: tuple[str, ...] = ()
    """Words the reply must not hold (besides the ones every reply must not: "You recall" for a non-memory
    question, "not possible now", "needs ", an ending's title)."""
    note: str = ""
