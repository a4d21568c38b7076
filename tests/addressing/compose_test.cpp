#include "addressing/compose.hpp"

#include <gtest/gtest.h>

#include "recorder/image.hpp"
#include "store/store.hpp"
#include "support/guarded_text.hpp"
#include "support/temp_dir.hpp"

namespace arec {
namespace {

using test::TempDir;
using test::write_file;

const std::string k_nodes = R"({
  "self": "n1",
  "nodes": {
    "n1": { "address": "10.20.0.11", "ports": { "registry": 5000, "store": 6852, "bus": 5679 } },
    "n2": { "address": "fd00::12", "ports": { "registry": 5001, "broker-mgmt": 15672 } },
    "n3": { "address": "10.20.0.13" }
  },
  "services": { "registry": "n1", "store": "n1", "bus": "n1", "broker-mgmt": "n2", "legacy": "n3" }
})";

NodeSettings settings(const std::string& text = k_nodes) {
  auto s = NodeSettings::parse(text, "nodes.json");
  EXPECT_TRUE(s) << s.error().message;
  return *s;
}

// A real store with real records, made the way `arec record` makes them.
class Records {
 public:
  Records() : m_store(*Store::open(m_tmp / "store")) {}

  Record record(const std::string& module, const std::string& name, const std::string& content,
                const std::string& config = "") {
    write_file(m_tmp / "src" / module / name / "app", content);
    RecordRequest request;
    request.module = module;
    request.name = name;
    request.entries = *collect_entries(
        {*parse_layer_input(LayerInput::Kind::directory, (m_tmp / "src" / module / name).string() + "=/srv")});
    request.threads = 1;
    request.config = config;
    auto outcome = record_image(request, m_store);
    EXPECT_TRUE(outcome) << outcome.error().message;
    return outcome->record;
  }

  // Reads the store as the command line does, counting the reads.
  RecordReader reader() {
    return [this] {
      ++reads;
      return m_store.records(History::all);
    };
  }

  int reads = 0;

 private:
  TempDir m_tmp;
  Store m_store;
};

const RecordReader k_no_store = [] { return Result<std::vector<Record>>(std::vector<Record>()); };

Result<Composed> compose_text(std::string_view text, const NodeSettings& s, const RecordReader& reader = k_no_store,
                              Strictness strictness = Strictness::lenient) {
  return compose(text, {"deploy.yaml.in", "", TemplateFormat::text, strictness, {}, {}}, s, reader);
}

Result<Composed> compose_json(std::string_view text, const NodeSettings& s, const RecordReader& reader = k_no_store) {
  return compose(text, {"deploy.json", "", TemplateFormat::json, Strictness::lenient, {}, {}}, s, reader);
}

std::string composed_text(std::string_view text, const NodeSettings& s, const RecordReader& reader = k_no_store) {
  auto c = compose_text(text, s, reader);
  EXPECT_TRUE(c) << c.error().message;
  return c ? c->text : std::string();
}

std::string error_of(const Result<Composed>& c) {
  EXPECT_FALSE(c);
  return c ? std::string() : c.error().message;
}

// --- the scanner ---

TEST(ScanRequests, FindsEachKindAndWhereItEnds) {
  const std::string text = "a: arec://port/store\nb: arec://endpoint/bus/vhost\nc: arec://address/broker-mgmt.\n";
  const auto requests = scan_requests(text);
  ASSERT_EQ(requests.size(), 3u);
  EXPECT_EQ(requests[0].kind, Request::Kind::port);
  EXPECT_EQ(requests[0].service, "store");
  EXPECT_EQ(requests[0].text(text), "arec://port/store");
  EXPECT_EQ(requests[0].line, 1u);
  EXPECT_EQ(requests[1].kind, Request::Kind::endpoint);
  EXPECT_EQ(requests[1].text(text), "arec://endpoint/bus");
  EXPECT_EQ(requests[1].line, 2u);
  EXPECT_EQ(requests[2].kind, Request::Kind::address);
  EXPECT_EQ(requests[2].service, "broker-mgmt");
  EXPECT_EQ(requests[2].line, 3u);
}

