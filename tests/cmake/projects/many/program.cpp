#include <cstdio>

int main() {
  std::printf("program %d\n", PROGRAM_NUMBER);
  return 0;
}
