"""Settings from flags, environment, a TOML file and defaults, in that order.

- flags: ``--llm``, ``--seed``, ``--data-dir``, ``--no-embeddings``,
  ``--chroma-url``, ``--config FILE``;
- environment: ``STORYECHO_LLM``, ``STORYECHO_MEMORY__CHROMA_URL`` (nested
  settings use ``__``), ``STORYECHO_CONFIG`` for the file;
- file: ``storyecho.toml`` in the working folder when present, e.g.::

      llm = "scripted"
      [memory]
      chroma_url = "http://127.0.0.1:8000"

A bad value stops the program with a message naming the setting (and the file),
before any game state exists.

The sources are merged here, section by section, and validated once by the
pydantic models (pydantic-settings did this before; its import cost 0.035 s
of the title screen's start, see ``bench/startup.py``).
"""

from __future__ import annotations

import json
import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

import platformdirs
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from game.llm.settings import LocalSettings, OpenAISettings
from game.memory.settings import check_window
from game.text import DEFAULT_PROMPT_BUDGET
from game.world.library import StoryLibrary

DEFAULT_CONFIG_FILE = Path("storyecho.toml")
SOURCE_ROOT = Path(__file__).resolve().parents[1]
"""The folder holding the ``game`` package: a checkout's root, or site-packages when installed."""


