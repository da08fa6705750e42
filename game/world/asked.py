"""What the player asks of the world, read before any narrator is called (issue 41).

:func:`understand` takes the reading of a line (:mod:`game.language.reading`) and resolves each clause that asks
for an act against the story as it stands: this item here, that exit, this person. The answer is an
:class:`Asked`:

- **acts**, in order (:class:`Act`: a verb of the game's closed set with the ids it acts on). The rules carry them
  out whatever a narrator proposes, and the narrator's prompt says what was asked ("The player asks to: take the
  Heartsap Tonic, then go north"); a model no longer has to guess.
- **nothing** asked of the world (a question, a look, a wish, a negation, a report, words said): the narrator
  tells it, and any act it proposes for the player is refused (:mod:`game.world.intent`).
- a **refusal**: the act asked cannot be ("There is no troll here.", "You don't have a flask."). One sentence, at no
  turn's cost and no narrator call.
- an **offer**: the reader is unsure (a misspelt name two letters off, a thing pointed at that could be two), or
  the act is consequential and the words are not plain (a story choice said in other words than its own, giving
  away or dropping what a quest needs, spending more than a trifle): the game asks back ("Do you mean: take the
  Healing Herb?") at no turn's cost, and the next line answers.
- **open** clauses: ones that ask for something the reader cannot resolve to an act of the closed set ("speak the
  verse", "wrench the case free"): left to the narrator, whose proposals the intent check still grounds.

The resolving of each verb's words to ids is :mod:`game.world.resolve`'s; this module decides what the line asks.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from game.language.frames import courteous
from game.language.lexicon import (
    DISCOURSE,
    GREETINGS,
    HEDGE_PHRASES,
    HEDGES,
    INTENT_FRAMES,
    is_verb_phrase,
    leading,
)
from game.language.parser import Command, parse
from game.language.question import parts, status_question
from game.language.reading import Clause, Reading
from game.text import mentions, whole_words
from game.world import choosing, names, resolve
from game.world.acts import Act, Scene, effects_of
from game.world.amounts import money
from game.world.content import ContentPack
from game.world.describe import inventory_text
from game.world.effects import Effects
from game.world.handing import addressed, handed_over, handed_to
from game.world.state import GameState

__all__ = ["Act", "Asked", "by_meaning", "story_names", "story_people", "understand"]

NOTHING = {
    "question": "a question",
    "wish": "a wish",
    "hypothetical": "a supposition",
    "report": "a report of what happened",
    "negation": "a refusal",
    "speech": "words said",
    "look": "a look",
}
"""Why a line asks nothing, in the words the narrator's prompt uses."""
UNREAD = "no act the rules know"
"""A line no clause of which was read as an act, nor as any of :data:`NOTHING`'s kinds: left to the narrator."""


