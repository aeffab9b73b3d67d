#include "core/requests/azure_shared_key.hpp"

#include <gtest/gtest.h>

using namespace httpfs2;

TEST(AzureConnection, ParsesAzuriteStyleStrings) {
	AzureConnection connection;
	ASSERT_TRUE(AzureConnection::Parse("DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=a2V5;"
	                                   "BlobEndpoint=http://127.0.0.1:10000/devstoreaccount1/;",
	                                   connection));
	EXPECT_EQ(connection.account_name, "devstoreaccount1");
	EXPECT_EQ(connection.account_key, "a2V5");
	EXPECT_EQ(connection.blob_endpoint, "http://127.0.0.1:10000/devstoreaccount1");
	EXPECT_EQ(connection.shared_access_signature, "");
}

TEST(AzureConnection, BuildsTheEndpointFromAccountAndSuffix) {
	AzureConnection connection;
	ASSERT_TRUE(AzureConnection::Parse("AccountName=acct;AccountKey=k2V5==", connection));
	EXPECT_EQ(connection.blob_endpoint, "https://acct.blob.core.windows.net");
	EXPECT_EQ(connection.account_key, "k2V5==") << "'=' inside a value belongs to the value";
	ASSERT_TRUE(AzureConnection::Parse(
	    "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=a2V5;EndpointSuffix=core.chinacloudapi.cn",
	    connection));
	EXPECT_EQ(connection.blob_endpoint, "https://acct.blob.core.chinacloudapi.cn");
}

TEST(AzureConnection, AcceptsASasTokenWithAnEndpoint) {
	AzureConnection connection;
	ASSERT_TRUE(AzureConnection::Parse(
	    "BlobEndpoint=https://acct.blob.core.windows.net;SharedAccessSignature=?sv=1&sig=x%3D", connection));
	EXPECT_EQ(connection.shared_access_signature, "sv=1&sig=x%3D");
	EXPECT_EQ(connection.account_key, "");
}

TEST(AzureConnection, RejectsStringsWithoutAUsableCredential) {
	AzureConnection connection;
	EXPECT_FALSE(AzureConnection::Parse("", connection));
	EXPECT_FALSE(AzureConnection::Parse("AccountName=acct", connection)) << "anonymous: left to the azure extension";
	EXPECT_FALSE(AzureConnection::Parse("AccountKey=a2V5;BlobEndpoint=http://h/acct", connection))
	    << "a SharedKey signature needs the account name";
	EXPECT_FALSE(AzureConnection::Parse("UseDevelopmentStorage=true", connection));
}

TEST(AzureBlobPath, TakesOnlyPathsWhoseAccountComesFromTheSecret) {
	AzureBlobPath path;
	ASSERT_TRUE(AzureBlobPath::Parse("az://test/dir/file.parquet", path));
	EXPECT_EQ(path.container, "test");
	EXPECT_EQ(path.blob, "dir/file.parquet");
	ASSERT_TRUE(AzureBlobPath::Parse("azure://c/b", path));
	EXPECT_EQ(path.container, "c");
	EXPECT_EQ(path.blob, "b");
	EXPECT_FALSE(AzureBlobPath::Parse("az://acct.blob.core.windows.net/c/b", path)) << "fully qualified";
	EXPECT_FALSE(AzureBlobPath::Parse("abfss://c@acct.dfs.core.windows.net/b", path));
	EXPECT_FALSE(AzureBlobPath::Parse("s3://bucket/key", path));
	EXPECT_FALSE(AzureBlobPath::Parse("az://c/", path)) << "no blob";
	EXPECT_FALSE(AzureBlobPath::Parse("az://c/dir/", path)) << "a directory";
	EXPECT_FALSE(AzureBlobPath::Parse("az://c", path));
}

TEST(AzureBlobPath, SpotsWildcards) {
	AzureBlobPath path;
	ASSERT_TRUE(AzureBlobPath::Parse("az://c/dir/*.parquet", path));
	EXPECT_TRUE(path.HasWildcard());
	ASSERT_TRUE(AzureBlobPath::Parse("az://c/dir/part=1/f.parquet", path));
	EXPECT_FALSE(path.HasWildcard());
}

TEST(AzureSharedKey, EncodesTheBlobNameIntoTheUrl) {
	AzureConnection connection;
	connection.blob_endpoint = "http://127.0.0.1:1/devstoreaccount1";
	AzureBlobPath path {"test", "dir/a b+c=d.parquet"};
	EXPECT_EQ(AzureBlobUrl(connection, path), "http://127.0.0.1:1/devstoreaccount1/test/dir/a%20b%2Bc%3Dd.parquet");
	EXPECT_EQ(UrlPath("http://127.0.0.1:1/devstoreaccount1/test/x?sv=1"), "/devstoreaccount1/test/x");
	EXPECT_EQ(UrlPath("https://acct.blob.core.windows.net"), "/");
}

