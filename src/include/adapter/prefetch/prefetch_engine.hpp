//===----------------------------------------------------------------------===//
//                         httpfs2
//
// adapter/prefetch/prefetch_engine.hpp
//
// Fetches what the predictors (core/prefetch) say the next opens will read, before they ask: the footers of the
// Parquet files a glob or a followed folder lists after the one opening (ListingPredictor, FolderPredictor), the
// manifests an Iceberg manifest list names and the tails of the data files they name, in the scan's order
// (DataFilePredictor). The predictors know orders and formats; this is the one executor of what they predict:
// - the gate: nothing is fetched ahead where the cost model says the link does not pay for it (ReadAheadTuning);
// - de-duplication: a file the query opened or had predicted already (QueryFiles), a footer held or pinned already, a
//   path whose version the query knows, awaits or asks for;
// - memory: every byte fetched ahead is charged to the read-ahead budget until its open takes it or the query ends;
//   what the budget cannot hold is left to its open (read_ahead_skipped_budget);
// - scheduling on the IO pool, counting (read_ahead_requests and _bytes at submit, and what was delivered);
// - delivery: footers into read-ahead that waits for the file's open (pinned until the query ends: ReadAheadWiring),
//   tails and whole objects to the query's opens of the path (QueryVersions), which wait for a fetch once it is sent
//   and take it over while it is queued;
// - release when the query ends (QueryState).
// A fetch that fails or answers otherwise leaves the open to its own request, as without httpfs2.
// The gate, de-duplication, budget charging and one fetch's delivery bookkeeping are core/prefetch/prefetch_executor.
//===----------------------------------------------------------------------===//

#pragma once

#include "adapter/common/extension_state.hpp"
#include "adapter/common/query_state.hpp"
#include "adapter/prefetch/read_ahead_wiring.hpp"
#include "adapter/stores/remote_store.hpp"
#include "core/prefetch/data_file_predictor.hpp"
#include "core/prefetch/folder_predictor.hpp"
#include "core/prefetch/listing_predictor.hpp"
#include "duckdb/common/file_opener.hpp"
#include "duckdb/common/open_file_info.hpp"

#include <string>
#include <vector>

namespace httpfs2 {

//! The predictors that follow one query's opens.
class QueryPredictors : public QueryState<QueryPredictors> {
public:
	static const char *StateName() {
		return "httpfs2_query_predictors";
	}
	void Clear() {
		folders.Clear();
		data_files.Clear();
		files.Clear();
	}

	FolderPredictor folders;
	DataFilePredictor data_files;
	QueryFiles files;
};

class PrefetchEngine {
public:
	PrefetchEngine(ExtensionState &state, IoStats &stats, RemoteStore &store, ReadAheadWiring &read_ahead);

	//! A glob listed `files`. `scan_reads_them`: a multi-file reader's listing, read right after.
	void Listed(std::vector<duckdb::OpenFileInfo> files, const IoSettings &settings,
	            duckdb::optional_ptr<duckdb::FileOpener> opener, bool scan_reads_them);
	//! `path` opened for reading (with read-ahead): what a glob listed after it.
	void Opened(const std::string &path, const IoSettings &settings, duckdb::optional_ptr<duckdb::FileOpener> opener);
	//! A Parquet file opens before its version is looked for, `from_catalog` (a table format's size) or by name: the
	//! next data files of an Iceberg scan, or the folder's next files (listing the folder when its predictor says so:
	//! the listed versions become the query's).
	void Opening(const std::string &path, bool from_catalog, const IoSettings &settings,
	             duckdb::optional_ptr<duckdb::FileOpener> opener);
	//! All of `path` is about to be read in one read (read_blob's): the contents of the files a glob listed after it.
	void ReadWhole(const std::string &path, const IoSettings &settings,
	               duckdb::optional_ptr<duckdb::FileOpener> opener);
	//! An Iceberg manifest list at `path` was read whole (`bytes`): its manifests.
	void ManifestListRead(const std::string &path, const std::string &bytes, const IoSettings &settings,
	                      duckdb::optional_ptr<duckdb::FileOpener> opener);

private:
	//! The executor: fetches `predictions` for the query of `opener`.
	//! `opening`: the path whose open made the predictions (empty for none).
	void Execute(std::vector<OpenPrediction> predictions, const ReadAheadTuning &tuning,
	             duckdb::optional_ptr<duckdb::FileOpener> opener, const std::string &opening = std::string());
	//! Footers at a known version go to read-ahead now; footers of files listed without one (az://) after looking
	//! the versions up, all at once.
	void FetchFooters(const std::vector<OpenPrediction> &footers, const ReadAheadTuning &tuning,
	                  duckdb::optional_ptr<duckdb::FileOpener> opener);
	//! A tail or a whole object fetched for the query's open of the path.
	void FetchForOpen(const OpenPrediction &prediction, duckdb::optional_ptr<duckdb::FileOpener> opener);
	//! Lists the folder of `path` after the file FolderPredictor names, if it names one.
	void ListFolder(const std::string &path, QueryPredictors &predictors,
	                duckdb::optional_ptr<duckdb::FileOpener> opener);

	ExtensionState &state;
	IoStats &stats;
	RemoteStore &store;
	ReadAheadWiring &read_ahead;
	//! Per wrapped filesystem: a glob listed once is read by the next queries too.
	ListingPredictor listings;
};

} // namespace httpfs2