def is_checkout(folder: Path) -> bool:
    """``folder`` is the root of a StoryEcho checkout: its ``pyproject.toml`` names storyecho and
    the stories' ``content/`` sits next to the ``game`` package."""
    try:
        project = tomllib.loads((folder / "pyproject.toml").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return False
    name = project.get("project", {}).get("name")
    return name == "storyecho" and (folder / "content").is_dir() and (folder / "game").is_dir()


def default_data_dir(cwd: Path | None = None, source_root: Path | None = None) -> Path:
    """Where saves go when neither a flag, ``STORYECHO_DATA_DIR`` nor the config file says.

    ``./saves`` when the working folder is a checkout of StoryEcho; the checkout's ``saves/``
    when the game runs from one (an editable install) started elsewhere; else the user's data
    folder for storyecho (``platformdirs``; on Linux ``~/.local/share/storyecho/saves``).
    """
    if is_checkout(Path.cwd() if cwd is None else cwd):
        return Path("saves")
    source = SOURCE_ROOT if source_root is None else source_root
    if is_checkout(source):
        return source / "saves"
    return platformdirs.user_data_path("storyecho") / "saves"


class ConfigError(Exception):
    """A setting has a bad value; the message names it."""


class MemorySettings(BaseModel):
    """Memory settings.

    Attributes:
        window_messages: L1 working window size in messages (2 per turn).
        summary_interval_turns: consolidate memory every this many turns; may
            not exceed the turns the window holds, so no turn leaves the window
            before a summary covers it.
        embeddings: use sentence embeddings (off: keyword recall only).
        embedder: which backend embeds: ``onnx`` (ONNX Runtime, no torch:
            faster on a CPU and a fraction of the memory; the model is
            exported once from the installed weights and cached), ``torch``
            (sentence-transformers on PyTorch) or ``auto`` (onnx when
            onnxruntime, onnx and tokenizers are installed, else torch).
        vector_store: ``chroma`` (under ``data_dir/.index``, or at
            ``chroma_url``) or ``inprocess``.
        chroma_url: a Chroma server, e.g. ``http://127.0.0.1:8000``.
        recency_half_life_turns: memories lose half their recency score every
            this many game turns (0: no decay).
    """

    model_config = ConfigDict(extra="forbid")

    window_messages: int = Field(10, ge=2, le=200)
    summary_interval_turns: int = Field(5, ge=1)
    embeddings: bool = True
    embedder: Literal["auto", "onnx", "torch"] = "auto"
    vector_store: Literal["chroma", "inprocess"] = "chroma"
    chroma_url: str | None = Field(None, pattern=r"^https?://[^\s/]+(:\d+)?/?$")
    recency_half_life_turns: float = Field(50.0, ge=0)

    @model_validator(mode="after")
    def _interval_fits_window(self) -> MemorySettings:
        check_window(self.window_messages, self.summary_interval_turns)
        return self


class Settings(BaseModel):
    """StoryEcho settings.

    Attributes:
        llm: which narrator plays the story: ``auto`` (an OpenAI-compatible
            endpoint when one is configured, else the local model when
            llama.cpp and a model file are present, else scripted),
            ``openai``, ``local`` or ``scripted``.
        openai: the OpenAI-compatible endpoint (preset, base URL, model, the
            name of the environment variable holding the key, ...).
        local: the local llama.cpp model (GGUF file, threads, context, mode).
        data_dir: where save slots and the rebuildable vector index live
            (default: :func:`default_data_dir`).
        stories_dir: the player's own stories, one folder per story, found beside
            the shipped ones (default: ``stories`` in ``data_dir``;
            ``STORYECHO_STORIES_DIR``).
        seed: seed of the game's dice (combat, loot).
        prompt_budget_tokens: the most tokens one narrator prompt may take;
            over it, the least essential memory is cut (and the cut recorded). Unset, it follows the narrator
            (:meth:`budget_for`): an endpoint's ``openai.cost`` within its ``openai.context_tokens``, else 2,450.
        turn_time_target_s: the memory autopilot's target for the narrator's time per turn (unset: off); over
            it, memory's share of the prompt shrinks step by step, and grows back when there is room
            (``game/engine/autopilot.py``).
        memory: see :class:`MemorySettings`.
    """

    model_config = ConfigDict(extra="ignore")

    llm: Literal["auto", "openai", "local", "scripted"] = "auto"
    data_dir: Path = Field(default_factory=default_data_dir)
    stories_dir: Path | None = None
    seed: int = 0
    prompt_budget_tokens: int | None = Field(None, ge=1000, le=200_000)
    turn_time_target_s: float | None = Field(None, gt=0, le=3600)
    memory: MemorySettings = MemorySettings()
    openai: OpenAISettings = OpenAISettings()
    local: LocalSettings = LocalSettings()

    def budget_for(self, narrator: str) -> int:
        """The prompt budget for a narrator of kind ``narrator`` (``openai``, ``local``, ``scripted``): the
        setting when it is set, else the endpoint's (:meth:`OpenAISettings.prompt_budget`), else 2,450 tokens,
        the figure the small local models were measured with."""
        if self.prompt_budget_tokens is not None:
            return self.prompt_budget_tokens
        return self.openai.prompt_budget() if narrator == "openai" else DEFAULT_PROMPT_BUDGET

    @property
    def stories_folder(self) -> Path:
        """The player's stories folder: ``stories_dir``, else ``stories`` in the data folder."""
        return self.stories_dir if self.stories_dir is not None else self.data_dir / "stories"

    def library(self) -> StoryLibrary:
        """The stories these settings can play: the shipped ones and the player's."""
        return StoryLibrary.of(self.stories_folder)


PATTERN_WORDS = {
    "chroma_url": "a Chroma server's URL, such as http://localhost:8000",
    "base_url": "a URL that starts with http:// or https://, such as http://127.0.0.1:8080/v1",
    "api_key_env": "the name of an environment variable (letters, digits and _), such as OPENAI_API_KEY",
}
"""What a setting with a pattern must be, in words: a player is shown these, never the pattern."""


def explain(error: Any) -> str:
    """One validation error of the settings as a player reads it (a pattern said in words)."""
    field = str(error["loc"][-1]) if error.get("loc") else ""
    if error.get("type") == "string_pattern_mismatch" and field in PATTERN_WORDS:
        return f"{error.get('input')!r} is not {PATTERN_WORDS[field]}"
    return str(error["msg"])


ENV_PREFIX = "STORYECHO_"
NESTED_DELIMITER = "__"


def from_environment(environ: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The settings the environment gives: ``STORYECHO_<FIELD>``, nested with ``__`` (any case).

    ``STORYECHO_MEMORY__CHROMA_URL=http://...`` sets ``memory.chroma_url``; a whole
    section may be given as JSON (``STORYECHO_MEMORY='{"embeddings": false}'``).
    Names that are not settings (``STORYECHO_CONFIG`` names the file) are
    ignored, as unknown top-level keys of the file are.
    """
    env = os.environ if environ is None else environ
    out: dict[str, Any] = {}
    for name, value in env.items():
        if not name.upper().startswith(ENV_PREFIX):
            continue
        path = name[len(ENV_PREFIX) :].lower().split(NESTED_DELIMITER)
        field = Settings.model_fields.get(path[0])
        if field is None or not all(path):
            continue
        given: Any = value
        section = isinstance(field.annotation, type) and issubclass(field.annotation, BaseModel)
        if len(path) == 1 and section:
            try:
                given = json.loads(value)
            except json.JSONDecodeError:
                raise ConfigError(f"{name}: {path[0]} is a section; give it as JSON or set {name}__<key>") from None
        _merge(out, {path[0]: _nest(path[1:], given)})
    return out


def _nest(path: list[str], value: Any) -> Any:
    for key in reversed(path):
        value = {key: value}
    return value


def _merge(base: dict[str, Any], update: Mapping[str, Any]) -> dict[str, Any]:
    """``update`` merged into ``base`` (in place), section by section."""
    for key, value in update.items():
        if isinstance(value, Mapping) and isinstance(base.get(key), dict):
            _merge(base[key], value)
        else:
            base[key] = dict(value) if isinstance(value, Mapping) else value
    return base


def load_settings(config_file: Path | None = None, **overrides: Any) -> Settings:
    """Build settings; flags given as ``overrides`` (None means 'not given').

    Nested settings are given as dicts (``memory={"embeddings": False}``).
    """
    named = config_file or (Path(os.environ["STORYECHO_CONFIG"]) if os.environ.get("STORYECHO_CONFIG") else None)
    if named is not None and not named.is_file():
        raise ConfigError(f"config file not found: {named}")
    path = named or (DEFAULT_CONFIG_FILE if DEFAULT_CONFIG_FILE.is_file() else None)
    given = {k: v for k, v in overrides.items() if v is not None and v != {}}
    where = f" (from flags, environment or {path})" if path else ""
    merged: dict[str, Any] = {}
    try:
        if path is not None:
            with path.open("rb") as handle:
                _merge(merged, tomllib.load(handle))
        _merge(merged, from_environment())
        _merge(merged, given)
        return Settings.model_validate(merged)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    except ValidationError as exc:
        lines = [f"{'.'.join(map(str, e['loc'])) or 'settings'}: {explain(e)}" for e in exc.errors()]
        raise ConfigError(f"invalid configuration{where}:\n  " + "\n  ".join(lines)) from None
