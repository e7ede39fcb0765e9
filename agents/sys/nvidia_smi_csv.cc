#include "agents/sys/nvidia_smi_csv.h"

#include <charconv>
#include <functional>
#include <limits>
#include <map>
#include <optional>

#include "agents/sys/text_fields.h"
#include "common/units.h"

namespace gpuctl::sys {
namespace {

std::vector<std::string_view> NonBlankLines(std::string_view text) {
  std::vector<std::string_view> lines;
  while (!text.empty()) {
    size_t end = text.find('\n');
    std::string_view line = Trim(text.substr(0, end));
    if (!line.empty()) lines.push_back(line);
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  return lines;
}

std::vector<std::string_view> SplitCells(std::string_view line) {
  std::vector<std::string_view> cells;
  while (true) {
    size_t sep = line.find(", ");
    cells.push_back(Trim(line.substr(0, sep)));
    if (sep == std::string_view::npos) break;
    line.remove_prefix(sep + 2);
  }
  return cells;
}

// A header cell or query field as the parser knows it: units dropped
// ("memory.total [MiB]"), renamed fields mapped to one name.
std::string CanonicalField(std::string_view cell) {
  std::string_view name = Trim(cell.substr(0, cell.find(" [")));
  if (name == "clocks_throttle_reasons.active") return "clocks_event_reasons.active";
  if (name == "used_gpu_memory") return "used_memory";
  return std::string(name);
}

// What nvidia-smi prints where it has no value.
bool IsUnavailable(std::string_view v) {
  return v.empty() || v == "N/A" || (v.front() == '[' && v.back() == ']');
}

template <typename T>
std::optional<T> ParseUnsigned(std::string_view v, int base = 10) {
  uint64_t value = 0;
  auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), value, base);
  if (ec != std::errc() || end != v.data() + v.size() || value > std::numeric_limits<T>::max()) {
    return std::nullopt;
  }
  return static_cast<T>(value);
}

std::optional<double> ParseDouble(std::string_view v) {
  double value = 0;
  auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), value);
  if (ec != std::errc() || end != v.data() + v.size()) return std::nullopt;
  return value;
}

using Units = std::vector<std::string_view>;

// "143771 MiB" -> "143771" when the unit is one of `units`; a bare number as is.
std::optional<std::string_view> NumberPart(std::string_view v, const Units& units) {
  size_t space = v.find(' ');
  if (space == std::string_view::npos) return v;
  std::string_view unit = Trim(v.substr(space + 1));
  for (std::string_view u : units) {
    if (unit == u) return v.substr(0, space);
  }
  return std::nullopt;
}

// A setter stores one cell's value; it returns false when the cell does not
// parse (an unavailable value is fine and leaves the field empty).
template <typename Row>
using Setter = std::function<bool(Row&, std::string_view)>;

// An unsigned value in `units`, multiplied by `scale` (MiB -> bytes).
template <typename Row, typename T>
Setter<Row> Unsigned(std::optional<T> Row::*field, Units units, uint64_t scale = 1) {
  return [field, units, scale](Row& row, std::string_view v) {
    if (IsUnavailable(v)) return true;
    auto number = NumberPart(v, units);
    auto parsed = number ? ParseUnsigned<T>(*number) : std::nullopt;
    if (!parsed || *parsed > std::numeric_limits<T>::max() / scale) return false;
    row.*field = static_cast<T>(*parsed * scale);
    return true;
  };
}

template <typename Row>
Setter<Row> Double(std::optional<double> Row::*field, Units units) {
  return [field, units](Row& row, std::string_view v) {
    if (IsUnavailable(v)) return true;
    auto number = NumberPart(v, units);
    auto parsed = number ? ParseDouble(*number) : std::nullopt;
    if (parsed) row.*field = *parsed;
    return parsed.has_value();
  };
}

// nvidia-smi's flags: "Yes" or "No", nothing else.
template <typename Row>
Setter<Row> YesNo(std::optional<bool> Row::*field) {
  return [field](Row& row, std::string_view v) {
    if (IsUnavailable(v)) return true;
    if (v != "Yes" && v != "No") return false;
    row.*field = v == "Yes";
    return true;
  };
}

template <typename Row>
Setter<Row> Text(std::string Row::*field) {
  return [field](Row& row, std::string_view v) {
    row.*field = IsUnavailable(v) ? std::string() : std::string(v);
    return true;
  };
}

