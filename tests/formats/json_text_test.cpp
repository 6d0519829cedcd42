// Bytes that are not UTF-8 in what the program prints as JSON (a trace path whose name is not):
// nlohmann's dump threw type_error 316 and `zepp simulate --format json` ended in "internal error".
#include <string>

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "core/utf8.hpp"
#include "formats/json_text.hpp"

using namespace zepp;

TEST(Utf8, ValidTextComesBackUnchanged) {
  for (const std::string s : {"", "plain ascii", "caf\xc3\xa9", "\xe2\x82\xac 5", "\xf0\x9f\x98\x80", "\xf4\x8f\xbf\xbf",
                              "\xed\x9f\xbf", "\xee\x80\x80"})
    EXPECT_EQ(escape_invalid_utf8(s), s);
}

TEST(Utf8, EachInvalidByteIsWrittenAsBackslashX) {
  EXPECT_EQ(escape_invalid_utf8("caf\xe9"), "caf\\xe9");                  // Latin-1 byte
  EXPECT_EQ(escape_invalid_utf8("\xc0\x80"), "\\xc0\\x80");               // overlong NUL
  EXPECT_EQ(escape_invalid_utf8("\xe0\x80\x80"), "\\xe0\\x80\\x80");      // overlong 3-byte form
  EXPECT_EQ(escape_invalid_utf8("\xed\xa0\x80"), "\\xed\\xa0\\x80");      // a UTF-16 surrogate
  EXPECT_EQ(escape_invalid_utf8("\xf4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80");  // above U+10FFFF
  EXPECT_EQ(escape_invalid_utf8("\xf5"), "\\xf5");
  EXPECT_EQ(escape_invalid_utf8("a\xe2\x82"), "a\\xe2\\x82");            // cut short at the end
  EXPECT_EQ(escape_invalid_utf8("\xe2\x82z\xc3\xa9"), "\\xe2\\x82z\xc3\xa9");  // valid text after it is kept
  EXPECT_EQ(escape_invalid_utf8(std::string("\0\xff", 2)), std::string("\0\\xff", 5));
}

// Whatever the bytes, the result is valid UTF-8 (it dumps) and keeps every valid byte sequence.
RC_GTEST_PROP(Utf8, ResultAlwaysDumpsAsJson, (const std::string& s)) {
  const std::string out = escape_invalid_utf8(s);
  RC_ASSERT(nlohmann::json(out).dump().size() >= 2u);
  RC_ASSERT(escape_invalid_utf8(out) == out);
  RC_ASSERT(out.size() >= s.size());
}

TEST(JsonText, EscapesStringsAndKeysOnlyWhenTheDumpWouldFail) {
  const nlohmann::json ok = {{"workload", "caf\xc3\xa9"}, {"n", 3}};
  EXPECT_EQ(json_text(ok), ok.dump());
  EXPECT_EQ(json_text(ok, 2), ok.dump(2));
  const nlohmann::json bad = {{"description", "/tmp/tr\xe9 layer 1"},
                              {"k\xff", {1, "x\xfe", {{"inner", "\xe9"}}}},
                              {"latency_us", 1.5}};
  EXPECT_EQ(json_text(bad), R"({"description":"/tmp/tr\\xe9 layer 1","k\\xff":[1,"x\\xfe",{"inner":"\\xe9"}],)"
                            R"("latency_us":1.5})");
}
