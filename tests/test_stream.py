"""The narration stream: the ``narration`` text of a JSON turn, decoded as its pieces arrive (any narrator)."""

from __future__ import annotations

import json

from game.llm.stream import NarrationStream


def test_the_narration_stream_decodes_escapes_split_across_pieces():
    raw = json.dumps({"narration": 'He said "run"\nand \u00e9t\u00e9 \\ ok', "choices": []})
    stream = NarrationStream()
    out = "".join(stream.feed(raw[i : i + 3]) for i in range(0, len(raw), 3))
    assert out == 'He said "run"\nand \u00e9t\u00e9 \\ ok' and stream.done
