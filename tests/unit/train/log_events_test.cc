#include "agents/train/log_events.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "tests/fakes/temp_dir.h"
#include "common/units.h"

namespace gpuctl::train {
namespace {

using testing::ReadFixture;


std::vector<LogEvent> ParseWhole(std::string_view log, uint64_t start = 0) {
  LogEventParser parser;
  std::vector<LogEvent> events = parser.Feed(log, start);
  for (LogEvent& e : parser.Finish()) events.push_back(std::move(e));
  return events;
}

// Feeds `log` in pieces of the sizes `next_size` picks.
template <typename NextSize>
std::vector<LogEvent> ParseInPieces(std::string_view log, NextSize next_size) {
  LogEventParser parser;
  std::vector<LogEvent> events;
  size_t pos = 0;
  while (pos < log.size()) {
    size_t n = std::min(next_size(), log.size() - pos);
    for (LogEvent& e : parser.Feed(log.substr(pos, n), pos)) events.push_back(std::move(e));
    pos += n;
  }
  for (LogEvent& e : parser.Finish()) events.push_back(std::move(e));
  return events;
}

std::string LineAt(std::string_view log, uint64_t offset) {
  std::string_view rest = log.substr(offset);
  return std::string(rest.substr(0, rest.find('\n')));
}

TEST(LogEventParser, OomDefaultFixture) {
  const std::string log = ReadFixture("oom-default.log");
  std::vector<LogEvent> events = ParseWhole(log);
  ASSERT_EQ(events.size(), 2u);

  const LogEvent& oom = events[0];
  EXPECT_EQ(oom.kind, "cuda_oom");
  EXPECT_EQ(oom.offset, 458u);
  EXPECT_EQ(oom.message, LineAt(log, 458));
  EXPECT_EQ(oom.message.substr(0, 60), "torch.OutOfMemoryError: CUDA out of memory. Tried to allocat");
  EXPECT_EQ(oom.exception_type, "torch.OutOfMemoryError");
  EXPECT_EQ(oom.rank, std::nullopt);
  EXPECT_EQ(oom.gpu, 0);
  EXPECT_EQ(oom.tried_bytes, 16 * kGiB);
  EXPECT_EQ(oom.total_bytes, 150109106995u);  // 139.80 GiB
  EXPECT_EQ(oom.free_bytes, 12122545193u);    // 11.29 GiB
  EXPECT_EQ(oom.in_use_bytes, 137986561802u);  // 128.51 GiB
  EXPECT_EQ(oom.allocated_bytes, 128 * kGiB);
  EXPECT_EQ(oom.reserved_unallocated_bytes, 0u);
  EXPECT_EQ(oom.allowed_bytes, std::nullopt);
  EXPECT_TRUE(oom.other_processes.empty());
  EXPECT_EQ(oom.traceback_offset, std::nullopt);

  const LogEvent& traceback = events[1];
  EXPECT_EQ(traceback.kind, "traceback");
  EXPECT_EQ(traceback.offset, 458u);
  EXPECT_EQ(traceback.traceback_offset, 229u);
  EXPECT_EQ(traceback.exception_type, "torch.OutOfMemoryError");
  EXPECT_EQ(traceback.message, oom.message);
  EXPECT_EQ(traceback.tried_bytes, std::nullopt);
}

TEST(LogEventParser, OomExpandableFixture) {
  std::vector<LogEvent> events = ParseWhole(ReadFixture("oom-expandable.log"));
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].kind, "cuda_oom");
  EXPECT_EQ(events[0].offset, 458u);
  EXPECT_EQ(events[0].reserved_unallocated_bytes, 8 * kMiB);
  EXPECT_EQ(events[0].free_bytes, 12111807775u);  // 11.28 GiB
  EXPECT_EQ(events[0].allocated_bytes, 128 * kGiB);
  EXPECT_EQ(events[1].kind, "traceback");
}

TEST(LogEventParser, BadAllocConfFixture) {
  const std::string log = ReadFixture("oom-badconf.log");
  std::vector<LogEvent> events = ParseWhole(log);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].kind, "alloc_conf_invalid");
  EXPECT_EQ(events[0].offset, 371u);
  EXPECT_EQ(events[0].exception_type, "ValueError");
  EXPECT_EQ(events[0].message,
            "ValueError: Expected 'True' or 'False' at index 2 in ConfigTokenizer but got 'maybe'");
  EXPECT_EQ(events[1].kind, "traceback");
  EXPECT_EQ(events[1].offset, 371u);
  EXPECT_EQ(events[1].traceback_offset, 19u);
  EXPECT_EQ(events[1].exception_type, "ValueError");
}

