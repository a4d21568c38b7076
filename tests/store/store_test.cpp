#include "store/store.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <map>

#include "recorder/image.hpp"
#include "support/temp_dir.hpp"

namespace arec {
namespace {

using test::read_file;
using test::TempDir;
using test::write_file;

RecordRequest request_for(const std::filesystem::path& source, std::string name = "app",
                          Compression compression = Compression::gzip, unsigned threads = 1) {
  RecordRequest r;
  r.module = "mesh";
  r.name = std::move(name);
  r.entries = *collect_entries({*parse_layer_input(LayerInput::Kind::directory, source.string() + "=/srv")});
  r.compression = compression;
  r.threads = threads;
  r.revision = "0123456789abcdef0123456789abcdef01234567";
  return r;
}

TEST(Store, OpenCreatesAnOciLayout) {
  TempDir tmp;
  auto store = Store::open(tmp / "store");
  ASSERT_TRUE(store) << store.error().message;
  EXPECT_EQ(read_file(tmp / "store/oci-layout"), R"({"imageLayoutVersion":"1.0.0"})");
  EXPECT_EQ(read_file(tmp / "store/index.json"),
            R"({"manifests":[],"mediaType":"application/vnd.oci.image.index.v1+json","schemaVersion":2})");
  EXPECT_TRUE(std::filesystem::is_directory(tmp / "store/blobs/sha256"));
}

TEST(Store, RefusesANonEmptyDirectoryThatIsNotALayout) {
  TempDir tmp;
  write_file(tmp / "precious/notes.txt", "keep me");
  auto store = Store::open(tmp / "precious");
  ASSERT_FALSE(store);
  EXPECT_NE(store.error().message.find("exists and is not an OCI image layout"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(tmp / "precious/index.json"));
}

TEST(Store, RecordingIdenticalContentChangesNothing) {
  TempDir tmp;
  write_file(tmp / "src/app", "v1");
  auto store = Store::open(tmp / "store");
  ASSERT_TRUE(store);
  auto first = record_image(request_for(tmp / "src"), *store);
  ASSERT_TRUE(first) << first.error().message;
  EXPECT_TRUE(first->changed);
  const auto index_before = read_file(tmp / "store/index.json");
  auto second = record_image(request_for(tmp / "src"), *store);
  ASSERT_TRUE(second) << second.error().message;
  EXPECT_FALSE(second->changed);
  EXPECT_EQ(second->record.manifest.digest, first->record.manifest.digest);
  EXPECT_EQ(read_file(tmp / "store/index.json"), index_before);
}

TEST(Store, NewContentBecomesLatestAndHistoryKeepsTheOld) {
  TempDir tmp;
  write_file(tmp / "src/app", "v1");
  auto store = Store::open(tmp / "store");
  auto v1 = record_image(request_for(tmp / "src"), *store);
  write_file(tmp / "src/app", "v2");
  auto v2 = record_image(request_for(tmp / "src"), *store);
  ASSERT_TRUE(v1 && v2);
  EXPECT_NE(v1->record.manifest.digest, v2->record.manifest.digest);
  auto latest = store->records(History::latest);
  ASSERT_TRUE(latest);
  ASSERT_EQ(latest->size(), 1u);
  EXPECT_EQ(latest->at(0).manifest.digest, v2->record.manifest.digest);
  EXPECT_EQ(latest->at(0).revision, "0123456789abcdef0123456789abcdef01234567");
  auto all = store->records(History::all);
  ASSERT_TRUE(all);
  ASSERT_EQ(all->size(), 2u);
  EXPECT_EQ(all->at(0).manifest.digest, v1->record.manifest.digest);
  // index.json is the OCI view: the latest, carrying the ref.name that skopeo and umoci look images up
  // by; the history is in the database only.
  auto index = store->read_index();
  ASSERT_TRUE(index);
  EXPECT_EQ(std::ranges::count(index->manifests, v1->record.manifest.digest, &Descriptor::digest), 0);
  const auto v2_entry = std::ranges::find(index->manifests, v2->record.manifest.digest, &Descriptor::digest);
  ASSERT_NE(v2_entry, index->manifests.end());
  EXPECT_EQ(v2_entry->annotation(annotation::k_ref_name), "mesh/app");
}

TEST(Store, SameInputsSameDigestAcrossStoresThreadsAndCompressions) {
  TempDir tmp;
  std::string big(3 * 1024 * 1024, 'q');
  for (std::size_t i = 0; i < big.size(); i += 7) big[i] = static_cast<char>('a' + i % 23);
  write_file(tmp / "src/big", big);
  write_file(tmp / "src/small", "s");
  for (auto compression : {Compression::gzip, Compression::zstd, Compression::none}) {
    auto s1 = Store::open(tmp / ("one-" + std::string(compression_name(compression))));
    auto s2 = Store::open(tmp / ("two-" + std::string(compression_name(compression))));
    auto with_one = record_image(request_for(tmp / "src", "app", compression, 1), *s1);
    auto with_two = record_image(request_for(tmp / "src", "app", compression, 2), *s2);
    ASSERT_TRUE(with_one && with_two);
    EXPECT_EQ(with_one->record.manifest.digest, with_two->record.manifest.digest) << compression_name(compression);
  }
}

// Recording a module/name again with the same content finds its layer by the DiffID in arec/layers and
// takes the blob named there instead of compressing again. Compression is deterministic, so the blobs
// alone cannot tell the two apart: the test points the cache entry at another blob of the store (the
// config), and only a record that used the cache names that blob as its layer.
TEST(Store, UnchangedContentReusesTheCompressedLayer) {
  TempDir tmp;
  write_file(tmp / "src/app", "v1");
  auto store = Store::open(tmp / "store");
  // Without an SBOM, so that the blobs a record writes are its image's alone.
  auto request = request_for(tmp / "src");
  request.sboms.clear();
  auto first = record_image(request, *store);
  ASSERT_TRUE(first) << first.error().message;
  const auto blobs = tmp / "store/blobs/sha256";
  const auto manifest_of = [&](const RecordOutcome& r) {
    return nlohmann::json::parse(read_file(blobs / r.record.manifest.digest.hex()));
  };
  const auto manifest = manifest_of(*first);
  std::vector<std::filesystem::path> cache(std::filesystem::directory_iterator(tmp / "store/arec/layers"), {});
  ASSERT_EQ(cache.size(), 1u);
  auto entry = nlohmann::json::parse(read_file(cache[0]));
  EXPECT_EQ(entry["digest"], manifest["layers"][0]["digest"]);
  entry["digest"] = manifest["config"]["digest"];
  entry["size"] = manifest["config"]["size"];
  write_file(cache[0], entry.dump());
  const auto blobs_before = std::distance(std::filesystem::directory_iterator(blobs), {});

  auto again = record_image(request, *store);
  ASSERT_TRUE(again) << again.error().message;
  EXPECT_EQ(manifest_of(*again)["layers"][0]["digest"], manifest["config"]["digest"])
      << "the layer was compressed again instead of taken from arec/layers";
  // Only the new manifest was written: no layer blob.
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(blobs), {}), blobs_before + 1);
  EXPECT_TRUE(std::filesystem::is_empty(tmp / "store/arec/tmp"));
}

// A power loss without AREC_SYNC=on may leave blobs cut short; recording the same content again
// writes every one of them again instead of trusting its name.
TEST(Store, BlobsCutShortAreWrittenAgainByTheNextRecording) {
  for (const Compression compression : {Compression::gzip, Compression::none}) {
    TempDir tmp;
    write_file(tmp / "src/app", "v1");
    auto store = Store::open(tmp / "store");
    auto first = record_image(request_for(tmp / "src", "app", compression), *store);
    ASSERT_TRUE(first) << first.error().message;
    std::map<std::filesystem::path, std::string> blobs;
    for (const auto& blob : std::filesystem::directory_iterator(tmp / "store/blobs/sha256")) {
      blobs[blob.path()] = read_file(blob.path());
      std::filesystem::resize_file(blob.path(), 0);
    }
    auto again = record_image(request_for(tmp / "src", "app", compression), *store);
    ASSERT_TRUE(again) << again.error().message;
    EXPECT_EQ(again->record.manifest.digest, first->record.manifest.digest);
    for (const auto& [path, bytes] : blobs)
      EXPECT_EQ(read_file(path), bytes) << path << " " << compression_name(compression);
  }
}
TEST(Store, BaseImageLayersAreReusedByDigest) {
  TempDir tmp;
  write_file(tmp / "base-src/etc/os-release", "ID=test");
  auto base_store = Store::open(tmp / "base");
  RecordRequest base_request = request_for(tmp / "base-src", "base");
  base_request.env = {"PATH=/usr/bin", "LANG=C"};
  base_request.entrypoint = {"/bin/sh"};
  auto base = record_image(base_request, *base_store);
  ASSERT_TRUE(base);

  write_file(tmp / "src/app", "app");
  auto store = Store::open(tmp / "store");
  auto base_image = open_layout_base((tmp / "base").string(), "mesh/base", "base");
  ASSERT_TRUE(base_image) << base_image.error().message;
  RecordRequest r = request_for(tmp / "src");
  r.base = *base_image;
  r.env = {"LANG=C.UTF-8"};
  auto out = record_image(r, *store);
  ASSERT_TRUE(out) << out.error().message;
  EXPECT_EQ(out->record.base_digest, base->record.manifest.digest.str());

  auto manifest = nlohmann::json::parse(read_file(store->blob_path(out->record.manifest.digest)));
  ASSERT_EQ(manifest["layers"].size(), 2u);
  auto base_manifest = nlohmann::json::parse(read_file(base_store->blob_path(base->record.manifest.digest)));
  EXPECT_EQ(manifest["layers"][0], base_manifest["layers"][0]);
  EXPECT_EQ(manifest["annotations"]["org.opencontainers.image.base.digest"], base->record.manifest.digest.str());
  auto config = nlohmann::json::parse(
      read_file(store->blob_path(*Digest::parse(manifest["config"]["digest"].get<std::string>()))));
  EXPECT_EQ(config["config"]["Env"], nlohmann::json::array({"PATH=/usr/bin", "LANG=C.UTF-8"}));
  EXPECT_EQ(config["config"]["Entrypoint"], nlohmann::json::array({"/bin/sh"}));
  EXPECT_EQ(config["rootfs"]["diff_ids"].size(), 2u);

  auto missing = open_layout_base((tmp / "base").string(), "mesh/nope", "base");
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("no image named \"mesh/nope\""), std::string::npos);
  auto not_layout = open_layout_base((tmp / "src").string(), "", "base");
  ASSERT_FALSE(not_layout);
  EXPECT_NE(not_layout.error().message.find("not an OCI image layout"), std::string::npos);
}

