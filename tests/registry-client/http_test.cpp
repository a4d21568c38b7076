#include "registry-client/http.hpp"

#include <gtest/gtest.h>

#include "registry-client/registry.hpp"

namespace arec {
namespace {

TEST(Location, RelativeAbsoluteAndWithAQuery) {
  const std::string base = "http://127.0.0.1:5000/v2/mesh/app/blobs/uploads/";
  EXPECT_EQ(http::resolve_url(base, "/v2/mesh/app/blobs/uploads/u1?_state=abc%3D"),
            "http://127.0.0.1:5000/v2/mesh/app/blobs/uploads/u1?_state=abc%3D");
  EXPECT_EQ(http::resolve_url(base, "u2"), "http://127.0.0.1:5000/v2/mesh/app/blobs/uploads/u2");
  EXPECT_EQ(http::resolve_url(base, "https://storage.example/upload/7?sig=x"),
            "https://storage.example/upload/7?sig=x");
  EXPECT_FALSE(http::resolve_url(base, "http://[bad"));
}

TEST(Location, DigestIsAppendedToAnExistingQuery) {
  const std::string digest = "sha256:" + std::string(64, 'a');
  EXPECT_EQ(http::add_query("http://h:5000/v2/m/n/blobs/uploads/u?_state=x", "digest", digest),
            "http://h:5000/v2/m/n/blobs/uploads/u?_state=x&digest=sha256%3a" + std::string(64, 'a'));
  EXPECT_EQ(http::add_query("http://h:5000/v2/m/n/blobs/uploads/u", "digest", digest),
            "http://h:5000/v2/m/n/blobs/uploads/u?digest=sha256%3a" + std::string(64, 'a'));
}

TEST(Location, OriginsCompareSchemeHostAndPort) {
  EXPECT_EQ(http::origin_of("HTTP://Registry.Example/v2/"), "http://registry.example:80");
  EXPECT_EQ(http::origin_of("https://r.example/v2/"), "https://r.example:443");
  EXPECT_EQ(http::origin_of("http://127.0.0.1:5000/v2/x?y"), "http://127.0.0.1:5000");
  EXPECT_EQ(http::origin_of("http://[::1]:5000/"), "http://[::1]:5000");
  EXPECT_NE(http::origin_of("http://127.0.0.1:5000/"), http::origin_of("http://127.0.0.1:5001/"));
}

TEST(Headers, CaseInsensitiveLastWins) {
  http::Headers h;
  h.add("WWW-Authenticate", "Basic realm=a");
  h.add("www-authenticate", "Bearer realm=b");
  h.add("Content-Length", "12");
  EXPECT_EQ(h.get("content-length"), "12");
  EXPECT_EQ(h.get("Www-Authenticate"), "Bearer realm=b");
  EXPECT_EQ(h.get_all("WWW-AUTHENTICATE").size(), 2u);
  EXPECT_EQ(h.get("Location"), std::nullopt);
}

TEST(Pagination, NextLinkIsResolvedAgainstTheRequest) {
  const std::string request = "http://h:5000/v2/_catalog?n=2";
  EXPECT_EQ(next_link(R"(</v2/_catalog?last=b&n=2>; rel="next")", request), "http://h:5000/v2/_catalog?last=b&n=2");
  EXPECT_EQ(next_link(R"(<http://h:5000/prev>; rel="prev", </v2/_catalog?last=d&n=2>; rel="next")", request),
            "http://h:5000/v2/_catalog?last=d&n=2");
  EXPECT_EQ(next_link(R"(</v2/_catalog?last=b>; rel="prev")", request), std::nullopt);
}

}  // namespace
}  // namespace arec
