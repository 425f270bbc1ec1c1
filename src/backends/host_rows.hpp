// The two host backends run the reference's row-band functions: `ref` once over all rows,
// `cpu` over bands of rows on the thread pool. RowsImpl<F, Runner> turns a reference
// function `void F(args..., Rows)` into a registered implementation
// `void(const Exec&, const args&...)` that splits the rows of its first ImageView argument
// (the destination) with Runner.
#pragma once

#include <cstdint>
#include <tuple>
#include <type_traits>
#include <utility>

#include "src/base/backend.hpp"
#include "src/base/rows.hpp"

namespace pixflow::detail {

template <class Sig>
struct FnArgs;
template <class... A>
struct FnArgs<void (*)(A...)> {
  using tuple = std::tuple<A...>;
  static constexpr std::size_t size = sizeof...(A);
};

/// Rows of the first ImageView among args (the destination).
template <class... A>
std::int64_t destination_rows(const A&... args) {
  std::int64_t n = -1;
  auto pick = [&](const auto& x) {
    if constexpr (std::is_same_v<std::decay_t<decltype(x)>, ImageView>)
      if (n < 0) n = x.height();
  };
  (pick(args), ...);
  static_assert((std::is_same_v<std::decay_t<A>, ImageView> || ...), "no destination argument");
  return n;
}

template <auto F, class Runner, class Idx = std::make_index_sequence<FnArgs<decltype(F)>::size - 1>>
struct RowsImpl;
template <auto F, class Runner, std::size_t... I>
struct RowsImpl<F, Runner, std::index_sequence<I...>> {
  using Args = typename FnArgs<decltype(F)>::tuple;
  static void call(const Exec& e, const std::decay_t<std::tuple_element_t<I, Args>>&... args) {
    Runner::run(e, destination_rows(args...), [&](Rows r) { F(args..., r); });
  }
  static constexpr auto fn = &call;
};

}  // namespace pixflow::detail
