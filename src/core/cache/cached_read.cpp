#include "core/cache/cached_read.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

namespace httpfs2 {

namespace {
constexpr uint64_t BLOCK = BlockCache::BLOCK_SIZE;

uint64_t BlockLength(uint64_t index, uint64_t object_size) {
	return std::min(BLOCK, object_size - index * BLOCK);
}

//! Copies what `range` wants of the bytes `held` (a span of the object) into `destination`; the bytes copied.
uint64_t CopyOverlap(const ByteRange &held, const char *bytes, const ByteRange &range, char *destination) {
	auto start = std::max(held.offset, range.offset);
	auto end = std::min(held.End(), range.End());
	if (start >= end) {
		return 0;
	}
	std::memcpy(destination + (start - range.offset), bytes + (start - held.offset), end - start);
	return end - start;
}

ByteRange BlockRange(uint64_t index, uint64_t object_size) {
	return ByteRange {index * BLOCK, BlockLength(index, object_size)};
}

//! Pieces start below 16 TiB (their offset takes 44 bits of the index); a block further is kept whole.
constexpr uint64_t PIECE_OFFSET_LIMIT = uint64_t(1) << 44;

//! What a read keeps of one block it touches: the whole block, or, when it wants only part of it, that part alone
//! (a piece, PieceIndex).
struct Unit {
	//! The block's number.
	uint64_t block;
	//! Its index in the cache: the block's, or the piece's.
	uint64_t index;
	//! The bytes of the object it holds.
	ByteRange range;

	bool IsPiece() const {
		return index != block;
	}
};

std::vector<Unit> UnitsOf(const ByteRange &range, uint64_t object_size) {
	std::vector<Unit> units;
	auto span = BlockSpan(range, object_size);
	for (auto block = span.offset / BLOCK; block * BLOCK < span.End(); block++) {
		auto whole = BlockRange(block, object_size);
		auto start = std::max(whole.offset, range.offset);
		ByteRange part {start, std::min(whole.End(), range.End()) - start};
		if (part.length == whole.length || part.offset >= PIECE_OFFSET_LIMIT) {
			units.push_back(Unit {block, block, whole});
		} else {
			units.push_back(Unit {block, PieceIndex(part), part});
		}
	}
	return units;
}

//! The bytes of the object piece `index` holds (PieceIndex).
ByteRange PieceRange(uint64_t index) {
	return ByteRange {(index & ~(uint64_t(1) << 63)) >> 18, index & (BLOCK - 1)};
}

//! A piece the cache holds, and the bytes of the object it holds.
struct HeldPiece {
	uint64_t index;
	ByteRange range;
};

//! Pieces of `held` that cover `range` from its start on, each time the one that reaches furthest from where the last
//! one ended; none when they leave a gap.
std::vector<HeldPiece> CoverOf(const ByteRange &range, const std::vector<HeldPiece> &held) {
	std::vector<HeldPiece> cover;
	for (auto covered = range.offset; covered < range.End();) {
		const HeldPiece *best = nullptr;
		for (auto &piece : held) {
			if (piece.range.offset <= covered && piece.range.End() > covered &&
			    (!best || piece.range.End() > best->range.End())) {
				best = &piece;
			}
		}
		if (!best) {
			return {};
		}
		cover.push_back(*best);
		covered = best->range.End();
	}
	return cover;
}

//! One listing of an object's folder, where one read looks for the pieces of its blocks and the claims on them:
//! taken when first needed, and again when needed after Refresh (the read's looks after its claims, and each round of
//! a wait for other processes, want the folder as it is then). A read of a few blocks and two pieces listed it up to
//! ten times, each listing reading every name in it (a cold projection: a third of its cache's extra CPU). Blocks
//! whole are found by name, never listed.
class FolderView {
public:
	FolderView(BlockCache &cache_p, const CacheKey &key_p) : cache(cache_p), key(key_p) {
	}
	//! BlockCache::HeldIndices.
	std::vector<uint64_t> Held(uint64_t first, uint64_t end) {
		return cache.HeldIndices(key, Listing(), first, end);
	}
	//! BlockCache::ClaimedElsewhere.
	std::vector<uint64_t> ClaimedElsewhere(uint64_t first, uint64_t end) {
		return cache.ClaimedElsewhere(key, Listing(), first, end);
	}
	void Refresh() {
		listed = false;
	}

private:
	const FolderListing &Listing() {
		if (!listed) {
			listing = cache.ListFolder(key);
			listed = true;
		}
		return listing;
	}

