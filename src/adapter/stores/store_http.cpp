#include "adapter/stores/store_http.hpp"

namespace httpfs2 {

duckdb::unique_ptr<duckdb::HTTPParams> QuietParams(duckdb::HTTPUtil &http, const std::string &path,
                                                   duckdb::optional_ptr<duckdb::FileOpener> opener) {
	duckdb::FileOpenerInfo info {path};
	auto params = http.InitializeParameters(opener, &info);
	params->logger = nullptr;
	return params;
}

} // namespace httpfs2
