//===----------------------------------------------------------------------===//
//                         httpfs2
//
// core/read_ahead/format_knowledge.hpp
//
// What a file format tells read-ahead of one file, so that the mechanism (ObjectReadAhead, which fetches, holds and
// serves ranges) stays blind to formats: the predictor a reader starts with, whether bytes read hold metadata to
// learn the file's layout from, what to fetch once it is learnt before any reader comes, and the patterns shared
// with the files read alike (a dataset's columns). One per object; its object calls it under its own lock, except
// Parse.
//===----------------------------------------------------------------------===//

#pragma once

#include "core/formats/file_layout.hpp"
#include "core/read_ahead/access_predictor.hpp"

#include <functional>
#include <memory>
#include <vector>

namespace httpfs2 {

class FormatKnowledge {
public:
	virtual ~FormatKnowledge() = default;

	//! A predictor for a new reader: from the layout once it is known, else what the format's readers do without it.
	virtual std::unique_ptr<AccessPredictor> NewPredictor() const = 0;
	//! Shares what `predictor` learnt of how its reader reads with the files read alike: the watchers to run (outside
	//! any lock) when that changed what they share.
	virtual std::vector<std::function<void()>> SharePattern(const AccessPredictor &predictor) = 0;
	//! Runs `watcher` whenever what the files read alike share changes; false when this file shares with none.
	virtual bool WatchShared(std::function<void()> watcher) = 0;
	//! Whether `read` reads the file's data, not only the metadata its format's reader reads first.
	virtual bool ReadsData(const ByteRange &read) const = 0;

	//! Whether `range` (its bytes in `data`) holds the file's whole metadata, in `metadata`, to parse. False once a
	//! layout is installed, and for bytes that hold none.
	virtual bool MetadataIn(const ByteRange &range, const char *data, ByteRange &metadata) = 0;
	//! The layout in the `length` bytes of metadata at `bytes`; null for what is not read. Called outside the
	//! object's lock (a large footer takes a while), beside the other calls: reads nothing that changes.
	virtual std::shared_ptr<const FileLayout> Parse(const char *bytes, uint64_t length) const = 0;
	//! Predicts from `layout` from now on (parsed here, or learnt by another open of the same version); false for a
	//! layout of another format, which it ignores.
	virtual bool Install(std::shared_ptr<const FileLayout> layout) = 0;
	virtual std::shared_ptr<const FileLayout> Layout() const = 0;
	//! What to fetch before any reader comes once the layout is known (what the files read alike read first); none
	//! when nothing says.
	virtual std::vector<PredictedRange> FirstRanges(const PredictionLimits &limits) const = 0;
};

} // namespace httpfs2
