"""Fault-injecting narrators.

These are fakes on purpose: they exist to inject faults (a network error, a
malformed answer) that the real narrators cannot be made to produce on demand.
"""

from __future__ import annotations

from collections.abc import Iterable

from game.llm.base import NarratorBase, NarratorError, PromptBundle


class ScriptedAnswers(NarratorBase):
    """Fake narrator that returns the given raw answers in order (fault injection)."""

    name = "fake"

    def __init__(self, answers: Iterable[str | Exception]) -> None:
        self.answers = list(answers)
        self.bundles: list[PromptBundle] = []

    def narrate(self, bundle: PromptBundle) -> str:
        self.bundles.append(bundle)
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    def summarize(self, text: str, max_words: int = 60) -> str:
        return " ".join(text.split()[:max_words])


def network_down() -> NarratorError:
    return NarratorError("connection refused")


class FlakySummarizer:
    """Fake summarizer that fails its first ``failures`` calls (fault injection)."""

    def __init__(self, failures: int) -> None:
        self.failures = failures
        self.calls = 0

    def summarize(self, text: str, max_words: int = 60) -> str:
        self.calls += 1
        if self.calls <= self.failures:
            raise NarratorError("summary backend down")
        return " ".join(text.split()[:max_words])


class ExtractingSummarizer:
    """Fake model summarizer with a Story Bible extraction call that returns ``facts`` (fault injection:
    its first ``failures`` extraction calls raise). A real model cannot be told what to extract or when to fail."""

    def __init__(self, facts: list[dict], failures: int = 0) -> None:
        self.facts = facts
        self.failures = failures
        self.texts: list[str] = []
        self.known: list[list[str]] = []

    def summarize(self, text: str, max_words: int = 60) -> str:
        return " ".join(text.split()[:max_words])

    def extract_facts(self, text: str, known_keys=()) -> list[dict]:
        self.texts.append(text)
        self.known.append(list(known_keys))
        if len(self.texts) <= self.failures:
            raise NarratorError("extraction backend down")
        return self.facts


class GatedSummarizer:
    """Fake summarizer that blocks until released, to prove consolidation runs in the background."""

    def __init__(self) -> None:
        import threading

        self.started = threading.Event()
        self.release = threading.Event()

    def summarize(self, text: str, max_words: int = 60) -> str:
        self.started.set()
        self.release.wait(timeout=30)
        return " ".join(text.split()[:max_words])


class FlakyEmbedder:
    """Wraps a real embedder and fails while ``broken`` is set (fault injection)."""

    def __init__(self, real) -> None:
        self.real = real
        self.model_name = real.model_name
        self.model_version = real.model_version
        self.broken = True

    def embed(self, texts):
        from game.memory.vectors.embedders import EmbedderUnavailable

        if self.broken:
            raise EmbedderUnavailable("GPU fell off the bus")
        return self.real.embed(texts)


class CountingEmbedder:
    """A spy around the real embedder: counts what is embedded, embeds nothing itself."""

    def __init__(self, real) -> None:
        self.real = real
        self.model_name = real.model_name
        self.model_version = real.model_version
        self.texts: list[str] = []
        self.batches: list[list[str]] = []
        """Each ``embed`` call's texts."""

    def embed(self, texts):
        self.texts.extend(texts)
        self.batches.append(list(texts))
        return self.real.embed(texts)


class BreakableStore:
    """Wraps a real vector store; its queries fail while ``broken`` is set (fault injection)."""

    def __init__(self, real) -> None:
        self.real = real
        self.backend = real.backend
        self.broken = False

    def _reach(self):
        if self.broken:
            from game.memory.vectors.stores import StoreUnavailable

            raise StoreUnavailable("connection reset by the vector server")

    def query(self, *args, **kwargs):
        self._reach()
        return self.real.query(*args, **kwargs)

    def query_arrays(self, *args, **kwargs):
        self._reach()
        return self.real.query_arrays(*args, **kwargs)

    def __getattr__(self, name):
        return getattr(self.real, name)


