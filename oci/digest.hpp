// Content digests per the OCI image spec (descriptor.md, "Digests").
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "util/error.hpp"

namespace arec {

enum class DigestAlgorithm { sha256, sha512 };

// A validated `algorithm:encoded` digest. Only the registered algorithms arec can verify are accepted,
// with lowercase hex of exactly the algorithm's length.
class Digest {
 public:
  // An empty digest, valid only as a placeholder to be assigned; parse() is how digests are made.
  Digest() = default;
  static Result<Digest> parse(std::string_view text);

  DigestAlgorithm algorithm() const { return m_algorithm; }
  std::string_view algorithm_name() const;
  const std::string& hex() const { return m_hex; }
  std::string str() const;

  friend bool operator==(const Digest&, const Digest&) = default;
  friend auto operator<=>(const Digest&, const Digest&) = default;

 private:
  Digest(DigestAlgorithm algorithm, std::string hex) : m_algorithm(algorithm), m_hex(std::move(hex)) {}
  friend class Hasher;

  DigestAlgorithm m_algorithm = DigestAlgorithm::sha256;
  std::string m_hex;
};

// Streaming hash over OpenSSL EVP: data is hashed as it passes, so nothing is read twice.
class Hasher {
 public:
  explicit Hasher(DigestAlgorithm algorithm = DigestAlgorithm::sha256);
  ~Hasher();
  Hasher(Hasher&&) noexcept;
  Hasher& operator=(Hasher&&) noexcept;
  Hasher(const Hasher&) = delete;
  Hasher& operator=(const Hasher&) = delete;

  void update(std::span<const std::byte> data);
  void update(std::string_view data);
  // Finishes the hash; the hasher must not be updated afterwards.
  Digest finish();

 private:
  struct Impl;
  std::unique_ptr<Impl> m_impl;
  DigestAlgorithm m_algorithm;
};

Digest digest_of(std::string_view data, DigestAlgorithm algorithm = DigestAlgorithm::sha256);

}  // namespace arec
