#include "core/upload/object_upload.hpp"

#include "core/requests/request_race.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <stdexcept>

namespace httpfs2 {

//! What the writer and the part tasks share; outlives the ObjectUpload while a task holds it.
struct ObjectUpload::State {
	State(std::shared_ptr<UploadTarget> target_p, IoPool &pool_p, std::shared_ptr<UploadBudget> budget_p,
	      const UploadOptions &options)
	    : target(std::move(target_p)), pool(pool_p), budget(std::move(budget_p)), race_threads(options.race_threads),
	      hedges(options.hedges), request_timeout_seconds(options.request_timeout_seconds), stats(options.stats) {
	}

	//! Sends `part` on the pool once the upload has begun; the first part begins it there, off the writer's thread.
	void Dispatch(std::shared_ptr<Part> part);
	void Begin(std::shared_ptr<Part> first);
	//! There will be no upload: the parts waiting for it settle unsent.
	void BeginFailed(std::exception_ptr error);
	void Send(Part &part);
	//! The part's name: its one request, or with hedging (race_threads and hedges) sent again past the policy's
	//! deadline, the first answer taken.
	std::string SendPart(const Part &part);
	//! Called once per part, from its destructor: sent, failed, or dropped with the pool. The last part of a closed
	//! object to settle has its completion sent on the pool.
	void Settle(Part &part);
	//! Every part is sealed: once none is in flight, the object is completed (or, after a failure, the upload aborted)
	//! on the pool; at once here when nothing is in flight and it failed.
	void Closing(const std::shared_ptr<State> &self);
	//! Sends the completion, or after a failure aborts the upload; then the object is done.
	void Finish() noexcept;
	//! Finish as a task on the pool (`self` is this state).
	void FinishOnPool(const std::shared_ptr<State> &self);
	//! Aborts the upload now, once, unless its completion was sent (or it has not begun: then its Finish will).
	void AbortUnlessCompleting() noexcept;
	//! The object's outcome is known: `error`, or none when it is complete.
	void Done(std::exception_ptr error);
	//! See UploadCompletion::Wait and AwaitDone.
	std::exception_ptr WaitDone(const std::function<bool()> &cancelled);
	bool AwaitDone(const std::function<bool()> &give_up);
	void Cancel() noexcept;
	//! Records the object's first failure: nothing of it is completed from then on.
	void Fail(std::exception_ptr error);
	std::exception_ptr Failure();
	//! Waits until no part is in flight, or at once once the upload was cancelled.
	void WaitForParts();

	const std::shared_ptr<UploadTarget> target;
	IoPool &pool;
	const std::shared_ptr<UploadBudget> budget;
	IoPool *const race_threads;
	HedgePolicy *const hedges;
	const double request_timeout_seconds;
	IoStats *const stats;

	std::mutex lock;
	std::condition_variable settled;
	//! BEGIN_FAILED: there is no upload to send parts to; a part sealed then settles at once, unsent.
	enum class Phase { IDLE, BEGINNING, BEGUN, BEGIN_FAILED } phase = Phase::IDLE;
	std::string upload_id;
	//! Parts sealed while the upload was beginning.
	std::vector<std::shared_ptr<Part>> waiting;
	//! Part n's name at n - 1, once sent.
	std::vector<std::string> names;
	uint64_t in_flight = 0;
	std::exception_ptr failure;
	bool cancelled = false;
	//! Every part is sealed (Closing).
	bool closing = false;
	//! Finish is on its way: sent to the pool, or running.
	bool finishing = false;
	//! The completion was sent: too late to abort.
	bool completing = false;
	bool aborted = false;
	//! The object is complete, or its upload aborted: `outcome` says which.
	bool done = false;
	std::exception_ptr outcome;
};

struct ObjectUpload::Part {
	Part(std::shared_ptr<State> state_p, uint64_t number_p, std::shared_ptr<char> bytes_p, uint64_t size_p,
	     uint64_t charge_p)
	    : state(std::move(state_p)), number(number_p), bytes(std::move(bytes_p)), size(size_p), charge(charge_p) {
	}
	~Part() {
		state->Settle(*this);
	}

