"""House rules: the core never imports the UI; rooms stay small; the README's commands stay true."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORE = [
    "game.language",
    "game.world",
    "game.engine",
    "game.memory",
    "game.llm",
    "game.saves",
    "game.checker",
    "game.cli",
    "game.wiring",
    "game.args",
    "game.config",
]


def test_core_imports_neither_textual_nor_rich_nor_heavy_backends():
    code = (
        "import sys, importlib, pkgutil\n"
        f"for name in {CORE!r}:\n"
        "    mod = importlib.import_module(name)\n"
        "    for info in pkgutil.walk_packages(getattr(mod, '__path__', []), name + '.'):\n"
        "        importlib.import_module(info.name)\n"
        "heavy = ('textual', 'rich', 'torch', 'sentence_transformers', 'chromadb', 'llama_cpp', 'openai')\n"
        "bad = [m for m in heavy if m in sys.modules]\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == ""


def test_the_command_line_parser_imports_no_settings_models():
    """``game.args`` runs before the title shows (``bench/startup.py``'s title row): importing pydantic there cost
    about 0.15 s of the title's first frame."""
    code = "import sys, game.args; print(','.join(m for m in ('pydantic', 'game.llm.settings') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == ""


def readme_commands() -> list[str]:
    text = (ROOT / "README.md").read_text()
    first_block = text.split("```")[1].split("\n", 1)[1]  # drop the language tag line
    return [line.strip() for line in first_block.splitlines() if line.strip() and not line.startswith("#")]


def test_readme_opens_with_two_commands_and_ci_runs_the_test_one():
    commands = readme_commands()
    assert len(commands) == 2
    play, test = commands
    assert "storyecho" in play and "torch==2.13.0" in play
    assert "pytest" in test and "torch==2.13.0" in test
    assert test in (ROOT / ".ci" / "run").read_text()


MAX_FILE_LINES = 500
MAX_FUNCTION_LINES = 80


def test_the_readme_names_every_preset_and_nothing_else():
    from game.llm.presets import PRESETS

    row = next(line for line in (ROOT / "README.md").read_text().splitlines() if line.startswith("| `openai.preset`"))
    named = re.findall(r"`([a-z]+)`", row.split("|")[4])
    assert named == list(PRESETS), "README's openai.preset row lists the presets of game/llm/settings.py, in order"


def test_the_readmes_pictures_are_the_screens_the_snapshot_tests_check():
    snapshots = ROOT / "tests" / "tui" / "__snapshots__" / "test_snapshots"
    for picture, snapshot in (("play.svg", "test_play_misty_forest.svg"), ("debug.svg", "test_debug_panel.svg")):
        assert (ROOT / "docs" / picture).read_bytes() == (snapshots / snapshot).read_bytes(), (
            f"docs/{picture} is stale: copy {snapshot} over it"
        )


def test_no_file_or_function_in_game_is_over_the_house_limits():
    long_files, long_functions = {}, []
    for path in sorted((ROOT / "game").rglob("*.py")):
        name = path.relative_to(ROOT).as_posix()
        text = path.read_text(encoding="utf-8")
        lines = text.count("\n")
        if lines > MAX_FILE_LINES:
            long_files[name] = lines
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                if node.end_lineno is not None and node.end_lineno - first + 1 > MAX_FUNCTION_LINES:
                    long_functions.append(f"{name}:{node.name} ({node.end_lineno - first + 1} lines)")
    assert not long_files, f"over {MAX_FILE_LINES} lines: {long_files}"
    assert not long_functions, f"over {MAX_FUNCTION_LINES} lines: {long_functions}"


def test_game_declares_its_interfaces_instead_of_probing_for_them():
    """Issue 23: a capability is declared (a Protocol, a base class), never found by getattr/hasattr."""
    probes = [
        f"{path.relative_to(ROOT).as_posix()}:{n}"
        for path in sorted((ROOT / "game").rglob("*.py"))
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if re.search(r"\b(getattr|hasattr)\(", line)
    ]
    assert probes == []
