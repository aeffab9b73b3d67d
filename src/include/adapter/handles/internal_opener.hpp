//===----------------------------------------------------------------------===//
//                         httpfs2
//
// adapter/handles/internal_opener.hpp
//
// The file opener httpfs2 opens its own handles with (sub-reads, read-ahead fetches): the connection's, except that
// httpfs must not fall back to a full download on them. A server that ignores ranges would otherwise make each of
// those handles download the whole object, under one lock of httpfs's that IO threads and the reader then wait on.
// Instead, the handle's read fails with httpfs's error, httpfs2 stops splitting that object, and the reader's own
// handle (opened with the connection's settings) runs httpfs's fallback once.
// The same opener also opens the one handle that reads an object whole (ReadFallback::WHOLE_OBJECT): httpfs's full
// download (force_download) for that handle alone.
//===----------------------------------------------------------------------===//

#pragma once

#include "adapter/compat/duckdb_api.hpp"
#include "duckdb/common/file_opener.hpp"

#include <exception>

namespace httpfs2 {

class InternalOpener : public duckdb::FileOpener {
public:
	enum class Download : uint8_t {
		//! Ranges only: httpfs's fallback to a full download is off.
		RANGES,
		//! The whole object at the open, in one GET without Range (httpfs's force_download).
		WHOLE
	};
	explicit InternalOpener(duckdb::FileOpener &connection, Download download = Download::RANGES)
	    : connection(connection), download(download) {
	}

	duckdb::SettingLookupResult TryGetCurrentSetting(const compat::SettingKey &key, duckdb::Value &result,
	                                                 duckdb::FileOpenerInfo &info) override;
	duckdb::SettingLookupResult TryGetCurrentSetting(const compat::SettingKey &key, duckdb::Value &result) override;
	duckdb::optional_ptr<duckdb::ClientContext> TryGetClientContext() override {
		return connection.TryGetClientContext();
	}
	duckdb::optional_ptr<duckdb::DatabaseInstance> TryGetDatabase() override {
		return connection.TryGetDatabase();
	}
	duckdb::HTTPUtil &GetHTTPUtil() override {
		return connection.GetHTTPUtil();
	}
	duckdb::Logger &GetLogger() const override {
		return connection.GetLogger();
	}

	//! Whether `error` is httpfs's report that the server answered a range request with another length (it ignores
	//! ranges), which the handles of this opener give instead of falling back.
	static bool IsRangesIgnored(const std::exception &error);

private:
	//! The settings this opener answers itself; false for the others.
	bool Overrides(const std::string &key, duckdb::Value &result) const;

	duckdb::FileOpener &connection;
	const Download download;
};

} // namespace httpfs2
