#include "cli/record_stamp.hpp"

#include <algorithm>
#include <filesystem>
#include <set>

namespace arec::cli {

std::string make_escaped(const fs::Path& path) {
  std::string out;
  for (const char c : std::filesystem::absolute(path).lexically_normal().string()) {
    if (c == ' ' || c == '#' || c == '\\') out.push_back('\\');
    if (c == '$') out.push_back('$');
    out.push_back(c);
  }
  return out;
}

std::vector<fs::Path> directories_under(const std::vector<fs::Path>& roots) {
  std::vector<fs::Path> out;
  for (const auto& root : roots) {
    std::error_code ec;
    if (!std::filesystem::is_directory(std::filesystem::symlink_status(root, ec))) continue;
    out.push_back(root);
    for (std::filesystem::recursive_directory_iterator it(root, std::filesystem::directory_options::none, ec), end;
         !ec && it != end; it.increment(ec)) {
      if (it->is_directory(ec) && !it->is_symlink(ec)) out.push_back(it->path());
    }
  }
  return out;
}

std::vector<std::string> moving_input_warnings(const RecordInputs& inputs, std::filesystem::file_time_type started,
                                               const std::string& record) {
  std::vector<std::string> warnings;
  for (const auto* paths : {&inputs.files, &inputs.directories}) {
    for (const auto& path : *paths) {
      std::error_code ec;
      const auto modified = std::filesystem::last_write_time(path, ec);
      if (ec || modified < started) continue;
      warnings.push_back(path.string() + " changed while " + record +
                         " was being recorded: the build writes it at the same time, so the record may hold what it "
                         "held before, and the build cannot see that it must record again; make the recorded target "
                         "depend on what writes it (add_dependencies)");
    }
  }
  return warnings;
}

Status write_record_stamp(const fs::Path& stamp, const RecordInputs& inputs) {
  std::set<std::string> named;
  std::string rule = make_escaped(stamp) + ":";
  for (const auto* paths : {&inputs.files, &inputs.directories}) {
    for (const auto& path : *paths) {
      auto escaped = make_escaped(path);
      if (named.insert(escaped).second) rule += " \\\n  " + escaped;
    }
  }
  rule += "\n";
  const fs::Path depfile(stamp.string() + ".d");
  if (auto s = fs::write_file_atomic(fs::directory_of(depfile), depfile, rule); !s) return s;
  // The stamp's content does not matter, its time does: rewritten, it is newer than every input.
  return fs::write_file_atomic(fs::directory_of(stamp), stamp, "");
}

}  // namespace arec::cli
