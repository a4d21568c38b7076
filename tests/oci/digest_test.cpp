#include "oci/digest.hpp"

#include <gtest/gtest.h>

namespace arec {
namespace {

// FIPS 180-2 / NIST vectors.
TEST(Digest, Sha256Vectors) {
  EXPECT_EQ(digest_of("").str(), "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(digest_of("abc").str(), "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(digest_of("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq").str(),
            "sha256:248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

TEST(Digest, Sha512Vector) {
  EXPECT_EQ(digest_of("abc", DigestAlgorithm::sha512).str(),
            "sha512:ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd"
            "454d4423643ce80e2a9ac94fa54ca49f");
}

TEST(Digest, OciEmptyDescriptor) {
  // image-spec: the empty JSON object "{}" that artifacts use as config.
  EXPECT_EQ(digest_of("{}").str(), "sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a");
}

TEST(Digest, StreamingEqualsWhole) {
  std::string data(1'000'003, 'x');
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>(i * 31 % 251);
  Hasher hasher;
  for (std::size_t pos = 0; pos < data.size(); pos += 4093) hasher.update(std::string_view(data).substr(pos, 4093));
  EXPECT_EQ(hasher.finish(), digest_of(data));
}

TEST(Digest, ParseValid) {
  const std::string hex(64, 'a');
  auto d = Digest::parse("sha256:" + hex);
  ASSERT_TRUE(d) << d.error().message;
  EXPECT_EQ(d->algorithm(), DigestAlgorithm::sha256);
  EXPECT_EQ(d->hex(), hex);
  EXPECT_EQ(d->str(), "sha256:" + hex);
  EXPECT_TRUE(Digest::parse("sha512:" + std::string(128, '0')));
}

TEST(Digest, ParseRejects) {
  const std::string hex(64, 'a');
  struct Case {
    std::string input;
    std::string message_part;
  };
  for (const auto& c : std::vector<Case>{
           {hex, "missing \"algorithm:\""},
           {"sha256:" + std::string(64, 'A'), "not lowercase hex"},
           {"sha256:" + std::string(63, 'a'), "needs 64 hex characters, got 63"},
           {"sha256:" + std::string(65, 'a'), "got 65"},
           {"sha256:" + std::string(63, 'a') + "g", "not lowercase hex"},
           {"sha512:" + hex, "needs 128"},
           {"md5:" + std::string(32, 'a'), "unsupported algorithm \"md5\""},
           {"SHA256:" + hex, "unsupported algorithm"},
           {"sha256:", "got 0"},
       }) {
    auto d = Digest::parse(c.input);
    ASSERT_FALSE(d) << c.input;
    EXPECT_NE(d.error().message.find(c.message_part), std::string::npos) << c.input << ": " << d.error().message;
    EXPECT_EQ(d.error().kind, ErrorKind::input);
  }
}

}  // namespace
}  // namespace arec
