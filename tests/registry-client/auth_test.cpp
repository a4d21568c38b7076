#include "registry-client/auth.hpp"

#include <gtest/gtest.h>

#include "support/temp_dir.hpp"

namespace arec {
namespace {

using test::TempDir;
using test::write_file;

TEST(Challenges, BearerWithAScopeHoldingCommas) {
  auto c = parse_challenges(
      R"(Bearer realm="https://auth.example/token",service="registry.example",scope="repository:mesh/app:pull,push")");
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].scheme, "bearer");
  EXPECT_EQ(c[0].param("realm"), "https://auth.example/token");
  EXPECT_EQ(c[0].param("service"), "registry.example");
  EXPECT_EQ(c[0].param("scope"), "repository:mesh/app:pull,push");
  EXPECT_EQ(c[0].scopes(), std::vector<std::string>{"repository:mesh/app:pull,push"});
}

TEST(Challenges, SeveralScopesSeparatedBySpaces) {
  auto c = parse_challenges(R"(Bearer realm="r",scope="repository:a/twin:pull,push  repository:a/app:pull")");
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].scopes(), (std::vector<std::string>{"repository:a/twin:pull,push", "repository:a/app:pull"}));
  EXPECT_TRUE(parse_challenges(R"(Bearer realm="r")")[0].scopes().empty());
}

TEST(Challenges, SeveralInOneHeaderAnyCaseAndSpacing) {
  auto c = parse_challenges(R"(Basic realm="arec test", BEARER Realm = "http://127.0.0.1:5001/token" , service=reg)");
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(c[0].scheme, "basic");
  EXPECT_EQ(c[0].param("realm"), "arec test");
  EXPECT_EQ(c[1].scheme, "bearer");
  EXPECT_EQ(c[1].param("realm"), "http://127.0.0.1:5001/token");
  EXPECT_EQ(c[1].param("service"), "reg");
}

TEST(Challenges, EscapedQuotesAndGarbage) {
  auto c = parse_challenges(R"(Basic realm="say \"hi\"")");
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].param("realm"), R"(say "hi")");
  EXPECT_TRUE(parse_challenges("").empty());
  EXPECT_TRUE(parse_challenges("\"unterminated").empty());
}

TEST(Credentials, KeysAreHostAndPortWithoutSchemeOrPath) {
  EXPECT_EQ(credential_key("https://127.0.0.1:5000/v1/"), "127.0.0.1:5000");
  EXPECT_EQ(credential_key("HTTP://Registry.Example:5000"), "registry.example:5000");
  EXPECT_EQ(credential_key("10.0.0.5:5000"), "10.0.0.5:5000");
  EXPECT_EQ(credential_key("docker.io"), "index.docker.io");
  EXPECT_EQ(credential_key("https://index.docker.io/v1/"), "index.docker.io");
  EXPECT_EQ(credential_key("registry-1.docker.io"), "index.docker.io");
}

TEST(Credentials, AuthsEntryIsBase64OfUserColonPassword) {
  const std::string config =
      R"({"auths": {"https://10.0.0.5:5000": {"auth": ")" + base64_encode("mesh:pa:ss") + R"("}}})";
  auto answer = lookup_config(config, "config.json", "10.0.0.5:5000");
  ASSERT_TRUE(answer) << answer.error().message;
  ASSERT_TRUE(answer->credential);
  EXPECT_EQ(answer->credential->username, "mesh");
  EXPECT_EQ(answer->credential->password, "pa:ss");  // split at the first ':'
  EXPECT_EQ(answer->credential->source, "config.json");
  EXPECT_TRUE(answer->helper.empty());
}

TEST(Credentials, UsernamePasswordFieldsAndIdentityTokens) {
  auto answer = lookup_config(
      R"({"auths": {"r:1": {"username": "u", "password": "p"}, "r:2": {"identitytoken": "t"}}})", "a.json", "r:1");
  ASSERT_TRUE(answer && answer->credential);
  EXPECT_EQ(answer->credential->username, "u");
  EXPECT_EQ(answer->credential->password, "p");
  answer = lookup_config(R"({"auths": {"r:1": {"username": "u", "password": "p"}, "r:2": {"identitytoken": "t"}}})",
                         "a.json", "r:2");
  ASSERT_TRUE(answer && answer->credential);
  EXPECT_EQ(answer->credential->identity_token, "t");
}

TEST(Credentials, HelperForTheHostBeatsTheStoreWhichBeatsAuths) {
  const std::string config = R"({"credHelpers": {"r:1": "pass"}, "credsStore": "secretservice",
                                 "auths": {"r:1": {"auth": "dTpw"}, "r:2": {"auth": "dTpw"}}})";
  auto one = lookup_config(config, "c.json", "r:1");
  ASSERT_TRUE(one);
  EXPECT_EQ(one->helper, "pass");
  auto two = lookup_config(config, "c.json", "r:2");
  ASSERT_TRUE(two);
  EXPECT_EQ(two->helper, "secretservice");
  EXPECT_FALSE(two->credential);
}

