#include "adapter/prefetch/read_ahead_wiring.hpp"

#include "adapter/stores/checked_range_reader.hpp"
#include "adapter/compat/duckdb_api.hpp"
#include "adapter/common/session_settings.hpp"
#include "adapter/handles/internal_opener.hpp"
#include "adapter/stores/cache_use.hpp"
#include "core/formats/parquet_knowledge.hpp"
#include "core/prefetch/prediction.hpp"
#include "duckdb/main/client_context.hpp"
#include "duckdb/main/client_context_state.hpp"
#include "duckdb/main/client_data.hpp"

#include <atomic>

namespace httpfs2 {

using duckdb::FileOpener;
using duckdb::idx_t;
using duckdb::optional_ptr;
using std::string;

ReadAheadWiring::ReadAheadWiring(ExtensionState &state_p, IoStats &stats_p, RemoteStore &store_p, InnerOpens &opens_p)
    : state(state_p), stats(stats_p), store(store_p), opens(opens_p) {
}

ReadAheadTuning ReadAheadWiring::TuningFor(const IoSettings &settings) const {
	return ReadAheadTuner::Tune(settings, state.cost_model.Snapshot(), state.io_pool.TargetSize(),
	                            state.read_ahead_budget.Limit(), state.cost_model.streams.Streams(),
	                            compat::HOST_READS);
}

ObjectReadAhead::Fetcher ReadAheadWiring::FetcherFor(const string &path, const ObjectVersion &version,
                                                     optional_ptr<FileOpener> opener,
                                                     std::shared_ptr<CheckedRangeReader> reader) {
	if (!reader) {
		reader = store.RangeReaderFor(path, version, opener, false);
	}
	if (reader) {
		return [reader](const ByteRange &range, char *destination) {
			reader->Read(range, destination);
		};
	}
	auto fetch_handle = opens.ForFetches(path, version, opener);
	auto declined = std::make_shared<std::atomic<bool>>(false);
	return [fetch_handle, declined](const ByteRange &range, char *destination) {
		if (*declined) {
			throw FetchDeclined(fetch_handle->path);
		}
		try {
			fetch_handle->file_system.Read(*fetch_handle, destination, static_cast<int64_t>(range.length),
			                               range.offset);
		} catch (std::exception &error) {
			if (!InternalOpener::IsRangesIgnored(error)) {
				throw;
			}
			*declined = true;
			throw FetchDeclined(fetch_handle->path);
		}
	};
}

std::shared_ptr<ObjectReadAhead> ReadAheadWiring::Create(const string &path, const ObjectVersion &version,
                                                         ObjectReadAhead::Fetcher fetch) {
	// Files of one folder share a schema and, within a scan, the columns read.
	std::unique_ptr<FormatKnowledge> parquet(
	    new ParquetKnowledge(version.size, patterns, path.substr(0, path.find_last_of('/') + 1)));
	return std::make_shared<ObjectReadAhead>(state.io_pool, state.read_ahead_budget, stats, state.cost_model,
	                                         version.size, std::move(fetch), std::move(parquet));
}

void ReadAheadWiring::Attach(ReadHandle &handle, optional_ptr<FileOpener> opener) {
	auto version = InnerOpens::VersionOf(handle);
	if (version.size == 0) {
		return;
	}
	handle.file_size = version.size;
	auto key = KeyOf(handle.path, version, opener);
	std::shared_ptr<ObjectReadAhead> object;
	try {
		// Made outside the registry's lock (on Azure opening a fetch handle is a request), unless another handle's
		// object will do.
		ObjectReadAhead::Fetcher fetch;
		if (!registry.Contains(key)) {
			fetch = FetcherFor(handle.path, version, opener, handle.range_reader);
		}
		object = registry.Attach(key, [&]() {
			return Create(handle.path, version,
			              fetch ? fetch : FetcherFor(handle.path, version, opener, handle.range_reader));
		});
	} catch (std::exception &) {
		// The file opened; only read-ahead's own handle did not. It is read without read-ahead.
		return;
	}
	bool footer_outlives_open = store.FooterOutlivesOpen(version);
	handle.read_ahead =
	    duckdb::make_uniq<ReadAheadAttachment>(registry, std::move(key), std::move(object), footer_outlives_open);
}

void ReadAheadWiring::AttachDeferred(ReadHandle &handle) {
	if (!handle.read_ahead_deferred) {
		return;
	}
	std::call_once(handle.read_ahead_attached, [&]() {
		auto context = handle.client_context.lock();
		if (context) {
			Attach(handle, duckdb::ClientData::Get(*context).file_opener.get());
		}
	});
}

ServeResult ReadAheadWiring::Serve(ReadHandle &handle, const ByteRange &read, char *buffer) {
	if (!handle.Interrupted() && !handle.ReadsDeclined()) {
		auto tuning = TuningFor(handle.settings);
		if (tuning.fetch_ahead) {
			handle.read_ahead->reader.Observe(read, tuning);
		} else {
			stats.Add(Counter::READ_AHEAD_DECLINED);
		}
	}
	auto served = handle.read_ahead->object->Serve(read, buffer);
	if (served.served_bytes == read.length) {
		stats.Add(Counter::READS_SERVED_WHOLE);
	} else if (served.served_bytes > 0) {
		stats.Add(Counter::READS_SERVED_PARTLY);
	}
	if (served.waited) {
		stats.Add(Counter::READS_WAITED);
	}
	return served;
}

void ReadAheadWiring::EndReading(ReadHandle &handle, const ServeResult &served) {
	handle.read_ahead->object->EndReading(served.reading);
}

void ReadAheadWiring::Learn(ReadHandle &handle, const ByteRange &read, const char *buffer) {
	auto &attachment = *handle.read_ahead;
	if (attachment.object->Inspect(read, buffer) && attachment.shared) {
		registry.RememberLayout(attachment.key, attachment.object->Layout());
	}
	RememberFooter(handle, read, buffer);
}

void ReadAheadWiring::RememberFooter(ReadHandle &handle, const ByteRange &read, const char *buffer) {
	// A Parquet footer read (from the end of the file, or the metadata before it when that did not fit), remembered
	// so that the next open of this version (the scan after the bind, the next query) reads it without a request.
	auto &attachment = *handle.read_ahead;
	if (!attachment.strong_etag || read.length > ReadAheadRegistry::MAX_FOOTER_BYTES ||
	    read.End() + ReadAheadRegistry::MAX_FOOTER_BYTES < handle.file_size) {
		return;
	}
	uint32_t metadata_length = 0;
	if (read.End() != handle.file_size) {
		registry.ExtendFooter(attachment.key, read, buffer);
	} else if (read.length >= ParquetFooter::TRAILER_SIZE &&
	           ParquetFooter::ParseTrailer(buffer + read.length - ParquetFooter::TRAILER_SIZE, handle.file_size,
	                                       metadata_length)) {
		registry.RememberFooter(attachment.key, read, buffer);
	}
}

namespace {
//! The files a query's listings pinned (their footers fetched ahead of the opens that follow): those the query did not
//! open are let go when it ends (a LIMIT, an error), not held into the connection's next queries.
class QueryPins : public duckdb::ClientContextState {
public:
	using ClientContextState::QueryEnd;
	void QueryEnd(duckdb::ClientContext &) override {
		std::vector<std::pair<ReadAheadRegistry *, VersionKey>> ended;
		{
			std::lock_guard<std::mutex> guard(lock);
			ended.swap(pins);
		}
		for (auto &pin : ended) {
			pin.first->Unpin(pin.second);
		}
	}

