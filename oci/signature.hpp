// Signatures as the sigstore ecosystem verifies them: key-based Sigstore bundles (v0.3) holding a DSSE
// envelope of an in-toto Statement v1, signed and checked with OpenSSL EVP (ECDSA P-256 with SHA-256,
// or Ed25519). No transparency log: a team's own key is the root of trust.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "oci/digest.hpp"
#include "util/error.hpp"
#include "util/fs.hpp"

typedef struct evp_pkey_st EVP_PKEY;

namespace arec {

namespace media_type {
inline constexpr std::string_view k_sigstore_bundle = "application/vnd.dev.sigstore.bundle.v0.3+json";
inline constexpr std::string_view k_in_toto = "application/vnd.in-toto+json";
}  // namespace media_type

namespace predicate_type {
// cosign's statement of a signature ("this key signed these digests"), with an empty predicate.
inline constexpr std::string_view k_sign = "https://sigstore.dev/cosign/sign/v1";
inline constexpr std::string_view k_slsa_provenance = "https://slsa.dev/provenance/v1";
}  // namespace predicate_type

inline constexpr std::string_view k_in_toto_statement = "https://in-toto.io/Statement/v1";

// A bundle is a few kilobytes; anything much larger is not one, and is refused before it is read whole.
inline constexpr std::size_t k_max_bundle = 256 * 1024;

// A key of OpenSSL's (private or public). Its fingerprint is the lowercase hex SHA-256 of its DER
// SubjectPublicKeyInfo: the bundle's `publicKey.hint`, as sigstore's verifiers look keys up by.
class Key {
 public:
  Key(Key&&) noexcept = default;
  Key& operator=(Key&&) noexcept = default;
  ~Key();

  // A PEM private key (PKCS#8 or SEC1; EC P-256 or Ed25519) from `file`, which must be readable by its
  // owner alone: a key others can read is no longer the team's. Errors name the file, never its bytes.
  static Result<Key> load_private(const fs::Path& file);
  // Every PEM public key (SubjectPublicKeyInfo) of `file`, in order: a team's trust file may hold the key
  // it signs with now and the one it rotates to. The file and its directory must be writable by their
  // owner alone (a directory with the sticky bit, such as /tmp, keeps others from replacing the file): a
  // trusted key others can replace is no longer the team's. A file holding no public key, or a PEM block
  // of another kind, is an error naming the file.
  static Result<std::vector<Key>> load_public_keys(const fs::Path& file);
  // A new EC P-256 key.
  static Result<Key> generate();

  const std::string& fingerprint() const { return m_fingerprint; }
  // The public half of this key, as a key of its own (what a private key's signatures are checked with).
  Result<Key> public_key() const;
  bool is_private() const { return m_private; }
  Result<std::string> public_pem() const;
  Result<std::string> private_pem() const;  // PKCS#8

  // A signature of `message`: DER ECDSA over its SHA-256, or Ed25519 over the message itself.
  Result<std::string> sign(std::string_view message) const;
  bool verifies(std::string_view message, std::string_view signature) const;

 private:
  struct Free {
    void operator()(EVP_PKEY* key) const;
  };
  Key(EVP_PKEY* key, bool is_private);
  std::unique_ptr<EVP_PKEY, Free> m_key;
  bool m_private = false;
  std::string m_fingerprint;
};

// DSSE's pre-authentication encoding, the bytes a DSSE signature signs:
// "DSSEv1" SP LEN(type) SP type SP LEN(body) SP body.
std::string dsse_pae(std::string_view payload_type, std::string_view payload);

// One subject of a statement: a name (module/name, never an address) and a sha256 digest.
struct StatementSubject {
  std::string name;
  Digest digest;
};

// An in-toto Statement v1.
struct Statement {
  std::vector<StatementSubject> subjects;
  std::string predicate_type;
  nlohmann::json predicate = nlohmann::json::object();

  bool names(const Digest& digest) const;
};

nlohmann::json to_json(const Statement& statement);

// The bundle of `statement` signed by `key`: canonical JSON, so signing the same statement with the
// same key (Ed25519) gives the same bytes. ECDSA signatures differ each time; callers that must not
// sign twice look for an existing bundle by the key's fingerprint and predicate first.
Result<std::string> make_bundle(const Statement& statement, const Key& key);

// A bundle read from outside: its form checked (media type, a DSSE envelope of an in-toto Statement
// v1, one signature, a public-key hint), not yet its signature.
struct Bundle {
  std::string hint;  // the signer's key fingerprint, as the bundle claims it
  std::string payload;
  std::string signature;
  Statement statement;
};
// Errors (exit 2) name `what` and what is wrong.
Result<Bundle> parse_bundle(std::string_view bytes, std::string_view what);

// Whether `bundle`'s signature verifies under `key` (its hint naming that key).
bool signed_by(const Bundle& bundle, const Key& key);

}  // namespace arec
