"""Installed like any Python app: the wheel carries the stories, saves go to the user's data folder."""

from __future__ import annotations

import json
import os
import shutil
import site
import subprocess
import sys
import tomllib
import zipfile
from importlib import resources
from pathlib import Path

import platformdirs
import pytest

from game import config
from game.config import default_data_dir, is_checkout, load_settings
from game.world import loader
from game.world.loader import available_stories, content_root
from tests.conftest import SHIPPED

REPO = Path(__file__).resolve().parents[1]
STORIES = set(SHIPPED)
# what a build of the checkout leaves out: caches anywhere; the saves, earlier builds, venvs of the root
ANYWHERE = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info", ".*_cache", ".hypothesis")
AT_ROOT = {".git", ".venv", "venv", "build", "dist", "saves"}


def not_source(folder: str, names: list[str]) -> set[str]:
    return set(ANYWHERE(folder, names)) | (AT_ROOT & set(names) if Path(folder) == REPO else set())


def clean_env(**extra: str) -> dict[str, str]:
    """The environment minus StoryEcho's own settings, so only what the test says applies."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("STORYECHO_") and k != "PYTHONPATH"}
    env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", ANONYMIZED_TELEMETRY="False", **extra)
    return env


def make_checkout_like(folder: Path, name: str = "storyecho") -> Path:
    (folder / "game").mkdir(parents=True)
    (folder / "content").mkdir()
    (folder / "pyproject.toml").write_text(f'[project]\nname = "{name}"\n', encoding="utf-8")
    return folder


# -- the stories ------------------------------------------------------------------------------


def test_content_root_lists_both_stories():
    root = content_root()
    assert root.is_dir()
    assert {p.name for p in root.iterdir() if (p / "story.json").is_file()} >= STORIES
    assert set(available_stories()) >= STORIES
    assert (content_root() / "fantasy_001" / "map.json").is_file()


def test_content_root_prefers_the_installed_package_data(tmp_path, monkeypatch):
    installed = tmp_path / "site-packages" / "game"
    (installed / "content" / "only_installed").mkdir(parents=True)
    (installed / "content" / "only_installed" / "story.json").write_text("{}", encoding="utf-8")
    seen: list[str] = []

    def files(package: str) -> Path:
        seen.append(package)
        return installed

    monkeypatch.setattr(loader.resources, "files", files)
    assert content_root() == installed / "content"
    assert available_stories() == ["only_installed"]
    assert seen and seen[0] == "game"


def test_content_root_falls_back_to_the_checkout_content():
    """Running from source there is no game/content/: the checkout's content/ is the one source."""
    assert not (REPO / "game" / "content").exists()
    assert resources.files("game") == REPO / "game"
    assert content_root() == REPO / "content"


def test_every_package_under_game_is_listed_for_the_build():
    setuptools = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    on_disk = {
        ".".join(init.parent.relative_to(REPO).parts)
        for init in (REPO / "game").rglob("__init__.py")
        if "__pycache__" not in init.parts
    }
    assert on_disk | {"game.content"} == set(setuptools["packages"])
    assert setuptools["package-dir"] == {"game.content": "content"}
    assert setuptools["package-data"]["game.content"] == ["**/*"]


# -- where saves go ---------------------------------------------------------------------------


def test_checkout_detection(tmp_path):
    assert is_checkout(REPO)
    assert is_checkout(make_checkout_like(tmp_path / "clone"))
    assert not is_checkout(make_checkout_like(tmp_path / "other", name="someone-else"))
    assert not is_checkout(tmp_path)
    (tmp_path / "pyproject.toml").write_text("not = [toml", encoding="utf-8")
    assert not is_checkout(tmp_path)


def test_data_dir_is_the_user_data_folder_outside_a_checkout(tmp_path, monkeypatch):
    installed = tmp_path / "site-packages"  # where an installed game package lives: no checkout
    installed.mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    monkeypatch.setattr(config, "SOURCE_ROOT", installed)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    for name in [k for k in os.environ if k.startswith("STORYECHO_")]:
        monkeypatch.delenv(name)
    expected = platformdirs.user_data_path("storyecho") / "saves"
    if sys.platform.startswith("linux"):
        assert expected == tmp_path / "xdg" / "storyecho" / "saves"
    assert default_data_dir() == expected
    assert load_settings().data_dir == expected
    # an explicit setting still wins: the environment, then a flag
    monkeypatch.setenv("STORYECHO_DATA_DIR", str(tmp_path / "env"))
    assert load_settings().data_dir == tmp_path / "env"
    assert load_settings(data_dir=tmp_path / "flag").data_dir == tmp_path / "flag"


def test_data_dir_is_saves_in_a_checkout(tmp_path, monkeypatch):
    for name in [k for k in os.environ if k.startswith("STORYECHO_")]:
        monkeypatch.delenv(name)
    monkeypatch.setattr(config, "SOURCE_ROOT", tmp_path / "site-packages")
    monkeypatch.chdir(REPO)
    assert default_data_dir() == Path("saves")
    assert load_settings().data_dir == Path("saves")
    # started elsewhere but running from a checkout (an editable install): that checkout's saves/
    monkeypatch.chdir(tmp_path)
    assert default_data_dir(source_root=REPO) == REPO / "saves"
    monkeypatch.setattr(config, "SOURCE_ROOT", REPO)
    assert load_settings().data_dir == REPO / "saves"


