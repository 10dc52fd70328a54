#!/usr/bin/env node
// A bot in plain Node.js (version 20, no packages) that serves MCP over SimpleX, written from
// "Agent protocols over SimpleX" and the chat core's WebSocket API, for the live checks:
//
//     simplex-conformance bot --command "node conformance/examples/bot.js"
//
// The suite starts it against a simulated chat core and gives it the core's WebSocket URL in
// SIMPLEX_CONFORMANCE_CORE; by hand, pass the URL as the first argument instead
// (node conformance/examples/bot.js ws://127.0.0.1:5225/bot). The bot makes its user, declares
// `mcp` over both transports in its profile, creates its contact address (with the ratchet
// keys Service RPC needs) and then answers:
//
// - chat transport: a text that is exactly `/_call [@member] mcp <request>` gets the answer as
//   replies quoting the command (progress notifications first, the JSON-RPC response last);
//   another protocol gets silence, a request that is not a JSON object the JSON-RPC parse
//   error; in a group, a command that mentions another member is left to that member;
// - Service RPC: a `serviceRequest` event gets one `/_service_response` with an envelope that
//   holds either `response` (the JSON-RPC response) or `error` (an envelope error).
//
// It implements the suite's fixture tools (docs/conformance-live.md, "The fixture") and its
// rate limit. It keeps nothing on disk. SPDX-License-Identifier: AGPL-3.0-only

"use strict";

const crypto = require("node:crypto");
const net = require("node:net");

const REVISION = "2026-07-28";
const DISPLAY_NAME = "node-conformance";
// The chat core refuses a chat message whose encoded JSON exceeds 15,602 bytes; the reply's
// text is the largest part of it, and the rest (the message's own JSON) stays below 600 bytes.
const MAX_REPLY_TEXT_BYTES = 15_000;
// A Service RPC response should stay within 10,000 bytes of JSON (RPC-LIM-3).
const MAX_RESPONSE_JSON_BYTES = 10_000;
// The responder's window for a Service RPC answer is 180 s (RPC-LIM-1); a call that would take
// longer is refused at once with conversation_required, well inside it.
const RPC_WINDOW_S = 150;
// The fixture's rate limit: 5 signed requests per key in 60 s.
const RATE_LIMIT = { requests: 5, windowS: 60 };

// ------------------------------------------------------------------ WebSocket client (RFC 6455)

// Node 20 has no WebSocket client without a flag, so this is the least of one: ws:// only,
// text frames, masked as a client must mask, fragments joined, pings answered.
class WebSocketClient {
  constructor(url, onText, onClose) {
    this.url = new URL(url);
    if (this.url.protocol !== "ws:") throw new Error(`not a ws:// URL: ${url}`);
    this.onText = onText;
    this.onClose = onClose;
    this.buffer = Buffer.alloc(0);
    this.fragments = [];
    this.open = false;
  }