	const std::shared_ptr<State> state;
	const uint64_t number;
	//! In memory, or mapped from a SpillFile.
	std::shared_ptr<char> bytes;
	const uint64_t size;
	const uint64_t charge;
	bool sent = false;
	std::string name;
	std::exception_ptr failure;
};

//! The task that begins the upload and sends its first part; dropped unrun (the pool stopped), it fails the begin,
//! so that no part waits for an upload that will never exist.
struct ObjectUpload::BeginTask {
	explicit BeginTask(std::shared_ptr<Part> first_p) : first(std::move(first_p)) {
	}
	~BeginTask() {
		if (first) {
			first->state->BeginFailed(
			    std::make_exception_ptr(std::runtime_error("the upload was not begun: the IO pool stopped")));
		}
	}
	std::shared_ptr<Part> first;
};

//! The task that completes a closed object; dropped unrun (the pool stopped), it aborts the upload.
struct FinishTask {
	explicit FinishTask(std::shared_ptr<ObjectUpload::State> state_p) : state(std::move(state_p)) {
	}
	~FinishTask() {
		if (state) {
			state->Fail(
			    std::make_exception_ptr(std::runtime_error("the upload was not completed: the IO pool stopped")));
			state->Finish();
		}
	}
	std::shared_ptr<ObjectUpload::State> state;
};

void ObjectUpload::State::Dispatch(std::shared_ptr<Part> part) {
	std::unique_lock<std::mutex> guard(lock);
	in_flight++;
	switch (phase) {
	case Phase::IDLE: {
		phase = Phase::BEGINNING;
		guard.unlock();
		auto task = std::make_shared<BeginTask>(std::move(part));
		pool.Submit([task] {
			auto first = std::move(task->first);
			first->state->Begin(std::move(first));
		});
		return;
	}
	case Phase::BEGINNING:
		waiting.push_back(std::move(part));
		return;
	case Phase::BEGUN:
		guard.unlock();
		pool.Submit([part] { part->state->Send(*part); });
		return;
	case Phase::BEGIN_FAILED:
		guard.unlock();
		part.reset();
		return;
	}
}

void ObjectUpload::State::BeginFailed(std::exception_ptr error) {
	std::vector<std::shared_ptr<Part>> parked;
	{
		std::lock_guard<std::mutex> guard(lock);
		if (!failure) {
			failure = std::move(error);
		}
		phase = Phase::BEGIN_FAILED;
		parked.swap(waiting);
	}
	// The parked parts settle here, after the lock is released.
}

void ObjectUpload::State::Begin(std::shared_ptr<Part> first) {
	std::vector<std::shared_ptr<Part>> parked;
	std::string id;
	try {
		id = target->Begin();
	} catch (...) {
		BeginFailed(std::current_exception());
		return;
	}
	{
		std::lock_guard<std::mutex> guard(lock);
		upload_id = id;
		phase = Phase::BEGUN;
		parked.swap(waiting);
	}
	for (auto &part : parked) {
		pool.Submit([part] { part->state->Send(*part); });
	}
	Send(*first);
}

void ObjectUpload::State::Send(Part &part) {
	{
		std::lock_guard<std::mutex> guard(lock);
		if (failure) { // another part failed: the upload will be aborted, sending more is wasted
			return;
		}
	}
	// One of the streams the link allows, for as long as the part is sent (its attempts included).
	struct Stream {
		explicit Stream(UploadBudget &budget_p) : budget(budget_p) {
			budget.AcquireStream();
		}
		~Stream() {
			budget.ReleaseStream();
		}
		UploadBudget &budget;
	} stream(*budget);
	try {
		auto start = std::chrono::steady_clock::now();
		StreamController::Transfer transfer(budget->streams);
		part.name = SendPart(part);
		transfer.Done(part.size);
		budget->PartSent(part.size, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
		part.sent = true;
	} catch (...) {
		part.failure = std::current_exception();
	}
}

std::string ObjectUpload::State::SendPart(const Part &part) {
	if (!race_threads || !hedges) {
		return target->SendPart(upload_id, part.number, part.bytes.get(), part.size);
	}
	// The senders own what they use: the one that loses sends on after the part settled, holding its bytes (beyond
	// the budget, which hedges' own budget bounds) until its request ends. The same bytes under the same number:
	// whichever request the store takes last, the part is the same.
	auto names = std::make_shared<std::array<std::string, 2>>();
	auto sent_to = target;
	auto id = upload_id;
	auto number = part.number;
	auto bytes = part.bytes;
	auto size = part.size;
	auto outcome = RequestRace::Run(*race_threads, *hedges, request_timeout_seconds,
	                                [names, sent_to, id, number, bytes, size](RequestRace::Entry &entry) {
		                                auto name = sent_to->SendPart(id, number, bytes.get(), size);
		                                // A PUT's answer is whole once it begins: the part's time is its latency.
		                                entry.FirstByte();
		                                if (entry.Claim()) {
			                                (*names)[entry.slot] = std::move(name);
		                                }
	                                });
	if (outcome.hedged && stats) {
		stats->Add(Counter::HEDGES_SENT);
		if (outcome.winner == 1) {
			stats->Add(Counter::HEDGES_WON);
		}
	}
	return (*names)[outcome.winner];
}

void ObjectUpload::State::Settle(Part &part) {
	// The budget first: once no part is in flight, all of their bytes are free.
	part.bytes.reset();
	budget->PartSettled(part.charge);
	bool finish = false;
	{
		std::lock_guard<std::mutex> guard(lock);
		if (part.sent) {
			names.resize(std::max<uint64_t>(names.size(), part.number));
			names[part.number - 1] = std::move(part.name);
		} else if (!failure) {
			failure = part.failure ? part.failure
			                       : std::make_exception_ptr(std::runtime_error("part " + std::to_string(part.number) +
			                                                                    " was not sent: the IO pool stopped"));
		}
		in_flight--;
		finish = closing && in_flight == 0 && !finishing;
		finishing = finishing || finish;
		settled.notify_all();
	}
	if (finish) {
		FinishOnPool(part.state);
	}
}

void ObjectUpload::State::FinishOnPool(const std::shared_ptr<State> &self) {
	auto task = std::make_shared<FinishTask>(self);
	pool.Submit([task] {
		auto state = std::move(task->state);
		state->Finish();
	});
}

void ObjectUpload::State::Closing(const std::shared_ptr<State> &self) {
	bool finish_here = false, finish_on_pool = false;
	{
		std::lock_guard<std::mutex> guard(lock);
		closing = true;
		if (in_flight == 0 && !finishing) {
			finishing = true;
			// Only an abort is left after a failure: no need of the pool (which may be the failure).
			finish_here = failure != nullptr;
			finish_on_pool = !finish_here;
		}
	}
	if (finish_here) {
		Finish();
	} else if (finish_on_pool) {
		FinishOnPool(self);
	}
}

void ObjectUpload::State::Finish() noexcept {
	std::exception_ptr error;
	std::vector<std::string> parts;
	std::string id;
	{
		std::lock_guard<std::mutex> guard(lock);
		error = failure;
		completing = !error;
		parts = names;
		id = upload_id;
	}
	if (!error) {
		try {
			target->Complete(id, parts);
		} catch (...) {
			if (!target->Completed(parts)) {
				error = std::current_exception();
			}
		}
	}
	if (error) {
		{
			std::lock_guard<std::mutex> guard(lock);
			completing = false;
		}
		AbortUnlessCompleting();
	}
	Done(error);
}

void ObjectUpload::State::AbortUnlessCompleting() noexcept {
	std::string id;
	{
		std::lock_guard<std::mutex> guard(lock);
		if (completing || aborted || phase != Phase::BEGUN) {
			return;
		}
		aborted = true;
		id = upload_id;
	}
	target->Abort(id);
}

void ObjectUpload::State::Done(std::exception_ptr error) {
	std::lock_guard<std::mutex> guard(lock);
	if (error && !failure) {
		failure = error;
	}
	outcome = std::move(error);
	done = true;
	settled.notify_all();
}

bool ObjectUpload::State::AwaitDone(const std::function<bool()> &give_up) {
	static constexpr auto CANCEL_CHECK = std::chrono::milliseconds(100);
	std::unique_lock<std::mutex> guard(lock);
	while (!settled.wait_for(guard, CANCEL_CHECK, [&] { return done; })) {
		if (give_up && give_up()) {
			return false;
		}
	}
	return true;
}

std::exception_ptr ObjectUpload::State::WaitDone(const std::function<bool()> &is_cancelled) {
	if (!AwaitDone(is_cancelled)) {
		Cancel();
		return std::make_exception_ptr(UploadCancelled());
	}
	std::lock_guard<std::mutex> guard(lock);
	return outcome;
}

void ObjectUpload::State::Cancel() noexcept {
	{
		std::lock_guard<std::mutex> guard(lock);
		cancelled = true;
		if (!failure) {
			failure = std::make_exception_ptr(UploadCancelled());
		}
	}
	AbortUnlessCompleting();
}

void ObjectUpload::State::Fail(std::exception_ptr error) {
	std::lock_guard<std::mutex> guard(lock);
	if (!failure) {
		failure = std::move(error);
	}
}

std::exception_ptr ObjectUpload::State::Failure() {
	std::lock_guard<std::mutex> guard(lock);
	return failure;
}

void ObjectUpload::State::WaitForParts() {
	std::unique_lock<std::mutex> guard(lock);
	settled.wait(guard, [&] { return in_flight == 0 || cancelled; });
}

ObjectUpload::ObjectUpload(std::shared_ptr<UploadTarget> target, IoPool &pool, std::shared_ptr<UploadBudget> budget,
                           UploadOptions options_p)
    : state(std::make_shared<State>(std::move(target), pool, std::move(budget), options_p)), options(options_p),
      equal_parts(state->target->EqualPartsOnly()), part_size(options_p.part_size) {
	if (options.part_size == 0) {
		throw std::invalid_argument("the part size of an upload must be at least 1 byte");
	}
	state->budget->UploadOpened(*this);
}

ObjectUpload::~ObjectUpload() {
	// First, so that no other close sends from this object while it goes.
	state->budget->UploadClosed(*this);
	if (!closed) {
		Abandon();
	}
}

void ObjectUpload::FreeBuffer() noexcept {
	spill.reset();
	if (buffer) {
		buffer.reset();
		state->budget->Release(charged);
		charged = 0;
	}
}

void ObjectUpload::Abandon() noexcept {
	state->WaitForParts();
	state->AbortUnlessCompleting();
	FreeBuffer();
}

void ObjectUpload::FollowFairShare() {
	auto share = std::max(state->budget->FairShare(), options.min_part_size);
	part_size = std::max(std::min(options.part_size, share), std::max<uint64_t>(filled, 1));
}

uint64_t ObjectUpload::PartLimit() const {
	if (equal_parts) {
		return part_size;
	}
	// An S3 object has at most 10,000 parts: past 1,000 parts' worth of the smallest, parts grow with the object.
	static constexpr uint64_t PARTS_BEFORE_GROWING = 1000;
	// Until a part was measured, the smallest: on a slow stream the first parts must not be the slowest.
	auto rate = state->budget->SendRate();
	uint64_t follow = rate > 0 ? static_cast<uint64_t>(rate * PART_SECONDS) : 0;
	uint64_t limit = std::min(part_size, std::max(follow, options.min_part_size));
	limit = std::max(limit, std::min(options.part_size, written / PARTS_BEFORE_GROWING));
	return std::max<uint64_t>(limit, 1);
}

std::shared_ptr<char> ObjectUpload::TakeBytes() {
	if (spill) {
		auto mapped = spill->Map();
		spill.reset();
		bytes_spilled += filled;
		return mapped;
	}
	return std::shared_ptr<char>(buffer.release(), std::default_delete<char[]>());
}

void ObjectUpload::Seal() {
	auto bytes = TakeBytes();
	state->budget->PartSealed();
	auto part = std::make_shared<Part>(state, ++parts_sealed, std::move(bytes), filled, charged);
	filled = 0;
	charged = 0;
	state->Dispatch(std::move(part));
}

void ObjectUpload::SealRest() {
	// The bytes left at a close are all that is still to send of the object: as up to MAX_PIECES parts side by side,
	// each at least the smallest a store takes but the last (which may be smaller), they take a fraction of one
	// part's time on the link.
	static constexpr uint64_t MAX_PIECES = 4;
	uint64_t smallest = std::max<uint64_t>(options.min_part_size, 1);
	if (equal_parts || spill || filled <= smallest) {
		Seal();
		return;
	}
	uint64_t pieces = std::min((filled + smallest - 1) / smallest, MAX_PIECES);
	uint64_t piece_size = std::max(smallest, (filled + pieces - 1) / pieces);
	// One buffer, many parts: its bytes go back to the budget when the last of them settles.
	auto budget = state->budget;
	uint64_t charge = charged;
	std::shared_ptr<char> bytes(buffer.release(), [budget, charge](char *freed) {
		delete[] freed;
		budget->Release(charge);
	});
	for (uint64_t offset = 0; offset < filled; offset += piece_size) {
		uint64_t size = std::min(piece_size, filled - offset);
		state->budget->PartSealed();
		auto piece = std::shared_ptr<char>(bytes, bytes.get() + offset);
		state->Dispatch(std::make_shared<Part>(state, ++parts_sealed, std::move(piece), size, 0));
	}
	filled = 0;
	charged = 0;
}

bool ObjectUpload::SealAsFirstPart() {
	if (parts_sealed > 0 || filled < options.min_part_size) {
		return false;
	}
	part_size = filled;
	Seal();
	return true;
}

bool ObjectUpload::Charge(uint64_t needed, uint64_t limit) {
	auto &budget = *state->budget;
	uint64_t step = std::max<uint64_t>(options.charge_step, 1);
	uint64_t more = std::min((needed - charged + step - 1) / step * step, std::max(limit, needed) - charged);
	if (budget.Reserve(more)) {
		charged += more;
		return true;
	}
	// Nothing is in flight: buffers being filled hold the budget, and none comes back until its writer sends it.
	if (SealAsFirstPart()) {
		return false;
	}
	// Else this part goes on in a file on local disk and the budget gets its bytes back.
	spill.reset(new SpillFile(options.spill_directory));
	spill->Append(buffer.get(), filled);
	buffer.reset();
	budget.Release(charged);
	charged = 0;
	return false;
}

void ObjectUpload::SendEarly() {
	std::unique_lock<std::mutex> guard(writing, std::try_to_lock);
	if (!guard || closed || !buffer || state->Failure()) {
		return;
	}
	if (SealAsFirstPart()) {
		return;
	}
	// A store that takes parts of any size takes what the file holds, once it is a part the store takes.
	if (filled >= PartLimit() || (!equal_parts && filled >= options.min_part_size)) {
		Seal();
	}
}

void ObjectUpload::Write(const char *data, uint64_t size) {
	std::lock_guard<std::mutex> guard(writing);
	if (closed) {
		throw std::logic_error("write to an upload that was closed");
	}
	if (auto failure = state->Failure()) {
		std::rethrow_exception(failure);
	}
	try {
		while (size > 0) {
			if (parts_sealed == 0) {
				FollowFairShare();
			}
			uint64_t limit = std::min(PartLimit(), options.part_size);
			// A full part is sealed only when more bytes come: an object of exactly one part is one PUT at Close.
			if ((buffer || spill) && filled >= limit) {
				Seal();
			}
			if (!buffer && !spill) {
				// Untouched pages cost no memory: the budget is charged as the buffer fills. The largest part size,
				// as this object's may grow while no part is sealed.
				buffer.reset(new char[options.part_size]);
			}
			uint64_t n = std::min(size, limit - filled);
			if (spill) {
				spill->Append(data, n);
			} else if (filled + n > charged && !Charge(filled + n, limit)) {
				continue; // the buffer was sealed early or moved to disk
			} else {
				std::memcpy(buffer.get() + filled, data, n);
			}
			filled += n;
			written += n;
			data += n;
			size -= n;
		}
	} catch (...) {
		// Bytes the object lacks: it must never be completed.
		state->Fail(std::current_exception());
		throw;
	}
}

void ObjectUpload::SendWhole(bool background) {
	// Counted as a part in flight while it is sent, so that waiting writers know its bytes come back.
	struct Whole {
		std::shared_ptr<State> state;
		std::shared_ptr<char> bytes;
		uint64_t size;
		uint64_t charge;
		bool settled = false;
		void Send() {
			std::exception_ptr error;
			try {
				state->target->PutWhole(bytes.get(), size);
			} catch (...) {
				error = std::current_exception();
			}
			Settle(error);
		}
		void Settle(std::exception_ptr error) {
			settled = true;
			bytes.reset();
			state->budget->PartSettled(charge);
			state->Done(std::move(error));
		}
		~Whole() {
			if (!settled) { // dropped with the pool
				Settle(std::make_exception_ptr(std::runtime_error("the object was not sent: the IO pool stopped")));
			}
		}
	};
	auto whole = std::make_shared<Whole>();
	whole->state = state;
	whole->charge = charged;
	whole->size = filled;
	charged = 0;
	whole->bytes = TakeBytes();
	filled = 0;
	state->budget->PartSealed();
	{
		std::lock_guard<std::mutex> guard(state->lock);
		state->closing = true;
		state->finishing = true;
	}
	if (background) {
		state->pool.Submit([whole] { whole->Send(); });
	} else {
		whole->Send();
	}
}

std::shared_ptr<UploadCompletion> ObjectUpload::StartClose(bool background) {
	std::lock_guard<std::mutex> guard(writing);
	if (closed) {
		throw std::logic_error("an upload is closed once");
	}
	closed = true;
	state->budget->SendOthersEarly(*this);
	auto completion = std::make_shared<UploadCompletion>(state);
	if (state->Failure()) {
		FreeBuffer();
	} else if (parts_sealed == 0) {
		SendWhole(background);
		return completion;
	} else if (filled > 0) {
		SealRest();
	}
	state->Closing(state);
	return completion;
}

void ObjectUpload::Close() {
	auto completion = StartClose(false);
	if (auto failure = completion->Wait(options.cancelled)) {
		std::rethrow_exception(failure);
	}
}

std::shared_ptr<UploadCompletion> ObjectUpload::CloseInBackground() {
	return StartClose(true);
}

UploadCompletion::UploadCompletion(std::shared_ptr<ObjectUpload::State> state_p) : state(std::move(state_p)) {
}

std::exception_ptr UploadCompletion::Wait(const std::function<bool()> &cancelled) {
	return state->WaitDone(cancelled);
}

void UploadCompletion::Cancel() noexcept {
	state->Cancel();
}

bool UploadCompletion::AwaitDone(const std::function<bool()> &give_up) {
	return state->AwaitDone(give_up);
}

bool UploadCompletion::Done() {
	std::lock_guard<std::mutex> guard(state->lock);
	return state->done;
}

} // namespace httpfs2
