// What a user reads is what the program does (issue 26): `zepp --version`, results files that say
// which program made them, a report that refuses to mix programs, and output paths that are not
// regular files refused before any work.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <vector>

#include "../common/run_zepp.hpp"
#include "../common/temp_dir.hpp"

namespace zepp::testing {
namespace {
namespace fs = std::filesystem;

bool is_char_device(const fs::path& p) {
  struct stat st {};
  return ::lstat(p.c_str(), &st) == 0 && S_ISCHR(st.st_mode);
}

const std::string kFig9Small = "experiment fig9 --workloads deepseek-v2-lite --nodes 4 --sizes 1 --strategies a2av,zepp --jobs 1";

TEST(Version, PrintsVersionAndCommit) {
  const auto r = run_zepp("--version");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(std::regex_search(r.out, std::regex(R"(^zepp \d+\.\d+\.\d+ \(commit ([0-9a-f]{40}(\+dirty)?|unknown)\)\n$)")))
      << r.out;
}

TEST(Help, ShowsNoValidatorNames) {
  for (const char* cmd : {"--help", "simulate --help", "experiment --help", "place --help", "run --help"}) {
    const auto r = run_zepp(cmd);
    EXPECT_EQ(r.status, 0) << cmd;
    EXPECT_EQ(r.out.find("NONEMPTY"), std::string::npos) << cmd << ":\n" << r.out;
  }
}

// The acceptance test of issue 26: a character device as --csv (made here, never /dev/null itself)
// is refused with exit status 2 before any work, and stays a device.
TEST(Outputs, CharacterDeviceCsvRefusedBeforeWork) {
  const fs::path dir = scratch("device");
  const fs::path dev = dir / "null";
  if (::mknod(dev.c_str(), S_IFCHR | 0666, ::makedev(1, 3)) != 0) GTEST_SKIP() << "mknod needs root: " << std::strerror(errno);
  const auto r = run_zepp(kFig9Small + " --csv " + dev.string() + " --plots " + (dir / "plots").string());
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("is a character device"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--csv"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("configurations"), std::string::npos) << "the sweep started: " << r.err;
  EXPECT_TRUE(is_char_device(dev)) << "the device was replaced";
  EXPECT_FALSE(fs::exists(dir / "plots")) << "work began before the check";
  EXPECT_FALSE(fs::exists(dev.string() + ".tmp"));
}

TEST(Outputs, DirectoryFifoAndFileRefusedWithoutStrayFiles) {
  const fs::path dir = scratch("kinds");
  fs::create_directories(dir / "folder.csv");
  ASSERT_EQ(::mkfifo((dir / "fifo.csv").c_str(), 0644), 0);
  std::ofstream(dir / "plots-file") << "x";
  struct Case {
    std::string args, says;
  };
  const std::vector<Case> cases = {
      {kFig9Small + " --csv " + (dir / "folder.csv").string(), "is a directory"},
      {kFig9Small + " --csv " + (dir / "fifo.csv").string(), "is a FIFO"},
      {kFig9Small + " --csv " + (dir / "ok.csv").string() + " --plots " + (dir / "plots-file").string(), "--plots"},
      // Without --csv, whose default is in --plots, a bad --plots was reported as "--csv: ... not a folder".
      {kFig9Small + " --plots " + (dir / "plots-file").string(), "--plots: " + (dir / "plots-file").string() + " is a regular file; expected a folder"},
      {"experiment fig10 --plots " + (dir / "plots-file").string(), "--plots: " + (dir / "plots-file").string() + " is a regular file; expected a folder"},
      {"experiment fig11 --plots " + (dir / "plots-file").string(), "--plots: " + (dir / "plots-file").string() + " is a regular file; expected a folder"},
      {"experiment fig11 --csv " + (dir / "folder.csv").string(), "is a directory"},
      {"experiment report --fig9 " + std::string(ZEPP_SOURCE_DIR) + "/docs/results/fig9.csv --out " + (dir / "folder.csv").string(),
       "--out"},
      {"simulate --nodes 2 --gpus-per-node 2 --experts 8 --top-k 2 --strategies a2av --timeline " + (dir / "folder.csv").string(),
       "--timeline"},
      {"simulate --nodes 2 --gpus-per-node 2 --experts 8 --top-k 2 --strategies a2av --timeline " + (dir / "fifo.csv").string(),
       "--timeline"},
  };
  for (const auto& c : cases) {
    const auto r = run_zepp(c.args);
    EXPECT_EQ(r.status, 2) << c.args << "\n" << r.err;
    EXPECT_NE(r.err.find(c.says), std::string::npos) << c.args << "\n" << r.err;
  }
  std::vector<std::string> left;
  for (const auto& e : fs::directory_iterator(dir)) left.push_back(e.path().filename().string());
  std::sort(left.begin(), left.end());
  EXPECT_EQ(left, (std::vector<std::string>{"fifo.csv", "folder.csv", "plots-file"})) << "stray files were left";
  EXPECT_TRUE(fs::is_empty(dir / "folder.csv"));
}

// The figures' data files and gnuplot scripts follow the output-path rules too (core/figure.hpp):
// they were written with a plain std::ofstream after the work, so a folder or FIFO where
// fig11.dat goes was skipped without a word (fig11) or failed after the sweep with an internal
// error (fig9, report). Each is refused before any work, naming the flag, and nothing is written.
TEST(Outputs, FigureFilesRefusedBeforeAnyWork) {
  const fs::path dir = scratch("figure-files");
  fs::create_directories(dir / "p9" / "fig9-deepseek-v2-lite.dat");
  fs::create_directories(dir / "p11");
  ASSERT_EQ(::mkfifo((dir / "p11" / "fig11-paper.dat").c_str(), 0644), 0);
  fs::create_directories(dir / "figs" / "fig10.gp");
  struct Case {
    std::string args, says;
  };
  const std::string fig9_csv = std::string(ZEPP_SOURCE_DIR) + "/docs/results/fig9.csv";
  const std::string fig10_csv = std::string(ZEPP_SOURCE_DIR) + "/docs/results/fig10.csv";
  const std::vector<Case> cases = {
      {kFig9Small + " --csv " + (dir / "9.csv").string() + " --plots " + (dir / "p9").string(),
       "--plots: " + (dir / "p9" / "fig9-deepseek-v2-lite.dat").string() + " is a directory"},
      {"experiment fig11 --csv " + (dir / "11.csv").string() + " --plots " + (dir / "p11").string(),
       "--plots: " + (dir / "p11" / "fig11-paper.dat").string() + " is a FIFO"},
      {"experiment report --allow-mixed-commits --fig9 " + fig9_csv + " --fig10 " + fig10_csv + " --out " +
           (dir / "r.md").string() + " --figures " + (dir / "figs").string(),
       "--figures: " + (dir / "figs" / "fig10.gp").string() + " is a directory"},
  };
  for (const auto& c : cases) {
    const auto r = run_zepp(c.args);
    EXPECT_EQ(r.status, 2) << c.args << "\n" << r.err;
    EXPECT_NE(r.err.find(c.says), std::string::npos) << c.args << "\n" << r.err;
    EXPECT_EQ(r.err.find("configurations"), std::string::npos) << "the sweep started: " << r.err;
  }
  std::vector<std::string> left;
  for (const auto& e : fs::recursive_directory_iterator(dir)) left.push_back(fs::relative(e.path(), dir).string());
  std::sort(left.begin(), left.end());
  EXPECT_EQ(left, (std::vector<std::string>{"figs", "figs/fig10.gp", "p11", "p11/fig11-paper.dat", "p9",
                                            "p9/fig9-deepseek-v2-lite.dat"}))
      << "work began before the check";
}

// One rule for output paths (core/output_file.hpp): `simulate --timeline` created a missing
// folder where `place --output` failed after the work ("cannot open for writing"), and
// `--timeline DIR/` wrote DIR/-a2av.json. A missing folder is created by both; a name ending in
// '/' is refused by both before any work.
TEST(Outputs, MissingFoldersAreCreatedAndFolderNamesRefusedByEveryWriter) {
  const fs::path dir = scratch("paths");
  const std::string load = shared_dir() + "/data/eplb/readme-example.json";
  if (!fs::exists(load)) GTEST_SKIP() << load << " is absent";
  const std::string place = "place --policy eplb --load " + load + " --output-format sglang --output ";
  const std::string sim = "simulate --nodes 2 --gpus-per-node 2 --experts 8 --top-k 2 --strategies a2av --timeline ";
  auto r = run_zepp(place + (dir / "new" / "placement.json").string());
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(fs::is_regular_file(dir / "new" / "placement.json"));
  r = run_zepp(sim + (dir / "new2" / "t.json").string());
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(fs::is_regular_file(dir / "new2" / "t-a2av.json"));
  for (const std::string& args : {place + (dir / "out").string() + "/", sim + (dir / "out").string() + "/"}) {
    r = run_zepp(args);
    EXPECT_EQ(r.status, 2) << args << "\n" << r.err;
    EXPECT_NE(r.err.find((dir / "out").string() + "/ names a folder (it ends in '/'); expected a file name"), std::string::npos)
        << r.err;
  }
  EXPECT_FALSE(fs::exists(dir / "out")) << "a refused path was created";
}

// Inputs that are not regular files are refused at once: opening a FIFO with no writer blocked
// `place --load`, `report --fig9` and the other readers; a broken link in a trace folder was
// skipped without a word (its file's tokens lost); a --figures folder under a regular file
// failed after the report with an internal error.
TEST(Inputs, FifoBrokenLinkAndFolderUnderAFileAreRefused) {
  const fs::path dir = scratch("inputs");
  ASSERT_EQ(::mkfifo((dir / "load.json").c_str(), 0644), 0);
  auto r = run_zepp("place --policy eplb --load " + (dir / "load.json").string());
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("load.json: expected a regular file to read, got a FIFO"), std::string::npos) << r.err;
  r = run_zepp("experiment report --fig9 " + (dir / "load.json").string() + " --out " + (dir / "r.md").string());
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("got a FIFO"), std::string::npos) << r.err;