@dataclass(frozen=True)
class Asked:
    """A line read and resolved: what it asks of the world (see the module's docstring)."""

    reading: Reading
    acts: tuple[Act, ...] = ()
    nothing: str = ""
    """Why nothing is asked ("a question"), when no clause asks for an act."""
    refusal: str = ""
    """Why the act asked cannot be, in one sentence for the player."""
    refused: Act | None = None
    """That act, when it names something of the story (the rules' reason for it goes in the trace)."""
    unknown: bool = False
    """The refusal is of words that name nothing of the story (:attr:`Found.unknown`)."""
    offer: tuple[Act, ...] = ()
    """What to ask back: one act (yes or no) or several to pick from."""
    together: bool = False
    """The offer is one line of acts, all played on yes (a step of it guessed: "fuse + gloves, then east")."""
    first: str = ""
    """Said before the question: why the words as read could not be ("There is no man here.")."""
    stopped: str = ""
    """Why the line's acts stop short (a later act cannot be), told after the ones that can."""
    answer: str = ""
    """A question the rules answer at once ("how much gold do I have?"), at no turn's cost."""
    open: tuple[Clause, ...] = ()
    """Clauses that ask for something the reader left to the narrator."""
    gaps: tuple[tuple[int, Clause], ...] = ()
    """Of them, the ones among the line's acts, each after how many acts (:mod:`game.world.guess` may fill them)."""
    notes: tuple[str, ...] = field(default_factory=tuple)
    """How each clause was resolved, for the debug panel."""

    @property
    def kind(self) -> str:
        """``refused``, ``unsure``, ``answered``, ``acts``, ``open`` or ``nothing``."""
        if self.refusal and not self.acts:
            return "refused"
        if self.offer:
            return "unsure"
        if self.answer:
            return "answered"
        if self.acts:
            return "acts"
        return "open" if self.open else "nothing"

    def question(self, pack: ContentPack) -> str:
        """The words that ask back: "Do you mean: take the Healing Herb?" or "Which do you mean? ..."."""
        if len(self.offer) == 1 or self.together:
            return f"{self.first} Do you mean: {', then '.join(a.describe(pack) for a in self.offer)}?".strip()
        return f"{self.first} Which do you mean?".strip()

    def choices(self, pack: ContentPack) -> list[str]:
        """What the player may answer an offer with (keys 1-4)."""
        if len(self.offer) == 1 or self.together:
            return ["yes", "no"]
        return [act.describe(pack) for act in self.offer[:4]]

    def line(self, pack: ContentPack) -> str:
        """What the narrator's prompt says was asked: "The player asks to: take the Heartsap Tonic, then go north"."""
        if self.acts:
            return "The player asks to: " + ", then ".join(a.describe(pack) for a in self.acts) + "."
        if self.open or self.nothing == UNREAD:  # never the player's words here: they stay in the action (data)
            return (
                "The player's words were not read as one act of the rules: if they plainly ask for one, propose its "
                "effects with the ids given (the player is asked to confirm it first); else tell what the action says."
            )
        return f"The player asks nothing of the world: {self.nothing or 'no act'}."

    def played(self, pack: ContentPack, action: str) -> Command:
        """What the narrator plays: the act read from the action, in the story's names ("take everything" for the
        takes of one step); the reading's own command when the engine read no act."""
        if not self.acts:
            return self.reading.command
        if len(self.acts) > 1 and all(a.verb == "take" for a in self.acts):
            return Command("take", target="everything", text=action)
        return self.acts[0].command(pack, action)

    def steps(self) -> list[tuple[Act, ...]]:
        """The acts grouped by step: each group is one turn."""
        out: dict[int, list[Act]] = {}
        for act in self.acts:
            out.setdefault(act.step, []).append(act)
        return [tuple(group) for group in out.values()]

    def granted(self, state: GameState) -> Effects | None:
        """The effects that carry out the acts asked (None: none asked): the rules apply them whatever a narrator
        proposes, and the intent check never refuses them as unasked."""
        return Effects.model_validate(effects_of(self.acts, state)) if self.acts else None


def story_names(pack: ContentPack) -> frozenset[str]:
    """The words of the story's names (people, things, enemies, places, a choice's own words), which the reading
    never takes for a misspelt verb and which say whom a line addresses by name (worked out once per game: the
    pipeline keeps it)."""
    words: set[str] = set()
    for things in (pack.npcs, pack.items, pack.enemies):
        for thing in things.values():
            words.update(w for name in thing.names for w in re.split(r"[^a-z0-9']+", name.lower()) if w)
    words.update(w for node in pack.nodes.values() for w in re.split(r"[^a-z0-9']+", node.name.lower()) if w)
    words.update(k.lower() for choice in pack.story.choices for k in choice.keywords if " " not in k)  # "toll"
    return frozenset(words)


def story_people(pack: ContentPack) -> frozenset[str]:
    """The words of the names and roles the story's people go by (a line calls them by these: "Reverend, ...",
    "guardian of strength, ...")."""
    names = {w for npc in pack.npcs.values() for name in npc.names for w in re.split(r"[^a-z0-9']+", name.lower())}
    roles = {w for npc in pack.npcs.values() for w in re.split(r"[^a-z0-9']+", npc.role.lower()) if len(w) > 3}
    return frozenset(w for w in names | roles if w)


