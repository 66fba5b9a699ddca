/**
 * The bot runtime's public face: what `services/`, `cli/`, `testing/`, `plugin-api/` and
 * `scenario/` may import (test/architecture/imports.test.ts refuses a deeper import from them).
 * Inside the runtime, files import each other directly, following the stage order of
 * docs/architecture.md.
 */

// contract/: what built-ins and plugins implement
export type { Registry } from './contract/registry.js';
export { knownFields } from './contract/event-fields.js';
export {
  LimitError,
  type ActionRunContext,
  type AskRequest,
  type MemoryWhose,
  type ConditionResult,
  type ConditionRunContext,
  type ReplyTarget,
  type SourceContext,
  type TraceInfo,
  type TriggerDef,
  type TriggerSetupContext,
  TOPICS,
  type Topic,
} from './contract/types.js';

// registry.ts: the built-ins (builtins/, a leaf) composed into a Registry
export { createRegistry } from './registry.js';
export { validTimeZone } from './builtins/triggers/timed.js';

// define/: a bot file → a compiled bot
export { loadBot, loadBotFile } from './define/loader.js';
export { coerceRendered } from './define/templatable-schema.js';
export type { Expect } from './define/ask-expect.js';
export { botSchemaText } from './define/write-schema.js';
export { compileRegex, regexProblem, type BotRegex, type RegexProblem } from './define/regex.js';

// liquid/: the sandboxed engine and the grammar of boolean expressions, shared with scenarios
export { sandboxedLiquid } from './liquid/templates.js';
export {
  expressionProblem,
  tagExpressionProblems,
  type ExpressionProblem,
  type ExpressionWhere,
} from './liquid/expression-check.js';

// state/: what survives a restart, traces included
export {
  BotCursors,
  BotDialogs,
  BotInbox,
  BotMetas,
  PluginStates,
  type DialogRecord,
  type InboxEntry,
  type PluginStateRecord,
} from './state/bot-state.js';
export { readTraces, type Trace, type TraceArchive, type TraceStep } from './state/traces.js';
export {
  whatIf,
  whatIfFile,
  type ReplayedEvent,
  type ReplayedRule,
  type WhatIfInvalid,
  type WhatIfReport,
} from './run/what-if.js';
export { fencedStore } from './state/fenced-store.js';
export { BotMemories, type MemoryRecord } from './state/bot-records.js';
export { BotMemory, DEFAULT_MEMORY, MemoryFullError, type MemoryChange, type MemoryOptions } from './state/memory.js';
export { formatTrace } from './state/trace-format.js';
export { DialogEnded, Suspended } from './run/dialog-replay.js';

// bot/: one bot's life
export { IdentityPending } from './bot/identity.js';

// host/: the bots of a folder
export { BotHost, type BotStatus, type HostOptions } from './host/bot-host.js';
export { watchBots } from './host/watcher.js';

export { TRACE_REASONS, isTraceReason, type TraceReason } from './contract/trace-reasons.js';

// ports.ts: what the embedder supplies
export type {
  BotPlacement,
  ChangeFeed,
  EmbeddedKey,
  IdentityProvider,
  InboxFeed,
  PlacedBots,
  BotStorage,
  BotStore,
} from './ports.js';