	BlockCache &cache;
	const CacheKey &key;
	FolderListing listing;
	bool listed = false;
};

//! The object's tail pieces the cache holds, added to `held` when `whole` is one of its last blocks (false when it is
//! not): they cover the end of those blocks too. A footer's metadata read apart from its tail (DuckDB reads it so),
//! served from the tail piece cold, is part of a span read warm.
bool AddHeldTailPieces(FolderView &folder, const ByteRange &whole, uint64_t object_size, std::vector<HeldPiece> &held) {
	if (whole.End() + BLOCK <= object_size) {
		return false;
	}
	for (auto index : folder.Held(TailPieceIndex(1), TailPieceIndex(BLOCK + 1))) {
		auto length = index - TailPieceIndex(0);
		if (length <= object_size) {
			held.push_back(HeldPiece {index, ByteRange {object_size - length, length}});
		}
	}
	return true;
}

//! The pieces of block `whole` the cache holds (not its tail pieces), added to `held`.
void AddHeldPieces(FolderView &folder, const ByteRange &whole, std::vector<HeldPiece> &held) {
	for (auto index : folder.Held(PieceIndex(ByteRange {whole.offset, 0}), PieceIndex(ByteRange {whole.End(), 0}))) {
		held.push_back(HeldPiece {index, PieceRange(index)});
	}
}

//! Serves `unit` from the cache: from its block whole, or, for a piece, from pieces held that cover it (the same
//! bytes read in one read once and in two another time: a scan that reads a file's column chunks one by one, another
//! that reads them in one span). Reads into `buffer` (BLOCK bytes) and copies what `range` wants into `destination`;
//! false when what is held does not serve it.
bool GetUnit(BlockCache &cache, const CacheKey &key, FolderView &folder, const Unit &unit, uint64_t object_size,
             char *buffer, const ByteRange &range, char *destination, uint64_t &served) {
	if (!unit.IsPiece()) {
		if (!cache.Get(key, unit.index, unit.range.length, buffer)) {
			return false;
		}
		served += CopyOverlap(unit.range, buffer, range, destination);
		return true;
	}
	auto whole = BlockRange(unit.block, object_size);
	// Holds before Get: a block not held is no miss of the cache's.
	if (cache.Holds(key, unit.block) && cache.Get(key, unit.block, whole.length, buffer)) {
		served += CopyOverlap(whole, buffer, range, destination);
		return true;
	}
	std::vector<HeldPiece> held;
	AddHeldPieces(folder, whole, held);
	auto cover = CoverOf(unit.range, held);
	if (cover.empty() && AddHeldTailPieces(folder, whole, object_size, held)) {
		cover = CoverOf(unit.range, held);
	}
	if (cover.empty()) {
		return false;
	}
	auto from = unit.range.offset;
	for (auto &piece : cover) {
		if (!cache.Get(key, piece.index, piece.range.length, buffer)) {
			return false; // removed meanwhile, or corrupt (and removed now)
		}
		ByteRange part {from, std::min(piece.range.End(), unit.range.End()) - from};
		served += CopyOverlap(piece.range, buffer, part, destination + (part.offset - range.offset));
		from = part.End();
	}
	return true;
}

//! Another read's fetch of `unit`, or of its whole block, waited for.
struct AwaitedUnit {
	Unit unit;
	//! The bytes of the object that fetch brings: the unit's, or its block's.
	ByteRange fetched;
	std::shared_ptr<FetchingBlocks::Fetch> fetch;
};

//! Another read's fetch under way that brings `unit`: of its block whole, or of the unit itself; null when none.
std::shared_ptr<FetchingBlocks::Fetch> FetchUnderWay(BlockCache &cache, const CacheKey &key, const Unit &unit,
                                                     uint64_t object_size, ByteRange &fetched) {
	if (unit.IsPiece()) {
		if (auto whole = cache.Fetching().Find(key, unit.block)) {
			fetched = BlockRange(unit.block, object_size);
			return whole;
		}
	}
	fetched = unit.range;
	return cache.Fetching().Find(key, unit.index);
}

//! For a piece: whether another process claimed the fetch of its whole block, or of pieces of the block that with
//! what the cache holds cover it (that process's read spans more or other bytes of the block: on DuckDB 2.0 two
//! processes' reads of one Parquet file end at different bytes of its last block, one within its footer's tail piece),
//! which bring the piece.
bool CoverClaimedElsewhere(BlockCache &cache, const CacheKey &key, FolderView &folder, const Unit &piece,
                           uint64_t object_size) {
	if (cache.FetchedElsewhere(key, piece.block)) {
		return true;
	}
	auto whole = BlockRange(piece.block, object_size);
	std::vector<HeldPiece> pieces;
	for (auto index :
	     folder.ClaimedElsewhere(PieceIndex(ByteRange {whole.offset, 0}), PieceIndex(ByteRange {whole.End(), 0}))) {
		pieces.push_back(HeldPiece {index, PieceRange(index)});
	}
	if (pieces.empty()) {
		return false;
	}
	auto claimed = pieces.size();
	AddHeldPieces(folder, whole, pieces);
	AddHeldTailPieces(folder, whole, object_size, pieces);
	// A cover of held pieces alone is no claim: the wait for one would not end.
	auto cover = CoverOf(piece.range, pieces);
	return std::any_of(cover.begin(), cover.end(), [&](const HeldPiece &used) {
		return std::any_of(pieces.begin(), pieces.begin() + claimed,
		                   [&](const HeldPiece &other) { return other.index == used.index; });
	});
}

//! Whether another process claimed the fetch of `unit`: of the unit itself, or, for a piece, of what covers it.
bool ClaimedElsewhere(BlockCache &cache, const CacheKey &key, FolderView &folder, const Unit &unit,
                      uint64_t object_size) {
	return cache.FetchedElsewhere(key, unit.index) ||
	       (unit.IsPiece() && CoverClaimedElsewhere(cache, key, folder, unit, object_size));
}

//! Fetches units[first, last] (adjacent in the object), copies what `range` wants of them into `destination`, hands
//! them to the cache's writer, then ends the claims on them (`claims`, when given) with their bytes. False when the
//! cache refused them.
bool FetchUnits(BlockCache &cache, CacheKey key, const std::vector<Unit> &units, size_t first, size_t last,
                const ByteRange &range, char *destination, const BlockFetch &fetch, BlockClaims *claims) {
	ByteRange fetched {units[first].range.offset, units[last].range.End() - units[first].range.offset};
	// Into a buffer of the cache's, never the caller's: the units keep it until the writer has stored them, while
	// the caller's memory may be freed as soon as this returns (a cancelled query).
	std::shared_ptr<char> bytes(new char[fetched.length], std::default_delete<char[]>());
	fetch(fetched, bytes.get(), key);
	CopyOverlap(fetched, bytes.get(), range, destination);
	bool kept = true;
	std::vector<SharedBytes> held;
	for (auto i = first; i <= last; i++) {
		// Each unit shares the buffer (aliasing: it points at its own bytes, the buffer goes with the last one).
		held.emplace_back(bytes, bytes.get() + (units[i].range.offset - fetched.offset));
		kept = kept && cache.PutInBackground(key, units[i].index, held.back(), units[i].range.length);
	}
	// After the hand-over: a read that finds no fetch under way once these end finds the units pending.
	for (auto i = first; claims && i <= last; i++) {
		claims->End(units[i].index, std::move(held[i - first]));
	}
	return kept;
}

//! How often a read waiting on another process's fetch looks for the unit's file.
constexpr std::chrono::milliseconds OTHER_PROCESS_POLL {25};

//! Waits for the units another process claimed until their files appear, copies what `range` wants of them into
//! `destination` and ends this read's claims on them with their bytes (for this process's waiters); a unit whose claim
//! ends (its fetch failed, or its block was not kept) or goes stale without its file is appended to `failed`, for
//! this read to fetch. Throws BlockWaitCancelled once `cancelled` says so.
void WaitForOtherProcesses(BlockCache &cache, const CacheKey &key, uint64_t object_size, std::vector<Unit> units,
                           const ByteRange &range, char *destination, IoStats &stats, BlockClaims &claims,
                           const CancelCheck &cancelled, std::vector<uint64_t> &failed) {
	if (units.empty()) {
		return;
	}
	std::unique_ptr<char[]> buffer(new char[BLOCK]);
	FolderView folder(cache, key);
	while (!units.empty()) {
		std::vector<Unit> waiting;
		// The claims first, then the files, each from one listing: a claim's process renames the file in place before
		// it removes the claim, so a file missing from a listing made before the claim was seen to end is looked for
		// in one made after.
		folder.Refresh();
		std::vector<bool> live;
		for (auto &unit : units) {
			live.push_back(ClaimedElsewhere(cache, key, folder, unit, object_size));
		}
		folder.Refresh();
		for (size_t i = 0; i < units.size(); i++) {
			auto &unit = units[i];
			// Holds before Get, and before the unit's buffer: most polls find nothing there yet. A piece that another
			// piece covers is looked for once the claims on it end.
			bool there = cache.Holds(key, unit.index) || (unit.IsPiece() && (cache.Holds(key, unit.block) || !live[i]));
			std::shared_ptr<char> bytes;
			if (there) {
				bytes.reset(new char[unit.range.length], std::default_delete<char[]>());
			}
			uint64_t copied = 0;
			if (there &&
			    GetUnit(cache, key, folder, unit, object_size, buffer.get(), unit.range, bytes.get(), copied)) {
				CopyOverlap(unit.range, bytes.get(), range, destination);
				stats.Add(Counter::CACHE_FETCHES_SHARED);
				claims.End(unit.index, std::move(bytes));
			} else if (live[i]) {
				waiting.push_back(unit);
			} else {
				failed.push_back(unit.block);
			}
		}
		units.swap(waiting);
		if (units.empty()) {
			return;
		}
		if (cancelled && cancelled()) {
			throw BlockWaitCancelled();
		}
		std::this_thread::sleep_for(OTHER_PROCESS_POLL);
	}
}

//! The position in `units` of the unit of block `block`.
size_t PositionOf(const std::vector<Unit> &units, uint64_t block) {
	return block - units.front().block;
}
} // namespace

ByteRange BlockSpan(const ByteRange &range, uint64_t object_size) {
	auto start = range.offset / BLOCK * BLOCK;
	auto end = std::min(object_size, (range.End() + BLOCK - 1) / BLOCK * BLOCK);
	return ByteRange {start, end - start};
}

uint64_t PieceIndex(const ByteRange &piece) {
	// Past any block and tail piece: the top bit, then the offset, then the length (under a block's: 18 bits).
	return (uint64_t(1) << 63) | (piece.offset << 18) | piece.length;
}

bool ReadThroughBlockCache(BlockCache &cache, CacheKey key, uint64_t object_size, const ByteRange &range,
                           char *destination, IoStats &stats, const BlockFetch &fetch, const CancelCheck &cancelled) {
	if (range.length == 0) {
		return true;
	}
	auto units = UnitsOf(range, object_size);
	// Units held are copied out at once.
	std::vector<Unit> missing;
	uint64_t served = 0;
	std::unique_ptr<char[]> buffer(new char[BLOCK]);
	FolderView folder(cache, key);
	for (auto &unit : units) {
		if (GetUnit(cache, key, folder, unit, object_size, buffer.get(), range, destination, served)) {
			stats.Add(Counter::CACHE_HITS);
			continue;
		}
		missing.push_back(unit);
	}
	// Counted once the claims below looked again: a unit written between the first look's listing and its look at
	// the blocks still being written was in neither, and is held (a hit: the test of it failed 1 run in 12-40 under
	// ASan, counting a miss that fetched nothing).
	uint64_t misses = missing.size();
	// A missing unit another read is fetching is waited for, not fetched twice; the others are claimed.
	BlockClaims claims(cache.Fetching(), key);
	std::vector<AwaitedUnit> awaited;
	std::vector<Unit> claimed;
	//! Units another process claimed (BlockCache::ClaimFetch): their files are waited for.
	std::vector<Unit> elsewhere;
	for (auto &unit : missing) {
		// A piece's block fetched whole by another read brings the piece too.
		auto whole = unit.IsPiece() ? cache.Fetching().Find(key, unit.block) : nullptr;
		if (whole) {
			awaited.push_back(AwaitedUnit {unit, BlockRange(unit.block, object_size), std::move(whole)});
			continue;
		}
		auto other = claims.Claim(unit.index);
		if (other) {
			awaited.push_back(AwaitedUnit {unit, unit.range, std::move(other)});
			continue;
		}
		if (unit.IsPiece() && CoverClaimedElsewhere(cache, key, folder, unit, object_size)) {
			elsewhere.push_back(unit); // its block or a piece covering it, which another process is fetching
			continue;
		}
		bool ours = cache.ClaimFetch(key, unit.index);
		folder.Refresh(); // what is held now, the claim made
		if (GetUnit(cache, key, folder, unit, object_size, buffer.get(), range, destination, served)) {
			// A fetch that ended between the miss and the claims (here or in another process), or a write that did
			// (this process's writer): its unit is held now.
			cache.EndFetchClaim(key, unit.index);
			claims.End(unit.index, nullptr);
			stats.Add(Counter::CACHE_HITS);
			misses--;
		} else if (ours) {
			claimed.push_back(unit);
		} else {
			elsewhere.push_back(unit);
		}
	}
	stats.Add(Counter::CACHE_MISSES, misses);
	bool kept = true;
	if (!claimed.empty()) {
		// One fetch from the first unit claimed to the last: the units between that others fetch are fetched here
		// too (one request, not two), and not waited for.
		auto first_claimed = claimed.front().block;
		auto last_claimed = claimed.back().block;
		auto fetched_here = [&](const Unit &unit) {
			return unit.block >= first_claimed && unit.block <= last_claimed;
		};
		awaited.erase(std::remove_if(awaited.begin(), awaited.end(),
		                             [&](const AwaitedUnit &other) { return fetched_here(other.unit); }),
		              awaited.end());
		elsewhere.erase(std::remove_if(elsewhere.begin(), elsewhere.end(), fetched_here), elsewhere.end());
		try {
			kept = FetchUnits(cache, key, units, PositionOf(units, first_claimed), PositionOf(units, last_claimed),
			                  range, destination, fetch, &claims);
		} catch (...) {
			// Nothing was handed over: the other processes waiting on these claims fetch the units themselves.
			for (auto &unit : claimed) {
				cache.EndFetchClaim(key, unit.index);
			}
			throw;
		}
	}
	std::vector<uint64_t> failed;
	for (auto &other : awaited) {
		auto bytes = other.fetch->Wait(cancelled);
		if (!bytes) {
			failed.push_back(other.unit.block); // that fetch failed: this read fetches the unit itself
			continue;
		}
		stats.Add(Counter::CACHE_FETCHES_SHARED);
		CopyOverlap(other.fetched, bytes.get(), range, destination);
	}
	WaitForOtherProcesses(cache, key, object_size, elsewhere, range, destination, stats, claims, cancelled, failed);
	if (!failed.empty()) {
		std::sort(failed.begin(), failed.end());
		kept = FetchUnits(cache, key, units, PositionOf(units, failed.front()), PositionOf(units, failed.back()), range,
		                  destination, fetch, &claims) &&
		       kept;
	}
	stats.Add(Counter::CACHE_BYTES_SERVED, served);
	return kept;
}

bool ReadHeldBlocks(BlockCache &cache, const CacheKey &key, uint64_t object_size, const ByteRange &range,
                    char *destination, IoStats &stats, const CancelCheck &cancelled) {
	auto units = UnitsOf(range, object_size);
	// A unit being fetched by another read is as good as held: its bytes are waited for once the others are served.
	std::vector<AwaitedUnit> awaited;
	//! Units another process claimed: as good as held while the claim lives.
	std::vector<Unit> elsewhere;
	std::unique_ptr<char[]> buffer(new char[BLOCK]);
	uint64_t served = 0;
	FolderView folder(cache, key);
	for (auto &unit : units) {
		if (GetUnit(cache, key, folder, unit, object_size, buffer.get(), range, destination, served)) {
			continue;
		}
		ByteRange fetched;
		auto fetch = FetchUnderWay(cache, key, unit, object_size, fetched);
		if (fetch) {
			awaited.push_back(AwaitedUnit {unit, fetched, std::move(fetch)});
		} else if (ClaimedElsewhere(cache, key, folder, unit, object_size)) {
			elsewhere.push_back(unit);
		} else {
			return false; // not held, or corrupt (and removed now): what was copied is the caller's to overwrite
		}
	}
	for (auto &other : awaited) {
		auto bytes = other.fetch->Wait(cancelled);
		if (!bytes) {
			return false;
		}
		CopyOverlap(other.fetched, bytes.get(), range, destination);
	}
	// No claims of this read's: the wait ends no fetch here, and one that fails elsewhere leaves it to the caller.
	BlockClaims no_claims(cache.Fetching(), key);
	std::vector<uint64_t> failed;
	WaitForOtherProcesses(cache, key, object_size, elsewhere, range, destination, stats, no_claims, cancelled, failed);
	if (!failed.empty()) {
		return false;
	}
	stats.Add(Counter::CACHE_HITS, units.size() - awaited.size() - elsewhere.size());
	stats.Add(Counter::CACHE_FETCHES_SHARED, awaited.size());
	stats.Add(Counter::CACHE_BYTES_SERVED, served);
	return true;
}

bool FillBlockCache(BlockCache &cache, const CacheKey &key, uint64_t object_size, const ByteRange &held,
                    const char *bytes) {
	if (held.End() > object_size) {
		return true;
	}
	for (auto index = (held.offset + BLOCK - 1) / BLOCK; index * BLOCK < held.End(); index++) {
		auto length = BlockLength(index, object_size);
		if (index * BLOCK + length > held.End() || cache.Holds(key, index)) {
			continue;
		}
		std::shared_ptr<char> block(new char[length], std::default_delete<char[]>());
		std::memcpy(block.get(), bytes + (index * BLOCK - held.offset), length);
		if (!cache.PutInBackground(key, index, std::move(block), length)) {
			return false;
		}
	}
	return true;
}

uint64_t TailPieceIndex(uint64_t length) {
	// Far past any block of an object (an index is its offset over 256 KiB).
	return (uint64_t(1) << 62) + length;
}

bool ReadHeldTailPiece(BlockCache &cache, const CacheKey &key, uint64_t object_size, uint64_t piece_length,
                       const ByteRange &range, char *destination, IoStats &stats) {
	if (piece_length == 0 || piece_length > std::min(BLOCK, object_size) || range.offset < object_size - piece_length ||
	    range.End() > object_size) {
		return false;
	}
	std::unique_ptr<char[]> piece(new char[piece_length]);
	if (!cache.Get(key, TailPieceIndex(piece_length), piece_length, piece.get())) {
		return false;
	}
	CopyOverlap(ByteRange {object_size - piece_length, piece_length}, piece.get(), range, destination);
	stats.Add(Counter::CACHE_HITS);
	stats.Add(Counter::CACHE_BYTES_SERVED, range.length);
	return true;
}

bool ReadTailPieceOrClaimIt(BlockCache &cache, const CacheKey &key, uint64_t object_size, uint64_t piece_length,
                            const ByteRange &range, char *destination, IoStats &stats, const CancelCheck &cancelled) {
	if (piece_length == 0 || piece_length > std::min(BLOCK, object_size) ||
	    range.offset != object_size - piece_length || range.length != piece_length) {
		return false; // no piece FillTailPiece would put, so no claim it would end
	}
	auto index = TailPieceIndex(piece_length);
	// The caller counted the miss: a piece fetched elsewhere counts as shared, not as a hit too.
	IoStats hit;
	while (!cache.ClaimFetch(key, index)) {
		// Another process's live claim: its piece is read once written, as a block's is (WaitForOtherProcesses).
		if (ReadHeldTailPiece(cache, key, object_size, piece_length, range, destination, hit)) {
			stats.Add(Counter::CACHE_FETCHES_SHARED);
			return true;
		}
		// A claim that ended without the piece (or went stale) is this read's at the next ClaimFetch; one of this
		// process's other reads is waited for as another process's is.
		if (cancelled && cancelled()) {
			throw BlockWaitCancelled();
		}
		std::this_thread::sleep_for(OTHER_PROCESS_POLL);
	}
	// A fetch that ended between the caller's miss and the claim.
	if (ReadHeldTailPiece(cache, key, object_size, piece_length, range, destination, hit)) {
		cache.EndFetchClaim(key, index);
		stats.Add(Counter::CACHE_FETCHES_SHARED);
		return true;
	}
	return false;
}

bool FillTailPiece(BlockCache &cache, const CacheKey &key, uint64_t object_size, uint64_t piece_length,
                   const ByteRange &held, const char *bytes) {
	if (piece_length == 0 || piece_length > std::min(BLOCK, object_size) || held.End() != object_size ||
	    held.length < piece_length) {
		return true;
	}
	std::shared_ptr<char> piece(new char[piece_length], std::default_delete<char[]>());
	std::memcpy(piece.get(), bytes + (held.length - piece_length), piece_length);
	return cache.PutInBackground(key, TailPieceIndex(piece_length), std::move(piece), piece_length);
}

} // namespace httpfs2