TEST(ParseLogLine, OomBefore21) {
  auto e = ParseLogLine(
      "RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 15.78 GiB total "
      "capacity; 14.51 GiB already allocated; 5.50 MiB free; 14.73 GiB reserved in total by "
      "PyTorch) If reserved memory is >> allocated memory try setting max_split_size_mb to avoid "
      "fragmentation.  See documentation for Memory Management and PYTORCH_CUDA_ALLOC_CONF",
      77);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->kind, "cuda_oom");
  EXPECT_EQ(e->offset, 77u);
  EXPECT_EQ(e->exception_type, "RuntimeError");
  EXPECT_EQ(e->gpu, 0);
  EXPECT_EQ(e->tried_bytes, 20 * kMiB);
  EXPECT_EQ(e->total_bytes, 16943645983u);      // 15.78 GiB
  EXPECT_EQ(e->allocated_bytes, 15579993866u);  // 14.51 GiB
  EXPECT_EQ(e->free_bytes, 5767168u);           // 5.50 MiB
  EXPECT_EQ(e->reserved_unallocated_bytes, 15816217068u - 15579993866u);  // 14.73 - 14.51 GiB
  EXPECT_EQ(e->in_use_bytes, std::nullopt);
  EXPECT_EQ(e->allowed_bytes, std::nullopt);
}

TEST(ParseLogLine, OomBefore21WithAllowedAndPyTorch1Cached) {
  auto allowed = ParseLogLine(
      "RuntimeError: CUDA out of memory. Tried to allocate 64.00 MiB (GPU 2; 15.78 GiB total "
      "capacity; 1.00 GiB already allocated; 5.50 MiB free; 2.00 GiB allowed; 1.50 GiB reserved "
      "in total by PyTorch)",
      0);
  ASSERT_TRUE(allowed.has_value());
  EXPECT_EQ(allowed->gpu, 2);
  EXPECT_EQ(allowed->allowed_bytes, 2 * kGiB);
  EXPECT_EQ(allowed->reserved_unallocated_bytes, 512 * kMiB);

  auto cached = ParseLogLine(
      "RuntimeError: CUDA out of memory. Tried to allocate 2.00 MiB (GPU 0; 8.00 GiB total "
      "capacity; 6.00 GiB already allocated; 2.50 MiB free; 6.50 GiB cached)",
      0);
  ASSERT_TRUE(cached.has_value());
  EXPECT_EQ(cached->total_bytes, 8 * kGiB);
  EXPECT_EQ(cached->allocated_bytes, 6 * kGiB);
  EXPECT_EQ(cached->free_bytes, 2621440u);
  EXPECT_EQ(cached->reserved_unallocated_bytes, 512 * kMiB);
}

TEST(ParseLogLine, LegacyCudaRuntimeOom) {
  auto e = ParseLogLine(
      "RuntimeError: cuda runtime error (2) : out of memory at "
      "/pytorch/aten/src/THC/generic/THCStorage.cu:58",
      0);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->kind, "cuda_oom");
  EXPECT_EQ(e->exception_type, "RuntimeError");
  EXPECT_FALSE(ParseLogLine("RuntimeError: cuda runtime error (59) : device-side assert triggered "
                            "at /pytorch/aten/src/THC/generic/THCTensorMath.cu:26",
                            0)
                   .has_value());
}

TEST(ParseLogLine, RankPrefixSeparatorBlankIsNotPartOfTheMessage) {
  auto e = ParseLogLine("[rank1]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.", 0);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->rank, 1);
  EXPECT_EQ(e->exception_type, "torch.OutOfMemoryError");
  EXPECT_EQ(e->message.substr(0, 6), "torch.");
}

TEST(ParseLogLine, OomWithRankPrefixAndOtherProcesses) {
  auto e = ParseLogLine(
      "[rank3]:torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 448.00 MiB. GPU 3 "
      "has a total capacity of 79.10 GiB of which 364.00 MiB is free. Process 175080 has 1.50 GiB "
      "memory in use. Process 175356 has 77.25 GiB memory in use. Of the allocated memory 72.00 "
      "GiB is allocated by PyTorch, and 3.75 GiB is reserved by PyTorch but unallocated. If "
      "reserved but unallocated memory is large try setting "
      "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.",
      5);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->rank, 3);
  EXPECT_EQ(e->exception_type, "torch.OutOfMemoryError");
  EXPECT_EQ(e->message.substr(0, 23), "torch.OutOfMemoryError:");
  EXPECT_EQ(e->gpu, 3);
  EXPECT_EQ(e->tried_bytes, 448 * kMiB);
  EXPECT_EQ(e->total_bytes, 84932978278u);  // 79.10 GiB
  EXPECT_EQ(e->free_bytes, 364 * kMiB);
  EXPECT_EQ(e->in_use_bytes, std::nullopt);  // this process was not identified
  ASSERT_EQ(e->other_processes.size(), 2u);
  EXPECT_EQ(e->other_processes[0], (GpuProcessMemory{175080, 1536 * kMiB}));
  EXPECT_EQ(e->other_processes[1], (GpuProcessMemory{175356, 79104 * kMiB}));
  EXPECT_EQ(e->allocated_bytes, 72 * kGiB);
  EXPECT_EQ(e->reserved_unallocated_bytes, 3840 * kMiB);
}

