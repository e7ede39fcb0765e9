#include "agents/health/gpu_drains.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cstdio>
#include <thread>

#include "tests/fakes/temp_dir.h"

namespace gpuctl::health {
namespace {

using gpuctl::testing::ReadText;
using gpuctl::testing::TempDir;

GpuDrain XidDrainOf(std::string bus_id, std::string uuid, int xid, int64_t since) {
  GpuDrain drain;
  drain.pci_bus_id = std::move(bus_id);
  drain.uuid = std::move(uuid);
  drain.index = 0;
  drain.reason = "Xid " + std::to_string(xid);
  drain.xid = xid;
  drain.message = "GPU has fallen off the bus.";
  drain.since_unix_ms = since;
  return drain;
}

class GpuDrainsTest : public ::testing::Test {
 protected:
  std::string path() const { return dir_.path() + "/gpu-drains.json"; }
  TempDir dir_;
};

TEST_F(GpuDrainsTest, MissingFileIsAnEmptySet) {
  GpuDrains drains(path());
  ASSERT_TRUE(drains.Load().ok());
  EXPECT_TRUE(drains.All().empty());
  EXPECT_FALSE(drains.IsDrained("0000:1b:00"));
}

TEST_F(GpuDrainsTest, RoundTripAndRestart) {
  {
    GpuDrains drains(path());
    ASSERT_TRUE(drains.Load().ok());
    auto drained = drains.Drain(XidDrainOf("00000000:1B:00.0", "GPU-c6489789-7836-64bc-561f-33b9f6b86ea3", 79, 1000));
    ASSERT_TRUE(drained.ok()) << drained.status().ToString();
    EXPECT_TRUE(*drained);
    GpuDrain manual;
    manual.uuid = "GPU-0b11d014-1685-04bd-26ed-5fc0bc1c44ae";
    manual.index = 3;
    manual.reason = "bad fan";
    manual.message = "operator: fan noise";
    manual.since_unix_ms = 2000;
    manual.manual = true;
    ASSERT_TRUE(drains.Drain(manual).ok());
  }
  // A new agent, the same file.
  GpuDrains restarted(path());
  ASSERT_TRUE(restarted.Load().ok());
  auto all = restarted.All();
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].pci_bus_id, "0000:1b:00") << "stored in canonical form";
  EXPECT_EQ(all[0].uuid, "GPU-c6489789-7836-64bc-561f-33b9f6b86ea3");
  EXPECT_EQ(all[0].index, 0);
  EXPECT_EQ(all[0].reason, "Xid 79");
  EXPECT_EQ(all[0].xid, 79);
  EXPECT_EQ(all[0].message, "GPU has fallen off the bus.");
  EXPECT_EQ(all[0].since_unix_ms, 1000);
  EXPECT_FALSE(all[0].manual);
  EXPECT_EQ(all[1].pci_bus_id, "");
  EXPECT_EQ(all[1].uuid, "GPU-0b11d014-1685-04bd-26ed-5fc0bc1c44ae");
  EXPECT_EQ(all[1].index, 3);
  EXPECT_FALSE(all[1].xid);
  EXPECT_EQ(all[1].since_unix_ms, 2000);
  EXPECT_TRUE(all[1].manual);

  // Found by every name of the GPU.
  EXPECT_TRUE(restarted.IsDrained("0000:1b:00"));
  EXPECT_TRUE(restarted.IsDrained("00000000:1B:00.0"));
  EXPECT_TRUE(restarted.IsDrained("GPU-C6489789-7836-64BC-561F-33B9F6B86EA3"));
  EXPECT_TRUE(restarted.IsDrained("GPU-0b11d014-1685-04bd-26ed-5fc0bc1c44ae"));
  EXPECT_FALSE(restarted.IsDrained("0000:3b:00"));
  EXPECT_FALSE(restarted.IsDrained(""));
  EXPECT_FALSE(restarted.IsDrained("GPU-ffffffff-7836-64bc-561f-33b9f6b86ea3"));

