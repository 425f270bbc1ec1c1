// A band of destination rows (or, for column passes, columns): [begin, end). The unit of
// work of the reference functions and of the host backends' thread pools.
#pragma once

#include <cstdint>

namespace pixflow::detail {

struct Rows {
  std::int64_t begin = 0, end = 0;
};

}  // namespace pixflow::detail
