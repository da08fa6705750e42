"""The foreground gate: background jobs start only once the turn thread's own work is over (foreground.py)."""

from __future__ import annotations

import threading
import time

from game.memory.vectors.foreground import Foreground


def test_a_job_waits_for_the_busy_block_and_the_quiet_time_after_it():
    gate = Foreground()
    order: list[str] = []
    inside, leave = threading.Event(), threading.Event()

    def turn() -> None:
        with gate.busy():
            inside.set()
            assert leave.wait(10)
            order.append("turn done")

    def job() -> None:
        assert gate.wait_idle(timeout=10)
        order.append("job")

    playing = threading.Thread(target=turn)
    playing.start()
    assert inside.wait(10)
    background = threading.Thread(target=job)
    background.start()
    time.sleep(0.2)
    assert order == [] and gate.busy_now  # held back while the turn works
    ended = time.monotonic()
    leave.set()
    playing.join(10)
    background.join(10)
    assert order == ["turn done", "job"]
    assert time.monotonic() - ended >= 0.04  # and the quiet time after it (QUIET_S)


def test_a_busy_thread_that_waits_for_background_work_lets_it_run():
    """Inside busy, waiting() lets the job the turn waits for start at once: no deadlock, no quiet time."""
    gate = Foreground()
    done = threading.Event()

    def job() -> None:
        gate.wait_idle(timeout=30)
        done.set()

    with gate.busy():
        threading.Thread(target=job).start()
        time.sleep(0.1)
        assert not done.is_set()
        started = time.monotonic()
        with gate.waiting():
            assert done.wait(5)
        assert time.monotonic() - started < 2  # not the job's 30 s bound
        assert gate.busy_now  # busy again after the wait


def test_the_wait_is_bounded_and_a_busy_thread_never_waits_for_itself():
    gate = Foreground()
    with gate.busy():
        with gate.busy():  # nested: still one busy thread
            assert gate.wait_idle(timeout=5)  # a job run inline on the turn thread: no wait for itself
        result: list[bool] = []
        other = threading.Thread(target=lambda: result.append(gate.wait_idle(timeout=0.2)))
        other.start()
        other.join(5)
        assert result == [False]  # gave up after its bound
    assert not gate.busy_now
    assert gate.wait_idle(timeout=1, quiet=0)