TEST(ScanRequests, ImageRequestsEndAfterModuleNameTagAndDigest) {
  const std::string digest = "sha256:" + std::string(64, 'a');
  const std::string text =
      "image: arec://image/mesh/controlplane\n"
      "image: \"arec://image/mesh/builder:1.2-rc.1\"\n"
      "image: arec://image/mesh/builder@" +
      digest +
      ", next\n"
      "image: arec://image/mesh/builder:v2@" +
      digest +
      "\n"
      "see arec://image/mesh/app.\n"
      "port: arec://image/mesh/app: 5\n";
  const auto r = scan_requests(text);
  ASSERT_EQ(r.size(), 6u);
  for (const auto& request : r) EXPECT_EQ(request.kind, Request::Kind::image) << request.text(text);
  EXPECT_EQ(r[0].module, "mesh");
  EXPECT_EQ(r[0].name, "controlplane");
  EXPECT_EQ(r[0].text(text), "arec://image/mesh/controlplane");
  EXPECT_EQ(r[1].tag, "1.2-rc.1");
  EXPECT_EQ(r[1].text(text), "arec://image/mesh/builder:1.2-rc.1");
  EXPECT_EQ(r[2].digest, digest);
  EXPECT_TRUE(r[2].tag.empty());
  EXPECT_EQ(r[2].text(text), "arec://image/mesh/builder@" + digest);
  EXPECT_EQ(r[3].tag, "v2");
  EXPECT_EQ(r[3].digest, digest);
  EXPECT_EQ(r[4].text(text), "arec://image/mesh/app");
  EXPECT_EQ(r[5].text(text), "arec://image/mesh/app");
}

TEST(ScanRequests, PathComponentsKeepTheirSeparators) {
  const std::string text = "arec://image/my-module/name__x.y_z";
  const auto r = scan_requests(text);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].module, "my-module");
  EXPECT_EQ(r[0].name, "name__x.y_z");
}

TEST(ScanRequests, AnEmbeddedEndpointLeavesCredentialsAndPathOutside) {
  const std::string text = "amqp://mesh:s3cret@arec://endpoint/bus/vhost?heartbeat=10";
  const auto r = scan_requests(text);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].offset, text.find("arec://"));
  EXPECT_EQ(r[0].text(text), "arec://endpoint/bus");
}

TEST(ScanRequests, UnknownKindsAreKeptWithTheirName) {
  const std::string text = "x\ny: arec://vault/secret/db \"arec://\"";
  const auto r = scan_requests(text);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].kind, Request::Kind::unknown);
  EXPECT_EQ(r[0].written, "vault");
  EXPECT_EQ(r[0].text(text), "arec://vault/secret/db");
  EXPECT_EQ(r[0].line, 2u);
  EXPECT_EQ(r[1].kind, Request::Kind::unknown);
  EXPECT_EQ(r[1].written, "");
}

TEST(ScanRequests, KnownKindsThatBreakTheirGrammarAreMalformed) {
  for (const std::string& text :
       std::vector<std::string>{"arec://port", "arec://port/", "arec://port/Store", "arec://image/mesh",
                                "arec://image/Mesh/x", "arec://image/mesh/", "arec://image/a/b/c",
                                "arec://image/mesh/x@sha256:abc", "arec://image/mesh/x:" + std::string(129, 't')}) {
    const auto r = scan_requests(text);
    ASSERT_EQ(r.size(), 1u) << text;
    EXPECT_EQ(r[0].kind, Request::Kind::malformed) << text;
    EXPECT_FALSE(r[0].problem.empty());
  }
}

TEST(ScanRequests, TextWithoutRequestsHasNone) {
  EXPECT_TRUE(scan_requests("").empty());
  EXPECT_TRUE(scan_requests("arec:/port/x arec:port http://arec.example/").empty());
}

