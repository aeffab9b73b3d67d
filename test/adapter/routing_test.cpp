// WrappedFileSystem's routing, inside a real DuckDB: a mock filesystem stands in for httpfs's under a name of its
// own, and a store of the test's takes uploads. What reaches the mock, and what the upload target gets, is checked
// call by call: large reads split into sub-reads on parallel-access handles, small ones passed through whole, writes
// to the uploader or through, removals of a file being uploaded skipped, and the calls about paths passed on.

#include "adapter/common/extension_state.hpp"
#include "adapter/extension/settings.hpp"
#include "adapter/filesystem/wrapped_file_system.hpp"
#include "duckdb.hpp"
#include "duckdb/main/client_data.hpp"

#include <gtest/gtest.h>

#include <map>
#include <mutex>

using namespace duckdb;
using httpfs2::ExtensionState;
using httpfs2::IoStats;
using httpfs2::RemoteStore;
using httpfs2::UploadTarget;
using httpfs2::WrappedFileSystem;

namespace {

//! What the mock was asked, for the tests to check.
struct Calls {
	std::mutex lock;
	std::vector<std::string> log;
	//! Positional reads: (length, opened for parallel access).
	std::vector<std::pair<idx_t, bool>> reads;
	std::string written;

	void Add(const std::string &call) {
		std::lock_guard<std::mutex> guard(lock);
		log.push_back(call);
	}
	bool Saw(const std::string &call) {
		std::lock_guard<std::mutex> guard(lock);
		return std::find(log.begin(), log.end(), call) != log.end();
	}
};

class MockHandle : public FileHandle {
public:
	MockHandle(FileSystem &fs, const std::string &path, FileOpenFlags flags) : FileHandle(fs, path, flags) {
	}
	void Close() override {
	}
	idx_t position = 0;
};

//! Files of a fixed content, "mock://<name>", served from memory under the name "MockFileSystem".
class MockFileSystem : public FileSystem {
public:
	MockFileSystem(std::shared_ptr<Calls> calls_p, std::map<std::string, std::string> files_p)
	    : calls(std::move(calls_p)), files(std::move(files_p)) {
	}

	unique_ptr<FileHandle> OpenFile(const std::string &path, FileOpenFlags flags,
	                                optional_ptr<FileOpener> opener) override {
		calls->Add((flags.OpenForWriting() ? "open-write " : "open-read ") + path);
		if (!flags.OpenForWriting() && files.count(path) == 0) {
			throw IOException("mock: no file '%s'", path);
		}
		return make_uniq<MockHandle>(*this, path, flags);
	}
	void Read(FileHandle &handle, void *buffer, int64_t nr_bytes, idx_t location) override {
		auto &data = files.at(handle.path);
		if (location + static_cast<idx_t>(nr_bytes) > data.size()) {
			throw IOException("mock: read past the end");
		}
		memcpy(buffer, data.data() + location, static_cast<size_t>(nr_bytes));
		std::lock_guard<std::mutex> guard(calls->lock);
		calls->reads.emplace_back(static_cast<idx_t>(nr_bytes), handle.flags.RequireParallelAccess());
	}
	int64_t Read(FileHandle &handle, void *buffer, int64_t nr_bytes) override {
		auto &mock = handle.Cast<MockHandle>();
		auto &data = files.at(handle.path);
		auto count = std::min<idx_t>(static_cast<idx_t>(nr_bytes), data.size() - mock.position);
		Read(handle, buffer, static_cast<int64_t>(count), mock.position);
		mock.position += count;
		return static_cast<int64_t>(count);
	}
	void Write(FileHandle &handle, void *buffer, int64_t nr_bytes, idx_t location) override {
		std::lock_guard<std::mutex> guard(calls->lock);
		calls->written.append(static_cast<const char *>(buffer), static_cast<size_t>(nr_bytes));
	}
	int64_t Write(FileHandle &handle, void *buffer, int64_t nr_bytes) override {
		Write(handle, buffer, nr_bytes, 0);
		return nr_bytes;
	}
	int64_t GetFileSize(FileHandle &handle) override {
		auto file = files.find(handle.path);
		return file == files.end() ? 0 : static_cast<int64_t>(file->second.size());
	}
	timestamp_t GetLastModifiedTime(FileHandle &handle) override {
		return timestamp_t(1000000);
	}
	std::string GetVersionTag(FileHandle &handle) override {
		return "\"etag-1\"";
	}
	void Seek(FileHandle &handle, idx_t location) override {
		handle.Cast<MockHandle>().position = location;
	}
	idx_t SeekPosition(FileHandle &handle) override {
		return handle.Cast<MockHandle>().position;
	}
	void FileSync(FileHandle &handle) override {
	}
	bool FileExists(const std::string &filename, optional_ptr<FileOpener> opener) override {
		calls->Add("exists " + filename);
		return files.count(filename) > 0;
	}
	void RemoveFile(const std::string &filename, optional_ptr<FileOpener> opener) override {
		calls->Add("remove " + filename);
	}
	void MoveFile(const std::string &source, const std::string &target, optional_ptr<FileOpener> opener) override {
		calls->Add("move " + source + " " + target);
	}
	vector<OpenFileInfo> Glob(const std::string &path, FileOpener *opener) override {
		calls->Add("glob " + path);
		vector<OpenFileInfo> result;
		for (auto &file : files) {
			result.emplace_back(file.first);
		}
		return result;
	}
	bool CanHandleFile(const std::string &path) override {
		return StringUtil::StartsWith(path, "mock://");
	}
	bool CanSeek() override {
		return true;
	}
	bool OnDiskFile(FileHandle &handle) override {
		return false;
	}
	std::string GetName() const override {
		return "MockFileSystem";
	}

private:
	std::shared_ptr<Calls> calls;
	std::map<std::string, std::string> files;
};

//! Objects uploaded in memory.
class MemoryTarget : public UploadTarget {
public:
	explicit MemoryTarget(std::shared_ptr<std::string> object_p) : object(std::move(object_p)) {
	}
	std::string Begin() override {
		return "upload";
	}
	std::string SendPart(const std::string &, uint64_t number, const char *data, uint64_t size) override {
		std::lock_guard<std::mutex> guard(lock);
		parts[number] = std::string(data, size);
		return std::to_string(number);
	}
	void Complete(const std::string &, const std::vector<std::string> &names) override {
		std::lock_guard<std::mutex> guard(lock);
		object->clear();
		for (auto &name : names) {
			object->append(parts.at(std::stoull(name)));
		}
	}
	void Abort(const std::string &) noexcept override {
	}
	void PutWhole(const char *data, uint64_t size) override {
		object->assign(data, size);
	}

private:
	std::mutex lock;
	std::map<uint64_t, std::string> parts;
	std::shared_ptr<std::string> object;
};

//! A store that takes uploads into `uploaded` (when `uploads`) and sends nothing else of its own.
class TestStore : public RemoteStore {
public:
	TestStore(IoStats &stats, bool uploads_p, std::shared_ptr<std::string> uploaded_p)
	    : RemoteStore(stats), uploads(uploads_p), uploaded(std::move(uploaded_p)) {
	}
	bool Uploads() const override {
		return uploads;
	}
	std::shared_ptr<UploadTarget> UploadTargetFor(const std::string &, optional_ptr<FileOpener>) override {
		return std::make_shared<MemoryTarget>(uploaded);
	}

private:
	const bool uploads;
	std::shared_ptr<std::string> uploaded;
};

std::string Pattern(size_t size) {
	std::string data(size, '\0');
	for (size_t i = 0; i < size; i++) {
		data[i] = static_cast<char>((i * 131 + i / 7) & 0xFF);
	}
	return data;
}

class Routing : public ::testing::Test {
protected:
	static constexpr idx_t BIG = 1024 * 1024;

