#include "registry-client/move.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <optional>
#include <set>
#include <string_view>
#include <vector>

#include "util/fs.hpp"
#include "registry-client/catalog.hpp"
#include "registry-client/pull.hpp"
#include "registry-client/verify.hpp"

namespace arec {

namespace {

// The lines of a text, without their newlines.
std::vector<std::string_view> lines_of(std::string_view text) {
  std::vector<std::string_view> out;
  while (!text.empty()) {
    const auto end = text.find('\n');
    out.push_back(text.substr(0, end));
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  return out;
}

struct DiffLine {
  char kind;  // ' ' kept, '-' removed, '+' added
  std::string_view text;
};

// A shortest edit from `a` to `b` by longest common subsequence; settings files are small.
std::vector<DiffLine> diff_lines(const std::vector<std::string_view>& a, const std::vector<std::string_view>& b) {
  const std::size_t n = a.size();
  const std::size_t m = b.size();
  // common[i][j]: length of the longest common subsequence of a[i..] and b[j..]
  std::vector<std::vector<std::size_t>> common(n + 1, std::vector<std::size_t>(m + 1, 0));
  for (std::size_t i = n; i-- > 0;) {
    for (std::size_t j = m; j-- > 0;) {
      common[i][j] = a[i] == b[j] ? common[i + 1][j + 1] + 1 : std::max(common[i + 1][j], common[i][j + 1]);
    }
  }
  std::vector<DiffLine> out;
  std::size_t i = 0;
  std::size_t j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[i] == b[j]) {
      out.push_back({' ', a[i++]});
      ++j;
    } else if (i < n && (j == m || common[i + 1][j] >= common[i][j + 1])) {
      out.push_back({'-', a[i++]});  // removals before additions within a change, as diff prints them
    } else {
      out.push_back({'+', b[j++]});
    }
  }
  return out;
}

// Where things are in a JSON text, so that a move edits the values it changes and keeps every other
// byte of the file (its layout, its order, its numbers as written). The text has parsed as JSON already.
class JsonText {
 public:
  explicit JsonText(std::string_view text) : m_text(text) {}

  // The span [begin, end) of the value at `path` (object keys from the top), if there is one.
  std::optional<std::pair<std::size_t, std::size_t>> find(std::initializer_list<std::string_view> path) const {
    std::size_t at = skip_space(0);
    for (const auto key : path) {
      auto member = find_member(at, key);
      if (!member) return std::nullopt;
      at = *member;
    }
    return std::pair{at, skip_value(at)};
  }

  // The text with a member `"key": value` added at the end of the object that starts at `object`, laid
  // out as the members before it are: on a line of its own with their indentation, or inline.
  std::string with_member(std::size_t object, std::string_view key, std::string_view value) const {
    const std::size_t end = skip_value(object) - 1;  // the closing brace
    std::size_t last = end;                           // just past the last member's value
    while (last > object + 1 && is_space(m_text[last - 1])) --last;
    const std::string member = "\"" + std::string(key) + "\": " + std::string(value);
    std::string out(m_text.substr(0, last));
    if (last == object + 1) {  // an empty object
      out += member;
    } else {
      // The indentation of the line the last member starts on, when members are one a line.
      std::size_t line = m_text.rfind('\n', last - 1);
      const std::size_t first_newline = m_text.find('\n', object);
      if (line != std::string_view::npos && line > object && first_newline < end) {
        std::size_t indent = line + 1;
        while (indent < m_text.size() && (m_text[indent] == ' ' || m_text[indent] == '\t')) ++indent;
        out += ",\n" + std::string(m_text.substr(line + 1, indent - line - 1)) + member;
      } else {
        out += ", " + member;
      }
    }
    out += m_text.substr(last);
    return out;
  }

