#include "recorder/image_files.hpp"

#include <gtest/gtest.h>

#include "support/tar.hpp"
#include "support/temp_dir.hpp"

namespace arec {
namespace {

using test::Gzip;
using test::make_tar;
using test::TarItem;
using test::TempDir;

class ImageFilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto store = Store::open(m_dir / "store");
    ASSERT_TRUE(store.has_value()) << store.error().message;
    m_store.emplace(std::move(*store));
    const std::string lower = make_tar({{"usr/lib/x/libfoo.so", TarItem::file, "foo one"},
                                        {"./lib", TarItem::symlink, "usr/lib"},
                                        {"etc/passwd", TarItem::file, "root"},
                                        {"opt/dir/a", TarItem::file, "a"},
                                        {"../evil", TarItem::file, "outside"}},
                                       Gzip::yes);
    const std::string upper = make_tar({{"etc/.wh.passwd", TarItem::file, ""},
                                        {"opt/dir/.wh..wh..opq", TarItem::file, ""},
                                        {"opt/dir/b", TarItem::file, "b"},
                                        {"usr/lib/x/libbaz.so", TarItem::file, "baz"},
                                        {"usr/lib/x/libbar.so", TarItem::hardlink, "usr/lib/x/libbaz.so"},
                                        {"up", TarItem::symlink, "../../../../usr"},
                                        {"loop", TarItem::symlink, "loop"}},
                                       Gzip::no);
    for (const auto& [bytes, type] : {std::pair{lower, media_type::k_layer_gzip}, {upper, media_type::k_layer_tar}}) {
      auto d = m_store->put_blob(bytes, type);
      ASSERT_TRUE(d.has_value()) << d.error().message;
      m_layers.push_back(*d);
    }
  }

  TempDir m_dir;
  std::optional<Store> m_store;
  std::vector<Descriptor> m_layers;
};

TEST_F(ImageFilesTest, FollowsSymlinksWithinTheViewAndReadsFilesFromTheirLayer) {
  auto view = ImageFiles::read(*m_store, m_layers, "base");
  ASSERT_TRUE(view.has_value()) << view.error().message;
  EXPECT_EQ(view->resolve("/lib/x/libfoo.so"), std::optional<std::string>("usr/lib/x/libfoo.so"));
  EXPECT_EQ(view->read_file("usr/lib/x/libfoo.so").value_or("(error)"), "foo one");
  // ".." stops at the image root, as in a chroot: the link never leads out of the base.
  EXPECT_EQ(view->resolve("up/lib/x/libfoo.so"), std::optional<std::string>("usr/lib/x/libfoo.so"));
  EXPECT_EQ(view->resolve("loop/x"), std::nullopt);
  EXPECT_EQ(view->resolve("usr/lib/x/missing.so"), std::nullopt);
  // A hard link reads its target's bytes.
  EXPECT_EQ(view->read_file("usr/lib/x/libbar.so").value_or("(error)"), "baz");
}

TEST_F(ImageFilesTest, WhiteoutsHideWhatTheLayersBelowHold) {
  auto view = ImageFiles::read(*m_store, m_layers, "base");
  ASSERT_TRUE(view.has_value()) << view.error().message;
  EXPECT_EQ(view->lstat("etc/passwd"), nullptr);
  EXPECT_EQ(view->lstat("opt/dir/a"), nullptr);
  EXPECT_NE(view->lstat("opt/dir/b"), nullptr);
  EXPECT_EQ(view->lstat("etc/.wh.passwd"), nullptr);
  EXPECT_EQ(view->lstat("evil"), nullptr);  // an entry climbing out with ".." is not part of the view
}

TEST_F(ImageFilesTest, ALayerThatIsNoTarIsAnErrorNamingTheBase) {
  auto bad = m_store->put_blob("not a tar at all", media_type::k_layer_tar);
  ASSERT_TRUE(bad.has_value());
  auto view = ImageFiles::read(*m_store, {*bad}, "base image sha256:x");
  ASSERT_FALSE(view.has_value());
  EXPECT_NE(view.error().message.find("base image sha256:x: layer " + bad->digest.str()), std::string::npos)
      << view.error().message;
}

}  // namespace
}  // namespace arec
