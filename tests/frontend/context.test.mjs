// What the host tells a view about itself (host/context.js): the state from the page's URL, the
// hostContext and hostCapabilities of ui/initialize, checked against the ext-apps SDK's own schemas.
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { test } from "node:test";
import { HOST, python } from "./helpers.mjs";

const context = await import(`${HOST}context.js`);
const sizing = await import(`${HOST}sizing.js`);
const catalog = python("from appsdk_cli.host.profiles import profiles_json", "profiles_json()");
const defaults = python(
  "from dataclasses import asdict\nfrom appsdk_cli.host.session import PreviewOptions",
  "asdict(PreviewOptions())",
);
// The SDK's zod schemas: the same judge tests/test_preview_spec.py uses in the browser.
const require = createRequire(import.meta.url);
const schemas = await import(require.resolve("@modelcontextprotocol/ext-apps")).catch(() => null);

const tool = { name: "plan-trip", inputSchema: { type: "object", properties: { city: { type: "string" } } } };
// The server's rule (permissions.py) for this tool under each mode: it declares no hints, so MCP's defaults count.
const permissions = python(
  "from appsdk_cli.permissions import decisions",
  `{mode: d.as_json() for mode, d in decisions(json.loads(${JSON.stringify(JSON.stringify(tool))})).items()}`,
);
const session = {
  defaults,
  permissions,
  widgetState: null,
  toolDefinition: tool,
  template: { declaredCsp: { connectDomains: ["https://api.example.com"], resourceDomains: [] } },
};

test("with a bare URL the page plays the command line's defaults", () => {
  const state = context.initialState(new URLSearchParams(""), session, catalog);
  assert.equal(state.profile, defaults.profile);
  assert.equal(state.device, defaults.device);
  assert.equal(state.theme, defaults.theme);
  assert.equal(state.displayMode, defaults.display_mode);
  assert.equal(state.locale, defaults.locale);
  assert.equal(state.openai, catalog.profiles[defaults.profile].openai);
  assert.equal(state.cdn, catalog.profiles[defaults.profile].cdnAllowance.length > 0);
  assert.equal(state.permissions, defaults.permissions);
  assert.equal(state.approval, permissions[defaults.permissions].ask);
  assert.equal(state.noUi, defaults.no_ui);
  assert.ok(context.isTimeZone(state.timeZone), state.timeZone);
});

test("the URL's choices win, and what is not valid falls back", () => {
  const query = "profile=claude&device=mobile&theme=dark&displayMode=fullscreen&locale=nb-NO&tz=Europe/Oslo&openai=1&cdn=0&permissions=always&noui=1";
  const state = context.initialState(new URLSearchParams(query), session, catalog);
  assert.deepEqual(
    { ...state },
    {
      profile: "claude",
      device: "mobile",
      theme: "dark",
      displayMode: catalog.profiles.claude.displayModes.includes("fullscreen") ? "fullscreen" : "inline",
      openai: true,
      locale: "nb-NO",
      timeZone: "Europe/Oslo",
      cdn: false,
      permissions: "always",
      approval: true,
      noUi: true,
      widgetState: null,
      reportedHeight: null,
      heightSource: null,
    },
  );
  const junk = context.initialState(
    new URLSearchParams("profile=nope&device=watch&theme=sepia&displayMode=modal&tz=Mars/Olympus&permissions=sometimes"),
    session,
    catalog,
  );
  assert.equal(junk.permissions, defaults.permissions);
  assert.equal(junk.profile, defaults.profile);
  assert.equal(junk.device, defaults.device);
  assert.equal(junk.theme, defaults.theme);
  assert.equal(junk.displayMode, defaults.display_mode);
  assert.notEqual(junk.timeZone, "Mars/Olympus");
  // The workbench's frames still say mode=; displayMode= wins when both are there.
  assert.equal(context.initialState(new URLSearchParams("mode=pip"), session, catalog).displayMode, "pip");
  assert.equal(context.initialState(new URLSearchParams("mode=pip&displayMode=inline"), session, catalog).displayMode, "inline");
});

test("the remembered query keeps the page's other keys and every choice", () => {
  const state = context.initialState(new URLSearchParams("run=r1&embed=1&theme=dark"), session, catalog);
  const kept = context.rememberedQuery(new URLSearchParams("run=r1&embed=1&theme=dark"), state);
  assert.equal(kept.get("run"), "r1");
  assert.equal(kept.get("embed"), "1");
  const again = context.initialState(kept, session, catalog);
  assert.deepEqual(again, state);
});

for (const name of ["chatgpt", "mcp-apps", "claude"]) {
  test(`ui/initialize's host context and capabilities for the ${name} profile`, () => {
    const profile = catalog.profiles[name];
    const device = catalog.devices.desktop;
    const state = context.initialState(new URLSearchParams(`profile=${name}&tz=Europe/Oslo&theme=dark`), session, catalog);
    const dimensions = sizing.containerDimensions({ mode: "inline", width: 720, fullscreenHeight: 800, inlineContainer: profile.inlineContainer });
    const hostContext = context.hostContext({ session, state, profile, device, containerDimensions: dimensions });
    assert.deepEqual(hostContext.toolInfo, { tool });
    assert.equal(hostContext.theme, "dark");
    assert.deepEqual(hostContext.styles, { variables: profile.styles.dark });
    assert.deepEqual(hostContext.availableDisplayModes, profile.displayModes);
    assert.equal(hostContext.timeZone, "Europe/Oslo");
    assert.equal(hostContext.platform, device.platform);
    assert.deepEqual(hostContext.safeAreaInsets, device.safeAreaInsets);
    const capabilities = context.hostCapabilities(profile, session.template.declaredCsp);
    assert.deepEqual(capabilities.sandbox, { csp: session.template.declaredCsp });
    assert.equal(profile.hostCapabilities.sandbox, undefined, "the profile's own capabilities are not changed");
    assert.deepEqual(context.hostCapabilities(profile, null), profile.hostCapabilities);
    if (schemas) {
      assert.ok(schemas.McpUiHostContextSchema.safeParse(hostContext).success, JSON.stringify(schemas.McpUiHostContextSchema.safeParse(hostContext).error));
      assert.ok(schemas.McpUiHostCapabilitiesSchema.safeParse(capabilities).success);
    }
  });
}

test("the SDK's schemas were there to judge", () => {
  assert.ok(schemas && schemas.McpUiHostContextSchema && schemas.McpUiHostCapabilitiesSchema);
});

test("toolResponseMetadata: ChatGPT's envelope over the result's own _meta keys", () => {
  const result = { content: [{ type: "text", text: "3 books" }], structuredContent: { n: 3 }, _meta: { month: "June", status: "hidden" } };
  const envelope = context.toolResponseMetadata(result);
  assert.equal(envelope.month, "June");
  assert.equal(envelope.status, "completed", "the envelope's status wins over a _meta key of that name");
  assert.deepEqual(envelope.call_tool_result, result);
  assert.deepEqual(envelope.mcp_tool_result, result);
  assert.equal(context.toolResponseMetadata({ content: [], isError: true }).status, "failed");
  assert.deepEqual(Object.keys(context.toolResponseMetadata({ content: [] })).sort(), ["call_tool_result", "mcp_tool_result", "status"]);
});
