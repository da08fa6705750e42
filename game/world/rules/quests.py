"""Rules of the story: choices, side-quest triggers, objectives and quest completion.

One function decides whether an objective completes (:func:`objective_blocker`):
the rules' own progress pass uses it, and a narrator's ``quest_updates`` are
only claims checked against it after the rules have run, so no narrator can
complete a step out of order, before its event, or past a failed check.
"""

from __future__ import annotations

from dataclasses import dataclass

from game.world.amounts import gains
from game.world.conditions import (
    missing,
    npcs_at,
    objective_check_failures,
    objective_event_happened,
    shortfall,
    unmet,
)
from game.world.content import ContentPack, Objective, Quest
from game.world.rules.core import Outcome, bump_affinity, gain_item, record_event
from game.world.state import GameState, QuestProgress


# ------------------------------------------------------------------ choices
def choose(pack: ContentPack, state: GameState, choice_id: str, out: Outcome) -> None:
    choice = pack.choice(choice_id)
    if choice is None:
        out.reject("choice", choice_id, f"no such choice: {choice_id}")
        return
    if unmet(choice.condition, state, pack):  # told in the story's words: no ending's name, no flags or numbers
        out.reject("choice", choice_id, f"Not yet: {'; '.join(missing(choice.condition, state, pack))}")
        return
    record_event(state, out, f"choice:{choice_id}")
    out.ok("choice", choice_id, f"You choose: {choice.name}.")


def undo_failed_choices(pack: ContentPack, state: GameState, out: Outcome) -> None:
    """A decisive choice that ended nothing is taken back, with the reason.

    Choices are acts of the moment: a failed parley must not turn into the
    peace ending three rooms later when the last condition happens to hold.
    """
    if state.ending:
        return
    for flag in sorted(f for f in out.events if f.startswith("choice:")):
        needing = [e for e in pack.endings if flag in e.condition.flags]
        if not needing:
            continue
        closest = min(needing, key=lambda e: len(unmet(e.condition, state, pack)))
        reasons = "; ".join(missing(closest.condition, state, pack))
        state.flags.remove(flag)
        out.ok("choice_failed", flag, f"It does not succeed yet: {reasons}.")


# ------------------------------------------------------------------- quests
def trigger_side_quest(pack: ContentPack, state: GameState, quest_id: str, out: Outcome) -> None:
    quest = next((q for q in pack.quests.side if q.id == quest_id), None)
    if quest is None or quest.trigger is None:
        out.reject("trigger_side_quest", quest_id, f"no such side quest: {quest_id}")
    elif quest_id in state.quests:
        if not any(a.effect == "quest_started" and a.detail == quest_id for a in out.applied):
            out.reject("trigger_side_quest", quest_id, "that quest has already started")
    elif quest.trigger.npc not in npcs_at(pack, state.node):
        out.reject("trigger_side_quest", quest_id, f"{pack.npcs[quest.trigger.npc].name} is not here")
    elif missing := unmet(quest.trigger.condition, state, pack):
        out.reject("trigger_side_quest", quest_id, "; ".join(missing))
    else:
        start_quest(state, quest, out)


def start_quest(state: GameState, quest: Quest, out: Outcome) -> None:
    state.quests[quest.id] = QuestProgress()
    out.ok("quest_started", quest.id, f"New quest: {quest.title}.")


def step_check_failures(
    pack: ContentPack, state: GameState, kind: str, item_id: str, npc_id: str | None = None
) -> tuple[Objective, str] | None:
    """Failed attribute checks of an open quest step that a ``use`` or ``give`` of this item here would be.

    An item spent on such a step now would leave it impossible to retry, so
    the act is refused instead (and the item kept).
    """
    for quest_id in state.active_quests():
        quest = pack.quest(quest_id)
        for objective in quest.objectives if quest else ():
            if objective.kind != kind or objective.target != item_id:
                continue
            if kind == "use" and objective.at_node not in (None, state.node):
                continue
            if kind == "give" and objective.to_npc != npc_id:
                continue
            if (
                objective_check_failures(objective, state)
                and objective.id not in state.quests[quest_id].objectives_done
            ):
                return objective, lacking(objective, state)
    return None


def lacking(objective: Objective, state: GameState) -> str:
    """What ``objective``'s failed attribute checks lack, in words ("you are not yet strong enough"), never the
    numbers (issue 46: "needs strength 11 < 13"); an author's ``refusal`` says it instead where there is one."""
    return " and ".join(shortfall(objective.requires, state))


def steps_needing(pack: ContentPack, state: GameState, item_id: str) -> list[Objective]:
    """Open quest steps that still need ``item_id`` to be used or given, in quests not yet completed.

    Quests not started yet count too: an item spent before its quest begins
    would leave that quest impossible to finish.
    """
    steps: list[Objective] = []
    for quest in pack.all_quests():
        progress = state.quests.get(quest.id)
        if progress is not None and progress.status == "completed":
            continue
        done = progress.objectives_done if progress else []
        for objective in quest.objectives:
            if objective.kind not in ("use", "give") or objective.target != item_id or objective.id in done:
                continue
            if quest.ordered or not state.has_flag(objective.event_flag()):  # an ordered step may need doing again
                steps.append(objective)
    return steps


def not_yet(objective: Objective, state: GameState) -> str:
    """The line that tells a quest step's check failed: the author's ``refusal``, or the step and what is lacking."""
    if objective.refusal:
        return objective.refusal
    return f"Not yet: {objective.description.rstrip('.')}: {lacking(objective, state)}."


