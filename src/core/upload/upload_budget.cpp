#include "core/upload/upload_budget.hpp"

#include "core/upload/object_upload.hpp"

#include <algorithm>

namespace httpfs2 {

constexpr uint64_t UploadBudget::START_STREAMS;

UploadBudget::UploadBudget(uint64_t limit_bytes) : bytes(limit_bytes) {
}

void UploadBudget::SetLimit(uint64_t limit_bytes) {
	std::lock_guard<std::mutex> guard(lock);
	bytes.SetLimit(limit_bytes);
	freed.notify_all();
}

uint64_t UploadBudget::Limit() const {
	return bytes.Limit();
}

bool UploadBudget::Reserve(uint64_t wanted) {
	std::unique_lock<std::mutex> guard(lock);
	while (!bytes.TryReserve(wanted)) {
		if (wanted > bytes.Limit() || parts_in_flight == 0) {
			return false;
		}
		freed.wait(guard);
	}
	return true;
}

void UploadBudget::Release(uint64_t released) {
	std::lock_guard<std::mutex> guard(lock);
	bytes.Release(released);
	freed.notify_all();
}

void UploadBudget::PartSealed() {
	std::lock_guard<std::mutex> guard(lock);
	parts_in_flight++;
	parts_in_flight_peak = std::max(parts_in_flight_peak, parts_in_flight);
}

void UploadBudget::PartSettled(uint64_t released) {
	std::lock_guard<std::mutex> guard(lock);
	bytes.Release(released);
	parts_in_flight--;
	freed.notify_all();
}

void UploadBudget::WaitUntilNoPartInFlight() {
	std::unique_lock<std::mutex> guard(lock);
	freed.wait(guard, [&] { return parts_in_flight == 0; });
}

void UploadBudget::UploadOpened(ObjectUpload &upload) {
	std::lock_guard<std::mutex> guard(uploads_lock);
	uploads.insert(&upload);
}

void UploadBudget::UploadClosed(ObjectUpload &upload) {
	std::lock_guard<std::mutex> guard(uploads_lock);
	uploads.erase(&upload);
}

uint64_t UploadBudget::FairShare() const {
	std::lock_guard<std::mutex> guard(uploads_lock);
	return bytes.Limit() / std::max<size_t>(uploads.size(), 1);
}

void UploadBudget::SendOthersEarly(ObjectUpload &closing) {
	std::lock_guard<std::mutex> guard(uploads_lock);
	for (auto upload : uploads) {
		if (upload != &closing) {
			upload->SendEarly();
		}
	}
}

void UploadBudget::PartSent(uint64_t sent, double seconds) {
	static constexpr double WEIGHT = 0.3; // of the newest part: a few parts tell the link, one does not
	if (sent == 0 || seconds <= 0) {
		return;
	}
	double rate = static_cast<double>(sent) / seconds;
	std::lock_guard<std::mutex> guard(lock);
	send_rate = send_rate == 0 ? rate : send_rate + WEIGHT * (rate - send_rate);
}

void UploadBudget::AcquireStream() {
	std::unique_lock<std::mutex> guard(lock);
	freed.wait(guard, [&] { return sending < StreamsAllowed(); });
	sending++;
}

void UploadBudget::ReleaseStream() {
	std::lock_guard<std::mutex> guard(lock);
	sending--;
	freed.notify_all();
}

uint64_t UploadBudget::StreamsAllowed() const {
	return std::min(streams.Streams(), StreamController::MAX_STREAMS);
}

double UploadBudget::SendRate() const {
	std::lock_guard<std::mutex> guard(lock);
	return send_rate;
}

uint64_t UploadBudget::InUse() const {
	return bytes.InUse();
}

uint64_t UploadBudget::Peak() const {
	return bytes.Peak();
}

void UploadBudget::ResetPeak() {
	bytes.ResetPeak();
	std::lock_guard<std::mutex> guard(lock);
	parts_in_flight_peak = parts_in_flight;
}

uint64_t UploadBudget::PartsInFlightPeak() const {
	std::lock_guard<std::mutex> guard(lock);
	return parts_in_flight_peak;
}

uint64_t UploadBudget::PartsInFlight() const {
	std::lock_guard<std::mutex> guard(lock);
	return parts_in_flight;
}

} // namespace httpfs2
