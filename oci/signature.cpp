#include "oci/signature.hpp"

#include <sys/stat.h>

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <algorithm>
#include <filesystem>

#include "oci/oci.hpp"

namespace arec {

namespace {

using Bio = std::unique_ptr<BIO, decltype(&BIO_free)>;
using Context = std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)>;

Bio memory_bio(std::string_view bytes) {
  return {BIO_new_mem_buf(bytes.data(), static_cast<int>(bytes.size())), &BIO_free};
}

std::string bio_text(BIO* bio) {
  char* data = nullptr;
  const long size = BIO_get_mem_data(bio, &data);
  return {data, static_cast<std::size_t>(size)};
}

// The keys arec signs with: those sigstore's verifiers accept for a key-based bundle.
bool is_supported(EVP_PKEY* key) {
  if (EVP_PKEY_is_a(key, "ED25519")) return true;
  if (!EVP_PKEY_is_a(key, "EC")) return false;
  char curve[64] = {};
  std::size_t length = 0;
  return EVP_PKEY_get_utf8_string_param(key, "group", curve, sizeof curve, &length) == 1 &&
         std::string_view(curve, length) == "prime256v1";
}

std::string mode_text(mode_t mode) {
  return std::to_string((mode >> 6) & 7) + std::to_string((mode >> 3) & 7) + std::to_string(mode & 7);
}

// What a key file is to arec: a private key must be readable by its owner alone; a trusted public key
// must be writable by its owner alone, and so must the directory it is replaced in.
enum class KeyUse { signing, trusted };

Result<std::string> read_key_file(const fs::Path& file, KeyUse use) {
  struct stat st {};
  if (::stat(file.c_str(), &st) != 0) return fail_input(file.string() + ": cannot read the key: no such file");
  if (!S_ISREG(st.st_mode)) return fail_input(file.string() + ": not a regular file");
  if (use == KeyUse::signing && (st.st_mode & (S_IRWXG | S_IRWXO)) != 0) {
    return fail_input(file.string() + ": the signing key is readable by others (mode " + mode_text(st.st_mode) +
                      "); run chmod 600 on it");
  }
  if (use == KeyUse::trusted) {
    if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
      return fail_input(file.string() + ": the trusted key is writable by others (mode " + mode_text(st.st_mode) +
                        "), who could put their own key in its place; run chmod go-w on it");
    }
    // The directory the file is found in after following its links: whoever may write there may
    // replace the file, unless the sticky bit keeps them to their own files.
    std::error_code ec;
    const auto real = std::filesystem::canonical(file, ec);
    const fs::Path dir = ec ? file.parent_path() : real.parent_path();
    struct stat d {};
    if (::stat(dir.empty() ? "." : dir.c_str(), &d) == 0 && (d.st_mode & (S_IWGRP | S_IWOTH)) != 0 &&
        (d.st_mode & S_ISVTX) == 0) {
      return fail_input(file.string() + ": the trusted key's directory " + (dir.empty() ? "." : dir.string()) +
                        " is writable by others (mode " + mode_text(d.st_mode) +
                        "), who could put their own key in its place; run chmod go-w on it");
    }
  }
  auto text = fs::read_file(file, 64 * 1024);
  if (!text) return fail_input(file.string() + ": cannot read the key");
  return text;
}

// Base64 through OpenSSL's EVP block coder (standard alphabet, padded), as DSSE's JSON form uses.
std::string base64(std::string_view bytes) {
  std::string out(4 * ((bytes.size() + 2) / 3), '\0');
  const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(bytes.data()), static_cast<int>(bytes.size()));
  out.resize(static_cast<std::size_t>(n));
  return out;
}

std::optional<std::string> unbase64(std::string_view text) {
  if (text.size() % 4 != 0) return std::nullopt;
  std::string out(3 * (text.size() / 4), '\0');
  const int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(text.data()), static_cast<int>(text.size()));
  if (n < 0) return std::nullopt;
  // EVP_DecodeBlock counts the padding's bytes as data.
  std::size_t size = static_cast<std::size_t>(n);
  if (!text.empty() && text.back() == '=') --size;
  if (text.size() > 1 && text[text.size() - 2] == '=') --size;
  out.resize(size);
  return out;
}

bool is_ed25519(EVP_PKEY* key) { return EVP_PKEY_is_a(key, "ED25519") == 1; }

}  // namespace

void Key::Free::operator()(EVP_PKEY* key) const { EVP_PKEY_free(key); }

Key::~Key() = default;

Key::Key(EVP_PKEY* key, bool is_private) : m_key(key), m_private(is_private) {
  unsigned char* der = nullptr;
  const int size = i2d_PUBKEY(key, &der);
  if (size > 0) {
    m_fingerprint =
        digest_of(std::string_view(reinterpret_cast<const char*>(der), static_cast<std::size_t>(size))).hex();
    OPENSSL_free(der);
  }
}

