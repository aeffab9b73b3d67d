#include "core/read_ahead/object_read_ahead.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <new>

namespace httpfs2 {

namespace {
//! The parts of `range` that none of `taken` covers, in order.
std::vector<ByteRange> Uncovered(const ByteRange &range, const std::vector<ByteRange> &taken) {
	std::vector<ByteRange> parts {range};
	for (auto &other : taken) {
		std::vector<ByteRange> rest;
		for (auto &part : parts) {
			if (other.End() <= part.offset || part.End() <= other.offset) {
				rest.push_back(part);
				continue;
			}
			if (part.offset < other.offset) {
				rest.push_back(ByteRange {part.offset, other.offset - part.offset});
			}
			if (other.End() < part.End()) {
				rest.push_back(ByteRange {other.End(), part.End() - other.End()});
			}
		}
		parts.swap(rest);
	}
	return parts;
}
} // namespace

ObjectReadAhead::ObjectReadAhead(IoPool &pool_p, MemoryBudget &budget_p, IoStats &stats_p, CostModel &model_p,
                                 uint64_t file_size_p, Fetcher fetcher_p, std::unique_ptr<FormatKnowledge> knowledge_p)
    : pool(pool_p), budget(budget_p), stats(stats_p), model(model_p), file_size(file_size_p),
      fetcher(std::move(fetcher_p)), segments(budget_p, stats_p), knowledge(std::move(knowledge_p)) {
}

ObjectReadAhead::~ObjectReadAhead() {
	Close();
}

std::unique_ptr<AccessPredictor> ObjectReadAhead::NewPredictor() {
	std::lock_guard<std::mutex> guard(lock);
	return knowledge->NewPredictor();
}

uint64_t ObjectReadAhead::AddReader() {
	std::lock_guard<std::mutex> guard(lock);
	auto id = next_reader++;
	reader_drop_points[id] = 0;
	return id;
}

void ObjectReadAhead::RemoveReader(uint64_t reader) {
	std::lock_guard<std::mutex> guard(lock);
	reader_drop_points.erase(reader);
}

void ObjectReadAhead::Observe(uint64_t reader, std::shared_ptr<AccessPredictor> &predictor, const ByteRange &read,
                              const ReadAheadTuning &tuning) {
	std::lock_guard<std::mutex> guard(lock);
	if (closed || read.length == 0) {
		return;
	}
	last_tuning = tuning;
	// Predictors are used under this lock only, so readers may share one.
	JoinScanLocked(predictor, read);
	auto prediction = predictor->OnRead(read, tuning.limits);
	SharePatternLocked(*predictor);
	reader_drop_points[reader] = prediction.drop_before;
	DropPassedLocked();
	ScheduleLocked(prediction.ranges, tuning);
}

void ObjectReadAhead::JoinScanLocked(std::shared_ptr<AccessPredictor> &predictor, const ByteRange &read) {
	if (!predictor->MayJoinScan()) {
		return;
	}
	bool registered = false;
	for (auto position = scans.begin(); position != scans.end();) {
		auto scan = position->lock();
		if (!scan) {
			position = scans.erase(position);
			continue;
		}
		if (scan != predictor && scan->Joins(read)) {
			scan->AddThread();
			predictor = std::move(scan);
			return;
		}
		registered = registered || scan == predictor;
		++position;
	}
	if (!registered) {
		scans.push_back(predictor);
	}
}

void ObjectReadAhead::DropPassedLocked() {
	if (reader_drop_points.empty()) {
		return;
	}
	uint64_t drop_before = UINT64_MAX;
	for (auto &entry : reader_drop_points) {
		drop_before = std::min(drop_before, entry.second);
	}
	segments.DropPassed(drop_before);
}

void ObjectReadAhead::Prefetch(const std::vector<ByteRange> &ranges, const ReadAheadTuning &tuning) {
	std::vector<PredictedRange> predicted;
	for (auto &range : ranges) {
		predicted.push_back(PredictedRange {range, range.length});
	}
	{
		std::lock_guard<std::mutex> guard(lock);
		if (closed) {
			return;
		}
		last_tuning = tuning;
		ScheduleLocked(predicted, tuning);
	}
	LearnRememberedFooter(tuning);
}

void ObjectReadAhead::LearnRememberedFooter(const ReadAheadTuning &tuning) {
	std::shared_ptr<Segment> footer;
	{
		std::lock_guard<std::mutex> guard(lock);
		if (closed) {
			return;
		}
		last_tuning = tuning;
		auto last = segments.Last();
		if (!knowledge->Layout() && last && last->remembered && last->range.End() == file_size) {
			footer = std::move(last);
		}
	}
	if (footer) {
		LearnFooter(footer->range, footer->data.Get(), true);
	}
}

bool ObjectReadAhead::Hold(const ByteRange &range, const std::string &bytes) {
	if (range.length == 0 || bytes.size() != range.length || range.End() > file_size) {
		return false;
	}
	std::lock_guard<std::mutex> guard(lock);
	if (closed || segments.Overlaps(range) || !budget.TryReserve(range.length)) {
		return false;
	}
	// Kept until the object closes, however much of it was read: DuckDB reads parts of a footer again (bloom filters
	// and page headers near it), and a footer is small.
	auto segment = segments.Add(range, UINT64_MAX);
	segment->remembered = true;
	try {
		segment->data.Allocate(budget.Allocator(), range.length);
	} catch (...) {
		segments.Remove(segment); // it gives its charge back
		return false;
	}
	std::memcpy(segment->data.Get(), bytes.data(), range.length);
	segment->state = Segment::State::READY;
	return true;
}

void ObjectReadAhead::SharePatternLocked(const AccessPredictor &predictor) {
	auto watchers = knowledge->SharePattern(predictor);
	if (!watchers.empty()) {
		// Files read alike whose footers came first: told on the pool, so that no object's lock is taken under
		// this one's.
		pool.Submit([watchers]() {
			for (auto &watcher : watchers) {
				watcher();
			}
		});
	}
}

void ObjectReadAhead::ScheduleLocked(const std::vector<PredictedRange> &ranges, const ReadAheadTuning &tuning) {
	RangePlanner planner(tuning.chunk_size_bytes, tuning.min_bytes);
	for (auto &predicted : ranges) {
		auto &range = predicted.range;
		// Fetch only the parts no segment holds yet and no reader is reading itself.
		std::vector<ByteRange> gaps;
		for (auto &missing : segments.Missing(range.offset, std::min(range.End(), file_size))) {
			for (auto &part : Uncovered(missing, reading)) {
				gaps.push_back(part);
			}
		}
		for (auto &gap : gaps) {
			auto pieces = planner.ShouldSplit(gap.length) ? planner.Plan(gap.offset, gap.length, tuning.max_fanout)
			                                              : std::vector<ByteRange> {gap};
			for (auto &piece : pieces) {
				// Useful bytes in proportion, so a merged range is freed once its wanted parts were read.
				uint64_t useful = static_cast<uint64_t>(static_cast<double>(piece.length) *
				                                        static_cast<double>(predicted.useful_bytes) /
				                                        static_cast<double>(range.length));
				if (!budget.TryReserve(piece.length)) {
					stats.Add(Counter::READ_AHEAD_SKIPPED_BUDGET);
					return;
				}
				AddSegmentLocked(piece, useful);
			}
		}
	}
}

void ObjectReadAhead::AddSegmentLocked(const ByteRange &piece, uint64_t useful_bytes) {
	auto segment = segments.Add(piece, useful_bytes);
	std::weak_ptr<ObjectReadAhead> self = shared_from_this();
	// Weak: a segment dropped, or fetched and read by a reader, while its task waits in the queue is freed then.
	std::weak_ptr<Segment> queued = segment;
	pool.Submit([self, queued] {
		auto object = self.lock();
		auto segment = queued.lock();
		if (object && segment) {
			object->RunFetch(segment, false);
		}
	});
}

void ObjectReadAhead::RunFetch(const std::shared_ptr<Segment> &segment, bool by_reader) {
	Fetcher fetch;
	bool ok = true;
	{
		std::lock_guard<std::mutex> guard(lock);
		if (!by_reader) {
			if (closed || !segment->held || segment->state != Segment::State::QUEUED) {
				return;
			}
			segment->state = Segment::State::FETCHING;
		}
		fetching++;
		try {
			fetch = fetcher;
		} catch (...) {
			ok = false; // out of memory: the fetch fails below like any other, so no one waits for it forever
		}
	}
	auto start = std::chrono::steady_clock::now();
	auto stream_start = StreamController::Now();
	model.streams.Started(stream_start);
	std::exception_ptr error;
	try {
		if (ok) {
			segment->data.Allocate(budget.Allocator(), segment->range.length);
			fetch(segment->range, segment->data.Get());
		}
	} catch (FetchDeclined &) {
		ok = false;
	} catch (std::bad_alloc &) {
		ok = false; // no buffer: a reader reads the range itself
	} catch (...) {
		ok = false;
		error = std::current_exception();
	}
	// The copy holds the wrapped filesystem's handle: it goes before `fetching` says this fetch is over, so that
	// once Close() or IsFetching() saw no fetch in flight, no IO thread still holds that handle.
	fetch = nullptr;
	double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
	// Before `fetching` says this fetch is over: once Close() returned, the database's cost model may go.
	if (ok) {
		model.ObserveSubRead(segment->range.length, seconds);
	}
	auto stream_end = StreamController::Now();
	model.streams.Finished(ok ? segment->range.length : 0, stream_end - stream_start, stream_end);
	bool dropped = false;
	{
		std::lock_guard<std::mutex> guard(lock);
		fetching--;
		if (closed && fetching == 0) {
			// Closed while this fetch ran (its last handle went): the handle is let go now, while the query's
			// database is sure to be alive, not when the registry lets go of the object.
			fetcher = nullptr;
		}
		stats.Add(Counter::READ_AHEAD_REQUESTS);
		if (ok) {
			segment->state = Segment::State::READY;
			stats.Add(Counter::READ_AHEAD_BYTES, segment->range.length);
			if (!segment->held) {
				stats.Add(Counter::READ_AHEAD_BYTES_WASTED, segment->range.length);
			}
			if (!segment->held && !by_reader) {
				// Dropped while in flight (closed or passed over): freed now rather than when the pool lets go of
				// its task. A reader still waiting for it finds no data and reads the range itself.
				dropped = true;
				segment->data.Reset();
				segment->ReleaseCharge();
			}
		} else {
			segment->state = Segment::State::FAILED;
			segment->error = error;
			segment->data.Reset();
			segment->ReleaseCharge();
			stats.Add(Counter::READ_AHEAD_FAILURES);
			segments.Remove(segment);
		}
	}
	fetch_done.notify_all();
	if (ok) {
		if (!dropped && segment->range.End() == file_size) {
			// A READY segment's bytes never change, and `segment` keeps them alive.
			LearnFooter(segment->range, segment->data.Get(), true);
		}
	}
}

bool ObjectReadAhead::Await(const std::shared_ptr<Segment> &segment, bool &waited) {
	std::unique_lock<std::mutex> guard(lock);
	bool waited_here = false;
	if (segment->state == Segment::State::QUEUED && segment->held && !closed) {
		// Still waiting for an IO thread: the reader fetches it now instead of queueing behind other read-ahead.
		segment->state = Segment::State::FETCHING;
		waited_here = true;
		guard.unlock();
		RunFetch(segment, true);
		guard.lock();
	}
	if (segment->state == Segment::State::FETCHING) {
		waited_here = true;
		fetch_done.wait(guard, [&] { return segment->state != Segment::State::FETCHING; });
	}
	waited = waited || waited_here;
	if (waited_here && segment->state == Segment::State::FAILED && segment->error) {
		// Read again, the same bytes would take as long to fail again (a stalled server: http_timeout per attempt).
		std::rethrow_exception(segment->error);
	}
	return segment->state == Segment::State::READY && segment->data;
}

ServeResult ObjectReadAhead::Serve(const ByteRange &read, char *destination) {
	ServeResult result;
	std::vector<std::shared_ptr<Segment>> overlapping;
	{
		std::lock_guard<std::mutex> guard(lock);
		overlapping = segments.Overlapping(read);
		// Taken by the reader in the same step that found nothing for them: no fetch of them is scheduled after.
		std::vector<ByteRange> held;
		for (auto &segment : overlapping) {
			held.push_back(segment->range);
		}
		result.reading = Uncovered(read, held);
		data_read = data_read || knowledge->ReadsData(read);
		reading.insert(reading.end(), result.reading.begin(), result.reading.end());
	}
	uint64_t cursor = read.offset;
	for (auto &segment : overlapping) {
		uint64_t start = std::max(segment->range.offset, read.offset);
		uint64_t end = std::min(segment->range.End(), read.End());
		if (start > cursor) {
			result.gaps.push_back(ByteRange {cursor, start - cursor});
		}
		if (Await(segment, result.waited)) {
			// A READY segment's bytes never change, and `segment` keeps them alive while they are copied.
			std::memcpy(destination + (start - read.offset), segment->data.Get() + (start - segment->range.offset),
			            end - start);
			result.served_bytes += end - start;
			std::lock_guard<std::mutex> guard(lock);
			segments.Consume(segment, end - start);
		} else if (!result.gaps.empty() && result.gaps.back().End() == start) {
			result.gaps.back().length += end - start;
		} else {
			result.gaps.push_back(ByteRange {start, end - start});
		}
		cursor = end;
	}
	if (cursor < read.End()) {
		if (!result.gaps.empty() && result.gaps.back().End() == cursor) {
			result.gaps.back().length += read.End() - cursor;
		} else {
			result.gaps.push_back(ByteRange {cursor, read.End() - cursor});
		}
	}
	return result;
}

void ObjectReadAhead::EndReading(const std::vector<ByteRange> &ended) {
	std::lock_guard<std::mutex> guard(lock);
	for (auto &range : ended) {
		auto found = std::find_if(reading.begin(), reading.end(), [&](const ByteRange &other) {
			return other.offset == range.offset && other.length == range.length;
		});
		if (found != reading.end()) {
			reading.erase(found);
		}
	}
}

bool ObjectReadAhead::Inspect(const ByteRange &read, const char *data) {
	bool learned = LearnFooter(read, data, false);
	std::lock_guard<std::mutex> guard(lock);
	// A layout learned from a footer fetched ahead is reported with the first read after it.
	bool report = knowledge->Layout() && !layout_reported;
	layout_reported = layout_reported || report;
	return report || learned;
}

bool ObjectReadAhead::LearnFooter(const ByteRange &range, const char *data, bool ahead) {
	ByteRange metadata {0, 0};
	{
		std::lock_guard<std::mutex> guard(lock);
		if (closed || !knowledge->MetadataIn(range, data, metadata)) {
			return false;
		}
	}
	// Parsed outside the lock: a large footer takes a while, and other readers need not wait for it.
	auto parsed = knowledge->Parse(data + (metadata.offset - range.offset), metadata.length);
	std::lock_guard<std::mutex> guard(lock);
	if (!parsed || knowledge->Layout() || closed) {
		return false;
	}
	InstallLayoutLocked(std::move(parsed), ahead);
	return true;
}

void ObjectReadAhead::UseLayout(std::shared_ptr<const FileLayout> known) {
	std::lock_guard<std::mutex> guard(lock);
	if (!knowledge->Layout() && !closed && known) {
		InstallLayoutLocked(std::move(known), false);
	}
}

void ObjectReadAhead::InstallLayoutLocked(std::shared_ptr<const FileLayout> parsed, bool ahead) {
	if (!knowledge->Install(std::move(parsed)) || !ahead) {
		return;
	}
	StartFirstRangesLocked();
	// What the files read alike share may come (a glob fetches its first files' footers before its scan read any) or
	// grow (a scan's first reads show its columns one at a time) before this file has a reader: what it adds is
	// fetched then.
	std::weak_ptr<ObjectReadAhead> self;
	try {
		self = shared_from_this();
	} catch (std::bad_weak_ptr &) {
		return;
	}
	knowledge->WatchShared([self]() {
		auto object = self.lock();
		if (object) {
			std::lock_guard<std::mutex> guard(object->lock);
			object->StartFirstRangesLocked();
		}
	});
}

void ObjectReadAhead::StartFirstRangesLocked() {
	// Only before any reader: a reader's own predictor, seeded from the same pattern, takes it from there. Not once a
	// reader read its data either, even one gone since (the shared pattern grows as the scan reads other files:
	// DuckDB 2.0 reads files ahead, and may have read and closed this one before): that would be fetched again for
	// nothing. A reader of the footer alone (a bind's) leaves it to start.
	if (closed || !reader_drop_points.empty() || data_read) {
		return;
	}
	auto ranges = knowledge->FirstRanges(last_tuning.limits);
	if (!ranges.empty()) {
		ScheduleLocked(ranges, last_tuning);
	}
}

std::shared_ptr<const FileLayout> ObjectReadAhead::Layout() const {
	std::lock_guard<std::mutex> guard(lock);
	return knowledge->Layout();
}

void ObjectReadAhead::Close() {
	Fetcher released;
	{
		std::unique_lock<std::mutex> guard(lock);
		CloseLocked();
		fetch_done.wait(guard, [&] { return fetching == 0; });
		released = std::move(fetcher);
		fetcher = nullptr;
	}
}

bool ObjectReadAhead::Abandon() {
	std::lock_guard<std::mutex> guard(lock);
	CloseLocked();
	return fetching > 0;
}

void ObjectReadAhead::CloseLocked() {
	if (closed) {
		return;
	}
	closed = true;
	segments.DropAll();
}

bool ObjectReadAhead::IsClosed() const {
	std::lock_guard<std::mutex> guard(lock);
	return closed;
}

bool ObjectReadAhead::IsFetching() const {
	std::lock_guard<std::mutex> guard(lock);
	return fetching > 0;
}

uint64_t ObjectReadAhead::HeldBytes() const {
	std::lock_guard<std::mutex> guard(lock);
	return segments.HeldBytes();
}

ReadAheadReader::ReadAheadReader(std::shared_ptr<ObjectReadAhead> object_p)
    : object(std::move(object_p)), id(object->AddReader()) {
	predicts_from_layout = object->Layout() != nullptr;
	predictor = object->NewPredictor();
}

ReadAheadReader::~ReadAheadReader() {
	object->RemoveReader(id);
}

void ReadAheadReader::Observe(const ByteRange &read, const ReadAheadTuning &tuning) {
	std::lock_guard<std::mutex> guard(lock);
	if (!predicts_from_layout && object->Layout()) {
		predictor = object->NewPredictor();
		predicts_from_layout = true;
	}
	object->Observe(id, predictor, read, tuning);
}

} // namespace httpfs2
