// Text from outside (a job's log, a file a container can write, a command's
// output) may hold any byte. It is made well-formed UTF-8 where it enters
// records, events and protos: JSON writers and protobuf string fields
// require it, and one bad byte must never stop the agent. Raw log streams
// stay byte-exact; only text taken from them is cleaned. And where such
// text is shown on a terminal, EscapeForTerminal below makes it inert.
#pragma once

#include <string>
#include <string_view>

namespace gpuctl {

// Well-formed UTF-8 (RFC 3629): no overlong forms, no surrogates, nothing
// above U+10FFFF, no truncated sequence.
bool IsValidUtf8(std::string_view text);

// `text` with every ill-formed sequence replaced by U+FFFD, one per maximal
// ill-formed subpart (as the WHATWG and Unicode "best practice" decoders
// do). Well-formed text comes back unchanged.
std::string SanitizeUtf8(std::string_view text);

// The well-formed sequence that starts at text[at] (at < text.size()): its
// length in bytes (1-4) and its code point; length 0 when the bytes there
// are ill-formed (then code_point is 0).
struct Utf8Sequence {
  size_t length = 0;
  char32_t code_point = 0;
};
Utf8Sequence DecodeUtf8At(std::string_view text, size_t at);

// Text from outside is also shown to a person on a terminal (an event's
// message, a state reason, a GPU name, a node's error), and a terminal obeys
// control sequences in it: ESC ] 0 ; ... BEL sets the window title, ESC [ 2 J
// clears the screen, ESC [ 8 m hides text, the 8-bit CSI (U+009B) does the
// same without an ESC, bidi controls (U+202E) reorder what is shown. Every
// human-readable output passes such text through EscapeForTerminal. `train
// logs` stays byte-exact by contract; JSON output has its own escaping.
//
// `text` with every character a terminal would act on, or that would break
// a line or a table, written as a visible escape:
//   - C0 controls and DEL: \n, \r, \t, and \xHH for the others ("\x1b");
//   - C1 controls U+0080-U+009F: \u0080 .. \u009f;
//   - bidi controls and isolates (U+061C, U+200E, U+200F, U+202A-U+202E,
//     U+2066-U+2069) and the line and paragraph separators U+2028, U+2029:
//     \u202e etc.;
//   - each byte of ill-formed UTF-8: \xHH ("\xff", a truncated sequence
//     byte by byte).
// Printable UTF-8 ("Ünïcode", CJK, emoji) and backslashes are kept as they
// are. The result holds no character this function escapes, so applying it
// again changes nothing: a cell may be escaped by its formatter and again by
// the table it lands in.
std::string EscapeForTerminal(std::string_view text);

// The same, but line feeds are kept: for blocks that are shown as lines (a
// command's output tail, a multi-line error). Each line is then as safe as
// EscapeForTerminal makes it; a caller that must not gain lines uses that.
std::string EscapeForTerminalKeepingLines(std::string_view text);

}  // namespace gpuctl
