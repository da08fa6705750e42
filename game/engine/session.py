"""A game being played: the turn pipeline plus its save slots.

:class:`GameSession` is what a front end (the headless prompt, ``storyecho
run``, the TUI) talks to. It answers the save commands itself (``save
[NAME]``, ``load [NAME]``, ``saves``; without a name, the quick slot) and
autosaves:

- every ``autosave_every`` turns (the consolidation interval), right after
  the turn that queues the summary. The autosave does not wait for that
  summary: it records those turns as not yet consolidated, and loading it
  queues the consolidation again, so the turn never waits for a model call.
  Nor does the turn wait for the save to be written: it takes the committed
  game state (which the next turn replaces, never changes) and memory's
  promise of an export (``GameMemory.export_later``: memory changes only
  after it is taken), and the ``autosave`` thread exports, encodes and writes
  once the turn is over (``memory/foreground.py``). In a 10,000-turn game
  that was 15-50 ms of every fifth turn (``bench/turn_overhead.py``). A
  failure is told with the next result and to :attr:`GameSession.on_autosave`;
  every other use of the slots (save, load, the list, close) waits for the
  write first, so saves never land out of order;
- on :meth:`close` (quit, end of a run), as a complete save: consolidation
  finished and every vector embedded, so loading it embeds nothing.

A manual or quick save is complete too. Loading replaces the game state and
restores memory from the save (:meth:`Memory.restore`): recall then sees
exactly what the save holds, so an older save never recalls its future.
A save that cannot be written or read leaves the game as it was and says why.

It also keeps this session's turns as moments to return to (``timeline.py``; ``rewind.py``): ``undo`` takes the
last turn back (world state, memory and the autosave as they were before it), ``redo`` plays an undone turn forward
again without asking the narrator, ``retry`` asks the narrator again for the last action from the state and
memory before it (another telling: ``PromptBundle.attempt``), and :meth:`GameSession.branch` saves the game
as it was after any turn of the session to a new slot. A save also carries the game's history
(``saves/history.py``), so ``storyecho slots branch`` can start a branch from any turn of a saved game.

The session keeps the results of its last ``HISTORY_LIMIT`` engine turns in
:attr:`GameSession.history` (for the debug panel: step back through the turns,
chart prompt tokens per block with :meth:`GameSession.prompt_tokens_by_block`).
It is this session's history, not the game's: loading a save keeps it (the
turns played before the load stay viewable, and turn numbers may then repeat),
and it is not saved.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from game.engine import lines
from game.engine.background import Background
from game.engine.kept import branch_at, continue_in, quick_kept, replace_question, write_own
from game.engine.pipeline import TurnPipeline
from game.engine.results import TurnResult, answered, by_block, joined
from game.engine.rewind import REWIND_VERBS, Rewinding
from game.engine.timeline import Moment, Timeline
from game.engine.window import branch_off, follow, let_go, load_question, open_here
from game.language.parser import Command, parse
from game.memory.vectors.foreground import FOREGROUND
from game.saves.errors import what_to_try
from game.saves.format import SaveError, SlotKind, check_against, encode
from game.saves.history import GameHistory
from game.saves.pruning import Written
from game.saves.slots import Loaded, SlotStore, listing
from game.saves.windows import OpenSlot, held_elsewhere
from game.text import clip
from game.world.choices import choices_after
from game.world.state import GameState

log = logging.getLogger("storyecho.session")

AUTOSAVE_SLOT = "autosave"
"""The autosave slot (``storyecho play`` keeps one per story: ``autosave-<story id>``)."""
QUICK_SLOT = "quick"
"""The quick slots' prefix: each story has its own, ``quick-<story id>`` (:attr:`GameSession.quick_slot`)."""
HISTORY_LIMIT = 200
"""Engine turns :attr:`GameSession.history` keeps (the oldest go first)."""
SLOT_VERBS = ("save", "load", "saves")