  connect() {
    return new Promise((resolve, reject) => {
      const key = crypto.randomBytes(16).toString("base64");
      const expected = crypto
        .createHash("sha1")
        .update(key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11")
        .digest("base64");
      const host = this.url.hostname.replace(/^\[(.*)\]$/, "$1");
      this.socket = net.connect(Number(this.url.port || 80), host);
      this.socket.once("error", reject);
      this.socket.once("connect", () => {
        const path = (this.url.pathname || "/") + this.url.search;
        this.socket.write(
          `GET ${path} HTTP/1.1\r\nHost: ${this.url.host}\r\nUpgrade: websocket\r\n` +
            `Connection: Upgrade\r\nSec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: 13\r\n\r\n`,
        );
      });
      let handshake = Buffer.alloc(0);
      const onData = (chunk) => {
        if (!this.open) {
          handshake = Buffer.concat([handshake, chunk]);
          const end = handshake.indexOf("\r\n\r\n");
          if (end < 0) return;
          const head = handshake.subarray(0, end).toString("latin1");
          const accept = /^sec-websocket-accept:\s*(\S+)/im.exec(head);
          if (!/^HTTP\/1\.1 101/.test(head) || !accept || accept[1] !== expected) {
            reject(new Error(`the core refused the WebSocket upgrade: ${head.split("\r\n")[0]}`));
            this.socket.destroy();
            return;
          }
          this.open = true;
          this.socket.removeListener("error", reject);
          this.socket.on("error", () => {});
          this.socket.on("close", () => this.onClose());
          resolve();
          chunk = handshake.subarray(end + 4);
        }
        this.buffer = Buffer.concat([this.buffer, chunk]);
        this.readFrames();
      };
      this.socket.on("data", onData);
    });
  }

  readFrames() {
    for (;;) {
      const b = this.buffer;
      if (b.length < 2) return;
      const fin = (b[0] & 0x80) !== 0;
      const opcode = b[0] & 0x0f;
      const masked = (b[1] & 0x80) !== 0;
      let length = b[1] & 0x7f;
      let offset = 2;
      if (length === 126) {
        if (b.length < 4) return;
        length = b.readUInt16BE(2);
        offset = 4;
      } else if (length === 127) {
        if (b.length < 10) return;
        length = Number(b.readBigUInt64BE(2));
        offset = 10;
      }
      const maskOffset = offset;
      if (masked) offset += 4;
      if (b.length < offset + length) return;
      let payload = b.subarray(offset, offset + length);
      if (masked) {
        const mask = b.subarray(maskOffset, maskOffset + 4);
        payload = Buffer.from(payload.map((byte, i) => byte ^ mask[i % 4]));
      }
      this.buffer = b.subarray(offset + length);
      if (opcode === 0x8) {
        this.sendFrame(0x8, Buffer.alloc(0));
        this.socket.end();
        return;
      }
      if (opcode === 0x9) {
        this.sendFrame(0xa, payload);
        continue;
      }
      if (opcode === 0x1 || opcode === 0x0) {
        this.fragments.push(payload);
        if (fin) {
          const text = Buffer.concat(this.fragments).toString("utf8");
          this.fragments = [];
          this.onText(text);
        }
      }
    }
  }

  sendFrame(opcode, payload) {
    let header;
    if (payload.length < 126) {
      header = Buffer.from([0x80 | opcode, 0x80 | payload.length]);
    } else if (payload.length < 65536) {
      header = Buffer.alloc(4);
      header[0] = 0x80 | opcode;
      header[1] = 0x80 | 126;
      header.writeUInt16BE(payload.length, 2);
    } else {
      header = Buffer.alloc(10);
      header[0] = 0x80 | opcode;
      header[1] = 0x80 | 127;
      header.writeBigUInt64BE(BigInt(payload.length), 2);
    }
    const mask = crypto.randomBytes(4);
    const body = Buffer.from(payload.map((byte, i) => byte ^ mask[i % 4]));
    this.socket.write(Buffer.concat([header, mask, body]));
  }

  sendText(text) {
    this.sendFrame(0x1, Buffer.from(text, "utf8"));
  }

  close() {
    if (this.open) this.sendFrame(0x8, Buffer.alloc(0));
    this.socket.end();
  }
}

// ------------------------------------------------------------------ the chat core's API

// Commands go out as {"corrId", "cmd"}; the response comes back with the same corrId, and
// events come without one.
class ChatCore {
  constructor(url, onEvent) {
    this.pending = new Map();
    this.nextId = 1;
    this.onEvent = onEvent;
    this.ws = new WebSocketClient(
      url,
      (text) => this.receive(text),
      () => {
        console.error("node bot: the chat core closed the connection");
        process.exit(1);
      },
    );
  }

  connect() {
    return this.ws.connect();
  }

  receive(text) {
    let frame;
    try {
      frame = JSON.parse(text);
    } catch {
      return;
    }
    const waiter = typeof frame.corrId === "string" ? this.pending.get(frame.corrId) : undefined;
    if (waiter !== undefined) {
      this.pending.delete(frame.corrId);
      waiter(frame.resp);
    } else if (frame.resp && typeof frame.resp === "object") {
      this.onEvent(frame.resp);
    }
  }