// A record of mesh/`name` whose manifest is named by `content`: the view lists descriptors and reads no blob.
Record view_record(const std::string& name, const std::string& content, std::optional<Platform> platform = std::nullopt,
                   const std::string& config = "") {
  Descriptor manifest{std::string(media_type::k_manifest),
                      digest_of(content),
                      static_cast<std::int64_t>(content.size()),
                      {},
                      {},
                      {},
                      platform};
  return Record{"mesh", name, manifest, now_rfc3339(), "t-" + name, config, "", ""};
}

Descriptor referrer_of(const Record& subject, const std::string& content) {
  Descriptor d{std::string(media_type::k_manifest),
               digest_of(content),
               static_cast<std::int64_t>(content.size()),
               "application/spdx+json",
               {},
               {},
               {}};
  d.annotations.emplace(annotation::k_subject, subject.manifest.digest.str());
  return d;
}

// What a store's type lets a caller do: through a const Store, nothing that changes a file.
template <typename S>
concept takes_the_writer = requires(S& s) {
  s.writer();
};
template <typename S>
concept adds_blobs = requires(S& s, const Layout& other, const Descriptor& d) {
  s.begin_blob(Hashing::yes);
  s.put_blob("", "");
  s.copy_blob(other, d);
};
template <typename S>
concept writes_caches = requires(S& s, const Digest& digest, const Descriptor& d) {
  s.remember_layer(digest, Compression::gzip, d);
  s.note_repository(digest, "");
  s.sweep_abandoned_temporaries();
};
template <typename S>
concept writes_the_history = requires(S& s) {
  s.history()->bump_generation();
};
static_assert(takes_the_writer<Store> && adds_blobs<Store> && writes_caches<Store>);
static_assert(!takes_the_writer<const Store> && !adds_blobs<const Store> && !writes_caches<const Store>);
static_assert(!writes_the_history<Store> && !writes_the_history<const Store>,
              "the history is written through a StoreWriter only");
