// sjc for OpenClaw: a compaction provider (agents.defaults.compaction.provider = "sjc").
//
// OpenClaw calls summarize() instead of its built-in summariser, with the messages being compacted
// (tool calls and results included), the safeguard instructions and the previous summary. This
// provider has OpenClaw's own summariser write the summary (agent-core's generateSummary: the same
// system prompt, serialised conversation and instructions, sent to the session's own model), hands
// it to `sjc-hook openclaw` with the messages as evidence, and returns what sjc kept. OpenClaw then
// appends its own sections (split-turn context, preserved turns, file lists) and stores the result.
//
// It must never break a compaction: when sjc is switched off (kill switch, SJC_DISABLE), cannot be
// run, fails, answers nothing usable or takes too long, summarize() returns "" and OpenClaw runs its
// own summariser exactly as it would without this plugin. sjc logs every decision and fault in its
// decision log; this plugin says what happened in OpenClaw's log.

import { spawn } from "node:child_process";

const PROVIDER_ID = "sjc";
const CHECK_TIMEOUT_MS = 20_000;
const GRACE_MS = 10_000;
const MAX_OUTPUT = 64 << 20;
// agent-core's summariser settings (packages/agent-core compaction, src/agents/compaction-planning.ts)
const DEFAULT_RESERVE_TOKENS = 16384;
const CHUNK_RATIO = 0.4;
const SUMMARIZATION_OVERHEAD_TOKENS = 4096;
const IDENTIFIER_INSTRUCTIONS =
  "Preserve all opaque identifiers exactly as written (no shortening or reconstruction), including UUIDs, hashes, IDs, hostnames, IPs, ports, URLs, and file names.";
const REDISTILL_PREFIX =
  "Previous compaction summary to re-distill with the current conversation. Prune stale, duplicate, or superseded details instead of preserving it verbatim.";

/** Run `sjc-hook openclaw` with `payload` on stdin; resolves {ok, out, error} and never rejects. An
 * aborted `signal` (OpenClaw cancelled the compaction) ends the child and resolves {aborted: true}. */
function runSjc(settings, payload, timeoutMs, signal) {
  return new Promise((resolve) => {
    if (signal?.aborted) {
      resolve({ ok: false, aborted: true, error: "the compaction was cancelled" });
      return;
    }
    const args = ["openclaw", ...(settings.config ? ["--config", settings.config] : [])];
    let child;
    try {
      child = spawn(settings.command, args, { stdio: ["pipe", "pipe", "pipe"], env: process.env });
    } catch (err) {
      resolve({ ok: false, error: `cannot run ${settings.command}: ${err?.message ?? err}` });
      return;
    }
    let stdout = "";
    let stderr = "";
    let done = false;
    let timer;
    const finish = (result) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      signal?.removeEventListener?.("abort", onAbort);
      resolve(result);
    };
    const onAbort = () => {
      try {
        child.kill("SIGKILL");
      } catch {}
      finish({ ok: false, aborted: true, error: "the compaction was cancelled" });
    };
    signal?.addEventListener?.("abort", onAbort, { once: true });
    timer = setTimeout(() => {
      try {
        child.kill("SIGKILL");
      } catch {}
      finish({ ok: false, error: `${settings.command} openclaw gave no answer within ${Math.round(timeoutMs / 1000)} s` });
    }, timeoutMs);
    child.stdout.setEncoding("utf8");
    child.stderr.setEncoding("utf8");
    child.stdout.on("data", (d) => {
      if (stdout.length < MAX_OUTPUT) stdout += d;
    });
    child.stderr.on("data", (d) => {
      if (stderr.length < 65536) stderr += d;
    });
    child.on("error", (err) => finish({ ok: false, error: `cannot run ${settings.command}: ${err?.message ?? err}` }));
    child.on("close", (code) => {
      const note = stderr.trim();
      if (code !== 0) {
        finish({ ok: false, error: `${settings.command} openclaw exited ${code}${note ? `: ${note.slice(-500)}` : ""}` });
        return;
      }
      if (!stdout.trim()) {
        finish({ ok: false, error: note ? note.slice(-500) : "sjc answered nothing", quiet: true });
        return;
      }
      try {
        finish({ ok: true, out: JSON.parse(stdout), note });
      } catch {
        finish({ ok: false, error: `${settings.command} openclaw answered no JSON: ${stdout.slice(0, 200)}` });
      }
    });
    child.stdin.on("error", () => {}); // a child that exits before reading all of stdin
    child.stdin.end(JSON.stringify(payload));
  });
}

