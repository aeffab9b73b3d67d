#include "adapter/handles/inner_opens.hpp"

#include "adapter/handles/internal_opener.hpp"
#include "core/requests/url_redaction.hpp"
#include "duckdb/common/file_opener.hpp"
#include "duckdb/main/client_data.hpp"

namespace httpfs2 {

using duckdb::FileHandle;
using duckdb::FileOpener;
using duckdb::idx_t;
using duckdb::optional_ptr;
using duckdb::unique_ptr;
using std::string;

const duckdb::FileOpenFlags InnerOpens::PARALLEL_READ_FLAGS(duckdb::FileFlags::FILE_FLAGS_READ |
                                                            duckdb::FileFlags::FILE_FLAGS_PARALLEL_ACCESS);

InnerOpens::InnerOpens(duckdb::FileSystem &inner_p, RemoteStore &store_p, IoStats &stats_p)
    : inner(inner_p), store(store_p), stats(stats_p) {
}

duckdb::OpenFileInfo InnerOpens::OpenInfo(const string &path, const ObjectVersion &version) {
	duckdb::OpenFileInfo info(path);
	info.extended_info = duckdb::make_shared_ptr<duckdb::ExtendedOpenFileInfo>();
	auto &options = info.extended_info->options;
	options["file_size"] = duckdb::Value::UBIGINT(version.size);
	options["last_modified"] = duckdb::Value::TIMESTAMP(version.last_modified);
	options["etag"] = duckdb::Value(version.etag);
	return info;
}

ObjectVersion InnerOpens::VersionOf(ReadHandle &handle) {
	if (handle.version_known) {
		return handle.version;
	}
	auto &primary = handle.Inner();
	ObjectVersion version;
	auto size = primary.file_system.GetFileSize(primary);
	version.size = size > 0 ? static_cast<idx_t>(size) : 0;
	version.last_modified = primary.file_system.GetLastModifiedTime(primary);
	version.etag = primary.file_system.GetVersionTag(primary);
	return version;
}

unique_ptr<FileHandle> InnerOpens::AtVersion(const duckdb::OpenFileInfo &info, duckdb::FileOpenFlags flags,
                                             optional_ptr<FileOpener> opener, const ObjectVersion &expected,
                                             InnerOpener kind) {
	unique_ptr<InternalOpener> internal_opener;
	if (kind != InnerOpener::CONNECTION && opener) {
		auto download =
		    kind == InnerOpener::WHOLE_OBJECT ? InternalOpener::Download::WHOLE : InternalOpener::Download::RANGES;
		internal_opener = duckdb::make_uniq<InternalOpener>(*opener, download);
		opener = internal_opener.get();
	}
	auto handle = inner.OpenFile(info, flags, opener);
	if (!handle) {
		throw duckdb::IOException("httpfs2: '%s' no longer exists", RedactUrl(info.path));
	}
	stats.Add(Counter::INNER_OPENS);
	// httpfs checks every response against the ETag it is given; the azure extension does not, so at least the
	// version its own open saw must be the one httpfs2 serves.
	auto size = handle->file_system.GetFileSize(*handle);
	auto modified = handle->file_system.GetLastModifiedTime(*handle);
	if (size < 0 || static_cast<idx_t>(size) != expected.size || modified != expected.last_modified) {
		throw duckdb::IOException("httpfs2: '%s' changed while it was being read (%llu bytes modified at %s when "
		                          "opened, now %lld bytes modified at %s); run the query again",
		                          RedactUrl(info.path), expected.size,
		                          duckdb::Timestamp::ToString(expected.last_modified), size,
		                          duckdb::Timestamp::ToString(modified));
	}
	return handle;
}

LazyHandle::Opener InnerOpens::Deferred(duckdb::OpenFileInfo info, duckdb::FileOpenFlags flags,
                                        duckdb::weak_ptr<duckdb::ClientContext> context, ObjectVersion expected,
                                        InnerOpener kind) {
	return [this, info, flags, context, expected, kind]() {
		auto connection = context.lock();
		if (!connection) {
			throw duckdb::IOException("httpfs2: cannot open '%s': the connection that opened it is closed",
			                          RedactUrl(info.path));
		}
		return AtVersion(info, flags, duckdb::ClientData::Get(*connection).file_opener.get(), expected, kind);
	};
}

unique_ptr<LazyHandle> InnerOpens::Lazy(const string &path, const ObjectVersion &version,
                                        duckdb::weak_ptr<duckdb::ClientContext> context,
                                        optional_ptr<FileOpener> opener) {
	auto info = OpenInfo(path, version);
	if (context.expired()) {
		// No connection to open it with later: open it now.
		return duckdb::make_uniq<LazyHandle>(
		    AtVersion(info, PARALLEL_READ_FLAGS, opener, version, InnerOpener::RANGES_ONLY));
	}
	return duckdb::make_uniq<LazyHandle>(
	    Deferred(std::move(info), PARALLEL_READ_FLAGS, std::move(context), version, InnerOpener::RANGES_ONLY));
}

std::shared_ptr<FileHandle> InnerOpens::ForFetches(const string &path, const ObjectVersion &version,
                                                   optional_ptr<FileOpener> opener) {
	auto open = [&]() {
		return AtVersion(OpenInfo(path, version), PARALLEL_READ_FLAGS, opener, version, InnerOpener::RANGES_ONLY);
	};
	auto context = FileOpener::TryGetClientContext(opener);
	if (!store.KeepsVersionHandles() || !context || !version.Recognizable()) {
		return std::shared_ptr<FileHandle>(open().release());
	}
	return version_handles.Get(KeyOf(path, version, opener), context->GetConnectionId(), open);
}

std::shared_ptr<FileHandle> InnerOpens::SharedFor(ReadHandle &handle) {
	auto context = handle.client_context.lock();
	optional_ptr<FileOpener> opener = context ? duckdb::ClientData::Get(*context).file_opener.get() : nullptr;
	return ForFetches(handle.path, handle.version, opener);
}

void InnerOpens::ReleaseHandles() {
	version_handles.Clear();
}

} // namespace httpfs2