  fs::create_directories(dir / "trace");
  std::ofstream(dir / "trace" / "a.json") << R"([{"1":[[0,1],[2,3]]}])";
  fs::create_symlink(dir / "nowhere.json", dir / "trace" / "b.json");
  r = run_zepp("simulate --trace " + (dir / "trace").string() + " --model mixtral-8x7b --nodes 2 --gpus-per-node 2");
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("b.json: expected a trace file, got a broken symbolic link"), std::string::npos) << r.err;
  // With --skip-invalid it is skipped and listed like a malformed file (it stopped the read).
  r = run_zepp("simulate --trace " + (dir / "trace").string() + " --model mixtral-8x7b --nodes 2 --gpus-per-node 2 "
               "--strategies a2av --executor estimate --skip-invalid");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("skipped 1 invalid file(s) (--skip-invalid):\n  " + (dir / "trace" / "b.json").string() +
                       ": expected a trace file, got a broken symbolic link"),
            std::string::npos) << r.err;

  std::ofstream(dir / "repro.md") << "x";
  r = run_zepp("experiment report --fig9 " + std::string(ZEPP_SOURCE_DIR) + "/docs/results/fig9.csv --allow-mixed-commits --out " +
               (dir / "out.md").string() + " --figures " + (dir / "repro.md" / "figs").string());
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("--figures: " + (dir / "repro.md").string() + " is a regular file, not a folder to create"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(dir / "out.md")) << "the report was written before the check";
}

