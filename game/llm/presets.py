"""The OpenAI-compatible endpoints StoryEcho knows by name: the one list of preset names.

Standard library only: ``game.args`` names the presets in ``--preset``'s help before the title shows, and the
settings (``settings.py``, pydantic) check a configured preset against :data:`PRESETS`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

WireMode = Literal["json_schema", "json_object", "prompt"]


@dataclass(frozen=True)
class Preset:
    """What one kind of endpoint needs.

    Attributes:
        base_url: the OpenAI-compatible API root (ends in ``/v1`` or ``/v3``).
        model: default model; None means the first one ``GET /models`` lists
            (local servers serve whatever was loaded).
        api_key_env: environment variable holding the key; None: no key needed.
        json_mode: the strictest JSON mode the endpoint supports.
        stream_usage: the endpoint reports usage in streams (``stream_options``).
        extra_body: endpoint-specific request fields.
        object_schema: ``json_object`` carries the schema too and the server
            compiles it to a grammar (llama-cpp-python's server; it answers
            ``json_schema`` with a 500).
    """

    base_url: str
    model: str | None
    api_key_env: str | None
    json_mode: WireMode
    stream_usage: bool = True
    extra_body: Mapping[str, Any] = field(default_factory=dict)
    object_schema: bool = False


PRESETS: dict[str, Preset] = {
    "openai": Preset("https://api.openai.com/v1", "gpt-4o-mini", "OPENAI_API_KEY", "json_schema"),
    "deepseek": Preset("https://api.deepseek.com", "deepseek-chat", "DEEPSEEK_API_KEY", "json_object"),
    # Seed 1.6 thinks by default; a narrator turn has no room for that in 600 tokens.
    "doubao": Preset(
        "https://ark.cn-beijing.volces.com/api/v3",
        "doubao-seed-1-6-250615",
        "ARK_API_KEY",
        "json_object",
        extra_body={"thinking": {"type": "disabled"}},
    ),
    "ollama": Preset("http://127.0.0.1:11434/v1", None, None, "json_schema"),
    # llama-cpp-python's server: a grammar from json_object's schema; usage only in whole (unstreamed) answers
    "llamacpp": Preset("http://127.0.0.1:8080/v1", None, None, "json_object", stream_usage=False, object_schema=True),
    "vllm": Preset("http://127.0.0.1:8000/v1", None, None, "json_schema"),
    "lmstudio": Preset("http://127.0.0.1:1234/v1", None, None, "json_schema"),
}


def preset_names() -> str:
    """The presets, named for a message or a help line."""
    return ", ".join(PRESETS)
