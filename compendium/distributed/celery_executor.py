"""The Celery backend of the executor seam: each engine call is a task on a Redis-brokered worker."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from ..engines.usage import PhaseUsage
from ..errors import EngineError, EngineUnavailable
from ..settings import DistributedSettings
from ..templates.schema import Template
from .base import CompileIdentity, Outcome
from .calls import decode_error, decode_reply, encode_template, task_payload
from .celery_app import QUEUE, TASK, celery_app

POLL_SECONDS = 0.02  # how often the answers of the tasks in flight are read (one MGET for all)
READY_STATES = ("SUCCESS", "FAILURE", "REVOKED")
RESEND_FLOOR_SECONDS = 30.0


def resend_after(visibility_timeout: float) -> float:
    """How long a task may go unanswered before it is sent again: well past the time the broker
    takes to give a killed worker's task to another, so a slow call is not asked twice."""
    return max(4 * visibility_timeout, RESEND_FLOOR_SECONDS)


class CeleryExecutor:
    """Sends tasks and collects their answers with one poller for all the tasks in flight, so
    waiting costs one Redis round trip per tick, however many tasks are out."""

    def __init__(self, settings: DistributedSettings, identity: CompileIdentity):
        self.settings, self.identity = settings, identity
        self.app = celery_app(settings)
        self._pending: dict[str, asyncio.Future[dict[str, Any]]] = {}
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
        answer: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        sent_ids: list[str] = []
        try:
            # A task whose worker died should come back from the broker; if its answer is still
            # missing long after, it is sent again (the first answer wins; a rerun that finds
            # the call stored costs nothing).
            while True:
                sent = await asyncio.to_thread(self.app.send_task, TASK, args=[payload], queue=QUEUE)
                sent_ids.append(sent.id)
                self._pending[sent.id] = answer
                if self._poller is None or self._poller.done():
                    self._poller = asyncio.create_task(self._poll())
                try:
                    data = await asyncio.wait_for(
                        asyncio.shield(answer), resend_after(self.settings.visibility_timeout)
                    )
                    break
                except TimeoutError:
                    continue
        finally:
            for task_id in sent_ids:
                self._pending.pop(task_id, None)
        if "error" in data:
            raise decode_error(data["error"], str(data.get("worker", "?")))
        return Outcome(decode_reply(method, data["reply"]), PhaseUsage(**data.get("usage", {})))

    async def _poll(self) -> None:
        backend = self.app.backend
        while self._pending:
            ids = list(self._pending)
            keys = [backend.get_key_for_task(i) for i in ids]
            try:
                values = await asyncio.to_thread(backend.mget, keys)
            except Exception as exc:
                self._fail_all(EngineUnavailable(f"lost the broker {_public(self.settings.broker)}: {exc}"))
                return
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
            await asyncio.sleep(POLL_SECONDS)

    def _fail_all(self, exc: Exception) -> None:
        for answer in self._pending.values():
            if not answer.done():
                answer.set_exception(exc)
        self._pending.clear()

    async def close(self) -> None:
        if self._poller is not None and not self._poller.done():
            self._poller.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._poller
        self._fail_all(EngineUnavailable("the compile ended before this task's answer came"))
        await asyncio.to_thread(self.app.close)


def _public(url: str) -> str:
    """The broker URL without its password, for messages."""
    head, _, rest = url.partition("://")
    return f"{head}://{rest.rpartition('@')[2]}" if rest else url
