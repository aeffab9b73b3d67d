//===----------------------------------------------------------------------===//
//                         httpfs2
//
// core/requests/credential_replacements.hpp
//
// What a database learnt of the credentials stores refused: "these were refused and replaced by those". A query's
// transaction sees a secret as it was when the query began, so every reader, tail, listing or upload it makes after a
// rotation would start from the refused credentials and pay one refused round trip before looking the secret up
// again; with this record they start from the replacement. Refused credentials are known by a fingerprint only (a
// hash the caller computes of the keys and of where they were used: the secret, its endpoint and region), never in
// clear; a replacement's keys are kept, as they sign.
//===----------------------------------------------------------------------===//

#pragma once

#include "core/common/thread_annotations.hpp"

#include <atomic>
#include <cstdint>
#include <string>
#include <unordered_map>

namespace httpfs2 {

//! The keys a request is signed with.
struct SigningKeys {
	std::string key_id;
	std::string secret;
	std::string session_token;
};

class CredentialReplacements {
public:
	//! Records kept at most: each is one rotation of one secret; the oldest goes first.
	static constexpr size_t CAPACITY = 64;

	explicit CredentialReplacements(size_t capacity = CAPACITY);

	//! The credentials of fingerprint `refused` were refused and a fresh lookup gave `replacement` (fingerprint
	//! `replacement_fingerprint`): the newest of the chain, so whatever replaced them before is forgotten.
	void Record(const std::string &refused, const std::string &replacement_fingerprint, SigningKeys replacement);
	//! The newest replacement of the credentials of `fingerprint` (through replacements refused in turn) in
	//! `replacement`; false when they were never refused.
	bool Follow(const std::string &fingerprint, SigningKeys &replacement) const;
	//! How many records were made: a user of Follow looks again only when this moved.
	uint64_t Changes() const {
		return changes.load(std::memory_order_acquire);
	}
	size_t Size() const;

private:
	struct Replacement {
		std::string fingerprint;
		SigningKeys keys;
		//! When it was recorded (Changes), for eviction.
		uint64_t recorded;
	};

	const size_t capacity;
	mutable Mutex lock;
	//! By the fingerprint of the refused credentials.
	std::unordered_map<std::string, Replacement> replacements HTTPFS2_GUARDED_BY(lock);
	std::atomic<uint64_t> changes {0};
};

} // namespace httpfs2
