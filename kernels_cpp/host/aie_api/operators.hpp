// aie_api/operators.hpp -- aiedsl's HOST stand-in for the AIE API's operators.hpp: the
// operators a kernel gets with `using namespace aie::operators;`, on the host header's types.
//
// The AIE API's operators.hpp (include/aie_api/operators.hpp, 2025; read in the jgmelber/aie_api
// mirror, commit 2a408059) defines, in namespace aie::operators, each as a call of one aie::
// function, which is what these call here (so an operator computes exactly what the function
// does in this header, its wrapping and its modes included):
//   -a            aie::neg(a)          a - b    aie::sub(a, b)      a + b    aie::add(a, b)
//   a < b         aie::lt(a, b)        a <= b   aie::le(a, b)       a > b    aie::gt(a, b)
//   a >= b        aie::ge(a, b)        a == b   aie::eq(a, b)       a != b   aie::neq(a, b)
//   v << n        aie::upshift(v, n)   v >> n   aie::downshift(v, n)
//   a += b        a = a + b            a -= b   a = a - b
//   a | b         aie::bit_or(a, b)    a ^ b    aie::bit_xor(a, b)  a & b    aie::bit_and(a, b)
//   ~a            aie::bit_not(a)
// Its operands are its ArithmeticType (concepts.hpp: Elem || Vector || Accum: a scalar or vector
// element, an aie::vector or a vector reference, an aie::accum); << and >> take a Vector. It has
// no * (a product is aie::mul, into an accumulator), / or %.
//
// Here an operator also needs a vector or an accumulator among its operands: this header's
// bfloat16 is a class, and scalar bfloat16 arithmetic (a + b of two bfloat16) must keep using
// its own conversions, as the core's does; with two scalars the AIE API's would not be chosen
// either (C++ uses the built-in operators of built-in types). An operator whose aie:: function
// this header lacks for those operands (an accumulator plus an accumulator, -acc, a scalar &
// a vector) fails with a static assertion that says so ("aiedsl host header: ..."), which
// aiedsl reports as not covered by this header (aiedsl/kernels/host_errors.py).

#ifndef AIEDSL_HOST_AIE_API_OPERATORS_HPP
#define AIEDSL_HOST_AIE_API_OPERATORS_HPP

#include "aie.hpp"

namespace aie {
namespace detail {
template <typename T> struct is_api_vector : std::false_type {};
template <typename T, unsigned N> struct is_api_vector<vector<T, N>> : std::true_type {};
template <typename T, unsigned N> struct is_api_vector<vector_ref<T, N>> : std::true_type {};
template <typename T> struct is_api_accum : std::false_type {};
template <typename Acc, unsigned N> struct is_api_accum<accum<Acc, N>> : std::true_type {};

// A vector reference (what *it of a vector iterator is) read as the vector it refers to; any
// other operand as it is.
template <typename T> decltype(auto) operand(const T &x) { return x; }
template <typename T, unsigned N> vector<T, N> operand(const vector_ref<T, N> &x) { return x; }
} // namespace detail

namespace operators {
// The AIE API's operand concepts (concepts.hpp), on this header's types.
template <typename T> concept Vector = detail::is_api_vector<std::remove_cvref_t<T>>::value;
template <typename T> concept Accum = detail::is_api_accum<std::remove_cvref_t<T>>::value;
template <typename T> concept Elem =
    std::is_arithmetic_v<std::remove_cvref_t<T>> || std::is_same_v<std::remove_cvref_t<T>, bfloat16>;
template <typename T> concept ArithmeticType = Elem<T> || Vector<T> || Accum<T>;
// See the head: a vector or an accumulator among the operands.
template <typename... Ts> concept ApiOperands =
    (ArithmeticType<Ts> && ...) && ((Vector<Ts> || Accum<Ts>) || ...);

#define AIEDSL_HOST_BINARY_OPERATOR(OP, FN)                                                  \
  template <typename T1, typename T2>                                                        \
    requires ApiOperands<T1, T2>                                                             \
  constexpr auto operator OP(const T1 &a, const T2 &b) {                                     \
    if constexpr (requires { aie::FN(detail::operand(a), detail::operand(b)); })             \
      return aie::FN(detail::operand(a), detail::operand(b));                                \
    else                                                                                     \
      static_assert(sizeof(T1) == 0, "aiedsl host header: aie::operators' operator" #OP       \
                    " calls aie::" #FN ", which the header lacks for these operands");        \
  }
AIEDSL_HOST_BINARY_OPERATOR(-, sub)
AIEDSL_HOST_BINARY_OPERATOR(+, add)
AIEDSL_HOST_BINARY_OPERATOR(<, lt)
AIEDSL_HOST_BINARY_OPERATOR(<=, le)
AIEDSL_HOST_BINARY_OPERATOR(>, gt)
AIEDSL_HOST_BINARY_OPERATOR(>=, ge)
AIEDSL_HOST_BINARY_OPERATOR(==, eq)
AIEDSL_HOST_BINARY_OPERATOR(!=, neq)
AIEDSL_HOST_BINARY_OPERATOR(|, bit_or)
AIEDSL_HOST_BINARY_OPERATOR(^, bit_xor)
AIEDSL_HOST_BINARY_OPERATOR(&, bit_and)
#undef AIEDSL_HOST_BINARY_OPERATOR

#define AIEDSL_HOST_UNARY_OPERATOR(OP, FN)                                                   \
  template <typename T>                                                                      \
    requires ApiOperands<T>                                                                  \
  constexpr auto operator OP(const T &a) {                                                   \
    if constexpr (requires { aie::FN(detail::operand(a)); })                                 \
      return aie::FN(detail::operand(a));                                                    \
    else                                                                                     \
      static_assert(sizeof(T) == 0, "aiedsl host header: aie::operators' operator" #OP        \
                    " calls aie::" #FN ", which the header lacks for this operand");          \
  }
AIEDSL_HOST_UNARY_OPERATOR(-, neg)
AIEDSL_HOST_UNARY_OPERATOR(~, bit_not)
#undef AIEDSL_HOST_UNARY_OPERATOR

template <typename V>
  requires Vector<V>
constexpr auto operator<<(const V &a, unsigned shift) {
  return aie::upshift(detail::operand(a), shift);
}
template <typename V>
  requires Vector<V>
constexpr auto operator>>(const V &a, unsigned shift) {
  return aie::downshift(detail::operand(a), shift);
}

// lhs = lhs + rhs, as the AIE API's: an accumulator plus a vector stays an accumulator, a
// vector reference stores the sum where it refers.
template <typename T1, typename T2>
  requires ApiOperands<T1, T2>
constexpr T1 &operator+=(T1 &lhs, const T2 &rhs) {
  lhs = lhs + rhs;
  return lhs;
}
template <typename T1, typename T2>
  requires ApiOperands<T1, T2>
constexpr T1 &operator-=(T1 &lhs, const T2 &rhs) {
  lhs = lhs - rhs;
  return lhs;
}
} // namespace operators
} // namespace aie

#endif // AIEDSL_HOST_AIE_API_OPERATORS_HPP
