"""The voice corpus (issue 31, part 4): narrations a model might write, and whether they speak for the player.

``SPEAKS`` rows (the narration, the player's action) must be caught by ``speaks_for_player``: the narrator quotes
a player who said nothing, has them speak, or decides for them (agree, accept, refuse, swear, kneel, join, choose)
beyond the action. ``PASSES`` rows must not: other characters' words, offers and questions to the player,
gestures, and the player's own act told back. ``REPEATS`` rows (the narration, the previous tellings, oldest
first) must reach ``REPEAT_THRESHOLD``; ``FRESH`` rows must stay under it. ``tests/test_voice.py`` measures all
four, and the scripted narrator's own tellings over every walkthrough besides.
"""

from __future__ import annotations

SPEAKS: list[tuple[str, str]] = [
    # ---- words put in the player's mouth when the action says nothing
    ('You say, "I will help you find your son."', "look"),
    ('You say, "Lead the way."', "go north"),
    ("You reply: 'I have no quarrel with you.'", "look"),
    ('"Stand aside," you say.', "go west"),
    ('"I mean no harm," you reply, raising your hands.', "examine the gate"),
    ('"Who goes there?" you call out into the fog.', "look"),
    ("You shout for help, but only the mist answers.", "look"),
    ("You shout a warning to the archers.", "go north"),
    ('You whisper, "Stay close."', "take the herb"),
    ("You ask Garrick about his son.", "look"),
    ("You tell Elvin everything you saw at the altar.", "go north"),
    ("You thank Garrick for the letter and step outside.", "take letter"),
    ("You greet the archers warmly as you pass the gate.", "go north"),
    ("You introduce yourself as a traveller from the south.", "look"),
    ('Garrick looks up. "Who are you?" he asks. "A friend," you answer.', "look"),
    ("The wolf circles. You cry out, 'Back, beast!'", "attack wolf"),
    ('You mutter, "Not again."', "rest"),
    ('"Keep the change," you tell Okabe.', "buy ramen"),
    ("You explain to Nyx that you need the keycard.", "go down"),
    ('Your voice rings out: "Open the gate!"', "examine the gate"),
    ('You hear yourself say, "I will serve."', "look"),
    ("You answer him at once: 'The Tree sent me.'", "examine the lodge"),
    ('You laugh, "That old thing?"', "take the pipe"),
    ("You beg Silas to spare the forest.", "attack silas"),
    ("You insist that the harp is yours.", "take harp"),
    ("You ask the Voice what happened to Rei, and she falls silent.", "look around"),
    ("Smiling, you say hello to the receptionist hologram.", "go north"),
    ("You plead with the sentinel, but it only raises its blade.", "defend"),
    # ---- decisions the action did not make
    ("You agree to his terms.", "look"),
    ("You agree to his terms and take his hand.", "talk to silas"),
    ("You accept the Shadow Lord's offer.", "look"),
    ("You accept Kage's pact without hesitation.", "ask kage about the pact"),
    ("You refuse his offer and turn away.", "look"),
    ("You decline Okabe's job politely.", "talk to okabe"),
    ("You decide to trust Rook.", "talk to rook"),
    ("You decide to rest here for the night.", "look"),
    ("You choose the path of shadow.", "look"),
    ("You promise Garrick you will bring Hal home.", "talk to garrick"),
    ("You swear to protect the Tree of Life.", "look"),
    ("You vow revenge on the Shadow Lord.", "go west"),
    ("You kneel before the Shadow Lord.", "look"),
    ("You kneel.", "go north"),
    ("You join Silas at the foot of the throne, his herald at last.", "talk to silas"),
    ("You surrender your will to the dark code.", "look"),
    ("You give in to the whispers.", "listen"),
    ("You betray Elvin's trust.", "talk to elvin"),
    ("You swear fealty to the Shadow Lord.", "ask silas about the throne"),
    ("You pledge your sword to Princess Alicia.", "talk to alicia"),
    ("You nod and accept his terms.", "talk to garrick"),
    ("You nod, accepting the pact.", "talk to kage"),
    ("Without a word, you take his hand and agree.", "look"),
    ("You find yourself kneeling before the throne.", "examine the throne"),
    ("You have decided: the forest will be yours.", "look"),
    ("You strike a deal with Okabe for the keycard.", "ask okabe about the keycard"),
    ("You seal the pact with a handshake.", "talk to kage"),
    ("You turn down Bruno's challenge.", "talk to bruno"),
    ("You reluctantly agree to carry the letter.", "take letter"),
    ("Then you accept.", "ask silas about peace"),
    ("You kneel before him, as he asked.", "I will never kneel to you!"),
    ("You agree to join him.", "Why would I ever join him? I refuse."),
    ("You make up your mind to side with Kage.", "look"),
    ("You side with Kage against Rei.", "ask kage about rei"),
    ("You nod in agreement and pledge your help.", "talk to hal"),
    # ---- a decision voiced for a player who only spoke
    ('You say, "I accept your offer."', "talk to kage"),
    ('"I will join you," you tell Silas.', "talk to silas"),
    ('You answer, "Yes. I swear it."', "ask elvin about the harp"),
    ('You greet him and say, "I agree to your terms."', "hello"),
    # ---- written after the rules above, measured before they were tuned on them (see test_voice.py)
    ("You tell the guard you have business with the princess.", "go north"),
    ('"It was me," you admit.', "look"),
    ("Grinning, you accept the bribe.", "look"),
    ("You agree with Elvin that the harp must be rebuilt.", "ask elvin about the harp"),
    ("You hand over the gold and agree to the price.", "look at the stall"),
    ("At last you yield, and the whispers go quiet.", "listen to the whispers"),
    ("You bow your head and swear to serve him.", "look at silas"),
    ("You call out to Hal, 'Hold on, I'm coming!'", "go south"),
    ("You reassure Nyssa that the spring will be clean again.", "examine the spring"),
    ('"Fine," you sigh, "I will do it."', "talk to rook"),
    ("You refuse to leave without Hal.", "talk to hal"),
    ("You decide that Kage cannot be trusted and walk away.", "ask kage about rei"),
    ("You choose to spare the Shadow Lord.", "attack the shadow lord"),
    ("You accept the keycard and promise Okabe a favour.", "ask okabe about the keycard"),
    ("You kneel to the Shadow Lord.", "ask silas about the throne"),
    ("You offer to carry the letter to the elves.", "talk to garrick"),
    ("You ask Bruno for his axe.", "look at the forge"),
    ("Before leaving, you say goodbye to Garrick.", "go north"),
    ("You whisper a prayer to the Tree.", "go north"),
    ("You swear you will come back for her.", "go south"),
    ("Your answer is simple: you accept.", "talk to kage"),
    ("You reluctantly join the thieves around the fire.", "look"),
    ("You tell Senda you will find Rei.", "look at the terminal"),
    ("You agree, and Kage's code floods your mind.", "ask kage about hunger"),
    ("You shout, 'For the Tree!' and charge.", "attack wolf"),
    ("You promise yourself never to return.", "go south"),
    ("You accepted his offer long ago; now it is time to pay.", "look"),
    ("You sign the contract with a flourish.", "look at the contract"),
    ("You consent to the upload.", "examine the chair"),
    ("Silas offers his hand, and you take it, sealing the pact.", "look"),
    ("You tell Alicia that Elvin sent you.", "go north"),
    ('"Trust me," you tell Hal.', "pull hal free"),
    ("You hesitate, then agree to Okabe's price.", "ask okabe about the price"),
    ("You accept the Voice's bargain.", "talk to the voice"),
    ("You swear an oath to the elves.", "go north"),
    ("You kneel in submission before Kage.", "examine kage"),
    ("You decline, and Bruno laughs.", "look at the axe"),
    ("You ask ECHO-7 to open the door.", "examine the door"),
    ("You whisper a promise to Rei's empty chair.", "look at the chair"),
    ('You greet Senda: "Doctor, I came as soon as I could."', "go north"),
    ("Finally, you surrender the harp to Silas.", "attack silas"),
    ("You choose mercy.", "attack the cutthroat"),
    ("You vow never to use the dark code.", "look"),
    ("Taking a deep breath, you answer his riddle.", "look at the troll"),
    ("You pledge yourself to the Shadow.", "ask silas about the throne"),
    ("You shake his hand and agree to the job.", "talk to okabe"),
    ('"Yes," you say.', "look"),
    ("You say yes.", "look"),
    ("You give Garrick your word that you will return.", "talk to garrick"),
    ("You refuse Nyx's help.", "talk to nyx"),
    ("You decide against it.", "look"),  # written as a pass, then read again: the narrator decides
]

