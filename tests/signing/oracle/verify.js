#!/usr/bin/env node
// node verify.js BUNDLE.json PUBKEY.pem SUBJECT_DIGEST
// Verifies a key-based Sigstore bundle (v0.3, DSSE envelope of an in-toto Statement v1) offline with the
// sigstore project's own verifier, under the one public key given, and checks that the statement's
// subject is SUBJECT_DIGEST (sha256 hex). Exit 0 verified; exit 1 refused, the reason on stderr.
'use strict';
const crypto = require('crypto');
const fs = require('fs');
const { bundleFromJSON, assertBundleLatest, BUNDLE_V03_MEDIA_TYPE } = require('@sigstore/bundle');
const { Verifier, toSignedEntity } = require('@sigstore/verify');

function refuse(reason) {
  process.stderr.write(`verify.js: refused: ${reason}\n`);
  process.exit(1);
}

const [bundlePath, keyPath, subjectDigest] = process.argv.slice(2);
if (!bundlePath || !keyPath || !subjectDigest || process.argv.length !== 5) {
  process.stderr.write('usage: node verify.js BUNDLE.json PUBKEY.pem SUBJECT_DIGEST\n');
  process.exit(2);
}

try {
  const json = JSON.parse(fs.readFileSync(bundlePath, 'utf8'));
  if (json.mediaType !== BUNDLE_V03_MEDIA_TYPE) refuse(`mediaType ${json.mediaType}, not ${BUNDLE_V03_MEDIA_TYPE}`);
  const bundle = bundleFromJSON(json);
  assertBundleLatest(bundle);
  if (bundle.content.$case !== 'dsseEnvelope') refuse('the bundle holds no dsseEnvelope');
  if (bundle.verificationMaterial.content.$case !== 'publicKey') refuse('the bundle names no public key hint');

  // The key id (hint) convention: lowercase hex SHA-256 of the key's DER SubjectPublicKeyInfo.
  const key = crypto.createPublicKey(fs.readFileSync(keyPath));
  const keyId = crypto.createHash('sha256').update(key.export({ type: 'spki', format: 'der' })).digest('hex');
  const trust = {
    certificateAuthorities: [],
    timestampAuthorities: [],
    tlogs: [],
    ctlogs: [],
    publicKey: (hint) => {
      if (hint !== keyId) throw new Error(`signed by key ${hint}, not the trusted key ${keyId}`);
      return { publicKey: key, validFor: () => true };
    },
  };
  new Verifier(trust, { tlogThreshold: 0, ctlogThreshold: 0, tsaThreshold: 0 }).verify(toSignedEntity(bundle));

  const env = bundle.content.dsseEnvelope;
  if (env.payloadType !== 'application/vnd.in-toto+json') refuse(`payloadType ${env.payloadType}`);
  const statement = JSON.parse(env.payload.toString('utf8'));
  if (statement._type !== 'https://in-toto.io/Statement/v1') refuse(`statement _type ${statement._type}`);
  const subjects = statement.subject || [];
  if (!subjects.some((s) => s.digest && s.digest.sha256 === subjectDigest)) {
    refuse(`statement subject ${JSON.stringify(subjects.map((s) => s.digest))} is not sha256 ${subjectDigest}`);
  }
  process.stdout.write(`verified: ${bundlePath} signed by ${keyId}\n`);
} catch (e) {
  refuse(e.message || String(e));
}
