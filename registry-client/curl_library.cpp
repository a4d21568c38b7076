#include "registry-client/curl_library.hpp"

#include <dlfcn.h>
#include <spdlog/spdlog.h>

#include <cstdlib>
#include <string>

namespace arec::http {

namespace {

[[noreturn]] void unavailable(const std::string& why) {
  spdlog::error("cannot load {}, which every registry request needs ({}): install Debian's libcurl4", k_curl_soname,
                why);
  std::exit(3);
}

template <typename Function>
void bind(void* library, Function& entry, const char* name) {
  void* symbol = ::dlsym(library, name);
  if (symbol == nullptr) unavailable(std::string(name) + " is missing from it");
  entry = reinterpret_cast<Function>(symbol);
}

CurlLibrary load() {
  // Local: arec's own code is the only user of these symbols, and asks for each one by name.
  void* library = ::dlopen(k_curl_soname, RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) unavailable(::dlerror());
  CurlLibrary c{};
  bind(library, c.global_init, "curl_global_init");
  bind(library, c.easy_init, "curl_easy_init");
  bind(library, c.easy_cleanup, "curl_easy_cleanup");
  bind(library, c.easy_reset, "curl_easy_reset");
  bind(library, c.easy_setopt, "curl_easy_setopt");
  bind(library, c.easy_perform, "curl_easy_perform");
  bind(library, c.easy_getinfo, "curl_easy_getinfo");
  bind(library, c.easy_strerror, "curl_easy_strerror");
  bind(library, c.easy_escape, "curl_easy_escape");
  bind(library, c.free, "curl_free");
  bind(library, c.slist_append, "curl_slist_append");
  bind(library, c.slist_free_all, "curl_slist_free_all");
  bind(library, c.url, "curl_url");
  bind(library, c.url_cleanup, "curl_url_cleanup");
  bind(library, c.url_get, "curl_url_get");
  bind(library, c.url_set, "curl_url_set");
  bind(library, c.getdate, "curl_getdate");
  bind(library, c.version_info, "curl_version_info");
  // Never unloaded: the handles and the TLS library's state live until the process ends.
  if (const CURLcode code = c.global_init(CURL_GLOBAL_DEFAULT); code != CURLE_OK)
    unavailable(std::string("curl_global_init: ") + c.easy_strerror(code));
  return c;
}

}  // namespace

const CurlLibrary& libcurl() {
  static const CurlLibrary library = load();  // thread-safe: push's threads may ask first together
  return library;
}

}  // namespace arec::http