static_assert(!std::is_copy_constructible_v<StoreWriter>, "one writer per taking of the lock");

TEST(StoreView, IndexJsonIsTheCanonicalJsonOfTheView) {
  TempDir tmp;
  auto store = Store::open(tmp / "store");
  ASSERT_TRUE(store) << store.error().message;
  const auto amd64 = view_record("multi", "multi amd64", Platform{"amd64", "linux", ""});
  const auto arm64 = view_record("multi", "multi arm64", Platform{"arm64", "linux", "v8"});
  const auto old = view_record("app", "app v1");
  const auto now = view_record("app", "app v2");
  const auto debug = view_record("app", "app debug", std::nullopt, "Debug");
  Descriptor pulled{std::string(media_type::k_manifest), digest_of("a pulled base"), 13, {}, {}, {}, {}};
  pulled.annotations.emplace("dev.arec.pulled", "true");
  {
    auto writer = store->writer();
    ASSERT_TRUE(writer) << writer.error().message;
    ASSERT_TRUE(writer->commit(amd64, {referrer_of(amd64, "sbom amd64")}));
    ASSERT_TRUE(writer->commit(arm64));
    ASSERT_TRUE(writer->commit(old, {referrer_of(old, "sbom of an older record")}));
    ASSERT_TRUE(writer->commit_all({{debug, {}}, {now, {referrer_of(now, "sbom app v2")}}}));
    auto kept = writer->keep(pulled);
    ASSERT_TRUE(kept && *kept);
  }
  auto view = store->view();
  ASSERT_TRUE(view) << view.error().message;
  // The index over two platforms, each platform's record and its SBOM, the latest of each configuration
  // of app (records naming none, and Debug: neither the default, so each has only its own name) and the
  // SBOM of the first, the pulled image; not the SBOM of app's older record.
  ASSERT_EQ(view->manifests.size(), 8U) << canonical_json(to_json(*view)).value();
  std::vector<std::string> names;
  for (const auto& d : view->manifests) {
    if (const auto name = d.annotation(annotation::k_ref_name); !name.empty()) names.push_back(name);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"mesh/multi", "mesh/app:latest-none", "mesh/app:latest-debug"}));
  EXPECT_EQ(view->manifests.front().media_type, media_type::k_index);
  EXPECT_TRUE(store->has_blob(view->manifests.front())) << "the derived index is written before the view names it";
  EXPECT_FALSE(view->annotations.empty()) << "the view names its generation";
  EXPECT_EQ(read_file(tmp / "store/index.json"), canonical_json(to_json(*view)).value());
  auto state = store->view_state();
  ASSERT_TRUE(state);
  EXPECT_EQ(*state, Store::ViewState::current);
}

