#include "core/requests/url_redaction.hpp"

#include <gtest/gtest.h>

using namespace httpfs2;

TEST(UrlRedaction, DropsQueryAndUserInfo) {
	EXPECT_EQ(RedactUrl("s3://bucket/key.parquet"), "s3://bucket/key.parquet");
	EXPECT_EQ(RedactUrl("https://host/obj?X-Amz-Signature=abc&X-Amz-Credential=AKIA"), "https://host/obj?<redacted>");
	EXPECT_EQ(RedactUrl("http://user:secret@host:9000/obj"), "http://host:9000/obj");
	EXPECT_EQ(RedactUrlIn("GET https://h/o?sig=1 failed: https://h/o?sig=1", "https://h/o?sig=1"),
	          "GET https://h/o?<redacted> failed: https://h/o?<redacted>");
}
