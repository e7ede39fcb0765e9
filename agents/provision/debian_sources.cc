#include "agents/provision/debian_sources.h"

#include <algorithm>
#include <set>
#include "agents/sys/text_fields.h"

namespace gpuctl::provision {
namespace {

struct SourceEntry {
  std::vector<std::string> types;  // deb, deb-src
  std::vector<std::string> uris;
  std::vector<std::string> suites;
  std::vector<std::string> components;
  std::string signed_by;  // a keyring path; empty when none (or an inline key)
};

std::vector<std::string> Words(std::string_view text) {
  std::vector<std::string> words;
  for (std::string_view word : sys::Words(text)) words.emplace_back(word);
  return words;
}

bool Has(const std::vector<std::string>& items, std::string_view item) {
  return std::find(items.begin(), items.end(), item) != items.end();
}

std::string Trim(std::string_view s) { return std::string(sys::Trim(s)); }

// "deb [arch=amd64 signed-by=/usr/share/keyrings/x.gpg] URI SUITE COMP..."
void ParseOneLine(std::string_view text, std::vector<SourceEntry>& entries) {
  for (std::string_view raw : sys::Lines(text)) {
    std::string line = Trim(raw.substr(0, raw.find('#')));
    if (line.empty()) continue;
    SourceEntry entry;
    std::string rest = line;
    size_t type_end = rest.find_first_of(" \t");
    if (type_end == std::string::npos) continue;
    entry.types = {rest.substr(0, type_end)};
    rest = Trim(rest.substr(type_end));
    if (!rest.empty() && rest[0] == '[') {
      size_t close = rest.find(']');
      if (close == std::string::npos) continue;
      for (const std::string& option : Words(rest.substr(1, close - 1))) {
        if (option.rfind("signed-by=", 0) == 0) entry.signed_by = option.substr(10);
      }
      rest = rest.substr(close + 1);
    }
    std::vector<std::string> words = Words(rest);
    if (words.size() < 2) continue;
    entry.uris = {words[0]};
    entry.suites = {words[1]};
    entry.components.assign(words.begin() + 2, words.end());
    entries.push_back(std::move(entry));
  }
}

// deb822 stanzas: "Field: value", continuation lines start with a space.
void ParseDeb822(std::string_view text, std::vector<SourceEntry>& entries) {
  SourceEntry entry;
  bool enabled = true;
  bool any = false;
  std::string field;
  auto finish = [&] {
    if (any && enabled) entries.push_back(entry);
    entry = SourceEntry{};
    enabled = true;
    any = false;
  };
  for (std::string_view raw : sys::Lines(text)) {
    std::string line(raw);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (Trim(line).empty()) {
      finish();
      continue;
    }
    if (line[0] == '#') continue;
    if (line[0] == ' ' || line[0] == '\t') {
      if (field == "Signed-By") entry.signed_by.clear();  // an inline key: not a path to copy
      continue;
    }
    size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    field = Trim(line.substr(0, colon));
    std::string value = Trim(line.substr(colon + 1));
    any = true;
    if (field == "Types") entry.types = Words(value);
    if (field == "URIs") entry.uris = Words(value);
    if (field == "Suites") entry.suites = Words(value);
    if (field == "Components") entry.components = Words(value);
    if (field == "Signed-By") entry.signed_by = value.rfind('/', 0) == 0 ? value : "";
    if (field == "Enabled") enabled = value != "no";
  }
  finish();
}

}  // namespace

ContribStatus DebianContribStatus(const std::vector<AptSourceFile>& files) {
  std::vector<SourceEntry> entries;
  for (const AptSourceFile& file : files) {
    if (file.name.ends_with(".sources")) {
      ParseDeb822(file.text, entries);
    } else if (file.name.ends_with(".list")) {
      ParseOneLine(file.text, entries);
    }
  }
  ContribStatus status;
  std::set<std::string> lines;
  std::string list;
  for (const SourceEntry& entry : entries) {
    if (!Has(entry.types, "deb")) continue;
    if (Has(entry.components, "contrib")) status.enabled = true;
    if (!Has(entry.components, "main")) continue;  // a flat or third-party repository
    for (const std::string& uri : entry.uris) {
      for (const std::string& suite : entry.suites) {
        std::string line = "deb ";
        if (!entry.signed_by.empty()) line += "[signed-by=" + entry.signed_by + "] ";
        line += uri + " " + suite + " contrib\n";
        if (lines.insert(line).second) list += line;
      }
    }
  }
  if (!status.enabled && !list.empty()) {
    status.contrib_list = "# gpuctl: NVIDIA's driver packages for Debian need contrib\n" + list;
  }
  return status;
}

}  // namespace gpuctl::provision
