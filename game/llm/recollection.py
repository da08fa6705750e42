"""How the scripted narrator answers from memory: only from the blocks the prompt holds, in sentences.

The scripted narrator cannot read prose, so it answers questions ("where is Hal?", "what did Garrick tell me?",
"what is my name?") from the memory items its prompt bundle holds, and nothing else: it is a probe of what memory
delivered. Memory speaks of the player in the third person; answers speak to the player in the second.

- :meth:`Recollection.answer`: the item that best answers a question, said as facts (a logged turn told as what
  happened; a recollection of an earlier turn, "You recall: ...", is never a fact);
- :meth:`Recollection.said_by`: what one person told the player, in their own words (speaker-attributed
  memories: the Story Bible's ``said:`` facts, the turns where they answered, the summaries that quote them);
- :meth:`Recollection.player_facts`: what the player said of themselves (name, origin, promise), latest first.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from game.language.parser import parse
from game.llm.base import PromptBundle
from game.llm.tellings import SPOKEN
from game.memory.base import MemoryBlock, MemoryItem
from game.memory.people import RECOLLECTION
from game.memory.player_facts import PLAYER_TEMPLATES
from game.memory.records import unquoted
from game.text import best_match, keywords
from game.world.content import ContentPack

SENTENCE = re.compile(r"(?<=[.!?|])\s+|\s*\|\s*|\n+")
PLAYER = re.compile(r"\b(?:me|my|myself|mine|i|i'm|im)\b", re.I)
_BLOCK_WEIGHT = {
    "relevant_memories": 1.0,
    "history_recall": 0.9,
    "bible_core": 0.8,
    "open_threads": 0.7,
    "knowledge": 0.6,
}
_NOT_FACTS = frozenset({"recent_story"})
"""Blocks that log effects ("talk_to old_hunter; quest_started"), not facts to say."""
_QUESTION_NOISE = frozenset({"know", "remember", "tell", "said", "say", "told", "now", "again", "recall"})
_EPISODE = re.compile(
    r"^Turn (?P<turn>\d+)(?: at (?P<place>[^:]+))?: player: (?P<action>.*?) \| (?P<narration>.*)$", re.S
)
_LOGGED_TURN = re.compile(r"\bTurn (?P<turn>\d+)(?: at (?P<place>[^:]+))?: (?:player: )?(?P<action>[^.|]*)[.|]\s*")
_TO_YOU = {"me": "you", "my": "your", "myself": "yourself", "mine": "yours", "i": "you", "i'm": "you're", "am": "are"}
_QUOTE = re.compile(r'"(?P<said>[^"]{3,})"?')


@dataclass(frozen=True)
class Quote:
    """Something a person told the player, as memory holds it."""

    topic: str
    words: str
    turn: int


def words(text: str) -> set[str]:
    return set(keywords(text))


def second_person(text: str) -> str:
    """Memory speaks of 'the player'; the narrator speaks to 'you'."""

    def verb(match: re.Match[str]) -> str:
        word = match.group(1)
        base = (
            word[:-3] + "y"
            if word.endswith("ies")
            else word[:-2]
            if word.endswith("es") and word[-3] in "sxz"
            else word[:-1]
        )
        return f"you {base}"

    text = re.sub(r"\b[Tt]he player's\b", "your", text)
    text = re.sub(r"\b[Tt]he player (\w+s)\b", verb, text)
    text = re.sub(r"\b[Tt]he player\b", "you", text)
    return re.sub(r"(^|[.:!?]\s+)([a-z])", lambda m: m.group(1) + m.group(2).upper(), text)


def to_you(text: str) -> str:
    """The player's words as someone else says them back: "my sister" -> "your sister"."""
    return re.sub(r"\b(?:me|my|myself|mine|i'm|i)\b", lambda m: _TO_YOU[m.group().lower()], text, flags=re.I)


def yourself(text: str) -> str:
    """The player's words as the narrator tells the player's own act: "heal me" -> "heal yourself"."""
    text = re.sub(r"\b(?:me|myself)\b", "yourself", text, flags=re.I)
    return to_you(text)


def sentence(text: str) -> str:
    """``text`` as a sentence: a capital first, a stop last."""
    text = text.strip()
    if not text:
        return text
    text = text[0].upper() + text[1:]
    return text if text[-1] in '.!?"…' else text + "."


