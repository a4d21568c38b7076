// The licences a Debian package declares, read from its copyright file when it is machine-readable
// (DEP-5, https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/), as SPDX licence
// expressions: what an SBOM's licence fields say. A copyright file in free form declares nothing
// machine-readable; it still travels in the image, beside the package's files.
#pragma once

#include <string>
#include <string_view>

#include "recorder/sbom.hpp"

namespace arec {

// The licence of a copyright file: the licences of its Files paragraphs, each once, joined by AND (a
// package is distributed under all of its files' licences). Each LicenseRef- it makes is in `others`,
// with the text of the file's stand-alone License paragraph of that name, else of its Files paragraph,
// else `fallback_text`. Nothing for a file that is not DEP-5.
Licence debian_copyright_licence(std::string_view copyright, std::string_view fallback_text);

// One DEP-5 License line ("GPL-2+", "BSD-3-clause or GPL-2", "GPL-3+ with GCC-exception-3.1 exception")
// as an SPDX expression: short names mapped to the SPDX list's identifiers ("Expat" MIT, "GPL-2+"
// GPL-2.0-or-later), "or"/"and"/"with ... exception" to OR/AND/WITH; a name the list does not have
// becomes LicenseRef-NAME (its letters, digits, '.' and '-'). Empty for an empty line.
std::string spdx_expression(std::string_view dep5);

// The LicenseRef- an unknown licence name becomes.
std::string licence_ref(std::string_view name);

}  // namespace arec
