#include "registry-client/registry_error.hpp"

#include <gtest/gtest.h>

namespace arec {
namespace {

http::Response response(int status, std::string body) {
  http::Response r;
  r.status = status;
  r.body = std::move(body);
  return r;
}

TEST(RegistryError, ParsesTheDistributionErrorDocument) {
  auto e = RegistryError::from_response(response(
      404, R"({"errors":[{"code":"BLOB_UNKNOWN","message":"blob unknown to registry","detail":"sha256:abc"}]})"));
  EXPECT_EQ(e.status, 404);
  EXPECT_EQ(e.code, "BLOB_UNKNOWN");
  EXPECT_EQ(e.str(), "404 Not Found (BLOB_UNKNOWN: blob unknown to registry)");
  EXPECT_FALSE(e.is_temporary());
}

TEST(RegistryError, SeveralErrorsAndBodiesThatAreNotTheDocument) {
  auto e = RegistryError::from_response(response(400, R"({"errors":[{"code":"A","message":"one"},{"code":"B"}]})"));
  EXPECT_EQ(e.code, "A");
  EXPECT_EQ(e.message, "A: one; B");
  auto html = RegistryError::from_response(response(502, "<html>\n<body>Bad gateway</body>\n</html>\n"));
  EXPECT_EQ(html.str(), "502 Bad Gateway (<html> <body>Bad gateway</body> </html>)");
  EXPECT_EQ(RegistryError::from_response(response(503, "")).str(), "503 Service Unavailable");
}

TEST(RegistryError, OddDocumentsAreReadWithoutThrowing) {
  // A code that is not a string is passed over, not thrown on.
  auto e = RegistryError::from_response(response(400, R"({"errors":[{"code":7,"message":"odd"}]})"));
  EXPECT_EQ(e.code, "");
  EXPECT_EQ(e.message, "odd");
  // A message written over several lines is shown on one.
  EXPECT_EQ(
      RegistryError::from_response(response(403, R"({"errors":[{"code":"DENIED","message":"no\naccess"}]})")).str(),
      "403 Forbidden (DENIED: no access)");
  // Nested beyond read_json's limit: the body is shown as text (cut short), as for any non-document.
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  auto nested = RegistryError::from_response(response(500, deep));
  EXPECT_EQ(nested.status, 500);
  EXPECT_TRUE(nested.code.empty());
  EXPECT_TRUE(nested.is_temporary());
}

TEST(RegistryError, TemporaryStatusesAndCodes) {
  for (int status : {408, 429, 500, 502, 503, 504}) {
    EXPECT_TRUE(RegistryError::from_response(response(status, "")).is_temporary()) << status;
  }
  for (int status : {400, 401, 403, 404, 405, 409, 416, 501}) {
    EXPECT_FALSE(RegistryError::from_response(response(status, "")).is_temporary()) << status;
  }
  EXPECT_TRUE(RegistryError::from_response(response(400, R"({"errors":[{"code":"TOOMANYREQUESTS"}]})")).is_temporary());
  EXPECT_TRUE(
      RegistryError::from_response(response(404, R"({"errors":[{"code":"BLOB_UPLOAD_UNKNOWN"}]})")).is_temporary());
}

TEST(RegistryError, NetworkFailuresAreTemporaryOthersAreNot) {
  using Cause = http::Failure::Cause;
  EXPECT_TRUE(RegistryError::from_failure({Cause::network, "Connection refused", {}}).is_temporary());
  for (auto cause : {Cause::setup, Cause::tls, Cause::certificate, Cause::local, Cause::cancelled}) {
    EXPECT_FALSE(RegistryError::from_failure({cause, "x", {}}).is_temporary());
  }
  EXPECT_FALSE(RegistryError::protocol("no Location").is_temporary());
}

TEST(RegistryError, MessagesSayWhatWasDoneAndHowOftenItWasTried) {
  auto e = RegistryError::from_response(response(500, R"({"errors":[{"code":"UNKNOWN","message":"unknown error"}]})"));
  e.attempts = 5;
  e.elapsed = std::chrono::milliseconds(3200);
  const Error error = e.to_error("pushing mesh/app to 127.0.0.1:5000: uploading blob sha256:abcd");
  EXPECT_EQ(error.kind, ErrorKind::registry);
  EXPECT_EQ(error.message,
            "pushing mesh/app to 127.0.0.1:5000: uploading blob sha256:abcd: 500 Internal Server Error (UNKNOWN: "
            "unknown error) "
            "(gave up after 5 attempts in 3.2 s)");
  const Error local = RegistryError::local(Error::input("opening /s/blobs/x: No such file")).to_error("pushing");
  EXPECT_EQ(local.kind, ErrorKind::input);
  EXPECT_EQ(local.message, "pushing: opening /s/blobs/x: No such file");
}

TEST(RegistryError, RetryAfterInSecondsOrAsADate) {
  http::Response r = response(429, "");
  r.headers.add("Retry-After", "7");
  EXPECT_EQ(RegistryError::from_response(r).retry_after, std::chrono::seconds(7));
  EXPECT_EQ(parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT"), std::chrono::seconds(0));  // in the past
  EXPECT_EQ(parse_retry_after(""), std::nullopt);
  EXPECT_EQ(parse_retry_after("soon"), std::nullopt);
}

}  // namespace
}  // namespace arec
