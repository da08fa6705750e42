"""Committed walkthroughs reach every ending of both stories through the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from game.cli import main
from game.world.loader import content_root, load_pack

WALKTHROUGHS = Path(__file__).parent / "walkthroughs"
STORIES = ["fantasy_001", "scifi_001", "victorian_001"]


def all_walkthroughs() -> list[Path]:
    return sorted(WALKTHROUGHS.glob("*__*.txt"))


@pytest.mark.parametrize("story", STORIES)
def test_every_ending_has_a_walkthrough(story):
    endings = {e.id for e in load_pack(content_root() / story).endings}
    have = {p.stem.split("__", 1)[1] for p in all_walkthroughs() if p.stem.startswith(f"{story}__")}
    assert endings <= have, f"missing walkthroughs for {sorted(endings - have)}"


@pytest.mark.parametrize("path", all_walkthroughs(), ids=lambda p: p.stem)
def test_walkthrough_reaches_its_ending(path, tmp_path, capsys):
    story, ending = path.stem.split("__", 1)
    # keyword memory: endings do not depend on recall, and torch would cost seconds per run. The command runs in
    # this process (its own process cost a second and a half of imports for each of the walkthroughs; the
    # command's process of its own is tested in tests/test_cli.py)
    argv = ["run", "--story", story, "--llm", "scripted", "--actions", str(path), "--json"]
    code = main([*argv, "--no-embeddings", "--data-dir", str(tmp_path)])
    out, err = capsys.readouterr()
    assert code == 0, err
    turns = [json.loads(line) for line in out.splitlines()]
    last = turns[-1]
    assert last["state"]["ending"] == ending, f"ended at turn {last['turn']} in {last['state']['node']}"
    # the run stopped at the ending, not after it
    assert [t["state"]["ending"] for t in turns].index(ending) == len(turns) - 1
    assert all(t["ok"] for t in turns), [t["error"] for t in turns if not t["ok"]]
