#include "adapter/stores/remote_store.hpp"

#include "adapter/stores/checked_range_reader.hpp"
#include "adapter/stores/azure_versions.hpp"
#include "adapter/stores/s3_listing.hpp"
#include "adapter/stores/s3_tails.hpp"

#include "adapter/stores/azure_uploads.hpp"
#include "adapter/stores/s3_uploads.hpp"

#include <atomic>
#include <chrono>

namespace httpfs2 {

using duckdb::FileOpener;
using duckdb::optional_ptr;
using std::string;

constexpr uint64_t RemoteStore::FOOTER_TAIL_BYTES;
constexpr uint64_t RemoteStore::OTHER_TAIL_BYTES;

namespace {

//! A store whose range GETs httpfs2 sends and checks itself (CheckedRangeReader), remembering per wrapped filesystem
//! the paths known to be served in ranges (RangedPaths).
class RangeCheckingStore : public RemoteStore {
public:
	RangeCheckingStore(IoStats &stats, StreamController &streams_p, CheckedRangeReader::Store store_p)
	    : RemoteStore(stats), streams(streams_p), store(store_p) {
	}

	bool ChecksRanges() const override {
		return true;
	}
	std::shared_ptr<CheckedRangeReader> RangeReaderFor(const string &path, const ObjectVersion &version,
	                                                   optional_ptr<FileOpener> opener,
	                                                   bool ranges_confirmed) override {
		return CheckedRangeReader::For(path, version, store, opener, stats, ranged_paths, ranges_confirmed, &streams);
	}

protected:
	//! The database's read streams, told of throttled answers.
	StreamController &streams;

private:
	const CheckedRangeReader::Store store;
	const std::shared_ptr<RangedPaths> ranged_paths = std::make_shared<RangedPaths>();
};

class S3Store : public RangeCheckingStore {
public:
	S3Store(IoStats &stats, StreamController &streams)
	    : RangeCheckingStore(stats, streams, CheckedRangeReader::Store::S3) {
	}

	bool OpensFromTail() const override {
		return true;
	}

	bool FetchTail(const string &path, optional_ptr<FileOpener> opener, uint64_t length, ObjectTail &tail) override {
		auto now = NowSeconds();
		if (now < tails_paused_until || PinsVersionIds(opener)) {
			return false;
		}
		if (S3Tails::Fetch(path, opener, stats, streams, length, tail)) {
			failed_tails = 0;
			return true;
		}
		if (++failed_tails >= MAX_FAILED_TAILS) {
			failed_tails = 0;
			tails_paused_until = now + TAIL_PAUSE_SECONDS;
		}
		return false;
	}

	TailSend TailFetcherFor(const string &path, optional_ptr<FileOpener> opener) override {
		// A tail fetched ahead that fails leaves the open to its own tail GET, which counts the failures.
		return NowSeconds() < tails_paused_until || PinsVersionIds(opener)
		           ? nullptr
		           : S3Tails::Prepare(path, opener, stats, streams, FOOTER_TAIL_BYTES);
	}

	bool ListsFolders() const override {
		return true;
	}

	bool ListAfter(const string &path, optional_ptr<FileOpener> opener, std::vector<ListedFile> &files,
	               bool &truncated) override {
		// Paused with the tails: a store that fails them is no store to list either.
		return NowSeconds() >= tails_paused_until && !PinsVersionIds(opener) &&
		       S3Listing::After(path, opener, stats, streams, files, truncated);
	}

	bool ListFolder(const string &path, optional_ptr<FileOpener> opener, uint64_t max_keys,
	                std::vector<ListedFile> &files, bool &truncated) override {
		return NowSeconds() >= tails_paused_until && !PinsVersionIds(opener) &&
		       S3Listing::Folder(path, opener, stats, streams, max_keys, files, truncated);
	}

	std::shared_ptr<CheckedRangeReader> RangeReaderFor(const string &path, const ObjectVersion &version,
	                                                   optional_ptr<FileOpener> opener,
	                                                   bool ranges_confirmed) override {
		return PinsVersionIds(opener) ? nullptr
		                              : RangeCheckingStore::RangeReaderFor(path, version, opener, ranges_confirmed);
	}

	bool FooterOutlivesOpen(const ObjectVersion &version) const override {
		// S3's ETag is the MD5 of the bytes (or of the parts' MD5s); a gateway's may be made of size and time.
		return version.IsContentHash();
	}

	bool VersionsConfirmRanges() const override {
		return true; // a tail's answer is an exact suffix range
	}

