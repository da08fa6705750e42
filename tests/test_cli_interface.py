"""The command line as its help words it (issue 35 item 5): flags before the command, a story named by its title,
and output cut short by its reader."""

from __future__ import annotations

import os
import subprocess
import sys

from game.args import game_args, parse
from game.cli import BROKEN_PIPE, main


def test_data_dir_and_story_before_the_command_are_taken(tmp_path, capsys):
    assert main(["--data-dir", str(tmp_path / "mine"), "slots", "list"]) == 0
    assert f"no saves in {tmp_path / 'mine'}" in capsys.readouterr().out
    args = parse(["--story", "Cyber", "--data-dir", str(tmp_path)])
    assert args.command is None and args.story == "Cyber" and args.data_dir == tmp_path
    own = parse(["--data-dir", str(tmp_path / "a"), "run", "--data-dir", str(tmp_path / "b")])
    assert own.data_dir == tmp_path / "b"  # the command's own flag wins


def test_a_story_is_found_by_its_title_in_any_case(tmp_path, capsys):
    actions = tmp_path / "look.txt"
    actions.write_text("look\n")
    common = ["--llm", "scripted", "--no-embeddings", "--actions", str(actions), "--data-dir", str(tmp_path)]
    assert main(["run", "--story", "Cyber", *common]) == 0
    assert "Lab Pod Bay" in capsys.readouterr().out
    assert main(["run", "--story", "misty forest", *common]) == 0
    assert "Mistwood Trailhead" in capsys.readouterr().out
    assert main(["run", "--story", "FANTASY_001", *common]) == 0
    assert main(["run", "--story", "nowhere", *common]) == 2
    assert "no story 'nowhere'" in capsys.readouterr().err


def test_bare_storyecho_keeps_its_story_for_the_game(monkeypatch):
    monkeypatch.setattr(sys.stdin, "isatty", lambda: True)
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    play = game_args(parse(["--story", "Cyber"]))
    assert play is not None and play.story == "Cyber"


def test_output_cut_short_by_its_reader_ends_quietly():
    env = dict(os.environ, HF_HUB_OFFLINE="1")
    proc = subprocess.Popen(
        [sys.executable, "-m", "game", "content", "validate"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # the reader is gone before the first line: `storyecho ... | head -0`
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == BROKEN_PIPE
    assert "Broken pipe" not in err and "Traceback" not in err, err
