#include "store/uploads.hpp"

#include <gtest/gtest.h>

#include <filesystem>

#include "store/store.hpp"
#include "support/temp_dir.hpp"

namespace arec {
namespace {

using test::TempDir;

TEST(UploadNote, KeepsTheSessionOfOneBlobAndRepositoryForTheNextPush) {
  TempDir tmp;
  auto store = Store::open(tmp / "store");
  ASSERT_TRUE(store) << store.error().message;
  const Digest blob = digest_of("a layer");
  {
    auto note = UploadNote::claim(*store, "mesh/app", blob);
    ASSERT_TRUE(note);
    EXPECT_FALSE(note->session());  // nothing noted yet
    note->save({"/v2/mesh/app/blobs/uploads/1234?_state=abc", 16 << 20});
    // Held: another push of this blob from this store goes without a note.
    EXPECT_FALSE(UploadNote::claim(*store, "mesh/app", blob));
    // Another repository's upload of the same blob is another note.
    auto other = UploadNote::claim(*store, "mesh/other", blob);
    ASSERT_TRUE(other);
    EXPECT_FALSE(other->session());
  }
  // Released (as when the push is killed): the next push finds the session and what it held.
  auto note = UploadNote::claim(*store, "mesh/app", blob);
  ASSERT_TRUE(note);
  auto session = note->session();
  ASSERT_TRUE(session);
  EXPECT_EQ(session->path, "/v2/mesh/app/blobs/uploads/1234?_state=abc");
  EXPECT_EQ(session->offset, 16 << 20);
  note->clear();
  EXPECT_FALSE(note->session());
  std::size_t files = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(store->uploads_dir())) ++files;
  EXPECT_EQ(files, 1u);  // mesh/other's, empty; mesh/app's was removed
}

TEST(UploadNote, ANoteThatIsNotOneIsNoNote) {
  TempDir tmp;
  auto store = Store::open(tmp / "store");
  ASSERT_TRUE(store);
  const Digest blob = digest_of("a layer");
  { UploadNote::claim(*store, "mesh/app", blob)->save({"/v2/mesh/app/blobs/uploads/1", 5}); }
  EXPECT_EQ(UploadNote::claim(*store, "mesh/app", blob)->session()->offset, 5);
  for (const auto& entry : std::filesystem::directory_iterator(store->uploads_dir())) {
    const std::string of = R"({"repository":"mesh/app","blob":")" + blob.str() + R"(",)";
    for (const std::string& text :
         {std::string("not json"), of + R"("path":"http://elsewhere/v2/x","offset":5})",
          of + R"("path":"/v2/x","offset":-1})",
          R"({"repository":"mesh/other","blob":")" + blob.str() + R"(","path":"/v2/x","offset":5})",
          // Fields of another type are no note either (nlohmann's value() would throw).
          R"({"repository":5,"blob":")" + blob.str() + R"(","path":"/v2/x","offset":5})",
          of + R"("path":"/v2/x","offset":"5"})", of + R"("path":["/v2/x"],"offset":5})"}) {
      test::write_file(entry.path(), text);
      auto note = UploadNote::claim(*store, "mesh/app", blob);
      ASSERT_TRUE(note);
      EXPECT_FALSE(note->session()) << text;
    }
  }
}

}  // namespace
}  // namespace arec
