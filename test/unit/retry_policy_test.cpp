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

//! A throttled answer waits even before the first retry, between half and all of the backoff's next step.
TEST(RetryBackoff, AThrottledAttemptWaitsWithJitter) {
	RetryBackoff policy {100, 4, 1000};
	EXPECT_EQ(policy.Throttled(1, 0).count(), 50);
	EXPECT_EQ(policy.Throttled(1, 0.999).count(), 99);
	EXPECT_EQ(policy.Throttled(2, 0.5).count(), 300);
	EXPECT_EQ(policy.Throttled(10, 0.999).count(), 999) << "within the bound";
	for (int i = 0; i < 1000; i++) {
		auto jitter = RetryJitter();
		ASSERT_GE(jitter, 0);
		ASSERT_LT(jitter, 1);
	}
	EXPECT_TRUE(IsThrottling(503) && IsThrottling(429));
	EXPECT_FALSE(IsThrottling(500) || IsThrottling(404));
}

//! A refusal of the credentials, not of the request: the same request signed with the secret's credentials now.
TEST(RetryBackoff, RefusedCredentialsAreToldApartFromOtherRefusals) {
	EXPECT_TRUE(RefusesCredentials(400, "ExpiredToken"));
	EXPECT_TRUE(RefusesCredentials(403, "InvalidAccessKeyId"));
	EXPECT_TRUE(RefusesCredentials(403, "SignatureDoesNotMatch"));
	EXPECT_FALSE(RefusesCredentials(403, "AccessDenied")) << "a key without the right: another key is not the fix";
	EXPECT_FALSE(RefusesCredentials(404, "NoSuchKey"));
	EXPECT_FALSE(RefusesCredentials(503, "ExpiredToken"));
}