  command(cmd) {
    const corrId = String(this.nextId++);
    return new Promise((resolve) => {
      this.pending.set(corrId, resolve);
      this.ws.sendText(JSON.stringify({ corrId, cmd }));
    });
  }

  // A command whose response must have the given type; anything else stops the bot.
  async expect(cmd, type) {
    const resp = await this.command(cmd);
    if (!resp || resp.type !== type) {
      throw new Error(`${cmd.split(" ")[0]} answered ${JSON.stringify(resp).slice(0, 300)}`);
    }
    return resp;
  }
}

// ------------------------------------------------------------------ MCP (revision 2026-07-28)

const TOOLS = [
  {
    name: "conformance_echo",
    description: "Returns the text it is given.",
    inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
  },
  {
    name: "conformance_oversize",
    description: "Returns a text of `size` characters.",
    inputSchema: { type: "object", properties: { size: { type: "integer", default: 20000 } } },
  },
  {
    name: "conformance_slow",
    description: "Waits `seconds`, then answers.",
    inputSchema: { type: "object", properties: { seconds: { type: "number" } } },
  },
  {
    name: "conformance_progress",
    description: "Sends `steps` progress notifications, then answers.",
    inputSchema: { type: "object", properties: { steps: { type: "integer", default: 3 } } },
  },
  {
    name: "conformance_needs_conversation",
    description: "Answers only in a conversation.",
    inputSchema: { type: "object", properties: {} },
  },
  {
    name: "conformance_input_required",
    description: "Asks for a confirmation, then answers.",
    inputSchema: { type: "object", properties: {} },
  },
];

const CONFIRM_KEY = "confirm";
// requestState is sealed with this process's key and names the caller it was given to, so that
// another caller cannot continue the call (MCP-MSG-6).
const STATE_KEY = crypto.randomBytes(32);

function sealState(caller) {
  const body = Buffer.from(JSON.stringify({ caller, nonce: crypto.randomUUID() })).toString(
    "base64url",
  );
  const tag = crypto.createHmac("sha256", STATE_KEY).update(body).digest("base64url");
  return `${body}.${tag}`;
}

function openState(state, caller) {
  if (typeof state !== "string") return false;
  const [body, tag] = state.split(".");
  if (!body || !tag) return false;
  const good = crypto.createHmac("sha256", STATE_KEY).update(body).digest("base64url");
  if (tag.length !== good.length || !crypto.timingSafeEqual(Buffer.from(tag), Buffer.from(good))) {
    return false;
  }
  try {
    return JSON.parse(Buffer.from(body, "base64url").toString("utf8")).caller === caller;
  } catch {
    return false;
  }
}

function rpcError(id, code, message, data) {
  const error = { code, message };
  if (data !== undefined) error.data = data;
  return { jsonrpc: "2.0", id, error };
}

function rpcResult(id, result) {
  return { jsonrpc: "2.0", id, result: { ...result, resultType: result.resultType || "complete" } };
}

function textResult(id, text) {
  return rpcResult(id, { content: [{ type: "text", text }], isError: false });
}

// An envelope error (Service RPC only): the call does not run here.
class EnvelopeError extends Error {
  constructor(code, message) {
    super(message);
    this.code = code;
  }
}

const sleep = (seconds) => new Promise((resolve) => setTimeout(resolve, seconds * 1000));

// Answers one MCP request. `call` says where it came from: `transport` ("chat" or "rpc"),
// `caller` (who may continue an input_required result) and `notify(message)` for messages
// sent before the response (chat only). Returns the JSON-RPC response, or null for a
// notification.
async function handleMcp(request, call) {
  if (request === null || typeof request !== "object" || Array.isArray(request)) {
    return rpcError(null, -32600, "Invalid Request");
  }
  const id = request.id === undefined ? null : request.id;
  if (request.jsonrpc !== "2.0" || typeof request.method !== "string") {
    return rpcError(id, -32600, "Invalid Request");
  }
  if (request.id === undefined) return null;
  const params = request.params && typeof request.params === "object" ? request.params : {};
  if (request.method === "initialize") {
    // The 2026-07-28 revision has no initialize handshake (MCP-VER-4).
    return rpcError(id, -32022, "Unsupported protocol version", {
      supported: [REVISION],
      requested: params.protocolVersion,
    });
  }
  const meta = params._meta && typeof params._meta === "object" ? params._meta : {};
  const revision = meta["io.modelcontextprotocol/protocolVersion"];
  if (revision !== REVISION) {
    return rpcError(id, -32022, "Unsupported protocol version", {
      supported: [REVISION],
      requested: revision === undefined ? null : revision,
    });
  }
  switch (request.method) {
    case "server/discover":
      return rpcResult(id, {
        supportedVersions: [REVISION],
        capabilities: { tools: { listChanged: false } },
        serverInfo: { name: DISPLAY_NAME, version: "1.0.0" },
      });
    case "tools/list":
      return rpcResult(id, { tools: TOOLS });
    case "tools/call":
      return callTool(id, params, call);
    default:
      return rpcError(id, -32601, "Method not found", request.method);
  }
}

async function callTool(id, params, call) {
  const args = params.arguments && typeof params.arguments === "object" ? params.arguments : {};
  switch (params.name) {
    case "conformance_echo":
      return textResult(id, String(args.text ?? ""));
    case "conformance_oversize":
      return textResult(id, "x".repeat(Number.isInteger(args.size) ? args.size : 20000));
    case "conformance_slow": {
      const seconds = typeof args.seconds === "number" ? args.seconds : 1;
      if (call.transport === "rpc" && seconds > RPC_WINDOW_S) {
        throw new EnvelopeError("conversation_required", "this call outlasts the response window");
      }
      await sleep(seconds);
      return textResult(id, "slept");
    }
    case "conformance_progress": {
      const steps = Number.isInteger(args.steps) ? args.steps : 3;
      const token = params._meta ? params._meta.progressToken : undefined;
      if (token !== undefined && call.notify) {
        for (let step = 1; step <= steps; step++) {
          await call.notify({
            jsonrpc: "2.0",
            method: "notifications/progress",
            params: { progressToken: token, progress: step, total: steps },
          });
        }
      }
      return textResult(id, "done");
    }
    case "conformance_needs_conversation":
      if (call.transport === "rpc") {
        throw new EnvelopeError("conversation_required", "this tool answers in a conversation");
      }
      return textResult(id, "in a conversation");
    case "conformance_input_required": {
      if (params.requestState === undefined) {
        return rpcResult(id, {
          resultType: "input_required",
          inputRequests: {
            [CONFIRM_KEY]: {
              method: "elicitation/create",
              params: {
                mode: "form",
                message: "Confirm the conformance check?",
                requestedSchema: {
                  type: "object",
                  properties: { confirm: { type: "boolean" } },
                  required: ["confirm"],
                },
              },
            },
          },
          requestState: sealState(call.caller),
        });
      }
      if (!openState(params.requestState, call.caller)) {
        return rpcError(id, -32602, "Invalid or expired requestState");
      }
      const answer = (params.inputResponses || {})[CONFIRM_KEY] || {};
      const confirmed = answer.action === "accept" && answer.content && answer.content.confirm;
      return textResult(id, confirmed ? "confirmed" : "declined");
    }
    default:
      return rpcError(id, -32602, `Unknown tool: ${params.name}`);
  }
}

// ------------------------------------------------------------------ the chat transport

// `/_call`, an optional mention (`@name` or `@'name with spaces'`), the protocol, the request:
// one space between the parts, and the command is the whole text (CALL-CMD-1, CALL-CMD-3,
// CALL-CMD-6).
const CALL_RE = /^\/_call (?:@(?:'((?:[^']|'')+)'|(\S+)) )?(\S+) ([\s\S]*)$/;