def test_help_says_where_saves_go():
    out = subprocess.run(
        [sys.executable, "-m", "game", "--help"], capture_output=True, text=True, timeout=120, cwd=REPO, env=clean_env()
    )
    assert out.returncode == 0, out.stderr
    text = " ".join(out.stdout.split())
    assert "./saves in a checkout" in text and "~/.local/share/storyecho/saves on Linux" in text


# -- a wheel in a fresh environment -----------------------------------------------------------


def run(*cmd: str | Path, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    out = subprocess.run(
        [str(c) for c in cmd], cwd=cwd, env=env or clean_env(), capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, f"{cmd}\n{out.stdout[-3000:]}\n{out.stderr[-3000:]}"
    return out


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> tuple[Path, Path]:
    """A wheel built the way pip/pipx/build make one: sdist of the checkout first, the wheel from the sdist.

    The build runs on a copy so it never writes build/ or egg-info into the shared checkout.
    """
    base = tmp_path_factory.mktemp("build")
    assert not base.is_relative_to(REPO)
    source = base / "source"
    shutil.copytree(REPO, source, ignore=not_source)
    sdist_dir, wheel_dir = base / "sdist", base / "wheels"
    build_sdist = "import sys; from setuptools import build_meta; print(build_meta.build_sdist(sys.argv[1]))"
    name = run(sys.executable, "-c", build_sdist, sdist_dir, cwd=source).stdout.strip().splitlines()[-1]
    pip_wheel = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-w", wheel_dir]
    run(*pip_wheel, sdist_dir / name, cwd=base)
    (found,) = wheel_dir.glob("storyecho-*.whl")
    return found, source


@pytest.fixture(scope="module")
def wheel(built) -> Path:
    return built[0]


def test_wheel_carries_the_package_and_the_stories(built):
    """Every file of the package and every story file, so a package or data file left out of
    pyproject.toml's [tool.setuptools] lists fails here (compared with the copy that was built)."""
    wheel, source = built
    names = set(zipfile.ZipFile(wheel).namelist())
    for path in (source / "game").rglob("*"):
        if path.is_file():
            assert path.relative_to(source).as_posix() in names, path
    stories = [path for path in (source / "content").rglob("*") if path.is_file()]
    assert {path.parent.name for path in stories} >= STORIES
    for path in stories:
        assert f"game/{path.relative_to(source).as_posix()}" in names, path
    assert not any(n.startswith(("content/", "tests/", "bench/")) for n in names)


def test_wheel_plays_three_turns_outside_the_checkout(wheel, tmp_path):
    assert not tmp_path.is_relative_to(REPO)
    venv = tmp_path / "venv"
    # torch, chromadb, textual are not downloaded again: they come from the site-packages of the Python that runs
    # the tests, which is a virtual environment's when the README's command runs in one (a venv made from a venv's
    # Python with --system-site-packages sees the system's, not that venv's): a .pth file names them; pip too
    run(sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", venv, cwd=tmp_path)
    python, storyecho = venv / "bin" / "python", venv / "bin" / "storyecho"
    purelib = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    inner = Path(run(python, "-c", purelib, cwd=tmp_path).stdout.strip())
    outer = [path for path in site.getsitepackages() if Path(path).is_dir()]
    (inner / "_tests_outer_site.pth").write_text("\n".join(outer) + "\n", encoding="utf-8")
    # the system may hold an editable install of a checkout: the wheel's copy must be the one that runs
    run(python, "-m", "pip", "install", "--no-deps", "--force-reinstall", "--no-index", wheel, cwd=tmp_path)
    play = tmp_path / "play"
    play.mkdir()
    home = tmp_path / "home"
    env = clean_env(HOME=str(home), XDG_DATA_HOME=str(home / "data"))
    show = "import game; from game.world.loader import content_root; print(game.__file__); print(content_root())"
    where = run(python, "-c", show, cwd=play, env=env).stdout.splitlines()
    package = Path(where[0]).parent
    assert package.is_relative_to(venv) and not package.is_relative_to(REPO), where
    assert Path(where[1]) == package / "content"

    actions = tmp_path / "actions.txt"
    actions.write_text("look\nnorth\ninventory\n", encoding="utf-8")
    flags = ["--story", "fantasy_001", "--no-embeddings", "--llm", "scripted", "--json", "--actions", actions]

    def turns(out: subprocess.CompletedProcess[str]) -> list[dict[str, object]]:
        lines = [json.loads(line) for line in out.stdout.splitlines()]
        assert len(lines) == 3 and all(line["ok"] is True for line in lines), out.stdout[-2000:]
        return lines

    # no --data-dir, no setting: the save lands in the user data folder, nothing in the working folder
    turns(run(storyecho, "run", *flags, "--slot", "packaged", cwd=play, env=env))
    assert (home / "data" / "storyecho" / "saves" / "packaged.json").is_file()
    assert list(play.iterdir()) == []
    # --data-dir wins
    chosen = tmp_path / "chosen"
    turns(run(storyecho, "run", *flags, "--slot", "mine", "--data-dir", chosen, cwd=play, env=env))
    assert (chosen / "mine.json").is_file()
    assert not (home / "data" / "storyecho" / "saves" / "mine.json").exists()

    validated = run(storyecho, "content", "validate", cwd=play, env=env).stdout
    assert "fantasy_001: OK" in validated and "scifi_001: OK" in validated
