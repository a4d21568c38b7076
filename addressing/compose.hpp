// Compose: filling every request of a declaration from the store and the node settings
// (ARCHITECTURE.md, "Compose"). Addresses are read here, where they are used (rule 3), and nowhere else.
//
//   arec://image/<module>/<name>[:<tag>][@sha256:<hex>][?config=<config>]
//                                                        ->  <addr>:<port>/<module>/<name>[:<tag>]@sha256:<digest>
//   arec://endpoint/<service>                            ->  <addr>:<port>
//   arec://address/<service>                             ->  <addr>
//   arec://port/<service>                                ->  <port>, or empty when not given (rule 5)
//
// A request ends where its grammar ends, so one can sit inside a connection string:
// "amqp://mesh@arec://endpoint/bus/vhost" -> "amqp://mesh@10.20.0.11:5679/vhost".
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "addressing/nodes.hpp"
#include "oci/record.hpp"
#include "util/error.hpp"

namespace arec {

inline constexpr std::string_view k_request_scheme = "arec://";
// A template is text a person wrote: a bound far above any, so that an endless standard input (or a
// device given as the template) ends in an error rather than in memory running out.
inline constexpr std::size_t k_max_template_size = std::size_t{256} << 20;

// One arec:// occurrence in a text, parsed as far as its grammar goes. Its parts are views into the
// text it was found in, valid as long as that text is.
struct Request {
  enum class Kind {
    image,
    endpoint,
    address,
    port,
    unknown,    // a kind this arec does not know: left as it is (a newer template)
    malformed,  // a known kind whose rest does not follow its grammar
  };

  Kind kind = Kind::unknown;
  std::size_t offset = 0;  // byte offset of "arec://" in the text
  std::size_t length = 0;  // bytes the request spans; for unknown and malformed, up to the end of the word
  std::size_t line = 1;    // 1-based line of the offset

  std::string_view service;  // endpoint, address, port
  std::string_view module;   // image
  std::string_view name;     // image
  std::string_view tag;      // image, empty when absent
  std::string_view digest;   // image, "sha256:...", empty when absent (then the latest record is meant)
  std::string_view config;   // image, the configuration after "?config=", empty when absent (choose_config)
  std::string_view written;  // unknown: the kind as written
  std::string problem;       // malformed: what is wrong

  std::string_view text(std::string_view in) const { return in.substr(offset, length); }
};

// Reads the requests of a text one by one, in order. Pure: no I/O, any input (it never fails).
class RequestScanner {
 public:
  explicit RequestScanner(std::string_view text) : m_text(text) {}
  // The next request, or nothing at the end of the text.
  std::optional<Request> next();

 private:
  std::string_view m_text;
  std::size_t m_at = 0;       // where to look for the next "arec://"
  std::size_t m_counted = 0;  // newlines are counted up to here
  std::size_t m_line = 1;
};

// Every arec:// occurrence in `text`, in order.
std::vector<Request> scan_requests(std::string_view text);

enum class TemplateFormat {
  text,  // filled in place, byte for byte elsewhere
  json,  // parsed; a string that is exactly a port request becomes a number (or ""); key order kept
};

enum class Strictness {
  lenient,  // an unknown request kind is a warning
  strict,   // an unknown request kind is an error
};

// The format a template's file name implies: json for *.json and *.json.in, otherwise text.
TemplateFormat format_of(std::string_view file_name);

struct ComposeOptions {
  std::string source;  // the template's name in messages
  std::string store;   // the store's name in messages
  TemplateFormat format = TemplateFormat::text;
  Strictness strictness = Strictness::lenient;
  ConfigChoice configs;  // the configuration asked for (--config) and the default, where a request names none
  // Whether the record an image request is filled from may be (with trusted keys: signed by one);
  // an error is a problem of that request, and nothing is written; one of ErrorKind::trust makes the
  // whole compose's error of that kind. None: every record may.
  std::function<Status(const Record&)> admit;
};

struct Composed {
  std::string text;
  std::vector<std::string> warnings;  // "deploy.yaml.in:7: ..." — for the caller to show
  std::vector<std::string> notes;     // which configuration was used where the default was (choose_config)
  std::size_t requests = 0;           // how many requests were filled
  bool reads_records = false;         // the template has image requests, so its output depends on the store
};

// Reads every record of the store (History::all, oldest first). Called at most once per compose,
// and only when the template has an image request.
using RecordReader = std::function<Result<std::vector<Record>>()>;
// Reads the history of one module/name (oldest first, the last its latest). Called at most once per
// module/name an image request names, so a compose reads what it needs, not the whole history.
using HistoryReader = std::function<Result<std::vector<Record>>(std::string_view module, std::string_view name)>;

// Fills every request in `text`. Each service is resolved once per call and the store is read once.
// On any error nothing is returned but the error, which names the source and line.
Result<Composed> compose(std::string_view text, const ComposeOptions& options, const NodeSettings& settings,
                         const RecordReader& read_records);
Result<Composed> compose(std::string_view text, const ComposeOptions& options, const NodeSettings& settings,
                         const HistoryReader& read_history);

}  // namespace arec
