"""Held-out acceptance sentences, set D: sixty things a new player might type, written from the content alone.

Written beside corpus part nine by the same writer, kept outside the repository and judged once: 57 of 60 read right
(57 with the code before this round, 6d19803). Then tuned on.
"""

from tests.language.rows import Natural

F, C, V = "fantasy_001", "scifi_001", "victorian_001"

NATURAL: list[Natural] = [
    # ------------------------------------------------------------------ Misty Forest
    Natural(F, "forest_edge", "ok lets check out that lodge to the east", "act", want=("go hunter_cabin",)),
    Natural(F, "hunter_cabin", "can i buy some of your waybread?", "act", want=("buy waybread old_hunter",)),
    Natural(F, "misty_path", "stab it with my knife", "act", want=("attack mist_wolf",), fight="mist_wolf"),
    Natural(F, "tree_of_life", "grab the drop of sap", "act", want=("take sap_dewdrop",)),
    Natural(
        F,
        "elven_sanctuary",
        "here elvin, the branch from the tree",
        "act",
        want=("give lifewood_branch elvin",),
        carried=("lifewood_branch",),
    ),
    Natural(F, "stone_stair", "fight the troll", "act", want=("attack stone_troll",)),
    Natural(F, "sanctuary_gate", "eat my bread", "act", want=("use waybread",), hp=60),
    Natural(
        F,
        "silver_spring",
        "pour the sap into the spring",
        "act",
        want=("use sap_dewdrop",),
        carried=("sap_dewdrop",),
        flags=("defeated:mist_wolf",),
    ),
    Natural(F, "sanctuary_gate", "alicia, what happened to your mother?", "answer", by="alicia"),
    Natural(F, "stone_hall", "bruno what is this trial of yours?", "answer", by="bruno"),
    Natural(
        F,
        "drowned_grove",
        "hal, how did you end up stuck out here?",
        "answer",
        by="hal",
        flags=("defeated:mire_serpent", "defeated:swamp_wraith"),
    ),
    Natural(F, "forest_edge", "how much gold do i have", "answer", by="rules"),
    Natural(F, "hunter_cabin", "what am i carrying right now?", "answer", by="rules"),
    Natural(F, "forest_edge", "attack the wolf", "refuse", note="no wolf at the trailhead"),
    Natural(F, "hunter_cabin", "drink the giantsblood draught", "refuse", note="the draught is in Bruno's hall"),
    Natural(F, "sanctuary_gate", "go west", "refuse", note="no way west from the gate"),
    Natural(F, "tree_of_life", "i wonder how old this tree really is", "nothing"),
    Natural(F, "shadow_throne", "never. i'd sooner die than serve you", "nothing"),
    Natural(F, "stone_stair", "glance at the claw marks on the boulders", "nothing"),
    Natural(F, "forest_edge", "garrick's letter said to come to his lodge", "nothing"),
    # ------------------------------------------------------------------ Cyber
    Natural(C, "lab_pod_bay", "get out of this pod and head east", "act", want=("go security_hub",)),
    Natural(
        C,
        "storage_area",
        "grab the fuse and the gloves",
        "act",
        want=("take ceramic_fuse", "take insulated_gloves"),
        flags=("defeated:lab_crawler",),
    ),
    Natural(
        C,
        "maintenance_corridor",
        "smash the drone with my pipe",
        "act",
        want=("attack maintenance_drone",),
        carried=("coolant_pipe",),
    ),
    Natural(
        C,
        "distribution_room",
        "put the fuse in the socket",
        "act",
        want=("use ceramic_fuse",),
        carried=("ceramic_fuse", "insulated_gloves"),
    ),
    Natural(C, "security_hub", "install the spare relay", "act", want=("use sensor_relay",), carried=("sensor_relay",)),
    Natural(
        C, "black_market", "sell the pearl to okabe", "act", want=("sell data_pearl okabe",), carried=("data_pearl",)
    ),
    Natural(C, "ripper_clinic", "use my stim", "act", want=("use stim_pack",), hp=50),
    Natural(
        C,
        "neon_crossing",
        "go into the tower",
        "act",
        want=("go tower_lobby",),
        carried=("tower_keycard",),
        flags=("defeated:security_drone",),
    ),
    Natural(C, "rain_alley", "nope, run for it", "act", want=("flee",), fight="cyber_ghoul"),
    Natural(C, "security_hub", "echo, what's wrong with the power?", "answer", by="echo7"),
    Natural(C, "lab_pod_bay", "voice, who are you?", "answer", by="the_voice"),
    Natural(C, "netrunner_den", "nyx, can you get me into the helix tower?", "answer", by="nyx"),
    Natural(C, "ripper_clinic", "doc, what happened to your courier?", "answer", by="doc_hoshino"),
    Natural(C, "black_market", "how many yen have i got left?", "answer", by="rules"),
    Natural(C, "lab_pod_bay", "attack the drone", "refuse", note="no drone in the pod bay"),
    Natural(C, "black_market", "buy the smart pistol from okabe", "refuse", note="Okabe sells stims and salve only"),
    Natural(
        C, "neon_crossing", "i wonder what's at the top of that tower", "nothing", flags=("defeated:security_drone",)
    ),
    Natural(C, "freight_lift", "i really don't want to end up like that technician", "nothing"),
    Natural(
        C,
        "storage_area",
        "the voice said there'd be a fuse down here somewhere",
        "nothing",
        flags=("defeated:lab_crawler",),
    ),
    Natural(C, "backup_generator", "peek at the generator", "nothing", flags=("defeated:lab_crawler",)),
    # ------------------------------------------------------------------ The Drowned Light
    Natural(V, "cliff_road", "walk down to the village", "act", want=("go high_street",)),
    Natural(V, "high_street", "head down to the harbour", "act", want=("go harbour",)),
    Natural(V, "drowned_man", "buy a toddy from the landlady", "act", want=("buy hot_toddy bess",)),
    Natural(V, "crypt", "kill the rat", "act", want=("attack crypt_rat",), fight="crypt_rat"),
    Natural(V, "keepers_cottage", "pick up the journal", "act", want=("take keepers_journal",)),
    Natural(V, "wreckers_cove", "take the lantern", "act", want=("take false_lantern",), flags=("defeated:wrecker",)),
    Natural(V, "harbour", "give jory his nets back", "act", want=("give torn_nets jory",), carried=("torn_nets",)),
    Natural(V, "rock_landing", "go up into the lighthouse", "act", want=("go tower_stair",)),
    Natural(V, "harbour", "jory, when does the tide go out?", "answer", by="jory"),
    Natural(V, "drowned_man", "bess, have you seen the keeper lately?", "answer", by="bess"),
    Natural(V, "chapel", "reverend, what's the story with the bell?", "answer", by="pellow"),
    Natural(V, "keepers_cottage", "ada, where is your father?", "answer", by="ada"),
    Natural(V, "cliff_road", "what have i got in my pockets?", "answer", by="rules"),
    Natural(V, "cliff_road", "attack the dog", "refuse", note="the mastiff is in the net loft"),
    Natural(V, "high_street", "go up", "refuse", note="no way up from the high street"),
    Natural(V, "harbour", "talk to ada", "refuse", note="Ada is on Gull Rock"),
    Natural(V, "lamp_room", "bet corbyn's men took the burner", "nothing"),
    Natural(V, "causeway_head", "i wonder when the tide turns", "nothing"),
    Natural(V, "harbour", "i'm not climbing that ladder", "nothing"),
    Natural(V, "high_street", "look north at the inn sign", "nothing"),
]
