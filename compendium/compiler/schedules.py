"""Cron schedules that enqueue compiles of a knowledge base; any worker may fire them, once."""

from __future__ import annotations

import secrets
import time
from typing import Any

from croniter import CroniterBadDateError, CroniterError, croniter

from ..errors import InputError, NotFound
from ..storage.base import Store
from ..storage.records import Job, Schedule
from .jobs import enqueue


def _system(store: Store) -> Store:
    from ..tenancy import system_store

    return system_store(store)


def _cron_field(value: str) -> str:
    item = rf"(?:\*|{value}|{value}-{value})(?:/[1-9][0-9]?)?"
    return rf"{item}(?:,{item})*"


def _names(*names: str) -> str:
    return "|".join("".join(f"[{c.upper()}{c}]" for c in name) for name in names)


# The cron expressions a schedule takes, as the API schema states them: five fields (minute,
# hour, day of month, month, day of week; numbers, *, ranges, steps, lists, month and day
# names) or one of the @ names. Every expression it matches is one croniter reads.
CRON_PATTERN = (
    r"^ *(?:@(?:yearly|annually|monthly|weekly|daily|midnight|hourly)|"
    + " +".join(_cron_field(v) for v in (
        r"(?:[0-5]?[0-9])", r"(?:[01]?[0-9]|2[0-3])", r"(?:0?[1-9]|[12][0-9]|3[01])",
        rf"(?:0?[1-9]|1[0-2]|{_names('jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec')})",
        rf"(?:[0-7]|{_names('sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat')})",
    ))
    + r") *$"
)
# The next run of an expression naming no date that exists ('0 0 30 2 *'): never.
NEVER = 253402300799.0  # 9999-12-31T23:59:59Z


def next_run(cron: str, after: float) -> float:
    """The first time after `after` (epoch seconds, UTC) that `cron` names; NEVER when it
    names no date that exists (a valid expression, as in any cron: it never fires)."""
    try:
        return float(croniter(cron, after).get_next(float))
    except CroniterBadDateError:
        return NEVER
    except (CroniterError, ValueError, TypeError) as exc:
        raise InputError(f"not a valid cron expression {cron!r}: {exc}", field="cron") from exc


def check_cron(cron: str) -> str:
    if not isinstance(cron, str) or not cron.strip() or not croniter.is_valid(cron.strip()):
        raise InputError(
            f"not a valid cron expression {cron!r} (five fields, e.g. '0 3 * * *')", field="cron"
        )
    return cron.strip()


async def create_schedule(
    store: Store, *, tenant: str, knowledge_base: str, template: str, cron: str,
    enabled: bool = True, now: float | None = None,
) -> Schedule:
    now = time.time() if now is None else now
    cron = check_cron(cron)
    schedule = Schedule(
        id=f"sch{int(now * 1000):013x}{secrets.token_hex(3)}", tenant=tenant,
        knowledge_base=knowledge_base, template=template, cron=cron, enabled=enabled,
        next_run_at=next_run(cron, now), created_at=now,
    )
    await _system(store).upsert([schedule])
    return schedule


async def get_schedule(store: Store, tenant: str, knowledge_base: str, schedule_id: str) -> Schedule:
    found = await _system(store).get(Schedule, [schedule_id])
    if not found or found[0].tenant != tenant or found[0].knowledge_base != knowledge_base:  # type: ignore[attr-defined]
        raise NotFound(f"no schedule {schedule_id!r}", field="schedule_id")
    return found[0]  # type: ignore[return-value]


async def update_schedule(
    store: Store, schedule: Schedule, changes: dict[str, Any], *, now: float | None = None
) -> Schedule:
    """Change cron, template or enabled; a new cron (or re-enabling) recomputes the next run."""
    now = time.time() if now is None else now
    if "cron" in changes and changes["cron"] is not None:
        schedule.cron = check_cron(changes["cron"])
        schedule.next_run_at = next_run(schedule.cron, now)
    if changes.get("template"):
        schedule.template = changes["template"]
    if changes.get("enabled") is not None:
        if changes["enabled"] and not schedule.enabled:
            schedule.next_run_at = next_run(schedule.cron, now)
        schedule.enabled = bool(changes["enabled"])
    await _system(store).upsert([schedule])
    return schedule


async def list_schedules(store: Store, tenant: str, knowledge_base: str) -> list[Schedule]:
    where = {"tenant": tenant, "knowledge_base": knowledge_base}
    return [s async for s in _system(store).scan(Schedule, where)]  # type: ignore[misc]


async def delete_schedule(store: Store, schedule: Schedule) -> None:
    await _system(store).delete(Schedule, {"id": schedule.id})


async def fire_due_schedules(store: Store, *, now: float | None = None) -> list[Job]:
    """Enqueue a compile for every enabled schedule whose time has come, and move each to its
    next time. Safe with many workers: each due schedule is claimed inside a transaction."""
    now = time.time() if now is None else now
    system = _system(store)
    due = [s.id async for s in system.scan(Schedule) if s.enabled and s.next_run_at <= now]  # type: ignore[attr-defined]
    jobs: list[Job] = []
    for schedule_id in due:
        async with system.transaction():
            found = await system.get(Schedule, [schedule_id])
            if not found:
                continue
            schedule: Schedule = found[0]  # type: ignore[assignment]
            if not schedule.enabled or schedule.next_run_at > now:
                continue  # another worker fired it first
            job, _ = await enqueue(
                store, tenant=schedule.tenant, knowledge_base=schedule.knowledge_base,
                template=schedule.template, trigger="schedule",
            )
            schedule.last_run_at, schedule.last_job_id = now, job.id
            schedule.next_run_at = next_run(schedule.cron, now)
            await system.upsert([schedule])
            jobs.append(job)
    return jobs
