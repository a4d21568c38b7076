#include "addressing/reference.hpp"

#include <gtest/gtest.h>

#include "support/guarded_text.hpp"

namespace arec {
namespace {

const std::string k_sha256 =
    "sha256:" + std::string("ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff");
const std::string k_sha512 = "sha512:" + std::string(128, 'a');

struct Valid {
  std::string input;
  std::string domain, path, tag, digest;
  std::size_t segments;
};

// Cases follow distribution/reference's reference_test.go and normalize_test.go, plus the mesh's own.
const std::vector<Valid> k_valid = {
    {"test_com", "", "test_com", "", "", 1},
    {"test.com:tag", "", "test.com", "tag", "", 1},
    {"test.com:5000", "", "test.com", "5000", "", 1},
    {"test.com/repo:tag", "test.com", "repo", "tag", "", 1},
    {"test:5000/repo", "test:5000", "repo", "", "", 1},
    {"test:5000/repo:tag", "test:5000", "repo", "tag", "", 1},
    {"test:5000/repo@" + k_sha256, "test:5000", "repo", "", k_sha256, 1},
    {"test:5000/repo:tag@" + k_sha256, "test:5000", "repo", "tag", k_sha256, 1},
    {"lowercase:Uppercase", "", "lowercase", "Uppercase", "", 1},
    {"sub-dom1.foo.com/bar/baz/quux", "sub-dom1.foo.com", "bar/baz/quux", "", "", 3},
    {"sub-dom1.foo.com/bar/baz/quux:some-long-tag", "sub-dom1.foo.com", "bar/baz/quux", "some-long-tag", "", 3},
    {"b.gcr.io/test.example.com/my-app:test.example.com", "b.gcr.io", "test.example.com/my-app", "test.example.com", "",
     2},
    {"xn--n3h.com/myimage:xn--n3h.com", "xn--n3h.com", "myimage", "xn--n3h.com", "", 1},
    {"xn--7o8h.com/myimage:xn--7o8h.com@" + k_sha512, "xn--7o8h.com", "myimage", "xn--7o8h.com", k_sha512, 1},
    {"foo_bar.com:8080", "", "foo_bar.com", "8080", "", 1},
    {"foo/foo_bar.com:8080", "", "foo/foo_bar.com", "8080", "", 2},
    {"192.168.1.1", "", "192.168.1.1", "", "", 1},
    {"192.168.1.1:tag", "", "192.168.1.1", "tag", "", 1},
    {"192.168.1.1:5000", "", "192.168.1.1", "5000", "", 1},
    {"192.168.1.1/repo", "192.168.1.1", "repo", "", "", 1},
    {"192.168.1.1:5000/repo", "192.168.1.1:5000", "repo", "", "", 1},
    {"[2001:db8::1]/repo", "[2001:db8::1]", "repo", "", "", 1},
    {"[2001:db8::1]:5000/repo", "[2001:db8::1]:5000", "repo", "", "", 1},
    {"[2001:db8::1]:5000/repo:tag", "[2001:db8::1]:5000", "repo", "tag", "", 1},
    {"[2001:db8::1]:5000/repo@" + k_sha256, "[2001:db8::1]:5000", "repo", "", k_sha256, 1},
    {"[2001:db8::1]:5000/repo:tag@" + k_sha256, "[2001:db8::1]:5000", "repo", "tag", k_sha256, 1},
    {"[2001:db8::]:5000/repo", "[2001:db8::]:5000", "repo", "", "", 1},
    {"[::1]:5000/mesh/controlplane", "[::1]:5000", "mesh/controlplane", "", "", 2},
    {"localhost/repo", "localhost", "repo", "", "", 1},
    {"localhost:5000/repo:tag", "localhost:5000", "repo", "tag", "", 1},
    {"localhost", "", "localhost", "", "", 1},
    {"localhost:5000", "", "localhost", "5000", "", 1},
    {"docker.io/library/ubuntu:22.04", "docker.io", "library/ubuntu", "22.04", "", 2},
    {"a/b/c/d/e", "", "a/b/c/d/e", "", "", 5},
    {"a__b/c--d_e.f", "", "a__b/c--d_e.f", "", "", 2},
    {"controlplane", "", "controlplane", "", "", 1},
    {"mesh/controlplane", "", "mesh/controlplane", "", "", 2},
    {"10.0.0.5:5000/builder:genesis", "10.0.0.5:5000", "builder", "genesis", "", 1},
    {"10.20.0.11:5001/mesh/controlplane@" + k_sha256, "10.20.0.11:5001", "mesh/controlplane", "", k_sha256, 2},
    {"registry.mesh:5000/mesh/builder:v1@" + k_sha256, "registry.mesh:5000", "mesh/builder", "v1", k_sha256, 2},
    {"repo:" + std::string(128, 't'), "", "repo", std::string(128, 't'), "", 1},
    {"repo:_tag", "", "repo", "_tag", "", 1},
    {"a/" + std::string(253, 'b'), "", "a/" + std::string(253, 'b'), "", "", 2},
    {"example.com/" + std::string(243, 'c'), "example.com", std::string(243, 'c'), "", "", 1},
    {"10.20.0.11:5000/mesh/" + std::string(234, 'c'), "10.20.0.11:5000", "mesh/" + std::string(234, 'c'), "", "", 2},
};

struct Invalid {
  std::string input;
  std::string message_part;
};

const std::vector<Invalid> k_invalid = {
    {"", "is empty"},
    {":justtag", "repository path is empty"},
    {"@" + k_sha256, "repository path is empty"},
    {"repo@sha256:ffffff", "needs 64 hex characters, got 6"},
    {"validname@invaliddigest:" + std::string(64, 'e'), "unsupported algorithm \"invaliddigest\""},
    {"repo@sha256:" + std::string(64, 'F'), "not lowercase hex"},
    {"repo@" + k_sha256 + "@" + k_sha256, "needs 64 hex characters"},
    {"Uppercase:tag", "component \"Uppercase\" must be lowercase"},
    {"test:5000/Uppercase/lowercase:tag", "component \"Uppercase\" must be lowercase"},
    {"aa/asdf$$^/aa", "component \"asdf$$^\" is invalid"},
    {"repo:" + std::string(129, 't'), "tag \"" + std::string(129, 't') + "\" is invalid"},
    {"repo:-tag", "tag \"-tag\" is invalid"},
    {"repo:.tag", "tag \".tag\" is invalid"},
    {"repo:ta%g", "tag \"ta%g\" is invalid"},
    {"a/" + std::string(254, 'b'), "name is 256 characters, more than 255 (domain and path together)"},
    // The limit counts the domain: a path of 244 is fine alone, too long behind "example.com/".
    {"example.com/" + std::string(244, 'c'), "name is 256 characters, more than 255"},
    {"10.20.0.11:5000/mesh/" + std::string(235, 'c'), "name is 256 characters"},
    // Upper case does not make a domain (docker refuses these as not lowercase).
    {"Uppercase/lowercase:tag", "component \"Uppercase\" must be lowercase"},
    {"Mesh/controlplane", "repository path component \"Mesh\" must be lowercase"},
    {"Mesh/controlplane:genesis", "repository path component \"Mesh\" must be lowercase"},
    {"[2001:db8::1]", "component \"[2001:db8::1]\" is invalid"},
    {"[fe80::1%eth0]:5000/repo", "not an IPv6 address"},
    {"[2001:db8::1/repo", "unclosed '['"},
    {"[2001:db8::1]x/repo", "junk after ']'"},
    {"host:/repo", "empty port"},
    {"host:port/repo", "port \"port\" is not a number"},
    {"-foo.com/repo", "\"-foo\" is not a host name component"},
    {"foo..com/repo", "\"\" is not a host name component"},
    {"foo.com/repo/", "has an empty component"},
    {"foo.com//repo", "has an empty component"},
    {"repo:tag:tag2", "component \"repo:tag\" is invalid"},
    {"a_/b", "component \"a_\" is invalid"},
    {"__x", "component \"__x\" is invalid"},
    {"a...b/c", "\"\" is not a host name component"},
    {"foo/a...b", "component \"a...b\" is invalid"},
    {"foo/a___b", "component \"a___b\" is invalid"},
    {"foo/-a", "component \"-a\" is invalid"},
    {"foo/a-", "component \"a-\" is invalid"},
    {"foo/a b", "component \"a b\" is invalid"},
};

void PrintTo(const Valid& c, std::ostream* os) { *os << '"' << c.input << '"'; }
void PrintTo(const Invalid& c, std::ostream* os) { *os << '"' << c.input << '"'; }

class ValidReference : public ::testing::TestWithParam<Valid> {};
class InvalidReference : public ::testing::TestWithParam<Invalid> {};

TEST_P(ValidReference, Parses) {
  const Valid& c = GetParam();
  auto ref = Reference::parse(c.input);
  ASSERT_TRUE(ref) << c.input << ": " << ref.error().message;
  EXPECT_EQ(ref->domain, c.domain);
  EXPECT_EQ(ref->path, c.path);
  EXPECT_EQ(ref->tag, c.tag);
  EXPECT_EQ(ref->digest, c.digest);
  EXPECT_EQ(ref->segments(), c.segments);
  // The canonical form parses back to itself.
  auto again = Reference::parse(ref->str());
  ASSERT_TRUE(again);
  EXPECT_EQ(again->str(), ref->str());
  EXPECT_EQ(ref->str(), c.input);
}

TEST_P(InvalidReference, IsRefusedNamingThePart) {
  const Invalid& c = GetParam();
  auto ref = Reference::parse(c.input);
  ASSERT_FALSE(ref) << c.input << " parsed as " << ref->str();
  EXPECT_NE(ref.error().message.find(c.message_part), std::string::npos) << ref.error().message;
  EXPECT_TRUE(ref.error().message.starts_with("reference \"" + c.input + "\": ")) << ref.error().message;
  EXPECT_EQ(ref.error().kind, ErrorKind::input);
}

INSTANTIATE_TEST_SUITE_P(Table, ValidReference, ::testing::ValuesIn(k_valid));
INSTANTIATE_TEST_SUITE_P(Table, InvalidReference, ::testing::ValuesIn(k_invalid));

TEST(Reference, HostAndPort) {
  auto ipv6 = Reference::parse("[::1]:5000/a/b");
  ASSERT_TRUE(ipv6);
  EXPECT_EQ(ipv6->host(), "[::1]");
  EXPECT_EQ(ipv6->port(), "5000");
  auto plain = Reference::parse("registry.mesh/a/b:5000");
  ASSERT_TRUE(plain);
  EXPECT_EQ(plain->host(), "registry.mesh");
  EXPECT_EQ(plain->port(), "");
  EXPECT_EQ(plain->tag, "5000");
  auto bare_v6 = Reference::parse("[2001:db8::1]/x");
  ASSERT_TRUE(bare_v6);
  EXPECT_EQ(bare_v6->port(), "");
}

// What a registry's catalog and tag lists are checked against before a name is requested or printed.
TEST(Reference, RepositoryPathsAndTagsAsARegistryListsThem) {
  for (const std::string ok : {"a", "mesh/controlplane", "a/b/c", "a.b_c__d---e/f0", "0/9"}) {
    EXPECT_TRUE(is_repository_path(ok)) << ok;
  }
  for (const char* bad :
       {"", "../../etc", "a//b", "/a", "a/", "Mesh/cp", "a/b:tag", "evil/\x1b[31mred", "a___b", "a/-b"}) {
    EXPECT_FALSE(is_repository_path(bad)) << bad;
  }
  EXPECT_TRUE(is_repository_path(std::string(255, 'a')));
  EXPECT_FALSE(is_repository_path(std::string(256, 'a')));
  EXPECT_TRUE(is_tag("latest"));
  EXPECT_TRUE(is_tag("_1.0-rc"));
  EXPECT_FALSE(is_tag("latest\nforged"));
  EXPECT_FALSE(is_tag(".hidden"));
  EXPECT_FALSE(is_tag(std::string(129, 'a')));
}

TEST(Reference, ParsingNeverReadsPastTheEnd) {
  // Every prefix of every case, each in a buffer that ends where the prefix does: a read past it
  // crashes the test.
  std::vector<std::string> inputs;
  for (const auto& c : k_valid) inputs.push_back(c.input);
  for (const auto& c : k_invalid) inputs.push_back(c.input);
  std::size_t parsed = 0;
  for (const auto& input : inputs) {
    for (std::size_t n = 0; n <= input.size(); ++n) {
      const test::GuardedText prefix(std::string_view(input).substr(0, n));
      parsed += Reference::parse(prefix.view()) ? 1 : 0;
    }
  }
  EXPECT_GT(parsed, inputs.size());
}
// offset:line:column reference, for each reference found.
std::string scanned(std::string_view text) {
  std::string out;
  for (const auto& r : scan_references(text)) {
    EXPECT_EQ(text.substr(r.offset, r.length), r.reference.str());
    out += std::to_string(r.offset) + ":" + std::to_string(r.line) + ":" + std::to_string(r.column) + " " +
           r.reference.str() + "\n";
  }
  return out;
}

TEST(ScanReferences, FindsFullReferencesWhereverTheyAreWritten) {
  const std::string digest = "10.0.0.5:5000/mesh/cp@" + k_sha256;
  EXPECT_EQ(scanned("FROM 10.0.0.5:5000/controlplane:genesis AS build\n"
                    "args: [\"--image=10.0.0.5:5000/builder:genesis\", '--x=y']\n"
                    "IMAGES=a.io/x:1,b.io/y,localhost/z\n"
                    "\t- [::1]:5000/v6  `" +
                    digest + "`\n"),
            "5:1:6 10.0.0.5:5000/controlplane:genesis\n"
            "65:2:17 10.0.0.5:5000/builder:genesis\n"
            "113:3:8 a.io/x:1\n"
            "122:3:17 b.io/y\n"
            "129:3:24 localhost/z\n"
            "144:4:4 [::1]:5000/v6\n"
            "160:4:20 " +
                digest + "\n");
}

TEST(ScanReferences, TokenBoundaries) {
  // A sentence's full stop, a YAML key's colon, an unquoted flow list's brackets.
  EXPECT_EQ(scanned("Pull 10.0.0.5:5000/mesh/cp. Or [10.0.0.5:5000/a, [--image=b.io/c]]\nb.io/d: x"),
            "5:1:6 10.0.0.5:5000/mesh/cp\n"
            "32:1:33 10.0.0.5:5000/a\n"
            "58:1:59 b.io/c\n"
            "67:2:1 b.io/d\n");
  // skopeo's docker:// transport names an image; other URLs and requests do not.
  EXPECT_EQ(scanned("docker://b.io/e https://b.io/f postgres://cp@10.0.0.5:6852/cp arec://image/mesh/cp oci:b.io/g"),
            "9:1:10 b.io/e\n");
  // No domain, not a reference, too long to be one.
  EXPECT_EQ(scanned("mesh/cp apps/v1 controlplane:genesis Mesh/cp b.io/UPPER " + std::string(700, 'a') + ".io/x"), "");
  EXPECT_EQ(scanned(""), "");
}

}  // namespace
}  // namespace arec
