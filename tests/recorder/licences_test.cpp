#include "recorder/licences.hpp"

#include <gtest/gtest.h>

namespace arec {
namespace {

TEST(Licences, Dep5NamesBecomeTheSpdxListsIdentifiers) {
  EXPECT_EQ(spdx_expression("GPL-2+"), "GPL-2.0-or-later");
  EXPECT_EQ(spdx_expression("GPL-2"), "GPL-2.0-only");
  EXPECT_EQ(spdx_expression("LGPL-2.1+"), "LGPL-2.1-or-later");
  EXPECT_EQ(spdx_expression("GPL-3.0+"), "GPL-3.0-or-later");
  EXPECT_EQ(spdx_expression("GPL"), "GPL-1.0-or-later");
  EXPECT_EQ(spdx_expression("Expat"), "MIT");
  EXPECT_EQ(spdx_expression("BSD-3-clause"), "BSD-3-Clause");
  EXPECT_EQ(spdx_expression("zlib"), "Zlib");
  EXPECT_EQ(spdx_expression("Apache-2.0"), "Apache-2.0");
  EXPECT_EQ(spdx_expression("GFDL-NIV-1.3"), "GFDL-1.3-no-invariants-only");
  EXPECT_EQ(spdx_expression("BSD-3-clause or GPL-2"), "BSD-3-Clause OR GPL-2.0-only");
  EXPECT_EQ(spdx_expression("MPL-1.1 or GPL-2+ or LGPL-2.1+"), "MPL-1.1 OR GPL-2.0-or-later OR LGPL-2.1-or-later");
  EXPECT_EQ(spdx_expression("BSD-2-clause and Expat"), "BSD-2-Clause AND MIT");
  EXPECT_EQ(spdx_expression("GPL-3+ with GCC-exception-3.1 exception"), "GPL-3.0-or-later WITH GCC-exception-3.1");
  EXPECT_EQ(spdx_expression("GPL-2+ with Libtool exception"), "GPL-2.0-or-later WITH Libtool-exception");
  EXPECT_EQ(spdx_expression(""), "");
}

TEST(Licences, WhatTheSpdxListLacksIsALicenceRef) {
  EXPECT_EQ(spdx_expression("public-domain"), "LicenseRef-public-domain");
  EXPECT_EQ(spdx_expression("BSD-124-clause-UCB"), "LicenseRef-BSD-124-clause-UCB");
  EXPECT_EQ(spdx_expression("GPL-2+ with Unknown-thing exception"),
            "LicenseRef-GPL-2-plus-with-Unknown-thing-exception");
  EXPECT_EQ(spdx_expression("Artistic or GPL-1+"), "Artistic-1.0 OR GPL-1.0-or-later");
  EXPECT_EQ(licence_ref("Odd licence/v2"), "LicenseRef-Odd-licence-v2");
}

TEST(Licences, AMachineReadableFileDeclaresItsFilesLicencesTogether) {
  const std::string copyright =
      "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\n"
      "Upstream-Name: zstd\n"
      "\n"
      "Files: *\n"
      "Copyright: Meta Platforms, Inc.\n"
      "License: BSD-3-clause or GPL-2\n"
      "\n"
      "Files: contrib/*\n"
      "Copyright: someone\n"
      "License: Expat\n"
      "\n"
      "Files: contrib/pd/*\n"
      "Copyright: nobody\n"
      "License: public-domain\n"
      "\n"
      "Files: debian/*\n"
      "Copyright: Debian\n"
      "License: BSD-3-clause or GPL-2\n"
      "\n"
      "License: public-domain\n"
      " The author disclaims copyright.\n"
      " .\n"
      " Nothing more.\n"
      "\n"
      "License: Expat\n"
      " Permission is hereby granted...\n";
  const auto licence = debian_copyright_licence(copyright, "see the file");
  EXPECT_EQ(licence.expression, "(BSD-3-Clause OR GPL-2.0-only) AND MIT AND LicenseRef-public-domain");
  ASSERT_EQ(licence.others.size(), 1U);
  EXPECT_EQ(licence.others[0].id, "LicenseRef-public-domain");
  EXPECT_EQ(licence.others[0].name, "public-domain");
  EXPECT_EQ(licence.others[0].text, "The author disclaims copyright.\n\nNothing more.");
}

TEST(Licences, AFileInFreeFormDeclaresNothing) {
  EXPECT_TRUE(debian_copyright_licence("This is the Debian prepackaged version of the GNU C Library.\n\n"
                                       "License: LGPL-2.1+\n",
                                       "")
                  .expression.empty());
  EXPECT_TRUE(debian_copyright_licence("", "").expression.empty());
  // A Files paragraph without a licence, and a reference without a text anywhere: the fallback text.
  const auto licence = debian_copyright_licence(
      "Format: http://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\n\n"
      "Files: *\nCopyright: x\n\nFiles: a\nCopyright: y\nLicense: Custom\n",
      "See /usr/share/doc/x/copyright in the image.");
  EXPECT_EQ(licence.expression, "LicenseRef-Custom");
  ASSERT_EQ(licence.others.size(), 1U);
  EXPECT_EQ(licence.others[0].text, "See /usr/share/doc/x/copyright in the image.");
}

}  // namespace
}  // namespace arec