TEST(ScanRequests, NeverReadsPastTheEnd) {
  // Every prefix of requests of every kind, each in a buffer of its own that ends where the prefix
  // does: the scanner must stop cleanly wherever the text stops, and a read past it crashes the test.
  const std::string text = "arec://image/mesh/app:v1@sha256:" + std::string(64, 'b') +
                           " arec://endpoint/bus arec://address/bus:x arec://port/s arec://other";
  std::size_t found = 0;
  for (std::size_t n = 0; n <= text.size(); ++n) {
    const test::GuardedText prefix(std::string_view(text).substr(0, n));
    found = scan_requests(prefix.view()).size();
  }
  EXPECT_EQ(found, 5u);
}

// --- compose, text ---

TEST(Compose, FillsEveryKindInPlaceAndNothingElse) {
  Records records;
  const auto cp = records.record("mesh", "controlplane", "cp v1");
  const std::string text =
      "# keep: ünïcode, tabs\t, CRLF\r\n"
      "image: arec://image/mesh/controlplane:1.0\n"
      "store: arec://endpoint/store\n"
      "store_host: arec://address/store\n"
      "store_port: arec://port/store\n"
      "broker: arec://endpoint/broker-mgmt\n"
      "broker_host: arec://address/broker-mgmt\n"
      "no trailing newline";
  EXPECT_EQ(composed_text(text, settings(), records.reader()),
            "# keep: ünïcode, tabs\t, CRLF\r\n"
            "image: 10.20.0.11:5000/mesh/controlplane:1.0@" +
                cp.manifest.digest.str() +
                "\n"
                "store: 10.20.0.11:6852\n"
                "store_host: 10.20.0.11\n"
                "store_port: 6852\n"
                "broker: [fd00::12]:15672\n"
                "broker_host: fd00::12\n"
                "no trailing newline");
}

TEST(Compose, ConnectionStringsKeepCredentialsAndPath) {
  EXPECT_EQ(composed_text("bus: amqp://mesh@arec://endpoint/bus/vhost\n"
                          "store: postgres://cp:p%40ss@arec://endpoint/store/controlplane?sslmode=disable\n",
                          settings()),
            "bus: amqp://mesh@10.20.0.11:5679/vhost\n"
            "store: postgres://cp:p%40ss@10.20.0.11:6852/controlplane?sslmode=disable\n");
}

TEST(Compose, APortNotGivenComposesEmpty) {
  EXPECT_EQ(composed_text("legacy_port: arec://port/legacy\nx=[arec://port/legacy]\n", settings()),
            "legacy_port: \nx=[]\n");
}

TEST(Compose, AnEndpointWithoutAPortIsAnError) {
  EXPECT_EQ(error_of(compose_text("a\nlegacy: arec://endpoint/legacy\n", settings())),
            "deploy.yaml.in:2: arec://endpoint/legacy: service legacy: node n3 was given no port for legacy");
}

// compose --trust-key: the hook sees the very record a request is filled from, and its refusal is that
// request's error, with nothing composed.
TEST(Compose, AdmitSeesTheRecordFilledAndItsRefusalFailsTheRequest) {
  Records records;
  const auto v1 = records.record("mesh", "builder", "v1");
  const auto v2 = records.record("mesh", "builder", "v2");
  std::vector<std::string> seen;
  ComposeOptions options{"deploy.yaml.in", "", TemplateFormat::text, Strictness::lenient, {}, {}};
  options.admit = [&](const Record& r) -> Status {
    seen.push_back(r.manifest.digest.str());
    if (r.manifest.digest == v1.manifest.digest) return fail_input("the record " + r.identity() + " is unsigned");
    return {};
  };
  auto latest = compose("arec://image/mesh/builder", options, settings(), records.reader());
  ASSERT_TRUE(latest) << latest.error().message;
  EXPECT_EQ(latest->text, "10.20.0.11:5000/mesh/builder@" + v2.manifest.digest.str());
  auto pinned =
      compose("x: arec://image/mesh/builder@" + v1.manifest.digest.str(), options, settings(), records.reader());
  ASSERT_FALSE(pinned);
  EXPECT_NE(pinned.error().message.find("deploy.yaml.in:1: arec://image/mesh/builder@" + v1.manifest.digest.str() +
                                        ": the record mesh/builder@" + v1.manifest.digest.str() + " is unsigned"),
            std::string::npos)
      << pinned.error().message;
  EXPECT_EQ(seen, (std::vector<std::string>{v2.manifest.digest.str(), v1.manifest.digest.str()}));
}

