//===----------------------------------------------------------------------===//
//                         httpfs2
//
// adapter/filesystem/uploading_paths.hpp
//
// The paths httpfs2's uploader is writing and has not completed. When a COPY fails, DuckDB removes the file it was
// writing; with an upload that file never existed (nothing is visible before Close), and the object at the key is
// the one from before the COPY, which must stay: its removal is skipped. The upload itself is aborted when its
// handle is dropped.
//===----------------------------------------------------------------------===//

#pragma once

#include <memory>
#include <mutex>
#include <set>
#include <string>

namespace httpfs2 {

class UploadingPaths {
public:
	//! Registers `path` for its lifetime.
	class Mark {
	public:
		Mark(std::shared_ptr<UploadingPaths> owner_p, std::string path_p)
		    : owner(std::move(owner_p)), path(std::move(path_p)) {
			std::lock_guard<std::mutex> guard(owner->lock);
			owner->paths.insert(path);
		}
		~Mark() {
			std::lock_guard<std::mutex> guard(owner->lock);
			owner->paths.erase(owner->paths.find(path));
		}
		Mark(const Mark &) = delete;
		Mark &operator=(const Mark &) = delete;

	private:
		const std::shared_ptr<UploadingPaths> owner;
		const std::string path;
	};

	bool Contains(const std::string &path) {
		std::lock_guard<std::mutex> guard(lock);
		return paths.count(path) > 0;
	}

private:
	std::mutex lock;
	std::multiset<std::string> paths;
};

} // namespace httpfs2
