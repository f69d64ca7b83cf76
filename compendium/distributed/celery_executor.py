"""The Celery backend of the executor seam: each engine call is a task on a Redis-brokered worker."""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import Any

from ..engines.usage import PhaseUsage
from ..errors import EngineError, EngineUnavailable
from ..settings import DistributedSettings
from ..templates.schema import Template
from .base import CompileIdentity, Outcome
from .calls import decode_error, decode_reply, describe_call, encode_template, task_payload
from .celery_app import QUEUE, TASK, celery_app
from .lost_tasks import LostTasks

POLL_SECONDS = 0.02  # how often the answers of the tasks in flight are read (one MGET for all)
READY_STATES = ("SUCCESS", "FAILURE", "REVOKED")
RESEND_FLOOR_SECONDS = 30.0
SENDS = 3  # times a task is sent before the compile gives up on it, naming it
CLOSE_SECONDS = 10.0  # at most this long for the poller's last read of the broker
LOST_CHECK_SECONDS = 2.0  # how often tasks out this long are looked for at the broker
LOST_AFTER_CHECKS = 2  # found nowhere this many times in a row: lost (not just between two lists)


def resend_after(settings: DistributedSettings) -> float:
    """How long a task may go unanswered before it is sent again: as configured, else well past
    the time the broker takes to give a killed worker's task to another, so a slow call is not
    asked twice."""
    if settings.resend_after is not None:
        return settings.resend_after
    return max(4 * settings.visibility_timeout, RESEND_FLOOR_SECONDS)