 private:
  static bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
  std::size_t skip_space(std::size_t at) const {
    while (at < m_text.size() && is_space(m_text[at])) ++at;
    return at;
  }
  std::size_t skip_string(std::size_t at) const {  // at the opening quote; returns past the closing one
    for (++at; at < m_text.size() && m_text[at] != '"'; ++at) {
      if (m_text[at] == '\\') ++at;
    }
    return std::min(at + 1, m_text.size());
  }
  std::size_t skip_value(std::size_t at) const {  // iterative: nesting costs no stack
    std::size_t depth = 0;
    do {
      at = skip_space(at);
      if (at >= m_text.size()) return at;
      const char c = m_text[at];
      if (c == '"') {
        at = skip_string(at);
      } else if (c == '{' || c == '[') {
        ++depth;
        ++at;
      } else if (c == '}' || c == ']') {
        if (depth > 0) --depth;
        ++at;
      } else if (c == ',' || c == ':') {
        ++at;
      } else {
        while (at < m_text.size() && !is_space(m_text[at]) && m_text[at] != ',' && m_text[at] != '}' && m_text[at] != ']') ++at;
      }
    } while (depth > 0);
    return at;
  }
  // The start of the value of `key` in the object at `object`.
  std::optional<std::size_t> find_member(std::size_t object, std::string_view key) const {
    if (object >= m_text.size() || m_text[object] != '{') return std::nullopt;
    std::size_t at = skip_space(object + 1);
    while (at < m_text.size() && m_text[at] == '"') {
      const std::size_t key_end = skip_string(at);
      const auto name = read_json<nlohmann::json>(m_text.substr(at, key_end - at));
      at = skip_space(skip_space(key_end) + 1);  // past the colon
      if (name && name->is_string() && name->get_ref<const std::string&>() == key) return at;
      at = skip_space(skip_value(at));
      if (at < m_text.size() && m_text[at] == ',') at = skip_space(at + 1);
    }
    return std::nullopt;
  }

  std::string_view m_text;
};

// `text` with the registry held by `node` on `port`: the values that change are rewritten where they
// are, a member that is missing is added beside its siblings, and every other byte stays.
std::optional<std::string> moved_text(std::string_view text, const std::string& node, std::uint16_t port) {
  std::string out(text);
  const auto replace = [&out](std::initializer_list<std::string_view> path, std::string_view value) {
    const auto span = JsonText(out).find(path);
    if (!span) return false;
    out.replace(span->first, span->second - span->first, value);
    return true;
  };
  if (!replace({"services", "registry"}, nlohmann::json(node).dump())) {
    const auto services = JsonText(out).find({"services"});
    if (!services) return std::nullopt;
    out = JsonText(out).with_member(services->first, "registry", nlohmann::json(node).dump());
  }
  const std::string port_text = std::to_string(port);
  if (replace({"nodes", node, "ports", "registry"}, port_text)) return out;
  if (const auto ports = JsonText(out).find({"nodes", node, "ports"})) {
    return JsonText(out).with_member(ports->first, "registry", port_text);
  }
  if (const auto entry = JsonText(out).find({"nodes", node})) {
    return JsonText(out).with_member(entry->first, "ports", "{\"registry\": " + port_text + "}");
  }
  return std::nullopt;
}

// The tag a referrer is kept under where a registry has no referrers API: arec pushes it itself, with
// the record it refers to.
bool is_referrer_tag(std::string_view tag) { return tag.starts_with("sha256-") && tag.size() == 7 + 64; }

// Every tag but `latest` of a recorded repository at the old registry ("1.0"), put at the new one on the
// record it names there. A tag on an image that is no record of the store (pushed by hand) is said and
// left. Returns how many tags were copied.
Result<int> copy_other_tags(Store& store, const MovePlan& plan, const TransferOptions& options) {
  std::set<std::string> recorded;
  for (const auto& r : plan.records) recorded.insert(r.repository());
  auto catalog = read_catalog(plan.from, options);
  if (!catalog) return fail(catalog.error());
  std::optional<std::vector<Record>> history;
  int copied = 0;
  for (const auto& entry : *catalog) {
    if (!recorded.contains(entry.repository)) continue;
    for (const auto& tag : entry.tags) {
      if (tag == "latest" || is_referrer_tag(tag)) continue;
      auto pulled = pull_image(store, Reference{plan.from.host, entry.repository, tag, ""}, plan.from, options);
      if (!pulled) return fail(pulled.error());
      if (!history) {
        auto all = store.records(History::all);
        if (!all) return fail(all.error());
        history = std::move(*all);
      }
      const auto named = std::ranges::find_if(*history, [&](const Record& r) {
        return r.repository() == entry.repository && r.manifest.digest == pulled->image.digest;
      });
      if (named == history->end()) {
        spdlog::warn("{}/{}:{} names {}, which is no record of the store: the tag is not copied", plan.from.host,
                     entry.repository, tag, pulled->image.digest.str());
        continue;
      }
      auto pushed = push_records(store, {*named}, PushTags{LatestTag::no, {tag}}, plan.to, options);
      if (!pushed) return fail(pushed.error());
      ++copied;
    }
  }
  return copied;
}

}  // namespace

