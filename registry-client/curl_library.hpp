// libcurl, loaded when the first request is made rather than when arec starts. With the libraries it
// brings (GnuTLS, Kerberos, LDAP, SSH, IDN, ...) it is more than half of the shared objects arec
// would otherwise map and relocate at every start, which cost each command about 5 ms of its 12, the
// many that never reach a registry (compose, records, resolve) included.
//
// The entries have libcurl's own types (from curl.h), so calls through them are checked as direct
// calls are; curl_easy_setopt stays variadic, as libcurl defines it.
#pragma once

#include <curl/curl.h>

namespace arec::http {

// The soname arec is built against (libcurl's ABI 4, Debian's libcurl4).
inline constexpr const char* k_curl_soname = "libcurl.so.4";

struct CurlLibrary {
  decltype(&::curl_global_init) global_init;
  decltype(&::curl_easy_init) easy_init;
  decltype(&::curl_easy_cleanup) easy_cleanup;
  decltype(&::curl_easy_reset) easy_reset;
  decltype(&::curl_easy_setopt) easy_setopt;
  decltype(&::curl_easy_perform) easy_perform;
  decltype(&::curl_easy_getinfo) easy_getinfo;
  decltype(&::curl_easy_strerror) easy_strerror;
  decltype(&::curl_easy_escape) easy_escape;
  decltype(&::curl_free) free;
  decltype(&::curl_slist_append) slist_append;
  decltype(&::curl_slist_free_all) slist_free_all;
  decltype(&::curl_url) url;
  decltype(&::curl_url_cleanup) url_cleanup;
  decltype(&::curl_url_get) url_get;
  decltype(&::curl_url_set) url_set;
  decltype(&::curl_getdate) getdate;
  decltype(&::curl_version_info) version_info;
};

// libcurl, loaded and initialised (curl_global_init) once. Where it cannot be loaded, arec cannot talk
// to any registry: it says so, naming the library and what to install, and exits with 3.
const CurlLibrary& libcurl();

}  // namespace arec::http
