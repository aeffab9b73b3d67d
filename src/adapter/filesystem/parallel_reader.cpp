#include "adapter/filesystem/parallel_reader.hpp"

#include "adapter/filesystem/error_context.hpp"
#include "adapter/filesystem/internal_opener.hpp"

#include "core/split/range_planner.hpp"
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

uint64_t ParallelReader::ChooseFanout(const IoSettings &settings, uint64_t nr_bytes) const {
	if (!settings.auto_fanout_enabled) {
		// As many streams as the link rewarded so far (StreamController), within the setting.
		return std::min<uint64_t>(settings.max_fanout, state.cost_model.streams.Streams());
	}
	double configured_s = static_cast<double>(settings.auto_fanout_overhead_ms) / 1000.0;
	double overhead_s = state.cost_model.OverheadSeconds(settings.auto_fanout_overhead_adaptive_enabled, configured_s);
	return state.cost_model.ChooseFanout(nr_bytes, settings.max_fanout, overhead_s);
}

bool ParallelReader::TryRead(ReadHandle &handle, void *buffer, idx_t nr_bytes, idx_t location) {
	auto &settings = handle.settings;
	// From a LAN store a read under one chunk takes a few ms whole; its pieces would cost more CPU than they save.
	if (nr_bytes < settings.chunk_size_bytes && state.cost_model.Snapshot().IsNear(settings.min_latency_ms)) {
		return false;
	}
	uint64_t fanout = ChooseFanout(settings, nr_bytes);
	if (fanout < 2) {
		return false;
	}
	// Without auto fan-out, the read is cut for twice the streams it starts with, and more streams join while the
	// stream controller allows them (up to max_fanout): a large read on a wide link does not wait for the next read
	// to use what this one's transfers showed.
	bool follow_link = !settings.auto_fanout_enabled;
	uint64_t planned = fanout;
	if (follow_link) {
		// A large read is cut into pieces of half a chunk for as many streams as it may come to, so that streams
		// the controller adds while it runs find pieces left.
		uint64_t half_chunks = nr_bytes / std::max<uint64_t>(settings.chunk_size_bytes / 2, 1);
		planned = std::min<uint64_t>(settings.max_fanout, std::max<uint64_t>(2 * fanout, half_chunks));
	}
	auto pieces = RangePlanner(settings.chunk_size_bytes, settings.min_bytes).Plan(location, nr_bytes, planned);
	if (pieces.size() < 2) {
		return false;
	}
	fanout = std::min<uint64_t>(fanout, pieces.size());
	stats.RecordSplit(fanout);

	auto start = Clock::now();
	auto read_piece = [&](const ByteRange &piece, char *destination) {
		ReadPiece(handle, piece, destination, nr_bytes, location);
	};
	auto interrupted = [&]() {
		return handle.Interrupted();
	};
	try {
		SplitRead::StreamCount streams;
		if (follow_link) {
			streams = [&]() {
				return std::min<uint64_t>(settings.max_fanout, state.cost_model.streams.Streams());
			};
		}
		SplitRead::Run(state.io_pool, static_cast<char *>(buffer), location, pieces, fanout, read_piece, interrupted,
		               streams);
	} catch (SplitReadCancelled &) {
		throw duckdb::InterruptException();
	} catch (ReadsDeclined &) {
		return false; // read as the handle's fallback says (WrappedFileSystem::ReadForReader)
	}
	state.cost_model.ObserveSplitRead(nr_bytes, fanout, SecondsSince(start));
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