TEST(ParseLogLine, OomTorchCudaPrefixAnd21Misspelling) {
  auto e = ParseLogLine(
      "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 128.00 MiB. GPU 1 has a "
      "total capacty of 8.00 GiB of which 20.00 MiB is free. Including non-PyTorch memory, this "
      "process has 7.75 GiB memory in use. Of the allocated memory 7.50 GiB is allocated by "
      "PyTorch, and 8.00 MiB is reserved by PyTorch but unallocated.",
      0);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->exception_type, "torch.cuda.OutOfMemoryError");
  EXPECT_EQ(e->gpu, 1);
  EXPECT_EQ(e->total_bytes, 8 * kGiB);
  EXPECT_EQ(e->free_bytes, 20 * kMiB);
  EXPECT_EQ(e->in_use_bytes, 7936 * kMiB);
  EXPECT_EQ(e->allocated_bytes, 7680 * kMiB);
  EXPECT_EQ(e->reserved_unallocated_bytes, 8 * kMiB);
}

TEST(ParseLogLine, OomAllowedAndPrivatePools) {
  auto e = ParseLogLine(
      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 94.00 MiB. GPU 0 has a total "
      "capacity of 8.00 GiB of which 4.00 GiB is free. Including non-PyTorch memory, this process "
      "has 3.00 GiB memory in use. 2.75 GiB allowed; Of the allocated memory 2.50 GiB is "
      "allocated by PyTorch, with 512.00 MiB allocated in private pools (e.g., CUDA Graphs), and "
      "100.00 MiB is reserved by PyTorch but unallocated.",
      0);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->allowed_bytes, 2816 * kMiB);
  EXPECT_EQ(e->in_use_bytes, 3 * kGiB);
  EXPECT_EQ(e->allocated_bytes, 2560 * kMiB);
  EXPECT_EQ(e->reserved_unallocated_bytes, 100 * kMiB);
}

TEST(ParseLogLine, OomWithoutExceptionPrefix) {
  auto bare = ParseLogLine("CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has", 0);
  ASSERT_TRUE(bare.has_value());
  EXPECT_EQ(bare->exception_type, std::nullopt);
  EXPECT_EQ(bare->tried_bytes, 2 * kGiB);
  EXPECT_EQ(bare->gpu, 0);

  auto logged = ParseLogLine("12:00:01 [ERROR] Quantization failed: CUDA out of memory. Tried to "
                             "allocate 320.00 MiB. GPU 0 has a total capacity of 31.00 GiB of "
                             "which 80.00 MiB is free.",
                             0);
  ASSERT_TRUE(logged.has_value());
  EXPECT_EQ(logged->exception_type, std::nullopt);  // "failed:" is not an exception class
  EXPECT_EQ(logged->tried_bytes, 320 * kMiB);
  EXPECT_EQ(logged->total_bytes, 31 * kGiB);
  EXPECT_EQ(logged->free_bytes, 80 * kMiB);
}

TEST(ParseLogLine, OomCutShortKeepsWhatIsWhole) {
  auto e = ParseLogLine(
      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 16.00 GiB. GPU 0 has a total "
      "capacity of 139.80 GiB of which 11.2",
      0);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->tried_bytes, 16 * kGiB);
  EXPECT_EQ(e->gpu, 0);
  EXPECT_EQ(e->total_bytes, 150109106995u);
  EXPECT_EQ(e->free_bytes, std::nullopt);
  EXPECT_EQ(e->allocated_bytes, std::nullopt);
  EXPECT_EQ(e->reserved_unallocated_bytes, std::nullopt);

  // A unit cut short is not read as some other unit.
  auto mid_unit = ParseLogLine("CUDA out of memory. Tried to allocate 16.00 Gi", 0);
  ASSERT_TRUE(mid_unit.has_value());
  EXPECT_EQ(mid_unit->tried_bytes, std::nullopt);
  auto at_unit_end = ParseLogLine("CUDA out of memory. Tried to allocate 16.00 GiB", 0);
  ASSERT_TRUE(at_unit_end.has_value());
  EXPECT_EQ(at_unit_end->tried_bytes, std::nullopt);

  auto phrase_only = ParseLogLine("torch.OutOfMemoryError: CUDA out of memory", 9);
  ASSERT_TRUE(phrase_only.has_value());
  EXPECT_EQ(phrase_only->kind, "cuda_oom");
  EXPECT_EQ(phrase_only->offset, 9u);
  EXPECT_EQ(phrase_only->tried_bytes, std::nullopt);
  EXPECT_EQ(phrase_only->gpu, std::nullopt);
}