	void Wrap(bool uploads) {
		auto state = ExtensionState::GetOrCreate(*db.instance);
		httpfs2::RegisterSettings(DBConfig::GetConfig(*db.instance));
		auto mock = make_uniq<MockFileSystem>(calls, std::map<std::string, std::string> {{"mock://big", big}});
		auto uploaded_p = uploaded;
		db.GetFileSystem().RegisterSubSystem(make_uniq<WrappedFileSystem>(
		    std::move(mock), state, [uploads, uploaded_p](IoStats &stats) {
			    return std::unique_ptr<RemoteStore>(new TestStore(stats, uploads, uploaded_p));
		    }));
		Run("SET httpfs2_parallel_read_enabled = true; SET httpfs2_read_ahead_enabled = false; "
		    "SET httpfs2_parallel_read_min_latency_ms = 0; SET httpfs2_parallel_read_chunk_size_bytes = 65536; "
		    "SET httpfs2_parallel_read_min_bytes = 65536; SET httpfs2_write_part_size_bytes = 5242880");
	}
	void Run(const std::string &sql) {
		auto result = con.Query(sql);
		ASSERT_FALSE(result->HasError()) << result->GetError();
	}
	FileSystem &Fs() {
		return FileSystem::GetFileSystem(*con.context);
	}
	std::string ReadWhole(const std::string &path) {
		auto handle = Fs().OpenFile(path, FileFlags::FILE_FLAGS_READ);
		std::string data(static_cast<size_t>(handle->GetFileSize()), '\0');
		handle->Read(&data[0], data.size(), 0);
		return data;
	}

