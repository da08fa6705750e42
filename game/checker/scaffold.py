"""``storyecho content new``: a small story that passes ``content check`` at once and plays to its ending.

The starter is the smallest story that shows every part an author needs: a start, four places, a person who gives
the one main quest, an item to find, a place to reach, one ending the quest's completion leads to, lore for the
knowledge base and a worldview. Each file is plain JSON (no comments allowed), so the folder's README.md says what
each file is for and where the reference is (docs/authoring.md). The author renames and rewrites from there.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from game.files import write_synced

ID_RULE = re.compile(r"^[a-z][a-z0-9_]{0,63}$")
ID_WORDS = "a story id is 1 to 64 characters: lowercase letters, digits and _, starting with a letter (e.g. lighthouse)"

SCAFFOLD_INTRO = " begins at a quiet landing. The keeper there has a task for you."
"""How a new story's opening ends (after its title) until its author writes one: an import may replace it."""


class ScaffoldError(ValueError):
    """The story cannot be made there (a bad id, a folder in the way); the message says why."""


def _banner(title: str) -> str:
    """A one-line ASCII banner of ``title`` (a banner is drawn in any terminal)."""
    return f"== {title.upper()} ==".encode("ascii", "replace").decode()[:60]


def _story(story_id: str, title: str, genre: str) -> dict[str, Any]:
    return {
        "id": story_id,
        "title": title,
        "genre": genre,
        "intro": f"{title}{SCAFFOLD_INTRO}",
        "start_node": "landing",
        "persona": (
            f"You are the narrator of {title}, a {genre} story. Describe what the player sees and does in a few "
            "vivid sentences, stay true to the world's facts, and never decide for the player."
        ),
        "player": {"name": "Traveller", "hp": 40, "strength": 10, "agility": 10, "intelligence": 10, "gold": 5},
        "regions": [
            {"id": "home", "name": title, "banner": f"== {title.upper()} ==".encode("ascii", "replace").decode()[:60]}
        ],
        "main_quest_order": ["light_the_beacon"],
        "help_examples": ["talk to the keeper", "go north", "take the lantern", "ask the keeper about the beacon"],
    }


_MAP = {
    "nodes": [
        {
            "id": "landing",
            "name": "The Landing",
            "region": "home",
            "description": "A wooden landing where the road begins. The keeper waits by a cold brazier.",
            "exits": {"north": "road"},
            "npcs": ["keeper"],
            "items": ["bread"],
        },
        {
            "id": "road",
            "name": "The Old Road",
            "region": "home",
            "description": "A worn road between low stone walls. A stair goes down to a cellar.",
            "exits": {"south": "landing", "down": "cellar", "north": "beacon"},
        },
        {
            "id": "cellar",
            "name": "The Cellar",
            "region": "home",
            "description": "A damp cellar under the road, shelves of old tools along its walls.",
            "exits": {"up": "road"},
            "items": ["lantern"],
        },
        {
            "id": "beacon",
            "name": "The Beacon",
            "region": "home",
            "description": "A stone tower at the road's end, its great beacon dark against the sky.",
            "exits": {"south": "road"},
        },
    ]
}

_NPCS = [
    {
        "id": "keeper",
        "name": "The Keeper",
        "role": "keeper of the beacon",
        "trait": "Tired, kind, and worried about the dark.",
        "likes": ["lantern"],
        "dislikes": [],
        "initial_affinity": 10,
        "location": "landing",
        "thresholds": [{"at": 30, "label": "friend", "effect": "speaks freely of the old days"}],
        "dialogue_style": "Short sentences, a soft voice.",
        "greeting": "You came. Good. The beacon has gone dark.",
        "farewell": "Mind the stair.",
        "topics": {
            "beacon": "The beacon at the road's end. Light it, and the ships find their way home.",
            "lantern": "My old lantern is in the cellar under the road. Its flame will light the beacon.",
        },
        "aliases": ["keeper"],
    }
]

_ITEMS = [
    {"id": "lantern", "name": "Old Lantern", "description": "A brass lantern with a steady flame.", "kind": "quest"},
    {
        "id": "bread",
        "name": "Heel of Bread",
        "description": "Dry, but it fills you.",
        "kind": "consumable",
        "consumable": True,
        "use": {"heal": 10},
    },
]