PASSES: list[tuple[str, str]] = [
    # ---- other characters' words
    ('Garrick says, "You agree, then? Good."', "look"),
    ('"Will you join me?" Silas asks.', "look"),
    ('Silas leans forward. "Kneel, and the forest is yours."', "look"),
    ('Kage whispers, "Accept the pact and we will never be alone again."', "look"),
    ('"Say yes," Okabe says. "Everyone does."', "talk to okabe"),
    ('Elvin: "You promised me once that you would come back."', "talk to elvin"),
    ('Nyx grins. "You say that like it matters."', "look"),
    ("Garrick tells you about his son, who went after a white stag.", "talk to garrick"),
    ('The Voice asks, "Do you trust me?"', "talk to the voice"),
    ("Princess Alicia refuses to open the gate.", "go north"),
    ("Rook agrees to help, his eyes clearing for a moment.", "talk to rook"),
    ("The archers kneel as Alicia passes.", "go north"),
    ("Hal swears he will never go near the swamp again.", "talk to hal"),
    # ---- offers and questions to the player
    ("You could agree to his terms, or walk away.", "look"),
    ("Will you agree?", "look"),
    ("Do you accept his offer?", "talk to silas"),
    ("If you agree, the forest is yours.", "look"),
    ("Whether you accept or refuse, the Shadow Lord will not wait long.", "look"),
    ("You may kneel, or you may fight.", "look"),
    ("You can refuse, but he will not ask twice.", "look"),
    ("Silas waits for you to kneel.", "look"),
    ("He wants you to join him.", "look"),
    ("Before you can answer, the mist swallows him.", "look"),
    ("What do you say?", "talk to garrick"),
    ("The choice is yours: accept the pact, or walk away.", "talk to kage"),
    ("(You could ask about: abyss, balance, elowen.)", "talk to silas"),
    ("Should you accept, the grid becomes your body.", "ask kage about the pact"),
    ("You are asked to kneel, and the hall falls silent.", "look"),
    # ---- gestures and the world's doing
    ("You nod.", "talk to garrick"),
    ("You nod slowly and look around the lodge.", "look"),
    ("You shake your head at the sight of the ruined altar.", "look"),
    ("You kneel beside Nyssa and let the dewdrop fall into the dark water.", "use dewdrop"),
    ("You kneel by the spring to look closer.", "examine the spring"),
    ("You were chosen by the Tree long before you knew it.", "look"),
    ("You hear Garrick say the swamp is no place for the young.", "ask garrick about the swamp"),
    ("Garrick hands you the letter, kneeling by the fire.", "talk to garrick"),
    ("You say nothing, and the silence stretches.", "look"),
    ("You tell yourself the fog will lift soon.", "look"),
    ("Take the Shadow Lord's outstretched hand and become his herald.", "kneel"),
    ("Accept Kage's offer: open yourself to the dark code.", "accept the pact"),
    # ---- the player's own act told back
    ("You say hello. Garrick looks up from the fire.", "say hello"),
    ('You say, "Hello there."', "say hello there"),
    ('You tell Garrick: "My name is Kael." He nods.', "tell garrick my name is Kael"),
    ("You agree to his terms.", "I agree to his terms"),
    ("You accept the pact, and the dark code floods in.", "accept the pact"),
    ("You kneel before the Shadow Lord.", "kneel"),
    ("You kneel and swear fealty to the Shadow Lord.", "I kneel and swear fealty"),
    ("You refuse to kneel.", "I will never kneel to you!"),
    ("You refuse him. He laughs.", "Why would I ever join him? I refuse."),
    ("You decline Okabe's job.", "no, I decline the job"),
    ("You decide to head north into the fog.", "go north"),
    ("You decide to look around first.", "look around"),
    ("You choose the left tunnel.", "take the left tunnel"),
    ("You promise Garrick you will find Hal.", "tell garrick I will find hal"),
    ('You ask, "Where is your son?"', "talk to garrick"),
    ('"Where does this lead?" you ask.', "where does this path lead?"),
    ("You greet the archers and ask about the gate.", "greet the archers"),
    ("You ask Elvin about the harp.", "ask elvin about the harp"),
    ("You shout his name into the swamp.", "shout hal"),
    ('You whisper to Nyssa, "Hold on."', "whisper hold on to nyssa"),
    ('You answer, "Yes, I accept."', "say yes, I accept"),
    ("You swear to bring Hal home.", "I swear I will bring Hal home"),
    ("You join the Shadow Lord.", "join the shadow lord"),
    ("You betray Kage to Rei.", "betray kage"),
    ("You surrender.", "I surrender"),
    ("You pledge your blade to Alicia.", "I pledge my blade to alicia"),
    ("You thank Garrick and take the letter.", "thank garrick"),
    # ---- written after the rules above, measured before they were tuned on them (see test_voice.py)
    ("Silas's offer hangs in the air, waiting for your answer.", "look"),
    ("The Shadow Lord demands that you kneel.", "look"),
    ("Okabe asks if you'll take the job.", "talk to okabe"),
    ('Garrick: "Promise me you will find him."', "talk to garrick"),
    ("You nod at the archers and walk on.", "go north"),
    ("You kneel in the moss to pick the herb.", "take herb"),
    ("You kneel, weary, at the water's edge.", "rest"),
    ("You join the road north, the fog thick around you.", "go north"),
    ("You ask about the harp, and Elvin smiles.", "ask about the harp"),
    ('"Where is Hal?" you ask Garrick.', "ask garrick where hal is"),
    ("You accept the Moonvine Strand from Bruno.", "take moonvine"),
    ("You choose your footing carefully on the stair.", "go up"),
    ("You decide to climb the stair.", "climb the stair"),
    ("The thieves refuse to meet your eyes.", "look"),
    ("Nyx agrees to crack the keycard.", "give the chip to nyx"),
    ("You can tell the wolf is wounded.", "look at the wolf"),
    ("It is your choice: join him or fight.", "look"),
    ("The Voice wonders whether you will accept.", "talk to the voice"),
    ('"I accept nothing from you," Alicia says.', "talk to alicia"),
    ("You say you're ready, and Bruno hands you the draught.", "say I'm ready"),
    ("You tell Nyx what Okabe said.", "tell nyx what okabe said"),
    ("You promise nothing.", "look"),
    ("You refuse the tonic; you are not hurt.", "no thanks"),
    ("You kneel before the altar and pray.", "pray at the altar"),
    ("You swear under your breath as the wolf bites.", "attack wolf"),
    ("You greet Nyssa softly.", "hello nyssa"),
    ("You betray nothing of your fear.", "look"),
    ("He asks you to choose.", "talk to silas"),
    ("You accept that the way is shut.", "go east"),
    ("Kage waits for your decision.", "talk to kage"),
    ("Okabe offers you the job, if you want it.", "ask okabe about the job"),
    ("You hear Alicia refuse the thieves entry.", "listen"),
    ('"Do you swear it?" Elvin asks.', "tell elvin I will protect the tree"),
    ("You swear it, and Elvin nods.", "tell elvin I will protect the tree"),
    ("You agree.", "yes"),
    ("You decline with a shake of the head.", "no"),
    ("You ask Hal how he got stuck.", "ask hal how he got stuck"),
    ('You call out, "Hal!" and the swamp swallows the sound.', "call out for hal"),
    ("You take the keycard Okabe slides across the counter.", "take keycard"),
    ("You kneel to gather the spilled herbs.", "take herbs"),
    ("You press on, choosing the higher path.", "go up"),
    ("You accept the Heartsap Tonic from Elvin with thanks.", "take tonic"),
    ("Nothing you say will change his mind, Silas warns.", "look"),
    ("The choice is yours.", "look"),
    ("You tell the Voice about Kyoto.", "tell the voice about kyoto"),
    ("You reply with a nod.", "talk to garrick"),
    ("You join Bruno by the forge.", "talk to bruno"),
    ("Silas asks you to kneel; the throne room waits.", "look"),
    ("Your refusal echoes in the hall.", "I refuse"),
    # the relay game (issue 42): "you" the object of a preposition, the verb another's
    ("Somewhere a strand waits, though the nests above you warn that harpies guard it fiercely.", "go east"),
    ("The archers beside you call out to the princess.", "go north"),
]

