"""A misbehaving HTTP/1.1 reverse proxy on 127.0.0.1, in front of the S3 rig's versitygw (its direct endpoint) or
the local http_server: it forwards requests unchanged (method, path, query, every header but the hop-by-hop ones,
Host included, so an S3 SigV4 signature made for the proxy's address verifies upstream) until a test sets `mode` to
one or more misbehaviours ("a+b" combines them).

Read faults apply only to GETs of objects whose path contains `key_filter` (never to listings or multipart
subresources); upload faults to the multipart requests of such keys; head_forbidden to their HEADs.

- normal: pass through.
- ignore_range: the Range header is dropped: 200 with the whole body (as `python -m http.server` answers).
- shift_range: `bytes=a-b` with a > 0 is asked upstream as `bytes=(a+S)-(b+S)` (S = shift_bytes, less when that
  runs past the end; not shifted at all when the range already ends at the last byte) and answered 206 with those
  bytes, Content-Length the length asked and the upstream's true Content-Range: wrong bytes, honestly labelled.
- shift_range_lying: the same, but Content-Range claims the range asked. No client can tell from the headers.
- range_blind_cache: the first 206 answer of a path is kept and replayed (status, headers, body) for every later
  ranged GET of that path.
- stall_body: the upstream's status line and headers, then nothing for stall_seconds, then the connection closes.
- stall_tail: no answer at all, for stall_seconds, then the connection closes, to GETs with a suffix range
  (`bytes=-N`); with stall_tail_closed_ranges also to ranges ending at the object's last byte (DuckDB's own footer
  reads: native httpfs then stalls too).
- stall_first_byte: every stall_every-th GET of a range not asked before (since the last reset; the first stalled is
  the stall_every-th; at most stall_max of them when set) waits stall_seconds before it is forwarded, then is answered
  as usual: a straggler whose answer begins late. A range asked again (a retry, a hedge) is never stalled, so which
  GETs stall depends only on the order in which distinct ranges come. With `stall_kinds` set (say {"tail"}), only
  GETs of those kinds count.
- upload_part_no_etag: UploadPart is forwarded and answered without its ETag header.
- complete_error_body: CompleteMultipartUpload is not forwarded and answered 200 with an <Error> body.
- complete_lost_404: the first CompleteMultipartUpload of an upload is forwarded (the object is complete upstream)
  and its answer lost (the connection closes without a response); later ones of that upload get 404 NoSuchUpload.
- part_trickle: UploadPart is forwarded, and its answer sent one byte every trickle_interval seconds, for at most
  trickle_seconds, then the connection closes.
- part_trickle_once: the same for the first UploadPart of part number trickle_part of an upload; the later ones of
  that number (a retry, a hedge) and the other parts are answered as usual: one straggler.
- part_slow_down: the first slow_down_parts UploadParts (since the last reset) are not forwarded and answered 503
  with S3's SlowDown error, as S3 answers a client past its request rate.
- slow_down: every slow_down_every-th request of each kind (since the last reset; the first of each kind included)
  is not forwarded and answered 503 SlowDown, whatever its key: a store throttling a prefix. The kinds: "tail" (a
  GET of a suffix range), "get" (other object GETs), "listing", "head", "part" (UploadPart), "other". Counted as
  "hit:slow_down" and "hit:slow_down:<kind>". With `slow_down_kinds` set, only requests of those kinds; with
  `slow_down_first` set, instead the first slow_down_first requests of each kind, then none (a burst). A request of
  Azure's (with x-ms-version) is answered as Azure throttles: 503 with its ServerBusy error.
- slow_down_rate: a request past rate_limit requests in the last second to its prefix (the path up to its last "/":
  a bucket's folder) is not forwarded and answered 503 SlowDown, as S3 answers a client past a prefix's request rate;
  refused requests count toward the rate, as S3's do. Counted as "hit:slow_down_rate".
- expiring_token: a request carrying a session token (x-amz-security-token) among `expired_tokens` is answered 400
  ExpiredToken, as S3 answers one signed with STS credentials past their expiry; other requests are forwarded without
  their token, signed again with the proxy's secret key (the rig knows no session tokens). An object GET whose
  on_get hook put its token among them is refused itself.
- head_forbidden: HEAD is answered 403.
- get_no_etag: object GETs are answered without their ETag header (HEADs keep theirs), as some gateways and caches
  answer.
- pinned_validators: HEADs and object GETs are answered with Last-Modified and Date set to `pinned_time` (an HTTP
  date): how every answer looks when an object is written, replaced and read within one second, whenever the test
  replaces it.

Modes that only change the headers of answers (get_no_etag, pinned_validators) combine with the others.

(A 200 with the whole body and no Content-Range to a range request is ignore_range: no separate mode.)

`on_get(k, callback)` calls `callback()` in the proxy's thread just before the k-th matching object GET is forwarded
(to replace an object mid-scan); `on_part(k, callback)` before the k-th UploadPart of any key; `on_listing(k,
callback)` before the k-th listing. `counts` says what the
proxy saw and did: requests per method, "object_gets", "ranged_gets", "full_body_gets" (object GETs answered 200),
"listings", "bytes_sent" (response bodies), and "hit:<mode>" each time a misbehaviour was applied
("hit:complete_404" for complete_lost_404's later answers), "connections:<METHOD>" per client connection by the method
of its first request (kept connections count once); `log` has one record per request.

A client's SigV4 signature may cover the Range header (httpfs2 signs its own ranged GETs): given the store's
`secret_key`, the proxy signs a request whose Range it changes or drops again, with the client's access key, scope
and date, as a gateway inside the store's trust boundary would; without it the store refuses such a request (403,
counted as "shift_refused:403" or "object_get_status:403"). Host is never changed, so a signature made for the
proxy's address verifies upstream as it is.

Request bodies are read whole before being forwarded (parts are a few MiB in tests), responses are streamed. Every
wait is bounded, and stop() (the end of serve_hostile) wakes every stall and closes every connection."""

