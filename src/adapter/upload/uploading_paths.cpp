#include "adapter/upload/uploading_paths.hpp"

#include "adapter/compat/duckdb_api.hpp"
#include "duckdb/common/exception.hpp"
#include "duckdb/main/client_context.hpp"

#include <vector>

namespace httpfs2 {

UploadingPaths::Mark::Mark(std::shared_ptr<UploadingPaths> owner_p, std::string path) : owner(std::move(owner_p)) {
	std::lock_guard<std::mutex> guard(owner->lock);
	entry = owner->entries.insert(owner->entries.end(), Entry {std::move(path), nullptr});
}

UploadingPaths::Mark::~Mark() {
	std::lock_guard<std::mutex> guard(owner->lock);
	owner->entries.erase(entry);
}

void UploadingPaths::Mark::Completing(std::shared_ptr<UploadCompletion> completion) {
	std::lock_guard<std::mutex> guard(owner->lock);
	entry->completion = std::move(completion);
}

bool UploadingPaths::BeingWritten(const std::string &path) {
	std::lock_guard<std::mutex> guard(lock);
	for (auto &entry : entries) {
		if (entry.path == path && !entry.completion) {
			return true;
		}
	}
	return false;
}

bool UploadingPaths::WaitWhere(const std::function<bool(const std::string &)> &matches,
                               const std::function<bool()> &give_up) {
	std::vector<std::shared_ptr<UploadCompletion>> completing;
	{
		std::lock_guard<std::mutex> guard(lock);
		for (auto &entry : entries) {
			if (entry.completion && matches(entry.path)) {
				completing.push_back(entry.completion);
			}
		}
	}
	for (auto &completion : completing) {
		if (!completion->AwaitDone(give_up)) {
			return false;
		}
	}
	return true;
}

bool UploadingPaths::WaitFor(const std::string &path, const std::function<bool()> &give_up) {
	return WaitWhere([&](const std::string &candidate) { return candidate == path; }, give_up);
}

bool UploadingPaths::WaitForPrefix(const std::string &prefix, const std::function<bool()> &give_up) {
	return WaitWhere([&](const std::string &candidate) { return candidate.compare(0, prefix.size(), prefix) == 0; },
	                 give_up);
}

namespace {
//! Whether `opener`'s query was interrupted.
std::function<bool()> Interrupted(duckdb::optional_ptr<duckdb::FileOpener> opener) {
	auto context = duckdb::FileOpener::TryGetClientContext(opener);
	if (!context) {
		return nullptr;
	}
	return [context] {
		return compat::Interrupted(*context);
	};
}
} // namespace

void UploadingPaths::AwaitPath(const std::string &path, duckdb::optional_ptr<duckdb::FileOpener> opener) {
	if (!WaitFor(path, Interrupted(opener))) {
		throw duckdb::InterruptException();
	}
}

bool UploadingPaths::AwaitRemovable(const std::string &path, duckdb::optional_ptr<duckdb::FileOpener> opener) {
	if (BeingWritten(path)) {
		return false;
	}
	AwaitPath(path, opener);
	return true;
}

void UploadingPaths::AwaitGlob(const std::string &pattern, duckdb::optional_ptr<duckdb::FileOpener> opener) {
	if (!WaitForPrefix(pattern.substr(0, pattern.find_first_of("*?[{")), Interrupted(opener))) {
		throw duckdb::InterruptException();
	}
}

} // namespace httpfs2
