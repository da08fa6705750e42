"""A verb the lexicon lacks, matched by meaning to one it has (issue 41): "traipse north" may mean go.

The game already ships a sentence embedder (memory's). :class:`VerbMeanings` embeds every single-word verb of the
lexicon once, then an unknown verb, and finds the lexicon's words nearest it: when the nearest is near enough and
most of the three nearest stand for the same verb of the closed set, that verb is the guess. What it finds is
never applied on its own: the engine offers it ("Do you mean: go to the Moonwatch Gate?") and the player answers.

Measured with the shipped all-MiniLM-L6-v2 (``tests/test_meaning.py``): a word embedder of this size knows rare
verbs mostly by their spelling ("skewer" sits nearest "skedaddle"), so the thresholds below are strict: they offer
few guesses, and a wrong guess costs the player one "no". Nothing here imports a model; the embedding function is
handed in.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from game.language.lexicon import known_verbs, senses

MIN_SIMILARITY = 0.6
"""The nearest lexicon word must be at least this near (cosine) for any guess."""
VOTES = 3
"""How many of the nearest words vote; a guess needs a majority of them."""


class VerbMeanings:
    """The verb of the closed set an unknown word means, by the embedder (see the module's docstring).

    Args:
        embed: texts -> L2-normalised vectors (a row per text), the game's embedder.
    """

    def __init__(self, embed: Callable[[Sequence[str]], Any]) -> None:
        self.embed = embed
        self._words = sorted(w for w in known_verbs() if senses(w))
        self._vectors: Any = None

    def guess(self, word: str) -> str | None:
        """The verb of the closed set ``word`` ("traipse") means, or None when it means none clearly."""
        import numpy as np

        if self._vectors is None:  # once, at the first unknown verb
            self._vectors = np.asarray(self.embed(self._words), dtype=np.float32)
        vector = np.asarray(self.embed([word.lower()]), dtype=np.float32)[0]
        scores = self._vectors @ vector
        nearest = np.argsort(-scores)[:VOTES]
        if float(scores[nearest[0]]) < MIN_SIMILARITY:
            return None
        votes = Counter(senses(self._words[int(i)])[0] for i in nearest)
        verb, count = votes.most_common(1)[0]
        first = senses(self._words[int(nearest[0])])[0]
        return verb if count * 2 > VOTES and verb == first else None