// A figure whose bytes do not fit int64 (what the proto's uint64 becomes in
// JSON and in the client) is no usable figure: it stays empty, never wrapped
// or saturated.
TEST(ParseLogLine, OomSizesPastInt64MaxAreLeftEmpty) {
  auto e = ParseLogLine(
      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 18446744073709551616 GiB. GPU 0 has a total "
      "capacity of 8388608 TiB of which 9223372036854775808 B is free. Process 7 has 18446744073709551616 GiB "
      "memory in use. Process 8 has 1.00 GiB memory in use. Including non-PyTorch memory, this process has "
      "9223372036854775807 B memory in use. 99999999999 TiB allowed; Of the allocated memory 8388607 TiB is "
      "allocated by PyTorch, and 8388608.5 TiB is reserved by PyTorch but unallocated.",
      0);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->kind, "cuda_oom");
  EXPECT_EQ(e->gpu, 0);
  EXPECT_EQ(e->tried_bytes, std::nullopt);
  EXPECT_EQ(e->total_bytes, std::nullopt);
  EXPECT_EQ(e->free_bytes, std::nullopt);
  EXPECT_EQ(e->in_use_bytes, uint64_t{INT64_MAX});  // the largest that fits is kept
  EXPECT_EQ(e->allowed_bytes, std::nullopt);
  EXPECT_EQ(e->allocated_bytes, 8388607ull << 40);
  EXPECT_EQ(e->reserved_unallocated_bytes, std::nullopt);
  EXPECT_EQ(e->other_processes, (std::vector<GpuProcessMemory>{{8, kGiB}}));

  auto pre21 = ParseLogLine(
      "RuntimeError: CUDA out of memory. Tried to allocate 18446744073709551616 GiB (GPU 0; 8388608 TiB total "
      "capacity; 14.00 GiB already allocated; 9223372036854775808 bytes free; 8388608 TiB reserved in total by "
      "PyTorch)",
      0);
  ASSERT_TRUE(pre21.has_value());
  EXPECT_EQ(pre21->tried_bytes, std::nullopt);
  EXPECT_EQ(pre21->total_bytes, std::nullopt);
  EXPECT_EQ(pre21->allocated_bytes, 14 * kGiB);
  EXPECT_EQ(pre21->free_bytes, std::nullopt);
  EXPECT_EQ(pre21->reserved_unallocated_bytes, std::nullopt);
}

TEST(ParseLogLine, CudaRuntimeOutOfMemory) {
  auto e = ParseLogLine("RuntimeError: CUDA error: out of memory", 0);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->kind, "cuda_oom");
  EXPECT_EQ(e->exception_type, "RuntimeError");
  EXPECT_EQ(e->tried_bytes, std::nullopt);
}

TEST(ParseLogLine, AllocConfRefusals) {
  for (const char* line : {
           "RuntimeError: Unrecognized CachingAllocator option: expandable_segmentz",
           "ValueError: Unrecognized key 'foo' in CUDA allocator config.",
           "RuntimeError: CachingAllocator option max_split_size_mb too small, must be >= 20",
           "RuntimeError: Expected a single True/False argument for expandable_segments",
           "RuntimeError: garbage_collect_threshold is invalid, set it in (0.0, 1.0)",
           "RuntimeError: Unknown allocator backend, options are native and cudaMallocAsync",
           "RuntimeError: For roundups, the divisions has to be power of 2 ",
       }) {
    auto e = ParseLogLine(line, 0);
    ASSERT_TRUE(e.has_value()) << line;
    EXPECT_EQ(e->kind, "alloc_conf_invalid") << line;
  }
  EXPECT_EQ(ParseLogLine("RuntimeError: Unrecognized key 'foo' in CUDA allocator config.", 0)
                ->exception_type,
            "RuntimeError");
  EXPECT_FALSE(ParseLogLine("[W CUDAAllocatorConfig.h:28] Warning: expandable_segments not "
                            "supported on this platform (function operator())",
                            0));
}

