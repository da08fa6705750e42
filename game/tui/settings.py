"""The settings screen, and the TOML writer it saves the config file with.

The screen edits the settings a player changes most: the narrator, the
OpenAI-compatible endpoint (preset, model, base URL, the NAME of the variable
holding the key), the memory window and the memory embedder (auto, onnx,
torch). Saving merges the changed values into the config file (its other keys
stay; comments do not survive), checks the result with
:func:`game.config.load_settings` itself, so an invalid value is
refused with config's own message before anything is written, then replaces the
file atomically. An API key is never shown and never written by this screen:
one already in the file stays there, one from the environment stays there.
"""

from __future__ import annotations

import contextlib
import math
import os
import re
import secrets
import stat
import tomllib
from collections.abc import Mapping
from datetime import date, datetime, time
from pathlib import Path
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Select, Static

from game.config import ConfigError, Settings, explain, load_settings
from game.files import write_synced
from game.llm.presets import PRESETS
from game.llm.settings import OpenAISettings

NARRATORS = ("auto", "openai", "local", "scripted")
EMBEDDERS = ("auto", "onnx", "torch")
NO_PRESET = "none"
KEY_FROM_ENV = "STORYECHO_OPENAI__API_KEY"
"""The variable pydantic-settings reads ``openai.api_key`` from."""

SettingPlace = tuple[str | None, str]
"""(table, key) of a setting in the config file; table None for a top-level key."""
FIELDS: dict[str, SettingPlace] = {
    "llm": (None, "llm"),
    "preset": ("openai", "preset"),
    "model": ("openai", "model"),
    "base-url": ("openai", "base_url"),
    "key-env": ("openai", "api_key_env"),
    "window": ("memory", "window_messages"),
    "interval": ("memory", "summary_interval_turns"),
    "embedder": ("memory", "embedder"),
}
"""Widget id -> where its value goes in the config file."""


# ------------------------------------------------------------------ TOML out
_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")
_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}


def _key(key: str) -> str:
    return key if _BARE_KEY.fullmatch(key) else _string(key)


def _string(value: str) -> str:
    out = []
    for char in value:
        if char in _ESCAPES:
            out.append(_ESCAPES[char])
        elif ord(char) < 0x20 or ord(char) == 0x7F:
            out.append(f"\\u{ord(char):04X}")
        else:
            out.append(char)
    return '"' + "".join(out) + '"'


def _value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, Path):
        return _string(str(value))
    if isinstance(value, datetime | date | time):
        return value.isoformat()
    if isinstance(value, Mapping):
        return "{ " + ", ".join(f"{_key(str(k))} = {_value(v)}" for k, v in value.items()) + " }" if value else "{}"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    raise TypeError(f"cannot write a {type(value).__name__} to TOML")


def _is_table_array(value: Any) -> bool:
    return isinstance(value, list | tuple) and bool(value) and all(isinstance(v, Mapping) for v in value)


def _emit(lines: list[str], path: tuple[str, ...], table: Mapping[str, Any]) -> None:
    """The key/values of ``table`` (whose header is already written), then its sub-tables."""
    for key, value in table.items():
        if not isinstance(value, Mapping) and not _is_table_array(value):
            lines.append(f"{_key(str(key))} = {_value(value)}")
    for key, value in table.items():
        sub = (*path, str(key))
        header = ".".join(_key(part) for part in sub)
        if isinstance(value, Mapping):
            has_values = any(not isinstance(v, Mapping) and not _is_table_array(v) for v in value.values())
            if has_values or not value:
                lines += ["", f"[{header}]"]
            _emit(lines, sub, value)
        elif _is_table_array(value):
            for item in value:
                lines += ["", f"[[{header}]]"]
                _emit(lines, sub, item)


def dump_toml(document: Mapping[str, Any]) -> str:
    """``document`` (tables, arrays, strings, numbers, booleans, dates) as TOML text."""
    lines: list[str] = []
    _emit(lines, (), document)
    return "\n".join(lines).strip("\n") + "\n"


# -------------------------------------------------------------- config file
def read_config(path: Path) -> dict[str, Any]:
    """The config file as a dict ({} when it does not exist).

    Raises:
        ConfigError: the file is not valid TOML or cannot be read.
    """
    if not path.exists():
        return {}
    try:
        with open(path, "rb") as handle:
            return tomllib.load(handle)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror or exc}") from None


def merge(document: dict[str, Any], updates: Mapping[str, Any]) -> dict[str, Any]:
    """``document`` with ``updates`` merged in, tables key by key; a None value removes the key."""
    for key, value in updates.items():
        if value is None:
            document.pop(key, None)
        elif isinstance(value, Mapping):
            current = document.get(key)
            document[key] = merge(current if isinstance(current, dict) else {}, value)
        else:
            document[key] = value
    return document


