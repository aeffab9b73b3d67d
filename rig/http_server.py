"""A plain HTTP server with single-range support, for http:// reads (versitygw objects are private)."""
import contextlib
import os
import re
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from functools import partial

_RANGE = re.compile(r"bytes=(\d+)-(\d*)$")


class _RangeHandler(SimpleHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

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


@contextlib.contextmanager
def serve_http(directory):
    """Serves `directory` on a free 127.0.0.1 port; yields the base URL (no trailing slash)."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(_RangeHandler, directory=str(directory)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
