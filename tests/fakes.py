"""Fault-injecting narrators.

These are fakes on purpose: they exist to inject faults (a network error, a
malformed answer) that the real narrators cannot be made to produce on demand.
"""

from __future__ import annotations

from collections.abc import Iterable

from game.llm.base import NarratorError, PromptBundle


class ScriptedAnswers:
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