  // The file is the documented shape.
  auto json = nlohmann::json::parse(ReadText(path()));
  EXPECT_EQ(json["version"], 1);
  EXPECT_EQ(json["drains"][0]["xid"], 79);
  EXPECT_TRUE(json["drains"][1]["xid"].is_null());
}

TEST_F(GpuDrainsTest, DrainIsIdempotentAndKeepsTheFirstFault) {
  GpuDrains drains(path());
  ASSERT_TRUE(drains.Load().ok());
  ASSERT_TRUE(*drains.Drain(XidDrainOf("0000:1b:00", "GPU-a", 79, 1000)));
  // The same GPU again, by bus id in another form, then by uuid alone.
  auto again = drains.Drain(XidDrainOf("00000000:1B:00.0", "", 48, 5000));
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(*again);
  auto by_uuid = drains.Drain(XidDrainOf("", "gpu-A", 48, 6000));
  ASSERT_TRUE(by_uuid.ok());
  EXPECT_FALSE(*by_uuid);
  ASSERT_EQ(drains.All().size(), 1u);
  EXPECT_EQ(drains.All()[0].since_unix_ms, 1000);
  EXPECT_EQ(drains.All()[0].xid, 79);

  GpuDrains reread(path());
  ASSERT_TRUE(reread.Load().ok());
  ASSERT_EQ(reread.All().size(), 1u);
  EXPECT_EQ(reread.All()[0].since_unix_ms, 1000);
}

TEST_F(GpuDrainsTest, UndrainByEitherNamePersists) {
  GpuDrains drains(path());
  ASSERT_TRUE(drains.Load().ok());
  ASSERT_TRUE(*drains.Drain(XidDrainOf("0000:1b:00", "GPU-a", 79, 1)));
  ASSERT_TRUE(*drains.Drain(XidDrainOf("0000:3b:00", "GPU-b", 48, 2)));
  auto undrained = drains.Undrain("00000000:1B:00.0");
  ASSERT_TRUE(undrained.ok());
  EXPECT_TRUE(*undrained);
  EXPECT_FALSE(drains.IsDrained("0000:1b:00"));
  auto by_uuid = drains.Undrain("GPU-B");
  ASSERT_TRUE(by_uuid.ok());
  EXPECT_TRUE(*by_uuid);
  auto none = drains.Undrain("0000:5e:00");
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(*none);

  GpuDrains reread(path());
  ASSERT_TRUE(reread.Load().ok());
  EXPECT_TRUE(reread.All().empty());
  // Undrained, a GPU can be drained anew, with a new since.
  ASSERT_TRUE(*reread.Drain(XidDrainOf("0000:1b:00", "GPU-a", 79, 9)));
  EXPECT_EQ(reread.Find("GPU-a")->since_unix_ms, 9);
}

