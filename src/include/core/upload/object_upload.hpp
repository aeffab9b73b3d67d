//===----------------------------------------------------------------------===//
//                         httpfs2
//
// core/upload/object_upload.hpp
//
// Writing one object: the bytes are cut into parts, each sent on the IO pool as soon as it fills, many in flight per
// object and across objects, their buffers charged to the database's UploadBudget as they fill. An object that fits
// in one part is one PUT at Close. Where the store takes only parts of one size but the last (R2), the first part
// fixes the size of the others: at most the budget's fair share while many objects are written at once. Where it
// takes parts of any size (S3, Azure blocks), parts follow the link: as long as the budget's measured rate per
// connection sends in about PART_SECONDS (never under the smallest part the store takes), so that the parts still
// in flight at an object's close take little time on a slow stream; the bytes a close leaves go as up to four parts
// side by side; and what a file holds is sent early when another file closes.
// A write never fails for memory: when the budget is held by buffers that cannot be sent yet, a buffer goes early as
// the object's first part, or on to local disk (SpillFile). Closing one object makes the others send what they can,
// as DuckDB closes a PARTITION_BY's files one after another.
// Close returns when the object is complete; CloseInBackground leaves its last parts and its completion to the IO
// pool and returns an UploadCompletion to wait for. A failed part, a failed completion, a cancelled completion or a
// destruction without Close aborts the upload, so the key keeps what it had.
//===----------------------------------------------------------------------===//

#pragma once

