#include "oci/signature.hpp"

#include <sys/stat.h>

#include <gtest/gtest.h>

#include "support/temp_dir.hpp"

namespace arec {
namespace {

Statement statement_of(const Digest& image) {
  return Statement{{{"team/app", image}}, std::string(predicate_type::k_sign), nlohmann::json::object()};
}

fs::Path write_key(const test::TempDir& dir, const std::string& file, const std::string& pem, mode_t mode) {
  const auto path = dir / file;
  test::write_file(path, pem);
  ::chmod(path.c_str(), mode);
  return path;
}

// DSSE's own example (the protocol's specification): PAE("http://example.com/HelloWorld", "hello world").
TEST(Dsse, PreAuthenticationEncodingIsTheProtocols) {
  EXPECT_EQ(dsse_pae("http://example.com/HelloWorld", "hello world"),
            "DSSEv1 29 http://example.com/HelloWorld 11 hello world");
}

TEST(Bundle, SignedBundleVerifiesUnderItsKeyOnly) {
  auto key = Key::generate();
  auto other = Key::generate();
  ASSERT_TRUE(key && other);
  const auto image = digest_of("image");
  auto text = make_bundle(statement_of(image), *key);
  ASSERT_TRUE(text) << text.error().message;
  auto bundle = parse_bundle(*text, "bundle");
  ASSERT_TRUE(bundle) << bundle.error().message;
  EXPECT_EQ(bundle->hint, key->fingerprint());
  EXPECT_TRUE(bundle->statement.names(image));
  EXPECT_FALSE(bundle->statement.names(digest_of("other")));
  EXPECT_EQ(bundle->statement.predicate_type, predicate_type::k_sign);
  EXPECT_TRUE(signed_by(*bundle, *key));
  EXPECT_FALSE(signed_by(*bundle, *other));
  // One byte of the payload changed, the signature kept.
  bundle->payload[bundle->payload.find("team/app") + 7] = 'q';
  EXPECT_FALSE(signed_by(*bundle, *key));
}

TEST(Key, LoadsWhatItWritesAndRefusesAKeyOthersCanRead) {
  test::TempDir dir;
  auto key = Key::generate();
  ASSERT_TRUE(key);
  const auto private_file = write_key(dir, "team.key", *key->private_pem(), 0600);
  const auto public_file = write_key(dir, "team.pub", *key->public_pem(), 0644);
  auto loaded = Key::load_private(private_file);
  ASSERT_TRUE(loaded) << loaded.error().message;
  EXPECT_EQ(loaded->fingerprint(), key->fingerprint());
  auto trusted = Key::load_public(public_file);
  ASSERT_TRUE(trusted) << trusted.error().message;
  EXPECT_EQ(trusted->fingerprint(), key->fingerprint());

  ::chmod(private_file.c_str(), 0644);
  auto readable = Key::load_private(private_file);
  ASSERT_FALSE(readable);
  EXPECT_NE(readable.error().message.find("readable by others"), std::string::npos) << readable.error().message;
  // The message names the file, never the key's bytes.
  EXPECT_EQ(readable.error().message.find("PRIVATE"), std::string::npos);

  const auto garbage = write_key(dir, "garbage.key", "-----BEGIN PRIVATE KEY-----\nnot a key\n", 0600);
  auto bad = Key::load_private(garbage);
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("garbage.key: not a PEM private key"), std::string::npos) << bad.error().message;
  EXPECT_EQ(bad.error().message.find("not a key"), std::string::npos);
}

TEST(Bundle, RefusesWhatIsNotOne) {
  for (const char* text : {"{}", R"({"mediaType":"application/vnd.dev.sigstore.bundle.v0.3+json"})", "[1]"}) {
    auto bundle = parse_bundle(text, "the bundle");
    ASSERT_FALSE(bundle) << text;
    EXPECT_EQ(bundle.error().message.rfind("the bundle", 0), 0U) << bundle.error().message;
  }
}

}  // namespace
}  // namespace arec
