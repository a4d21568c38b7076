#include "addressing/compose.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include <nlohmann/json.hpp>

#include "addressing/reference.hpp"
#include "addressing/text_position.hpp"
#include "oci/digest.hpp"
#include "util/ascii.hpp"

namespace arec {

namespace {

using Kind = Request::Kind;

constexpr std::string_view k_image = "image";
constexpr std::string_view k_endpoint = "endpoint";
constexpr std::string_view k_address = "address";
constexpr std::string_view k_port = "port";
// The kind, of those arec knows, at most two edits from `written` ("imag" -> "image"); empty when none is.
std::string_view nearest_kind(std::string_view written) {
  std::string_view best;
  std::size_t best_distance = 3;
  for (const auto kind : {k_image, k_endpoint, k_address, k_port}) {
    // Levenshtein distance, one row at a time; kinds and what is written as one are short.
    std::vector<std::size_t> row(kind.size() + 1);
    for (std::size_t j = 0; j <= kind.size(); ++j) row[j] = j;
    for (std::size_t i = 1; i <= written.size(); ++i) {
      std::size_t diagonal = row[0];
      row[0] = i;
      for (std::size_t j = 1; j <= kind.size(); ++j) {
        const std::size_t above = row[j];
        row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (written[i - 1] == kind[j - 1] ? 0 : 1)});
        diagonal = above;
      }
    }
    if (row[kind.size()] < best_distance) {
      best_distance = row[kind.size()];
      best = kind;
    }
  }
  return best;
}

// Messages quote at most this much of a request that could not be read (its extent is a guess).
constexpr std::size_t k_max_quoted = 80;
// Messages list at most this many problems, then say how many more there were.
constexpr std::size_t k_max_listed = 20;

using ascii::is_alnum;
using ascii::is_lower_alnum;
using ascii::is_word;
bool is_service_char(char c) { return is_lower_alnum(c) || c == '-'; }
bool is_request_path_char(char c) { return is_lower_alnum(c) || c == '.' || c == '_' || c == '-'; }
bool is_tag_char(char c) { return is_word(c) || c == '.' || c == '-'; }
bool is_kind_char(char c) { return is_alnum(c) || c == '_' || c == '-'; }
bool is_digest_char(char c) { return is_alnum(c) || c == '=' || c == '_' || c == '-'; }
// Where a word of prose or markup ends: the extent quoted for a request that could not be read.
bool ends_word(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '"' || c == '\'' || c == '`' || c == ',' || c == ';' ||
         c == '(' || c == ')' || c == '[' || c == ']' || c == '{' || c == '}' || c == '<' || c == '>';
}

// The length of the longest run of characters satisfying `pred` at `from`.
template <typename Pred>
std::size_t run(std::string_view text, std::size_t from, Pred pred) {
  std::size_t end = from;
  while (end < text.size() && pred(text[end])) ++end;
  return end - from;
}

// The length of the longest repository path component at `from` (0 when there is none). A component
// cannot be longer than a whole path, which bounds the search.
std::size_t path_component_at(std::string_view text, std::size_t from) {
  auto length = std::min(run(text, from, is_request_path_char), k_max_path_length);
  while (length > 0 && !is_path_component(text.substr(from, length))) --length;
  return length;
}

// Looked for no further than a message quotes (one byte more, so that quoted() knows to add "..."):
// the scanner looks into an unreadable request again after its scheme, so a search to the end of a long
// word for each of the schemes in it would make a text of nothing but "arec://" quadratic to scan.
std::size_t word_end(std::string_view text, std::size_t from) {
  const std::size_t limit = std::min(text.size(), from + k_max_quoted + 1);
  while (from < limit && !ends_word(text[from])) ++from;
  return from;
}

Request malformed(Request r, std::string_view text, std::string problem) {
  r.kind = Kind::malformed;
  r.length = word_end(text, r.offset) - r.offset;
  r.problem = std::move(problem);
  return r;
}

