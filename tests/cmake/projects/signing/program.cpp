#include <cstdio>

int main() { std::puts(PROGRAM); }
