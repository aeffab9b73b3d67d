#include "adapter/stores/azure_versions.hpp"

#include "adapter/stores/azure_signing.hpp"
#include "adapter/common/query_versions.hpp"
#include "adapter/stores/store_http.hpp"
#include "duckdb/main/client_context.hpp"

namespace httpfs2 {

using duckdb::FileOpener;
using duckdb::optional_ptr;
using std::string;

//! A Get Blob of the first byte, signed with the account key or authorized by the SAS token: it answers with the
//! blob's ETag, Last-Modified and size like a HEAD does, and DuckDB's built-in HTTP client (used when httpfs is not
//! loaded) makes GET requests only.
//! The blob's first byte, through the one retry policy (RequestAttempts): a failure httpfs retries is sent again
//! within httpfs's retry settings, a throttled answer (Azure's 503 ServerBusy, 429) after a jittered wait, told to
//! `listeners`. Each attempt is authorized afresh (its x-ms-date) and counted in `stats`; null without an answer.
static duckdb::unique_ptr<duckdb::HTTPResponse> ProbeBlob(const AzureConnection &connection, const AzureBlobPath &blob,
                                                          const string &path, optional_ptr<FileOpener> opener,
                                                          IoStats &stats, StreamController *streams) {
	auto context = FileOpener::TryGetClientContext(opener);
	if (!context) {
		return nullptr;
	}
	auto &http = duckdb::HTTPUtil::Get(*context->db);
	RequestLog log;
	auto params = QuietParams(http, path, opener, &log);
	RequestAttempts attempts(RetryBackoffOf(*params), params->retries + 1,
	                         ReadThrottleListeners(*context, stats, streams, path));
	// A cancelled query's probe is given up (the lookup is then UNKNOWN) rather than waited out.
	attempts.CancelWith(QueryCancelled(*context));
	params->retries = 0;
	struct Attempt {
		duckdb::unique_ptr<duckdb::HTTPResponse> response;
		bool answered = false;
	};
	auto send = [&](Attempt &attempt) {
		AzureRequest probe;
		probe.verb = "GET";
		probe.url = AzureBlobUrl(connection, blob);
		probe.ms_headers = {{"x-ms-range", "bytes=0-0"}};
		auto authorized = AuthorizeAzureRequest(connection, probe);
		duckdb::GetRequestInfo request(authorized.first, authorized.second, *params, nullptr, nullptr);
		// Failures come back as answers: the attempts are made here.
		request.try_request = true;
		stats.Add(Counter::VERSION_REQUESTS);
		attempt.response = log.Send(http, request);
		attempt.answered = attempt.response && !attempt.response->HasRequestError();
		if (!attempt.answered) {
			return AttemptOutcome::FAILED;
		}
		auto &response = *attempt.response;
		auto outcome = OutcomeOfStatus(static_cast<int>(response.status), string(), response.ShouldRetry());
		// Any other answer (the blob's byte, 404, 416...) is the probe's: Lookup reads it.
		return outcome == AttemptOutcome::REFUSED ? AttemptOutcome::DONE : outcome;
	};
	// Azure's credentials (an account key, a SAS token) are not refreshed here.
	auto no_refresh = [](const Attempt &) {
		return false;
	};
	Attempt attempt;
	attempts.Run(attempt, send, no_refresh);
	return attempt.answered ? std::move(attempt.response) : nullptr;
}

static bool VersionFromResponse(const duckdb::HTTPResponse &response, ObjectVersion &version) {
	// A directory marker of a hierarchical namespace: the azure extension decides what it is.
	if (response.HasHeader("x-ms-meta-hdi_isfolder") && response.GetHeaderValue("x-ms-meta-hdi_isfolder") == "true") {
		return false;
	}
	ByteRange first_byte;
	return VersionOfRangeAnswer(response, version, first_byte) && version.size > 0 && version.Recognizable();
}

VersionLookup AzureVersions::Lookup(const string &path, optional_ptr<FileOpener> opener, IoStats &stats,
                                    StreamController *streams, ObjectVersion &version) {
	AzureBlobPath blob;
	if (!AzureBlobPath::Parse(path, blob) || blob.HasWildcard()) {
		return VersionLookup::UNKNOWN;
	}
	try {
		auto cache = QueryVersions::Of(opener);
		if (!cache) {
			return VersionLookup::UNKNOWN;
		}
		if (cache->Find(path, version)) {
			return VersionLookup::FOUND;
		}
		AzureConnection connection;
		if (!AzureConnectionFor(path, opener, connection)) {
			return VersionLookup::UNKNOWN;
		}
		auto response = ProbeBlob(connection, blob, path, opener, stats, streams);
		if (!response) {
			return VersionLookup::UNKNOWN;
		}
		if (response->status == duckdb::HTTPStatusCode::NotFound_404) {
			return VersionLookup::MISSING;
		}
		// An empty blob answers 416 (no first byte): the azure extension opens those itself.
		if (!VersionFromResponse(*response, version)) {
			return VersionLookup::UNKNOWN;
		}
		cache->Store(path, version);
		return VersionLookup::FOUND;
	} catch (std::exception &) {
		// Whatever went wrong (no HTTP client, a network error), the azure extension's own open will tell.
		return VersionLookup::UNKNOWN;
	}
}

void AzureVersions::Forget(const string &path, optional_ptr<FileOpener> opener) {
	auto cache = QueryVersions::Of(opener);
	if (cache) {
		cache->Forget(path);
	}
}

} // namespace httpfs2
