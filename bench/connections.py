"""How many TCP connections a client opened to the rig's proxy: the kernel's socket table (/proc/net/tcp) sampled
every INTERVAL_S while the client runs, counting the proxy side of each connection (local port = the proxy's port)
by the client's port. toxiproxy keeps no per-proxy connection count and versitygw's access log has no client port,
so this is the one place that sees every client alike (DuckDB's curl, AWS CRT, obstore). A connection opened and
closed between two samples is missed: the counts are a floor, exact for the long keep-alive connections these
clients use. Connections already open when the count starts (the parent's own) are left out.
"""

import contextlib
import threading
from pathlib import Path

INTERVAL_S = 0.02
ESTABLISHED = "01"


def _connected_ports(port: int) -> set:
    """The remote ports of the established sockets whose local port is `port`."""
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        path = Path(table)
        if not path.exists():
            continue
        for line in path.read_text().splitlines()[1:]:
            fields = line.split()
            local, remote, state = fields[1], fields[2], fields[3]
            if state == ESTABLISHED and int(local.rsplit(":", 1)[1], 16) == port:
                found.add(int(remote.rsplit(":", 1)[1], 16))
    return found


class Connections:
    """Samples the connections to `port` on a thread until stopped: `seen` (distinct client ports) and `peak` (the
    most open at one sample)."""

    def __init__(self, port: int):
        self.port, self.seen, self.peak = port, set(), 0
        self._before = _connected_ports(port)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self):
        while True:
            now = _connected_ports(self.port) - self._before
            self.seen |= now
            self.peak = max(self.peak, len(now))
            if self._stop.wait(INTERVAL_S):
                return

    def start(self):
        self._thread.start()

    def stop(self):
        self._stop.set()
        self._thread.join()


@contextlib.contextmanager
def counted(rig, row: dict):
    """Around a client's run: adds `connections` (distinct) and `connections_peak` to row."""
    connections = Connections(rig.proxy_port)
    connections.start()
    try:
        yield
    finally:
        connections.stop()
        row.update(connections=len(connections.seen), connections_peak=connections.peak)


def watch(rig):
    """bench/workload_bench.py measure()'s `watch` for this rig."""
    return lambda row: counted(rig, row)
