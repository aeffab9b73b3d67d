//===----------------------------------------------------------------------===//
//                         httpfs2
//
// adapter/stores/checked_range_reader.hpp
//
// The range GETs of sub-reads and read-ahead on s3:// and http(s):// objects, and of az:// blobs read through the
// block cache, sent by httpfs2 itself through DuckDB's HTTPUtil (httpfs's client, its timeouts and retry policy) so
// that the status and headers of every answer are seen: httpfs's handles hide them and check only the length. Each
// answer must be exactly the range asked, of the version the read began with, and prove that version
// (CheckRangeAnswer). Where the answers fall short of that for any reason but a changed object, the object is read as
// httpfs alone reads it (ReadFallback), once, on the reader's thread.
//===----------------------------------------------------------------------===//

#pragma once

#include "adapter/stores/store_http.hpp"
#include "adapter/common/object_version.hpp"
#include "adapter/stores/azure_signing.hpp"
#include "adapter/stores/s3_signing.hpp"
#include "core/cache/block_cache.hpp"
#include "core/common/io_stats.hpp"
#include "core/common/stream_controller.hpp"
#include "core/read_ahead/object_read_ahead.hpp"
#include "core/requests/request_race.hpp"
#include "core/requests/range_answer.hpp"
#include "core/requests/retry_policy.hpp"
#include "duckdb/common/file_opener.hpp"
#include "duckdb/common/http_util.hpp"

#include <atomic>
#include <condition_variable>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_set>

namespace httpfs2 {

//! How an object whose range answers httpfs2 cannot use is read instead: nothing more is split or read ahead.
enum class ReadFallback : uint8_t {
	//! Range answers are used.
	NONE,
	//! Through the wrapped filesystem's handles as they are: a server that ignores Range where the connection turned
	//! auto_fallback_to_full_download off (httpfs's reads fail as they would alone); answers that cannot prove their
	//! version of an object larger than CheckedRangeReader::MAX_WHOLE_OBJECT_BYTES (each read is then one of httpfs's
	//! requests, as httpfs alone reads).
	WRAPPED,
	//! Through one GET of the whole object without Range (httpfs's full download): a server that ignores Range (as
	//! httpfs's own fallback reads it), a server that answers ranges with other bytes than asked, which httpfs's own
	//! range reads would take as they come; answers that cannot prove their
	//! version (one GET is one version, where a handle's reads each sent alone could meet two).
	WHOLE_OBJECT
};

//! Thrown by CheckedRangeReader::Read, never to a user: the object is read as its ReadFallback says, and the caller
//! reads the bytes that way instead.
class ReadsDeclined : public FetchDeclined {
public:
	using FetchDeclined::FetchDeclined;
};

//! The paths whose server answered a range of them exactly, kept per wrapped filesystem: a later reader of such a path
//! sends its first requests in parallel at once. At most MAX_PATHS are kept (then it starts over).
class RangedPaths {
public:
	bool Contains(const std::string &path);
	void Add(const std::string &path);

private:
	static constexpr size_t MAX_PATHS = 100000;
	std::mutex lock;
	std::unordered_set<std::string> paths;
};

class CheckedRangeReader : public std::enable_shared_from_this<CheckedRangeReader> {
public:
	//! AZURE: az:// blobs, signed with the azure secret's account key or SAS token (AzureConnectionFor).
	enum class Store : uint8_t { S3, HTTP, AZURE };
	//! An object whose answers cannot prove their version is read from one GET of it whole, held in memory while its
	//! handle is open as httpfs's full download holds it, up to this size; a larger one is read as httpfs alone reads
	//! it.
	static constexpr uint64_t MAX_WHOLE_OBJECT_BYTES = 64 * 1024 * 1024;
	//! While ranges are not confirmed, a read sent beside others of at least PROBE_SPLIT_BYTES, on a client that hands
	//! over an answer's head only with its body (curl), asks for its first PROBE_BYTES alone: the reads waiting for
	//! that head then wait one first byte, not a whole piece's transfer (a request more, once per object; a smaller
	//! read's transfer is short beside a first byte).
	static constexpr uint64_t PROBE_BYTES = 64 * 1024;
	static constexpr uint64_t PROBE_SPLIT_BYTES = 1024 * 1024;

