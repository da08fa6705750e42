"""The ONNX Runtime embedder: same vectors as sentence-transformers, no torch, a cache that heals.

The model is exported once per test module into a temporary cache (fp32 and
int8), and the game subprocess finds it there through ``XDG_CACHE_HOME``.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

from game.config import ConfigError, load_settings
from game.memory.vectors.embedders import SentenceTransformerEmbedder
from game.memory.vectors.onnx_embedder import CPU, CUDA, DEFAULT_BATCH, OnnxEmbedder, pick_providers
from game.memory.vectors.onnx_export import EXPORTER_VERSION

ROOT = Path(__file__).resolve().parents[1]
SENTENCES = [
    "The old hunter points north, toward the misty forest.",
    "hello",
    "Alicia smiles when I give her the moonflower; she says the harp was stolen by the swamp witch.",
    # far over the 256-token limit: both backends must truncate it the same way
    " ".join(f"Hal walked past the {n}th ruined tower of the Shadow Swamp and did not look back." for n in range(60)),
]
INT8_MIN_COSINE = 0.985
"""int8 vs torch, per sentence. The int8 export (every weight product int8, activations scaled per token row)
measured 0.994 at worst (0.997 on average) over 200 content sentences and LoCoMo turns; one activation scale per
batch with per-channel weights gave 0.978 at worst, one weight scale per matrix 0.87 on the long sentence. So
the bound catches a quantization that went wrong; the retrieval quality itself is measured by
``bench/embedders.py`` (LoCoMo recall@10 within one point of torch)."""


@pytest.fixture(scope="module")
def cache_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An XDG cache root whose ``storyecho/models`` holds both exports (built once for the module)."""
    root = tmp_path_factory.mktemp("xdg-cache")
    for precision in ("fp32", "int8"):
        OnnxEmbedder(cache_dir=root / "storyecho" / "models", precision=precision).load()
    return root


def models(cache_root: Path) -> Path:
    return cache_root / "storyecho" / "models"


def cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.asarray((a * b).sum(axis=1))


def test_vectors_match_sentence_transformers(cache_root, embedder):
    reference = embedder.embed(SENTENCES)
    fp32 = OnnxEmbedder(cache_dir=models(cache_root), precision="fp32").embed(SENTENCES)
    int8 = OnnxEmbedder(cache_dir=models(cache_root), precision="int8").embed(SENTENCES)
    for vectors in (fp32, int8):
        assert vectors.dtype == np.float32 and vectors.shape == (len(SENTENCES), 384)
        assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert cosines(fp32, reference).min() >= 0.999, cosines(fp32, reference)
    assert cosines(int8, reference).min() >= INT8_MIN_COSINE, cosines(int8, reference)
    # one at a time (no padding) gives the same vectors as in a padded batch
    alone = OnnxEmbedder(cache_dir=models(cache_root), precision="fp32").embed(SENTENCES[:1])
    assert cosines(alone, fp32[:1]).min() >= 0.9999
    assert OnnxEmbedder(cache_dir=models(cache_root)).embed([]).shape == (0, 384)


@pytest.mark.parametrize("precision", ["int8", "fp32"])
def test_a_texts_vector_does_not_depend_on_what_is_embedded_with_it(cache_root, precision):
    """An index rebuilt from a save must find the vectors the intact one had: the same text, alone or in a
    batch of longer texts (padded to their width), in any order, embeds to the same vector. int8 bitwise:
    its activations are quantized with one scale per token row, never one for the whole batch."""
    embedder = OnnxEmbedder(cache_dir=models(cache_root), precision=precision)
    assert embedder.batch_size > 1  # the texts below do share a batch
    longer = [f"{s} {s} and the lodge stands east of the clearing, where the path forks twice." for s in SENTENCES]
    together = embedder.embed([*SENTENCES, *longer])[: len(SENTENCES)]
    alone = np.vstack([embedder.embed([s]) for s in SENTENCES])
    reversed_ = embedder.embed(SENTENCES[::-1])[::-1]
    tolerance = 0.0 if precision == "int8" else 1e-6
    assert np.abs(together - alone).max() <= tolerance
    assert np.abs(reversed_ - alone).max() <= tolerance


def test_texts_share_a_run_and_pad_only_to_their_batch(cache_root):
    """Batches: sorted by length, up to ``batch_size`` texts per ONNX Runtime call, each padded to its longest."""
    embedder = OnnxEmbedder(cache_dir=models(cache_root))
    embedder.load()
    widths: list[tuple[int, int]] = []
    real = embedder._session.run

    def recording(names, feeds):
        widths.append(feeds["input_ids"].shape)
        return real(names, feeds)

    embedder._session.run = recording
    texts = [f"the {'very ' * n}old hunter points north" for n in (30, 0, 2, 1)] + ["hello"] * DEFAULT_BATCH
    vectors = embedder.embed(texts)
    assert vectors.shape == (len(texts), 384)
    assert np.array_equal(vectors[4], vectors[-1])
    assert [rows for rows, _ in widths] == [DEFAULT_BATCH, 4]  # the short ones first
    assert widths[0][1] == 3 and widths[1][1] > 30  # the short batch does not pay for the 30-word text


