#include "core/prefetch/data_file_predictor.hpp"

namespace httpfs2 {

void DataFilePredictor::Clear() {
	MutexLock guard(lock);
	generation++;
	manifests.clear();
	manifest_index.clear();
	positions.clear();
	opened.clear();
	predicted.clear();
}

uint64_t DataFilePredictor::Generation() {
	MutexLock guard(lock);
	return generation;
}

std::vector<OpenPrediction> DataFilePredictor::ListRead(const std::vector<ListedManifest> &list) {
	std::vector<OpenPrediction> whole;
	MutexLock guard(lock);
	bool first = true;
	for (auto &listed : list) {
		if (manifest_index.emplace(listed.path, manifests.size()).second) {
			Manifest manifest;
			manifest.path = listed.path;
			manifest.first_of_list = first;
			manifests.push_back(std::move(manifest));
			first = false;
		}
		if (listed.length <= PrefetchLimits::MAX_WHOLE_BYTES) {
			whole.push_back(OpenPrediction::Whole(listed.path, listed.length));
		}
	}
	return whole;
}

void DataFilePredictor::Parsed(uint64_t of_generation, const std::string &manifest,
                               std::vector<std::string> data_files) {
	MutexLock guard(lock);
	auto found = manifest_index.find(manifest);
	if (of_generation != generation || found == manifest_index.end() || manifests[found->second].parsed ||
	    positions.size() + data_files.size() > PrefetchLimits::MAX_FILES_PER_QUERY) {
		return;
	}
	for (size_t entry = 0; entry < data_files.size(); entry++) {
		positions.emplace(data_files[entry], Position {found->second, entry}); // a file named twice: its first place
	}
	manifests[found->second].data_files = std::move(data_files);
	manifests[found->second].parsed = true;
}

bool DataFilePredictor::Next(Position &at) {
	if (at.entry + 1 < manifests[at.manifest].data_files.size()) {
		at.entry++;
		return true;
	}
	for (auto index = at.manifest + 1; index < manifests.size() && !manifests[index].first_of_list; index++) {
		if (!manifests[index].parsed) {
			return false; // not known yet
		}
		if (!manifests[index].data_files.empty()) {
			at = Position {index, 0};
			return true;
		}
	}
	return false;
}

DataFilePredictor::Before DataFilePredictor::Previous(Position &at) {
	if (at.entry > 0) {
		at.entry--;
		return Before::FILE;
	}
	for (auto index = at.manifest; !manifests[index].first_of_list;) {
		index--;
		if (!manifests[index].parsed) {
			return Before::UNKNOWN;
		}
		if (!manifests[index].data_files.empty()) {
			at = Position {index, manifests[index].data_files.size() - 1};
			return Before::FILE;
		}
	}
	return Before::NOTHING;
}

std::vector<OpenPrediction> DataFilePredictor::Opened(const std::string &path) {
	MutexLock guard(lock);
	// Noted even when no manifest parsed so far names it: the file after it follows it once one does.
	bool first_open = opened.insert(path).second;
	auto found = positions.find(path);
	if (found == positions.end() || !first_open) {
		return {}; // named by no manifest (yet), or opened again in the query (its first open looked ahead)
	}
	auto previous = found->second;
	auto before = Previous(previous);
	bool follows = predicted.count(path) != 0 || before == Before::NOTHING ||
	               (before == Before::FILE && opened.count(manifests[previous.manifest].data_files[previous.entry]));
	std::vector<OpenPrediction> ahead;
	auto next = found->second;
	for (size_t step = 0; follows && step < PrefetchLimits::TAILS_AHEAD && Next(next); step++) {
		auto &file = manifests[next.manifest].data_files[next.entry];
		if (opened.count(file) == 0 && predicted.insert(file).second) {
			ahead.push_back(OpenPrediction::Tail(file));
		}
	}
	return ahead;
}

} // namespace httpfs2
