// Which bytes of a 64-byte block are of a class, one bit each (bit i for
// byte i): the log's hot scans find word starts and line ends this way
// rather than a byte, or a libc call, at a time. SSE2 (every x86-64 has
// it) tests sixteen bytes an instruction; elsewhere eight bytes are tested
// in one 64-bit word.
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>
#include <string_view>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace gpuctl::train {

// The bytes one mask covers, one bit each.
inline constexpr size_t kMaskBlock = 64;

// The high bit of each of `bytes`'s eight bytes, set where that byte is a
// word byte ([A-Za-z0-9_]). Each range test subtracts within a byte that
// cannot borrow from the next (its high bit set first), so no byte sees
// another's result.
constexpr uint64_t WordBytesOf(uint64_t bytes) {
  constexpr uint64_t kOnes = 0x0101010101010101ull;
  constexpr uint64_t kHigh = 0x8080808080808080ull;
  const uint64_t low7 = bytes & ~kHigh;
  auto in = [](uint64_t v, uint64_t lo, uint64_t hi) {
    return ((v | kHigh) - kOnes * lo) & ((kOnes * hi | kHigh) - v) & kHigh;
  };
  const uint64_t word = in(low7, '0', '9') | in(low7 | (kOnes * 0x20), 'a', 'z') | in(low7, '_', '_');
  return word & ~bytes;  // a byte of 0x80 or more is no word byte
}

// The high bit of each byte that is '\n' or '\r'. A byte equals c when
// x = byte ^ c is zero: neither x's high bit is set nor does x's low seven
// bits plus 0x7f carry into it (a carry never crosses into the next byte).
constexpr uint64_t LineEndBytesOf(uint64_t bytes) {
  constexpr uint64_t kOnes = 0x0101010101010101ull;
  constexpr uint64_t kHigh = 0x8080808080808080ull;
  auto equal = [](uint64_t v, uint64_t c) {
    const uint64_t x = v ^ (kOnes * c);
    return ~(((x & ~kHigh) + ~kHigh) | x) & kHigh;
  };
  return equal(bytes, '\n') | equal(bytes, '\r');
}

namespace byte_masks_detail {
// Byte i's high bit (bit 8i+7) times 2^(49-7i) lands on bit 56+i; no other
// product reaches the top byte.
constexpr uint64_t GatherHighBits(uint64_t high_bits) { return (high_bits * 0x0002040810204081ull) >> 56; }

template <uint64_t (*kBytesOf)(uint64_t)>
uint64_t BitsPortable(const char* p) {
  uint64_t bits = 0;
  for (int block = 0; block < 8; ++block) {
    uint64_t bytes = 0;
    std::memcpy(&bytes, p + 8 * block, 8);
    if constexpr (std::endian::native == std::endian::big) bytes = __builtin_bswap64(bytes);  // byte 0 lowest
    bits |= GatherHighBits(kBytesOf(bytes)) << (8 * block);
  }
  return bits;
}
}  // namespace byte_masks_detail

// Any machine: the word bytes and the line ends of the 64 bytes at `p`.
inline uint64_t WordBitsPortable(const char* p) { return byte_masks_detail::BitsPortable<WordBytesOf>(p); }
inline uint64_t LineEndBitsPortable(const char* p) { return byte_masks_detail::BitsPortable<LineEndBytesOf>(p); }

#if defined(__SSE2__)
// Unsigned range tests as min(x - lo, hi - lo) == x - lo.
inline uint64_t WordBitsSse2(const char* p) {
  const __m128i zero_digit = _mm_set1_epi8('0'), nine = _mm_set1_epi8(9);
  const __m128i case_bit = _mm_set1_epi8(0x20), lower_a = _mm_set1_epi8('a'), twenty_five = _mm_set1_epi8(25);
  const __m128i underscore = _mm_set1_epi8('_');
  uint64_t bits = 0;
  for (int block = 0; block < 4; ++block) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * block));
    const __m128i digit = _mm_sub_epi8(v, zero_digit);
    const __m128i letter = _mm_sub_epi8(_mm_or_si128(v, case_bit), lower_a);
    const __m128i word = _mm_or_si128(
        _mm_or_si128(_mm_cmpeq_epi8(_mm_min_epu8(digit, nine), digit),
                     _mm_cmpeq_epi8(_mm_min_epu8(letter, twenty_five), letter)),
        _mm_cmpeq_epi8(v, underscore));
    bits |= static_cast<uint64_t>(static_cast<uint32_t>(_mm_movemask_epi8(word))) << (16 * block);
  }
  return bits;
}

inline uint64_t LineEndBitsSse2(const char* p) {
  const __m128i newline = _mm_set1_epi8('\n'), carriage_return = _mm_set1_epi8('\r');
  uint64_t bits = 0;
  for (int block = 0; block < 4; ++block) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * block));
    const __m128i end = _mm_or_si128(_mm_cmpeq_epi8(v, newline), _mm_cmpeq_epi8(v, carriage_return));
    bits |= static_cast<uint64_t>(static_cast<uint32_t>(_mm_movemask_epi8(end))) << (16 * block);
  }
  return bits;
}
#endif

inline uint64_t WordBits(const char* p) {
#if defined(__SSE2__)
  return WordBitsSse2(p);
#else
  return WordBitsPortable(p);
#endif
}

inline uint64_t LineEndBits(const char* p) {
#if defined(__SSE2__)
  return LineEndBitsSse2(p);
#else
  return LineEndBitsPortable(p);
#endif
}

// The bits of the 64 bytes of `text` from `at` by `bits` (WordBits,
// LineEndBits): past its end, zero bytes, which are of neither class.
template <uint64_t (*kBits)(const char*)>
uint64_t BitsAt(std::string_view text, size_t at) {
  const size_t left = text.size() - at;
  if (left >= kMaskBlock) return kBits(text.data() + at);
  char block[kMaskBlock] = {};
  std::memcpy(block, text.data() + at, left);
  return kBits(block);
}

}  // namespace gpuctl::train
