#!/usr/bin/env python3
"""python3 statement.py BUNDLE: prints the in-toto statement of a Sigstore bundle's DSSE envelope."""
import base64, json, sys

bundle = json.load(open(sys.argv[1]))
print(json.dumps(json.loads(base64.b64decode(bundle["dsseEnvelope"]["payload"]))))
