"""Where an OpenAI-compatible narrator sends its requests, and what must never be shown of it.

:func:`resolve` merges the settings with their preset (base URL, model, the
environment variable holding the key, the best JSON mode) and reads the key;
:func:`redact` takes keys, bearer tokens and key-like words out of any text.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from game.llm.base import NarratorError
from game.llm.presets import PRESETS, WireMode, preset_names
from game.llm.settings import OpenAISettings
from game.text import redact_urls, shown_url

NO_KEY = "not-needed"
"""The placeholder key sent to endpoints that need none (local servers)."""


@dataclass(frozen=True)
class ResolvedEndpoint:
    """Settings merged with their preset, the key read (and kept out of ``repr``)."""

    base_url: str
    model: str | None
    api_key: str = field(repr=False)
    key_source: str
    """Where the key came from: ``env NAME``, ``config`` or ``none``."""
    json_mode: WireMode
    auto: bool
    stream_usage: bool = True
    extra_body: Mapping[str, Any] = field(default_factory=dict)
    object_schema: bool = False

    @property
    def host(self) -> str:
        """The endpoint's host (and port), as messages name it: never its user info."""
        parts = urlsplit(self.shown)
        return parts.netloc or self.shown

    @property
    def shown(self) -> str:
        """The base URL as messages, traces and ``--json`` show it: no user info, no query (``game.text.shown_url``)."""
        return shown_url(self.base_url)


def resolve(settings: OpenAISettings, environ: Mapping[str, str] | None = None) -> ResolvedEndpoint:
    """Merge ``settings`` with its preset and read the key.

    Raises:
        NarratorError: no base URL, or the endpoint needs a key and none is set
            (the message names the variable, never a value).
    """
    env = os.environ if environ is None else environ
    preset = PRESETS[settings.preset] if settings.preset else None
    base_url = settings.base_url or (preset.base_url if preset else None)
    if not base_url:
        raise NarratorError(f"no endpoint: set a preset ({preset_names()}) or a base_url")
    key_env = settings.api_key_env or (preset.api_key_env if preset else None)
    if settings.api_key is not None and settings.api_key.get_secret_value():
        key, source = settings.api_key.get_secret_value(), "config"
    elif key_env and env.get(key_env):
        key, source = env[key_env], f"env {key_env}"
    elif key_env:
        raise NarratorError(f"no API key for {shown_url(base_url)}: set the {key_env} environment variable")
    else:
        key, source = NO_KEY, "none"
    best: WireMode = preset.json_mode if preset else "json_object"
    mode: WireMode = best if settings.json_mode == "auto" else settings.json_mode
    return ResolvedEndpoint(
        base_url=base_url.rstrip("/"),
        model=settings.model or (preset.model if preset else None),
        api_key=key,
        key_source=source,
        json_mode=mode,
        auto=settings.json_mode == "auto",
        stream_usage=preset.stream_usage if preset else True,
        extra_body=dict(preset.extra_body) if preset else {},
        object_schema=preset.object_schema if preset else False,
    )


_KEYLIKE = re.compile(r"(?i)\b(bearer\s+)\S+|\b(sk|ak|pk)-[A-Za-z0-9_*.\-]{6,}")


def redact(text: str, *secrets: str) -> str:
    """``text`` with every secret, bearer token and key-like word replaced by ``***``, and every URL in it without
    its credentials (``game.text.redact_urls``)."""
    text = redact_urls(text)
    for secret in secrets:
        if secret and secret != NO_KEY:
            text = text.replace(secret, "***")
    return _KEYLIKE.sub(lambda m: (m.group(1) or "") + "***", text)


def url_secrets(url: str) -> list[str]:
    """What a base URL may hold besides its place: the user name and password, the query's values."""
    try:
        parts = urlsplit(url if "//" in url else f"//{url}")
    except ValueError:
        return []
    found = [parts.username or "", parts.password or "", parts.fragment]
    found += [value for _, value in parse_qsl(parts.query, keep_blank_values=False)]
    return sorted({f for f in found if len(f) >= 3}, key=len, reverse=True)
