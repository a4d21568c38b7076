// Finds its configuration, data and plugin where the install rules put them, from where it is installed:
// <prefix>/bin/gateway.
#include <dlfcn.h>
#include <limits.h>
#include <unistd.h>

#include <fstream>
#include <iostream>
#include <string>

#include "gwcore.h"

int main() {
  char self[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) return 3;
  std::string prefix(self, static_cast<std::size_t>(n));
  prefix = prefix.substr(0, prefix.rfind('/')) + "/..";
  std::string config, banner;
  std::ifstream conf(prefix + "/etc/gateway/gateway.conf");
  if (!std::getline(conf, config)) {
    std::cerr << "gateway: no " << prefix << "/etc/gateway/gateway.conf\n";
    return 2;
  }
  std::ifstream data(prefix + "/share/gateway/banner.txt");
  std::getline(data, banner);
  void* plugin = ::dlopen((prefix + "/lib/gateway/plugins/libgwplugin.so").c_str(), RTLD_NOW);
  if (plugin == nullptr) {
    std::cerr << "gateway: " << ::dlerror() << "\n";
    return 1;
  }
  auto greeting = reinterpret_cast<const char* (*)()>(::dlsym(plugin, "plugin_greeting"));
  std::cout << "gateway core=" << gwcore_name() << " config=" << config << " banner=" << banner
            << " plugin=" << (greeting != nullptr ? greeting() : "none") << "\n";
}
