#include "cli/record_stamp.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <set>

#include "cli/signing.hpp"

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

namespace {
constexpr std::string_view k_signed = "signed ";
constexpr std::size_t k_max_stamp = 1024;

// The fingerprint as a person compares it: its first 16 digits, as `records` shows a signer.
std::string short_fingerprint(std::string_view fingerprint) { return std::string(fingerprint.substr(0, 16)); }
}  // namespace

Result<SigningStamp> write_signing_stamp(const fs::Path& file, const std::optional<std::string>& fingerprint) {
  const std::string now = fingerprint ? std::string(k_signed) + *fingerprint + "\n" : "unsigned\n";
  SigningStamp out;
  std::error_code ec;
  if (std::filesystem::exists(std::filesystem::symlink_status(file, ec))) {
    auto text = fs::read_file(file, k_max_stamp);
    if (!text) return fail(std::move(text.error()).context("reading the build's signing stamp"));
    if (*text == now) return out;
    // Anything else (an older or damaged stamp) is read as what it says, if it says it.
    if (text->starts_with(k_signed)) {
      out.before = text->substr(k_signed.size());
      while (!out.before.empty() && (out.before.back() == '\n' || out.before.back() == '\r')) out.before.pop_back();
    }
    if (!fingerprint) {
      out.change = out.before.empty() ? KeyChange::first : KeyChange::gone;
    } else {
      out.change = out.before.empty() ? KeyChange::set : KeyChange::changed;
    }
  } else {
    out.change = KeyChange::first;
  }
  if (auto s = fs::write_file_atomic(fs::directory_of(file), file, now); !s) return fail(s.error());
  return out;
}

void add_signing_stamp(CLI::App& app, Globals& globals, Action& action) {
  struct Options {
    std::string file;
    std::string sign_key;
  };
  auto o = std::make_shared<Options>();
  auto* cmd =
      app.add_subcommand("__signing-stamp", "Note the signing key of a build (the CMake module's step)")->group("");
  cmd->add_option("file", o->file)->required();
  add_sign_key_option(*cmd, o->sign_key);
  cmd->callback([&globals, &action, o] {
    action = [&globals, o]() -> Result<int> {
      // A key that does not load fails the build here, before anything is recorded with or without it.
      auto key = signing_key(globals, o->sign_key);
      if (!key) return fail(key.error());
      const auto fingerprint = *key ? std::optional((*key)->fingerprint()) : std::nullopt;
      auto stamp = write_signing_stamp(fs::Path(o->file), fingerprint);
      if (!stamp) return fail(stamp.error());
      switch (stamp->change) {
        case KeyChange::same:
        case KeyChange::first: break;
        case KeyChange::set:
          spdlog::info("signing with the key {}: the records of this build are recorded again and signed",
                       short_fingerprint(*fingerprint));
          break;
        case KeyChange::changed:
          spdlog::info(
              "the signing key is now {} (was {}): the records of this build are recorded again and signed "
              "with it",
              short_fingerprint(*fingerprint), short_fingerprint(stamp->before));
          break;
        case KeyChange::gone:
          // Not an error (a developer's build has no key), but never silent: a cached CI build that lost
          // its secret would otherwise record unsigned without a word.
          spdlog::warn(
              "this build signed with the key {} before, and now no signing key is set (AREC_SIGNING_KEY "
              "or SIGN_KEY): what it records from now on is unsigned",
              short_fingerprint(stamp->before));
          break;
      }
      return 0;
    };
  });
}

}  // namespace arec::cli
