"""Daemon threads kept for the next task: starting a thread costs about a millisecond of
latency (and 0.2 ms of CPU), paid by every model call's reply reader and every search.

A task goes to an idle thread of the group, or to a new one (tasks never queue behind each
other: limits on concurrency are the pacers' job); a thread idle for `idle_seconds` ends.
Daemon threads, as a task may be stuck in a dead server's read: it must never hold the exit.
"""

from __future__ import annotations

import contextvars
import queue
import threading
from concurrent.futures import Future


class KeptThreads:
    def __init__(self, name: str, idle_seconds: float = 30.0):
        self.name = name
        self.idle_seconds = idle_seconds
        self.tasks: queue.SimpleQueue = queue.SimpleQueue()
        self.lock = threading.Lock()
        self.idle = 0  # threads waiting for a task and not yet promised one

    def run(self, fn) -> None:
        """Run `fn()` in one of the group's threads, now."""
        with self.lock:
            if self.idle > 0:
                self.idle -= 1  # promised to one of them: puts happen under the lock
                self.tasks.put(fn)
                return
        # the task is handed over in a list the thread empties: a Thread keeps its `args` for as
        # long as it lives, and a task holds its caller's context (the whole run it came from)
        threading.Thread(target=self._loop, args=([fn],), daemon=True, name=self.name).start()

    def submit(self, fn, *args, **kwargs) -> Future:
        """`fn(*args, **kwargs)` in one of the group's threads and in a copy of the caller's
        context (the run's config and stream writer), as a Future."""
        future: Future = Future()
        ctx = contextvars.copy_context()

        def task() -> None:
            if not future.set_running_or_notify_cancel():
                return
            try:
                future.set_result(ctx.run(fn, *args, **kwargs))
            except BaseException as e:  # noqa: BLE001 - handed to the future's owner
                future.set_exception(e)

        self.run(task)
        return future

    def _loop(self, first: list) -> None:
        fn = first.pop()
        while True:
            fn()
            fn = None  # drop the task's references while idle
            with self.lock:
                self.idle += 1
            try:
                fn = self.tasks.get(timeout=self.idle_seconds)
            except queue.Empty:
                with self.lock:  # a task put since the timeout is this thread's to run
                    try:
                        fn = self.tasks.get_nowait()
                    except queue.Empty:
                        self.idle -= 1
                        return
