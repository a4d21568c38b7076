// builder: builds what the control plane asks for, reduced to what an example needs.
#include <cstdio>
#include <cstdlib>
#include <cstring>

int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "--version") == 0) {
    std::printf("builder %s\n", MESH_VERSION);
    return 0;
  }
  const char* role = std::getenv("MESH_ROLE");
  std::printf("builder %s: ready (role %s)\n", MESH_VERSION, role != nullptr ? role : "unset");
  return 0;
}