std::string settings_diff(const MovePlan& plan, std::string_view name) {
  constexpr std::size_t k_context = 3;
  const auto lines = diff_lines(lines_of(plan.settings_before), lines_of(plan.settings_after));
  std::string out = "--- " + std::string(name) + "\n+++ " + std::string(name) + " (after the move)\n";
  std::size_t next = 0;  // the first line not yet shown
  std::size_t old_line = 1;
  std::size_t new_line = 1;
  for (std::size_t pos = 0; pos < lines.size();) {
    if (lines[pos].kind == ' ') {
      ++pos;
      continue;
    }
    // A hunk: from k_context lines before this change to k_context lines after the last change that
    // lies within 2 * k_context kept lines of the one before it.
    const std::size_t begin = pos > next + k_context ? pos - k_context : next;
    std::size_t end = pos;
    for (std::size_t kept = 0, i = pos; i < lines.size() && kept <= 2 * k_context; ++i) {
      if (lines[i].kind == ' ') {
        ++kept;
      } else {
        kept = 0;
        end = i;
      }
    }
    end = std::min(lines.size(), end + 1 + k_context);
    for (std::size_t i = next; i < begin; ++i) {
      if (lines[i].kind != '+') ++old_line;
      if (lines[i].kind != '-') ++new_line;
    }
    std::size_t old_count = 0;
    std::size_t new_count = 0;
    std::string body;
    for (std::size_t i = begin; i < end; ++i) {
      if (lines[i].kind != '+') ++old_count;
      if (lines[i].kind != '-') ++new_count;
      body.push_back(lines[i].kind);
      body.append(lines[i].text).push_back('\n');
    }
    // An empty side is numbered by the line before it, as diff -u does.
    out += "@@ -" + std::to_string(old_count == 0 ? old_line - 1 : old_line) + "," + std::to_string(old_count) + " +" +
           std::to_string(new_count == 0 ? new_line - 1 : new_line) + "," + std::to_string(new_count) + " @@\n" + body;
    old_line += old_count;
    new_line += new_count;
    next = pos = end;
  }
  return out;
}