Result<Key> Key::load_private(const fs::Path& file) {
  auto text = read_key_file(file, KeyUse::signing);
  if (!text) return fail(text.error());
  auto bio = memory_bio(*text);
  // PEM_read_bio_PrivateKey reads PKCS#8 and the traditional forms (SEC1's "EC PRIVATE KEY") alike.
  EVP_PKEY* key = PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, const_cast<char*>(""));
  if (key == nullptr) return fail_input(file.string() + ": not a PEM private key (an unencrypted PKCS#8 or SEC1 key)");
  Key loaded(key, true);
  if (!is_supported(key)) return fail_input(file.string() + ": not an EC P-256 or Ed25519 key");
  return loaded;
}

Result<std::vector<Key>> Key::load_public_keys(const fs::Path& file) {
  auto text = read_key_file(file, KeyUse::trusted);
  if (!text) return fail(text.error());
  // Each PEM block in turn: PEM_read_bio skips text between blocks, as openssl does, and reads every
  // block's label, so that a certificate or a private key among the public keys is named, not passed over.
  auto bio = memory_bio(*text);
  std::vector<Key> keys;
  for (;;) {
    char* name = nullptr;
    char* header = nullptr;
    unsigned char* data = nullptr;
    long length = 0;
    if (PEM_read_bio(bio.get(), &name, &header, &data, &length) != 1) {
      // No further "-----BEGIN" is the end; anything else is a block cut short or not base64, which
      // would otherwise leave the keys after it untrusted without a word.
      const bool end = ERR_GET_REASON(ERR_peek_last_error()) == PEM_R_NO_START_LINE;
      ERR_clear_error();
      if (end) break;
      return fail_input(file.string() + ": its PEM block " + std::to_string(keys.size() + 1) + " does not parse");
    }
    const std::string label = name;
    OPENSSL_free(name);
    OPENSSL_free(header);
    const auto* p = data;
    EVP_PKEY* key = label == "PUBLIC KEY" ? d2i_PUBKEY(nullptr, &p, length) : nullptr;
    OPENSSL_free(data);
    const std::string which = "its PEM block " + std::to_string(keys.size() + 1);
    if (label != "PUBLIC KEY")
      return fail_input(file.string() + ": " + which + " is \"" + printable(label) +
                        "\", not a public key (\"PUBLIC KEY\")");
    if (key == nullptr) return fail_input(file.string() + ": " + which + " is not a public key that parses");
    Key loaded(key, false);
    if (!is_supported(key)) return fail_input(file.string() + ": " + which + " is not an EC P-256 or Ed25519 key");
    keys.push_back(std::move(loaded));
  }
  if (keys.empty()) return fail_input(file.string() + ": holds no public key (a PEM block \"BEGIN PUBLIC KEY\")");
  return keys;
}

Result<Key> Key::public_key() const {
  unsigned char* der = nullptr;
  const int size = i2d_PUBKEY(m_key.get(), &der);
  if (size <= 0) return fail_input("reading the public half of a key failed");
  const auto* p = der;
  EVP_PKEY* key = d2i_PUBKEY(nullptr, &p, size);
  OPENSSL_free(der);
  if (key == nullptr) return fail_input("reading the public half of a key failed");
  return Key(key, false);
}

Result<Key> Key::generate() {
  EVP_PKEY* key = EVP_EC_gen("P-256");
  if (key == nullptr) return fail_input("generating an EC P-256 key failed");
  return Key(key, true);
}

Result<std::string> Key::public_pem() const {
  Bio bio(BIO_new(BIO_s_mem()), &BIO_free);
  if (PEM_write_bio_PUBKEY(bio.get(), m_key.get()) != 1) return fail_input("writing the public key failed");
  return bio_text(bio.get());
}

Result<std::string> Key::private_pem() const {
  Bio bio(BIO_new(BIO_s_mem()), &BIO_free);
  if (!m_private || PEM_write_bio_PKCS8PrivateKey(bio.get(), m_key.get(), nullptr, nullptr, 0, nullptr, nullptr) != 1)
    return fail_input("writing the private key failed");
  return bio_text(bio.get());
}

Result<std::string> Key::sign(std::string_view message) const {
  Context context(EVP_MD_CTX_new(), &EVP_MD_CTX_free);
  const EVP_MD* md = is_ed25519(m_key.get()) ? nullptr : EVP_sha256();
  std::size_t size = 0;
  const auto* data = reinterpret_cast<const unsigned char*>(message.data());
  if (!m_private || EVP_DigestSignInit(context.get(), nullptr, md, nullptr, m_key.get()) != 1 ||
      EVP_DigestSign(context.get(), nullptr, &size, data, message.size()) != 1) {
    return fail_input("signing failed");
  }
  std::string signature(size, '\0');
  if (EVP_DigestSign(context.get(), reinterpret_cast<unsigned char*>(signature.data()), &size, data, message.size()) !=
      1)
    return fail_input("signing failed");
  signature.resize(size);
  return signature;
}