function parseCall(text) {
  const match = CALL_RE.exec(text);
  if (!match) return null;
  const mention = match[1] !== undefined ? match[1].replace(/''/g, "'") : match[2];
  return { mention, protocol: match[3], request: match[4] };
}

function replyBytes(message) {
  return Buffer.byteLength(JSON.stringify(JSON.stringify(message)), "utf8");
}

class Bot {
  constructor(core) {
    this.core = core;
    this.userId = null;
    this.rateLimits = new Map();
  }

  async start() {
    const profile = {
      displayName: DISPLAY_NAME,
      fullName: "",
      shortDescr: "A Node.js bot serving the conformance fixture over MCP",
      peerType: "bot",
      preferences: {
        protocols: { mcp: { versions: [REVISION], transports: { chat: true, rpc: true } } },
      },
    };
    const active = await this.core.command("/user");
    if (active && active.type === "activeUser") {
      this.userId = active.user.userId;
      await this.core.command(`/_profile ${this.userId} ${JSON.stringify(profile)}`);
    } else {
      const made = await this.core.expect(
        `/_create user ${JSON.stringify({ profile, pastTimestamp: false })}`,
        "activeUser",
      );
      this.userId = made.user.userId;
    }
    // service_requests=on makes the core hand this user Service RPC requests.
    await this.core.command("/_start main=on service_requests=on");
    const shown = await this.core.command(`/_show_address ${this.userId}`);
    let link = shown && shown.type === "userContactLink" ? shown.contactLink.connLinkContact : null;
    if (link === null) {
      const created = await this.core.expect(
        `/_address ${this.userId} pq_ratchet=on`,
        "userContactLinkCreated",
      );
      link = created.connLinkContact;
    }
    const settings = { businessAddress: false, autoAccept: { acceptIncognito: false }, serves: ["agent"] };
    await this.core.expect(
      `/_address_settings ${this.userId} pq_ratchet=on ${JSON.stringify(settings)}`,
      "userContactLinkUpdated",
    );
    console.error(`node bot: serving MCP at ${link.connShortLink || link.connFullLink}`);
  }

