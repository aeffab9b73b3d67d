//===----------------------------------------------------------------------===//
//                         httpfs2
//
// adapter/prefetch/read_ahead_wiring.hpp
//
// Connects the handles of one wrapped filesystem to the core's read-ahead (core/read_ahead): one ObjectReadAhead per
// object version in a ReadAheadRegistry, each handle's share in it (handles/read_ahead_attachment), how its fetches are
// made (the store's checked range GETs, else a handle of the wrapped filesystem), and what reads teach it (Parquet
// layouts, footers kept for later opens where the store's ETag names the bytes).
//===----------------------------------------------------------------------===//

#pragma once

#include "adapter/common/extension_state.hpp"
#include "adapter/handles/inner_opens.hpp"
#include "adapter/handles/read_ahead_attachment.hpp"
#include "adapter/handles/read_handle.hpp"
#include "adapter/stores/remote_store.hpp"
#include "core/read_ahead/read_ahead_registry.hpp"
#include "duckdb/common/file_opener.hpp"

#include <memory>
#include <vector>

namespace httpfs2 {

class ReadAheadWiring {
public:
	ReadAheadWiring(ExtensionState &state, IoStats &stats, RemoteStore &store, InnerOpens &opens);

	ReadAheadTuning TuningFor(const IoSettings &settings) const;

	//! Joins (or starts) the read-ahead of the object version `handle` reads; without it when its fetches cannot be
	//! set up (the file is then read without read-ahead).
	void Attach(ReadHandle &handle, duckdb::optional_ptr<duckdb::FileOpener> opener);
	//! Attaches read-ahead that waited for the handle's first read, with its connection's file opener.
	void AttachDeferred(ReadHandle &handle);
	//! Serves what read-ahead holds of `read` into `buffer` (waiting for fetches in flight) and tells the handle's
	//! predictor; returns the parts the caller must read itself (its gaps), to be ended with EndReading.
	ServeResult Serve(ReadHandle &handle, const ByteRange &read, char *buffer);
	//! The caller has read the gaps of `served` (or failed to): read-ahead may fetch those bytes again.
	void EndReading(ReadHandle &handle, const ServeResult &served);
	//! After `read` is in `buffer` whole: learns the file's Parquet layout, remembers its footer.
	void Learn(ReadHandle &handle, const ByteRange &read, const char *buffer);

	//! Fetches the footer DuckDB 1.5.5 reads first from a Parquet file at `version`, into read-ahead that waits for the
	//! file's open (pinned until the query ends).
	void PrefetchFooter(const std::string &path, const ObjectVersion &version, const ReadAheadTuning &tuning,
	                    duckdb::optional_ptr<duckdb::FileOpener> opener);
	//! Fetches all of `path` at `version` (of a file larger than its share of read-ahead's ceiling, its start) into
	//! read-ahead that waits for the file's open (pinned until the query ends; what the open's reads take is freed as
	//! they take it).
	void PrefetchContents(const std::string &path, const ObjectVersion &version, const ReadAheadTuning &tuning,
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
	//! Fetches `range` of `path` at `version` into read-ahead pinned until the query ends, unless read-ahead of that
	//! version exists already. `footer`: the range is the footer DuckDB reads first (PrefetchFooter).
	void PinAhead(const std::string &path, const ObjectVersion &version, const ByteRange &range,
	              const ReadAheadTuning &tuning, duckdb::optional_ptr<duckdb::FileOpener> opener, bool footer);
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
