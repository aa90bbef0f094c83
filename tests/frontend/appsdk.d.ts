// The JSON the Python side hands the front-end (appsdk_cli/**/static/), as the pages read it. Global
// types, no exports: the shipped .js files name them in JSDoc without an import path, so this file can
// live with the dev-time checks and the static folders stay plain assets. The MCP Apps bridge's own
// messages are not here: those are the ext-apps SDK's published types.

type McpTool = import("@modelcontextprotocol/client").Tool;
type McpCallToolResult = import("@modelcontextprotocol/client").CallToolResult;
type McpUiDisplayMode = import("@modelcontextprotocol/ext-apps").McpUiDisplayMode;
type McpUiTheme = import("@modelcontextprotocol/ext-apps").McpUiTheme;
type McpUiHostCapabilities = import("@modelcontextprotocol/ext-apps").McpUiHostCapabilities;
type McpUiHostContext = import("@modelcontextprotocol/ext-apps").McpUiHostContext;
type McpUiResourceCsp = import("@modelcontextprotocol/ext-apps").McpUiResourceCsp;

/** A JSON value as it came off the wire: nothing known about its shape. */
type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

// ---- /api/profiles (preview/profiles.py: profiles_json) ------------------------------------------

interface AppsdkSafeAreaInsets {
  top: number;
  right: number;
  bottom: number;
  left: number;
}

interface AppsdkProfile {
  name: string;
  label: string;
  description: string;
  hostInfo: { name: string; version: string };
  hostCapabilities: McpUiHostCapabilities;
  sandbox: string;
  displayModes: McpUiDisplayMode[];
  /** The container a ChatGPT-like host gives an inline view; null: flexible height. */
  inlineContainer: { height?: number; maxHeight?: number; width?: number; maxWidth?: number } | null;
  maxWidth: number;
  openai: boolean;
  styles: Record<McpUiTheme, Record<string, string>>;
  userAgent: string;
  cdnAllowance: string[];
  downloadFile: boolean;
  notes: string[];
}

interface AppsdkDevice {
  name: string;
  label: string;
  viewport: { width: number; height: number };
  platform: "web" | "desktop" | "mobile";
  deviceCapabilities: { touch: boolean; hover: boolean };
  safeAreaInsets: AppsdkSafeAreaInsets;
  openaiUserAgent: { device: { type: string }; capabilities: { hover: boolean; touch: boolean } };
  pipBecomesFullscreen: boolean;
}

interface AppsdkProfileCatalog {
  defaultProfile: string;
  defaultDevice: string;
  profiles: Record<string, AppsdkProfile>;
  devices: Record<string, AppsdkDevice>;
}

// ---- /api/session (preview/server.py: session_json) ----------------------------------------------

/** PreviewOptions, as dataclasses.asdict gives it. */
interface AppsdkPreviewDefaults {
  theme: McpUiTheme;
  display_mode: McpUiDisplayMode;
  locale: string;
  bridge_only: boolean;
  no_ui: boolean;
  profile: string;
  device: string;
  time_zone: string | null;
  /** ChatGPT's permission mode (appsdk_cli/permissions.py) */
  permissions: AppsdkPermissionMode;
}

type AppsdkPermissionMode = "always" | "changes" | "important" | "never";

/** permissions.Decision.as_json: whether a call asks the user first under a mode, and why. */
interface AppsdkPermissionDecision {
  mode: AppsdkPermissionMode;
  label: string;
  ask: boolean;
  reason: string;
}

interface AppsdkSession {
  run: string | null;
  appsdkVersion: string;
  protocolVersion: string;
  server: string;
  tool: { name: string; title: string | null; description: string | null };
  toolDefinition: McpTool;
  invoking: string | null;
  invoked: string | null;
  arguments: Record<string, Json>;
  result: McpCallToolResult;
  /** The call is still in flight: tool-result follows when the workbench sends it. */
  pending: boolean;
  /** the call is not made yet: the permission mode asks first; approving makes it (/api/rerun) */
  deferred: boolean;
  /** Whether the run's own call waits for approval, under each permission mode. */
  permissions: Record<AppsdkPermissionMode, AppsdkPermissionDecision>;
  template: {
    uri: string;
    mimeType: string;
    csp: string;
    declaredCsp: McpUiResourceCsp | null;
    prefersBorder: boolean;
  };
  /** per profile, what that host does with this widget beyond the spec (profiles.py widget_rules) */
  hostRules: Record<string, { refuse: string | null; warn: string[] }>;
  /** the sandbox proxy's origin: the host page frames it and talks to the view only through it */
  sandboxOrigin: string;
  /** the view's origin (the widget's own site), for display */
  viewOrigin: string;
  sandbox: string;
  widgetTools: Record<string, string[]>;
  userAgent: Json;
  defaults: AppsdkPreviewDefaults;
  widgetState: Json;
  warnings: string[];
}

// ---- the bootstrap's config (preview/server.py: widget_document, injected as __APPSDK_CONFIG__) -----

