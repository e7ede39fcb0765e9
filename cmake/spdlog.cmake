# spdlog and fmt compiled once into a static library (cmake/spdlog_compiled.cc
# says why): no libspdlog.so or libfmt.so to ship, and no file that logs
# compiles them again. Link gpuctl_spdlog, never spdlog::* or fmt::* (their
# header-only targets set FMT_HEADER_ONLY, which brings the cost back).
add_library(gpuctl_spdlog STATIC ${CMAKE_CURRENT_LIST_DIR}/spdlog_compiled.cc)
target_compile_definitions(gpuctl_spdlog PUBLIC SPDLOG_COMPILED_LIB SPDLOG_FMT_EXTERNAL)
target_include_directories(gpuctl_spdlog SYSTEM PUBLIC
  $<TARGET_PROPERTY:spdlog::spdlog_header_only,INTERFACE_INCLUDE_DIRECTORIES>
  $<TARGET_PROPERTY:fmt::fmt-header-only,INTERFACE_INCLUDE_DIRECTORIES>)
target_link_libraries(gpuctl_spdlog PUBLIC Threads::Threads)
