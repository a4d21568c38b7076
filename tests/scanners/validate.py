#!/usr/bin/env python3
"""Validates SBOMs against their JSON schemas, offline: validate.py cyclonedx|spdx FILE...

CycloneDX 1.6: the schema npm's @cyclonedx/cyclonedx-library ships (oracle/, installed by scripts/deps),
its $refs to the SPDX licence list and JSF resolved in the same folder. SPDX 2.3: tests/record's copy of
the SPDX project's schema. Prints each problem and exits 1 when a document is not valid."""
import json
import pathlib
import sys
import urllib.parse
import warnings

import jsonschema

warnings.filterwarnings("ignore", category=DeprecationWarning)  # RefResolver: what Debian 12's jsonschema has

HERE = pathlib.Path(__file__).resolve().parent
CYCLONEDX = HERE / "oracle/node_modules/@cyclonedx/cyclonedx-library/res/schema"
SPDX = HERE.parent / "record/spdx-schema-2.3.json"


def validator(kind):
    if kind == "cyclonedx":
        schema = json.loads((CYCLONEDX / "bom-1.6.SNAPSHOT.schema.json").read_text())
        store = {}
        for name in ("spdx.SNAPSHOT.schema.json", "jsf-0.82.SNAPSHOT.schema.json"):
            companion = json.loads((CYCLONEDX / name).read_text())
            store[name] = companion
            store[urllib.parse.urljoin(schema["$id"], name)] = companion
            if "$id" in companion:
                store[companion["$id"]] = companion
        resolver = jsonschema.RefResolver(base_uri=CYCLONEDX.as_uri() + "/", referrer=schema, store=store)
        return jsonschema.Draft7Validator(schema, resolver=resolver)
    if kind == "spdx":
        schema = json.loads(SPDX.read_text())
        return jsonschema.Draft7Validator(schema)
    sys.exit(f"validate.py: unknown kind {kind!r} (cyclonedx or spdx)")


def main():
    if len(sys.argv) < 3:
        sys.exit("usage: validate.py cyclonedx|spdx FILE...")
    check = validator(sys.argv[1])
    bad = 0
    for path in sys.argv[2:]:
        errors = sorted(check.iter_errors(json.loads(pathlib.Path(path).read_text())), key=lambda e: list(e.path))
        for e in errors[:10]:
            print(f"{path}: {'/'.join(map(str, e.path)) or '(root)'}: {e.message[:300]}", file=sys.stderr)
        bad += bool(errors)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
