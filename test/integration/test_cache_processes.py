"""Two real processes on one cache directory (issue 44): reading the same Parquet files at once over a slow link,
they share each block's and each footer's fetch through the on-disk claims, so both together send about what one
cold run sends, and both answer right. (A SIGKILL mid-fetch is test_cache.py's killed-fill test; one with claims
left on a glob is still to write.)"""

from helpers import server_requests
from test_cache import cache_setup, finish_child, read_counting_requests, start_child
from test_cache_warm import GLOB_QUERY, put_glob

ROWS = 50000  # files of ~1.1 MiB whose footers are tail pieces (test_cache_warm.ROWS)
# Slow enough that each fetch takes a while: the second process finds the first one's claims live.
RATE_KIB = 2048


def test_two_processes_reading_one_glob_at_once_send_about_one_cold_runs_requests(con, rig, tmp_path):
    url, total, _ = put_glob(con, rig, tmp_path, f"cache-processes/{tmp_path.name}", ROWS)
    rig.add_toxic("slow", "bandwidth", {"rate": RATE_KIB})
    cold, cold_requests = read_counting_requests(rig, [url], cache_setup(tmp_path / "alone"), query=GLOB_QUERY)
    assert cold["shas"] == [total]
    setup = cache_setup(tmp_path / "shared")
    results = []

    def both():
        children = [start_child(rig, [url], setup, query=GLOB_QUERY) for _ in range(2)]
        results.extend(finish_child(child) for child in children)

    requests = server_requests(rig, both)
    assert [r["shas"] for r in results] == [[total]] * 2
    one = cold_requests.get("GetObject", 0)
    two = requests.get("GetObject", 0)
    # Without the claims each process fetches its own blocks and footers: twice one run's GETs.
    assert two <= one * 1.3 + 2, (one, two, requests)
    assert sum(r["stats"]["cache_fetches_shared"] for r in results) > 0
    # httpfs2_stats' reader_requests counts reads asked of the reader, served from the cache or not: figures only.
    own = [r["stats"]["reader_requests"] + r["stats"]["read_ahead_requests"] for r in results]
    alone = cold["stats"]["reader_requests"] + cold["stats"]["read_ahead_requests"]
    print("one cold run", cold_requests, alone, "two at once", requests, own)