TEST(ParseLogLine, NcclErrors) {
  auto dist = ParseLogLine(
      "[rank1]:torch.distributed.DistBackendError: NCCL error in: "
      "../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1970, unhandled cuda error (run with "
      "NCCL_DEBUG=INFO for details), NCCL version 2.19.3",
      40);
  ASSERT_TRUE(dist.has_value());
  EXPECT_EQ(dist->kind, "nccl_error");
  EXPECT_EQ(dist->rank, 1);
  EXPECT_EQ(dist->offset, 40u);
  EXPECT_EQ(dist->exception_type, "torch.distributed.DistBackendError");
  EXPECT_EQ(dist->nccl_code, "ncclUnhandledCudaError");

  auto warn = ParseLogLine("gpu-host:4242:4300 [0] NCCL WARN Cuda failure 'out of memory'", 0);
  ASSERT_TRUE(warn.has_value());
  EXPECT_EQ(warn->kind, "nccl_error");
  EXPECT_EQ(warn->nccl_code, std::nullopt);

  auto code = ParseLogLine("ncclInternalError: Internal check failed.", 0);
  ASSERT_TRUE(code.has_value());
  EXPECT_EQ(code->nccl_code, "ncclInternalError");

  auto timeout = ParseLogLine(
      "[rank2]:[E1203 10:00:00.000000000 ProcessGroupNCCL.cpp:616] [Rank 2] Watchdog caught "
      "collective operation timeout: WorkNCCL(SeqNum=5, OpType=ALLREDUCE) ran for 600123 "
      "milliseconds before timing out.",
      0);
  ASSERT_TRUE(timeout.has_value());
  EXPECT_EQ(timeout->kind, "nccl_error");
  EXPECT_EQ(timeout->rank, 2);

  EXPECT_FALSE(ParseLogLine("gpu-host:4242:4242 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.2<0>", 0));
  EXPECT_FALSE(ParseLogLine("[rank0]:[W1203 ProcessGroupNCCL.cpp:4561] Warning: process group has "
                            "NOT been destroyed before we destruct ProcessGroupNCCL.",
                            0));
}

TEST(ParseLogLine, NcclErrorsByEveryPhraseAndCode) {
  struct Case {
    const char* line;
    bool event;
    std::optional<std::string> code;
  };
  const Case cases[] = {
      {"host:1:2 [0] NCCL INFO Channel 02/0 : 3[3] -> 4[4] via P2P/IPC/read", false, std::nullopt},
      {"host:1:2 [0] NCCL INFO NCCL_SOCKET_IFNAME set to eth0", false, std::nullopt},
      {"NCCL Error 2: unhandled system error", true, "ncclSystemError"},
      {"NCCL error: invalid usage (run with NCCL_DEBUG=WARN for details)", true, "ncclInvalidUsage"},
      {"ProcessGroupNCCL: NCCL communicator was aborted on rank 3.", true, std::nullopt},
      {"Some NCCL operations have failed or timed out. Due to the asynchronous nature", true, std::nullopt},
      {"NCCL operations have failed or timed out", false, std::nullopt},
      {"ncclRemoteError: remote process exited", true, "ncclRemoteError"},
      {"failed: ncclInvalidArgument", true, "ncclInvalidArgument"},
      {"ncclUnhandledCudaError: Call to CUDA function failed.", true, "ncclUnhandledCudaError"},
      {"NCCL error in: x.cpp:1, unhandled cuda error", true, "ncclUnhandledCudaError"},
      {"NCCL Error 3: internal error - please report this issue", true, "ncclInternalError"},
      // Two codes: the later in NCCL's own order is kept, wherever it stands.
      {"ncclInvalidUsage after ncclSystemError", true, "ncclInvalidUsage"},
      {"ncclSystemError after ncclInvalidUsage", true, "ncclInvalidUsage"},
      {"nccl: ncclnccl ncclInternalErrorX", true, "ncclInternalError"},
      {"ncclComm created (no failure here)", false, std::nullopt},
      {"[rank0]: Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1)", true, std::nullopt},
      {"Watchdog caught nothing today", false, std::nullopt},
      {"NCCLNCCL WARN", true, std::nullopt},
      {"NCCL", false, std::nullopt},
  };
  for (const Case& c : cases) {
    std::optional<LogEvent> event = ParseLogLine(c.line, 0);
    ASSERT_EQ(event.has_value(), c.event) << c.line;
    if (!event) continue;
    EXPECT_EQ(event->kind, "nccl_error") << c.line;
    EXPECT_EQ(event->nccl_code, c.code) << c.line;
  }
}

struct SignalCase {
  const char* line;
  int number;
  const char* name;
  std::optional<int64_t> pid;
};

