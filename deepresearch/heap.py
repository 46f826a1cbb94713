"""The process's long-lived objects kept out of the garbage collector's full passes.

CPython's collector scans every tracked container in a full pass of its oldest generation.
Once a model client's libraries are imported (the openai SDK's and LangChain's types: about
280,000 objects) one pass takes 100-200 ms on this machine, and it stops every thread of the
process. On a server running many research runs, or in a deep run's parallel sections, that
pause lands on all of them at once: it came about once every three 16-section runs in bench
row 1, a fifth of the section phase's wall time.

`settle(what)` runs once per `what` and process, right after something long-lived was
loaded: a full collection, then `gc.freeze()`, which moves every object alive into a
permanent generation that later passes skip. Later passes scan only what runs create.
Objects frozen are still freed by reference counting; only a cycle among them is never
collected, and they are the modules, compiled graphs and clients that live as long as the
process. A process that turned the collector off (`gc.disable()`) is left as it is.
"""

from __future__ import annotations

import gc
import threading

_done: set[str] = set()
_lock = threading.Lock()


def settle(what: str) -> bool:
    """Collect once and freeze the objects alive now, the first time `what` is loaded in this
    process. True when it did."""
    with _lock:
        if what in _done or not gc.isenabled():
            return False
        _done.add(what)
        gc.collect()
        gc.freeze()
    return True
