#include "core/requests/s3_request.hpp"

#include <ctime>
#include <gtest/gtest.h>

using namespace httpfs2;

//! Seconds since the epoch of a day of November 2026, UTC.
static std::time_t November2026(int day, int hour, int minute, int second) {
	std::tm parts {};
	parts.tm_year = 2026 - 1900;
	parts.tm_mon = 10;
	parts.tm_mday = day;
	parts.tm_hour = hour;
	parts.tm_min = minute;
	parts.tm_sec = second;
	return timegm(&parts);
}

TEST(S3Address, PathStyleKeepsTheBucketInThePath) {
	S3Address address;
	ASSERT_TRUE(S3Address::Resolve("s3://bucket/dir/a b+c.parquet", "127.0.0.1:9000", "path", false, address));
	EXPECT_EQ(address.Url(), "http://127.0.0.1:9000/bucket/dir/a%20b%2Bc.parquet");
	EXPECT_EQ(address.host, "127.0.0.1:9000");
	EXPECT_EQ(address.bucket_path, "/bucket");
	EXPECT_EQ(address.key, "dir/a b+c.parquet");
}

TEST(S3Address, VirtualHostStyleIsTheDefaultWithAmazonsEndpoint) {
	S3Address address;
	ASSERT_TRUE(S3Address::Resolve("s3://bucket/key.parquet", "", "", true, address));
	EXPECT_EQ(address.Url(), "https://bucket.s3.amazonaws.com/key.parquet");
	ASSERT_TRUE(S3Address::Resolve("s3://bucket/key.parquet", "minio:9000", "vhost", false, address));
	EXPECT_EQ(address.Url(), "http://bucket.minio:9000/key.parquet");
	EXPECT_EQ(address.bucket_path, "/");
	EXPECT_EQ(address.key, "key.parquet");
}

TEST(S3Address, OtherSchemesOfTheS3FileSystemResolveAlike) {
	S3Address s3;
	S3Address other;
	ASSERT_TRUE(S3Address::Resolve("s3://bucket/dir/key", "host:9000", "path", false, s3));
	for (auto url : {"s3a://bucket/dir/key", "r2://bucket/dir/key"}) {
		ASSERT_TRUE(S3Address::Resolve(url, "host:9000", "path", false, other)) << url;
		EXPECT_EQ(other.Url(), s3.Url()) << url;
	}
}

//! A ListMultipartUploads answer: the uploads a CreateMultipartUpload whose answer was lost may have begun are those
//! of exactly the key, initiated while it was being sent.
TEST(S3Uploads, TheUploadsOfTheKeyInitiatedInTheWindowAreNamed) {
	auto upload = [](const std::string &key, const std::string &id, const std::string &initiated) {
		return "<Upload><Key>" + key + "</Key><UploadId>" + id + "</UploadId><Initiator><ID></ID></Initiator>" +
		       "<Initiated>" + initiated + "</Initiated></Upload>";
	};
	auto xml = "<?xml version=\"1.0\"?><ListMultipartUploadsResult><Bucket>b</Bucket><Prefix>a&amp;b.csv</Prefix>" +
	           upload("a&amp;b.csv", "early", "2026-11-24T22:05:27.000Z") +
	           upload("a&amp;b.csv", "lost-1", "2026-11-24T22:05:28.000Z") +
	           upload("a&amp;b.csv.tmp", "other-key", "2026-11-24T22:05:30.000Z") +
	           upload("a&amp;b.csv", "lost-2", "2026-11-24T22:05:31Z") +
	           upload("a&amp;b.csv", "later", "2026-11-24T22:05:32.000Z") + "</ListMultipartUploadsResult>";
	auto start = November2026(24, 22, 5, 28);
	EXPECT_EQ(UploadsInitiatedBetween(xml, "a&b.csv", start, start + 3),
	          (std::vector<std::string> {"lost-1", "lost-2"}));
	EXPECT_TRUE(UploadsInitiatedBetween(xml, "a&b.csv", start + 5, start + 9).empty());
	EXPECT_TRUE(UploadsInitiatedBetween("<Upload><Key>a&amp;b.csv</Key>", "a&b.csv", 0, start * 2).empty());
}