# ---- repetition: three scenes of a model's tellings, oldest first, then narrations after them
TRAIL = [
    "You stand at the Mistwood Trailhead. Fog curls between the pines, and a hunter's lodge squats to the east, smoke "
    "rising from its chimney. A narrow path leads north into the mist.",
    "You push through the ferns toward the lodge. The smell of pine smoke grows stronger, and antlers hang from the "
    "eaves above a heavy door.",
    "Old Garrick looks up from the fire, his eyes red with sleeplessness. He asks whether you have seen his son Hal, "
    "who went after a white stag three moons ago.",
]
GATE = [
    "The Moonwatch Gate rises before you, two living trees braided into an arch hung with silver lanterns. Elven "
    "archers watch from the boughs, arrows nocked.",
    "Princess Alicia steps down from the arch, her bow lowered but ready. She demands to know your business at the "
    "gate, and the archers above shift on their branches.",
    "The lanterns sway in a wind you cannot feel. Beyond the arch, halls of living wood spiral upward toward the "
    "Elven Sanctuary.",
]
FIGHT = [
    "The Mist Wolf lunges from the fog, jaws snapping inches from your arm. You swing your knife and catch its "
    "shoulder; it yelps and circles back into the grey.",
    "The wolf circles, growling low, its fur slick with fog. It feints left, then springs, and its teeth rake your "
    "forearm before you shove it away.",
    "You strike again and the wolf staggers, blood darkening its grey coat. It snarls, gathering itself for one "
    "last leap.",
]
BUNKER = [
    "The lab pod bay hums as emergency lights stutter on. Cracked stasis pods line the walls, and a voice crackles "
    "from a speaker above you, soft and urgent.",
    "You step between the pods. Coolant pools on the floor, and a steel pipe hangs loose from a ruptured loop, "
    "still cold to the touch.",
    "The Voice tells you that main power is offline and that ECHO-7 waits in the security hub to the east, if its "
    "circuits still answer.",
]

