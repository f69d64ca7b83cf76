"""`compendium worker --tasks`: a Celery worker answering a compile's engine calls from the store."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import dataclasses
import importlib
import os
import socket
import threading
import uuid
from typing import Any

from ..engines.base import Embedder, Engine
from ..engines.usage import PhaseUsage, UsageMeter
from ..errors import CompendiumError, ConfigError, EngineUnavailable
from ..settings import LLMSettings, Settings
from ..storage.base import Store
from ..templates.schema import Template
from .base import CompileIdentity
from .calls import EMBED, decode_request, describe_call, encode_error, encode_reply
from .celery_app import QUEUE, TASK, celery_app


@dataclasses.dataclass
class _Tools:
    engine: Engine
    embedder: Embedder
    usage: UsageMeter


class TaskRuntime:
    """Answers tasks on one event loop of its own, shared by the pool's threads: one store
    connection and one engine (one HTTP client, its limits) per compile identity and template,
    as a compile in one process has. Each answer is kept in the store's response cache before
    the task is acknowledged, so a task run again is answered from there."""

    def __init__(self, settings: Settings, name: str):
        if not settings.store_url:
            raise ConfigError(
                "a task worker needs the compile's store",
                hint="set COMPENDIUM_STORE (e.g. mysql://user:pass@host:3306/compendium) or pass --workspace",
            )
        self.settings, self.name = settings, name
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, name="compendium-tasks", daemon=True)
        self._thread.start()
        self._store: Store | None = None
        self._tools: dict[tuple[CompileIdentity, str], _Tools] = {}
        self._templates: dict[str, Template] = {}
        self._lock: asyncio.Lock | None = None
        # Begun now, so that no first task waits for it (three workers at once, on shared cores).
        self._warming = asyncio.run_coroutine_threadsafe(self._warm(), self.loop)

    async def _warm(self) -> None:
        """What every first task would wait for: the store's connection and the client's modules.
        A failure here is the first task's to report."""
        with contextlib.suppress(Exception):
            if self.settings.llm.base_url or self.settings.embedding.base_url:
                await asyncio.to_thread(importlib.import_module, "openai")
                await asyncio.to_thread(importlib.import_module, "compendium.engines.llm")
            from ..storage.factory import open_store

            self._store = await open_store(self.settings.store_url)

    def warmed(self, seconds: float) -> None:
        """Wait (at most `seconds`) until the store is open and the client's modules loaded."""
        with contextlib.suppress(concurrent.futures.TimeoutError):
            self._warming.result(timeout=seconds)

    def run(self, payload: dict[str, Any]) -> dict[str, Any]:
        """Called by a pool thread: the task's answer (or its error), as JSON. A task that does
        not finish in the time its calls and their retries may take is answered with an error
        naming it, not waited for."""
        running = asyncio.run_coroutine_threadsafe(self.answer(payload), self.loop)
        seconds = task_seconds(self.settings)
        try:
            return running.result(timeout=seconds)
        except concurrent.futures.TimeoutError:
            running.cancel()
            what = describe_call(str(payload.get("method")), decode_request(str(payload.get("method")), payload.get("request")))
            exc = EngineUnavailable(f"worker {self.name}: the task for {what} did not finish within {seconds:.0f} s",
                                    hint="see this worker's log; the model endpoint or the store may not be answering")
            return {"error": encode_error(exc), "worker": self.name}

    async def answer(self, payload: dict[str, Any]) -> dict[str, Any]:
        try:
            identity = CompileIdentity(**payload["identity"])
            method = str(payload["method"])
            template = self._template(payload["template"])
            request = decode_request(method, payload["request"])
            tools = await self._tools_for(identity, template)
            key = f"task:{uuid.uuid4().hex}"  # this task's own line in the shared meter
            with UsageMeter.phase(key):
                if method == EMBED:
                    reply = await tools.embedder.embed(request)
                else:
                    reply = await getattr(tools.engine, method)(request, template)
            usage = tools.usage.by_phase.pop(key, PhaseUsage())
            return {"reply": encode_reply(method, reply), "usage": usage.as_dict(), "worker": self.name}
        except CompendiumError as exc:
            return {"error": encode_error(exc), "worker": self.name}

    def _template(self, data: dict[str, Any]) -> Template:
        fp = str(data["fingerprint"])
        found = self._templates.get(fp)
        if found is None:
            found = self._templates[fp] = Template.model_validate(data["template"])
        return found

    async def _tools_for(self, identity: CompileIdentity, template: Template) -> _Tools:
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:  # built once, even when the pool's first tasks arrive together
            await asyncio.wrap_future(self._warming)
            key = (identity, template.fingerprint)
            if key not in self._tools:
                self._tools[key] = await self._build(identity, template)
            return self._tools[key]

    async def _build(self, identity: CompileIdentity, template: Template) -> _Tools:
        from ..engines.factory import build_embedder, build_engine
        from ..storage.factory import open_store
        from ..storage.response_cache import StoreResponseCache

        if self._store is None:
            self._store = await open_store(self.settings.store_url)
        cache = StoreResponseCache(self._store.for_kb(identity.knowledge_base))
        settings = self._settings_for(identity)
        usage = UsageMeter(None)
        engine = build_engine(settings, template, usage=usage, cache=cache)
        embedder = build_embedder(settings, template, usage=usage, cache=cache)
        for what, ours, theirs in (("model", engine.model, identity.model), ("embedder", embedder.model, identity.embedder)):
            if ours != theirs:
                raise ConfigError(
                    f"worker {self.name} would answer with {what} {ours!r}; the compile uses {theirs!r}",
                    hint="give the workers the compile's COMPENDIUM_LLM_* and COMPENDIUM_EMBED_* settings",
                )
        return _Tools(engine, embedder, usage)

    def _settings_for(self, identity: CompileIdentity) -> Settings:
        settings = self.settings
        if identity.engine == "offline":
            return dataclasses.replace(settings, llm=LLMSettings(base_url=None))
        if not settings.llm.base_url:
            raise EngineUnavailable(
                f"worker {self.name} has no LLM endpoint; the compile asks {identity.model!r}",
                hint="set COMPENDIUM_LLM_BASE_URL and the key in the worker's environment",
            )
        return dataclasses.replace(settings, llm=dataclasses.replace(settings.llm, model=identity.model))

    def close(self) -> None:
        async def shut() -> None:
            await asyncio.wrap_future(self._warming)  # its store is closed below
            for tools in self._tools.values():
                await tools.engine.close()
                await tools.embedder.close()
            if self._store is not None:
                await self._store.close()

        try:
            asyncio.run_coroutine_threadsafe(shut(), self.loop).result(timeout=30)
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self._thread.join(timeout=10)
            if not self.loop.is_running():
                self.loop.close()


