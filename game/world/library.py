"""The stories a player can play: the ones shipped with the game and the ones in the player's stories folder.

The shipped stories live in :func:`game.world.loader.content_root`; the player's in a folder of their own
(``STORYECHO_STORIES_DIR``, the ``stories_dir`` setting, else ``stories`` in the data folder beside the saves), one
sub-folder per story holding a ``story.json``. Every command and screen that finds a story by id asks a
:class:`StoryLibrary`, so ``--story ID``, the title screen, ``content validate`` and ``content check`` see the same
stories. A user story may not take a shipped story's id: that would make ``--story`` ambiguous and could load a
save of the shipped story into another world, so it is left out of the list and named in :attr:`refused`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from game.world.content import ContentError
from game.world.loader import content_root


def story_ids(folder: Path) -> list[str]:
    """The ids of the story folders in ``folder`` (each with a ``story.json``), sorted; none when it is missing."""
    try:
        return sorted(p.name for p in folder.iterdir() if (p / "story.json").is_file())
    except OSError:  # missing, not a folder, unreadable: no stories there
        return []


@dataclass(frozen=True)
class StoryLibrary:
    """The shipped stories beside the player's own.

    Attributes:
        shipped: the folder of the stories that come with the game.
        user: the player's stories folder (None: none).
    """

    shipped: Path
    user: Path | None = None

    @classmethod
    def of(cls, user: Path | None = None, shipped: Path | None = None) -> StoryLibrary:
        """The installed game's stories (or ``shipped``: tests, benchmarks) with the player's folder ``user``."""
        return cls(shipped if shipped is not None else content_root(), user)

    @property
    def shipped_ids(self) -> list[str]:
        return story_ids(self.shipped)

    def _in_user_folder(self) -> list[Path]:
        """Every story folder of the player's folder, shadowed or not (none when it is the shipped folder)."""
        if self.user is None or self.user.resolve() == self.shipped.resolve():
            return []
        return [self.user / story for story in story_ids(self.user)]

    @property
    def user_ids(self) -> list[str]:
        """The player's stories that can be played (a shipped story's id is refused: :attr:`refused`)."""
        shipped = set(self.shipped_ids)
        return [folder.name for folder in self._in_user_folder() if folder.name not in shipped]

    @property
    def refused(self) -> list[str]:
        """One message per story of the player's folder that is left out, and why."""
        shipped = set(self.shipped_ids)
        return [
            f"{folder}: a story shipped with the game has the id {folder.name!r}; "
            "rename the folder and the id in its story.json"
            for folder in self._in_user_folder()
            if folder.name in shipped
        ]

    def ids(self) -> list[str]:
        """Every story that can be played: the shipped ones first, then the player's, each sorted."""
        return self.shipped_ids + self.user_ids

    def is_shipped(self, story_id: str) -> bool:
        return story_id in self.shipped_ids

    def resolve(self, name: str) -> str:
        """The id of the story ``name`` names: its id, or its id or title in any case ("Cyber", "misty forest").

        Raises:
            ContentError: no story, or more than one, goes by that name (the message names the stories there are).
        """
        ids = self.ids()
        if name in ids:
            return name
        wanted = " ".join(name.casefold().replace("_", " ").split())
        named = [story for story in ids if wanted in (story.casefold().replace("_", " "), self._title(story))]
        if len(named) == 1:
            return named[0]
        return self.path(name).name  # raises, naming the stories

    def _title(self, story: str) -> str:
        """The story's title folded for matching (read from its story.json alone; '' when it cannot be read)."""
        try:
            title = json.loads((self.path(story) / "story.json").read_text(encoding="utf-8")).get("title", "")
        except (OSError, ValueError, AttributeError):
            return ""
        return " ".join(str(title).casefold().split())

    def path(self, story_id: str) -> Path:
        """The folder of the story ``story_id``.

        Raises:
            ContentError: no story has that id (the message names the stories there are).
        """
        if story_id in self.shipped_ids:
            return self.shipped / story_id
        if story_id in self.user_ids and self.user is not None:
            return self.user / story_id
        where = f" (your stories folder: {self.user})" if self.user is not None else ""
        raise ContentError(f"no story {story_id!r}; the stories there are: {', '.join(self.ids()) or 'none'}{where}")
