//===----------------------------------------------------------------------===//
//                         httpfs2
//
// core/cache/block_file.hpp
//
// One cached block as a file: a header, the key of the object version it belongs to, then the block's bytes.
//
//   offset  size  field
//        0     8  magic "h2fsblk\n"
//        8     4  format version (1)
//       12     4  path length P
//       16     4  version length V
//       20     4  CRC-32C of the block's bytes
//       24     8  the key's hash (HashCacheKey)
//       32     8  block index
//       40     8  block length L
//       48     4  CRC-32C of the 56 header bytes (this field as 0) and the key
//       52     4  zero
//       56     P  the key's path, then V bytes of its version
//   56 + P + V  L  the block's bytes
//
// Numbers are in the host's byte order (the cache is local; a file of another order fails its magic or checksums).
// The whole key is in every block, so a block is served only to its own key even when two keys share a hash, and
// the cache's listings (Info, Clear) need no other file whose writes would have to be ordered with the blocks'.
// A block is written to a temporary file and renamed onto its name, so a reader sees all of one block or none.
//===----------------------------------------------------------------------===//

#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace httpfs2 {

//! Which object version a block belongs to. The adapter composes both strings, e.g. "s3://bucket/key" and
//! "etag=\"...\";size=123;modified=...": never a credential, since both are written to disk.
struct CacheKey {
	std::string path;
	std::string version;
};

//! A 64-bit hash of the key, which names the object's folder. Not a proof of the key: block files carry the key.
uint64_t HashCacheKey(const CacheKey &key);

//! The size of the file of a block of `length` bytes of `key`: what the cache's bound counts.
uint64_t BlockFileSize(const CacheKey &key, uint64_t length);

//! What reading a block file found.
enum class BlockFileRead {
	//! The block, all checks passed, is in `out`.
	HIT,
	//! No such file (never written, evicted, removed by another process) or one that cannot be opened.
	ABSENT,
	//! A file that is not this block: torn, truncated, of another key, index or length, or failing a checksum.
	//! It has been removed (unless another process replaced it meanwhile).
	INVALID
};

//! Reads block `index` of `key`, `length` bytes, from `file` into `out`, checking all of the header and both
//! checksums. A hit stamps the file with the current time: its modification time is the cache's recency, which
//! all processes sharing the cache see.
BlockFileRead ReadBlockFile(const std::string &file, const CacheKey &key, uint64_t index, uint64_t length, char *out);

//! Writes the block to `temp_file` (created, never an existing file) and renames it onto `file` in the same folder.
//! False on any error, with errno of the call that failed (ENOENT: the folder is missing; EEXIST: the temporary
//! name is taken) and the temporary file removed.
bool WriteBlockFile(const std::string &temp_file, const std::string &file, const CacheKey &key, uint64_t index,
                    const char *data, uint64_t length);

//! Writes `head` then `length` bytes of `data` to `temp_file` (created, never an existing file) and renames it onto
//! `file`: a reader sees the whole file or none. False as WriteBlockFile.
bool WriteFileAtomically(const std::string &temp_file, const std::string &file, const std::string &head,
                         const char *data, uint64_t length);

//! The whole of `file` into `bytes` when it is at most `max_bytes` long; false when it is gone, longer or unreadable.
bool ReadSmallFile(const std::string &file, uint64_t max_bytes, std::string &bytes);

//! `value` as 16 hex digits: how the cache's files are named after hashes.
std::string HexOf(uint64_t value);

//! The names in `folder` but "." and ".."; none when it is gone (another process removed it).
std::vector<std::string> FolderNames(const std::string &folder);

//! The key and length of the block in `file`, from its header (checked) alone: what the cache's listings need.
//! False when the file is gone or its header is not valid.
bool ReadBlockKey(const std::string &file, CacheKey &key, uint64_t &length);

} // namespace httpfs2
