#include "core/read_ahead/access_predictor.hpp"

#include <algorithm>

namespace httpfs2 {

constexpr uint64_t SequentialPredictor::INITIAL_WINDOW;
constexpr uint64_t SequentialPredictor::READS_AHEAD;
constexpr uint64_t SequentialPredictor::REORDER_SPAN;
constexpr uint64_t SequentialPredictor::FIRST_READ_STREAM_MIN;
constexpr double ParquetPredictor::WHOLE_GROUP_SHARE;
constexpr uint64_t ParquetPredictor::MAX_WINDOW_GROUPS;
constexpr uint64_t ParquetPredictor::DROP_LAG_GROUPS;
constexpr size_t PatternMemory::MAX_DATASETS;
constexpr size_t PatternMemory::MAX_WATCHERS;
constexpr int64_t ParquetPredictor::IN_ORDER_SLACK;
constexpr int64_t ParquetPredictor::BLOOM_BLOCK_GROUPS;
constexpr uint64_t ParquetPredictor::CAUTIOUS_STREAK;
constexpr uint64_t ParquetPredictor::START_WINDOW_GROUPS;
constexpr uint64_t ParquetPredictor::START_AHEAD_BYTES;

SequentialPredictor::SequentialPredictor(uint64_t file_size_p) : file_size(file_size_p) {
}

Prediction SequentialPredictor::OnRead(const ByteRange &read, const PredictionLimits &limits) {
	Prediction prediction;
	// A first read starts a stream only when it is large and at the beginning of the file: a first read elsewhere
	// (a footer) or a small one (a probe) has to be followed by a near one before anything is fetched. A read near
	// the front of the reads so far, ahead or behind by up to REORDER_SPAN, belongs to the same stream: DuckDB 2.0
	// cuts a sequential read into 2 MiB reads that reach the file in any order.
	bool starts = reads == 0 && read.offset == 0 && read.length >= FIRST_READ_STREAM_MIN;
	bool near = reads > 0 && read.offset <= front + REORDER_SPAN && read.End() + REORDER_SPAN >= front;
	reads++;
	if (!starts && !near) {
		window = 0;
		host_stream = false;
		front = read.End();
		predicted_until = read.End();
		return prediction;
	}
	bool advances = read.End() > front;
	lag = std::max(lag, front > read.offset ? front - read.offset : 0);
	front = std::max(front, read.End());
	// Reads still to come may arrive as far behind the front as any did (twice that, to be safe): what they need stays.
	// Reads in order keep nothing they passed.
	uint64_t keep = std::max(read.length, 2 * lag);
	prediction.drop_before = front > keep ? front - keep : 0;
	if (!advances) {
		return prediction; // a read that arrived after one further on, or a read again
	}
	uint64_t cap = std::max(limits.max_ahead_bytes, std::min(READS_AHEAD * read.length, limits.ceiling_bytes));
	// Where the host's pieces reach as far as the window, or run as many streams as read-ahead would, a window adds
	// no stream: only larger requests that the host's reads then wait for (DuckDB 2.0.1, async_threads 48, read_blob
	// of 256 MiB at 80 ms and 40 MiB/s a stream: 1.36 s with windows of up to 128 MiB in 13-20 MiB pieces, 1.05 s
	// without, 0.93 s for DuckDB alone).
	// So for the rest of such a stream: a read's last piece is shorter than the others (DuckDB's CSV reader asks for
	// buffers of 32 MB, cut into 2 MiB pieces and a remainder).
	host_stream = host_stream || limits.host_reads.InFlightAround(read.length) >= cap ||
	              limits.host_reads.WideAround(read.length);
	if (host_stream) {
		return prediction;
	}
	window = window == 0 ? std::max(INITIAL_WINDOW, read.length) : window * 2;
	window = std::min(window, cap);
	uint64_t start = std::max(predicted_until, front);
	uint64_t end = std::min(file_size, front + window);
	if (end > start) {
		prediction.ranges.push_back(PredictedRange {ByteRange {start, end - start}, end - start});
		predicted_until = end;
	}
	return prediction;
}

std::vector<std::function<void()>> PatternMemory::Remember(const std::string &dataset, const ColumnPattern &pattern) {
	std::lock_guard<std::mutex> guard(lock);
	if (patterns.size() >= MAX_DATASETS && patterns.count(dataset) == 0) {
		patterns.clear();
		watchers.clear();
	}
	auto found = patterns.find(dataset);
	if (found != patterns.end() && found->second == pattern) {
		return {};
	}
	patterns[dataset] = pattern;
	auto watching = watchers.find(dataset);
	if (watching == watchers.end()) {
		return {};
	}
	return std::vector<std::function<void()>>(watching->second.begin(), watching->second.end());
}

void PatternMemory::Watch(const std::string &dataset, std::function<void()> watcher) {
	std::lock_guard<std::mutex> guard(lock);
	if (watchers.size() >= MAX_DATASETS && watchers.count(dataset) == 0) {
		watchers.clear();
	}
	auto &queue = watchers[dataset];
	if (queue.size() >= MAX_WATCHERS) {
		queue.pop_front();
	}
	queue.push_back(std::move(watcher));
}

bool PatternMemory::Recall(const std::string &dataset, size_t column_count, ColumnPattern &pattern) {
	std::lock_guard<std::mutex> guard(lock);
	auto found = patterns.find(dataset);
	if (found == patterns.end() || found->second.columns.size() != column_count) {
		return false;
	}
	pattern = found->second;
	return true;
}

ParquetPredictor::ParquetPredictor(std::shared_ptr<const ParquetLayout> layout_p) : layout(std::move(layout_p)) {
	size_t columns = 0;
	for (size_t i = 0; i < layout->row_groups.size(); i++) {
		by_offset.push_back(i);
		columns = std::max(columns, layout->row_groups[i].columns.size());
	}
	std::sort(by_offset.begin(), by_offset.end(), [&](size_t a, size_t b) {
		return layout->row_groups[a].span.offset < layout->row_groups[b].span.offset;
	});
	pattern.assign(columns, false);
	lead.assign(columns, false);
	blooms.assign(columns, false);
	groups_read.assign(layout->row_groups.size(), false);
	for (size_t group = 0; group < layout->row_groups.size(); group++) {
		auto &row_group = layout->row_groups[group];
		data_end = std::max(data_end, row_group.span.End());
		for (auto &chunk : row_group.columns) {
			data_end = std::max(data_end, chunk.End());
		}
		for (size_t column = 0; column < row_group.bloom_filters.size(); column++) {
			if (row_group.bloom_filters[column].length > 0) {
				bloom_filters.push_back(BloomFilterEntry {row_group.bloom_filters[column], group, column});
			}
		}
	}
	std::sort(bloom_filters.begin(), bloom_filters.end(),
	          [](const BloomFilterEntry &a, const BloomFilterEntry &b) { return a.range.offset < b.range.offset; });
}

int64_t ParquetPredictor::GroupOf(uint64_t offset) const {
	auto after = std::upper_bound(by_offset.begin(), by_offset.end(), offset, [&](uint64_t value, size_t group) {
		return value < layout->row_groups[group].span.offset;
	});
	if (after == by_offset.begin()) {
		return -1;
	}
	size_t group = *(after - 1);
	return offset < layout->row_groups[group].span.End() ? static_cast<int64_t>(group) : -1;
}

bool ParquetPredictor::MarkColumns(size_t group, const ByteRange &read, std::vector<bool> &columns) const {
	auto &chunks = layout->row_groups[group].columns;
	bool grew = false;
	for (size_t column = 0; column < chunks.size() && column < columns.size(); column++) {
		bool overlaps = chunks[column].offset < read.End() && read.offset < chunks[column].End();
		if (overlaps && !columns[column]) {
			columns[column] = true;
			grew = true;
		}
	}
	return grew;
}

void ParquetPredictor::EnterGroup(int64_t group) {
	if (furthest_group < 0 && group > 0 && group < IN_ORDER_SLACK) {
		// A first read just past row group 0: either the groups before it were pruned (a selective scan, that may
		// read only this one) or another scan thread's read of group 0 is still to come. Cautious until the next
		// group in order shows which.
		cautious = true;
		in_order_streak = CAUTIOUS_STREAK - 1;
		window_groups = 1;
		furthest_group = group;
		return;
	}
	bool in_order = furthest_group >= 0 ? group <= furthest_group + Slack() : group == 0;
	if (!in_order) {
		cautious = true;
		in_order_streak = 0;
		window_groups = 1;
	} else if (furthest_group >= 0) {
		in_order_streak++;
		if (cautious && in_order_streak >= CAUTIOUS_STREAK) {
			cautious = false;
			window_groups = 1;
		} else if (!cautious) {
			window_groups = std::min(window_groups * 2, MAX_WINDOW_GROUPS);
		}
	} else {
		window_groups = START_WINDOW_GROUPS;
	}
	furthest_group = group;
}

bool ParquetPredictor::Joins(const ByteRange &read) const {
	int64_t group = GroupOf(read.offset);
	return furthest_group >= 0 && group >= 0 && read.End() <= data_end && !groups_read[static_cast<size_t>(group)] &&
	       group + static_cast<int64_t>(DROP_LAG_GROUPS) >= furthest_group && group <= furthest_group + Slack();
}

std::vector<PredictedRange> MergeRanges(std::vector<ByteRange> ranges, uint64_t merge_gap_bytes) {
	std::sort(ranges.begin(), ranges.end(), [](const ByteRange &a, const ByteRange &b) { return a.offset < b.offset; });
	std::vector<PredictedRange> result;
	for (auto &range : ranges) {
		if (!result.empty() && range.offset <= result.back().range.End() + merge_gap_bytes) {
			auto &last = result.back();
			uint64_t end = std::max(last.range.End(), range.End());
			last.useful_bytes += range.End() > last.range.End() ? std::min(range.length, end - last.range.End()) : 0;
			last.range.length = end - last.range.offset;
			continue;
		}
		result.push_back(PredictedRange {range, range.length});
	}
	return result;
}

std::vector<PredictedRange> ParquetPredictor::BloomRanges(size_t first, size_t last, uint64_t merge_gap_bytes) const {
	std::vector<ByteRange> filters;
	auto from = static_cast<size_t>(std::max<int64_t>(static_cast<int64_t>(first), bloom_group + 1));
	for (size_t group = from; group <= last; group++) {
		auto &row_group = layout->row_groups[group];
		for (size_t column = 0; column < row_group.bloom_filters.size() && column < blooms.size(); column++) {
			if (blooms[column] && row_group.bloom_filters[column].length > 0) {
				filters.push_back(row_group.bloom_filters[column]);
			}
		}
	}
	return MergeRanges(std::move(filters), merge_gap_bytes);
}

std::vector<PredictedRange> ParquetPredictor::DataRanges(size_t group, const std::vector<bool> &columns,
                                                         uint64_t merge_gap_bytes) const {
	auto &row_group = layout->row_groups[group];
	if (whole_groups) {
		return {PredictedRange {row_group.span, row_group.span.length}};
	}
	std::vector<ByteRange> needed;
	for (size_t column = 0; column < row_group.columns.size() && column < columns.size(); column++) {
		if (columns[column] && row_group.columns[column].length > 0) {
			needed.push_back(row_group.columns[column]);
		}
	}
	return MergeRanges(std::move(needed), merge_gap_bytes);
}

std::vector<PredictedRange> ParquetPredictor::GroupRanges(size_t group, const std::vector<bool> &columns,
                                                          uint64_t merge_gap_bytes) const {
	// The row group's bloom filters come first: DuckDB reads them before its data.
	auto result = BloomRanges(group, group, merge_gap_bytes);
	auto data = DataRanges(group, columns, merge_gap_bytes);
	result.insert(result.end(), data.begin(), data.end());
	return result;
}

bool ParquetPredictor::PatternToShare(ColumnPattern &pattern) const {
	if (pattern_version == 0) {
		return false;
	}
	pattern = Pattern();
	return true;
}

ColumnPattern ParquetPredictor::Pattern() const {
	ColumnPattern result;
	result.columns = pattern;
	result.lead = lead;
	result.blooms = blooms;
	result.whole_groups = whole_groups;
	return result;
}

void ParquetPredictor::Seed(const ColumnPattern &seed) {
	if (seed.columns.size() != pattern.size() || seed.lead.size() != lead.size() || furthest_group >= 0) {
		return;
	}
	pattern = seed.columns;
	lead = seed.lead;
	if (seed.blooms.size() == blooms.size()) {
		blooms = seed.blooms;
	}
	whole_groups = seed.whole_groups;
	seeded = true;
}

Prediction ParquetPredictor::Start(const PredictionLimits &limits) {
	Prediction prediction;
	if (!seeded || layout->row_groups.empty() || predicted_through >= 0) {
		return prediction;
	}
	auto ranges = GroupRanges(0, pattern, limits.merge_gap_bytes);
	uint64_t bytes = 0;
	for (auto &range : ranges) {
		bytes += range.range.length;
	}
	if (bytes <= limits.max_ahead_bytes) {
		prediction.ranges = std::move(ranges);
		predicted_through = 0;
	}
	return prediction;
}

Prediction ParquetPredictor::OnRead(const ByteRange &read, const PredictionLimits &limits) {
	Prediction prediction;
	int64_t group = GroupOf(read.offset);
	// A read reaching past the row groups is a footer read (DuckDB's first one also takes the end of the last
	// column chunk): it says nothing about the columns a scan needs.
	if (group < 0 || read.End() > data_end) {
		// Or a bloom filter's: the first of a column says the scan reads that column's in every row group.
		if (MarkBloomFilter(read)) {
			pattern_version++;
			Repredict();
			PredictWindow(limits, prediction);
		}
		return prediction;
	}
	auto &row_group = layout->row_groups[static_cast<size_t>(group)];
	groups_read[static_cast<size_t>(group)] = true;
	bool was_cautious = cautious;
	bool first_in_group = group > furthest_group;
	if (first_in_group) {
		EnterGroup(group);
	}
	bool pattern_grew = false;
	if (static_cast<double>(read.length) >= WHOLE_GROUP_SHARE * static_cast<double>(row_group.span.length)) {
		pattern_grew = !whole_groups;
		whole_groups = true;
	} else {
		pattern_grew = MarkColumns(static_cast<size_t>(group), read, pattern);
		if (first_in_group) {
			pattern_grew = MarkColumns(static_cast<size_t>(group), read, lead) || pattern_grew;
		}
	}
	if (pattern_grew) {
		pattern_version++;
	}
	if (pattern_grew || was_cautious != cautious) {
		// The row groups already predicted get the new columns too (what is held already is not fetched again).
		Repredict();
	}
	// From this read's group, not the furthest: the threads of a scan share this predictor, and each tells where it
	// is itself.
	if (static_cast<uint64_t>(group) > DROP_LAG_GROUPS) {
		prediction.drop_before = layout->row_groups[static_cast<size_t>(group) - DROP_LAG_GROUPS].span.offset;
	}
	PredictWindow(limits, prediction);
	return prediction;
}

bool ParquetPredictor::MarkBloomFilter(const ByteRange &read) {
	auto after =
	    std::upper_bound(bloom_filters.begin(), bloom_filters.end(), read.offset,
	                     [](uint64_t offset, const BloomFilterEntry &entry) { return offset < entry.range.offset; });
	if (after == bloom_filters.begin() || read.offset >= std::prev(after)->range.End()) {
		return false;
	}
	auto &entry = *std::prev(after);
	bloom_group = std::max(bloom_group, static_cast<int64_t>(entry.group));
	if (entry.column >= blooms.size() || blooms[entry.column]) {
		return false;
	}
	blooms[entry.column] = true;
	return true;
}

void ParquetPredictor::PredictWindow(const PredictionLimits &limits, Prediction &prediction) {
	uint64_t ahead_bytes = 0;
	// While only the first row group was read, the window reaches past the next group only within START_AHEAD_BYTES.
	uint64_t start_cap =
	    furthest_group == 0 ? std::min(limits.max_ahead_bytes, START_AHEAD_BYTES) : limits.max_ahead_bytes;
	auto &columns = cautious ? lead : pattern;
	auto last = std::min<int64_t>(furthest_group + static_cast<int64_t>(cautious ? 1 : window_groups),
	                              static_cast<int64_t>(layout->row_groups.size()) - 1);
	for (int64_t next = furthest_group + 1; next <= last; next++) {
		auto ranges = DataRanges(static_cast<size_t>(next), columns, limits.merge_gap_bytes);
		uint64_t group_bytes = 0;
		for (auto &range : ranges) {
			group_bytes += range.range.length;
		}
		if (ahead_bytes + group_bytes > (next == furthest_group + 1 ? limits.max_ahead_bytes : start_cap)) {
			break;
		}
		ahead_bytes += group_bytes;
		if (next > blooms_predicted_through && furthest_group >= 0) {
			// Read before the data: the filters of this group and the next ones of its block, as one range.
			auto block_end =
			    std::min<int64_t>(next + BLOOM_BLOCK_GROUPS - 1, static_cast<int64_t>(layout->row_groups.size()) - 1);
			auto filters =
			    BloomRanges(static_cast<size_t>(next), static_cast<size_t>(block_end), limits.merge_gap_bytes);
			prediction.ranges.insert(prediction.ranges.end(), filters.begin(), filters.end());
			blooms_predicted_through = block_end;
		}
		if (next > predicted_through) {
			prediction.ranges.insert(prediction.ranges.end(), ranges.begin(), ranges.end());
			predicted_through = next;
		}
	}
}

} // namespace httpfs2