TEST(S3Address, FormsHttpfs2DoesNotAddressItselfAreDeclined) {
	S3Address address;
	EXPECT_FALSE(S3Address::Resolve("s3://bucket/key?s3_region=x", "", "", true, address)); // query parameters
	EXPECT_FALSE(S3Address::Resolve("bucket/key", "", "", true, address));                  // no scheme
	EXPECT_FALSE(S3Address::Resolve("s3://bucket", "", "", true, address));
	EXPECT_FALSE(S3Address::Resolve("s3://bucket/", "", "", true, address));
	EXPECT_FALSE(S3Address::Resolve("s3://a.b/key", "", "vhost", true, address)); // dotted bucket over TLS
	EXPECT_FALSE(S3Address::Resolve("s3://bucket/key", "http://host", "path", false, address));
	EXPECT_FALSE(S3Address::Resolve("s3://bucket/key", "host/prefix", "path", false, address));
	EXPECT_FALSE(S3Address::Resolve("s3://bucket/key", "host", "other", false, address));
}

//! The request of AWS's Signature Version 4 examples: a GET in examplebucket, us-east-1, on 2013-05-24.
static SigV4Request AwsExample(const std::string &path) {
	SigV4Request request;
	request.method = "GET";
	request.host = "examplebucket.s3.amazonaws.com";
	request.path = path;
	request.region = "us-east-1";
	request.amz_date = "20130524T000000Z";
	return request;
}