	//! A reader of `version` of `path`, or null where httpfs2 does not send the GETs itself: no client context, an
	//! s3:// path or secret that httpfs2 does not address (ResolveS3Object), an http(s):// URL with a matching HTTP
	//! secret (its bearer token and headers are httpfs's to add), DuckDB's built-in client.
	//! `ranges_confirmed`: the store answered a range of this object exactly already (its tail); `ranged` holds the
	//! paths of which that is known from earlier readers, and learns this one's.
	static std::shared_ptr<CheckedRangeReader> For(const std::string &path, const ObjectVersion &version, Store store,
	                                               duckdb::optional_ptr<duckdb::FileOpener> opener, IoStats &stats,
	                                               std::shared_ptr<RangedPaths> ranged, bool ranges_confirmed,
	                                               StreamController *streams = nullptr);

	//! Reads `range` into `destination`. Throws ReadsDeclined (see above), httpfs's error types for a failed request
	//! (an HTTPException keeps its status code), and an HTTPException naming the file and range for an answer of
	//! another version. Retries what httpfs would (no answer, 5xx, 429, a short body). Until one answer's head showed
	//! that the server serves ranges of the object, one request is in flight at a time: a server that ignores them
	//! sends the whole object to each, and the curl client holds each in memory. The others go as soon as that head
	//! came (206 with the range and version asked for): with httplib before its body; curl hands over the head with
	//! the body, so a large first read asks for its first PROBE_BYTES alone and then for the rest.
	//! With a block cache (UseCache), a read whose blocks are all held for the version is served from it with no
	//! request; otherwise it is fetched widened to whole blocks, which are handed to the cache's background writer
	//! (the read does not wait for the disk).
	void Read(const ByteRange &range, char *destination);
	//! As Read, but a read the cache does not hold is not widened to whole blocks: it is read exactly from the store.
	//! The object's tail (a footer fetched ahead) is then kept as its tail piece (TailPieceIndex), which serves it
	//! next time; any other range is not cached, and false says so: the caller may fill its blocks later, off its path.
	//! A tail piece serves Read too (DuckDB's first read of a footer).
	bool ReadNarrow(const ByteRange &range, char *destination);
	//! As Read without the block cache (a buffered handle's window, ReadWindow: httpfs's handle asks a window in one
	//! request, at most ReadWindow::MAX_BYTES); while the path's ranges are not confirmed, after the request in flight
	//! alone. `beside_others`: the read is one of several sent at once (pieces of a split or of DuckDB 2.0's async
	//! reads), which may wait for its head (PROBE_BYTES).
	void ReadFromStore(const ByteRange &range, char *destination, bool beside_others = false);

	//! The block cache's key of `version` of `path`: its strong ETag and size, else its size and Last-Modified; false
	//! when neither names it, or for a URL with a query (it may carry a token, and keys are written to disk).
	static bool CacheKeyFor(const std::string &path, const ExpectedVersion &version, CacheKey &key);
	//! What a reader of `version` expects of its answers at first (before an answer taught it more).
	static ExpectedVersion ExpectedOf(const ObjectVersion &version);

	//! Reads look in `cache` first and fill it, while the version can key it (CacheKeyOf); `warn` is told once, with
	//! the reason, when the cache refuses blocks because its writes fail, and the reader no longer uses it. A read
	//! waiting for another read's fetch of a block ends with an InterruptException once `interrupted` says so. Set
	//! before the reader is shared.
	void UseCache(std::shared_ptr<BlockCache> cache, std::function<void(const std::string &)> warn,
	              CancelCheck interrupted);
	//! Whether reads go through the block cache (UseCache, and it did not refuse blocks).
	bool CacheOn() const {
		return cache_on.load();
	}

	//! The version the answers so far were of: the open's, with what the first exact answer added (its ETag).
	ObjectVersion AnsweredVersion();

	//! How the object is read since its range answers were declined (NONE while they are used).
	ReadFallback Fallback() const {
		return fallback.load();
	}

	const std::string path;

private:
	struct Attempt;