const std::map<std::string, Setter<GpuDevice>>& GpuSetters() {
  static const auto* setters = new std::map<std::string, Setter<GpuDevice>>{
      {"index",
       [](GpuDevice& d, std::string_view v) {
         auto index = ParseUnsigned<uint32_t>(v);
         if (index) d.index = *index;
         return index.has_value();
       }},
      {"uuid", Text(&GpuDevice::uuid)},
      {"name", Text(&GpuDevice::name)},
      {"pci.bus_id", Text(&GpuDevice::pci_bus_id)},
      {"compute_cap", Text(&GpuDevice::compute_capability)},
      {"driver_version", Text(&GpuDevice::driver_version)},
      {"memory.total", Unsigned(&GpuDevice::memory_total_bytes, {"MiB"}, kMiB)},
      {"memory.used", Unsigned(&GpuDevice::memory_used_bytes, {"MiB"}, kMiB)},
      {"memory.free", Unsigned(&GpuDevice::memory_free_bytes, {"MiB"}, kMiB)},
      {"utilization.gpu", Unsigned(&GpuDevice::utilization_gpu_pct, {"%"})},
      {"utilization.memory", Unsigned(&GpuDevice::utilization_memory_pct, {"%"})},
      {"temperature.gpu", Unsigned(&GpuDevice::temperature_c, {"C"})},
      {"power.draw", Double(&GpuDevice::power_draw_w, {"W"})},
      {"power.limit", Double(&GpuDevice::power_limit_w, {"W"})},
      {"clocks_event_reasons.active", [](GpuDevice& d, std::string_view v) {
         if (IsUnavailable(v)) return true;
         if (!v.starts_with("0x") && !v.starts_with("0X")) return false;
         auto mask = ParseUnsigned<uint64_t>(v.substr(2), 16);
         if (mask) d.clock_event_reasons = DecodeClockEventReasons(*mask);
         return mask.has_value();
       }},
      {"ecc.errors.uncorrected.volatile.total", Unsigned(&GpuDevice::ecc_uncorrected, {})},
      {"retired_pages.pending", YesNo(&GpuDevice::retired_pages_pending)},
  };
  return *setters;
}

const std::map<std::string, Setter<RemappedRows>>& RemapSetters() {
  static const auto* setters = new std::map<std::string, Setter<RemappedRows>>{
      {"gpu_uuid", Text(&RemappedRows::gpu_uuid)},
      {"remapped_rows.pending", YesNo(&RemappedRows::pending)},
      {"remapped_rows.failure", YesNo(&RemappedRows::failure)},
  };
  return *setters;
}

const std::map<std::string, Setter<ComputeApp>>& AppSetters() {
  static const auto* setters = new std::map<std::string, Setter<ComputeApp>>{
      {"pid",
       [](ComputeApp& a, std::string_view v) {
         auto pid = ParseUnsigned<uint32_t>(v);
         if (pid) a.process.pid = *pid;
         return pid.has_value();
       }},
      {"process_name",
       [](ComputeApp& a, std::string_view v) {
         a.process.name = IsUnavailable(v) ? std::string() : std::string(v);
         return true;
       }},
      {"used_memory",
       [](ComputeApp& a, std::string_view v) {
         if (IsUnavailable(v)) return true;
         auto number = NumberPart(v, {"MiB"});
         auto mib = number ? ParseUnsigned<uint64_t>(*number) : std::nullopt;
         if (mib) a.process.used_memory_bytes = *mib * kMiB;
         return mib.has_value();
       }},
      {"gpu_uuid", Text(&ComputeApp::gpu_uuid)},
  };
  return *setters;
}

