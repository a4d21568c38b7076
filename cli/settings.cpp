#include "cli/settings.hpp"

#include <array>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>

#include "registry-client/auth.hpp"

namespace arec::cli {

namespace {

constexpr std::array k_variables = {
    Variable{"AREC_STORE", "", "a directory",
             "The store (an OCI image layout), as --store. Default: $XDG_DATA_HOME/arec/store, else "
             "~/.local/share/arec/store."},
    Variable{"AREC_NODES", "", "a file",
             "The node settings (JSON), as --nodes. Default: built in, one node \"local\" (this machine) holding the "
             "registry on port 5000."},
    Variable{"AREC_SELF", "", "a node name",
             "The node this machine is, as --self. Default: the settings' own \"self\"."},
    Variable{"AREC_CA_FILE", "", "a file",
             "A CA bundle to trust for registries over HTTPS, as --ca-file, besides the system's."},
    Variable{"AREC_DEFAULT_CONFIG", "configuration", "1 to 64 of A-Z, a-z, 0-9 and _",
             "The build configuration meant where a module/name has records of several and none is named with "
             "--config, as --default-config. Default: Release."},
    Variable{"AREC_THREADS", k_threads.kind, k_threads.accepts,
             "Compression threads of record, unless --threads. Default: all cores."},
    Variable{"AREC_SYNC", "switch", "on or off",
             "on: every file is synced to the disk before it is renamed into the store. Default: off."},
    Variable{"AREC_LOCK_TIMEOUT", "duration", "seconds, more than 0 and at most 86400, e.g. 2.5",
             "How long a writer waits for the store's lock. Default: 120."},
    Variable{"AREC_CHUNK_SIZE", k_chunk_size.kind, k_chunk_size.accepts,
             "Blobs larger than this go up to a registry in chunks, unless --chunk-size. Default: a 32nd of the blob, "
             "from 8M to 64M."},
    Variable{"AREC_RETRY_BUDGET", "duration", "seconds from 0 to 86400, e.g. 2.5",
             "How long a registry step is retried before it gives up. Default: 60."},
    Variable{"AREC_STALL_TIMEOUT", k_stall_timeout.kind, k_stall_timeout.accepts,
             "A registry transfer slower than AREC_MIN_RATE this long is abandoned (and retried). Default: 60."},
    Variable{"AREC_MIN_RATE", k_min_rate.kind, k_min_rate.accepts,
             "The slowest a registry transfer may be for AREC_STALL_TIMEOUT. Default: 1k."},
    Variable{"AREC_SIGNING_KEY", "", "a file",
             "The private key record and push sign with, as --sign-key (a PEM EC P-256 or Ed25519 key, mode 600)."},
    Variable{"AREC_TRUST_KEYS", "", "files separated by :",
             "Public keys whose signatures every command taking records in or out (pull, import, record --base, push, "
             "move), compose and verify trust, besides --trust-key and the node settings' trust.keys."},
    Variable{"AREC_BUILDER_ID", "", "a URI",
             "The builder a signed record's provenance names. Default: urn:arec:builder:<host name>."},
    Variable{"SOURCE_DATE_EPOCH", k_epoch.kind, k_epoch.accepts,
             "The mtime of every entry of a recorded layer, for reproducible digests. Default: 0."},
    Variable{"XDG_DATA_HOME", "", "a directory", "Where the default store is: $XDG_DATA_HOME/arec/store."},
    Variable{"HOME", "", "a directory", "Where the default store is without XDG_DATA_HOME, and ~/.docker/config.json."},
    Variable{"DOCKER_CONFIG", "", "a directory",
             "Registry credentials: $DOCKER_CONFIG/config.json instead of ~/.docker/config.json."},
    Variable{"REGISTRY_AUTH_FILE", "", "a file",
             "Registry credentials in containers' auth.json format, looked in after docker's."},
    Variable{"XDG_RUNTIME_DIR", "", "a directory",
             "Registry credentials in $XDG_RUNTIME_DIR/containers/auth.json, looked in last."},
};

const Variable& variable(std::string_view name) {
  for (const auto& v : k_variables) {
    if (v.name == name) return v;
  }
  std::abort();  // a name missing from the table is a programming error
}

// "AREC_THREADS=abc: not a count (a whole number from 1 to 256)": the same for every variable.
Error bad_value(const Variable& v, std::string_view value) {
  return Error::input(std::string(v.name) + "=" + std::string(value) + ": not a " + std::string(v.kind) + " (" +
                      std::string(v.accepts) + ")");
}

// A variable's value read as `number`: "AREC_THREADS=257: at most 256".
Result<std::int64_t> number_of(std::string_view name, const NumberKind& number, std::string_view text) {
  auto value = read_number(number, text);
  if (!value) return fail_input(std::string(name) + "=" + std::string(text) + ": " + value.error());
  return *value;
}

// 65536 as "64k", 68719476736 as "64G": a bound said the way it can be written.
std::string size_text(std::int64_t bytes) {
  for (const auto& [shift, unit] : {std::pair{30, "G"}, {20, "M"}, {10, "k"}}) {
    if (bytes >= (std::int64_t{1} << shift) && bytes % (std::int64_t{1} << shift) == 0) {
      return std::to_string(bytes >> shift) + unit;
    }
  }
  return std::to_string(bytes);
}

enum class Low { included, excluded };

// A decimal number of seconds from `low` (included or not) to `high`, as milliseconds.
std::optional<std::chrono::milliseconds> seconds(std::string_view text, double low, Low bound, double high) {
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value, std::chars_format::fixed);
  if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(value)) return {};
  if (value < low || (bound == Low::excluded && value == low) || value > high) return {};
  return std::chrono::milliseconds(static_cast<std::int64_t>(std::llround(value * 1000)));
}

}  // namespace

