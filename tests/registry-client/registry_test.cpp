#include "registry-client/registry.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <limits>
#include <random>

#include "addressing/nodes.hpp"
#include "registry-client/transfer.hpp"
#include "support/memory_sink.hpp"
#include "support/temp_dir.hpp"
#include "util/fs.hpp"

namespace arec {
namespace {

using test::MemorySink;
using test::TempDir;

TEST(Scheme, PlainHttpFallbackOnlyForLoopbackOrInsecureNodes) {
  for (const char* host : {"127.0.0.1:5000", "127.1.2.3:80", "[::1]:5000", "localhost:5000", "localhost"}) {
    EXPECT_EQ(plain_http_for(host, InsecureRegistry::no), PlainHttp::fallback) << host;
  }
  for (const char* host :
       {"10.0.0.5:5000", "192.168.1.1", "registry.example:5000", "[2001:db8::1]:5000", "localhost.example:5000"}) {
    EXPECT_EQ(plain_http_for(host, InsecureRegistry::no), PlainHttp::refused) << host;
    EXPECT_EQ(plain_http_for(host, InsecureRegistry::yes), PlainHttp::fallback) << host;
  }
}

TEST(Scheme, ADomainThatIsAnInsecureNodesRegistryMayFallBackToPlainHttp) {
  auto settings = NodeSettings::parse(R"({"self": "n1", "nodes": {
      "n1": {"address": "10.0.0.1", "ports": {"registry": 5000}},
      "n2": {"address": "10.0.0.2", "ports": {"registry": 5001}, "insecure_registry": true}},
      "services": {"registry": "n2"}})",
                                      "nodes.json");
  ASSERT_TRUE(settings) << settings.error().message;
  auto resolved = registry_for_domain(
      "", *settings, ClientSettings{"/ca.pem", http::k_default_stall_timeout, http::k_default_min_rate, {}});
  ASSERT_TRUE(resolved);
  EXPECT_EQ(resolved->host, "10.0.0.2:5001");
  // HTTPS is tried first, also there.
  EXPECT_EQ(resolved->base_url(), "https://10.0.0.2:5001");
  EXPECT_EQ(resolved->plain_http, PlainHttp::fallback);
  EXPECT_EQ(resolved->client.ca_file, "/ca.pem");
  EXPECT_EQ(registry_for_domain("10.0.0.2:5001", *settings, {})->plain_http, PlainHttp::fallback);
  EXPECT_EQ(registry_for_domain("10.0.0.1:5000", *settings, {})->plain_http, PlainHttp::refused);
  EXPECT_EQ(registry_for_domain("docker.io", *settings, {})->base_url(), "https://registry-1.docker.io");
}

TEST(Scheme, TheRegistryNameIsTheRegistryTheSettingsPlace) {
  auto settings = NodeSettings::parse(R"({"self": "n1", "registry_name": "registry.mesh", "nodes": {
      "n1": {"address": "10.0.0.1", "ports": {"registry": 5000}, "insecure_registry": true}},
      "services": {"registry": "n1"}})",
                                      "nodes.json");
  ASSERT_TRUE(settings) << settings.error().message;
  for (const char* domain : {"registry.mesh", "Registry.Mesh"}) {
    auto resolved = registry_for_domain(domain, *settings, {});
    ASSERT_TRUE(resolved) << domain;
    EXPECT_EQ(resolved->host, "10.0.0.1:5000");
    EXPECT_EQ(resolved->plain_http, PlainHttp::fallback);
  }
  EXPECT_EQ(registry_for_domain("registry.mesh:5000", *settings, {})->host, "registry.mesh:5000");
}

TEST(UploadRange, TheBytesASessionHoldsOrNothingWhenItMakesNoSense) {
  EXPECT_EQ(upload_range_held("0-0"), 0);  // distribution's empty session
  EXPECT_EQ(upload_range_held("0-1048575"), 1048576);
  EXPECT_EQ(upload_range_held("bytes=0-99"), 100);
  EXPECT_EQ(upload_range_held("0-9223372036854775806"), std::numeric_limits<std::int64_t>::max());
  for (const char* range :
       {"", "0-", "-5", "0--5", "0-+5", "0- 5", "0-5 ", "1-5", "00-5", "0-5-6", "0-abc", "0-0x10", "bytes=", "garbage",
        "0-9223372036854775807",                            // a count that does not fit
        "0-9223372036854775808", "0-18446744073709551615",  // nor a last byte
        "0-99999999999999999999999999999999999999999999999999"}) {
    EXPECT_FALSE(upload_range_held(range)) << range;
  }
}

