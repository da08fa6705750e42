"""The L1 window's one rule, importable without the memory modules (settings check it)."""

from __future__ import annotations


def check_window(window_messages: int, summary_interval_turns: int) -> None:
    """The consolidation interval must fit in the L1 window, so no turn leaves it unsummarised.

    Raises:
        ValueError: naming both settings.
    """
    if window_messages < 2:
        raise ValueError("window_messages must be at least 2 (one turn)")
    if summary_interval_turns > window_messages // 2:
        raise ValueError(
            f"summary_interval_turns ({summary_interval_turns}) exceeds the turns the working window holds "
            f"({window_messages // 2}); raise window_messages or lower the interval"
        )