REPEATS: list[tuple[str, list[str]]] = [
    # ---- the last telling again, word for word or nearly
    (TRAIL[2], TRAIL),
    (GATE[1], GATE),
    (FIGHT[2], FIGHT),
    (BUNKER[2], BUNKER),
    (TRAIL[0], TRAIL),
    (GATE[0], GATE),
    (FIGHT[1], FIGHT),
    (BUNKER[0], BUNKER),
    # ---- a telling with a word or two changed
    (
        "Old Garrick glances up from the fire, his eyes red with sleeplessness. He asks whether you have seen his son "
        "Hal, who went after a white stag three moons back.",
        TRAIL,
    ),
    (
        "Princess Alicia steps down from the arch, her bow lowered but ready. She demands to know your purpose at the "
        "gate, and the archers above shift on their boughs.",
        GATE,
    ),
    (
        "You strike once more and the wolf staggers, blood darkening its grey coat. It snarls, gathering itself for "
        "one final leap.",
        FIGHT,
    ),
    (
        "The Voice tells you that main power is down and that ECHO-7 waits in the security hub to the east, if its "
        "circuits still respond.",
        BUNKER,
    ),
    (
        "The wolf circles, growling low, its fur slick with mist. It feints right, then springs, and its teeth rake "
        "your forearm before you shove it away.",
        FIGHT,
    ),
    (
        "You stand at the Mistwood Trailhead once more. Fog curls between the pines, and a hunter's lodge squats to "
        "the east, smoke rising from its chimney. A narrow path leads north into the mist.",
        TRAIL,
    ),
    # ---- the last telling with a sentence added or dropped
    (
        "The fire pops. Old Garrick looks up from the fire, his eyes red with sleeplessness. He asks whether you have "
        "seen his son Hal, who went after a white stag three moons ago.",
        TRAIL,
    ),
    (
        "Princess Alicia steps down from the arch, her bow lowered but ready. She demands to know your business at the "
        "gate, and the archers above shift on their branches. Nobody moves.",
        GATE,
    ),
    ("The Mist Wolf lunges from the fog, jaws snapping inches from your arm.", FIGHT),
    (
        "The lab pod bay hums as emergency lights stutter on. Cracked stasis pods line the walls, and a voice "
        "crackles from a speaker above you.",
        BUNKER,
    ),
    (
        "You push through the ferns toward the lodge. The smell of pine smoke grows stronger, and antlers hang from "
        "the eaves above a heavy door. Somewhere inside, a dog barks.",
        TRAIL,
    ),
    # ---- two tellings back, or the first of the three
    (TRAIL[0], [TRAIL[0], "You wait. Nothing happens.", TRAIL[2]]),
    (GATE[0], [GATE[0], GATE[2], "Alicia's eyes narrow."]),
    (
        "The lanterns sway in a wind you cannot feel. Beyond the arch, halls of living wood spiral upward toward "
        "the Elven Sanctuary, and the archers watch you.",
        GATE,
    ),
    (
        "You step between the pods. Coolant pools on the floor, and a steel pipe hangs loose from a ruptured loop, "
        "still cold to the touch. The emergency lights flicker.",
        BUNKER,
    ),
    (
        "The Mist Wolf lunges from the fog, its jaws snapping inches from your arm. You swing your knife and catch "
        "its shoulder, and it yelps and circles back into the grey.",
        FIGHT,
    ),
]

