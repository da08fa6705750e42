"""A setting with a pattern is explained in words on the Settings screen and in the CLI, never as the regex
(issue 35 item 5)."""

from __future__ import annotations

import pytest

from game.config import ConfigError, load_settings
from game.tui.settings import SettingsScreen
from tests.tui.test_screens import CONFIG, SIZE, Harness, set_field, settings_error, settle


async def test_a_bad_url_on_the_settings_screen_is_said_in_words(tmp_path, monkeypatch):
    monkeypatch.delenv("STORYECHO_LLM", raising=False)
    config = tmp_path / "storyecho.toml"
    config.write_text(CONFIG)
    before = config.read_bytes()
    app = Harness(lambda: SettingsScreen(load_settings(config), config))
    async with app.run_test(size=SIZE) as pilot:
        await set_field(pilot, app, "base-url", "ftp://example.org")
        await pilot.press("ctrl+s")
        await settle(pilot)
        said = settings_error(app)
        assert "'ftp://example.org' is not a URL that starts with http:// or https://" in said, said
        assert "^https" not in said and "pattern" not in said
    assert config.read_bytes() == before


@pytest.mark.parametrize(
    ("given", "words"),
    [
        ({"openai": {"api_key_env": "my key"}}, "'my key' is not the name of an environment variable"),
        ({"memory": {"chroma_url": "localhost"}}, "'localhost' is not a Chroma server's URL"),
    ],
)
def test_the_cli_says_a_pattern_in_words(given, words, tmp_path):
    with pytest.raises(ConfigError) as err:
        load_settings(None, data_dir=tmp_path, **given)
    assert words in str(err.value) and "String should match pattern" not in str(err.value)
