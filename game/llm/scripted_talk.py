"""The scripted narrator's conversations: talk, say and ask, and how people answer.

A question or talk with one person present goes to that person ("who are
you?", "ask about kyoto"), who answers in their own words (topics and their
``topic_aliases``), with the pronouns the content gives; "me", "my" and
"myself" are the player ("ask senda about me"). A question no one here
answers is answered from the memory the prompt holds, or not at all.
"""

from __future__ import annotations

import re
from typing import Any

from game.language.parser import GLANCE, Command, glance_way
from game.llm.base import PromptBundle
from game.llm.lore import lore_reply
from game.llm.recalled_events import told_events
from game.llm.recollection import PLAYER, Recollection, second_person, sentence, to_you
from game.llm.recollection import words as _words
from game.llm.scripted_reading import StoryReader, pronouns
from game.llm.tellings import Voice, tell
from game.memory.player_facts import PLAYER_TEMPLATES
from game.memory.search.query import QueryRewriter
from game.memory.search.question import read_question
from game.text import best_match, mentions
from game.world.conditions import holds, npcs_at
from game.world.content import ContentPack
from game.world.describe import node_text, status_text, way_text
from game.world.rules.trade import wares_text
from game.world.state import GameState

_YOU = re.compile(r"\b(?:you|your|yours|yourself|ya|u)\b", re.I)
_ABOUT_SELF = re.compile(
    r"^(?:you|yourself)$|\b(?:who|what)\s+(?:are|r)\s+(?:you|u)\b|\byour\s+name\b|\byourself\b|\babout\s+you$"
    r"|\bwho\s+you\s+are\b"
)
_ABOUT_PLAYER = re.compile(
    r"^(?:me|myself|i)$|\babout\s+(?:me|myself)\b|\bmy\s+name\b|\bwho\s+(?:am\s+i|i\s+am)\b|\b(?:know|remember)\s+me\b"
)
_TOLD_ME = re.compile(r"\bwhat\b(?:\s+(?:did|has|had|does))?\s+(?P<who>.+?)\s+(?:tell|told|say|said)\b")
"""\"What did Garrick tell me?\", \"what has Alicia said\", \"tell me what Garrick said\": a person's own words."""
_MY_NAME = re.compile(r"\bmy\s+name\b")
_BEEN = re.compile(
    r"\bwhere\s+(?:have|had)\s+i\s+been\b|\b(?:places?|where)\s+(?:have\s+)?i(?:'ve)?\s+(?:been|visited)\b"
)
_WHAT_IF_GO = re.compile(r"^what\s+if\s+i\s+(?:went|go|walked|walk|headed|head)\s+(?:to\s+the\s+)?(?P<way>[a-z]+)$")
_NEXT = re.compile(
    r"^(?:what\s+(?:should|do|must|can|shall)\s+i\s+do|what\s+now|what\s+next|what\s+is\s+my\s+(?:goal|task|quest)"
    r"|where\s+(?:should|do|must|shall)\s+i\s+go)(?:\s+(?:now|next|here))?$"
)
_WARES = re.compile(r"\b(?:sells?|selling|for\s+sale|wares|buys?|buying|trades?|trading|prices?|costs?)\b")
_WHERE = re.compile(r"^where(?:\s+(?:is|are|was|were)|'s)\s+(?P<who>.+?)(?:\s+(?:now|these days))?$")
""""Where is the voice?": where a person is (the parser has lowered the question and dropped its mark)."""


def _agree(subject: str, verb: str) -> str:
    """The verb as ``subject`` (a pronoun or a name) does it: "she shakes", "they shake", "Old Sage shakes"."""
    if subject == "they":
        return verb
    return verb + ("es" if verb.endswith(("s", "sh", "ch", "x", "z", "o")) else "s")


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