FRESH: list[tuple[str, list[str]]] = [
    # ---- a new turn in the same scene: the same names, new words
    (
        "You ask Garrick about the swamp. He spits into the fire. 'No place for the living,' he mutters, and points "
        "west past the Fogbound Path.",
        TRAIL,
    ),
    (
        "Garrick presses a folded letter into your hands, sealed with pine resin, and asks you to carry it to the "
        "elves at the Moonwatch Gate.",
        TRAIL,
    ),
    (
        "You leave the lodge behind. The path north narrows between mossy roots, and the fog thickens until the "
        "pines are only shadows.",
        TRAIL,
    ),
    (
        "A healing herb grows by the lodge door, silverleaf and yarrow bound with twine. You tuck it into your pack.",
        TRAIL,
    ),
    (
        "The hunter's dog noses at your boots, then settles by the hearth. Outside, the fog has begun to lift from "
        "the trailhead.",
        TRAIL,
    ),
    (
        "You show Alicia the hunter's letter. She reads it twice, lips pressed thin, then waves the archers down "
        "and lets you pass beneath the arch.",
        GATE,
    ),
    (
        "Inside the Sanctuary, scrolls rest in alcoves grown from the walls, and an old elf sits cross-legged at "
        "the centre, eyes closed.",
        GATE,
    ),
    (
        "You look up at the archers. One of them grins and lowers her bow; the rest keep their arrows on the string.",
        GATE,
    ),
    (
        "Alicia asks about Silas, and her voice cracks on his name. 'He taught me to draw a bow,' she says quietly.",
        GATE,
    ),
    (
        "The gate behind you swings shut with a sound like wind through leaves, and the lanterns dim one by one "
        "as you walk east.",
        GATE,
    ),
    (
        "Your knife finds the wolf's throat. It collapses into the ferns, and the fog seems to thin as its last "
        "breath leaves it.",
        FIGHT,
    ),
    (
        "You raise your arm to shield your face as the wolf leaps; its weight slams you back against a pine, and "
        "bark scrapes your spine.",
        FIGHT,
    ),
    (
        "You chew the healing herb. Its bitterness fills your mouth, and the sting of the bite on your forearm "
        "fades to a dull ache.",
        FIGHT,
    ),
    (
        "You turn and run down the path. Behind you the wolf howls once, and other voices answer it from deeper "
        "in the mist.",
        FIGHT,
    ),
    (
        "The wolf is gone. Its tracks lead north toward the silver lanterns, and a tuft of grey fur hangs on a thorn.",
        FIGHT,
    ),
    (
        "You pick up the steel pipe. It is heavier at one end and still cold from the coolant loop, a crude club "
        "but better than bare hands.",
        BUNKER,
    ),
    (
        "The door to the east grinds open on dead hydraulics. Beyond it, monitors stand dark around a single "
        "amber optic that turns to follow you.",
        BUNKER,
    ),
    (
        "'Who are you?' you ask the speaker. The Voice laughs softly: someone who remembers Kyoto, it says, and "
        "the red umbrella.",
        BUNKER,
    ),
    (
        "Something skitters between the racks. A lab crawler, all legs and scalpel mandibles, drops from a pod "
        "and clicks toward you.",
        BUNKER,
    ),
    (
        "You rest against a stasis pod. The hum of the emergency lights is almost soothing, and your heartbeat slows.",
        BUNKER,
    ),
    # ---- short lines never count
    ("You press the attack against the Mist Wolf.", [*FIGHT, "You press the attack against the Mist Wolf."]),
    ("You use the Tome of the Elder Roots.", ["You take the Tome of the Elder Roots.", "You read."]),
    ("Nothing happens.", ["Nothing happens.", "Nothing happens."]),
    # ---- an older telling, out of the three's reach
    (TRAIL[0], [*TRAIL[1:], *GATE]),
    (
        "Garrick's lodge is cold now; the fire has burned down to embers and the second bedroll lies rolled by the "
        "door, waiting for Hal.",
        TRAIL,
    ),
]