def step_words(objective: Objective) -> str:
    """An objective as the end of a sentence ("use the sensor relay in the security hub")."""
    text = objective.description.rstrip(".")
    return text if text[1:2].isupper() else text[:1].lower() + text[1:]


@dataclass(frozen=True)
class Blocker:
    """Why an objective does not complete now."""

    reason: str
    check_failed: bool = False


def objective_blocker(quest: Quest, index: int, state: GameState, events: set[str]) -> Blocker | None:
    """Why objective ``index`` of an active ``quest`` does not complete now (None: it does).

    - an ordered quest's step needs the previous step done, and its own event
      to happen after it (this turn), except owning an item, which counts any time;
    - the step's event must have happened;
    - its attribute checks must pass;
    - a step whose check once failed must be attempted again, not completed
      later by merely growing stronger.
    """
    objective = quest.objectives[index]
    progress = state.quests[quest.id]
    acted_now = objective.kind == "obtain" or objective.event_flag() in events
    if quest.ordered and index > 0:
        previous = quest.objectives[index - 1]
        if previous.id not in progress.objectives_done:
            return Blocker(f"first: {previous.description.rstrip('.')}")
        if not acted_now:
            return Blocker(f"not done yet: {objective.description}")
    if not objective_event_happened(objective, state):
        return Blocker(f"not done yet: {objective.description}")
    failures = objective_check_failures(objective, state)
    if failures:
        return Blocker(f"attribute check failed: {', '.join(failures)}", check_failed=True)
    if objective.requires and state.has_flag(_check_flag(quest, objective.id)) and not acted_now:
        return Blocker(f"the failed attempt must be made again: {objective.description}")
    return None


def _check_flag(quest: Quest, objective_id: str) -> str:
    return f"check_failed:{quest.id}:{objective_id}"


def progress_quests(pack: ContentPack, state: GameState, out: Outcome) -> bool:
    """Complete every objective the rules allow now, and the quests they finish."""
    changed = False
    for quest_id in state.active_quests():
        quest = pack.quest(quest_id)
        if quest is None:
            continue
        progress = state.quests[quest_id]
        for index, objective in enumerate(quest.objectives):
            if objective.id in progress.objectives_done:
                continue
            blocker = objective_blocker(quest, index, state, out.events)
            if blocker is None:
                _complete_objective(state, quest, objective.id, out)
                changed = True
                continue
            if blocker.check_failed:
                first_time = state.add_flag(_check_flag(quest, objective.id))
                acted_now = objective.kind == "obtain" or objective.event_flag() in out.events
                if acted_now or first_time:
                    out.messages.append(not_yet(objective, state))
            if quest.ordered:
                break
        if len(progress.objectives_done) == len(quest.objectives):
            _complete_quest(pack, state, quest, out)
            changed = True
    return changed


def check_claim(pack: ContentPack, state: GameState, quest_id: str, objective_id: str, out: Outcome) -> None:
    """A narrator's ``quest_updates`` entry: accepted only if the rules completed that objective themselves."""
    value = f"{quest_id}:{objective_id}"
    quest = pack.quest(quest_id)
    progress = state.quests.get(quest_id)
    index = next((n for n, o in enumerate(quest.objectives) if o.id == objective_id), None) if quest else None
    if quest is None or index is None:
        out.reject("quest_updates", value, "no such quest objective")
    elif progress is None:
        out.reject("quest_updates", value, f"quest {quest_id} is not active")
    elif objective_id in progress.objectives_done:
        return  # the rules completed it (this turn or before)
    elif progress.status != "active":
        out.reject("quest_updates", value, f"quest {quest_id} is not active")
    else:
        blocker = objective_blocker(quest, index, state, out.events)
        out.reject("quest_updates", value, blocker.reason if blocker else "not done yet")


def _complete_objective(state: GameState, quest: Quest, objective_id: str, out: Outcome) -> None:
    progress = state.quests[quest.id]
    progress.objectives_done.append(objective_id)
    objective = next(o for o in quest.objectives if o.id == objective_id)
    out.ok("objective_done", f"{quest.id}:{objective_id}", f"Objective complete: {objective.description.rstrip('.')}.")


def _complete_quest(pack: ContentPack, state: GameState, quest: Quest, out: Outcome) -> None:
    state.quests[quest.id].status = "completed"
    state.add_flag(f"quest_done:{quest.id}")
    reward = quest.reward
    state.exp += reward.exp
    state.gold += reward.gold
    parts = gains(pack, exp=reward.exp, gold=reward.gold)
    if reward.item:
        gain_item(state, reward.item)
        parts.append(pack.items[reward.item].name)
    for stat, bonus in reward.stats.items():
        setattr(state, stat, state.stat(stat) + bonus)
        parts.append(f"{stat} +{bonus}")
    for npc, delta in reward.affinity.items():
        bump_affinity(state, npc, delta)
        parts.append(f"{pack.npcs[npc].name} affinity {delta:+d}")
    rewards = f" ({', '.join(parts)})" if parts else ""
    out.ok("quest_completed", quest.id, f"Quest complete: {quest.title}{rewards}.")
    order = pack.story.main_quest_order
    if quest.id in order:
        index = order.index(quest.id)
        if index + 1 < len(order) and order[index + 1] not in state.quests:
            next_quest = pack.quest(order[index + 1])
            assert next_quest is not None
            start_quest(state, next_quest, out)