// arec://image/<module>/<name>[:<tag>][@<digest>], from `at` (just after "image/").
Request parse_image(Request r, std::string_view text, std::size_t at) {
  const std::string_view expected = "expected arec://image/MODULE/NAME[:TAG][@sha256:HEX][?config=CONFIG]";
  const auto module = path_component_at(text, at);
  if (module == 0 || at + module >= text.size() || text[at + module] != '/')
    return malformed(r, text, std::string(expected));
  const auto name_at = at + module + 1;
  const auto name = path_component_at(text, name_at);
  if (name == 0) return malformed(r, text, std::string(expected));
  r.module = text.substr(at, module);
  r.name = text.substr(name_at, name);
  auto pos = name_at + name;
  if (pos + 1 < text.size() && text[pos] == '/' && is_lower_alnum(text[pos + 1])) {
    // Records are MODULE/NAME (rule 2); a third segment is a mistake, not the end of the request.
    return malformed(r, text, "an image request names MODULE/NAME, two path segments");
  }
  if (pos + 1 < text.size() && text[pos] == ':' && is_word(text[pos + 1])) {
    const auto length = run(text, pos + 1, is_tag_char);
    const auto tag = text.substr(pos + 1, length);
    if (!is_tag(tag))
      return malformed(r, text, "tag \"" + std::string(tag) + "\" is longer than " + std::to_string(k_max_tag_length));
    r.tag = tag;
    pos += 1 + length;
  }
  // "@" starts a digest only when an algorithm and ':' follow; otherwise the request ends before it.
  if (pos < text.size() && text[pos] == '@') {
    const auto algorithm = run(text, pos + 1, is_lower_alnum);
    const auto colon = pos + 1 + algorithm;
    if (algorithm > 0 && colon < text.size() && text[colon] == ':') {
      const auto end = colon + 1 + run(text, colon + 1, is_digest_char);
      const auto digest = text.substr(pos + 1, end - pos - 1);
      // Digest::parse takes only the canonical spelling, so the text is the digest.
      if (auto parsed = Digest::parse(digest); !parsed) return malformed(r, text, parsed.error().message);
      r.digest = digest;
      pos = end;
    }
  }
  // "?config=" names the build configuration; any other "?" ends the request before it, as before.
  constexpr std::string_view k_config_query = "?config=";
  if (text.substr(pos).starts_with(k_config_query)) {
    const auto at_name = pos + k_config_query.size();
    const auto config = text.substr(at_name, run(text, at_name, is_word));
    if (!is_config_name(config)) {
      return malformed(r, text, "expected a configuration (1 to 64 of A-Z, a-z, 0-9 and _) after ?config=");
    }
    r.config = config;
    pos = at_name + config.size();
  }
  r.kind = Kind::image;
  r.length = pos - r.offset;
  return r;
}

// arec://<kind>/<service>, from `at` (just after "<kind>/").
Request parse_service(Request r, Kind kind, std::string_view text, std::size_t at) {
  const auto service = text.substr(at, run(text, at, is_service_char));
  if (!is_service_name(service))
    return malformed(r, text, "expected a service name ([a-z0-9][a-z0-9-]*) after the kind");
  r.kind = kind;
  r.service = service;
  r.length = at + service.size() - r.offset;
  return r;
}

Request parse_request(std::string_view text, std::size_t offset) {
  Request r;
  r.offset = offset;
  const auto kind_at = offset + k_request_scheme.size();
  const auto kind = text.substr(kind_at, run(text, kind_at, is_kind_char));
  const auto after = kind_at + kind.size();
  const bool slash = after < text.size() && text[after] == '/';
  std::optional<Kind> known;
  if (kind == k_image) known = Kind::image;
  if (kind == k_endpoint) known = Kind::endpoint;
  if (kind == k_address) known = Kind::address;
  if (kind == k_port) known = Kind::port;
  if (!known) {
    r.kind = Kind::unknown;
    r.written = kind;
    r.length = word_end(text, offset) - offset;
    return r;
  }
  if (!slash) return malformed(r, text, "expected '/' after arec://" + std::string(kind));
  if (*known == Kind::image) return parse_image(r, text, after + 1);
  return parse_service(r, *known, text, after + 1);
}