	//! `registry` belongs to a filesystem of the connection's database, which outlives the connection.
	void Add(ReadAheadRegistry &registry, const VersionKey &key) {
		std::lock_guard<std::mutex> guard(lock);
		pins.emplace_back(&registry, key);
	}

private:
	std::mutex lock;
	std::vector<std::pair<ReadAheadRegistry *, VersionKey>> pins;
};
} // namespace

void ReadAheadWiring::PrefetchFooter(const string &path, const ObjectVersion &version, const ReadAheadTuning &tuning,
                                     optional_ptr<FileOpener> opener) {
	auto tail = ParquetFooter::DuckDBTailReadSize(version.size);
	if (tail != 0) {
		PinAhead(path, version, ByteRange {version.size - tail, tail}, tuning, opener, true);
	}
}

void ReadAheadWiring::PrefetchContents(const string &path, const ObjectVersion &version, const ReadAheadTuning &tuning,
                                       optional_ptr<FileOpener> opener) {
	// Each of the files fetched so takes its share of read-ahead's ceiling at most: of a larger one, its start (the
	// read splits the rest as it comes, its streams already busy).
	auto share = tuning.limits.ceiling_bytes / PrefetchLimits::CONTENTS_AHEAD;
	auto length = std::min(version.size, share);
	// Cut into pieces as small as a split read's: cut as a window, or into the streams the controller allowed at the
	// query's start, 16 MiB files went in 3-4 pieces, and windows of such long transfers held the controller there
	// (seen at `bigbox`, 9 MiB/s a connection: in half the runs 84 GETs over 12 connections, 3.1-3.8 s; cut so, 216
	// over 32, 1.8 s).
	auto cut = tuning;
	cut.min_bytes = tuning.split_min_bytes;
	cut.max_fanout = tuning.split_max_fanout;
	if (length != 0) {
		PinAhead(path, version, ByteRange {0, length}, cut, opener, false);
	}
}

void ReadAheadWiring::PinAhead(const string &path, const ObjectVersion &version, const ByteRange &range,
                               const ReadAheadTuning &tuning, optional_ptr<FileOpener> opener, bool footer) {
	if (!version.Recognizable()) {
		return;
	}
	// The same key an open of this file at this version computes.
	auto key = KeyOf(path, version, opener);
	if (registry.Contains(key)) {
		return;
	}
	try {
		// The version is the query's (a listing's, a lookup's): the file's read-ahead looks in the block cache first.
		auto reader = store.RangeReaderFor(path, version, opener, false);
		ObjectReadAhead::Fetcher fetch;
		if (reader) {
			AttachBlockCache(state, stats, *reader, path, SettingsFor(opener, state).Effective(), opener, &version);
			// A footer is not widened to whole blocks past a probe's size (ReadNarrow), which would cost a probe and
			// the rest one after the other before the open can go on: its blocks are fetched whole after it, off the
			// open's path, so that a warm query reads the footer from the cache.
			auto &pool = state.io_pool;
			auto size = version.size;
			fetch = [reader, range, footer, size, &pool](const ByteRange &asked, char *destination) {
				if (!footer || asked.offset != range.offset || asked.length != range.length) {
					reader->Read(asked, destination);
				} else if (!reader->ReadNarrow(asked, destination)) {
					FillInBackground(pool, reader, range, size);
				}
			};
		} else {
			fetch = FetcherFor(path, version, opener, nullptr);
		}
		auto object = registry.Pin(key, [&]() { return Create(path, version, fetch); });
		if (object) {
			auto context = FileOpener::TryGetClientContext(opener);
			if (context) {
				context->registered_state->GetOrCreate<QueryPins>("httpfs2_query_pins")->Add(registry, key);
			}
			object->Prefetch({range}, tuning);
		}
	} catch (std::exception &) {
		// A handle that would not open: the file is read without it.
	}
}

void ReadAheadWiring::RememberTail(const string &path, const ObjectTail &tail, optional_ptr<FileOpener> opener) {
	registry.RememberFooter(KeyOf(path, tail.version, opener), tail.range, tail.bytes.data());
}

bool ReadAheadWiring::RemembersFooterOf(const string &path) {
	return registry.RemembersFooterOf(path);
}

void ReadAheadWiring::CloseAll() {
	registry.CloseAll();
}

} // namespace httpfs2