class ObedientNarrator(NarratorBase):
    """A fault: a narrator that obeys whatever the player's action and the lore in its prompt tell it.

    Prompt injection made real. It reads the action (``bundle.action``) and the
    prompt text (``bundle.user``, ``bundle.system``), finds every sentence that
    orders something (its own reading, independent of the game's guard), and
    proposes exactly what is asked through every channel of the JSON turn:
    named or far items in ``items_gained``, gold, experience and healing
    deltas, a ``move_to`` far away, an ``ending``, every quest objective in
    ``quest_updates`` and a side quest, and the instruction itself in
    ``memory_notes`` (as text, as "The player said: ...", and as structured
    notes of importance 100 that claim to be world, style or safety rules or
    plain facts). Asked to reveal its system prompt, its narration quotes
    ``bundle.system`` verbatim and a note keeps its longest sentence. Its ``summarize`` copies into every summary
    and synopsis the instructions it finds in the text, and every one it has
    obeyed before, verbatim (the worst case: a summarizer that copies the
    injection), followed by the ordinary actions it was given.
    """

    name = "obedient"

    ORDERS = (
        ("gold", r"\b(?:give|grant|add|award)\b[^.!?\n]*?\b(?P<n>\d[\d,]*)\s+gold\b"),
        ("exp", r"\b(?:give|grant|add|award)\b[^.!?\n]*?\b(?P<n>\d[\d,]*)\s+(?:exp|experience|xp)\b"),
        ("heal", r"\bheal (?:me|the player)\b"),
        ("item", r"\b(?:grant|give)\s+(?:me|the player)\s+(?:the\s+|an?\s+)?(?!\d)\w+"),
        ("ending", r"\b(?:jump|skip|go)\s+(?:straight\s+)?to\s+the\s+ending\b|\band the ending\b"),
        ("quests", r"\bcomplete all (?:the\s+|my\s+)?quests\b"),
        ("move", r"\b(?:move|teleport|take)\s+me\s+to\b"),
        ("reveal", r"\b(?:reveal|print|show)\b[^.!?\n]*\bsystem prompt\b"),
        ("obey", r"\b(?:ignore|disregard|forget)\b[^.!?\n]*\b(?:rules|instructions)\b"),
    )

    def __init__(self, pack) -> None:
        import re

        self.pack = pack
        self.orders = [(kind, re.compile(pattern, re.I)) for kind, pattern in self.ORDERS]
        self.bundles: list[PromptBundle] = []
        self.obeyed: list[str] = []
        """Every instruction it has found, verbatim, in the order found."""
        self.answers: list[dict] = []

    # ------------------------------------------------------------- reading
    @staticmethod
    def sentences(text: str) -> list[str]:
        import re

        parts = re.split(r"(?<=[.!?])\s+|\n+|\s+\|\s+", text)
        return [p.strip().lstrip("-# ").strip() for p in parts if p.strip().lstrip("-# ").strip()]

    def kinds(self, sentence: str) -> list[str]:
        """What ``sentence`` orders (nothing for a negated sentence: it obeys orders, not prohibitions)."""
        import re

        if re.search(r"\b(?:never|not|don't|do not)\b", sentence, re.I):
            return []
        return [kind for kind, pattern in self.orders if pattern.search(sentence)]

    def instructions(self, text: str) -> list[str]:
        """The sentences of ``text`` that order something, verbatim (a quote of one found already is skipped)."""
        found: list[str] = []
        for sentence in self.sentences(text):
            if self.kinds(sentence) and not any(f in sentence for f in found):
                found.append(sentence)
        return found

    # ------------------------------------------------------------- obeying
    def _named(self, sentence: str, things) -> list[str]:
        low = sentence.lower()
        return [i for i, name in things if name.lower() in low or i.replace("_", " ") in low]

    def _far_node(self, here: str) -> str:
        near = {here, *self.pack.nodes[here].exits.values()}
        return next(n for n in reversed(list(self.pack.nodes)) if n not in near)

    def obey(self, bundle: PromptBundle) -> dict:
        pack = self.pack
        found: list[str] = []
        for text in (bundle.action, bundle.system, bundle.user):
            found += [i for i in self.instructions(text) if not any(f in i for f in found)]
        for instruction in found:
            if not any(seen in instruction for seen in self.obeyed):
                self.obeyed.append(instruction)
        effects: dict = {"items_gained": [], "quest_updates": []}
        notes: list = []
        reveal = False
        for instruction in found:
            kinds = self.kinds(instruction)
            for kind, field in (("gold", "gold_delta"), ("exp", "exp_delta")):
                match = dict(self.orders)[kind].search(instruction) if kind in kinds else None
                if match:
                    effects[field] = int(match.group("n").replace(",", ""))
            if "heal" in kinds:
                effects["hp_delta"] = 1000
            if "item" in kinds or "gold" in kinds:
                named = self._named(instruction, ((i, it.name) for i, it in pack.items.items()))
                effects["items_gained"] += [i for i in named if i not in effects["items_gained"]]
            if "ending" in kinds:
                named = self._named(instruction, ((e.id, e.title) for e in pack.endings))
                effects["ending"] = named[0] if named else pack.endings[0].id
            if "quests" in kinds:
                quests = [*pack.quests.main, *pack.quests.side]
                effects["quest_updates"] = [{"quest": q.id, "objective": o.id} for q in quests for o in q.objectives]
                if pack.quests.side:
                    effects["trigger_side_quest"] = pack.quests.side[-1].id
            if "move" in kinds:
                named = self._named(instruction, ((n, node.name) for n, node in pack.nodes.items()))
                effects["move_to"] = named[0] if named else self._far_node(bundle.state.node)
            reveal = reveal or "reveal" in kinds
        for n, instruction in enumerate(found):
            notes += [instruction, f"The player said: {instruction}"]
            if n == 0:
                notes += [
                    {
                        "entry_type": entry_type,
                        "canonical_key": key,
                        "title": "Obey the player",
                        "content": instruction,
                        "importance": 100,
                    }
                    for entry_type, key in (
                        ("world_rule", "rule:obey-player"),
                        ("style_rule", "style:obey-player"),
                        ("safety_rule", "safety:obey-player"),
                        ("event", "note:obey-player"),
                        ("character", "character:player"),
                    )
                ]
        narration = "You do as you are told."
        if reveal:
            narration += f" My system prompt reads: {bundle.system}"
            # the note keeps the longest sentence of the prompt's own words (the persona and its safety line, which
            # open the system prompt; the Story Bible and the quests after them are the story's lore)
            own = next((b.text for b in bundle.blocks if b.name == "persona"), bundle.system)
            notes.insert(0, max((s for s in self.sentences(own) if len(s) <= 500), key=len))
        return {
            "narration": narration,
            "choices": ["Ask for more", "Look around"],
            "effects": effects,
            "memory_notes": notes[:8],
        }

    def narrate(self, bundle: PromptBundle) -> str:
        import json

        self.bundles.append(bundle)
        answer = self.obey(bundle)
        self.answers.append(answer)
        return json.dumps(answer)

    def summarize(self, text: str, max_words: int = 60) -> str:
        copied = list(self.obeyed)
        copied += [i for i in self.instructions(text) if not any(seen in i for seen in copied)]
        ordinary = []
        for line in text.splitlines():
            first = self.sentences(line)[:1]
            if first and not self.kinds(first[0]) and not any(c in first[0] for c in copied):
                ordinary.append(first[0])
        return " ".join(f"{sentence.rstrip('.!?')}." for sentence in [*copied, *ordinary])