Result<MovePlan> plan_move(const NodeSettings& settings, std::string_view node, std::optional<std::int64_t> port,
                           std::vector<Record> records, const ClientSettings& client) {
  const auto target = settings.nodes.find(std::string(node));
  if (target == settings.nodes.end()) {
    std::string known;
    for (const auto& [name, n] : settings.nodes) known += (known.empty() ? "" : ", ") + name;
    return fail_input("--to \"" + std::string(node) + "\": no such node in node settings " + settings.source + " (nodes: " + known + ")");
  }
  std::uint16_t new_port = 0;
  if (port) {
    if (*port < 1 || *port > 65535) return fail_input("--port " + std::to_string(*port) + ": not a port (1-65535)");
    new_port = static_cast<std::uint16_t>(*port);
  } else if (const auto given = target->second.ports.find("registry"); given != target->second.ports.end()) {
    new_port = given->second;
  } else {
    return fail_input("--to " + std::string(node) + ": that node was given no registry port; say which with --port");
  }
  MovePlan plan;
  plan.to_node = std::string(node);
  plan.from_node = settings.services.contains("registry") ? settings.services.at("registry") : "";
  auto from = registry_from_settings(settings, client);
  if (!from) return fail(std::move(from.error()).context("finding the registry to move"));
  plan.from = *from;
  plan.moved = settings;
  plan.moved.services["registry"] = plan.to_node;
  plan.moved.nodes[plan.to_node].ports["registry"] = new_port;
  auto to = registry_from_settings(plan.moved, client);
  if (!to) return fail(std::move(to.error()).context("finding the registry's new place"));
  plan.to = *to;
  if (plan.to.host == plan.from.host) {
    if (plan.to_node == plan.from_node) {
      plan.already_there = true;
      return plan;
    }
    return fail_input("--to " + plan.to_node + ": the registry is already at " + plan.from.host + " (node " +
                      plan.from_node + "): nothing to move");
  }
  // The file's own text: the diff shows its lines, and the move changes only the values that move.
  auto text = fs::read_file(settings.source, k_max_settings_size);
  if (!text) return fail(std::move(text.error()).context("reading node settings"));
  auto document = read_json<nlohmann::ordered_json>(*text);
  if (!document || !document->is_object()) return fail_input("node settings " + settings.source + ": changed while read");
  auto after = moved_text(*text, plan.to_node, new_port);
  if (!after || !read_json<nlohmann::ordered_json>(*after)) {
    return fail_input("node settings " + settings.source + ": cannot find services.registry and nodes." + plan.to_node + " to change");
  }
  plan.settings_before = std::move(*text);
  plan.settings_after = std::move(*after);
  plan.records = std::move(records);
  return plan;
}

Result<MoveOutcome> copy_to_new_registry(Store& store, const MovePlan& plan, const TransferOptions& options) {
  MoveOutcome outcome;
  // An image index goes whole: each platform's record is fetched where the store lacks it, like the rest.
  auto records = store.with_platforms(plan.records);
  if (!records) return fail(records.error());
  for (const auto& record : *records) {
    if (store.holds_image(record.manifest)) continue;
    spdlog::info("{}: the store lacks some of its blobs; fetching it from {}", record.identity(), plan.from.host);
    Reference source{plan.from.host, record.repository(), "", record.manifest.digest.str()};
    auto pulled = pull_image(store, source, plan.from, options);
    if (!pulled) return fail(pulled.error());
    ++outcome.pulled;
  }
  // The latest record of each module/name keeps its `latest` tag at the new registry.
  auto pushed = push_records(store, plan.records, PushTags{LatestTag::yes, {}}, plan.to, options);
  if (!pushed) return fail(pushed.error());
  outcome.pushed = std::move(*pushed);
  auto tags = copy_other_tags(store, plan, options);
  if (!tags) return fail(tags.error());
  outcome.tags = *tags;
  auto verified = verify_records(plan.records, plan.to, options, &store);
  if (!verified) return fail(verified.error());
  for (const auto& item : *verified) {
    if (item.state != VerifyState::present) {
      return fail(Error::registry("moving the registry: " + item.record.identity() + " is " +
                                  std::string(verify_state_name(item.state)) + " at " + plan.to.host + " after copying"));
    }
  }
  outcome.verified = verified->size();
  return outcome;
}

Status write_moved_settings(const std::string& path, const MovePlan& plan) {
  const fs::Path file(path);
  const fs::Path dir = fs::directory_of(file);
  auto old = fs::read_file(file, k_max_settings_size);
  if (!old) return fail(std::move(old.error()).context("keeping the old node settings"));
  if (auto s = fs::write_file_atomic(dir, fs::Path(path + ".bak"), *old); !s) return s;
  return fs::write_file_atomic(dir, file, plan.settings_after);
}

}  // namespace arec
