// Which Python a new venv gets: the system's when PyTorch supports it, so
// that provisioning needs no download; else one uv downloads, kept where
// every user can read it.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace gpuctl::provision {

// "3.11.2" -> "3.11" when PyTorch publishes wheels for it (3.10 to 3.13:
// Ubuntu 22.04's 3.10, Debian 12's 3.11, Ubuntu 24.04's 3.12, Debian 13's
// 3.13); nullopt for an older or newer Python, or no version.
std::optional<std::string> UsableSystemPython(std::string_view system_version);

// Where uv puts a Python it downloads for the venv: "python" beside the
// venv (/opt/gpuctl/venv -> /opt/gpuctl/python), not root's home.
std::string ManagedPythonDir(std::string_view venv_path);

}  // namespace gpuctl::provision
