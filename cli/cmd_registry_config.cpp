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

struct RegistryConfigOptions {
  std::string format;
  std::string out;
  std::vector<std::string> bridges;
  std::vector<std::string> trust_keys;
};

// Why --trust-key is refused for every runtime: a policy that required signatures the runtime cannot
// read would make the node refuse the team's own signed images, and one that did not would say
// "signed only" while checking nothing.
constexpr std::string_view k_no_runtime_verifies =
    "verifies no signature arec writes: arec signs with Sigstore bundles attached as OCI referrers, podman and "
    "CRI-O (containers-image) read only cosign's .sig attachments (Debian 12's build no sigstore signature at "
    "all) and containerd has no signature policy, so a node policy requiring signatures would refuse the "
    "team's own images; write the mapping without --trust-key, and check signatures with arec pull "
    "--trust-key on the node or an admission controller that reads Sigstore bundles (docs/signing-nodes.md)";

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
  if (!o.trust_keys.empty())
    return fail_input("registry-config " + o.format + " --trust-key: " + o.format + " " +
                      std::string(k_no_runtime_verifies));
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
  if (auto s = write_config(file, registries_conf(*registry)); !s) return fail(s.error());
  std::cout << "wrote " << file.string() << ":";
  maps(" " + registry->name);
  for (const auto& bridge : registry->bridges) {
    std::cout << ",";
    maps(" " + bridge);
  }
  std::cout << '\n';
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
                  "Refused, saying why: neither runtime verifies the Sigstore bundles arec signs with (see "
                  "docs/signing-nodes.md for what checks them on a node)")
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
            {"arec --nodes runtime.json registry-config podman --out 50-arec.conf",
             "A registries.conf drop-in for podman, CRI-O, buildah and skopeo."}},
           k_exit_local);
  cmd->callback([&action, &globals, o] { action = [&globals, o] { return run_registry_config(globals, *o); }; });
}

}  // namespace arec::cli