// Shared by both queries: header or field list -> columns, rows -> Row.
template <typename Row>
Result<std::vector<Row>> ParseCsv(std::string_view text, const std::vector<std::string>& fields,
                                  const std::map<std::string, Setter<Row>>& setters,
                                  std::string_view free_text_field, std::string_view query) {
  std::vector<std::string_view> lines = NonBlankLines(text);
  std::vector<std::string> columns;
  for (const auto& f : fields) columns.push_back(CanonicalField(f));
  size_t first_row = 0;
  if (!lines.empty()) {
    std::vector<std::string_view> cells = SplitCells(lines[0]);
    if (setters.count(CanonicalField(cells[0])) != 0) {
      columns.clear();
      for (std::string_view c : cells) columns.push_back(CanonicalField(c));
      first_row = 1;
    }
  }
  size_t free_col = columns.size();
  for (size_t i = 0; i < columns.size(); ++i) {
    if (columns[i] == free_text_field) free_col = i;
  }

  std::vector<Row> rows;
  for (size_t l = first_row; l < lines.size(); ++l) {
    std::string where = "nvidia-smi " + std::string(query) + " line " + std::to_string(l + 1);
    std::vector<std::string_view> cells = SplitCells(lines[l]);
    std::vector<std::string> values(cells.begin(), cells.end());
    if (values.size() > columns.size() && free_col < columns.size()) {
      // The free-text cell held ", ": glue its pieces back together.
      size_t extra = values.size() - columns.size();
      auto first = values.begin() + static_cast<std::ptrdiff_t>(free_col);
      for (size_t k = 1; k <= extra; ++k) *first += ", " + *(first + static_cast<std::ptrdiff_t>(k));
      values.erase(first + 1, first + 1 + static_cast<std::ptrdiff_t>(extra));
    }
    if (values.size() != columns.size()) {
      return InvalidArgument(where + ": " + std::to_string(values.size()) + " columns, expected " +
                             std::to_string(columns.size()) + " (" + std::string(lines[l]) + ")");
    }
    Row row;
    for (size_t c = 0; c < columns.size(); ++c) {
      auto setter = setters.find(columns[c]);
      if (setter == setters.end()) continue;  // a field gpuctl does not use
      if (!setter->second(row, values[c])) {
        return InvalidArgument(where + ", " + columns[c] + ": cannot parse '" + values[c] + "'");
      }
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace

std::vector<std::string> GpuQueryFields(ClockReasonsField reasons) {
  return {"index",
          "uuid",
          "name",
          "pci.bus_id",
          "compute_cap",
          "driver_version",
          "memory.total",
          "memory.used",
          "memory.free",
          "utilization.gpu",
          "utilization.memory",
          "temperature.gpu",
          "power.draw",
          "power.limit",
          reasons == ClockReasonsField::kEvent ? "clocks_event_reasons.active"
                                               : "clocks_throttle_reasons.active",
          "ecc.errors.uncorrected.volatile.total",
          "retired_pages.pending"};
}

std::vector<std::string> RemappedRowsQueryFields() {
  return {"gpu_uuid", "remapped_rows.pending", "remapped_rows.failure"};
}

std::vector<std::string> ComputeAppsQueryFields() {
  return {"pid", "process_name", "used_memory", "gpu_uuid"};
}

std::string JoinQueryFields(const std::vector<std::string>& fields) {
  std::string joined;
  for (const auto& f : fields) {
    if (!joined.empty()) joined += ',';
    joined += f;
  }
  return joined;
}

Result<std::vector<GpuDevice>> ParseGpuQueryCsv(std::string_view text,
                                                const std::vector<std::string>& fields) {
  return ParseCsv<GpuDevice>(text, fields, GpuSetters(), "name", "--query-gpu");
}

Result<std::vector<ComputeApp>> ParseComputeAppsCsv(std::string_view text,
                                                    const std::vector<std::string>& fields) {
  return ParseCsv<ComputeApp>(text, fields, AppSetters(), "process_name", "--query-compute-apps");
}

Result<std::vector<RemappedRows>> ParseRemappedRowsCsv(std::string_view text,
                                                       const std::vector<std::string>& fields) {
  return ParseCsv<RemappedRows>(text, fields, RemapSetters(), "", "--query-remapped-rows");
}

void AttachRemappedRows(std::vector<GpuDevice>& devices, const std::vector<RemappedRows>& rows) {
  for (const auto& row : rows) {
    for (auto& device : devices) {
      if (device.uuid == row.gpu_uuid) {
        device.row_remap_pending = row.pending;
        device.row_remap_failure = row.failure;
        break;
      }
    }
  }
}

void AttachComputeApps(std::vector<GpuDevice>& devices, const std::vector<ComputeApp>& apps) {
  for (const auto& app : apps) {
    for (auto& device : devices) {
      if (device.uuid == app.gpu_uuid) {
        device.processes.push_back(app.process);
        break;
      }
    }
  }
}

}  // namespace gpuctl::sys
