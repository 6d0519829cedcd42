// Bounds every reader of outside data checks while reading (issue 23), so that no file, however
// hostile, can exhaust the stack (nesting), the heap (one endless line, billions of values) or
// the user's patience. The limits are far above any real file (the real traces and placement
// files nest at most 4 deep; the real traces' longest line is 2 KiB) and each error names the file, the
// byte offset and the limit.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <yaml-cpp/yaml.h>


namespace zepp {

// Lists and objects (JSON, YAML flow collections) inside one another. Real files: 4 at most.
constexpr int kMaxNesting = 64;
// Bytes of one line of a line-based file (CSV, JSONL): a JSONL record of a 10,000-token request
// with top-8 ids and gates is about 1 MiB.
constexpr size_t kMaxLineBytes = size_t(64) << 20;
// Numbers in one array of a placement or load file: [layers, experts] loads or [layers, slots]
// ids; DeepSeek-V3 has 58 x 288. The C++ core counts slots and experts in 32 bits.
constexpr size_t kMaxArrayValues = size_t(1) << 28;

// One expert's load in a load file or load-only trace (tokens routed to it, or a share of
// them): at most 1e15, about ten thousand times the tokens a large cluster serves in a day; a
// larger value is a unit mistake or corruption. Every reader refuses it naming the file and
// field (1e300 overflowed EPLB's float32 weights to "inf" while Zepp's rule took it).
constexpr double kMaxLoad = 1e15;

// Model layer ids of a placement file (TensorRT-LLM's keys; zepp.write_placement's layer_ids):
// [0, 2^30), far above any model's layers. The readers and the writers check the same bound.
constexpr int kMaxLayerId = 1 << 30;

// Bytes of one file a reader loads whole: simdjson's largest document (4 GiB), about 190 times
// the largest real trace file (22 MiB).
constexpr uint64_t kMaxFileBytes = uint64_t(4) << 30;

// Bytes this process may still allocate: physical memory, or what RLIMIT_AS leaves above the
// current address space when that is less.
double memory_budget_bytes();

// The size of the file at `path`, checked before it is read: InputError "PATH: expected a file of
// at most 4 GiB (read whole), got N bytes" beyond kMaxFileBytes, and "PATH: expected a regular
// file to read, got a FIFO" (or a directory, a device, a socket) for what is not one: opening a
// FIFO blocks until a writer comes. 0 for a missing file: its reader reports that.
uint64_t check_file_size(const std::string& path);

// Throws InputError "PATH: byte OFFSET: expected lists or objects nested at most 64 deep, got
// deeper" at the first bracket past kMaxNesting, counting '[' and '{' outside strings.
// yaml: '#' starts a comment to the end of the line and '...' quotes like "..." (YAML flow
// collections use the same brackets); a bracket inside a plain scalar may count, which can only
// refuse a file nested within a few levels of the limit, never let a deeper one through.
void check_nesting(std::string_view text, const std::string& path, bool yaml = false);

// Throws InputError "PATH:LINE: expected lines of at most 64 MiB, got one of N bytes" for the
// first line longer than kMaxLineBytes.
void check_line_length(std::string_view text, const std::string& path);

// Throws InputError "PATH:LINE: expected each key once per mapping, got KEY twice" for the first
// key repeated in any mapping of `node` (yaml-cpp keeps both and lookups find the first, where JSON
// readers and YAML 1.2 say a key is unique). Recursive: call after check_nesting.
void check_unique_keys(const YAML::Node& node, const std::string& path);

// The one YAML document of `text` (a null node for an empty file). Throws InputError
// "PATH:LINE: expected WHAT (yaml-cpp's message)" for malformed YAML, and "PATH:LINE: expected one
// YAML document, got N (the second starts here)" for a stream of several, whose later documents
// YAML::Load dropped silently. Call after check_nesting.
YAML::Node load_one_yaml_document(const std::string& text, const std::string& path, const std::string& what);

}  // namespace zepp