// A folder where no file can be created (/proc here: root may write anywhere the permission bits
// allow, yet not there) is refused before any work, naming the flag: the experiments ran every
// configuration, or calibrated and ran MPI, and then failed with a raw filesystem error.
// An output path that is a symbolic link to a file (current.json -> v3.json) lost the link: the
// atomic rename put a regular file in its place and the target kept its old contents.
TEST(Outputs, SymbolicLinkToAFileIsWrittenThrough) {
  const fs::path dir = process_dir() / "out_link";
  fs::create_directories(dir);
  const std::string load = write_file("out_link_load.json",
      R"({"weight": [[100, 10, 10, 10]], "num_replicas": 8, "num_groups": 1, "num_nodes": 2, "num_gpus": 4})");
  { std::ofstream(dir / "v3.json") << "old"; }
  fs::remove(dir / "current.json");
  fs::create_symlink("v3.json", dir / "current.json");
  const auto r = run_zepp("place --policy zepp --load " + load + " --output-format sglang --output " +
                          (dir / "current.json").string());
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(fs::is_symlink(dir / "current.json"));
  EXPECT_EQ(slurp(dir / "v3.json"), "{\"physical_to_logical_map\": [\n  [0, 1, 0, 3, 0, 2, 0, 1]\n]}\n");
  EXPECT_FALSE(fs::exists(dir / "v3.json.tmp"));
  EXPECT_FALSE(fs::exists(dir / "current.json.tmp"));
}

TEST(Outputs, UnwritableFoldersRefusedBeforeWork) {
  if (!fs::is_directory("/proc/self")) GTEST_SKIP() << "no /proc";
  const fs::path dir = scratch("validate");
  struct Case {
    std::string args, says;
  };
  for (const Case& c : {Case{"experiment replay --out /proc/zepp-x --systems a2av --workloads deepseek", "--out: cannot write /proc/zepp-x"},
                        Case{"experiment fig12 --out /proc/zepp-x", "--out: cannot write /proc/zepp-x"},
                        Case{"experiment validate --out /proc/zepp-v.md --results " + (dir / "r").string(),
                             "--out: cannot write /proc/zepp-v.md: cannot create files in /proc"},
                        Case{"experiment validate --out " + (dir / "v.md").string() + " --results /proc/zepp-r",
                             "--results: cannot write /proc/zepp-r"},
                        Case{kFig9Small + " --plots /proc/zepp-plots", "--plots: cannot write /proc/zepp-plots"}}) {
    const auto r = run_zepp(c.args);
    EXPECT_EQ(r.status, 2) << c.args << "\n" << r.err;
    EXPECT_NE(r.err.find(c.says), std::string::npos) << c.args << "\n" << r.err;
    EXPECT_EQ(r.err.find("filesystem error"), std::string::npos) << r.err;
    EXPECT_LT(r.cpu_seconds, kQuick) << "work began before the check: " << c.args;
  }
  EXPECT_FALSE(fs::exists(dir / "v.md"));
  EXPECT_FALSE(fs::exists(dir / "r")) << "the results folder was created before the refusal";
}