// A request as messages show it: whole when it was read, at most a line's worth when it was not.
std::string quoted(const Request& r, std::string_view text) {
  const auto shown = r.text(text);
  const bool read = r.kind != Kind::unknown && r.kind != Kind::malformed;
  if (read || shown.size() <= k_max_quoted) return std::string(shown);
  return std::string(shown.substr(0, k_max_quoted)) + "...";
}

// The records compose fills image requests from, read once.
// The histories of the module/names the requests name, each read once.
class RecordBook {
 public:
  explicit RecordBook(const HistoryReader& read) : m_read(read) {}
  const Result<std::vector<Record>>& history(std::string_view module, std::string_view name) {
    const std::string repository = std::string(module) + "/" + std::string(name);
    auto found = m_histories.find(repository);
    if (found == m_histories.end()) {
      auto history = m_read(module, name);
      if (!history) history = fail(std::move(history.error()).context("reading the records"));
      found = m_histories.emplace(repository, std::move(history)).first;
    }
    return found->second;
  }
  bool read_any() const { return !m_histories.empty(); }

 private:
  const HistoryReader& m_read;
  std::unordered_map<std::string, Result<std::vector<Record>>> m_histories;
};

// What a request composes to.
struct Filled {
  std::string text;
  std::optional<std::uint16_t> port;  // port requests: the port, or none when not given
};

// Fills requests. Resolves each service once, reads the store once, and keeps every problem and
// warning with the line it was found on.
class Filler {
 public:
  Filler(const ComposeOptions& options, const NodeSettings& settings, const HistoryReader& read_history)
      : m_options(options), m_settings(settings), m_book(read_history) {}

  // The request's value, or nothing when it is left as it is (unknown kinds) or cannot be filled
  // (the problem is kept). `text` is what the request was found in; `line` 0 when not known.
  std::optional<Filled> fill(const Request& r, std::string_view text, std::size_t line) {
    switch (r.kind) {
      case Kind::unknown: {
        const auto what = quoted(r, text) + ": unknown request kind \"" + std::string(r.written) + "\"";
        if (m_options.strictness == Strictness::strict) {
          problem(line, what + " (--strict)");
        } else {
          // A kind near one arec knows is a typo more likely than a newer template: the request as it
          // would be with that kind.
          const auto near = nearest_kind(r.written);
          const std::string prefix = "arec://" + std::string(r.written);
          auto written = quoted(r, text);
          const std::string guess =
              near.empty() || !written.starts_with(prefix)
                  ? std::string("is the template newer than this arec?")
                  : "did you mean arec://" + std::string(near) + written.substr(prefix.size()) + "?";
          m_warnings.push_back(at(line) + what + "; left as it is (" + guess + ")");
        }
        return std::nullopt;
      }
      case Kind::malformed: problem(line, quoted(r, text) + ": " + r.problem); return std::nullopt;
      case Kind::port: {
        const auto& port = given_port_of(r.service);
        if (!port) return problem(line, quoted(r, text) + ": " + port.error().message);
        ++m_filled;
        return Filled{*port ? std::to_string(**port) : std::string(), *port};
      }
      case Kind::address:
      case Kind::endpoint: {
        const auto& resolution = resolution_of(r.service);
        if (!resolution) return problem(line, quoted(r, text) + ": " + resolution.error().message);
        if (r.kind == Kind::address) {
          ++m_filled;
          return Filled{resolution->address, std::nullopt};
        }
        auto endpoint = resolution->endpoint();
        if (!endpoint) return problem(line, quoted(r, text) + ": " + endpoint.error().message);
        ++m_filled;
        return Filled{std::move(*endpoint), std::nullopt};
      }
      case Kind::image: return fill_image(r, text, line);
    }
    return std::nullopt;
  }