	bool Uploads() const override {
		return true;
	}
	std::shared_ptr<UploadTarget> UploadTargetFor(const string &path, optional_ptr<FileOpener> opener) override {
		return S3Uploads::TargetFor(path, opener, stats);
	}

private:
	//! httpfs's s3_version_id_pinning (from DuckDB 2.0): its reads ask for the version id the open's HEAD gave
	//! (versionId=), which httpfs2's own GETs and listings do not carry; with it on, reads are left to httpfs.
	static bool PinsVersionIds(optional_ptr<FileOpener> opener) {
		duckdb::Value pinning;
		return FileOpener::TryGetCurrentSetting(opener, "s3_version_id_pinning", pinning) && !pinning.IsNull() &&
		       pinning.GetValue<bool>();
	}

	static int64_t NowSeconds() {
		return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now().time_since_epoch())
		    .count();
	}

	//! After this many tail GETs in a row that did not give a tail (a store or secret httpfs2 cannot address, whose
	//! every open would pay for a failed request), no tail is asked for TAIL_PAUSE_SECONDS.
	static constexpr uint32_t MAX_FAILED_TAILS = 8;
	static constexpr int64_t TAIL_PAUSE_SECONDS = 60;

	std::atomic<uint32_t> failed_tails {0};
	//! steady_clock seconds before which no tail is asked for.
	std::atomic<int64_t> tails_paused_until {0};
};

class AzureStore : public RangeCheckingStore {
public:
	AzureStore(IoStats &stats, StreamController &streams)
	    : RangeCheckingStore(stats, streams, CheckedRangeReader::Store::AZURE) {
	}

	//! The azure extension's handles read, split and ahead, as before the cache; its reads go through the cache.
	bool ChecksRanges() const override {
		return false;
	}
	bool CachesBlocks() const override {
		return true;
	}

	bool LooksUpVersions() const override {
		return true;
	}
	VersionLookup LookUpVersion(const string &path, optional_ptr<FileOpener> opener, ObjectVersion &version) override {
		return AzureVersions::Lookup(path, opener, stats, &streams, version);
	}
	void ForgetVersion(const string &path, optional_ptr<FileOpener> opener) override {
		AzureVersions::Forget(path, opener);
	}
	bool KeepsVersionHandles() const override {
		return true;
	}
	bool FooterOutlivesOpen(const ObjectVersion &version) const override {
		return version.NamesBytes(); // Azure's ETag changes at every write
	}

	bool Uploads() const override {
		return true;
	}
	std::shared_ptr<UploadTarget> UploadTargetFor(const string &path, optional_ptr<FileOpener> opener) override {
		return AzureUploads::TargetFor(path, opener, stats);
	}
};

class HttpStore : public RangeCheckingStore {
public:
	HttpStore(IoStats &stats, StreamController &streams)
	    : RangeCheckingStore(stats, streams, CheckedRangeReader::Store::HTTP) {
	}
	// A plain HTTP server's ETag is often made of size and modification time, which an overwrite of the same size
	// within a second keeps: footers never outlive an open (the default).
};

//! A store httpfs2 sends nothing of its own to.
class PassThroughStore : public RemoteStore {
public:
	PassThroughStore(IoStats &stats, StreamController &) : RemoteStore(stats) {
	}
};

//! Filesystems httpfs2 wraps, by the names their extensions register them under.
struct StoreKind {
	const char *filesystem_name;
	std::unique_ptr<RemoteStore> (*make)(IoStats &stats, StreamController &streams);
};

template <class STORE>
std::unique_ptr<RemoteStore> Make(IoStats &stats, StreamController &streams) {
	return std::unique_ptr<RemoteStore>(new STORE(stats, streams));
}

const StoreKind STORE_KINDS[] = {
    {"S3FileSystem", Make<S3Store>},
    {"HTTPFileSystem", Make<HttpStore>},
    {"HuggingFaceFileSystem", Make<PassThroughStore>},
    {"AzureBlobStorageFileSystem", Make<AzureStore>},
    {"AzureDfsStorageFileSystem", Make<PassThroughStore>},
};

} // namespace

bool RemoteStore::Wraps(const string &filesystem_name) {
	for (auto &kind : STORE_KINDS) {
		if (filesystem_name == kind.filesystem_name) {
			return true;
		}
	}
	return false;
}

std::unique_ptr<RemoteStore> RemoteStore::For(const string &filesystem_name, IoStats &stats,
                                              StreamController &streams) {
	for (auto &kind : STORE_KINDS) {
		if (filesystem_name == kind.filesystem_name) {
			return kind.make(stats, streams);
		}
	}
	return Make<PassThroughStore>(stats, streams);
}

} // namespace httpfs2
