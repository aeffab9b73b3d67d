#include "core/cache/folder_proofs.hpp"

namespace httpfs2 {

constexpr std::chrono::milliseconds FolderProofs::GIVE_UP_CHECK;

bool FolderProofs::Proves(const std::string &path, const List &list, const std::function<bool()> &give_up) {
	auto name = FolderOf(path);
	uint64_t listed_in = 0;
	{
		MutexLock guard(lock);
		auto found = folders.find(name);
		if (found == folders.end()) {
			if (!list) {
				return false;
			}
			folders.emplace(name, Folder());
			listed_in = generation;
		} else {
			// Looked up again after each wait: Clear() may have dropped the folder meanwhile.
			for (; found != folders.end() && found->second.listing; found = folders.find(name)) {
				if (give_up && give_up()) {
					return false;
				}
				listed.wait_for(lock, GIVE_UP_CHECK);
			}
			return found != folders.end() && found->second.proved.count(path);
		}
	}
	std::unordered_set<std::string> proved;
	bool ok = false;
	try {
		ok = list(proved);
	} catch (...) {
		ok = false;
	}
	bool named = false;
	{
		MutexLock guard(lock);
		auto found = folders.find(name);
		if (generation == listed_in && found != folders.end()) {
			named = ok && proved.count(path);
			found->second.listing = false;
			if (ok) {
				found->second.proved = std::move(proved);
			}
		}
	}
	listed.notify_all();
	return named;
}

std::string FolderProofs::FolderOf(const std::string &path) {
	return path.substr(0, path.rfind('/') + 1);
}

void FolderProofs::Clear() {
	{
		MutexLock guard(lock);
		folders.clear();
		generation++;
	}
	listed.notify_all();
}

} // namespace httpfs2