class CeleryExecutor:
    """Sends tasks and collects their answers with one poller for all the tasks in flight, so
    waiting costs one Redis round trip per tick, however many tasks are out."""

    def __init__(self, settings: DistributedSettings, identity: CompileIdentity):
        self.settings, self.identity = settings, identity
        self.app = celery_app(settings)
        self._pending: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self._lost: dict[str, asyncio.Future[None]] = {}  # set when the broker holds the task nowhere
        self._sent_at: dict[str, float] = {}
        self._nowhere: dict[str, int] = {}  # checks in a row that found the task nowhere
        self._finder, self._look = LostTasks(self.app), True
        self._poller: asyncio.Task[None] | None = None
        self._templates: dict[int, tuple[Template, dict[str, Any]]] = {}

    async def ready(self) -> None:
        def ping() -> list[Any]:
            with self.app.connection_for_write() as connection:
                connection.ensure_connection(max_retries=1)  # an absent broker: say so now
            return self.app.control.ping(timeout=3.0, limit=1) or []

        try:
            answered = await asyncio.to_thread(ping)
        except Exception as exc:  # kombu/redis raise their own: the broker is unreachable
            raise EngineUnavailable(
                f"cannot reach the broker {_public(self.settings.broker)}: {exc}",
                hint="start Redis there, or unset COMPENDIUM_BROKER to compile in this process",
            ) from exc
        if not answered:
            raise EngineUnavailable(
                f"no compile worker answers on {_public(self.settings.broker)}",
                hint="start one or more with `compendium worker --tasks` (same COMPENDIUM_BROKER and COMPENDIUM_STORE)",
            )

    async def run(self, method: str, request: Any, template: Template) -> Outcome:
        kept = self._templates.get(id(template))
        if kept is None or kept[0] is not template:  # encoded once per compile, not per task
            kept = self._templates[id(template)] = (template, encode_template(template))
        payload = task_payload(self.identity, method, request, kept[1])
        loop = asyncio.get_running_loop()
        answer: asyncio.Future[dict[str, Any]] = loop.create_future()
        sent_ids: list[str] = []
        wait = resend_after(self.settings)
        lost_ones = 0
        try:
            # A task whose worker died comes back from the broker; one the broker lost (see
            # lost_tasks.py) is sent again as soon as it is found missing, and one whose answer is
            # still missing long after is sent again too (the first answer wins; a rerun that
            # finds the call stored costs nothing). After SENDS sends the compile stops waiting.
            for _ in range(SENDS):
                # Only the id is kept: the AsyncResult, when dropped, unsubscribes from its answer,
                # which must happen while the app is open.
                task_id = (await asyncio.to_thread(self.app.send_task, TASK, args=[payload], queue=QUEUE)).id
                sent_ids.append(task_id)
                lost = self._lost[task_id] = loop.create_future()
                self._pending[task_id], self._sent_at[task_id] = answer, time.monotonic()
                if self._poller is None or self._poller.done():
                    self._poller = asyncio.create_task(self._poll())
                await asyncio.wait((answer, lost), timeout=wait, return_when=asyncio.FIRST_COMPLETED)
                if answer.done():
                    data = answer.result()
                    break
                lost_ones += lost.done()
            else:
                raise await self._unanswered(method, request, sent_ids, wait, lost_ones)
        finally:
            for task_id in sent_ids:
                self._pending.pop(task_id, None)
                self._sent_at.pop(task_id, None)
                self._nowhere.pop(task_id, None)
                if (lost := self._lost.pop(task_id, None)) is not None:
                    lost.cancel()
        if "error" in data:
            raise decode_error(data["error"], str(data.get("worker", "?")))
        return Outcome(decode_reply(method, data["reply"]), PhaseUsage(**data.get("usage", {})))

    async def _unanswered(self, method: str, request: Any, sent_ids: list[str], wait: float,
                          lost: int) -> EngineUnavailable:
        def ping() -> int:
            try:
                return len(self.app.control.ping(timeout=1.0) or [])
            except Exception:  # the broker itself is gone: say so below
                return -1

        answering = await asyncio.to_thread(ping)
        workers = "the broker did not answer" if answering < 0 else f"{answering} worker(s) answer a ping now"
        return EngineUnavailable(
            f"no worker answered the task for {describe_call(method, request)} ({method}), sent {len(sent_ids)} "
            f"times, each waited for up to {wait:.0f} s ({lost} of them lost by the broker; task ids "
            f"{', '.join(sent_ids)}); {workers} on {_public(self.settings.broker)}",
            hint="see the workers' logs; start `compendium worker --tasks` with the compile's COMPENDIUM_BROKER "
                 "and COMPENDIUM_STORE, or raise distributed.resend_after if calls take longer",
        )

    async def _poll(self) -> None:
        checked = time.monotonic()
        while self._pending:
            try:
                await self._collect()
                if self._look and time.monotonic() - checked >= LOST_CHECK_SECONDS:
                    checked = time.monotonic()
                    await self._look_for_lost(checked)
            except Exception as exc:  # the broker is gone, or it holds what no worker wrote
                self._fail_all(EngineUnavailable(f"lost the broker {_public(self.settings.broker)} while "
                                                 f"reading {len(self._pending)} task answers: {exc!r}"))
                return
            await asyncio.sleep(POLL_SECONDS)

    async def _collect(self) -> None:
        """One read of the answers of every task in flight; each one found is handed over."""
        backend = self.app.backend
        ids = list(self._pending)
        if not ids:
            return
        keys = [backend.get_key_for_task(i) for i in ids]
        values = await asyncio.to_thread(backend.mget, keys)
        done = []
        for task_id, key, value in zip(ids, keys, values, strict=True):
            if value is None:
                continue
            meta = backend.decode_result(value)
            state = meta.get("status")
            if state not in READY_STATES:
                continue
            done.append(key)
            answer = self._pending.pop(task_id, None)
            if answer is None or answer.done():  # answered by another copy, or given up
                continue
            if state == "SUCCESS":
                answer.set_result(meta["result"])
            else:  # a bug in the worker, not an engine error: fail this call, say where
                answer.set_exception(EngineError(f"task {task_id} failed on a worker: {meta.get('result')}"))
        if done:
            with contextlib.suppress(Exception):
                await asyncio.to_thread(backend.client.delete, *done)  # collected: no need to keep

    async def _look_for_lost(self, now: float) -> None:
        """Mark the tasks out for a while that the broker has held nowhere at the last checks."""
        out = [i for i, at in self._sent_at.items() if now - at >= LOST_CHECK_SECONDS and i in self._pending]
        if not out:
            return
        try:
            nowhere = await asyncio.to_thread(self._finder.nowhere, out)
        except Exception:  # a Redis without Lua, say: the resend time alone brings lost tasks back
            self._sent_at.clear()
            self._look = False
            return
        for task_id in out:
            count = self._nowhere[task_id] = self._nowhere.get(task_id, 0) + 1 if task_id in nowhere else 0
            lost = self._lost.get(task_id)
            if count >= LOST_AFTER_CHECKS and lost is not None and not lost.done():
                lost.set_result(None)
                self._sent_at.pop(task_id, None)  # looked for no more; an answer still counts

    def _fail_all(self, exc: Exception) -> None:
        for answer in self._pending.values():
            if not answer.done():
                answer.set_exception(exc)
        self._pending.clear()

    async def close(self) -> None:
        self._fail_all(EngineUnavailable("the compile ended before this task's answer came"))
        if self._poller is not None and not self._poller.done():
            # With nothing pending it ends after its current read; cancelled, that read's thread
            # would go on and open a connection after the pools below are closed.
            try:
                await asyncio.wait_for(asyncio.shield(self._poller), CLOSE_SECONDS)
            except TimeoutError:
                self._poller.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await self._poller

        def close() -> None:
            self.app.backend.client.connection_pool.disconnect()  # app.close leaves the results' pool open
            self.app.close()

        await asyncio.to_thread(close)


def _public(url: str) -> str:
    """The broker URL without its password, for messages."""
    head, _, rest = url.partition("://")
    return f"{head}://{rest.rpartition('@')[2]}" if rest else url
