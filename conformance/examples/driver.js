#!/usr/bin/env node
// A vector driver for "Agent protocols over SimpleX", in plain Node.js (no packages).
//
// It is an independent implementation of three families of the spec, written from the spec's
// text and the suite's published contracts (docs/conformance-contracts.md), not from the
// Python library of this repository:
//
//   - the Service RPC envelope: rpc.parse_request, rpc.format_request, rpc.parse_response,
//     rpc.format_response, rpc.classify_error;
//   - signing: rpc.decode_key, rpc.sign_payload, rpc.verify_signature, rpc.check_request_key;
//   - llms.txt: llmstxt.parse_entry, llmstxt.render_entry, llmstxt.render_section,
//     llmstxt.parse_document.
//
// Run it through the suite:
//
//   simplex-conformance vectors --impl "node conformance/examples/driver.js" -o out
//
// The line protocol: the suite's hello, then one request per line; this driver answers the
// hello with the operations above (the others are then UNTESTABLE, not failed) and every
// request with exactly one line.
//
// SPDX-License-Identifier: AGPL-3.0-only
'use strict';

const crypto = require('node:crypto');
const readline = require('node:readline');

const PROTOCOL = 'simplex-conformance/vectors/1';

/** An input refused with an error code of the operation's contract. */
class Refusal extends Error {
  constructor(code, message) {
    super(message || code);
    this.code = code;
  }
}

function refuse(code, message) {
  throw new Refusal(code, message);
}

// ---------------------------------------------------------------------------------- JSON text

/** The request's input as text: a string as given, raw bytes (input_b64) decoded as UTF-8. */
function inputText(request) {
  if (request.input_b64 === undefined) {
    return request.input;
  }
  const bytes = Buffer.from(request.input_b64, 'base64');
  try {
    // ignoreBOM keeps a byte-order mark in the text, so that it is refused as not JSON.
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    refuse('not_utf8', 'the bytes are not UTF-8');
  }
}

/** Strict JSON text to a value (JSON.parse refuses NaN, raw control characters, trailers). */
function parseJSONText(text) {
  if (typeof text !== 'string') {
    refuse('not_json', 'the input is not JSON text');
  }
  try {
    return JSON.parse(text);
  } catch {
    refuse('not_json', 'not JSON');
  }
}