/** What sjc needs of a message: its role and text parts, tool calls and results; no image data. */
function slim(message) {
  if (!message || typeof message !== "object") return null;
  const out = { role: message.role };
  for (const key of ["toolCallId", "toolName", "isError", "customType", "command", "output", "exitCode", "summary", "timestamp"]) {
    if (message[key] !== undefined) out[key] = message[key];
  }
  const content = message.content;
  if (typeof content === "string") out.content = content;
  else if (Array.isArray(content)) {
    out.content = content.flatMap((block) => {
      if (!block || typeof block !== "object") return [];
      if (block.type === "text") return [{ type: "text", text: block.text }];
      if (block.type === "toolCall") return [{ type: "toolCall", id: block.id, name: block.name, arguments: block.arguments }];
      if (block.type === "image") return [{ type: "image" }];
      return [];
    });
  }
  return out;
}

/** Tool calls and their results stay in one chunk (agent-core never splits a call from its result). */
function chunkMessages(messages, maxTokens, estimateTokens) {
  const chunks = [];
  let current = [];
  let tokens = 0;
  let group = [];
  let groupTokens = 0;
  let pending = new Set();
  const flushGroup = () => {
    if (current.length && tokens + groupTokens > maxTokens) {
      chunks.push(current);
      current = [];
      tokens = 0;
    }
    current.push(...group);
    tokens += groupTokens;
    group = [];
    groupTokens = 0;
  };
  for (const m of messages) {
    let t = 0;
    try {
      t = estimateTokens(m);
    } catch {
      t = Math.ceil(JSON.stringify(m ?? "").length / 4);
    }
    group.push(m);
    groupTokens += t;
    if (m?.role === "assistant" && Array.isArray(m.content)) {
      pending = new Set(m.content.filter((b) => b?.type === "toolCall").map((b) => b.id));
    } else if (m?.role === "toolResult") {
      pending.delete(m.toolCallId);
    }
    if (pending.size === 0) flushGroup();
  }
  if (group.length) flushGroup();
  if (current.length) chunks.push(current);
  return chunks;
}

function identifierInstructions(instructions) {
  if (instructions?.identifierPolicy === "off") return undefined;
  if (instructions?.identifierPolicy === "custom") return instructions.identifierInstructions?.trim() || IDENTIFIER_INSTRUCTIONS;
  return IDENTIFIER_INSTRUCTIONS;
}

/** The summary OpenClaw's own summariser writes for these messages (the safeguard path's request). */
async function draftSummary(api, params, session) {
  const { prepareSimpleCompletionModelForAgent } = await import("openclaw/plugin-sdk/simple-completion-runtime");
  const { generateSummary, openClawAgentCoreRuntime, estimateTokens } = await import("openclaw/plugin-sdk/agent-core");
  const compaction = api.config?.agents?.defaults?.compaction ?? {};
  const prepared = await prepareSimpleCompletionModelForAgent({
    cfg: api.config,
    ...(session?.agentId ? { agentId: session.agentId } : {}),
    ...(typeof compaction.model === "string" && compaction.model ? { modelRef: compaction.model } : {}),
    signal: params.signal,
  });
  if (!prepared || "error" in prepared) throw new Error(`no model for the summary: ${prepared?.error ?? "unknown"}`);
  const model = prepared.model;
  const requested = Math.max(1, Math.floor(Number(compaction.reserveTokens) || DEFAULT_RESERVE_TOKENS));
  const reserveTokens = model.maxTokens > 0 ? Math.max(1, Math.min(requested, Math.floor(model.maxTokens))) : requested;
  const window = Math.max(1, Math.floor(model.contextTokens ?? model.contextWindow ?? 200000));
  const maxChunkTokens = Math.max(1, Math.floor(window * CHUNK_RATIO) - SUMMARIZATION_OVERHEAD_TOKENS);
  const previous = typeof params.previousSummary === "string" ? params.previousSummary.trim() : "";
  const messages = [
    ...(previous
      ? [{ role: "user", content: [{ type: "text", text: `<previous-compaction-summary>\n${REDISTILL_PREFIX}\n\n${previous}\n</previous-compaction-summary>` }], timestamp: 0 }]
      : []),
    ...params.messages,
  ];
  const focus = identifierInstructions(params.summarizationInstructions);
  const prompt = { kind: "custom", instructions: params.customInstructions ?? "" };
  let summary;
  for (const chunk of chunkMessages(messages, maxChunkTokens, estimateTokens)) {
    const result = await generateSummary(chunk, model, reserveTokens, prepared.auth?.apiKey, prepared.auth?.headers, params.signal,
      focus, summary, undefined, undefined, openClawAgentCoreRuntime, prompt);
    if (!result?.ok) throw result?.error ?? new Error("the summariser returned no summary");
    summary = result.value;
  }
  if (typeof summary !== "string" || !summary.trim()) throw new Error("the summariser returned an empty summary");
  return summary;
}