TEST(ParseLogLine, Signals) {
  const SignalCase cases[] = {
      {"Killed", 9, "SIGKILL", std::nullopt},
      {"Segmentation fault (core dumped)", 11, "SIGSEGV", std::nullopt},
      {"Aborted (core dumped)", 6, "SIGABRT", std::nullopt},
      {"Bus error", 7, "SIGBUS", std::nullopt},
      {"exit=137", 9, "SIGKILL", std::nullopt},
      {"exit=139", 11, "SIGSEGV", std::nullopt},
      {"/root/run.sh: line 3:  4242 Killed                  python train.py", 9, "SIGKILL", 4242},
      {"bash: line 1: 77 Segmentation fault      (core dumped) python x.py", 11, "SIGSEGV", 77},
      {"    traceback : Signal 9 (SIGKILL) received by PID 4242", 9, "SIGKILL", 4242},
      {"E1203 12:00:00.000000 1000 torch/distributed/elastic/multiprocessing/api.py:869] failed "
       "(exitcode: -9) local_rank: 0 (pid: 4242) of binary: /usr/bin/python3",
       9, "SIGKILL", 4242},
      {"  exitcode  : -15 (pid: 99)", 15, "SIGTERM", 99},
      {"torch.distributed.elastic.multiprocessing.api.SignalException: Process 1234 got signal: 15",
       15, "SIGTERM", 1234},
      {"RuntimeError: DataLoader worker (pid 5555) is killed by signal: Killed.", 9, "SIGKILL", 5555},
      {"RuntimeError: DataLoader worker (pid 5556) is killed by signal: Bus error. It is possible "
       "that dataloader's workers are out of shared memory.",
       7, "SIGBUS", 5556},
      {"torch.multiprocessing.spawn.ProcessExitedException: process 0 terminated with signal "
       "SIGKILL",
       9, "SIGKILL", std::nullopt},
      {"W1203 torch/distributed/elastic/agent/server/api.py:704] Received Signals.SIGTERM death "
       "signal, shutting down workers",
       15, "SIGTERM", std::nullopt},
      {"Fatal Python error: Segmentation fault", 11, "SIGSEGV", std::nullopt},
      {"[rank4]:Fatal Python error: Aborted", 6, "SIGABRT", std::nullopt},
      // A shell's report glued to a progress bar that had no line end.
      {"Epoch 1:  37%|███▋      | 370/1000 [01:02<01:45,  5.97it/s, loss=2.31]Killed", 9, "SIGKILL",
       std::nullopt},
      {"100%|##########| 10/10 [00:01<00:00,  9.50it/s]Segmentation fault", 11, "SIGSEGV", std::nullopt},
      // Launchers that report a signal as a negative return code.
      {"[2026-11-30 12:00:00,000] [INFO] [runner.py:585:main] Command '['python', 'train.py']' "
       "exits with return code = -9",
       9, "SIGKILL", std::nullopt},
      {"subprocess.CalledProcessError: Command '['python', 'train.py']' returned non-zero exit "
       "status -9.",
       9, "SIGKILL", std::nullopt},
      {"worker finished with returncode=-15 after 3600 seconds of training on node 3", 15, "SIGTERM",
       std::nullopt},
  };
  for (const SignalCase& c : cases) {
    auto e = ParseLogLine(c.line, 3);
    ASSERT_TRUE(e.has_value()) << c.line;
    EXPECT_EQ(e->kind, "signal") << c.line;
    EXPECT_EQ(e->offset, 3u);
    EXPECT_EQ(e->signal_number, c.number) << c.line;
    EXPECT_EQ(e->signal_name, c.name) << c.line;
    EXPECT_EQ(e->pid, c.pid) << c.line;
  }
  EXPECT_EQ(ParseLogLine("[rank4]:Fatal Python error: Aborted", 0)->rank, 4);
}

TEST(ParseLogLine, NotSignals) {
  for (const char* line : {
           "100%|##########| 10/10 [00:01<00:00,  9.50it/s] NotKilled",
           "training worker finished with returncode=-1000 after a very long time",
           "training worker finished with exit code 1 after a very long time, see above",
           "training worker finished with returncode=0 after a very long time, see above",
           "exit=1",
           "exit=0",
           "exit=1370",
           "Killed 5 stale workers",
           "Hangup",
           "failed (exitcode: 1) local_rank: 0 (pid: 4242) of binary: /usr/bin/python3",
           "W1203 api.py:719] Sending process 4243 closing signal SIGTERM",
           "step 5 | loss 2.0 | 10.0 Ktok/s",
           "",
       }) {
    EXPECT_FALSE(ParseLogLine(line, 0).has_value()) << line;
  }
}

TEST(LogEventParser, TorchrunStatesADeathOnce) {
  const std::string log =
      "E1203 api.py:869] failed (exitcode: -9) local_rank: 0 (pid: 4242) of binary: /usr/bin/python3\n"
      "Root Cause (first observed failure):\n"
      "[0]:\n"
      "  exitcode  : -9 (pid: 4242)\n"
      "  error_file: <N/A>\n"
      "  traceback : Signal 9 (SIGKILL) received by PID 4242\n"
      "  exitcode  : -9 (pid: 4243)\n";
  std::vector<LogEvent> events = ParseWhole(log);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].offset, 0u);
  EXPECT_EQ(events[0].pid, 4242);
  EXPECT_EQ(events[1].pid, 4243);
  EXPECT_EQ(events[1].offset, log.rfind("  exitcode"));
}

