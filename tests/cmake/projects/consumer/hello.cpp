#include <cstdio>

const char* greeting();

int main() {
  std::puts(greeting());
  return 0;
}