class GameSession(Rewinding):
    """Plays turns and keeps the game in its slots.

    Args:
        engine: the turn pipeline of the game.
        slots: the save folder, or None to play without saves.
        slot: the slot autosaves go to (``storyecho run --slot NAME``).
        autosave_every: autosave every this many turns (0: never).
    """

    def __init__(
        self,
        engine: TurnPipeline,
        slots: SlotStore | None,
        *,
        slot: str = AUTOSAVE_SLOT,
        autosave_every: int = 5,
    ) -> None:
        self.engine = engine
        self.slots = slots
        self.slot = slot
        self.autosave_every = autosave_every
        self.notices: list[str] = []
        """What the player should be told that no turn says (autosave failures, load notices)."""
        self.on_autosave: Callable[[int, str | None], None] | None = None
        """Called on the autosave thread once an autosave is written (turn, None) or failed (turn, notice)."""
        self._background = Background()
        """The autosave thread, and what it has to tell (the next result tells it)."""
        self._wrote: tuple[str, str, int] | None = None
        """The slot, line and turn this session last wrote its game to (``kept.write_own``)."""
        self.line = self.game_id
        """The line the game goes on on (``saves/lines.py``): a new game's first is named by its id."""
        self.line_held: OpenSlot | None = None
        """The hold on :attr:`line` in this window (``engine/lines.py``), from its first write or its load."""
        self.ancestors: dict[str, int] = {}
        """The lines the game went on from, and the last turn of each its history holds (``engine/lines.py``)."""
        self.opened: OpenSlot | None = None
        """The slot this game is open in, in this window (``window.open_here``), once a front end has opened it."""
        self._retrying: Moment | None = None
        """The telling a retry under way would replace: the game, should the player quit before it is told."""
        self.under_way: str | None = None
        """The turn the narrator is telling now, in words ("turn 7 (go east)", "turn 6 again (look)"); None between
        turns. A quit during it asks first: the turn is dropped (issue 43, item 5: the quit asked nothing)."""
        self._asked: tuple[str, str] | None = None
        """The command and slot the last question was about (``save NAME``, ``load NAME``): the same next says yes."""
        self.history: list[TurnResult] = []
        """The result of every input the engine played, oldest first, at most ``HISTORY_LIMIT``: played turns,
        failed ones (refused input, narrator errors) and meta commands (``help``, ``inventory``: no prompt),
        but not the save commands the session answers itself. Kept across :meth:`load` (see the module
        docstring)."""
        self.timeline = Timeline()
        """This session's turns as moments to return to (undo, redo, retry, branches), and the game's history."""

    # ----------------------------------------------------------------- play
    def play(self, text: str) -> TurnResult:
        """Play one line of player input (a save command or an action); never raises."""
        result = self._play(text)
        result.notices[:0] = self._background.told()
        return result

    def _play(self, text: str) -> TurnResult:
        command = parse(text)
        if command.verb in SLOT_VERBS:
            return self._slot_command(command)
        self._asked = None  # a question about replacing a slot is answered by the very next command only
        if command.verb in REWIND_VERBS:
            return self._rewind_command(command)
        self._begin()
        before = self.engine.state.turn
        try:
            self.under_way = f"turn {before + 1} ({clip(command.text, 60)})"
            results = [self._step(self.engine.play(text), before)]
            while True:  # a line of several acts: one turn each
                before = self.engine.state.turn
                more = self.engine.go_on()
                if more is None:
                    break
                results.append(self._step(more, before))
        finally:
            self.under_way = None
        return results[0] if len(results) == 1 else joined(results)

    def _step(self, result: TurnResult, before: int) -> TurnResult:
        """Keep one played turn (``before``: the turn the game was at): in :attr:`history`, as a moment to return
        to, and in the autosave when due."""
        self._kept(result)
        if result.ok and self.engine.state.turn != before:
            self._committed(result)
            turn = self.engine.state.turn
            if self.autosave_every and (turn % self.autosave_every == 0 or self.engine.state.ending):
                self.autosave()
        return result

    def _kept(self, result: TurnResult) -> None:
        """Keep ``result`` in :attr:`history` (the last ``HISTORY_LIMIT``)."""
        self.history.append(result)
        del self.history[:-HISTORY_LIMIT]

    # ------------------------------------------------------------- timeline
    def _begin(self) -> None:
        """Start the timeline where the game stands, unless it is started."""
        if not self.timeline.started:
            self.timeline.start(Moment(self.engine.state, self.engine.memory.mark(), place=self._place()))

    def _committed(self, result: TurnResult, attempt: int = 0) -> None:
        """Keep the turn just committed as a moment to return to (the result's copy of the state: never changed,
        and :meth:`_forget` finds the result by it)."""
        memory = self.engine.memory.mark()
        self.timeline.record(Moment(result.state, memory, result.action, self._place(), result.narration, attempt))

    def _place(self) -> str:
        node = self.engine.pack.nodes.get(self.engine.state.node)
        return node.name if node else self.engine.state.node

    def branch(self, turn: int, name: str) -> str:
        """Save the game as it was after ``turn`` (a turn of this session) to a new slot ``name``, on a line of its
        own (``kept.branch_at``); the game goes on as it is. Returns what to tell the player.

        Raises:
            SaveError: no such turn in this session, a bad or taken slot name, a failed write.
        """
        self._begin()
        return branch_at(self, self._store(), turn, name)

    def prompt_tokens_by_block(self) -> list[tuple[int, dict[str, int]]]:
        """Prompt tokens per block for each turn of :attr:`history` that composed a prompt (``results.by_block``)."""
        return by_block(self.history)

    def _slot_command(self, command: Command) -> TurnResult:
        name = command.target.strip() or self.quick_slot
        asked, self._asked = self._asked, None
        try:
            question = None
            if command.verb == "save" and name not in (self.quick_slot, self.slot) and ("save", name) != asked:
                question = replace_question(self._store(), name, self.line, self.engine.state.turn)
            elif command.verb == "load" and ("load", name) != asked:
                question = load_question(self._store(), name, self.slot)
            if question:  # a slot the player names is replaced, or a game open elsewhere branched, once asked twice
                self._asked = (command.verb, name)
                return self._told(command, question, True)
            if command.verb == "save":
                message = self.save(name, kind="quick" if name == self.quick_slot else "manual")
            elif command.verb == "load":
                loaded = self.load(name, branch=("load", name) == asked)
                message = "\n".join([*loaded, f"Loaded {name!r}: turn {self.engine.state.turn}."])
            else:
                message = self.list_text()
            ok = True
        except SaveError as exc:
            message, ok = str(exc), False
        return self._told(command, message, ok)

    def _told(self, command: Command, message: str, ok: bool) -> TurnResult:
        """A command answered here, with the choices of the game as it now stands (issue 46: none after a save)."""
        result = answered(command.text, command.verb, message, ok, self.engine.state)
        result.choices = choices_after([], self.engine.state, self.engine.pack)
        return result

    # ---------------------------------------------------------------- slots
    def _store(self) -> SlotStore:
        if self.slots is None:
            raise SaveError("this game is played without saves")
        return self.slots

    def snapshot(self, *, kind: SlotKind = "manual", complete: bool = True) -> bytes:
        """The bytes of a save of the game as it stands (see ``Memory.export_json`` for ``complete``)."""
        memory = self.engine.memory
        data = memory.export_json(complete=complete, parted=True)
        pack, state, game = self.engine.pack, self.engine.state, memory.session_id
        return encode(pack, state, data, kind=kind, session_id=game, line=self.line, history=self._saved())

    def _saved(self) -> dict[str, Any] | None:
        """The game's history as a save keeps it (None before the first turn: the save is where it starts)."""
        return self.timeline.saved() if self.timeline.started else None

    def save(self, name: str, *, kind: SlotKind = "manual", complete: bool = True) -> str:
        """Save to slot ``name``; returns what to tell the player.

        Raises:
            SaveError: a bad name, a full disk, a read-only folder; the
                previous save in the slot is untouched.
        """
        store = self._store()
        store.path(name)  # a bad name fails before any work
        self.wait_for_autosave()
        lines.keep(self)
        data, turn = self.snapshot(kind=kind, complete=complete), self.engine.state.turn
        if name != self.slot:
            if held_elsewhere(store.root, name) is not None:  # another window plays there (issue 43, item 2)
                raise SaveError(f"slot {name!r} is open in another window; save under another name")
            kept = quick_kept(store, name, self.line, turn) if kind == "quick" else ""
            log.info("saved turn %d to %s", turn, store.write(name, data))
            return f"Saved to {name!r} (turn {turn}).{kept}"
        self.slot, path, moved = write_own(store, name, data, self._written(turn), self._wrote)
        self._wrote = (self.slot, self.line, turn)
        follow(self)
        log.info("saved turn %d to %s", turn, path)
        return " ".join(filter(None, [f"Saved to {self.slot!r} (turn {turn}).", moved]))

    def _written(self, turn: int) -> Written:
        """The moment at ``turn`` on the session's line, as its save holds the game's past (``saves/pruning.py``)."""
        first = self.timeline.history.first if self.timeline.started else turn
        return Written(self.line, turn, first, dict(self.ancestors))

    def autosave(self) -> None:
        """Autosave to this session's slot on the autosave thread (see the module docstring); a failure is told
        later (the next result, :attr:`on_autosave`), never raised: the game goes on."""
        if self.slots is None:
            return
        self.wait_for_autosave()  # one at a time, in order
        lines.keep(self)
        state, memory = self.engine.state, self.engine.memory
        written = (memory.session_id, self._written(state.turn))
        job = (self.slot, self._kind(), state, written, memory.export_later(), self._saved())
        self._background.submit(self._write_autosave, *job)

    def _write_autosave(
        self,
        slot: str,
        kind: SlotKind,
        state: GameState,
        ids: tuple[str, Written],
        export: Callable[[], bytes],
        history: dict[str, Any] | None,
    ) -> None:
        FOREGROUND.wait_idle()  # after the turn's own work (foreground.py)
        notice = None
        try:
            (game, written), pack = ids, self.engine.pack
            line = written.line
            data = encode(pack, state, export(), kind=kind, session_id=game, line=line, history=history)
            self.slot, path, moved = write_own(self._store(), slot, data, written, self._wrote)
            self._wrote = (self.slot, line, state.turn)
            follow(self)
            log.info("autosaved turn %d to %s", state.turn, path)
            if moved:
                self._background.tell(moved)
        except Exception as exc:  # noqa: BLE001 - told, never raised: the game goes on
            log.warning("autosave failed: %s", exc)
            why = str(exc) if isinstance(exc, SaveError) else f"{type(exc).__name__}: {exc}"
            notice = f"Autosave failed: {why}. Your game goes on; {what_to_try(exc)}"
            self._background.tell(notice)
        callback = self.on_autosave
        if callback is not None:
            try:
                callback(state.turn, notice)
            except Exception:
                log.exception("the autosave callback failed")

    def wait_for_autosave(self) -> None:
        """Wait until the autosave under way (if any) is written or has failed."""
        self._background.wait()

    @property
    def told_turn(self) -> int:
        """The game's last told turn: during a retry, the telling it would replace (the state is back before it)."""
        told = self._retrying
        return told.turn if told is not None else self.engine.state.turn

    @property
    def quick_slot(self) -> str:
        """This story's quick slot (``quick-<story id>``: issue 43, F5 in one story wrote over another's)."""
        return f"{QUICK_SLOT}-{self.engine.pack.story.id}"

    @property
    def game_id(self) -> str:
        """The game's own id: its memory's session id, which names every line of it (``saves/lines.py``)."""
        return self.engine.memory.session_id

    def load(self, name: str, *, branch: bool = False) -> list[str]:
        """Continue from slot ``name`` (with ``branch``, as a branch of its own: ``window.branch_off``, the game being
        open in another window); returns notices for the player.

        Raises:
            SaveError: no such slot, a damaged one (and its backup), a save
                of another story; the game in progress is left as it was.
        """
        self.wait_for_autosave()
        loaded = self._store().read(name)
        if name != self.slot:
            self._keep_in_play()
        notices = self.resume(loaded)
        if branch:
            return [*notices, branch_off(self, self.slot)]
        if name != self.slot:  # another game in this session's slot is kept, not saved over (``kept.py``)
            return notices + continue_in(self, self.slot, name, "type 'load {slot}' to go back to it")
        return notices + open_here(self)

    def _keep_in_play(self) -> None:
        """Write the game in play to its slot before a load replaces it, so its turns since the last autosave are
        not lost (as closing the Textual game does before its F3 load). Only a game that autosaves, and never over
        a slot of another game (``continue_in`` sets that one aside).

        Raises:
            SaveError: it could not be written; nothing is loaded, and the game in play goes on.
        """
        slots = self.slots
        if not self.autosave_every or slots is None or self.engine.state.turn == 0:
            return
        if slots.exists(self.slot) and slots.game_of(self.slot) != self.game_id:
            return
        try:
            self.save(self.slot, kind=self._kind(), complete=False)
        except SaveError as exc:
            raise SaveError(f"your game could not be saved first, so nothing was loaded: {exc}") from exc

    def resume(self, loaded: Loaded) -> list[str]:
        """Continue from a save already read (checked against this story first). Undo reaches back to the loaded
        turn; in a game that has ended, to the turn before its ending (``Timeline.resume``)."""
        self.wait_for_autosave()
        save = loaded.save
        notices = [*loaded.notices, *check_against(save, self.engine.pack)]
        self.engine.memory.restore(save.memory)
        self.engine.state = save.game
        self._wrote = None  # a moment loaded never writes over a later one it did not write (``kept.write_own``)
        notices += lines.go_on_from(self, save)  # its own line, or a new one when it is not that line's latest
        moment = Moment(save.game.snapshot(), self.engine.memory.mark(), place=save.place)
        places = {node_id: node.name for node_id, node in self.engine.pack.nodes.items()}
        self.timeline.resume(moment, GameHistory.of(save.history, save.game), save.memory, places)
        return notices

    def _kind(self) -> SlotKind:
        return "autosave" if self.slot.startswith(AUTOSAVE_SLOT) else "manual"

    def list_text(self) -> str:
        self.wait_for_autosave()
        return listing(self._store().list())

    def close(self, *, save: bool = True) -> str | None:
        """End the session: a complete save to this session's slot (unless the game is unsaved), then stop memory.
        Background work gets a few seconds (``Memory.closing``): a summary stalled on the endpoint is abandoned."""
        self.engine.memory.closing()
        if (told := self._retrying) is not None:  # quit while the turn is told again: the last telling stands
            self._return_to(told, autosave=False)  # (issue 43: the autosave held turn 5 of 6)
        self._background.stop()
        late = self._background.told()
        notice = late[-1] if late else None  # a failed autosave not told yet, unless the save on quit replaces it
        if save and self.slots is not None and self.engine.state.turn > 0:
            try:
                self.save(self.slot, kind=self._kind())
                notice = None
            except SaveError as exc:
                notice = f"Could not save on quit: {exc}"
                log.warning("%s", notice)
        let_go(self)
        lines.let_go(self)
        self.engine.memory.close()
        return notice
