// A test's BlockCache on a folder of its own (made in SetUp, removed in TearDown), and further BlockCaches on the same
// folder: other processes, as far as the cache's files tell.
#pragma once

#include "core/cache/block_cache.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>
#include <string>
#include <unistd.h>

namespace httpfs2 {

class BlockCacheFolderTest : public ::testing::Test {
protected:
	void SetUp() override {
		char pattern[] = "/tmp/httpfs2-block-cache-folder-XXXXXX";
		folder = mkdtemp(pattern);
		cache = Open();
		ASSERT_NE(cache, nullptr);
	}
	void TearDown() override {
		cache.reset();
		std::system(("rm -rf '" + folder + "'").c_str());
	}
	//! Another BlockCache on the folder, bounded at 64 blocks as the test's own.
	std::unique_ptr<BlockCache> Open() {
		std::string error;
		auto opened = BlockCache::Open(folder, 64 * BlockCache::BLOCK_SIZE, error);
		EXPECT_NE(opened, nullptr) << error;
		return opened;
	}

	std::string folder;
	std::unique_ptr<BlockCache> cache;
};

} // namespace httpfs2
