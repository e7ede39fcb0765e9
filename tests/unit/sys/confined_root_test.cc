// A container's root may plant links anywhere under its root: the host
// agent's file functions must stay inside it, through openat2 and through
// the walk used on kernels without it.
#include "agents/sys/confined_root.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/openat2.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "agents/sys/files.h"
#include "tests/fakes/temp_dir.h"

namespace gpuctl::sys {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;

using gpuctl::testing::ReadText;

// host/secret: a host file. lxc/200/rootfs: a container's root, registered
// through the {vmid} template as the agent does.
class ConfinedRootTest : public ::testing::TestWithParam<bool> {
 protected:
  ConfinedRootTest() {
    ForceConfinedWalkForTesting(GetParam());
    dir_.WriteFile("host/secret", "host secret\n");
    dir_.MakeDir("lxc/200/rootfs/var/lib/gpuctl/jobs");
    AddConfinedRoot(dir_.path() + "/lxc/{vmid}/rootfs");
  }
  ~ConfinedRootTest() override { ForceConfinedWalkForTesting(false); }

  std::string Root() const { return dir_.path() + "/lxc/200/rootfs"; }
  std::string Host() const { return dir_.path() + "/host"; }
  void Link(const std::string& target, const std::string& inside) const {
    fs::create_symlink(target, Root() + "/" + inside);
  }

  TempDir dir_;
};

TEST_P(ConfinedRootTest, TheTemplateMatchesAnyContainerAndOnlyBeneathItsRoot) {
  std::optional<ConfinedPath> where = FindConfinedRoot(dir_.path() + "/lxc/417/rootfs/var/log/x");
  ASSERT_TRUE(where.has_value());
  EXPECT_EQ(where->root, dir_.path() + "/lxc/417/rootfs");
  EXPECT_EQ(where->rest, "var/log/x");
  EXPECT_FALSE(FindConfinedRoot(dir_.path() + "/lxc/417/rootfs").has_value());
  EXPECT_FALSE(FindConfinedRoot(dir_.path() + "/lxc/417/config").has_value());
  EXPECT_FALSE(FindConfinedRoot(dir_.path() + "/lxc//rootfs/x").has_value());
  EXPECT_FALSE(FindConfinedRoot(Host() + "/secret").has_value());
}

TEST_P(ConfinedRootTest, ALinkedJobsDirectoryNeverLeadsAReadToAHostFile) {
  fs::remove(Root() + "/var/lib/gpuctl/jobs");
  Link(Host(), "var/lib/gpuctl/jobs");  // absolute: resolved inside the root, where there is no such dir
  EXPECT_FALSE(ReadRegularFile(Root() + "/var/lib/gpuctl/jobs/secret", 100).ok());
  fs::remove(Root() + "/var/lib/gpuctl/jobs");
  Link("../../../../../host", "var/lib/gpuctl/jobs");  // relative: ".." stops at the root
  EXPECT_FALSE(ReadRegularFile(Root() + "/var/lib/gpuctl/jobs/secret", 100).ok());
  EXPECT_FALSE(RegularFileSize(Root() + "/var/lib/gpuctl/jobs/secret").ok());
  EXPECT_FALSE(PathExists(Root() + "/var/lib/gpuctl/jobs/secret"));
}

TEST_P(ConfinedRootTest, WritesRemovesAndRenamesThroughALinkedDirectoryStayInside) {
  fs::remove(Root() + "/var/lib/gpuctl/jobs");
  Link("../../../../../host", "var/lib/gpuctl/jobs");
  const std::string through = Root() + "/var/lib/gpuctl/jobs/secret";
  EXPECT_FALSE(WriteFileAtomic(through, "overwritten").ok());
  (void)RemoveFile(through);  // nothing there inside (openat2), or refused (the walk)
  EXPECT_FALSE(RenameFile(through, through + ".prev").ok());
  EXPECT_EQ(ReadText(Host() + "/secret"), "host secret\n");
  EXPECT_FALSE(fs::exists(Host() + "/secret.prev"));
}

TEST_P(ConfinedRootTest, EnsureDirBuildsInsideTheRootAndRefusesWhatLeadsOut) {
  ASSERT_TRUE(EnsureDir(Root() + "/var/lib/gpuctl/jobs/a", 0755).ok());
  EXPECT_TRUE(fs::is_directory(Root() + "/var/lib/gpuctl/jobs/a"));
  Link("../../../../../host", "var/lib/gpuctl/jobs/b");
  EXPECT_FALSE(EnsureDir(Root() + "/var/lib/gpuctl/jobs/b/c", 0755).ok());
  EXPECT_FALSE(fs::exists(Host() + "/c"));
}

TEST_P(ConfinedRootTest, OrdinaryFilesInsideWorkAsBefore) {
  const std::string log = Root() + "/var/lib/gpuctl/jobs/output.log";
  ASSERT_TRUE(WriteFileAtomic(log, "line 1\n").ok());
  EXPECT_EQ(ReadRegularFile(log, 100).value_or("?"), "line 1\n");
  EXPECT_EQ(RegularFileSize(log).value_or(0), 7u);
  ASSERT_TRUE(RenameFile(log, log + ".prev").ok());
  EXPECT_EQ(ReadText(log + ".prev"), "line 1\n");
  ASSERT_TRUE(RemoveFile(log + ".prev").ok());
  EXPECT_FALSE(fs::exists(log + ".prev"));
  EXPECT_TRUE(IsDirectory(Root() + "/var/lib"));
}

TEST_P(ConfinedRootTest, AFinalLinkIsNeverFollowedForReading) {
  Link(Host() + "/secret", "var/lib/gpuctl/jobs/output.log");
  Result<std::string> text = ReadRegularFile(Root() + "/var/lib/gpuctl/jobs/output.log", 100);
  ASSERT_FALSE(text.ok());
  EXPECT_NE(text.status().message().find("symbolic link"), std::string::npos) << text.status().message();
}

// Whether this kernel (or emulator: qemu-user 7.2 has no openat2) has it.
bool KernelHasOpenAt2() {
  open_how how{};
  how.flags = O_RDONLY | O_DIRECTORY;
  long fd = ::syscall(SYS_openat2, AT_FDCWD, "/", &how, sizeof how);
  if (fd >= 0) ::close(static_cast<int>(fd));
  return fd >= 0 || errno != ENOSYS;
}

// openat2 resolves a link inside the root, as the container would; the walk
// (forced, or where there is no openat2) refuses every link, inside ones too.
// Neither ever leaves the root.
TEST_P(ConfinedRootTest, AWorkingDirectoryLinkIsFollowedOnlyInsideTheRoot) {
  const bool resolves_inside_links = !GetParam() && KernelHasOpenAt2();
  dir_.MakeDir("lxc/200/rootfs/srv/data");
  Link("/srv/data", "home");  // absolute inside the container: its own /srv/data
  EXPECT_EQ(IsDirectory(Root() + "/home"), resolves_inside_links);
  Link(Host(), "escape");  // the host's directory does not exist inside
  EXPECT_FALSE(IsDirectory(Root() + "/escape"));
}

INSTANTIATE_TEST_SUITE_P(OpenAt2AndWalk, ConfinedRootTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& param) {
                           return param.param ? std::string("Walk") : std::string("OpenAt2");
                         });

}  // namespace
}  // namespace gpuctl::sys
