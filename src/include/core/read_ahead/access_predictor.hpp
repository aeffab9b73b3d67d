//===----------------------------------------------------------------------===//
//                         httpfs2
//
// core/read_ahead/access_predictor.hpp
//
// Predicts the ranges a file's readers will ask for next, from the reads they made so far. One strategy per
// class behind one small interface: sequential streams (CSV, JSON, read_blob) and Parquet row groups.
//===----------------------------------------------------------------------===//

#pragma once

#include "core/common/io_settings.hpp"
#include "core/formats/parquet_layout.hpp"
#include "core/split/range_planner.hpp"

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace httpfs2 {

struct PredictionLimits {
	//! At most this many bytes predicted ahead of the furthest read.
	uint64_t max_ahead_bytes;
	//! Ranges separated by less than this are fetched as one (a gap cheaper than a round trip).
	uint64_t merge_gap_bytes;
	//! Never more than this ahead, whatever the size of the reads (SequentialPredictor::READS_AHEAD).
	uint64_t ceiling_bytes = UINT64_MAX;
	//! How the host reads the object itself (IoSettings::host_reads).
	HostPieceReads host_reads;
};

struct PredictedRange {
	ByteRange range;
	//! Bytes of the range a reader is expected to ask for (less than its length when gaps were merged in).
	uint64_t useful_bytes;
};

struct Prediction {
	//! Ranges expected to be read soon, nearest first. May overlap what was predicted before.
	std::vector<PredictedRange> ranges;
	//! Read-ahead ending at or before this offset will not be read any more.
	uint64_t drop_before = 0;
};

//! `ranges` by offset, merged across gaps of at most `merge_gap_bytes`; the useful bytes of each result are those of
//! the `ranges` it covers (each byte counted once).
std::vector<PredictedRange> MergeRanges(std::vector<ByteRange> ranges, uint64_t merge_gap_bytes);

struct ColumnPattern;

class AccessPredictor {
public:
	virtual ~AccessPredictor() = default;
	//! Told of every read of the file, in the order they arrive.
	virtual Prediction OnRead(const ByteRange &read, const PredictionLimits &limits) = 0;

	// The threads of one scan each read through a handle of their own and share one predictor: a reader's new
	// predictor that may join a scan hands the reader over to the scan its first read belongs to (ObjectReadAhead).

	//! Whether this predictor, told of no read yet, may be replaced by the predictor of a scan in progress.
	virtual bool MayJoinScan() const {
		return false;
	}
	//! Whether `read`, a reader's first read, is another thread of this predictor's scan.
	virtual bool Joins(const ByteRange &read) const {
		return false;
	}
	//! Counts a reader that joined this predictor's scan.
	virtual void AddThread() {
	}
	//! The columns this predictor found a scan to read, for the other files of the dataset; false when it has none.
	virtual bool PatternToShare(ColumnPattern &pattern) const {
		return false;
	}
};

//! A forward window that starts at the size of the read (at least INITIAL_WINDOW), doubles while reads stay
//! sequential, is capped by max_ahead_bytes but holds the next READS_AHEAD reads of the current size up to
//! ceiling_bytes (DuckDB's CSV reader asks for 32 MB at a time: a smaller cap would leave the reader fetching half of
//! each read itself; two reads ahead gained little more and cost memory and page faults), and resets on a jump
//! (mountpoint-s3 style). It opens on a large first read at offset 0 or on the second of two near reads. It fetches
//! nothing where the reads are the host's pieces and those it keeps in flight reach as far as the window could, or are
//! HostPieceReads::WIDE_STREAMS or more (DuckDB 2.0's async_threads), nor for the rest of that stream: there
//! read-ahead adds no stream, only a copy of each piece or larger requests that the host's reads wait for.
class SequentialPredictor : public AccessPredictor {
public:
	static constexpr uint64_t INITIAL_WINDOW = 1024 * 1024;
	static constexpr uint64_t READS_AHEAD = 1;
	//! A read up to this far ahead of the furthest read so far (readers skip holes), or behind it (DuckDB 2.0 cuts a
	//! read into 2 MiB reads on its async pool, which reach the file in any order), is part of the same stream.
	static constexpr uint64_t REORDER_SPAN = 32 * 1024 * 1024;
	//! A first read at offset 0 starts a stream only when it is at least this large: a smaller one is a probe
	//! (magic bytes, a header), and a stream shows itself with the next, adjacent read.
	static constexpr uint64_t FIRST_READ_STREAM_MIN = 64 * 1024;

	explicit SequentialPredictor(uint64_t file_size);
	Prediction OnRead(const ByteRange &read, const PredictionLimits &limits) override;

private:
	uint64_t file_size;
	uint64_t reads = 0;
	//! The end of the furthest read of the current stream.
	uint64_t front = 0;
	//! How far behind the front a read began, at most so far: twice this behind the front is kept for reads to come.
	uint64_t lag = 0;
	uint64_t window = 0;
	//! End of what was predicted so far in the current sequential run.
	uint64_t predicted_until = 0;
	//! The current stream is read in the host's pieces, which reach or run as wide as a window would: none is opened.
	bool host_stream = false;
};

//! The columns a Parquet scan reads in each row group.
struct ColumnPattern {
	std::vector<bool> columns;
	std::vector<bool> lead;
	//! Columns whose bloom filter the scan reads before each row group (a filter comparing them with constants).
	std::vector<bool> blooms;
	bool whole_groups = false;

	bool operator==(const ColumnPattern &other) const {
		return columns == other.columns && lead == other.lead && blooms == other.blooms &&
		       whole_groups == other.whole_groups;
	}
};

//! The latest pattern per dataset (the files of one folder, with one schema), so that a file opened after another
//! of the same scan gets its first row group fetched along with its footer.
class PatternMemory {
public:
	static constexpr size_t MAX_DATASETS = 256;
	//! Files of one dataset told of its pattern's changes at most (the latest: a listing's next files).
	static constexpr size_t MAX_WATCHERS = 64;

	//! Remembers `pattern` for `dataset`; when it differs from the one remembered, returns the dataset's watchers
	//! (Watch), for the caller to run outside its locks.
	std::vector<std::function<void()>> Remember(const std::string &dataset, const ColumnPattern &pattern);
	//! True, with the pattern, when `dataset` has one for `column_count` columns.
	bool Recall(const std::string &dataset, size_t column_count, ColumnPattern &pattern);
	//! `watcher` is handed out by each Remember that changes `dataset`'s pattern (a scan's first reads of a file
	//! show its columns one at a time); the oldest of MAX_WATCHERS is dropped.
	void Watch(const std::string &dataset, std::function<void()> watcher);

private:
	std::mutex lock;
	std::unordered_map<std::string, ColumnPattern> patterns;
	std::unordered_map<std::string, std::deque<std::function<void()>>> watchers;
};

//! Knows the row groups and column chunks of a Parquet file. DuckDB 1.5.5 reads a row group as one span when the
//! scan needs more than 95% of it, otherwise its needed column chunks one by one; threads claim row groups in file
//! order. So the columns read in the current row group predict the next ones. A scan that starts at the first row
//! group gets START_WINDOW_GROUPS ahead at once (at most START_AHEAD_BYTES of them past the next one: it may still
//! stop after one group, for a LIMIT or a filter), so that the groups after the next are in flight before the reader
//! gets there; the window then doubles while groups are read in order.
//!
//! Filters that prune row groups on min/max must not make it fetch what is never read, and a pruned scan also
//! stops early without warning. So once row groups were skipped (or the scan started past the first one) it is
//! cautious: one row group ahead, and only its lead columns (those DuckDB reads first in a row group: a filtered
//! scan reads its filter columns first and the rest only when rows pass), until CAUTIOUS_STREAK row groups came in
//! order again. A jump of up to IN_ORDER_SLACK row groups (plus one per thread of the scan) counts as in order: scan
//! threads claim row groups concurrently, so their reads interleave.
//!
//! A filter that compares a column with constants makes DuckDB read that column's bloom filter (stored after the row
//! groups) before each row group, a small read and a round trip of its own: once a reader read one, the bloom filters
//! of that column are fetched ahead with the row groups they belong to, those of BLOOM_BLOCK_GROUPS groups as one
//! range (the filters of other columns between them included): small requests in a row cost an IO thread a round
//! trip each, and would set the pace of the scan.
//!
//! The threads of one scan each read through a handle of their own, and each sees only every n-th row group: alone,
//! each would take the others' groups for skips. So they share one predictor (ObjectReadAhead::Observe): a reader
//! whose first row-group read lands near another reader's furthest group joins that scan (Joins, AddThread).
class ParquetPredictor : public AccessPredictor {
public:
	static constexpr double WHOLE_GROUP_SHARE = 0.95;
	static constexpr uint64_t MAX_WINDOW_GROUPS = 64;
	//! Read-ahead of row groups this far behind the furthest one read is dropped.
	static constexpr uint64_t DROP_LAG_GROUPS = 8;
	static constexpr int64_t IN_ORDER_SLACK = 4;
	static constexpr uint64_t CAUTIOUS_STREAK = 4;
	static constexpr uint64_t START_WINDOW_GROUPS = 4;
	static constexpr uint64_t START_AHEAD_BYTES = 4 * 1024 * 1024;
	static constexpr int64_t BLOOM_BLOCK_GROUPS = 8;

	explicit ParquetPredictor(std::shared_ptr<const ParquetLayout> layout);
	Prediction OnRead(const ByteRange &read, const PredictionLimits &limits) override;

	//! The ranges a reader of `group` asks for, in its order: first the bloom filters of the `blooms` columns (once
	//! past bloom_group), then what `columns` cover (the whole span when whole row groups are read); each part
	//! merged across gaps under merge_gap_bytes.
	std::vector<PredictedRange> GroupRanges(size_t group, const std::vector<bool> &columns,
	                                        uint64_t merge_gap_bytes) const;
	//! The bloom filters of the `blooms` columns of row groups `first` to `last` past bloom_group, merged across gaps
	//! under merge_gap_bytes.
	std::vector<PredictedRange> BloomRanges(size_t first, size_t last, uint64_t merge_gap_bytes) const;
	//! What `columns` cover in `group` (the whole span when whole row groups are read), merged likewise.
	std::vector<PredictedRange> DataRanges(size_t group, const std::vector<bool> &columns,
	                                       uint64_t merge_gap_bytes) const;
	bool IsCautious() const {
		return cautious;
	}
	//! Whether a reader read a row group yet.
	bool Started() const {
		return furthest_group >= 0;
	}
	//! Whether `read`, a reader's first read, is another thread of this scan: in a row group that no reader of it
	//! read (a scan's threads claim distinct groups; a scan starting over reads them again), from DROP_LAG_GROUPS
	//! behind to the in-order slack ahead of the furthest one read.
	bool Joins(const ByteRange &read) const override;
	//! Each thread that joined widens the slack of what counts as in order by one row group.
	void AddThread() override {
		threads++;
	}
	bool MayJoinScan() const override {
		return !Started();
	}
	bool PatternToShare(ColumnPattern &pattern) const override;
	ColumnPattern Pattern() const;
	//! Changes each time the pattern does.
	uint64_t PatternVersion() const {
		return pattern_version;
	}
	//! Starts from what another file of the same dataset read, before this one had any read.
	void Seed(const ColumnPattern &seed);
	//! The first row group's ranges under the seeded pattern (nothing without a seed).
	Prediction Start(const PredictionLimits &limits);

private:
	//! Index of the row group whose span holds `offset`, or -1.
	int64_t GroupOf(uint64_t offset) const;
	//! Marks the columns of `group` that `read` overlaps in `columns`; true when one was new.
	bool MarkColumns(size_t group, const ByteRange &read, std::vector<bool> &columns) const;
	//! Updates window, streak and caution for a read in a row group past all earlier ones.
	void EnterGroup(int64_t group);
	//! For a read of a bloom filter: marks its column in `blooms` (true when it was new) and notes its row group.
	bool MarkBloomFilter(const ByteRange &read);
	//! Adds the ranges of the row groups ahead of the furthest one read, within the window, to `prediction`.
	void PredictWindow(const PredictionLimits &limits, Prediction &prediction);
	//! Predicts the row groups after the furthest one read again (the pattern changed).
	void Repredict() {
		predicted_through = std::min(predicted_through, furthest_group);
		blooms_predicted_through = std::min(blooms_predicted_through, furthest_group);
	}
	int64_t Slack() const {
		return IN_ORDER_SLACK + static_cast<int64_t>(threads) - 1;
	}

	std::shared_ptr<const ParquetLayout> layout;
	//! Row group indexes sorted by span offset.
	std::vector<size_t> by_offset;
	//! End of the last column chunk: the footer follows.
	uint64_t data_end = 0;
	std::vector<bool> pattern;
	//! Columns of the first read in each row group.
	std::vector<bool> lead;
	std::vector<bool> blooms;
	//! Bloom filter ranges of all row groups by offset: (range, row group, column).
	struct BloomFilterEntry {
		ByteRange range;
		size_t group;
		size_t column;
	};
	std::vector<BloomFilterEntry> bloom_filters;
	//! Furthest row group whose bloom filter a reader read: those up to it are never fetched ahead.
	int64_t bloom_group = -1;
	bool whole_groups = false;
	bool cautious = false;
	uint64_t in_order_streak = 0;
	int64_t furthest_group = -1;
	uint64_t window_groups = 1;
	//! Highest row group whose ranges, and whose bloom filters, were predicted with the current pattern.
	int64_t predicted_through = -1;
	int64_t blooms_predicted_through = -1;
	uint64_t pattern_version = 0;
	bool seeded = false;
	//! Readers sharing this predictor.
	uint64_t threads = 1;
	//! The row groups its readers read (by index).
	std::vector<bool> groups_read;
};

} // namespace httpfs2
