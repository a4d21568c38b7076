#!/usr/bin/env python3
"""The Debian packages of purls, to compare what Trivy found with what arec recorded.

  purls.py canonical          purls on stdin, each in canonical form (qualifiers sorted by key), sorted
  purls.py origins            purls on stdin as layer origins' packages: NAME=[EPOCH:]VERSION:ARCH, sorted

Only pkg:deb purls are read; the rest are left out. Names and versions are percent-decoded."""
import sys
import urllib.parse


def parse(purl):
    rest, _, qualifiers = purl.partition("?")
    path, _, version = rest.partition("@")
    kind, _, path = path.partition("/")
    namespace, _, name = path.rpartition("/")
    pairs = [q.partition("=") for q in qualifiers.split("&") if q]
    return kind, namespace, name, version, {k: v for k, _, v in pairs}


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else ""
    out = []
    for line in sys.stdin.read().split():
        if not line.startswith("pkg:deb/"):
            continue
        kind, namespace, name, version, qualifiers = parse(line)
        if mode == "canonical":
            q = "&".join(f"{k}={qualifiers[k]}" for k in sorted(qualifiers))
            out.append(f"{kind}/{namespace}/{name}@{version}" + (f"?{q}" if q else ""))
        elif mode == "origins":
            epoch = qualifiers.get("epoch")
            full = urllib.parse.unquote(version)
            if epoch:
                full = f"{epoch}:{full}"
            out.append(f"{urllib.parse.unquote(name)}={full}:{qualifiers.get('arch', '')}")
        else:
            sys.exit("usage: purls.py canonical|origins < purls")
    print("\n".join(sorted(out)))


if __name__ == "__main__":
    main()
