// `arec registry-config containerd|podman`: this node's container runtime configuration, mapping the
// registry's name (and old addresses of it) to where the node settings put the registry now.
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <memory>

#include "addressing/registry_config.hpp"
#include "cli/cli.hpp"
#include "util/fs.hpp"

namespace arec::cli {

namespace {

constexpr std::string_view k_containerd_dir = "/etc/containerd/certs.d";
constexpr std::string_view k_podman_file = "/etc/containers/registries.conf.d/50-arec.conf";
constexpr std::string_view k_policy_file = "/etc/containers/policy.json";
constexpr std::string_view k_registries_d_file = "/etc/containers/registries.d/50-arec.yaml";

struct RegistryConfigOptions {
  std::string format;
  std::string out;
  std::vector<std::string> bridges;
  std::vector<std::string> trust_keys;
  std::string policy;
  std::string registries_d;
};

// Each --trust-key as the absolute path the runtime reads, once; a file that is missing or holds no PEM
// public key is refused naming it, before anything is written.
Result<std::vector<std::string>> trusted_key_paths(const std::vector<std::string>& keys) {
  std::vector<std::string> paths;
  for (const auto& key : keys) {
    auto text = fs::read_file(fs::Path(key), 1 << 20);
    if (!text) return fail(std::move(text.error()).context("--trust-key " + key));
    if (text->find("-----BEGIN PUBLIC KEY-----") == std::string::npos ||
        text->find("-----END PUBLIC KEY-----") == std::string::npos)
      return fail_input("--trust-key " + key + ": not a PEM public key (-----BEGIN PUBLIC KEY-----)");
    std::string path = std::filesystem::absolute(key).lexically_normal().string();
    if (std::find(paths.begin(), paths.end(), path) == paths.end()) paths.push_back(std::move(path));
  }
  return paths;
}

// Writes `text` to `file` atomically, creating its directory; an error names the file.
Status write_config(const fs::Path& file, std::string_view text) {
  const fs::Path dir = fs::directory_of(file);
  if (auto s = fs::make_directories(dir); !s) return fail(std::move(s.error()).context("writing " + file.string()));
  if (auto s = fs::write_file_atomic(dir, file, text); !s)
    return fail(std::move(s.error()).context("writing " + file.string()));
  return {};
}

std::string scheme_text(const RuntimeRegistry& registry) {
  return registry.scheme == RuntimeScheme::http ? "plain HTTP" : "HTTPS";
}

Result<int> run_registry_config(const Globals& globals, const RegistryConfigOptions& o) {
  auto settings = load_settings(globals);
  if (!settings) return fail(settings.error());
  // containerd reads a relative `ca` against its own directory, not ours.
  std::string ca = globals.settings.client.ca_file;
  if (!ca.empty()) ca = std::filesystem::absolute(ca).lexically_normal().string();
  auto registry = runtime_registry(*settings, ca, o.bridges);
  if (!registry) return fail(registry.error());
  const auto maps = [&](std::string_view host) {
    std::cout << host << " -> " << registry->location << " (" << scheme_text(*registry) << ")";
  };
  if (o.format == "containerd") {
    if (!o.trust_keys.empty())
      return fail_input(
          "registry-config containerd --trust-key: containerd reads no signature policy; a cluster verifies "
          "signatures with an admission controller (docs/signing-nodes.md)");
    const fs::Path dir(o.out.empty() ? std::string(k_containerd_dir) : o.out);
    for (const auto& hosts : containerd_hosts(*registry)) {
      const fs::Path file = dir / hosts.host / "hosts.toml";
      if (auto s = write_config(file, hosts.text); !s) return fail(s.error());
      std::cout << "wrote " << file.string() << ": ";
      maps(hosts.host);
      std::cout << '\n';
    }
    return 0;
  }
  const fs::Path file(o.out.empty() ? std::string(k_podman_file) : o.out);
  auto keys = trusted_key_paths(o.trust_keys);
  if (!keys) return fail(keys.error());
  // The policy and registries.d texts are made before any file is written: a bad policy writes nothing.
  const fs::Path policy_file(o.policy.empty() ? std::string(k_policy_file) : o.policy);
  const fs::Path registries_d_file(o.registries_d.empty() ? std::string(k_registries_d_file) : o.registries_d);
  std::string policy;
  if (!keys->empty()) {
    std::string existing;
    if (std::error_code ec; std::filesystem::exists(policy_file, ec)) {
      auto text = fs::read_file(policy_file);
      if (!text) return fail(text.error());
      existing = std::move(*text);
    }
    auto made = containers_policy(*registry, existing, policy_file.string(), *keys);
    if (!made) return fail(made.error());
    policy = std::move(*made);
  }
  if (auto s = write_config(file, registries_conf(*registry)); !s) return fail(s.error());
  std::cout << "wrote " << file.string() << ":";
  maps(" " + registry->name);
  for (const auto& bridge : registry->bridges) {
    std::cout << ",";
    maps(" " + bridge);
  }
  std::cout << '\n';
  if (keys->empty()) return 0;
  if (auto s = write_config(registries_d_file, sigstore_registries_d(*registry)); !s) return fail(s.error());
  std::cout << "wrote " << registries_d_file.string() << ": sigstore attachments of " << registry->name << '\n';
  if (auto s = write_config(policy_file, policy); !s) return fail(s.error());
  std::cout << "wrote " << policy_file.string() << ": " << registry->name << " runs only images signed by "
            << keys->size() << (keys->size() == 1 ? " key" : " keys") << '\n';
  return 0;
}

}  // namespace

void add_registry_config(CLI::App& app, Globals& globals, Action& action) {
  auto o = std::make_shared<RegistryConfigOptions>();
  auto* cmd = app.add_subcommand(
      "registry-config", "Write this node's container runtime configuration: the registry's name to its address now");
  cmd->add_option("format", o->format, "containerd (certs.d/<host>/hosts.toml) or podman (a registries.conf drop-in)")
      ->required()
      ->check(CLI::IsMember({"containerd", "podman"}));
  cmd->add_option("--out", o->out,
                  "containerd: the hosts directory (default " + std::string(k_containerd_dir) +
                      "); podman: the drop-in (default " + std::string(k_podman_file) + ")")
      ->type_name("PATH");
  cmd->add_option("--bridge", o->bridges, "Also map this old address of the registry to it (repeatable)")
      ->type_name("HOST:PORT");
  cmd->add_option("--trust-key", o->trust_keys,
                  "podman: also write a containers-policy.json that runs only images of the registry signed by "
                  "this public key, and a registries.d entry to read their signatures (repeatable)")
      ->type_name("FILE");
  cmd->add_option(
         "--policy", o->policy,
         "podman with --trust-key: the containers-policy.json, updated (default " + std::string(k_policy_file) + ")")
      ->type_name("FILE");
  cmd->add_option("--registries-d", o->registries_d,
                  "podman with --trust-key: the registries.d entry (default " + std::string(k_registries_d_file) + ")")
      ->type_name("FILE");
  describe(*cmd,
           "Needs registry_name in the node settings: image requests then compose to that name, and this maps it\n"
           "to the registry's address as this node (--self) reaches it, in plain HTTP on loopback or to a node\n"
           "marked insecure_registry, in HTTPS otherwise (with --ca-file as its CA for containerd). Only the files\n"
           "it names are replaced, each atomically. Run it on every node after the registry moves, with --bridge\n"
           "for the old address while declarations composed to it remain.",
           {{"arec --nodes runtime.json registry-config containerd --out certs.d",
             "Writes certs.d/registry.mesh/hosts.toml (ctr --hosts-dir certs.d, or containerd's config_path)."},
            {"arec --nodes runtime.json registry-config containerd --out certs.d --bridge 10.20.0.11:5000",
             "Also certs.d/10.20.0.11:5000/hosts.toml, for references composed to that old address."},
            {"arec --nodes runtime.json registry-config podman --out 50-arec.conf --trust-key team.pub --policy "
             "policy.json --registries-d 50-arec.yaml",
             "A registries.conf drop-in for podman, CRI-O, buildah and skopeo, and a policy that runs images of the\n"
             "registry only if signed by team.pub."}},
           k_exit_local);
  cmd->callback([&action, &globals, o] { action = [&globals, o] { return run_registry_config(globals, *o); }; });
}

}  // namespace arec::cli
