#include "adapter/handles/wrapped_file_handle.hpp"

namespace httpfs2 {

WrappedFileHandle::WrappedFileHandle(duckdb::FileSystem &wrapper, const std::string &path, duckdb::FileOpenFlags flags,
                                     Kind kind_p, const IoSettings &settings_p)
    : StandInFileHandle(wrapper, path, flags), kind(kind_p), settings(settings_p) {
}

} // namespace httpfs2