// AWS's documented example of a signed GET Object request (Signature Version 4, "Example: GET Object").
TEST(SigV4Request, CanonicalRequestAndStringToSignAreAwsDocumentedOnes) {
	auto request = AwsExample("/test.txt");
	request.amz_date = SigV4Request::AmzDate(1369353600); // 2013-05-24 00:00:00 UTC
	request.headers = {{"range", "bytes=0-9"}};
	EXPECT_EQ(request.amz_date, "20130524T000000Z");
	EXPECT_EQ(request.CanonicalRequest(), "GET\n/test.txt\n\n"
	                                      "host:examplebucket.s3.amazonaws.com\n"
	                                      "range:bytes=0-9\n"
	                                      "x-amz-content-sha256:"
	                                      "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\n"
	                                      "x-amz-date:20130524T000000Z\n\n"
	                                      "host;range;x-amz-content-sha256;x-amz-date\n"
	                                      "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	auto hash = "7344ae5b7ee6c3e7e6b0fe0640412a37625d1fbfff95c48bbb2dc43964946972";
	EXPECT_EQ(request.StringToSign(hash),
	          std::string("AWS4-HMAC-SHA256\n20130524T000000Z\n20130524/us-east-1/s3/aws4_request\n") + hash);
	EXPECT_EQ(request.Authorization("AKIAIOSFODNN7EXAMPLE", "f0e8"),
	          "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, "
	          "SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, Signature=f0e8");
}

// AWS's documented examples "GET Bucket Lifecycle" (a parameter without value) and "Get Bucket (List Objects)"
// (parameters sorted by name), and the form of a multipart part: an id that needs encoding, an unsigned payload.
TEST(SigV4Request, QueriesAreSortedAndEncodedAsAwsSignsThem) {
	auto request = AwsExample("/");
	const std::string unsigned_tail = "host;x-amz-content-sha256;x-amz-date\n"
	                                  "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
	const std::string headers =
	    "host:examplebucket.s3.amazonaws.com\n"
	    "x-amz-content-sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\n"
	    "x-amz-date:20130524T000000Z\n\n";
	request.query = {{"lifecycle", ""}};
	EXPECT_EQ(request.CanonicalRequest(), "GET\n/\nlifecycle=\n" + headers + unsigned_tail);
	request.query = {{"prefix", "J"}, {"max-keys", "2"}};
	EXPECT_EQ(request.CanonicalRequest(), "GET\n/\nmax-keys=2&prefix=J\n" + headers + unsigned_tail);

	request.method = "PUT";
	request.path = "/key";
	request.query = {{"uploadId", "a/b+c= d~"}, {"partNumber", "12"}};
	request.payload_sha256 = SigV4Request::UNSIGNED_PAYLOAD;
	EXPECT_EQ(request.CanonicalQuery(), "partNumber=12&uploadId=a%2Fb%2Bc%3D%20d~");
	EXPECT_EQ(request.CanonicalRequest(), "PUT\n/key\npartNumber=12&uploadId=a%2Fb%2Bc%3D%20d~\n"
	                                      "host:examplebucket.s3.amazonaws.com\n"
	                                      "x-amz-content-sha256:UNSIGNED-PAYLOAD\n"
	                                      "x-amz-date:20130524T000000Z\n\n"
	                                      "host;x-amz-content-sha256;x-amz-date\n"
	                                      "UNSIGNED-PAYLOAD");
}

TEST(ParseContentRange, TakesOnlyACompleteByteRange) {
	uint64_t first = 0, last = 0, total = 0;
	ASSERT_TRUE(ParseContentRange("bytes 100-199/200", first, last, total));
	EXPECT_EQ(first, 100u);
	EXPECT_EQ(last, 199u);
	EXPECT_EQ(total, 200u);
	EXPECT_FALSE(ParseContentRange("bytes */200", first, last, total));
	EXPECT_FALSE(ParseContentRange("bytes 0-9/*", first, last, total));
	EXPECT_FALSE(ParseContentRange("bytes 9-0/200", first, last, total));
	EXPECT_FALSE(ParseContentRange("bytes 0-200/200", first, last, total));
	EXPECT_FALSE(ParseContentRange("bytes 0-9/200x", first, last, total));
}

TEST(ObjectListing, ListedObjectsInOrderWithTheirVersions) {
	auto contents = [](const std::string &key, const std::string &size, const std::string &etag) {
		return "<Contents><Key>" + key + "</Key><LastModified>2026-11-24T22:05:31.000Z</LastModified><ETag>" + etag +
		       "</ETag><Size>" + size + "</Size><StorageClass>STANDARD</StorageClass></Contents>";
	};
	auto xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?><ListBucketResult><Name>b</Name><Prefix>dir/</Prefix>"
	           "<StartAfter>dir/a.parquet</StartAfter><KeyCount>2</KeyCount><MaxKeys>2</MaxKeys>"
	           "<IsTruncated>true</IsTruncated>" +
	           contents("dir/b&amp;c.parquet", "1234", "&quot;0123456789abcdef0123456789abcdef&quot;") +
	           contents("dir/d&#13;&#x41;.parquet", "5", "&#34;fedcba9876543210fedcba9876543210-2&#34;") +
	           "<CommonPrefixes><Prefix>dir/sub/</Prefix></CommonPrefixes></ListBucketResult>";
	std::vector<ListedObject> objects;
	bool truncated = false;
	ASSERT_TRUE(ParseObjectListing(xml, objects, truncated));
	EXPECT_TRUE(truncated);
	ASSERT_EQ(objects.size(), 2u);
	EXPECT_EQ(objects[0].key, "dir/b&c.parquet");
	EXPECT_EQ(objects[0].size, 1234u);
	EXPECT_EQ(objects[0].etag, "\"0123456789abcdef0123456789abcdef\"");
	EXPECT_EQ(objects[0].last_modified, November2026(24, 22, 5, 31));
	EXPECT_EQ(objects[1].key, "dir/d\rA.parquet");
	EXPECT_EQ(objects[1].etag, "\"fedcba9876543210fedcba9876543210-2\"");

	auto last = "<ListBucketResult><IsTruncated>false</IsTruncated>" + contents("k", "0", "&quot;e&quot;") +
	            "</ListBucketResult>";
	ASSERT_TRUE(ParseObjectListing(last, objects, truncated));
	EXPECT_FALSE(truncated);
	EXPECT_EQ(objects.size(), 1u);
}

TEST(ObjectListing, WhatIsNoListingIsRefused) {
	std::vector<ListedObject> objects;
	bool truncated = false;
	EXPECT_FALSE(ParseObjectListing("<Error><Code>AccessDenied</Code></Error>", objects, truncated));
	// An entry without its size, or with a reference that is not XML's, or cut off.
	EXPECT_FALSE(ParseObjectListing("<ListBucketResult><Contents><Key>k</Key><ETag>e</ETag>"
	                                "<LastModified>2026-11-24T22:05:31Z</LastModified></Contents></ListBucketResult>",
	                                objects, truncated));
	EXPECT_FALSE(ParseObjectListing("<ListBucketResult><Contents><Key>a&nbsp;b</Key><Size>1</Size><ETag>e</ETag>"
	                                "<LastModified>2026-11-24T22:05:31Z</LastModified></Contents></ListBucketResult>",
	                                objects, truncated));
	EXPECT_FALSE(ParseObjectListing("<ListBucketResult><Contents><Key>k</Key>", objects, truncated));
	// No objects at all is a listing.
	ASSERT_TRUE(ParseObjectListing("<ListBucketResult><IsTruncated>false</IsTruncated></ListBucketResult>", objects,
	                               truncated));
	EXPECT_TRUE(objects.empty());
}
