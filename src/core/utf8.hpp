// Text from outside the program (file names as the file system gives them, names read from
// traces) made safe for outputs that must be UTF-8, such as JSON.
#pragma once
#include <string>
#include <string_view>

namespace zepp {

// `text` with every byte that does not belong to a well-formed UTF-8 sequence (RFC 3629: no
// overlong forms, no surrogates, nothing above U+10FFFF) written as the four characters \xNN
// (lower-case hex, as Python's "backslashreplace" writes them); valid text comes back unchanged.
std::string escape_invalid_utf8(std::string_view text);

}  // namespace zepp
