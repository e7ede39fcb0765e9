#include "client/node/binary_requirements.h"

#include <elf.h>

#include <charconv>
#include <cstring>
#include <optional>

namespace gpuctl::client {
namespace {

// Copies a T out of the file at `offset`, or nothing when it does not fit:
// the bytes may be any file, so every offset is checked before use.
template <typename T>
std::optional<T> ReadAt(std::string_view bytes, uint64_t offset) {
  if (offset > bytes.size() || bytes.size() - offset < sizeof(T)) return std::nullopt;
  T value;
  std::memcpy(&value, bytes.data() + offset, sizeof(T));
  return value;
}

std::optional<std::string_view> StringAt(std::string_view bytes, uint64_t table, uint64_t table_size,
                                         uint64_t index) {
  if (index >= table_size || table > bytes.size() || bytes.size() - table < table_size) return std::nullopt;
  std::string_view strings = bytes.substr(table, table_size);
  size_t end = strings.find('\0', index);
  if (end == std::string_view::npos) return std::nullopt;
  return strings.substr(index, end - index);
}

std::string MachineName(uint16_t machine) {
  switch (machine) {
    case EM_X86_64: return "x86_64";
    case EM_AARCH64: return "aarch64";
    case EM_PPC64: return "ppc64le";
    case EM_RISCV: return "riscv64";
    default: return "elf-machine-" + std::to_string(machine);
  }
}

Status Malformed(const std::string& what) {
  return InvalidArgument("not a usable 64-bit ELF executable: " + what);
}

}  // namespace

std::vector<std::string> LibrariesBeyondGlibc(const BinaryRequirements& needs) {
  // glibc's own libraries and the dynamic loader (any architecture), and
  // libgcc_s, which glibc itself loads for unwinding.
  static constexpr std::string_view kSystem[] = {"libc.so.", "libm.so.", "libdl.so.", "libpthread.so.", "librt.so.",
                                                 "ld-linux", "libgcc_s.so."};
  std::vector<std::string> beyond;
  for (const std::string& library : needs.shared_libraries) {
    bool system = false;
    for (std::string_view prefix : kSystem) system = system || library.rfind(prefix, 0) == 0;
    if (!system) beyond.push_back(library);
  }
  return beyond;
}

Result<GlibcVersion> ParseGlibcVersion(std::string_view text) {
  for (std::string_view prefix : {"glibc ", "GLIBC_"}) {
    if (text.substr(0, prefix.size()) == prefix) text.remove_prefix(prefix.size());
  }
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.remove_suffix(1);
  GlibcVersion version;
  const char* end = text.data() + text.size();
  auto [dot, ec] = std::from_chars(text.data(), end, version.major);
  if (ec != std::errc() || dot == end || *dot != '.') {
    return InvalidArgument("'" + std::string(text) + "' is not a glibc version such as 2.36");
  }
  auto [rest, ec2] = std::from_chars(dot + 1, end, version.minor);
  // "2.35.1" style patch levels are allowed; anything else is not a version.
  if (ec2 != std::errc() || (rest != end && *rest != '.')) {
    return InvalidArgument("'" + std::string(text) + "' is not a glibc version such as 2.36");
  }
  return version;
}

Result<BinaryRequirements> ReadBinaryRequirements(std::string_view elf) {
  std::optional<Elf64_Ehdr> header = ReadAt<Elf64_Ehdr>(elf, 0);
  if (!header || std::memcmp(header->e_ident, ELFMAG, SELFMAG) != 0) return Malformed("no ELF header");
  if (header->e_ident[EI_CLASS] != ELFCLASS64 || header->e_ident[EI_DATA] != ELFDATA2LSB) {
    return Malformed("not 64-bit little-endian");
  }
  BinaryRequirements needs{.machine = MachineName(header->e_machine), .glibc = {}, .shared_libraries = {}};
  if (header->e_shentsize != sizeof(Elf64_Shdr)) return Malformed("odd section header size");

  auto section = [&](uint64_t index) -> std::optional<Elf64_Shdr> {
    if (index >= header->e_shnum) return std::nullopt;
    return ReadAt<Elf64_Shdr>(elf, header->e_shoff + index * sizeof(Elf64_Shdr));
  };
  for (uint64_t i = 0; i < header->e_shnum; ++i) {
    std::optional<Elf64_Shdr> needs_section = section(i);
    if (!needs_section) return Malformed("section table outside the file");
    if (needs_section->sh_type == SHT_DYNAMIC) {
      std::optional<Elf64_Shdr> strings = section(needs_section->sh_link);
      if (!strings) return Malformed("a dynamic section without a string table");
      for (uint64_t at = 0; at + sizeof(Elf64_Dyn) <= needs_section->sh_size; at += sizeof(Elf64_Dyn)) {
        std::optional<Elf64_Dyn> entry = ReadAt<Elf64_Dyn>(elf, needs_section->sh_offset + at);
        if (!entry) return Malformed("the dynamic section is outside the file");
        if (entry->d_tag == DT_NULL) break;
        if (entry->d_tag != DT_NEEDED) continue;
        std::optional<std::string_view> name =
            StringAt(elf, strings->sh_offset, strings->sh_size, entry->d_un.d_val);
        if (!name) return Malformed("a library name outside its string table");
        needs.shared_libraries.emplace_back(*name);
      }
      continue;
    }
    if (needs_section->sh_type != SHT_GNU_verneed) continue;
    std::optional<Elf64_Shdr> strings = section(needs_section->sh_link);
    if (!strings) return Malformed("version needs without a string table");

    // A chain of Verneed records (one per library), each with a chain of
    // Vernaux records (one per version it needs from that library).
    uint64_t at = needs_section->sh_offset;
    for (uint64_t n = 0; n < needs_section->sh_info; ++n) {
      std::optional<Elf64_Verneed> need = ReadAt<Elf64_Verneed>(elf, at);
      if (!need) return Malformed("version needs outside the file");
      uint64_t aux_at = at + need->vn_aux;
      for (uint64_t a = 0; a < need->vn_cnt; ++a) {
        std::optional<Elf64_Vernaux> aux = ReadAt<Elf64_Vernaux>(elf, aux_at);
        if (!aux) return Malformed("version needs outside the file");
        std::optional<std::string_view> name = StringAt(elf, strings->sh_offset, strings->sh_size, aux->vna_name);
        if (!name) return Malformed("a version name outside its string table");
        if (name->substr(0, 6) == "GLIBC_") {
          Result<GlibcVersion> version = ParseGlibcVersion(*name);
          // GLIBC_PRIVATE and the like are not release versions.
          if (version.ok() && *version > needs.glibc) needs.glibc = *version;
        }
        if (aux->vna_next == 0) break;
        aux_at += aux->vna_next;
      }
      if (need->vn_next == 0) break;
      at += need->vn_next;
    }
  }
  return needs;
}

}  // namespace gpuctl::client
