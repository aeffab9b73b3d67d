//===----------------------------------------------------------------------===//
//                         httpfs2
//
// adapter/stores/store_http.hpp
//
// HTTP clients (connections) of httpfs2's own requests, kept between requests: a request takes an idle one or none
// (HTTPUtil then makes one), and gives it back only after a clean answer.
//===----------------------------------------------------------------------===//

#pragma once

#include "duckdb/common/file_opener.hpp"
#include "duckdb/common/http_util.hpp"

#include <mutex>
#include <vector>

namespace httpfs2 {

//! httpfs's parameters for requests to `path` (timeout, proxy, TLS, retries) with DuckDB's HTTP log off: it records
//! URLs and headers, which carry signatures, session tokens and SAS tokens.
duckdb::unique_ptr<duckdb::HTTPParams> QuietParams(duckdb::HTTPUtil &http, const std::string &path,
                                                   duckdb::optional_ptr<duckdb::FileOpener> opener);

//! A request takes an idle client or none (HTTPUtil then makes one), and gives it back only after a clean answer.
class ClientPool {
public:
	//! An idle client, or null.
	duckdb::unique_ptr<duckdb::HTTPClient> Take() {
		std::lock_guard<std::mutex> guard(lock);
		if (idle.empty()) {
			return nullptr;
		}
		auto client = std::move(idle.back());
		idle.pop_back();
		return client;
	}

	void GiveBack(duckdb::unique_ptr<duckdb::HTTPClient> client) {
		if (client) {
			std::lock_guard<std::mutex> guard(lock);
			idle.push_back(std::move(client));
		}
	}

private:
	std::mutex lock;
	std::vector<duckdb::unique_ptr<duckdb::HTTPClient>> idle;
};

} // namespace httpfs2
