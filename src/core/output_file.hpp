// Output files written safely (every `--csv`, `--out`, `--output`, `--timeline`, `--plots`).
// A path that exists and is not a regular file (a directory, a device such as /dev/null, a FIFO, a
// socket) is refused before any work, with ArgumentError naming the flag and what the path is: an
// atomic rename over a device replaces the device node, and a FIFO would block the program.
// Writes go to PATH.tmp beside the target, flushed, then renamed over it (so a killed process
// leaves the old or the new file, never half of one); PATH.tmp is removed on every error.
#pragma once
#include <string>

namespace zepp {

// "a directory", "a character device", "a FIFO", ... for an existing non-regular path; "" when
// `path` is a regular file (after following symbolic links) or does not exist.
std::string not_regular_kind(const std::string& path);

// For a path that does not exist when followed: "a broken symbolic link (to TARGET)" when it is a
// link (to nothing, or in a loop of links), else `otherwise` ("nothing at that path" said of a
// link the user can see with ls was no help).
std::string absent_kind(const std::string& path, const std::string& otherwise);

// Refuses (ArgumentError "<flag>: <path> is a character device; expected a regular file ...")
// a path that exists and is not a regular file, a path that names a folder by its form (ending
// in '/', or in "." or ".."), and a path whose folder exists but is not a folder. Missing
// folders are fine: every writer creates them (write_file_atomically, the timeline writers). Also
// refuses a path under a folder where no file can be created (such as /proc, or a read-only
// mount), found by creating and removing a probe file in the nearest existing folder.
void check_output_file(const std::string& path, const std::string& flag);

// Refuses, naming `flag`, a path that ends in '/' or whose last part is "." or "..": it names a
// folder, and a file written there would be "DIR/.json" or "DIR/-a2av.json".
void check_file_name(const std::string& path, const std::string& flag);

// Refuses a path that exists and is not a folder, or a missing one whose nearest existing
// ancestor is not a folder, and a folder (or that ancestor) where no file can be created (the
// probe of check_output_file) (ArgumentError naming the flag).
void check_output_dir(const std::string& path, const std::string& flag);

// Replaces `path` with `text` atomically, after check_output_file. Creates the folder. A symbolic
// link to an existing file is followed: its target is replaced, the link kept. Throws
// ArgumentError naming `flag` when it cannot; no temporary file is left behind.
void write_file_atomically(const std::string& path, const std::string& text, const std::string& flag);

}  // namespace zepp