import collections
import contextlib
import hashlib
import hmac
import http.client
import re
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler
from urllib.parse import parse_qs, parse_qsl, quote

from rig.http_server import LoopbackServer

LOOPBACK = "127.0.0.1"

READ_MODES = (
    "ignore_range",
    "shift_range",
    "shift_range_lying",
    "range_blind_cache",
    "stall_body",
    "stall_tail",
    "stall_first_byte",
)
UPLOAD_MODES = (
    "upload_part_no_etag",
    "complete_error_body",
    "complete_lost_404",
    "part_trickle",
    "part_trickle_once",
    "part_slow_down",
)
THROTTLE_MODES = ("slow_down", "slow_down_rate")
HEADER_MODES = ("get_no_etag", "pinned_validators", "expiring_token")
MODES = frozenset(("normal", *READ_MODES, *UPLOAD_MODES, *THROTTLE_MODES, *HEADER_MODES, "head_forbidden"))

HOP_BY_HOP = frozenset(
    (
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "proxy-connection",
        "te",
        "trailer",
        "trailers",
        "transfer-encoding",
        "upgrade",
        "expect",  # the proxy answers 100-continue itself and sends the body at once
    )
)
# Query parameters of S3 requests that are not an object GET: the read faults leave these alone.
NOT_AN_OBJECT_GET = frozenset(
    ("list-type", "prefix", "delimiter", "uploads", "uploadId", "continuation-token", "marker", "max-keys", "location")
)
_CLOSED_RANGE = re.compile(r"bytes=(\d+)-(\d+)$")
_SUFFIX_RANGE = re.compile(r"bytes=-(\d+)$")
_CONTENT_RANGE = re.compile(r"bytes (?:(\d+)-(\d+)|\*)/(\d+)")
CHUNK = 1 << 20
UPSTREAM_TIMEOUT = 60.0
MAX_LOG = 20000

ERROR_BODY = (
    b'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>InternalError</Code>'
    b"<Message>We encountered an internal error. Please try again.</Message>"
    b"<RequestId>hostile-proxy</RequestId></Error>"
)
EXPIRED_TOKEN_BODY = (
    b'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>ExpiredToken</Code>'
    b"<Message>The provided token has expired.</Message><RequestId>hostile-proxy</RequestId></Error>"
)
SLOW_DOWN_BODY = (
    b'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>SlowDown</Code>'
    b"<Message>Please reduce your request rate.</Message><RequestId>hostile-proxy</RequestId></Error>"
)
SERVER_BUSY_BODY = (
    b'<?xml version="1.0" encoding="utf-8"?>\n<Error><Code>ServerBusy</Code>'
    b"<Message>The server is currently unable to receive requests. Please retry your request.</Message></Error>"
)
NO_SUCH_UPLOAD_BODY = (
    b'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>NoSuchUpload</Code>'
    b"<Message>The specified upload does not exist. The upload ID may be invalid, or the upload may have been "
    b"aborted or completed.</Message><RequestId>hostile-proxy</RequestId></Error>"
)


_AUTHORIZATION = re.compile(r"AWS4-HMAC-SHA256 Credential=([^/]+)/([^,]+), ?SignedHeaders=([^,]+), ?Signature=(\w+)$")