bool Key::verifies(std::string_view message, std::string_view signature) const {
  Context context(EVP_MD_CTX_new(), &EVP_MD_CTX_free);
  const EVP_MD* md = is_ed25519(m_key.get()) ? nullptr : EVP_sha256();
  return EVP_DigestVerifyInit(context.get(), nullptr, md, nullptr, m_key.get()) == 1 &&
         EVP_DigestVerify(context.get(), reinterpret_cast<const unsigned char*>(signature.data()), signature.size(),
                          reinterpret_cast<const unsigned char*>(message.data()), message.size()) == 1;
}

std::string dsse_pae(std::string_view payload_type, std::string_view payload) {
  return "DSSEv1 " + std::to_string(payload_type.size()) + " " + std::string(payload_type) + " " +
         std::to_string(payload.size()) + " " + std::string(payload);
}

bool Statement::names(const Digest& digest) const {
  return std::ranges::any_of(subjects, [&](const StatementSubject& s) { return s.digest == digest; });
}

nlohmann::json to_json(const Statement& statement) {
  auto subjects = nlohmann::json::array();
  for (const auto& s : statement.subjects) {
    subjects.push_back({{"name", s.name}, {"digest", {{std::string(s.digest.algorithm_name()), s.digest.hex()}}}});
  }
  return {{"_type", k_in_toto_statement},
          {"subject", std::move(subjects)},
          {"predicateType", statement.predicate_type},
          {"predicate", statement.predicate}};
}

Result<std::string> make_bundle(const Statement& statement, const Key& key) {
  auto payload = canonical_json(to_json(statement));
  if (!payload) return fail(std::move(payload.error()).context("writing the statement"));
  auto signature = key.sign(dsse_pae(media_type::k_in_toto, *payload));
  if (!signature) return fail(signature.error());
  const nlohmann::json bundle = {{"mediaType", media_type::k_sigstore_bundle},
                                 {"verificationMaterial",
                                  {{"publicKey", {{"hint", key.fingerprint()}}},
                                   {"tlogEntries", nlohmann::json::array()},
                                   {"timestampVerificationData", {{"rfc3161Timestamps", nlohmann::json::array()}}}}},
                                 {"dsseEnvelope",
                                  {{"payload", base64(*payload)},
                                   {"payloadType", media_type::k_in_toto},
                                   {"signatures", {{{"keyid", ""}, {"sig", base64(*signature)}}}}}}};
  return canonical_json(bundle);
}

Result<Bundle> parse_bundle(std::string_view bytes, std::string_view what) {
  const auto refused = [&](const std::string& why) { return fail_input(std::string(what) + ": " + why); };
  if (bytes.size() > k_max_bundle) return refused("larger than " + std::to_string(k_max_bundle) + " bytes");
  auto json = parse_json(bytes, what);
  if (!json) return fail(json.error());
  try {
    if (!json->is_object() || json->value("mediaType", "") != media_type::k_sigstore_bundle)
      return refused("not a Sigstore bundle v0.3 (mediaType " + std::string(media_type::k_sigstore_bundle) + ")");
    Bundle bundle;
    const auto& material = json->at("verificationMaterial");
    if (!material.contains("publicKey")) return refused("it names no public key (verificationMaterial.publicKey)");
    bundle.hint = material.at("publicKey").at("hint").get<std::string>();
    const auto& envelope = json->at("dsseEnvelope");
    if (envelope.at("payloadType").get<std::string>() != media_type::k_in_toto)
      return refused("its payloadType is not " + std::string(media_type::k_in_toto));
    const auto& signatures = envelope.at("signatures");
    if (!signatures.is_array() || signatures.size() != 1) return refused("expected one signature");
    auto payload = unbase64(envelope.at("payload").get<std::string>());
    auto signature = unbase64(signatures.front().at("sig").get<std::string>());
    if (!payload || !signature) return refused("its payload or signature is not base64");
    bundle.payload = std::move(*payload);
    bundle.signature = std::move(*signature);
    auto statement = parse_json(bundle.payload, "its statement");
    if (!statement) return refused(statement.error().message);
    if (statement->value("_type", "") != k_in_toto_statement)
      return refused("its payload is not an in-toto Statement v1");
    bundle.statement.predicate_type = statement->at("predicateType").get<std::string>();
    bundle.statement.predicate = statement->value("predicate", nlohmann::json::object());
    for (const auto& s : statement->at("subject")) {
      auto digest = Digest::parse("sha256:" + s.at("digest").at("sha256").get<std::string>());
      if (!digest) return refused("a subject's digest: " + digest.error().message);
      bundle.statement.subjects.push_back({s.value("name", ""), std::move(*digest)});
    }
    return bundle;
  } catch (const nlohmann::json::exception&) {
    return refused("a field is missing or of the wrong type");
  }
}

bool signed_by(const Bundle& bundle, const Key& key) {
  return bundle.hint == key.fingerprint() &&
         key.verifies(dsse_pae(media_type::k_in_toto, bundle.payload), bundle.signature);
}

}  // namespace arec