// The committed CSVs were made before sweeps recorded their settings: the report reads those from
// each file's recorded command and regenerates docs/reproduction.md as committed; a CSV named with
// the flag of another section's settings (the charged fig9.csv as --fig9-free, serial links as
// --fig9-pair) is refused, naming the file, the setting and both values, and nothing is written.
TEST(Report, CommittedCsvsRegenerateTheReportAndAreRefusedUnderAnotherSection) {
  const fs::path root = ZEPP_SOURCE_DIR;
  if (!fs::exists(root / "docs" / "results" / "fig9-free.csv")) GTEST_SKIP() << "no committed results under " << root;
  if (std::system("gnuplot --version > /dev/null 2>&1") != 0) GTEST_SKIP() << "gnuplot is not installed";
  const fs::path dir = scratch("regenerate");
  const std::string in_root = "cd " + root.string() + " && ";
  const std::string sections = "experiment report --fig9 docs/results/fig9.csv --fig10 docs/results/fig10.csv --fig11 "
                               "docs/results/fig11.csv --allow-mixed-commits --out " + (dir / "r.md").string();
  auto r = run_command(in_root, sections + " --fig9-serial docs/results/fig9-serial.csv --fig9-pair "
                                           "docs/results/fig9-pair.csv --fig9-free docs/results/fig9-free.csv");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(slurp(dir / "r.md"), slurp(root / "docs" / "reproduction.md"));
  fs::remove(dir / "r.md");
  r = run_command(in_root, sections + " --fig9-free docs/results/fig9.csv");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("zepp: error: docs/results/fig9.csv:3: --fig9-free was made with --planning model (its rows' "
                       "planning column); the report's \"Planning charged and left out\" section is about --planning free"),
            std::string::npos) << r.err;
  r = run_command(in_root, sections + " --fig9-pair docs/results/fig9-serial.csv");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("zepp: error: docs/results/fig9-serial.csv:1: --fig9-pair was made with --link-sharing serial "
                       "(read from its command line); the report's \"Link-sharing sensitivity\" section is about "
                       "--link-sharing pair"),
            std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir / "r.md"));
}

// A report of CSVs made by two commits is refused unless asked, and then names both.
TEST(Report, RefusesToMixCommitsUnlessAsked) {
  const fs::path dir = scratch("mixed");
  const fs::path results = fs::path(ZEPP_SOURCE_DIR) / "docs" / "results";
  if (!fs::exists(results / "fig10.csv")) GTEST_SKIP() << "no committed results under " << results;
  auto body = [&](const std::string& src) {  // the CSV without its provenance line
    std::string text = slurp(results / src);
    return text.rfind("# ", 0) == 0 ? text.substr(text.find('\n') + 1) : text;
  };
  auto with_line = [&](const std::string& src, const std::string& commit, const fs::path& out) {
    std::ofstream(out) << "# made by zepp 0.1.0 (commit " << commit << ") with: zepp experiment " << src << "\n" << body(src);
  };
  with_line("fig9.csv", std::string(40, 'a'), dir / "fig9.csv");
  with_line("fig10.csv", std::string(40, 'b'), dir / "fig10.csv");
  const std::string args = "experiment report --fig9 " + (dir / "fig9.csv").string() + " --fig10 " +
                           (dir / "fig10.csv").string() + " --out " + (dir / "r.md").string();
  auto r = run_zepp(args);
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("different programs"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(std::string(40, 'b')), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir / "r.md"));

  r = run_zepp(args + " --allow-mixed-commits");
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string md = slurp(dir / "r.md");
  EXPECT_NE(md.find("Results made by commit " + std::string(40, 'a')), std::string::npos);
  EXPECT_NE(md.find("Results made by commit " + std::string(40, 'b')), std::string::npos);
  EXPECT_NE(r.out.find(std::string(40, 'a')), std::string::npos) << "the report prints the commit: " << r.out;

  // One commit: reported without the flag.
  with_line("fig10.csv", std::string(40, 'a'), dir / "fig10.csv");
  r = run_zepp(args);
  EXPECT_EQ(r.status, 0) << r.err;
  // A file written before provenance existed is named as such.
  std::ofstream(dir / "fig10.csv") << body("fig10.csv");
  r = run_zepp(args);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("no provenance line"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace zepp::testing