def sigv4_resign(method: str, raw_path: str, headers: list, secret_key: str) -> list:
    """`headers` with their AWS SigV4 Authorization made again for those headers (a changed or dropped Range among
    them), with the request's own access key, scope and x-amz-date: what a gateway inside the store's trust boundary
    sends. Headers not SigV4-signed are returned unchanged."""
    names = [name.lower() for name, _ in headers]
    if "authorization" not in names:
        return headers
    match = _AUTHORIZATION.match(headers[names.index("authorization")][1])
    if match is None:
        return headers
    access_key, scope, signed, _ = match.groups()
    values = {}
    for name, value in headers:
        values.setdefault(name.lower(), " ".join(value.strip().split()))
    signed_names = [name for name in signed.split(";") if name in values]
    path, _, query = raw_path.partition("?")
    pairs = sorted((quote(k, safe="-_.~"), quote(v, safe="-_.~")) for k, v in parse_qsl(query, keep_blank_values=True))
    canonical = "\n".join(
        (
            method,
            path,
            "&".join(f"{k}={v}" for k, v in pairs),
            "".join(f"{name}:{values[name]}\n" for name in signed_names),
            ";".join(signed_names),
            values.get("x-amz-content-sha256", "UNSIGNED-PAYLOAD"),
        )
    )
    date, region, service, _ = scope.split("/")
    to_sign = "\n".join(
        ("AWS4-HMAC-SHA256", values["x-amz-date"], scope, hashlib.sha256(canonical.encode()).hexdigest())
    )
    key = f"AWS4{secret_key}".encode()
    for part in (date, region, service, "aws4_request"):
        key = hmac.new(key, part.encode(), hashlib.sha256).digest()
    signature = hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest()
    authorization = (
        f"AWS4-HMAC-SHA256 Credential={access_key}/{scope}, SignedHeaders={';'.join(signed_names)}, "
        f"Signature={signature}"
    )
    return [(name, authorization if name.lower() == "authorization" else value) for name, value in headers]


