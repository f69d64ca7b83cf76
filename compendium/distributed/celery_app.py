"""The Celery application a compile and its workers share: broker, results, delivery guarantees."""

from __future__ import annotations

from typing import Any

from ..errors import ConfigError
from ..settings import DistributedSettings

TASK = "compendium.engine_call"  # one engine call: a MAP batch, a REDUCE block, a REFINE page...
QUEUE = "compendium"
RESULT_SECONDS = 3600  # an answer nobody collected (its compile died) leaves Redis after this


def celery_app(settings: DistributedSettings) -> Any:
    """A Celery app on the settings' Redis broker, which also holds the (short-lived) results.

    Delivery is at least once: a task is acknowledged only after it ran (acks_late), a task
    whose worker process died is put back (reject_on_worker_lost), and on Redis a task a
    killed worker took returns to the queue after `visibility_timeout`. Running a task twice
    costs nothing: the worker answers from the store's response cache.
    """
    try:
        from celery import Celery
    except ImportError as exc:
        raise ConfigError(
            "a broker is configured (distributed.broker) but Celery is not installed",
            hint="pip install 'compendium[distributed]'",
        ) from exc
    broker = settings.broker
    app = Celery("compendium", broker=broker, backend=broker, set_as_current=False)
    timeout = settings.visibility_timeout
    transport = {
        "visibility_timeout": timeout,
        # Every live worker looks for overdue tasks this often (kombu's default, 10 s times a
        # throttle of 10, would leave a killed worker's tasks waiting ~100 s past the timeout).
        "unacked_restore_interval": int(max(1, min(10, timeout // 2))),
        "unacked_restore_throttle": 1,
        # The lock a worker holds while it gives overdue tasks back: a worker killed holding it
        # would otherwise keep every other from doing so for kombu's 5 minutes.
        "unacked_mutex_expire": int(max(5, min(300, timeout))),
    }
    app.conf.update(
        task_serializer="json",
        result_serializer="json",
        accept_content=["json"],
        task_default_queue=QUEUE,
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        # A worker takes no more tasks than it runs at once: nothing waits, unacknowledged,
        # behind a busy worker while another is idle, and a killed one holds little.
        worker_prefetch_multiplier=1,
        broker_transport_options=transport,
        result_backend_transport_options=transport,
        result_expires=RESULT_SECONDS,
        broker_connection_retry_on_startup=True,
        worker_hijack_root_logger=False,
        task_track_started=False,
        task_ignore_result=False,
        worker_send_task_events=False,
    )
    return app
