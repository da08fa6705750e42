"""Scenario data for issue 32 ("memory answers the question that was asked"): openings and the questions about
them, each with the facts its answer must name (tests/test_memory_questions.py plays them)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Question:
    """A question about the past and what a right answer holds.

    Attributes:
        text: what the player types.
        facts: phrases the answer must contain, every one (compared without case).
        never: phrases a right answer must not contain (what was told, done or met instead).
        evidence: the phrase one of the three best-scored relevant memories of the turn must hold (default: the
            first fact); for the player's name, the Story Bible's player facts (``bible_core``) may hold it instead.
    """

    text: str
    facts: tuple[str, ...]
    never: tuple[str, ...] = ()
    evidence: str = ""
    player_fact: bool = False
    kind: str = field(default="topic")

    @property
    def proof(self) -> str:
        return self.evidence or self.facts[0]


HAL = "My boy, Hal"
"""Old Garrick's words about Hal (content/fantasy_001/npcs.json, old_hunter.topics.hal)."""
ELVES = "I hunted with the elves"
TREE = "The Tree of Life stands at the heart"
WOLVES = "Mist wolves hunt the Fogbound Path"
DENIALS = (
    "You recall",
    "You cannot recall",
    "You search your memory",
    "nothing you know answers that",
    "you do not remember",
    "You have not told anyone your name",
)
"""How a recollection or a denial reads today (game/llm/scripted_talk.py, game/llm/recollection.py): none of it is a
fact of the story, so none of it may be stored as evidence."""
NO_ANSWER = ("You cannot recall", "You search your memory", "you do not remember", "You have not")
"""How the narrator says that it does not know (compared without case)."""

REPRO = [
    "go east",
    "talk to garrick",
    "ask garrick about hal",
    "ask garrick about the wolves",
    "ask garrick about the tree",
    "ask garrick about the elves",
    "go west",
    "go north",
]
"""Issue 32's repro: asked after this, "what did garrick tell me about hal?" answered with the elves and the tree."""
REPRO_QUESTION = Question("what did garrick tell me about hal?", (HAL, "Shadow Swamp"), never=(ELVES, TREE))

ELSEWHERE = [
    "go north",
    "talk to alicia",
    "ask alicia about the circlet",
    "ask alicia about her mother",
    "ask alicia about the peaks",
    "look",
    "go north",
    "talk to elvin",
    "ask elvin about the harp",
    "ask elvin about the guardians",
    "ask elvin about the moon",
    "take tome",
    "go north",
    "look",
    "go south",
    "ask elvin about peace",
    "go south",
    "ask alicia about the tree",
    "go south",
    "go east",
    "talk to nyssa",
    "ask nyssa about the spring",
    "ask nyssa about the water",
    "ask nyssa about the verse",
    "ask nyssa about the sap",
    "look",
    "rest",
    "go west",
    "go north",
    "look",
    "look",
]
"""Thirty turns away from the lodge (from the Fogbound Path), with Alicia, Elvin and Nyssa talking of other things.
("rest" at the spring is refused, and a refused act costs no turn since issue 41: the last look keeps thirty.)"""

EVENTS_OPENING = [
    "go west",
    "talk to rook",
    "ask rook about the charm",
    "go east",
    "go east",
    "talk to garrick",
    "give letter to garrick",
    "take tonic",
    "ask garrick about the wolves",
    "go west",
    "go north",
    "attack wolf",
    "attack",
    "attack",
    "take herb",
    "go north",
    "talk to alicia",
    "ask alicia about the circlet",
    "go south",
]
"""What the rules apply, then questions about it: Rook is the first person talked to, Thieves' Hollow the first place
gone to, the letter given to Garrick, the tonic taken at the lodge, the Mist Wolf fought on the Fogbound Path."""
EVENT_QUESTIONS = [
    Question(
        "what did I give to garrick?",
        ("Hunter's Letter",),
        never=("Heartsap Tonic", "Mist Wolf Pelt", "Healing Herb"),
        kind="gave",
    ),
    Question(
        "who did I fight on the fogbound path?",
        ("Mist Wolf",),
        never=("Charmed Cutthroat", "Old Garrick", "Rook", "Princess Alicia"),
        kind="fought",
    ),
    Question(
        "what did I take from the lodge?",
        ("Heartsap Tonic",),
        never=("Healing Herb", "Hunter's Letter"),
        kind="took",
    ),
    Question(
        "who did I talk to first?",
        ("Rook",),
        never=("Old Garrick", "Princess Alicia"),
        kind="order",
    ),
    Question(
        "what did I do first?",
        ("Thieves' Hollow",),
        never=("Old Hunter's Lodge", "Fogbound Path", "Moonwatch Gate", "Heartsap Tonic"),
        kind="order",
    ),
]