TEST(Compose, ImagesUseTheLatestRecordAndPinnedOnesMustExist) {
  Records records;
  const auto v1 = records.record("mesh", "builder", "v1");
  const auto v2 = records.record("mesh", "builder", "v2");
  const auto s = settings();
  EXPECT_EQ(composed_text("arec://image/mesh/builder", s, records.reader()),
            "10.20.0.11:5000/mesh/builder@" + v2.manifest.digest.str());
  EXPECT_EQ(composed_text("arec://image/mesh/builder@" + v1.manifest.digest.str(), s, records.reader()),
            "10.20.0.11:5000/mesh/builder@" + v1.manifest.digest.str());
  const std::string unknown = "sha256:" + std::string(64, 'c');
  EXPECT_EQ(error_of(compose_text("arec://image/mesh/builder@" + unknown, s, records.reader())),
            "deploy.yaml.in:1: arec://image/mesh/builder@" + unknown + ": no record of mesh/builder@" + unknown +
                " in the store");
}

TEST(Compose, ImagesNameTheRegistryNameWhenTheSettingsGiveOne) {
  Records records;
  const auto v1 = records.record("mesh", "builder", "v1");
  auto named = settings();
  named.registry_name = "registry.mesh";
  const std::string text = "image: arec://image/mesh/builder:1.0\nregistry: arec://endpoint/registry\n";
  const std::string want = "image: registry.mesh/mesh/builder:1.0@" + v1.manifest.digest.str() + "\nregistry: ";
  EXPECT_EQ(composed_text(text, named, records.reader()), want + "10.20.0.11:5000\n");
  // The registry moved to another node and port: images compose byte for byte the same.
  named.services["registry"] = "n3";
  named.nodes["n3"].ports["registry"] = 5002;
  EXPECT_EQ(composed_text("image: arec://image/mesh/builder:1.0\n", named, records.reader()),
            "image: registry.mesh/mesh/builder:1.0@" + v1.manifest.digest.str() + "\n");
  EXPECT_EQ(composed_text(text, settings(), records.reader()),
            "image: 10.20.0.11:5000/mesh/builder:1.0@" + v1.manifest.digest.str() + "\nregistry: 10.20.0.11:5000\n");
}

TEST(Compose, AnImageWithNoRecordIsAnErrorNamingIt) {
  Records records;
  records.record("mesh", "builder", "v1");
  const auto message =
      error_of(compose_text("one\ntwo\nimage: arec://image/mesh/controlplane\n", settings(), records.reader()));
  EXPECT_EQ(message,
            "deploy.yaml.in:3: arec://image/mesh/controlplane: no record of mesh/controlplane in the store "
            "(record it with arec record --module mesh --name controlplane)");
}

TEST(Compose, TheStoreIsReadOnceAndOnlyWhenAnImageIsAsked) {
  Records records;
  records.record("mesh", "a", "a");
  records.record("mesh", "b", "b");
  std::string text;
  for (int i = 0; i < 50; ++i) text += "arec://image/mesh/a arec://image/mesh/b arec://port/store\n";
  auto c = compose_text(text, settings(), records.reader());
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(records.reads, 1);
  EXPECT_EQ(c->requests, 150u);
  EXPECT_TRUE(c->reads_records);
  auto without = compose_text("arec://port/store", settings(), records.reader());
  ASSERT_TRUE(without);
  EXPECT_EQ(records.reads, 1);
  EXPECT_FALSE(without->reads_records);
}