std::span<const Variable> variables() { return k_variables; }

std::expected<std::int64_t, std::string> read_number(const NumberKind& number, std::string_view text) {
  const auto not_one = std::unexpected("not a " + std::string(number.kind) + " (" + std::string(number.accepts) + ")");
  const auto bound = [&number](std::int64_t value) {
    return number.unit == NumberKind::Unit::bytes ? size_text(value) : std::to_string(value);
  };
  const auto too_large = [&] {
    return std::unexpected(number.unit == NumberKind::Unit::bytes ? "too large (at most " + bound(number.high) + ")"
                                                                  : "at most " + bound(number.high));
  };
  std::size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  if (digits == 0) return not_one;
  int shift = 0;
  if (number.unit == NumberKind::Unit::bytes) {
    std::string_view unit = text.substr(digits);
    if (unit.ends_with("iB")) unit.remove_suffix(2);
    if (unit == "k" || unit == "K") {
      shift = 10;
    } else if (unit == "M" || unit == "m") {
      shift = 20;
    } else if (unit == "G" || unit == "g") {
      shift = 30;
    } else if (!unit.empty() && unit != "B") {
      return not_one;
    }
  } else if (digits != text.size()) {
    return not_one;
  }
  // Digits past what an int64 holds are a number too, only a large one: "too large", not "not a size".
  std::int64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + digits, value);
  if (ec == std::errc::result_out_of_range) return too_large();
  if (ec != std::errc() || end != text.data() + digits) return not_one;
  // Checked before shifting: 17179869185G would otherwise wrap around.
  if (value > (number.high >> shift)) return too_large();
  value <<= shift;
  if (value < number.low) return std::unexpected("at least " + bound(number.low));
  return value;
}

Environment process_environment() {
  return [](std::string_view name) {
    const char* value = std::getenv(std::string(name).c_str());
    return std::string(value != nullptr ? value : "");
  };
}

namespace {

// "a:b::c" as {"a", "b", "c"}: a PATH-like list, empty entries skipped.
std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    const auto end = std::min(text.find(':', start), text.size());
    if (end > start) out.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

}  // namespace