class Recollection:
    """Answers from the memory a prompt bundle holds, for one story."""

    def __init__(self, pack: ContentPack) -> None:
        self.pack = pack

    def _npc(self, name: str) -> str | None:
        return best_match(name, [(i, npc.names) for i, npc in self.pack.npcs.items()]) if name else None

    # -------------------------------------------------------------- answers
    def answer(
        self, question: str, bundle: PromptBundle, *, must_cue: bool = False, only: set[str] | None = None
    ) -> str | None:
        """Answer from the injected memory blocks only (extractive), in sentences.

        The best item shares the most question words; at a tie a Story Bible
        fact beats the history, then the one that best fits the kind of question
        (a place for "where", a person for "who"), then the latest. From it, the
        sentence naming the subject and the sentence carrying the answer. A
        logged turn ("Turn 2 at ...: player: ... | ...") is said as what
        happened, never shown as it is logged. With ``must_cue``, only an item
        with a sentence that fits the kind of question ("name is" for a name)
        answers: a character sketch that only mentions a name does not. With ``only``, only the items of those
        sources (what recall found to answer the question's parts) are read.
        """
        lowered = question.lower()
        wanted = words(question) - _QUESTION_NOISE
        if PLAYER.search(lowered):
            wanted.add("player")  # memory speaks of the player in the third person
        if not wanted:
            return None
        cues = self._cues(lowered)
        best: tuple[tuple[int, bool, float, int], list[str]] | None = None
        for block in bundle.memory.blocks:
            if block.name in _NOT_FACTS:
                continue
            weight = _BLOCK_WEIGHT.get(block.name, 0.5)
            for item in block.items:
                if only is not None and item.source not in only:
                    continue
                sentences, when = self._fact_sentences(item)
                if not sentences:
                    continue
                text = " ".join(sentences)
                said = words(text) | ({"player"} if re.search(r"\b(?:you|your)\b", text, re.I) else set())
                overlap = len(wanted & said)
                if not overlap:
                    continue
                fit = max(self._cue_score(x, cues) for x in sentences)
                if must_cue and not fit:
                    continue
                score = 0.3 * weight + 0.3 * fit
                rank = (overlap, item.source.startswith("bible-"), score, when)
                if best is None or rank > best[0]:
                    best = (rank, sentences)
        if best is None:
            return None
        sentences = best[1]
        subject = max(sentences, key=lambda x: len(wanted & words(x)))
        answer = max(sentences, key=lambda x: self._cue_score(x, cues))
        if not self._cue_score(answer, cues):
            answer = subject
        parts = [subject] if answer == subject else [subject, answer]
        return "You recall: " + " ".join(sentence(second_person(p)) for p in parts)

    def said_by(self, npc_id: str, bundle: PromptBundle) -> list[Quote]:
        """What ``npc_id`` told the player, from the memory the prompt holds: one quote per topic (the latest),
        answers about something before greetings, latest first."""
        name = self.pack.npcs[npc_id].name
        escaped = re.escape(name)
        bible = re.compile(rf"^{escaped} said(?: about (?P<topic>[^:]+))?: (?P<said>.+)$", re.S)
        summary = re.compile(rf"{escaped} told the player(?: about (?P<topic>[^:]+))?: \"(?P<said>[^\"]+)\"")
        reply = re.compile(rf"^{escaped}{SPOKEN}: \"(?P<said>[^\"]+)\"?")
        found: dict[str, Quote] = {}

        def keep(topic: str, said: str, turn: int) -> None:
            said = sentence(said.strip().strip('"').strip())
            if said and (topic not in found or len(said) > len(found[topic].words)):  # the whole of it
                found[topic] = Quote(topic, said, max(turn, found[topic].turn if topic in found else 0))

        for item in _facts(bundle.memory.blocks):
            text, turn = unquoted(item.text.strip()), _turn_of(item)
            if (hit := bible.match(text)) is not None:
                keep((hit.group("topic") or "").strip(), hit.group("said"), turn)
                continue
            logged = _EPISODE.match(text)
            if logged is not None:
                narration = logged.group("narration").strip()
                if (hit := reply.match(narration)) is not None:
                    keep(parse(logged.group("action")).topic, hit.group("said"), int(logged.group("turn")))
                continue
            for hit in summary.finditer(text):
                keep((hit.group("topic") or "").strip(), hit.group("said"), turn)
        return sorted(found.values(), key=lambda q: (not q.topic, -q.turn))

    def player_facts(self, bundle: PromptBundle) -> list[tuple[str, str]]:
        """(label, value) of what the player said of themselves, from the recalled Story Bible; latest wins."""
        found: dict[str, tuple[int, str]] = {}
        for item in bundle.memory.all_items():
            if not item.source.startswith("bible-"):
                continue
            for label, template in PLAYER_TEMPLATES.items():
                if label not in ("name", "origin", "promise"):
                    continue
                pattern = re.escape(template).replace(re.escape("{}"), "(?P<v>.+)")
                match = re.fullmatch(pattern, unquoted(item.text.strip()).rstrip("."))
                number = _turn_of(item)
                if match and (label not in found or number > found[label][0]):
                    found[label] = (number, match.group("v"))
        return [(label, found[label][1]) for label in ("name", "origin", "promise") if label in found]

    # -------------------------------------------------------------- details
    def _fact_sentences(self, item: MemoryItem) -> tuple[list[str], int]:
        """An item's sentences as facts (a logged turn told as what happened), and how recent it is; none for
        a turn that only recalled an earlier one."""
        text = unquoted(item.text.strip())  # a claim is said as what was said, without its attribution
        when = _turn_of(item)
        logged = _EPISODE.match(text)
        if logged:
            when = int(logged.group("turn"))
            narration = logged.group("narration").strip()
            if RECOLLECTION.match(narration):
                return [], when
            said = self._action_sentence(logged.group("action"), logged.group("place") or "")
            parts = [said] if said else []
            parts += [s.strip() for s in SENTENCE.split(narration) if s.strip()]
            return parts, when
        text = re.sub(r"^\[Turn \d+\]\s*", "", text)
        text = re.sub(r"\s*\(turns? \d+(?:-\d+)?\)", "", text)
        text = _LOGGED_TURN.sub(self._logged_turn, text)
        return [s.strip() for s in SENTENCE.split(text) if s.strip() and s.strip() not in ".|"], when

    def _logged_turn(self, match: re.Match[str]) -> str:
        """A "Turn N: <what the player typed>." inside a summary, said as what happened (a bare command dropped)."""
        action = match.group("action")
        said = self._action_sentence(action, match.group("place") or "")
        if said:
            return said + " "
        return f"{action}. " if parse(action).verb in ("other", "ask") else ""

    def _action_sentence(self, action: str, place: str = "") -> str:
        """What the player did, as a sentence: 'At the Lodge you told Old Garrick: "my name is Bob".'"""
        command = parse(action)
        at = f"At {place}, you" if place else "You"
        if command.verb == "say" and command.target:
            npc = self._npc(command.obj)
            to = f" {self.pack.npcs[npc].name}" if npc else ""
            return f'{at} {"told" if npc else "said"}{to}: "{command.target}".'
        if command.verb == "talk" and command.topic:
            npc = self._npc(command.obj)
            return f"{at} asked {self.pack.npcs[npc].name if npc else 'around'} about {to_you(command.topic)}."
        return ""

    def _cues(self, question: str) -> dict[str, float]:
        """Words that mark an answer to this kind of question, with their weight."""
        if question.startswith("where") or " where " in question:
            names = [n.name for n in self.pack.nodes.values()] + [r.name for r in self.pack.story.regions]
            return {n.lower(): 2.0 for n in names} | dict.fromkeys(("seen", "lives", "hiding", "gone to"), 1.0)
        if question.startswith("who") or " who " in question:
            return {n.name.lower(): 2.0 for n in self.pack.npcs.values()}
        if "name" in question:
            return dict.fromkeys(("name is", "called"), 2.0)
        return {}

    @staticmethod
    def _cue_score(text: str, cues: dict[str, float]) -> float:
        lowered = text.lower()
        found = [w for cue, w in cues.items() if re.search(rf"\b{re.escape(cue)}\b", lowered)]
        return max(found) + 0.1 * len(found) if found else 0.0  # a list of exits is no better an answer


def _facts(blocks: Iterable[MemoryBlock]) -> list[MemoryItem]:
    return [item for block in blocks if block.name not in _NOT_FACTS for item in block.items]


def _turn_of(item: MemoryItem) -> int:
    """The turn an item is from, as its id tells it (``turn-7``, ``bible-12``, ``history:summary-10``)."""
    number = item.source.rsplit("-", 1)[-1]
    return int(number) if number.isdigit() else 0