	DuckDB db {nullptr};
	Connection con {db};
	std::shared_ptr<Calls> calls = std::make_shared<Calls>();
	std::shared_ptr<std::string> uploaded = std::make_shared<std::string>();
	const std::string big = Pattern(BIG);
};

constexpr idx_t Routing::BIG;

TEST_F(Routing, ALargeReadIsSplitIntoSubReadsOnParallelHandles) {
	Wrap(false);
	EXPECT_EQ(ReadWhole("mock://big"), big);
	std::lock_guard<std::mutex> guard(calls->lock);
	ASSERT_GT(calls->reads.size(), 1u) << "one read of 1 MiB with 64 KiB chunks";
	idx_t total = 0;
	for (auto &read : calls->reads) {
		EXPECT_LE(read.first, 65536u);
		EXPECT_TRUE(read.second) << "sub-reads run on handles opened for parallel access";
		total += read.first;
	}
	EXPECT_EQ(total, BIG) << "every byte read once";
}

TEST_F(Routing, WithParallelReadsOffAReadPassesThroughWhole) {
	Wrap(false);
	Run("SET httpfs2_parallel_read_enabled = false");
	EXPECT_EQ(ReadWhole("mock://big"), big);
	std::lock_guard<std::mutex> guard(calls->lock);
	ASSERT_EQ(calls->reads.size(), 1u);
	EXPECT_EQ(calls->reads[0].first, BIG);
}

TEST_F(Routing, AReadUnderMinBytesPassesThrough) {
	Wrap(false);
	auto handle = Fs().OpenFile("mock://big", FileFlags::FILE_FLAGS_READ);
	std::string data(1000, '\0');
	handle->Read(&data[0], data.size(), 5000);
	EXPECT_EQ(data, big.substr(5000, 1000));
	std::lock_guard<std::mutex> guard(calls->lock);
	ASSERT_EQ(calls->reads.size(), 1u);
	EXPECT_FALSE(calls->reads[0].second) << "on the reader's own handle";
}

TEST_F(Routing, WritesGoToTheUploaderWhereTheStoreTakesThem) {
	Wrap(true);
	auto data = Pattern(12 * 1024 * 1024 + 5);
	auto handle = Fs().OpenFile("mock://out", FileFlags::FILE_FLAGS_WRITE | FileFlags::FILE_FLAGS_FILE_CREATE_NEW);
	handle->Write(&data[0], data.size() / 2);
	handle->Write(&data[data.size() / 2], data.size() - data.size() / 2);
	EXPECT_EQ(handle->GetFileSize(), static_cast<int64_t>(data.size()));
	// DuckDB removes a failed COPY's file before it drops the handle: never the object being uploaded.
	Fs().RemoveFile("mock://out");
	EXPECT_FALSE(calls->Saw("remove mock://out"));
	handle->Close();
	EXPECT_EQ(*uploaded, data) << "the object is complete once Close returns";
	EXPECT_FALSE(calls->Saw("open-write mock://out")) << "the wrapped filesystem never opened it";
	EXPECT_TRUE(calls->written.empty());
	handle.reset();
	Fs().RemoveFile("mock://out");
	EXPECT_TRUE(calls->Saw("remove mock://out")) << "once complete, a removal passes on";
}

TEST_F(Routing, AnUploadIsNeverReadItFailsNamingTheFile) {
	Wrap(true);
	auto handle = Fs().OpenFile("mock://out", FileFlags::FILE_FLAGS_WRITE | FileFlags::FILE_FLAGS_FILE_CREATE_NEW);
	char byte = 0;
	try {
		handle->Read(&byte, 1, 0);
		FAIL() << "a read of a file the uploader writes must fail";
	} catch (NotImplementedException &error) {
		EXPECT_NE(std::string(error.what()).find("mock://out"), std::string::npos) << error.what();
	}
	EXPECT_FALSE(calls->Saw("open-write mock://out"));
}

TEST_F(Routing, WritesPassThroughWhereTheStoreTakesNoUploads) {
	Wrap(false);
	auto handle = Fs().OpenFile("mock://out", FileFlags::FILE_FLAGS_WRITE | FileFlags::FILE_FLAGS_FILE_CREATE_NEW);
	std::string data = "abc";
	handle->Write(&data[0], data.size());
	handle->Close();
	EXPECT_TRUE(calls->Saw("open-write mock://out"));
	EXPECT_EQ(calls->written, data);
	EXPECT_TRUE(uploaded->empty());
}

TEST_F(Routing, CallsAboutPathsArePassedOn) {
	Wrap(false);
	EXPECT_TRUE(Fs().FileExists("mock://big"));
	EXPECT_FALSE(Fs().FileExists("mock://none"));
	EXPECT_TRUE(calls->Saw("exists mock://none"));
	Fs().MoveFile("mock://a", "mock://b");
	EXPECT_TRUE(calls->Saw("move mock://a mock://b"));
	auto listed = Fs().Glob("mock://*");
	ASSERT_EQ(listed.size(), 1u);
	EXPECT_EQ(listed[0].path, "mock://big");
	EXPECT_TRUE(calls->Saw("glob mock://*"));
}

TEST_F(Routing, SqlReadsTheBytesTheMockServes) {
	Wrap(false);
	auto result = con.Query("SELECT md5(content) FROM read_blob('mock://big')");
	ASSERT_FALSE(result->HasError()) << result->GetError();
	auto expected = con.Query("SELECT md5($1::BLOB)", Value::BLOB_RAW(big));
	ASSERT_FALSE(expected->HasError()) << expected->GetError();
	auto md5 = [](QueryResult &answer) {
		return answer.Cast<MaterializedQueryResult>().GetValue(0, 0).ToString();
	};
	EXPECT_EQ(md5(*result), md5(*expected));
	std::lock_guard<std::mutex> guard(calls->lock);
	EXPECT_GT(calls->reads.size(), 1u) << "read_blob's read of the whole file was split";
}

} // namespace
