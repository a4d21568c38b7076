// The one reading of a path inside an image, a layer or a bundle.
#include <gtest/gtest.h>

#include "util/paths.hpp"

namespace arec {
namespace {

TEST(Paths, NormalFormDropsEmptyAndDotComponents) {
  EXPECT_EQ(normalise_path("/usr//lib/./x/"), "usr/lib/x");
  EXPECT_EQ(normalise_path("./usr/lib/x"), "usr/lib/x");
  EXPECT_EQ(normalise_path("usr/lib/x"), "usr/lib/x");
  EXPECT_EQ(normalise_path("/"), "");
  EXPECT_EQ(normalise_path(""), "");
  EXPECT_EQ(normalise_path("./"), "");
  EXPECT_EQ(normalise_path("a/..b/c.."), "a/..b/c..");
}

TEST(Paths, AnyClimbingComponentIsRefused) {
  EXPECT_EQ(normalise_path(".."), std::nullopt);
  EXPECT_EQ(normalise_path("../etc/passwd"), std::nullopt);
  EXPECT_EQ(normalise_path("usr/../../etc"), std::nullopt);
  EXPECT_EQ(normalise_path("usr/lib/.."), std::nullopt);
  EXPECT_EQ(normalise_path("/usr//..//"), std::nullopt);
}

TEST(Paths, ComponentsKeepClimbsForTheCaller) {
  EXPECT_EQ(path_components("/a//./b/../c/"), (std::vector<std::string>{"a", "b", "..", "c"}));
  const std::vector<std::string> parts{"a", "b", "c"};
  EXPECT_EQ(join_path(parts, 2), "a/b");
  EXPECT_EQ(join_path(parts, 9), "a/b/c");
}

}  // namespace
}  // namespace arec
