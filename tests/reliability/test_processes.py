"""The game in real processes, with the default configuration (embeddings, a local Chroma index).

- a save made at turn 40 and loaded in a fresh process plays turn 41 exactly
  as the game that never stopped (the whole ``--json`` line: state, prompt,
  every memory block, the next summary turn);
- the index folder deleted, truncated or filled with garbage between sessions:
  the game starts, rebuilds it, and recalls the same memories;
- a second game on the same data folder while the first is running: the index
  is locked, the second reads its snapshot (keeping its own writes) and says so,
  and neither corrupts the other (``test_two_windows.py``: it embeds nothing the
  index holds);
- with no network at all the game starts, indexes, plays and saves.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from game.cli import read_actions

ROOT = Path(__file__).resolve().parents[2]
WALKTHROUGH = ROOT / "tests" / "walkthroughs" / "fantasy_001__victory.txt"
ACTIONS = list(read_actions(WALKTHROUGH.read_text().splitlines()))[:41]
ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "ANONYMIZED_TELEMETRY": "False"}
VARIES = ("timings_ms",)
META_VARIES = ("wait_ms", "recall_ms")
"""What may differ between two plays of the same turn: how long things took."""


def storyecho(
    *args: str, actions: list[str], prefix: tuple[str, ...] = (), env: dict[str, str] = ENV
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*prefix, sys.executable, "-m", "game", "run", "--json", *args],
        input="\n".join(actions) + "\n",
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=600,
        check=False,
    )


def turns(done: subprocess.CompletedProcess[str]) -> list[dict]:
    assert done.returncode == 0, done.stderr[-3000:]
    return [orjson.loads(line) for line in done.stdout.splitlines() if line.strip()]


def comparable(line: dict) -> dict:
    line = {k: v for k, v in line.items() if k not in VARIES}
    line["retrieval_meta"] = {k: v for k, v in line["retrieval_meta"].items() if k not in META_VARIES}
    return line


@pytest.fixture(scope="module")
def played(tmp_path_factory):
    """A game played to turn 40, saved to ``t40``, then on to turn 41: its data folder and turn 41."""
    data = tmp_path_factory.mktemp("played")
    done = storyecho(
        "--story", "fantasy_001", "--data-dir", str(data), actions=[*ACTIONS[:40], "save t40", ACTIONS[40]]
    )
    lines = turns(done)
    assert lines[-2]["meta"] == "save" and lines[-2]["ok"] and lines[-1]["turn"] == 41
    return lines[-1], data


def resume_turn_41(played, tmp_path, damage=None) -> tuple[dict, subprocess.CompletedProcess[str]]:
    """Turn 41 played again in a fresh process that loads ``t40`` (from a copy of the data folder)."""
    _, data = played
    copy = tmp_path / "copy"
    shutil.copytree(data, copy)
    if damage is not None:
        damage(copy / ".index")
    done = storyecho("--slot", "t40", "--data-dir", str(copy), actions=ACTIONS[40:41])
    resumed = turns(done)
    assert len(resumed) == 1 and resumed[0]["turn"] == 41
    return resumed[0], done


def test_a_save_at_turn_40_plays_turn_41_as_if_the_game_never_stopped(played, tmp_path):
    straight, _ = played
    resumed, _ = resume_turn_41(played, tmp_path)
    assert comparable(resumed) == comparable(straight)
    meta = resumed["retrieval_meta"]
    assert meta["strategy"] == "hybrid:chroma" and meta["summaries"] == 8 and meta["pending_vectors"] == 0
    assert meta["session"] == straight["retrieval_meta"]["session"]  # the same game, not a new one


def _delete(index: Path) -> None:
    shutil.rmtree(index)


def _truncate(index: Path) -> None:
    with open(index / "chroma.sqlite3", "r+b") as handle:
        handle.truncate(4096)


def _garbage(index: Path) -> None:
    for path in index.rglob("*"):
        if path.is_file():
            path.write_bytes(os.urandom(2048))


@pytest.mark.parametrize("damage", [_delete, _truncate, _garbage], ids=["deleted", "truncated", "garbage"])
def test_a_damaged_index_is_rebuilt_and_recalls_the_same_memories(played, tmp_path, damage):
    straight, _ = played
    resumed, done = resume_turn_41(played, tmp_path, damage)
    if damage is not _delete:
        assert "damaged" in done.stderr and "rebuilt" in done.stderr
        assert list((tmp_path / "copy").glob(".index.broken-*")), "the damaged index is kept aside, not deleted"
    assert comparable(resumed) == comparable(straight)
    assert resumed["retrieval_meta"]["strategy"] == "hybrid:chroma"


def test_a_second_game_on_the_same_data_folder_never_corrupts_the_index(tmp_path):
    first = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "game",
            "run",
            "--json",
            *("--story", "fantasy_001", "--slot", "one"),
            "--data-dir",
            str(tmp_path),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=ENV,
        cwd=ROOT,
    )
    assert first.stdin is not None and first.stdout is not None
    first.stdin.write("say my name is Ysolde\n")
    first.stdin.flush()
    assert orjson.loads(first.stdout.readline())["turn"] == 1  # the first game holds the index now

    second = storyecho(
        "--story", "fantasy_001", "--slot", "two", "--data-dir", str(tmp_path), actions=["say my name is Bram", "look"]
    )
    second_turns = turns(second)
    assert "in use by another StoryEcho" in second.stderr
    assert second_turns[-1]["retrieval_meta"]["strategy"] == "hybrid:chroma-reader"

    out, err = first.communicate("look\nrest\n", timeout=600)
    assert first.returncode == 0, err[-3000:]
    assert [orjson.loads(line)["turn"] for line in out.splitlines()] == [2, 3]

    # afterwards the index opens cleanly (no rebuild), and each game resumes with its own memories
    done = storyecho(
        "--slot", "one", "--data-dir", str(tmp_path), actions=["what is my name?", "load two", "what is my name?"]
    )
    assert "damaged" not in done.stderr and "in use" not in done.stderr
    one, loaded, two = turns(done)
    assert loaded["ok"] and loaded["meta"] == "load"
    for answer, mine, theirs in ((one, "ysolde", "bram"), (two, "bram", "ysolde")):
        assert answer["retrieval_meta"]["strategy"] == "hybrid:chroma"
        assert mine in answer["narration"].lower() and theirs not in orjson.dumps(answer).decode().lower()
    assert not list(tmp_path.glob(".index.broken-*"))


def _no_network_prefix(tmp_path: Path) -> tuple[tuple[str, ...], dict[str, str]]:
    """Run in a network namespace of its own (no interfaces up) where possible, else block sockets in Python.

    The environment leaves out the offline switches (``HF_HUB_OFFLINE``, telemetry): the game must set them itself.
    """
    bare_env = {k: v for k, v in os.environ.items() if k not in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")}
    bare_env.pop("ANONYMIZED_TELEMETRY", None)
    probe = (
        subprocess.run(["unshare", "-rn", "true"], capture_output=True, check=False)
        if shutil.which("unshare")
        else None
    )
    if probe is not None and probe.returncode == 0:
        return ("unshare", "-rn"), bare_env
    blocker = tmp_path / "blocker"
    blocker.mkdir()
    (blocker / "sitecustomize.py").write_text(
        "import socket\n"
        "def _refuse(*args, **kwargs):\n"
        "    raise OSError('network blocked by the test')\n"
        "_connect = socket.socket.connect\n"
        "def _connect_local(self, address, *a):\n"
        "    if self.family in (socket.AF_INET, socket.AF_INET6):\n"
        "        _refuse()\n"
        "    return _connect(self, address, *a)\n"
        "socket.socket.connect = _connect_local\n"
        "socket.getaddrinfo = _refuse\n"
    )
    return (), {**bare_env, "PYTHONPATH": f"{blocker}{os.pathsep}{ROOT}"}


def test_with_no_network_the_game_starts_indexes_plays_and_saves(tmp_path):
    prefix, env = _no_network_prefix(tmp_path)
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    try:  # the sandbox really has no network: not even this machine's loopback server is reachable
        reach = subprocess.run(
            [*prefix, sys.executable, "-c", f"import socket; socket.create_connection(('127.0.0.1', {port}), 2)"],
            capture_output=True,
            env=env,
            check=False,
        )
        assert reach.returncode != 0
    finally:
        listener.close()
    done = storyecho(
        *("--story", "scifi_001", "--slot", "offline", "--data-dir", str(tmp_path / "data")),
        actions=["look", "say my name is Vex", "save offline-copy", "what is my name?"],
        prefix=prefix,
        env=env,
    )
    lines = turns(done)
    assert lines[-1]["retrieval_meta"]["strategy"].startswith("hybrid:chroma")
    assert lines[-1]["retrieval_meta"]["knowledge_strategy"].startswith("hybrid")
    assert "vex" in orjson.dumps(lines[-1]["memory_blocks"]).decode().lower()  # recalled from the index
    assert (tmp_path / "data" / "offline.json").is_file() and (tmp_path / "data" / "offline-copy.json").is_file()
