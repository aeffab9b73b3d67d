//===----------------------------------------------------------------------===//
//                         httpfs2
//
// adapter/filesystem/forwarding_file_system.hpp
//
// A filesystem that stands in for another under its name and passes on every call it does not change: the calls
// about paths go to `inner` as they came, the calls about a handle go to the inner handle the subclass gives
// (InnerOf). WrappedFileSystem overrides what httpfs2 changes.
//===----------------------------------------------------------------------===//

#pragma once

#include "adapter/compat/file_system_api.hpp"

namespace httpfs2 {

class ForwardingFileSystem : public compat::StandInFileSystem {
public:
	explicit ForwardingFileSystem(duckdb::unique_ptr<duckdb::FileSystem> inner_p) : inner(std::move(inner_p)) {
	}

	// --- calls about a handle ---

	bool Trim(duckdb::FileHandle &handle, duckdb::idx_t offset_bytes, duckdb::idx_t length_bytes) override {
		auto &primary = InnerOf(handle);
		return primary.file_system.Trim(primary, offset_bytes, length_bytes);
	}
	void Truncate(duckdb::FileHandle &handle, int64_t new_size) override {
		auto &primary = InnerOf(handle);
		primary.file_system.Truncate(primary, new_size);
	}

	// --- calls about paths ---

	bool DirectoryExists(const std::string &directory, duckdb::optional_ptr<duckdb::FileOpener> opener) override {
		return inner->DirectoryExists(directory, opener);
	}
	void CreateDirectory(const std::string &directory, duckdb::optional_ptr<duckdb::FileOpener> opener) override {
		inner->CreateDirectory(directory, opener);
	}
	void CreateDirectoriesRecursive(const std::string &path, duckdb::optional_ptr<duckdb::FileOpener> opener) override {
		inner->CreateDirectoriesRecursive(path, opener);
	}
	void RemoveDirectory(const std::string &directory, duckdb::optional_ptr<duckdb::FileOpener> opener) override {
		inner->RemoveDirectory(directory, opener);
	}
	bool ListFiles(const std::string &directory, const std::function<void(const std::string &, bool)> &callback,
	               duckdb::FileOpener *opener) override {
		return inner->ListFiles(directory, callback, opener);
	}
	void MoveFile(const std::string &source, const std::string &target,
	              duckdb::optional_ptr<duckdb::FileOpener> opener) override {
		inner->MoveFile(source, target, opener);
	}
	bool IsPipe(const std::string &filename, duckdb::optional_ptr<duckdb::FileOpener> opener) override {
		return inner->IsPipe(filename, opener);
	}
	std::string GetHomeDirectory() override {
		return inner->GetHomeDirectory();
	}
	std::string ExpandPath(const std::string &path) override {
		return inner->ExpandPath(path);
	}
	std::string PathSeparator(const std::string &path) override {
		return inner->PathSeparator(path);
	}
	bool IsPathAbsolute(const std::string &path) override {
		return inner->IsPathAbsolute(path);
	}
	bool CanHandleFile(const std::string &fpath) override {
		return inner->CanHandleFile(fpath);
	}
	bool IsManuallySet() override {
		return inner->IsManuallySet();
	}
	bool CanSeek() override {
		return inner->CanSeek();
	}
	bool IsLocalFileSystem() const override {
		return inner->IsLocalFileSystem();
	}
	//! The inner filesystem's name: disabled_filesystems and DuckDB's lookups by name still find it.
	std::string GetName() const override {
		return inner->GetName();
	}
	std::string CanonicalizePath(const std::string &path, duckdb::optional_ptr<duckdb::FileOpener> opener) override {
		return inner->CanonicalizePath(path, opener);
	}

protected:
	bool ListFilesExtended(const std::string &directory,
	                       const std::function<void(duckdb::OpenFileInfo &info)> &callback,
	                       duckdb::optional_ptr<duckdb::FileOpener> opener) override {
		return inner->ListFiles(directory, callback, opener);
	}
	bool SupportsListFilesExtended() const override {
		return true;
	}

	//! The inner filesystem's handle behind `handle` (one of the subclass's); throws where there is none.
	virtual duckdb::FileHandle &InnerOf(duckdb::FileHandle &handle) = 0;

	const duckdb::unique_ptr<duckdb::FileSystem> inner;
};

} // namespace httpfs2