// The view names module/name as compose takes it: the default configuration's latest, the others by
// the tag push gives them; under another default (AREC_DEFAULT_CONFIG), that one, and index.json says so.
TEST(StoreView, NamesTheDefaultConfigurationsLatest) {
  TempDir tmp;
  auto store = Store::open(tmp / "store");
  ASSERT_TRUE(store) << store.error().message;
  const auto release = view_record("api", "api release", std::nullopt, "Release");
  const auto debug = view_record("api", "api debug", std::nullopt, "Debug");
  const auto names = [&store] {
    std::map<std::string, std::string> out;  // ref.name -> digest
    auto view = store->view();
    EXPECT_TRUE(view);
    for (const auto& d : view->manifests) {
      if (const auto name = d.annotation(annotation::k_ref_name); !name.empty()) out.emplace(name, d.digest.str());
    }
    return out;
  };
  {
    auto writer = store->writer();
    ASSERT_TRUE(writer) << writer.error().message;
    ASSERT_TRUE(writer->commit(release));
    ASSERT_TRUE(writer->commit(debug));  // the newest, and still not what mesh/api names
  }
  EXPECT_EQ(names(), (std::map<std::string, std::string>{{"mesh/api", release.manifest.digest.str()},
                                                         {"mesh/api:latest-debug", debug.manifest.digest.str()}}));
  EXPECT_EQ(read_file(tmp / "store/index.json").find("dev.arec.default-config"), std::string::npos);

  Store::set_default_config("Debug");
  {
    auto writer = store->writer();
    ASSERT_TRUE(writer);
    ASSERT_TRUE(writer->refresh_view_if_behind());  // nothing changed but the default: written again
  }
  EXPECT_EQ(names(), (std::map<std::string, std::string>{{"mesh/api", debug.manifest.digest.str()},
                                                         {"mesh/api:latest-release", release.manifest.digest.str()}}));
  EXPECT_NE(read_file(tmp / "store/index.json").find(R"("dev.arec.default-config":"Debug")"), std::string::npos);
  // Read back under the default it was written with: current, whatever this process's default is.
  Store::set_default_config(std::string(k_default_config));
  auto state = store->view_state();
  ASSERT_TRUE(state);
  EXPECT_EQ(*state, Store::ViewState::current);
}

TEST(Store, RecordsValidateModuleAndName) {
  EXPECT_TRUE(validate_record_part("mesh", "module"));
  EXPECT_TRUE(validate_record_part("control-plane.v2", "name"));
  for (const char* bad : {"Mesh", "", "-x", "a/b", "a..b", "x_", "a b"}) {
    auto s = validate_record_part(bad, "module");
    ASSERT_FALSE(s) << bad;
    EXPECT_NE(s.error().message.find("not an OCI repository path component"), std::string::npos);
  }
}

}  // namespace
}  // namespace arec
