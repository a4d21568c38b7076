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
  auto trusted = Key::load_public_keys(public_file);
  ASSERT_TRUE(trusted) << trusted.error().message;
  ASSERT_EQ(trusted->size(), 1U);
  EXPECT_EQ(trusted->front().fingerprint(), key->fingerprint());

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

// A team's trust file may hold the key it signs with now and the one it rotates to: both are trusted.
TEST(Key, EveryPublicKeyOfAFileIsLoaded) {
  test::TempDir dir;
  auto a = Key::generate();
  auto b = Key::generate();
  ASSERT_TRUE(a && b);
  const auto both = write_key(dir, "team.pub", "the team's keys\n" + *a->public_pem() + "\n" + *b->public_pem(), 0644);
  auto loaded = Key::load_public_keys(both);
  ASSERT_TRUE(loaded) << loaded.error().message;
  ASSERT_EQ(loaded->size(), 2U);
  EXPECT_EQ((*loaded)[0].fingerprint(), a->fingerprint());
  EXPECT_EQ((*loaded)[1].fingerprint(), b->fingerprint());
  EXPECT_FALSE((*loaded)[1].is_private());
}

TEST(Key, ATrustFileHoldingNoPublicKeyIsAnError) {
  test::TempDir dir;
  auto a = Key::generate();
  ASSERT_TRUE(a);
  const auto none = write_key(dir, "none.pub", "no key here\n", 0644);
  auto empty = Key::load_public_keys(none);
  ASSERT_FALSE(empty);
  EXPECT_NE(empty.error().message.find("none.pub: holds no public key"), std::string::npos) << empty.error().message;
  // A private key among the public ones is named, never read as if it were one, nor its bytes shown.
  const auto mixed = write_key(dir, "mixed.pub", *a->public_pem() + *a->private_pem(), 0600);
  auto refused = Key::load_public_keys(mixed);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("mixed.pub: its PEM block 2 is \"PRIVATE KEY\", not a public key"),
            std::string::npos)
      << refused.error().message;
  // A second block cut short would otherwise leave the keys after it out without a word.
  auto pem = *a->public_pem();
  const auto cut = write_key(dir, "cut.pub", pem + pem.substr(0, pem.size() / 2), 0644);
  auto short_block = Key::load_public_keys(cut);
  ASSERT_FALSE(short_block);
  EXPECT_NE(short_block.error().message.find("cut.pub: its PEM block 2 does not parse"), std::string::npos)
      << short_block.error().message;
}

// A trusted key others may replace is no longer the team's: the file, or its directory, writable by
// others is refused. A sticky directory (/tmp) keeps others from replacing the files of its owners.
TEST(Key, ATrustedKeyOthersCanWriteIsRefused) {
  test::TempDir dir;
  auto a = Key::generate();
  ASSERT_TRUE(a);
  const auto file = write_key(dir, "keys/team.pub", *a->public_pem(), 0664);
  ::chmod((dir / "keys").c_str(), 0755);
  auto writable = Key::load_public_keys(file);
  ASSERT_FALSE(writable);
  EXPECT_NE(writable.error().message.find("team.pub: the trusted key is writable by others (mode 664)"),
            std::string::npos)
      << writable.error().message;
  ::chmod(file.c_str(), 0644);
  EXPECT_TRUE(Key::load_public_keys(file));
  ::chmod((dir / "keys").c_str(), 0777);
  auto in_open_dir = Key::load_public_keys(file);
  ASSERT_FALSE(in_open_dir);
  EXPECT_NE(in_open_dir.error().message.find("the trusted key's directory " + (dir / "keys").string() +
                                             " is writable by others (mode 777)"),
            std::string::npos)
      << in_open_dir.error().message;
  ::chmod((dir / "keys").c_str(), 01777);
  EXPECT_TRUE(Key::load_public_keys(file));
  ::chmod((dir / "keys").c_str(), 0755);
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
