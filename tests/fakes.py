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
        from game.memory.embedders import EmbedderUnavailable

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

    def embed(self, texts):
        self.texts.extend(texts)
        return self.real.embed(texts)


class BreakableStore:
    """Wraps a real vector store; its queries fail while ``broken`` is set (fault injection)."""

    def __init__(self, real) -> None:
        self.real = real
        self.backend = real.backend
        self.broken = False

    def query(self, *args, **kwargs):
        if self.broken:
            from game.memory.stores import StoreUnavailable

            raise StoreUnavailable("connection reset by the vector server")
        return self.real.query(*args, **kwargs)

    def __getattr__(self, name):
        return getattr(self.real, name)
