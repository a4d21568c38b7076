#include "cli/settings.hpp"

#include <gtest/gtest.h>

#include <map>
#include <set>

namespace arec::cli {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

Environment env_of(std::map<std::string, std::string> values) {
  return [values = std::move(values)](std::string_view name) {
    const auto it = values.find(std::string(name));
    return it == values.end() ? std::string() : it->second;
  };
}

std::string error_of(std::map<std::string, std::string> values) {
  auto s = read_settings(Flags{}, env_of(std::move(values)));
  return s ? std::string("(no error)") : s.error().message;
}

// Trust declared is trust meant: an empty name among the trusted key files would drop a key unseen.
TEST(Settings, AnEmptyNameAmongTheTrustedKeysIsAnError) {
  for (const char* keys : {":", "a.pub:", ":a.pub", "a.pub::b.pub"}) {
    const auto error = error_of({{"AREC_TRUST_KEYS", keys}});
    EXPECT_NE(error.find("AREC_TRUST_KEYS=" + std::string(keys) + ": an empty file name"), std::string::npos)
        << keys << ": " << error;
  }
  auto s = read_settings(Flags{}, env_of({{"AREC_TRUST_KEYS", "a.pub:keys/b.pub"}}));
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_EQ(s->trust_keys, (std::vector<std::string>{"a.pub", "keys/b.pub"}));
}

TEST(Settings, DefaultsWhenNothingIsSet) {
  auto s = read_settings(Flags{}, env_of({{"HOME", "/home/u"}}));
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_EQ(s->store, "/home/u/.local/share/arec/store");
  EXPECT_EQ(s->nodes, "");
  EXPECT_EQ(s->threads, std::nullopt);
  EXPECT_EQ(s->sync, fs::Sync::off);
  EXPECT_EQ(s->lock_timeout, seconds(120));
  EXPECT_EQ(s->chunk_size, 0);  // none chosen: each blob's own (chunk_size_for)
  EXPECT_EQ(s->retry.budget, seconds(60));
  EXPECT_EQ(s->client.stall_timeout, seconds(60));
  EXPECT_EQ(s->source_date_epoch, 0);
  EXPECT_EQ(s->client.credential_files, std::vector<fs::Path>{"/home/u/.docker/config.json"});
}

TEST(Settings, EveryVariableIsRead) {
  auto s = read_settings(Flags{}, env_of({{"AREC_STORE", "/s"},
                                          {"AREC_NODES", "/n.json"},
                                          {"AREC_SELF", "n2"},
                                          {"AREC_CA_FILE", "/ca.pem"},
                                          {"AREC_THREADS", "3"},
                                          {"AREC_SYNC", "on"},
                                          {"AREC_LOCK_TIMEOUT", "2.5"},
                                          {"AREC_CHUNK_SIZE", "100k"},
                                          {"AREC_RETRY_BUDGET", "0"},
                                          {"AREC_STALL_TIMEOUT", "7"},
                                          {"SOURCE_DATE_EPOCH", "1700000000"},
                                          {"DOCKER_CONFIG", "/d"},
                                          {"REGISTRY_AUTH_FILE", "/r.json"},
                                          {"XDG_RUNTIME_DIR", "/run/user/7"}}));
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_EQ(s->store, "/s");
  EXPECT_EQ(s->nodes, "/n.json");
  EXPECT_EQ(s->self, "n2");
  EXPECT_EQ(s->client.ca_file, "/ca.pem");
  EXPECT_EQ(s->threads, 3u);
  EXPECT_EQ(s->sync, fs::Sync::on);
  EXPECT_EQ(s->lock_timeout, milliseconds(2500));
  EXPECT_EQ(s->chunk_size, 100 * 1024);
  EXPECT_EQ(s->retry.budget, milliseconds(0));
  EXPECT_EQ(s->client.stall_timeout, seconds(7));
  EXPECT_EQ(s->source_date_epoch, 1700000000);
  EXPECT_EQ(s->client.credential_files,
            (std::vector<fs::Path>{"/d/config.json", "/r.json", "/run/user/7/containers/auth.json"}));
}

TEST(Settings, TheDefaultStoreFollowsXdgDataHome) {
  auto s = read_settings(Flags{}, env_of({{"HOME", "/home/u"}, {"XDG_DATA_HOME", "/data"}}));
  ASSERT_TRUE(s);
  EXPECT_EQ(s->store, "/data/arec/store");
}

TEST(Settings, FlagsTakeThePlaceOfTheirVariables) {
  auto s = read_settings(Flags{"/flag-store", "/flag-nodes.json", "n3", "/flag-ca.pem", "Debug"},
                         env_of({{"AREC_STORE", "/s"},
                                 {"AREC_NODES", "/n.json"},
                                 {"AREC_SELF", "n2"},
                                 {"AREC_CA_FILE", "/ca.pem"},
                                 {"AREC_DEFAULT_CONFIG", "RelWithDebInfo"}}));
  ASSERT_TRUE(s);
  EXPECT_EQ(s->default_config, "Debug");
  EXPECT_EQ(s->store, "/flag-store");
  EXPECT_EQ(s->nodes, "/flag-nodes.json");
  EXPECT_EQ(s->self, "n3");
  EXPECT_EQ(s->client.ca_file, "/flag-ca.pem");
}

TEST(Settings, TheDefaultConfigurationIsReleaseUnlessTheVariableNamesAnother) {
  auto s = read_settings(Flags{}, env_of({}));
  ASSERT_TRUE(s);
  EXPECT_EQ(s->default_config, "Release");
  auto named = read_settings(Flags{}, env_of({{"AREC_DEFAULT_CONFIG", "MinSizeRel"}}));
  ASSERT_TRUE(named);
  EXPECT_EQ(named->default_config, "MinSizeRel");
  EXPECT_EQ(error_of({{"AREC_DEFAULT_CONFIG", "Min Size"}}),
            "AREC_DEFAULT_CONFIG=Min Size: not a configuration (1 to 64 of A-Z, a-z, 0-9 and _)");
}

TEST(Settings, AnEmptyVariableIsUnset) {
  auto s = read_settings(Flags{}, env_of({{"AREC_THREADS", ""}, {"SOURCE_DATE_EPOCH", ""}, {"AREC_SYNC", ""}}));
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_EQ(s->threads, std::nullopt);
  EXPECT_EQ(s->source_date_epoch, 0);
}

TEST(Settings, ABadValueIsOneMessageNamingTheVariableTheValueAndWhatItAccepts) {
  EXPECT_EQ(error_of({{"AREC_THREADS", "abc"}}), "AREC_THREADS=abc: not a count (a whole number from 1 to 256)");
  EXPECT_EQ(error_of({{"AREC_THREADS", "0"}}), "AREC_THREADS=0: at least 1");
  EXPECT_EQ(error_of({{"AREC_THREADS", "257"}}), "AREC_THREADS=257: at most 256");
  EXPECT_EQ(error_of({{"AREC_THREADS", "4 "}}), "AREC_THREADS=4 : not a count (a whole number from 1 to 256)");
  EXPECT_EQ(error_of({{"AREC_SYNC", "yes"}}), "AREC_SYNC=yes: not a switch (on or off)");
  EXPECT_EQ(error_of({{"AREC_SYNC", "1"}}), "AREC_SYNC=1: not a switch (on or off)");
  EXPECT_EQ(error_of({{"AREC_LOCK_TIMEOUT", "3junk"}}),
            "AREC_LOCK_TIMEOUT=3junk: not a duration (seconds, more than 0 and at most 86400, e.g. 2.5)");
  EXPECT_EQ(error_of({{"AREC_LOCK_TIMEOUT", "0"}}),
            "AREC_LOCK_TIMEOUT=0: not a duration (seconds, more than 0 and at most 86400, e.g. 2.5)");
  EXPECT_EQ(error_of({{"AREC_LOCK_TIMEOUT", "1e400"}}),
            "AREC_LOCK_TIMEOUT=1e400: not a duration (seconds, more than 0 and at most 86400, e.g. 2.5)");
  EXPECT_EQ(error_of({{"AREC_RETRY_BUDGET", "5x"}}),
            "AREC_RETRY_BUDGET=5x: not a duration (seconds from 0 to 86400, e.g. 2.5)");
  EXPECT_EQ(error_of({{"AREC_RETRY_BUDGET", "-1"}}),
            "AREC_RETRY_BUDGET=-1: not a duration (seconds from 0 to 86400, e.g. 2.5)");
  EXPECT_EQ(error_of({{"AREC_RETRY_BUDGET", "nan"}}),
            "AREC_RETRY_BUDGET=nan: not a duration (seconds from 0 to 86400, e.g. 2.5)");
  EXPECT_EQ(error_of({{"AREC_STALL_TIMEOUT", "1.5"}}),
            "AREC_STALL_TIMEOUT=1.5: not a duration (whole seconds from 1 to 86400)");
  EXPECT_EQ(error_of({{"AREC_CHUNK_SIZE", "5x"}}),
            "AREC_CHUNK_SIZE=5x: not a size (bytes from 64k to 64G, or a whole number with k, M or G, e.g. 64M)");
  EXPECT_EQ(error_of({{"AREC_CHUNK_SIZE", "17179869185G"}}), "AREC_CHUNK_SIZE=17179869185G: too large (at most 64G)");
  EXPECT_EQ(error_of({{"AREC_CHUNK_SIZE", "1000000000000000000"}}),
            "AREC_CHUNK_SIZE=1000000000000000000: too large (at most 64G)");
  EXPECT_EQ(error_of({{"AREC_CHUNK_SIZE", "1"}}), "AREC_CHUNK_SIZE=1: at least 64k");
  EXPECT_EQ(error_of({{"SOURCE_DATE_EPOCH", "12x"}}),
            "SOURCE_DATE_EPOCH=12x: not a time (whole seconds since 1970-01-01 UTC, 0 or more)");
  EXPECT_EQ(error_of({{"SOURCE_DATE_EPOCH", "-5"}}),
            "SOURCE_DATE_EPOCH=-5: not a time (whole seconds since 1970-01-01 UTC, 0 or more)");
  EXPECT_EQ(error_of({{"SOURCE_DATE_EPOCH", "99999999999999999999"}}),
            "SOURCE_DATE_EPOCH=99999999999999999999: at most 9223372036854775807");
}

// Why `text` is refused as `number`; empty when it is accepted.
std::string why(const NumberKind& number, std::string_view text) {
  const auto read = read_number(number, text);
  return read ? std::string() : read.error();
}

// Every number a flag or variable takes, fed what a fuzzer would: each is accepted inside its range,
// and outside it refused with a reason that names the bound, never crashing or wrapping around.
TEST(Settings, EveryNumberRefusesExtremeValuesNamingItsRange) {
  for (const NumberKind* number : {&k_threads, &k_jobs, &k_chunk_size, &k_port, &k_keep, &k_stall_timeout, &k_epoch}) {
    const std::string kind(number->kind);
    const bool size = number->unit == NumberKind::Unit::bytes;
    EXPECT_EQ(read_number(*number, std::to_string(number->low)), number->low) << kind;
    EXPECT_EQ(read_number(*number, std::to_string(number->high)), number->high) << kind;
    const std::string not_one = "not a " + kind + " (" + std::string(number->accepts) + ")";
    for (const char* junk : {"", "-", "-1", "+1", " 1", "1 ", "0x10", "1e3", "1.5", "abc", "\xff", "１"}) {
      EXPECT_EQ(why(*number, junk), not_one) << kind << " " << junk;
    }
    const std::string too_large = size ? "too large (at most 64G)" : "at most " + std::to_string(number->high);
    for (const std::string& huge : {std::string("9223372036854775808"), std::string("18446744073709551616"),
                                    std::string(400, '9'), std::to_string(number->high) + "0"}) {
      if (number->high == std::numeric_limits<std::int64_t>::max() && huge == std::to_string(number->high) + "0")
        continue;
      EXPECT_EQ(why(*number, huge), too_large) << kind << " " << huge.substr(0, 30);
    }
    if (number->high < std::numeric_limits<std::int64_t>::max()) {
      EXPECT_EQ(why(*number, std::to_string(number->high + 1)), too_large) << kind;
    }
    if (number->low > 0) {
      EXPECT_TRUE(why(*number, std::to_string(number->low - 1)).starts_with("at least ")) << kind;
      EXPECT_TRUE(why(*number, "0").starts_with("at least ")) << kind;
    }
  }
  EXPECT_EQ(why(k_threads, "40000"), "at most 256");
  EXPECT_EQ(read_number(k_chunk_size, "64M"), std::int64_t{64} << 20);
  EXPECT_EQ(why(k_chunk_size, "65G"), "too large (at most 64G)");
  EXPECT_EQ(why(k_chunk_size, "8589934592G"), "too large (at most 64G)");  // 2^33 G wraps to 0
  EXPECT_EQ(why(k_chunk_size, "1k"), "at least 64k");
  EXPECT_EQ(why(k_chunk_size, "1X"), "not a size (bytes from 64k to 64G, or a whole number with k, M or G, e.g. 64M)");
}

// Sizes are bytes or binary units, spelt as people write them; anything else is not a size.
TEST(Settings, SizesTakeEveryUnitSpelling) {
  constexpr NumberKind any_size{"size", "bytes", 1, std::numeric_limits<std::int64_t>::max(), NumberKind::Unit::bytes};
  EXPECT_EQ(read_number(any_size, "1048576"), 1048576);
  EXPECT_EQ(read_number(any_size, "7B"), 7);
  EXPECT_EQ(read_number(any_size, "512k"), 512 * 1024);
  EXPECT_EQ(read_number(any_size, "2K"), 2048);
  EXPECT_EQ(read_number(any_size, "2kiB"), 2048);
  EXPECT_EQ(read_number(any_size, "64MiB"), std::int64_t{64} << 20);
  EXPECT_EQ(read_number(any_size, "3m"), std::int64_t{3} << 20);
  EXPECT_EQ(read_number(any_size, "5g"), std::int64_t{5} << 30);
  EXPECT_EQ(read_number(any_size, "5GiB"), std::int64_t{5} << 30);
  EXPECT_EQ(read_number(any_size, "0001k"), 1024) << "leading zeros are digits like any other";
  EXPECT_EQ(read_number(any_size, "8589934591G"), std::int64_t{8589934591} << 30);
  for (const char* bad : {"", "M", "12X", "-1", "1.5M", "64 M", "64MB", "64T"}) {
    EXPECT_FALSE(read_number(any_size, bad)) << bad;
  }
  EXPECT_FALSE(read_number(any_size, "17179869185G")) << "2^64 + 1 GiB must not wrap around to 1 GiB";
}

TEST(Settings, TheTableNamesEveryVariableOnceWithWhatItDoes) {
  std::set<std::string_view> names;
  for (const auto& v : variables()) {
    EXPECT_TRUE(names.insert(v.name).second) << v.name;
    EXPECT_FALSE(v.does.empty()) << v.name;
    EXPECT_FALSE(v.accepts.empty()) << v.name;
  }
  for (const auto* name :
       {"AREC_STORE", "AREC_NODES", "AREC_SELF", "AREC_CA_FILE", "AREC_THREADS", "AREC_SYNC", "AREC_LOCK_TIMEOUT",
        "AREC_CHUNK_SIZE", "AREC_RETRY_BUDGET", "AREC_STALL_TIMEOUT", "SOURCE_DATE_EPOCH", "XDG_DATA_HOME", "HOME",
        "DOCKER_CONFIG", "REGISTRY_AUTH_FILE", "XDG_RUNTIME_DIR"}) {
    EXPECT_TRUE(names.contains(name)) << name;
  }
}

}  // namespace
}  // namespace arec::cli