  onEvent(event) {
    if (event.type === "newChatItems" && Array.isArray(event.chatItems)) {
      for (const item of event.chatItems) this.onChatItem(item).catch(report);
    } else if (event.type === "serviceRequest") {
      this.onServiceRequest(event).catch(report);
    }
  }

  async onChatItem({ chatInfo, chatItem }) {
    const direction = chatItem.chatDir && chatItem.chatDir.type;
    const content = chatItem.content && chatItem.content.msgContent;
    if (!content || content.type !== "text") return;
    let chat;
    let caller;
    if (direction === "directRcv" && chatInfo.type === "direct") {
      chat = `@${chatInfo.contact.contactId}`;
      caller = `contact:${chatInfo.contact.contactId}`;
    } else if (direction === "groupRcv" && chatInfo.type === "group") {
      chat = `#${chatInfo.groupInfo.groupId}`;
      caller = `member:${chatInfo.groupInfo.groupId}:${chatItem.chatDir.groupMember.groupMemberId}`;
    } else {
      return;
    }
    const command = parseCall(content.text);
    if (command === null || command.protocol !== "mcp") return;
    if (command.mention !== undefined) {
      // Only the member a group command mentions answers it (CALL-GRP-1); a command without a
      // mention is a broadcast that every serving member answers (CALL-GRP-2).
      const me = chatInfo.type === "group" ? chatInfo.groupInfo.membership.memberProfile : null;
      if (me === null || command.mention !== me.displayName) return;
    }
    const quote = chatItem.meta.itemId;
    const send = (message) => this.reply(chat, quote, message);
    let request;
    try {
      request = JSON.parse(command.request);
    } catch {
      await send(rpcError(null, -32700, "Parse error"));
      return;
    }
    const response = await handleMcp(request, { transport: "chat", caller, notify: send });
    if (response === null) return;
    // A reply too large for a chat message becomes the binding's error (CALL-SIZE-3).
    if (replyBytes(response) > MAX_REPLY_TEXT_BYTES) {
      await send(rpcError(response.id, -32603, "The response is larger than a SimpleX message"));
      return;
    }
    await send(response);
  }