export default {
  id: PROVIDER_ID,
  name: "sjc (source-judged compaction)",
  description: "Prunes the entries of OpenClaw's compaction summary that no tool output, user message or earlier summary supports",
  register(api) {
    const cfg = api.pluginConfig ?? {};
    const settings = {
      command: typeof cfg.command === "string" && cfg.command ? cfg.command : "sjc-hook",
      config: typeof cfg.config === "string" && cfg.config ? cfg.config : undefined,
    };
    const logger = api.logger ?? console;
    const warn = (msg) => {
      try {
        (logger.warn ?? logger.info ?? console.error).call(logger, `sjc: ${msg}`);
      } catch {}
    };
    let session = null; // the compaction's session, from before_compaction (it fires first)
    api.on("before_compaction", (_event, ctx) => {
      session = ctx ?? null;
    });
    api.registerCompactionProvider({
      id: PROVIDER_ID,
      label: "sjc: OpenClaw's summary with the unsupported entries pruned",
      async summarize(params) {
        const ids = {
          session_id: session?.sessionId ?? null,
          session_key: session?.sessionKey ?? null,
          agent_id: session?.agentId ?? null,
          cwd: session?.workspaceDir ?? null,
        };
        const checkMs = Number(cfg.timeoutSeconds) > 0 ? Math.min(CHECK_TIMEOUT_MS, Number(cfg.timeoutSeconds) * 1000) : CHECK_TIMEOUT_MS;
        const check = await runSjc(settings, { hook_event_name: "CompactionStart", ...ids }, checkMs, params.signal);
        if (check.aborted) throw params.signal?.reason ?? new Error(check.error);
        if (!check.ok || check.out?.enabled !== true) {
          warn(`${check.ok ? "switched off" : check.error}; OpenClaw's own summariser runs`);
          return "";
        }
        const budgetMs = Number(cfg.timeoutSeconds) > 0 ? Number(cfg.timeoutSeconds) * 1000
          : (Number(check.out.time_budget_s) > 0 ? Number(check.out.time_budget_s) * 1000 : 30_000) + GRACE_MS;
        let draft;
        try {
          draft = await draftSummary(api, params, session);
        } catch (err) {
          if (params.signal?.aborted) throw err;
          warn(`the summary could not be written (${err?.message ?? err}); OpenClaw's own summariser runs`);
          await runSjc(settings, { hook_event_name: "Fault", ...ids, message: `summary not written: ${err?.message ?? err}` }, checkMs);
          return "";
        }
        const answer = await runSjc(settings, {
          hook_event_name: "Summarize",
          ...ids,
          summary: draft,
          previous_summary: params.previousSummary ?? null,
          messages: (params.messages ?? []).map(slim).filter(Boolean),
        }, budgetMs, params.signal);
        if (answer.aborted) throw params.signal?.reason ?? new Error(answer.error);
        if (!answer.ok || typeof answer.out?.summary !== "string" || !answer.out.summary.trim()) {
          const why = answer.ok ? "sjc kept no summary" : answer.error;
          warn(`${why}; OpenClaw's own summariser runs`);
          if (!answer.quiet) {
            await runSjc(settings, { hook_event_name: "Fault", ...ids, message: why }, checkMs);
          }
          return "";
        }
        if (answer.note) warn(answer.note);
        return answer.out.summary;
      },
    });
  },
};
