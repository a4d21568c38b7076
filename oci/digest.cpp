#include "oci/digest.hpp"

#include <openssl/evp.h>

#include <array>
#include <stdexcept>

namespace arec {

namespace {

std::size_t hex_length(DigestAlgorithm algorithm) { return algorithm == DigestAlgorithm::sha256 ? 64 : 128; }

bool is_lower_hex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); }

}  // namespace

Result<Digest> Digest::parse(std::string_view text) {
  const auto colon = text.find(':');
  if (colon == std::string_view::npos) {
    return fail_input("digest \"" + std::string(text) + "\": missing \"algorithm:\" prefix");
  }
  const auto name = text.substr(0, colon);
  const auto hex = text.substr(colon + 1);
  DigestAlgorithm algorithm;
  if (name == "sha256") {
    algorithm = DigestAlgorithm::sha256;
  } else if (name == "sha512") {
    algorithm = DigestAlgorithm::sha512;
  } else {
    return fail_input("digest \"" + std::string(text) + "\": unsupported algorithm \"" + std::string(name) +
                      "\" (sha256 or sha512)");
  }
  if (hex.size() != hex_length(algorithm)) {
    return fail_input("digest \"" + std::string(text) + "\": " + std::string(name) + " needs " +
                      std::to_string(hex_length(algorithm)) + " hex characters, got " + std::to_string(hex.size()));
  }
  for (char c : hex) {
    if (!is_lower_hex(c)) {
      return fail_input("digest \"" + std::string(text) + "\": '" + std::string(1, c) + "' is not lowercase hex");
    }
  }
  return Digest(algorithm, std::string(hex));
}

std::string_view Digest::algorithm_name() const { return m_algorithm == DigestAlgorithm::sha256 ? "sha256" : "sha512"; }

std::string Digest::str() const { return std::string(algorithm_name()) + ":" + m_hex; }

struct Hasher::Impl {
  EVP_MD_CTX* ctx = nullptr;
  ~Impl() { EVP_MD_CTX_free(ctx); }
};

Hasher::Hasher(DigestAlgorithm algorithm) : m_impl(std::make_unique<Impl>()), m_algorithm(algorithm) {
  m_impl->ctx = EVP_MD_CTX_new();
  const EVP_MD* md = algorithm == DigestAlgorithm::sha256 ? EVP_sha256() : EVP_sha512();
  if (m_impl->ctx == nullptr || EVP_DigestInit_ex(m_impl->ctx, md, nullptr) != 1) {
    throw std::runtime_error("initialising OpenSSL digest failed");
  }
}

Hasher::~Hasher() = default;
Hasher::Hasher(Hasher&&) noexcept = default;
Hasher& Hasher::operator=(Hasher&&) noexcept = default;

void Hasher::update(std::span<const std::byte> data) {
  if (!data.empty()) EVP_DigestUpdate(m_impl->ctx, data.data(), data.size());
}

void Hasher::update(std::string_view data) {
  if (!data.empty()) EVP_DigestUpdate(m_impl->ctx, data.data(), data.size());
}

Digest Hasher::finish() {
  std::array<unsigned char, EVP_MAX_MD_SIZE> raw{};
  unsigned int length = 0;
  EVP_DigestFinal_ex(m_impl->ctx, raw.data(), &length);
  static constexpr char k_hex[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(length * 2);
  for (unsigned int i = 0; i < length; ++i) {
    hex.push_back(k_hex[raw[i] >> 4]);
    hex.push_back(k_hex[raw[i] & 0xf]);
  }
  return Digest(m_algorithm, std::move(hex));
}

Digest digest_of(std::string_view data, DigestAlgorithm algorithm) {
  Hasher hasher(algorithm);
  hasher.update(data);
  return hasher.finish();
}

}  // namespace arec
