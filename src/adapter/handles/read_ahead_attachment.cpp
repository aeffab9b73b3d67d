#include "adapter/handles/read_ahead_attachment.hpp"

namespace httpfs2 {

ReadAheadAttachment::ReadAheadAttachment(ReadAheadRegistry &registry_p, VersionKey key_p,
                                         std::shared_ptr<ObjectReadAhead> object_p, bool footer_outlives_open)
    : registry(registry_p), key(std::move(key_p)), object(std::move(object_p)), shared(key.Shared()),
      strong_etag(footer_outlives_open), reader(object) {
}

ReadAheadAttachment::~ReadAheadAttachment() {
	registry.Detach(key);
}

} // namespace httpfs2
