#include "core/requests/retry_policy.hpp"

#include <gtest/gtest.h>

using namespace httpfs2;

//! httpfs's defaults (100 ms, backoff 4): no wait before the first retry, then 100, 400, 1600 ms.
TEST(RetryBackoff, WaitsAsHttpfsWaits) {
	RetryBackoff policy {100, 4, 0};
	EXPECT_EQ(policy.After(1).count(), 0);
	EXPECT_EQ(policy.After(2).count(), 100);
	EXPECT_EQ(policy.After(3).count(), 400);
	EXPECT_EQ(policy.After(4).count(), 1600);
}

TEST(RetryBackoff, NoWaitIsLongerThanTheBound) {
	RetryBackoff policy {100, 4, 1000};
	EXPECT_EQ(policy.After(4).count(), 1000);
	EXPECT_EQ(policy.After(30).count(), 1000);
}
