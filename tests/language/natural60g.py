"""Held-out acceptance sentences, set G: sixty things a new player might type, written from the content alone.

Written beside corpus part thirteen by the same writer, kept outside the repository.
"""

from tests.language.rows import Natural

F, C, V = "fantasy_001", "scifi_001", "victorian_001"

NATURAL: list[Natural] = [
    # ------------------------------------------------------------------ Misty Forest
    Natural(F, "forest_edge", "ok heading into the fog, north", "act", want=("go misty_path",)),
    Natural(
        F,
        "hunter_cabin",
        "could i get a couple of herbs off you, one is fine",
        "act",
        want=("buy healing_herb old_hunter",),
    ),
    Natural(F, "thieves_camp", "fine, have at you, cutthroat", "act", want=("attack charmed_bandit",)),
    Natural(F, "elven_sanctuary", "I take the tome from its stand", "act", want=("take tome_of_roots",)),
    Natural(F, "misty_path", "back off and keep my knife up between us", "act", want=("defend",), fight="mist_wolf"),
    Natural(F, "sanctuary_gate", "chew one of my healing herbs", "act", want=("use healing_herb",), hp=65),
    Natural(
        F,
        "shadow_altar",
        "pick up the circlet and go back east",
        "act",
        want=("take elowen_circlet", "go shadow_swamp"),
    ),
    Natural(
        F,
        "drowned_grove",
        "here hal, chew on this herb, it'll help",
        "act",
        want=("give healing_herb hal",),
        flags=("defeated:mire_serpent", "defeated:swamp_wraith"),
        note="Hal is hurt and likes healing herbs",
    ),
    Natural(F, "hunter_cabin", "garrick, where was hal last seen?", "answer", by="old_hunter"),
    Natural(F, "elven_sanctuary", "elvin, what do you know about the shadow lord?", "answer", by="elvin"),
    Natural(F, "thieves_camp", "rook, what's that black charm round your neck?", "answer", by="thief_leader"),
    Natural(
        F, "silver_spring", "nyssa, what is poisoning your spring?", "answer", by="nyssa", flags=("defeated:mist_wolf",)
    ),
    Natural(F, "stone_hall", "how hurt am i right now", "answer", by="rules", hp=70),
    Natural(
        F,
        "hunter_cabin",
        "lift garrick's longbow down from its pegs",
        "refuse",
        note="Garrick's yew bow is not for taking",
    ),
    Natural(F, "forest_edge", "swim across the river", "refuse", note="no river at the trailhead"),
    Natural(
        F, "elven_sanctuary", "hand the sage that silver vine from the ledge", "refuse", note="no moonvine carried"
    ),
    Natural(
        F,
        "drowned_grove",
        "poor hal, stuck down here for weeks",
        "nothing",
        flags=("defeated:mire_serpent", "defeated:swamp_wraith"),
    ),
    Natural(
        F, "shadow_swamp", "i'd rather not wade any further into this muck", "nothing", flags=("defeated:bog_lurker",)
    ),
    Natural(F, "stone_hall", "have a look round bruno's forge", "nothing"),
    Natural(F, "tree_of_life", "i bet the elves were born from this sap", "nothing"),
    # ------------------------------------------------------------------ Cyber
    Natural(C, "security_hub", "down to storage", "act", want=("go storage_area",)),
    Natural(
        C,
        "storage_area",
        "beat that skittering crawler with the pipe",
        "act",
        want=("attack lab_crawler",),
        carried=("coolant_pipe",),
    ),
    Natural(
        C,
        "storage_area",
        "grab the baton off the rack",
        "act",
        want=("take shock_baton",),
        flags=("defeated:lab_crawler",),
    ),
    Natural(
        C,
        "netrunner_den",
        "stick the neural primer on my neck",
        "act",
        want=("use neural_primer",),
        carried=("neural_primer",),
    ),
    Natural(C, "black_market", "okabe I'll take one nano salve", "act", want=("buy nano_salve okabe",), gold=35),
    Natural(C, "rain_alley", "get out of here, back down the lift", "act", want=("flee",), fight="cyber_ghoul"),
    Natural(
        C,
        "freight_lift",
        "put on the kevlar and ride the lift up",
        "act",
        want=("take kevlar_jacket", "go rain_alley"),
        done=("restore_power",),
    ),
    Natural(
        C,
        "backup_generator",
        "grab the relay and the pearl",
        "act",
        want=("take sensor_relay", "take data_pearl"),
        flags=("defeated:lab_crawler",),
    ),
    Natural(C, "ripper_clinic", "doc, what do you need from me?", "answer", by="doc_hoshino"),
    Natural(C, "research_floor", "senda, what is helix hiding down in the vault?", "answer", by="dr_senda"),
    Natural(C, "data_core", "mask man, what's your endgame here?", "answer", by="kage"),
    Natural(C, "black_market", "okabe, who runs this part of the city?", "answer", by="okabe"),
    Natural(C, "maintenance_corridor", "what's my hp at the moment", "answer", by="rules", hp=45),
    Natural(C, "security_hub", "buy some stims from echo", "refuse", note="ECHO-7 sells nothing"),
    Natural(C, "lab_pod_bay", "take the north door out of here", "refuse", note="the pod bay's only door is east"),
    Natural(C, "research_floor", "blast that big sentry mech", "refuse", note="the mech guards the lobby below"),
    Natural(C, "lab_pod_bay", "creepy, eleven empty pods", "nothing"),
    Natural(C, "neon_crossing", "i'm not going near that drone", "nothing"),
    Natural(C, "rain_alley", "smell the rain and the rot", "nothing", flags=("defeated:cyber_ghoul",)),
    Natural(C, "data_core", "maybe the voice was right about all of this", "nothing"),
    # ------------------------------------------------------------------ The Drowned Light
    Natural(V, "high_street", "go south into the chapel", "act", want=("go chapel",)),
    Natural(V, "drowned_man", "take the toddy off the bar", "act", want=("take hot_toddy",)),
    Natural(V, "crypt", "lash out at the rat", "act", want=("attack crypt_rat",)),
    Natural(
        V, "keepers_cottage", "have a biscuit", "act", want=("use ship_biscuit",), carried=("ship_biscuit",), hp=70
    ),
    Natural(
        V,
        "harbour_office",
        "pour myself a brandy from the decanter",
        "act",
        want=("use brandy",),
        carried=("brandy",),
        hp=60,
    ),
    Natural(V, "causeway", "stand firm and brace against it", "act", want=("defend",), fight="drowned_sailor"),
    Natural(V, "rock_landing", "up the lighthouse steps", "act", want=("go tower_stair",)),
    Natural(
        V,
        "drowned_man",
        "sell bess the spanish dollar",
        "act",
        want=("sell spanish_dollar bess",),
        carried=("spanish_dollar",),
    ),
    Natural(V, "harbour_office", "mr corbyn, what happened to the keeper?", "answer", by="corbyn"),
    Natural(V, "chapel", "reverend, why are there so many tablets for men lost at sea?", "answer", by="pellow"),
    Natural(V, "harbour", "jory, what walks the causeway at low water?", "answer", by="jory"),
    Natural(V, "keepers_cottage", "ada, what did you see the night the light went out?", "answer", by="ada"),
    Natural(V, "drowned_man", "how much money do i have on me", "answer", by="rules"),
    Natural(V, "chapel", "I'd like to buy a glass of wine from the reverend", "refuse", note="the vicar sells nothing"),
    Natural(
        V, "cliff_road", "climb down the cliff to the sands", "refuse", note="the only way is east into the village"
    ),
    Natural(V, "tower_stair", "i want a word with jory the boatman", "refuse", note="Jory is on the harbour quay"),
    Natural(V, "harbour", "i don't trust that harbourmaster one bit", "nothing"),
    Natural(V, "cliff_road", "check out the view of gull rock", "nothing"),
    Natural(V, "lamp_room", "so this is where the light should be burning", "nothing"),
    Natural(V, "causeway_head", "jory said the drowned walk out here", "nothing"),
]