TEST(Compose, AHolderWithNoAddressIsLoopbackOnlyForItself) {
  Records records;
  const auto cp = records.record("mesh", "controlplane", "cp");
  const std::string genesis = R"({"self": "first",
    "nodes": {"first": {"ports": {"registry": 5000}}, "second": {"address": "10.0.0.2"}},
    "services": {"registry": "first"}})";
  auto s = settings(genesis);
  EXPECT_EQ(composed_text("arec://image/mesh/controlplane", s, records.reader()),
            "127.0.0.1:5000/mesh/controlplane@" + cp.manifest.digest.str());
  s.self = "second";
  const auto message = error_of(compose_text("arec://image/mesh/controlplane", s, records.reader()));
  EXPECT_NE(message.find("node first"), std::string::npos) << message;
  EXPECT_NE(message.find("node second"), std::string::npos) << message;
  // A port needs no address: it composes wherever it is asked.
  EXPECT_EQ(composed_text("arec://port/registry", s), "5000");
}

TEST(Compose, UnknownKindsWarnAndStayButFailWhenStrict) {
  const std::string text = "a: arec://port/store\nb: arec://vault/db-password\n";
  auto c = compose_text(text, settings());
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->text, "a: 6852\nb: arec://vault/db-password\n");
  ASSERT_EQ(c->warnings.size(), 1u);
  EXPECT_EQ(c->warnings[0],
            "deploy.yaml.in:2: arec://vault/db-password: unknown request kind \"vault\"; left as it is "
            "(is the template newer than this arec?)");
  EXPECT_EQ(error_of(compose_text(text, settings(), k_no_store, Strictness::strict)),
            "deploy.yaml.in:2: arec://vault/db-password: unknown request kind \"vault\" (--strict)");
}

TEST(Compose, AnUnknownKindNearAKnownOneWarnsWithTheRequestItMayMean) {
  auto c = compose_text("a: arec://imag/mesh/app\nb: arec://adress/db\n", settings());
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->text, "a: arec://imag/mesh/app\nb: arec://adress/db\n");
  ASSERT_EQ(c->warnings.size(), 2u);
  EXPECT_EQ(c->warnings[0],
            "deploy.yaml.in:1: arec://imag/mesh/app: unknown request kind \"imag\"; left as it is "
            "(did you mean arec://image/mesh/app?)");
  EXPECT_EQ(c->warnings[1],
            "deploy.yaml.in:2: arec://adress/db: unknown request kind \"adress\"; left as it is "
            "(did you mean arec://address/db?)");
}

TEST(Compose, AFillThatJoinsTheTextAroundItIntoANewRequestIsAnError) {
  // An empty port after "arec://port" turns the unknown request "arec://portarec..." into a request of
  // kind port (found by fuzz.compose, kept as a regression input).
  EXPECT_EQ(error_of(compose_text("x\narec://portarec://port/legacy\n", settings())),
            "deploy.yaml.in:2: filling the requests made a new request \"arec://port\" from the text around them; "
            "separate the requests from that text with a space or quote");
  // A host named "arec" before "://port/store".
  auto s = settings();
  s.nodes["n3"].address = "arec";
  EXPECT_NE(
      error_of(compose_text("arec://address/legacy://port/store", s)).find("made a new request \"arec://port/store\""),
      std::string::npos);
  // A fill inside a request left as it is changes nothing that request is read as: it stays.
  EXPECT_EQ(composed_text("arec://vault/x?url=arec://endpoint/store", settings()),
            "arec://vault/x?url=10.20.0.11:6852");
}

TEST(Compose, MalformedRequestsAreErrors) {
  EXPECT_EQ(
      error_of(compose_text("x: arec://image/mesh\n", settings())),
      "deploy.yaml.in:1: arec://image/mesh: expected arec://image/MODULE/NAME[:TAG][@sha256:HEX][?config=CONFIG]");
}

