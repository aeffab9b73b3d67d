#include "core/requests/credential_replacements.hpp"

#include <gtest/gtest.h>

#include <map>

using namespace httpfs2;

namespace {
SigningKeys Keys(const std::string &token) {
	return SigningKeys {"key", "secret", token};
}

//! The session token Follow gives for `fingerprint`, "none" when it was never refused.
std::string Followed(const CredentialReplacements &replacements, const std::string &fingerprint) {
	SigningKeys keys;
	return replacements.Follow(fingerprint, keys) ? keys.session_token : "none";
}

//! Checks the session token Follow gives for each fingerprint ("none": never refused).
void ExpectFollowed(const CredentialReplacements &replacements, const std::map<std::string, std::string> &expected) {
	for (auto &entry : expected) {
		EXPECT_EQ(Followed(replacements, entry.first), entry.second) << entry.first;
	}
}
} // namespace

TEST(CredentialReplacements, OnlyRefusedCredentialsMapToTheirReplacement) {
	CredentialReplacements replacements;
	EXPECT_EQ(Followed(replacements, "x"), "none");
	replacements.Record("x", "y", Keys("token-y"));
	// The replacement itself, and credentials of another secret, are left as they are.
	ExpectFollowed(replacements, {{"x", "token-y"}, {"y", "none"}, {"other", "none"}});
	EXPECT_EQ(replacements.Changes(), 1u);
}

TEST(CredentialReplacements, ChainsResolveToTheNewestAndNeverCycle) {
	CredentialReplacements replacements;
	replacements.Record("x", "y", Keys("token-y"));
	replacements.Record("y", "z", Keys("token-z"));
	ExpectFollowed(replacements, {{"x", "token-z"}, {"y", "token-z"}, {"z", "none"}});
	// z refused in turn, and the secret holds x again: x is the newest, the others lead to it.
	replacements.Record("z", "x", Keys("token-x"));
	ExpectFollowed(replacements, {{"x", "none"}, {"y", "token-x"}, {"z", "token-x"}});
	EXPECT_EQ(replacements.Size(), 2u);
}

TEST(CredentialReplacements, SameFingerprintIsNoReplacement) {
	CredentialReplacements replacements;
	replacements.Record("x", "x", Keys("token-x"));
	EXPECT_EQ(Followed(replacements, "x"), "none");
	EXPECT_EQ(replacements.Changes(), 0u);
}

TEST(CredentialReplacements, BoundedOldestFirst) {
	CredentialReplacements replacements(3);
	for (int i = 0; i < 5; i++) {
		replacements.Record("refused-" + std::to_string(i), "fresh-" + std::to_string(i),
		                    Keys("token-" + std::to_string(i)));
	}
	EXPECT_EQ(replacements.Size(), 3u);
	ExpectFollowed(replacements,
	               {{"refused-0", "none"}, {"refused-1", "none"}, {"refused-2", "token-2"}, {"refused-4", "token-4"}});
	EXPECT_EQ(replacements.Changes(), 5u);
}
