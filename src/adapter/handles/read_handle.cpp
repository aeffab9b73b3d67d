#include "adapter/handles/read_handle.hpp"

#include "adapter/compat/duckdb_api.hpp"
#include "adapter/handles/read_ahead_attachment.hpp"
#include "adapter/stores/checked_range_reader.hpp"
#include "core/common/cost_model.hpp"
#include "core/split/range_planner.hpp"

#include <chrono>

namespace httpfs2 {

using duckdb::FileHandle;
using duckdb::idx_t;

ReadHandle::ReadHandle(duckdb::FileSystem &wrapper, duckdb::unique_ptr<FileHandle> inner_p, const IoSettings &settings)
    : WrappedFileHandle(wrapper, inner_p->path, inner_p->flags, Kind::READ, settings), inner(std::move(inner_p)),
      version_known(false) {
	logger = Inner().logger;
}

ReadHandle::ReadHandle(duckdb::FileSystem &wrapper, const std::string &path, duckdb::FileOpenFlags flags,
                       LazyHandle::Opener open_inner, const ObjectVersion &version_p, const IoSettings &settings)
    : WrappedFileHandle(wrapper, path, flags, Kind::READ, settings), inner(std::move(open_inner)), version_known(true),
      version(version_p) {
}

ReadHandle::~ReadHandle() = default;

void ReadHandle::Close() {
	read_ahead.reset();
	window.Release();
	if (sub_read_handles) {
		sub_read_handles->Close();
	}
	inner.Close();
}

idx_t ReadHandle::GetProgress() {
	// Nothing was read through a handle not opened yet: asking would cost a HEAD on Azure.
	return inner.IsOpen() ? Inner().GetProgress() : 0;
}

duckdb::FileCompressionType ReadHandle::GetFileCompressionType() {
	return inner.IsOpen() ? Inner().GetFileCompressionType() : duckdb::FileCompressionType::UNCOMPRESSED;
}

bool ReadHandle::Seekable() {
	return inner.IsOpen() ? Inner().CanSeek() : file_system.CanSeek();
}

bool ReadHandle::Interrupted() const {
	auto context = client_context.lock();
	return context && compat::Interrupted(*context);
}

bool ReadHandle::ReadsDeclined() const {
	return whole_at_open || ranges_ignored_by_sub_reads || ranges_ignored_by_wrapped ||
	       (range_reader && range_reader->Fallback() != ReadFallback::NONE);
}

bool ReadHandle::ReadsThroughRangeReader() const {
	return range_reader && !ReadsDeclined();
}

bool ReadHandle::ReadsWholeObject() const {
	return whole_object && (whole_at_open || ranges_ignored_by_wrapped ||
	                        (range_reader && range_reader->Fallback() == ReadFallback::WHOLE_OBJECT));
}

void ReadHandle::ReadChecked(const ByteRange &range, char *destination, IoStats &stats, CostModel &model) {
	auto &reader = *range_reader;
	stats.Add(Counter::READS_CHECKED);
	if (!Buffered() || reader.CacheOn()) {
		stats.RecordCheckedGet();
		auto start = std::chrono::steady_clock::now();
		reader.Read(range, destination);
		if (!reader.CacheOn()) { // a cache hit is no transfer
			model.ObserveSubRead(range.length,
			                     std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
		}
		return;
	}
	window.Read(range, file_size, destination, [&reader, &stats](const ByteRange &span, char *bytes) {
		stats.RecordCheckedGet();
		reader.ReadFromStore(span, bytes);
	});
}

bool ReadHandle::ShouldSplit(idx_t nr_bytes, idx_t location) const {
	// Reads past the end are left to the wrapped filesystem, so they fail exactly as they would without httpfs2.
	return sub_read_handles && !ReadsDeclined() && location <= file_size && nr_bytes <= file_size - location &&
	       RangePlanner(settings.chunk_size_bytes, settings.min_bytes).ShouldSplit(nr_bytes);
}

} // namespace httpfs2