class _Dropped(Exception):
    """The handler closed the client's connection on purpose: no response follows."""


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    proxy: "HostileProxy"  # set on the subclass serve_hostile makes

    def log_message(self, *args):
        pass

    def setup(self):
        super().setup()
        self._upstream = None
        self._first_request_seen = False
        self.proxy._track(self.connection, True)

    def finish(self):
        try:
            super().finish()
        finally:
            self.proxy._track(self.connection, False)
            if self._upstream is not None:
                self._upstream.close()

    # --- plumbing ---

    def _read_body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            parts = []
            for _ in range(1 << 20):  # bounded: a chunked body of at most a million chunks
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    break
                parts.append(self.rfile.read(size))
                self.rfile.readline()
            return b"".join(parts)
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def _forward_headers(self, drop=()) -> list:
        drop = {name.lower() for name in drop}
        headers = [(k, v) for k, v in self.headers.items() if k.lower() not in HOP_BY_HOP and k.lower() not in drop]
        token = self.headers.get("x-amz-security-token")
        if "expiring_token" in self.proxy.modes and token is not None and self.proxy.secret_key is not None:
            headers = [(k, v) for k, v in headers if k.lower() != "x-amz-security-token"]
            headers = sigv4_resign(self.command, self.path, headers, self.proxy.secret_key)
        return headers

    def _with_range(self, range_header: str | None) -> list:
        """The request's headers with its Range replaced (None: dropped); signed again when the client's signature
        covered the Range and the proxy has the secret key, so that the store takes the changed request."""
        headers = self._forward_headers(drop=("Range",))
        if range_header is not None:
            headers.append(("Range", range_header))
        if self.proxy.secret_key is not None and "range" in self.headers.get("Authorization", "").lower():
            self.proxy._count("resigned")
            return sigv4_resign(self.command, self.path, headers, self.proxy.secret_key)
        return headers

    def _request_upstream(self, method, headers, body) -> http.client.HTTPResponse:
        """Sends the request upstream on this connection's upstream connection; once more on a new one if a kept
        connection turns out closed."""
        for attempt in range(2):
            if self._upstream is None:
                self._upstream = http.client.HTTPConnection(
                    self.proxy.upstream_host, self.proxy.upstream_port, timeout=UPSTREAM_TIMEOUT
                )
            try:
                self._upstream.putrequest(method, self.path, skip_host=True, skip_accept_encoding=True)
                for name, value in headers:
                    self._upstream.putheader(name, value)
                if (body or method in ("PUT", "POST")) and not any(k.lower() == "content-length" for k, _ in headers):
                    self._upstream.putheader("Content-Length", str(len(body)))
                self._upstream.endheaders(body if body else None)
                return self._upstream.getresponse()
            except (ConnectionError, http.client.RemoteDisconnected, http.client.BadStatusLine):
                self._upstream.close()
                self._upstream = None
                if attempt == 1:
                    raise
        raise AssertionError("unreachable")

    def _close_upstream(self):
        if self._upstream is not None:
            self._upstream.close()
            self._upstream = None

    def _send_head(self, status: int, reason: str, headers: list):
        self.send_response_only(status, reason)
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()

    def _send_body(self, chunks) -> int:
        sent = 0
        for chunk in chunks:
            self.wfile.write(chunk)
            sent += len(chunk)
        self.proxy._count("bytes_sent", sent)
        return sent

    def _answer(self, status: int, body: bytes = b"", headers=(), reason=None) -> int:
        self._send_head(status, reason, [*headers, ("Content-Length", str(len(body)))])
        if self.command != "HEAD":
            self._send_body([body])
        return status

    def _drop(self, wait_seconds: float = 0.0):
        """Closes the client's connection after `wait_seconds` (cut short when the proxy stops)."""
        self.wfile.flush()
        if wait_seconds:
            self.proxy._stop.wait(wait_seconds)
        self.close_connection = True
        with contextlib.suppress(OSError):
            self.connection.shutdown(socket.SHUT_RDWR)
        raise _Dropped()

    def _response_headers(self, response, drop=()) -> list:
        drop = {name.lower() for name in drop}
        return [(k, v) for k, v in response.getheaders() if k.lower() not in HOP_BY_HOP and k.lower() not in drop]

    def _relay(self, response, status=None, headers=None) -> int:
        """Sends an upstream response to the client, its body streamed when its length is known."""
        headers = self._response_headers(response) if headers is None else headers
        status = response.status if status is None else status
        length = response.getheader("Content-Length")
        if self.command == "HEAD" or status in (204, 304) or length is not None:
            names = {k.lower() for k, _ in headers}
            if length is not None and "content-length" not in names:
                headers = [*headers, ("Content-Length", length)]
            self._send_head(status, response.reason, headers)
            if self.command != "HEAD":
                self._send_body(iter(lambda: response.read(CHUNK), b""))
            response.read()  # nothing left; lets the upstream connection be reused
        else:  # an upstream body without a length (chunked): sent with one
            body = response.read()
            headers = [(k, v) for k, v in headers if k.lower() != "content-length"]
            self._send_head(status, response.reason, [*headers, ("Content-Length", str(len(body)))])
            self._send_body([body])
        if response.will_close:
            self._close_upstream()
        return status

    # --- requests ---

    def do_GET(self):
        self._handle()

    def do_HEAD(self):
        self._handle()

    def do_PUT(self):
        self._handle()

    def do_POST(self):
        self._handle()

    def do_DELETE(self):
        self._handle()

    def _handle(self):
        proxy = self.proxy
        path, _, query = self.path.partition("?")
        params = parse_qs(query, keep_blank_values=True)
        record = {
            "method": self.command,
            "path": path,
            "query": query,
            "range": self.headers.get("Range"),
            "status": None,
            "fault": None,
            "time": time.monotonic(),
        }
        self._record = record
        proxy._count(self.command)
        if not self._first_request_seen:
            self._first_request_seen = True
            proxy._count(f"connections:{self.command}")
        body = self._read_body()
        try:
            record["status"] = self._dispatch(path, params, body)
        except _Dropped:
            record["status"] = "dropped"
        except (ConnectionError, TimeoutError, http.client.HTTPException, OSError) as error:
            record["status"] = f"error: {error!r}"
            self.close_connection = True
            self._close_upstream()
        finally:
            proxy._log(record)

    def _fault(self, name: str):
        self._record["fault"] = name
        self.proxy._count(f"hit:{name}")

    def _dispatch(self, path: str, params: dict, body: bytes):
        proxy = self.proxy
        modes = proxy.modes
        if "expiring_token" in modes and self.headers.get("x-amz-security-token") in proxy.expired_tokens:
            self._fault("expiring_token")
            return self._answer(400, EXPIRED_TOKEN_BODY, [("Content-Type", "application/xml")], reason="Bad Request")
        if "slow_down" in modes and proxy._throttles(self._kind(params)):
            self._fault("slow_down")
            proxy._count(f"hit:slow_down:{self._kind(params)}")
            if "x-ms-version" in self.headers:
                return self._answer(503, SERVER_BUSY_BODY, [("Content-Type", "application/xml")], reason="Server Busy")
            return self._answer(503, SLOW_DOWN_BODY, [("Content-Type", "application/xml")], reason="Slow Down")
        if "slow_down_rate" in modes and proxy._past_rate(path):
            self._fault("slow_down_rate")
            return self._answer(503, SLOW_DOWN_BODY, [("Content-Type", "application/xml")], reason="Slow Down")
        if self.command == "PUT" and "partNumber" in params:
            proxy._before("part")
        matching = proxy.key_filter in path
        if self.command == "GET" and set(params) & NOT_AN_OBJECT_GET:
            if "list-type" in params or "prefix" in params or "delimiter" in params:
                proxy._count("listings")
                proxy._before("listing")
            matching = False
            object_get = False
        else:
            object_get = self.command == "GET"
        if not matching:
            return self._relay(self._request_upstream(self.command, self._forward_headers(), body))

        if self.command == "HEAD":
            if "head_forbidden" in modes:
                self._fault("head_forbidden")
                return self._answer(403, reason="Forbidden")
            response = self._request_upstream("HEAD", self._forward_headers(), body)
            if response.status == 200 and response.getheader("Content-Length") is not None:
                proxy._sizes[path] = int(response.getheader("Content-Length"))
            return self._relay(response, headers=self._answer_headers(response))
        if object_get:
            return self._get(path, modes)
        if self.command == "PUT" and "partNumber" in params and "uploadId" in params:
            return self._upload_part(modes, body, (params["uploadId"][0], params["partNumber"][0]))
        if self.command == "POST" and "uploadId" in params:
            return self._complete(params["uploadId"][0], modes, body)
        return self._relay(self._request_upstream(self.command, self._forward_headers(), body))

    def _kind(self, params: dict) -> str:
        """The request's kind, as the slow_down mode counts them."""
        if self.command == "GET" and ("list-type" in params or "prefix" in params):
            return "listing"
        if self.command == "GET" and not set(params) & NOT_AN_OBJECT_GET:
            return "tail" if _SUFFIX_RANGE.match(self.headers.get("Range") or "") else "get"
        if self.command == "HEAD":
            return "head"
        if self.command == "PUT" and "partNumber" in params:
            return "part"
        return "other"

    # --- GET faults ---

    def _get(self, path: str, modes: frozenset):
        proxy = self.proxy
        proxy._count("object_gets")
        proxy._before("get")
        if "expiring_token" in modes and self.headers.get("x-amz-security-token") in proxy.expired_tokens:
            # Its hook expired the token it carries: the GET at which a token expires is the first one refused.
            self._fault("expiring_token")
            return self._answer(400, EXPIRED_TOKEN_BODY, [("Content-Type", "application/xml")], reason="Bad Request")
        range_header = self.headers.get("Range")
        closed = _CLOSED_RANGE.match(range_header or "")
        suffix = _SUFFIX_RANGE.match(range_header or "")
        if range_header:
            proxy._count("ranged_gets")

        stalls_kind = proxy.stall_kinds is None or ("tail" if suffix else "get") in proxy.stall_kinds
        if "stall_first_byte" in modes and stalls_kind and proxy._first_seen_stalls(path, range_header):
            self._fault("stall_first_byte")
            proxy._stop.wait(proxy.stall_seconds)
        if "stall_tail" in modes and suffix:
            self._fault("stall_tail")
            self._drop(proxy.stall_seconds)
        if "ignore_range" in modes and range_header:
            self._fault("ignore_range")
            response = self._request_upstream("GET", self._with_range(None), b"")
            return self._relay_get(path, response)
        if "range_blind_cache" in modes and range_header:
            cached = proxy._cached(path)
            if cached is not None:
                self._fault("range_blind_cache")
                status, reason, headers, data = cached
                self._send_head(status, reason, headers)
                self._send_body([data])
                return status
        shift = "shift_range" in modes or "shift_range_lying" in modes
        if shift and closed and int(closed.group(1)) > 0:
            return self._shifted_get(path, int(closed.group(1)), int(closed.group(2)), "shift_range_lying" in modes)

        response = self._request_upstream("GET", self._forward_headers(), b"")
        if "stall_tail" in modes and proxy.stall_tail_closed_ranges and closed and response.status == 206:
            total = _total_size(response)
            if total is not None and int(closed.group(2)) >= total - 1:
                self._close_upstream()
                self._fault("stall_tail")
                self._drop(proxy.stall_seconds)
        if "range_blind_cache" in modes and range_header and response.status == 206:
            data = response.read()
            headers = self._response_headers(response)
            answer = (206, response.reason, headers, data)
            kept = proxy._keep(path, answer)
            if kept is not answer:  # another GET of the path, running at the same time, was kept first
                self._fault("range_blind_cache")
            self._send_head(*kept[:3])
            self._send_body([kept[3]])
            if response.will_close:
                self._close_upstream()
            return kept[0]
        if "stall_body" in modes:
            self._fault("stall_body")
            self._send_head(response.status, response.reason, self._response_headers(response))
            self._close_upstream()
            self._drop(proxy.stall_seconds)
        return self._relay_get(path, response)

    def _relay_get(self, path: str, response) -> int:
        if response.status >= 400:
            self.proxy._count(f"object_get_status:{response.status}")
        total = _total_size(response)
        if total is not None:
            self.proxy._sizes[path] = total
        if response.status == 200:
            self.proxy._count("full_body_gets")
        return self._relay(response, headers=self._answer_headers(response))

    def _answer_headers(self, response) -> list:
        """The headers of an answer to a HEAD or an object GET, as the header modes change them."""
        modes = self.proxy.modes
        headers = self._response_headers(response)
        if response.status >= 300:
            return headers
        if "get_no_etag" in modes and self.command == "GET":
            self._fault("get_no_etag")
            headers = [(k, v) for k, v in headers if k.lower() != "etag"]
        if "pinned_validators" in modes:
            self._fault("pinned_validators")
            headers = [(k, v) for k, v in headers if k.lower() not in ("last-modified", "date")]
            headers += [("Last-Modified", self.proxy.pinned_time), ("Date", self.proxy.pinned_time)]
        return headers

    def _shifted_get(self, path: str, first: int, last: int, lying: bool) -> int:
        proxy = self.proxy
        shift = proxy.shift_bytes
        size = proxy._sizes.get(path)
        if size is not None:
            shift = min(shift, size - 1 - last)
        response = None
        for _ in range(2):  # once with the shift wanted, once more with a smaller one if that ran past the end
            if shift <= 0:
                break
            response = self._request_upstream("GET", self._with_range(f"bytes={first + shift}-{last + shift}"), b"")
            total = _total_size(response)
            if total is not None:
                proxy._sizes[path] = total
            got = _content_range(response)
            if response.status == 206 and got is not None and got[1] - got[0] == last - first:
                break
            self.proxy._count(f"shift_refused:{response.status}")
            response.read()
            if response.will_close:
                self._close_upstream()
            response = None
            if total is None:
                break
            shift = min(shift, total - 1 - last)
        if response is None:  # nothing to shift to: the range asked, as asked
            response = self._request_upstream("GET", self._forward_headers(), b"")
            return self._relay_get(path, response)
        self._fault("shift_range_lying" if lying else "shift_range")
        headers = self._response_headers(response)
        if lying:
            total = _total_size(response)
            headers = [(k, v) for k, v in headers if k.lower() != "content-range"]
            headers.append(("Content-Range", f"bytes {first}-{last}/{total}"))
        return self._relay(response, headers=headers)

    # --- upload faults ---

    def _upload_part(self, modes: frozenset, body: bytes, part: tuple) -> int:
        proxy = self.proxy
        if "part_slow_down" in modes and proxy.counts.get("hit:part_slow_down", 0) < proxy.slow_down_parts:
            self._fault("part_slow_down")
            return self._answer(503, SLOW_DOWN_BODY, [("Content-Type", "application/xml")], reason="Slow Down")
        straggler = part[1] == str(proxy.trickle_part) and proxy._first_attempt_of(part)
        if "part_trickle" in modes or ("part_trickle_once" in modes and straggler):
            response = self._request_upstream("PUT", self._forward_headers(), body)
            data = response.read()
            headers = [(k, v) for k, v in self._response_headers(response) if k.lower() != "content-length"]
            self._close_upstream()
            raw = f"HTTP/1.1 {response.status} {response.reason}\r\n".encode()
            raw += b"".join(f"{k}: {v}\r\n".encode() for k, v in headers)
            raw += f"Content-Length: {len(data)}\r\n\r\n".encode() + data
            self._fault("part_trickle")
            deadline = time.monotonic() + proxy.trickle_seconds
            for byte in raw:
                if time.monotonic() >= deadline or proxy._stop.is_set():
                    break
                self.wfile.write(bytes((byte,)))
                self.wfile.flush()
                proxy._count("bytes_trickled")
                proxy._stop.wait(proxy.trickle_interval)
            self._drop()
        response = self._request_upstream("PUT", self._forward_headers(), body)
        if "upload_part_no_etag" in modes:
            self._fault("upload_part_no_etag")
            return self._relay(response, headers=self._response_headers(response, drop=("ETag",)))
        return self._relay(response)

    def _complete(self, upload_id: str, modes: frozenset, body: bytes) -> int:
        proxy = self.proxy
        if "complete_error_body" in modes:
            self._fault("complete_error_body")
            return self._answer(200, ERROR_BODY, [("Content-Type", "application/xml")])
        if "complete_lost_404" in modes:
            if proxy._first_complete(upload_id):
                response = self._request_upstream("POST", self._forward_headers(), body)
                self.proxy._record_upstream_complete(response.status, response.read())
                self._close_upstream()
                self._fault("complete_lost_404")
                self._drop()
            self._fault("complete_404")
            return self._answer(404, NO_SUCH_UPLOAD_BODY, [("Content-Type", "application/xml")], reason="Not Found")
        return self._relay(self._request_upstream("POST", self._forward_headers(), body))


