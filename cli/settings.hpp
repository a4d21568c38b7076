// The settings of one run of arec: a flag, else its environment variable, else the default. The
// environment is read once, here, and every variable is checked the same way; the values are then
// passed down to the libraries, which read no environment themselves.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "recorder/error.hpp"
#include "recorder/fs.hpp"
#include "recorder/store.hpp"
#include "registry-client/registry.hpp"
#include "registry-client/retry.hpp"
#include "registry-client/transfer.hpp"

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
  fs::Path store;           // --store, AREC_STORE, $XDG_DATA_HOME/arec/store, ~/.local/share/arec/store
  std::string nodes;        // --nodes, AREC_NODES; empty: the built-in node settings
  std::string self;         // --self, AREC_SELF; empty: the file's own
  std::string default_config{k_default_config};  // --default-config, AREC_DEFAULT_CONFIG, Release
  std::optional<unsigned> threads;  // AREC_THREADS; nothing: all cores (record --threads overrides)
  fs::Sync sync = fs::Sync::off;    // AREC_SYNC
  std::chrono::milliseconds lock_timeout = k_default_lock_timeout;  // AREC_LOCK_TIMEOUT
  std::int64_t chunk_size = k_default_chunk_size;  // AREC_CHUNK_SIZE (push --chunk-size overrides)
  std::int64_t source_date_epoch = 0;                 // SOURCE_DATE_EPOCH: every mtime in a layer
  RetryPolicy retry;        // its budget from AREC_RETRY_BUDGET
  ClientSettings client;    // --ca-file / AREC_CA_FILE, AREC_STALL_TIMEOUT, the credential files
};

// Reads every variable of variables() from `env`, each flag taking the place of its variable. A set
// variable with a bad value is an error naming it, the value and what it accepts, whatever the command.
Result<Settings> read_settings(const Flags& flags, const Environment& env);

// Applies what the libraries take once per process rather than per call (see fs::set_sync and
// Store::set_lock_timeout).
void apply_process_settings(const Settings& settings);

}  // namespace arec::cli
