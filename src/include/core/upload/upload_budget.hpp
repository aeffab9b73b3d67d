//===----------------------------------------------------------------------===//
//                         httpfs2
//
// core/upload/upload_budget.hpp
//
// One byte budget for the part buffers of all uploads of a database. Unlike read-ahead, which can skip what does
// not fit, a write must go on: a buffer that does not fit waits until parts in flight are acknowledged and free
// theirs (backpressure). The limit is never exceeded. It also knows the uploads open: their fair share of it, and
// whom to ask for early parts when one of them closes.
//===----------------------------------------------------------------------===//

#pragma once

#include "core/common/memory_budget.hpp"
#include "core/common/stream_controller.hpp"

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <set>

namespace httpfs2 {

class ObjectUpload;

class UploadBudget {
public:
	explicit UploadBudget(uint64_t limit_bytes);

	void SetLimit(uint64_t limit_bytes);
	uint64_t Limit() const;
	//! Reserves `bytes` for a part buffer, waiting while sealed parts hold what is missing (they come back when
	//! acknowledged). False when waiting cannot help: no part is in flight, so what is missing is held by buffers
	//! still being filled, which only their writers can send (or `bytes` is over the limit).
	bool Reserve(uint64_t bytes);
	//! Returns a buffer's bytes that were never sealed into a part (a single PUT, an abandoned upload).
	void Release(uint64_t bytes);
	//! A buffer became a part in flight: its bytes come back with PartSettled.
	void PartSealed();
	//! A part was acknowledged, failed or dropped: its `bytes` are free.
	void PartSettled(uint64_t bytes);

	//! An upload opened or closed: the budget is shared fairly between the uploads being written, and a closing one
	//! asks the others to send what they can (see SendOthersEarly).
	void UploadOpened(ObjectUpload &upload);
	void UploadClosed(ObjectUpload &upload);
	//! The limit divided by the uploads open.
	uint64_t FairShare() const;
	//! A file is being closed: DuckDB closes the files of a PARTITION_BY one after another, each waiting for its last
	//! part, so the others, whose bytes are nearly all written by then, send now what the store takes as parts
	//! (ObjectUpload::SendEarly) and only their tails are left for their own closes.
	void SendOthersEarly(ObjectUpload &closing);

	//! A part of `bytes` was sent on one connection in `seconds`, first byte to answer: the rate per connection that
	//! part sizes follow where the store takes parts of any size.
	void PartSent(uint64_t bytes, double seconds);
	//! Bytes per second one connection sends, as measured lately; 0 before the first part was sent.
	double SendRate() const;

	//! Parts sent at once follow the link: as many as `streams` allows, which starts at START_STREAMS and grows
	//! while the aggregate rate of the parts grows (StreamController), up to StreamController::MAX_STREAMS, and the
	//! budget bounds them too. A part's send waits here for a stream, and gives it back once answered.
	static constexpr uint64_t START_STREAMS = 16;
	void AcquireStream();
	void ReleaseStream();
	//! The parts that may be sent at once now: what `streams` allows, at most StreamController::MAX_STREAMS.
	uint64_t StreamsAllowed() const;
	StreamController streams {START_STREAMS};

	uint64_t InUse() const;
	uint64_t Peak() const;
	void ResetPeak();
	uint64_t PartsInFlight() const;
	//! Waits until no part is in flight: the parts of an upload that stopped waiting for them (a cancelled Close)
	//! still use the database's HTTP client, so the database must not go before they end.
	void WaitUntilNoPartInFlight();
	//! The most parts in flight at once since the last ResetPeak.
	uint64_t PartsInFlightPeak() const;

private:
	MemoryBudget bytes;
	mutable std::mutex lock;
	std::condition_variable freed;
	uint64_t parts_in_flight = 0;
	uint64_t parts_in_flight_peak = 0;
	double send_rate = 0;
	uint64_t sending = 0;
	//! The uploads open; their own locks are only tried while this is held.
	mutable std::mutex uploads_lock;
	std::set<ObjectUpload *> uploads;
};

} // namespace httpfs2