TEST(LogEventParser, TorchrunFailureSummary) {
  const std::string log =
      "Traceback (most recent call last):\n"
      "  File \"/usr/local/bin/torchrun\", line 8, in <module>\n"
      "    sys.exit(main())\n"
      "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: \n"
      "============================================================\n"
      "train.py FAILED\n"
      "------------------------------------------------------------\n"
      "Root Cause (first observed failure):\n"
      "[0]:\n"
      "  time      : 2024-12-03_10:00:00\n"
      "  host      : gpu-host\n"
      "  rank      : 0 (local_rank: 0)\n"
      "  exitcode  : -9 (pid: 4242)\n"
      "  error_file: <N/A>\n"
      "  traceback : Signal 9 (SIGKILL) received by PID 4242\n"
      "============================================================\n";
  std::vector<LogEvent> events = ParseWhole(log);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].kind, "traceback");
  EXPECT_EQ(events[0].exception_type, "torch.distributed.elastic.multiprocessing.errors.ChildFailedError");
  EXPECT_EQ(events[0].message, "torch.distributed.elastic.multiprocessing.errors.ChildFailedError:");
  EXPECT_EQ(events[1].kind, "signal");
  EXPECT_EQ(events[1].offset, log.find("  exitcode"));
  EXPECT_EQ(events[1].message, "exitcode  : -9 (pid: 4242)");
  EXPECT_EQ(events[1].signal_name, "SIGKILL");
  EXPECT_EQ(events[1].pid, 4242);
}

TEST(LogEventParser, InterleavedRankTracebacks) {
  const std::string log =
      "[rank0]:Traceback (most recent call last):\n"
      "[rank1]:Traceback (most recent call last):\n"
      "[rank0]:  File \"train.py\", line 10, in <module>\n"
      "[rank1]:  File \"train.py\", line 12, in <module>\n"
      "[rank0]:    raise RuntimeError(\"CUDA out of memory\")  # quoted source: not an event\n"
      "step 5 | loss 2.0\n"
      "[rank1]:torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1970, "
      "unhandled system error, NCCL version 2.19.3\n"
      "[rank0]:torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.00 GiB. GPU 0 has "
      "a total capacity of 79.10 GiB of which 0 bytes is free.\n";
  std::vector<LogEvent> events = ParseWhole(log);
  ASSERT_EQ(events.size(), 4u);
  const uint64_t rank1_header = log.find("[rank1]:Traceback");
  const uint64_t nccl_line = log.find("[rank1]:torch.distributed");
  const uint64_t oom_line = log.find("[rank0]:torch.OutOfMemoryError");

  EXPECT_EQ(events[0].kind, "nccl_error");
  EXPECT_EQ(events[0].rank, 1);
  EXPECT_EQ(events[0].offset, nccl_line);
  EXPECT_EQ(events[0].nccl_code, "ncclSystemError");
  EXPECT_EQ(events[1].kind, "traceback");
  EXPECT_EQ(events[1].rank, 1);
  EXPECT_EQ(events[1].offset, nccl_line);
  EXPECT_EQ(events[1].traceback_offset, rank1_header);
  EXPECT_EQ(events[1].exception_type, "torch.distributed.DistBackendError");

  EXPECT_EQ(events[2].kind, "cuda_oom");
  EXPECT_EQ(events[2].rank, 0);
  EXPECT_EQ(events[2].offset, oom_line);
  EXPECT_EQ(events[2].free_bytes, 0u);
  EXPECT_EQ(events[3].kind, "traceback");
  EXPECT_EQ(events[3].rank, 0);
  EXPECT_EQ(events[3].traceback_offset, 0u);
}

TEST(LogEventParser, TracebackEndsAtTheExceptionLine) {
  const std::string log =
      "Traceback (most recent call last):\n"
      "  File \"train.py\", line 3, in <module>\n"
      "\n"
      "progress printed by another thread\n"
      "    main()\n"
      "KeyError: 'lr'\n"
      "\n"
      "During handling of the above exception, another exception occurred:\n"
      "\n"
      "Traceback (most recent call last):\n"
      "  File \"train.py\", line 5, in <module>\n"
      "KeyboardInterrupt\n"
      "RuntimeError: after the traceback closed: not a traceback\n";
  std::vector<LogEvent> events = ParseWhole(log);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].kind, "traceback");
  EXPECT_EQ(events[0].exception_type, "KeyError");
  EXPECT_EQ(events[0].message, "KeyError: 'lr'");
  EXPECT_EQ(events[0].offset, log.find("KeyError"));
  EXPECT_EQ(events[0].traceback_offset, 0u);
  EXPECT_EQ(events[1].exception_type, "KeyboardInterrupt");
  EXPECT_EQ(events[1].traceback_offset, log.rfind("Traceback"));
}