def understand(reading: Reading, state: GameState, pack: ContentPack) -> Asked:
    """What ``reading`` asks of the world as ``state`` stands (see the module's docstring)."""
    scene = Scene.of(state, pack)
    answer = status_answer(reading, state, pack)
    if answer:
        return Asked(reading, answer=answer, nothing="a question about yourself")
    addressee = names.person(reading.addressee, scene)[0] if reading.addressee else None
    acts: list[Act] = []
    opened: list[Clause] = []
    gaps: list[tuple[int, Clause]] = []
    notes: list[str] = []
    bound = [c for c in reading.clauses if c.binds]
    for clause in bound:
        if len(bound) > 1 and (_only_discourse(clause, bool(reading.addressee)) or not courteous(clause.text)):
            continue  # "very well, Corbyn. I'll take the purse.", "by your leave, ...": the purse is what is asked
        found = addressed(clause, addressee or handed_to(clause, scene), scene, reading.text.lower())
        found = found or resolve.clause(clause, scene, reading)
        notes.append(f'"{clause.text}": {found.note}')
        if found.refusal and opened:  # after words left to the narrator, the narrator tells the line (and the rules)
            opened.append(clause)
            continue
        if found.refusal:
            if acts:  # "take the herb, then go west" where there is no west: the take stands, then why not
                return Asked(reading, acts=tuple(acts), notes=tuple(notes), stopped=found.refusal)
            return Asked(
                reading, refusal=found.refusal, refused=found.refused, unknown=found.unknown, notes=tuple(notes)
            )
        if found.offer:
            return Asked(reading, offer=found.offer, notes=tuple(notes))
        if not found.acts and found.open and _told_again(clause, acts, scene):
            notes.append(f'"{clause.text}": the use before, told again')
            continue
        if not found.acts:
            opened += [clause] if found.open else []
            gaps += [(len(acts), clause)] if found.open else []
            continue
        for act in found.acts:
            if _consequential(act, clause, scene) and not _plain(clause, act):
                return Asked(reading, offer=(act,), notes=tuple([*notes, "asked back: consequential, not plain"]))
        acts += _stepped(found.acts, acts)
        for act in found.acts:
            scene = scene.after(act)
    if all(a.verb == "talk" for a in acts) and (handed := handed_over(reading, scene, addressee)):
        gifts = ", ".join(f"{h.target} to {h.to}" for h in handed)
        return Asked(reading, acts=tuple(_stepped(handed, [])), notes=tuple([*notes, f"handed over: {gifts}"]))
    own = any(is_verb_phrase(c.core) and leading(c.text, INTENT_FRAMES) for c in opened)  # "Corbyn, I'll take it"
    if not acts and not own and (addressee or not any(is_verb_phrase(c.core) for c in opened)):  # said to someone
        told = choice_told(reading, scene)
        if told is not None and not opened:
            return Asked(reading, offer=(told,), notes=tuple([*notes, f"a story choice spoken of: {told.target}"]))
        talk = spoken_to(reading, scene, addressee)
        if talk is not None:
            return Asked(reading, acts=(talk,), notes=tuple([*notes, f"said to {talk.target}"]))
    return Asked(reading, tuple(acts), _why_nothing(reading), open=tuple(opened), gaps=tuple(gaps), notes=tuple(notes))


