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
          of + R"("path":"/v2/x","offset":"5"})", of + R"("path":["/v2/x"],"offset":5})",
          // A path that is not a session of this repository: another repository's manifest, a dot
          // segment, a line break, an offset that does not fit.
          of + R"("path":"/v2/mesh/team/manifests/latest","offset":5})",
          of + R"("path":"/v2/mesh/app/blobs/uploads/../../../team/manifests/latest","offset":5})",
          of + R"("path":"/v2/mesh/app/blobs/uploads/1\r\nX-Injected: 1","offset":5})",
          of + R"("path":"/v2/mesh/app/blobs/uploads/1","offset":18446744073709551615})"}) {
      test::write_file(entry.path(), text);
      auto note = UploadNote::claim(*store, "mesh/app", blob);
      ASSERT_TRUE(note);
      EXPECT_FALSE(note->session()) << text;
    }
  }
}

TEST(UploadNote, APathIsASessionOfItsOwnRepositoryOrNothing) {
  for (const char* path :
       {"/v2/mesh/app/blobs/uploads/1234",
        "/v2/mesh/app/blobs/uploads/0f3c1e2a-5b6d-4e7f-8a9b-0c1d2e3f4a5b?_state=eyJOYW1lIjoibWVzaCJ9%3D",
        "/v2/mesh/app/blobs/uploads/a.b_c~d-e+f=", "/v2/mesh/app/blobs/uploads/x%41y?a=1&b=2&_state="}) {
    EXPECT_TRUE(is_upload_session_path(path, "mesh/app")) << path;
  }
  for (const char* path : {
           "/v2/mesh/other/blobs/uploads/1",                      // another repository's session
           "/v2/mesh/app/manifests/latest",                       // not a session at all
           "/v2/mesh/app/blobs/uploads/",                         // no session
           "/v2/mesh/app/blobs/uploads/1/more",                   // two segments
           "/v2/mesh/app/blobs/uploads/..",                       // a dot segment
           "/v2/mesh/app/blobs/uploads/.",                        //
           "/v2/mesh/app/blobs/uploads/%2e%2e",                   // one spelled with percent-encodings
           "/v2/mesh/app/blobs/uploads/%2E.",                     //
           "/v2/mesh/app/blobs/uploads/1%2f..%2f..%2fmanifests",  // an encoded slash
           "/v2/mesh/app/blobs/uploads/1%5c..",                   // an encoded backslash
           "/v2/mesh/app/blobs/uploads/1%0d%0aX: y",              // an encoded line break
           "/v2/mesh/app/blobs/uploads/1\r\nX-Injected: 1",       // a raw one
           "/v2/mesh/app/blobs/uploads/1\t",                      // a control character
           "/v2/mesh/app/blobs/uploads/1 2",                      // a space
           "/v2/mesh/app/blobs/uploads/\xc3\xa9",                 // outside ASCII
           "/v2/mesh/app/blobs/uploads/1%zz",                     // not an encoding
           "/v2/mesh/app/blobs/uploads/1#frag",                   // a fragment
           "/v2/mesh/app/blobs/uploads/1?_state=a#frag",          //
           "/v2/mesh/app/blobs/uploads/1?digest=sha256:00",       // a query naming another blob
           "/v2/mesh/app/blobs/uploads/1?_state=a&mount=sha256:00&from=mesh/team",
           "/v2/mesh/app/blobs/uploads/1?NS=elsewhere",        // or another registry
           "/v2/mesh/app/blobs/uploads/1?%64igest=sha256:00",  // a name spelled with an encoding
           "/v2/mesh/app/blobs/uploads/1?_state=%0a",          // an encoded line break in it
           "http://elsewhere/v2/mesh/app/blobs/uploads/1",     // an address
           "//elsewhere/v2/mesh/app/blobs/uploads/1",          //
       }) {
    EXPECT_FALSE(is_upload_session_path(path, "mesh/app")) << printable(path);
  }
  // The repository is one a push names: a crafted one is no repository.
  for (const char* repository : {"", "mesh/../team", "mesh//app", "Mesh/app", "mesh/app/", "/mesh/app"}) {
    EXPECT_FALSE(is_upload_session_path("/v2/" + std::string(repository) + "/blobs/uploads/1", repository))
        << repository;
  }
}

TEST(UploadNote, ASessionThatIsNotOneOfItsRepositoryIsNotNoted) {
  TempDir tmp;
  auto store = Store::open(tmp / "store");
  ASSERT_TRUE(store);
  const Digest blob = digest_of("a layer");
  auto note = UploadNote::claim(*store, "mesh/app", blob);
  ASSERT_TRUE(note);
  note->save({"/v2/mesh/app/blobs/uploads/1", 5});
  ASSERT_TRUE(note->session());
  // A registry's Location elsewhere in it replaces the note with none.
  note->save({"/v2/mesh/team/manifests/latest", 5});
  EXPECT_FALSE(note->session());
}

}  // namespace
}  // namespace arec
