#include "core/requests/credential_replacements.hpp"

#include <algorithm>

namespace httpfs2 {

constexpr size_t CredentialReplacements::CAPACITY;

CredentialReplacements::CredentialReplacements(size_t capacity_p) : capacity(std::max<size_t>(capacity_p, 1)) {
}

void CredentialReplacements::Record(const std::string &refused, const std::string &replacement_fingerprint,
                                    SigningKeys replacement) {
	if (refused == replacement_fingerprint) {
		return;
	}
	MutexLock guard(lock);
	// The replacement is what the secret holds now: a record that it was refused before (a secret the user set back
	// to older keys) is out of date, and keeping it would close a cycle.
	replacements.erase(replacement_fingerprint);
	auto recorded = changes.load(std::memory_order_relaxed) + 1;
	replacements[refused] = Replacement {replacement_fingerprint, std::move(replacement), recorded};
	if (replacements.size() > capacity) {
		auto oldest = std::min_element(replacements.begin(), replacements.end(), [](const auto &a, const auto &b) {
			return a.second.recorded < b.second.recorded;
		});
		replacements.erase(oldest);
	}
	changes.store(recorded, std::memory_order_release);
}

bool CredentialReplacements::Follow(const std::string &fingerprint, SigningKeys &replacement) const {
	MutexLock guard(lock);
	auto found = replacements.find(fingerprint);
	if (found == replacements.end()) {
		return false;
	}
	// Record keeps the chains free of cycles; the bound is a guard all the same.
	for (size_t step = 0; step < replacements.size(); step++) {
		auto next = replacements.find(found->second.fingerprint);
		if (next == replacements.end()) {
			break;
		}
		found = next;
	}
	replacement = found->second.keys;
	return true;
}

size_t CredentialReplacements::Size() const {
	MutexLock guard(lock);
	return replacements.size();
}

} // namespace httpfs2
