// The fault watch on its own: Xid lines mapped to GPUs by bus id and
// classed, double-bit ECC errors and a GPU no longer listed, each drain once
// with one event and one stop of its jobs; the application's Xids drain
// nothing; an undrain is refused while the GPU still reads faulty.
#include "agents/health/gpu_fault_watch.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/fakes/fake_clock.h"
#include "tests/fakes/temp_dir.h"

namespace gpuctl::health {
namespace {

using ::testing::HasSubstr;

class GpuFaultWatchTest : public ::testing::Test {
 protected:
  GpuFaultWatchTest()
      : drains_(dir_.path() + "/gpu-drains.json"),
        watch_(
            drains_, [this] { return report_; }, clock_,
            [this](std::string message, nlohmann::json fields) { events_.push_back({message, fields}); },
            [this](const sys::GpuDevice& gpu, const std::string& reason) { faults_.push_back({gpu.index, reason}); }) {
    EXPECT_TRUE(drains_.Load().ok());
    report_.source = sys::GpuSourceKind::kNvml;
    for (uint32_t i = 0; i < 4; ++i) {
      sys::GpuDevice gpu;
      gpu.index = i;
      gpu.uuid = "GPU-" + std::to_string(i);
      char bus[32];
      std::snprintf(bus, sizeof bus, "00000000:%02X:00.0", 0x18 + i * 0x10);
      gpu.pci_bus_id = bus;
      report_.devices.push_back(gpu);
    }
  }

