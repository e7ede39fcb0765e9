#include "agents/health/xid.h"

#include <gtest/gtest.h>

#include <string>

#include "tests/fakes/temp_dir.h"

namespace gpuctl::health {
namespace {

using gpuctl::testing::ReadFixture;
using namespace std::string_literals;

// ---- the formats ----

TEST(XidParse, DmesgLineWithPidAndName) {
  auto event = ParseXidLine(
      "[ 1234.567890] NVRM: Xid (PCI:0000:1b:00): 79, pid=1234, name=python3, GPU has fallen off the bus.");
  ASSERT_TRUE(event);
  EXPECT_EQ(event->pci_bus_id, "0000:1b:00");
  EXPECT_EQ(event->xid, 79);
  EXPECT_EQ(event->pid, 1234);
  EXPECT_EQ(event->process_name, "python3");
  EXPECT_EQ(event->message, "GPU has fallen off the bus.");
  EXPECT_FALSE(event->kmsg_usec);
  EXPECT_FALSE(event->kmsg_seq);
}

TEST(XidParse, DmesgWallClockStampAndUnknownPid) {
  auto event = ParseXidLine(
      "[Thu Dec  3 10:00:00 2026] NVRM: Xid (PCI:0000:1b:00): 48, pid='<unknown>', name=<unknown>, An uncorrectable "
      "double bit error (DBE) has been detected on GPU in the framebuffer at partition 0, subpartition 0.");
  ASSERT_TRUE(event);
  EXPECT_EQ(event->pci_bus_id, "0000:1b:00");
  EXPECT_EQ(event->xid, 48);
  EXPECT_FALSE(event->pid) << "'<unknown>' is no pid";
  EXPECT_EQ(event->process_name, "<unknown>");
  EXPECT_EQ(event->message,
            "An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer at partition 0, "
            "subpartition 0.");
}

TEST(XidParse, KmsgRecordCarriesSeqAndUsec) {
  auto event = ParseXidLine(
      "4,2345,987654321,-;NVRM: Xid (PCI:0000:3b:00): 13, pid=4242, name=python, Graphics SM Warp Exception on "
      "(GPC 0, TPC 1, SM 0): Out Of Range Address");
  ASSERT_TRUE(event);
  EXPECT_EQ(event->pci_bus_id, "0000:3b:00");
  EXPECT_EQ(event->xid, 13);
  EXPECT_EQ(event->pid, 4242);
  EXPECT_EQ(event->process_name, "python");
  EXPECT_EQ(event->message, "Graphics SM Warp Exception on (GPC 0, TPC 1, SM 0): Out Of Range Address");
  EXPECT_EQ(event->kmsg_seq, 2345u);
  EXPECT_EQ(event->kmsg_usec, 987654321);
}

TEST(XidParse, KmsgRecordWithExtraHeaderFields) {
  // Kernels built with CONFIG_PRINTK_CALLER add ",caller=T123" after FLAGS.
  auto event = ParseXidLine("3,17,5140900,c,caller=T1;NVRM: Xid (PCI:0000:01:00): 79, GPU has fallen off the bus.");
  ASSERT_TRUE(event);
  EXPECT_EQ(event->xid, 79);
  EXPECT_EQ(event->kmsg_seq, 17u);
}

TEST(XidParse, KmsgRecordFromUserSpaceIsRefused) {
  // Priority 12 = facility 1 (user) << 3 | level 4: what `echo ... > /dev/kmsg` makes.
  EXPECT_FALSE(ParseXidLine("12,2346,987654400,-;NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus."));
  EXPECT_FALSE(ParseXidLine("14,1,1,-;NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus."));
  // Facility 0 at every level is the kernel's.
  EXPECT_TRUE(ParseXidLine("0,1,1,-;NVRM: Xid (PCI:0000:3b:00): 79, x"));
  EXPECT_TRUE(ParseXidLine("7,1,1,-;NVRM: Xid (PCI:0000:3b:00): 79, x"));
}

TEST(XidParse, KmsgContinuationLinesAreNotXids) {
  EXPECT_FALSE(ParseXidLine(" SUBSYSTEM=pci"));
  EXPECT_FALSE(ParseXidLine(" DEVICE=+pci:0000:3b:00.0"));
}

TEST(XidParse, OlderDriverWithoutPidOrName) {
  auto event = ParseXidLine("NVRM: Xid (PCI:0000:01:00): 79, GPU has fallen off the bus.");
  ASSERT_TRUE(event);
  EXPECT_EQ(event->pci_bus_id, "0000:01:00");
  EXPECT_EQ(event->xid, 79);
  EXPECT_FALSE(event->pid);
  EXPECT_EQ(event->process_name, "");
  EXPECT_EQ(event->message, "GPU has fallen off the bus.");
}

TEST(XidParse, OldestFormatWithoutPciPrefix) {
  // The Xid document's own example (drivers of the R384 era).
  auto event = ParseXidLine("[...] NVRM: Xid (0000:03:00): 14, Channel 00000001");
  ASSERT_TRUE(event);
  EXPECT_EQ(event->pci_bus_id, "0000:03:00");
  EXPECT_EQ(event->xid, 14);
  EXPECT_EQ(event->message, "Channel 00000001");
}

TEST(XidParse, PidWithoutName) {
  auto event = ParseXidLine("NVRM: Xid (PCI:0000:65:00): 119, pid='N/A', Timeout waiting for RPC from GSP");
  ASSERT_TRUE(event);
  EXPECT_EQ(event->xid, 119);
  EXPECT_FALSE(event->pid);
  EXPECT_EQ(event->process_name, "");
  EXPECT_EQ(event->message, "Timeout waiting for RPC from GSP");
}

TEST(XidParse, MigTagsAfterTheBusId) {
  auto event = ParseXidLine("NVRM: Xid (PCI:0000:3b:00 GPU-I:01 GPU-C:00): 43, pid=77, name=train, Ch 00000010");
  ASSERT_TRUE(event);
  EXPECT_EQ(event->pci_bus_id, "0000:3b:00");
  EXPECT_EQ(event->xid, 43);
  EXPECT_EQ(event->pid, 77);
  EXPECT_EQ(event->message, "Ch 00000010");
}

TEST(XidParse, SyslogLines) {
  auto traditional = ParseXidLine(
      "Dec  3 10:00:00 gpu-7 kernel: [ 1234.567890] NVRM: Xid (PCI:0000:1B:00): 79, pid=1, name=x, GPU has fallen "
      "off the bus.");
  ASSERT_TRUE(traditional);
  EXPECT_EQ(traditional->pci_bus_id, "0000:1b:00");
  auto iso = ParseXidLine("2026-12-03T10:00:00.000000+00:00 gpu-7 kernel: NVRM: Xid (PCI:0000:1b:00): 94, Contained");
  ASSERT_TRUE(iso);
  EXPECT_EQ(iso->xid, 94);
  EXPECT_EQ(iso->message, "Contained");
}

TEST(XidParse, XidWithNothingAfterIt) {
  auto event = ParseXidLine("NVRM: Xid (PCI:0000:01:00): 79");
  ASSERT_TRUE(event);
  EXPECT_EQ(event->xid, 79);
  EXPECT_EQ(event->message, "");
}

TEST(XidParse, TrailingLineEndIsNotPartOfTheMessage) {
  auto event = ParseXidLine("NVRM: Xid (PCI:0000:01:00): 79, GPU has fallen off the bus.\r\n");
  ASSERT_TRUE(event);
  EXPECT_EQ(event->message, "GPU has fallen off the bus.");
}

TEST(XidParse, OtherKernelLinesAreNotXids) {
  EXPECT_FALSE(ParseXidLine("[ 5.1] NVRM: GPU at PCI:0000:1b:00: GPU-c6489789-7836-64bc-561f-33b9f6b86ea3"));
  EXPECT_FALSE(ParseXidLine("[ 5.1] NVRM: GPU 0000:2b:00.0: GPU has fallen off the bus."));
  EXPECT_FALSE(ParseXidLine("6,211,320293,-;pci 0000:00:05.0: BAR 0 [mem 0x4000200000-0x400027ffff 64bit]"));
  EXPECT_FALSE(ParseXidLine("[ 5.1] nvidia-nvswitch0: SXid (PCI:0000:05:00.0): 12028, Non-fatal"));
}

TEST(XidParse, TextBeforeTheMarkerMustBeALogPrefix) {
  // A job that prints a Xid-looking line into something that is not the
  // kernel's own prefix is not believed.
  EXPECT_FALSE(ParseXidLine("echo NVRM: Xid (PCI:0000:01:00): 79, GPU has fallen off the bus."));
  EXPECT_FALSE(ParseXidLine("[ 1.0] python3: NVRM: Xid (PCI:0000:01:00): 79, x"));
  EXPECT_FALSE(ParseXidLine("host notkernel: NVRM: Xid (PCI:0000:01:00): 79, x"));
  EXPECT_FALSE(ParseXidLine("[ 1.0 NVRM: Xid (PCI:0000:01:00): 79, x")) << "an unclosed stamp";
}

// ---- hostile input ----

TEST(XidHostile, EmptyAndTruncatedLines) {
  const std::string full = "[ 1.000000] NVRM: Xid (PCI:0000:1b:00): 79, pid=1234, name=python3, GPU has fallen off";
  // Every prefix of a valid line: must not crash; the ones that stop before
  // the Xid number is complete must not parse.
  size_t number_end = full.find("79") + 2;
  for (size_t n = 0; n <= full.size(); ++n) {
    auto event = ParseXidLine(std::string_view(full).substr(0, n));
    if (n < number_end - 1) {
      EXPECT_FALSE(event) << "prefix of " << n << " bytes: " << full.substr(0, n);
    }
    if (n >= number_end) {
      ASSERT_TRUE(event) << "prefix of " << n << " bytes";
      EXPECT_EQ(event->xid, 79);
    }
  }
  EXPECT_FALSE(ParseXidLine(""));
  EXPECT_FALSE(ParseXidLine("NVRM: Xid ("));
  EXPECT_FALSE(ParseXidLine("Xid (PCI:"));
  EXPECT_FALSE(ParseXidLine("NVRM: Xid (PCI:"));
  EXPECT_FALSE(ParseXidLine("NVRM: Xid (PCI:0000:1b:00"));
  EXPECT_FALSE(ParseXidLine("NVRM: Xid (PCI:0000:1b:00)"));
  EXPECT_FALSE(ParseXidLine("NVRM: Xid (PCI:0000:1b:00):"));
  EXPECT_FALSE(ParseXidLine("NVRM: Xid (PCI:0000:1b:00): "));
  EXPECT_FALSE(ParseXidLine("NVRM: Xid (PCI:0000:1b:00 GPU-I:01"));
  EXPECT_FALSE(ParseXidLine("4,1,1,-;"));
  EXPECT_FALSE(ParseXidLine("4,1,1,-;NVRM: Xid ("));
}

TEST(XidHostile, MalformedNumbersAndIds) {
  EXPECT_FALSE(ParseXidLine("NVRM: Xid (PCI:0000:1b:00): 99999999999999999999, x")) << "xid over int";
  EXPECT_FALSE(ParseXidLine("NVRM: Xid (PCI:0000:1b:00): -79, x"));
  EXPECT_FALSE(ParseXidLine("NVRM: Xid (PCI:0000:1b:00): 79x, x"));
  EXPECT_FALSE(ParseXidLine("NVRM: Xid (PCI:zzzz:1b:00): 79, x"));
  EXPECT_FALSE(ParseXidLine("NVRM: Xid (PCI:0000:1b:20): 79, x")) << "device over 0x1f";
  EXPECT_FALSE(ParseXidLine("NVRM: Xid (PCI:123456789:1b:00): 79, x")) << "domain over 8 digits";
  EXPECT_FALSE(ParseXidLine("NVRM: Xid (): 79, x"));
  EXPECT_FALSE(ParseXidLine("99999999999999999999,1,1,-;NVRM: Xid (PCI:0000:1b:00): 79, x"));
  EXPECT_FALSE(ParseXidLine("4,99999999999999999999999,1,-;NVRM: Xid (PCI:0000:1b:00): 79, x"));

  // A pid too big for any process is an unknown pid, not a lost Xid.
  auto huge_pid = ParseXidLine("NVRM: Xid (PCI:0000:1b:00): 79, pid=99999999999999999999999, name=x, bus");
  ASSERT_TRUE(huge_pid);
  EXPECT_FALSE(huge_pid->pid);
  EXPECT_EQ(huge_pid->message, "bus");
}

TEST(XidHostile, NonAsciiBytesBecomeWellFormedText) {
  std::string line = "NVRM: Xid (PCI:0000:1b:00): 13, pid=5, name=py\xff\xfe, bad \xc3\x28 bytes \xe2\x82\xac";
  auto event = ParseXidLine(line);
  ASSERT_TRUE(event);
  EXPECT_EQ(event->xid, 13);
  EXPECT_EQ(event->process_name, "py\xEF\xBF\xBD\xEF\xBF\xBD");
  EXPECT_EQ(event->message, "bad \xEF\xBF\xBD( bytes \xe2\x82\xac") << "valid UTF-8 is kept";

  std::string with_nul = "NVRM: Xid (PCI:0000:1b:00): 13, a\0b"s;
  auto nul = ParseXidLine(with_nul);
  ASSERT_TRUE(nul);
  EXPECT_EQ(nul->message, "a\0b"s);
  EXPECT_FALSE(ParseXidLine("NVRM: Xid (PCI:0000:1b\0:00): 13, x"s));
}

TEST(XidHostile, LinesOverTheBoundFailWithoutScanning) {
  std::string head = "NVRM: Xid (PCI:0000:1b:00): 79, ";
  std::string at_bound = head + std::string(kMaxXidLineBytes - head.size(), 'a');
  ASSERT_EQ(at_bound.size(), kMaxXidLineBytes);
  EXPECT_TRUE(ParseXidLine(at_bound));
  EXPECT_FALSE(ParseXidLine(at_bound + "a"));
  EXPECT_FALSE(ParseXidLine(std::string(1 << 20, '[')));
}

TEST(XidHostile, NeverReadsPastTheView) {
  // The line is the head of a longer buffer: the parser must stop at the
  // view's end (ASan would catch a read past it in a copy made to size).
  std::string buffer = "NVRM: Xid (PCI:0000:1b:00): 79, pid=12";
  for (size_t n = 0; n <= buffer.size(); ++n) {
    std::string exact(buffer.data(), n);  // its own allocation, no slack
    auto event = ParseXidLine(exact);
    if (event && n == buffer.size()) {
      EXPECT_EQ(event->pid, 12);
    }
  }
  auto cut = ParseXidLine(std::string_view(buffer).substr(0, buffer.size() - 1));
  ASSERT_TRUE(cut);
  EXPECT_EQ(cut->pid, 1) << "the pid ends where the view ends";
}

// ---- bus ids ----

TEST(XidPciBusId, NormalizesEveryForm) {
  EXPECT_EQ(NormalizePciBusId("00000000:1B:00.0"), "0000:1b:00");
  EXPECT_EQ(NormalizePciBusId("0000:1b:00"), "0000:1b:00");
  EXPECT_EQ(NormalizePciBusId("0000:1B:00.3"), "0000:1b:00");
  EXPECT_EQ(NormalizePciBusId("1b:00.0"), "0000:1b:00");
  EXPECT_EQ(NormalizePciBusId("  00000000:1B:00.0\n"), "0000:1b:00");
  EXPECT_EQ(NormalizePciBusId("0:1:2"), "0000:01:02");
  EXPECT_EQ(NormalizePciBusId("00010000:01:1F.7"), "10000:01:1f") << "a domain over 16 bits keeps its digits";
  EXPECT_EQ(NormalizePciBusId("10000:01:1f"), "10000:01:1f");
}

TEST(XidPciBusId, RefusesWhatIsNoBusId) {
  for (std::string_view bad : {"", ":", "::", "0000:1b", "1b", "0000:1b:00.8", "0000:1b:00.", "0000:1b:00.00",
                               "0000:100:00", "0000:1b:20", "000000000:1b:00", "0000:1b:00:00", "GPU-c6489789",
                               "0000 :1b:00", "0x00:1b:00", "-1:1b:00", "0000:1b:00)"}) {
    EXPECT_FALSE(NormalizePciBusId(bad)) << "'" << bad << "'";
  }
}

// The real captures: what NVML and nvidia-smi print for the fixture host's
// H200, and the Xid form of the same GPU, come to one key.
TEST(XidPciBusId, FixtureBusIdsMatchTheXidForm) {
  std::string csv = ReadFixture("query-gpu.csv");
  size_t row = csv.find('\n');
  ASSERT_NE(row, std::string::npos);
  std::string first_gpu = csv.substr(row + 1, csv.find('\n', row + 1) - row - 1);
  // index, uuid, name, pci.bus_id, ...
  size_t field = 0, start = 0;
  for (int i = 0; i < 3; ++i) start = first_gpu.find(',', start) + 1;
  field = first_gpu.find(',', start);
  std::string csv_bus_id = first_gpu.substr(start, field - start);
  ASSERT_EQ(csv_bus_id, " 00000000:00:06.0") << "the capture changed";
  EXPECT_EQ(NormalizePciBusId(csv_bus_id), "0000:00:06");

  std::string xml = ReadFixture("nvidia-smi-q.xml");
  auto element = [&xml](const std::string& tag) {
    size_t open = xml.find("<" + tag + ">");
    size_t close = xml.find("</" + tag + ">");
    if (open == std::string::npos || close == std::string::npos) return std::string();
    open += tag.size() + 2;
    return xml.substr(open, close - open);
  };
  std::string xml_bus_id = element("pci_bus_id");
  ASSERT_EQ(xml_bus_id, "00000000:00:06.0");
  EXPECT_EQ(NormalizePciBusId(xml_bus_id), "0000:00:06");
  // The same from the XML's separate fields, as NVML's pciInfo gives them.
  EXPECT_EQ(NormalizePciBusId(element("pci_domain") + ":" + element("pci_bus") + ":" + element("pci_device")),
            "0000:00:06");

  auto event = ParseXidLine("[ 9.0] NVRM: Xid (PCI:0000:00:06): 79, pid=1, name=x, GPU has fallen off the bus.");
  ASSERT_TRUE(event);
  EXPECT_EQ(event->pci_bus_id, NormalizePciBusId(csv_bus_id));
}

}  // namespace
}  // namespace gpuctl::health
