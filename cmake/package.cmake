# The .deb (CPack): gpuctld and gpuctl in /usr/bin, the systemd unit, a
# default config (a conffile: an edited one survives upgrades) and the state
# directory. `bash scripts/package.sh` builds it; its last line is the path.
set(GPUCTL_DEPLOY_DIR ${PROJECT_SOURCE_DIR}/deploy)

# The unit as shipped in deploy/ runs /usr/local/bin/gpuctld (where
# `gpuctl node bootstrap` puts it); the package's runs /usr/bin/gpuctld.
file(READ ${GPUCTL_DEPLOY_DIR}/gpuctld.service unit)
string(REPLACE "/usr/local/bin/gpuctld" "/usr/bin/gpuctld" unit "${unit}")
file(WRITE ${CMAKE_BINARY_DIR}/package/gpuctld.service "${unit}")
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${GPUCTL_DEPLOY_DIR}/gpuctld.service)

install(FILES ${CMAKE_BINARY_DIR}/package/gpuctld.service DESTINATION lib/systemd/system COMPONENT agent)
install(FILES ${GPUCTL_DEPLOY_DIR}/gpuctld.json DESTINATION /etc/gpuctl COMPONENT agent)
install(DIRECTORY DESTINATION /var/lib/gpuctl DIRECTORY_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE
        COMPONENT agent)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME gpuctl)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "gpuctl maintainers <gpuctl@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "GPU host agent (gpuctld) and client (gpuctl): health, training jobs, memory guard")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION admin)
# libc6 and libgcc-s1 from dpkg-shlibdeps (the binaries need nothing else);
# tmux because every job runs in it.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "tmux")
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA
    ${GPUCTL_DEPLOY_DIR}/debian/conffiles ${GPUCTL_DEPLOY_DIR}/debian/postinst
    ${GPUCTL_DEPLOY_DIR}/debian/prerm ${GPUCTL_DEPLOY_DIR}/debian/postrm)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
include(CPack)
