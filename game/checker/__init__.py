"""The content checker: explores what the rules allow from the start and reports soft-locks.

:func:`~game.checker.analysis.check_pack` plays a story through the real rules
(:meth:`game.world.rules.Rules.resolve_turn`, the door every played turn goes
through), from :func:`game.world.state.new_game`, breadth first: each move is
applied to a copy of a state, as the effects a narrator would propose for a
line a player types (``go east``, ``take X``, ``talk to Y``, ``use X``, ``give
X to Y``, ``attack Z``, a story choice), and the action lists it reports are
those lines.

**States** are merged under a canonical key that keeps only what can change
what happens later: where the player is (as the set of places the open exits
reach from there), quests and their done steps, the flags a condition or
objective reads (and every ``defeated:``/``check_failed:``), stats, level,
exp, max HP, talents, the trust of people a condition measures, which items
were taken, the ending. Dropped: the clock and turn, gold (no condition reads
it), HP (every fight is played from full HP: the player can rest or heal
first), achievements. Items are told apart by what they can do: story items
(named by a condition or objective, raising stats, liked by a person whose
trust matters, or breaking an enemy's heavy blow) one by one, weapons and
armour by the best bonus carried, everything else (healing, treasure:
*tokens*) not at all (tokens are only ever gifts for trust).

**Free moves** are made at once after every move: walking into a place not
visited yet, taking what lies there (not items an ending, talent or trigger
names), greeting someone for the first time when that starts no quest. None
can close a door; but one that would complete a quest is held back for the
adversary (below) and left as a move of its own, since the reward makes the
player stronger, which can be just what keeps a lock from happening. Walking
between places already visited changes nothing the rules keep, so a state is
moved there directly and the walk is listed.

**Fights** are played by the rules round by round, from full HP, under
``fight_seeds`` dice (a player who waits a turn gets other dice) and two
tactics (attack; defend, or use an item the enemy is weak to, when it
announces a heavy blow). Each distinct outcome - won or lost, which story
items dropped - is a branch (tokens dropped are taken at their luckiest); a
fight that can be won is not explored lost (losing only sends the player to
the start). Outcomes depend only on the fighter's numbers and are cached.

**Searches.** Exploring every interleaving of a story's independent parts is
far too much (Cyber: over 40,000 states ten decisions in), so each search has
a *focus*: the main search plays the main quests, the quests and items the
endings, choices and exit locks need, and decides the endings; each side
quest the main search does not cover gets a search of its own (the main
quests and that quest). The focus is played move by move; the rest of the
story is left alone by the *adversary* (mode A: the player stays as weak as
the focus allows) and played as well as it can be in *cooperative* mode (C:
side quests started when no check of theirs would fail on an event already
past, each step made when the rules accept it, stat items used, optional
fights fought, tokens given where trust opens something). From each
adversary state a switch leads to cooperative play; endings the adversary's
moves do not reach are searched cooperatively from the start.

Two reductions keep the focus small: of the moves that the rules accept as a
quest step right away, one (main quests first) stands for all - they commute
and only move the story on - while every other move (a fight that completes
nothing yet, a quest started, a stat item used, an item lost, a choice, a
fight with several outcomes) is explored from every state, so the adversary
can make it at any moment, as weak as it then is; and an item is lost (given
away, spent for nothing) only right after it came, at most ``max_losses``
times a path (after a loss only cooperative play is tried), since a loss is
never less harmful earlier. Stat items are used only when they can make a
check or condition pass that fails now; trust gifts only when they would open
something (a choice counts as made at the end).

**Results**, by reverse reachability on the explored graph: each ending
reached, with its shortest action list in decisions; each quest that can be
locked - an adversary state where it is not completed and neither the
adversary's moves nor cooperative play from there complete it, with nothing
unexplored in reach - with the shortest locking sequence; quests no play
completes; items a use spends for nothing. The bounds (``max_states`` per
search, ``max_depth`` decisions) are reported when reached, and nothing is
claimed about a state from which an unexplored one can be reached. Static
checks complete the report: references to nothing (the loader's cross-file
checks) and things the texts mention that do not exist
(:func:`~game.checker.mentions.mentions`).

What this does not see, by design: locks that need more than one loss, or an
adversary that skips steps the rules would accept (it makes them in a fixed
order), or losing a fight on purpose; a narrator's discretionary grants
(``exp_delta``, ``affinity``: the scripted narrator never proposes them).

The modules, in the order a check uses them: :mod:`~game.checker.bounds`
(the default bounds), :mod:`~game.checker.relevance` (what of a state
matters: the key), :mod:`~game.checker.focus` (what one search plays),
:mod:`~game.checker.world` (moves and fights through the rules),
:mod:`~game.checker.graph` (the explored states),
:mod:`~game.checker.cooperative` (mode C),
:mod:`~game.checker.search` (one search), :mod:`~game.checker.analysis`
(:func:`~game.checker.analysis.check_pack`: the searches and what they
prove), :mod:`~game.checker.mentions` (the static text check) and
:mod:`~game.checker.report`. This file imports none of them, so that the
command line reads the bounds without loading the checker.
"""
