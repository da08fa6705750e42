"""Text utilities every layer shares: token estimates, keywords, name matching.

This module imports nothing from the game, so the world, memory, narrators and
engine can all use it without importing each other (an import-linter contract
in ``pyproject.toml`` keeps the layers in order).

- Tokens: narrators with a tokenizer of their own (llama.cpp) or an endpoint
  that reports usage give exact counts; everywhere else the prompt size is
  *estimated* by :func:`estimate_tokens`, a cheap regex count calibrated on
  byte-level BPE tokenizers (SmolLM2's, the local narrator's): a little above
  the real count for the game's prompts, and never far below it for odd input
  (emoji, CJK, digit runs, gibberish), where one token per four characters
  undercounts up to eight times. Traces say which one they report.
- Keywords: lower-case content words with a light suffix stemmer, for BM25 and
  for word-overlap matching.
- Names: one matcher for "which of these things does the text name": exact
  whole-word mentions (memory's query rewriting and the Story Bible) and the
  best fuzzy match (the scripted narrator resolving "the old hunter").
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable
from functools import lru_cache
from itertools import pairwise

CHARS_PER_TOKEN = 4
"""Characters a token holds in English prose, roughly (the rule of thumb :func:`estimate_tokens` replaced)."""
MESSAGE_TOKENS = 5
"""What a chat message costs besides its content: ChatML's ``<|im_start|>role\n`` and ``<|im_end|>\n``."""
REPLY_TOKENS = 4
"""What the chat template adds once after the messages to prime the reply (``<|im_start|>assistant\n``)."""
DEFAULT_PROMPT_BUDGET = 2450
"""Tokens the whole narrator prompt may take (system, window and user message, chat markup included) unless
configured, as :func:`estimate_messages` counts them.

Under 2,500 (issue 11; ``bench/prompt_size.py`` plays 500 turns at it): the estimate errs high by 4-7% on the
game's prompts for SmolLM2's tokenizer, so the real prompt stays under 2,360. When the estimate was one token
per four characters, a budget of 2,200 let the real prompt reach 2,563 (and 2,100 was too tight for a fact told
to an NPC 20 turns earlier to reach the prompt, ``tests/test_scripted.py``); the prompt lost its repeats instead
(open threads the quest blocks already show, the answer format's third "never invent", an item held twice)."""


def clip(text: str, chars: int) -> str:
    """``text`` within ``chars`` characters: cut at the last space that fits, with an ellipsis.

    A "word" longer than the budget (10,000 characters typed without a space)
    is cut too: a budget in characters holds whatever the text is made of.
    """
    text = text.strip()
    if len(text) <= chars:
        return text
    cut = text[: chars - 1]
    space = cut.rfind(" ")
    if space > chars // 2:
        cut = cut[:space]
    return cut.rstrip(" ,;:.") + "…"


WORD_GRACE = 1.25
"""A text asked for in at most N words is kept whole up to this many times N (a model that writes 62 words for 60
loses nothing); past it, it is cut at a sentence's end (:func:`within_words`)."""


def within_words(text: str, max_words: int) -> str:
    """``text`` in about ``max_words`` words: whole within :data:`WORD_GRACE` of it, else cut at the last sentence
    end within ``max_words`` (the relay game, issue 42: a summary cut at 60 words ended "The player took", and the
    synopsis made from it lost what was taken), and only when no sentence ends there, at a word, with an ellipsis."""
    words = text.split()
    if len(words) <= int(max_words * WORD_GRACE):
        return " ".join(words)
    kept = " ".join(words[:max_words])
    end = max(kept.rfind(". "), kept.rfind("! "), kept.rfind("? "))
    if kept.endswith((".", "!", "?")):
        return kept
    return kept[: end + 1] if end > 0 else kept.rstrip(" ,;:") + "…"