interface AppsdkBootstrapConfig {
  parentOrigin: string;
  openai: boolean;
  /** window.openai's globals at load; the host's set_globals messages update them. */
  globals: Record<string, unknown> & { view: AppsdkOpenaiView };
}

/** window.openai.view (host/widget.py: view_of): which view of the widget a document is. OpenAI's
 * reference gives no shape; this is the peers' (Skybridge's View, MCPJam's renderer). */
interface AppsdkOpenaiView {
  mode: "inline" | "modal";
  /** what requestModal passed; null inline */
  params: Record<string, unknown> | null;
}

/** window.openai.requestModal's arguments, as the host reads them (host/modal.js). */
type AppsdkRequestModalArgs = {
  /** a ui:// resource the server lists; absent: the call's own template */
  template?: string;
  /** window.openai.view.params in the modal */
  params?: Record<string, unknown>;
  /** the modal's heading (the template's URI without one) */
  title?: string;
};

// ---- appsdk's own sandbox proxy, beyond the spec's channel (sandbox-proxy.js) ------------------------

/** Host page → proxy: replace the view with a fresh one of this document, keeping the proxy frame. */
interface AppsdkReplaceView {
  type: "replace-view";
  /** the re-render's id; the proxy echoes it in "view-replaced" once the old view is gone */
  swap: string;
  /** the token the view origin serves the new document by (/view?document=TOKEN) */
  document: string;
  resource: { html: string; sandbox: string; csp?: unknown; permissions?: Record<string, unknown> };
}

// ---- what the host page and the bootstrap say to each other over their MessageChannel ------------

type AppsdkOpenaiFromWidget =
  | { type: "log"; kind: string; level: AppsdkLogLevel; message: string }
  | { type: "load-failed"; what: string; url: string }
  | AppsdkCspReport
  | { type: "read"; key: string }
  | { type: "autosize"; height: number }
  | { type: "activity"; busy: number }
  | { type: "key"; key: string }
  | { type: "notify"; method: string; params: { height?: number } }
  | { type: "request"; id: number; method: string; params?: Record<string, any> };

type AppsdkOpenaiToWidget =
  | { type: "response"; id: number; result?: unknown; error?: { message: string } }
  | { type: "globals"; globals: Record<string, unknown> };

interface AppsdkCspReport {
  type: "csp";
  directive: string;
  blocked: string;
  source: string;
  line: number | null;
  column?: number | null;
  sample: string;
  disposition: string;
}

// ---- the host page's events and records (window.appsdkPreview) -------------------------------------

type AppsdkLogLevel = "info" | "warn" | "error";

interface AppsdkLogEntry {
  kind: string;
  level: AppsdkLogLevel | string;
  message: string;
}

/** One message between host and widget, as a trace record (also what `appsdk trace` writes). */
interface AppsdkTrafficRecord {
  time: string;
  channel: "bridge" | "openai" | "mcp" | string;
  from: string;
  to: string;
  kind: "request" | "response" | "error" | "notification";
  method: string | null;
  id: string | number | null;
  size: number;
  duration_ms?: number;
  run?: string;
  /** whose request an MCP exchange carries when not the client's own ("widget") */
  caller?: string;
  seq?: number;
  message?: unknown;
  [key: string]: unknown;
}

interface AppsdkCspEvent {
  directive: string;
  blockedURI: string;
  sourceFile?: string;
  line?: number | null;
  sample?: string;
  disposition?: string;
  message?: string;
}

interface AppsdkModelEvent {
  kind: string;
  params: unknown;
  time: string | number;
}

interface AppsdkPreviewEvents {
  traffic: AppsdkTrafficRecord;
  log: AppsdkLogEntry;
  model: AppsdkModelEvent;
  "widget-state": { state: unknown };
  csp: AppsdkCspEvent;
  "display-mode": { mode: McpUiDisplayMode };
  size: { height: number };
  settled: Record<string, never>;
  /** A call waits for the user's approval (held), or the user answered (approved). kind "input": the run's own
   * call, whose tool-input is held; "call": a widget's callTool, which the server holds. */
  approval: {
    kind: "input" | "call";
    held: boolean;
    tool: string;
    mode?: AppsdkPermissionMode;
    reason?: string;
    approved?: boolean;
  };
}

type AppsdkPreviewEventType = keyof AppsdkPreviewEvents;

