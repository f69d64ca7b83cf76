"""Tasks the broker holds nowhere (not queued, not taken by a worker, not answered): lost ones.

A Redis worker takes a task off the queue (BRPOP) and only then records it as taken (the
`unacked` hash the broker gives overdue tasks back from); killed between the two, its task is
in neither and no worker ever runs it (celery/celery#7950 shows the two steps). The compile
finds such a task by its id, and sends it again instead of waiting for its resend time.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .celery_app import QUEUE

# One atomic look at the queue, the taken tasks and the answers: a task moving from one to
# another (given back, answered) is seen in one of them. Celery puts the task id in each
# message's correlation_id.
_NOWHERE = """
local seen = {}
local function note(raw)
  local id = string.match(raw, '"correlation_id": *"([^"]+)"')
  if id then seen[id] = true end
end
for _, raw in ipairs(redis.call('LRANGE', KEYS[1], 0, -1)) do note(raw) end
for _, raw in ipairs(redis.call('HVALS', KEYS[2])) do note(raw) end
local lost = {}
for i, id in ipairs(ARGV) do
  if not seen[id] and redis.call('EXISTS', KEYS[2 + i]) == 0 then table.insert(lost, id) end
end
return lost
"""


class LostTasks:
    """Finds, among task ids, those the broker holds nowhere (run in a thread: it blocks)."""

    def __init__(self, app: Any):
        self.app = app
        self._unacked: str | None = None

    def nowhere(self, task_ids: Sequence[str]) -> set[str]:
        if not task_ids:
            return set()
        backend = self.app.backend
        if self._unacked is None:
            with self.app.connection_for_write() as connection:
                self._unacked = str(connection.default_channel.unacked_key)
        keys = [QUEUE, self._unacked, *(backend.get_key_for_task(i) for i in task_ids)]
        found = backend.client.eval(_NOWHERE, len(keys), *keys, *task_ids)
        return {i.decode() if isinstance(i, bytes) else str(i) for i in found or ()}