_WORDS = re.compile(r"[A-Za-z]+")
_PUNCT = re.compile(r"[!-/:-@\[-`{-~]+")
_JSON_MARKS = frozenset('"{}[]:,')
"""BPE merges runs of JSON's marks well ('":{"' and '"},"' are two tokens each): one token per two marks."""
_SPACES = re.compile(r"[ \t]{2,}|[ \t](?=[0-9])")
_SINGLES = re.compile(r"[0-9\x00-\x08\x0a-\x1f\x7f\u2010-\u2027\u2030-\u205e]")
_NON_ASCII = re.compile(r"[^\x00-\x7f\u2010-\u2027\u2030-\u205e]+")
_BIGRAM_TEXT = """
ab ac ad af ag ah ai ak al am an ap ar as at au av aw ax ay az ba bb be bi bj bl bo br bs bt bu by
ca cc ce ch ci ck cl co cp cr cs ct cu cy da dd de dg di dl dm do dr ds du dv dw dy ea eb ec ed ee ef
eg eh ei ek el em en eo ep eq er es et eu ev ew ex ey fa fe ff fi fl fo fr fs ft fu fy ga gb ge gg gh
gi gl gm gn go gr gs gt gu gw gy ha he hi hl hm hn ho hr hs ht hu hw hy ia ib ic id ie if ig ik il im
in io ip ir is it iv ix iz ja je jo ju ka ke ki kl kn ko ks kt ku ky la lb lc ld le lf li lk ll lm ln
lo lp ls lt lu lv ly ma mb me mi ml mm mn mo mp ms mu my na nc nd ne nf ng nh ni nj nk nl nm nn no np
nq nr ns nt nu nv nw ny oa ob oc od oe of og oh oi oj ok ol om on oo op or os ot ou ov ow oy oz pa pc
pe ph pi pl po pp pr ps pt pu pw py qu ra rb rc rd re rf rg rh ri rk rl rm rn ro rp rr rs rt ru rv rw
ry sa sc sd se sh si sk sl sm sn so sp sq ss st su sw sy ta tc te tf th ti tl to tp tr ts tt tu tw ty
tz ua ub uc ud ue uf ug uh ui ul um un up ur us ut uy uz va ve vi vo wa wd we wh wi wk wl wn wo wr ws
xa xc xe xi xp xt xy ya yb ye yi yl ym yn yo yp yr ys yt yw za ze zi zl zo zy zz
"""
_COMMON_BIGRAMS = frozenset(_BIGRAM_TEXT.split())
"""Letter pairs English words are made of: a word with two pairs outside these ("qwpoeiru") is gibberish."""
_VOWELS = frozenset("aeiouy")


