"""The checker's entry point: :func:`check_pack` runs the searches of a pack and tells what they prove."""

from __future__ import annotations

import time
from collections import deque
from dataclasses import replace

from game.checker.authoring import choice_misreads, lore_size
from game.checker.bounds import DEFAULT_FIGHT_SEEDS, DEFAULT_MAX_DEPTH, DEFAULT_MAX_LOSSES, DEFAULT_MAX_STATES
from game.checker.focus import Focus, focus_of
from game.checker.lines import dead_mentions, stale_lines
from game.checker.mentions import mentions
from game.checker.relevance import raises_stats
from game.checker.report import CheckReport, EndingResult, QuestLock, StaleLine, WastedItem
from game.checker.search import Search
from game.checker.world import COOPERATIVE, World, completed
from game.world.content import ContentPack
from game.world.loader import check_references


def check_pack(
    pack: ContentPack,
    *,
    max_states: int = DEFAULT_MAX_STATES,
    max_depth: int = DEFAULT_MAX_DEPTH,
    max_losses: int = DEFAULT_MAX_LOSSES,
    fight_seeds: int = DEFAULT_FIGHT_SEEDS,
) -> CheckReport:
    """Check ``pack`` for soft-locks and dangling content (see :mod:`game.checker`).

    ``max_states`` bounds each search (one for the main story, one per side
    quest it does not need), ``max_depth`` the decisions of a path.
    """
    started = time.perf_counter()
    report = CheckReport(story=pack.id, title=pack.story.title)
    report.bound = {"max_states": max_states, "max_depth": max_depth, "max_losses": max_losses}
    report.references = check_references(pack)
    report.mentions = mentions(pack)
    report.notes += _static_notes(pack)
    if report.references:
        report.notes.append("the state space was not explored: the pack names things that do not exist")
        report.seconds = time.perf_counter() - started
        return report
    world = World(pack, fight_seeds)
    locks: dict[str, QuestLock] = {}
    stale: dict[tuple[str, str, str], StaleLine] = {}
    dead: dict[tuple[str, str], str] = {}
    for focus in _foci(pack):
        search = Search(world, focus, max_states=max_states, max_depth=max_depth, max_losses=max_losses)
        search.start()
        search.explore(deque([0]))
        if focus.name == "main":
            _endings(pack, search, report)
        _quests(pack, search, report, locks)
        stale_lines(pack, search, stale)
        dead_mentions(pack, search, dead)
        _tally(search, report)
    order = {q.id: i for i, q in enumerate(pack.all_quests())}
    report.locks = sorted(locks.values(), key=lambda lock: order[lock.quest])
    report.stale = list(stale.values())
    report.notes += list(dead.values())
    for item_id, (lines, node) in sorted(world.wasted.items(), key=lambda kv: len(kv[1][0])):
        report.wasted.append(WastedItem(item_id, pack.items[item_id].name, node, lines))
    report.seconds = time.perf_counter() - started
    return report


def _foci(pack: ContentPack) -> list[Focus]:
    """The main search (main quests, endings; any item it needs may be lost), then one per other side quest."""
    main = focus_of(pack, "main", set(pack.story.main_quest_order), endings=True)
    groups = [main] + [focus_of(pack, q.id, {q.id}, endings=False) for q in pack.quests.side if q.id not in main.quests]
    groups[0] = replace(main, targets=main.quests, losable=main.items)
    return groups


def _endings(pack: ContentPack, search: Search, report: CheckReport) -> None:
    """Each ending, highest priority first: reached (with its shortest action list) or not."""
    for ending in sorted(pack.endings, key=lambda e: -e.priority):
        eid = ending.id
        sid = search.cooperative_first(lambda s, eid=eid: s.ending == eid)  # type: ignore[misc]
        result = EndingResult(eid, ending.title, sid is not None)
        if sid is not None:
            result.actions = search.path(sid)
        elif search.truncated:
            report.notes.append(f"ending {eid!r} was not reached within the bound")
        report.endings.append(result)


def _quests(pack: ContentPack, search: Search, report: CheckReport, locks: dict[str, QuestLock]) -> None:
    """The search's target quests: those no play completes, and the locks of those some play does."""
    lockable: list[str] = []
    for quest_id in sorted(search.focus.targets):
        quest = pack.quest(quest_id)
        assert quest is not None
        qid = quest_id
        if search.cooperative_first(lambda s, qid=qid: completed(s, qid)) is None:  # type: ignore[misc]
            if search.truncated:  # within a bound, "not completed" proves nothing
                report.notes.append(f"quest {quest.id!r} was not completed within the bound")
            else:
                report.never_completable.append(f"{quest.title} ({quest.id})")
        else:
            lockable.append(quest_id)
    needs = {q: focus_of(pack, q, {q}, endings=False).items for q in lockable}
    for quest_id, sid in search.locks(lockable, needs).items():
        quest = pack.quest(quest_id)
        assert quest is not None
        why = f" ({search.losses[sid]} avoidable loss)" if search.losses[sid] else ""
        # free moves cannot close a door: the quest is locked before them already
        locks[quest_id] = QuestLock(quest.id, quest.title, search.path(sid, trim=True), why)


def _tally(search: Search, report: CheckReport) -> None:
    """What the search explored, added to the report."""
    report.states += len(search.states)
    report.edges += sum(len(s) for s in search.succ)
    report.max_depth_reached = max(report.max_depth_reached, max(search.depth))
    report.complete &= not search.truncated
    report.searches.append(
        f"{search.focus.name}: {len(search.states)} states "
        f"({sum(m == COOPERATIVE for m in search.mode)} cooperative)" + (" - bound reached" if search.truncated else "")
    )


def _static_notes(pack: ContentPack) -> list[str]:
    out = choice_misreads(pack) + lore_size(pack)
    for item in pack.items.values():
        if not item.consumable and raises_stats(item):
            out.append(f"item {item.id!r} raises stats and is not consumable: it can be used again and again")
    return out
