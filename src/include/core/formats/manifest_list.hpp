//===----------------------------------------------------------------------===//
//                         httpfs2
//
// core/formats/manifest_list.hpp
//
// The manifests an Iceberg manifest list names. DuckDB's iceberg extension reads a table's manifests one after
// another, each a round trip; the manifest list names them all (path and length) before the first is read, so they
// can be fetched side by side. The list is an Avro object container file; its records are not decoded field by field
// (that needs the schema): each record begins with manifest_path (a string) and manifest_length (a long), so a string
// under the list's own scheme and bucket that ends in ".avro" and is followed by a positive long is taken for one.
// A string that only looks like one costs a fetch no open asks for; never wrong bytes (a fetch is checked against
// the length the list gives, and an open uses it only at that length). A manifest names its data files so too, which
// the scan opens in that order: their tails can be fetched ahead of the opens.
//===----------------------------------------------------------------------===//

#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace httpfs2 {

struct ListedManifest {
	std::string path;
	uint64_t length = 0;

	bool operator==(const ListedManifest &other) const {
		return path == other.path && length == other.length;
	}
};

class ManifestList {
public:
	//! Inflates a raw deflate stream (Avro's "deflate" codec) into `out`; false when it cannot.
	using Inflater = std::function<bool(const char *data, size_t size, std::string &out)>;

	//! Whether `path` names an Iceberg manifest list: a file "snap-*.avro".
	static bool IsManifestList(const std::string &path);
	//! The manifests the list in `bytes` (the whole file) names, in its order, each once, those under `prefix` (the
	//! list's scheme and bucket, "s3://bucket/") alone. Empty when `bytes` is not an Avro container file of the null
	//! or deflate codec, or a block does not inflate.
	static std::vector<ListedManifest> Read(const std::string &bytes, const std::string &prefix,
	                                        const Inflater &inflate);
	//! The Parquet data files a manifest in `bytes` (the whole file) names, in its order, each once, those under
	//! `prefix` alone: each string under `prefix` ending in ".parquet" that its length precedes (a data file's
	//! file_path; the entries' other fields need the schema). Entries of any status: a deleted one names a file the
	//! scan does not open. Empty as for Read.
	static std::vector<std::string> DataFiles(const std::string &bytes, const std::string &prefix,
	                                          const Inflater &inflate);
	//! "scheme://authority/" of `path`; empty when it has none.
	static std::string SchemeAndAuthority(const std::string &path);
};

} // namespace httpfs2