  reply(chat, quotedItemId, message) {
    const composed = [{ msgContent: { type: "text", text: JSON.stringify(message) }, quotedItemId }];
    return this.core.command(`/_send ${chat} json ${JSON.stringify(composed)}`);
  }

  // ---------------------------------------------------------------- Service RPC

  async onServiceRequest(event) {
    const envelope = await this.serve(event.requestData, event.signerKey);
    await this.core.command(
      `/_service_response ${this.userId} ${event.requestId} ${JSON.stringify(envelope)}`,
    );
  }

  async serve(envelope, signerKey) {
    const refuse = (code, message) => ({ error: { code, message } });
    if (envelope === null || typeof envelope !== "object" || Array.isArray(envelope)) {
      return refuse("bad_request", "the envelope is not a JSON object");
    }
    if (typeof envelope.protocol !== "string" || typeof envelope.request !== "object") {
      return refuse("bad_request", "the envelope needs protocol (a string) and request");
    }
    if (envelope.protocol !== "mcp") {
      return refuse("unsupported_protocol", `${envelope.protocol} is not served here`);
    }
    if (envelope.requestKey !== undefined) {
      // requestKey names the key the core verified the signature with (RPC-SIG-3, RPC-SIG-4).
      if (signerKey === undefined) return refuse("bad_request", "requestKey without a signature");
      if (envelope.requestKey !== signerKey) {
        return refuse("bad_request", "requestKey is not the key that signed the request");
      }
    }
    if (signerKey !== undefined) {
      const retryAfter = this.rateLimited(signerKey);
      if (retryAfter !== null) {
        return { error: { code: "rate_limited", message: "too many requests", retryAfter } };
      }
    }
    let response;
    try {
      response = await handleMcp(envelope.request, {
        transport: "rpc",
        caller: signerKey === undefined ? "unsigned" : `key:${signerKey}`,
      });
    } catch (error) {
      if (error instanceof EnvelopeError) return refuse(error.code, error.message);
      throw error;
    }
    if (response === null) return refuse("bad_request", "a notification has no response");
    const answer = { response };
    if (Buffer.byteLength(JSON.stringify(answer), "utf8") > MAX_RESPONSE_JSON_BYTES) {
      return refuse("too_large", "the response is larger than a Service RPC response may be");
    }
    return answer;
  }

  // Seconds to wait before this key may be served again, or null when it may be now.
  rateLimited(key) {
    const now = Date.now() / 1000;
    const recent = (this.rateLimits.get(key) || []).filter((t) => now - t < RATE_LIMIT.windowS);
    if (recent.length >= RATE_LIMIT.requests) {
      this.rateLimits.set(key, recent);
      return Math.max(1, Math.ceil(recent[0] + RATE_LIMIT.windowS - now));
    }
    recent.push(now);
    this.rateLimits.set(key, recent);
    return null;
  }
}

function report(error) {
  console.error(`node bot: ${error && error.stack ? error.stack : error}`);
}

async function main() {
  const url = process.env.SIMPLEX_CONFORMANCE_CORE || process.argv[2];
  if (!url) {
    console.error("usage: node bot.js ws://127.0.0.1:PORT/USER (or set SIMPLEX_CONFORMANCE_CORE)");
    process.exit(64);
  }
  let bot = null;
  const core = new ChatCore(url, (event) => bot && bot.onEvent(event));
  bot = new Bot(core);
  await core.connect();
  process.on("SIGTERM", () => {
    core.ws.close();
    process.exit(0);
  });
  await bot.start();
}

main().catch((error) => {
  report(error);
  process.exit(1);
});
