// Why two images differ, from the most to the least telling: the records' fields, the image config, the
// layers matched by origin, the files of a changed layer, and inside a changed ELF or text file what
// changed in it, with a hint where a difference has a known cause. Layers are streamed through
// libarchive, never unpacked; a layer of the same digest on both sides is never read.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "oci/record.hpp"
#include "store/bundle.hpp"
#include "store/store.hpp"

namespace arec {

// One side of a diff: an image manifest held by a layout, and the record it is, when it is one.
struct DiffSide {
  const Layout* layout = nullptr;
  Descriptor manifest;
  std::optional<Record> record;
  std::string name;  // how the report names it: "mesh/app@sha256:...", "oci:DIR:REF"
};

// What is read into memory, at most, to look inside a changed file: an ELF file's bytes (larger ones
// are compared by digest), a text file for its unified diff (each side, and in lines), the diff shown.
inline constexpr std::int64_t k_max_elf_bytes = std::int64_t{32} << 20;
inline constexpr std::int64_t k_max_text_bytes = std::int64_t{64} << 10;
inline constexpr std::size_t k_max_text_lines = 1000;
inline constexpr std::size_t k_max_diff_lines = 200;
// A dpkg status file of a base layer, read for the package versions it names.
inline constexpr std::int64_t k_max_status_bytes = std::int64_t{16} << 20;
// At most this many text diffs per image, and strings shown per section and side.
inline constexpr std::size_t k_max_text_diffs = 50;
inline constexpr std::size_t k_max_strings_shown = 20;
// What bounds the diff's memory and its report, whatever the images hold (arec diff stays under 128 MiB):
// the entries of one side of a changed layer held at once (a layer of more is compared by digest; a
// --path filter narrows it), the changed files listed in the whole report (the others are counted), the
// changed sections of an ELF file listed, the details kept of one side's changed files while the other
// side is read, and the bytes of a text diff.
inline constexpr std::size_t k_max_entry_bytes = std::size_t{48} << 20;
inline constexpr std::size_t k_max_files_listed = 2000;
inline constexpr std::size_t k_max_sections_shown = 64;
inline constexpr std::size_t k_max_captured_bytes = std::size_t{24} << 20;
inline constexpr std::size_t k_max_diff_bytes = std::size_t{16} << 10;
// The text report: at most this many lines about one file, and in all (the hints, last, always come,
// at most k_max_hints_shown of them), each cut short with a line saying what was left out and how to see it.
inline constexpr std::size_t k_max_report_lines_per_file = 100;
inline constexpr std::size_t k_max_report_lines = 2000;
inline constexpr std::size_t k_max_hints_shown = 20;

// A value of one side, absent (null) or present, as JSON: strings, lists and objects alike.
struct FieldChange {
  std::string field;
  nlohmann::json before;
  nlohmann::json after;
};

struct SectionChange {
  std::string name;
  std::optional<std::uint64_t> before, after;  // sizes; nothing where the section is missing
};

// The strings of a section one side has and the other has not (at most k_max_strings_shown each).
struct StringsChange {
  std::string section;
  std::vector<std::string> before, after;
};

struct ElfChange {
  std::vector<FieldChange> fields;      // build-id, comment, soname, interpreter, needed, rpath, runpath
  std::vector<SectionChange> sections;  // at most k_max_sections_shown
  std::size_t sections_left_out = 0;    // the changed sections past those
  std::vector<StringsChange> strings;
  std::string note;  // when it could not be looked into (too large, not ELF on one side)
};

struct FileChange {
  enum class Kind { added, removed, changed };
  Kind kind = Kind::changed;
  std::string path;
  std::optional<LayerFile> before, after;
  std::string before_digest, after_digest;  // sha256 hex of the content (files, and hard links' targets)
  std::vector<std::string> changes;         // what differs: type, size, mode, owner, link, content, mtime
  std::optional<ElfChange> elf;
  std::string text_diff;  // unified, at most k_max_diff_lines lines
  bool text_diff_truncated = false;
  std::string note;
};

struct PackageChange {
  std::string name;
  std::string before, after;  // versions; empty where the package is missing
};

struct LayerStat {
  std::size_t added = 0, removed = 0, changed = 0, same = 0;
  std::int64_t bytes = 0;  // of the files added and changed (after) and removed (before)
};

struct LayerChange {
  enum class Kind { same, changed, added, removed };
  Kind kind = Kind::same;
  std::string key;  // what the layers were matched by: "deb:libc6:amd64", "files", "layer 1"
  std::optional<Descriptor> before, after;
  std::string before_origin, after_origin;  // dev.arec.layer.origin, empty for a layer without one
  std::vector<PackageChange> packages;      // from the origin, or from the layer's dpkg status
  std::optional<LayerStat> stat;            // changed layers, whose files were compared
  std::vector<FileChange> files;            // the first of the changed files (k_max_files_listed in all)
  std::size_t files_left_out = 0;           // changed files counted in `stat` and not listed
  std::string note;                         // why its files were not compared, when they were not
};

struct Hint {
  std::string cause;  // "build-path", "rpath", "timestamp", "compiler"
  std::string path;   // the file it was seen in, or empty (the config)
  std::string text;
};

struct ImageDiff {
  DiffSide before, after;
  std::vector<FieldChange> record;  // revision, target, config, base, platform
  std::vector<FieldChange> config;  // created, Entrypoint, Cmd, Env, User, WorkingDir, Labels, ...
  std::vector<LayerChange> layers;
  std::vector<Hint> hints;

  bool differs() const;
};

// How deep a changed file is looked into: its header and digest only, or its ELF details and text too.
enum class FileDetail { files_only, full };

struct DiffOptions {
  FileDetail detail = FileDetail::full;
  // Globs of image paths (fnmatch, '*' matching '/' too): of a changed layer, only the files one of them
  // matches are compared, counted and listed. Empty: every file.
  std::vector<std::string> paths;
};

// Compares `before` with `after`. Errors name the blob or file that could not be read.
Result<ImageDiff> diff_images(const DiffSide& before, const DiffSide& after, const DiffOptions& options);

// The report as JSON (schema version 1, docs/diff.md), and as text: in full, or as the counts and bytes
// of each layer (ReportStyle::stat).
inline constexpr int k_diff_schema_version = 1;
nlohmann::json to_json(const ImageDiff& diff);
enum class ReportStyle { full, stat };
std::string text_report(const ImageDiff& diff, ReportStyle style);

}  // namespace arec