FANTASY_OPENING = [
    "go east",
    "talk to garrick",
    "ask garrick about hal",
    "ask garrick about silas",
    "give letter to garrick",
    "take tonic",
    "say my name is Ren",
    "go west",
    "go north",
    "attack wolf",
    "attack",
    "attack",
    "take herb",
    "go north",
    "talk to alicia",
    "ask alicia about the circlet",
    "go north",
    "talk to elvin",
    "ask elvin about the harp",
    "take tome",
    "use tome",
    "go north",
    "take branch",
    "go south",
    "go south",
    "go east",
    "attack troll",
    "attack",
    "attack",
    "attack",
    "attack",
    "go up",
    "talk to bruno",
    "take draught",
    "use draught",
    "go east",
    "attack harpy",
    "attack",
    "attack",
    "take moonvine",
]
"""The first forty actions of tests/walkthroughs/fantasy_001__victory.txt, with Hal, the letter and a name added."""
FANTASY_QUESTIONS = [
    Question("what did garrick tell me about hal?", (HAL,), never=("The Shadow Lord was a guardian once",)),
    Question("what did I give to garrick?", ("Hunter's Letter",), never=("Lifewood Branch",), kind="gave"),
    Question(
        "what did I take from the lodge?",
        ("Heartsap Tonic",),
        never=("Tome of the Elder Roots", "Giantsblood Draught", "Moonvine Strand"),
        kind="took",
    ),
    Question(
        "who did I fight on the fogbound path?",
        ("Mist Wolf",),
        never=("Granite Troll", "Cliff Harpy"),
        kind="fought",
    ),
    Question(
        "who did I talk to first?",
        ("Old Garrick",),
        never=("Princess Alicia", "Elvin", "Bruno"),
        kind="order",
    ),
    Question(
        "where was I before the granite stair?",
        ("Moonwatch Gate",),
        never=("Hall of Stone", "Moonvine Ledge"),
        kind="order",
    ),
    Question("what is my name?", ("Ren",), player_fact=True, kind="name"),
    Question(
        "what did elvin tell me about the harp?",
        ("frame of Tree of Life branch",),
        never=("I know nothing", "no answer"),
    ),
    Question(
        "what did garrick tell me about hal?",
        (HAL,),
        never=("The Shadow Lord was a guardian once",),
        kind="repeated",
    ),
]

SCIFI_OPENING = [
    "talk to the voice",
    "ask the voice about memories",
    "say my name is Kai",
    "take pipe",
    "go east",
    "talk to echo7",
    "ask echo7 about the voice",
    "ask echo7 about power",
    "go south",
    "attack crawler",
    "attack",
    "attack",
    "take fuse",
    "take gloves",
    "take baton",
    "go east",
    "take stim",
    "attack drone",
    "attack",
    "attack",
    "go east",
    "use fuse",
    "take cell",
    "go down",
    "use cell",
    "go up",
    "go west",
    "go west",
    "go north",
    "go north",
    "take jacket",
    "go up",
    "go north",
    "go west",
    "talk to okabe",
    "ask okabe about keycard",
    "take graft",
    "use graft",
    "go down",
    "talk to nyx",
]
"""The first forty actions of tests/walkthroughs/scifi_001__reboot.txt, with ECHO-7 on the voice and a name added."""
VOICE = "An unregistered signal"
"""ECHO-7's words about The Voice (content/scifi_001/npcs.json, echo7.topics.voice)."""
SCIFI_QUESTIONS = [
    Question("what did echo-7 tell me about the voice?", (VOICE,), never=("Main breaker offline",)),
    Question("what did okabe tell me about the keycard?", ("Tell her Okabe sent you",)),
    Question(
        "what did I take in the maintenance corridor?",
        ("Stim Pack",),
        never=("Ceramic Fuse", "Starter Cell", "Myomer Graft"),
        kind="took",
    ),
    Question(
        "who did I fight in the maintenance corridor?",
        ("Maintenance Drone",),
        never=("Lab Crawler",),
        kind="fought",
    ),
    Question(
        "what did I use in the distribution room?",
        ("Ceramic Fuse",),
        never=("Starter Cell", "Myomer Graft"),
        kind="used",
    ),
    Question(
        "who did I talk to first?",
        ("The Voice",),
        never=("ECHO-7", "Goro Okabe", "Nyx"),
        kind="order",
    ),
    Question(
        "where was I before the black market?",
        ("Neon Crossing",),
        never=("Netrunner Den", "Rain-Slick Alley"),
        kind="order",
    ),
    Question("what is my name?", ("Kai",), player_fact=True, kind="name"),
    Question("what did echo-7 tell me about the voice?", (VOICE,), never=("Main breaker offline",), kind="repeated"),
]
