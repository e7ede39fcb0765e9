// How an older nvidia-smi says no, and how gpuctl asks again. nvidia-smi
// refuses a whole query for one field or switch it does not know, so a new
// optional field must never cost the values of the others. Pure functions of
// nvidia-smi's output (stdout and stderr, any other lines around).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpuctl::sys {

// What nvidia-smi prints (exit code 2) for a field it does not know:
// 'Field "retired_pages.pending" is not a valid field to query.' gives
// "retired_pages.pending"; any other output gives nothing. `output` may hold
// other lines around it.
std::optional<std::string> RefusedQueryField(std::string_view output);

// True when `output` is nvidia-smi refusing a switch it does not know:
// "ERROR: Option --query-remapped-rows=... is not recognized. Please run
// 'nvidia-smi -h' for help." for `option` "--query-remapped-rows".
bool RefusesOption(std::string_view output, std::string_view option);

// Adapts a --query-gpu field list to an nvidia-smi that refused `refused`:
// clocks_event_reasons.active becomes clocks_throttle_reasons.active (drivers
// before 535), an optional field is removed. Returns false, leaving `fields`
// as it was, for a field gpuctl cannot do without or one not in `fields`;
// each true answer removes one refusable name, so retrying terminates.
bool DropRefusedField(std::vector<std::string>& fields, std::string_view refused);

}  // namespace gpuctl::sys
