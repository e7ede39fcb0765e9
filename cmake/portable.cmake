# A portable build: gpuctld and gpuctl run, unchanged, on any Linux host of
# the same architecture with glibc >= 2.34, with nothing else installed.
#
# Debian ships static archives (libfoo.a beside libfoo.so) for everything we
# link but glibc: gRPC, protobuf, abseil, c-ares, re2, upb, OpenSSL, zlib and
# libssh. The packages' CMake files and pkg-config point at the shared
# objects, so after find_package() this walks every imported target we link
# and points it at the archive instead. glibc stays dynamic: NVML is
# dlopen'd, and a static glibc cannot do that safely. libstdc++ is linked
# statically (older hosts have an older one); libgcc_s stays shared, as every
# glibc system has it and the static unwinder would pull in GLIBC_2.35's
# _dl_find_object.

option(GPUCTL_PORTABLE "Link third-party libraries statically (the shipped, portable build)" ON)

# Points an imported target (and, recursively, what it links) at static
# archives where Debian has them. Entries that are plain paths to a .so are
# rewritten the same way.
function(_gpuctl_static_path path out)
  set(${out} "" PARENT_SCOPE)
  # -lNAME, as pkg-config gives it (re2): the archive in the multiarch dir.
  if(path MATCHES "^-l([A-Za-z0-9_+.-]+)$")
    set(path "/usr/lib/${CMAKE_LIBRARY_ARCHITECTURE}/lib${CMAKE_MATCH_1}.so")
  endif()
  if(path MATCHES "^(.*)/lib([^/]+)\\.so(\\.[0-9.]+)?$")
    set(candidate "${CMAKE_MATCH_1}/lib${CMAKE_MATCH_2}.a")
    if(EXISTS "${candidate}")
      set(${out} "${candidate}" PARENT_SCOPE)
    endif()
  endif()
endfunction()

function(gpuctl_prefer_static_archives)
  foreach(target IN LISTS ARGN)
    get_property(done GLOBAL PROPERTY _gpuctl_static_done)
    if(NOT TARGET ${target} OR target IN_LIST done)
      continue()
    endif()
    list(APPEND done ${target})
    set_property(GLOBAL PROPERTY _gpuctl_static_done "${done}")
    get_target_property(aliased ${target} ALIASED_TARGET)
    if(aliased)
      gpuctl_prefer_static_archives(${aliased})
      continue()
    endif()
    get_target_property(imported ${target} IMPORTED)
    if(NOT imported)
      continue()
    endif()
    get_target_property(type ${target} TYPE)
    if(NOT type STREQUAL "INTERFACE_LIBRARY")
      get_target_property(configs ${target} IMPORTED_CONFIGURATIONS)
      set(properties IMPORTED_LOCATION)
      if(configs)
        foreach(config IN LISTS configs)
          string(TOUPPER "${config}" config)
          list(APPEND properties IMPORTED_LOCATION_${config})
        endforeach()
      endif()
      foreach(property IN LISTS properties)
        get_target_property(location ${target} ${property})
        if(location)
          _gpuctl_static_path("${location}" archive)
          if(archive)
            set_target_properties(${target} PROPERTIES ${property} "${archive}")
          endif()
        endif()
      endforeach()
    endif()
    get_target_property(links ${target} INTERFACE_LINK_LIBRARIES)
    if(links)
      set(rewritten "")
      foreach(item IN LISTS links)
        if(TARGET ${item})
          gpuctl_prefer_static_archives(${item})
          list(APPEND rewritten ${item})
        else()
          _gpuctl_static_path("${item}" archive)
          if(archive)
            list(APPEND rewritten "${archive}")
          else()
            list(APPEND rewritten "${item}")
          endif()
        endif()
      endforeach()
      set_target_properties(${target} PROPERTIES INTERFACE_LINK_LIBRARIES "${rewritten}")
    endif()
  endforeach()
endfunction()

# What the shipped executables (gpuctld, gpuctl) get on top:
# - arc4random.c (see there why);
# - debug info moved to TARGET.debug beside the binary, which is then
#   stripped: what bootstrap uploads and the .deb ships is the small binary,
#   and gdb still finds the symbols through the debuglink.
function(gpuctl_portable_executable target)
  if(NOT GPUCTL_PORTABLE)
    return()
  endif()
  target_sources(${target} PRIVATE ${PROJECT_SOURCE_DIR}/cmake/arc4random.c)
  if(CMAKE_OBJCOPY AND CMAKE_STRIP)
    add_custom_command(TARGET ${target} POST_BUILD
      COMMAND ${CMAKE_OBJCOPY} --only-keep-debug $<TARGET_FILE:${target}> $<TARGET_FILE:${target}>.debug
      COMMAND ${CMAKE_STRIP} --strip-all $<TARGET_FILE:${target}>
      COMMAND ${CMAKE_OBJCOPY} --add-gnu-debuglink=$<TARGET_FILE_NAME:${target}>.debug $<TARGET_FILE:${target}>
      WORKING_DIRECTORY $<TARGET_FILE_DIR:${target}>
      COMMENT "Stripping ${target} (debug info in ${target}.debug)"
      VERBATIM)
  endif()
endfunction()
