"""A plain HTTP server with single-range support, for http:// reads (versitygw objects are private)."""

import contextlib
import os
import re
import threading
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

_RANGE = re.compile(r"bytes=(\d+)-(\d*)$")


class _RangeHandler(SimpleHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    #: file name -> (HTTP status, from offset): GETs of that file whose range starts at or after the offset answer
    #: with the status (HEAD and earlier ranges still succeed), to fail a read mid-way.
    failing_gets: dict = {}

    def log_message(self, *args):
        pass

    def _file(self):
        path = self.translate_path(self.path)
        return path if os.path.isfile(path) else None

    def _headers(self, status, length, size, start=None):
        self.send_response(status)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Accept-Ranges", "bytes")
        self.send_header("Content-Length", str(length))
        if not os.path.basename(self.path).startswith("noetag"):  # a server that names no version, for those files
            self.send_header("ETag", f'"{size}"')
        self.send_header("Last-Modified", self.date_time_string(0))
        if start is not None:
            self.send_header("Content-Range", f"bytes {start}-{start + length - 1}/{size}")
        self.end_headers()

    def do_HEAD(self):
        path = self._file()
        if path is None:
            self.send_error(404)
            return
        size = os.path.getsize(path)
        self._headers(200, size, size)

    def do_GET(self):
        path = self._file()
        if path is None:
            self.send_error(404)
            return
        size = os.path.getsize(path)
        match = _RANGE.match(self.headers.get("Range", ""))
        failing = self.failing_gets.get(os.path.basename(path))
        if failing is not None and (int(match.group(1)) if match else 0) >= failing[1]:
            self.send_error(failing[0])
            return
        start, end = 0, size - 1
        if match:
            start = int(match.group(1))
            end = min(int(match.group(2)) if match.group(2) else size - 1, size - 1)
            if start >= size:
                self.send_response(416)
                self.send_header("Content-Range", f"bytes */{size}")
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
        length = end - start + 1
        self._headers(206 if match else 200, length, size, start if match else None)
        with open(path, "rb") as f:
            f.seek(start)
            remaining = length
            while remaining:
                chunk = f.read(min(remaining, 1 << 20))
                self.wfile.write(chunk)
                remaining -= len(chunk)


class LoopbackServer(ThreadingHTTPServer):
    """A server of the rig's: a thread per connection, and a listen backlog a client's burst of connections fits in
    (socketserver's is 5: the kernel dropped the rest, and the client retried them a second or three later, which
    it saw as answers whose first byte came late: stragglers the rig played by accident)."""

    daemon_threads = True
    request_queue_size = 256


@contextlib.contextmanager
def serve_http(directory, failing_gets: dict | None = None):
    """Serves `directory` on a free 127.0.0.1 port; yields the base URL (no trailing slash). `failing_gets` (file
    name -> (status, from offset)) may be changed while serving: see _RangeHandler.failing_gets."""
    handler = type("Handler", (_RangeHandler,), {"failing_gets": failing_gets if failing_gets is not None else {}})
    server = LoopbackServer(("127.0.0.1", 0), partial(handler, directory=str(directory)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
