#include <cstdio>
const char* core_version();
int main() {
#ifdef NDEBUG
  std::printf("api release on %s\n", core_version());
#else
  std::printf("api debug on %s\n", core_version());
#endif
}
