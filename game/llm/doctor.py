"""``storyecho doctor``: does the installed llama.cpp build run here, and how fast?

llama.cpp compiles on install for the CPU it was built on. A wheel built on
another machine (or a virtual machine that advertises CPU features such as
AVX-512 or AMX it cannot run) dies with "Illegal instruction" or crawls at a
fraction of a token per second. Run right after install, this loads the model
in a child process (so a crash is reported, not suffered), generates a few
tokens, and reports prompt and generation speed; a crash or a speed below
:data:`MIN_TOKENS_PER_S` exits non-zero with the portable-build command.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

MIN_TOKENS_PER_S = 1.0
"""Below this, the build is broken (measured here: 50-100 tokens/s for SmolLM2 on one core)."""
PORTABLE_BUILD = (
    'CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_AVX512=OFF '
    '-DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF" pip install --force-reinstall --no-cache-dir "llama-cpp-python>=0.3.36"'
)
PROMPT = "The lantern swung in the mist as the traveller walked into the old forest, and"

_CHILD = """
import json, sys, time
from llama_cpp import Llama
path, threads, tokens, prompt = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
start = time.perf_counter()
llm = Llama(model_path=path, n_ctx=512, n_threads=threads, verbose=False)
loaded = time.perf_counter()
first = None
count = 0
for _ in llm.create_completion(prompt, max_tokens=tokens, temperature=0.0, stream=True):
    count += 1
    if first is None:
        first = time.perf_counter()
end = time.perf_counter()
print(json.dumps({"load_ms": (loaded - start) * 1000, "first_token_ms": ((first or end) - loaded) * 1000,
                  "tokens": count, "gen_s": end - (first or end)}))
"""


@dataclass
class Checkup:
    """What ``doctor`` measured (or why it could not)."""

    ok: bool
    message: str
    model: str = ""
    threads: int = 0
    load_ms: float = 0.0
    first_token_ms: float = 0.0
    tokens_per_s: float = 0.0


def check_llamacpp(model: Path, threads: int, tokens: int = 32, timeout_s: float = 300.0) -> Checkup:
    """Load ``model`` with llama.cpp in a child process and time ``tokens`` generated tokens."""
    try:
        done = subprocess.run(
            [sys.executable, "-c", _CHILD, str(model), str(threads), str(tokens), PROMPT],
            capture_output=True,
            text=True,
            timeout=timeout_s,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return Checkup(False, f"llama.cpp took over {timeout_s:.0f} s for {tokens} tokens: {fix()}", model.name)
    if done.returncode != 0:
        if done.returncode == -signal.SIGILL:
            why = "llama.cpp crashed with 'Illegal instruction' (built for CPU features this machine lacks)"
        elif "No module named 'llama_cpp'" in done.stderr:
            return Checkup(False, "llama.cpp is not installed: pip install -e '.[local]'", model.name)
        else:
            tail = done.stderr.strip().splitlines()[-1:] or [f"exit status {done.returncode}"]
            why = f"llama.cpp failed: {tail[0][:200]}"
        return Checkup(False, f"{why}. {fix()}", model.name, threads)
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    # the first token's time is the prompt; speed is over the tokens after it
    speed = (figures["tokens"] - 1) / figures["gen_s"] if figures["gen_s"] > 0 and figures["tokens"] > 1 else 0.0
    result = Checkup(
        speed >= MIN_TOKENS_PER_S,
        "",
        model.name,
        threads,
        round(figures["load_ms"], 1),
        round(figures["first_token_ms"], 1),
        round(speed, 1),
    )
    result.message = (
        f"llama.cpp runs: {result.tokens_per_s} tokens/s with {threads} thread(s), first token "
        f"{result.first_token_ms:.0f} ms, load {result.load_ms:.0f} ms ({model.name})"
        if result.ok
        else f"llama.cpp runs at {result.tokens_per_s} tokens/s (under {MIN_TOKENS_PER_S}): {fix()}"
    )
    return result


def fix() -> str:
    return f"reinstall it as a portable build: {PORTABLE_BUILD}"
