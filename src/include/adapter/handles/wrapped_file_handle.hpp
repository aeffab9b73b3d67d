//===----------------------------------------------------------------------===//
//                         httpfs2
//
// adapter/handles/wrapped_file_handle.hpp
//
// The handles httpfs2 returns for remote files, two kinds (Kind), each in a header of its own:
//   ReadHandle    (read_handle.hpp) over the wrapped filesystem's own handle (kept untouched, with its read buffer),
//                 plus what makes its reads fast: the handles or range reader sub-reads run on, its share of
//                 read-ahead. Writes that do not go to the uploader pass through it too.
//   UploadHandle  (upload_handle.hpp) a file written by httpfs2's uploader: no handle of the wrapped filesystem at all.
//===----------------------------------------------------------------------===//

#pragma once

#include "adapter/compat/file_system_api.hpp"
#include "core/common/io_settings.hpp"

namespace httpfs2 {

class WrappedFileHandle : public compat::StandInFileHandle {
public:
	enum class Kind : uint8_t { READ, UPLOAD };
	const Kind kind;
	//! Settings in force when the file was opened, preset applied.
	const IoSettings settings;

protected:
	WrappedFileHandle(duckdb::FileSystem &wrapper, const std::string &path, duckdb::FileOpenFlags flags, Kind kind,
	                  const IoSettings &settings);
};

} // namespace httpfs2