def _write_beside(path: Path, text: str) -> Path:
    """``text`` in a new temporary file next to ``path``, flushed to disk, with ``path``'s permissions."""
    temp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    try:
        write_synced(temp, text.encode("utf-8"), mode=0o600, exclusive=True)
        with contextlib.suppress(OSError):
            os.chmod(temp, stat.S_IMODE(path.stat().st_mode))  # keep a private file private
    except BaseException:
        with contextlib.suppress(OSError):
            temp.unlink()
        raise
    return temp


def _target(path: Path) -> Path:
    """The file to replace: the one a symlinked config file points to (the link stays)."""
    return Path(os.path.realpath(path)) if path.is_symlink() else path


def save_settings(path: Path, updates: Mapping[str, Any]) -> Settings:
    """Merge ``updates`` into the config file, if the result loads; the settings it now gives.

    The merged file is written beside ``path`` and loaded with
    :func:`load_settings` first: an invalid value raises config's own
    :class:`ConfigError` (naming ``path``) and leaves ``path`` untouched.

    Raises:
        ConfigError: an invalid value, an unreadable file, a failed write.
    """
    target = _target(path)
    text = dump_toml(merge(read_config(target), updates))
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        temp = _write_beside(target, text)
    except OSError as exc:
        raise ConfigError(f"cannot write {path}: {exc.strerror or exc}") from None
    try:
        try:
            load_settings(temp)
        except ConfigError as exc:
            raise ConfigError(str(exc).replace(str(temp), str(path))) from None
        os.replace(temp, target)
    except OSError as exc:
        raise ConfigError(f"cannot write {path}: {exc.strerror or exc}") from None
    finally:
        with contextlib.suppress(OSError):
            temp.unlink()
    return load_settings(path)


def _number(text: str) -> int | str | None:
    """A whole number typed in a field; what was typed when it is not one (config then says why)."""
    text = text.strip()
    if not text:
        return None
    try:
        return int(text)
    except ValueError:
        return text


