#include "adapter/stores/checked_range_reader.hpp"

#include "adapter/compat/duckdb_api.hpp"
#include "adapter/stores/store_get.hpp"

#include "core/cache/cached_read.hpp"
#include "core/formats/parquet_layout.hpp"
#include "core/requests/http_parts.hpp"
#include "core/requests/retry_policy.hpp"
#include "core/requests/s3_request.hpp"
#include "core/requests/url_redaction.hpp"
#include "duckdb/common/exception.hpp"
#include "duckdb/common/exception/http_exception.hpp"
#include "duckdb/main/client_context.hpp"
#include "duckdb/main/secret/secret_manager.hpp"

#include <chrono>
#include <cstring>
#include <thread>

namespace httpfs2 {

constexpr size_t RangedPaths::MAX_PATHS;
constexpr uint64_t CheckedRangeReader::MAX_WHOLE_OBJECT_BYTES;

using duckdb::FileOpener;
using duckdb::optional_ptr;
using duckdb::unique_ptr;
using std::string;

namespace {
//! `wait`'s answer; a wait for a block another read fetches, given up because the query was interrupted, ends the read
//! as DuckDB's interrupt.
template <class WAIT>
auto InterruptingCancelledWaits(WAIT &&wait) -> decltype(wait()) {
	try {
		return wait();
	} catch (BlockWaitCancelled &) {
		throw duckdb::InterruptException();
	}
}
} // namespace

//! What one request's answer was (StoreGet's exchange: `taken` is the bytes written to the destination), and what the
//! reader made of it.
struct CheckedRangeReader::Attempt : StoreGet::Exchange {
	RangeAnswer answer;
	RangeVerdict verdict = RangeVerdict::NOT_SUCCESS;
	string why;
	//! The URL it was sent to (an az:// blob's may carry a SAS token: never in a message).
	string url;
	//! The generation of the credentials it was signed with.
	uint64_t signed_with = 0;
};

//! Whether an HTTP secret applies to `url`: its bearer token and extra headers are added by httpfs's handles only.
static bool HasHttpSecret(const string &url, optional_ptr<FileOpener> opener) {
	auto secret_manager = FileOpener::TryGetSecretManager(opener);
	auto transaction = FileOpener::TryGetCatalogTransaction(opener);
	if (!secret_manager || !transaction) {
		return true; // cannot tell: leave the reads to httpfs
	}
	return secret_manager->LookupSecret(*transaction, url, "http").HasMatch();
}

bool RangedPaths::Contains(const string &path) {
	std::lock_guard<std::mutex> guard(lock);
	return paths.count(path) > 0;
}

void RangedPaths::Add(const string &path) {
	std::lock_guard<std::mutex> guard(lock);
	if (paths.size() >= MAX_PATHS) {
		paths.clear();
	}
	paths.insert(path);
}

std::shared_ptr<CheckedRangeReader> CheckedRangeReader::For(const string &path, const ObjectVersion &version,
                                                            Store store, optional_ptr<FileOpener> opener,
                                                            IoStats &stats, std::shared_ptr<RangedPaths> ranged,
                                                            bool ranges_confirmed, StreamController *streams) {
	try {
		auto context = FileOpener::TryGetClientContext(opener);
		if (!context || version.size == 0) {
			return nullptr;
		}
		S3Credentials credentials;
		S3Address address;
		AzureConnection azure;
		AzureBlobPath blob;
		bool addressed = store == Store::S3      ? ResolveS3Object(path, opener, credentials, address)
		                 : store == Store::AZURE ? AzureBlobPath::Parse(path, blob) && !blob.HasWildcard() &&
		                                               AzureConnectionFor(path, opener, azure)
		                                         : !HasHttpSecret(path, opener);
		if (!addressed) {
			return nullptr;
		}
		auto &http = duckdb::HTTPUtil::Get(*context->db);
		if (http.GetName() == "Built-In") {
			return nullptr; // httpfs is not loaded (its client sends these requests)
		}
		RequestLog log;
		auto params = QuietParams(http, path, opener, &log);
		std::shared_ptr<CheckedRangeReader> reader(
		    new CheckedRangeReader(path, store, version, std::move(params), stats));
		reader->log = std::move(log);
		reader->heads_before_body = HeadsBeforeBody(http);
		if (store == Store::S3) {
			reader->credentials.reset(new S3CredentialSource(path, std::move(credentials), opener));
		}
		reader->address = std::move(address);
		if (store == Store::AZURE) {
			reader->azure_url = AzureBlobUrl(azure, blob);
			reader->azure = std::move(azure);
		}
		// A query interrupted while a request of its waits out a retry (a throttled wait lasts up to 20 s) stops
		// within RequestAttempts::CANCEL_SLICE; a connection gone has no query left to read for.
		reader->interrupted = QueryCancelled(*context);
		reader->ranges_confirmed = ranges_confirmed || ranged->Contains(path);
		reader->ranged = std::move(ranged);
		reader->clients = UploadConnections::ForUrl(opener, reader->Url());
		// Told of throttling whether or not this reader hedges: other readers' hedges are what it holds back.
		reader->throttle_listeners = ReadThrottleListeners(*context, stats, streams, path);
		reader->hedging = ReadHedging::For(*context, opener);
		duckdb::Value full_download;
		if (FileOpener::TryGetCurrentSetting(opener, "auto_fallback_to_full_download", full_download) &&
		    !full_download.IsNull()) {
			reader->full_download_allowed = full_download.GetValue<bool>();
		}
		return reader;
	} catch (std::exception &) {
		return nullptr; // a secret or setting httpfs2 cannot read: httpfs's handles read the file
	}
}

CheckedRangeReader::CheckedRangeReader(string path_p, Store store_p, const ObjectVersion &version,
                                       unique_ptr<duckdb::HTTPParams> params_p, IoStats &stats_p)
    : path(std::move(path_p)), store(store_p), params(std::move(params_p)), backoff(RetryBackoffOf(*params)),
      max_attempts(params->retries + 1), stats(stats_p) {
	params->retries = 0;
	expected = ExpectedOf(version);
}

ExpectedVersion CheckedRangeReader::ExpectedOf(const ObjectVersion &version) {
	ExpectedVersion expected;
	expected.size = version.size;
	expected.etag = version.etag;
	// With an ETag, Last-Modified is taken from the first answer: a listing's (ListObjectsV2) may be written at
	// another precision than the header's. Without one, the open's (a HEAD's header) is all there is.
	if (version.etag.empty() && version.last_modified.value != 0) {
		expected.last_modified = static_cast<std::time_t>(duckdb::Timestamp::GetEpochSeconds(version.last_modified));
	}
	return expected;
}

string CheckedRangeReader::Url() const {
	return store == Store::S3 ? address.Url() : store == Store::AZURE ? azure_url : path;
}

std::pair<string, duckdb::HTTPHeaders> CheckedRangeReader::Request(const ByteRange &range,
                                                                   uint64_t &signed_with) const {
	auto value = "bytes=" + std::to_string(range.offset) + "-" + std::to_string(range.End() - 1);
	if (credentials) {
		return {Url(), SignedS3RangeGet(credentials->Current(signed_with), address, value)};
	}
	if (store == Store::AZURE) {
		AzureRequest get;
		get.verb = "GET";
		get.url = azure_url;
		get.ms_headers = {{"x-ms-range", value}};
		return AuthorizeAzureRequest(azure, get);
	}
	duckdb::HTTPHeaders headers;
	headers["Range"] = value;
	return {Url(), headers};
}

ExpectedVersion CheckedRangeReader::Expected() {
	std::lock_guard<std::mutex> guard(lock);
	return expected;
}

ObjectVersion CheckedRangeReader::AnsweredVersion() {
	auto known = Expected();
	ObjectVersion version;
	version.size = known.size;
	version.etag = known.etag;
	version.last_modified = duckdb::Timestamp::FromEpochSeconds(static_cast<int64_t>(known.last_modified));
	return version;
}

RangeVerdict CheckedRangeReader::CheckAndAdopt(const ByteRange &range, const RangeAnswer &answer, string &why) {
	std::lock_guard<std::mutex> guard(lock);
	auto verdict = CheckRangeAnswer(range, expected, answer, why);
	std::time_t modified;
	if (verdict == RangeVerdict::EXACT) {
		if (expected.etag.empty()) {
			expected.etag = answer.etag;
		}
		if (expected.last_modified == 0 && ParseHttpDate(answer.last_modified, modified)) {
			expected.last_modified = modified;
		}
	}
	return verdict;
}

void CheckedRangeReader::Decline(ReadFallback how, Counter counter) {
	stats.Add(counter);
	// The safer way stands where answers gave two reasons: one GET of the whole object serves either.
	auto current = fallback.load();
	while (current < how && !fallback.compare_exchange_weak(current, how)) {
	}
	throw ReadsDeclined(path);
}

void CheckedRangeReader::Send(const ByteRange &range, char *destination, Attempt &attempt, RequestRace::Entry *entry) {
	auto client = clients->Take();
	auto request = Request(range, attempt.signed_with);
	attempt.url = request.first;
	auto head = [&](const duckdb::HTTPResponse &response) {
		attempt.answer = RangeAnswerOf(response);
		// A client that lost the connection (curl) still reports the answer it got so far: a failure to retry.
		attempt.verdict =
		    response.HasRequestError() ? RangeVerdict::NOT_SUCCESS : CheckAndAdopt(range, attempt.answer, attempt.why);
		if (attempt.verdict == RangeVerdict::EXACT && attempt.answer.status == 206) {
			ConfirmRanges(); // the requests waiting for this head go now, beside its body
		}
		return attempt.verdict == RangeVerdict::EXACT         ? StoreGet::Head::WANTED
		       : attempt.verdict == RangeVerdict::NOT_SUCCESS ? StoreGet::Head::ERROR_BODY
		                                                      : StoreGet::Head::STOP;
	};
	auto body = [&](const char *data, size_t length) {
		if (attempt.taken + length > range.length) {
			attempt.verdict = RangeVerdict::WRONG_RANGE;
			attempt.why = "more than the " + std::to_string(range.length) + " bytes asked for";
			return false;
		}
		std::memcpy(destination + attempt.taken, data, length);
		return true;
	};
	StoreGet::Send(*params, log, request.first, request.second, &client, entry, head, body, attempt);
	if (attempt.answered && attempt.verdict == RangeVerdict::EXACT && attempt.taken == range.length) {
		clients->GiveBack(std::move(client));
	}
}

void CheckedRangeReader::SendHedged(const ByteRange &range, char *destination, Attempt &attempt) {
	// The senders keep the reader: the loser runs on after this returns.
	auto self = shared_from_this();
	RequestRace::RunInto(
	    *hedging.threads, *hedging.policy, static_cast<double>(params->timeout), hedging.BodySeconds(range.length),
	    stats,
	    [self, range, destination](Attempt &sent, RequestRace::Entry &entry) {
		    self->Send(range, destination, sent, &entry);
	    },
	    [range](const Attempt &won) {
		    return won.verdict == RangeVerdict::EXACT && won.taken == range.length; // its bytes are the read's
	    },
	    attempt);
}

void CheckedRangeReader::UseCache(std::shared_ptr<BlockCache> cache_p, std::function<void(const string &)> warn,
                                  CancelCheck interrupted_p) {
	D_ASSERT(warn);
	cache = std::move(cache_p);
	warn_cache_failed = std::move(warn);
	interrupted = std::move(interrupted_p);
	cache_on = cache != nullptr;
}

bool CheckedRangeReader::CacheKeyOf(CacheKey &key) {
	return CacheKeyFor(path, Expected(), key);
}

bool CheckedRangeReader::CacheKeyFor(const string &path, const ExpectedVersion &known, CacheKey &key) {
	if (path.find('?') != string::npos) {
		return false;
	}
	auto size = std::to_string(known.size);
	if (!known.etag.empty() && known.etag.rfind("W/", 0) != 0) {
		key.version = "etag=" + known.etag + ";size=" + size;
	} else if (known.last_modified != 0) {
		key.version = "size=" + size + ";modified=" + std::to_string(static_cast<int64_t>(known.last_modified));
	} else {
		return false;
	}
	key.path = path;
	return true;
}

uint64_t CheckedRangeReader::TailPieceLength() {
	return ParquetFooter::DuckDBTailReadSize(Expected().size);
}

void CheckedRangeReader::Read(const ByteRange &range, char *destination) {
	CacheKey key;
	if (!cache_on || !CacheKeyOf(key)) {
		ReadFromStore(range, destination, true);
		return;
	}
	auto size = Expected().size;
	// Any read within the tail piece: DuckDB 2.0 reads a Parquet footer's metadata apart from the tail it read first.
	if (ReadHeldTailPiece(*cache, key, size, TailPieceLength(), range, destination, stats)) {
		ConfirmRanges();
		return;
	}
	auto fetch = [this](const ByteRange &span, char *bytes, CacheKey &proven) {
		ReadFromStore(span, bytes, true);
		CacheKeyOf(proven);
	};
	bool kept = InterruptingCancelledWaits(
	    [&]() { return ReadThroughBlockCache(*cache, key, size, range, destination, stats, fetch, interrupted); });
	if (!kept) {
		CacheRefused();
	}
}

void CheckedRangeReader::CacheRefused() {
	if (cache_on.exchange(false)) {
		warn_cache_failed("blocks could not be written: " + cache->LastWriteError());
	}
}

bool CheckedRangeReader::ReadNarrow(const ByteRange &range, char *destination) {
	CacheKey key;
	if (!cache_on || !CacheKeyOf(key)) {
		ReadFromStore(range, destination);
		return true;
	}
	auto size = Expected().size;
	bool tail = range.End() == size && range.length <= BlockCache::BLOCK_SIZE;
	bool held = InterruptingCancelledWaits([&]() {
		return (tail && ReadHeldTailPiece(*cache, key, size, range.length, range, destination, stats)) ||
		       ReadHeldBlocks(*cache, key, size, range, destination, stats, interrupted);
	});
	if (held) {
		ConfirmRanges();
		return true;
	}
	if (!tail) {
		ReadFromStore(range, destination);
		return false;
	}
	stats.Add(Counter::CACHE_MISSES);
	// Two processes reading one footer at once: one fetches it, the other reads it from the cache.
	if (InterruptingCancelledWaits([&]() {
		    return ReadTailPieceOrClaimIt(*cache, key, size, range.length, range, destination, stats, interrupted);
	    })) {
		ConfirmRanges();
		return true;
	}
	auto claimed = key;
	auto piece_index = TailPieceIndex(range.length);
	try {
		ReadFromStore(range, destination);
	} catch (...) {
		cache->EndFetchClaim(claimed, piece_index); // the processes waiting on it fetch it themselves
		throw;
	}
	CacheKeyOf(key); // the version the answer proved, as a read through the cache keys its blocks
	if (!FillTailPiece(*cache, key, size, range.length, range, destination)) {
		CacheRefused();
	}
	if (claimed.path != key.path || claimed.version != key.version) {
		cache->EndFetchClaim(claimed, piece_index); // the proven version is another: the piece's write ends not this
	}
	return true;
}

void CheckedRangeReader::ReadFromStore(const ByteRange &range, char *destination, bool beside_others) {
	if (!ranges_confirmed) {
		std::unique_lock<std::mutex> guard(probe_lock);
		auto failed_before = probes_failed.load();
		probe_ended.wait(guard, [&]() { return ranges_confirmed.load() || !probing; });
		if (!ranges_confirmed) {
			if (probes_failed.load() != failed_before) {
				// The request this one waited for failed (a stalled server): so would this one, after as long.
				std::rethrow_exception(probe_failure);
			}
			probing = true;
			guard.unlock();
			std::exception_ptr failure;
			try {
				ReadAsProbe(range, destination, beside_others);
			} catch (ReadsDeclined &) {
				failure = std::current_exception(); // the waiters find the fallback set and are declined too
			} catch (...) {
				failure = std::current_exception();
				guard.lock();
				probe_failure = failure;
				probes_failed++;
				guard.unlock();
			}
			guard.lock();
			probing = false;
			guard.unlock();
			probe_ended.notify_all();
			if (failure) {
				std::rethrow_exception(failure);
			}
			return;
		}
	}
	ReadWithRetries(range, destination);
}

void CheckedRangeReader::ReadAsProbe(const ByteRange &range, char *destination, bool beside_others) {
	if (!beside_others || heads_before_body || range.length < PROBE_SPLIT_BYTES) {
		ReadWithRetries(range, destination);
		return;
	}
	ReadWithRetries(ByteRange {range.offset, PROBE_BYTES}, destination); // its exact answer confirms the ranges
	ReadWithRetries(ByteRange {range.offset + PROBE_BYTES, range.length - PROBE_BYTES}, destination + PROBE_BYTES);
}

void CheckedRangeReader::ConfirmRanges() {
	if (ranges_confirmed.load() || ranges_confirmed.exchange(true)) {
		return;
	}
	ranged->Add(path);
	{
		// Taken so that a waiter between its test of ranges_confirmed and its wait cannot miss the notification.
		std::lock_guard<std::mutex> guard(probe_lock);
	}
	probe_ended.notify_all();
}

void CheckedRangeReader::ReadWithRetries(const ByteRange &range, char *destination) {
	if (fallback.load() != ReadFallback::NONE) {
		throw ReadsDeclined(path);
	}
	RequestAttempts attempts(backoff, max_attempts, throttle_listeners);
	attempts.CancelWith(interrupted);
	Attempt attempt;
	auto send = [&](Attempt &sent) {
		if (hedging.policy) {
			SendHedged(range, destination, sent);
		} else {
			Send(range, destination, sent);
		}
		return Judge(range, sent);
	};
	auto refresh = [&](const Attempt &refused) {
		return credentials && credentials->Refresh(refused.signed_with, stats);
	};
	if (attempts.Run(attempt, send, refresh) != AttemptOutcome::DONE) {
		if (attempts.Cancelled()) {
			throw duckdb::InterruptException();
		}
		Refuse(range, attempt, attempts);
	}
}

AttemptOutcome CheckedRangeReader::Judge(const ByteRange &range, Attempt &attempt) {
	switch (attempt.answered ? attempt.verdict : RangeVerdict::NOT_SUCCESS) {
	case RangeVerdict::EXACT:
		if (attempt.taken == range.length) {
			ConfirmRanges();
			return AttemptOutcome::DONE;
		}
		// A connection cut mid-body: sent again, as httpfs would.
		attempt.why = "the answer ended after " + std::to_string(attempt.taken) + " of " +
		              std::to_string(range.length) + " bytes";
		return AttemptOutcome::FAILED;
	case RangeVerdict::RANGES_IGNORED:
		// Its answer to a GET without Range is the object: httpfs's own fallback, made here (httpfs 2a6481d on
		// DuckDB 2.0 fails on s3:// instead, after a whole body per attempt).
		Decline(full_download_allowed ? ReadFallback::WHOLE_OBJECT : ReadFallback::WRAPPED,
		        Counter::RANGE_ANSWERS_REFUSED);
	case RangeVerdict::WRONG_RANGE:
		// A server that answers so does it again; its answer to a GET without Range is the object.
		Decline(ReadFallback::WHOLE_OBJECT, Counter::RANGE_ANSWERS_REFUSED);
	case RangeVerdict::UNPROVEN:
		// Never pieces of two versions: one GET of the whole object is one. httpfs's own reads would each be a
		// request (a Parquet file's row groups, answered around a replacement, could come from both versions).
		Decline(Expected().size <= MAX_WHOLE_OBJECT_BYTES ? ReadFallback::WHOLE_OBJECT : ReadFallback::WRAPPED,
		        Counter::RANGE_ANSWERS_UNPROVEN);
	case RangeVerdict::OTHER_VERSION:
		// Not sent again: a changed object stays changed.
		stats.Add(Counter::RANGE_ANSWERS_REFUSED);
		return AttemptOutcome::REFUSED;
	case RangeVerdict::NOT_SUCCESS:
		break;
	}
	if (!attempt.answered || !attempt.response) {
		return AttemptOutcome::FAILED;
	}
	return OutcomeOfStatus(static_cast<int>(attempt.response->status), XmlElement(attempt.error_body, "Code"),
	                       attempt.response->ShouldRetry());
}

void CheckedRangeReader::Refuse(const ByteRange &range, const Attempt &attempt, const RequestAttempts &attempts) {
	auto file = RedactUrl(path);
	auto bytes = std::to_string(range.offset) + "-" + std::to_string(range.End() - 1);
	bool request_error = attempt.response && attempt.response->HasRequestError();
	bool failed_in_transfer = attempt.verdict == RangeVerdict::NOT_SUCCESS || attempt.verdict == RangeVerdict::EXACT;
	if (!attempt.answered || !attempt.response || (request_error && failed_in_transfer)) {
		// As httpfs reports a request that got no (whole) answer: a timeout, a connection refused or cut.
		// A client's message may name the URL it was sent to, with its SAS token.
		auto error =
		    request_error ? RedactUrlIn(attempt.response->GetRequestError(), attempt.url) : string("no answer");
		throw duckdb::IOException("%s error for HTTP GET to '%s'", error, RedactUrl(Url()));
	}
	auto &answer = attempt.answer;
	auto &response = *attempt.response;
	switch (attempt.verdict) {
	case RangeVerdict::OTHER_VERSION:
		throw duckdb::HTTPException(answer.status, string(), response.headers, response.reason,
		                            "'%s' changed while it was being read (%s): run the query again", file,
		                            attempt.why);
	case RangeVerdict::EXACT:
		throw duckdb::IOException("HTTP GET of bytes %s of '%s' failed: %s", bytes, file, attempt.why);
	default: {
		// As httpfs words it, with the store's error code (NoSuchKey, AccessDenied...) where its answer names one.
		auto code = XmlElement(attempt.error_body, "Code");
		auto status = std::to_string(answer.status) + " " + duckdb::HTTPUtil::GetStatusMessage(response.status) +
		              (code.empty() ? string() : ", " + code);
		auto url = RedactUrl(Url());
		// What httpfs2 tried: a user facing throttling raises http_retries.
		auto tried = "httpfs2: the GET of bytes " + bytes + " given up after " + std::to_string(attempts.Number()) +
		             " attempt(s), " + std::to_string(attempts.Throttles()) +
		             " of them throttled (http_retries = " + std::to_string(max_attempts - 1) + ")";
		if (store == Store::S3) {
			uint64_t generation;
			auto region = credentials ? credentials->Current(generation).region : string();
			throw duckdb::HTTPException(answer.status, attempt.error_body, response.headers, response.reason,
			                            "HTTP GET error reading '%s' in region '%s' (HTTP %s); %s", url, region, status,
			                            tried);
		}
		throw duckdb::HTTPException(answer.status, attempt.error_body, response.headers, response.reason,
		                            "HTTP GET error on '%s' (HTTP %s); %s", url, status, tried);
	}
	}
}

} // namespace httpfs2
