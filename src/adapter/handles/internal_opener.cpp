#include "adapter/handles/internal_opener.hpp"

#include "duckdb/common/error_data.hpp"
#include "duckdb/main/setting_info.hpp"

namespace httpfs2 {

using duckdb::SettingLookupResult;
using duckdb::Value;

bool InternalOpener::Overrides(const std::string &key, Value &result) const {
	if (key == "auto_fallback_to_full_download") {
		result = Value::BOOLEAN(false);
		return true;
	}
	if (key == "force_download") {
		result = Value::BOOLEAN(download == Download::WHOLE);
		return true;
	}
	return false;
}

SettingLookupResult InternalOpener::TryGetCurrentSetting(const compat::SettingKey &key, Value &result,
                                                         duckdb::FileOpenerInfo &info) {
	if (Overrides(compat::KeyName(key), result)) {
		return SettingLookupResult(duckdb::SettingScope::LOCAL);
	}
	return connection.TryGetCurrentSetting(key, result, info);
}

SettingLookupResult InternalOpener::TryGetCurrentSetting(const compat::SettingKey &key, Value &result) {
	if (Overrides(compat::KeyName(key), result)) {
		return SettingLookupResult(duckdb::SettingScope::LOCAL);
	}
	return connection.TryGetCurrentSetting(key, result);
}

bool InternalOpener::IsRangesIgnored(const std::exception &error) {
	// httpfs 1.5's RangeRequestNotSupportedException: an HTTPException with this message, no status.
	duckdb::ErrorData data(error);
	return data.Type() == duckdb::ExceptionType::HTTP &&
	       data.RawMessage().rfind("Content-Length from server mismatches requested range", 0) == 0;
}

} // namespace httpfs2
