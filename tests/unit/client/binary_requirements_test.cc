// Reading what a gpuctld binary needs from its ELF file, and deciding from
// that and a node's probe whether the node can run it.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "client/node/binary_requirements.h"
#include "client/node/node_fit.h"
#include "tests/fakes/skip_policy.h"
#include "tests/fakes/temp_dir.h"

namespace gpuctl::client {
namespace {

using gpuctl::testing::ReadText;

RemoteAgentState RemoteNode(std::string machine, std::string glibc) {
  RemoteAgentState node;
  node.machine = std::move(machine);
  node.glibc = std::move(glibc);
  node.os = "Test OS";
  return node;
}

TEST(GlibcVersionTest, ParsesEveryFormThatOccurs) {
  EXPECT_EQ(ParseGlibcVersion("2.36")->ToString(), "2.36");
  EXPECT_EQ(ParseGlibcVersion("glibc 2.31\n")->ToString(), "2.31");
  EXPECT_EQ(ParseGlibcVersion("GLIBC_2.2.5")->ToString(), "2.2");
  EXPECT_LT(*ParseGlibcVersion("2.9"), *ParseGlibcVersion("2.34"));
  EXPECT_FALSE(ParseGlibcVersion("GLIBC_PRIVATE").ok());
  EXPECT_FALSE(ParseGlibcVersion("").ok());
  EXPECT_FALSE(ParseGlibcVersion("2").ok());
  EXPECT_FALSE(ParseGlibcVersion("2.x").ok());
}

// The agent built here, for the architecture this test is built for: a
// dynamic executable (glibc) in every build.
TEST(BinaryRequirementsTest, ReadsARealExecutable) {
  std::string agent = ReadText(GPUCTL_BINARY_DIR "/daemon/gpuctld");
  ASSERT_FALSE(agent.empty()) << "no gpuctld built in " GPUCTL_BINARY_DIR;
  Result<BinaryRequirements> needs = ReadBinaryRequirements(agent);
  ASSERT_TRUE(needs.ok()) << needs.status().ToString();
#if defined(__x86_64__)
  EXPECT_EQ(needs->machine, "x86_64");
#elif defined(__aarch64__)
  EXPECT_EQ(needs->machine, "aarch64");
#endif
  EXPECT_GE(needs->glibc, (GlibcVersion{2, 2}));
  bool has_libc = false;
  for (const std::string& library : needs->shared_libraries) has_libc = has_libc || library == "libc.so.6";
  EXPECT_TRUE(has_libc);
}

// The shipped agent: glibc and libgcc only, and a floor of at most 2.34
// (Ubuntu 22.04 and RHEL 9 have 2.35 and 2.34).
TEST(BinaryRequirementsTest, ThePortableAgentNeedsOnlyGlibc234) {
  std::string agent = ReadText(GPUCTL_BINARY_DIR "/daemon/gpuctld");
  if (agent.empty()) GPUCTL_SKIP() << "no gpuctld built in " GPUCTL_BINARY_DIR;
  Result<BinaryRequirements> needs = ReadBinaryRequirements(agent);
  ASSERT_TRUE(needs.ok()) << needs.status().ToString();
#ifdef GPUCTL_PORTABLE_BUILD
  EXPECT_TRUE(LibrariesBeyondGlibc(*needs).empty()) << LibrariesBeyondGlibc(*needs).front();
  EXPECT_LE(needs->glibc, (GlibcVersion{2, 34})) << needs->glibc.ToString();
#endif
  EXPECT_GE(needs->glibc, (GlibcVersion{2, 17}));
}

TEST(BinaryRequirementsTest, RefusesWhatIsNotAnElfFileWithoutReadingPastIt) {
  EXPECT_EQ(ReadBinaryRequirements("").status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(ReadBinaryRequirements("#!/bin/sh\necho hi\n").status().code(), ErrorCode::kInvalidArgument);
  std::string real = ReadText(GPUCTL_BINARY_DIR "/daemon/gpuctld");
  ASSERT_GT(real.size(), 4096u);
  // Cut anywhere: an error or a partial answer, never a read past the end
  // (ASan checks the latter).
  for (size_t cut : {size_t{16}, size_t{64}, size_t{200}, real.size() / 2, real.size() - 1}) {
    (void)ReadBinaryRequirements(std::string_view(real).substr(0, cut));
  }
  // Section offsets pointing past the end.
  std::string bent = real;
  for (size_t i = 0x28; i < 0x30; ++i) bent[i] = '\xff';  // e_shoff
  EXPECT_FALSE(ReadBinaryRequirements(bent).ok());
}

TEST(NodeFitTest, RefusesAnOlderGlibcNamingBoth) {
  BinaryRequirements needs{.machine = "x86_64", .glibc = {2, 34}, .shared_libraries = {"libc.so.6", "libm.so.6"}};
  EXPECT_TRUE(CheckNodeCanRun(needs, RemoteNode("x86_64", "2.34"), "n1").ok());
  EXPECT_TRUE(CheckNodeCanRun(needs, RemoteNode("x86_64", "2.41"), "n1").ok());
  Status old = CheckNodeCanRun(needs, RemoteNode("x86_64", "2.31"), "n1");
  EXPECT_EQ(old.code(), ErrorCode::kFailedPrecondition);
  EXPECT_NE(old.message().find("needs glibc 2.34"), std::string::npos) << old.message();
  EXPECT_NE(old.message().find("has glibc 2.31"), std::string::npos) << old.message();
  EXPECT_NE(old.message().find("Test OS"), std::string::npos) << old.message();
  EXPECT_EQ(CheckNodeCanRun(needs, RemoteNode("x86_64", ""), "n1").code(), ErrorCode::kFailedPrecondition);
  EXPECT_EQ(CheckNodeCanRun(needs, RemoteNode("x86_64", "two"), "n1").code(), ErrorCode::kFailedPrecondition);
}

TEST(NodeFitTest, RefusesAnotherArchitectureAndANonPortableBuild) {
  BinaryRequirements needs{.machine = "x86_64", .glibc = {2, 34}, .shared_libraries = {"libc.so.6"}};
  Status arch = CheckNodeCanRun(needs, RemoteNode("aarch64", "2.36"), "gh200");
  EXPECT_EQ(arch.code(), ErrorCode::kFailedPrecondition);
  EXPECT_NE(arch.message().find("aarch64"), std::string::npos);
  needs.shared_libraries.push_back("libspdlog.so.1.10");
  Status dynamic = CheckNodeCanRun(needs, RemoteNode("x86_64", "2.36"), "n1");
  EXPECT_EQ(dynamic.code(), ErrorCode::kFailedPrecondition);
  EXPECT_NE(dynamic.message().find("libspdlog.so.1.10"), std::string::npos);
  EXPECT_EQ(LibrariesBeyondGlibc({.machine = "aarch64", .glibc = {}, .shared_libraries = {"ld-linux-aarch64.so.1", "libgcc_s.so.1"}}).size(), 0u);
}

}  // namespace
}  // namespace gpuctl::client
