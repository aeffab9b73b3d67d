//===----------------------------------------------------------------------===//
//                         httpfs2
//
// adapter/handles/read_ahead_attachment.hpp
//
// What a ReadHandle holds of the read-ahead of the object version it reads (adapter/prefetch/read_ahead_wiring sets
// it up).
//===----------------------------------------------------------------------===//

#pragma once

#include "core/read_ahead/read_ahead_registry.hpp"

#include <memory>

namespace httpfs2 {

//! A handle's share in the read-ahead of the object version it reads; detaches when the handle closes, and the last
//! handle's detach frees the object's read-ahead.
class ReadAheadAttachment {
public:
	ReadAheadAttachment(ReadAheadRegistry &registry, VersionKey key, std::shared_ptr<ObjectReadAhead> object,
	                    bool footer_outlives_open);
	~ReadAheadAttachment();
	ReadAheadAttachment(const ReadAheadAttachment &) = delete;
	ReadAheadAttachment &operator=(const ReadAheadAttachment &) = delete;

	ReadAheadRegistry &registry;
	//! Read-ahead is shared only by handles on the same version.
	const VersionKey key;
	const std::shared_ptr<ObjectReadAhead> object;
	//! Other opens may find what was learnt of the version (VersionKey::Shared): only then is its layout remembered.
	const bool shared;
	//! The version's ETag changes with its bytes (RemoteStore::FooterOutlivesOpen): only then are its footer's bytes
	//! remembered past this open (a size and a Last-Modified of 1-second resolution do not tell two versions apart,
	//! nor does an ETag made of them).
	const bool strong_etag;
	//! This handle's own predictions over the object's shared read-ahead.
	ReadAheadReader reader;
};

} // namespace httpfs2