TEST(AzureSharedKey, StringToSignHasTheDocumentedShape) {
	// Verb, eleven empty standard headers, x-ms-* headers lower-cased and sorted, then /<account><path>
	// (the account twice for path-style emulator URLs). Checked against the azure-storage-blob SDK's own policy.
	auto string_to_sign = SharedKeyStringToSign(
	    "GET", {{"x-ms-version", "2021-08-06"}, {"X-MS-Date", "Mon, 23 Nov 2026 00:03:37 GMT"}, {"x-ms-range", "r"}},
	    "devstoreaccount1", "/devstoreaccount1/test/blob.bin");
	EXPECT_EQ(string_to_sign, "GET\n\n\n\n\n\n\n\n\n\n\n\n"
	                          "x-ms-date:Mon, 23 Nov 2026 00:03:37 GMT\n"
	                          "x-ms-range:r\n"
	                          "x-ms-version:2021-08-06\n"
	                          "/devstoreaccount1/devstoreaccount1/test/blob.bin");
}

TEST(AzureSharedKey, StringToSignOfAPutBlockMatchesTheSdk) {
	// What azure-storage-blob 12.31's SharedKeyCredentialPolicy signs for the same Put Block: Content-Length and
	// Content-Type in their places, the encoded path, the query sorted by name with its values decoded. With
	// Azurite's public development key it signs to w/Lfva1PWwUeVBZE2WRYo7dp6wTOF/Rmz8E/2RPH3oc=.
	auto string_to_sign =
	    SharedKeyStringToSign("PUT", {{"x-ms-version", "2021-08-06"}, {"x-ms-date", "Mon, 23 Nov 2026 00:03:37 GMT"}},
	                          "devstoreaccount1", "/devstoreaccount1/test/dir/a%20b.csv",
	                          {{"comp", "block"}, {"blockid", "MDAwMDAx"}}, 5242880, "application/octet-stream");
	EXPECT_EQ(string_to_sign, "PUT\n\n\n5242880\n\napplication/octet-stream\n\n\n\n\n\n\n"
	                          "x-ms-date:Mon, 23 Nov 2026 00:03:37 GMT\n"
	                          "x-ms-version:2021-08-06\n"
	                          "/devstoreaccount1/devstoreaccount1/test/dir/a%20b.csv\n"
	                          "blockid:MDAwMDAx\n"
	                          "comp:block");
}

TEST(AzureSharedKey, AnEmptyBodyIsSignedWithoutContentLength) {
	// The SDK's string for a Put Blob of 0 bytes (Content-Length: 0 is signed as an empty line).
	auto string_to_sign =
	    SharedKeyStringToSign("PUT",
	                          {{"x-ms-date", "Mon, 23 Nov 2026 00:03:37 GMT"},
	                           {"x-ms-version", "2021-08-06"},
	                           {"x-ms-blob-type", "BlockBlob"}},
	                          "devstoreaccount1", "/devstoreaccount1/test/x.csv", {}, 0, "application/octet-stream");
	EXPECT_EQ(string_to_sign, "PUT\n\n\n\n\napplication/octet-stream\n\n\n\n\n\n\n"
	                          "x-ms-blob-type:BlockBlob\n"
	                          "x-ms-date:Mon, 23 Nov 2026 00:03:37 GMT\n"
	                          "x-ms-version:2021-08-06\n"
	                          "/devstoreaccount1/devstoreaccount1/test/x.csv");
}

TEST(AzureSharedKey, QueryNamesAreLowerCasedAndSorted) {
	auto string_to_sign = SharedKeyStringToSign("PUT", {}, "a", "/c/b", {{"Comp", "blocklist"}, {"b", "x/y+z="}});
	EXPECT_EQ(string_to_sign.substr(string_to_sign.find("/a/c/b")), "/a/c/b\nb:x/y+z=\ncomp:blocklist");
}

TEST(AzureBlockList, CommitsTheLatestBlockOfEachIdInOrder) {
	EXPECT_EQ(AzureBlockListXml({"MDAwMDAx", "MDAwMDAy"}),
	          "<?xml version=\"1.0\" encoding=\"utf-8\"?><BlockList><Latest>MDAwMDAx</Latest>"
	          "<Latest>MDAwMDAy</Latest></BlockList>");
	EXPECT_EQ(AzureBlockListXml({}), "<?xml version=\"1.0\" encoding=\"utf-8\"?><BlockList></BlockList>");
}

TEST(HttpDate, FormatsAndParsesRfc1123) {
	EXPECT_EQ(FormatHttpDate(784111777), "Sun, 06 Nov 1994 08:49:37 GMT");
	std::time_t seconds = 0;
	ASSERT_TRUE(ParseHttpDate("Sun, 06 Nov 1994 08:49:37 GMT", seconds));
	EXPECT_EQ(seconds, 784111777);
	ASSERT_TRUE(ParseHttpDate(FormatHttpDate(1795390000), seconds));
	EXPECT_EQ(seconds, 1795390000);
	EXPECT_FALSE(ParseHttpDate("Sunday, 06-Nov-94 08:49:37 GMT", seconds));
	EXPECT_FALSE(ParseHttpDate("Sun, 06 Foo 1994 08:49:37 GMT", seconds));
	EXPECT_FALSE(ParseHttpDate("Sun, 06 Nov 1994 08:49:37 CET", seconds));
}
