//===----------------------------------------------------------------------===//
//                         httpfs2
//
// adapter/read/read_opener.hpp
//
// Opens a remote file for reading and readies what makes its reads fast. The version comes from the store where it
// gives one (an az:// lookup, an s3:// Parquet file's tail GET: then the wrapped filesystem's handle opens only when
// first needed), else from the wrapped filesystem's open. Then: the handles or range reader sub-reads run on,
// read-ahead attached (at the first read for a version httpfs2 knew: a query DuckDB's cache serves makes no request
// for it), and the footers of the files a listing names after this one fetched.
//===----------------------------------------------------------------------===//

#pragma once

#include "adapter/common/extension_state.hpp"
#include "adapter/handles/inner_opens.hpp"
#include "adapter/prefetch/prefetch_engine.hpp"
#include "adapter/prefetch/read_ahead_wiring.hpp"
#include "adapter/handles/read_handle.hpp"
#include "adapter/stores/remote_store.hpp"
#include "adapter/common/query_versions.hpp"
#include "core/common/thread_annotations.hpp"

#include <string>
#include <unordered_set>

namespace httpfs2 {

class ReadOpener {
public:
	ReadOpener(duckdb::FileSystem &wrapper, duckdb::FileSystem &inner, ExtensionState &state, IoStats &stats,
	           RemoteStore &store, InnerOpens &opens, ReadAheadWiring &read_ahead, PrefetchEngine &prefetch);

	//! Opens `file`; with `fast` (opened only for reading, parallel reads on) with sub-reads and read-ahead readied.
	//! Null when the wrapped filesystem returns none (a missing file with FILE_FLAGS_NULL_IF_NOT_EXISTS).
	duckdb::unique_ptr<ReadHandle> Open(const duckdb::OpenFileInfo &file, duckdb::FileOpenFlags flags,
	                                    duckdb::optional_ptr<duckdb::FileOpener> opener, const IoSettings &settings,
	                                    bool fast);

	//! The version of `path` the block cache recorded within httpfs2_cache_trust_seconds, where the settings trust one
	//! (the cache on, a window, a store whose reads go through the cache); false otherwise. No request.
	bool TrustedVersion(const std::string &path, duckdb::optional_ptr<duckdb::FileOpener> opener,
	                    const IoSettings &settings, ObjectVersion &version);

private:
	//! A handle at the version the store looked up (az:// blobs); nullptr when it is not known.
	duckdb::unique_ptr<ReadHandle> OpenLookedUp(const std::string &path, duckdb::FileOpenFlags flags,
	                                            duckdb::optional_ptr<duckdb::FileOpener> opener,
	                                            const IoSettings &settings);
	//! A handle at the version the block cache recorded of `path` within httpfs2_cache_trust_seconds, with no request;
	//! nullptr when none is recorded that recently (or a catalog named the file with another size, `catalog_size`).
	duckdb::unique_ptr<ReadHandle> OpenTrusted(const std::string &path, duckdb::FileOpenFlags flags,
	                                           duckdb::optional_ptr<duckdb::FileOpener> opener,
	                                           const IoSettings &settings, uint64_t catalog_size);
	//! With the block cache on: the blocks `tail` (a GET that proved its version) holds whole go into the cache, so
	//! that a later open at a version it trusts reads the footer with no request. The block the tail begins within,
	//! when not held, is fetched whole in the background: a trusted open reads the footer from there too.
	void CacheTail(const std::string &path, const ObjectTail &tail, const IoSettings &settings,
	               duckdb::optional_ptr<duckdb::FileOpener> opener);
	//! A handle at the version a GET of the file's tail reported (s3:// Parquet files at their first open in a
	//! query), its footer remembered from those bytes; nullptr when the store could not fetch it, or when a catalog
	//! named the file with another size (`catalog_size`, 0 for none).
	duckdb::unique_ptr<ReadHandle> OpenFromTail(const std::string &path, duckdb::FileOpenFlags flags,
	                                            duckdb::optional_ptr<duckdb::FileOpener> opener,
	                                            const IoSettings &settings, uint64_t catalog_size);
	//! Completes `tail`, the end of an Iceberg manifest list larger than the tail GET, with the list's first bytes
	//! (one range GET at the tail's version) when the whole list fits in a remembered footer; the iceberg extension
	//! reads it from its start at once, and its manifests are fetched from the whole. Leaves `tail` as it was when the
	//! list is larger or the GET fails (the open goes on; the list is read as without httpfs2).
	void CompleteManifestList(const std::string &path, duckdb::optional_ptr<duckdb::FileOpener> opener,
	                          ObjectTail &tail);
	//! With the block cache on and a Parquet file whose tail the cache holds at a version it recorded (a warm open):
	//! the file's folder listed once in the query (FolderProofs), the versions of its files whose ETags name their
	//! bytes learnt by the query (QueryVersions::Learn), in place of a request per file. True when that listing named
	//! `path`. Not listed for a path the query knows already (another of its opens proved it; the folder's listing, if
	//! any, is looked at). A folder whose listing of FOLDER_PROOF_KEYS files did not reach the file is not listed so
	//! again.
	bool ProveFolder(const std::string &path, duckdb::optional_ptr<duckdb::FileOpener> opener,
	                 const IoSettings &settings, QueryVersions &query);
	//! A handle at `version`, whose inner handle opens when first needed; `opener` must have a client context.
	duckdb::unique_ptr<ReadHandle> OpenAtKnownVersion(const std::string &path, duckdb::FileOpenFlags flags,
	                                                  duckdb::optional_ptr<duckdb::FileOpener> opener,
	                                                  const IoSettings &settings, const ObjectVersion &version);
	//! The wrapped filesystem's open, timed for the cost model when it was a request: `size_given` says the opener
	//! gave the size, so httpfs made none.
	duckdb::unique_ptr<ReadHandle> OpenInner(const duckdb::OpenFileInfo &file, duckdb::FileOpenFlags flags,
	                                         duckdb::optional_ptr<duckdb::FileOpener> opener,
	                                         const IoSettings &settings, bool size_given);
	//! Gives `handle` its whole-object handle (ReadHandle::whole_object), opened on first need; none without a
	//! connection to open it with.
	void PrepareWholeObject(ReadHandle &handle, const ObjectVersion &version);
	//! Prepares the handles sub-reads run on, or leaves the handle unable to split when the file is too small.
	void PrepareSubReads(ReadHandle &handle, duckdb::optional_ptr<duckdb::FileOpener> opener);

	duckdb::FileSystem &wrapper;
	duckdb::FileSystem &inner;
	ExtensionState &state;
	IoStats &stats;
	RemoteStore &store;
	InnerOpens &opens;
	ReadAheadWiring &read_ahead;
	PrefetchEngine &prefetch;

	//! Files a folder proof lists at most: one short answer, whose round trip is a tail GET's.
	static constexpr uint64_t FOLDER_PROOF_KEYS = 100;
	Mutex wide_lock;
	//! Folders whose proof listing did not reach the file it was sent for.
	std::unordered_set<std::string> wide_folders HTTPFS2_GUARDED_BY(wide_lock);
};

} // namespace httpfs2