TEST(Lists, NamesFromAPageOfTagsOrCatalog) {
  EXPECT_EQ(names_from_list_page(R"({"name":"m/n","tags":["v1","latest"]})", "tags"),
            (std::vector<std::string>{"v1", "latest"}));
  EXPECT_EQ(names_from_list_page(R"({"repositories":["a/b",7,null,"c/d"]})", "repositories"),
            (std::vector<std::string>{"a/b", "c/d"}));
  EXPECT_EQ(names_from_list_page(R"({"name":"m/n","tags":null})", "tags"), std::vector<std::string>{});
  EXPECT_FALSE(names_from_list_page("[]", "tags"));
  EXPECT_FALSE(names_from_list_page("<html>", "tags"));
  EXPECT_FALSE(names_from_list_page(std::string(100000, '[') + std::string(100000, ']'), "tags"));
}

// ---- against the real registry scripts/test starts -------------------------------------------------

class LiveRegistry : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* address = std::getenv("AREC_TEST_REGISTRY");
    if (address == nullptr || *address == '\0')
      GTEST_SKIP() << "AREC_TEST_REGISTRY is not set: run through scripts/test";
    m_registry.emplace(RegistryAddress{address, Scheme::http, {}}, Access::push);
    std::random_device random;
    m_repository = "unit/live" + std::to_string(random());
  }

  // A file of `size` random bytes and its descriptor.
  Descriptor blob_file(std::size_t size, const fs::Path& path) {
    std::string bytes(size, '\0');
    std::mt19937_64 generator{std::random_device{}()};
    for (auto& c : bytes) c = static_cast<char>(generator());
    test::write_file(path, bytes);
    return Descriptor{"application/octet-stream", digest_of(bytes), static_cast<std::int64_t>(size), {}, {}, {}, {}};
  }

  std::optional<Registry> m_registry;
  std::string m_repository;
  TempDir m_tmp;
};

