//===----------------------------------------------------------------------===//
//                         httpfs2
//
// core/formats/file_layout.hpp
//
// Where one file's parts lie, as its format's reader learnt it (a Parquet file's row groups and column chunks):
// opaque to read-ahead and its registry, which hold it, hand it on to later opens of the same version, and give it
// back to the format's knowledge (FormatKnowledge) that reads it.
//===----------------------------------------------------------------------===//

#pragma once

namespace httpfs2 {

struct FileLayout {
	virtual ~FileLayout() = default;
};

} // namespace httpfs2
