//===----------------------------------------------------------------------===//
//                         httpfs2
//
// core/read_ahead/object_read_ahead.hpp
//
// Read-ahead for one version of one remote object, shared by all handles open on it: the mechanism, blind to formats
// (as Arrow's ReadRangeCache): what it knows of the object's format, its FormatKnowledge hands it (predictors, the
// layout learnt from bytes read, the ranges to fetch before any reader). A predictor turns the reads it is
// told of into ranges; those are fetched on the IO pool into segments (each its own buffer, charged to the
// database's memory budget) and served to readers from there. A read overlapping a fetch in flight waits for it; a
// read overlapping a fetch still queued takes it over; nothing is fetched twice. A failed fetch is silent to readers
// that did not wait for it (they read that part themselves); a reader that waited for it gets its error, as it would
// have had it read the bytes itself, rather than waiting as long again.
//===----------------------------------------------------------------------===//

#pragma once

#include "core/read_ahead/access_predictor.hpp"
#include "core/read_ahead/format_knowledge.hpp"
#include "core/read_ahead/read_ahead_tuning.hpp"
#include "core/read_ahead/segments.hpp"
#include "core/common/cost_model.hpp"
#include "core/common/io_pool.hpp"
#include "core/common/memory_budget.hpp"
#include "core/common/io_settings.hpp"
#include "core/common/io_stats.hpp"

#include <condition_variable>
#include <exception>
#include <stdexcept>
#include <functional>
#include <map>
#include <memory>
#include <mutex>

namespace httpfs2 {

//! Thrown by a Fetcher that cannot fetch from this object at all (its server ignores ranges): readers read the bytes
//! themselves, and the error is never theirs.
class FetchDeclined : public std::runtime_error {
public:
	using std::runtime_error::runtime_error;
};

//! What Serve did for one read.
struct ServeResult {
	//! The parts of the read that read-ahead did not hold, in order: the caller reads these itself.
	std::vector<ByteRange> gaps;
	uint64_t served_bytes = 0;
	//! The read waited for a fetch in flight, or fetched a queued one itself.
	bool waited = false;
	//! The parts of the read nothing held or fetched when it came: the reader reads them, and read-ahead fetches none
	//! of them until it says it has (ObjectReadAhead::EndReading).
	std::vector<ByteRange> reading;
	//! A reader read before the tail DuckDB reads first (data, not only the footer).
	bool data_read = false;
};

class ObjectReadAhead : public std::enable_shared_from_this<ObjectReadAhead> {
	friend class ReadAheadReader;

public:
	//! Reads exactly `range` into `destination` or throws. Called on IO pool threads and concurrently.
	using Fetcher = std::function<void(const ByteRange &range, char *destination)>;

	//! `budget` must outlive every task submitted to `pool`. `knowledge` is what the object's format tells it.
	ObjectReadAhead(IoPool &pool, MemoryBudget &budget, IoStats &stats, CostModel &model, uint64_t file_size,
	                Fetcher fetcher, std::unique_ptr<FormatKnowledge> knowledge);
	~ObjectReadAhead();

	//! A predictor for a new reader, as the format's knowledge gives it (from the layout once it is known).
	std::unique_ptr<AccessPredictor> NewPredictor();
	//! Tells `reader`'s predictor of its read and starts the fetches it predicts. Call before Serve, so that those
	//! fetches overlap the reader's own wait. Read-ahead every reader has moved past is dropped. A predictor that may
	//! join a scan is replaced, at its first read, by the predictor of a scan it joins (AccessPredictor::Joins).
	void Observe(uint64_t reader, std::shared_ptr<AccessPredictor> &predictor, const ByteRange &read,
	             const ReadAheadTuning &tuning);
	//! Readers are counted so that one reader moving on never drops what a slower one will read.
	uint64_t AddReader();
	void RemoveReader(uint64_t reader);
	//! Copies what read-ahead holds of `read` into `destination` (read.offset maps to destination[0]).
	ServeResult Serve(const ByteRange &read, char *destination);
	//! The reader has read (or failed to read) the parts a Serve gave it to read (ServeResult::reading).
	void EndReading(const std::vector<ByteRange> &reading);
	//! Shows the format's knowledge the bytes a reader got: metadata in them (a footer) gives the layout its
	//! predictors work from. True once, for the first call after the layout was learned (here or from a footer
	//! fetched ahead).
	bool Inspect(const ByteRange &read, const char *data);
	//! Fetches `ranges` (e.g. a footer about to be read) unless held already. A footer held (Hold) and not yet
	//! parsed is parsed now, as a footer fetched ahead of any reader is when it arrives.
	void Prefetch(const std::vector<ByteRange> &ranges, const ReadAheadTuning &tuning);
	//! A footer held (Hold) and not yet parsed is parsed now, as a footer fetched ahead of any reader is when it
	//! arrives: what the knowledge says to fetch first (FormatKnowledge::FirstRanges) is fetched.
	void LearnRememberedFooter(const ReadAheadTuning &tuning);
	//! Holds `bytes`, the contents of `range`, as if fetched: a footer remembered from an earlier open of this
	//! object version. Charged to the budget like a fetch, and held until the object closes (readers read parts of a
	//! footer again); false, holding nothing, when it does not fit in the budget or overlaps what is held already.
	bool Hold(const ByteRange &range, const std::string &bytes);
	//! Predicts from a layout learned earlier (by another handle, or a previous open of the same version).
	void UseLayout(std::shared_ptr<const FileLayout> layout);
	std::shared_ptr<const FileLayout> Layout() const;

