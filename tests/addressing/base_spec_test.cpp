#include "addressing/base_spec.hpp"

#include <gtest/gtest.h>

namespace arec {
namespace {

const std::string k_digest = "sha256:" + std::string(64, 'a');

TEST(BaseSpec, OciIsALocalLayoutWithItsImageNamedOrNot) {
  auto named = parse_base("oci:/srv/layouts/debian:bookworm-slim");
  ASSERT_TRUE(named) << named.error().message;
  const auto* layout = std::get_if<LayoutBase>(&named->kind);
  ASSERT_NE(layout, nullptr);
  EXPECT_EQ(layout->dir, "/srv/layouts/debian");
  EXPECT_EQ(layout->ref, "bookworm-slim");
  EXPECT_EQ(named->what(), "base \"oci:/srv/layouts/debian:bookworm-slim\"");

  auto only = parse_base("oci:relative/dir");
  ASSERT_TRUE(only) << only.error().message;
  ASSERT_TRUE(std::holds_alternative<LayoutBase>(only->kind));
  EXPECT_EQ(std::get<LayoutBase>(only->kind).dir, "relative/dir");
  EXPECT_EQ(std::get<LayoutBase>(only->kind).ref, "");
}

TEST(BaseSpec, OciWithoutADirectoryIsRefused) {
  for (const std::string text : {"oci:", "oci::latest"}) {
    auto base = parse_base(text);
    ASSERT_FALSE(base) << text;
    EXPECT_EQ(base.error().kind, ErrorKind::input);
    EXPECT_EQ(base.error().message, "base \"" + text + "\": the layout directory is empty");
  }
}

TEST(BaseSpec, ModuleAndNameAloneIsARecordOfTheStore) {
  for (const std::string text : {"mesh/app", "docker://mesh/app"}) {
    auto base = parse_base(text);
    ASSERT_TRUE(base) << base.error().message;
    const auto* record = std::get_if<RecordBase>(&base->kind);
    ASSERT_NE(record, nullptr) << text;
    EXPECT_EQ(record->module, "mesh");
    EXPECT_EQ(record->name, "app");
  }
}

TEST(BaseSpec, AnyOtherReferenceIsAnImageOfARegistry) {
  // A tag, a domain, a digest, one segment or three: not a record of the store.
  auto tagged = parse_base("mesh/app:1.0");
  ASSERT_TRUE(tagged) << tagged.error().message;
  const auto* registry = std::get_if<RegistryBase>(&tagged->kind);
  ASSERT_NE(registry, nullptr);
  EXPECT_EQ(registry->reference.domain, "");
  EXPECT_EQ(registry->reference.path, "mesh/app");
  EXPECT_EQ(registry->reference.tag, "1.0");
  EXPECT_EQ(registry->digest, std::nullopt);

  auto pinned = parse_base("docker://127.0.0.1:5000/library/debian@" + k_digest);
  ASSERT_TRUE(pinned) << pinned.error().message;
  registry = std::get_if<RegistryBase>(&pinned->kind);
  ASSERT_NE(registry, nullptr);
  EXPECT_EQ(registry->reference.domain, "127.0.0.1:5000");
  EXPECT_EQ(registry->reference.path, "library/debian");
  ASSERT_TRUE(registry->digest);
  EXPECT_EQ(registry->digest->str(), k_digest);
  EXPECT_EQ(pinned->what(), "base \"docker://127.0.0.1:5000/library/debian@" + k_digest + "\"");

  for (const std::string text : {"debian", "mesh/group/app", "localhost:5000/mesh/app"}) {
    auto base = parse_base(text);
    ASSERT_TRUE(base) << base.error().message;
    EXPECT_TRUE(std::holds_alternative<RegistryBase>(base->kind)) << text;
  }
}

TEST(BaseSpec, OtherTransportsAndNonReferencesAreRefusedNamingTheThreeKinds) {
  const std::string kinds =
      ": expected oci:DIR[:REF], MODULE/NAME of a record, or a registry reference "
      "[HOST[:PORT]/]REPOSITORY[:TAG][@DIGEST]";
  for (const std::string text : {"docker-archive:/tmp/debian.tar", "containers-storage:debian", "dir:/tmp/image"}) {
    auto base = parse_base(text);
    ASSERT_FALSE(base) << text;
    EXPECT_EQ(base.error().kind, ErrorKind::input);
    EXPECT_EQ(base.error().message, "base \"" + text + "\"" + kinds);
  }
  for (const std::string text : {"Mesh/App", "", "docker://", "mesh//app"}) {
    auto base = parse_base(text);
    ASSERT_FALSE(base) << text;
    EXPECT_EQ(base.error().kind, ErrorKind::input);
    EXPECT_TRUE(base.error().message.starts_with("base \"" + text + "\"" + kinds + ": ")) << base.error().message;
  }
}

}  // namespace
}  // namespace arec