TEST(Compose, EveryProblemIsListed) {
  const auto message = error_of(compose_text("arec://port/nope\narec://endpoint/legacy\n", settings()));
  EXPECT_EQ(message.substr(0, message.find('\n')), "2 requests cannot be filled:");
  EXPECT_NE(message.find("\n  deploy.yaml.in:1: arec://port/nope: service nope: no node holds it"), std::string::npos);
  EXPECT_NE(message.find("\n  deploy.yaml.in:2: arec://endpoint/legacy:"), std::string::npos);
}

TEST(Compose, SameInputsSameOutput) {
  Records records;
  records.record("mesh", "a", "a");
  const std::string text = "arec://image/mesh/a arec://endpoint/store arec://port/bus arec://x/y\n";
  auto first = compose_text(text, settings(), records.reader());
  auto second = compose_text(text, settings(), records.reader());
  ASSERT_TRUE(first && second);
  EXPECT_EQ(first->text, second->text);
}

// --- compose, JSON ---

TEST(ComposeJson, AStringThatIsExactlyAPortRequestBecomesANumber) {
  auto c = compose_json(R"({"z": "arec://port/store", "a": ["arec://port/legacy", "arec://port/bus"],
                            "url": "http://arec://endpoint/store/x", "label": "port arec://port/bus", "n": 1.5, "t": true})",
                        settings());
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->text, R"({
  "z": 6852,
  "a": [
    "",
    5679
  ],
  "url": "http://10.20.0.11:6852/x",
  "label": "port 5679",
  "n": 1.5,
  "t": true
}
)");
}

TEST(ComposeJson, KeysAreFilledAndOrderKept) {
  auto c = compose_json(R"({"b": 1, "arec://address/store": "x", "a": 2})", settings());
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->text, "{\n  \"b\": 1,\n  \"10.20.0.11\": \"x\",\n  \"a\": 2\n}\n");
}

TEST(ComposeJson, WarningsAndErrorsNameTheLine) {
  auto c = compose_json("{\n  \"a\": \"arec://port/store\",\n  \"b\": \"arec://vault/x\"\n}", settings());
  ASSERT_TRUE(c) << c.error().message;
  ASSERT_EQ(c->warnings.size(), 1u);
  EXPECT_EQ(c->warnings[0].substr(0, 32), "deploy.json:3: arec://vault/x: u");
  EXPECT_EQ(error_of(compose_json("{\n\n  \"a\": \"arec://port/nope\"\n}", settings())).substr(0, 32),
            "deploy.json:3: arec://port/nope:");
}

TEST(ComposeJson, KeysAreMetBeforeTheirValues) {
  auto c = compose_json("{\n  \"arec://vault/key\":\n    \"arec://vault/value\"\n}", settings());
  ASSERT_TRUE(c) << c.error().message;
  ASSERT_EQ(c->warnings.size(), 2u);
  EXPECT_EQ(c->warnings[0].substr(0, 36), "deploy.json:2: arec://vault/key: unk");
  EXPECT_EQ(c->warnings[1].substr(0, 38), "deploy.json:3: arec://vault/value: unk");
}

TEST(ComposeJson, MalformedJsonNamesTheLine) {
  EXPECT_EQ(error_of(compose_json("{\n  \"a\": 1,\n}", settings())), "deploy.json: malformed JSON at line 3, column 1");
}

TEST(ComposeJson, NumbersBeyondADoubleAreErrors) {
  EXPECT_EQ(error_of(compose_json("{\"a\": 1e999}", settings())), "deploy.json: a number is too large");
}