class Conversation(StoryReader):
    """The verbs of speech: ``talk``, ``say`` and ``ask``, answered from the content and the recalled memory."""

    def __init__(self, pack: ContentPack) -> None:
        super().__init__(pack)
        self.recollection = Recollection(pack)
        self.query = QueryRewriter(pack)
        self.voice = Voice()
        self.varied = False
        """Whether the turn being told has another wording (a retry of one without gets ``retold``'s)."""
        """The turn being told, as the choice of wording reads it (set by ``ScriptedNarrator.turn``)."""

    def _tell(self, kind: str, **fields: str) -> str:
        """A variant of ``kind`` (``game.llm.tellings``) for the turn being told."""
        self.varied = True
        return tell(kind, self.voice, **fields)

    def _do_talk(
        self, command: Command, state: GameState, effects: dict[str, Any], notes: list[str], bundle: PromptBundle
    ) -> str:
        here = npcs_at(self.pack, state.node)
        npc_id = self._addressee(command.obj, state)
        if npc_id is None:
            enemy = self._enemy_here(command.obj, state)
            if enemy:
                return self._parley(enemy, state)
            other = best_match(command.obj, self._npc_names(self.pack.npcs)) if command.obj else None
            if other:
                effects["talk_to"] = other  # the rules will say they are not here
                return f"You call out for {self.pack.npcs[other].name}, but no one answers."
            if not command.obj and here:
                return f"Whom do you mean? Here: {', '.join(self.pack.npcs[n].name for n in here)}."
            return "There is no one here by that name." if command.obj else "There is no one here to talk to."
        npc = self.pack.npcs[npc_id]
        effects["talk_to"] = npc_id
        if command.topic:  # a topic ending "?" is a question put to them (the engine read one said to them)
            asked = command.topic.endswith("?")
            return self._reply(npc_id, command.topic.rstrip("?"), state, notes, bundle, asked=asked)
        greeting, topics = self._mood(npc_id, state)
        known = ", ".join(sorted(topics)) or "nothing in particular"
        return f"{self._tell('says', npc=npc.name, said=greeting)} (You could ask about: {known}.)"

    def _parley(self, enemy_id: str, state: GameState) -> str:
        """Words to an enemy: it answers with its challenge; the story's choices here are what words can do."""
        options = [c.name[:1].lower() + c.name[1:] for c in self.pack.story.choices if holds(c.condition, state)]
        offer = f" (You could {'; '.join(options)} - or fight.)" if options else " It is in no mood to talk."
        return self.pack.enemies[enemy_id].encounter + offer

    def _reply(
        self, npc_id: str, topic: str, state: GameState, notes: list[str], bundle: PromptBundle, *, asked: bool
    ) -> str:
        """What an NPC says when asked about ``topic`` (or asked ``topic``, a question)."""
        npc = self.pack.npcs[npc_id]
        _, obj, possessive = pronouns(npc)
        said = self._topic(npc_id, topic, state)
        if said:
            notes.append(f"{npc.name} said: {said}" if asked else f"{npc.name} said about {topic}: {said}")
            return self._tell("answer" if asked else "says", npc=npc.name, said=said)
        lowered = topic.lower().strip()
        if _ABOUT_SELF.search(lowered):
            role = npc.role[:1].lower() + npc.role[1:] if npc.role[1:2].islower() else npc.role
            said = f"I am {npc.name}, {role}."
            notes.append(f"{npc.name} said: {said}")
            return f'{npc.name}: "{said}"'
        if _ABOUT_PLAYER.search(lowered):
            return self._about_player(npc_id, state, bundle)
        _, topics = self._mood(npc_id, state)
        lore = lore_reply(self.pack, npc_id, topic, topics)
        if lore:
            notes.append(f"{npc.name} said about {topic}: {lore}")
            return self._tell("answer" if asked else "says", npc=npc.name, said=lore)
        known = ", ".join(sorted(topics)) or "nothing in particular"
        if asked:
            return (
                f"{npc.name} {_agree(npc.name, 'look')} at you for a long moment and {_agree(npc.name, 'give')} "
                f"no answer to that. (You could ask {obj} about: {known}.)"
            )
        return f'{npc.name} {_agree(npc.name, "shake")} {possessive} head. "I know nothing about {to_you(topic)}."'

    def _about_player(self, npc_id: str, state: GameState, bundle: PromptBundle) -> str:
        """What an NPC knows of the player: what memory holds the player said of themselves, and how they feel."""
        npc = self.pack.npcs[npc_id]
        subject, _, _ = pronouns(npc)
        facts = [
            second_person(PLAYER_TEMPLATES[label].format(value))
            for label, value in self.recollection.player_facts(bundle)
        ]
        known = f"{'. '.join(facts)}. That much I know." if facts else "I know little about you yet."
        affinity = state.affinity.get(npc_id, npc.initial_affinity)
        mood = "friendly" if affinity >= 30 else "warm" if affinity >= 10 else "wary" if affinity < 0 else "neutral"
        feeling = f"{_cap(subject)} {_agree(subject, 'seem')} {mood} toward you."
        return f'{npc.name} {_agree(npc.name, "look")} you over. "{known}" {feeling}'

    def _do_say(
        self, command: Command, state: GameState, effects: dict[str, Any], notes: list[str], bundle: PromptBundle
    ) -> str:
        spoken = command.target or re.sub(r"^(say|shout|whisper|tell)\s+(to\s+)?", "", command.text, flags=re.I)
        spoken = spoken.strip(" \"'")
        notes.append(f"The player said: {spoken}")
        npc_id = self._addressee(command.obj, state)
        if npc_id:
            effects["talk_to"] = npc_id
            npc = self.pack.npcs[npc_id]
            subject = pronouns(npc)[0]
            listens = self._tell("heard", npc=npc.name, subject=subject)
            if re.match(r"^about\s", spoken, re.I):
                return f"You tell {npc.name} {to_you(spoken)}. {listens}"
            return f'You tell {npc.name}: "{sentence(spoken)}" {listens}'
        return f'You say aloud: "{sentence(spoken)}" The words hang in the air.'

    def _do_ask(
        self, command: Command, state: GameState, effects: dict[str, Any], notes: list[str], bundle: PromptBundle
    ) -> str:
        question = command.topic
        if re.search(r"\bwhere am i\b|^what(?: is|'s) this place\b|^where is this\b", question):
            return node_text(state, self.pack)
        if _NEXT.match(question):  # "what should I do?": the objectives still open, the rules' own record
            return self._next_steps(state)
        if _BEEN.search(question):  # "where have I been?": the rules' own record of the places visited, in order
            return self._places_been(state)
        glance = GLANCE.match(question) or _WHAT_IF_GO.match(question)
        way = glance_way(glance) if glance else None
        if way:  # "what lies north?": a look that way, not a memory
            return way_text(state, self.pack, way)
        asked = read_question(command.text or question, self.query)
        if asked is not None and asked.about_past and asked.speaker is None:  # about the player's past, no speaker
            if asked.topic:
                answer = self._who_said(asked.topic, bundle)
                if answer:
                    return answer
            elif asked.event or asked.order:
                return told_events(asked, bundle, self.pack)
        told = _TOLD_ME.search(question)
        speaker = best_match(told.group("who"), self._npc_names(self.pack.npcs)) if told else None
        if speaker is not None:
            return self._what_they_said(speaker, bundle, asked.topic if asked is not None else "")
        here = npcs_at(self.pack, state.node)
        where = self._whereabouts(question, here, bundle)
        if where:
            return where
        wares = self._wares(question, here, state)
        if wares:
            return wares
        if _MY_NAME.search(question) or (_ABOUT_PLAYER.search(question) and not _YOU.search(question)):
            mine = self._about_myself(question, here, state, effects, bundle)
            if mine:
                return mine
        if here and _YOU.search(question):  # asked of someone: the person here answers, not your memory
            npc_id = self._asked(question, here, state)
            effects["talk_to"] = npc_id
            about = re.search(r"\babout\s+(?P<x>.+)$", question)
            return self._reply(npc_id, about.group("x") if about else question, state, notes, bundle, asked=True)
        for npc_id in here:
            said = (
                self._topic(npc_id, question, state)
                if not PLAYER.search(question)
                else self._alias_topic(npc_id, question, state)
            )
            if said:
                effects["talk_to"] = npc_id
                npc = self.pack.npcs[npc_id]
                notes.append(f"{npc.name} said: {said}")
                return self._tell("answer", npc=npc.name, said=said)
        answer = self.recollection.answer(question, bundle)
        if answer:
            return answer
        return "You search your memory, but nothing you know answers that."

    def _next_steps(self, state: GameState) -> str:
        """The next open objective of each active quest, main quests first ("what should I do?")."""
        steps = []
        for quest in self.pack.all_quests():
            progress = state.quests.get(quest.id)
            if progress is None or progress.status != "active":
                continue
            todo = [o.description for o in quest.objectives if o.id not in progress.objectives_done]
            if todo:
                steps.append(f"{quest.title}: {todo[0]}")
        if not steps:
            return "No quest asks anything of you just now. Look around, and talk to the people you meet."
        return "Your next steps - " + " ".join(sentence(step) for step in steps[:3])

    def _places_been(self, state: GameState) -> str:
        """The places the player has been, in the order first visited (the ``visited:`` flags)."""
        nodes = self.pack.nodes
        names = [nodes[f[8:]].name for f in state.flags if f.startswith("visited:") and f[8:] in nodes]
        here = self.pack.nodes[state.node].name
        if not names or names == [here]:
            return f"You have been nowhere but {here}."
        listed = ", ".join(names[:-1]) + f" and {names[-1]}"
        return f"You have been to {listed}, in that order; you are at {here}."

    def _wares(self, question: str, here: list[str], state: GameState) -> str | None:
        """What a trader sells and buys, at the rules' prices ("what does garrick sell?", "what do you buy?"): the
        person named, else the one trader here. None when the question is not about trade, or names no one the
        player has met where they trade."""
        if not _WARES.search(question):
            return None
        named = mentions(question, self._npc_names(self.pack.npcs))[0]
        traders = [n for n in here if (t := self.pack.npcs[n].trade) is not None and t.trades]
        npc_id = named[0] if len(named) == 1 else traders[0] if len(traders) == 1 and not named else None
        npc = self.pack.npcs[npc_id] if npc_id is not None else None
        if npc is None or (npc.id not in here and not state.has_flag(f"visited:{npc.location}")):
            return None  # a trader the player has not met: for memory to answer, if it can
        wares = wares_text(state.model_copy(update={"node": npc.location}), self.pack, only=npc_id)
        if not wares:
            return f"{npc.name} does not trade."
        return wares if npc_id in here else f"At {self.pack.nodes[npc.location].name}: {wares}"

    def _whereabouts(self, question: str, here: list[str], bundle: PromptBundle) -> str | None:
        """Where the person a "where is ...?" names is: here, else what memory holds of where they are, else
        that the player does not know (never someone's words on another matter: "the voice" is Senda's topic
        about Rei, which names no place). None when the question names no one of the story."""
        asked = _WHERE.match(" ".join(question.lower().split()).strip(" ?!."))
        if asked is None or _YOU.search(asked.group("who")):  # "where is your son?": for someone here to answer
            return None
        named = mentions(asked.group("who"), self._npc_names(self.pack.npcs))[0]
        if len(named) != 1:
            return None
        npc = self.pack.npcs[named[0]]
        if npc.id in here:
            return f"{npc.name} is right here with you, at {self.pack.nodes[npc.location].name}."
        recalled = self.recollection.answer(question, bundle)
        places = [n.name for n in self.pack.nodes.values()]
        if recalled and mentions(recalled, self._npc_names([npc.id]))[0] and any(p in recalled for p in places):
            return recalled
        return f"You do not know where {npc.name} is."

    def _who_said(self, topic: str, bundle: PromptBundle, *, quoted: bool = False) -> str | None:
        """ "What do I know about Hal?", "who told me about the wolves?": who spoke of it and what, else (unless
        ``quoted``) the memory recall found for the question's parts (items scored by their ``question`` part)."""
        wanted = _words(topic)
        told = [
            (quote.turn, npc_id, quote)
            for npc_id in self.pack.npcs
            for quote in self.recollection.said_by(npc_id, bundle)
            if wanted <= _words(quote.topic) or wanted <= _words(quote.words)
        ]
        if told:
            _, npc_id, quote = max(told, key=lambda t: t[0])
            about = f"about {quote.topic}, " if quote.topic else ""
            return f'You recall what {self.pack.npcs[npc_id].name} told you: {about}"{quote.words}"'
        found = {i.source for i in bundle.memory.all_items() if "question" in i.parts}
        return self.recollection.answer(topic, bundle, only=found) if found and not quoted else None

    def _what_they_said(self, npc_id: str, bundle: PromptBundle, topic: str = "") -> str:
        """What a person told the player (about ``topic``, when one is asked about), in their words, from the
        memory the prompt holds."""
        name = self.pack.npcs[npc_id].name
        quotes = self.recollection.said_by(npc_id, bundle)
        wanted = _words(topic)
        if wanted:
            about = [q for q in quotes if wanted <= _words(q.topic) or wanted <= _words(q.words)]
            if not about:  # someone else may have: what memory found on the topic is still the answer
                elsewhere = self._who_said(topic, bundle, quoted=True)
                if elsewhere:
                    return f"You cannot recall {name} telling you about {to_you(topic)}. {elsewhere}"
                known = "; ".join(q.topic for q in quotes if q.topic)
                other = f" (you remember {name} speaking of {known})" if known else ""
                return f"You cannot recall {name} telling you about {to_you(topic)}{other}."
            quotes = about
        if quotes:
            told = "; ".join(f'{f"about {q.topic}, " if q.topic else ""}"{q.words}"' for q in quotes[:2])
            return f"You recall what {name} told you: {told}"
        return f"You cannot recall {name} telling you anything."

    def _about_myself(
        self, question: str, here: list[str], state: GameState, effects: dict[str, Any], bundle: PromptBundle
    ) -> str | None:
        """ "What is my name?", "who am I?": what the player said of themselves (never someone else's sketch);
        without a name in the Story Bible, someone here who has words for it ("who am I" to the Voice), then a
        turn where the player gave a name, else that it is not known."""
        facts = dict(self.recollection.player_facts(bundle))
        asks_name = _MY_NAME.search(question) is not None
        if "name" in facts:
            if asks_name:
                return f"You recall: Your name is {facts['name']}."
            more = [sentence(second_person(PLAYER_TEMPLATES[k].format(v))) for k, v in facts.items() if k != "name"]
            return " ".join([f"You recall: You are {facts['name']}.", *more])
        for npc_id in here:
            said = self._alias_topic(npc_id, question, state)
            if said:
                effects["talk_to"] = npc_id
                return f'{self.pack.npcs[npc_id].name} answers: "{said}"'
        given = self.recollection.answer("what is my name?", bundle, must_cue=True)  # "my name is Kael", said
        if given:
            return given
        if asks_name:
            return "You have not told anyone your name yet."
        return f"Nothing anyone has said tells you more. {status_text(state, self.pack)}"  # the rules' own record

    def _alias_topic(self, npc_id: str, question: str, state: GameState) -> str | None:
        """A topic a question about the player names by a phrase of the content ("who am i"), not by a shared word."""
        npc = self.pack.npcs[npc_id]
        _, topics = self._mood(npc_id, state)
        lowered = " ".join(question.lower().split()).strip(" ?!.")
        for key in topics:
            for phrase in npc.topic_aliases.get(key, []):
                if " " in phrase and not _words(phrase) and re.search(rf"\b{re.escape(phrase.lower())}\b", lowered):
                    return topics[key]
        return None

    def _asked(self, question: str, here: list[str], state: GameState) -> str:
        """Who of those here a question in the second person is for: the one named, one who knows, else the first."""
        named = [n for n in mentions(question, self._npc_names(here))[0] if n in here]
        if named:
            return named[0]
        knows = [n for n in here if self._topic(n, question, state)]
        return (knows or here)[0]
