/* Debian's libssh.a is built with GSSAPI (Kerberos) authentication, but
 * Debian ships no static Kerberos library. gpuctl authenticates only with
 * ssh-agent and key files (ssh_auth.cc) and never serves SSH, so libssh's
 * GSSAPI code is linked but never reached. These definitions let the
 * portable client link without libgssapi_krb5.so.2, which minimal hosts
 * lack; should libssh ever call one, it gets GSS_S_FAILURE and falls back
 * to the next method, exactly as on a host without Kerberos credentials.
 *
 * Built only in the portable (static) build; the dynamic build gets the
 * real library through libssh.so. */
#include <stddef.h>
#include <stdint.h>

typedef uint32_t OM_uint32;
#define GSS_S_FAILURE ((OM_uint32)13 << 16)

/* gss_OID values libssh passes to gss_import_name. */
void *GSS_C_NT_HOSTBASED_SERVICE = NULL;
void *GSS_C_NT_USER_NAME = NULL;

/* Each entry fails without touching its arguments. The x86_64 and aarch64
 * calling conventions let a callee ignore arguments it does not declare. */
#define GPUCTL_NO_GSSAPI(name) \
  OM_uint32 name(void);        \
  OM_uint32 name(void) { return GSS_S_FAILURE; }

GPUCTL_NO_GSSAPI(gss_accept_sec_context)
GPUCTL_NO_GSSAPI(gss_acquire_cred)
GPUCTL_NO_GSSAPI(gss_add_oid_set_member)
GPUCTL_NO_GSSAPI(gss_create_empty_oid_set)
GPUCTL_NO_GSSAPI(gss_display_name)
GPUCTL_NO_GSSAPI(gss_display_status)
GPUCTL_NO_GSSAPI(gss_get_mic)
GPUCTL_NO_GSSAPI(gss_import_name)
GPUCTL_NO_GSSAPI(gss_indicate_mechs)
GPUCTL_NO_GSSAPI(gss_init_sec_context)
GPUCTL_NO_GSSAPI(gss_inquire_cred)
GPUCTL_NO_GSSAPI(gss_inquire_cred_by_mech)
GPUCTL_NO_GSSAPI(gss_release_buffer)
GPUCTL_NO_GSSAPI(gss_release_cred)
GPUCTL_NO_GSSAPI(gss_release_name)
GPUCTL_NO_GSSAPI(gss_release_oid_set)
GPUCTL_NO_GSSAPI(gss_test_oid_set_member)
GPUCTL_NO_GSSAPI(gss_verify_mic)
