"""Token counting.

Narrators with a tokenizer of their own (llama.cpp) or an endpoint that reports
usage give exact counts; everywhere else the prompt size is *estimated* as one
token per four characters (rounded up), the usual rule of thumb for English
text with BPE tokenizers. Traces say which one they report.
"""

from __future__ import annotations

CHARS_PER_TOKEN = 4


def estimate_tokens(text: str) -> int:
    return (len(text) + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN
