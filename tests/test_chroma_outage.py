"""Issue 45, item 5: a Chroma server as an option many players can share, made robust.

Measured before: the client sent no credentials and could not be told a CA; when the server went down, games played
on silently at 11x the time and 7x the CPU while unsent vectors piled up. Now (``game.memory.vectors.remote``) the
player is told once, the server is backed off from (calls fail at once, without a request, between tries), writes
wait in a bounded queue with their vectors, and the queue is sent when the server is back; the client sends
``STORYECHO_CHROMA_TOKEN`` as a bearer token and speaks https to an ``https://`` URL.

A real ``chroma run`` (the chroma CLI) runs on loopback, stopped and started again mid-game. ``chroma run`` has no
TLS and no token check of its own, so the https test puts in front of it what a deployment puts there
(docs/serving.md): a reverse proxy (aiohttp, here) that ends TLS with a certificate made for the test (``openssl``)
and refuses a request without the token.
"""

from __future__ import annotations

import asyncio
import shutil
import socket
import ssl
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from game.config import load_settings
from game.engine.pipeline import TurnPipeline
from game.llm.scripted import ScriptedNarrator
from game.memory.vectors.chroma import CHROMA_TOKEN_ENV, open_chroma
from game.memory.vectors.embedders import EmbeddingSpace
from game.memory.vectors.remote import RemoteStore
from game.memory.vectors.stores import StoreUnavailable
from game.world.loader import content_root, load_pack
from game.world.state import new_game
from tests.test_chroma_server import free_port

TOKEN = "chroma-token-for-tests"


class ChromaServer:
    """A real ``chroma run`` on loopback, on one port and folder, that can be stopped and started again."""

    def __init__(self, folder: Path) -> None:
        self.folder, self.port = folder, free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        chroma = shutil.which("chroma")
        assert chroma, "the chroma CLI comes with the chromadb package"
        log = (self.folder / "chroma.log").open("a")
        command = [
            chroma,
            "run",
            "--path",
            str(self.folder / "server"),
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
        ]
        self.process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
        log.close()
        deadline = time.monotonic() + 60
        while True:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    return
            except OSError:
                assert self.process.poll() is None and time.monotonic() < deadline, (
                    self.folder / "chroma.log"
                ).read_text()
                time.sleep(0.2)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=30)


@pytest.fixture
def chroma(tmp_path: Path) -> Iterator[ChromaServer]:
    server = ChromaServer(tmp_path)
    server.start()
    yield server
    server.stop()


def test_a_server_gone_mid_game_is_said_once_backed_off_from_and_caught_up_with(chroma, tmp_path, embedder):
    pack = load_pack(content_root() / "fantasy_001")
    notices: list[str] = []
    settings = load_settings(data_dir=tmp_path / "data", memory={"chroma_url": chroma.url})
    narrator = ScriptedNarrator(pack)
    from game.wiring import make_memory

    memory = make_memory(settings, pack, narrator, embedder=embedder, say=notices.append)
    store = memory.store
    assert isinstance(store, RemoteStore)
    engine = TurnPipeline(pack, new_game(pack), narrator, memory)
    for action in ["go east", "look"]:
        assert engine.play(action).ok
    memory.flush()

    chroma.stop()  # mid-game
    for action in ["tell garrick I buried my father's ring under the crooked willow", "my name is Ren", "go west"]:
        assert engine.play(action).ok  # the game plays on, by keywords
    memory.flush()
    assert store.down and store.queued_vectors > 0  # what could not be sent waits, vectors and all
    assert sum("cannot be reached" in notice for notice in notices) == 1  # said once, not once a call
    assert store.refused > store.tries  # backed off: most calls were not even tried

    chroma.start()
    deadline = time.monotonic() + 30
    while store.down:  # the next try after the back-off finds it back
        assert time.monotonic() < deadline, "the store never tried the server again"
        assert engine.play("look").ok
        time.sleep(0.5)
    memory.flush()
    assert store.queued_vectors == 0
    assert sum("cannot be reached" in notice for notice in notices) == 1
    assert sum("is back:" in notice for notice in notices) == 1, notices

    reply = engine.play("where did I bury my father's ring?")
    assert reply.trace.memory.retrieval_meta["strategy"] == "hybrid:chroma-http"  # searched by meaning again
    assert "crooked willow" in reply.narration
    memory.close()

    import chromadb

    from game.memory.vectors.chroma import chroma_settings

    other = chromadb.HttpClient(host="127.0.0.1", port=chroma.port, settings=chroma_settings())
    held = other.get_collection(f"storyecho_{memory.memories.collection}").get(include=["metadatas"])
    told = [m for m in held["metadatas"] if m and "turn" in m and int(m["turn"]) == 3]
    assert told  # the turn played while the server was down reached it once it was back


