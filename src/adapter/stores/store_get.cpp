#include "adapter/stores/store_get.hpp"

#include <algorithm>

namespace httpfs2 {

constexpr size_t StoreGet::MAX_ERROR_BODY;

void StoreGet::Send(duckdb::HTTPParams &params, const RequestLog &log, const std::string &url,
                    const duckdb::HTTPHeaders &headers, duckdb::unique_ptr<duckdb::HTTPClient> *client,
                    RequestRace::Entry *entry, const OnHead &head, const OnBody &body, Exchange &exchange) {
	duckdb::GetRequestInfo get(
	    url, headers, params,
	    [&](const duckdb::HTTPResponse &response) {
		    if (entry) {
			    entry->FirstByte();
		    }
		    exchange.answered = true;
		    exchange.taken = 0;
		    exchange.error_body.clear();
		    exchange.head = head(response);
		    return exchange.head != Head::STOP;
	    },
	    [&](duckdb::const_data_ptr_t data, duckdb::idx_t length) {
		    auto bytes = reinterpret_cast<const char *>(data);
		    if (exchange.head != Head::WANTED) {
			    exchange.error_body.append(bytes,
			                               std::min<size_t>(length, MAX_ERROR_BODY - exchange.error_body.size()));
			    return exchange.error_body.size() < MAX_ERROR_BODY;
		    }
		    if (entry && exchange.taken == 0 && !entry->Claim()) {
			    return false; // the other request of the race answered first: its answer stands
		    }
		    if (!body(bytes, length)) {
			    return false;
		    }
		    exchange.taken += length;
		    return true;
	    });
	// Failures come back as answers: the attempts are the sender's.
	get.try_request = true;
	exchange.response = log.Send(params.http_util, get, client);
}

} // namespace httpfs2