Result<Settings> read_settings(const Flags& flags, const Environment& env) {
  Settings s;
  // A set variable must be valid even where a flag takes its place, so that a mistake in the
  // environment shows at the first command rather than at the one that happens to need it.
  const Environment& get = env;

  const auto store = get("AREC_STORE");
  const auto data_home = get("XDG_DATA_HOME");
  const auto home = get("HOME");
  if (!flags.store.empty()) {
    s.store = flags.store;
  } else if (!store.empty()) {
    s.store = store;
  } else if (!data_home.empty()) {
    s.store = fs::Path(data_home) / "arec" / "store";
  } else {
    s.store = fs::Path(home.empty() ? "." : home) / ".local" / "share" / "arec" / "store";
  }
  s.nodes = flags.nodes.empty() ? get("AREC_NODES") : flags.nodes;
  s.self = flags.self.empty() ? get("AREC_SELF") : flags.self;
  s.client.ca_file = flags.ca_file.empty() ? get("AREC_CA_FILE") : flags.ca_file;
  if (const auto text = get("AREC_DEFAULT_CONFIG"); !text.empty()) {
    if (!is_config_name(text)) return fail(bad_value(variable("AREC_DEFAULT_CONFIG"), text));
    s.default_config = text;
  }
  if (!flags.default_config.empty()) {
    if (!is_config_name(flags.default_config)) {
      return fail_input("--default-config " + flags.default_config +
                        ": not a configuration (1 to 64 of A-Z, a-z, 0-9 and _)");
    }
    s.default_config = flags.default_config;
  }

  if (const auto text = get("AREC_THREADS"); !text.empty()) {
    const auto n = number_of("AREC_THREADS", k_threads, text);
    if (!n) return fail(n.error());
    s.threads = static_cast<unsigned>(*n);
  }
  if (const auto text = get("AREC_SYNC"); !text.empty()) {
    if (text != "on" && text != "off") return fail(bad_value(variable("AREC_SYNC"), text));
    s.sync = text == "on" ? fs::Sync::on : fs::Sync::off;
  }
  if (const auto text = get("AREC_LOCK_TIMEOUT"); !text.empty()) {
    const auto timeout = seconds(text, 0, Low::excluded, 86400);
    if (!timeout) return fail(bad_value(variable("AREC_LOCK_TIMEOUT"), text));
    s.lock_timeout = *timeout;
  }
  if (const auto text = get("AREC_CHUNK_SIZE"); !text.empty()) {
    const auto size = number_of("AREC_CHUNK_SIZE", k_chunk_size, text);
    if (!size) return fail(size.error());
    s.chunk_size = *size;
  }
  if (const auto text = get("AREC_RETRY_BUDGET"); !text.empty()) {
    const auto budget = seconds(text, 0, Low::included, 86400);
    if (!budget) return fail(bad_value(variable("AREC_RETRY_BUDGET"), text));
    s.retry.budget = *budget;
  }
  if (const auto text = get("AREC_STALL_TIMEOUT"); !text.empty()) {
    const auto stall = number_of("AREC_STALL_TIMEOUT", k_stall_timeout, text);
    if (!stall) return fail(stall.error());
    s.client.stall_timeout = std::chrono::seconds(*stall);
  }
  if (const auto text = get("AREC_MIN_RATE"); !text.empty()) {
    const auto rate = number_of("AREC_MIN_RATE", k_min_rate, text);
    if (!rate) return fail(rate.error());
    s.client.min_rate = *rate;
  }
  if (const auto text = get("SOURCE_DATE_EPOCH"); !text.empty()) {
    const auto epoch = number_of("SOURCE_DATE_EPOCH", k_epoch, text);
    if (!epoch) return fail(epoch.error());
    s.source_date_epoch = *epoch;
  }
  s.signing_key = get("AREC_SIGNING_KEY");
  if (const auto text = get("AREC_TRUST_KEYS"); !text.empty()) {
    // Trust declared is trust meant: ":" or a doubled ':' would otherwise drop a key without a word.
    s.trust_keys = split_list(text);
    if (text.front() == ':' || text.back() == ':' || text.find("::") != std::string::npos) {
      return fail_input("AREC_TRUST_KEYS=" + printable(text) +
                        ": an empty file name; name each trusted public key file, separated by ':'");
    }
  }
  s.builder_id = get("AREC_BUILDER_ID");
  if (has_control_characters(s.builder_id)) return fail(bad_value(variable("AREC_BUILDER_ID"), s.builder_id));
  s.client.credential_files =
      credential_files(CredentialPlaces{get("DOCKER_CONFIG"), home, get("REGISTRY_AUTH_FILE"), get("XDG_RUNTIME_DIR")});
  return s;
}

void apply_process_settings(const Settings& settings) {
  fs::set_sync(settings.sync);
  Store::set_lock_timeout(settings.lock_timeout);
  Store::set_default_config(settings.default_config);
}

}  // namespace arec::cli