def task_seconds(settings: Settings) -> float:
    """The longest one task may take: every try of its call at the client's timeout, the
    backoff between them, and a minute for the store."""
    def worst(timeout: float, retries: int, wait: float) -> float:
        return (retries + 1) * timeout + wait * (2 ** retries) + 60.0

    llm, emb = settings.llm, settings.embedding
    return max(worst(llm.timeout, llm.max_retries, llm.retry_wait), worst(emb.timeout, emb.max_retries, emb.retry_wait))


def worker_name() -> str:
    return f"compendium-{os.getpid()}@{socket.gethostname()}"


def run_task_worker(settings: Settings, *, concurrency: int = 4, name: str | None = None,
                    loglevel: str = "WARNING") -> None:
    """Run a Celery worker for compile tasks until it is stopped (Ctrl-C or SIGTERM).

    `concurrency` tasks run at once in as many threads; their model calls overlap on one event
    loop, so a worker's concurrency is how many model calls it keeps in flight."""
    if not settings.distributed.broker:
        raise ConfigError("no broker configured for the task worker",
                          hint="set COMPENDIUM_BROKER=redis://127.0.0.1:6379/0 (or distributed.broker)")
    name = name or worker_name()
    app = celery_app(settings.distributed)
    runtime = TaskRuntime(settings, name)
    runtime.warmed(60.0)  # before taking tasks: a ping answers once the worker is ready

    @app.task(name=TASK, bind=True, acks_late=True, reject_on_worker_lost=True)  # type: ignore[untyped-decorator]
    def engine_call(task: Any, payload: dict[str, Any]) -> dict[str, Any]:
        return runtime.run(payload)

    try:
        app.worker_main([
            "worker", "--pool", "threads", "--concurrency", str(max(1, concurrency)), "--queues", QUEUE,
            "--hostname", name, "--loglevel", loglevel, "--without-gossip", "--without-mingle",
            "--without-heartbeat",
        ])
    finally:
        runtime.close()