  // `text` with every request filled in place, byte for byte elsewhere. `line_of(request)` says
  // which line of the template a request is on.
  template <typename LineOf>
  std::string fill_text(std::string_view text, LineOf line_of) {
    std::string out;
    out.reserve(text.size() + text.size() / 4);
    std::size_t copied = 0;
    std::vector<std::string_view> left;  // the kinds of the unknown requests, left as they are
    RequestScanner scanner(text);
    while (const auto r = scanner.next()) {
      const auto filled = fill(*r, text, line_of(*r));
      if (!filled) {
        if (r->kind == Kind::unknown) left.push_back(r->written);
        continue;
      }
      out.append(text.substr(copied, r->offset - copied));
      out.append(filled->text);
      copied = r->offset + r->length;
    }
    out.append(text.substr(copied));
    check_only_left_as_is(out, left);
    return out;
  }

  bool reads_records() const { return m_book.read_any(); }
  std::size_t filled() const { return m_filled; }
  std::vector<std::string> take_warnings() { return std::move(m_warnings); }
  std::vector<std::string> take_notes() { return std::move(m_notes); }

  Status status() const {
    if (m_problems.empty()) return {};
    if (m_problems.size() == 1) return fail(Error{m_kind, m_problems.front()});
    std::string message = std::to_string(m_problems.size()) + " requests cannot be filled:";
    // One problem a line: what a problem quotes from the template is escaped, so that only these
    // newlines start a line.
    for (std::size_t i = 0; i < std::min(m_problems.size(), k_max_listed); ++i)
      message += "\n  " + printable(m_problems[i]);
    if (m_problems.size() > k_max_listed)
      message += "\n  ... and " + std::to_string(m_problems.size() - k_max_listed) + " more";
    return fail(Error{m_kind, message});
  }

 private:
  std::string at(std::size_t line) const {
    return line == 0 ? m_options.source + ": " : m_options.source + ":" + std::to_string(line) + ": ";
  }

  std::nullopt_t problem(std::size_t line, const std::string& what) {
    m_problems.push_back(at(line) + what);
    return std::nullopt;
  }

  const Result<Resolution>& resolution_of(std::string_view service) {
    auto found = m_resolutions.find(service);
    if (found == m_resolutions.end()) found = m_resolutions.emplace(service, resolve(m_settings, service)).first;
    return found->second;
  }

  const Result<std::optional<std::uint16_t>>& given_port_of(std::string_view service) {
    auto found = m_ports.find(service);
    if (found == m_ports.end()) found = m_ports.emplace(service, given_port(m_settings, service)).first;
    return found->second;
  }

  // A fill never holds a scheme, but one can join the text around it into a request the template did
  // not have: an empty port after "arec://po" and before "rt/registry", a host named "arec" before
  // "://port/db". The filled text is read again: it may hold only the requests left as they were, of
  // the kinds in `left`, in order.
  void check_only_left_as_is(std::string_view out, const std::vector<std::string_view>& left) {
    if (!m_problems.empty()) return;  // requests that could not be filled are still in `out`
    const auto found = scan_requests(out);
    for (std::size_t i = 0; i < found.size(); ++i) {
      const auto& r = found[i];
      if (r.kind == Kind::unknown && i < left.size() && r.written == left[i]) continue;
      // Fills hold no newline, so in a text template a line of the output is the same line of the input.
      problem(m_options.format == TemplateFormat::text ? r.line : 0,
              "filling the requests made a new request \"" + quoted(r, out) +
                  "\" from the text around them; separate the requests from that text with a space or quote");
      return;
    }
  }