/** window.appsdkPreview: the host page's API for tests, `--screenshot` and the workbench. */
interface AppsdkPreviewApi {
  settled: boolean;
  log: AppsdkLogEntry[];
  traffic: AppsdkTrafficRecord[];
  bridge: { initialized: boolean };
  ready: Promise<unknown>;
  problems(): string[];
  on<T extends AppsdkPreviewEventType>(type: T, listener: (detail: AppsdkPreviewEvents[T]) => void): () => void;
  setTheme(theme: string): Promise<{ theme: McpUiTheme }>;
  setLocale(locale: string): Promise<{ locale: string }>;
  setTimeZone(timeZone: string): Promise<{ timeZone: string }>;
  setDisplayMode(mode: string): Promise<{ mode: McpUiDisplayMode }>;
  setDevice(name: string): Promise<{ device: string }>;
  getWidgetState(): Promise<unknown>;
  setWidgetState(state: unknown): Promise<{ state: unknown }>;
  teardown(): Promise<{ answered: boolean; closed: boolean }>;
  cancel(reason?: string): Promise<{ cancelled: boolean; sent: boolean }>;
  sendResult(result: McpCallToolResult): Promise<Record<string, never>>;
  reloadTemplate(): Promise<Record<string, never>>;
  approve(): Promise<{ approved: boolean }>;
  /** `queued`: the view has not initialized yet; it gets the partial input once it has. */
  sendPartialInput(args: Record<string, unknown>): Promise<{ queued?: boolean }>;
  state(): Record<string, unknown> | null;
}

// ---- the workbench (workbench/server.py) -----------------------------------------------------------

interface AppsdkWorkbenchInfo {
  appsdkVersion: string;
  server: string;
  serverInfo: { name?: string; version?: string } | null;
  dev: boolean;
  sandboxOrigin: string;
  defaults: { theme: string; displayMode: string; locale: string; profile: string; device: string; permissions: AppsdkPermissionMode; noUi?: boolean };
  traffic: boolean;
  lastReload: unknown;
  /** appsdk dev: whether the app imports now, and why not */
  app?: { ok: boolean; problem: string | null };
}

/** One tool of /api/tools, with what the workbench read from its _meta. */
interface AppsdkWorkbenchTool {
  tool: McpTool;
  name: string;
  title: string | null;
  description: string | null;
  template: string | null;
  invoking: string | null;
  invoked: string | null;
  readOnly: boolean;
  destructive: boolean;
  openWorld: boolean;
  idempotent: boolean;
  visibility: string[];
  widgetAccessible: boolean;
  fileParams: string[];
}

interface AppsdkToolListing {
  tools?: AppsdkWorkbenchTool[];
  error?: string | null;
  serverInfo?: AppsdkWorkbenchInfo["serverInfo"];
  /** The server wants a sign-in the page must ask for (needed), or the page's Sign in is under way (busy). */
  signIn?: { needed: boolean; busy: boolean };
}

/** One skill as skills/list gives it (SEP-2640): its SKILL.md URI, front matter and files with digests. */
interface AppsdkSkill {
  uri: string;
  frontmatter?: { name?: unknown; description?: unknown; [key: string]: unknown };
  resources?: { uri: string; digest: string; size: number }[] | "dynamic";
}

/** The workbench's /api/skills: `declared` false when the server serves no skills. */
interface AppsdkSkillListing {
  declared: boolean;
  skills: AppsdkSkill[];
  error?: string | null;
  /** the server wants a sign-in first (why): the page offers Sign in */
  signIn?: string | null;
}

/** The workbench's /api/skill-file: one skill file's text, checked against its listed digest and size. */
interface AppsdkSkillFile {
  uri: string;
  text: string | null;
  verified: boolean;
  problem: string | null;
}

/** One run of a tool (workbench/server.py: Run.as_json). */
interface AppsdkRun {
  id: string;
  sequence: number;
  tool: string;
  arguments: Record<string, Json>;
  status: "running" | "done" | "cancelled" | "invalid" | "failed" | string;
  started: number | string | null;
  durationMs: number | null;
  result: McpCallToolResult | null;
  error: string | null;
  widget: boolean;
  templateUri: string | null;
  invoking: string | null;
  invoked: string | null;
  warnings: string[];
  /** The widget threw: the first line, placed in the template (ui://…:12); null once it renders afresh. */
  widgetError?: string | null;
  calls: number;
  version: number;
  /** An isError result's crash, as appsdk dev reported it (never sent to the widget). */
  crash?: AppsdkToolCrash | null;
  /** What to tell the developer beside an isError result. */
  hint?: string | null;
}

/** What appsdk dev saw a tool raise (workbench/server.py: _crash_json). */
interface AppsdkToolCrash {
  type: string;
  message: string;
  summary?: string;
  file?: string | null;
  line?: number | null;
  function?: string | null;
  frames?: { file: string; line: number; function: string; code: string }[];
}

/** A dev reload, pushed on /api/events. */
interface AppsdkReloadEvent {
  appOk: boolean;
  seconds?: number | null;
  files?: string[];
  notice?: string | null;
  /** Why the app failed to import (appOk false). */
  problem?: string | null;
  codeChanged?: boolean;
  tools?: { changed?: string[]; added?: string[]; removed?: string[] } | null;
}

/** A file the host's file store kept (/api/files). */
interface AppsdkStoredFile {
  fileId: string;
  fileName: string;
  mimeType: string;
  size: number;
  downloadUrl?: string;
}

interface Window {
  appsdkPreview?: AppsdkPreviewApi;
  appsdkWorkbench?: Record<string, unknown>;
}

/** The bootstrap's config: the preview server writes the JSON in place of this name (a classic script). */
declare const __APPSDK_CONFIG__: AppsdkBootstrapConfig;
