#include "adapter/common/extension_state.hpp"

#include "duckdb/main/database.hpp"

#include <algorithm>
#include <unordered_map>

namespace httpfs2 {

constexpr size_t ExtensionState::REQUEST_THREADS;

namespace {
// Databases are keyed by address; a weak_ptr so that a closed database's state dies with it, and an address
// reused by a later database finds an expired entry and gets fresh state.
std::mutex registry_lock;
std::unordered_map<const duckdb::DatabaseInstance *, std::weak_ptr<ExtensionState>> registry;

//! DuckDB's process-wide default allocator (jemalloc where DuckDB is built with it), kept alive by the reference:
//! the database's own allocator goes before its filesystems, and with them the read-ahead still holding buffers.
class DuckDBBufferAllocator : public BufferAllocator {
public:
	explicit DuckDBBufferAllocator(duckdb::shared_ptr<duckdb::Allocator> allocator_p)
	    : allocator(std::move(allocator_p)) {
	}
	char *Allocate(uint64_t size) override {
		return reinterpret_cast<char *>(allocator->AllocateData(size));
	}
	void Free(char *data, uint64_t size) override {
		allocator->FreeData(reinterpret_cast<duckdb::data_ptr_t>(data), size);
	}

private:
	duckdb::shared_ptr<duckdb::Allocator> allocator;
};

std::shared_ptr<BufferAllocator> ReadAheadAllocator(duckdb::DatabaseInstance &db) {
	auto &reference = db.config.default_allocator;
	if (!reference) {
		return BufferAllocator::System();
	}
	return std::make_shared<DuckDBBufferAllocator>(reference);
}
} // namespace

ExtensionState::ExtensionState(std::shared_ptr<BufferAllocator> allocator)
    : read_ahead_budget(IoSettings().read_ahead_memory_limit_bytes, std::move(allocator)),
      upload_budget(std::make_shared<UploadBudget>(IoSettings().write_memory_limit_bytes)),
      io_pool(IoSettings().io_threads), upload_pool(StreamController::MAX_STREAMS), request_threads(REQUEST_THREADS),
      upload_request_threads(2 * StreamController::MAX_STREAMS),
      credential_replacements(std::make_shared<CredentialReplacements>()) {
}

std::shared_ptr<ExtensionState> ExtensionState::GetOrCreate(duckdb::DatabaseInstance &db) {
	std::lock_guard<std::mutex> guard(registry_lock);
	auto &entry = registry[&db];
	auto state = entry.lock();
	if (!state) {
		state = std::make_shared<ExtensionState>(ReadAheadAllocator(db));
		entry = state;
		// Entries of closed databases go when another database loads httpfs2: a process that opens many keeps none.
		for (auto other = registry.begin(); other != registry.end();) {
			other = other->second.expired() ? registry.erase(other) : std::next(other);
		}
	}
	return state;
}

std::shared_ptr<ExtensionState> ExtensionState::Get(duckdb::DatabaseInstance &db) {
	std::lock_guard<std::mutex> guard(registry_lock);
	auto entry = registry.find(&db);
	std::shared_ptr<ExtensionState> state;
	if (entry != registry.end()) {
		state = entry->second.lock();
	}
	if (!state) {
		throw duckdb::InvalidInputException("httpfs2 is not loaded in this database: run LOAD httpfs2 first");
	}
	return state;
}

std::shared_ptr<IoStats> ExtensionState::StatsFor(const std::string &name) {
	std::lock_guard<std::mutex> guard(lock);
	for (auto &entry : stats) {
		if (entry.first == name) {
			return entry.second;
		}
	}
	stats.emplace_back(name, std::make_shared<IoStats>());
	return stats.back().second;
}

std::vector<std::pair<std::string, std::shared_ptr<IoStats>>> ExtensionState::AllStats() {
	std::lock_guard<std::mutex> guard(lock);
	return stats;
}

bool ExtensionState::MarkWrapped(const std::string &name) {
	std::lock_guard<std::mutex> guard(lock);
	return wrapped.insert(name).second;
}

void ExtensionState::AddFileSystem(HandleKeeper &filesystem) {
	std::lock_guard<std::mutex> guard(lock);
	filesystems.push_back(&filesystem);
}

void ExtensionState::RemoveFileSystem(HandleKeeper &filesystem) {
	std::lock_guard<std::mutex> guard(lock);
	filesystems.erase(std::remove(filesystems.begin(), filesystems.end(), &filesystem), filesystems.end());
}

void ExtensionState::ReleaseHandles() {
	std::vector<HandleKeeper *> alive;
	{
		std::lock_guard<std::mutex> guard(lock);
		alive = filesystems;
	}
	// Filesystems go only when the database does, after its last connection: none goes while this runs.
	for (auto filesystem : alive) {
		filesystem->ReleaseHandles();
	}
	upload_budget->WaitUntilNoPartInFlight();
}

IoSettings ExtensionState::LastSetSettings() {
	std::lock_guard<std::mutex> guard(lock);
	return last_set;
}

void ExtensionState::ApplySetting(const SettingSpec &spec, int64_t value) {
	IoSettings applied;
	{
		std::lock_guard<std::mutex> guard(lock);
		spec.Apply(last_set, value);
		applied = last_set;
	}
	if (spec.number == &IoSettings::io_threads) {
		io_pool.Resize(static_cast<size_t>(applied.io_threads));
	} else if (spec.number == &IoSettings::read_ahead_memory_limit_bytes) {
		read_ahead_budget.SetLimit(applied.read_ahead_memory_limit_bytes);
	} else if (spec.number == &IoSettings::write_memory_limit_bytes) {
		upload_budget->SetLimit(applied.write_memory_limit_bytes);
	}
}

void ExtensionState::ApplyTextSetting(const SettingSpec &spec, const std::string &value) {
	std::lock_guard<std::mutex> guard(lock);
	spec.ApplyText(last_set, value);
}

std::shared_ptr<BlockCache> ExtensionState::CacheFor(const IoSettings &settings, std::string &error) {
	auto directory = settings.CacheDirectory();
	if (directory.empty()) {
		error = "no cache directory: set httpfs2_cache_directory (neither XDG_CACHE_HOME nor HOME is set)";
		return nullptr;
	}
	std::lock_guard<std::mutex> guard(cache_lock);
	if (cache && cache_directory == directory && cache->MaxBytes() == settings.cache_max_bytes) {
		return cache;
	}
	auto opened = std::shared_ptr<BlockCache>(BlockCache::Open(directory, settings.cache_max_bytes, error));
	if (opened) {
		cache = opened;
		cache_directory = directory;
	}
	return opened;
}

std::shared_ptr<BlockCache> ExtensionState::CurrentCache() {
	std::lock_guard<std::mutex> guard(cache_lock);
	return cache;
}

} // namespace httpfs2
