"""Integration: memory against a real `chroma run` server on loopback, started here."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time

import pytest

from game.config import load_settings
from game.engine.pipeline import TurnPipeline
from game.llm.scripted import ScriptedNarrator
from game.world.loader import content_root, load_pack
from game.world.state import new_game


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def chroma_server(tmp_path):
    chroma = shutil.which("chroma")
    assert chroma, "the chroma CLI comes with the chromadb package"
    port = free_port()
    log = open(tmp_path / "chroma.log", "w")  # noqa: SIM115 - closed below
    server = subprocess.Popen(
        [chroma, "run", "--path", str(tmp_path / "server"), "--host", "127.0.0.1", "--port", str(port)],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1):
                    break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError((tmp_path / "chroma.log").read_text()) from None
                time.sleep(0.3)
        yield url
    finally:
        server.terminate()
        server.wait(timeout=30)
        log.close()


def test_memory_over_a_chroma_server(chroma_server, tmp_path):
    import chromadb

    from game.memory.vectors.chroma import chroma_settings
    from game.wiring import make_memory

    pack = load_pack(content_root() / "fantasy_001")
    settings = load_settings(data_dir=tmp_path / "data", memory={"chroma_url": chroma_server})
    narrator = ScriptedNarrator(pack)
    memory = make_memory(settings, pack, narrator)
    assert memory.store is not None and memory.store.backend == "chroma-http"
    engine = TurnPipeline(pack, new_game(pack), narrator, memory)
    for action in [
        "go east",
        "tell garrick I buried my father's ring under the crooked willow",
        "my name is Ren",
        "go west",
        "look",
        "go north",
    ]:
        assert engine.play(action).ok
    memory.flush()
    reply = engine.play("where did I bury my father's ring?")
    assert reply.trace.memory.retrieval_meta["strategy"] == "hybrid:chroma-http"
    assert "crooked willow" in reply.narration  # a fact no content holds: memory recalled it
    memory.close()

    # what the server holds, seen by another client
    port = int(chroma_server.rsplit(":", 1)[1])
    client = chromadb.HttpClient(host="127.0.0.1", port=port, settings=chroma_settings())
    names = {c.name for c in client.list_collections()}
    own = [memory.knowledge.index.collection, memory.memories.collection, memory.history.collection]
    assert all(name.endswith("__" + memory.memories.space.slug) for name in own)  # the embedder's own collections
    assert {f"storyecho_{name}" for name in own} <= names
    history = client.get_collection(f"storyecho_{memory.history.collection}")
    assert history.metadata["storyecho_model_name"] == memory.embedder.model_name
    assert history.count() == 1  # one summary after 5 turns
    assert history.get(include=["metadatas"])["metadatas"][0]["session"] == memory.session_id
    assert not (tmp_path / "data" / ".index").exists()  # nothing was written locally


def test_two_sessions_on_one_chroma_server(chroma_server, tmp_path, embedder):
    from game.memory.vectors.chroma import open_chroma
    from tests.test_memory_invariants import two_sessions_share_one_store

    pack = load_pack(content_root() / "fantasy_001")
    two_sessions_share_one_store(pack, embedder, open_chroma(url=chroma_server))
