"""An HTTP server of the tests on a free port of 127.0.0.1, served by a daemon thread.

A subclass defines `_handler()`, which returns its request handler class, and calls
`Loopback.__init__` once the attributes the handler reads are set; `with` starts and stops it.
"""

from __future__ import annotations

import threading
from http.server import ThreadingHTTPServer


class Loopback:
    def __init__(self):
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def _handler(self):
        raise NotImplementedError

    @property
    def root(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()
