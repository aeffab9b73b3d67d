#include "core/prefetch/prediction.hpp"

namespace httpfs2 {

constexpr size_t PrefetchLimits::FOOTERS_AHEAD;
constexpr size_t PrefetchLimits::TAILS_AHEAD;
constexpr uint64_t PrefetchLimits::MAX_WHOLE_BYTES;
constexpr size_t PrefetchLimits::MAX_FILES_PER_QUERY;
constexpr size_t PrefetchLimits::MAX_FOLDERS_PER_QUERY;
constexpr size_t PrefetchLimits::FOLDER_SLACK;
constexpr size_t PrefetchLimits::LISTINGS_REMEMBERED;
constexpr size_t PrefetchLimits::FILES_PER_LISTING;

} // namespace httpfs2
