#include "core/upload/object_upload.hpp"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <stdexcept>

namespace httpfs2 {

//! What the writer and the part tasks share; outlives the ObjectUpload while a task holds it.
struct ObjectUpload::State {
	State(std::shared_ptr<UploadTarget> target_p, IoPool &pool_p, std::shared_ptr<UploadBudget> budget_p,
	      uint64_t part_attempts_p)
	    : target(std::move(target_p)), pool(pool_p), budget(std::move(budget_p)), part_attempts(part_attempts_p) {
	}

	//! Sends `part` on the pool once the upload has begun; the first part begins it there, off the writer's thread.
	void Dispatch(std::shared_ptr<Part> part);
	void Begin(std::shared_ptr<Part> first);
	//! There will be no upload: the parts waiting for it settle unsent.
	void BeginFailed(std::exception_ptr error);
	void Send(Part &part);
	//! Called once per part, from its destructor: sent, failed, or dropped with the pool.
	void Settle(Part &part);
	//! Records the object's first failure: nothing of it is completed from then on.
	void Fail(std::exception_ptr error);
	std::exception_ptr Failure();
	//! Waits until no part is in flight, or until `cancelled` says so (then, and at every later wait, at once); the
	//! first failure, if any.
	std::exception_ptr WaitForParts(const std::function<bool()> &cancelled = nullptr);
	void Abort() noexcept;

	const std::shared_ptr<UploadTarget> target;
	IoPool &pool;
	const std::shared_ptr<UploadBudget> budget;
	const uint64_t part_attempts;

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
	for (uint64_t attempt = 1; attempt <= part_attempts; attempt++) {
		try {
			part.name = target->SendPart(upload_id, part.number, part.bytes.get(), part.size);
			part.sent = true;
			return;
		} catch (...) {
			part.failure = std::current_exception();
		}
	}
}

void ObjectUpload::State::Settle(Part &part) {
	// The budget first: once no part is in flight, all of their bytes are free.
	part.bytes.reset();
	budget->PartSettled(part.charge);
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
	settled.notify_all();
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

std::exception_ptr ObjectUpload::State::WaitForParts(const std::function<bool()> &is_cancelled) {
	static constexpr auto CANCEL_CHECK = std::chrono::milliseconds(100);
	std::unique_lock<std::mutex> guard(lock);
	while (!settled.wait_for(guard, CANCEL_CHECK, [&] { return in_flight == 0 || cancelled; })) {
		if (is_cancelled && is_cancelled()) {
			cancelled = true;
			if (!failure) {
				failure = std::make_exception_ptr(UploadCancelled());
			}
		}
	}
	return failure;
}

void ObjectUpload::State::Abort() noexcept {
	std::string id;
	{
		std::lock_guard<std::mutex> guard(lock);
		if (phase != Phase::BEGUN) {
			return;
		}
		id = upload_id;
	}
	target->Abort(id);
}

ObjectUpload::ObjectUpload(std::shared_ptr<UploadTarget> target, IoPool &pool, std::shared_ptr<UploadBudget> budget,
                           UploadOptions options_p)
    : state(std::make_shared<State>(std::move(target), pool, std::move(budget),
                                    std::max<uint64_t>(options_p.part_attempts, 1))),
      options(options_p), part_size(options_p.part_size) {
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

void ObjectUpload::Abandon() noexcept {
	state->WaitForParts();
	state->Abort();
	spill.reset();
	if (buffer) {
		buffer.reset();
		state->budget->Release(charged);
		charged = 0;
	}
}

void ObjectUpload::FollowFairShare() {
	auto share = std::max(state->budget->FairShare(), options.min_part_size);
	part_size = std::max(std::min(options.part_size, share), std::max<uint64_t>(filled, 1));
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

bool ObjectUpload::SealAsFirstPart() {
	if (parts_sealed > 0 || filled < options.min_part_size) {
		return false;
	}
	part_size = filled;
	Seal();
	return true;
}

bool ObjectUpload::Charge(uint64_t needed) {
	auto &budget = *state->budget;
	uint64_t step = std::max<uint64_t>(options.charge_step, 1);
	uint64_t more = std::min((needed - charged + step - 1) / step * step, part_size - charged);
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
	if (!SealAsFirstPart() && filled == part_size) {
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
			// A full part is sealed only when more bytes come: an object of exactly one part is one PUT at Close.
			if ((buffer || spill) && filled == part_size) {
				Seal();
			}
			if (!buffer && !spill) {
				// Untouched pages cost no memory: the budget is charged as the buffer fills. The largest part size,
				// as this object's may grow while no part is sealed.
				buffer.reset(new char[options.part_size]);
			}
			uint64_t n = std::min(size, part_size - filled);
			if (spill) {
				spill->Append(data, n);
			} else if (filled + n > charged && !Charge(filled + n)) {
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

void ObjectUpload::Close() {
	std::lock_guard<std::mutex> guard(writing);
	if (closed) {
		throw std::logic_error("an upload is closed once");
	}
	closed = true;
	state->budget->SendOthersEarly(*this);
	if (auto failure = state->Failure()) {
		Abandon();
		std::rethrow_exception(failure);
	}
	if (parts_sealed == 0) {
		// Counted as a part in flight while it is sent, so that waiting writers know its bytes come back.
		uint64_t charge = charged;
		charged = 0;
		auto whole = TakeBytes();
		state->budget->PartSealed();
		try {
			state->target->PutWhole(whole.get(), filled);
		} catch (...) {
			whole.reset();
			state->budget->PartSettled(charge);
			throw;
		}
		whole.reset();
		state->budget->PartSettled(charge);
		return;
	}
	if (filled > 0) {
		Seal();
	}
	auto failure = state->WaitForParts(options.cancelled);
	if (failure) {
		Abandon();
		std::rethrow_exception(failure);
	}
	try {
		state->target->Complete(state->upload_id, state->names);
	} catch (...) {
		if (state->target->Completed(state->names)) {
			return;
		}
		Abandon();
		throw;
	}
}

} // namespace httpfs2
