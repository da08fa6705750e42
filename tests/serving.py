"""A real ``storyecho serve`` for the browser and HTTP tests (issue 45): started on a free port with the scripted
narrator and keyword memory (a game starts in a second), its output in a file, stopped at the end."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def serve_env() -> dict[str, str]:
    """The environment each served game runs in: this checkout's code, the scripted narrator, no embedder."""
    return os.environ | {
        "PYTHONPATH": str(ROOT),
        "STORYECHO_LLM": "scripted",
        "STORYECHO_MEMORY__EMBEDDINGS": "false",
        "HF_HUB_OFFLINE": "1",
        "ANONYMIZED_TELEMETRY": "False",
    }


def start_serve(folder: Path, data: Path, *flags: str) -> tuple[subprocess.Popen[str], str]:
    """``storyecho serve --data-dir data`` in ``folder`` on a free port, once it listens: the process and its URL
    (no trailing slash)."""
    port = free_port()
    command = [sys.executable, "-m", "game", "serve", "--port", str(port), "--data-dir", str(data), *flags]
    log = folder / f"serve-{port}.log"  # a file, not a pipe: a pipe nobody reads would stop the server once full
    with log.open("w") as out:
        process = subprocess.Popen(
            command, cwd=folder, env=serve_env(), stdout=out, stderr=subprocess.STDOUT, text=True
        )
    deadline = time.monotonic() + 30
    while f"http://127.0.0.1:{port}" not in log.read_text():
        assert process.poll() is None and time.monotonic() < deadline, f"no server: {log.read_text()}"
        time.sleep(0.1)
    return process, f"http://127.0.0.1:{port}"


def stop(process: subprocess.Popen[str]) -> None:
    """Stop a server still running (its games are told to quit and save), killing it after 30 s."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