TEST_F(GpuDrainsTest, RefusesADrainThatNamesNoGpu) {
  GpuDrains drains(path());
  ASSERT_TRUE(drains.Load().ok());
  auto nameless = drains.Drain(GpuDrain{});
  ASSERT_FALSE(nameless.ok());
  EXPECT_EQ(nameless.status().code(), ErrorCode::kInvalidArgument);
  auto bad_bus = drains.Drain(XidDrainOf("not-a-bus", "GPU-a", 79, 1));
  ASSERT_FALSE(bad_bus.ok());
  EXPECT_EQ(bad_bus.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(bad_bus.status().message().find("not-a-bus"), std::string::npos);
  EXPECT_TRUE(drains.All().empty());
}

TEST_F(GpuDrainsTest, CorruptFileIsAnErrorNamingThePathAndIsKept) {
  for (std::string corrupt :
       {std::string("{\"version\": 1, \"drains\": [{\"pci_bus_id\": \"0000:1b:00\""), std::string(""),
        std::string("[]"), std::string("{\"version\": 2, \"drains\": []}"), std::string("{\"version\": 1}"),
        std::string("{\"version\": 1, \"drains\": [{\"uuid\": \"GPU-a\"}]}"),
        std::string("{\"version\": 1, \"drains\": [{\"pci_bus_id\": \"zz\", \"since_unix_ms\": 1}]}"),
        std::string("{\"version\": 1, \"drains\": [{\"uuid\": \"GPU-a\", \"since_unix_ms\": 1e300}]}"),
        std::string("{\"version\": 1, \"drains\": [{\"since_unix_ms\": 1}]}"), std::string("\xff\xfe")}) {
    SCOPED_TRACE(corrupt);
    dir_.WriteFile("gpu-drains.json", corrupt);
    GpuDrains drains(path());
    Status loaded = drains.Load();
    ASSERT_FALSE(loaded.ok());
    EXPECT_EQ(loaded.code(), ErrorCode::kFailedPrecondition);
    EXPECT_NE(loaded.message().find(path()), std::string::npos) << loaded.message();
    // Never taken for an empty set, never overwritten.
    auto drained = drains.Drain(XidDrainOf("0000:1b:00", "GPU-a", 79, 1));
    ASSERT_FALSE(drained.ok());
    EXPECT_EQ(drained.status().code(), ErrorCode::kFailedPrecondition);
    EXPECT_FALSE(drains.Undrain("GPU-a").ok());
    EXPECT_EQ(ReadText(path()), corrupt);
  }
}

TEST_F(GpuDrainsTest, FailedReloadKeepsWhatWasHeld) {
  GpuDrains drains(path());
  ASSERT_TRUE(drains.Load().ok());
  ASSERT_TRUE(*drains.Drain(XidDrainOf("0000:1b:00", "GPU-a", 79, 1)));
  dir_.WriteFile("gpu-drains.json", "{garbage");
  EXPECT_FALSE(drains.Load().ok());
  EXPECT_TRUE(drains.IsDrained("GPU-a"));
}

TEST_F(GpuDrainsTest, DrainBeforeLoadIsRefused) {
  GpuDrains drains(path());
  auto drained = drains.Drain(XidDrainOf("0000:1b:00", "GPU-a", 79, 1));
  ASSERT_FALSE(drained.ok());
  EXPECT_EQ(drained.status().code(), ErrorCode::kFailedPrecondition);
}

TEST_F(GpuDrainsTest, AFailedWriteChangesNothing) {
  GpuDrains drains(dir_.path() + "/missing-dir/gpu-drains.json");
  ASSERT_TRUE(drains.Load().ok()) << "a missing directory reads as no file";
  auto drained = drains.Drain(XidDrainOf("0000:1b:00", "GPU-a", 79, 1));
  ASSERT_FALSE(drained.ok());
  EXPECT_FALSE(drains.IsDrained("GPU-a")) << "the record comes before the effect";
}

TEST_F(GpuDrainsTest, MessagesWithAnyBytesAreWritten) {
  GpuDrains drains(path());
  ASSERT_TRUE(drains.Load().ok());
  GpuDrain drain = XidDrainOf("0000:1b:00", "GPU-a", 13, 1);
  drain.message = "bad \xff byte";
  ASSERT_TRUE(drains.Drain(drain).ok());
  GpuDrains reread(path());
  ASSERT_TRUE(reread.Load().ok());
  EXPECT_EQ(reread.All()[0].message, "bad \xEF\xBF\xBD byte");
}

TEST_F(GpuDrainsTest, ConcurrentDrainsAllLand) {
  GpuDrains drains(path());
  ASSERT_TRUE(drains.Load().ok());
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&drains, i] {
      char bus[16];
      std::snprintf(bus, sizeof bus, "0000:%02x:00", i + 1);
      ASSERT_TRUE(drains.Drain(XidDrainOf(bus, "", 79, i)).ok());
      (void)drains.IsDrained(bus);
    });
  }
  for (auto& thread : threads) thread.join();
  GpuDrains reread(path());
  ASSERT_TRUE(reread.Load().ok());
  EXPECT_EQ(reread.All().size(), 8u);
}

}  // namespace
}  // namespace gpuctl::health