  std::optional<Filled> fill_image(const Request& r, std::string_view text, std::size_t line) {
    const auto& history = m_book.history(r.module, r.name);
    if (!history) return problem(line, quoted(r, text) + ": " + history.error().message);
    const std::string repository = std::string(r.module) + "/" + std::string(r.name);
    const std::string in_store = m_options.store.empty() ? "the store" : "store " + m_options.store;
    std::string digest(r.digest);
    const Record* filled = nullptr;  // the record whose digest fills the request
    // The configuration meant: the request's own, else the one compose was given (choose_config).
    ConfigChoice choice = m_options.configs;
    if (!r.config.empty()) choice.asked = std::string(r.config);
    if (digest.empty()) {
      if (history->empty()) {
        return problem(line, quoted(r, text) + ": no record of " + repository + " in " + in_store +
                                 " (record it with arec record --module " + std::string(r.module) + " --name " +
                                 std::string(r.name) + ")");
      }
      auto chosen = choose_config(repository, configs_of(*history), choice);
      if (!chosen) return problem(line, quoted(r, text) + ": " + chosen.error().message);
      if (!chosen->note.empty() && m_noted.insert(repository).second) m_notes.push_back(chosen->note);
      filled = newest_of(*history, *chosen);
      digest = filled->manifest.digest.str();
    } else {
      for (const auto& h : *history) {
        if (h.manifest.digest.str() == digest && (r.config.empty() || h.config == r.config)) filled = &h;
      }
      if (!filled) {
        return problem(line, quoted(r, text) + ": no record of " + repository + "@" + digest +
                                 (r.config.empty() ? "" : " in configuration " + std::string(r.config)) + " in " +
                                 in_store);
      }
    }
    if (m_options.admit) {
      if (auto admitted = m_options.admit(*filled); !admitted) {
        // A refusal of the trust policy is that policy's exit, whatever else could not be filled.
        if (admitted.error().kind == ErrorKind::trust) m_kind = ErrorKind::trust;
        return problem(line, quoted(r, text) + ": " + admitted.error().message);
      }
    }
    // The image's domain: the registry's stable name when the settings give one (each node's runtime
    // maps it to the registry's address, so a move changes no declaration), otherwise its address.
    std::string domain = m_settings.registry_name;
    if (domain.empty()) {
      const auto& registry = resolution_of("registry");
      if (!registry) return problem(line, quoted(r, text) + ": " + registry.error().message);
      auto endpoint = registry->endpoint();
      if (!endpoint) return problem(line, quoted(r, text) + ": " + endpoint.error().message);
      domain = std::move(*endpoint);
    }
    ++m_filled;
    std::string out = domain + "/" + repository;
    if (!r.tag.empty()) out += ":" + std::string(r.tag);
    return Filled{out + "@" + digest, std::nullopt};
  }

  const ComposeOptions& m_options;
  const NodeSettings& m_settings;
  std::map<std::string, Result<Resolution>, std::less<>> m_resolutions;
  std::map<std::string, Result<std::optional<std::uint16_t>>, std::less<>> m_ports;
  RecordBook m_book;
  std::size_t m_filled = 0;
  std::vector<std::string> m_problems;
  ErrorKind m_kind = ErrorKind::input;  // of the error the problems make
  std::vector<std::string> m_warnings;
  std::vector<std::string> m_notes;
  std::set<std::string> m_noted;  // module/names whose note is kept already
};

using OrderedJson = nlohmann::ordered_json;

// Walks a JSON template in document order, filling the requests in every key and string value.
class JsonFiller {
 public:
  JsonFiller(Filler& filler, std::string_view raw) : m_filler(filler), m_raw(raw), m_raw_requests(scan_requests(raw)) {}

  void walk(OrderedJson& value) {
    if (value.is_object()) {
      bool keys_hold_requests = false;
      for (const auto& [key, member] : value.items()) keys_hold_requests = keys_hold_requests || holds_request(key);
      if (!keys_hold_requests) {
        for (auto& [key, member] : value.items()) walk(member);
        return;
      }
      // Keys are rarely requests; only then is the object rebuilt, in order, each key before its value.
      OrderedJson rebuilt = OrderedJson::object();
      for (auto& [key, member] : value.items()) {
        auto filled_key = fill(key);
        walk(member);
        rebuilt[std::move(filled_key)] = std::move(member);
      }
      value = std::move(rebuilt);
    } else if (value.is_array()) {
      for (auto& element : value) walk(element);
    } else if (value.is_string()) {
      const auto& text = value.get_ref<const std::string&>();
      const auto first = RequestScanner(text).next();
      if (!first) return;
      if (first->kind == Kind::port && first->offset == 0 && first->length == text.size()) {
        // A string that is exactly a port request becomes a number, or "" when no port was given.
        if (const auto filled = m_filler.fill(*first, text, line_of(*first, text))) {
          value = filled->port ? OrderedJson(*filled->port) : OrderedJson("");
        }
        return;
      }
      value = fill(text);
    }
  }

