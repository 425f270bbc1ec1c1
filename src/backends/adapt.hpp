// Registered implementations from plain backend functions. A backend's function takes the
// op's arguments followed by one thing the backend supplies from the Exec: the reference
// takes `Rows` (a band of destination rows), the CUDA entry points take the `cudaStream_t`.
// Implement<F, Tail> turns `void F(args..., last)` into the table's
// `void(const Exec&, const args&...)`, with Tail::call(exec, f, args...) calling f(last).
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

template <auto F, class Tail, class Idx = std::make_index_sequence<FnArgs<decltype(F)>::size - 1>>
struct Implement;
template <auto F, class Tail, std::size_t... I>
struct Implement<F, Tail, std::index_sequence<I...>> {
  using Args = typename FnArgs<decltype(F)>::tuple;
  static void call(const Exec& e, const std::decay_t<std::tuple_element_t<I, Args>>&... args) {
    Tail::call(
        e, [&](auto last) { F(args..., last); }, args...);
  }
};

/// Registers F (through Tail) as op's implementation on backend b for the formats s takes.
template <auto F, class Tail>
void add_impl(ImplTable& t, const char* op, Backend b, Support s = {}) {
  t.add(op, b, &Implement<F, Tail>::call, s);
}
/// Same, as the backend's fallback for the op (ImplTable::add_fallback).
template <auto F, class Tail>
void add_fallback_impl(ImplTable& t, const char* op, Backend b, Support s = {}) {
  t.add_fallback(op, b, &Implement<F, Tail>::call, s);
}

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

/// The host backends' tail: the destination's rows, split by Runner::run(exec, n, f(Rows)).
template <class Runner>
struct RowBands {
  template <class F, class... A>
  static void call(const Exec& e, F&& f, const A&... args) {
    Runner::run(e, destination_rows(args...), f);
  }
};

}  // namespace pixflow::detail