	//! Drops all read-ahead and frees it; queued fetches never start. Waits for fetches in flight (they write only
	//! into their own buffers), then releases the fetcher. Later calls do nothing.
	void Close();
	//! Close without the wait: fetches in flight finish on their own (each holds the object, its buffer and its
	//! budget charge until then), their bytes are dropped, and the last of them releases the fetcher. True while any
	//! is still in flight.
	bool Abandon();
	bool IsClosed() const;
	bool IsFetching() const;
	//! Bytes held in segments (queued, in flight or arrived).
	uint64_t HeldBytes() const;

private:
	void ScheduleLocked(const std::vector<PredictedRange> &ranges, const ReadAheadTuning &tuning);
	void AddSegmentLocked(const ByteRange &piece, uint64_t useful_bytes);
	void RunFetch(const std::shared_ptr<Segment> &segment, bool by_reader);
	//! Waits until `segment` is no longer in flight, fetching it itself when still queued; true when it holds data.
	//! Throws the fetch's error when it waited for a fetch that failed (FetchDeclined aside).
	bool Await(const std::shared_ptr<Segment> &segment, bool &waited);
	//! Marks the object closed and drops its segments.
	void CloseLocked();
	//! Parses the footer in `data` (the bytes of `range`) when `range` holds one; true when it installed a layout.
	//! `ahead` says the bytes were fetched ahead of any reader, so what the knowledge says is read first is fetched
	//! too.
	bool LearnFooter(const ByteRange &range, const char *data, bool ahead);
	void InstallLayoutLocked(std::shared_ptr<const FileLayout> layout, bool ahead);
	//! With no reader yet, fetches what the knowledge says is read first (FormatKnowledge::FirstRanges).
	void StartFirstRangesLocked();
	void SharePatternLocked(const AccessPredictor &predictor);
	//! Hands a predictor that may join a scan and has not read yet the scan `read` joins, or registers it as a scan.
	void JoinScanLocked(std::shared_ptr<AccessPredictor> &predictor, const ByteRange &read);
	//! Drops idle segments that end before every reader's drop point.
	void DropPassedLocked();

	IoPool &pool;
	MemoryBudget &budget;
	IoStats &stats;
	CostModel &model;
	const uint64_t file_size;

	mutable std::mutex lock;
	std::condition_variable fetch_done;
	Fetcher fetcher;
	Segments segments;
	//! Each reader's latest drop point (Prediction::drop_before).
	std::map<uint64_t, uint64_t> reader_drop_points;
	//! What readers are reading themselves now (ServeResult::reading). DuckDB 2.0 reads a file's ranges side by side:
	//! a prediction made from one of its reads may cover another's in flight, which fetched again would be fetched
	//! twice (and, with the block cache, written twice).
	std::vector<ByteRange> reading;
	//! A reader read before the tail DuckDB reads first (data, not only the footer).
	bool data_read = false;
	//! The predictors of scans in use (each shared by the readers of one scan), for readers to join.
	std::vector<std::weak_ptr<AccessPredictor>> scans;
	uint64_t next_reader = 0;
	//! What the object's format tells read-ahead (all of the format that read-ahead knows).
	const std::unique_ptr<FormatKnowledge> knowledge;
	//! The layout was reported by Inspect.
	bool layout_reported = false;
	//! The tuning of the latest Observe or Prefetch, for fetches started from a fetch's completion.
	ReadAheadTuning last_tuning {};
	size_t fetching = 0;
	bool closed = false;
};

//! One reader (a file handle) of an object: its own predictor, replaced by one from the layout when the object
//! learns it, over the read-ahead it shares with the object's other readers. Scans of one file with different columns
//! or at different places (several in one query) each predict for themselves; the threads of one scan, each with a
//! handle of its own, share their scan's predictor.
class ReadAheadReader {
public:
	explicit ReadAheadReader(std::shared_ptr<ObjectReadAhead> object);
	~ReadAheadReader();
	ReadAheadReader(const ReadAheadReader &) = delete;
	ReadAheadReader &operator=(const ReadAheadReader &) = delete;

	void Observe(const ByteRange &read, const ReadAheadTuning &tuning);
	ObjectReadAhead &Object() const {
		return *object;
	}

private:
	const std::shared_ptr<ObjectReadAhead> object;
	const uint64_t id;
	//! A handle opened for parallel access may be read from several threads.
	std::mutex lock;
	std::shared_ptr<AccessPredictor> predictor;
	bool predicts_from_layout = false;
};

} // namespace httpfs2
