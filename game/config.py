"""Settings from defaults, environment (``STORYECHO_*``) and command-line flags.

Flags override the environment, which overrides defaults. A bad value stops the
program with a message naming the setting, before any game state exists.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, ValidationError, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict


class ConfigError(Exception):
    """A setting has a bad value; the message names it."""


class Settings(BaseSettings):
    """StoryEcho settings.

    Attributes:
        llm: which narrator plays the story.
        data_dir: where save slots and the rebuildable vector index live.
        seed: seed of the game's dice (combat, loot).
        window_messages: L1 working window size in messages (2 per turn).
        summary_interval_turns: consolidate memory every this many turns; may
            not exceed the turns the window holds, so no turn leaves the window
            before a summary covers it.
        embeddings: use sentence embeddings (off: keyword recall only).
        vector_store: ``chroma`` (under ``data_dir/.index``, or at
            ``chroma_url``) or ``inprocess``.
        chroma_url: a Chroma server, e.g. ``http://127.0.0.1:8000``.
        recency_half_life_turns: memories lose half their recency score every
            this many game turns (0: no decay).
    """

    model_config = SettingsConfigDict(env_prefix="STORYECHO_", extra="ignore")

    llm: Literal["scripted"] = "scripted"
    data_dir: Path = Path("saves")
    seed: int = 0
    window_messages: int = Field(10, ge=2, le=200)
    summary_interval_turns: int = Field(5, ge=1)
    embeddings: bool = True
    vector_store: Literal["chroma", "inprocess"] = "chroma"
    chroma_url: str | None = Field(None, pattern=r"^https?://[^\s/]+(:\d+)?/?$")
    recency_half_life_turns: float = Field(50.0, ge=0)

    @model_validator(mode="after")
    def _interval_fits_window(self) -> Settings:
        if self.summary_interval_turns > self.window_messages // 2:
            raise ValueError(
                f"summary_interval_turns ({self.summary_interval_turns}) exceeds the turns the "
                f"working window holds ({self.window_messages // 2}); raise window_messages or lower the interval"
            )
        return self


def load_settings(**overrides: object) -> Settings:
    """Build settings; flags given as ``overrides`` (None means 'not given')."""
    given = {k: v for k, v in overrides.items() if v is not None}
    try:
        return Settings(**given)  # type: ignore[arg-type]
    except ValidationError as exc:
        lines = [f"{'.'.join(map(str, e['loc'])) or 'settings'}: {e['msg']}" for e in exc.errors()]
        raise ConfigError("invalid configuration:\n  " + "\n  ".join(lines)) from None
