// controlplane: the mesh's control plane, reduced to what an example needs.
#include <cstdio>
#include <cstring>

int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "--version") == 0) {
    std::printf("controlplane %s\n", MESH_VERSION);
    return 0;
  }
  std::printf("controlplane %s: ready\n", MESH_VERSION);
  return 0;
}
