"""Run coroutines from Qt slots on the qasync loop, keeping them alive until done.

Host methods already report their failures on ``host.failure``; anything else a panel coroutine
raises is a bug in the panel, and goes to the same notification path instead of being lost.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any

from executors.core.errors import FerrumError, wrap_unexpected


class TaskSet:
    def __init__(self, report: Callable[[FerrumError], None]):
        self._report = report
        self._tasks: set[asyncio.Future] = set()

    def spawn(self, coro: Coroutine[Any, Any, Any], doing: str = "updating the window") -> asyncio.Future:
        task = asyncio.ensure_future(self._guard(coro, doing))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def _guard(self, coro, doing: str):
        try:
            return await coro
        except asyncio.CancelledError:
            raise
        except FerrumError as exc:
            if not getattr(exc, "_ferrum_reported", False):  # the host already showed its own
                exc._ferrum_reported = True
                self._report(exc)
        except Exception as exc:  # noqa: BLE001
            self._report(wrap_unexpected(exc, doing))
        return None

    async def join(self) -> None:
        """Wait for every task spawned so far, and any they spawn (failures are reported, not raised here)."""
        while self._tasks:
            await asyncio.wait(list(self._tasks))

    @property
    def pending(self) -> int:
        return len(self._tasks)

    def cancel_all(self) -> None:
        for task in list(self._tasks):
            task.cancel()