 private:
  static bool holds_request(std::string_view text) { return text.find(k_request_scheme) != std::string_view::npos; }

  std::string fill(const std::string& text) {
    if (!holds_request(text)) return text;
    return m_filler.fill_text(text, [&](const Request& r) { return line_of(r, text); });
  }

  // The line of a request found in a decoded string: the next request of the raw document spelled
  // the same way. Strings are met in document order, so the search only moves forward; a request
  // spelled with JSON escapes is not found, and its line is not known (0).
  std::size_t line_of(const Request& r, std::string_view decoded) {
    const auto spelled = r.text(decoded);
    for (auto i = m_next; i < m_raw_requests.size(); ++i) {
      if (m_raw_requests[i].text(m_raw) == spelled) {
        m_next = i + 1;
        return m_raw_requests[i].line;
      }
    }
    return 0;
  }

  Filler& m_filler;
  std::string_view m_raw;
  std::vector<Request> m_raw_requests;
  std::size_t m_next = 0;
};

Result<std::string> compose_json(std::string_view text, const ComposeOptions& options, Filler& filler) {
  auto doc = read_json<OrderedJson>(text);
  if (!doc) return fail_input(options.source + ": " + json_problem(text, doc.error()));
  JsonFiller(filler, text).walk(*doc);
  return doc->dump(2, ' ', false, OrderedJson::error_handler_t::strict) + "\n";
}

}  // namespace

std::optional<Request> RequestScanner::next() {
  const auto at = m_text.find(k_request_scheme, m_at);
  if (at == std::string_view::npos) {
    m_at = m_text.size();
    return std::nullopt;
  }
  m_line += static_cast<std::size_t>(std::count(m_text.begin() + static_cast<std::ptrdiff_t>(m_counted),
                                                m_text.begin() + static_cast<std::ptrdiff_t>(at), '\n'));
  m_counted = at;
  Request r = parse_request(m_text, at);
  r.line = m_line;
  // A request that will be filled is consumed whole; one left as it is is looked into, so nothing
  // after its scheme is missed.
  const bool fillable = r.kind != Kind::unknown && r.kind != Kind::malformed;
  m_at = at + (fillable ? r.length : k_request_scheme.size());
  return r;
}

std::vector<Request> scan_requests(std::string_view text) {
  std::vector<Request> requests;
  RequestScanner scanner(text);
  while (auto r = scanner.next()) requests.push_back(std::move(*r));
  return requests;
}

TemplateFormat format_of(std::string_view file_name) {
  return file_name.ends_with(".json") || file_name.ends_with(".json.in") ? TemplateFormat::json : TemplateFormat::text;
}

Result<Composed> compose(std::string_view text, const ComposeOptions& options, const NodeSettings& settings,
                         const RecordReader& read_records) {
  std::optional<Result<std::vector<Record>>> all;
  const HistoryReader read_history = [&](std::string_view module,
                                         std::string_view name) -> Result<std::vector<Record>> {
    if (!all) all.emplace(read_records());
    if (!*all) return fail(all->error());
    std::vector<Record> out;
    for (const auto& record : **all) {
      if (record.module == module && record.name == name) out.push_back(record);
    }
    return out;
  };
  return compose(text, options, settings, read_history);
}

Result<Composed> compose(std::string_view text, const ComposeOptions& options, const NodeSettings& settings,
                         const HistoryReader& read_history) {
  Filler filler(options, settings, read_history);
  Composed composed;
  if (options.format == TemplateFormat::json) {
    auto json = compose_json(text, options, filler);
    if (!json) return fail(json.error());
    composed.text = std::move(*json);
  } else {
    composed.text = filler.fill_text(text, [](const Request& r) { return r.line; });
  }
  if (auto s = filler.status(); !s) return fail(s.error());
  composed.warnings = filler.take_warnings();
  composed.notes = filler.take_notes();
  composed.requests = filler.filled();
  composed.reads_records = filler.reads_records();
  return composed;
}

}  // namespace arec
