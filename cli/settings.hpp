// The settings of one run of arec: a flag, else its environment variable, else the default. The
// environment is read once, here, and every variable is checked the same way; the values are then
// passed down to the libraries, which read no environment themselves.
#pragma once

#include <chrono>
#include <cstdint>
#include <expected>
#include <functional>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "registry-client/registry.hpp"
#include "registry-client/retry.hpp"
#include "registry-client/transfer.hpp"
#include "store/store.hpp"
#include "util/error.hpp"
#include "util/fs.hpp"

namespace arec::cli {

// One environment variable arec reads, as `arec --help` and the manual list it.
struct Variable {
  std::string_view name;
  std::string_view kind;     // what a value is: "count", "duration"; empty for free text (a path, a name)
  std::string_view accepts;  // the values it accepts, said after the kind in errors and in the help
  std::string_view does;     // what it sets, with its default
};

// Every variable, in the order the help lists them.
std::span<const Variable> variables();

// A number arec reads, from a flag or from a variable: what it is, its range and how it is written.
// A flag and its variable are read by the same NumberKind, so both accept and refuse the same values.
struct NumberKind {
  enum class Unit { none, bytes };  // bytes: a size, which may end in k, M or G (binary)
  std::string_view kind;            // "count", "size", "port", "time", "duration"
  std::string_view accepts;         // said in errors and in the help: "a whole number from 1 to 256"
  std::int64_t low;
  std::int64_t high;
  Unit unit = Unit::none;
};

// More threads than this only cost memory: each holds a compressor's window, and past the cores none
// runs sooner.
inline constexpr NumberKind k_threads{"count", "a whole number from 1 to 256", 1, 256};
// Each job holds a connection to the registry; past this a registry refuses or throttles.
inline constexpr NumberKind k_jobs{"count", "a whole number from 1 to 64", 1, 64};
// A chunk is one request: below 64 KiB the requests, not the bytes, are what takes the time.
inline constexpr NumberKind k_chunk_size{"size", "bytes from 64k to 64G, or a whole number with k, M or G, e.g. 64M",
                                         std::int64_t{64} << 10, std::int64_t{64} << 30, NumberKind::Unit::bytes};
inline constexpr NumberKind k_port{"port", "a whole number from 1 to 65535", 1, 65535};
inline constexpr NumberKind k_keep{"count", "a whole number from 1 to 1000000000", 1, 1'000'000'000};
inline constexpr NumberKind k_stall_timeout{"duration", "whole seconds from 1 to 86400", 1, 86400};
// Slower than this for AREC_STALL_TIMEOUT, a transfer is stalled: a trickle of a byte now and then is.
inline constexpr NumberKind k_min_rate{"rate", "bytes a second from 1 to 1G, or a whole number with k, M or G, e.g. 4k",
                                       1, std::int64_t{1} << 30, NumberKind::Unit::bytes};
inline constexpr NumberKind k_epoch{"time", "whole seconds since 1970-01-01 UTC, 0 or more", 0,
                                    std::numeric_limits<std::int64_t>::max()};

// The value `text` writes, or why it is refused, naming the range: "at most 256", "at least 64k",
// "too large (at most 64G)", "not a count (a whole number from 1 to 256)". The caller names the flag or
// variable: "--threads 40000: at most 256".
std::expected<std::int64_t, std::string> read_number(const NumberKind& number, std::string_view text);

// The value of an environment variable; empty when it is unset or empty (both mean "not set").
using Environment = std::function<std::string(std::string_view name)>;

// The process's own environment: the one place arec calls getenv.
Environment process_environment();

// The global flags as given; empty when not given.
struct Flags {
  std::string store;
  std::string nodes;
  std::string self;
  std::string ca_file;
  std::string default_config;
};

struct Settings {
  fs::Path store;     // --store, AREC_STORE, $XDG_DATA_HOME/arec/store, ~/.local/share/arec/store
  std::string nodes;  // --nodes, AREC_NODES; empty: the built-in node settings
  std::string self;   // --self, AREC_SELF; empty: the file's own
  std::string default_config{k_default_config};  // --default-config, AREC_DEFAULT_CONFIG, Release
  std::optional<unsigned> threads;               // AREC_THREADS; nothing: all cores (record --threads overrides)
  fs::Sync sync = fs::Sync::off;                 // AREC_SYNC
  std::chrono::milliseconds lock_timeout = k_default_lock_timeout;  // AREC_LOCK_TIMEOUT
  std::int64_t chunk_size = 0;         // AREC_CHUNK_SIZE (push --chunk-size overrides); 0: by the blob (chunk_size_for)
  std::int64_t source_date_epoch = 0;  // SOURCE_DATE_EPOCH: every mtime in a layer
  RetryPolicy retry;                   // its budget from AREC_RETRY_BUDGET
  std::string signing_key;             // AREC_SIGNING_KEY (--sign-key overrides)
  std::vector<std::string> trust_keys;  // AREC_TRUST_KEYS (--trust-key adds to them)
  std::string builder_id;               // AREC_BUILDER_ID; empty: urn:arec:builder:<host>
  ClientSettings client;  // --ca-file / AREC_CA_FILE, AREC_STALL_TIMEOUT, AREC_MIN_RATE, the credential files
};

// Reads every variable of variables() from `env`, each flag taking the place of its variable. A set
// variable with a bad value is an error naming it, the value and what it accepts, whatever the command.
Result<Settings> read_settings(const Flags& flags, const Environment& env);

// Applies what the libraries take once per process rather than per call (see fs::set_sync and
// Store::set_lock_timeout, Store::set_default_config).
void apply_process_settings(const Settings& settings);

}  // namespace arec::cli
