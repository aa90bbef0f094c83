// The widget's one link to its host. The MCP Apps bridge (the official SDK's React bindings) comes first:
// ChatGPT and every MCP Apps host speak it. window.openai, when ChatGPT provides it, fills in what the
// bridge has not delivered yet (the result ChatGPT already knows at load) and covers the older Apps SDK.
import { applyDocumentTheme, type McpUiTheme } from "@modelcontextprotocol/ext-apps";
import { useApp, useHostStyles } from "@modelcontextprotocol/ext-apps/react";
import { useEffect, useState } from "react";

interface OpenAiGlobals {
  toolOutput?: unknown;
  theme?: McpUiTheme;
  notifyIntrinsicHeight?: (height: number) => void;
}

declare global {
  interface Window {
    openai?: OpenAiGlobals;
  }
}

export type HostStatus = "connecting" | "connected" | "failed";

export interface ToolOutput<T> {
  output: T | null;
  status: HostStatus;
  error: string | null;
}

/** The tool's structuredContent as `T` once the host sends it (checked by `accept`), and the link's state. */
export function useToolOutput<T>(accept: (value: unknown) => value is T): ToolOutput<T> {
  const [output, setOutput] = useState<T | null>(() => {
    const initial = window.openai?.toolOutput;
    return accept(initial) ? initial : null;
  });
  const { app, isConnected, error } = useApp({
    appInfo: { name: "book-list", version: "0.1.0" },
    capabilities: {},
    onAppCreated: (created) => {
      created.ontoolresult = (result) => {
        if (accept(result.structuredContent)) setOutput(result.structuredContent);
      };
      // The host asks before it removes the widget (a re-render, a closed card): nothing to save here, so
      // the answer is an empty result. Without a handler the SDK answers -32601, an error in the traffic.
      created.onteardown = () => ({});
    },
  });
  // The host's theme, colours and fonts, now and whenever they change.
  useHostStyles(app, app?.getHostContext());
  useOpenAiGlobals(accept, setOutput, !isConnected);

  const status: HostStatus = isConnected ? "connected" : error && !window.openai ? "failed" : "connecting";
  return { output, status, error: error && !window.openai ? error.message : null };
}

/** ChatGPT's window.openai: its theme and tool output, and its height report, for hosts without the bridge. */
function useOpenAiGlobals<T>(accept: (value: unknown) => value is T, setOutput: (value: T) => void, active: boolean) {
  useEffect(() => {
    const openai = window.openai;
    if (!openai || !active) return;
    if (openai.theme) applyDocumentTheme(openai.theme);
    const onGlobals = (event: Event) => {
      const globals = (event as CustomEvent<{ globals?: OpenAiGlobals }>).detail?.globals ?? {};
      if (globals.theme) applyDocumentTheme(globals.theme);
      if (accept(globals.toolOutput)) setOutput(globals.toolOutput);
    };
    const observer = new ResizeObserver(() => openai.notifyIntrinsicHeight?.(document.documentElement.scrollHeight));
    observer.observe(document.body);
    window.addEventListener("openai:set_globals", onGlobals);
    return () => {
      observer.disconnect();
      window.removeEventListener("openai:set_globals", onGlobals);
    };
  }, [accept, setOutput, active]);
}
