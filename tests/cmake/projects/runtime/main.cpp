// Prints something from each library it links: its own, libstdc++, libcrypto and zlib.
#include <openssl/evp.h>
#include <zlib.h>

#include <cstdio>
#include <iostream>
#include <string>

std::string greeting(const std::string& name);

int main() {
  const std::string text = "arec";
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_Digest(text.data(), text.size(), digest, &length, EVP_sha256(), nullptr);
  std::string hex;
  char byte[3];
  for (unsigned int i = 0; i < length; ++i) {
    std::snprintf(byte, sizeof byte, "%02x", digest[i]);
    hex += byte;
  }
  const auto crc = crc32(0, reinterpret_cast<const Bytef*>(text.data()), static_cast<uInt>(text.size()));
  std::cout << greeting("image") << "\nsha256(arec)=" << hex << "\ncrc32(arec)=" << crc << "\nzlib " << zlibVersion()
            << '\n';
}
