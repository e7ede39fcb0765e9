# prometheus-cpp (core and pull) and civetweb, the HTTP server it serves
# /metrics with, compiled from Debian 12's own source packages (unpacked into
# .deps/ by scripts/debian-sources.sh, which install-deps.sh runs) into static
# libraries. Debian ships them only as shared libraries (prometheus-cpp-dev
# has no .a), and gpuctld must start on a fresh host without them.
set(GPUCTL_DEPS_DIR ${CMAKE_SOURCE_DIR}/.deps CACHE PATH "Where scripts/debian-sources.sh unpacked prometheus-cpp and civetweb")
set(_prom ${GPUCTL_DEPS_DIR}/prometheus-cpp)
set(_civet ${GPUCTL_DEPS_DIR}/civetweb)
if(NOT EXISTS ${_prom}/core/src/registry.cc OR NOT EXISTS ${_civet}/src/civetweb.c)
  message(FATAL_ERROR "prometheus-cpp and civetweb sources are not in ${GPUCTL_DEPS_DIR}: "
                      "run scripts/install-deps.sh (or scripts/debian-sources.sh)")
endif()
find_package(OpenSSL REQUIRED)
if(GPUCTL_PORTABLE)
  gpuctl_prefer_static_archives(OpenSSL::SSL OpenSSL::Crypto)
endif()

# TLS linked in (NO_SSL_DL) against OpenSSL 3; no CGI, files or Lua: it only
# serves prometheus-cpp's handler.
add_library(gpuctl_civetweb STATIC ${_civet}/src/civetweb.c ${_civet}/src/CivetServer.cpp)
target_include_directories(gpuctl_civetweb SYSTEM PUBLIC ${_civet}/include)
target_compile_definitions(gpuctl_civetweb PRIVATE NO_CGI NO_CACHING NO_SSL_DL OPENSSL_API_3_0 USE_IPV6)
target_link_libraries(gpuctl_civetweb PUBLIC OpenSSL::SSL OpenSSL::Crypto Threads::Threads ${CMAKE_DL_LIBS})
set_target_properties(gpuctl_civetweb PROPERTIES POSITION_INDEPENDENT_CODE ON)

# The export headers prometheus-cpp's CMake would generate: static, so empty.
set(_export_dir ${CMAKE_BINARY_DIR}/prometheus-export)
foreach(part CORE PULL)
  string(TOLOWER ${part} lower)
  file(WRITE ${_export_dir}/prometheus/detail/${lower}_export.h.tmp
       "#pragma once\n#define PROMETHEUS_CPP_${part}_EXPORT\n#define PROMETHEUS_CPP_${part}_NO_EXPORT\n")
  configure_file(${_export_dir}/prometheus/detail/${lower}_export.h.tmp
                 ${_export_dir}/prometheus/detail/${lower}_export.h COPYONLY)
endforeach()

file(GLOB _prom_sources ${_prom}/core/src/*.cc ${_prom}/core/src/detail/*.cc ${_prom}/pull/src/*.cc
     ${_prom}/pull/src/detail/*.cc)
add_library(gpuctl_prometheus STATIC ${_prom_sources})
target_include_directories(gpuctl_prometheus SYSTEM PUBLIC ${_prom}/core/include ${_prom}/pull/include ${_export_dir})
target_include_directories(gpuctl_prometheus PRIVATE ${_prom}/core/src ${_prom}/pull/src)
target_link_libraries(gpuctl_prometheus PUBLIC gpuctl_civetweb)
target_compile_features(gpuctl_prometheus PUBLIC cxx_std_14)
# Not our code to make batch-safe (see CMAKE_UNITY_BUILD in scripts/sanitize.sh).
set_target_properties(gpuctl_civetweb gpuctl_prometheus PROPERTIES UNITY_BUILD OFF)
