// Memory traces of real nvcc compile jobs (../shared/fixtures/gpu-host/
// nvcc-memtrace-*.csv), read to calibrate the build governor's model and to
// check it against what was observed. Pure: text in, rows and peaks out.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace gpuctl::provision {

// One sample: "t_s,job,rss_mib,procs,mem_available_mib". rss_mib is the RSS
// of the job's whole process tree (nvcc, cicc, ptxas ...).
struct MemtraceRow {
  double t_s = 0;
  std::string job;
  uint64_t rss_mib = 0;
  uint32_t procs = 0;
  uint64_t mem_available_mib = 0;
};

// The header names the columns; they are found by name, so a trace with the
// columns in another order (or extra ones) still reads. Errors:
// kInvalidArgument naming the line when the header lacks a required column
// or a row has a field that is not a number.
Result<std::vector<MemtraceRow>> ParseNvccMemtrace(std::string_view csv);

// Each job's highest rss_mib.
std::map<std::string, uint64_t> PeakRssMibByJob(const std::vector<MemtraceRow>& rows);

}  // namespace gpuctl::provision