  testing::TempDir dir_;
  testing::FakeClock clock_;
  GpuDrains drains_;
  sys::GpuReport report_;
  std::vector<std::pair<std::string, nlohmann::json>> events_;
  std::vector<std::pair<uint32_t, std::string>> faults_;
  GpuFaultWatch watch_;
};

TEST_F(GpuFaultWatchTest, AnXidTheGpuIsToBlameForDrainsItOnce) {
  watch_.Poll({"[ 12.5] NVRM: Xid (PCI:0000:28:00): 79, pid=1, name=python3, GPU has fallen off the bus."});
  EXPECT_TRUE(drains_.IsDrained("GPU-1"));
  EXPECT_FALSE(drains_.IsDrained("GPU-0"));
  ASSERT_EQ(events_.size(), 1u);
  EXPECT_EQ(events_[0].second["gpu"], 1);
  EXPECT_EQ(events_[0].second["xid"], 79);
  EXPECT_EQ(events_[0].second["drained"], true);
  ASSERT_EQ(faults_.size(), 1u);
  EXPECT_EQ(faults_[0].first, 1u);
  EXPECT_THAT(faults_[0].second, HasSubstr("Xid 79"));
  // The same fault again, and another: drained already, nothing more.
  watch_.Poll({"NVRM: Xid (PCI:0000:28:00): 79, GPU has fallen off the bus.",
               "NVRM: Xid (PCI:0000:28:00): 48, An uncorrectable double bit error (DBE) has been detected"});
  EXPECT_EQ(events_.size(), 1u);
  EXPECT_EQ(faults_.size(), 1u);
  EXPECT_EQ(drains_.Find("GPU-1")->xid, 79);
}

TEST_F(GpuFaultWatchTest, TheApplicationsXidsAreReportedAndDrainNothing) {
  watch_.Poll({"[ 13.0] NVRM: Xid (PCI:0000:18:00): 13, pid=5151, name=python3, Graphics SM Warp Exception"});
  EXPECT_TRUE(drains_.All().empty());
  EXPECT_TRUE(faults_.empty());
  ASSERT_EQ(events_.size(), 1u);
  EXPECT_EQ(events_[0].second["class"], "application");
  EXPECT_EQ(events_[0].second["pid"], 5151);
  EXPECT_EQ(events_[0].second["drained"], false);
  // Informational ones, and other kernel lines, say nothing.
  watch_.Poll({"NVRM: Xid (PCI:0000:18:00): 61, Internal micro-controller breakpoint", "usb 1-1: new device"});
  EXPECT_EQ(events_.size(), 1u);
}

TEST_F(GpuFaultWatchTest, DoubleBitEccErrorsDrainAndHoldOffAnUndrain) {
  watch_.Poll({});
  EXPECT_TRUE(drains_.All().empty());
  report_.devices[2].ecc_uncorrected = 3;
  watch_.Poll({});
  EXPECT_TRUE(drains_.IsDrained("GPU-2"));
  ASSERT_EQ(faults_.size(), 1u);
  EXPECT_THAT(faults_[0].second, HasSubstr("double-bit ECC errors: 3"));
  std::optional<std::string> still = watch_.StillFaulty(report_.devices[2]);
  ASSERT_TRUE(still);
  EXPECT_THAT(*still, HasSubstr("double-bit ECC errors: 3"));
  report_.devices[2].ecc_uncorrected = 0;
  EXPECT_FALSE(watch_.StillFaulty(report_.devices[2]));
}

TEST_F(GpuFaultWatchTest, AGpuNoLongerListedIsLost) {
  watch_.Poll({});
  sys::GpuDevice gone = report_.devices[3];
  report_.devices.pop_back();
  watch_.Poll({});
  EXPECT_TRUE(drains_.IsDrained("GPU-3"));
  ASSERT_EQ(faults_.size(), 1u);
  EXPECT_THAT(faults_[0].second, HasSubstr("GPU lost"));
  EXPECT_TRUE(watch_.StillFaulty(gone));
  // A reading that failed says nothing of the GPUs: no drain for the rest.
  report_.devices.clear();
  report_.error = "Failed to initialize NVML: Driver/library version mismatch";
  watch_.Poll({});
  EXPECT_FALSE(drains_.IsDrained("GPU-0"));
  EXPECT_EQ(faults_.size(), 1u);
}

TEST_F(GpuFaultWatchTest, TheDriversOwnFaultReadingsDrain) {
  watch_.Poll({});
  report_.devices[0].row_remap_failure = true;
  report_.devices[1].row_remap_pending = true;
  report_.devices[2].retired_pages_pending = true;
  report_.devices[3].row_remap_pending = false;  // read, and fine
  watch_.Poll({});
  EXPECT_TRUE(drains_.IsDrained("GPU-0"));
  EXPECT_TRUE(drains_.IsDrained("GPU-1"));
  EXPECT_TRUE(drains_.IsDrained("GPU-2"));
  EXPECT_FALSE(drains_.IsDrained("GPU-3"));
  EXPECT_EQ(drains_.Find("GPU-0")->reason, "row remap failure");
  EXPECT_THAT(drains_.Find("GPU-2")->reason, HasSubstr("retired pages pending"));
  EXPECT_EQ(faults_.size(), 3u);
}

TEST_F(GpuFaultWatchTest, ALostGpuDrainsWhileTheOthersReadOn) {
  watch_.Poll({});
  // The reader lists it lost, with no uuid (lost before it could ask), and
  // names it in the reading's error.
  report_.devices[1].lost = true;
  report_.devices[1].uuid.clear();
  report_.error = "GPU 1: nvmlDeviceGetUUID: GPU is lost";
  report_.devices[2].ecc_uncorrected = 1;
  watch_.Poll({});
  EXPECT_TRUE(drains_.IsDrained("GPU-1")) << "known by its index from the reading before";
  EXPECT_TRUE(drains_.IsDrained("GPU-2")) << "the other GPUs still read";
  EXPECT_FALSE(drains_.IsDrained("GPU-0"));
  EXPECT_THAT(drains_.Find("GPU-1")->reason, HasSubstr("GPU lost"));
}

TEST_F(GpuFaultWatchTest, AnXidOnABusNoReadingListedDrainsNothing) {
  watch_.Poll({"NVRM: Xid (PCI:0000:ff:00): 79, GPU has fallen off the bus."});
  EXPECT_TRUE(drains_.All().empty());
  ASSERT_EQ(events_.size(), 1u);
  EXPECT_EQ(events_[0].second["pci_bus_id"], "0000:ff:00");
  EXPECT_THAT(events_[0].first, HasSubstr("no GPU with this bus id"));
}

}  // namespace
}  // namespace gpuctl::health