TEST(LogEventParser, CarriageReturnEndsALine) {
  const std::string log = " 1%|          | 1/100 [00:01<01:39,  1.00it/s]\r"
                          " 2%|▏         | 2/100 [00:02<01:38,  1.00it/s]\r\n"
                          "Killed\r"
                          "Segmentation fault (core dumped)";
  std::vector<LogEvent> events = ParseWhole(log, 1000);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].signal_number, 9);
  EXPECT_EQ(events[0].offset, 1000 + log.find("Killed"));
  EXPECT_EQ(events[1].signal_number, 11);
  EXPECT_EQ(events[1].offset, 1000 + log.find("Segmentation"));
}

TEST(LogEventParser, FinishReadsTheUnterminatedLastLine) {
  LogEventParser parser;
  EXPECT_TRUE(parser.Feed("step 1\nKil", 0).empty());
  EXPECT_TRUE(parser.Feed("led", 10).empty());
  std::vector<LogEvent> events = parser.Finish();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].offset, 7u);
  EXPECT_EQ(events[0].message, "Killed");
  EXPECT_TRUE(parser.Finish().empty());
}

TEST(LogEventParser, AFiveMegabyteLineIsCutNotBuffered) {
  std::string log = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 16.00 GiB. ";
  log.append(5 * 1024 * 1024, 'x');
  log += "\nKilled\n";
  for (size_t piece : {size_t{4096}, size_t{1} << 20, log.size()}) {
    std::vector<LogEvent> events = ParseInPieces(log, [&] { return piece; });
    ASSERT_EQ(events.size(), 2u) << piece;
    EXPECT_EQ(events[0].kind, "cuda_oom");
    EXPECT_EQ(events[0].offset, 0u);
    EXPECT_EQ(events[0].tried_bytes, 16 * kGiB);
    EXPECT_EQ(events[0].message.size(), kMaxLogEventMessageBytes);
    EXPECT_EQ(events[1].kind, "signal");
    EXPECT_EQ(events[1].offset, log.size() - 7);
  }
}

// A log with every kind, some ranks, '\r' lines and multi-byte UTF-8.
std::string MixedLog() {
  return ReadFixture("oom-default.log") + ReadFixture("oom-badconf.log") +
         " 12%|█▏   | 693/20000 [12:01<5:33:12,  1.04it/s]\r"
         " 12%|█▏   | 694/20000 [12:02<5:33:11,  1.04it/s]\r\n"
         "[rank1]:Traceback (most recent call last):\n"
         "[rank1]:  File \"train.py\", line 1, in <module>\n"
         "[rank1]:torch.distributed.DistBackendError: NCCL error in: x.cpp:1, internal error\n"
         "gpu-host:1:2 [0] NCCL WARN Cuda failure 'out of memory' — ünïcödé\n"
         "[rank2]:RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 2; 15.78 GiB "
         "total capacity; 14.51 GiB already allocated; 5.50 MiB free; 14.73 GiB reserved in total "
         "by PyTorch)\n"
         "  traceback : Signal 9 (SIGKILL) received by PID 4242\n"
         "Segmentation fault (core dumped)";
}

TEST(LogEventParser, SplitsDoNotChangeEventsOrOffsets) {
  const std::string log = MixedLog();
  const std::vector<LogEvent> whole = ParseWhole(log);
  ASSERT_EQ(whole.size(), 10u);
  EXPECT_EQ(ParseInPieces(log, [] { return size_t{1}; }), whole);
  for (unsigned seed : {1u, 2u, 3u, 42u, 1234u}) {
    std::mt19937 rng(seed);
    std::uniform_int_distribution<size_t> size(1, 97);
    EXPECT_EQ(ParseInPieces(log, [&] { return size(rng); }), whole) << "seed " << seed;
  }
  std::vector<std::string> kinds;
  for (const LogEvent& e : whole) kinds.push_back(e.kind);
  EXPECT_EQ(kinds, (std::vector<std::string>{"cuda_oom", "traceback", "alloc_conf_invalid",
                                             "traceback", "nccl_error", "traceback", "nccl_error",
                                             "cuda_oom", "signal", "signal"}))
      << "got " << ::testing::PrintToString(kinds);
}

}  // namespace
}  // namespace gpuctl::train