def by_meaning(asked: Asked, guess: Callable[[str], str | None] | None, state: GameState, pack: ContentPack) -> Asked:
    """``asked`` with an open clause whose verb the lexicon lacks ("traipse north") read by ``guess`` (the verb its
    meaning is nearest, :class:`game.language.meaning.VerbMeanings`), or else by the one thing of the scene it
    names ("lift the primer": take it?): offered, never applied on that alone."""
    if asked.kind != "open":
        return asked
    scene = Scene.of(state, pack)
    things = {w for i in {*scene.lying, *scene.carried} for n in pack.items[i].names for w in n.lower().split()}
    for clause in asked.open:
        first, _, rest = clause.core.partition(" ")
        if not first.isalpha() or is_verb_phrase(first) or len(first) < 3 or first in things:
            continue  # "chip & salve": no verb but things named, a list (``game.world.guess``)
        verb = guess(first) if guess is not None else None
        if verb is None:
            thing = _one_thing_named(clause, scene)
            if thing is not None:  # "lift the primer while nobody's looking": the primer lies here, so take it?
                return replace(asked, offer=(thing,), notes=(*asked.notes, f'"{first}" unknown: {thing.verb} asked'))
            continue
        core = f"{verb} {rest}".strip()
        found = resolve.clause(replace(clause, core=core, command=parse(core)), scene, asked.reading)
        if found.acts:
            acts = tuple(replace(a, guessed=True) for a in found.acts[:1])
            return replace(asked, offer=acts, notes=(*asked.notes, f'"{first}" read by meaning as {verb}'))
    return asked


def _one_thing_named(clause: Clause, scene: Scene) -> Act | None:
    """The one act a clause whose verb no reader knows most likely asks, by the one thing of the scene it names:
    a thing lying here taken, a thing carried used, an enemy fought, a person spoken to, a place gone to. None when
    it names none or more than one: then nothing is guessed."""
    pools = (
        ("take", names.named(scene.pack, scene.lying, "item")),
        ("use", names.named(scene.pack, scene.carried, "item")),
        ("attack", names.named(scene.pack, scene.enemies, "enemy")),
        ("talk", names.named(scene.pack, scene.people, "npc")),
        ("go", [(n, [scene.pack.nodes[n].name]) for n in sorted(set(scene.exits.values()))]),
    )
    named = [(verb, found) for verb, pool in pools for found in mentions(clause.core, pool)[0]]
    if len(named) != 1:
        return None
    verb, target = named[0]
    return Act(verb, target, guessed=True)


def _told_again(clause: Clause, acts: list[Act], scene: Scene) -> bool:
    """Whether ``clause`` tells the use just read again by what it works ("plug the cell in and fire up the
    generator": the generator is the place's, the cell's use is what starts it)."""
    if not acts or acts[-1].verb != "use" or clause.command.verb != "use":
        return False
    return resolve.feature_named(clause.command.target, scene)


def _only_discourse(clause: Clause, addressed: bool) -> bool:
    """Whether a clause is only a word that says no act and the name it calls ("very well, Corbyn"; "right", when
    the line's name was read apart: "right, Mr Corbyn")."""
    said, *called = [p.strip(" .!?") for p in clause.text.split(",")]
    named = " ".join(called).split()
    calls = 1 <= len(named) <= 3 or (addressed and not named)
    return said in DISCOURSE and calls and not any(is_verb_phrase(p) for p in called)


def _stepped(found: tuple[Act, ...], before: list[Act]) -> list[Act]:
    """``found`` numbered as steps after ``before``: takes (and drops) of one clause are one turn ("take the
    fuse and the gloves"), any other act a turn of its own (a gift is one thing to one person)."""
    step = before[-1].step + 1 if before else 0
    out: list[Act] = []
    for act in found:
        if out and not (act.verb == out[-1].verb and act.verb in ("take", "drop")):
            step += 1
        out.append(replace(act, step=step))
    return out


def _why_nothing(reading: Reading) -> str:
    """Why no clause of ``reading`` asks for an act, in :data:`NOTHING`'s words."""
    for clause in reading.clauses:
        if clause.speech:
            return NOTHING["speech"]
        if clause.negated:
            return NOTHING["negation"]
        if clause.mood in NOTHING:
            return NOTHING[clause.mood]
        if clause.classes == {"sense"}:
            return NOTHING["look"]
    return UNREAD