# ------------------------------------------------------------------- screen
class SettingsScreen(ModalScreen[Settings | None]):
    """Edit the config file; dismisses with the settings reloaded from it, or None (Escape, Cancel).

    Args:
        settings: the settings in effect (the form starts from them).
        config_path: the TOML file to save to (created when missing).
    """

    DEFAULT_CSS = """
    SettingsScreen {
        align: center middle;
    }
    SettingsScreen > #settings-dialog {
        width: 100%;
        max-width: 90;
        height: 100%;
        max-height: 30;
        border: thick $primary;
        background: $surface;
        padding: 0 1;
    }
    SettingsScreen #settings-title {
        text-style: bold;
        height: auto;
    }
    SettingsScreen #settings-form {
        height: 1fr;
    }
    SettingsScreen .field {
        height: auto;
        margin-top: 1;
    }
    SettingsScreen .field Label {
        width: 26;
        padding-right: 1;
    }
    SettingsScreen .field Input, SettingsScreen .field Select {
        width: 1fr;
    }
    SettingsScreen #key-status {
        margin-left: 26;
        color: $text-muted;
        height: auto;
    }
    SettingsScreen #settings-error {
        color: $error;
        height: auto;
        max-height: 6;
    }
    SettingsScreen #settings-buttons {
        height: auto;
        align-horizontal: right;
    }
    SettingsScreen #settings-buttons Button {
        margin-left: 2;
    }
    """

    BINDINGS = [
        Binding("escape", "cancel", "Cancel"),
        Binding("ctrl+s", "save", "Save"),
    ]

    def __init__(self, settings: Settings, config_path: Path) -> None:
        super().__init__()
        self.settings = settings
        self.config_path = Path(config_path)
        try:
            self.file_document: dict[str, Any] = read_config(self.config_path)
            self.file_problem = ""
        except ConfigError as exc:
            self.file_document, self.file_problem = {}, str(exc)
        openai, memory = settings.openai, settings.memory
        self.initial: dict[str, Any] = {
            "llm": settings.llm,
            "preset": openai.preset,
            "model": openai.model,
            "base-url": openai.base_url,
            "key-env": openai.api_key_env,
            "window": memory.window_messages,
            "interval": memory.summary_interval_turns,
            "embedder": memory.embedder,
        }

    # ------------------------------------------------------------ layout
    def compose(self) -> ComposeResult:
        initial = self.initial
        with Vertical(id="settings-dialog"):
            yield Static(Text(f"Settings — saved to {self.config_path}"), id="settings-title")
            with VerticalScroll(id="settings-form"):
                with Horizontal(classes="field"):
                    yield Label("Narrator")
                    yield Select(
                        [(name, name) for name in NARRATORS],
                        value=initial["llm"],
                        allow_blank=False,
                        compact=True,
                        id="llm",
                    )
                with Horizontal(classes="field"):
                    yield Label("OpenAI-compatible preset")
                    yield Select(
                        [(NO_PRESET, NO_PRESET), *((name, name) for name in PRESETS)],
                        value=initial["preset"] or NO_PRESET,
                        allow_blank=False,
                        compact=True,
                        id="preset",
                    )
                yield from self._input_row("Model", "model")
                yield from self._input_row("Base URL", "base-url")
                yield from self._input_row("API key variable (name)", "key-env")
                yield Static("", id="key-status", markup=False)
                yield from self._input_row("Memory window (messages)", "window", integer=True)
                yield from self._input_row("Summary every (turns)", "interval", integer=True)
                with Horizontal(classes="field"):
                    yield Label("Memory embedder")
                    yield Select(
                        [(name, name) for name in EMBEDDERS],
                        value=initial["embedder"],
                        allow_blank=False,
                        compact=True,
                        id="embedder",
                    )
            yield Static(self.file_problem, id="settings-error", markup=False)
            with Horizontal(id="settings-buttons"):
                yield Button("Test narrator", id="test", compact=True)
                yield Button("Save (ctrl+s)", variant="primary", id="save", compact=True)
                yield Button("Cancel (esc)", id="cancel", compact=True)

    def _input_row(self, label: str, field_id: str, *, integer: bool = False) -> ComposeResult:
        value = self.initial[field_id]
        with Horizontal(classes="field"):
            yield Label(label)
            yield Input(
                "" if value is None else str(value),
                type="integer" if integer else "text",
                compact=True,
                select_on_focus=False,
                id=field_id,
            )

    def on_mount(self) -> None:
        self._update_hints()
        self.query_one("#llm", Select).focus()

    # ------------------------------------------------------------- hints
    def _update_hints(self) -> None:
        preset_value = self.query_one("#preset", Select).value
        preset = PRESETS.get(str(preset_value)) if preset_value != NO_PRESET else None
        model, base_url, key_env = (self.query_one(f"#{i}", Input) for i in ("model", "base-url", "key-env"))
        model.placeholder = f"preset default: {preset.model}" if preset and preset.model else "the server's model"
        base_url.placeholder = f"preset default: {preset.base_url}" if preset else "e.g. http://127.0.0.1:8080/v1"
        default_env = preset.api_key_env if preset else None
        key_env.placeholder = f"preset default: {default_env}" if default_env else "e.g. OPENAI_API_KEY"
        self.query_one("#key-status", Static).update(self.key_status(key_env.value.strip() or default_env))

    def key_status(self, env_name: str | None) -> str:
        """Where the API key comes from, never the key itself."""
        section = self.file_document.get("openai")
        if isinstance(section, dict) and section.get("api_key"):
            return "API key: (set in config file)"
        if self.settings.openai.api_key is not None:
            return f"API key: (set by {KEY_FROM_ENV} in the environment)"
        if env_name:
            state = "set" if os.environ.get(env_name) else "not set"
            return f"API key: read from the environment variable {env_name} ({state})"
        return "API key: none (local servers need none)"

    def on_select_changed(self, event: Select.Changed) -> None:
        event.stop()
        self._update_hints()

    def on_input_changed(self, event: Input.Changed) -> None:
        event.stop()
        if event.input.id == "key-env":
            self._update_hints()

    # -------------------------------------------------------------- save
    def form_values(self) -> dict[str, Any]:
        """Each field's value as it would be written (None: not set)."""
        values: dict[str, Any] = {}
        for field_id in FIELDS:
            if field_id in ("llm", "preset", "embedder"):
                chosen = self.query_one(f"#{field_id}", Select).value
                values[field_id] = None if chosen in (NO_PRESET, Select.NULL) else str(chosen)
            elif field_id in ("window", "interval"):
                values[field_id] = _number(self.query_one(f"#{field_id}", Input).value)
            else:
                values[field_id] = self.query_one(f"#{field_id}", Input).value.strip() or None
        return values

    def updates(self) -> dict[str, Any]:
        """What changed, as nested config-file keys (None removes a key)."""
        changes: dict[str, Any] = {}
        for field_id, value in self.form_values().items():
            if value == self.initial[field_id]:
                continue
            table, key = FIELDS[field_id]
            target = changes if table is None else changes.setdefault(table, {})
            target[key] = value
        return changes

    def action_save(self) -> None:
        error = self.query_one("#settings-error", Static)
        try:
            settings = save_settings(self.config_path, self.updates())
        except ConfigError as exc:
            error.update(str(exc))
            return
        error.update("")
        self.dismiss(settings)

    def action_cancel(self) -> None:
        self.dismiss(None)

    def action_test(self) -> None:
        """Play the fitness check against the endpoint the form describes (nothing is saved)."""
        from pydantic import ValidationError

        from game.tui.fitness import NarratorTestScreen

        values = self.form_values()
        fields = {"preset": values["preset"], "model": values["model"], "base_url": values["base-url"]}
        fields["api_key_env"] = values["key-env"]
        try:
            endpoint = OpenAISettings.model_validate(self.settings.openai.model_dump() | fields)
        except ValidationError as exc:
            self.query_one("#settings-error", Static).update(explain(exc.errors()[0]))
            return
        budget = self.settings.prompt_budget_tokens or endpoint.prompt_budget()
        self.app.push_screen(NarratorTestScreen(endpoint, budget, values["llm"]))

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.action_save()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id == "save":
            self.action_save()
        elif event.button.id == "test":
            self.action_test()
        else:
            self.action_cancel()
