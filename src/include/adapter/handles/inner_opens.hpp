//===----------------------------------------------------------------------===//
//                         httpfs2
//
// adapter/handles/inner_opens.hpp
//
// Opens of the wrapped filesystem at a version httpfs2 knows: with size, modification time and ETag handed over
// (httpfs then makes no request and checks every response against the ETag), checked against what the open saw,
// now or when first needed (LazyHandle), and the handles read-ahead's fetches run on (kept per version where the
// store says an open is costly).
//===----------------------------------------------------------------------===//

#pragma once

#include "adapter/handles/lazy_handle.hpp"
#include "adapter/handles/version_handles.hpp"
#include "adapter/handles/read_handle.hpp"
#include "adapter/stores/remote_store.hpp"
#include "core/common/io_stats.hpp"
#include "duckdb/common/file_system.hpp"
#include "duckdb/main/client_context.hpp"

namespace httpfs2 {

//! The file opener an inner handle is opened with.
enum class InnerOpener : uint8_t {
	//! The connection's, as is: the reader's own handle, with httpfs's fallbacks.
	CONNECTION,
	//! InternalOpener: sub-reads and fetches, no full-download fallback.
	RANGES_ONLY,
	//! InternalOpener reading the whole object at the open (ReadFallback::WHOLE_OBJECT).
	WHOLE_OBJECT
};

class InnerOpens {
public:
	//! Flags of the handles sub-reads and read-ahead run on: positional reads from several threads at once.
	static const duckdb::FileOpenFlags PARALLEL_READ_FLAGS;

	InnerOpens(duckdb::FileSystem &inner, RemoteStore &store, IoStats &stats);

	//! An open that makes no request on httpfs: size, modification time and ETag handed over.
	static duckdb::OpenFileInfo OpenInfo(const std::string &path, const ObjectVersion &version);
	//! The version `handle` reads: the one httpfs2 knew, else what the wrapped filesystem's handle reports.
	static ObjectVersion VersionOf(ReadHandle &handle);

	//! Opens `info` with the opener `kind` says and fails when the wrapped filesystem sees another size or
	//! modification time than `expected`.
	duckdb::unique_ptr<duckdb::FileHandle> AtVersion(const duckdb::OpenFileInfo &info, duckdb::FileOpenFlags flags,
	                                                 duckdb::optional_ptr<duckdb::FileOpener> opener,
	                                                 const ObjectVersion &expected, InnerOpener kind);
	//! AtVersion later, with the file opener of `context`'s connection.
	LazyHandle::Opener Deferred(duckdb::OpenFileInfo info, duckdb::FileOpenFlags flags,
	                            duckdb::weak_ptr<duckdb::ClientContext> context, ObjectVersion expected,
	                            InnerOpener kind);
	//! A parallel-access handle on `version` of `path` that opens on first use (at once when there is no connection
	//! to open with). Used only from the query's thread or while it waits (sub-reads): the connection outlives it.
	duckdb::unique_ptr<LazyHandle> Lazy(const std::string &path, const ObjectVersion &version,
	                                    duckdb::weak_ptr<duckdb::ClientContext> context,
	                                    duckdb::optional_ptr<duckdb::FileOpener> opener);
	//! A handle for read-ahead's fetches (and, where the store keeps version handles, the reads that miss it),
	//! opened now on the query's thread or while it waits: fetches run on IO pool threads and may outlive the query.
	std::shared_ptr<duckdb::FileHandle> ForFetches(const std::string &path, const ObjectVersion &version,
	                                               duckdb::optional_ptr<duckdb::FileOpener> opener);
	//! ForFetches for the version `handle` was opened at, with its connection's file opener.
	std::shared_ptr<duckdb::FileHandle> SharedFor(ReadHandle &handle);
	//! Closes the kept version handles.
	void ReleaseHandles();

private:
	duckdb::FileSystem &inner;
	RemoteStore &store;
	IoStats &stats;
	//! Where the store keeps them, the handles read-ahead and pass-through reads use, kept across opens of a version.
	VersionHandles version_handles;
};

} // namespace httpfs2