class TokenProxy:
    """What a deployment puts in front of a Chroma server (docs/serving.md): TLS with the test's certificate, a
    request without the bearer token refused (401), every other passed on. Runs on a thread of its own."""

    def __init__(self, upstream: str, certificate: Path, key: Path) -> None:
        self.upstream, self.port = upstream, free_port()
        self.url = f"https://127.0.0.1:{self.port}"
        self.seen: list[str] = []
        self.context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        self.context.load_cert_chain(certificate, key)
        self.loop = asyncio.new_event_loop()
        self.ready = threading.Event()
        threading.Thread(target=self._run, daemon=True).start()
        assert self.ready.wait(30)

    def _run(self) -> None:
        from aiohttp import ClientSession, web

        async def forward(request: web.Request) -> web.Response:
            self.seen.append(request.headers.get("Authorization", ""))
            if request.headers.get("Authorization") != f"Bearer {TOKEN}":
                return web.Response(status=401, text='{"error":"Unauthorized","message":"no token"}')
            headers = {k: v for k, v in request.headers.items() if k.lower() not in ("host", "content-length")}
            async with (
                ClientSession() as session,
                session.request(
                    request.method, self.upstream + request.rel_url.path_qs, headers=headers, data=await request.read()
                ) as answer,
            ):
                body = await answer.read()
                kept = {k: v for k, v in answer.headers.items() if k.lower() == "content-type"}
                return web.Response(status=answer.status, body=body, headers=kept)

        async def serve() -> None:
            app = web.Application()
            app.router.add_route("*", "/{tail:.*}", forward)
            runner = web.AppRunner(app)
            await runner.setup()
            await web.TCPSite(runner, "127.0.0.1", self.port, ssl_context=self.context).start()
            self.ready.set()

        self.loop.run_until_complete(serve())
        self.loop.run_forever()


def _certificate(folder: Path) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 (``openssl``), and its key."""
    certificate, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(
        [
            *("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1"),
            *("-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(key), "-out", str(certificate)),
        ],
        check=True,
        capture_output=True,
    )
    return certificate, key


def test_the_client_speaks_https_and_sends_its_token(chroma, tmp_path, monkeypatch):
    certificate, key = _certificate(tmp_path)
    proxy = TokenProxy(chroma.url, certificate, key)
    monkeypatch.setenv("SSL_CERT_FILE", str(certificate))  # the CA the client trusts (httpx reads it)
    monkeypatch.delenv(CHROMA_TOKEN_ENV, raising=False)
    with pytest.raises(StoreUnavailable):
        open_chroma(url=proxy.url)  # no token: the proxy refuses
    assert proxy.seen and proxy.seen[-1] == ""

    monkeypatch.setenv(CHROMA_TOKEN_ENV, TOKEN)
    store = open_chroma(url=proxy.url)
    space = EmbeddingSpace("test-model", "1")
    store.upsert("memories__test", ["a", "b"], [[1.0, 0.0], [0.0, 1.0]], [{"turn": 1}, {"turn": 2}], space=space)
    assert [hit.id for hit in store.query("memories__test", [0.9, 0.1], 1, space=space)] == ["a"]
    assert proxy.seen[-1] == f"Bearer {TOKEN}" and all(seen == f"Bearer {TOKEN}" for seen in proxy.seen[1:])


def test_what_waits_for_the_server_is_bounded_and_sent_in_order_when_it_is_back(chroma, monkeypatch):
    from game.memory.vectors import remote

    monkeypatch.setattr(remote, "QUEUE_LIMIT", 3)
    now = [0.0]
    notices: list[str] = []
    store = RemoteStore(open_chroma(url=chroma.url), chroma.url, notices.append, clock=lambda: now[0])
    space = EmbeddingSpace("test-model", "1")
    store.upsert("memories__test", ["a"], [[1.0, 0.0]], [{"turn": 1}], space=space)
    chroma.stop()
    store.upsert("memories__test", ["a"], [[0.0, 1.0]], [{"turn": 2}], space=space)  # found down: kept
    store.upsert("memories__test", ["b"], [[0.0, 1.0]], [{"turn": 2}], space=space)  # backing off: kept, no request
    assert store.queued_vectors == 2 and store.accepts(1) and not store.accepts(2)
    with pytest.raises(StoreUnavailable):
        store.upsert("memories__test", ["c", "d"], [[1.0, 0.0], [0.5, 0.5]], [{"turn": 3}] * 2, space=space)
    assert store.queued_vectors == 2  # past the bound: refused (the caller keeps those texts pending)
    with pytest.raises(StoreUnavailable):
        store.query("memories__test", [1.0, 0.0], 1, space=space)
    assert store.tries == 0 and store.refused >= 2  # nothing tried within the back-off

    chroma.start()
    now[0] += remote.BACKOFF_MAX_S
    hits = store.query("memories__test", [0.0, 1.0], 2, space=space)  # the try: the queue goes first, in order
    assert {hit.id for hit in hits} == {"a", "b"} and hits[0].similarity > 0.99
    assert store.queued_vectors == 0 and not store.down and store.accepts(3)
    assert len(notices) == 2 and "cannot be reached" in notices[0] and "is back:" in notices[1]