#include <functional>
#include <stdexcept>
#include "core/common/io_pool.hpp"
#include "core/common/io_stats.hpp"
#include "core/requests/hedge_policy.hpp"
#include "core/upload/spill_file.hpp"
#include "core/upload/upload_budget.hpp"

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace httpfs2 {

//! The requests of one object's upload (S3 multipart, Azure block blobs); the adapter implements them per store.
//! Each throws on failure, with the error the store's own client would give.
class UploadTarget {
public:
	virtual ~UploadTarget() = default;
	//! Begins a multipart upload; its id.
	virtual std::string Begin() = 0;
	//! Sends part `number` (from 1); what Complete needs to name it (S3's ETag, Azure's block id).
	virtual std::string SendPart(const std::string &upload_id, uint64_t number, const char *data, uint64_t size) = 0;
	//! Whether every part but the last must be of one size (R2); S3 and Azure take parts of any size.
	virtual bool EqualPartsOnly() const {
		return true;
	}
	//! Makes the object of these parts, in order, complete and visible.
	virtual void Complete(const std::string &upload_id, const std::vector<std::string> &parts) = 0;
	//! Drops the upload and the parts sent; must not throw.
	virtual void Abort(const std::string &upload_id) noexcept = 0;
	//! The whole object in one request: it fits in one part.
	virtual void PutWhole(const char *data, uint64_t size) = 0;
	//! After Complete failed: whether the object at the key is the one these parts make all the same (a completion
	//! that took effect but whose answer was lost, and whose retry found no upload left to complete).
	virtual bool Completed(const std::vector<std::string> &parts) noexcept {
		return false;
	}
};

struct UploadOptions {
	//! The length of every part but the last, at most: an object's first part is at most the budget's fair share
	//! (its limit over the uploads open), at least `min_part_size`, and fixes the length of the others.
	uint64_t part_size = 16 * 1024 * 1024;
	//! Where a part that straggles is sent again (RequestRace): the senders' threads (not `pool`'s, whose task waits
	//! for them), the hedging policy of parts, the request's own timeout (http_timeout: a deadline past half of it is
	//! left to the timeout), and the stats that count hedges. None: parts are sent once, on the pool's thread (each
	//! attempt's retries are the target's).
	IoPool *race_threads = nullptr;
	HedgePolicy *hedges = nullptr;
	double request_timeout_seconds = 30;
	IoStats *stats = nullptr;
	//! A buffer is charged to the budget in steps of this as it fills, so that many objects written at once (the
	//! files of a PARTITION_BY) hold what they have written, not a part each.
	uint64_t charge_step = 1024 * 1024;
	//! The smallest part the store takes but for the last (S3: 5 MiB). When the budget is held by buffers being
	//! filled and nothing is in flight, a buffer of at least this becomes the object's first part early, and the
	//! object's part size is what it held.
	uint64_t min_part_size = 5 * 1024 * 1024;
	//! Where a part goes when the budget cannot hold it (see SpillFile); empty: $TMPDIR, else /tmp.
	std::string spill_directory;
	//! Asked while Close waits for the parts in flight (a query interrupted): once it says so, the wait ends with
	//! UploadCancelled and the upload is aborted. A part whose answer never ends (a server that trickles it) keeps
	//! only its own buffer until its request ends.
	std::function<bool()> cancelled;
};

//! Close gave up waiting for its parts: `cancelled` said so.
class UploadCancelled : public std::runtime_error {
public:
	UploadCancelled() : std::runtime_error("the upload was cancelled") {
	}
};

class UploadCompletion;

class ObjectUpload {
public:
	struct State;

	ObjectUpload(std::shared_ptr<UploadTarget> target, IoPool &pool, std::shared_ptr<UploadBudget> budget,
	             UploadOptions options);
	//! Without a successful Close: waits for the parts in flight, then aborts. The object is not created.
	~ObjectUpload();
	ObjectUpload(const ObjectUpload &) = delete;
	ObjectUpload &operator=(const ObjectUpload &) = delete;

	//! Appends `size` bytes; waits while the budget is full. Throws the failure of a part sent earlier.
	void Write(const char *data, uint64_t size);
	//! Sends what remains and completes the object: complete and visible when this returns. On failure the upload is
	//! aborted and the failure thrown. Once only (or CloseInBackground).
	void Close();
	//! Seals what remains and returns at once: the last parts and the completion (or the object's one PUT) go on on
	//! the IO pool. The object is complete when the completion's Wait returns no failure. Once only (or Close).
	std::shared_ptr<UploadCompletion> CloseInBackground();
	//! Another object is being closed (UploadBudget::SendOthersEarly): unless this one is being written right now, the
	//! bytes it holds that the store takes as a part are sent now (a first part of at least min_part_size fixes the
	//! object's part size at what it holds), so that its own Close has only its tail to send.
	void SendEarly();
	uint64_t BytesWritten() const {
		return written;
	}
	//! Bytes of the parts sent from local disk because the budget could not hold them.
	uint64_t BytesSpilled() const {
		return bytes_spilled;
	}

	//! A part of the store's stays this many seconds in flight where the store takes parts of any size.
	static constexpr double PART_SECONDS = 0.25;

private:
	struct Part;
	struct BeginTask;
	//! Marks the upload closed and sends what remains; `background`: the whole PUT goes on the pool.
	std::shared_ptr<UploadCompletion> StartClose(bool background);
	//! The buffer's `filled` bytes become a part in flight.
	void Seal();
	//! The buffer's bytes (at Close) become parts in flight: one, or where the store takes parts of any size, up to
	//! four side by side, each of at least min_part_size but the last.
	void SealRest();
	//! The object in one PUT, here or (`background`) on the IO pool.
	void SendWhole(bool background);
	//! The length a part may have before it is sealed.
	uint64_t PartLimit() const;
	//! Sends the buffer now as the object's first part, fixing the part size at what it holds, if no part did yet and
	//! it holds at least min_part_size; whether it did.
	bool SealAsFirstPart();
	//! Until the first part is sealed: the part size within the budget's fair share, never below what is buffered.
	void FollowFairShare();
	//! Charges the buffer to the budget for `needed` bytes (whole steps, at most the part size). False when the budget
	//! cannot hold them and nothing in flight will give any back: the buffer was then sealed early (its bytes are the
	//! object's part size, see UploadOptions::min_part_size), or else moved to a SpillFile.
	bool Charge(uint64_t needed, uint64_t limit);
	//! The current part's bytes, from memory or disk, for sending.
	std::shared_ptr<char> TakeBytes();
	//! Waits for the parts in flight, aborts the upload and frees the buffer: the key keeps what it had.
	void Abandon() noexcept;
	//! Drops the bytes not sealed, giving their budget back.
	void FreeBuffer() noexcept;

	const std::shared_ptr<State> state;
	const UploadOptions options;
	//! The store takes only parts of one size but the last (UploadTarget::EqualPartsOnly).
	const bool equal_parts;
	//! Held by Write and Close; SendEarly only tries it.
	std::mutex writing;
	//! The length of this object's parts (a store of equal parts), or their most (PartLimit): until the first is
	//! sealed, options.part_size within the budget's fair share (or what the first held when it was sealed early),
	//! then fixed.
	uint64_t part_size;
	std::unique_ptr<char[]> buffer;
	//! Set while the current part is written to disk instead of `buffer`.
	std::unique_ptr<SpillFile> spill;
	//! Bytes of the current part, in `buffer` or `spill`.
	uint64_t filled = 0;
	//! Bytes of the budget the buffer holds (at least `filled`).
	uint64_t charged = 0;
	uint64_t parts_sealed = 0;
	uint64_t written = 0;
	uint64_t bytes_spilled = 0;
	bool closed = false;
};

//! An upload closed in the background (ObjectUpload::CloseInBackground): outlives its ObjectUpload.
class UploadCompletion {
public:
	explicit UploadCompletion(std::shared_ptr<ObjectUpload::State> state);
	//! Waits until the object is complete (no failure) or its upload aborted (the failure). Once `cancelled` says so,
	//! the upload is aborted unless its completion was sent already, and the wait ends with UploadCancelled.
	std::exception_ptr Wait(const std::function<bool()> &cancelled = nullptr);
	//! The object must not be made: the upload is aborted unless its completion was sent already (then the object is
	//! complete). Does not wait for the parts in flight, whose end aborts what the abort could not reach yet.
	void Cancel() noexcept;
	bool Done();
	//! Waits until the object is done, as a reader of its path does: false when `give_up` said so first (the upload
	//! goes on).
	bool AwaitDone(const std::function<bool()> &give_up);

private:
	const std::shared_ptr<ObjectUpload::State> state;
};

} // namespace httpfs2
