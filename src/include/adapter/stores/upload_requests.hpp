//===----------------------------------------------------------------------===//
//                         httpfs2
//
// adapter/stores/upload_requests.hpp
//
// What the requests of one upload share, whatever the store: DuckDB's HTTPUtil (httpfs's client: its retries, its
// errors), HTTP parameters without DuckDB's HTTP log (it records headers and URLs, which carry signatures and SAS
// tokens), connections kept alive and reused by the upload's parts, and failures that name the file and the request.
//===----------------------------------------------------------------------===//

#pragma once

#include "duckdb/common/file_opener.hpp"
#include "duckdb/common/http_util.hpp"

#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace httpfs2 {

class UploadRequests {
public:
	//! The requests of an upload of `path`; null without a client context or when the HTTP client cannot send a PUT
	//! (DuckDB's built-in one, used while httpfs is not loaded).
	static std::unique_ptr<UploadRequests> For(const std::string &path,
	                                           duckdb::optional_ptr<duckdb::FileOpener> opener);

	//! What requests are built with.
	duckdb::HTTPParams &Params() {
		return *params;
	}
	//! Sends `request` on a kept connection; its successful answer. On failure throws httpfs's error (its type and
	//! status code) or an HTTPException with the status, the message starting "httpfs2: <what> of '<path>' failed: "
	//! and the request's URL redacted.
	duckdb::unique_ptr<duckdb::HTTPResponse> Send(duckdb::BaseRequest &request, const std::string &what);
	//! Sends a request whose failure changes nothing (an abort): whether an answer came, of any status. Never throws.
	bool TrySend(duckdb::BaseRequest &request) noexcept;

	const std::string path;

private:
	UploadRequests(std::string path, duckdb::HTTPUtil &http, duckdb::unique_ptr<duckdb::HTTPParams> params);
	duckdb::unique_ptr<duckdb::HTTPClient> TakeClient();
	void GiveBack(duckdb::unique_ptr<duckdb::HTTPClient> client);

	duckdb::HTTPUtil &http;
	const duckdb::unique_ptr<duckdb::HTTPParams> params;
	std::mutex lock;
	std::vector<duckdb::unique_ptr<duckdb::HTTPClient>> idle;
};

} // namespace httpfs2
