// Which processes are compilers, and what an nvcc command line says about
// the memory its compile will need (how many archs, on how many threads,
// which file). Pure: names and argv in, facts out.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gpuctl::build {

// A compiler, linker or one of nvcc's stages, by its comm (/proc/PID/comm,
// at most 15 characters): nvcc, cicc, ptxas, nvlink, fatbinary, cudafe++,
// gcc, g++, cc, c++, cc1, cc1plus, clang, clang++, ld (and ld.bfd, ld.gold,
// ld.lld, lld), collect2, and cross gcc/g++ whose comm was cut short.
bool IsCompilerName(std::string_view comm);

struct CompileCommand {
  // Distinct -gencode/--generate-code targets, or 1 for -arch=sm_XX alone;
  // 0 when the line names none or "all" (unknown).
  uint32_t archs = 0;
  uint32_t threads = 1;  // --threads / -t; 0 ("as many as archs") is read as archs
  std::string source;    // the .cu/.cpp/... compiled; empty when none
};

// Reads an nvcc (or gcc/clang) argv. Options in both "--opt value" and
// "--opt=value" forms; unknown options are skipped.
CompileCommand ParseCompileCommand(const std::vector<std::string>& argv);

}  // namespace gpuctl::build
