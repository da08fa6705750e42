"""Each visitor of ``storyecho serve`` their own (issue 45, item 3): a data folder per visitor.

Before, every tab's game used the server's one data folder: Continue offered the last visitor's game, F3 listed
everyone's slots. A visitor is now known by one of:

- a header an authenticating proxy sets (``--user-header X-Forwarded-User``): its value, cleaned to a folder name
  (a value that is not one is hashed), so the proxy's login is the visitor;
- else a signed cookie (``storyecho_visitor``: a random id and its HMAC under a secret kept in the data folder,
  ``.serve-secret``, made once and readable by its owner only): a visitor who clears it, or forges one, is new.

A visitor's games, saves and index live in ``<data dir>/visitors/<id>``; a new folder is seeded with the data
folder's lore index (``.index``, built once by ``storyecho index``) when there is one, so a visitor does not index
the stories again. No server path or process id is shown to a player: the folder is the game's own data folder.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import re
import secrets
import shutil
from collections.abc import Mapping
from pathlib import Path

COOKIE = "storyecho_visitor"
SECRET = ".serve-secret"
_CLEAN = re.compile(r"^[A-Za-z0-9._-]{1,64}$")


class Visitors:
    """Who a request comes from, and their data folder (see the module's docstring)."""

    def __init__(self, base: Path, header: str = "") -> None:
        self.base, self.header = base, header
        base.mkdir(parents=True, exist_ok=True)
        self.secret = _secret(base / SECRET)

    def identify(self, headers: Mapping[str, str], cookies: Mapping[str, str]) -> tuple[str, str]:
        """The visitor's id, and the cookie to set ("" when the request's own is good, or a header names them)."""
        if self.header:
            named = str(headers.get(self.header, "") or "").strip()
            if named:
                return (named if _CLEAN.match(named) and named not in (".", "..") else _hashed(named)), ""
        held = cookies.get(COOKIE, "")
        visitor, _, signature = held.partition(".")
        if visitor and hmac.compare_digest(signature, self._sign(visitor)):
            return visitor, ""
        visitor = secrets.token_hex(12)
        return visitor, f"{visitor}.{self._sign(visitor)}"

    def folder(self, visitor: str) -> Path:
        """The visitor's data folder, made (and seeded with the lore index) the first time."""
        folder = self.base / "visitors" / visitor
        if not folder.exists():
            folder.mkdir(parents=True)
            index = self.base / ".index"
            if index.is_dir():
                shutil.copytree(index, folder / ".index")
        return folder

    def _sign(self, visitor: str) -> str:
        return hmac.new(self.secret, visitor.encode(), hashlib.sha256).hexdigest()[:32]


def _hashed(value: str) -> str:
    return "h-" + hashlib.sha256(value.encode()).hexdigest()[:24]


def _secret(path: Path) -> bytes:
    """The server's signing secret, made once (only its owner may read it)."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return path.read_bytes()
    with os.fdopen(fd, "wb") as out:
        out.write(secrets.token_bytes(32))
    return path.read_bytes()
