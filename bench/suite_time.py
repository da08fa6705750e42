"""Where the test suite's time goes, in CPU seconds as well as wall seconds (``docs/test_suite_time.md``).

A pytest plugin: ``python -m pytest -p bench.suite_time tests/test_walkthroughs.py``. Each test's wall time and
CPU time (this process, and the children it waited for: servers stopped at teardown count then) is taken around
its setup, call and teardown; at the end a table per module is printed and every test is written as JSON to
``bench/results/suite_time.json`` (or ``$SUITE_TIME_OUT``). On a machine other work shares, CPU seconds change
much less than wall seconds, so a change is compared by them.
"""

from __future__ import annotations

import json
import os
import resource
import time
from collections import defaultdict
from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest

_ROWS: list[dict[str, Any]] = []


def _cpu() -> tuple[float, float]:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, children.ru_utime + children.ru_stime


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None, None, None]:
    wall, (own, children) = time.monotonic(), _cpu()
    yield
    own_after, children_after = _cpu()
    _ROWS.append(
        {
            "test": item.nodeid,
            "wall_s": round(time.monotonic() - wall, 3),
            "cpu_s": round(own_after - own, 3),
            "children_cpu_s": round(children_after - children, 3),
        }
    )


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if not _ROWS:
        return
    modules: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0, 0])
    for row in _ROWS:
        module = modules[row["test"].split("::")[0]]
        module[0] += row["wall_s"]
        module[1] += row["cpu_s"]
        module[2] += row["children_cpu_s"]
        module[3] += 1
    terminalreporter.write_line("")
    terminalreporter.write_line("| module | tests | wall s | CPU s | children's CPU s |")
    terminalreporter.write_line("|---|---|---|---|---|")
    for name, (wall, cpu, children, count) in sorted(modules.items(), key=lambda kv: -(kv[1][1] + kv[1][2])):
        terminalreporter.write_line(f"| {name} | {count} | {wall:.1f} | {cpu:.1f} | {children:.1f} |")
    out = Path(os.environ.get("SUITE_TIME_OUT", Path(__file__).parent / "results" / "suite_time.json"))
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(_ROWS, indent=1))
    terminalreporter.write_line(f"(every test in {out})")