def _consequential(act: Act, clause: Clause, scene: Scene) -> bool:
    """Whether ``act`` changes the story for good: a story choice, giving away or dropping what a quest needs,
    spending more than a trifle (a fifth of the purse)."""
    if act.verb == "choice":
        return True
    if act.verb in ("give", "drop") and act.target in scene.needed:
        return True
    if act.verb == "buy":
        price = scene.price(act.target, act.to)
        return price is not None and price * 5 > max(scene.state.gold, 1)
    return False


def _plain(clause: Clause, act: Act) -> bool:
    """Whether the words ask for ``act`` plainly: no misspelling forgiven, no hedge ("maybe", "I guess"), the thing
    named rather than described, a story choice said in its own words."""
    if clause.how.startswith("typo") or act.guessed:
        return False
    hedged = any(f" {phrase} " in f" {clause.text} " for phrase in HEDGE_PHRASES)
    return not (set(clause.text.split()) & HEDGES or hedged)


def spoken_to(reading: Reading, scene: Scene, addressee: str | None) -> Act | None:
    """The person present a line that asks no act of the world is said to: the one it calls by name ("Reverend,
    may I have a word?"), or the one person here when the line tells them something ("Garrick sent me"). A
    question is otherwise the narrator's to route (to the person it is for, or to memory)."""
    if any((c.negated and c.classes) or c.speech for c in reading.clauses) or not reading.clauses:
        return None  # words said ("tell garrick my name is Kael") are the narrator's to tell, and remember; an
        # act refused is no word to anyone ("I will never kneel"), but "don't be frightened" is said to someone
    if addressee is None and reading.addressee and len(scene.people) == 1:
        addressee = scene.people[0]  # "wise one, tell me of the harp": called by no name, the one here
    if addressee is None and len(scene.people) == 1 and reading.clauses[0].core in GREETINGS:
        addressee = scene.people[0]  # "hello? who's on the intercom?": a greeting, then words for the one here
    if addressee is not None:
        return Act("talk", addressee, topic=_topic(reading))
    if any(parts(c.text).about_past or parts(c.text).speaker for c in reading.clauses if c.mood == "question"):
        return None  # "what did I give to Garrick?": memory's to answer, though Garrick stands here
    if len(scene.people) == 1 and all(c.mood == "report" for c in reading.clauses):
        one = scene.people[0]
        if any(whole_words(n.lower()).search(reading.text) for n in scene.pack.npcs[one].names):
            return None  # "Bess reckons old Jory knows these tides": said of Jory, not to him
        return Act("talk", one, topic=_topic(reading))
    return None


def choice_told(reading: Reading, scene: Scene) -> Act | None:
    """A story choice a line that asks no act still speaks of, where it can be made ("I won't fight you, Silas. I
    came to speak of peace."): offered, never made on those words alone."""
    for said in reading.clauses:
        if said.negated or said.speech or said.mood in ("question", "hypothetical", "wish"):
            continue
        found = choosing.choice(replace(said, core=said.text), scene)
        if found is not None and found.acts:
            return replace(found.acts[0], guessed=True)
    return None


def _topic(reading: Reading) -> str:
    """What a line said to someone asks about, for their answer: a question (ending "?"), their words, or ""
    for a word with them ("may I have a word?")."""
    if any(c.command.verb == "talk" and not c.command.topic and not c.command.obj for c in reading.clauses):
        return ""
    told = [c.command.topic for c in reading.clauses if c.command.verb == "talk" and c.command.topic]
    if told:  # "tell me of the harp": about the harp
        return told[0]
    asked = [c.core for c in reading.clauses if c.mood == "question"]
    return f"{asked[0]}?" if asked else " ".join(c.core for c in reading.clauses)


def status_answer(reading: Reading, state: GameState, pack: ContentPack) -> str:
    """The rules' answer to a question about the player's own state ("how much gold do I have?"), or ""."""
    kind = status_question(reading.text)
    if kind == "gold":
        return f"You have {money(state.gold, pack)}."
    if kind == "health":
        return f"You have {state.hp} of {state.max_hp} HP."
    if kind == "inventory":
        return inventory_text(state, pack)
    return ""