TEST(ComposeJson, DocumentsNestedTooDeepAreErrors) {
  const auto deep = std::string(100'000, '[') + std::string(100'000, ']');
  EXPECT_EQ(error_of(compose_json(deep, settings())), "deploy.json: nested deeper than 512 levels");
}

TEST(ComposeFormat, JsonByFileName) {
  EXPECT_EQ(format_of("deploy.json"), TemplateFormat::json);
  EXPECT_EQ(format_of("deploy.json.in"), TemplateFormat::json);
  EXPECT_EQ(format_of("deploy.yaml.in"), TemplateFormat::text);
  EXPECT_EQ(format_of("json"), TemplateFormat::text);
}

TEST(ScanRequests, AnImageRequestMayNameItsConfiguration) {
  const std::string text =
      "a: arec://image/team/api?config=Release b: arec://image/team/api:v1@sha256:" + std::string(64, 'a') +
      "?config=Debug_2 c: arec://image/team/api?page=2 d: arec://image/team/api?config=";
  const auto found = scan_requests(text);
  ASSERT_EQ(found.size(), 4U);
  EXPECT_EQ(found[0].kind, Request::Kind::image);
  EXPECT_EQ(found[0].config, "Release");
  EXPECT_EQ(found[0].text(text), "arec://image/team/api?config=Release");
  EXPECT_EQ(found[1].config, "Debug_2");
  EXPECT_EQ(found[1].tag, "v1");
  // Any other query is not part of the request, as before.
  EXPECT_EQ(found[2].kind, Request::Kind::image);
  EXPECT_EQ(found[2].text(text), "arec://image/team/api");
  EXPECT_EQ(found[2].config, "");
  EXPECT_EQ(found[3].kind, Request::Kind::malformed);
  EXPECT_EQ(found[3].problem, "expected a configuration (1 to 64 of A-Z, a-z, 0-9 and _) after ?config=");
}

TEST(Compose, AnImageIsTheLatestOfTheConfigurationMeant) {
  Records records;
  const auto release = records.record("team", "api", "release", "Release");
  const auto debug = records.record("team", "api", "debug", "Debug");
  const auto s = settings();
  const std::string at = "10.20.0.11:5000/team/api@";
  // Without a configuration: the default, Release, never the one built last; and it says so.
  auto plain = compose_text("arec://image/team/api", s, records.reader());
  ASSERT_TRUE(plain) << plain.error().message;
  EXPECT_EQ(plain->text, at + release.manifest.digest.str());
  ASSERT_EQ(plain->notes.size(), 1U);
  EXPECT_EQ(plain->notes[0],
            "team/api has records of Debug, Release: using the default configuration, Release (choose another with "
            "--config)");
  EXPECT_EQ(composed_text("arec://image/team/api?config=Debug", s, records.reader()), at + debug.manifest.digest.str());
  // compose --config, and the default configuration, as the command line passes them.
  auto asked =
      compose("arec://image/team/api", {"t", "", TemplateFormat::text, Strictness::lenient, ConfigChoice{"Debug"}, {}},
              s, records.reader());
  ASSERT_TRUE(asked);
  EXPECT_EQ(asked->text, at + debug.manifest.digest.str());
  auto other_default =
      compose("arec://image/team/api",
              {"t", "", TemplateFormat::text, Strictness::lenient, ConfigChoice{std::nullopt, "Debug"}, {}}, s,
              records.reader());
  ASSERT_TRUE(other_default);
  EXPECT_EQ(other_default->text, at + debug.manifest.digest.str());
  // A configuration with no record is refused, naming those recorded.
  auto missing = compose_text("x: arec://image/team/api?config=MinSizeRel", s, records.reader());
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find(
                "team/api: no record of configuration MinSizeRel (its records are of Debug, Release)"),
            std::string::npos)
      << missing.error().message;
  // A digest of another configuration than the one named is no record of it.
  auto mismatch =
      compose_text("arec://image/team/api@" + debug.manifest.digest.str() + "?config=Release", s, records.reader());
  ASSERT_FALSE(mismatch);
  EXPECT_NE(mismatch.error().message.find("in configuration Release"), std::string::npos) << mismatch.error().message;
}

}  // namespace
}  // namespace arec
