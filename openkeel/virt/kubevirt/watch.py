"""A list-then-watch loop that survives disconnects, like client-go's reflector.

Used by the KubeVirt driver (VMI watch → lifecycle events for compute) and by the test-side
KubeVirt simulator. One thread per :class:`Watcher`. After a dropped stream it resumes from the
last resourceVersion it saw (bookmarks included); when the server answers 410 Gone it lists
again and reports objects that vanished meanwhile as DELETED, so the handler never misses a
final state.

``stop()`` aborts the stream being read (see client.WatchStream) and joins the thread, so a
stopped watcher has no thread and no connection left; its owner may then close the client.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from openkeel.virt.kubevirt.client import (
    ClosedError,
    GoneError,
    JsonObj,
    KubeClient,
    KubeError,
    Resource,
    WatchStream,
)

LOG = logging.getLogger(__name__)

Handler = Callable[[str, JsonObj], None]  # (ADDED | MODIFIED | DELETED, object)


def _key(obj: JsonObj) -> tuple[str, str]:
    meta = obj.get("metadata", {})
    return str(meta.get("namespace", "")), str(meta.get("name", ""))


class Watcher:
    """Deliver every change of ``res`` (optionally filtered) to ``handler`` from a thread."""

    def __init__(
        self,
        client: KubeClient,
        res: Resource,
        handler: Handler,
        *,
        namespace: str | None = None,
        label_selector: str | None = None,
        timeout_seconds: int = 300,
        resource_version: str | None = None,
        retry_delay: float = 0.2,
        name: str | None = None,
    ) -> None:
        self.client = client
        self.res = res
        self.handler = handler
        self.namespace = namespace
        self.label_selector = label_selector
        self.timeout_seconds = timeout_seconds
        self.retry_delay = retry_delay
        self.resource_version = resource_version
        self.relists = 0
        self.resumes = 0
        self.synced = threading.Event()
        self._known: dict[tuple[str, str], JsonObj] = {}
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._stream: WatchStream | None = None
        thread_name = name or f"watch-{res.plural}"
        self._thread = threading.Thread(target=self._run, name=thread_name, daemon=True)

    def start(self) -> Watcher:
        self._thread.start()
        return self

    @property
    def running(self) -> bool:
        return self._thread.is_alive()

    def stop(self, timeout: float = 10.0) -> bool:
        """End the loop: abort the stream it reads, then join the thread (bounded by
        ``timeout``: a list or connect in progress finishes first). Idempotent; True once the
        thread has ended."""
        self._stop.set()
        with self._lock:
            stream = self._stream
        if stream is not None:
            stream.abort()
        if self._thread.ident is None or self._thread is threading.current_thread():
            return not self._thread.is_alive()
        self._thread.join(timeout)
        if self._thread.is_alive():
            LOG.error("watch of %s did not stop within %g s", self.res.plural, timeout)
            return False
        return True

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                if self.resource_version is None:
                    self._relist()
                self._watch_once()
                self.resumes += 1
            except ClosedError:
                return  # the client's owner closed it: nothing more to watch with
            except GoneError:
                LOG.info("watch of %s: resourceVersion too old, relisting", self.res.plural)
                self.resource_version = None
            except (KubeError, OSError, ValueError) as exc:
                LOG.warning("watch of %s interrupted: %s", self.res.plural, exc)
                self.resumes += 1
                self._stop.wait(self.retry_delay)
            except Exception:  # a handler bug must not end the watch
                LOG.exception("watch of %s: handler failed", self.res.plural)
                self._stop.wait(self.retry_delay)

    def _relist(self) -> None:
        listed = self.client.list(self.res, self.namespace, self.label_selector)
        self.relists += 1
        current = {_key(o): o for o in listed.get("items", [])}
        for key, old in list(self._known.items()):
            if key not in current:
                self._deliver("DELETED", old)
        for key, obj in current.items():
            kind = "MODIFIED" if key in self._known else "ADDED"
            self._deliver(kind, obj)
        self.resource_version = listed["metadata"]["resourceVersion"]
        self.synced.set()

    def _watch_once(self) -> None:
        version = self.resource_version or ""
        with self.client.watch(
            self.res, version, self.namespace, self.label_selector, self.timeout_seconds
        ) as events:
            with self._lock:
                self._stream = events
            try:
                self._read(events)
            finally:
                with self._lock:
                    self._stream = None

    def _read(self, events: WatchStream) -> None:
        if self._stop.is_set():
            return  # stop() came while connecting: it could not abort this stream
        self.synced.set()
        for event in events:
            obj = event.get("object", {})
            rv = obj.get("metadata", {}).get("resourceVersion")
            if event.get("type") != "BOOKMARK":
                self._deliver(str(event.get("type")), obj)
            if rv:
                self.resource_version = rv
            if self._stop.is_set():
                return

    def _deliver(self, kind: str, obj: JsonObj) -> None:
        key = _key(obj)
        if kind == "DELETED":
            self._known.pop(key, None)
        else:
            self._known[key] = obj
        self.handler(kind, obj)
