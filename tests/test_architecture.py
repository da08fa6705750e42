"""House rules: the core never imports the UI; the README's commands stay true."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORE = [
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
