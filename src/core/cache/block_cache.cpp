#include "core/cache/block_cache.hpp"

#include <limits>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <map>
#include <pthread.h>
#include <set>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <utility>

namespace httpfs2 {

constexpr uint64_t BlockCache::BLOCK_SIZE;
constexpr uint64_t BlockCache::PENDING_LIMIT;
constexpr int64_t BlockCache::WRITE_RETRY_NS;
constexpr int64_t BlockCache::FETCH_CLAIM_NS;
constexpr int64_t BlockCache::CLAIM_WRITE_NS;
constexpr int64_t BlockCache::LISTING_SETTLED_NS;

namespace {

//! A new layout gets a new folder, so processes of two httpfs2 versions never read each other's blocks.
const char *const ROOT_FOLDER = "httpfs2-blocks-v1";
const char *const PROCESSES_FOLDER = "httpfs2-processes-v1";
const char *const TEMP_PREFIX = "tmp-";
const char *const BLOCK_SUFFIX = ".blk";
const char *const CLAIM_SUFFIX = ".fetch";
//! No block takes a minute to write, so a temporary file this old belongs to a writer that was killed.
constexpr int64_t STALE_TEMP_NS = 60LL * 1000 * 1000 * 1000;
//! How soon a writing process sees what the others wrote, against the cost of a scan (a stat per block).
constexpr int64_t RESCAN_INTERVAL_NS = 1000LL * 1000 * 1000;
//! The folders whose last listing is kept (BlockCache::ListFolder): a scan of a few hundred files lists each once.
constexpr size_t KEPT_LISTINGS = 256;
//! Folder removals by other processes' scans that a write tries again after.
constexpr int WRITE_ATTEMPTS = 4;

int64_t Nanoseconds(const timespec &time) {
	return int64_t(time.tv_sec) * 1000 * 1000 * 1000 + time.tv_nsec;
}

int64_t ClockNanoseconds(clockid_t clock) {
	timespec now;
	clock_gettime(clock, &now);
	return Nanoseconds(now);
}

bool StartsWith(const std::string &text, const std::string &prefix) {
	return text.compare(0, prefix.size(), prefix) == 0;
}

bool EndsWith(const std::string &text, const std::string &suffix) {
	return text.size() >= suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string FolderOf(const std::string &file) {
	return file.substr(0, file.rfind('/'));
}

//! Creates `path` and its missing parents; false with errno when one cannot be made.
bool MakeFolders(const std::string &path) {
	for (auto end = path.find('/', 1);; end = path.find('/', end + 1)) {
		if (mkdir(path.substr(0, end).c_str(), 0755) != 0 && errno != EEXIST) {
			return false;
		}
		if (end == std::string::npos) {
			return true;
		}
	}
}

//! Whether a file can be created in `folder`: a folder can exist and still refuse writes.
bool CanWriteIn(const std::string &folder) {
	auto pattern = folder + "/" + TEMP_PREFIX + "probe-XXXXXX";
	std::vector<char> name(pattern.begin(), pattern.end());
	name.push_back('\0');
	int fd = mkstemp(name.data());
	if (fd < 0) {
		return false;
	}
	close(fd);
	unlink(name.data());
	return true;
}

//! Whether a process holds the lock on the liveness file `file`.
enum class Liveness { HELD, FREE, UNKNOWN };

//! The same for the file open as `fd`.
Liveness LockOn(int fd) {
	if (flock(fd, LOCK_SH | LOCK_NB) == 0) {
		return Liveness::FREE; // released as the descriptor closes
	}
	return errno == EWOULDBLOCK ? Liveness::HELD : Liveness::UNKNOWN;
}

Liveness LockOf(const std::string &file) {
	int fd = open(file.c_str(), O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		return errno == ENOENT ? Liveness::FREE : Liveness::UNKNOWN;
	}
	auto liveness = LockOn(fd);
	close(fd);
	return liveness;
}

//! Whether `name` can be a liveness file's name (<pid>-<mkstemp's letters and digits>), so no path elsewhere.
bool IsLivenessName(const std::string &name) {
	return name.find('-') != std::string::npos &&
	       std::all_of(name.begin(), name.end(), [](char c) { return std::isalnum((unsigned char)c) || c == '-'; });
}

//! The liveness descriptors of this process's caches. A child forked without exec inherits them, and with them the
//! locks that say this process lives: its claims would live on while the child does. The child closes its copies
//! as it starts (pthread_atfork): the locks are its parent's.
class LivenessDescriptors {
public:
	static LivenessDescriptors &Get() {
		static LivenessDescriptors descriptors;
		return descriptors;
	}
	//! Past SLOTS caches at once, a descriptor is not added: a child keeps that one (as before this was done).
	void Add(int fd) {
		for (auto &slot : slots) {
			int empty = -1;
			if (slot.compare_exchange_strong(empty, fd)) {
				return;
			}
		}
	}
	void Remove(int fd) {
		for (auto &slot : slots) {
			int held = fd;
			if (slot.compare_exchange_strong(held, -1)) {
				return;
			}
		}
	}

private:
	static constexpr size_t SLOTS = 64;

	LivenessDescriptors() {
		for (auto &slot : slots) {
			slot = -1;
		}
		pthread_atfork(nullptr, nullptr, [] { Get().CloseAll(); });
	}
	//! In the child, where only async-signal-safe calls may run: atomics and close.
	void CloseAll() {
		for (auto &slot : slots) {
			auto fd = slot.exchange(-1);
			if (fd >= 0) {
				close(fd);
			}
		}
	}

	std::atomic<int> slots[SLOTS];
};

void RemoveFolders(const std::set<std::string> &folders) {
	for (auto &folder : folders) {
		// Fails, as it should, while the folder holds anything: another block, a write under way.
		rmdir(folder.c_str());
	}
}

} // namespace

struct BlockCache::ScannedBlock {
	std::string file;
	uint64_t bytes;
	int64_t modified_ns;
};

BlockCache::BlockCache(const std::string &directory, uint64_t max_bytes_p, uint64_t pending_limit)
    : root(directory + "/" + ROOT_FOLDER), processes(directory + "/" + PROCESSES_FOLDER), max_bytes(max_bytes_p),
      versions(directory),
      writer(new BlockWriter(pending_limit, [this](const PendingBlock &block) { StorePending(block); })) {
	StartLiveness();
}

BlockCache::~BlockCache() {
	if (getpid() != opened_by) {
		// A forked child's copy of its parent's cache: the writer's thread, the claims and the liveness file are the
		// parent's (a join of a thread the child does not have would never return).
		(void)writer.release();
		return;
	}
	// Explicitly first, though it is the last member: the writer's thread must be joined before anything goes.
	writer.reset();
	// Before the liveness file: a claim whose file went, and so the lock, would pass for one being made.
	{
		MutexLock lock(claims_mutex);
		for (auto &claim : own_claims) {
			unlink(claim.first.c_str());
		}
		own_claims.clear();
	}
	if (liveness_fd >= 0) {
		LivenessDescriptors::Get().Remove(liveness_fd);
		unlink((processes + "/" + liveness_name).c_str());
		close(liveness_fd);
	}
}

bool BlockCache::OwnsLiveness() const {
	return liveness_fd >= 0 && getpid() == opened_by;
}

void BlockCache::StartLiveness() {
	auto now_ns = ClockNanoseconds(CLOCK_REALTIME);
	for (auto &name : FolderNames(processes)) {
		auto file = processes + "/" + name;
		struct stat status;
		if (lstat(file.c_str(), &status) == 0 && now_ns - Nanoseconds(status.st_mtim) > STALE_TEMP_NS &&
		    LockOf(file) == Liveness::FREE) {
			unlink(file.c_str());
		}
	}
	if (!MakeFolders(processes)) {
		return;
	}
	auto pattern = processes + "/" + std::to_string(getpid()) + "-XXXXXX";
	std::vector<char> name(pattern.begin(), pattern.end());
	name.push_back('\0');
	int fd = mkstemp(name.data());
	if (fd < 0) {
		return;
	}
	// Not inherited by programs this process runs (mkstemp's descriptor is): their lives are not its.
	if (fcntl(fd, F_SETFD, FD_CLOEXEC) != 0 || flock(fd, LOCK_EX | LOCK_NB) != 0) {
		unlink(name.data());
		close(fd);
		return;
	}
	liveness_fd = fd;
	liveness_name = std::string(name.data()).substr(processes.size() + 1);
	LivenessDescriptors::Get().Add(fd);
}

bool BlockCache::ClaimLive(const std::string &file, int64_t now_ns) const {
	int fd = open(file.c_str(), O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		return false;
	}
	struct stat status;
	if (fstat(fd, &status) != 0) {
		close(fd);
		return false;
	}
	// A link to its process's liveness file (the file's other name): made when its change time says (a link made
	// or removed), and live while that process holds the file's lock.
	bool linked = status.st_nlink > 1;
	if (now_ns - Nanoseconds(linked ? status.st_ctim : status.st_mtim) > FETCH_CLAIM_NS) {
		close(fd);
		return false;
	}
	auto lock = LockOn(fd);
	if (linked || lock == Liveness::HELD) {
		close(fd);
		// Dead once the kernel released the lock (its process died); a link whose lock cannot be tried is live until
		// too old.
		return lock != Liveness::FREE;
	}
	char text[64] = {};
	auto got = read(fd, text, sizeof(text) - 1);
	close(fd);
	if (got <= 0) {
		// Empty: being written, or a link whose liveness file went (its process ended and a scan removed the file).
		return now_ns - Nanoseconds(status.st_mtim) < CLAIM_WRITE_NS;
	}
	std::string owner(text, size_t(got));
	if (IsLivenessName(owner)) {
		auto liveness = LockOf(processes + "/" + owner);
		if (liveness != Liveness::UNKNOWN) {
			return liveness == Liveness::HELD;
		}
	}
	// A claim naming its pid alone (no liveness file could be made, or a lock cannot be tried): a pid of another pid
	// namespace counts as running, and at worst is waited for until the claim is too old.
	auto pid = std::atol(owner.c_str());
	return pid <= 0 || kill(pid_t(pid), 0) == 0 || errno != ESRCH;
}

std::unique_ptr<BlockCache> BlockCache::Open(const std::string &directory, uint64_t max_bytes, std::string &error,
                                             uint64_t pending_limit) {
	auto root = directory + "/" + ROOT_FOLDER;
	if (!MakeFolders(root) || !CanWriteIn(root)) {
		error = "httpfs2: cannot keep the block cache in '" + directory + "': " + std::strerror(errno);
		return nullptr;
	}
	std::unique_ptr<BlockCache> cache(new BlockCache(directory, max_bytes, pending_limit));
	cache->ScanAndEvict();
	return cache;
}

bool BlockCache::Get(const CacheKey &key, uint64_t index, uint64_t length, char *out) {
	auto found = BlockFileRead::ABSENT;
	if (length > 0 && length <= BLOCK_SIZE) {
		found = writer->Find(key, index, length, out) ? BlockFileRead::HIT
		                                              : ReadBlockFile(BlockFile(key, index), key, index, length, out);
	}
	if (found == BlockFileRead::HIT) {
		hits++;
		bytes_served += length;
		return true;
	}
	misses++;
	if (found == BlockFileRead::INVALID) {
		corrupt_blocks_removed++;
	}
	return false;
}

bool BlockCache::Put(const CacheKey &key, uint64_t index, const char *data, uint64_t length) {
	bool written = length > 0 && length <= BLOCK_SIZE && WriteBlock(key, index, data, length);
	// After the rename: a process waiting on the claim finds the block once the claim is gone.
	EndFetchClaim(key, index);
	if (!written) {
		return false;
	}
	bytes_written += length;
	counted_bytes += BlockFileSize(key, length);
	EvictIfDue();
	return true;
}

bool BlockCache::PutInBackground(const CacheKey &key, uint64_t index, SharedBytes data, uint64_t length) {
	if (WritesFailing()) {
		EndFetchClaim(key, index);
		return false;
	}
	if (length == 0 || length > BLOCK_SIZE) {
		EndFetchClaim(key, index);
		return true; // not a block: nothing to keep
	}
	if (!writer->Add(PendingBlock {key, index, std::move(data), length, ClockNanoseconds(CLOCK_REALTIME)})) {
		writes_skipped++;
		EndFetchClaim(key, index);
	}
	return true;
}

void BlockCache::StorePending(const PendingBlock &block) {
	if (Put(block.key, block.index, block.data.get(), block.length)) {
		write_failed_ns = 0;
		return;
	}
	write_errno = errno;
	write_failures++;
	// Never 0, which means no failure.
	write_failed_ns = std::max<int64_t>(1, ClockNanoseconds(CLOCK_MONOTONIC));
}

bool BlockCache::WritesFailing() const {
	auto failed_ns = write_failed_ns.load();
	return failed_ns != 0 && ClockNanoseconds(CLOCK_MONOTONIC) - failed_ns < WRITE_RETRY_NS;
}

void BlockCache::Flush() {
	writer->Flush();
}

std::string BlockCache::LastWriteError() const {
	return write_failures == 0 ? std::string() : std::strerror(write_errno);
}

bool BlockCache::WriteBlock(const CacheKey &key, uint64_t index, const char *data, uint64_t length) {
	auto folder = ObjectFolder(key);
	auto file = BlockFile(key, index);
	for (int attempt = 0; attempt < WRITE_ATTEMPTS; attempt++) {
		// Unique across threads (the sequence) and processes (the pid); a name taken by a process of another pid
		// namespace is EEXIST, and the next number is tried.
		auto temp = folder + "/" + TEMP_PREFIX + std::to_string(getpid()) + "-" + std::to_string(temp_sequence++);
		if (WriteBlockFile(temp, file, key, index, data, length)) {
			return true;
		}
		// The folder is made on the first write of an object, and again when a scan found it empty and removed it.
		bool worth_retrying = errno == EEXIST || (errno == ENOENT && MakeFolders(folder));
		if (!worth_retrying) {
			return false;
		}
	}
	return false;
}

uint64_t BlockCache::Clear(const std::string &path_prefix) {
	versions.ForgetPrefix(path_prefix);
	return ClearWhere(
	    path_prefix.empty(), [&](const std::string &path) { return StartsWith(path, path_prefix); },
	    std::numeric_limits<int64_t>::max());
}

uint64_t BlockCache::ClearPath(const std::string &path, int64_t before_ns) {
	return ClearWhere(
	    false, [&](const std::string &key_path) { return key_path == path; }, before_ns);
}

uint64_t BlockCache::ClearWhere(bool all, const std::function<bool(const std::string &)> &matches, int64_t before_ns) {
	writer->Drop(matches, before_ns);
	EndDroppedClaims(matches);
	std::vector<std::string> claims;
	auto blocks = ScanBlocks(&claims);
	uint64_t held = 0;
	std::vector<ScannedBlock> matching;
	for (auto &block : blocks) {
		held += block.bytes;
		CacheKey key;
		uint64_t length;
		// A block whose header cannot be read names no path: only clearing all removes it (a Get would too).
		if (block.modified_ns < before_ns && (all || (ReadBlockKey(block.file, key, length) && matches(key.path)))) {
			matching.push_back(block);
		}
	}
	// The claims in the folders cleared go too (all of them with `all`): their waiters fetch the blocks themselves.
	std::set<std::string> cleared;
	for (auto &block : matching) {
		cleared.insert(FolderOf(block.file));
	}
	for (auto &claim : claims) {
		if (all || cleared.count(FolderOf(claim))) {
			unlink(claim.c_str());
		}
	}
	auto removed = RemoveBlocks(matching);
	counted_bytes = held - std::min(held, removed);
	return removed;
}

void BlockCache::EndDroppedClaims(const std::function<bool(const std::string &)> &matches) {
	std::vector<std::pair<CacheKey, uint64_t>> dropped;
	{
		MutexLock lock(claims_mutex);
		for (auto &claim : own_claims) {
			if (matches(claim.second.first.path) && !writer->Contains(claim.second.first, claim.second.second)) {
				dropped.push_back(claim.second);
			}
		}
	}
	for (auto &block : dropped) {
		EndFetchClaim(block.first, block.second);
	}
}

std::vector<CachedObject> BlockCache::Info() {
	Flush();
	std::map<std::pair<std::string, std::string>, CachedObject> objects;
	for (auto &block : ScanBlocks()) {
		CacheKey key;
		uint64_t length;
		if (!ReadBlockKey(block.file, key, length)) {
			continue;
		}
		auto &object = objects[std::make_pair(key.path, key.version)];
		object.path = key.path;
		object.version = key.version;
		object.blocks++;
		object.bytes += length;
	}
	std::vector<CachedObject> held;
	for (auto &entry : objects) {
		held.push_back(entry.second);
	}
	return held;
}

uint64_t BlockCache::HeldBytes() {
	Flush();
	return ScanAndEvict();
}

bool BlockCache::Holds(const CacheKey &key, uint64_t index) const {
	return writer->Contains(key, index) || access(BlockFile(key, index).c_str(), F_OK) == 0;
}

namespace {
//! The indices in `sorted` within [first, end).
std::vector<uint64_t> IndicesWithin(const std::vector<uint64_t> &sorted, uint64_t first, uint64_t end) {
	return std::vector<uint64_t>(std::lower_bound(sorted.begin(), sorted.end(), first),
	                             std::lower_bound(sorted.begin(), sorted.end(), end));
}
} // namespace

FolderListing BlockCache::ListFolder(const CacheKey &key) {
	auto folder = ObjectFolder(key);
	struct stat status;
	auto modified_ns = stat(folder.c_str(), &status) == 0 ? Nanoseconds(status.st_mtim) : -1;
	if (modified_ns >= 0) {
		MutexLock lock(listings_mutex);
		auto kept = kept_listings.find(folder);
		if (kept != kept_listings.end() && kept->second.modified_ns == modified_ns) {
			return kept->second.listing;
		}
	}
	auto listed_ns = ClockNanoseconds(CLOCK_REALTIME);
	FolderListing listing;
	for (auto &name : FolderNames(folder)) {
		auto held = EndsWith(name, BLOCK_SUFFIX);
		if ((!held && !EndsWith(name, CLAIM_SUFFIX)) || StartsWith(name, TEMP_PREFIX)) {
			continue;
		}
		auto suffix_length = std::strlen(held ? BLOCK_SUFFIX : CLAIM_SUFFIX);
		char *stop = nullptr;
		auto index = std::strtoull(name.c_str(), &stop, 10);
		if (stop == name.c_str() + name.size() - suffix_length) {
			(held ? listing.held : listing.claims).push_back(index);
		}
	}
	std::sort(listing.held.begin(), listing.held.end());
	std::sort(listing.claims.begin(), listing.claims.end());
	MutexLock lock(listings_mutex);
	if (modified_ns >= 0 && listed_ns - modified_ns > LISTING_SETTLED_NS) {
		if (kept_listings.size() >= KEPT_LISTINGS) {
			kept_listings.clear(); // a scan of many objects: the next listings are of others
		}
		kept_listings[folder] = KeptListing {modified_ns, listing};
	} else {
		kept_listings.erase(folder);
	}
	return listing;
}

std::vector<uint64_t> BlockCache::HeldIndices(const CacheKey &key, const FolderListing &listing, uint64_t first,
                                              uint64_t end) {
	std::vector<uint64_t> held;
	writer->PendingIndices(key, first, end, held);
	auto on_disk = IndicesWithin(listing.held, first, end);
	held.insert(held.end(), on_disk.begin(), on_disk.end());
	return held;
}

VersionRecords &BlockCache::Versions() {
	return versions;
}

FetchingBlocks &BlockCache::Fetching() {
	return fetching;
}

bool BlockCache::MakeClaim(const std::string &file) {
	auto owns_liveness = OwnsLiveness();
	if (owns_liveness && claims_link) {
		if (link((processes + "/" + liveness_name).c_str(), file.c_str()) == 0) {
			return true;
		}
		if (errno == EEXIST || errno == ENOENT) {
			return false;
		}
		claims_link = false; // a file system without hard links (or at its limit of them): claims are files then
	}
	int fd = open(file.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0) {
		return false;
	}
	auto owner = owns_liveness ? liveness_name : std::to_string(getpid());
	bool written = write(fd, owner.data(), owner.size()) == ssize_t(owner.size());
	close(fd);
	if (!written) {
		unlink(file.c_str());
		errno = EIO;
		return false;
	}
	return true;
}

bool BlockCache::ClaimFetch(const CacheKey &key, uint64_t index) {
	auto file = ClaimFile(key, index);
	for (int attempt = 0; attempt < WRITE_ATTEMPTS; attempt++) {
		if (MakeClaim(file)) {
			MutexLock lock(claims_mutex);
			own_claims[file] = std::make_pair(key, index);
			return true;
		}
		if (errno == EEXIST) {
			if (ClaimLive(file, ClockNanoseconds(CLOCK_REALTIME))) {
				return false;
			}
			unlink(file.c_str()); // stale: its process is gone or it is too old
		} else if (errno != ENOENT || !MakeFolders(ObjectFolder(key))) {
			return true;
		}
	}
	return true;
}

void BlockCache::EndFetchClaim(const CacheKey &key, uint64_t index) {
	auto file = ClaimFile(key, index);
	{
		MutexLock lock(claims_mutex);
		if (own_claims.erase(file) == 0) {
			return;
		}
	}
	unlink(file.c_str());
}

bool BlockCache::FetchedElsewhere(const CacheKey &key, uint64_t index) {
	auto file = ClaimFile(key, index);
	{
		MutexLock lock(claims_mutex);
		if (own_claims.count(file)) {
			return false;
		}
	}
	return ClaimLive(file, ClockNanoseconds(CLOCK_REALTIME));
}

std::vector<uint64_t> BlockCache::ClaimedElsewhere(const CacheKey &key, const FolderListing &listing, uint64_t first,
                                                   uint64_t end) {
	auto claimed = IndicesWithin(listing.claims, first, end);
	claimed.erase(
	    std::remove_if(claimed.begin(), claimed.end(), [&](uint64_t index) { return !FetchedElsewhere(key, index); }),
	    claimed.end());
	return claimed;
}

constexpr int64_t BlockCache::RECORD_REFRESH_NS;

int64_t BlockCache::RecordFreshNanoseconds(uint64_t trust_seconds) {
	if (trust_seconds == 0) {
		return RECORD_REFRESH_NS;
	}
	auto half_window = static_cast<double>(trust_seconds) * 1e9 / 2;
	return half_window < static_cast<double>(RECORD_REFRESH_NS) ? static_cast<int64_t>(half_window) : RECORD_REFRESH_NS;
}

bool BlockCache::RecordVersion(const std::string &path, const std::string &version, int64_t learnt_ns,
                               int64_t fresh_ns) {
	std::string recorded;
	if (fresh_ns > 0 && versions.Find(path, learnt_ns - fresh_ns, learnt_ns, recorded) && recorded == version) {
		return true;
	}
	if (!versions.Record(path, version, learnt_ns)) {
		return false;
	}
	counted_bytes += VersionRecords::RecordBytes(path, version);
	EvictIfDue();
	return true;
}

uint64_t BlockCache::MaxBytes() const {
	return max_bytes;
}

BlockCacheCounters BlockCache::Counters() const {
	BlockCacheCounters counters;
	counters.hits = hits;
	counters.misses = misses;
	counters.bytes_served = bytes_served;
	counters.bytes_written = bytes_written;
	counters.bytes_evicted = bytes_evicted;
	counters.corrupt_blocks_removed = corrupt_blocks_removed;
	counters.writes_skipped = writes_skipped;
	counters.write_failures = write_failures;
	return counters;
}

std::string BlockCache::ObjectFolder(const CacheKey &key) const {
	auto hash = HexOf(HashCacheKey(key));
	return root + "/" + hash.substr(0, 2) + "/" + hash;
}

std::string BlockCache::BlockFile(const CacheKey &key, uint64_t index) const {
	return ObjectFolder(key) + "/" + std::to_string(index) + BLOCK_SUFFIX;
}

std::string BlockCache::ClaimFile(const CacheKey &key, uint64_t index) const {
	return ObjectFolder(key) + "/" + std::to_string(index) + CLAIM_SUFFIX;
}

bool BlockCache::ScanDue() const {
	return counted_bytes > max_bytes || ClockNanoseconds(CLOCK_MONOTONIC) - last_scan_ns > RESCAN_INTERVAL_NS;
}

void BlockCache::EvictIfDue() {
	if (!ScanDue()) {
		return;
	}
	MutexLock lock(scan_mutex);
	// Threads that found a scan due at once scan once: the first one's scan makes it due no more.
	if (ScanDue()) {
		ScanAndEvictLocked();
	}
}

uint64_t BlockCache::ScanAndEvict() {
	MutexLock lock(scan_mutex);
	return ScanAndEvictLocked();
}

uint64_t BlockCache::ScanAndEvictLocked() {
	auto blocks = ScanBlocksAndRecords();
	uint64_t held = 0;
	for (auto &block : blocks) {
		held += block.bytes;
	}
	held = EvictLeastRecentlyUsed(blocks, held);
	counted_bytes = held;
	last_scan_ns = ClockNanoseconds(CLOCK_MONOTONIC);
	return held;
}

std::vector<BlockCache::ScannedBlock> BlockCache::ScanBlocks() {
	return ScanBlocks(nullptr);
}

std::vector<BlockCache::ScannedBlock> BlockCache::ScanBlocks(std::vector<std::string> *claims) {
	std::vector<ScannedBlock> blocks;
	auto now_ns = ClockNanoseconds(CLOCK_REALTIME);
	for (auto &shard : FolderNames(root)) {
		for (auto &object : FolderNames(root + "/" + shard)) {
			ScanObjectFolder(root + "/" + shard + "/" + object, BLOCK_SUFFIX, now_ns, blocks, claims);
		}
	}
	return blocks;
}

std::vector<BlockCache::ScannedBlock> BlockCache::ScanBlocksAndRecords() {
	auto files = ScanBlocks();
	auto now_ns = ClockNanoseconds(CLOCK_REALTIME);
	// Version records, one file per path in shard folders: held, and evicted, as blocks are.
	for (auto &shard : FolderNames(versions.Root())) {
		ScanObjectFolder(versions.Root() + "/" + shard, VersionRecords::RECORD_SUFFIX, now_ns, files);
	}
	return files;
}

void BlockCache::ScanObjectFolder(const std::string &folder, const char *suffix, int64_t now_ns,
                                  std::vector<ScannedBlock> &blocks, std::vector<std::string> *claims) const {
	auto names = FolderNames(folder);
	if (names.empty()) {
		// Left by evictions and clears; a write that made it meanwhile makes it again.
		rmdir(folder.c_str());
	}
	for (auto &name : names) {
		auto file = folder + "/" + name;
		struct stat status;
		if (lstat(file.c_str(), &status) != 0 || !S_ISREG(status.st_mode)) {
			continue;
		}
		auto modified_ns = Nanoseconds(status.st_mtim);
		if (StartsWith(name, TEMP_PREFIX) && now_ns - modified_ns > STALE_TEMP_NS) {
			unlink(file.c_str());
		} else if (EndsWith(name, CLAIM_SUFFIX)) {
			// A claim is no block; one whose process was killed mid-fetch or that is too old goes.
			if (!ClaimLive(file, now_ns)) {
				unlink(file.c_str());
			} else if (claims) {
				claims->push_back(file);
			}
		} else if (EndsWith(name, suffix)) {
			blocks.push_back(ScannedBlock {file, uint64_t(status.st_size), modified_ns});
		}
	}
}

uint64_t BlockCache::EvictLeastRecentlyUsed(std::vector<ScannedBlock> &blocks, uint64_t held) {
	if (held <= max_bytes) {
		return held;
	}
	// Down to 90% of the bound, so the next scans are a second apart rather than one every write.
	auto target = max_bytes - max_bytes / 10;
	std::sort(blocks.begin(), blocks.end(), [](const ScannedBlock &a, const ScannedBlock &b) {
		return a.modified_ns != b.modified_ns ? a.modified_ns < b.modified_ns : a.file < b.file;
	});
	std::vector<ScannedBlock> oldest;
	for (auto &block : blocks) {
		if (held <= target) {
			break;
		}
		oldest.push_back(block);
		held -= block.bytes;
	}
	bytes_evicted += RemoveBlocks(oldest);
	return held;
}

uint64_t BlockCache::RemoveBlocks(const std::vector<ScannedBlock> &blocks) {
	uint64_t removed = 0;
	std::set<std::string> folders;
	for (auto &block : blocks) {
		// Another process may have removed it first: then it is gone all the same, but not counted here.
		if (unlink(block.file.c_str()) == 0) {
			removed += block.bytes;
		}
		folders.insert(FolderOf(block.file));
	}
	RemoveFolders(folders);
	return removed;
}

} // namespace httpfs2