def test_versions_name_backend_and_precision(cache_root):
    fp32 = OnnxEmbedder(cache_dir=models(cache_root), precision="fp32")
    int8 = OnnxEmbedder(cache_dir=models(cache_root), precision="int8")
    torch = SentenceTransformerEmbedder()
    assert fp32.model_version.startswith("onnx-fp32:") and int8.model_version.startswith("onnx-int8:")
    assert len({fp32.model_version, int8.model_version, torch.model_version}) == 3
    assert fp32.model_name == int8.model_name == torch.model_name


def test_the_cache_is_reused_and_a_corrupt_file_rebuilt(cache_root, caplog):
    first = OnnxEmbedder(cache_dir=models(cache_root), precision="fp32")
    first.load()
    assert not first.built  # the module fixture exported it: this load only opened the file
    assert first.model_file is not None and f"-e{EXPORTER_VERSION}-fp32.onnx" in first.model_file.name
    good = first.embed(SENTENCES[:2])
    first.model_file.write_bytes(b"\x08\x07 this is not an ONNX model")
    caplog.set_level(logging.WARNING, logger="storyecho.memory")
    second = OnnxEmbedder(cache_dir=models(cache_root), precision="fp32")
    assert np.allclose(second.embed(SENTENCES[:2]), good, atol=1e-6)
    assert second.built
    assert any("cannot be loaded" in r.getMessage() and "rebuilding" in r.getMessage() for r in caplog.records)
    third = OnnxEmbedder(cache_dir=models(cache_root), precision="fp32")
    third.load()
    assert not third.built  # the rebuilt file is good: reused again
    assert not list(models(cache_root).glob(".export-*"))  # no scratch left behind


def test_an_unwritable_cache_still_embeds(tmp_path, caplog):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the cache folder would go", encoding="utf-8")
    caplog.set_level(logging.WARNING, logger="storyecho.memory")
    embedder = OnnxEmbedder(cache_dir=blocker / "models", precision="fp32")
    assert embedder.embed(SENTENCES[:1]).shape == (1, 384)
    assert any("for this run only" in r.getMessage() for r in caplog.records)