def _content_range(response):
    match = _CONTENT_RANGE.match(response.getheader("Content-Range") or "")
    if match is None or match.group(1) is None:
        return None
    return int(match.group(1)), int(match.group(2))


def _total_size(response):
    match = _CONTENT_RANGE.match(response.getheader("Content-Range") or "")
    if match is not None:
        return int(match.group(3))
    if response.status == 200 and response.getheader("Content-Length") is not None:
        return int(response.getheader("Content-Length"))
    return None


class _Server(LoopbackServer):
    def handle_error(self, request, client_address):
        """A client that went away (reset, broken pipe) is part of the game: no traceback."""


class HostileProxy:
    """The proxy's state, shared by its handler threads. Start with serve_hostile()."""

    def __init__(
        self,
        upstream_host: str,
        upstream_port: int,
        key_filter: str = "",
        shift_bytes: int = 4096,
        stall_seconds: float = 8.0,
        stall_tail_closed_ranges: bool = False,
        trickle_interval: float = 1.0,
        trickle_seconds: float = 30.0,
        slow_down_parts: int = 4,
        slow_down_every: int = 4,
        stall_every: int = 4,
        rate_limit: int = 50,
        secret_key: str | None = None,
    ):
        if upstream_host not in (LOOPBACK, "localhost"):
            raise ValueError("the hostile proxy only talks to the loopback")
        self.upstream_host = upstream_host
        self.upstream_port = upstream_port
        self.key_filter = key_filter
        self.shift_bytes = shift_bytes
        self.stall_seconds = stall_seconds
        self.stall_tail_closed_ranges = stall_tail_closed_ranges
        self.trickle_interval = trickle_interval
        self.trickle_seconds = trickle_seconds
        self.trickle_part = 2
        self.slow_down_parts = slow_down_parts
        self.slow_down_every = slow_down_every
        self.stall_every = stall_every
        self.rate_limit = rate_limit
        self.expired_tokens = set()
        self.secret_key = secret_key
        self.pinned_time = "Mon, 23 Nov 2026 10:00:00 GMT"
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._connections = set()
        self._modes = frozenset(("normal",))
        self._server = None
        self._thread = None
        self.reset()

    # --- settings a test changes at run time ---

    @property
    def mode(self) -> str:
        with self._lock:
            return "+".join(sorted(self._modes))

    @mode.setter
    def mode(self, value: str):
        modes = frozenset(part.strip() for part in value.split("+") if part.strip()) or frozenset(("normal",))
        unknown = modes - MODES
        if unknown:
            raise ValueError(f"unknown hostile mode(s) {sorted(unknown)}: known are {sorted(MODES)}")
        with self._lock:
            self._modes = modes

    @property
    def modes(self) -> frozenset:
        with self._lock:
            return self._modes

    def on_get(self, k: int, callback):
        """Calls `callback()` just before the k-th matching object GET (from now) is forwarded, once."""
        with self._lock:
            self._hooks["get"] = (self._seen["get"] + k, callback)

    def on_listing(self, k: int, callback):
        """Calls `callback()` just before the k-th listing (from now) is forwarded, once."""
        with self._lock:
            self._hooks["listing"] = (self._seen["listing"] + k, callback)

    def on_part(self, k: int, callback):
        """Calls `callback()` just before the k-th UploadPart (from now) is forwarded, once."""
        with self._lock:
            self._hooks["part"] = (self._seen["part"] + k, callback)

    def reset(self):
        """Back to "normal": counters, log, caches and hooks cleared (settings such as key_filter kept)."""
        with self._lock:
            self._modes = frozenset(("normal",))
            self._counts = {}
            self._records = []
            self._cache = {}
            self._sizes = {}
            self._completes = set()
            self._parts_sent = set()
            self._upstream_completes = []
            self._seen = {"get": 0, "part": 0, "listing": 0}
            self._hooks = {"get": None, "part": None, "listing": None}
            self._kinds_seen = {}
            self._ranges_seen = set()
            self._stalls = 0
            self._recent_by_prefix = {}
            self.expired_tokens = set()
            # Which kinds of request slow_down throttles and stall_first_byte stalls: all (None) or those named; how
            # many stall_first_byte stalls at most (None: no cap).
            self.slow_down_kinds = None
            self.slow_down_first = 0
            self.stall_kinds = None
            self.stall_max = None

    @property
    def counts(self) -> dict:
        with self._lock:
            return dict(self._counts)

    @property
    def log(self) -> list:
        with self._lock:
            return list(self._records)

    @property
    def upstream_completes(self) -> list:
        """(status, body) of the CompleteMultipartUploads complete_lost_404 forwarded and did not answer."""
        with self._lock:
            return list(self._upstream_completes)

    @property
    def endpoint(self) -> str:
        return f"{LOOPBACK}:{self.port}"

    @property
    def url(self) -> str:
        return f"http://{self.endpoint}"

    # --- used by the handlers ---

    def _count(self, name: str, n: int = 1):
        with self._lock:
            self._counts[name] = self._counts.get(name, 0) + n

    def _log(self, record: dict):
        with self._lock:
            if len(self._records) < MAX_LOG:
                self._records.append(record)

    def _throttles(self, kind: str) -> bool:
        """Whether this request of `kind` is one slow_down answers 503: the 1st, the (1 + every)-th... of its kind
        (or each of its first slow_down_first)."""
        with self._lock:
            if self.slow_down_kinds is not None and kind not in self.slow_down_kinds:
                return False
            seen = self._kinds_seen.get(kind, 0)
            self._kinds_seen[kind] = seen + 1
            if self.slow_down_first:
                return seen < self.slow_down_first
            return seen % max(self.slow_down_every, 1) == 0

    def _past_rate(self, path: str) -> bool:
        """Whether this request makes more than rate_limit to its prefix within the last second (slow_down_rate)."""
        prefix, now = path.rsplit("/", 1)[0], time.monotonic()
        with self._lock:
            recent = self._recent_by_prefix.setdefault(prefix, collections.deque())
            while recent and now - recent[0] >= 1.0:
                recent.popleft()
            recent.append(now)
            return len(recent) > self.rate_limit

    def _first_attempt_of(self, part: tuple) -> bool:
        """Whether this is the first UploadPart of (upload id, part number) since the last reset."""
        with self._lock:
            first = part not in self._parts_sent
            self._parts_sent.add(part)
            return first

    def _before(self, kind: str):
        """A matching object GET ("get") or an UploadPart ("part") is about to be forwarded: its hook, when due."""
        with self._lock:
            self._seen[kind] += 1
            hook = self._hooks[kind]
            if hook is None or self._seen[kind] != hook[0]:
                return
            self._hooks[kind] = None
        hook[1]()
        self._count("hooks_called")

    def _first_seen_stalls(self, path: str, range_header: str | None) -> bool:
        """Whether a GET of this range stalls (stall_first_byte): every stall_every-th range not asked before, the
        first stall_max of them."""
        with self._lock:
            key = (path, range_header)
            if key in self._ranges_seen:
                return False
            self._ranges_seen.add(key)
            if len(self._ranges_seen) % self.stall_every != 0:
                return False
            self._stalls += 1
            return self.stall_max is None or self._stalls <= self.stall_max

    def _cached(self, path: str):
        with self._lock:
            return self._cache.get(path)

    def _keep(self, path: str, answer: tuple) -> tuple:
        with self._lock:
            return self._cache.setdefault(path, answer)

    def _first_complete(self, upload_id: str) -> bool:
        with self._lock:
            first = upload_id not in self._completes
            self._completes.add(upload_id)
            return first

    def _record_upstream_complete(self, status: int, body: bytes):
        with self._lock:
            self._upstream_completes.append((status, body))

    def _track(self, connection, active: bool):
        with self._lock:
            (self._connections.add if active else self._connections.discard)(connection)

    def drop_connections(self):
        """Closes every client connection now (what a test does when a client seems stuck)."""
        with self._lock:
            connections = list(self._connections)
        for connection in connections:
            with contextlib.suppress(OSError):
                connection.shutdown(socket.SHUT_RDWR)

    # --- life ---

    def start(self):
        handler = type("HostileHandler", (_Handler,), {"proxy": self})
        self._server = _Server((LOOPBACK, 0), handler)
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, name="hostile-proxy", daemon=True)
        self._thread.start()

    def stop(self):
        self._stop.set()
        if self._server is not None:
            self._server.shutdown()
            self.drop_connections()
            self._server.server_close()
            self._thread.join(timeout=10)
            self._server = None


@contextlib.contextmanager
def serve_hostile(upstream_host: str, upstream_port: int, **options):
    """A HostileProxy on a free 127.0.0.1 port in front of upstream_host:upstream_port, stopped on exit; options are
    HostileProxy's (key_filter, shift_bytes, stall_seconds, stall_tail_closed_ranges, trickle_interval,
    trickle_seconds, slow_down_parts, stall_every, rate_limit, secret_key)."""
    proxy = HostileProxy(upstream_host, upstream_port, **options)
    proxy.start()
    try:
        yield proxy
    finally:
        proxy.stop()
