//===----------------------------------------------------------------------===//
//                         httpfs2
//
// adapter/read/parallel_reader.hpp
//
// One split read on a ReadHandle: the pieces SplitPolicy plans, run on the IO pool, accounted for.
//===----------------------------------------------------------------------===//

#pragma once

#include "adapter/common/extension_state.hpp"
#include "adapter/handles/read_handle.hpp"
#include "core/split/range_planner.hpp"

namespace httpfs2 {

class ParallelReader {
public:
	ParallelReader(ExtensionState &state, IoStats &stats);

	//! Reads [location, location + nr_bytes) of `handle` into `buffer`, split across the IO pool. Returns false,
	//! having read nothing, when the plan gives a single piece (the caller then reads through). Throws an
	//! IOException naming the file and range when any sub-read fails; `buffer` is then not written any more.
	bool TryRead(ReadHandle &handle, void *buffer, duckdb::idx_t nr_bytes, duckdb::idx_t location);

private:
	void ReadPiece(ReadHandle &handle, const ByteRange &piece, char *destination, duckdb::idx_t read_bytes,
	               duckdb::idx_t read_location);

	ExtensionState &state;
	IoStats &stats;
};

} // namespace httpfs2