	//! An answer's head showed the server serves ranges of the path: the requests waiting for it go. So does a read
	//! the block cache served for this version: its bytes came from exact answers to ranges (this process's or, for a
	//! footer another process fetched while this one waited, that one's), so the first read sent after it need not
	//! probe (on DuckDB 2.0, two processes reading a glob at once sent a probe more for each file of the other's).
	void ConfirmRanges();
	//! The read sent while ranges are not confirmed (see PROBE_BYTES).
	void ReadAsProbe(const ByteRange &range, char *destination, bool beside_others);
	//! Turns the cache off for this reader, telling `warn_cache_failed` once: the cache refused blocks.
	void CacheRefused();
	//! The bytes at the object's end kept as its tail piece: what DuckDB reads first of a Parquet file of its size.
	uint64_t TailPieceLength();
	//! The key of the version read in the block cache: the path with its strong ETag and size, or, for an object
	//! without an ETag, its size and Last-Modified (a weaker proof); false when the version has neither, or the path
	//! has a query (which may carry a credential).
	bool CacheKeyOf(CacheKey &key);
	//! Read's attempts, as the one retry policy (RequestAttempts) makes them.
	void ReadWithRetries(const ByteRange &range, char *destination);
	//! What `attempt` at `range` came to; throws ReadsDeclined for answers that decline range reads (Decline).
	AttemptOutcome Judge(const ByteRange &range, Attempt &attempt);
	CheckedRangeReader(std::string path, Store store, const ObjectVersion &version,
	                   duckdb::unique_ptr<duckdb::HTTPParams> params, IoStats &stats);
	//! One request, no retry; in a race (hedged), `entry` is told when the answer begins and asked before `destination`
	//! is written.
	void Send(const ByteRange &range, char *destination, Attempt &attempt, RequestRace::Entry *entry = nullptr);
	//! One request as Send, hedged when its answer is late (RequestRace); `attempt` gets the answer that stands.
	void SendHedged(const ByteRange &range, char *destination, Attempt &attempt);
	//! Where the GETs go: the object's URL in the store (without a SAS token: the one errors name).
	std::string Url() const;
	//! The URL and headers of a GET of `range`, signed now; `signed_with` gets the credentials' generation.
	std::pair<std::string, duckdb::HTTPHeaders> Request(const ByteRange &range, uint64_t &signed_with) const;
	//! The version answers are checked against: the open's, with what the first exact answer said that the open did
	//! not (an ETag; the Last-Modified of an object opened with an ETag).
	ExpectedVersion Expected();
	//! The verdict on `answer` to a GET of `range`; an exact one teaches the expected version what it did not know, at
	//! once, so that answers still in flight are checked against it.
	RangeVerdict CheckAndAdopt(const ByteRange &range, const RangeAnswer &answer, std::string &why);
	//! Reads of the object from now on go as `how` says; throws ReadsDeclined.
	[[noreturn]] void Decline(ReadFallback how, Counter counter);
	[[noreturn]] void Refuse(const ByteRange &range, const Attempt &attempt, const RequestAttempts &attempts);

	const Store store;
	//! What requests are signed with (S3; null for http(s)://), looked up again when the store refuses them.
	std::unique_ptr<S3CredentialSource> credentials;
	S3Address address;
	//! What requests to an az:// blob are authorized with, and its URL (without a query).
	AzureConnection azure;
	std::string azure_url;
	//! httpfs's parameters for the path (timeout, proxy, TLS), with retries made here and no HTTP log (it records
	//! headers, which carry signatures).
	const duckdb::unique_ptr<duckdb::HTTPParams> params;
	RequestLog log;
	//! httpfs's retry settings for the path.
	const RetryBackoff backoff;
	const uint64_t max_attempts;
	IoStats &stats;
	//! Told when the store asks for less (503 Slow Down, 429): the stats, the streams of the database's reads, the
	//! hedging policy.
	ThrottleListeners throttle_listeners;
	//! How its GETs are hedged; not at all where the policy is null (httpfs2_hedge_reads off for the open).
	ReadHedging hedging;
	std::atomic<ReadFallback> fallback {ReadFallback::NONE};
	//! The connection's auto_fallback_to_full_download when the reader was made.
	bool full_download_allowed = true;
	//! Whether the client calls the response handler as the head arrives (httplib), not once the body is in (curl).
	bool heads_before_body = false;
	std::atomic<bool> ranges_confirmed {false};
	//! While ranges are not confirmed, one request is in flight (`probing`); the others wait on `probe_ended` for
	//! ranges_confirmed or its end.
	std::mutex probe_lock;
	std::condition_variable probe_ended;
	bool probing = false;
	//! How often that request failed, and its latest failure (under probe_lock): the requests that waited for it
	//! fail with it.
	std::atomic<uint64_t> probes_failed {0};
	std::exception_ptr probe_failure;

	//! Kept connections to the object's host, shared with httpfs2's other requests of the transaction that opened it.
	std::shared_ptr<ClientPool> clients = std::make_shared<ClientPool>();
	std::shared_ptr<RangedPaths> ranged;
	std::shared_ptr<BlockCache> cache;
	std::function<void(const std::string &)> warn_cache_failed;
	//! Whether the query reading was interrupted: asked during retries' waits and waits for blocks (set at For, and
	//! again by UseCache, before any read).
	CancelCheck interrupted;
	std::atomic<bool> cache_on {false};
	std::mutex lock;
	ExpectedVersion expected;
};

} // namespace httpfs2
