#include "client/commands/provision_command.h"

#include <memory>
#include <ostream>

#include "client/commands/command_context.h"
#include "client/node/node_connect.h"
#include "client/node/node_store.h"
#include "client/output/provision_output.h"
#include "common/json_text.h"

namespace gpuctl::client {

namespace {
// `--cuda ''` would silently mean the default; a value given must be one.
const CLI::Validator kNotEmpty(
    [](std::string& value) {
      return value.empty() ? std::string("an empty value is not one: leave the flag out for the default")
                           : std::string();
    },
    "", "not empty");

struct ProvisionFlags {
  std::string node;
  bool dry_run = false;
  std::vector<std::string> steps;
  std::string cuda, torch, venv, ext, container, driver_branch, torch_index, ext_source;
  bool replace_driver = false;
  bool secure_boot_enrolled = false;
  bool allow_insecure_index = false;
  bool cuda_unlisted = false;
};

// Without NAME: the agent of --agent / --node / the local socket. With NAME:
// that node's agent over SSH, bootstrapped (uploaded, started) if need be.
Result<std::unique_ptr<AgentClient>> Connect(CommandContext& ctx, const std::string& node) {
  if (node.empty()) return ctx.ConnectAgent();
  return ConnectNode(ctx, node, {.bootstrap = true});
}

void RunProvision(CommandContext& ctx, const ProvisionFlags& flags) {
  v1::ProvisionRequest request;
  for (const auto& step : flags.steps) request.add_steps(step);
  request.set_dry_run(flags.dry_run);
  request.set_cuda_version(flags.cuda);
  request.set_torch_version(flags.torch);
  request.set_venv_path(flags.venv);
  request.set_ext(flags.ext);
  request.set_ext_source(flags.ext_source);
  request.set_container(flags.container);
  request.set_driver_branch(flags.driver_branch);
  request.set_replace_driver(flags.replace_driver);
  request.set_secure_boot_enrolled(flags.secure_boot_enrolled);
  request.set_torch_index(flags.torch_index);
  request.set_allow_insecure_index(flags.allow_insecure_index);
  request.set_cuda_unlisted(flags.cuda_unlisted);
  // A node added with --container is provisioned inside that container.
  if (flags.container.empty() && !flags.node.empty()) {
    Result<Node> node = DefaultNodeStore().Find(flags.node);
    if (node.ok() && node->container_vmid) request.set_container(std::to_string(*node->container_vmid));
  }

  auto agent = Connect(ctx, flags.node);
  if (!agent.ok()) return ctx.Fail(agent.status());

  std::ostream& out = ctx.console.out;
  const bool json = ctx.global.format() == OutputFormat::kJson;
  std::optional<v1::ProvisionSummary> summary;
  Status s = (*agent)->Provision(request, [&](const v1::ProvisionEvent& event) {
    if (event.has_summary()) summary = event.summary();
    if (json) {
      out << DumpJson(ProvisionEventToJson(event), -1) << "\n";
    } else if (event.has_step()) {
      out << StepEventToText(event.step());
    } else {
      out << ProvisionSummaryToText(event.summary());
    }
    out.flush();  // installs take minutes: show each line as it comes
    return true;
  });
  if (!s.ok()) return ctx.Fail(s);
  if (!summary) {
    return ctx.Fail(Unavailable("the agent ended the provisioning stream without a summary; rerun to see where it stopped"));
  }
  if (!summary->ok()) ctx.exit_code = summary->refused() ? kExitUsage : kExitFailure;
}

}  // namespace

void AddProvisionCommand(CLI::App& app, CommandContext& context) {
  CLI::App* provision = app.add_subcommand("provision", "Bring a GPU host to a known state: driver, CUDA, venv, torch, extensions");
  provision->require_subcommand(1);
  auto flags = std::make_shared<ProvisionFlags>();
  CLI::App* node = provision->add_subcommand("node", "Provision a node (or, without NAME, the agent of --agent)");
  node->footer(
      "Each step checks whether it is already done (then it is skipped), applies its commands, and checks again. "
      "Steps run in this order: driver (NVIDIA's CUDA apt repository; nvidia-open, or cuda-drivers for GPUs "
      "before Turing, of one branch pinned by nvidia-driver-pinning-BRANCH, after the kernel's headers; a working "
      "driver is kept; in an LXC guest the user space at the host module's version), cuda (cuda-toolkit-X-Y and /etc/profile.d/gpuctl-cuda.sh), venv (uv "
      "venv), torch (from the wheel index matching the toolkit's CUDA major), ext (an extension such as flash-attn "
      "built for the GPUs present, as a guarded job). With --container VMID on a Proxmox host the container's GPU "
      "passthrough is checked first and the steps run inside it through pct exec.\n"
      "A failed step stops the run with its command, exit status and last output; rerun to resume. --dry-run "
      "prints the plan and the exact commands and changes nothing.\n"
      "-o json prints one JSON object per line: {\"step\": {...}} per step phase, {\"summary\": {...}} last.\n"
      "Exit 0 ok, 1 a step failed, 2 bad input or a step refused (a mismatch, missing passthrough), 3 the agent "
      "cannot be reached.");
  node->add_option("NAME", flags->node, "Node from `gpuctl node add`; omitted: the agent of --agent (this host)");
  node->add_flag("--dry-run", flags->dry_run, "Print the plan and the exact commands; change nothing");
  node->add_option("--steps", flags->steps, "Steps to consider (default driver,cuda,venv,torch, plus ext with --ext)")
      ->delimiter(',')
      ->check(CLI::IsMember({"driver", "cuda", "venv", "torch", "ext"}));
  node->add_option("--cuda", flags->cuda, "CUDA toolkit MAJOR.MINOR (default 13.1)")->check(kNotEmpty);
  node->add_option("--torch", flags->torch, "PyTorch version (default 2.10.0)")->check(kNotEmpty);
  node->add_option("--venv", flags->venv, "The venv's absolute path (default /opt/gpuctl/venv)")->check(kNotEmpty);
  node->add_option("--ext", flags->ext, "A CUDA extension to build, e.g. flash-attn")->check(kNotEmpty);
  node->add_option("--ext-source", flags->ext_source,
                   "Build --ext from this source directory or sdist on the node (absolute), not the package index")
      ->check(kNotEmpty);
  node->add_option("--container", flags->container,
                   "Proxmox LXC VMID: provision inside that container (default: the node's, from node add --container)")
      ->check(kNotEmpty);
  node->add_option("--driver-branch", flags->driver_branch,
                   "NVIDIA driver branch to install and pin, e.g. 580 or 595 (default 580, the long-term branch; a "
                   "working driver of another branch is kept unless this is given)")
      ->check(kNotEmpty);
  node->add_flag("--replace-driver", flags->replace_driver,
                 "Replace a loaded driver of another branch or source (running CUDA jobs break until the reboot)");
  node->add_flag("--secure-boot-enrolled", flags->secure_boot_enrolled,
                 "Secure Boot is on and the DKMS signing key is enrolled (mokutil): install the driver anyway");
  node->add_option("--torch-index", flags->torch_index,
                   "Wheel index URL for torch (a mirror of PyTorch's cuXXX index), https://; default: PyTorch's for "
                   "the CUDA")
      ->check(kNotEmpty);
  node->add_flag("--cuda-unlisted", flags->cuda_unlisted,
                 "Try a --cuda newer than the releases gpuctl knows (refused otherwise, before any step runs)");
  node->add_flag("--allow-insecure-index", flags->allow_insecure_index,
                 "Accept an http:// --torch-index (torch is installed as root from it; the plan says so)");
  node->callback([&context, flags] { RunProvision(context, *flags); });
}

}  // namespace gpuctl::client