@lru_cache(maxsize=8192)
def _word_tokens(word: str) -> int:
    """Tokens of a run of ASCII letters: a common word one, a long one or a name more, gibberish 2 in 3 letters."""
    lower = word.lower()
    rare = sum(1 for a, b in pairwise(lower) if a + b not in _COMMON_BIGRAMS)
    if rare >= 2 or (len(word) > 2 and not _VOWELS.intersection(lower)):
        return max(1 + rare, (2 * len(word) + 2) // 3)
    if word[0].isupper():  # names and headings split more often than lower-case words
        return 1 + (len(word) - 1) // 4
    return 1 + (len(word) - 1) // 7


def estimate_tokens(text: str) -> int:
    """Tokens ``text`` takes for a byte-level BPE tokenizer, estimated without loading one, erring high.

    Calibrated on SmolLM2's tokenizer (the local narrator's) over the prompts of a 500-turn game
    (``bench/prompt_size.py``: 4-7% over it), and checked against Llama 3's, Qwen2's and Gemma 3's:

    - a word is one token, or more when long, capitalized or gibberish (:func:`_word_tokens`);
    - a run of ASCII punctuation one token per two marks, rounded up for JSON's ``"{}[]:,``, plus one
      for other marks ("?!", "...");
    - a digit, a control character, a newline, a space before a digit, a run of two or more spaces and
      a typographic mark (dash, curly quote, ellipsis) one each;
    - any other non-ASCII run three tokens per four UTF-8 bytes (an emoji three, a CJK character two or
      three, an accented letter one or two).

    A chat message adds :data:`MESSAGE_TOKENS` to its content (see :func:`estimate_messages`).

    No rule spans a newline (a newline is one token of its own), so a text's estimate is the sum of its
    lines' plus its newlines, and each line's is remembered: a prompt is mostly the lines of the one before
    (estimating a turn's prompts afresh took 1-2 ms of each new action's turn, ``bench/turn_overhead.py``).
    """
    if "\n" not in text:
        return _line_tokens(text)
    lines = text.split("\n")
    return sum(map(_line_tokens, lines)) + len(lines) - 1


@lru_cache(maxsize=16384)
def _line_tokens(text: str) -> int:
    """:func:`estimate_tokens` of a text without a newline."""
    return (
        sum(_word_tokens(word) for word in _WORDS.findall(text))
        + sum((len(run) + (1 if _JSON_MARKS.issuperset(run) else 2)) // 2 for run in _PUNCT.findall(text))
        + len(_SPACES.findall(text))  # a single space goes with the word after it (but not with a number)
        + len(_SINGLES.findall(text))
        + sum((3 * len(run.encode("utf-8")) + 3) // 4 for run in _NON_ASCII.findall(text))
    )


def estimate_messages(messages: Iterable[dict[str, str]]) -> int:
    """Estimated tokens of chat ``messages`` as a chat template sends them: contents, markup, the reply's cue."""
    return REPLY_TOKENS + sum(MESSAGE_TOKENS + estimate_tokens(m["content"]) for m in messages)


_STOPWORD_TEXT = """
a an the and or but if then else of to in on at by for with about against between into through during
before after above below from up down out off over under again further once here there when where why how all any both
each few more most other some such no nor not only own same so than too very s t can will just don should now i me my
myself we our ours ourselves you your yours yourself yourselves he him his himself she her hers herself
it its itself they
them their theirs themselves what which who whom this that these those am is are was were be been being have has had
having do does did doing would could might must shall may also
"""
STOPWORDS = frozenset(_STOPWORD_TEXT.split())
_WORD = re.compile(r"[a-z0-9]+")
_SUFFIXES = (("ies", "y"), ("ing", ""), ("edly", ""), ("ed", ""), ("ly", ""), ("es", ""), ("s", ""))


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """A light suffix stemmer: enough to match 'swamps'/'swamp', 'hunted'/'hunting'/'hunt'.

    Remembered: the same words come back in every text a turn indexes and every query (recording a turn
    stemmed ~400 words, 1.2 ms of its time, ``bench/turn_overhead.py``).
    """
    for suffix, replacement in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: len(word) - len(suffix)] + replacement
    return word


def keywords(text: str) -> list[str]:
    """Lower-case, stemmed content words of ``text`` (repeats kept)."""
    return [stem(w) for w in _WORD.findall(text.lower()) if w not in STOPWORDS]


def slug(text: str, words: int = 6) -> str:
    """A short key from the first content words of ``text``."""
    return "-".join(keywords(text)[:words]) or "note"


Named = Iterable[tuple[str, Iterable[str]]]
"""Candidates: (id, the names it goes by)."""


@lru_cache(maxsize=4096)
def whole_words(phrase: str, *, possessive: bool = False) -> re.Pattern[str]:
    """A case-insensitive pattern matching ``phrase`` as whole words (``possessive``: and "'s" after it),
    compiled once: every turn matches the same names and places (about 60 patterns a turn)."""
    tail = "(?:'s)?" if possessive else ""
    return re.compile(rf"\b{re.escape(phrase)}{tail}\b", re.I)


def mentions(text: str, candidates: Named, *, masked: Iterable[str] = ()) -> tuple[list[str], str]:
    """The ids whose names ``text`` mentions as whole words, and the text without those names.

    Longer names are matched first and a matched span is not matched again, so
    "Garrick's son" names Garrick once. Phrases in ``masked`` are set aside
    before matching (a place name such as "the hunter's lodge" does not name
    the hunter).
    """
    hidden = text
    for phrase in sorted({p for p in masked if p}, key=len, reverse=True):
        hidden = whole_words(phrase).sub(lambda m: "\0" * len(m.group()), hidden)
    table = sorted(
        ((name, entity_id) for entity_id, names in candidates for name in names if name),
        key=lambda pair: -len(pair[0]),
    )
    found: list[str] = []
    rest = text
    for name, entity_id in table:
        for match in whole_words(name, possessive=True).finditer(hidden):
            if entity_id not in found:
                found.append(entity_id)
            start, end = match.span()
            rest = rest[:start] + " " * (end - start) + rest[end:]
            hidden = hidden[:start] + "\0" * (end - start) + hidden[end:]
    return found, " ".join(rest.split())


def best_match(text: str, candidates: Named) -> str | None:
    """The id ``text`` refers to: the one it names, else the one sharing most words (None if none share any).

    The same matcher as :func:`mentions` first: a text that names exactly one
    candidate (or is its id) means that one. Otherwise the overlap of keywords,
    weighed against the length of the name, decides ("herb" finds the
    Healing Herb).
    """
    pool = [(cid, list(names)) for cid, names in candidates]
    lowered = text.lower().strip()
    named = mentions(text, pool)[0]
    if len(named) == 1:
        return named[0]
    exact = [cid for cid, _ in pool if cid == lowered]
    if exact:
        return exact[0]
    wanted = set(keywords(text))
    best: tuple[float, str] | None = None
    for cid, names in [c for c in pool if c[0] in named] or pool:
        for name in names:
            name_l = name.lower()
            overlap = len(wanted & set(keywords(name_l.replace("_", " "))))
            if overlap:
                score = overlap / (1 + len(set(keywords(name_l))))
                if best is None or score > best[0]:
                    best = (score, cid)
    return best[1] if best else None


def shown_url(url: str) -> str:
    """``url`` as it may be shown (errors, traces, ``--json``, the narrator's name): without the user info
    (``bob:PASSWORD@``), the query (``?api-key=KEY``) and the fragment, which may hold secrets."""
    from urllib.parse import urlsplit

    if "//" not in url:  # no scheme ("localhost:8080/v1?k=1"): drop what may hold a secret, textually
        return url.split("?", 1)[0].split("#", 1)[0].rpartition("@")[2]
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = f":{parts.port}" if parts.port else ""
    except ValueError:  # not a URL (a bad port, say): nothing of it is shown
        return "(an invalid URL)"
    host = f"[{host}]" if ":" in host else host
    return f"{parts.scheme}://{host}{port}{parts.path}"


_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*://[^\s\"'<>`]+")
_USERINFO = re.compile(r"(?<![\w/@])[^\s/@:\"'(]+:[^\s/@\"']+@(?=[\w\[])")
_SECRET_PARAM = re.compile(
    r"(?i)\b((?:api[-_]?)?key|[\w-]*token|auth|password|passwd|secret|sig|signature|code)=([^\s&\"'#,;)]+)"
)
_AUTH = re.compile(r"(?i)\b(basic|bearer)\s+[A-Za-z0-9+/=._\-]{6,}")


def redact_urls(text: str) -> str:
    """``text`` with every URL in it as :func:`shown_url` shows it (no ``user:password@``, no query, no fragment),
    and any credential left outside one taken out: a bare ``user:password@host``, a ``key=``/``token=``/
    ``password=`` value, a ``Basic``/``Bearer`` credential. What shows a URL, or text that may hold one (reports,
    error messages, log records), goes through this."""

    def url(match: re.Match[str]) -> str:
        whole = match.group()
        core = whole.rstrip(").,;:!]")
        return shown_url(core) + whole[len(core) :]

    text = _URL.sub(url, text)
    text = _USERINFO.sub("", text)
    text = _SECRET_PARAM.sub(lambda m: f"{m.group(1)}=***", text)
    return _AUTH.sub(lambda m: f"{m.group(1)} ***", text)


class RedactingFilter(logging.Filter):
    """A log handler's filter that passes every record with :func:`redact_urls` applied to its message and its
    traceback (httpx logs each request's whole URL, credentials included, at INFO)."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        clean = redact_urls(message)
        if clean != message:
            record.msg, record.args = clean, None
        if record.exc_info and not record.exc_text:
            record.exc_text = redact_urls(logging.Formatter().formatException(record.exc_info))
        return True


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def visible(value: str) -> str:
    """``value`` with control characters written out as ``\\xNN`` (newlines and tabs kept): what a player, a model
    or a file wrote is shown, never obeyed by the terminal (an ``ESC]2;`` title, an ``ESC[2J`` clear, OSC 52)."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", value)