_QUESTS = {
    "main": [
        {
            "id": "light_the_beacon",
            "title": "Light the Beacon",
            "description": "Bring the keeper's lantern to the dark beacon.",
            "giver": "keeper",
            "objectives": [
                {
                    "id": "fetch_lantern",
                    "description": "Find the lantern in the cellar",
                    "kind": "obtain",
                    "target": "lantern",
                },
                {"id": "reach_beacon", "description": "Carry it to the beacon", "kind": "visit", "target": "beacon"},
            ],
            "reward": {"exp": 50, "gold": 10},
        }
    ],
    "side": [],
}

_ENDINGS = [
    {
        "id": "light",
        "title": "The Beacon Burns",
        "description": "The beacon flares, and far out on the water a ship turns for home.",
        "condition": {"quests_completed": ["light_the_beacon"]},
    }
]

_KNOWLEDGE = [
    {
        "id": "beacon_history",
        "category": "history",
        "title": "The beacon",
        "content": "The beacon has guided ships home for a hundred years. It has never been dark this long.",
        "keywords": ["beacon", "ships"],
    },
    {
        "id": "keeper_life",
        "category": "relationship",
        "title": "The keeper",
        "content": "The keeper has tended the beacon since childhood and no longer trusts the cellar stair.",
        "keywords": ["keeper"],
    },
]

_README = """# {title}

A story for StoryEcho, made with `storyecho content new {id}`. Play it with `storyecho play --story {id}`;
check it with `storyecho content check --story {id}` after every change (it plays every path the rules allow and
reports unreachable endings, soft-locks and text that names nothing). Field reference: docs/authoring.md.

| File | What it holds |
|---|---|
| `story.json` | id (= folder name), title, genre, intro, start, narrator persona, player, choices, quest order |
| `map.json` | the places: name, region, description, exits (direction -> place id), who and what is there |
| `npcs.json` | the people: where they are, how they speak, what they like, `topics` they answer about |
| `items.json` | the things: kind (weapon, armor, consumable, quest, treasure), bonuses, what using one does |
| `quests.json` | `main` quests (in `story.json`'s `main_quest_order`) and `side` quests, with objectives |
| `enemies.json` | what can be fought, and where (empty here) |
| `endings.json` | how the story ends: each ending's condition, checked after every turn (highest `priority` first) |
| `talents.json`, `achievements.json` | growth and badges, each with a condition (empty here) |
| `knowledge.json` | lore the narrator is given when a turn touches its keywords |
| `worldview.md` | the world in prose: the narrator's background reading |

An ending chosen by the player: add a choice to `story.json`, e.g.
`{{"id": "stay", "name": "Stay with the keeper", "keywords": ["stay"], "description": "You stay.",
"condition": {{"at_node": "landing"}}}}`; making it sets the flag `choice:stay`, and an ending whose condition is
`{{"flags": ["choice:stay"]}}` follows from it.
"""

_WORLDVIEW = """# {title}

## The world
A {genre} coast where one beacon guides the ships home. The keeper is old, and the beacon has gone dark.

## Tone
Quiet, hopeful, a little lonely.
"""


def pack_files(story_id: str, title: str, genre: str) -> dict[str, str]:
    """The starter story's files, by name."""

    def dump(value: object) -> str:
        return json.dumps(value, indent=2, ensure_ascii=False) + "\n"

    return {
        "story.json": dump(_story(story_id, title, genre)),
        "map.json": dump(_MAP),
        "npcs.json": dump(_NPCS),
        "items.json": dump(_ITEMS),
        "quests.json": dump(_QUESTS),
        "enemies.json": dump([]),
        "endings.json": dump(_ENDINGS),
        "talents.json": dump([]),
        "achievements.json": dump([]),
        "knowledge.json": dump(_KNOWLEDGE),
        "worldview.md": _WORLDVIEW.format(title=title, genre=genre),
        "README.md": _README.format(title=title, id=story_id),
    }


def new_story(folder: Path, story_id: str, *, title: str | None = None, genre: str = "mystery") -> Path:
    """Write the starter story ``story_id`` into ``folder / story_id`` and return that folder.

    Raises:
        ScaffoldError: the id breaks the id rule, or the folder already exists (nothing is overwritten).
    """
    if not ID_RULE.match(story_id):
        raise ScaffoldError(f"{story_id!r} is not a story id: {ID_WORDS}")
    target = folder / story_id
    if target.exists():
        raise ScaffoldError(f"{target} already exists; nothing was written (pick another id, or remove it)")
    name = (title or story_id.replace("_", " ").title()).strip() or story_id
    files = pack_files(story_id, name, genre.strip() or "mystery")
    target.mkdir(parents=True)
    for filename, text in files.items():
        write_synced(target / filename, text.encode("utf-8"))
    return target
