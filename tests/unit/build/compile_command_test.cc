#include "agents/build/compile_command.h"

#include <gtest/gtest.h>

namespace gpuctl::build {
namespace {

// The command torch's cpp_extension writes into build.ninja for flash-attn
// (trimmed of include paths), as it reaches nvcc.
TEST(ParseCompileCommand, ReadsFlashAttnsNvccLine) {
  CompileCommand command = ParseCompileCommand(
      {"/usr/local/cuda/bin/nvcc", "--generate-dependencies-with-compile", "--dependency-output",
       "/b/flash_bwd_hdim128_bf16_sm80.o.d", "-I/src/csrc/cutlass/include", "-c", "-c",
       "/src/csrc/flash_attn/src/flash_bwd_hdim128_bf16_sm80.cu", "-o", "/b/flash_bwd_hdim128_bf16_sm80.o",
       "-O3", "-std=c++17", "--use_fast_math", "-gencode", "arch=compute_80,code=sm_80", "-gencode",
       "arch=compute_90,code=sm_90", "--threads", "4", "-gencode=arch=compute_100,code=sm_100"});
  EXPECT_EQ(command.archs, 3u);
  EXPECT_EQ(command.threads, 4u);
  EXPECT_EQ(command.source, "/src/csrc/flash_attn/src/flash_bwd_hdim128_bf16_sm80.cu");
}

TEST(ParseCompileCommand, CountsOneTargetPerGencodeWhateverItsCodeList) {
  CompileCommand command = ParseCompileCommand(
      {"nvcc", "-c", "k.cu", "--generate-code=arch=compute_90a,code=[sm_90a,compute_90a]", "-t=2"});
  EXPECT_EQ(command.archs, 1u);
  EXPECT_EQ(command.threads, 2u);
}

TEST(ParseCompileCommand, ArchAloneIsOneAndAllIsUnknown) {
  EXPECT_EQ(ParseCompileCommand({"nvcc", "-arch=sm_80", "-c", "a.cu"}).archs, 1u);
  EXPECT_EQ(ParseCompileCommand({"nvcc", "--gpu-architecture", "sm_90", "-c", "a.cu"}).archs, 1u);
  EXPECT_EQ(ParseCompileCommand({"nvcc", "-arch=all-major", "-c", "a.cu"}).archs, 0u);
  EXPECT_EQ(ParseCompileCommand({"nvcc", "-arch", "native", "-c", "a.cu"}).archs, 0u);
  EXPECT_EQ(ParseCompileCommand({"nvcc", "-c", "a.cu"}).archs, 0u);
}

TEST(ParseCompileCommand, ThreadsZeroMeansOnePerArch) {
  CompileCommand command = ParseCompileCommand(
      {"nvcc", "-gencode", "arch=compute_80,code=sm_80", "-gencode", "arch=compute_90,code=sm_90", "--threads=0"});
  EXPECT_EQ(command.threads, 2u);
}

TEST(ParseCompileCommand, AnOptionsOperandIsNotTheSource) {
  CompileCommand command = ParseCompileCommand({"g++", "-include", "pre.c", "-MF", "dep.c", "-o", "out.c", "main.cpp"});
  EXPECT_EQ(command.source, "main.cpp");
  EXPECT_EQ(ParseCompileCommand({"ld", "-o", "a.out", "a.o"}).source, "");
}

TEST(ParseCompileCommand, HostileArgumentsReadAsNothing) {
  CompileCommand command = ParseCompileCommand({"nvcc", "--threads", "lots", "-gencode", "-t"});
  EXPECT_EQ(command.threads, 1u);
  CompileCommand empty = ParseCompileCommand({});
  EXPECT_EQ(empty.archs, 0u);
  EXPECT_EQ(empty.source, "");
}

TEST(IsCompilerName, KnowsNvccsStagesAndHostCompilers) {
  for (const char* name : {"nvcc", "cicc", "ptxas", "cudafe++", "fatbinary", "nvlink", "cc1plus", "g++", "ld",
                           "collect2", "clang++", "x86_64-linux-gn"}) {
    EXPECT_TRUE(IsCompilerName(name)) << name;
  }
  for (const char* name : {"ninja", "make", "python3", "sh", "bash", "pip", "cmake", ""}) {
    EXPECT_FALSE(IsCompilerName(name)) << name;
  }
}

}  // namespace
}  // namespace gpuctl::build
