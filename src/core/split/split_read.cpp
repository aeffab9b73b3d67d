#include "core/split/split_read.hpp"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <exception>
#include <memory>
#include <mutex>

namespace httpfs2 {

namespace {

//! Shared by the caller and the pool tasks of one read. Tasks keep it alive; a task that starts after the read
//! finished finds no piece left and returns without touching the caller's buffer or reader.
struct SplitReadState : std::enable_shared_from_this<SplitReadState> {
	SplitReadState(IoPool &pool_p, char *buffer_p, uint64_t base_offset_p, const std::vector<ByteRange> &pieces_p,
	               const SplitRead::PieceReader &reader_p, const SplitRead::CancelCheck &cancelled_p,
	               const SplitRead::StreamCount &streams_p)
	    : pool(pool_p), buffer(buffer_p), base_offset(base_offset_p), pieces(pieces_p.data()),
	      piece_count(pieces_p.size()), reader(reader_p), cancelled(cancelled_p), streams(streams_p) {
	}

	IoPool &pool;

	// The caller's buffer, pieces and reader: only touched for a claimed piece, i.e. while the caller waits.
	char *buffer;
	uint64_t base_offset;
	const ByteRange *pieces;
	const size_t piece_count;
	const SplitRead::PieceReader &reader;
	const SplitRead::CancelCheck &cancelled;
	//! How many pieces may be read at once now; more drainers join while it grows.
	const SplitRead::StreamCount &streams;
	std::atomic<size_t> drainers {1};

	std::atomic<size_t> next_piece {0};
	//! Set on the first error or cancellation: no piece starts after it.
	std::atomic<bool> failed {false};
	std::mutex lock;
	std::condition_variable all_done;
	size_t finished_pieces = 0;
	std::exception_ptr first_error;

	//! Claims and reads pieces until none is left.
	void Drain() {
		while (true) {
			size_t index = next_piece.fetch_add(1);
			if (index >= piece_count) {
				return;
			}
			AddDrainers();
			std::exception_ptr error;
			if (!failed.load()) {
				auto &piece = pieces[index];
				try {
					if (cancelled && cancelled()) {
						throw SplitReadCancelled();
					}
					reader(piece, buffer + (piece.offset - base_offset));
				} catch (...) {
					error = std::current_exception();
				}
			}
			Finish(error);
		}
	}

	//! Starts drainers on the pool up to what `streams` allows now, for the pieces no drainer claimed yet. Called only
	//! by a drainer holding a claimed piece: the read is not over, so the caller's `streams` is still there.
	void AddDrainers() {
		if (!streams || failed.load()) {
			return;
		}
		size_t wanted = std::min<size_t>(streams(), piece_count);
		while (true) {
			size_t running = drainers.load();
			size_t claimed = std::min(next_piece.load(), piece_count);
			if (running >= wanted || running > piece_count - claimed) {
				return;
			}
			if (drainers.compare_exchange_weak(running, running + 1)) {
				auto self = shared_from_this();
				pool.Submit([self] { self->Drain(); });
			}
		}
	}

	void Finish(std::exception_ptr error) {
		std::lock_guard<std::mutex> guard(lock);
		if (error && !first_error) {
			first_error = error;
			failed = true;
		}
		finished_pieces++;
		if (finished_pieces == piece_count) {
			all_done.notify_all();
		}
	}
};

} // namespace

void SplitRead::Run(IoPool &pool, char *buffer, uint64_t base_offset, const std::vector<ByteRange> &pieces,
                    uint64_t fanout, const PieceReader &reader, const CancelCheck &cancelled,
                    const StreamCount &streams) {
	if (pieces.empty()) {
		return;
	}
	auto state = std::make_shared<SplitReadState>(pool, buffer, base_offset, pieces, reader, cancelled, streams);
	size_t helpers = std::min<size_t>(fanout, pieces.size()) - 1;
	state->drainers = helpers + 1;
	for (size_t i = 0; i < helpers; i++) {
		pool.Submit([state] { state->Drain(); });
	}
	state->Drain();

	std::unique_lock<std::mutex> guard(state->lock);
	state->all_done.wait(guard, [&] { return state->finished_pieces == state->piece_count; });
	if (state->first_error) {
		std::rethrow_exception(state->first_error);
	}
}

} // namespace httpfs2
