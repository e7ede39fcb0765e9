#include "agents/train/event_keywords.h"

#include <gtest/gtest.h>

#include <string>

namespace gpuctl::train {
namespace {

TEST(MayHoldEvent, LetsKeyWordsThrough) {
  for (const char* line : {
           "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 16.00 GiB. GPU 0 has",
           "12:00 [ERROR] Quantization failed:CUDA out of memory. Tried to allocate 2.00 GiB.",
           "gpu-host:4242:4300 [0] NCCL WARN Cuda failure 'out of memory' on the first try",
           "this is a long line that ends with the name ncclInternalError (and more)",
           "[Rank 2] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=5)",
           "    traceback : Signal 9 (SIGKILL) received by PID 4242 on this host today",
           "torch.multiprocessing.spawn.ProcessExitedException: process 0 terminated with signal",
           "E1203 api.py:869] failed (exitcode: -9) local_rank: 0 (pid: 4242) of binary",
           "Fatal Python error: Segmentation fault, and then some more text after it",
           "/root/run.sh: line 3:  4242 Killed                  python train.py",
           "ValueError: Expected 'True' or 'False' at index 2 in ConfigTokenizer but got 'x'",
           "RuntimeError: Unrecognized CachingAllocator option: expandable_segmentz",
           "RuntimeError: For roundups, the divisions has to be power of 2 or 0 to disable",
       }) {
    EXPECT_TRUE(MayHoldEvent(line)) << line;
  }
}

// Whole-line reports pass by their key word, or by "(core dumped)"; a short
// line is not let through for being short.
TEST(MayHoldEvent, WholeLineReportsPass) {
  EXPECT_TRUE(MayHoldEvent("Killed"));
  EXPECT_TRUE(MayHoldEvent("exit=137"));
  EXPECT_TRUE(MayHoldEvent("Quit (core dumped)"));
  EXPECT_TRUE(MayHoldEvent("Trace/breakpoint trap (core dumped)  "));
  EXPECT_FALSE(MayHoldEvent("warmup: scheduler step 12 of 10000"));
  EXPECT_FALSE(MayHoldEvent(std::string(40, 'x')));
  EXPECT_FALSE(MayHoldEvent("ok"));
}

TEST(MayHoldEvent, StopsOrdinaryLines) {
  for (const char* line : {
           "step 693 | loss 2.104 | lr 3.0e-4 | 13.8 Ktok/s | grad_norm 1.02",
           " 12%|█▏   | 693/20000 [12:01<5:33:12,  1.04it/s] and some padding",
           "[rank3]:[W1203 10:00:00.000000000 ProcessGroupNCCL.cpp:4561] Warning: x",
           "{'loss': 2.1043, 'grad_norm': 1.2345, 'learning_rate': 4.5e-05, 'epoch': 0.12}",
           "INFO 2024-12-03 train.py:123 saving checkpoint to /data/ckpt/step_000693.pt",
       }) {
    EXPECT_FALSE(MayHoldEvent(line)) << line;
  }
}

// Each parser runs only on lines with its own key words: an NCCL_DEBUG=INFO
// line (the bulk of such logs) wakes the NCCL parser alone.
TEST(EventWordsIn, NamesTheParsersWhoseKeyWordsALineHolds) {
  EXPECT_EQ(EventWordsIn("torch.OutOfMemoryError: CUDA out of memory on GPU 0 with 12 GiB in use by this"),
            kCudaOomWords);
  // "allocate" starts as "allocator" does: the allocator config parser looks too.
  EXPECT_EQ(EventWordsIn("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 16.00 GiB. GPU 0"),
            kCudaOomWords | kAllocConfWords);
  EXPECT_EQ(EventWordsIn("node-3:12345:12400 [3] NCCL INFO Channel 02/0 : 3[3] -> 4[4] via P2P/IPC/read"),
            kNcclWords);
  EXPECT_EQ(EventWordsIn("E1203 api.py:869] failed (exitcode: -9) local_rank: 0 (pid: 4242) of binary"),
            kSignalWords);
  EXPECT_EQ(EventWordsIn("RuntimeError: Unrecognized CachingAllocator option: expandable_segmentz"),
            kAllocConfWords);
  // Both: the OOM and the signal parser look at it.
  EXPECT_EQ(EventWordsIn("worker killed by signal after CUDA out of memory on rank 3, see above"),
            kCudaOomWords | kSignalWords);
  EXPECT_EQ(EventWordsIn("Killed"), kSignalWords);
  EXPECT_EQ(EventWordsIn("Alarm clock (core dumped)"), kSignalWords);
  EXPECT_EQ(EventWordsIn("step 693 | loss 2.104 | lr 3.0e-4 | 13.8 Ktok/s | grad_norm 1.02"), 0u);
  // Key words count at word starts only, wherever the line has one, up to
  // its last four bytes.
  EXPECT_EQ(EventWordsIn("xCUDA _NCCL 9Killed nccl_ Kil"), kNcclWords) << "'nccl_' starts a word";
  EXPECT_EQ(EventWordsIn("(CUDA)"), kCudaOomWords);
  EXPECT_EQ(EventWordsIn("..,.CUDA"), kCudaOomWords);
  EXPECT_EQ(EventWordsIn("CUD"), 0u);
  EXPECT_EQ(EventWordsIn("a, b: c ... NCCL"), kNcclWords);
  // A word that only shares the hash of a key word's first four bytes is no key word.
  EXPECT_EQ(EventWordsIn("singular values of the Hessian, computed every 100 steps, look fine"), kAllocConfWords)
      << "'sing' is the first four bytes of 'single': the parser decides";
}

}  // namespace
}  // namespace gpuctl::train
