#include "adapter/read/parallel_reader.hpp"

#include "adapter/stores/checked_range_reader.hpp"
#include "adapter/common/error_context.hpp"
#include "adapter/handles/internal_opener.hpp"

#include "core/split/split_policy.hpp"
#include "core/split/split_read.hpp"
#include "core/requests/url_redaction.hpp"
#include "duckdb/common/string_util.hpp"

#include <chrono>

namespace httpfs2 {

using duckdb::idx_t;
using Clock = std::chrono::steady_clock;

static double SecondsSince(Clock::time_point start) {
	return std::chrono::duration<double>(Clock::now() - start).count();
}

ParallelReader::ParallelReader(ExtensionState &state_p, IoStats &stats_p) : state(state_p), stats(stats_p) {
}

bool ParallelReader::TryRead(ReadHandle &handle, void *buffer, idx_t nr_bytes, idx_t location) {
	auto &settings = handle.settings;
	auto plan = SplitPolicy::Plan(settings, state.cost_model, nr_bytes, location);
	if (plan.pieces.empty()) {
		return false;
	}
	if (handle.range_reader && handle.range_reader->CacheOn()) {
		AlignCuts(plan.pieces, BlockCache::BLOCK_SIZE);
	}
	stats.RecordSplit(plan.fanout);

	auto start = Clock::now();
	auto read_piece = [&](const ByteRange &piece, char *destination) {
		ReadPiece(handle, piece, destination, nr_bytes, location);
	};
	auto interrupted = [&]() {
		return handle.Interrupted();
	};
	try {
		SplitRead::StreamCount streams;
		if (plan.follow_link) {
			streams = [&]() {
				return std::min<uint64_t>(settings.max_fanout, state.cost_model.streams.Streams());
			};
		}
		SplitRead::Run(state.io_pool, static_cast<char *>(buffer), location, plan.pieces, plan.fanout, read_piece,
		               interrupted, streams);
	} catch (SplitReadCancelled &) {
		throw duckdb::InterruptException();
	} catch (ReadsDeclined &) {
		return false; // read as the handle's fallback says (WrappedFileSystem::ReadForReader)
	}
	state.cost_model.ObserveSplitRead(nr_bytes, plan.fanout, SecondsSince(start));
	return true;
}

void ParallelReader::ReadPiece(ReadHandle &handle, const ByteRange &piece, char *destination, idx_t read_bytes,
                               idx_t read_location) {
	stats.SubReadStarted();
	StreamController::Transfer transfer(state.cost_model.streams);
	auto start = Clock::now();
	try {
		if (handle.range_reader) {
			handle.range_reader->Read(piece, destination);
		} else {
			SubReadHandles::Lease lease(*handle.sub_read_handles);
			// The handle opens on first use: an open that fails is this sub-read's failure, with its context.
			auto &inner = *lease;
			inner.file_system.Read(inner, destination, static_cast<int64_t>(piece.length), piece.offset);
		}
	} catch (std::exception &ex) {
		stats.SubReadFinished(0, static_cast<uint64_t>(SecondsSince(start) * 1e6));
		if (dynamic_cast<ReadsDeclined *>(&ex)) {
			throw; // not the reader's error: the read goes whole to the handle's fallback (TryRead)
		}
		if (InternalOpener::IsRangesIgnored(ex)) {
			handle.ranges_ignored_by_sub_reads = true;
			throw ReadsDeclined(handle.path);
		}
		stats.Add(Counter::ERRORS);
		RethrowWithContext(ex,
		                   duckdb::StringUtil::Format(
		                       "httpfs2: parallel read of '%s' failed: sub-read of bytes %llu-%llu "
		                       "(of the read of %llu bytes at offset %llu) failed: ",
		                       RedactUrl(handle.path), piece.offset, piece.End() - 1, read_bytes, read_location),
		                   handle.path);
	}
	double seconds = SecondsSince(start);
	stats.SubReadFinished(piece.length, static_cast<uint64_t>(seconds * 1e6));
	state.cost_model.ObserveSubRead(piece.length, seconds);
	transfer.Done(piece.length);
}

} // namespace httpfs2