function isObject(value) {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** Compact JSON with the members of every object sorted, as the core writes an envelope. */
function canonicalJSON(value) {
  if (Array.isArray(value)) {
    return '[' + value.map(canonicalJSON).join(',') + ']';
  }
  if (isObject(value)) {
    const keys = Object.keys(value).sort();
    return '{' + keys.map((k) => JSON.stringify(k) + ':' + canonicalJSON(value[k])).join(',') + '}';
  }
  return JSON.stringify(value);
}

// ------------------------------------------------------------------------ Service RPC envelope

// "A protocol name consists of lowercase ASCII letters, digits and hyphens."
const PROTOCOL_NAME = /^[a-z0-9-]+$/;

// The error codes the spec defines; any other code is unknown to the requester.
const KNOWN_CODES = new Set([
  'unsupported_protocol',
  'unsupported_version',
  'bad_request',
  'conversation_required',
  'too_large',
  'rate_limited',
  'internal',
]);

const UINT32_MAX = 4294967295;

function envelopeObject(request) {
  const value = parseJSONText(inputText(request));
  if (!isObject(value)) {
    refuse('not_an_object', 'an envelope is a JSON object');
  }
  return value;
}

function parseRequestEnvelope(request) {
  const envelope = envelopeObject(request);
  // The JTD schema: protocol (string) and request are required, requestKey is a string.
  if (typeof envelope.protocol !== 'string' || !('request' in envelope)) {
    refuse('schema', 'protocol (a string) and request are required');
  }
  if ('requestKey' in envelope && typeof envelope.requestKey !== 'string') {
    refuse('schema', 'requestKey is a string');
  }
  if (!PROTOCOL_NAME.test(envelope.protocol)) {
    refuse('bad_protocol_name', 'a protocol name is lowercase letters, digits and hyphens');
  }
  if (typeof envelope.requestKey === 'string') {
    try {
      decodeKey(envelope.requestKey);
    } catch (err) {
      if (err instanceof Refusal) {
        refuse('bad_request_key', `requestKey: ${err.code}`);
      }
      throw err;
    }
  }
  const form = { protocol: envelope.protocol, request: envelope.request };
  if ('version' in envelope) {
    form.version = envelope.version;
  }
  form.request_key = typeof envelope.requestKey === 'string' ? envelope.requestKey : null;
  form.extra = {};
  for (const [key, value] of Object.entries(envelope)) {
    if (!['protocol', 'request', 'version', 'requestKey'].includes(key)) {
      form.extra[key] = value;
    }
  }
  return form;
}

function formatRequestEnvelope(form) {
  const out = Object.assign({}, form.extra || {});
  out.protocol = form.protocol;
  out.request = form.request;
  if ('version' in form) {
    out.version = form.version;
  }
  if (form.request_key !== null && form.request_key !== undefined) {
    out.requestKey = form.request_key;
  }
  return canonicalJSON(out);
}

function parseResponseEnvelope(request) {
  const envelope = envelopeObject(request);
  const hasResponse = 'response' in envelope;
  const hasError = 'error' in envelope;
  let errorForm = null;
  if (hasError) {
    const error = envelope.error;
    if (!isObject(error) || typeof error.code !== 'string') {
      refuse('schema', 'error is an object with a string code');
    }
    if ('message' in error && typeof error.message !== 'string') {
      refuse('schema', 'error.message is a string');
    }
    if ('retryAfter' in error) {
      const wait = error.retryAfter;
      if (typeof wait !== 'number' || !Number.isInteger(wait) || wait < 0 || wait > UINT32_MAX) {
        refuse('schema', 'error.retryAfter is a uint32');
      }
    }
    errorForm = { code: error.code, known: KNOWN_CODES.has(error.code) };
    if ('message' in error) {
      errorForm.message = error.message;
    }
    if ('retryAfter' in error) {
      errorForm.retry_after = error.retryAfter;
    }
    errorForm.extra = {};
    for (const [key, value] of Object.entries(error)) {
      if (!['code', 'message', 'retryAfter'].includes(key)) {
        errorForm.extra[key] = value;
      }
    }
  }
  // "A response has exactly one of response and error."
  if (hasResponse && hasError) {
    refuse('both_response_and_error', 'a response has exactly one of response and error');
  }
  if (!hasResponse && !hasError) {
    refuse('neither_response_nor_error', 'a response has response or error');
  }
  const extra = {};
  for (const [key, value] of Object.entries(envelope)) {
    if (key !== 'response' && key !== 'error') {
      extra[key] = value;
    }
  }
  return hasError ? { error: errorForm, extra } : { response: envelope.response, extra };
}

function formatResponseEnvelope(form) {
  const out = Object.assign({}, form.extra || {});
  if ('error' in form) {
    const error = Object.assign({}, form.error.extra || {});
    error.code = form.error.code;
    if ('message' in form.error) {
      error.message = form.error.message;
    }
    if (form.error.retry_after !== undefined && form.error.retry_after !== null) {
      error.retryAfter = form.error.retry_after;
    }
    out.error = error;
  } else {
    out.response = form.response;
  }
  return canonicalJSON(out);
}

function classifyError(request) {
  const form = parseResponseEnvelope(request);
  if (!('error' in form)) {
    return { outcome: 'response' };
  }
  const wait = form.error.retry_after === undefined ? null : form.error.retry_after;
  // "A requester treats an unknown code as final, unless the error has retryAfter"; a known
  // code with retryAfter is repeated after it. rate_limited without retryAfter gives no wait
  // to repeat after: this driver treats it as final (either reading conforms).
  return {
    outcome: wait === null ? 'final' : 'retryable',
    code: form.error.code,
    known: form.error.known,
    retry_after: wait,
  };
}

// ------------------------------------------------------------------------------------ signing

// "base64url of the X.509 DER encoding of the key": SubjectPublicKeyInfo with the Ed25519
// algorithm (OID 1.3.101.112, no parameters, RFC 8410) and a 32-byte key.
const ED25519_OID = Buffer.from('2b6570', 'hex');
const SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');
const PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

function base64url(bytes) {
  // With '=' padding: the core writes signerKey so.
  return Buffer.from(bytes).toString('base64').replace(/\+/g, '-').replace(/\//g, '_');
}

function base64urlDecode(text) {
  if (typeof text !== 'string' || text.length === 0 || /[^A-Za-z0-9\-_+/=]/.test(text)) {
    refuse('bad_base64', 'not base64url text');
  }
  if (/[+/]/.test(text)) {
    refuse('bad_alphabet', 'the standard base64 alphabet, not base64url');
  }
  const body = text.replace(/=+$/, '');
  if (body.includes('=') || text.length - body.length > 2 || body.length % 4 === 1) {
    refuse('bad_base64', 'misplaced padding or an impossible length');
  }
  return Buffer.from(body, 'base64url');
}

/** One DER element at ``at``: its tag, its content and where the next element starts. */
function derElement(bytes, at) {
  if (at + 2 > bytes.length) {
    refuse('not_spki', 'a DER element is cut short');
  }
  const tag = bytes[at];
  let length = bytes[at + 1];
  let start = at + 2;
  if (length & 0x80) {
    // Only the keys' short lengths occur; a long form for a length under 128 is not DER.
    const count = length & 0x7f;
    if (count !== 1 || at + 3 > bytes.length || bytes[at + 2] < 0x80) {
      refuse('not_spki', 'DER lengths are minimal');
    }
    length = bytes[at + 2];
    start = at + 3;
  }
  if (start + length > bytes.length) {
    refuse('not_spki', 'a DER element is longer than the bytes');
  }
  return { tag, content: bytes.subarray(start, start + length), end: start + length };
}

function decodeKey(text) {
  const bytes = base64urlDecode(text);
  if (bytes[0] !== 0x30) {
    refuse(bytes.length === 32 ? 'raw_key' : 'not_spki', 'not an X.509 SubjectPublicKeyInfo');
  }
  const outer = derElement(bytes, 0);
  if (outer.end !== bytes.length) {
    refuse('trailing_bytes', 'bytes after the key');
  }
  const algorithm = derElement(outer.content, 0);
  if (algorithm.tag !== 0x30) {
    refuse('not_spki', 'no AlgorithmIdentifier');
  }
  const oid = derElement(algorithm.content, 0);
  if (oid.tag !== 0x06) {
    refuse('not_spki', 'no algorithm OID');
  }
  if (!oid.content.equals(ED25519_OID)) {
    refuse('wrong_algorithm', 'not an Ed25519 key');
  }
  if (oid.end !== algorithm.content.length) {
    refuse('not_spki', 'Ed25519 has no algorithm parameters');
  }
  const bits = derElement(outer.content, algorithm.end);
  if (bits.tag !== 0x03 || bits.end !== outer.content.length || bits.content.length < 1) {
    refuse('not_spki', 'no key BIT STRING');
  }
  if (bits.content[0] !== 0) {
    refuse('not_spki', 'a key BIT STRING has no unused bits');
  }
  const raw = bits.content.subarray(1);
  if (raw.length !== 32) {
    refuse('bad_key_length', 'an Ed25519 key has 32 bytes');
  }
  const der = Buffer.concat([SPKI_PREFIX, raw]);
  return { raw, der, canonical: base64url(der) };
}

function hexBytes(text, what) {
  if (typeof text !== 'string' || text.length % 2 !== 0 || /[^0-9a-fA-F]/.test(text)) {
    refuse('bad_signature', `${what} is not hex`);
  }
  return Buffer.from(text, 'hex');
}

function payloadOf(input) {
  return 'payload_hex' in input
    ? hexBytes(input.payload_hex, 'payload_hex')
    : Buffer.from(input.payload, 'utf8');
}

/** What the agent signs: SHA3-256("SimpleXService" || AD) || payload. */
function signedBytes(ad, payload) {
  const binding = crypto.createHash('sha3-256').update('SimpleXService').update(ad).digest();
  return Buffer.concat([binding, payload]);
}

function verifySignature(input, args) {
  const key = decodeKey(args.key.request_key);
  const signature = hexBytes(input.signature_hex, 'signature_hex');
  const ad = hexBytes(input.ad_hex, 'ad_hex');
  if (signature.length !== 64) {
    refuse('bad_signature_length', 'an Ed25519 signature has 64 bytes');
  }
  let good = false;
  try {
    const publicKey = crypto.createPublicKey({ key: key.der, format: 'der', type: 'spki' });
    good = crypto.verify(null, signedBytes(ad, payloadOf(input)), publicKey, signature);
  } catch {
    good = false;
  }
  if (!good) {
    refuse('bad_signature', 'the signature does not verify');
  }
  return { signer_key: key.canonical };
}

function signPayload(input) {
  const seed = Buffer.from(input.seed_hex, 'hex');
  const privateKey = crypto.createPrivateKey({
    key: Buffer.concat([PKCS8_PREFIX, seed]),
    format: 'der',
    type: 'pkcs8',
  });
  const spki = crypto.createPublicKey(privateKey).export({ type: 'spki', format: 'der' });
  const ad = Buffer.from(input.ad_hex, 'hex');
  const signature = crypto.sign(null, signedBytes(ad, payloadOf(input)), privateKey);
  return { request_key: base64url(spki), signature_hex: signature.toString('hex') };
}

function checkRequestKey(request, args) {
  const form = parseRequestEnvelope(request);
  const signer = args.signer_key === undefined ? null : args.signer_key;
  // "A responder MUST answer bad_request to a request whose requestKey differs from
  // signerKey, and to an unsigned request with requestKey." Keys compare decoded.
  if (form.request_key !== null) {
    if (signer === null) {
      refuse('bad_request', 'an unsigned request with requestKey');
    }
    if (!decodeKey(form.request_key).raw.equals(decodeKey(signer).raw)) {
      refuse('bad_request', 'requestKey differs from signerKey');
    }
  }
  return { request_key: form.request_key, signed: signer !== null };
}

// ------------------------------------------------------------------------------------ llms.txt

// The notes' forms (spec, Addresses in llms.txt):
//   <network> updates for <audience>[, <frequency>]. <info>
//   <network> group for <audience>. <info>
//   <network> [business ]contact for <audience>[, <protocol>]*. <info>
const AUDIENCES = ['people', 'agents', 'people and agents'];
// The changefreq values of the Sitemaps protocol.
const FREQUENCIES = ['always', 'hourly', 'daily', 'weekly', 'monthly', 'yearly', 'never'];
const TYPES = ['updates', 'group', 'contact', 'business contact'];
// The link kind each SimpleX type needs: a channel, a group, a contact address.
const KIND_OF_TYPE = { updates: 'channel', group: 'group', contact: 'contact', 'business contact': 'contact' };
const SHORT_KINDS = { a: 'contact', c: 'channel', g: 'group', i: 'invitation', r: 'relay' };

// C0 controls but tab, DEL, C1 controls and the Unicode line and paragraph separators: a
// list item is one line of text.
const CONTROL = /[\u0000-\u0008\u000a-\u001f\u007f-\u009f\u2028\u2029]/;
const TYPE_WORD = /(?<=^|\s)(business\s+contact|updates|group|contact)\s+for(?=[\s,.]|$)/i;
const MARKDOWN_PUNCTUATION = /[!-/:-@[-`{-~]/;

/** The kind of a SimpleX link, ``{error}`` for a SimpleX link with a broken key, else null. */
function simplexLink(url) {
  let m = /^(?:https:\/\/[^/#?\s]+\/|simplex:\/)([a-z])\/?#([^?]*)(?:\?.*)?$/.exec(url);
  if (m && SHORT_KINDS[m[1]] !== undefined) {
    const kind = SHORT_KINDS[m[1]];
    const key = kind === 'invitation' ? /^[A-Za-z0-9_-]+\/[A-Za-z0-9_-]{43}$/ : /^[A-Za-z0-9_-]{43}$/;
    return key.test(m[2]) ? { kind } : { error: 'bad_link_key' };
  }
  m = /^(?:https:\/\/simplex\.chat\/|simplex:\/)(contact|invitation)\/?#\/?\?(.*)$/.exec(url);
  if (m) {
    if (m[1] === 'invitation') {
      return { kind: 'invitation' };
    }
    // A full contact link whose data says it is a group's is a group link.
    const data = new URLSearchParams(m[2]).get('data');
    try {
      return { kind: data && JSON.parse(data).type === 'group' ? 'group' : 'contact' };
    } catch {
      return { kind: 'contact' };
    }
  }
  return null;
}

function unescapeMarkdown(text) {
  return text.replace(/\\(.)/g, (all, ch) => (MARKDOWN_PUNCTUATION.test(ch) ? ch : all));
}

/** ``[title](url)`` at the start of ``rest``: the title, the url and what follows. */
function markdownLink(rest) {
  if (rest[0] !== '[') {
    refuse('not_a_link', 'an item is a Markdown link');
  }
  let i = 1;
  let depth = 1;
  for (; i < rest.length && depth > 0; i += 1) {
    if (rest[i] === '\\') {
      i += 1;
    } else if (rest[i] === '[') {
      depth += 1;
    } else if (rest[i] === ']') {
      depth -= 1;
    }
  }
  if (depth > 0 || rest[i] !== '(') {
    refuse('not_a_link', 'an item is a Markdown link [title](url)');
  }
  const title = unescapeMarkdown(rest.slice(1, i - 1));
  let j = i + 1;
  let url;
  if (rest[j] === '<') {
    const close = rest.indexOf('>', j);
    if (close < 0 || rest[close + 1] !== ')') {
      refuse('bad_url', 'an unclosed <url>');
    }
    url = rest.slice(j + 1, close);
    j = close + 2;
  } else {
    depth = 1;
    let k = j;
    for (; k < rest.length; k += 1) {
      const ch = rest[k];
      if (ch === '\\') {
        k += 1;
      } else if (/\s/.test(ch)) {
        refuse('bad_url', 'a link destination has no spaces (and no title)');
      } else if (ch === '(') {
        depth += 1;
      } else if (ch === ')') {
        depth -= 1;
        if (depth === 0) {
          break;
        }
      }
    }
    if (k >= rest.length) {
      refuse('bad_url', 'an unclosed link destination');
    }
    url = unescapeMarkdown(rest.slice(j, k));
    j = k + 1;
  }
  if (url === '' || /\s/.test(url)) {
    refuse('bad_url', 'a link needs a destination without spaces');
  }
  return { title, url, after: rest.slice(j) };
}

function parseEntry(text, args) {
  if (typeof text !== 'string') {
    refuse('not_text', 'an entry is a line of text');
  }
  if (CONTROL.test(text)) {
    refuse('control_character', 'a control character in the item');
  }
  const item = /^ {0,3}[-*+][ \t]+/.exec(text);
  if (!item) {
    refuse('not_a_list_item', 'an entry is an item of a list');
  }
  const link = markdownLink(text.slice(item[0].length));
  const colon = /^[ \t]*:/.exec(link.after);
  if (!colon) {
    refuse('missing_colon', 'the link is followed by a colon and the notes');
  }
  const notes = link.after.slice(colon[0].length);
  if (notes.trim() === '') {
    refuse('missing_notes', 'an entry has notes');
  }
  const typed = TYPE_WORD.exec(notes);
  if (!typed) {
    refuse('bad_notes', 'the notes name a type (updates, group, contact, business contact) and "for"');
  }
  let network = notes.slice(0, typed.index).trim().replace(/\s+/g, ' ');
  if (network === '') {
    refuse('missing_network', 'the notes begin with the network');
  }
  if (network.toLowerCase() === 'simplex') {
    network = 'SimpleX';
  }
  const type = typed[1].toLowerCase().replace(/\s+/g, ' ');
  const after = notes.slice(typed.index + typed[0].length);
  const dot = after.indexOf('.');
  if (dot >= 0 && dot + 1 < after.length && !/\s/.test(after[dot + 1])) {
    refuse('missing_space_before_info', 'a space follows the period before the info');
  }
  const head = dot >= 0 ? after.slice(0, dot) : after;
  const info = dot >= 0 ? after.slice(dot + 1).trim() : '';
  const parts = head.split(',').map((p) => p.trim().replace(/\s+/g, ' '));
  const audience = parts[0].toLowerCase();
  if (!AUDIENCES.includes(audience)) {
    refuse('bad_audience', 'the audience is people, agents, or people and agents');
  }
  let frequency = null;
  const protocols = [];
  const params = parts.slice(1);
  if (type === 'updates') {
    if (params.length > 1) {
      refuse('unexpected_parameter', 'updates have at most a frequency');
    }
    if (params.length === 1) {
      frequency = params[0].toLowerCase();
      if (!FREQUENCIES.includes(frequency)) {
        refuse('bad_frequency', 'a frequency is a Sitemaps changefreq value');
      }
    }
  } else if (type === 'group') {
    if (params.length > 0) {
      refuse('unexpected_parameter', 'a group entry has neither frequency nor protocols');
    }
  } else {
    const seen = new Set();
    for (const name of params) {
      if (name === '') {
        refuse('empty_protocol', 'an empty protocol in the list');
      }
      if (!/^[A-Za-z0-9-]+$/.test(name)) {
        refuse('bad_protocol', 'a protocol name, in any letter case');
      }
      // Names compare without letter case: a repeat serves the same protocol once.
      if (!seen.has(name.toLowerCase())) {
        seen.add(name.toLowerCase());
        protocols.push(name);
      }
    }
  }
  const entry = { title: link.title, url: link.url, network, type, audience, frequency, protocols, info };
  if (args.validate !== false) {
    const found = simplexLink(entry.url);
    if (network === 'SimpleX') {
      if (found === null) {
        refuse('not_a_simplex_link', 'a SimpleX entry has a SimpleX link');
      }
      if (found.error) {
        refuse(found.error, 'the link is broken');
      }
      if (found.kind !== KIND_OF_TYPE[type]) {
        refuse('link_type_mismatch', `${type} needs a ${KIND_OF_TYPE[type]} link, not a ${found.kind} link`);
      }
    } else if (found !== null) {
      refuse('network_mismatch', 'a SimpleX link in an entry of another network');
    }
  }
  return entry;
}

function renderEntry(entry, args) {
  const strings = ['title', 'url', 'network', 'type', 'audience', 'info'];
  if (
    !isObject(entry) ||
    strings.some((k) => typeof entry[k] !== 'string') ||
    !(entry.frequency === null || typeof entry.frequency === 'string') ||
    !Array.isArray(entry.protocols) ||
    entry.protocols.some((p) => typeof p !== 'string') ||
    !TYPES.includes(entry.type)
  ) {
    refuse('bad_entry_json', 'not an entry of the llmstxt.parse_entry form');
  }
  if ([...strings.map((k) => entry[k]), ...entry.protocols].some((v) => CONTROL.test(v))) {
    refuse('control_character', 'an item is one line of text');
  }
  if (!AUDIENCES.includes(entry.audience)) {
    refuse('bad_audience', 'the audience is people, agents, or people and agents');
  }
  if (entry.url === '' || /\s/.test(entry.url)) {
    refuse('bad_url', 'a link destination without spaces');
  }
  if (entry.protocols.some((p) => !/^[A-Za-z0-9-]+$/.test(p))) {
    refuse('bad_protocol', 'a protocol name');
  }
  if (entry.protocols.length > 0 && !entry.type.endsWith('contact')) {
    refuse('unexpected_parameter', 'only contacts list protocols');
  }
  if (entry.frequency !== null && entry.type !== 'updates') {
    refuse('not_representable', 'only updates have a frequency');
  }
  if (entry.frequency !== null && !FREQUENCIES.includes(entry.frequency)) {
    refuse('bad_frequency', 'a frequency is a Sitemaps changefreq value');
  }
  if (entry.info !== entry.info.trim()) {
    refuse('not_representable', 'the info would not read back with its spaces');
  }
  const network = entry.network.toLowerCase() === 'simplex' ? 'SimpleX' : entry.network;
  const title = entry.title.replace(/[\\[\]]/g, '\\$&');
  const url = entry.url.replace(/[\\()]/g, '\\$&');
  let head = `${network} ${entry.type} for ${entry.audience}`;
  if (entry.frequency !== null) {
    head += `, ${entry.frequency}`;
  }
  for (const name of entry.protocols) {
    head += `, ${name}`;
  }
  const line = `- [${title}](${url}): ${head}.` + (entry.info ? ` ${entry.info}` : '');
  // An entry that would not read back the same is refused, not written.
  const back = parseEntry(line, { validate: args.validate });
  if (canonicalJSON(back) !== canonicalJSON(Object.assign({}, entry, { network }))) {
    refuse('not_representable', 'the line would not read back as this entry');
  }
  return line;
}

function renderSection(entries) {
  if (!Array.isArray(entries)) {
    refuse('bad_entry_json', 'a section is a list of entries');
  }
  return '## Communications\n\n' + entries.map((e) => renderEntry(e, {}) + '\n').join('');
}

// ------------------------------------------------------------------------------------ dispatch

const OPERATIONS = {
  'rpc.parse_request': (request) => parseRequestEnvelope(request),
  'rpc.format_request': (request) => formatRequestEnvelope(request.input),
  'rpc.parse_response': (request) => parseResponseEnvelope(request),
  'rpc.format_response': (request) => formatResponseEnvelope(request.input),
  'rpc.classify_error': (request) => classifyError(request),
  'rpc.decode_key': (request) => {
    const key = decodeKey(inputText(request));
    return { raw_hex: key.raw.toString('hex'), spki_der_hex: key.der.toString('hex'), canonical: key.canonical };
  },
  'rpc.verify_signature': (request, args) => verifySignature(request.input, args),
  'rpc.sign_payload': (request) => signPayload(request.input),
  'rpc.check_request_key': (request, args) => checkRequestKey(request, args),
  'llmstxt.parse_entry': (request, args) => parseEntry(inputText(request), args),
  'llmstxt.render_entry': (request, args) => renderEntry(request.input, args),
  'llmstxt.render_section': (request) => renderSection(request.input),
};

function answer(request) {
  const run = OPERATIONS[request.op];
  if (run === undefined) {
    return { id: request.id, skip: `operation ${request.op} is not implemented` };
  }
  try {
    return { id: request.id, ok: true, value: run(request, request.args || {}) };
  } catch (err) {
    if (err instanceof Refusal) {
      return { id: request.id, ok: false, error: { code: err.code, message: err.message } };
    }
    return { id: request.id, exception: String((err && err.stack) || err) };
  }
}

function main() {
  const lines = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
  let greeted = false;
  lines.on('line', (line) => {
    if (!line.trim()) {
      return;
    }
    const message = JSON.parse(line);
    let reply;
    if (!greeted) {
      if (message.hello !== PROTOCOL) {
        process.stderr.write(`unsupported driver protocol ${message.hello}\n`);
        process.exit(2);
      }
      greeted = true;
      reply = {
        hello: PROTOCOL,
        implementation: { name: 'simplex-conformance example driver', version: '1', language: 'javascript' },
        operations: Object.keys(OPERATIONS).sort(),
      };
    } else {
      reply = answer(message);
    }
    // JSON.stringify writes lone surrogates as escapes, so every line is valid UTF-8.
    process.stdout.write(JSON.stringify(reply) + '\n');
  });
}

main();