TEST_F(LiveRegistry, UploadsMonolithicAndChunkedDownloadsVerified) {
  Session session(*m_registry);
  ASSERT_TRUE(session.ping());
  for (const std::int64_t chunk : {std::int64_t{0}, std::int64_t{100'000}}) {
    const auto path = m_tmp / ("blob" + std::to_string(chunk));
    const Descriptor blob = blob_file(350'000, path);
    auto absent = session.blob_size(m_repository, blob.digest);
    ASSERT_TRUE(absent);
    EXPECT_FALSE(*absent);
    auto start = session.start_upload(m_repository, blob.digest, std::nullopt);
    ASSERT_TRUE(start) << start.error().str();
    ASSERT_FALSE(start->mounted);
    auto fd = fs::open_read(path);
    std::int64_t last = 0;
    OpenUpload upload{start->location, 0};
    int acknowledged = 0;
    auto sent = session.upload(
        upload, blob, fd->get(), chunk,
        [&](std::int64_t n) {
          last = std::max(last, n);
          return true;
        },
        [&](const OpenUpload&) { ++acknowledged; });
    ASSERT_TRUE(sent) << sent.error().str();
    EXPECT_EQ(last, blob.size);
    EXPECT_EQ(acknowledged, chunk == 0 ? 0 : 4);  // 350,000 bytes in chunks of 100,000
    EXPECT_EQ(session.blob_size(m_repository, blob.digest).value(), blob.size);

    MemorySink sink;
    auto fetched = session.download_blob(m_repository, blob, sink, {});
    ASSERT_TRUE(fetched) << fetched.error().str();
    EXPECT_EQ(digest_of(sink.bytes), blob.digest);

    Descriptor lie = blob;
    lie.digest = digest_of("something else");
    MemorySink discarded;
    auto refused = session.download_blob(m_repository, lie, discarded, {});
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error().status, 404);  // asked by a digest the registry does not have
    lie = blob;
    lie.size = blob.size - 1;
    auto too_long = session.download_blob(m_repository, lie, discarded, {});
    ASSERT_FALSE(too_long);
    EXPECT_NE(too_long.error().message.find("more than"), std::string::npos) << too_long.error().str();
  }
}

TEST_F(LiveRegistry, AnUploadCutOffGoesOnFromTheRangeTheRegistryHoldsOrIsCancelled) {
  Session session(*m_registry);
  const auto path = m_tmp / "blob";
  const Descriptor blob = blob_file(350'000, path);
  auto fd = fs::open_read(path);
  auto start = session.start_upload(m_repository, blob.digest, std::nullopt);
  ASSERT_TRUE(start) << start.error().str();
  // Cut off once the first chunk is acknowledged, before the next one sends a byte (a registry that got
  // part of a chunk may drop the session: distribution 2.8 does).
  OpenUpload upload{start->location, 0};
  bool first = false;
  auto cut = session.upload(
      upload, blob, fd->get(), 100'000, [&](std::int64_t) { return !first; }, [&](const OpenUpload&) { first = true; });
  ASSERT_FALSE(cut);
  EXPECT_EQ(upload.offset, 100'000);
  auto status = session.upload_status(m_repository, upload.location);
  ASSERT_TRUE(status) << status.error().str();
  ASSERT_TRUE(*status);
  EXPECT_EQ((*status)->offset, 100'000);
  upload = **status;
  auto rest = session.upload(upload, blob, fd->get(), 100'000, {}, {});
  ASSERT_TRUE(rest) << rest.error().str();
  EXPECT_EQ(session.blob_size(m_repository, blob.digest).value(), blob.size);
  MemorySink sink;
  ASSERT_TRUE(session.download_blob(m_repository, blob, sink, {}));
  EXPECT_EQ(digest_of(sink.bytes), blob.digest);

  // A session cancelled is gone: asked about, the registry has nothing to go on with.
  const Descriptor other = blob_file(250'000, m_tmp / "other");
  auto other_fd = fs::open_read(m_tmp / "other");
  auto second = session.start_upload(m_repository, other.digest, std::nullopt);
  ASSERT_TRUE(second);
  OpenUpload open{second->location, 0};
  first = false;
  ASSERT_FALSE(session.upload(
      open, other, other_fd->get(), 100'000, [&](std::int64_t) { return !first; },
      [&](const OpenUpload&) { first = true; }));
  ASSERT_TRUE(session.cancel_upload(m_repository, open.location));
  auto gone = session.upload_status(m_repository, open.location);
  ASSERT_TRUE(gone) << gone.error().str();
  EXPECT_FALSE(*gone);
  EXPECT_FALSE(session.blob_size(m_repository, other.digest).value());
}

TEST_F(LiveRegistry, MountsFromAnotherRepositoryAndManifestsRoundTrip) {
  Session session(*m_registry);
  const auto path = m_tmp / "config";
  const Descriptor config = blob_file(100, path);
  auto start = session.start_upload(m_repository, config.digest, std::nullopt);
  ASSERT_TRUE(start);
  auto fd = fs::open_read(path);
  OpenUpload upload{start->location, 0};
  ASSERT_TRUE(session.upload(upload, config, fd->get(), 0, {}, {}));
  auto mounted = session.start_upload(m_repository + "-copy", config.digest, m_repository);
  ASSERT_TRUE(mounted) << mounted.error().str();
  EXPECT_TRUE(mounted->mounted);

  const std::string manifest = R"({"config":{"digest":")" + config.digest.str() +
                               R"(","mediaType":"application/vnd.oci.image.config.v1+json","size":100},"layers":[],)"
                               R"("mediaType":"application/vnd.oci.image.manifest.v1+json","schemaVersion":2})";
  auto put = session.put_manifest(m_repository, "v1", media_type::k_manifest, manifest);
  ASSERT_TRUE(put) << put.error().str();
  EXPECT_EQ(*put, digest_of(manifest));
  auto got = session.get_manifest(m_repository, put->str());
  ASSERT_TRUE(got) << got.error().str();
  EXPECT_EQ(got->bytes, manifest);
  EXPECT_EQ(got->media_type, media_type::k_manifest);
  auto head = session.head_manifest(m_repository, "v1");
  ASSERT_TRUE(head && *head);
  EXPECT_EQ((*head)->digest, *put);
  EXPECT_EQ((*head)->size, static_cast<std::int64_t>(manifest.size()));
  EXPECT_FALSE(session.head_manifest(m_repository, "v2").value());
  auto missing = session.get_manifest(m_repository, "v2");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, "MANIFEST_UNKNOWN");

  auto tags = session.tags(m_repository);
  ASSERT_TRUE(tags) << tags.error().str();
  EXPECT_EQ(*tags, std::vector<std::string>{"v1"});
  auto catalog = session.catalog();
  ASSERT_TRUE(catalog) << catalog.error().str();
  EXPECT_NE(std::ranges::find(*catalog, m_repository), catalog->end());
}

}  // namespace
}  // namespace arec
