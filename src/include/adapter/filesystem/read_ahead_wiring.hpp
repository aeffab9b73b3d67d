//===----------------------------------------------------------------------===//
//                         httpfs2
//
// adapter/filesystem/read_ahead_wiring.hpp
//
// Connects the handles of one wrapped filesystem to the core's read-ahead (core/read_ahead): one ObjectReadAhead per
// object version in a ReadAheadRegistry, each handle's share in it (ReadAheadAttachment), how its fetches are made
// (the store's checked range GETs, else a handle of the wrapped filesystem), and what reads teach it (Parquet layouts,
// footers kept for later opens where the store's ETag names the bytes).
//===----------------------------------------------------------------------===//

#pragma once

#include "adapter/extension/extension_state.hpp"
#include "adapter/filesystem/inner_opens.hpp"
#include "adapter/filesystem/wrapped_file_handle.hpp"
#include "adapter/stores/remote_store.hpp"
#include "core/read_ahead/read_ahead_registry.hpp"
#include "duckdb/common/file_opener.hpp"

#include <memory>
#include <vector>

namespace httpfs2 {

//! A handle's share in the read-ahead of the object version it reads; detaches when the handle closes, and the last
//! handle's detach frees the object's read-ahead.
class ReadAheadAttachment {
public:
	ReadAheadAttachment(ReadAheadRegistry &registry, VersionKey key, std::shared_ptr<ObjectReadAhead> object,
	                    bool footer_outlives_open);
	~ReadAheadAttachment();
	ReadAheadAttachment(const ReadAheadAttachment &) = delete;
	ReadAheadAttachment &operator=(const ReadAheadAttachment &) = delete;

	ReadAheadRegistry &registry;
	//! Read-ahead is shared only by handles on the same version.
	const VersionKey key;
	const std::shared_ptr<ObjectReadAhead> object;
	//! Other opens may find what was learnt of the version (VersionKey::Shared): only then is its layout remembered.
	const bool shared;
	//! The version's ETag changes with its bytes (RemoteStore::FooterOutlivesOpen): only then are its footer's bytes
	//! remembered past this open (a size and a Last-Modified of 1-second resolution do not tell two versions apart,
	//! nor does an ETag made of them).
	const bool strong_etag;
	//! This handle's own predictions over the object's shared read-ahead.
	ReadAheadReader reader;
};

class ReadAheadWiring {
public:
	ReadAheadWiring(ExtensionState &state, IoStats &stats, RemoteStore &store, InnerOpens &opens);

	//! Whether `path` names a Parquet file: the files whose footers are fetched ahead and opened from their tail.
	static bool IsParquetPath(const std::string &path);

	ReadAheadTuning TuningFor(const IoSettings &settings) const;

	//! Joins (or starts) the read-ahead of the object version `handle` reads; without it when its fetches cannot be
	//! set up (the file is then read without read-ahead).
	void Attach(ReadHandle &handle, duckdb::optional_ptr<duckdb::FileOpener> opener);
	//! Attaches read-ahead that waited for the handle's first read, with its connection's file opener.
	void AttachDeferred(ReadHandle &handle);
	//! Serves what read-ahead holds of `read` into `buffer` (waiting for fetches in flight) and tells the handle's
	//! predictor; returns the parts the caller must read itself.
	std::vector<ByteRange> Serve(ReadHandle &handle, const ByteRange &read, char *buffer);
	//! After `read` is in `buffer` whole: learns the file's Parquet layout, remembers its footer.
	void Learn(ReadHandle &handle, const ByteRange &read, const char *buffer);

	//! Fetches the footer DuckDB 1.5.5 reads first from a Parquet file at `version`, into read-ahead that waits for the
	//! file's open (pinned until the query ends).
	void PrefetchFooter(const std::string &path, const ObjectVersion &version, const ReadAheadTuning &tuning,
	                    duckdb::optional_ptr<duckdb::FileOpener> opener);
	//! Remembers the tail an open fetched as the footer of its version (of the query's opens, without an ETag).
	void RememberTail(const std::string &path, const ObjectTail &tail, duckdb::optional_ptr<duckdb::FileOpener> opener);
	bool RemembersFooterOf(const std::string &path);

	//! Closes every object, waiting for its fetches: ExtensionState::ReleaseHandles.
	void CloseAll();

private:
	//! How read-ahead fetches `version` of `path`: with `reader` (or a new one), else on a fetch handle opened now.
	ObjectReadAhead::Fetcher FetcherFor(const std::string &path, const ObjectVersion &version,
	                                    duckdb::optional_ptr<duckdb::FileOpener> opener,
	                                    std::shared_ptr<CheckedRangeReader> reader);
	std::shared_ptr<ObjectReadAhead> Create(const std::string &path, const ObjectVersion &version,
	                                        ObjectReadAhead::Fetcher fetch);
	//! Remembers the bytes of `read` when it is a Parquet footer read of a version with a strong ETag.
	void RememberFooter(ReadHandle &handle, const ByteRange &read, const char *buffer);

	ExtensionState &state;
	IoStats &stats;
	RemoteStore &store;
	InnerOpens &opens;
	//! Column patterns per dataset (folder), shared by the read-ahead of its files.
	const std::shared_ptr<PatternMemory> patterns = std::make_shared<PatternMemory>();
	//! Declared last, so it is destroyed first: closing its objects waits for their fetches while the rest lives.
	ReadAheadRegistry registry;
};

} // namespace httpfs2
