"""The content checker's default bounds, importable without the checker (the command line shows them)."""

DEFAULT_MAX_STATES = 20_000
"""States explored per search."""
DEFAULT_MAX_DEPTH = 200
"""Decisions per path."""
DEFAULT_MAX_LOSSES = 1
"""Needed items a weak player may waste per path (0 or 1)."""
DEFAULT_FIGHT_SEEDS = 6
"""Sets of dice each fight is played with."""