def test_concurrent_first_use_loads_once(cache_root, monkeypatch):
    import onnxruntime

    sessions = []
    real = onnxruntime.InferenceSession

    def counting(*args, **kwargs):
        sessions.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(onnxruntime, "InferenceSession", counting)
    shared = OnnxEmbedder(cache_dir=models(cache_root), precision="fp32")
    results: list[np.ndarray] = []
    threads = [threading.Thread(target=lambda: results.append(shared.embed(SENTENCES[:2]))) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(sessions) == 1 and len(results) == 4
    assert all(np.array_equal(r, results[0]) for r in results)


def test_cuda_is_chosen_when_listed(cache_root, monkeypatch):
    """Environment injection: this machine has no GPU, so the provider list ONNX Runtime reports is injected.

    With CUDA listed, it is asked for first (CPU after it), and the precision is fp32 (int8 products would
    run on the CPU); without it, the CPU and int8. The session here is real: ONNX Runtime without CUDA
    drops the provider it does not have and runs on the CPU.
    """
    import onnxruntime

    assert pick_providers([CPU]) == [CPU]
    assert pick_providers(["AzureExecutionProvider", CPU, CUDA]) == [CUDA, CPU]
    asked: list[list[str]] = []
    real = onnxruntime.InferenceSession

    def recording(path, sess_options=None, providers=None, **kwargs):
        asked.append(list(providers))
        return real(path, sess_options=sess_options, providers=[p for p in providers if p == CPU], **kwargs)

    monkeypatch.setattr(onnxruntime, "InferenceSession", recording)
    gpu = OnnxEmbedder(cache_dir=models(cache_root), providers=["TensorrtExecutionProvider", CUDA, CPU])
    assert gpu.precision == "fp32" and gpu.model_version.startswith("onnx-fp32:")
    gpu.load()
    assert asked == [[CUDA, CPU]]
    cpu = OnnxEmbedder(cache_dir=models(cache_root), providers=[CPU])
    assert cpu.precision == "int8"
    cpu.load()
    assert asked[-1] == [CPU] and cpu.device == "cpu"


def test_make_embedder_follows_the_setting(cache_root, tmp_path, monkeypatch):
    from game.wiring import make_embedder

    monkeypatch.setenv("XDG_CACHE_HOME", str(cache_root))
    chosen = make_embedder(load_settings(data_dir=tmp_path, memory={"embedder": "onnx"}))
    assert isinstance(chosen, OnnxEmbedder) and not chosen.built
    assert isinstance(make_embedder(load_settings(data_dir=tmp_path)), OnnxEmbedder)  # auto: the packages are here
    monkeypatch.setattr("game.wiring.onnx_available", lambda: False)
    assert isinstance(make_embedder(load_settings(data_dir=tmp_path)), SentenceTransformerEmbedder)


def test_a_bad_embedder_setting_is_a_config_error(tmp_path, monkeypatch):
    with pytest.raises(ConfigError, match=r"memory\.embedder"):
        load_settings(data_dir=tmp_path, memory={"embedder": "tensorflow"})
    monkeypatch.setenv("STORYECHO_MEMORY__EMBEDDER", "gpu")
    with pytest.raises(ConfigError, match=r"memory\.embedder.*'auto', 'onnx' or 'torch'"):
        load_settings(data_dir=tmp_path)


GAME_TURN = """
import json, sys
from game.main import main

code = main(["run", "--story", "fantasy_001", "--llm", "scripted", "--data-dir", sys.argv[1], "--actions", sys.argv[2]])
print(json.dumps({"exit": code, "modules": sorted({m.split(".")[0] for m in sys.modules})}))
"""


def test_a_game_turn_with_the_onnx_embedder_never_imports_torch(cache_root, tmp_path):
    actions = tmp_path / "actions.txt"
    actions.write_text("look\n", encoding="utf-8")
    env = {
        **os.environ,
        "STORYECHO_MEMORY__EMBEDDER": "onnx",
        "XDG_CACHE_HOME": str(cache_root),
        "HF_HUB_OFFLINE": "1",
        "ANONYMIZED_TELEMETRY": "False",
    }
    done = subprocess.run(
        [sys.executable, "-c", GAME_TURN, str(tmp_path / "data"), str(actions)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
        env=env,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["exit"] == 0
    modules = set(report["modules"])
    assert "onnxruntime" in modules and "chromadb" in modules  # the game did embed, into the default store
    assert not modules & {"torch", "sentence_transformers", "transformers"}


def test_the_weights_digest_is_remembered_until_the_file_changes(tmp_path, monkeypatch):
    """The weights are hashed once per file version: a second start reads the digest from the cache's record,
    and a rewritten file (another size or time) is hashed again, so its model is exported anew."""
    from game.memory.vectors import onnx_embedder

    weights, cache = tmp_path / "model.safetensors", tmp_path / "cache"
    weights.write_bytes(b"first weights")
    hashed: list[Path] = []
    real = onnx_embedder.weights_digest
    monkeypatch.setattr(onnx_embedder, "weights_digest", lambda path: hashed.append(path) or real(path))
    first = onnx_embedder.cached_weights_digest(weights, cache)
    assert first == real(weights) and onnx_embedder.cached_weights_digest(weights, cache) == first
    assert len(hashed) == 1  # the second call read the record
    weights.write_bytes(b"other weights!")
    os.utime(weights, ns=(1, 1))
    assert onnx_embedder.cached_weights_digest(weights, cache) == real(weights) != first
    (cache / onnx_embedder.DIGESTS_FILE).write_text("not json", encoding="utf-8")
    assert onnx_embedder.cached_weights_digest(weights, cache) == real(weights)  # a bad record: hashed again


@pytest.mark.parametrize("kind", ["onnx", "torch"])
def test_a_failed_load_is_remembered_and_never_tried_again(tmp_path, kind, monkeypatch):
    """Both embedders load once under one lock (``embedders.LazyModel``): a model that cannot load raises
    ``EmbedderUnavailable`` naming it, and every later load or embed raises that same error at once."""
    from game.memory.vectors import embedders
    from game.memory.vectors.embedders import EmbedderUnavailable

    (tmp_path / "model.safetensors").write_bytes(b"not weights")
    (tmp_path / "tokenizer.json").write_text("{}", encoding="utf-8")
    embedder = OnnxEmbedder(str(tmp_path), cache_dir=tmp_path / "cache") if kind == "onnx" else None
    if embedder is None:
        embedder = SentenceTransformerEmbedder(str(tmp_path), device="cpu")
    tries: list[int] = []
    real = type(embedder)._load
    monkeypatch.setattr(type(embedder), "_load", lambda self: tries.append(1) or real(self))
    with pytest.raises(EmbedderUnavailable) as first:
        embedder.load()
    assert "all-MiniLM-L6-v2" in str(first.value) or str(tmp_path) in str(first.value)
    for again in (embedder.load, lambda: embedder.embed(["look"])):
        with pytest.raises(EmbedderUnavailable) as later:
            again()
        assert later.value is first.value
    assert len(tries) == 1 and isinstance(embedder, embedders.LazyModel)
