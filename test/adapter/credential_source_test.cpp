// S3CredentialSource inside a real DuckDB: a secret type "s3" of the test's (httpfs is not loaded here) holds the
// credentials, a query's transaction keeps seeing them as they were, and another connection replaces them. After one
// source's refresh, sources made later with the refused credentials start from the replacement without a lookup of
// their own; another secret holding the same keys, and a secret replaced again, are followed exactly.

#include "adapter/common/extension_state.hpp"
#include "adapter/stores/s3_signing.hpp"
#include "duckdb.hpp"
#include "duckdb/main/client_data.hpp"
#include "duckdb/main/secret/secret_manager.hpp"

#include <gtest/gtest.h>

using namespace duckdb;
using httpfs2::Counter;
using httpfs2::ExtensionState;
using httpfs2::IoStats;
using httpfs2::ResolveS3Object;
using httpfs2::S3Address;
using httpfs2::S3CredentialSource;
using httpfs2::S3Credentials;

namespace {

unique_ptr<BaseSecret> CreateS3Secret(ClientContext &, CreateSecretInput &input) {
	auto scope = input.scope.empty() ? vector<string> {"s3://"} : input.scope;
	auto secret = make_uniq<KeyValueSecret>(scope, input.type, input.provider, input.name);
	for (auto &option : input.options) {
		secret->secret_map[option.first] = option.second;
	}
	return std::move(secret);
}

//! A database with httpfs2's state and a secret type "s3" whose secrets are their options.
class CredentialSourceTest : public ::testing::Test {
protected:
	CredentialSourceTest() : db(nullptr), query(db), user(db) {
		state = ExtensionState::GetOrCreate(*db.instance);
		auto &secrets = SecretManager::Get(*db.instance);
		SecretType type;
		type.name = "s3";
		type.deserializer = KeyValueSecret::Deserialize<KeyValueSecret>;
		type.default_provider = "config";
		secrets.RegisterSecretType(type);
		CreateSecretFunction create;
		create.secret_type = "s3";
		create.provider = "config";
		create.function = CreateS3Secret;
		for (auto name : {"key_id", "secret", "session_token", "region", "endpoint", "url_style"}) {
			create.named_parameters[name] = LogicalType::VARCHAR;
		}
		create.named_parameters["use_ssl"] = LogicalType::BOOLEAN;
		secrets.RegisterSecretFunction(create, OnCreateConflict::ERROR_ON_CONFLICT);
	}

	//! The secret `name` (scope `scope`) with session token `token`, created or replaced by the user's connection.
	void SetSecret(const std::string &name, const std::string &scope, const std::string &token) {
		auto result = user.Query("CREATE OR REPLACE SECRET " + name +
		                         " (TYPE s3, KEY_ID 'key', SECRET 'secret', SESSION_TOKEN '" + token +
		                         "', REGION 'us-east-1', ENDPOINT '127.0.0.1:9', URL_STYLE 'path', USE_SSL false, "
		                         "SCOPE '" +
		                         scope + "')");
		ASSERT_FALSE(result->HasError()) << result->GetError();
	}

	optional_ptr<FileOpener> Opener() {
		return ClientData::Get(*query.context).file_opener.get();
	}

	//! The credentials the query's transaction resolves for `path`.
	S3Credentials Resolved(const std::string &path) {
		S3Credentials credentials;
		S3Address address;
		EXPECT_TRUE(ResolveS3Object(path, Opener(), credentials, address)) << path;
		return credentials;
	}

	uint64_t Refreshed() const {
		return stats.Snapshot().Get(Counter::CREDENTIALS_REFRESHED);
	}

	static std::string Token(S3CredentialSource &source, uint64_t &generation) {
		return source.Current(generation).session_token;
	}

	DuckDB db;
	//! The connection of the query, whose transaction began before the user replaced the secret.
	Connection query;
	Connection user;
	std::shared_ptr<ExtensionState> state;
	IoStats stats;
};

TEST_F(CredentialSourceTest, LaterSourcesStartFromTheReplacementOfRefusedCredentials) {
	SetSecret("rotated", "s3://bucket", "token-1");
	SetSecret("other", "s3://other", "token-1"); // the same keys, another secret
	query.BeginTransaction();
	auto path = "s3://bucket/a.parquet";
	auto before = Resolved(path);
	ASSERT_EQ(before.session_token, "token-1");

	SetSecret("rotated", "s3://bucket", "token-2");
	ASSERT_EQ(Resolved("s3://bucket/b.parquet").session_token, "token-1"); // the query's transaction sees the old one

	S3CredentialSource first(path, before, Opener());
	uint64_t generation;
	ASSERT_EQ(Token(first, generation), "token-1");
	ASSERT_TRUE(first.Refresh(generation, stats)); // the store refused token-1
	EXPECT_EQ(Token(first, generation), "token-2");
	EXPECT_EQ(Refreshed(), 1u);

	// Made later with the credentials the transaction resolves: starts from token-2, with no lookup counted.
	S3CredentialSource later("s3://bucket/b.parquet", Resolved("s3://bucket/b.parquet"), Opener());
	uint64_t later_generation;
	EXPECT_EQ(Token(later, later_generation), "token-2");
	EXPECT_EQ(Refreshed(), 1u);

	// Another secret with the same keys is not the refused one.
	S3CredentialSource other("s3://other/c.parquet", Resolved("s3://other/c.parquet"), Opener());
	EXPECT_EQ(Token(other, generation), "token-1");

	// The secret replaced again, token-2 refused in turn: a chain resolves to the newest, for sources made with
	// token-1 and for those holding token-2 already (without a lookup of their own).
	SetSecret("rotated", "s3://bucket", "token-3");
	ASSERT_TRUE(later.Refresh(later_generation, stats));
	EXPECT_EQ(Token(later, later_generation), "token-3");
	EXPECT_EQ(Refreshed(), 2u);
	EXPECT_EQ(Token(first, generation), "token-3");
	S3CredentialSource last("s3://bucket/d.parquet", before, Opener());
	EXPECT_EQ(Token(last, generation), "token-3");
	EXPECT_EQ(Refreshed(), 2u);
	query.Rollback();

	// A query begun now sees token-3, which nothing replaced.
	query.BeginTransaction();
	S3CredentialSource fresh(path, Resolved(path), Opener());
	EXPECT_EQ(Token(fresh, generation), "token-3");
	query.Rollback();
}

TEST_F(CredentialSourceTest, UnchangedCredentialsRecordNothing) {
	SetSecret("steady", "s3://bucket", "token-1");
	query.BeginTransaction();
	auto path = "s3://bucket/a.parquet";
	S3CredentialSource source(path, Resolved(path), Opener());
	uint64_t generation;
	ASSERT_EQ(Token(source, generation), "token-1");
	EXPECT_FALSE(source.Refresh(generation, stats)); // refused, but the secret holds the same: the refusal stands
	EXPECT_EQ(state->credential_replacements->Size(), 0u);
	query.Rollback();
}

} // namespace
