#include "recorder/image_files.hpp"

#include <archive.h>
#include <archive_entry.h>
#include <gtest/gtest.h>

#include "support/temp_dir.hpp"

namespace arec {
namespace {

using test::TempDir;

struct TarItem {
  std::string path;
  enum { file, dir, symlink, hardlink } kind = file;
  std::string content_or_target;
};

// A layer's tar, written with libarchive as any image builder would, gzip'd or plain.
std::string make_tar(const std::vector<TarItem>& items, bool gzip) {
  std::string out;
  archive* a = archive_write_new();
  archive_write_set_format_pax_restricted(a);
  if (gzip) archive_write_add_filter_gzip(a);
  archive_write_open(
      a, &out, nullptr,
      [](archive*, void* data, const void* buffer, size_t length) -> la_ssize_t {
        static_cast<std::string*>(data)->append(static_cast<const char*>(buffer), length);
        return static_cast<la_ssize_t>(length);
      },
      nullptr);
  for (const auto& item : items) {
    archive_entry* e = archive_entry_new();
    archive_entry_set_pathname(e, item.path.c_str());
    archive_entry_set_perm(e, 0755);
    switch (item.kind) {
      case TarItem::file:
        archive_entry_set_filetype(e, AE_IFREG);
        archive_entry_set_size(e, static_cast<la_int64_t>(item.content_or_target.size()));
        break;
      case TarItem::dir: archive_entry_set_filetype(e, AE_IFDIR); break;
      case TarItem::symlink:
        archive_entry_set_filetype(e, AE_IFLNK);
        archive_entry_set_symlink(e, item.content_or_target.c_str());
        break;
      case TarItem::hardlink:
        archive_entry_set_filetype(e, AE_IFREG);
        archive_entry_set_hardlink(e, item.content_or_target.c_str());
        break;
    }
    archive_write_header(a, e);
    if (item.kind == TarItem::file) archive_write_data(a, item.content_or_target.data(), item.content_or_target.size());
    archive_entry_free(e);
  }
  archive_write_close(a);
  archive_write_free(a);
  return out;
}

class ImageFilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto store = Store::open(m_dir / "store");
    ASSERT_TRUE(store.has_value()) << store.error().message;
    m_store.emplace(std::move(*store));
    const std::string lower = make_tar(
        {{"usr/lib/x/libfoo.so", TarItem::file, "foo one"},
         {"./lib", TarItem::symlink, "usr/lib"},
         {"etc/passwd", TarItem::file, "root"},
         {"opt/dir/a", TarItem::file, "a"},
         {"../evil", TarItem::file, "outside"}},
        true);
    const std::string upper = make_tar(
        {{"etc/.wh.passwd", TarItem::file, ""},
         {"opt/dir/.wh..wh..opq", TarItem::file, ""},
         {"opt/dir/b", TarItem::file, "b"},
         {"usr/lib/x/libbaz.so", TarItem::file, "baz"},
         {"usr/lib/x/libbar.so", TarItem::hardlink, "usr/lib/x/libbaz.so"},
         {"up", TarItem::symlink, "../../../../usr"},
         {"loop", TarItem::symlink, "loop"}},
        false);
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