TEST(Credentials, NothingForOtherHostsAndErrorsNameTheFile) {
  auto none = lookup_config(R"({"auths": {"r:1": {"auth": "dTpw"}}})", "c.json", "r:3");
  ASSERT_TRUE(none);
  EXPECT_FALSE(none->credential);
  EXPECT_TRUE(none->helper.empty());
  auto bad = lookup_config(R"({"auths": {"r:1": {"auth": "bm9jb2xvbg=="}}})", "c.json", "r:1");  // "nocolon"
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("c.json"), std::string::npos);
  EXPECT_EQ(bad.error().message.find("nocolon"), std::string::npos) << "the content of a credential is never shown";
  EXPECT_FALSE(lookup_config("{", "c.json", "r:1"));
}

TEST(Credentials, FilesInDockerThenContainersOrder) {
  EXPECT_EQ(credential_files(CredentialPlaces{"/d", "/home/u", "/r/auth.json", "/run/user/7"}),
            (std::vector<fs::Path>{"/d/config.json", "/r/auth.json", "/run/user/7/containers/auth.json"}));
  EXPECT_EQ(credential_files(CredentialPlaces{"", "/home/u", "", ""}),
            (std::vector<fs::Path>{"/home/u/.docker/config.json"}));
  EXPECT_TRUE(credential_files(CredentialPlaces{}).empty());
}

TEST(Credentials, FirstFileWithAnEntryWins) {
  TempDir tmp;
  write_file(tmp / "docker/config.json", R"({"auths": {"other:1": {"auth": "dTpw"}}})");
  write_file(tmp / "auth.json", R"({"auths": {"r:1": {"auth": ")" + base64_encode("x:y") + R"("}}})");
  const auto files =
      credential_files(CredentialPlaces{(tmp / "docker").string(), "", (tmp / "auth.json").string(), ""});
  auto found = find_credential("r:1", files);
  ASSERT_TRUE(found) << found.error().message;
  ASSERT_TRUE(*found);
  EXPECT_EQ((*found)->username, "x");
  EXPECT_EQ((*found)->source, (tmp / "auth.json").string());
  auto anonymous = find_credential("r:9", files);
  ASSERT_TRUE(anonymous);
  EXPECT_FALSE(*anonymous);
}

TEST(Credentials, AMissingHelperIsAnErrorNamingIt) {
  auto found = run_credential_helper("arec-no-such-helper", "r:1");
  ASSERT_FALSE(found);
  EXPECT_NE(found.error().message.find("docker-credential-arec-no-such-helper"), std::string::npos);
}

TEST(Base64, RoundTripsAndRejectsGarbage) {
  for (const std::string& text :
       std::vector<std::string>{"", "a", "ab", "abc", "user:p@ss:word", std::string("\0\xff", 2)}) {
    EXPECT_EQ(base64_decode(base64_encode(text)), text);
  }
  EXPECT_EQ(base64_encode("user:pass"), "dXNlcjpwYXNz");
  EXPECT_FALSE(base64_decode("not base64!"));
}

TEST(Tokens, TokenOrAccessTokenWithExpiry) {
  const auto now = std::chrono::steady_clock::now();
  auto token = parse_token_response(R"({"token": "abc", "expires_in": 300})", now);
  ASSERT_TRUE(token);
  EXPECT_EQ(token->value, "abc");
  EXPECT_EQ(token->expires, now + std::chrono::seconds(300));
  EXPECT_EQ(token->renew, now + std::chrono::seconds(290));
  token = parse_token_response(R"({"access_token": "def"})", now);
  ASSERT_TRUE(token);
  EXPECT_EQ(token->value, "def");
  EXPECT_EQ(token->expires, now + std::chrono::seconds(60));
  // A short-lived token is renewed halfway through its life, not at once.
  token = parse_token_response(R"({"token": "ghi", "expires_in": 3})", now);
  ASSERT_TRUE(token);
  EXPECT_EQ(token->renew, now + std::chrono::milliseconds(1500));
  EXPECT_FALSE(parse_token_response(R"({"expires_in": 300})", now));
  EXPECT_FALSE(parse_token_response("<html>", now));
  // Read through read_json: nesting beyond its limit is refused like any other malformed answer.
  EXPECT_FALSE(parse_token_response(std::string(100000, '[') + std::string(100000, ']'), now));
  // A lifetime too large for the clock is read as a day.
  token = parse_token_response(R"({"token": "jkl", "expires_in": 9223372036854775807})", now);
  ASSERT_TRUE(token);
  EXPECT_EQ(token->expires, now + std::chrono::hours(24));
}

TEST(Tokens, ATokenThatWouldAddHeadersIsRefused) {
  const auto now = std::chrono::steady_clock::now();
  for (const char* body :
       {R"({"token": "TOKEN\r\nX-Injected: yes"})", R"({"token": "a b"})", R"({"access_token": "a\u001b[31m"})"}) {
    const auto token = parse_token_response(body, now);
    ASSERT_FALSE(token) << body;
    EXPECT_NE(token.error().message.find("control characters"), std::string::npos);
  }
}

}  // namespace
}  // namespace arec
