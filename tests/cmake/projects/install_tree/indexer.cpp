#include <iostream>

#include "tinyidx.h"

extern "C" unsigned fastcrc(const char* text);
int vendor_level();

int main() {
  std::cout << "indexer tinyidx=" << tinyidx_version() << " fastcrc=" << fastcrc("abc") << " vendor=" << vendor_level()
            << "\n";
}
